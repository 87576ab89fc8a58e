"""Known defects, round 24 (serq vllm target's part): its folding of a conditional whose test is a number
(``_folded``) takes the arm ``serq_ir.analysis.taken_arm`` says, the rule the simulator's ``reads`` and its
``queue by`` keys kept share, which the evaluation follows: a NaN test takes the first arm (a non-zero operand
is true), a 0 or -0.0 the second."""

from __future__ import annotations

import math

import pytest
from serq_ir import nodes as n
from serq_vllm.target import _folded

A = n.Attr(slot=4)
B = n.Attr(slot=5)


@pytest.mark.parametrize("test, arm", [(math.nan, A), (0, B), (-0.0, B), (2, A)],
                         ids=["nan", "zero", "minus-zero", "two"])
def test_a_number_test_folds_to_the_arm_taken(test, arm):
    assert _folded(n.Cond(test=n.Num(value=test), then=A, orelse=B)) == arm
    # a test that folds to the number: test + 0 of a number is its value
    folded = _folded(n.Cond(test=n.Binary(op="+", lhs=n.Num(value=test), rhs=n.Num(value=0)), then=A, orelse=B))
    if test == test:
        assert folded == arm
    else:  # (a NaN sum is not folded to a number: the conditional stays)
        assert isinstance(folded, n.Cond)
