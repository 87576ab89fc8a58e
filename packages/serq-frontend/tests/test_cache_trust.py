"""What serq keeps between runs runs no code and is read only from a folder and files no one else can
write: the LALR tables are JSON (lark's own cache is a pickle), and a cache folder or entry that belongs to
another user or that others can write is not used."""

from __future__ import annotations

import os
import pickle

import pytest
import serq_frontend
from serq_frontend import cache
from serq_frontend import parser as P

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX owners and permissions")

PROGRAM = """stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 100; }
"""


class _Plant:
    """Unpickling this creates the file ``path`` (as any code could run)."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SERQ_CACHE_DIR", str(d))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    return d


def test_the_tables_file_runs_no_code_whatever_it_holds(tmp_path, folder):
    layers = serq_frontend.layers(serq_frontend._default_pm())
    P._PARSERS.clear()
    serq_frontend._get_parser(layers)  # builds the tables and keeps them in the folder
    kept = [f for f in os.listdir(folder) if not f.startswith("compile-")]
    assert kept, "the tables were not kept"
    marker = tmp_path / "ran"
    payload = pickle.dumps(_Plant(str(marker)))
    for name in kept:  # the file's first line (its key, or lark's hash) as it was, then a pickle
        f = folder / name
        head = f.read_bytes().split(b"\n", 1)[0]
        f.write_bytes(head + b"\n" + payload + payload)
    P._PARSERS.clear()
    parser = serq_frontend._get_parser(layers)  # reads the file again
    assert not marker.exists(), "loading the tables ran code from the cache file"
    assert parser.lark.parse("stage s : fifo;", start="start")  # and it works: rebuilt
    P._PARSERS.clear()


def test_the_tables_round_trip_to_the_same_parser(tmp_path):
    layers = serq_frontend.layers(serq_frontend._default_pm())
    path = str(tmp_path / "t.json")
    built = P.Parser(layers, path)  # builds and keeps
    loaded = P.Parser(layers, path)  # loads
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    def tables(parser):
        data, memo = parser.lark.memo_serialize([TerminalDef, Rule])
        data = {**data, "options": {k: v for k, v in data["options"].items() if k != "transformer"}}
        return P._to_json([data, memo])

    assert tables(built) == tables(loaded)
    assert loaded.lark.options.transformer is not built.lark.options.transformer  # each its own builder
    assert P.load_tables(path, "another key", None) is None


@posix
@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_cache_folder_others_can_write_is_not_used(tmp_path, folder, capsys, mode):
    folder.mkdir()
    folder.chmod(mode)
    cache._warned.clear()
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    P._PARSERS.clear()
    cache.load(prog)
    cache.load(prog)
    err = capsys.readouterr().err
    assert err.count(f"serq: warning: not using the cache folder {folder}: it can be written by other users") == 1
    assert os.listdir(folder) == []  # neither the tables nor the IR went there
    P._PARSERS.clear()


@posix
def test_a_cache_folder_of_another_user_is_not_used(tmp_path, folder, capsys, monkeypatch):
    folder.mkdir(mode=0o700)
    cache._warned.clear()
    monkeypatch.setattr(cache.os, "geteuid", lambda: os.stat(folder).st_uid + 1)  # as if serq ran as another
    assert cache.cache_dir() is None
    assert "belongs to another user" in capsys.readouterr().err


@posix
def test_an_entry_others_can_write_is_not_read(tmp_path, folder, capsys):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    program = cache.load(prog)
    (entry,) = [folder / f for f in os.listdir(folder) if f.startswith("compile-")]
    assert entry.stat().st_mode & 0o777 == 0o600  # kept for this user alone
    header, ir = cache._read_entry(entry, _key_of(entry))
    # the same entry, but saying it was written with a warning: a hit writes the stored stderr again
    entry.write_bytes(cache._entry(header["key"], header["deps"], "FROM THE CACHE\n", ir))
    entry.chmod(0o600)
    capsys.readouterr()
    assert cache.load(prog) == program
    assert "FROM THE CACHE" in capsys.readouterr().err  # a hit: the method below is sound
    entry.chmod(0o666)
    assert cache.load(prog) == program
    assert "FROM THE CACHE" not in capsys.readouterr().err  # a miss: the entry was not trusted


def _key_of(entry) -> str:
    import json

    data = entry.read_bytes()
    body = data[len(cache._MAGIC):].partition(b"\n")[2]
    return json.loads(body.partition(b"\n")[0])["key"]
