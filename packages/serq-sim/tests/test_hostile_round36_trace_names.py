"""A trace an IR file names with a line break or an escape in its name (``"path": "n\\nl.csv"``) is named by
its errors as every name a message quotes is (serq.errors.printable): ``cannot read the trace`` and ``is
outside`` printed the line break as it is, so the one message was two lines, the second starting with the rest
of the name (an escape was escaped already: the message's own text is made printable, its line breaks kept)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ('stage s : delay;\nworkload { arrive closed(1); trace "t.csv"; }\n'
           "session { loop { turn; run s (1); branch (more) { } else { end; } } }\nrun { horizon 5; seed 1; }\n")


def _ir(tmp_path: Path, trace: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,1,1,1,0\n")
    ir = subprocess.run([SERQ, "ir", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    d = json.loads(ir.stdout)
    d["workload"]["trace"]["path"] = trace
    (tmp_path / "p.ir.json").write_text(json.dumps(d))
    return subprocess.run([SERQ, "run", "p.ir.json", "--no-progress"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)


def test_a_trace_that_cannot_be_read(tmp_path):
    r = _ir(tmp_path, "n\nl\x1b[2J.csv")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "p.sq:2:30: error: cannot read the trace n\\nl\\x1b[2J.csv: No such file or directory",
        '  workload { arrive closed(1); trace "t.csv"; }', "                               ^"]


def test_a_trace_outside_the_folder(tmp_path):
    r = _ir(tmp_path, "../n\nl.csv")
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    assert first.startswith("p.sq:2:30: error: the trace ../n\\nl.csv is outside the folder of p.ir.json")
    assert len(r.stderr.splitlines()) == 3


def test_a_mistake_inside_such_a_trace_names_it_so(tmp_path):
    # the trace is there and its row 2 has a word for a number: the locator of the cell (serq.jsonin's, as every
    # CSV's and JSON file's mistake is told) names the file as the message quotes names, on the message's line
    (tmp_path / "n\nl.csv").write_text("session,turn,new,out,think,forced\n0,1,x,1,1,0\n")
    r = _ir(tmp_path, "n\nl.csv")
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["n\\nl.csv:2:5: error: column new: 'x' is not a number", "  0,1,x,1,1,0",
                                     "      ^"]


def test_a_trace_given_on_the_command_line(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--trace", "n\nl.csv", "--no-progress"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["n\\nl.csv: error: cannot read the trace: No such file or directory"]
