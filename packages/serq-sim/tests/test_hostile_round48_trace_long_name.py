"""``serq run --trace FILE`` of a program whose workload reads no trace names FILE as every message names a
file (serq.errors.shown_path, cut around '…' past 240 characters); it printed it whole (serq_sim.trace.
nothing_to_replace), a first line of 722 characters for a file in a folder of 600."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (0.5); end; }\nrun { horizon 10; seed 1; }\n"


def test_a_long_trace_name_is_cut(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    trace = folder / "t.csv"
    trace.write_text("x,y\n")
    r = subprocess.run([SERQ, "run", "p.sq", "--trace", str(trace)], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    shown = shown_path(trace)
    assert len(shown) == 240 and "…" in shown
    assert r.stderr == (f"p.sq: error: --trace {shown}: the program's workload reads no trace (no `trace \"FILE\"` "
                        "clause) for it to replace\n"), r.stderr[:500]
