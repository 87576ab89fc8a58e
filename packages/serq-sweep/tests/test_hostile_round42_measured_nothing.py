"""The note that every seed ran the same run names its real cause when no run completed a turn.

``serq compare p.sq --horizon 5e-324`` of a program with Poisson arrivals said every seed gave the same run "as a
program that draws no random number does": the program draws, but each run stopped before anything it measures
happened, so the seeds could not differ. The note now says that no run completed anything (no session ended, no stage completed a job) and where they
ended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from serq_sweep.alike import seeds_alike

SERQ = str(Path(sys.executable).parent / "serq")
COLUMNS = ["point", "seed", "status", "message", "warnings", "key", "end", "ended", "turns", "stages.s.completions",
           "observes.r.mean"]
PROGRAM = """\
let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t = now; run s (~exp(1)); observe r = now - t; }
run { horizon 1000; }
"""


def _row(point, seed, end, done, mean, turns=0):
    return {"point": point, "seed": seed, "status": "ok", "message": "", "warnings": "", "key": f"k{point}{seed}",
            "end": end, "ended": done, "turns": turns, "stages.s.completions": done, "observes.r.mean": mean}


def test_runs_that_completed_no_turn_measured_nothing():
    nan = float("nan")
    note = seeds_alike([_row(0, 1, 0.001, 0, nan), _row(0, 2, 0.001, 0, nan)], COLUMNS, "the CIs across them are 0")
    assert note == ("note: every seed ran the same run: at each of 1 point its 2 seeds gave every figure alike, "
                    "because no run completed anything (no session ended, no stage completed a job; each ended at "
                    "t=0.001): the runs measured nothing, whatever "
                    "the program draws; the CIs across them are 0: a CI of 0 here measures no precision (a longer "
                    "horizon gives figures to compare)")
    # runs of different ends (a point's horizon each)
    note = seeds_alike([_row(0, 1, 1, 0, nan), _row(0, 2, 1, 0, nan), _row(1, 1, 2, 0, nan), _row(1, 2, 2, 0, nan)],
                       COLUMNS, "x")
    assert "because no run completed anything (no session ended, no stage completed a job; they ended by t=2)" in note


def test_runs_that_completed_turns_keep_the_program_note():
    note = seeds_alike([_row(0, 1, 100, 5, 2.0), _row(0, 2, 100, 5, 2.0)], COLUMNS, "x")
    assert "as a program that draws no random number does" in note and "completed anything" not in note
    # sessions that ended but completed no turn (a program without `end;`) measured something
    note = seeds_alike([_row(0, 1, 100, 3, 2.0), _row(0, 2, 100, 3, 2.0)], COLUMNS, "x")
    assert "as a program that draws no random number does" in note
    # only the turns: a run completed a turn
    note = seeds_alike([_row(0, 1, 100, 0, 2.0, 1), _row(0, 2, 100, 0, 2.0, 1)], COLUMNS, "x")
    assert "as a program that draws no random number does" in note


def test_compare_at_a_horizon_of_the_least_double(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    r = subprocess.run([SERQ, "compare", str(prog), "--set", "lam=0.5,0.6", "--seeds", "1..2", "--horizon", "5e-324"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ("because no run completed anything (no session ended, no stage completed a job; each ended at "
            "t=4.94066e-324)") in r.stderr
    assert "draws no random number" not in r.stderr
