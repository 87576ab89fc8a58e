"""The means and CIs of ``serq sweep --show`` and ``serq compare`` say how many runs they are over when that
is fewer than the runs shown: a run that failed has no figures, and a run (one cut short by ``--max-events``
too) may have no finite value of a figure (an observe of no samples). ``--show`` gave the point's ``runs``
alone beside a mean over fewer of them, and ``serq compare`` the pairs alone beside ``A`` and ``B``, each
over its arm's own values (docs/sweep.md)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

# x is observed only of the sessions that arrive after d: with d = 1.5 and two arrivals of rate 1, some
# seeds observe none
SOME = """let d = 0;
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (~exp(1)); branch (t0 > d) { observe x = now - t0; } end; }
run { horizon inf; warmup 0; arrivals 2; }
"""
# d = 0.3: a session's work ~exp(1) - 0.3 is negative with probability 1 - exp(-0.3), and the run fails
FAILS = """let d = 0;
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (~exp(1) - d); observe x = now - t0; end; }
run { horizon inf; warmup 0; arrivals 3; }
"""


def test_show_says_over_how_many_runs_a_mean_is(tmp_path):
    (tmp_path / "g.sq").write_text(SOME)
    r = subprocess.run([SERQ, "sweep", "g.sq", "--set", "d=0,1.5", "--seeds", "1..6", "--workers", "0",
                        "--no-progress", "--out", "t.csv", "--show", "x.mean"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "t.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    have = {d: sum(1 for row in rows if row["d"] == d and row["observes.x.mean"] != "") for d in ("0", "1.5")}
    assert have["0"] == 6 and 0 < have["1.5"] < 6, have  # (every session of d = 0 is observed)
    lines = r.stdout.splitlines()
    assert lines[1].split()[:2] == ["0", "6"] and "(n=" not in lines[1]
    assert lines[2].split()[:2] == ["1.5", "6"] and lines[2].endswith(f"(n={have['1.5']})"), lines


def test_compare_says_over_how_many_runs_each_arm_is(tmp_path):
    (tmp_path / "f.sq").write_text(FAILS)
    f = str(tmp_path / "f.sq")
    runs = serq_sweep.sweep(f, sets={"d": 0.3}, seeds="1..8", workers=0, progress=False)
    ok = int((runs["status"] == "ok").sum())
    assert 0 < ok < 8
    c = serq_sweep.compare(f, sets={"d": [0, 0.3]}, seeds="1..8", figures=["x.mean"], workers=0, progress=False)
    (row,) = c.to_dict("records")
    assert (row["n"], row["n_a"], row["n_b"]) == (ok, 8, ok)  # (d = 0 never fails: its work is ~exp(1))
