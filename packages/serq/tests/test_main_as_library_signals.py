"""A program that calls serq.cli.main (the command as a library function) and goes on gets its SIGINT and
SIGTERM handlers back after a command that received one of them.

serq.signals.uninstall left both signals ignored once one had been received, so that a repeated signal
would not kill a command on its way out: right for the ``serq`` process itself (serq.cli.entry), but a
program that ran the command and went on then ignored Ctrl-C and SIGTERM for the rest of its life, and
every process it started took them ignored too (a child's SIGINT sent to itself was never delivered)."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { run s (~exp(0.5)); }
run { horizon 1e12; warmup 0; seed 1; }
"""

CALLER = r"""
import os, signal, subprocess, sys, threading
from serq.cli import main

def mine(signum, frame):
    pass

signal.signal(signal.SIGTERM, mine)
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
try:
    main(["run", "p.sq", "--no-progress", "-o", "r.txt"])
except SystemExit as e:
    print("exit", e.code)
print(signal.getsignal(signal.SIGTERM) is mine, signal.getsignal(signal.SIGINT) is signal.default_int_handler)
# a child started now takes SIGINT as Python gives it, not ignored
child = subprocess.run([sys.executable, "-c", "import os, signal, time; os.kill(os.getpid(), signal.SIGINT); "
                        "time.sleep(5); print('not delivered')"], capture_output=True, text=True, timeout=60)
print("child", child.returncode != 0 and "not delivered" not in child.stdout)
"""


def test_a_caller_of_main_gets_its_handlers_back_after_a_signal(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-c", CALLER], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.stdout.split("\n")[-4:] == ["exit 143", "True True", "child True", ""], (r.stdout, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
