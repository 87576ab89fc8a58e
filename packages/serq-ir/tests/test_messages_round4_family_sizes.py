"""A family of fewer than one member in an IR file is told at its own size, first: a pool admitted via (or a
step stage's memory, or a spill's tier or link naming) a stage or pool family whose size is 0 or negative was
told "pool reqs (a family of 2) is admitted via stage e (a family of -1), and the two cannot be paired", at the
pool, where the size itself is what is wrong ("a family has at least one member, not -1", at the stage).
"""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import nodes as n

ONE = n.Num(value=1.0)


def _program(stage_size: int, pool_size: int) -> n.Program:
    """mm1 with a family of 2 pools admitted via a step family of ``stage_size`` whose memory is a pool family
    of ``pool_size``."""
    step = n.Step(budget=n.Num(value=4.0), cost=ONE, memory=1)
    return msgspec.structs.replace(
        mm1(),
        pools=[n.Pool(name="reqs", size=2, array=True, cap=4.0, admit_via=1),
               n.Pool(name="kv", size=pool_size, array=True, cap=100.0)],
        stages=[*mm1().stages, n.Stage(name="e", kind=step, size=stage_size, array=True)])


def _refused(program: n.Program) -> str:
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(serq_ir.encode(program, spans=False), name="x")
    return str(info.value).removeprefix("error: x: ")


@pytest.mark.parametrize("size", [0, -1, -5])
def test_a_stage_family_of_no_member_is_told_at_its_size(size):
    assert _refused(_program(size, 2)) == f"a family has at least one member, not {size} - at '$.stages[1].size'"


@pytest.mark.parametrize("size", [0, -1])
def test_a_pool_family_of_no_member_is_told_at_its_size(size):
    assert _refused(_program(2, size)) == f"a family has at least one member, not {size} - at '$.pools[1].size'"


def test_families_that_do_not_pair_are_still_told_so():
    # (sizes of at least one that differ, neither 1: the pairing, as before)
    said = _refused(_program(3, 3))
    assert said.startswith("pool reqs (a family of 2) is admitted via stage e (a family of 3), and the two cannot "
                           "be paired") and said.endswith("- at '$.pools[0].admit_via'")
    assert serq_ir.decode(serq_ir.encode(_program(2, 2), spans=False), name="x").stages[1].size == 2
