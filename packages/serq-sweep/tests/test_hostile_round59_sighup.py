"""A sweep whose terminal is closed (SIGHUP to its whole process group: the sweep, its fork server, its
workers and multiprocessing's resource tracker) ends as on SIGTERM: the table of what finished is written,
status 129, the line ``hung up``. SIGHUP killed the sweep where it stood (its journal alone left, no
table); handled, it still killed the resource tracker, which ignores SIGINT and SIGTERM only, and the
tracker multiprocessing started in its place printed ``resource_tracker: process died unexpectedly`` and a
``KeyError`` traceback for every semaphore the sweep's ending gave back (engines._start_tracker_deaf_to_hangup).
SIGTERM to the group (``kill -TERM -PGID``, ``timeout``) and SIGHUP alike ended the fork server with the
workers; the pool's thread that starts workers in place of ended ones started another server, which took
the three signals blocked from that thread (made while the sweep held them, engines._signals_held), and its
workers could not be ended: the sweep said ``terminated`` and never exited (serq_sweep.server_ready and the
workers' initializer unblock them).
The sweep stops itself after its first run (SERQ_SWEEP_STOP_AFTER, docs/sweep.md) to be signalled there."""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
ARGS = ["sweep", "p.sq", "--set", "rate=1,1.5,2", "--no-progress", "-o", "t.csv"]

pytestmark = [pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(signal, "SIGHUP"),
                                 reason="reads a process's state from /proc; a platform with SIGHUP"),
              pytest.mark.timeout(200)]


#: run argv[1:] with SIGHUP at its default disposition (exec: the same process)
HUP_DEFAULT = ("import os, signal, sys\nif hasattr(signal, 'SIGHUP'):\n    signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
               "os.execv(sys.argv[1], sys.argv[1:])")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("sig, status, word", [(getattr(signal, "SIGHUP", 1), 129, "hung up"),
                                               (signal.SIGTERM, 143, "terminated")])
def test_a_sweep_signalled_as_a_group_writes_what_finished_and_exits(tmp_path, sig, status, word):
    (tmp_path / "p.sq").write_text(PROGRAM)
    want = subprocess.run([SERQ, *ARGS[:-1], "want.csv", "--workers", "0"], cwd=tmp_path, capture_output=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert want.returncode == 0, want.stderr
    # (through a caller that gives SIGHUP its default: a suite run under nohup ignores it, and serq keeps an
    # ignored SIGHUP ignored, as a terminal's would be; exec keeps the default and the process)
    proc = subprocess.Popen([sys.executable, "-c", HUP_DEFAULT, SERQ, *ARGS, "--workers", "2"], cwd=tmp_path,
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "SERQ_SWEEP_STOP_AFTER": "1"})
    try:
        stat = Path(f"/proc/{proc.pid}/stat")
        deadline = time.monotonic() + 150
        while proc.poll() is None and time.monotonic() < deadline:
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "T":  # stopped itself after its first run
                break
            time.sleep(0.02)
        else:
            raise AssertionError(f"the sweep did not stop after its first run: {proc.communicate()[1]!r}")
        os.killpg(proc.pid, sig)  # (the terminal closed, or `kill -TERM -PGID`: every process of its group)
        os.killpg(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = err.decode()
    assert (proc.returncode, out) == (status, b""), text
    said = re.fullmatch(r"([12]) of 3 run\(s\) of 3 point\(s\) x 1 seed\(s\) \(\1 run now, 0 resumed, then stopped\): "
                        rf"t\.csv; per point: t\.points\.csv\n{word}\n", text)
    assert said, text
    done = _rows(tmp_path / "t.csv")
    assert len(done) == int(said.group(1))
    # each finished row is the complete sweep's row of its point, byte for byte in its cells
    whole = {r["point"]: r for r in _rows(tmp_path / "want.csv")}
    assert all(r == whole[r["point"]] for r in done)
    # the journal stays for a resume, which runs the rest: the complete table
    again = subprocess.run([SERQ, *ARGS, "--workers", "0"], cwd=tmp_path, capture_output=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "want.csv").read_bytes()
