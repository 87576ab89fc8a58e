"""A warning of the program is said once a sweep, not once a point (peer programs, round 20: a planner's
sweep of a program that read a trace's column before its first `turn;` printed the compiler's warning once per
point, and a capacity search once per evaluation).

Every point of a sweep, an arm of a comparison and each value a search tries is compiled, and each compile
wrote its warnings on stderr. Now the same text is written once per sweep, comparison or search
(core.compiled_once); a warning that differs between points (here a stage's budget of 0 at one value of a
let only) is written for the points that have it. The runs and the table are as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

TRACE = "session,turn,new,out,think,forced\n0,1,2,1,0,0\n"
# reads `new` before its first turn (a warning at 6:22); a budget of B, 0 at B=0 (a warning of its own)
PROGRAM = """let N = 1;
let B = 10;
stage s : fifo(N);
stage e : step { budget B; cost 1; }
workload { arrive poisson(1); trace "t.csv"; }
session { run s (1 + new); turn; run s (new / 10); }
run { horizon 20; warmup 0; }
"""
READ = "p.sq:6:22: warning: `new` is read before the session's first `turn;`"
BUDGET = "warning: stage `e`: a budget of 0 schedules no token"


def serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, *args, "--no-progress", "--workers", "0"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL)


def test_a_sweep_says_a_warning_once(tmp_path):
    r = serq(tmp_path, "sweep", "p.sq", "--set", "N=1,2,3,4", "--seeds", "1..2", "-o", "t.csv.out.csv")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(READ) == 1, r.stderr
    rows = (tmp_path / "t.csv.out.csv").read_text().splitlines()
    assert len(rows) == 1 + 8 and all(",ok," in row for row in rows[1:])


def test_a_warning_of_some_points_only_is_said_for_them(tmp_path):
    r = serq(tmp_path, "sweep", "p.sq", "--set", "B=0,10", "--set", "N=1,2", "-o", "out.csv")
    assert r.returncode == 0, r.stderr
    # B=0 with N=1 and N=2: the two warnings together are one text, said once; B=10: the read's alone, once more
    assert r.stderr.count(BUDGET) == 1 and r.stderr.count(READ) == 2, r.stderr


def test_a_search_and_a_comparison_say_it_once(tmp_path):
    r = serq(tmp_path, "sweep", "p.sq", "--find", "events >= 0", "--over", "N", "1:9:1", "--seeds", "1")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(READ) == 1, r.stderr
    r = serq(tmp_path, "compare", "p.sq", "--set", "N=1,2,3", "--seeds", "1..2")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(READ) == 1, r.stderr


def test_serq_run_still_says_it(tmp_path):
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "-o", "r.json"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr.count(READ) == 1, r.stderr
