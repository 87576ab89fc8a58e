"""A worker of the local pool killed while it sends its result (``kill -9``, the kernel's OOM killer, which picks
the process holding the most memory: a worker holding a run's records as it sends them) is that run's error;
the sweep goes on with the other runs and ends.

A worker sends its result under the lock of the pool's queue of results, in pieces when the result is larger
than the pipe holds. Killed in the middle, it took the lock with it: every other worker waited for ever to
send its own, and the pool's reader of results for the rest of the one cut short; ``serq sweep`` waited until
it was killed, its table never written. Now the sweep sees the lock taken for good after the worker ended,
gives the pool up and runs the runs not done again on a new one (a run's result is its program's and seed's
alone: the same rows as a sweep that nothing disturbed).

The kill is made to land mid-send: the sweep's process is stopped (SIGSTOP) once a worker runs, so a worker
that finishes its run fills the pipe and waits inside its write; it is killed there, and the sweep continued.
Linux only (the workers' system calls are read from /proc).
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(not Path("/proc/self/syscall").exists() or not hasattr(signal, "SIGSTOP"),
                       reason="reads the workers' system calls from /proc (Linux)"),
]

SERQ = str(Path(sys.executable).parent / "serq")

# each run records 40 000 rows: its result (about 1.3 MB) is many times what a pipe holds
PROGRAM = """let lambda = 0.5;

stage svc : fifo;

workload {
  arrive poisson(lambda);
}

session {
  run svc (~exp(1));
  record r {
    x = now;
  }
  end;
}

run { horizon inf; arrivals 40000; }
"""

ARGS = ["sweep", "rec.sq", "--set", "lambda=0.5,0.6,0.7,0.8", "--records", "recs.csv", "-o", "t.csv",
        "--no-progress"]


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


def _cpu(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return -1
    return int(fields[11]) + int(fields[12])


def _in_write(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/syscall").read_text().split()[0] == "1"  # (write, on x86-64)
    except (OSError, IndexError):
        return False


def _rows(folder: Path) -> list[dict]:
    with open(folder / "t.csv", newline="") as f:
        return list(csv.DictReader(f))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "amd64"), reason="reads the write system call's number")
def test_a_worker_killed_inside_its_result_is_its_runs_error(tmp_path):
    calm, hit = tmp_path / "calm", tmp_path / "hit"
    for folder in (calm, hit):
        folder.mkdir()
        (folder / "rec.sq").write_text(PROGRAM)
    undisturbed = subprocess.run([SERQ, *ARGS, "--workers", "1"], cwd=calm, capture_output=True, text=True,
                                 timeout=120, stdin=subprocess.DEVNULL)
    assert undisturbed.returncode == 0, undisturbed.stderr

    p = subprocess.Popen([SERQ, *ARGS, "--workers", "2"], cwd=hit, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    stopped = False
    try:
        # the workers (children of the fork server, itself a child of the sweep), and one of them running a run
        deadline = time.monotonic() + 60
        workers: dict[int, int] = {}
        running = None
        while running is None and time.monotonic() < deadline and p.poll() is None:
            for server in _children(p.pid):
                for w in _children(server):
                    workers.setdefault(w, _cpu(w))
            for w, c0 in workers.items():
                if _cpu(w) >= c0 + 5:  # 50 ms of CPU since it was first seen: a run
                    running = w
            time.sleep(0.01)
        assert running is not None, "no worker was seen running a run"
        os.kill(p.pid, signal.SIGSTOP)
        stopped = True
        # a worker whose result fills the pipe waits inside its write (seen there twice, 0.2 s apart)
        victim = None
        while victim is None and time.monotonic() < deadline:
            for w in list(workers):
                if _in_write(w):
                    time.sleep(0.2)
                    if _in_write(w):
                        victim = w
                        break
            time.sleep(0.01)
        assert victim is not None, "no worker was seen sending its result"
        os.kill(victim, signal.SIGKILL)
        time.sleep(0.2)
        os.kill(p.pid, signal.SIGCONT)
        stopped = False
        out, err = p.communicate(timeout=120)
    finally:
        if stopped:
            os.kill(p.pid, signal.SIGCONT)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 1, err
    assert "Traceback" not in err, err
    rows, calm_rows = _rows(hit), _rows(calm)
    assert [r["point"] for r in rows] == ["0", "1", "2", "3"]
    failed = [r for r in rows if r["status"] != "ok"]
    assert len(failed) == 1, rows
    bad = failed[0]
    assert bad["status"] == "error"
    assert bad["message"] == (f"error: rec.sq: the worker process running point {bad['point']}, seed 1 ended without "
                              f"its result (killed by signal 9): something in the run (a plugin's code, a lack of "
                              f"memory) ended the process"), bad
    assert f"error: 1 run(s) failed; the first:\n{bad['message']}" in err
    # every other run's row is the undisturbed sweep's (the columns of time taken aside)
    timed = {"wall", "cpu", "run_cpu"}
    for r, c in zip(rows, calm_rows):
        if r is bad:
            continue
        assert {k: v for k, v in r.items() if k not in timed} == {k: v for k, v in c.items() if k not in timed}
    # and so are their records: the killed run's are missing, the others' all there
    with open(hit / "recs.csv", newline="") as f:
        hit_recs = [r for r in csv.DictReader(f)]
    with open(calm / "recs.csv", newline="") as f:
        calm_recs = [r for r in csv.DictReader(f) if r["point"] != bad["point"]]
    assert hit_recs == calm_recs
    # no worker of either pool outlives the sweep
    for w in workers:
        gone = time.monotonic() + 10
        while _alive(w) and time.monotonic() < gone:
            time.sleep(0.05)
        assert not _alive(w), w


def test_a_worker_killed_between_batches_leaves_the_next_batch_whole(tmp_path):
    """The idle workers of a pool that a search keeps from one batch of runs to the next (``--find``'s rounds)
    wait for their next run, one of them holding the lock of the queue of runs. Killed there, it took the lock
    with it: the pool started workers in place of the ones that ended, each waited for the lock for ever, and
    the next batch never ran. A pool missing a worker it started is given up before the next batch."""
    import threading

    from serq_sweep import core
    from serq_sweep.engines import LocalPool

    path = tmp_path / "rec.sq"
    path.write_text(PROGRAM.replace("arrivals 40000", "arrivals 200"))
    plan = core.plan([str(path)], sets={"lambda": "0.5,0.6"}, seeds=[1])
    tasks = plan.tasks({}, records=False)
    second: list = []
    with LocalPool(2) as pool:
        first = sorted((t[0], r["status"], r["figures"]) for t, r in pool.run(tasks))
        workers = list(pool._pool._pool)  # (the multiprocessing pool's processes)
        assert len(workers) == 2
        for w in workers:
            os.kill(w.pid, signal.SIGKILL)
        for w in workers:
            w.join(10)
        done = threading.Event()

        def batch() -> None:
            second.extend(sorted((t[0], r["status"], r["figures"]) for t, r in pool.run(tasks)))
            done.set()

        threading.Thread(target=batch, daemon=True).start()
        assert done.wait(120), "the batch after the killed workers never ran"
    assert [s for _, s, _ in first] == ["ok", "ok"]
    assert repr(second) == repr(first)  # (repr: a figure that is NaN equals itself)
