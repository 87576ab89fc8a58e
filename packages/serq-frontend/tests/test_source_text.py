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
    program = serq_frontend.compile(plain / "prog.sq")
    want = serq_ir.encode(program)
    got = serq_ir.encode(serq_frontend.compile(marked / "prog.sq"))
    # the library's def expanded (only the spans' uses name it); spans name its file
    assert b"service" not in serq_ir.encode(program, spans=False) and b"lib.sq" in want
    assert got.replace(b"marked", b"plain") == want  # the same IR, spans (lines, columns) included


def test_columns_of_the_first_line_count_from_after_the_mark(tmp_path):
    prog = tmp_path / "prog.sq"
    prog.write_bytes(BOM + b"stage s : fifo; oops oops;\n")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    # the first `oops` (which begins no item), counted from `s` at column 1
    assert (e.value.line, e.value.col) == (1, 17) and "`oops` does not begin an item" in str(e.value)
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
    prog.write_text("stage s : fifo; pool")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    assert "error: unexpected end of the file" in str(e.value)


@pytest.mark.parametrize("src, where, word, close", [
    ("poool kv { cap 10; }\n", (1, 1), "poool", "pool"),
    ("stage s : fifo;\nsesion { run s(1); }\n", (2, 1), "sesion", "session"),
    ("let x = 1;\n// a comment\nworklaod { arrive poisson(1); }\n", (3, 1), "worklaod", "workload"),
    ("pool p { cap 1; }\nzz\n", (2, 1), "zz", None),
    ("stage s : fifo; x", (1, 17), "x", None),
])
def test_a_word_that_begins_no_item_is_named_where_it_stands(tmp_path, src, where, word, close):
    # it was `unexpected <the next token> (expected pull)` at the token after the word: the parser took the
    # word for the reader of `READER pull SOURCE`
    prog = tmp_path / "prog.sq"
    prog.write_text(src)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    msg = str(e.value)
    assert (e.value.line, e.value.col) == where, msg
    assert f"error: `{word}` does not begin an item" in msg and "expected pull" not in msg, msg
    assert (f"(did you mean `{close}`?)" in msg) if close else "did you mean" not in msg, msg
    assert "an item begins with def, gauge, let, pool" in msg and "`READER pull SOURCE`" in msg, msg


@pytest.mark.parametrize("src, where, part", [
    # a misspelt statement word, read as a definition's call: named where it stands
    ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { rn s(1); }\n", (3, 11),
     "`rn` does not begin a statement (did you mean `run`?)"),
    # a misspelt word where the grammar wants one of its words: the closest of them
    ("pool p { cpa 10; }\n", (1, 10), "unexpected `cpa` (did you mean `cap`?)"),
    ("stage s : step { budgt 10; cost 1; }\n", (1, 18), "(did you mean `budget`?)"),
    # a word the lexer split where it wanted a keyword (`fifoo` read as `fifo` then `o`): the whole word
    ("stage s : fifoo;\nworkload { arrive poisson(1); }\nsession { run s(1); }\n", (1, 11),
     "unexpected `fifoo` (did you mean `fifo`?)"),
    # a terminal that is a choice of words is listed as those words (it was `run_field`, `arrive`)
    ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s(1); }\nrun { horizn 10; }\n", (4, 7),
     "unexpected `horizn` (expected `}`, arrivals, horizon, seed, warmup) (did you mean `horizon`?)"),
    ("stage s : fifo;\nworkload { arrive poison(1); }\nsession { run s(1); }\n", (2, 19),
     "(expected batch, closed, poisson, renewal, none) (did you mean `poisson`?)"),
    # a block statement's misspelt word, read as a call and then refused at its `{`
    ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { brnch (1) { run s(1); } }\n", (3, 11),
     "`brnch` does not begin a statement (did you mean `branch`?)"),
    # an anonymous keyword is named by its text, not by the parser's internal name (`__anon_1`)
    ("stage s : fifo;\nworkload { arive poisson(1); }\nsession { run s(1); }\n", (2, 12),
     "unexpected `arive` (expected `}`, arrive, hidden, init, session, trace, turn) (did you mean `arrive`?)"),
])
def test_a_misspelt_word_is_named_with_the_closest_word_of_the_grammar(tmp_path, src, where, part):
    prog = tmp_path / "prog.sq"
    prog.write_text(src)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    msg = str(e.value)
    assert (e.value.line, e.value.col) == where and part in msg and "__anon" not in msg, msg
