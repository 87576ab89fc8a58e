"""A sweep stopped at a known point, to signal it there (SERQ_SWEEP_STOP_AFTER, docs/sweep.md) rather than
race its runs with a journal's line count."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
#: reads a process's state from /proc
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state from /proc")


def stopped_after(n: int, args, journal: Path, limit: float = 150.0) -> subprocess.Popen:
    """``serq ARGS`` started with SERQ_SWEEP_STOP_AFTER=n, once it has journaled exactly ``n`` runs more in
    ``journal`` and stopped itself there (state T). Its TMPDIR is the journal's folder: a sweep the test then kills
    outright (SIGKILL) leaves its worker pool's temporary folder (multiprocessing's ``pymp-…``) where it ran, not in
    the machine's /tmp."""
    before = len(journal.read_text().splitlines()) if journal.exists() else 0
    proc = subprocess.Popen([SERQ, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "SERQ_SWEEP_STOP_AFTER": str(n), "TMPDIR": str(journal.parent)})
    deadline = time.monotonic() + limit
    stat = Path(f"/proc/{proc.pid}/stat")
    while proc.poll() is None and time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "T":
            break
        time.sleep(0.02)
    else:
        proc.kill()
        raise AssertionError(f"the sweep did not stop after {n} runs: {proc.communicate()[1]!r}")
    assert len(journal.read_text().splitlines()) == before + n
    return proc
