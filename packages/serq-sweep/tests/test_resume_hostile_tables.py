"""serq sweep --out/--records resumes from what is at those paths: a table or records file whose rows are
short or long, or that is a FIFO, is one message that says how to go on (--fresh), never a traceback or a
hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); record r { x = now; } }
run { horizon 5; seed 1; }
"""

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


def _sweep(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", "--seeds", "1..2", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)


def _refused(r: subprocess.CompletedProcess, *parts: str) -> None:
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    for part in parts:
        assert part in r.stderr, r.stderr


# the row is told at line 2 with the line quoted and a caret: a short row at its start, a long one at its first
# field past the header's three (0,1,1,ok: "ok" is the fourth field, after the 6 characters "0,1,1,")
@pytest.mark.parametrize("row, fields, col", [("0,1", 2, 1), ("0,1,1,ok,,k,9,9", 8, 7)])
def test_a_table_whose_row_is_not_the_headers_width_is_refused(tmp_path, row, fields, col):
    (tmp_path / "o.csv").write_text(f"point,seed,status\n{row}\n")
    r = _sweep(tmp_path, "-o", "o.csv")
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"o.csv:2:{col}: error: cannot read the table to resume from (line 2 has {fields} fields, "
                        f"the header 3); remove it or give --fresh\n  {row}\n  {' ' * (col - 1)}^\n")


def test_records_whose_row_is_short_are_refused(tmp_path):
    (tmp_path / "r.csv").write_text("point,seed,key,session,turn,time,x\n0,1\n")
    r = _sweep(tmp_path, "-o", "o.csv", "--records", "r.csv")
    assert r.returncode == 1, r.stderr
    assert r.stderr == ("r.csv:2:1: error: cannot read the records to resume from (line 2 has 2 fields, the header "
                        "7); remove it or give --fresh\n  0,1\n  ^\n")


@needs_fifo
def test_a_fifo_at_the_table_or_the_records_is_refused(tmp_path):
    os.mkfifo(tmp_path / "o.csv")
    _refused(_sweep(tmp_path, "-o", "o.csv"),
             "o.csv: cannot read the table to resume from (is a FIFO (a named pipe), not a file)")
    os.remove(tmp_path / "o.csv")
    os.mkfifo(tmp_path / "r.csv")
    _refused(_sweep(tmp_path, "-o", "o.csv", "--records", "r.csv"),
             "r.csv: cannot read the records to resume from (is a FIFO (a named pipe), not a file)")


def test_a_whole_table_still_resumes(tmp_path):
    first = _sweep(tmp_path, "-o", "o.csv", "--records", "r.csv")
    assert first.returncode == 0, first.stderr
    (tmp_path / "o.csv").write_text((tmp_path / "o.csv").read_text() + "\n")  # a blank line is no row
    again = _sweep(tmp_path, "-o", "o.csv", "--records", "r.csv")
    assert again.returncode == 0, again.stderr
    assert "(0 run now, 2 resumed)" in again.stderr
