"""What a function at exit writes (the command's own, a plugin's, registered after ``serq`` started) still
reaches the standard streams when ``serq`` ends at ``os._exit`` (serq.cli._end_process flushes them): the
command's own output is flushed before it returns, so only this flush carries what came later.

The probe runs without ``PYTHONUNBUFFERED``: with it, the streams are unbuffered and nothing waits in them,
so a lost flush would not show."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """import atexit, sys
import serq.cli as c
command = c._main
def _main(argv):  # a function at exit the command registers (as a plugin's import may)
    atexit.register(lambda: (sys.stdout.write("said at exit, no newline"), sys.stderr.write("and on stderr")))
    return command(argv)
c._main = _main
sys.argv = ["serq", *sys.argv[1:]]
c.entry()
"""

PROGRAM = """stage d : delay;
workload { arrive poisson(1); }
session { run d (1); }
run { horizon 20; }
"""


@pytest.mark.timeout(60)
def test_what_a_function_at_exit_writes_is_not_lost(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "d.sq").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    p = subprocess.run([sys.executable, "probe.py", "check", "d.sq"], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    first, last = p.stdout.split("\n")  # the check's line, then what came at exit, whole
    assert first.startswith("OK: 0 pool(s), 1 stage(s)") and last == "said at exit, no newline"
    assert p.stderr == "and on stderr"
