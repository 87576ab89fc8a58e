"""A command started with SIGINT or SIGTERM ignored (a script's background job, whose shell ignores SIGINT
so that a Ctrl-C at the terminal stops only the job in front; `trap '' TERM`; a supervisor's choice): serq's
handlers took both signals over whatever they were, so the Ctrl-C meant for another command stopped a
background sweep (status 130, its table partial). Python itself leaves an ignored SIGINT ignored; serq now
does the same for both, and gives them back so: the sweep signalled in the middle ends as if nothing came.
The sweep stops itself after its first run (SERQ_SWEEP_STOP_AFTER, docs/sweep.md) to be signalled there,
when its handlers are in place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
ARGS = ["sweep", "p.sq", "--set", "rate=1,1.5,2", "--workers", "0", "--no-progress", "-o", "t.csv"]

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state from /proc")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ignored_when_the_sweep_began_stays_ignored(tmp_path, sig):
    (tmp_path / "p.sq").write_text(PROGRAM)
    want = subprocess.run([SERQ, *ARGS[:-1], "want.csv"], cwd=tmp_path, capture_output=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert want.returncode == 0
    proc = subprocess.Popen([SERQ, *ARGS], cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "SERQ_SWEEP_STOP_AFTER": "1"},
                            preexec_fn=lambda: signal.signal(sig, signal.SIG_IGN))
    try:
        stat = Path(f"/proc/{proc.pid}/stat")
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "T":  # stopped itself after its first run
                break
            time.sleep(0.02)
        else:
            raise AssertionError(f"the sweep did not stop after its first run: {proc.communicate()[1]!r}")
        assert len((tmp_path / "t.csv.journal").read_text().splitlines()) == 1
        proc.send_signal(sig)
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out) == (0, b"")
    assert err == b"3 run(s) of 3 point(s) x 1 seed(s) (3 run now, 0 resumed): t.csv; per point: t.points.csv\n"
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "want.csv").read_bytes()
