"""A trace's field longer than the CSV reader takes (131 072 characters) is told at the field's start in
the trace's words; it was the reader's own text at column 1 of the line where the reader stopped
(``t.csv:3:1: error: the trace is not CSV: field larger than field limit (131072)``), whatever column the
field was in and on whichever line a quoted field began."""

from __future__ import annotations

import csv

import pytest
import serq_sim
from serq_sim.trace import load_trace
from trace_errors import first_line_checked

pytestmark = pytest.mark.timeout(60)

HEADER = "session,turn,new,out,think,forced"
LIMIT = csv.field_size_limit()  # 131072, the csv module's default
SAID = f"error: the trace is not CSV: this field is longer than {LIMIT} characters (a trace's cells are numbers)"


def _error(tmp_path, text: str) -> str:
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(serq_sim.SimError) as e:
        load_trace(str(p))
    return first_line_checked(str(e.value), str(p)).replace(str(p), "t.csv")


def test_an_unquoted_field_is_told_at_its_column(tmp_path):
    # line 3: "1,1,5,2,1," is 10 characters, the field at column 11
    assert _error(tmp_path, f"{HEADER}\n0,1,10,2,1,0\n1,1,5,2,1,{'0' * (LIMIT + 1)}\n") == f"t.csv:3:11: {SAID}"


def test_a_field_of_the_limit_is_read(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(f"{HEADER}\n0,1,10,2,1,{'0' * LIMIT}\n")
    assert load_trace(str(p)).sessions == [[(10.0, 2.0, 1.0, 0.0)]]


def test_a_quoted_field_over_many_lines_is_told_at_its_opening_quote(tmp_path):
    # the field opens on line 3 at column 5 and the reader stops lines later
    text = f'{HEADER}\n0,1,10,2,1,0\n1,1,"{"1" + chr(10) * (LIMIT + 5)}",2,1,0\n'
    assert _error(tmp_path, text) == f"t.csv:3:5: {SAID}"


def test_a_long_field_of_another_column_is_told_too(tmp_path):
    # a seventh column the trace does not read: "0,1,10,2,1,0," is 13 characters
    text = f"{HEADER},note\n0,1,10,2,1,0,{'x' * (LIMIT + 1)}\n"
    assert _error(tmp_path, text) == f"t.csv:2:14: {SAID}"
