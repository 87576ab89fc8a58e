"""serq_ir.validate's words for a NaN and for the ``builtin`` flag of an attribute.

A NaN in a number field (a program built in Python: JSON has no NaN, and the decoder refuses json.dump's
``NaN``) was quoted as Python prints it, "a capacity is not negative (nan)", "not nan": NaN is called NaN, in
every field a rule of its own checks, and a NaN where no rule of its own looks (an expression's number, a
lease's time, a hold's reuse, a constant) is refused as no number of the IR, where it was taken. A NaN index
is said to name no member (it was "index NaN out of range"). The ``builtin`` flag was taken on any attribute;
the frontend writes it on the language's attributes only (serial, turn_no, cached, computed, and with a
trace new, out, think, more, forced), and one on another name is refused at its JSON path; `hidden` on
`cached` or `computed`, which the frontend refuses, is refused too.
"""

from __future__ import annotations

import math

import msgspec
import pytest
from ir_programs import everything, mm1
from serq_ir import nodes as n
from serq_ir.errors import IRError
from serq_ir.validate import validate

NAN = math.nan
NOT_NUMBER = 'is NaN: a number of the IR is finite, or "inf" or "-inf" where the IR allows one'


def _with(program: n.Program, path: list, value) -> n.Program:
    """``program`` with the value at ``path`` (keys and indexes of its builtins) replaced by ``value``."""
    data = msgspec.to_builtins(program)
    at = data
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return msgspec.convert(data, n.Program, strict=False)


def _refused(program: n.Program) -> str:
    with pytest.raises(IRError) as info:
        validate(program)
    return str(info.value).splitlines()[0].removeprefix("error: <ir>: ")


@pytest.mark.parametrize("path, said", [
    (["pools", 0, "cap"], "a capacity is NaN; it is a number at least 0, or \"inf\" - at '$.pools[0].cap'"),
    (["pools", 0, "block"], "a block is positive and finite, not NaN - at '$.pools[0].block'"),
    (["stages", 0, "kind", "servers"],
     "a fifo has a whole number of servers, at least 1, not NaN - at '$.stages[0].kind.servers'"),
    (["run", "horizon"], "the horizon is above 0 (or inf), not NaN - at '$.run.horizon'"),
    (["run", "warmup"], "warmup is NaN; it is a number at least 0 - at '$.run.warmup'"),
    (["workload", "presets", 0, "at"],
     "a preset session arrives at a finite time at least 0, not NaN - at '$.workload.presets[0].at'"),
    (["session", 30, "pools", 0, "units", "value"],
     "the units are NaN; an amount of memory is not negative - at '$.session[30].pools[0].units'"),
    (["session", 30, "body", 1, "amount", "value"],
     "the amount is NaN; an amount of memory is not negative - at '$.session[30].body[1].amount'"),
    (["session", 31, "pool", "index", "value"],
     "pool kv: the index is NaN, which names no member (the family has 2) - at '$.session[31].pool.index'"),
    # the hold's lease names a member by a NaN index: the index is said, not "the hold does not hold kv[nan]"
    (["session", 30, "pools", 0, "pool", "index", "value"],
     "pool kv: the index is NaN, which names no member (the family has 2) - "
     "at '$.session[30].pools[0].pool.index'"),
])
def test_a_nan_in_a_checked_field_is_called_nan(path, said):
    assert _refused(_with(everything(), path, NAN)) == said


def test_the_rate_of_poisson_arrivals():
    assert _refused(_with(mm1(), ["workload", "arrive", "rate"], NAN)) == (
        "an arrival rate is positive and finite, not NaN - at '$.workload.arrive.rate'")


@pytest.mark.parametrize("path, at", [
    (["session", 1, "value", "value"], "$.session[1].value.value"),  # set x = NaN
    (["session", 27, "value", "rhs", "value"], "$.session[27].value.rhs.value"),  # x && NaN
    (["session", 30, "reuse", "value"], "$.session[30].reuse.value"),
    (["session", 30, "lease", "time", "value"], "$.session[30].lease.time.value"),
    (["pools", 0, "spill", "when", "value"], "$.pools[0].spill.when.value"),
    (["workload", "init", 0, "value", "value"], "$.workload.init[0].value.value"),
])
def test_a_nan_where_no_field_rule_looks_is_no_number_of_the_ir(path, at):
    # each was taken: the simulator read the NaN where the program's number was
    assert _refused(_with(everything(), path, NAN)) == f"the number {NOT_NUMBER} - at '{at}'"


def test_a_nan_constant():
    assert _refused(_with(everything(), ["constants", 0, 1], NAN)) == (
        f"constant 'B' {NOT_NUMBER} (a constant that evaluates to NaN does not link) - at '$.constants[0][1]'")


@pytest.mark.parametrize("path, value, said", [
    (["pools", 0, "cap"], -1.0, "a capacity is negative (-1.0); it is a number at least 0, or \"inf\" - at '$.pools[0].cap'"),
    (["run", "warmup"], -2.0, "warmup is negative (-2.0); it is a number at least 0 - at '$.run.warmup'"),
    (["session", 30, "pools", 0, "units", "value"], -1.0,
     "the units are negative (-1); an amount of memory is not negative - at '$.session[30].pools[0].units'"),
    (["session", 31, "pool", "index", "value"], 2.0,
     "pool kv: index 2 out of range (the family has 2) - at '$.session[31].pool.index'"),
])
def test_other_bad_numbers_keep_their_words(path, value, said):
    assert _refused(_with(everything(), path, value)) == said


def test_finite_numbers_and_inf_are_taken():
    validate(_with(everything(), ["session", 30, "lease", "time", "value"], 2.5))
    validate(_with(everything(), ["pools", 0, "cap"], "inf"))


def _attributes(program: n.Program, **flags) -> n.Program:
    attrs = [msgspec.structs.replace(a, builtin=flags.get(a.name, a.builtin)) for a in program.attributes]
    return msgspec.structs.replace(program, attributes=attrs)


def test_builtin_on_a_programs_own_attribute_is_refused():
    program = _attributes(mm1(), t0=True)
    assert _refused(program) == (
        "attribute 't0' is marked builtin, and it is none of the language's: the built-in attributes are serial, "
        "turn_no, cached, computed, and with a trace new, out, think, more, forced; a program's own attribute "
        "has no `builtin` (or false) - at '$.attributes[4].builtin'")


def _with_trace_names(program: n.Program, trace: bool) -> n.Program:
    """``program`` with the trace's attributes after the built-in ones, marked builtin, and a trace or none."""
    names = ("new", "out")
    attrs = [*program.attributes[:4], *(n.Attribute(name=a, builtin=True) for a in names), *program.attributes[4:]]
    shift = len(names)
    body = [msgspec.structs.replace(s, slot=s.slot + shift) if isinstance(s, n.Set) else s for s in program.session]
    body[-1] = n.Observe(observe=0, value=n.Binary(op="-", lhs=n.Ctx(name="now"), rhs=n.Attr(slot=4 + shift)))
    wl = msgspec.structs.replace(program.workload, trace=n.Trace(path="t.csv") if trace else None)
    return msgspec.structs.replace(program, attributes=attrs, session=body, workload=wl)


def test_builtin_on_a_trace_attribute_is_taken_with_a_trace_only():
    validate(_with_trace_names(mm1(), trace=True))
    assert _refused(_with_trace_names(mm1(), trace=False)) == (
        "attribute 'new' is marked builtin, and it is an attribute a trace supplies, and the program replays "
        "none: the built-in attributes are serial, turn_no, cached, computed, and with a trace new, out, think, "
        "more, forced; a program's own attribute has no `builtin` (or false) - at '$.attributes[4].builtin'")


def test_the_language_attributes_flagged_or_not_are_taken():
    validate(mm1())  # flagged, as the frontend writes them
    validate(_attributes(mm1(), serial=False, turn_no=False, cached=False, computed=False))


@pytest.mark.parametrize("name, k", [("cached", 2), ("computed", 3)])
def test_hidden_on_what_the_scheduler_sets_is_refused(name, k):
    # the frontend's rule (`hidden cached;` does not link): the IR took the flag
    program = msgspec.structs.replace(mm1(), attributes=[
        msgspec.structs.replace(a, hidden=a.name == name) for a in mm1().attributes])
    assert _refused(program) == (f"attribute '{name}' is hidden, and the scheduler itself sets it: it cannot be "
                                 f"hidden from the scheduler - at '$.attributes[{k}].hidden'")


def test_hidden_on_a_programs_own_attribute_is_taken():
    validate(msgspec.structs.replace(mm1(), attributes=[
        msgspec.structs.replace(a, hidden=a.name == "t0") for a in mm1().attributes]))
