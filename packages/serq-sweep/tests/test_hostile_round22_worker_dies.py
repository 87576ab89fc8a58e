"""A worker process of the local pool that ends inside a run (``os._exit`` in a plugin's code, the kernel's
OOM killer) is that run's error, not a sweep that waits for ever.

``multiprocessing.Pool`` starts a new worker in place of one that ended and never hands back the run it
held: ``serq sweep`` of five points whose third ends its worker ran the other four and then waited until it
was killed. Each worker now says which run it takes; a run whose worker is gone is a row of status
``error`` naming the point and seed, the other runs' rows as ever, and the sweep exits 1 as for any run
that failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PLUGIN = """import os

from serq import hookimpl
from serq_sim.stages import DelayStage


def die(sim, node, member, flat):
    if node.kind.params in ([3], [3.0]):
        os._exit(7)
    return DelayStage(sim, node, member, flat)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("die", die)
"""

PROGRAM = """let a = 1;
stage s : @die(a);
workload { arrive poisson(1); }
session { run s (1); }
run { horizon 5; seed 1; }
"""


def _sweep(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    info = site / "dieplug-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dieplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[serq]\ndieplug = r22_die\n")
    (site / "r22_die.py").write_text(PLUGIN)
    (tmp_path / "p.sq").write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([SERQ, "sweep", "p.sq", "--no-progress", "-o", "t.csv", *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=90, stdin=subprocess.DEVNULL, env=env)


def _rows(tmp_path: Path) -> list[list[str]]:
    import csv

    with open(tmp_path / "t.csv", newline="") as f:
        return list(csv.reader(f))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_run_whose_worker_ends_is_its_error(tmp_path, workers):
    r = _sweep(tmp_path, "--set", "a=1:5:1", "--workers", workers)
    assert r.returncode == 1, r.stderr
    died = ("error: p.sq: the worker process running point 2, seed 1 ended without its result: something in "
            "the run (a plugin's code, a lack of memory) ended the process")
    # (its exit status is named when the pool had not dropped the ended process before the sweep looked)
    with_status = died.replace("its result:", "its result (exit status 7):")
    lines = r.stderr.splitlines()[-4:]
    assert lines[1] in (died, with_status)
    died = lines[1]
    # the point's --set value noted, as serq run notes it
    assert lines == ["error: 1 run(s) failed; the first:", died, "note: `a` is 3, given by --set a",
                     "(at the sweep's point a=3, seed 1)"]
    assert "Traceback" not in r.stderr
    rows = _rows(tmp_path)
    assert [row[:4] for row in rows[1:]] == [["0", "1", "1", "ok"], ["1", "2", "1", "ok"], ["2", "3", "1", "error"],
                                             ["3", "4", "1", "ok"], ["4", "5", "1", "ok"]]
    assert rows[3][4] == died
    assert not (tmp_path / "t.csv.journal").exists()  # the table is complete


def test_every_run_ending_its_worker_ends_the_sweep(tmp_path):
    r = _sweep(tmp_path, "--set", "a=3", "--seeds", "1..3", "--workers", "2")
    assert r.returncode == 1, r.stderr
    assert "error: 3 run(s) failed; the first:" in r.stderr
    assert [row[2:4] for row in _rows(tmp_path)[1:]] == [["1", "error"], ["2", "error"], ["3", "error"]]


def test_under_dask_local_the_run_is_its_error_and_the_others_run(tmp_path):
    """Dask's worker that ends loses the IR scattered to it, and the runs that needed it were cancelled: the
    sweep ended in a traceback ('FutureCancelledError' object has no attribute 'items'). They are sent again
    with their IR; the run that ends every worker it is given to is its error (Dask's KilledWorker)."""
    r = _sweep(tmp_path, "--set", "a=1:5:1", "--dask", "local", "--workers", "2")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines()[-3:] == [
        "error: p.sq: the Dask worker running point 2, seed 1 ended without its result: something in the run (a "
        "plugin's code, a lack of memory) ended the process", "note: `a` is 3, given by --set a",
        "(at the sweep's point a=3, seed 1)"]
    assert [row[3] for row in _rows(tmp_path)[1:]] == ["ok", "ok", "error", "ok", "ok"]
