"""Known defects of a sweep, checked against docs/language.md and docs/sweep.md.

A run with no end (docs/language.md, "A run needs a horizon where it runs"): a horizon of inf, no `arrivals
N`, and arrivals that never stop stops only at a bound or a signal. ``serq sweep`` and ``serq compare`` say so
on stderr before the runs, once a program, not once a point (the points of one program differ in their
values, not in whether their runs end)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import core

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let lam = 0.5;
stage f : fifo;
workload { arrive poisson(lam); }
session { run f (1); }
run { horizon 10; }
"""
NO_END = ("warning: the run has no end: horizon inf and arrivals that never stop (`arrive poisson`); it stops "
          "only at --max-events, --max-wall, --max-samples or a signal, with a partial report; give --arrivals "
          "N (or `arrivals N;` in the run block) or a finite horizon")


@pytest.fixture
def programs(tmp_path):
    for name in ("p.sq", "q.sq"):
        (tmp_path / name).write_text(PROGRAM)
    return str(tmp_path / "p.sq"), str(tmp_path / "q.sq")


def test_a_sweep_of_runs_with_no_end_says_it_once(programs):
    p, _ = programs
    r = subprocess.run([SERQ, "sweep", p, "--set", "lam=0.5,0.6,0.7", "--seeds", "1,2", "--horizon", "inf",
                        "--max-events", "50", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, timeout=60)
    assert r.stderr.splitlines() == [f"serq: {NO_END}"], r.stderr
    assert r.stdout.count("max-events") == 2 * 3 * 2  # 6 runs cut short (status and partial): they ran


def test_one_warning_for_each_program(programs):
    p, q = programs
    plan = core.plan([p, q], sets={"lam": [0.5, 0.6]}, horizon=float("inf"))
    assert plan.warnings == [f"{p}: {NO_END}", f"{q}: {NO_END}"]


@pytest.mark.parametrize("kw", [{"horizon": 10.0}, {"horizon": float("inf"), "arrivals": 5}])
def test_a_sweep_whose_runs_end_says_nothing(programs, kw):
    assert core.plan([programs[0]], sets={"lam": [0.5, 0.6]}, **kw).warnings == []


def test_compare_says_it_once_too(programs):
    p, _ = programs
    r = subprocess.run([SERQ, "compare", p, "--set", "lam=0.5,0.6", "--horizon", "inf", "--max-events", "50",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.stderr.count("has no end") == 1 and f"serq: {NO_END}" in r.stderr.splitlines(), r.stderr
