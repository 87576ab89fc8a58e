"""A capacity search whose runs would have no end is refused as a sweep's are, in one line, before any run.

``serq sweep --find … --over … --horizon inf`` of a program whose arrivals never stop ran its points' runs,
each of which serq_sim.run refused with a ValueError, and the command printed that ValueError's traceback
(status 1); ``serq sweep --horizon inf`` without --find says 'the run has no end: …' (core.plan). The search
now refuses such a point as the plan does (search._refuse_no_end), naming the options on the command line and
the arguments in the API (serq_sim.notes.no_end_refused told the command line's options as ``--max_events``
when given the command line's own rule). A bound (--max-events) lets the search run, as it lets a sweep."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UserError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """\
let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { run s (1); }
run { horizon 10; }
"""
NO_END = ("the run has no end: horizon inf and arrivals that never stop (`arrive poisson`), and no {me} or {mw} "
          "to stop it; give {a} (or `arrivals N;` in the run block), a finite horizon, or {me2} or {mw2} (a partial "
          "report where it stops)")
CLI = NO_END.format(me="--max-events", mw="--max-wall", a="--arrivals N", me2="--max-events N", mw2="--max-wall S")
API = NO_END.format(me="max_events", mw="max_wall", a="arrivals=N", me2="max_events=N", mw2="max_wall=S")
FIND = ["--find", "stages.s.utilisation <= 0.5", "--over", "lam", "0.1:0.9"]


def sweep(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_a_search_without_end_is_refused_in_one_line(tmp_path):
    r = sweep(tmp_path, *FIND, "--horizon", "inf")
    assert r.returncode == 1, r.stderr
    assert r.stderr == f"p.sq: error: {CLI}\n", r.stderr
    assert r.stdout == ""


def test_a_sweep_says_the_same(tmp_path):
    r = sweep(tmp_path, "--horizon", "inf")
    assert r.returncode == 1, r.stderr
    assert r.stderr == f"p.sq: error: {CLI}\n", r.stderr


def test_a_bound_lets_the_search_run(tmp_path):
    # fifo(1) of unit work: the utilisation is lam (up to the runs' noise), so the largest lam that keeps it
    # at most 0.5 is near 0.5
    r = sweep(tmp_path, *FIND, "--horizon", "inf", "--max-events", "20000")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["lam", "outcome", "holds", "fails", "evaluations",
                                "stages.s.utilisation:mean"], r.stdout
    row = lines[1].split()
    assert row[1] == "found", r.stdout
    assert 0.35 < float(row[0]) < 0.65, r.stdout
    assert 0.35 < float(row[5]) <= 0.5, r.stdout  # (the condition's mean at the value found)


def test_the_api_names_its_arguments(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as e:
        serq_sweep.find(str(tmp_path / "p.sq"), "stages.s.utilisation <= 0.5", ("lam", "0.1:0.9"),
                        horizon=math.inf, workers=0)
    assert str(e.value) == f"{tmp_path / 'p.sq'}: error: {API}"
