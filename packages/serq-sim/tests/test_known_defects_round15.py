"""Known defects, round 15 (serq-sim)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_frontend
import serq_sim
from serq_sim.errors import SimError

pytestmark = pytest.mark.timeout(60)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]

# --- serq_sim.run(trace=...) of a program without a trace clause names the argument -----------------------
#
# The refusal of a trace with nothing to replace said `--trace FILE` to a caller of serq_sim.run(trace=...),
# who gave no flag; the API's other errors name its arguments (serq.loading.argument_given).

PLAIN = """stage s : delay;
workload { arrive renewal(1); }
session { run s (1); }
run { horizon 5; }
"""
TAIL = ": the program's workload reads no trace (no `trace \"FILE\"` clause) for it to replace"


def test_run_names_its_argument_trace(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PLAIN)
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n1,1,1,1,0,0\n")
    monkeypatch.chdir(tmp_path)
    program = serq_frontend.compile(path="p.sq")
    with pytest.raises(SimError) as e:
        serq_sim.run(program, trace="t.csv")
    assert str(e.value) == "p.sq: error: trace=t.csv" + TAIL
    # the command line gave the option, and is told of it
    r = subprocess.run([*SERQ, "run", "p.sq", "--trace", "t.csv", "--no-progress"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "p.sq: error: --trace t.csv" + TAIL + "\n")
