"""`serq run` stopped by a signal whose standard output refuses the partial report: a pipe whose reader went
away (the same Ctrl-C ended `serq run p.sq | less`) exited 141 (SIGPIPE's), where the same stop with its
report printed exits 130, 143 or 129. The signal's status is the command's whatever its standard output did;
a failure other than a broken pipe is still said on stderr (the report is lost)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 1000; seed 3; }\n")

# the signal sent by the process to itself as the fast tier makes the program into Python (a partial report,
# nothing simulated: test_hostile_round60_signal_compiling), or not at all
DRIVE = """import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)  # (a suite run under nohup ignores it, and serq keeps it so)
from serq_sim import fast
build = fast.build
def _build(*args):
    if {sig!r}:
        os.kill(os.getpid(), getattr(signal, {sig!r}))
    return build(*args)
fast.build = _build
from serq.cli import main
main(["run", "p.sq", "--no-progress"])
"""


def _run(tmp_path, sig, stdout):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([sys.executable, "-c", DRIVE.format(sig=sig)], cwd=tmp_path, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _closed_pipe():
    """The write end of a pipe whose read end is closed: every write fails with EPIPE."""
    r, w = os.pipe()
    os.close(r)
    return w


@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143), ("", 141)])
def test_a_closed_pipe_keeps_the_signals_status(tmp_path, sig, status):
    w = _closed_pipe()
    try:
        r = _run(tmp_path, sig, w)
    finally:
        os.close(w)
    assert r.returncode == status, r.stderr
    assert r.stderr == ""  # (a reader that went away is no error)


def test_a_full_device_is_said_with_the_signals_status(tmp_path):
    with open("/dev/full", "w") as full:  # (Linux's)
        r = _run(tmp_path, "SIGTERM", full)
    assert r.returncode == 143, r.stderr
    assert r.stderr == "error: cannot write to standard output: No space left on device\n"
