"""A long run shows a progress bar on a terminal; Ctrl-C still prints the report, marked interrupted."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
LONG = """stage s : fifo;
workload { arrive poisson(0.8); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 1e12; }
"""


def start(tmp_path, *args: str):
    prog = tmp_path / "long.sq"
    prog.write_text(LONG)
    master, slave = pty.openpty()  # stderr is a terminal, as for a user at a shell
    proc = subprocess.Popen([SERQ, "run", str(prog), *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, env=os.environ)
    os.close(slave)
    return proc, master


def read_for(fd: int, seconds: float, until: bytes | None = None) -> bytes:
    out = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (until is not None and until in out):
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out


def events_shown(out: bytes) -> int:
    """The events count of the latest bar drawn in ``out`` (0 before one is)."""
    found = re.findall(rb"events=(\d+)", out)
    return int(found[-1]) if found else 0


def test_progress_bar_on_a_terminal_and_ctrl_c_prints_the_interrupted_report(tmp_path):
    proc, master = start(tmp_path, "--json")
    try:
        # until the bar has counted 20 000 events (about two a session here): the report below must hold more
        # than a thousand responses however slowly a loaded machine starts the run
        shown = b""
        end = time.monotonic() + 120
        while time.monotonic() < end and events_shown(shown) < 20_000 and proc.poll() is None:
            shown += read_for(master, 1.0)
        assert b"[" in shown and events_shown(shown) >= 20_000, shown  # the bar, redrawn with \r
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()  # reaped here, not by a later test's collector
        os.close(master)
    assert proc.returncode == 130
    report = json.loads(stdout)
    assert report["interrupted"] is True
    assert 0 < report["end"] < 1e12
    assert report["observes"]["response"]["count"] > 1000


def test_no_progress_silences_the_bar(tmp_path):
    # nothing says when start-up is over: a Ctrl-C before it is the line "interrupted" and no report, so
    # wait longer until the run had begun
    for wait in (2.0, 5.0, 15.0, 40.0):
        proc, master = start(tmp_path, "--no-progress")
        try:
            shown = read_for(master, wait)
            proc.send_signal(signal.SIGINT)
            stdout, _ = proc.communicate(timeout=60)
            shown += read_for(master, 0.5)
        finally:
            proc.kill()
            proc.wait()  # reaped here, not by a later test's collector
            os.close(master)
        assert b"events=" not in shown
        assert proc.returncode == 130
        if stdout:
            break
        assert shown.strip() == b"interrupted", shown  # stopped during start-up
    assert stdout.decode().startswith("run: INTERRUPTED")
