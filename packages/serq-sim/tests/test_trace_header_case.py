"""A trace header that names its columns in another case (``SESSION,TURN,...``, a spreadsheet's habit) is
refused as lacking them, and the message says the names are lower case, naming each column it found in
another case (serq_sim.trace._case_note); a header lacking a column under any case says nothing of case."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.errors import SimError
from serq_sim.trace import load_trace

SERQ = str(Path(sys.executable).parent / "serq")


def first_line(tmp_path: Path, header: str) -> str:
    p = tmp_path / "t.csv"
    p.write_text(header + "\n0,1,10,5,0,0\n")
    with pytest.raises(SimError) as e:
        load_trace(str(p))
    return str(e.value).splitlines()[0]


def test_upper_case_names_are_told_as_lower_case(tmp_path):
    line = first_line(tmp_path, "SESSION,TURN,NEW,OUT,THINK,FORCED")
    assert line.endswith(": error: the header lacks the column(s) session, turn, new, out, think, forced "
                         "(expected session,turn,new,out,think,forced); the column names are lower case "
                         "(SESSION for session, TURN for turn, NEW for new, OUT for out, THINK for think, "
                         "FORCED for forced)"), line


def test_only_the_columns_in_another_case_are_named(tmp_path):
    line = first_line(tmp_path, "session,Turn,new,out,think,Forced")
    assert line.endswith("lacks the column(s) turn, forced (expected session,turn,new,out,think,forced); "
                         "the column names are lower case (Turn for turn, Forced for forced)"), line


def test_a_column_missing_under_every_case_gets_no_note(tmp_path):
    line = first_line(tmp_path, "session,turn,new,out,think")
    assert line.endswith("lacks the column(s) forced (expected session,turn,new,out,think,forced)"), line


def test_the_command_says_it_once_with_the_line_and_a_caret(tmp_path):
    (tmp_path / "t.csv").write_text("SESSION,TURN,NEW,OUT,THINK,FORCED\n0,1,10,5,0,0\n")
    (tmp_path / "p.sq").write_text(
        "stage s : delay;\n"
        'workload { arrive batch(1); trace "t.csv"; }\n'
        "session { loop { turn; run s (new); branch (more) { } else { end; } } }\n"
        "run { horizon 100; }\n")
    r = subprocess.run([SERQ, "run", "p.sq"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith("t.csv:1:1: error: the header lacks") and "(SESSION for session" in lines[0]
    assert lines[1:] == ["  SESSION,TURN,NEW,OUT,THINK,FORCED", "  ^"], r.stderr
