"""The no-progress guard's allowance counts the sessions live when the instant began, not those its own
events spawned (serq_sim.engine.Simulation.tick; docs/simulator.md, "No progress").

An arrival gap below the clock's precision (``arrive renewal(g)`` with ``g`` 1e-20 from t = 1, where
``1 + 1e-20 == 1``) stops the clock: every arrival is at t = 1 and spawns a session. The guard allows
1 000 000 events plus 1 000 per session live when the instant began, but read the live count at its first
tick at the instant, some 20 000 events in, when the instant's own arrivals had made 20 000 sessions
live: 21 000 000 events were allowed. The fast tier met the guard after 56 s; the general engine, holding
a session and a job per event, ran for minutes more. The sessions a batch or closed workload spawns
before the first event still count at t = 0 (no event spawns them).

The message named the wrong events, differently in the two tiers: the general engine took the arrival's
event (a method of the simulation) for a stage's and read the simulation's ``heap`` as its jobs, so it
named the runs of sessions 0, 1, 2, … (their completions at t = 2, not due) "put off to this same instant
again and again", at session 0's run; the fast tier said "no event names a statement". Both now name the
arrivals.

The tests scale the guard down (STALL_EVENTS, TICK) so that each run is some thousands of events.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
import serq_sim.engine as engine
import serq_sim.fast as fast
from serq_sim import SimError

STUCK = """stage s : delay;
workload { arrive renewal(now < 1 ? 1 : 1e-20); }
session { run s (1); }
run { horizon 10; seed 1; }
"""

# a batch of 3 000 sessions whose every run completes at t = 0 (a ps stage of infinite capacity: each
# completion an event at 0): 6 000 events at one instant, within 1 000 per session live at its start
BATCH = """stage p : ps(inf);
workload { arrive batch(3000); }
session { run p (1); run p (1); observe x = now; }
run { horizon 10; seed 1; }
"""


@pytest.fixture
def small_guard(monkeypatch):
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)
    monkeypatch.setattr(engine, "TICK", 1000)


@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_at_a_stuck_clock_meet_the_guard(small_guard, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    p = serq_frontend.compile(source=STUCK)
    assert fast.tier(p) == (tier or "fast")
    # allowed: 2 000 events + 1 000 for each of the 1 or 2 sessions live when t = 1 began; the ticks come
    # every 1 000 events, so the error comes well before 20 000 (before: 2 000 + 1 000 × ~1 000)
    with pytest.raises(SimError) as e:
        serq_sim.run(p, max_events=20_000)
    # at the workload's `arrive` (line 2, column 12)
    assert str(e.value) == ("<source>:2:12: error: at t=1: no progress: more than 2000 events at one instant "
                            "without simulated "
                            "time passing (the clock cannot move past it); the events due now: arrive renewal\n"
                            "  workload { arrive renewal(now < 1 ? 1 : 1e-20); }\n"
                            "  " + " " * 11 + "^")


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_batchs_sessions_count_at_the_start(small_guard, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=BATCH))
    assert r.partial is None
    x = r.observe("x").values
    assert len(x) == 3000 and max(x) == 0.0
    assert r.result.events >= 6000
