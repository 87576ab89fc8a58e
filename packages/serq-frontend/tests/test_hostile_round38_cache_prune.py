"""A compile cache folder that holds the user's own files (SERQ_CACHE_DIR naming a folder of theirs): a
prune counts and removes entries alone, ``compile-`` and 40 hex digits then ``.bin``; files of the user's
whose names only begin with ``compile-`` and end in ``.bin`` were counted, and the oldest of them removed."""

from __future__ import annotations

import os

import serq_frontend
from serq_frontend import cache
from sqhelpers import EXAMPLES


def test_entry_names():
    assert cache.is_entry_name("compile-" + "0123456789abcdef" * 2 + "01234567.bin")
    for name in ("compile-.bin", "compile-notes.bin", "compile-" + "A" * 40 + ".bin",
                 "compile-" + "0" * 39 + ".bin", "compile-" + "0" * 41 + ".bin", "compile-" + "0" * 40 + ".bin~",
                 "compile-" + "g" * 40 + ".bin", "lalr-3170dedf5546a53f.json"):
        assert not cache.is_entry_name(name), name


def test_a_users_files_are_never_pruned(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    users = []
    for i in range(20):  # older than every entry: a prune by age took them first
        f = folder / f"compile-notes{i}.bin"
        f.write_bytes(b"mine")
        os.utime(f, ns=(i, i))
        users.append(f)
    for i in range(12):
        e = folder / f"compile-{i:040x}.bin"
        e.write_bytes(b"x")
        os.utime(e, ns=(10**9 + i, 10**9 + i))
    cache.prune(folder, keep=8)
    assert all(f.read_bytes() == b"mine" for f in users)
    assert sorted(e.name for e in folder.glob("compile-0*.bin")) == [f"compile-{i:040x}.bin" for i in range(6, 12)]


def test_a_load_keeps_the_users_files(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("SERQ_CACHE_DIR", str(folder))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    for i in range(cache.KEEP + 1):  # more than the entries kept: a prune by age took the oldest of them
        (folder / f"compile-notes{i}.bin").write_bytes(b"mine")
    program = cache.load(EXAMPLES / "single-turn" / "mg1.sq")
    assert program == serq_frontend.compile(EXAMPLES / "single-turn" / "mg1.sq")
    assert sorted(f.name for f in folder.glob("compile-notes*.bin")) == sorted(
        f"compile-notes{i}.bin" for i in range(cache.KEEP + 1))
    assert len([f for f in os.listdir(folder) if cache.is_entry_name(f)]) == 1
