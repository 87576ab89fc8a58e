"""serq sweep and serq compare say when every seed ran the same run.

A capacity planner swept examples/replay/vllm_replay.sq (a trace replayed ``ordered`` at fixed gaps: the
program draws no random number) over three seeds and read p99 TTFT as ``3.43552±0``, and serq compare's
paired and unpaired CIs as 0 with a variance reduction of NaN: the seeds ran one run three times, and the
figures read as perfect precision. Both commands now note it on standard error (serq_sweep.alike), at every
point of two seeds or more whose runs have every figure alike, and say nothing when a seed changes a run.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from serq_sweep.alike import seeds_alike

SERQ = str(Path(sys.executable).parent / "serq")
COLUMNS = ["point", "seed", "status", "message", "warnings", "key", "events", "observes.r.mean"]
FIXED = """
let w = 1;
stage s : fifo;
workload { arrive ARRIVAL; }
session { set t = now; run s (w); observe r = now - t; }
run { horizon 100; seed 1; }
"""


def _row(point, seed, events, mean, status="ok"):
    return {"point": point, "seed": seed, "status": status, "message": "", "warnings": "", "key": f"k{point}{seed}",
            "events": events, "observes.r.mean": mean}


def test_the_note_by_hand():
    alike = [_row(0, 1, 10, 2.5), _row(0, 2, 10, 2.5), _row(1, 1, 12, math.nan), _row(1, 2, 12, math.nan)]
    note = seeds_alike(alike, COLUMNS, "the CIs across them are 0")
    assert note is not None and note.startswith("note: every seed ran the same run: at each of 2 points its 2 seeds")
    assert "the CIs across them are 0: a CI of 0 here measures no precision" in note
    # one figure of one run differs: no note
    assert seeds_alike([*alike[:3], _row(1, 2, 12, 0.5)], COLUMNS, "x") is None
    assert seeds_alike([_row(0, 1, 10, 2.5), _row(0, 2, 11, 2.5)], COLUMNS, "x") is None
    # a point of one seed says nothing either way; a failed run is not counted
    assert seeds_alike([_row(0, 1, 10, 2.5), _row(1, 1, 10, 2.5)], COLUMNS, "x") is None
    assert seeds_alike([_row(0, 1, 10, 2.5), _row(0, 2, 3, 0.0, "error")], COLUMNS, "x") is None
    mixed = [_row(0, 1, 10, 2.5), _row(0, 2, 10, 2.5), _row(0, 3, 10, 2.5), _row(1, 1, 9, 1.0), _row(1, 2, 9, 1.0)]
    assert "its 2 to 3 seeds" in seeds_alike(mixed, COLUMNS, "x")


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args, "--no-progress"], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_sweep_and_compare_note_a_program_that_draws_nothing(tmp_path):
    # batch(20) of unit jobs at one FIFO server: job k ends at k + 1, its response k + 1: mean 10.5, every seed
    (tmp_path / "fixed.sq").write_text(FIXED.replace("ARRIVAL", "batch(20)"))
    (tmp_path / "random.sq").write_text(FIXED.replace("ARRIVAL", "poisson(0.5)"))
    r = _run(tmp_path, "sweep", "fixed.sq", "--seeds", "1..3", "--show", "r.mean")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split() == ["3", "10.5±0"]
    assert r.stderr.startswith("note: every seed ran the same run: at each of 1 point its 3 seeds")
    # jobs of 2: job k ends at 2 (k + 1), mean 21; the difference 10.5 with CIs of 0
    r = _run(tmp_path, "compare", "fixed.sq", "--set", "w=1,2", "--seeds", "1..2", "--figure", "r.mean")
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("note: every seed ran the same run: at each of 2 points its 2 seeds")
    assert "the paired and unpaired CIs are 0 (the variance reduction NaN)" in r.stderr
    assert r.stdout.splitlines()[-1].split() == ["observes.r.mean", "10.5", "21", "10.5", "0", "0", "nan"]
    r = _run(tmp_path, "sweep", "random.sq", "--seeds", "1..3", "--show", "r.mean")
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr
