"""A trace whose header or row is quoted whole, or whose fields are separated by spaces, is told so.

A header written ``"session,turn,new,out,think,forced"`` is one CSV field, and the error said the header lacked
every column, each of which the quoted line shows; a row ``"0,1,20,4,1,0"`` was "expected 6 fields, found 1"
with its six values in sight; a header of names between spaces had no note, where ``;``, tabs and ``|`` have
one (serq_sim.trace._separator_note, _row_note). A row quoted whole that does not hold the header's number of
values, and a header quoted in pieces, are as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.errors import SimError
from serq_sim.trace import load_trace

SERQ = str(Path(sys.executable).parent / "serq")
HEADER = "session,turn,new,out,think,forced"
LACKS = ("the header lacks the column(s) session, turn, new, out, think, forced (expected "
         "session,turn,new,out,think,forced)")
QUOTED = ("is one quoted field: its {} and the commas between them are inside one pair of quotes (write them "
          "unquoted, or each in quotes of its own)")


def first_line(path: Path) -> str:
    with pytest.raises(SimError) as e:
        load_trace(str(path))
    return str(e.value).splitlines()[0]


def test_a_header_quoted_whole(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(f'"{HEADER}"\n0,1,20,4,1,0\n')
    assert first_line(path) == f"{path}:1:1: error: {LACKS}; the header {QUOTED.format('names')}"


def test_a_row_quoted_whole(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(f'{HEADER}\n0,1,20,4,1,0\n"0,2,20,4,1,0"\n')
    assert first_line(path) == f"{path}:3:1: error: expected 6 fields, found 1; the row {QUOTED.format('values')}"


def test_a_row_quoted_whole_of_another_width_is_as_before(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(f'{HEADER}\n"0,1,20,4,1"\n')
    assert first_line(path) == f"{path}:2:1: error: expected 6 fields, found 1"


def test_a_header_of_names_between_spaces(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("session turn new out think forced\n0 1 20 4 1 0\n")
    assert first_line(path) == (f"{path}:1:1: error: {LACKS}; the header is one field: a trace's fields are "
                                "separated by commas, and this file's by spaces")


def test_each_name_quoted_is_read(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('"session","turn","new","out","think","forced"\n"0","1","20","4","1.5","0"\n')
    assert [[tuple(turn) for turn in s] for s in load_trace(str(path)).sessions] == [[(20, 4, 1.5, 0)]]


def test_serq_run_says_it_once(tmp_path):
    (tmp_path / "t.csv").write_text(f'"{HEADER}"\n0,1,20,4,1,0\n')
    (tmp_path / "p.sq").write_text(
        'stage s : delay;\nworkload { arrive poisson(1); trace "t.csv"; }\nsession { loop { turn; run s (new); } }\n'
        'run { horizon 10; seed 1; }\n')
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == f"t.csv:1:1: error: {LACKS}; the header {QUOTED.format('names')}", r.stderr
    assert lines[1:] == [f'  "{HEADER}"', "  ^"], r.stderr
