"""A trace's cell that is no number, not finite, negative or beyond 2**53 is quoted cut short in the message
that refuses it (``serq.numbers.quoted``, the rule of every reader's "is not a number"): a cell of 100 000
characters, which the CSV reader takes, was quoted whole, a message of 100 000 characters."""

from __future__ import annotations

import pytest
import serq_sim
from serq.numbers import not_a_number, not_whole, quoted
from serq_sim.trace import load_trace
from trace_errors import first_line_checked

pytestmark = pytest.mark.timeout(60)

HEADER = "session,turn,new,out,think,forced"


def _error(tmp_path, row: str) -> str:
    p = tmp_path / "t.csv"
    p.write_text(f"{HEADER}\n{row}\n")
    with pytest.raises(serq_sim.SimError) as e:
        load_trace(str(p))
    return first_line_checked(str(e.value), str(p)).replace(str(p), "t.csv")


@pytest.mark.parametrize("row, said", [
    ("0,1," + "x" * 100_000 + ",2,1,0", "t.csv:2:5: error: column new: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxx' "
                                        "(100000 characters) is not a number"),
    ("0,1," + "9" * 100_000 + ",2,1,0", "t.csv:2:5: error: column new: '999999999999999999999999999999999999999...999999999' "
                                        "(100000 characters) is beyond the range of a double"),
    ("0,1,2,2,-" + "9" * 200 + ",0", "t.csv:2:9: error: column think: '-99999999999999999999999999999999999999...999999999' "
                                     "(201 characters) is negative"),
    ("1" * 100 + ",1,2,2,1,0", "t.csv:2:1: error: column session: '111111111111111111111111111111111111111...111111111' "
                               "(100 characters) is not below 2**53 in size"),
])
def test_a_long_cell_is_quoted_cut_short(tmp_path, row, said):
    assert _error(tmp_path, row).startswith(said)


def test_a_short_cell_is_quoted_as_it_was(tmp_path):
    assert _error(tmp_path, "0,1,x,2,1,0") == "t.csv:2:5: error: column new: 'x' is not a number"
    assert _error(tmp_path, "0,1,2,2,-1,0") == "t.csv:2:9: error: column think: -1 is negative"
    assert quoted("a" * 58) == repr("a" * 58) and not_whole("1.5") == "'1.5' is not a whole number"
    assert not_a_number("x" * 1000).startswith("'xxx") and len(not_a_number("x" * 1000)) < 100
