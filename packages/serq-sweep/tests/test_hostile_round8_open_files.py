"""A sweep's worker processes fit in the open files this process may have (``ulimit -n``).

Each worker costs the sweep's process open files (its sentinel, the pipes of its start): past the limit
(``ulimit -n 64`` and ``--workers 30``; macOS's default limit is 256, a Linux box's often 1024 against
``--workers`` up to 1024) the pool's start failed with ``OSError: [Errno 24] Too many open files`` and the
forkserver's ``EOFError``, two tracebacks. A count the user gave that does not fit is one error naming the
limit and the count that fits, before any worker starts; every core by default starts as many as fit
(serq_sweep.engines.files_left).
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import engines

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe y = now; record r { sent = t0; } end; }
run { horizon 20; seed 1; }
"""


def _limited(n: int):
    def preexec():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    return preexec


def _sweep(tmp_path: Path, workers: int) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "sweep", "p.sq", "--seeds", f"1..{workers}", "--workers", str(workers),
                           "--no-progress", "-o", "t.csv", "--records", "r.csv"], capture_output=True, text=True,
                          cwd=tmp_path,
                          timeout=300, stdin=subprocess.DEVNULL, preexec_fn=_limited(64))


def test_workers_beyond_the_open_file_limit_are_one_error(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, 30)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    line, = r.stderr.splitlines()
    assert line.startswith("error: --workers 30: 30 worker processes need about 106 open files, and this "
                           "process may open "), line
    assert "(its limit, ulimit -n, is 64): give --workers " in line and line.endswith("or raise the limit")
    assert not (tmp_path / "t.csv").exists()
    # refused before its first run, the sweep leaves nothing beside -o: no journal (nor a records one)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_a_refused_sweep_keeps_a_journal_it_did_not_make(tmp_path):
    # a journal an earlier sweep left (runs to resume) stays, whatever this one's failure
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv.journal").write_text("")
    r = _sweep(tmp_path, 30)
    assert r.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.csv.journal"]


def test_workers_within_it_run(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, 4)
    assert r.returncode == 0, r.stderr[-3000:]


def test_every_core_by_default_starts_as_many_as_fit(monkeypatch):
    monkeypatch.setattr(engines, "files_left", lambda: (40, 64))
    with pytest.raises(UserError, match="--workers 30: 30 worker processes need about 106 open files, and this "
                                        r"process may open 40 more \(its limit, ulimit -n, is 64\): give "
                                        "--workers 8 or fewer, or raise the limit"):
        engines.LocalPool(30)._start(30)
    monkeypatch.setattr(engines, "files_left", lambda: (18, 64))
    with pytest.raises(UserError, match=r"give --workers 0 \(the runs in this process\)"):
        engines.LocalPool(30, chosen=False)._start(30)
    monkeypatch.setattr(engines, "files_left", lambda: (40, 64))
    pool = engines.LocalPool(30, chosen=False)
    try:
        pool._start(30)
        assert pool._size == 8 and pool.workers == 8
    finally:
        pool.__exit__(None, None, None)
