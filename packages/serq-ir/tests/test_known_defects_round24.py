"""Known defects, round 24 (the IR's part): "a conditional whose test is a number takes one arm" was written
in three places (the simulator's ``reads``, the ``queue by`` keys kept, ``serq vllm target``'s folding), each
with its own handling of a NaN test. ``serq_ir.analysis.taken_arm`` is the one rule: a test that is not zero,
NaN and the infinities included, takes the first arm (language.txt: a non-zero operand is true), a 0 or -0.0
the second."""

from __future__ import annotations

import math

import pytest
from serq_ir import nodes as N
from serq_ir.analysis import taken_arm

A = N.Attr(slot=4)
B = N.Ctx(name="now")


@pytest.mark.parametrize("test, arm", [(math.nan, "then"), (0, "orelse"), (0.0, "orelse"), (-0.0, "orelse"),
                                       (3, "then"), (-2.5, "then"), (5e-324, "then"), ("inf", "then"),
                                       ("-inf", "then")])
def test_a_number_test_takes_one_arm(test, arm):
    got = taken_arm(N.Cond(test=N.Num(value=test), then=A, orelse=B))
    assert got is (A if arm == "then" else B)


def test_no_arm_is_taken_of_a_test_that_is_no_number_or_of_no_conditional():
    assert taken_arm(N.Cond(test=N.Attr(slot=5), then=A, orelse=B)) is None
    assert taken_arm(N.Cond(test=N.Unary(op="-", arg=N.Num(value=0)), then=A, orelse=B)) is None
    assert taken_arm(N.Num(value=1)) is None
