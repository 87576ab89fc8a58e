"""A trace's blank lines are skipped wherever they are, before its header too (serq_sim.trace._header).

A trace whose first line was blank (an editor's or a script's empty first line, or a line of only commas)
was refused as "the trace is empty" though its header and rows followed; a first line of only separators
before a real first row said the same, where the header lacks its columns. The header's errors and "no
rows" are placed at the header's own line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.trace import load_trace
from trace_errors import trace_error

HEADER = "session,turn,new,out,think,forced\n"
SERQ = str(Path(sys.executable).parent / "serq")


def write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "t.csv"
    p.write_text(text)
    return str(p)


def error_of(path: str) -> str:
    # the first line; the rest, the line quoted with a caret, checked against the file
    return trace_error(path)


@pytest.mark.parametrize("before", ["\n", "\r\n", "   \n", ",,,,,\n", "\n \t\n,\n"])
def test_blank_lines_before_the_header_are_skipped(tmp_path, before):
    p = write(tmp_path, before + HEADER + "0,1,100,5,0,0\n\n1,1,7,1,0,0\n")
    assert load_trace(p).sessions == [[(100.0, 5.0, 0.0, 0.0)], [(7.0, 1.0, 0.0, 0.0)]]


def test_errors_after_blank_lines_are_at_their_lines(tmp_path):
    assert error_of(p := write(tmp_path, "\n\n" + HEADER + "0,1,1x0,5,0,0\n")) == \
        f"{p}:4:5: error: column new: '1x0' is not a number"
    assert error_of(p := write(tmp_path, "\n\nsession,turn,new,out,think,forced,new\n0,1,1,1,0,0,1\n")) == \
        f"{p}:3:35: error: the header names the column new twice"
    assert error_of(p := write(tmp_path, "\n,,,\n0,1,100,5,0,0\n")) == \
        f"{p}:3:1: error: the header lacks the column(s) session, turn, new, out, think, forced (expected " \
        "session,turn,new,out,think,forced)"
    assert error_of(p := write(tmp_path, "\n\n" + HEADER)) == f"{p}:3:34: error: the trace has no rows after its header"
    assert error_of(p := write(tmp_path, HEADER + "\n\n")) == f"{p}:1:34: error: the trace has no rows after its header"


@pytest.mark.parametrize("text", ["\n\n\n", ",,,,,\n", " \n"])
def test_a_file_of_blank_lines_is_empty(tmp_path, text):
    assert error_of(p := write(tmp_path, text)) == \
        f"{p}:1:1: error: the trace is empty (expected the header session,turn,new,out,think,forced)"


@pytest.mark.timeout(60)
def test_serq_run_replays_such_a_trace(tmp_path):
    (tmp_path / "p.sq").write_text('stage s : fifo;\nworkload { arrive poisson(1); trace "t.csv"; }\n'
                                   "session { run s (new / 1000); observe n = new; end; }\nrun { horizon 50; }\n")
    write(tmp_path, "\n" + HEADER + "0,1,100,5,0,0\n")
    r = subprocess.run([SERQ, "run", "p.sq", "--json", "--no-progress"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert '"n"' in r.stdout
