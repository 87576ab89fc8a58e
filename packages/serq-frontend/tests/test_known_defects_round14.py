"""Known defects of the front end, round 14.

1. A link error a ``--set`` value caused, at a line that does not read it, named the source's value alone: a
   run over two ps stages, one of whose rates a ``--set`` made 0, was told at the run, and the ``let`` it
   replaced still said 2. Every compile error raised once a ``--set`` is in its ``let``'s place notes it there
   (``FILE:LINE:COL: note: `r` is 0, given by --set r``, the let's line and a caret); none is noted before
   (a parse error, an unknown ``--set``), nor one the message says already."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

SRC = """share maxmin;
let r = 2;
let k = 3;
stage a : ps(r);
stage b : ps(1);
workload {
  arrive closed(1);
}
session {
  run a, b (k);
}
run { horizon 10; }
"""


def _error(sets, src=SRC):
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=src, sets=sets)
    return str(info.value).splitlines()


def test_the_program_as_written_compiles():
    serq_frontend.compile(source=SRC, sets={"k": 4})


def test_a_link_error_of_a_set_value_notes_it_at_its_let():
    lines = _error({"r": 0})
    # the error at the run (10:7), which reads no `r`; then the note at `let r` (line 2, its name at column 5)
    assert lines[0] == "<source>:10:7: error: `a` in a run over several stages: every stage of such a run is " \
                       "ps(φ) with a constant φ above 0"
    assert lines[3:] == ["<source>:2:5: note: `r` is 0, given by sets['r']", "  let r = 2;", "      ^"]


def test_every_set_is_noted_in_the_order_given():
    lines = _error({"k": 0.5, "r": 0})
    notes = [x for x in lines if ": note: " in x]
    assert notes == ["<source>:3:5: note: `k` is 0.5, given by sets['k']",
                     "<source>:2:5: note: `r` is 0, given by sets['r']"]


def test_the_command_line_names_its_option(tmp_path, capsys):
    from serq.cli import main

    p = tmp_path / "p.sq"
    p.write_text(SRC)
    with pytest.raises(SystemExit) as info:
        main(["check", str(p), "--set", "r=0"])
    assert info.value.code == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{p}:10:7: error: `a` in a run over several stages")
    assert err[3:] == [f"{p}:2:5: note: `r` is 0, given by --set r", "  let r = 2;", "      ^"]


def test_no_note_before_the_sets_are_in_place():
    # a parse error: no let has taken a value yet
    lines = _error({"r": 0}, SRC.replace("run a, b (k);", "run a, b (k)"))
    assert not any("note" in x for x in lines)
    # an unknown --set is its own error, and notes no other
    lines = _error({"r": 0, "q": 1})
    assert lines == ["<source>: error: sets['q']: the program has no `let q`"]


def test_a_value_the_message_names_already_is_not_noted_again():
    src = SRC.replace("arrive closed(1);", "arrive poisson(k - 1);")
    lines = _error({"k": 1}, src)
    assert lines[0].endswith("not 0 (`k` is 1, given in place of its `let` at 3:1)")
    assert not any("note" in x for x in lines)
    # another value given beside it is noted
    lines = _error({"k": 1, "r": 5}, src)
    assert [x for x in lines if ": note: " in x] == ["<source>:2:5: note: `r` is 5, given by sets['r']"]
