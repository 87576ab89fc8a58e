"""A capacity planner's questions on a fleet whose answers are known in closed form (peer_programs27/mmc.sq,
M/M/c at 3 requests a second of mean service 1): the fewest servers whose mean wait in the queue is at
most 0.07 s (`serq sweep --find … --over c 1:10:1`: Erlang's C gives 0.118 s at five servers, 0.033 s at six),
the paired difference between five and six servers under common random numbers (each session draws its own
service, so both arms serve the same requests: the paired CI is narrower than the unpaired one, and it
holds Erlang's difference), and the same tables byte for byte from a second sweep, in one process or in two."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import compare, find

HERE = Path(__file__).parent / "peer_programs27"
MMC = str(HERE / "mmc.sq")
SERQ = str(Path(sys.executable).parent / "serq")


def erlang_wait(c: int, lam: float, mu: float = 1.0) -> float:
    """Mean wait in the queue of M/M/c (Erlang's C over c mu - lam)."""
    a = lam / mu
    top = a**c / math.factorial(c) * c / (c - a)
    p_wait = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    return p_wait / (c * mu - lam)


def test_the_fewest_servers_meeting_the_bound():
    assert erlang_wait(5, 3) == pytest.approx(0.1181, abs=1e-4) and erlang_wait(6, 3) == pytest.approx(0.0331, abs=1e-4)
    cols, rows = find(MMC, "stages.svc.wait <= 0.07", ("c", "1:10:1"), seeds="1..3", workers=0, progress=False)
    (row,) = rows
    assert (row["outcome"], row["c"], row["holds"], row["fails"]) == ("found_smallest", 6, 6, 5)


def test_paired_differences_are_narrow_under_common_random_numbers():
    table = compare(MMC, sets={"c": [5, 6]}, seeds="1..6", figures=["stages.svc.wait", "arrivals"], workers=0,
                    progress=False)
    rows = {r["figure"]: r for r in (table.to_dict("records") if hasattr(table, "to_dict") else table)}
    wait = rows["stages.svc.wait"]
    # the same arrivals in both arms (a figure equal in every run of both is left out, so `arrivals`, equal
    # per seed across the arms, is there with a difference of 0 exactly)
    assert rows["arrivals"]["diff"] == 0 and rows["arrivals"]["ci_paired"] == 0
    want = erlang_wait(6, 3) - erlang_wait(5, 3)
    assert abs(wait["diff"] - want) <= wait["ci_paired"], (wait["diff"], wait["ci_paired"], want)
    assert wait["ci_paired"] < 0.7 * wait["ci_unpaired"]
    assert wait["variance_reduction"] > 0.5


def test_the_same_seed_gives_the_same_bytes(tmp_path):
    outs = []
    for k, workers in enumerate(("0", "0", "2")):
        out, records = tmp_path / f"t{k}.csv", tmp_path / f"r{k}.csv"
        r = subprocess.run([SERQ, "sweep", MMC, "--set", "c=5,6", "--seeds", "1..2", "--horizon", "500",
                            "--workers", workers, "--no-progress", "--out", str(out), "--records", str(records)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.append((out.read_bytes(), records.read_bytes(), (tmp_path / f"t{k}.points.csv").read_bytes()))
    assert outs[0] == outs[1]
    # another engine (two worker processes) writes the same tables
    assert outs[0] == outs[2]
