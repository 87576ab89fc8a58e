"""A program's text as editors write it: a UTF-8 byte-order mark first, and what the parser says at the
end of the file."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir
from serq_frontend import CompileError, cache
from sqhelpers import make_pm

BOM = b"\xef\xbb\xbf"

LIB = """def service() = ~exp(2);
"""

PROGRAM = """use "lib.sq";
stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (service()); observe response = now - t0; }
run { horizon 100; }
"""


def test_a_byte_order_mark_is_not_part_of_the_program(tmp_path):
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    for d, mark in ((plain, b""), (marked, BOM)):
        d.mkdir()
        (d / "lib.sq").write_bytes(mark + LIB.encode())
        (d / "prog.sq").write_bytes(mark + PROGRAM.encode())
    want = serq_ir.encode(serq_frontend.compile(plain / "prog.sq"))
    got = serq_ir.encode(serq_frontend.compile(marked / "prog.sq"))
    assert b"service" not in want and b"lib.sq" in want  # the library's def expanded; spans name its file
    assert got.replace(b"marked", b"plain") == want  # the same IR, spans (lines, columns) included


def test_columns_of_the_first_line_count_from_after_the_mark(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_bytes(BOM + b"stage s : fifo; oops oops;\n")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    assert (e.value.line, e.value.col) == (1, 22)  # the second `oops`, counted from `s` at column 1
    assert "\ufeff" not in str(e.value)


def test_the_compile_cache_hits_a_program_and_library_with_a_mark(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    count = [0]
    real = serq_frontend._compile

    def counting(*args, **kw):
        count[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(serq_frontend, "_compile", counting)
    (tmp_path / "lib.sq").write_bytes(BOM + LIB.encode())
    prog = tmp_path / "prog.sq"
    prog.write_bytes(BOM + PROGRAM.encode())
    pm = make_pm()
    first = cache.load(prog, pm=pm)
    second = cache.load(prog, pm=pm)
    assert count[0] == 1  # the second load is a hit: the library read back as the compile read it
    assert serq_ir.encode(first) == serq_ir.encode(second) == serq_ir.encode(serq_frontend.compile(prog))


def test_a_program_that_stops_short_says_end_of_the_file(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_text("stage s : fifo; x")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    assert "error: unexpected end of the file" in str(e.value)
