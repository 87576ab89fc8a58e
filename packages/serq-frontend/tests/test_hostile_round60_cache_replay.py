"""A compile-cache entry is data: what it says its compile wrote on stderr, which a hit writes again, was written
whatever it held (a crafted entry, or one copied from another machine's cache, sent the terminal escape
sequences, a carriage return that wrote over the line before, megabytes). Now a hit writes it again only when
it is printable lines of at most serq_frontend.cache.MAX_STDERR characters, as every diagnostic a compile writes
is; an entry holding anything else is a miss, compiled again, and what the compile writes is what is said. A
compile that wrote such a text itself (a plugin's print) is not stored."""

from __future__ import annotations

import os

import pytest
from serq_frontend import cache

# an index 0 on a pool declared without a size: a warning at the index, each compile
PROGRAM = """pool kv { cap 10; }
stage s : fifo;
workload { arrive poisson(1); }
session { hold kv[0] (1) { run s (0.5); } }
run { horizon 10; }
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SERQ_CACHE_DIR", str(d))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    return d


def _entry(folder):
    (entry,) = [folder / f for f in os.listdir(folder) if cache.is_entry_name(f)]
    return entry


def _forge(entry, stderr):
    """The entry as the cache would write it (its digest right), saying its compile wrote ``stderr``."""
    import json

    body = entry.read_bytes()[len(cache._MAGIC):].partition(b"\n")[2]
    head, _, ir = body.partition(b"\n")
    header = json.loads(head)
    entry.write_bytes(cache._entry(header["key"], header["deps"], stderr, ir))
    entry.chmod(0o600)


def test_a_hit_writes_again_what_the_compile_wrote(tmp_path, folder, capsys):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    first = cache.load(prog)
    fresh = capsys.readouterr().err
    assert fresh.startswith(f"{prog}:4:") and ": warning: " in fresh  # (the compile's own warning)
    written = _entry(folder).stat().st_mtime_ns
    assert cache.load(prog) == first
    assert capsys.readouterr().err == fresh and _entry(folder).stat().st_mtime_ns == written  # a hit, the same


@pytest.mark.parametrize("forged", ["\x1b]0;owned\x07\x1b[2Jerror: all is lost\n", "ok\rerror: overwritten\n",
                                    "a line\n" * (cache.MAX_STDERR // 7 + 1), "bell\x07\n"],
                         ids=["escapes", "carriage-return", "too-long", "control"])
def test_an_entry_that_replays_what_no_compile_writes_is_a_miss(tmp_path, folder, capsys, forged):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    program = cache.load(prog)
    fresh = capsys.readouterr().err
    _forge(_entry(folder), forged)
    assert cache.load(prog) == program
    assert capsys.readouterr().err == fresh  # compiled again: its own words, none of the entry's
    assert cache.load(prog) == program  # (stored again as the compile wrote it: a hit)
    assert capsys.readouterr().err == fresh


def test_a_printable_text_is_replayed(tmp_path, folder, capsys):
    """(What is replayed is still the entry's, when it is text a compile could write: the method above is
    sound.)"""
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    cache.load(prog)
    capsys.readouterr()
    _forge(_entry(folder), "FROM THE CACHE é\n")
    cache.load(prog)
    assert capsys.readouterr().err == "FROM THE CACHE é\n"


def test_a_compile_that_writes_what_no_hit_may_is_not_stored(tmp_path, folder, capsys, monkeypatch):
    import serq_frontend

    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    real = serq_frontend._compile

    def printing(*args, **kw):  # (a plugin's sugar layer that prints a tab)
        import sys

        sys.stderr.write("layer:\tsaw it\n")
        return real(*args, **kw)

    monkeypatch.setattr(serq_frontend, "_compile", printing)
    cache.load(prog)
    assert "layer:\tsaw it\n" in capsys.readouterr().err
    assert not folder.exists() or not [f for f in os.listdir(folder) if cache.is_entry_name(f)]
