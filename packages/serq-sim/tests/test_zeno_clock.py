"""A clock that moves in steps far below any time scale is a hang the no-progress guard stops
(serq_sim.engine.ZENO; docs/simulator.md, "No progress"). A loop of `run d (1e-300)` from t = 0 makes its
events at ever new times (0, 1e-300, 2e-300, ...: each a new float), and arrivals at rate 1e300 as well,
so the guard's test of one instant (the clock equal to the instant's start) never held: the run went on
until it was killed, reaching t ~ 1e-293 of a horizon of 10, about 1e300 events away. Times within
2^-40 x max(|t|, 1 s) of the instant's start now count as the instant; both tiers stop at the same
bound with a located error. Legitimate work at close but distinct times stays within the allowance
(work at one instant is bounded the same way)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
import serq_sim.engine as engine
from serq_sim import SimError

LOOP = """stage d : delay;
workload { arrive batch(1); }
session { loop { run d (1e-300); } }
run { horizon 10; seed 1; }
"""

ARRIVALS = """stage s : fifo;
workload { arrive poisson(1e300); }
session { run s (1); end; }
run { horizon 10; seed 1; }
"""

# legitimate: 3 000 sessions whose runs end at distinct times 1e-13 s apart near t = 0 (within the
# instant's span), 6 000 events: within 2 000 + 1 000 per session live
CLOSE = """stage d : delay;
workload { arrive batch(3000); }
session { run d (1e-13 * (serial + 1)); run d (1e-13); observe x = now; }
run { horizon 10; seed 1; }
"""


@pytest.fixture
def small_guard(monkeypatch):
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)
    monkeypatch.setattr(engine, "TICK", 1000)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", ["", "general"])
def test_a_loop_of_steps_below_any_time_scale_meets_the_guard(small_guard, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    with pytest.raises(SimError) as e:
        serq_sim.run(serq_frontend.compile(source=LOOP), max_events=200_000)
    msg = str(e.value)
    assert "no progress: more than 2000 events in " in msg and "s of simulated time since t=0" in msg, msg
    # the run that is due again and again, at its place, on both tiers (the fast tier said "no event names a
    # statement", then "; the events due now: the run on stage d of session 0", unpositioned)
    assert msg.startswith("<source>:3:18: error: at t=") and "session 0" in msg, msg
    assert "the events due now are those of the run at <source>:3:18 of session 0, due again and again" in msg, msg


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_at_a_rate_beyond_any_time_scale_meet_the_guard(small_guard, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    with pytest.raises(SimError) as e:
        serq_sim.run(serq_frontend.compile(source=ARRIVALS), max_events=200_000)
    msg = str(e.value)
    assert msg.startswith("<source>:2:12: error: at t="), msg  # the workload's `arrive`
    first, quoted, caret = msg.split("\n")  # the workload's line, a caret under its `arrive`
    assert "no progress: more than 2000 events in " in first and first.endswith("the events due now: arrive poisson")
    assert quoted == "  " + ARRIVALS.splitlines()[1] and caret == "  " + " " * 11 + "^", msg
    assert quoted[2 + 11:].startswith("arrive poisson(")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", ["", "general"])
def test_work_at_close_distinct_times_stays_within_the_allowance(small_guard, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=CLOSE))
    assert r.partial is None
    x = r.observe("x").values
    assert len(x) == 3000 and 0.0 < max(x) < 1e-9
