"""The fast tier ticks at the general engine's events (serq_sim.engine.Simulation.tick: the no-progress
guard is checked every TICK events the loop pops, "both tiers, at the same events").

Without a bound on events or wall time the fast tier ticked by the events it had pushed: the next tick at
``seq + due - popped``, which comes late when the heap shrinks (more events popped than pushed). A batch of
30 000 sessions each ending after one run pushes its 30 000 runs first and then only pops: its tick at
20 000 events never came (the guard did not look at the run again after t = 0). A renewal workload whose
arrivals the clock cannot resolve tripped the arrivals guard one event after the 20 000th on the fast tier,
at t=9.86373e-297 with 10 001 arrivals, and at the 40 000th on the general engine (t=1.98582e-296): one
program, two messages."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
import serq_sim.engine as engine
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def checked(monkeypatch):
    """The event counts at which a tick makes its checks (the guard, the samples), as the tick is told."""
    seen: list[int] = []
    tick = engine.Simulation.tick

    def spy(self, events):
        if events - self.virtual_events >= self.next_check:
            seen.append(events)
        return tick(self, events)

    monkeypatch.setattr(engine.Simulation, "tick", spy)
    return seen


def run(src: str, monkeypatch, tier: str):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))


BATCH = """stage d : delay;
workload { arrive batch(30000); }
session { run d (~exp(1)); end; }
run { horizon 100; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_shrinking_heap_is_checked_at_every_tick(checked, monkeypatch, tier):
    # 30 000 runs, one completion event each (every run ends by t = 100 at this seed: ~exp(1) above 100 has
    # probability e^-100): 30 000 events, so the checks at 0 and 20 000 events, on both tiers
    r = run(BATCH, monkeypatch, tier)
    assert r.tier == ("fast" if tier == "" else "general")
    assert checked == [0, engine.TICK]


RENEWAL = """stage pss : ps(inf);
workload { arrive renewal(~exp(1e-300) + 1e-310); }
session { run pss (2); end; }
run { horizon 50; seed 0; }
"""


def test_the_arrivals_guard_trips_at_one_event_on_both_tiers(checked, monkeypatch):
    # two events an arrival (the arrival, its run's end at ps(inf), at the same time): 10 000 arrivals at the
    # tick of 20 000 events, not more than STALL_ARRIVALS; 20 000 at the next tick, 40 000 events, which trips
    msgs = []
    for tier in ("", "general"):
        checked.clear()
        with pytest.raises(SimError) as e:
            run(RENEWAL, monkeypatch, tier)
        assert checked == [0, engine.TICK, 2 * engine.TICK], tier
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("<source>:2:12: error: at t="), msgs[0]
    assert f"no progress: more than {engine.STALL_ARRIVALS} arrivals in " in msgs[0], msgs[0]
    first, quoted, caret = msgs[0].split("\n")  # the workload's line, the caret under its `arrive`
    assert first.endswith("; the events due now: arrive renewal"), msgs[0]
    assert (quoted, caret) == ("  workload { arrive renewal(~exp(1e-300) + 1e-310); }", "  " + " " * 11 + "^")
