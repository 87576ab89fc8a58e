"""IR round trip: encode → decode → encode is byte-identical, and every node kind is exercised."""

from __future__ import annotations

import typing

import msgspec
import pytest
import serq_ir
from ir_programs import ARRIVALS, everything, mm1
from serq_ir import nodes as n


def kinds_in(obj, seen: set[str]) -> set[str]:
    if isinstance(obj, msgspec.Struct):
        seen.add(type(obj).__name__)
        for f in obj.__struct_fields__:
            kinds_in(getattr(obj, f), seen)
    elif isinstance(obj, list | tuple):
        for v in obj:
            kinds_in(v, seen)
    return seen


def union_names(u) -> set[str]:
    return {t.__name__ for t in typing.get_args(u)}


@pytest.mark.parametrize("make", [mm1, everything])
def test_round_trip_is_byte_identical(make):
    program = make()
    first = serq_ir.encode(program)
    decoded = serq_ir.decode(first)
    assert decoded == program
    assert serq_ir.encode(decoded) == first


def test_round_trip_of_pretty_form():
    program = everything()
    pretty = serq_ir.encode_pretty(program)
    assert serq_ir.encode(serq_ir.decode(pretty)) == serq_ir.encode(program)


@pytest.mark.parametrize("arrive", ARRIVALS, ids=lambda a: type(a).__name__)
def test_every_arrival_kind_round_trips(arrive):
    program = msgspec.structs.replace(mm1(), workload=n.Workload(arrive=arrive))
    b = serq_ir.encode(program)
    assert serq_ir.encode(serq_ir.decode(b)) == b


def test_everything_uses_every_statement_and_expression_kind():
    seen = kinds_in(everything(), set())
    for union in (n.Stmt, n.Expr, n.StageKind, n.Evict, n.Preempt, n.Queue):
        missing = union_names(union) - seen
        assert not missing, f"not exercised: {missing}"
    # every context variable, draw and function name is a valid literal
    assert "waited" in typing.get_args(n.ContextName)


def test_spans_are_kept_and_strippable():
    program = everything()
    assert b'"span"' in serq_ir.encode(program)
    stripped = serq_ir.strip_spans(program)
    assert b'"span"' not in serq_ir.encode(stripped)
    assert serq_ir.encode(program, spans=False) == serq_ir.encode(stripped)


def test_extension_params_survive_verbatim():
    program = everything()
    again = serq_ir.decode(serq_ir.encode(program))
    ext = again.stages[4].kind
    assert isinstance(ext, n.Extension) and ext.name == "vacation"
    assert ext.params == {"vacation": 2.5, "a": [1, 2]}


def test_schema_names_every_node():
    schema = serq_ir.schema()
    defs = schema["$defs"]
    for name in ("Program", "Hold", "Step", "Observable", "PoolRef", "Preset", "Extension"):
        assert name in defs
