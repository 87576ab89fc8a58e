"""An index or the version of an IR file written with thousands of digits.

msgspec reads a whole number of up to 4300 digits (Python's limit) where the IR has an index or its version,
and refuses a longer one in its own words: ``p.ir.json:1:550: error: Integer value out of range - at
'$.session[0].slot'``. A shorter one named no slot, stage, pool or observe and was quoted whole in the
message (``attribute slot 9999…`` of 400 digits on one line)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

SOURCE = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
          "session { set x = 1; run s (1); observe o = x; }\nrun { horizon 5; }\n")
LONG = "the whole number has more than 4300 digits, the most a whole number is read or written with"


def _ir() -> str:
    return serq_ir.encode_pretty(serq_frontend.compile(source=SOURCE))


def _error(text: str, tmp_path, monkeypatch) -> list[str]:
    (tmp_path / "p.ir.json").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.load("p.ir.json")
    return str(info.value).splitlines()


def _at(text: str, number: str) -> str:
    at = text.index(number)
    return f"p.ir.json:{text.count(chr(10), 0, at) + 1}:{at - text.rfind(chr(10), 0, at)}"


@pytest.mark.parametrize("field, path", [('"slot": 4', "$.session[0].slot"),
                                         ('"stage": 0', "$.session[1].stages[0].stage"),
                                         ('"observe": 0', "$.session[2].observe"),
                                         ('"version": 2', "$.version")])
@pytest.mark.parametrize("sign", ["", "-"])
def test_a_whole_number_of_more_than_4300_digits_says_so(field, path, sign, tmp_path, monkeypatch):
    text = _ir()
    number = sign + "9" * 4301
    text = text.replace(field, field.split(":")[0] + ": " + number, 1)  # (the first: the one at path)
    lines = _error(text, tmp_path, monkeypatch)
    assert lines[0] == f"{_at(text, number)}: error: {LONG} - at '{path}'"
    assert lines[2].strip() == "^"


@pytest.mark.parametrize("field, path, what", [('"slot": 4', "$.session[0].slot", "attribute slot"),
                                               ('"stage": 0', "$.session[1].stages[0].stage", "stage"),
                                               ('"observe": 0', "$.session[2].observe", "observe")])
def test_an_index_of_400_digits_is_quoted_short(field, path, what, tmp_path, monkeypatch):
    text = _ir()
    number = "1" + "0" * 399
    text = text.replace(field, field.split(":")[0] + ": " + number, 1)
    lines = _error(text, tmp_path, monkeypatch)
    assert f"error: {what} 100000000000...000000 (400 digits) does not exist (the program has " in lines[0]
    assert lines[0].endswith(f" - at '{path}'") and len(lines[0]) < 200


def test_a_short_index_is_quoted_whole(tmp_path, monkeypatch):
    text = _ir().replace('"slot": 4', '"slot": 123456789012345678901234')  # (24 characters)
    lines = _error(text, tmp_path, monkeypatch)
    assert "error: attribute slot 123456789012345678901234 does not exist" in lines[0]
