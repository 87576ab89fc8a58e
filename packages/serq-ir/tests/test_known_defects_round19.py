"""Known defects, round 19 (serq-ir).

The draw ``branch with (p)`` is written as has its probability's place (the frontend gives the draw the
span of its argument); an IR file's constant probability out of [0, 1] there is refused in the words the
program wrote (rules.branch_with_draw, rules.branch_with_problem), as the linker refuses it; a
``~bernoulli`` with its own place, or without spans, keeps the draw's words. rules.guard_problem is the
one text of a guard that is not 0 or 1 (the linker's for a constant NaN, the simulator's at run time).
"""

from __future__ import annotations

import math

import msgspec
import pytest
from ir_programs import mm1
from serq_ir import nodes as n
from serq_ir import rules
from serq_ir.errors import IRError
from serq_ir.validate import validate

AT = n.Span(file="p.sq", line=5, col=16)
TILDE = n.Span(file="p.sq", line=5, col=11)


def draw(p: float, span, arg_span) -> n.Draw:
    return n.Draw(dist="bernoulli", args=[n.Num(value=p, span=arg_span)], span=span)


def with_guard(guard) -> n.Program:
    prog = mm1()
    branch = n.Branch(guard=guard, then=[], orelse=[], span=n.Span(file="p.sq", line=5, col=3))
    return msgspec.structs.replace(prog, session=[*prog.session, branch])


def first_error(prog) -> str:
    with pytest.raises(IRError) as e:
        validate(prog)
    return str(e.value)


@pytest.mark.parametrize("p, shown", [(1.5, "1.5"), (-0.25, "-0.25")])
def test_the_draw_of_branch_with_is_told_in_its_words(p, shown):
    assert rules.branch_with_draw(draw(p, AT, AT))
    assert (f"branch with (…): a probability is between 0 and 1, got {shown}"
            in first_error(with_guard(draw(p, AT, AT))))


def test_a_bernoulli_written_out_or_without_spans_keeps_the_draw_words():
    for d in (draw(1.5, TILDE, AT), draw(1.5, None, None)):
        assert not rules.branch_with_draw(d)
        assert "~bernoulli(1.5): a probability is between 0 and 1" in first_error(with_guard(d))


def test_a_probability_in_range_is_valid():
    validate(with_guard(draw(0.5, AT, AT)))
    assert rules.branch_with_problem(0) is None and rules.branch_with_problem(1) is None


def test_the_guard_words():
    assert rules.guard_problem(math.nan) == ("branch guard is NaN, not 0 or 1: a guard is a test; write the "
                                             "comparison meant (`n > 0`, `x != 0`)")
    assert rules.guard_problem(0.5) == "branch guard is 0.5, not 0 or 1 (a draw is written `branch with (p)`)"
    assert rules.branch_with_problem(math.nan) == "branch with (…): a probability is between 0 and 1, got NaN"
