"""``serq_sim.run``'s switches ``check_invariants`` and ``progress`` are True or False, by run's one rule
for its arguments (a TypeError naming the argument): they were taken by their truth, so
``check_invariants="no"`` checked every pool after every event, and ``progress="no"`` drew the bar."""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { run s (0.5); }
run { horizon 10; warmup 0; seed 1; arrivals 3; }
"""


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(source=PROGRAM)


@pytest.mark.parametrize("kw, said", [
    ({"check_invariants": "no"}, "check_invariants must be True or False, not 'no'"),
    ({"check_invariants": 0}, "check_invariants must be True or False, not 0"),
    ({"progress": "false"}, "progress must be True or False, not 'false'"),
    ({"progress": None}, "progress must be True or False, not None"),
])
def test_a_switch_that_is_no_bool_is_a_type_error(program, kw, said):
    with pytest.raises(TypeError) as info:
        serq_sim.run(program, **kw)
    assert str(info.value) == said


def test_a_bool_is_a_switch(program):
    assert serq_sim.run(program, check_invariants=np.bool_(True), progress=False).result.arrivals == 3
