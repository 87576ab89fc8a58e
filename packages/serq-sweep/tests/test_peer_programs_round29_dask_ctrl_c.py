"""Ctrl-C at a terminal reaches the whole process group: the sweep and, under ``--dask local``, the worker
processes of its LocalCluster. The sweep keeps what finished and says ``interrupted`` (status 130); each Dask
worker ended in a ``KeyboardInterrupt`` that multiprocessing printed under it, traceback and all ("Process Dask
Worker process (from Nanny): Traceback …"), once a worker. The workers now ignore SIGINT, as the local pool's
do (serq_sweep.worker.dask_setup, a preload of the cluster's workers), and the cluster is closed by the sweep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sweepstop import SERQ, needs_proc

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[3]
VLLM = str(ROOT / "examples/multi-turn/vllm.sq")


def _stopped_in_its_own_group(args, journal: Path) -> subprocess.Popen:
    """``serq ARGS`` in a process group of its own, once it has journaled one run and stopped itself there."""
    proc = subprocess.Popen([SERQ, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "SERQ_SWEEP_STOP_AFTER": "1"})
    stat = Path(f"/proc/{proc.pid}/stat")
    deadline = time.monotonic() + 150
    while proc.poll() is None and time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "T":
            break
        time.sleep(0.02)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"the sweep did not stop after a run: {proc.communicate()[1]!r}")
    assert len(journal.read_text().splitlines()) == 1
    return proc


@needs_proc
def test_ctrl_c_of_the_process_group_under_dask_local_prints_no_worker_traceback(tmp_path):
    out = tmp_path / "r.csv"
    args = ["sweep", VLLM, "--set", "B=512,2048", "--seeds", "1..2", "--set", "Lambda=1", "--horizon", "60",
            "--warmup", "10", "--no-progress", "--dask", "local", "--workers", "2", "-o", str(out)]
    proc = _stopped_in_its_own_group(args, Path(f"{out}.journal"))
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the sweep, its cluster's workers
    os.killpg(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 130, err
    # the sweep's two lines and nothing else: no worker's KeyboardInterrupt (two tracebacks before)
    assert err.splitlines() == [
        f"1 of 4 run(s) of 2 point(s) x 2 seed(s) (1 run now, 0 resumed, then stopped): {out}; "
        f"per point: {tmp_path / 'r.points.csv'}",
        "interrupted"], err
    # what finished is kept, and a rerun resumes it
    r = subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=200)
    assert r.returncode == 0, r.stderr
    assert "4 run(s) of 2 point(s) x 2 seed(s) (3 run now, 1 resumed)" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_the_preload_keeps_the_preloads_configured():
    import dask
    from serq_sweep.engines import _ignoring_ctrl_c

    with dask.config.set({"distributed.worker.preload": ["mine"], "distributed.worker.preload-argv": [["--x"]]}):
        assert _ignoring_ctrl_c() == {"distributed.worker.preload": ["mine", "serq_sweep.worker"],
                                      "distributed.worker.preload-argv": [["--x"], []]}
    with dask.config.set({"distributed.worker.preload": "mine", "distributed.worker.preload-argv": []}):
        assert _ignoring_ctrl_c() == {"distributed.worker.preload": ["mine", "serq_sweep.worker"]}
