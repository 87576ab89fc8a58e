"""`--workers N` beyond reason: `serq sweep --workers 100000` made a pool of 100000 processes before its
one run ran, forking until the machine gave out (the command hung). The count is bounded (a usage
error past serq_sweep.engines.MAX_WORKERS), and a pool starts no more processes than there are runs.
A value that is no whole number says so (click's IntRange said "'1e400' is not a valid integer range")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UserError
from serq_sweep import engines

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")


@pytest.mark.parametrize("command", [["sweep"], ["compare", "--set", "lambda=0.5,0.6"]])
@pytest.mark.parametrize("workers", ["100000", str(engines.MAX_WORKERS + 1), "99999999999999999999"])
def test_too_many_workers_is_a_usage_error(command, workers):
    r = subprocess.run([SERQ, *command[:1], MG1, *command[1:], "--horizon", "100", "--no-progress",
                        "--workers", workers], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == (f"error: invalid value for '--workers': {workers} is not a number of worker processes "
                        f"from 0 to {engines.MAX_WORKERS} (see 'serq {command[0]} --help')\n")
    assert r.stdout == ""


def test_the_python_api_refuses_them_too():
    # named by its argument, as the API's messages name what was given (test_known_defects_round7.py)
    with pytest.raises(UserError, match=rf"workers=100000: a sweep runs on 0 to {engines.MAX_WORKERS} "):
        serq_sweep.sweep(MG1, horizon=3000, warmup=0, workers=100000, progress=False)


def test_a_pool_starts_no_more_processes_than_runs(monkeypatch):
    started = []
    start = engines.LocalPool._start

    def counted(self, n):
        started.append(n)
        return start(self, n)

    monkeypatch.setattr(engines.LocalPool, "_start", counted)
    frame = serq_sweep.sweep(MG1, sets={"lambda": [0.5, 0.6]}, horizon=3000, warmup=0, seeds=[1], workers=64,
                             progress=False)
    assert len(frame) == 2 and list(frame["status"]) == ["ok", "ok"]
    assert started == [2]
    # the same table as in this process
    alone = serq_sweep.sweep(MG1, sets={"lambda": [0.5, 0.6]}, horizon=3000, warmup=0, seeds=[1], workers=0,
                             progress=False)
    assert frame.drop(columns=["message"]).equals(alone.drop(columns=["message"]))


@pytest.mark.parametrize("flag, value, what", [("--workers", "1.5", None), ("--max-events", "1e400", None),
                                               ("--max-events", "0", "a positive whole number of events")])
def test_a_count_that_is_not_one_says_so(flag, value, what):
    r = subprocess.run([SERQ, "sweep", MG1, "--no-progress", flag, value], capture_output=True, text=True, timeout=60)
    said = f"{value} is not {what}" if what else f"'{value}' is not a whole number"
    assert r.returncode == 2 and r.stderr == (f"error: invalid value for '{flag}': {said} (see 'serq sweep "
                                              "--help')\n"), r.stderr
