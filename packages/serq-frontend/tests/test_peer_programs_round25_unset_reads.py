"""A read of an attribute that no path has set yet is told: it reads 0 on every path.

A P/D program named its decoder's member one statement early: `prefill on pre[i] (prompt) growing pkv[j];`
in the prefill hold, the `choose j in ND by (…)` of the decode member after it. An attribute is 0 until the
session sets it, so the prefill grew `pkv[0]` whatever the router chose, which was an error (outside a hold
of pkv[0]) only at a session whose prefill member was another, and silently member 0's otherwise. The
compile now warns at the first read of each attribute that no path to it has set (serq_frontend.link,
``Unset``: a may-analysis, so a read that some path reaches after a set, a loop's next pass included, is not
told); the IR is unchanged.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage d : delay;
pool p { cap 10; }

workload {
  arrive renewal(1);
INIT}

session {
  set t = now;
BODY
  observe took = now - t;
}

run { horizon inf; arrivals 2; seed 1; }
"""


def compiled(capsys, body: str, init: str = ""):
    program = serq_frontend.compile(source=PROGRAM.replace("BODY", body).replace("INIT", init))
    return program, capsys.readouterr().err


def test_a_read_before_the_set_is_told_and_reads_0(capsys):
    program, err = compiled(capsys, "  run d (x + 1);\n  set x = 2;\n  run d (x);")
    assert err.splitlines()[:3] == [
        "<source>:10:10: warning: `x` is read here before any statement sets it, so it reads 0 (an attribute is 0 "
        "until the session sets it; the first statement that sets it is at 11:3): set it before this read, or "
        "write 0",
        "    run d (x + 1);",
        "           ^"], err
    # by hand: 0 + 1 s, then 2 s
    assert list(serq_sim.run(program).observe("took").values) == [3.0, 3.0]


@pytest.mark.parametrize("body, init", [
    ("  set x = 2;\n  run d (x);", ""),
    ("  run d (x);", "  init {\n    set x = 2;\n  }\n"),
    # a set in one arm reaches the read on that path
    ("  branch (serial == 0) {\n    set x = 2;\n  }\n  run d (x);\n  set x = 1;", ""),
    # a loop's next pass reads the set at the end of the pass before (its first pass reads 0: an
    # accumulator left to start at 0)
    ("  loop {\n    run d (x);\n    set x = x + 1;\n    branch (x > 2) {\n      end;\n    }\n  }", ""),
    # a choose's keys read its index
    ("  choose j in 2 by (j);\n  run d (j);", ""),
    # a hold executed again after a preemption reads what its body set
    ("  hold p (1 + x) {\n    set x = 1;\n    run d (x);\n  }", ""),
    ("  hold p (1) {\n    run d (x);\n    set x = 1;\n  }", ""),
])
def test_no_word_where_some_path_has_set_it(capsys, body, init):
    _, err = compiled(capsys, body, init)
    assert "before any statement sets it" not in err, err


def test_a_read_before_the_turn_that_sets_it_is_told(capsys):
    body = "  run d (n);\n  turn;\n  run d (n);"
    _, err = compiled(capsys, body, "  turn {\n    set n = 2;\n  }\n")
    assert err.startswith("<source>:13:10: warning: `n` is read here before any statement sets it"), err
    assert "the first statement that sets it is at 7:5" in err
    assert err.count("warning") == 1  # the read after the turn is not told


TURN_READS_GAP = "  turn {\n    branch (turn_no > 1) {\n      set gap = now - t_last;\n    }\n  }\n"


def test_the_turn_block_reads_what_a_later_turn_brings(capsys):
    """The `turn` block is one place run at every `turn;`: its read of `t_last` behind `turn_no > 1` runs only
    at the second `turn;`, after the session set it, and is told nothing."""
    body = "  turn;\n  run d (1);\n  set t_last = now;\n  run d (2);\n  turn;\n  run d (gap);"
    program, err = compiled(capsys, body, TURN_READS_GAP)
    assert "before any statement sets it" not in err, err
    # by hand: 1 s, 2 s, then gap = 2 s (t_last read as 0 would make it 3 s more than the arrival time)
    assert list(serq_sim.run(program).observe("took").values) == [5.0, 5.0]


def test_a_loop_s_next_turn_reads_what_the_turn_block_set(capsys):
    """A `turn;` in a loop runs the `turn` block again on the next pass, which reads what the block set on the
    pass before: `t_last` behind `turn_no > 1` is told nothing."""
    init = "  turn {\n    branch (turn_no > 1) {\n      set gap = now - t_last;\n    }\n    set t_last = now;\n  }\n"
    body = ("  loop {\n    turn;\n    run d (1 + gap);\n    branch (turn_no >= 3) {\n      observe took = now - t;\n"
            "      end;\n    }\n  }")
    program, err = compiled(capsys, body, init)
    assert "before any statement sets it" not in err, err
    # by hand, from the arrival: turn 1 runs 1 s (gap 0), turn 2 2 s (gap 1), turn 3 3 s (gap 2)
    assert list(serq_sim.run(program).observe("took").values) == [6.0, 6.0]


def test_the_turn_block_read_no_turn_has_set_is_told(capsys):
    body = "  turn;\n  run d (gap);\n  turn;\n  set t_last = now;"
    _, err = compiled(capsys, body, TURN_READS_GAP)
    assert err.startswith("<source>:8:23: warning: `t_last` is read here before any statement sets it"), err
    assert err.count("warning") == 1


def test_the_first_read_of_each_name_once(capsys):
    _, err = compiled(capsys, "  run d (x + y);\n  run d (x);\n  set x = 1;\n  set y = 1;")
    assert [line.split(": warning: ")[1][:3] for line in err.splitlines() if ": warning: " in line] == [
        "`x`", "`y`"], err


def test_the_misnamed_member_of_a_p_d_program(capsys):
    text = """pool pkv[2] { cap 100; }
pool dkv[2] { cap 100; }
stage pre[2] : step { budget 100; cost 1; memory pkv; }
stage dec[2] : step { budget 100; cost 1; memory dkv; }
stage link : delay;

workload {
  arrive renewal(1);
}

session {
  choose i in 2 by (holders(pkv[i]));
  hold pkv[i] (10) {
    run pre[i] prefill (10) growing pkv[j];
  } lease pkv[i] (inf);
  choose j in 2 by (holders(dkv[j]));
  hold dkv[j] (10) {
    transfer on link (1) from pkv[i] to dkv[j] (10);
    run dec[j] decode (3) growing dkv[j];
  }
}

run { horizon 10; seed 1; }
"""
    serq_frontend.compile(source=text)
    err = capsys.readouterr().err
    assert err.startswith("<source>:14:41: warning: `j` is read here before any statement sets it, so it reads 0 "
                          "(an attribute is 0 until the session sets it; the first statement that sets it is at "
                          "16:3)"), err


def test_nested_loops_are_walked_once_each(capsys):
    """A pass of a loop reads what any pass set: 30 nested loops, the innermost setting `x` and every level
    reading it first, are told nothing (a fixpoint of each loop's passes, nested, would take 2**30 passes;
    the module's timeout is the bound)."""
    depth = 30
    opening = "".join("  " * (k + 1) + "loop {\n" + "  " * (k + 2) + "run d (x);\n" for k in range(depth))
    closing = "".join("  " * (k + 1) + "}\n" for k in reversed(range(depth)))
    inner = "  " * (depth + 1) + "set x = 1;\n" + "  " * (depth + 1) + "branch (x > 0) {\n" + "  " * (depth + 2) \
        + "end;\n" + "  " * (depth + 1) + "}\n"
    text = PROGRAM.replace("  observe took = now - t;\n", "").replace("BODY\n", opening + inner + closing)
    serq_frontend.compile(source=text.replace("INIT", ""))
    assert "before any statement sets it" not in capsys.readouterr().err
