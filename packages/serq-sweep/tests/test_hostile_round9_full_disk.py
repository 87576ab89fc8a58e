"""A journal that cannot be written (a full disk, ``ulimit -f``, an I/O error) is one error naming it.

``serq.files.open_own_append`` (a sweep's journal ``OUT.journal``, its records' journal) returned a plain
text file, whose write errors name no file: ``serq sweep --workers 0 -o t.csv`` under ``ulimit -f 1`` died
with ``OSError: [Errno 27] File too large`` and two tracebacks (the flush of the write, then the close in
the sweep's ``finally`` flushing the same buffer again), since the command takes an ``OSError`` that names
no file for its own bug. Every other output names its file (``serq.files.open_atomic``).
"""

from __future__ import annotations

import errno
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import open_own_append

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 20; }
"""


def _file_size_limit(n: int):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return preexec


@pytest.mark.timeout(60)
def test_a_write_beyond_the_file_size_limit_names_the_journal(tmp_path):
    path = tmp_path / "t.csv.journal"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    with open_own_append(path) as f:
        f.write("a" * 40 + "\n")
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, hard))
        try:
            with pytest.raises(OSError) as info:
                f.write("b" * 100 + "\n")
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    # (the close above wrote nothing more and raised nothing: no buffer is flushed a second time)
    assert info.value.errno == errno.EFBIG and info.value.filename == str(path)
    # what was written is on disk: the whole first line, then as much of the second as the limit let in
    assert path.read_bytes() == b"a" * 40 + b"\n" + b"b" * 23


@pytest.mark.timeout(120)
def test_serq_sweep_says_it_in_one_line(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--seeds", "1..3", "--workers", "0", "--no-progress", "-o", "t.csv"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=100, stdin=subprocess.DEVNULL,
                       preexec_fn=_file_size_limit(1024))
    assert r.returncode == 1 and r.stderr == "error: t.csv.journal: File too large\n", r.stderr[-3000:]
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "t.points.csv").exists()
