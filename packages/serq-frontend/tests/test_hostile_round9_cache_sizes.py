"""A cache file is read only up to a size, found before it is read: a larger one is a miss.

A compile-cache entry or a tables file of 1 GiB (sparse, or made so by a disk's fault) was read whole, then
copied as its header was split and hashed: ``serq check`` took 27 s and 6 GB before finding it corrupt
and compiling. An entry holds at most an IR file's size and a header (``cache.MAX_ENTRY``), the tables some
300 kB (``parser.MAX_TABLES``); beyond that the file is a miss, not read, and is replaced.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from serq_frontend import cache, parser

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
GIB = 2**30


def _sparse(path: Path, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)  # (its bytes after the first are NUL, on disk as a hole)


@pytest.mark.timeout(60)
def test_read_trusted_refuses_a_file_beyond_its_limit_from_its_size(tmp_path):
    f = tmp_path / "compile-x.bin"
    f.write_bytes(b"x")
    os.chmod(f, 0o600)
    assert cache.read_trusted(f) == b"x"
    _sparse(f, GIB)
    tracemalloc.start(1)
    try:
        assert cache.read_trusted(f) is None
        assert parser.load_tables(str(f), "key", None) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak  # nothing of the file was read
    f.write_bytes(b"0123456789")
    assert cache.read_trusted(f, limit=10) == b"0123456789"  # within its limit a file is read, as before
    assert cache.read_trusted(f, limit=9) is None


def _limited_memory():
    # 1 GiB of address space more than serq check needs (some 0.6 GB): reading a file of 1 GiB, and the
    # copies made of it, cannot fit
    resource.setrlimit(resource.RLIMIT_AS, (GIB + 600 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))


@pytest.mark.timeout(120)
def test_serq_check_with_entries_of_a_gib_compiles_and_replaces_them(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = tmp_path / "cache"
    env = {**{k: v for k, v in os.environ.items() if k != "SERQ_COMPILE_CACHE"}, "SERQ_CACHE_DIR": str(folder)}

    def check() -> subprocess.CompletedProcess:
        return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=100,
                              env=env, stdin=subprocess.DEVNULL, preexec_fn=_limited_memory)

    first = check()
    assert first.returncode == 0, first.stderr
    entries = sorted(folder.iterdir())
    assert {e.name.split("-")[0] for e in entries} == {"lalr", "compile"}
    for e in entries:
        _sparse(e, GIB)
    r = check()
    assert (r.returncode, r.stdout, r.stderr) == (0, first.stdout, ""), r.stderr[-2000:]
    # each entry is written again, whole: a file of its own size (some 300 kB and 1 kB), not of a GiB
    assert sorted(folder.iterdir()) == entries
    assert all(e.is_file() and e.stat().st_size < 2**20 for e in entries), [e.stat().st_size for e in entries]
