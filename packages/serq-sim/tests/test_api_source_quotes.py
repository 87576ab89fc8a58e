"""A program compiled from text (``serq_frontend.compile(source=…)``) has its errors quoted as a file's are: the
place ``<source>:LINE:COL``, the source line and a caret under the column. A run-time error of ``serq_sim.run``
gave the place and the expansion notes alone (``<source>:2:13: error: …``), though the text was at hand; the
compile now notes it with the program (serq_ir.folders.note_texts, as it noted the ``defs=`` bodies), held as
given: no copy, nothing written anywhere, let go with the program. Each caret's column is checked against the
source by index, not by what the formatter prints."""

from __future__ import annotations

import gc
import os
import tempfile
import tracemalloc

import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq.errors import source_excerpt, texts_given
from serq_frontend import CompileError
from serq_ir.folders import compiled_texts
from serq_sim import SimError, fast

pytestmark = pytest.mark.timeout(120)

TIERS = ["", "general"]


def quoted(src: str, line: int, col: int) -> list[str]:
    """The two lines a message quotes line ``line`` of ``src`` with, the caret under column ``col``: found in the
    source by its own lines, indented by two as every quoted line is."""
    text = src.split("\n")[line - 1]
    return [f"  {text}", "  " + " " * (col - 1) + "^"]


def place(src: str, line: int, word: str, nth: int = 0) -> int:
    """The column (1-based) of the ``nth`` occurrence of ``word`` on line ``line`` of ``src``."""
    text = src.split("\n")[line - 1]
    at = -1
    for _ in range(nth + 1):
        at = text.index(word, at + 1)
    return at + 1


def run_error(program, monkeypatch, tier: str) -> list[str]:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    assert fast.tier(program) == (tier or "fast")
    with pytest.raises(SimError) as e:
        serq_sim.run(program)
    return str(e.value).split("\n")


# session 0 holds 5 - 7 units at t=0 (the hold's units, line 4)
HOLD = """pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { set x = 5; run d (1); hold p (x - 7) { run d (1); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_a_run_time_error_at_a_hold_quotes_its_line(monkeypatch, tier):
    col = place(HOLD, 4, "x - 7")
    assert col == 41
    assert run_error(serq_frontend.compile(source=HOLD), monkeypatch, tier) == [
        f"<source>:4:{col}: error: at t=1, session 0: the units of p are negative (-2)", *quoted(HOLD, 4, col)]


# a definition used twice: at t=0 its first use is 3 - 0, at t=5 its second 3 - 5 = -2, refused at the body
# (line 1) with a note at the second use (line 7), not the first (line 6)
TWICE = """def w(x) = x - now;
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold p (w(3)) { run d (5); }
  hold p (w(3)) { run d (1); }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_an_error_in_a_definition_used_twice_quotes_the_body_and_the_use_that_expanded_it(monkeypatch, tier):
    body, use = place(TWICE, 1, "x - now"), place(TWICE, 7, "w(3)")
    assert (body, use) == (12, 11)
    assert run_error(serq_frontend.compile(source=TWICE), monkeypatch, tier) == [
        f"<source>:1:{body}: error: at t=5, session 0: the units of p are negative (-2)", *quoted(TWICE, 1, body),
        f"<source>:7:{use}: note: in the expansion of `w`, used here", *quoted(TWICE, 7, use)]


# the body given by defs= is where the error is, its use in the source text the note
GIVEN = """pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { run d (2); hold p (m()) { run d (1); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_source_and_defs_are_both_quoted(monkeypatch, tier):
    body = "1 - now"
    program = serq_frontend.compile(source="def m() = 0;\n" + GIVEN, defs={"m": body})
    src = "def m() = 0;\n" + GIVEN
    use = place(src, 5, "m()")
    assert run_error(program, monkeypatch, tier) == [
        "defs['m']:1:1: error: at t=2, session 0: the units of p are negative (-1)", f"  {body}", "  ^",
        f"<source>:5:{use}: note: in the expansion of `m`, used here", *quoted(src, 5, use)]


def test_a_compile_warning_quotes_its_line(capsys):
    # a step stage's budget of a constant 0 (linked with a warning at the value, line 2)
    src = ("pool kv { cap 1000; block 16; }\nstage e : step { budget 0; cost 1; memory kv; }\n"
           "workload { arrive poisson(0.1); }\nsession { hold kv (16) { prefill on e (100) growing kv; } }\n"
           "run { horizon 100; }\n")
    serq_frontend.compile(source=src)
    col = place(src, 2, "0;")
    assert col == 25
    lines = capsys.readouterr().err.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"<source>:2:{col}: warning: "))
    assert lines[at + 1: at + 3] == quoted(src, 2, col)


def test_a_link_error_quotes_its_line():
    src = "stage d : delay;\nworkload { arrive batch(1); }\nsession { run d (1); run q (1); }\nrun { horizon 1; }\n"
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=src)
    col = place(src, 3, "q")
    lines = str(e.value).split("\n")
    assert lines[0].startswith(f"<source>:3:{col}: error: ") and lines[1:3] == quoted(src, 3, col), lines


def test_a_link_error_in_a_defs_body_quotes_the_body_and_its_use_in_the_text():
    src = "def m() = 0;\n" + GIVEN
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=src, defs={"m": "q + 1"})
    use = place(src, 5, "m()")
    assert str(e.value).split("\n") == [
        "defs['m']:1:1: error: unknown name `q`", "  q + 1", "  ^",
        f"<source>:5:{use}: note: in the expansion of `m`, used here", *quoted(src, 5, use)]


@pytest.mark.parametrize("tier", TIERS)
def test_the_ir_of_a_text_gives_the_place_alone(tmp_path, monkeypatch, tier):
    """The IR keeps no text: a program decoded from it has no note, and its error is the place and the message
    (as a copy of one compiled with defs= is). A file named `<source>` in the current folder is no source and is
    not quoted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "<source>").write_text("nothing of the program\n" * 5)
    program = serq_ir.decode(serq_ir.encode(serq_frontend.compile(source=HOLD)))
    assert compiled_texts(program) == {}
    assert run_error(program, monkeypatch, tier) == [
        f"<source>:4:{place(HOLD, 4, 'x - 7')}: error: at t=1, session 0: the units of p are negative (-2)"]


def test_the_text_is_held_as_given_and_let_go_with_the_program():
    src = HOLD.replace("run { horizon 10; }", "run { horizon 10; }  // " + "z" * 4_000_000)
    program = serq_frontend.compile(source=src)
    assert compiled_texts(program)["<source>"] is src  # the caller's str, not a copy
    del program
    gc.collect()
    # the caller's text, compiled and dropped with its program: its memory is given back (the thread's parser
    # held the last text it parsed, and its reporter, until its next compile)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        text = "".join([src, " "])  # a text of its own, made while traced
        program = serq_frontend.compile(source=text)
        del program, text
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 1_000_000, after - before


def test_a_line_of_a_large_text_is_quoted_without_copying_the_text():
    # 200 000 lines of 20 characters, the quoted one at the end: splitting the text copied all 4 MB of it (and a
    # str object a line) for each place a message quoted
    text = "// padding padding\n" * 200_000 + "session { run d (1); }\n"
    col = text.split("\n")[200_000].index("run") + 1
    tracemalloc.start()
    try:
        with texts_given({"<source>": text}):
            excerpt = source_excerpt("<source>", 200_001, col)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert excerpt.split("\n")[1:] == ["  session { run d (1); }", "  " + " " * (col - 1) + "^"]
    assert peak < 100_000, peak


@pytest.mark.parametrize("tier", TIERS)
def test_nothing_of_the_text_is_written(tmp_path, monkeypatch, tier):
    """The caches (SERQ_CACHE_DIR), the temporary folder and the current folder, after a compile and a run-time
    error quoted from the text: no file holds any of it."""
    marker = "quoted_only_in_memory_8c1f"
    for folder in ("cache", "tmp", "here"):
        (tmp_path / folder).mkdir()
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.chdir(tmp_path / "here")
    src = HOLD.replace("stage d : delay;", f"stage d : delay;  // {marker}")
    lines = run_error(serq_frontend.compile(source=src), monkeypatch, tier)
    assert lines[1:] == quoted(src, 4, place(src, 4, "x - 7"))
    written = []
    for root, _, files in os.walk(tmp_path):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                if marker.encode() in f.read():
                    written.append(os.path.join(root, name))
    assert written == []
