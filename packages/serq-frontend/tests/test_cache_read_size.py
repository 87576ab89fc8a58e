"""A cache file is read in a buffer of its own size: ``read_trusted`` read ``limit + 1`` bytes, which took a
buffer of the limit (``cache.MAX_ENTRY``, some 272 MB) at every compile-cache hit, so ``serq check`` of a
program whose entry was cached failed with "out of memory" under a bound on virtual memory of 300 MB."""

from __future__ import annotations

import os
import tracemalloc

import pytest
from serq_frontend import cache


def test_a_small_entry_is_read_without_a_buffer_of_the_limit(tmp_path):
    f = tmp_path / "compile-x.bin"
    f.write_bytes(b"y" * 1000)
    os.chmod(f, 0o600)
    tracemalloc.start(1)
    try:
        assert cache.read_trusted(f) == b"y" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**16, peak  # the entry's bytes and the file object's, not 272 MB


class _Growing:
    """A file object that finds one byte more than the size fstat gave: the file grew while it was read."""

    def __init__(self, data: bytes):
        self.data = data

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self, n: int) -> bytes:
        return (self.data + b"+")[:n]


def test_an_entry_that_grows_while_it_is_read_is_a_miss(tmp_path, monkeypatch):
    f = tmp_path / "compile-x.bin"
    f.write_bytes(b"0123456789")
    os.chmod(f, 0o600)
    monkeypatch.setattr(cache, "open", lambda *a, **k: _Growing(b"0123456789"), raising=False)
    assert cache.read_trusted(f) is None  # half an entry written since is not taken for the entry


@pytest.mark.parametrize("size", [0, 1, 4096, 100_000])
def test_an_entry_is_read_whole(tmp_path, size):
    f = tmp_path / "compile-x.bin"
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    f.write_bytes(data)
    os.chmod(f, 0o600)
    assert cache.read_trusted(f) == data
    assert cache.read_trusted(f, limit=size) == data
    assert size == 0 or cache.read_trusted(f, limit=size - 1) is None
