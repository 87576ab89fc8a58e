"""A small file on disk that reads as a large one (a sparse file: 1 GiB of NUL bytes in no blocks) is one
message, at once, from every command that reads a file whole.

A program, a library, an IR file, a scenario and a step trace were read whole, decoded and parsed, and
their error located by splitting the text into lines and mapping every character of the long line:
``serq check`` of a 1 GiB sparse ``.sq`` took 56 s and 10 GB, ``serq fmt`` 74 s and 12 GB, ``serq fit``
64 s and 10 GB, and ``serq check`` of a sparse ``.ir.json`` or ``serq vllm scenario`` of a sparse ``.json``
more than two minutes and 11 GB without an answer. A serQ source is now at most 16 MiB
(``serq.files.MAX_SOURCE``) and a JSON document at most 256 MiB (``MAX_JSON``), found from the file's
size before it is read; the error of one just within the limit is located without copying its text.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from serq.files import MAX_JSON, MAX_SOURCE

SERQ = str(Path(sys.executable).parent / "serq")
GIB = 2**30
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _serq(peak_memory, cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, float, int]:
    """``serq ARGS``: the result, its wall time and its own peak resident memory in bytes (conftest.py's
    ``peak_memory``: not the test process's, which os.wait4 of a direct child counts too); killed after
    120 s."""
    t = time.monotonic()
    with open(cwd / ".out", "w+") as out, open(cwd / ".err", "w+") as err:
        code, peak = peak_memory([SERQ, *args], timeout=120, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err)
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess([SERQ, *args], code, out.read(), err.read())
    (cwd / ".out").unlink()
    (cwd / ".err").unlink()
    return r, time.monotonic() - t, peak


def _one_error(r: subprocess.CompletedProcess, status: int = 1) -> str:
    assert r.returncode == status and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    return r.stderr


@pytest.mark.parametrize("args, name, what, limit", [
    (["check"], "p.sq", "a serQ source", "16 MiB"),
    (["run"], "p.sq", "a serQ source", "16 MiB"),
    (["ir"], "p.sq", "a serQ source", "16 MiB"),
    (["ast"], "p.sq", "a serQ source", "16 MiB"),
    (["fmt"], "p.sq", "a serQ source", "16 MiB"),
    (["check"], "p.ir.json", "an IR file", "256 MiB"),
    (["run"], "p.ir.json", "an IR file", "256 MiB"),
    (["vllm", "scenario"], "s.json", "a scenario", "256 MiB"),
    (["fit"], "s.jsonl", "a step trace", "256 MiB"),
])
def test_a_sparse_gigabyte_is_refused_at_once(tmp_path, args, name, what, limit, peak_memory):
    _sparse(tmp_path / name, GIB)
    r, seconds, _ = _serq(peak_memory, tmp_path, *args, name)
    err = _one_error(r)
    # (serq fit names the file first in every message: `FILE: error: cannot read: …`)
    said = f"{name}: error: cannot read:" if args == ["fit"] else f"{name}: cannot read:"
    assert err.endswith(f"{said} is 1073741824 bytes (1 GiB), more than {what} may have ({limit})\n"), err
    assert seconds < 30
    assert (tmp_path / name).stat().st_size == GIB  # fmt wrote nothing


def test_a_library_beyond_the_limit_is_an_error_at_its_use(tmp_path, peak_memory):
    _sparse(tmp_path / "big.sq", MAX_SOURCE + 1)
    (tmp_path / "p.sq").write_text('use "big.sq";\n' + PROGRAM)
    r, seconds, _ = _serq(peak_memory, tmp_path, "check", "p.sq")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0] == (f"p.sq:1:1: error: big.sq: cannot read: is {MAX_SOURCE + 1} bytes (16 MiB), "
                                        "more than a serQ source may have (16 MiB)"), r.stderr
    assert seconds < 30


@pytest.mark.parametrize("args, name", [
    (["check"], "p.sq"),
    (["fmt", "--check"], "p.sq"),
    (["check"], "p.ir.json"),
    (["vllm", "scenario"], "s.json"),
    (["fit"], "s.jsonl"),
])
def test_a_file_of_nul_bytes_within_the_limit_is_located_cheaply(tmp_path, args, name, peak_memory):
    # one line of NUL bytes just within the limit: the error at 1:1, its line quoted around the fault only
    size = (MAX_SOURCE if name.endswith(".sq") else MAX_JSON) - 1
    _sparse(tmp_path / name, size)
    r, seconds, rss = _serq(peak_memory, tmp_path, *args, name)
    # (an error of serq fmt --check is status 2: its 1 says a file would be reformatted)
    assert r.returncode == (2 if args == ["fmt", "--check"] else 1), r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"{name}:1:1: error: ") and len(lines) == 3, r.stderr
    assert len(lines[1]) < 300  # the line quoted around the fault, not whole
    assert seconds < 30
    assert rss < 2 * size + 400 * 2**20, rss  # the text and a copy or so, not ten of them


def test_a_step_trace_of_blank_lines_is_read_without_a_string_a_line(tmp_path, peak_memory):
    (tmp_path / "s.jsonl").write_bytes(b"\n" * (64 * 2**20) + b'{"decoders": 1, "time": -1}\n')
    r, seconds, rss = _serq(peak_memory, tmp_path, "fit", "s.jsonl")
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == (f"s.jsonl:{64 * 2**20 + 1}:25: error: time is -1: a finite number, not negative\n"
                        '  {"decoders": 1, "time": -1}\n' + " " * 26 + "^\n")
    assert seconds < 30
    assert rss < 600 * 2**20, rss


def test_a_small_file_read_with_a_limit_allocates_what_it_holds(tmp_path):
    # read(limit + 1) allocated the limit first: 256 MB for a scenario of a few bytes, and a run near its
    # memory limit (ulimit -v) failed to end with its partial report when it read its program back
    import tracemalloc

    from serq.files import read_input

    (tmp_path / "s.json").write_bytes(b"{}" * 500)
    tracemalloc.start()
    try:
        assert read_input(tmp_path / "s.json", limit=MAX_JSON) == b"{}" * 500
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak


def test_a_file_that_grows_past_its_size_is_read_to_the_limit(tmp_path, monkeypatch):
    from serq import files

    (tmp_path / "p.sq").write_bytes(b"x" * 5000)
    real = os.fstat

    def smaller(fd):  # the size a moment before the file grew
        st = real(fd)
        return os.stat_result((*st[:6], 10, *st[7:]))

    monkeypatch.setattr(files.os, "fstat", smaller)
    assert files.read_input(tmp_path / "p.sq", limit=5000) == b"x" * 5000
    with pytest.raises(OSError) as e:
        files.read_input(tmp_path / "p.sq", limit=4999, what="a serQ source")
    assert e.value.strerror == "is 5000 bytes (4.88 KiB), more than a serQ source may have (4999 bytes)"
