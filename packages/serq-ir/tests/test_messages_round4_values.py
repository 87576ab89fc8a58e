"""serq_ir.validate's words for a negative capacity, population and warmup: the value and the rule, as a NaN's
are ("a capacity is NaN; it is a number at least 0, or "inf""). They were "a capacity is not negative
(-1.0)", "a population is not negative (-3)", "warmup is not negative (-2.0)": the value, in words that read
as if the value were not negative.
"""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import nodes as n


def _refused(program: n.Program) -> str:
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(serq_ir.encode(program, spans=False), name="x")
    return str(info.value).removeprefix("error: x: ")


@pytest.mark.parametrize("cap, shown", [(-1.0, "-1.0"), (-1e-300, "-1e-300"), ("-inf", "-inf")])
def test_a_negative_capacity_is_told_with_its_value(cap, shown):
    program = msgspec.structs.replace(mm1(), pools=[n.Pool(name="kv", cap=cap)])
    assert _refused(program) == (f'a capacity is negative ({shown}); it is a number at least 0, or "inf" - at '
                                 "'$.pools[0].cap'")


@pytest.mark.parametrize("arrive", [n.Closed(n=-3), n.Batch(n=-3)])
def test_a_negative_population_is_told_with_its_value(arrive):
    program = msgspec.structs.replace(mm1(), workload=n.Workload(arrive=arrive))
    assert _refused(program) == ("a population is negative (-3); it is a number of sessions at least 0 - at "
                                 "'$.workload.arrive.n'")


def test_a_negative_warmup_is_told_with_its_value():
    program = msgspec.structs.replace(mm1(), run=msgspec.structs.replace(mm1().run, warmup=-2.5))
    assert _refused(program) == "warmup is negative (-2.5); it is a number at least 0 - at '$.run.warmup'"


def test_the_values_at_the_bounds_are_taken():
    # (0 is a capacity, a population and a warmup: the words above are of negative values only)
    program = msgspec.structs.replace(mm1(), pools=[n.Pool(name="kv", cap=0.0)], workload=n.Workload(arrive=n.Batch(n=0)),
                                      run=msgspec.structs.replace(mm1().run, warmup=0.0))
    assert serq_ir.decode(serq_ir.encode(program, spans=False), name="x").pools[0].cap == 0.0
