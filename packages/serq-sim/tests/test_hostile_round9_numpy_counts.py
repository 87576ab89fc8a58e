"""``serq_sim.run`` takes a count (``arrivals``, ``max_events``, ``max_samples``) as any Integral, numpy's
integers included, and runs on it as on the same int.

``arrivals=numpy.int64(5)`` passed the check (an Integral) and reached the fast tier's generated source as
its ``repr``, ``np.int64(5)``: the run died with ``NameError: name 'np' is not defined`` in ``<serq
fast>``; docs/security.md says an integer is written there with ``int``'s text. ``max_events`` and
``max_samples`` refused a numpy integer outright ("must be a positive integer, not np.int64(7)"), which
``arrivals`` and ``seed`` take. One rule now (serq_sim.api.run_limits), and the Simulation keeps ints.
"""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim

# in the fast tier's class: one FIFO stage, a Poisson workload, an observe
PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (~exp(2)); observe y = now - t0; }
run { horizon 1000; warmup 0; seed 3; }
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("general", [False, True])
@pytest.mark.parametrize("n", [np.int64(5), np.uint8(5), np.int32(5)])
def test_a_numpy_arrivals_count_runs_as_the_int(n, general):
    program = serq_frontend.compile(source=PROGRAM)
    got = serq_sim.run(program, arrivals=n, check_invariants=general)
    want = serq_sim.run(program, arrivals=5, check_invariants=general)
    # exactly five sessions arrive and end, as under the int 5, to the same instant
    assert (got.result.arrivals, got.result.ended) == (5, 5)
    assert got.result.end == want.result.end
    assert got.partial is None


@pytest.mark.timeout(60)
def test_a_numpy_max_events_bounds_the_run_as_the_int():
    program = serq_frontend.compile(source=PROGRAM)
    got = serq_sim.run(program, arrivals=50, max_events=np.int64(7))
    # a run of 50 sessions has 100 events (an arrival and a departure each): it stops at the seventh
    assert got.partial == "max-events" and got.result.events == 7
    assert serq_sim.run(program, arrivals=5, max_samples=np.int64(10**6)).partial is None


@pytest.mark.parametrize("kw, exc, said", [
    # a float is no count: the wrong type (serq_sim.run's rule: TypeError), whole or not
    ({"max_events": 2.0}, TypeError, "max_events must be a positive integer, not 2.0"),
    ({"max_events": np.float64(2)}, TypeError, "max_events must be a positive integer, not np.float64(2.0)"),
    ({"max_samples": np.int64(0)}, ValueError, "max_samples must be a positive integer, not np.int64(0)"),
    ({"max_wall": 10**400}, ValueError,
     "max_wall must be a positive, finite number of seconds, not an integer of 1329 bits"),
    ({"max_wall": np.float32("nan")}, ValueError,
     "max_wall must be a positive, finite number of seconds, not np.float32(nan)"),
])
def test_what_is_no_count_is_still_refused(kw, exc, said):
    program = serq_frontend.compile(source=PROGRAM)
    with pytest.raises(exc) as info:
        serq_sim.run(program, **kw)
    assert type(info.value) is exc and str(info.value) == said
