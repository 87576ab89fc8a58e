"""A worker of a sweep's local pool that ends while it holds a lock of the pool's queues
(serq_sweep.engines._end_pool).

An idle worker holds the task queue's read lock all the while it waits for its next run. A signal to the whole
process group (SIGTERM: ``kill -TERM -PGID``, ``timeout``, a batch scheduler's cancel) ends it there, and the
sweep's ending of its pool (Python's ``Pool.terminate``, which takes that lock) waited for ever: ``serq sweep
--workers 2`` sent SIGTERM while one worker ran the last run and the other waited never ended, its table never
written. A worker killed alone while it waited (``kill -9``, the kernel's OOM killer) left the sweep waiting for
ever after its last run: the other worker, done, waited on the lock for the pool's sentinel, and ``join`` for it.

Each sweep here runs two points on two workers: ``H=1`` ends at once, and its worker then waits for a run that
never comes while the other runs the long one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PROGRAM = """\
let H = 1;

stage svc : fifo;

workload {
  arrive poisson(1);
}

session {
  run svc (~exp(1.25));
  end;
}

run { horizon H; seed 1; }
"""


def _start(tmp_path: Path, *extra: str) -> subprocess.Popen:
    (tmp_path / "g.sq").write_text(PROGRAM)
    return subprocess.Popen([sys.executable, "-m", "serq", "sweep", "g.sq", "--set", "H=1,1000000000", "--workers",
                             "2", "--no-progress", "-o", "t.csv", *extra], cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_run_done(tmp_path: Path, proc: subprocess.Popen) -> None:
    journal = tmp_path / "t.csv.journal"
    for _ in range(2400):
        if journal.exists() and journal.read_text().count("\n") >= 1:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the run of H=1 was never journaled")


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _workers(sweep: int) -> list[int]:
    """The pool's workers: the children of the fork server, itself a child of the sweep."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    parent = {}
    for p in pids:
        try:
            parent[p] = int(_stat(p)[1])
        except (OSError, IndexError, ValueError):
            continue
    servers = {p for p, pp in parent.items() if pp == sweep}
    return sorted(p for p, pp in parent.items() if pp in servers)


def _cpu(pid: int) -> int:
    f = _stat(pid)
    return int(f[11]) + int(f[12])


def _idle_worker(sweep: int) -> int:
    """The worker that takes no CPU time over a second: the one waiting for its next run."""
    for _ in range(20):
        workers = _workers(sweep)
        if len(workers) == 2:
            before = {w: _cpu(w) for w in workers}
            time.sleep(1.0)
            idle = [w for w in workers if _cpu(w) == before[w]]
            if len(idle) == 1:
                return idle[0]
        time.sleep(0.2)
    raise AssertionError("no one idle worker beside a busy one")


def _rows(tmp_path: Path) -> list[list[str]]:
    return [line.split(",") for line in (tmp_path / "t.csv").read_text().splitlines()[1:]]


def test_sigterm_to_the_process_group_while_a_worker_waits_ends_the_sweep(tmp_path):
    proc = _start(tmp_path)
    try:
        _first_run_done(tmp_path, proc)
        _idle_worker(proc.pid)  # (the long run under way, the other worker waiting)
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 143, err
    assert "Traceback" not in err, err
    assert "1 of 2 run(s)" in err and "then stopped" in err, err
    # the table holds the run that finished; the journal stays for the resume
    rows = _rows(tmp_path)
    assert [(r[0], r[1], r[3]) for r in rows] == [("0", "1", "ok")]
    assert (tmp_path / "t.csv.journal").exists()


def test_an_idle_worker_killed_leaves_the_sweep_to_end(tmp_path):
    # the long run ends after 15 s of wall time (--max-wall: partial), once its idle neighbour was killed
    proc = _start(tmp_path, "--max-wall", "15")
    try:
        _first_run_done(tmp_path, proc)
        os.kill(_idle_worker(proc.pid), signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    assert "2 run(s) of 2 point(s)" in err, err
    rows = _rows(tmp_path)
    assert [(r[0], r[1], r[3]) for r in rows] == [("0", "1", "ok"), ("1", "1000000000", "partial")]
    assert not (tmp_path / "t.csv.journal").exists()


def _ended(pid: int) -> bool:
    try:
        return _stat(pid)[0] == "Z"
    except OSError:  # (gone, reaped)
        return True


def test_the_workers_end_with_a_sweep_killed(tmp_path):
    # two runs that would take for ever: SIGKILL of the sweep (kill -9, the OOM killer) left its workers running
    # them to the end, a core each, then printing BrokenPipeError tracebacks (serq_sweep.engines._end_with_the_sweep)
    (tmp_path / "g.sq").write_text(PROGRAM)
    proc = subprocess.Popen([sys.executable, "-m", "serq", "sweep", "g.sq", "--set", "H=1000000000,1000000001",
                             "--workers", "2", "--no-progress", "-o", "t.csv"], cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        for _ in range(1200):
            workers = _workers(proc.pid)
            if len(workers) == 2 and all(_cpu(w) > 0 for w in workers):
                break
            time.sleep(0.05)
        assert len(workers) == 2, proc.poll()
        proc.kill()
        out, err = proc.communicate(timeout=60)
        for _ in range(1200):
            if all(_ended(w) for w in workers):
                break
            time.sleep(0.05)
        assert [w for w in workers if not _ended(w)] == []
        assert "Traceback" not in err, err
    finally:
        for w in workers:
            if not _ended(w):
                os.kill(w, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
