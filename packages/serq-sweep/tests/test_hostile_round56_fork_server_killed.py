"""`serq sweep --workers N` whose fork server is killed mid-sweep (SIGKILL: `kill -9`, the kernel's OOM
killer). The pool reads each worker's end from the fork server, so once it was gone every worker looked
ended (exit status 255) while it ran on: every run was its error ("the worker process running point 0, seed 1
ended without its result (exit status 255): something in the run … ended the process"), status 1, the pool's
thread that starts workers printed an `EOFError` traceback, and the workers ran their runs to the end unseen.
The pool is now given up when its fork server is gone, its workers ended, and the runs not done run again on
a new pool (a new server): the table is the one `--workers 0` writes, status 0, nothing else said."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.timeout(400)

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 600000; seed 3; }\n")
ARGS = [sys.executable, "-m", "serq", "sweep", "p.sq", "--seeds", "1..2", "--no-progress"]


def _children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _fork_server_with_workers(sweep, deadline):
    while time.monotonic() < deadline and sweep.poll() is None:
        for c in _children(sweep.pid):
            if b"multiprocessing.forkserver" in _cmdline(c) and len(_children(c)) >= 2:
                return c
        time.sleep(0.05)
    return None


def test_a_killed_fork_server_gives_the_same_table(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    sweep = subprocess.Popen([*ARGS, "--workers", "2", "-o", "w.csv"], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        server = _fork_server_with_workers(sweep, time.monotonic() + 120)
        assert server is not None, "the sweep started no fork server with two workers"
        workers = _children(server)
        os.kill(server, signal.SIGKILL)
        out, err = sweep.communicate(timeout=200)  # (it waited for ever: ended below)
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
    assert sweep.returncode == 0 and "Traceback" not in err, err
    assert err == "2 run(s) of 1 point(s) x 2 seed(s) (2 run now, 0 resumed): w.csv; per point: w.points.csv\n", err
    assert not [w for w in workers if os.path.exists(f"/proc/{w}") and b"forkserver" in _cmdline(w)]
    alone = subprocess.run([*ARGS, "--workers", "0", "-o", "a.csv"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert alone.returncode == 0, alone.stderr
    assert (tmp_path / "w.csv").read_bytes() == (tmp_path / "a.csv").read_bytes()
