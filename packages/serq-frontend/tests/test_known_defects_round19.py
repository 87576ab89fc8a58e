"""Known defects, round 19 (serq-frontend).

``branch with (p)`` is written as the kernel's ``branch (~bernoulli(p))``; a constant probability out of
[0, 1] was refused as ``~bernoulli(1.5): a probability is between 0 and 1``, naming a draw the program never
wrote. It is told in the words written, at the same place (serq_ir.rules.branch_with_draw and
branch_with_problem). A constant NaN guard (``branch (0/0)``) said only ``this expression evaluates to
NaN``; it says what a computed NaN guard says at run time (serq_ir.rules.guard_problem, which
serq_sim.errors.guard_message gives). A NaN elsewhere in a guard, and a ``~bernoulli`` written out, keep
their words.
"""

from __future__ import annotations

import pytest
from serq_ir.rules import guard_problem
from sqhelpers import compile_src, refused

HEAD = """stage d : delay;
workload { arrive batch(1); }
session {
  set x = 1;
"""
TAIL = "\n}\nrun { horizon 10; }\n"

NAN_GUARD = ("branch guard is NaN, not 0 or 1: a guard is a test; write the comparison meant "
             "(`n > 0`, `x != 0`)")


def prog(stmt: str) -> str:
    return HEAD + "  " + stmt + TAIL


@pytest.mark.parametrize("p, shown", [("1.5", "1.5"), ("0 - 0.25", "-0.25"), ("2", "2"), ("0 / 0", "NaN")])
def test_a_constant_branch_with_probability_is_told_in_the_words_written(p, shown):
    refused(prog(f"branch with (⟨{p}) {{ run d (1); }} else {{ run d (2); }}"),
            f"branch with (…): a probability is between 0 and 1, got {shown}")


def test_a_branch_with_probability_through_a_definition():
    src = "def q(v) = v * 2;\n" + prog("branch with (q(0.75)) { run d (1); }")
    with pytest.raises(Exception) as e:
        compile_src(src)
    assert "branch with (…): a probability is between 0 and 1, got 1.5" in str(e.value).splitlines()[0]


def test_a_bernoulli_draw_written_out_keeps_its_words():
    refused(prog("branch (⟨~bernoulli(1.5)) { run d (1); }"), "~bernoulli(1.5): a probability is between 0 and 1")
    refused(prog("set y = ⟨~bernoulli(2);"), "~bernoulli(2): a probability is between 0 and 1")


@pytest.mark.parametrize("guard", ["⟨0 / 0", "(⟨0 / 0) * 0", "⟨inf - inf"])
def test_a_constant_nan_guard_is_told_as_a_guard(guard):
    e = refused(prog(f"branch ({guard}) {{ run d (1); }}"), NAN_GUARD)
    # the words the simulator gives a computed NaN guard
    assert str(e).splitlines()[0].endswith(guard_problem(float("nan")))


@pytest.mark.parametrize("guard", ["x > ⟨0 / 0", "⟨0 / 0 > x", "~bernoulli(⟨0 / 0)"])
def test_a_nan_inside_a_guard_is_refused_where_it_is(guard):
    refused(prog(f"branch ({guard}) {{ run d (1); }}"), "this expression evaluates to NaN")


def test_guards_that_are_tests_still_link():
    for guard in ("x > 0", "1", "0", "x == 1 && x < 2"):
        compile_src(prog(f"branch ({guard}) {{ run d (1); }}"))
    compile_src(prog("branch with (0.25) { run d (1); } else { run d (2); }"))
