"""``serq_sim.run`` holds a Program built in Python to the IR's schema before its references: msgspec does
not check a Struct's fields when it is made, and the run's check walked the references only, so a session
of None was a TypeError in the fast tier's set-up, a statement that is an int a TypeError 'unknown statement
int', a number given as a str a ValueError of float(), and a program of IR version 999 ran. Each is an
IRError at its JSON path, as the same program read from an IR file is."""

from __future__ import annotations

import pytest
import serq_ir
import serq_sim
from serq_ir import nodes as n

pytestmark = pytest.mark.timeout(60)


def program(**changes) -> n.Program:
    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES]
    fields = dict(version=n.IR_VERSION, attributes=attrs, stages=[n.Stage(name="s", kind=n.Fifo())],
                  workload=n.Workload(arrive=n.Batch(n=2)),
                  session=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=1.0))],
                  run=n.RunSettings(horizon=10.0))
    fields.update(changes)
    return n.Program(**fields)


def test_the_program_as_the_schema_types_it_runs():
    # two sessions at t = 0 on one FIFO server, one unit of work each: the second ends at t = 2
    report = serq_sim.run(program())
    assert report.stage("s").completions == 2


@pytest.mark.parametrize(("changes", "path"), [
    ({"session": None}, "$.session"),
    ({"session": [1]}, "$.session[0]"),
    ({"session": [n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value="1"))]}, "$.session[0].work.value"),
    ({"version": 999}, "$.version"),
])
def test_a_field_of_the_wrong_type_is_an_ir_error_at_its_path(changes, path):
    with pytest.raises(serq_ir.IRError) as e:
        serq_sim.run(program(**changes))
    assert e.value.json_path == path


def test_a_program_of_numpy_numbers_runs():
    np = pytest.importorskip("numpy")
    # numpy's numbers are the numbers they hold: two sessions of 2 units of work each on one server
    p = program(session=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=np.int64(2)))],
                run=n.RunSettings(horizon=np.float64(3.0)))
    report = serq_sim.run(p)
    assert report.stage("s").completions == 1  # the first ends at t = 2, the second would at t = 4 > 3
