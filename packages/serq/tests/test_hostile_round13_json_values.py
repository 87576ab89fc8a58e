"""Where a value of a user's JSON is (``serq.jsonin.value_at``, ``number_at``), so that a fault of the value
(a scenario's ``"prompt": -5``, a step's ``"time": 0``) is told at its line and column with the line
quoted and a caret, as a JSON mistake is: it was told by its JSON path alone (``requests[2]: 'prompt' and
'out' must be positive integers``), or by the line alone (``s.jsonl:4: error: time is -1``), with nothing to
find it by in a file of a thousand requests. ``read_json(check=...)`` locates the fault a check names."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq.jsonin import number_at, read_json, value_at

pytestmark = pytest.mark.timeout(60)

# offsets counted by hand: the document starts at 0; '"a": ' puts the value of "a" at 6
TEXT = '{"a": [1, {"b": "x,]:{", "c": [[], {}]}, "q\\"}"], "d": {"e": -2.5e3, "f": null}}'


@pytest.mark.parametrize("path, key, offset", [
    ((), False, 0),
    (("a",), False, 6),
    (("a", 0), False, 7),
    (("a", 1), False, 10),
    (("a", 1, "b"), False, 16),   # a string holding , ] : { is one token
    (("a", 1, "b"), True, 11),    # the key that names it
    (("a", 1, "c"), False, 30),
    (("a", 1, "c", 1), False, 35),
    (("a", 2), False, 41),        # past an escaped quote and a brace inside a string
    (("d",), True, 50),
    (("d", "e"), False, 61),
    (("d", "f"), False, 74),
    # what the text does not have
    (("z",), False, None),
    (("a", 3), False, None),
    (("a", 0, "x"), False, None),
    ((), True, None),
])
def test_the_offset_of_a_value_by_its_path(path, key, offset):
    assert value_at(TEXT, path, key=key) == offset


def test_the_same_text_written_over_lines():
    text = '{\n  "requests": [\n    {"prompt": 1},\n    {\n      "prompt": -5\n    }\n  ]\n}\n'
    at = value_at(text, ("requests", 1, "prompt"))
    assert text[at:at + 2] == "-5" and text.count("\n", 0, at) == 4  # line 5
    assert value_at(text, ("requests", 1)) == text.index("{\n      ")


def test_the_integer_refused_is_found_outside_strings():
    digits = "1" * 309
    text = '{"s": "' + digits + '", "n": ' + digits + "}"
    assert number_at(text) == text.index(", \"n\": ") + 7
    assert number_at('{"n": ' + "1" * 308 + "}") is None


class _Fault(ValueError):
    serq_user_error = True

    def __init__(self, message, at, key=False):
        super().__init__(message)
        self.json_path, self.json_key = at, key


def _check(doc):
    if doc["requests"][1]["prompt"] < 0:
        raise _Fault("requests[1].prompt: must be positive", ("requests", 1, "prompt"))


def test_read_json_locates_the_fault_a_check_names(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"requests": [\n  {"prompt": 3},\n  {"out": 1, "prompt": -5}\n]}\n')
    with pytest.raises(UserError) as e:
        read_json(str(p), "a scenario", check=_check)
    assert str(e.value) == (f"{p}:3:24: error: requests[1].prompt: must be positive\n"
                            '    {"out": 1, "prompt": -5}\n'
                            + " " * (2 + 23) + "^")  # the line indented by 2, the caret under column 24


def test_an_integer_beyond_a_float_is_located(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"a": 1,\n "b": ' + "9" * 400 + "}\n")
    with pytest.raises(UserError) as e:
        read_json(str(p))
    assert str(e.value).startswith(f"{p}:2:7: error: the integer 999999999999...999999 (400 digits) is beyond")
