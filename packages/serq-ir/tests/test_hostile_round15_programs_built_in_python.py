"""A Program built in Python, field by field, is held to what IR JSON is held to. msgspec does not check a
Struct's fields when it is made, so:

* ``serq_ir.encode`` wrote an infinite float as ``null``: a horizon of ``float("inf")`` read back as no
  horizon at all (``None``), a cap of ``inf`` as a file ``decode`` refuses; a NaN as ``null`` too.
* ``serq_ir.encode`` wrote a number given as a str, or a list given as None, as JSON that ``decode``
  refuses, and a program of IR version 999 as if it were this one's.
* ``serq_ir.codec.checked`` (what ``serq_sim.run`` and a plugin's loader are held to) is the schema and
  the references together: a fault of either is an IRError at its JSON path.
"""

from __future__ import annotations

import math

import pytest
import serq_ir
import serq_ir.codec
from serq_ir import nodes as n
from serq_ir.errors import IRError

pytestmark = pytest.mark.timeout(60)


def program(**changes) -> n.Program:
    """One FIFO stage, a Poisson workload, a session of one run: every field as the schema types it."""
    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES]
    fields = dict(version=n.IR_VERSION, attributes=attrs, stages=[n.Stage(name="s", kind=n.Fifo())],
                  workload=n.Workload(arrive=n.Poisson(rate=1.0)),
                  session=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=1.0))],
                  run=n.RunSettings(horizon=10.0))
    fields.update(changes)
    return n.Program(**fields)


def test_an_infinite_horizon_and_cap_are_written_as_the_ir_writes_infinity():
    p = program(run=n.RunSettings(horizon=math.inf), pools=[n.Pool(name="m", cap=math.inf)])
    back = serq_ir.decode(serq_ir.encode(p))
    # the IR's infinity is the string "inf" (its Number type); null is no horizon at all
    assert back.run.horizon == "inf"
    assert back.pools[0].cap == "inf"


def test_a_negative_infinity_in_a_number_is_written_as_minus_inf():
    p = program(session=[n.Run(stages=[n.StageRef(stage=0)],
                               work=n.Binary(op="+", lhs=n.Num(value=1.0), rhs=n.Num(value=-math.inf)))])
    back = serq_ir.decode(serq_ir.encode(p), check=False)
    assert back.session[0].work.rhs.value == "-inf"


def test_a_nan_is_refused_at_its_path_not_written_as_null():
    p = program(session=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=math.nan))])
    with pytest.raises(IRError) as e:
        serq_ir.encode(p)
    assert e.value.json_path == "$.session[0].work.value"


def test_an_infinite_arrival_time_where_the_ir_has_no_infinity_is_refused():
    p = program(workload=n.Workload(arrive=n.Poisson(rate=1.0), presets=[n.Preset(at=math.inf)]))
    with pytest.raises(IRError) as e:
        serq_ir.encode(p)
    assert e.value.json_path == "$.workload.presets[0].at"


@pytest.mark.parametrize(("changes", "path"), [
    ({"session": None}, "$.session"),
    ({"session": [1]}, "$.session[0]"),
    ({"session": [n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value="1"))]}, "$.session[0].work.value"),
    ({"run": n.RunSettings(horizon=10.0, seed=1.5)}, "$.run.seed"),
    ({"version": 999}, "$.version"),
])
def test_a_field_of_the_wrong_type_is_refused_by_encode_and_by_the_check(changes, path):
    p = program(**changes)
    with pytest.raises(IRError) as e:
        serq_ir.encode(p)
    assert e.value.json_path == path
    with pytest.raises(IRError) as e:
        serq_ir.codec.checked(p)
    assert e.value.json_path == path


def test_a_program_as_the_schema_types_it_passes_and_encodes_as_before():
    p = program()
    assert serq_ir.codec.checked(p) == p
    back = serq_ir.decode(serq_ir.encode(p))
    assert back == p


def test_numpy_numbers_are_the_numbers_they_hold():
    np = pytest.importorskip("numpy")
    p = program(session=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=np.float64(1.5)))],
                run=n.RunSettings(horizon=np.float32(10.0), seed=np.int64(3)), version=np.int64(n.IR_VERSION))
    assert serq_ir.codec.checked(p) == p
    back = serq_ir.decode(serq_ir.encode(p))
    assert (back.session[0].work.value, back.run.horizon, back.run.seed) == (1.5, 10.0, 3)
    assert type(back.run.seed) is int


def test_strip_spans_holds_the_program_to_the_schema_as_encode_does():
    np = pytest.importorskip("numpy")
    p = program(run=n.RunSettings(horizon=math.inf, seed=np.int64(3)), pools=[n.Pool(name="m", cap=np.float64(4))])
    stripped = serq_ir.strip_spans(p)
    assert (stripped.run.horizon, stripped.run.seed, stripped.pools[0].cap) == ("inf", 3, 4.0)
    with pytest.raises(IRError) as e:
        serq_ir.strip_spans(program(session=None))
    assert e.value.json_path == "$.session"
