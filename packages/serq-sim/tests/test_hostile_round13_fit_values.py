"""``serq fit``: a step's faulty value is told at its line and column with the line quoted and a caret, as a
JSON mistake in it is (it was ``s.jsonl:3: error: time is -1``, the line alone), and a value the message
quotes is cut (a string of megabytes was quoted whole in the message's first line)."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sim.fit import read_steps

pytestmark = pytest.mark.timeout(60)


def _error(tmp_path, text: str) -> list[str]:
    p = tmp_path / "s.jsonl"
    p.write_text(text)
    with pytest.raises(UserError) as e:
        read_steps(str(p))
    return str(e.value).replace(str(p), "s.jsonl").split("\n")


GOOD = '{"decoders": 1, "time": 0.1}\n'


@pytest.mark.parametrize("step, col, message", [
    # columns counted by hand: a tab is one character; '\t{"prefilled": 1, "time": ' is 26
    ('\t{"prefilled": 1, "time": -0.5}', 27, "time is -0.5: a finite number, not negative"),
    # the value of prefilled, not the "time" nested in it
    ('\t{"prefilled": [1, {"time": 2}], "time": 1}', 16, 'prefilled is [1, {"time": 2}]: a finite number'),
    ('\t{"prefilled": 1, "time": 1, "Time": 1}', 30, "unknown key 'Time'"),
    ('\t{"prefilled": 1, "time": 1e-3, "kv_decode": true}', 46, "kv_decode is true: a finite number"),
    ("\t[1, 2]", 2, "a step is a JSON object"),
])
def test_a_faulty_value_of_a_step_is_told_at_its_column(tmp_path, step, col, message):
    head, src, caret = _error(tmp_path, GOOD + "\n" + step + "\n")
    assert head.startswith(f"s.jsonl:3:{col}: error: {message}"), head
    # the line quoted (a tab shown as a space), indented as a source's line, and the caret under the column
    assert src == "  " + step.replace("\t", " ") and caret == " " * (2 + col - 1) + "^"


def test_a_long_value_is_quoted_cut(tmp_path):
    head, src, caret = _error(tmp_path, '{"time": 1, "decoders": "' + "x" * 100_000 + '"}\n')
    assert head.startswith("s.jsonl:1:25: error: decoders is \"xxx") and "(100002 characters)" in head
    assert len(head) < 200 and caret == " " * (2 + 24) + "^"
    # the line's first 200 characters (the column within them), the cut marked as a source's long line's is
    assert src == "  " + ('{"time": 1, "decoders": "' + "x" * 175)[:200] + "..."
