"""Arrivals the clock cannot resolve meet the no-progress guard at once (serq_sim.engine.STALL_ARRIVALS;
docs/simulator.md, "No progress").

``arrive poisson(1e300)`` (``serq run examples/multi-turn/vllm_single_turn.sq --set Lambda=1e300``) makes
its arrivals 1e-300 s apart, within one instant of the guard (ZENO), each a session live until time moves:
the guard, which allows 1 000 000 events an instant, came after 1 000 000 events, some 22 s and 1.4 GB.
More than 10 000 open arrivals (poisson, renewal) at one instant are now the error, at the next tick, in the
same words naming the workload's ``arrive``. A workload of rate r makes r × ZENO × max(t, 1) arrivals an
instant at time t (ZENO = 2^-40): 10 000 only some 10^16 arrivals into a run, so a rate the clock resolves
never meets it; the guard is read at the ticks alone.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
import serq_sim.engine as engine
import serq_sim.fast as fast
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)

POISSON = """stage s : fifo;
workload { arrive poisson(1e300); }
session { run s (1); end; }
run { horizon 10; seed 1; }
"""

# a renewal gap below the clock's precision from t = 1 (1 + 1e-20 == 1): every arrival at t = 1
RENEWAL = """stage s : delay;
workload { arrive renewal(now < 1 ? 1 : 1e-20); }
session { run s (1); }
run { horizon 10; seed 1; }
"""

# a rate the clock resolves: 1e6 a second for 0.01 s, some 10 000 arrivals, about 1e-6 of them an instant
FAST = """stage s : delay;
workload { arrive poisson(1e6); }
session { run s (1e-6); observe x = now; }
run { horizon 0.01; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_beyond_any_time_scale_stop_within_a_few_ticks(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    p = serq_frontend.compile(source=POISSON)
    assert fast.tier(p) == (tier or "fast")
    # the events' guard (1 000 000) is far off: before, the run stopped at this bound, a partial report
    with pytest.raises(SimError) as e:
        serq_sim.run(p, max_events=100_000)
    msg = str(e.value)
    assert msg.startswith("<source>:2:12: error: at t="), msg  # the workload's `arrive`
    assert "no progress: more than 10000 arrivals in " in msg and "s of simulated time since t=0" in msg, msg
    first, quoted, caret = msg.split("\n")  # the workload's line, a caret under its `arrive`
    assert first.endswith("; the events due now: arrive poisson"), msg
    assert (quoted, caret) == ("  workload { arrive poisson(1e300); }", "  " + " " * 11 + "^"), msg


@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_at_a_stuck_clock(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    with pytest.raises(SimError) as e:
        serq_sim.run(serq_frontend.compile(source=RENEWAL), max_events=100_000)
    assert str(e.value) == ("<source>:2:12: error: at t=1: no progress: more than 10000 arrivals at one instant "
                            "without simulated time passing (the clock cannot move past it); the events due now: "
                            "arrive renewal\n"
                            "  workload { arrive renewal(now < 1 ? 1 : 1e-20); }\n"
                            "  " + " " * 11 + "^")


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_rate_the_clock_resolves_is_untouched(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile(source=FAST)
    before = serq_sim.run(program)
    # a cap of 2 arrivals an instant, read every 1 000 events: the run is the same, event for event
    monkeypatch.setattr(engine, "STALL_ARRIVALS", 2)
    monkeypatch.setattr(engine, "TICK", 1000)
    after = serq_sim.run(program)
    assert before.partial is None and after.partial is None
    n = len(before.observe("x").values)
    assert abs(n - 10_000) < 5 * 10_000 ** 0.5  # Poisson: mean and variance 10 000
    assert after.observe("x").values.tolist() == before.observe("x").values.tolist()
    assert after.result.events == before.result.events
