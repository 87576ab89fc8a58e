"""A run stopped for what it holds (--max-samples, the memory guard, a MemoryError) carries the parts of its
note (serq_sim.errors.Held: why, sessions live, samples, the bound), and the note is formatted once from them
with what holds most (Simulation.stopped, both tiers). Before, the stop carried its note as text and
Simulation._holders cut that text at " samples (" or " sessions live and " to insert the holder: a stop
raised with a note of its own and the reason "memory" or "max-samples" had the holders spliced into it. The
notes themselves are as before (test_known_defects_round39_holders, round40_oom_holders pin them)."""

from __future__ import annotations

import re

import pytest
from holders_prog import SecondLookGuard, grow
from serq_sim import engine
from serq_sim.errors import GUARD, MAX_SAMPLES, OUT_OF_MEMORY, Held, StopRun
from tiers import run_on_tier

BY = "7 of them by observe a at grow.sq:5:3"
AT = " (6 of them queued at the hold at grow.sq:6:3)"


def test_the_note_of_each_kind_from_its_parts():
    samples = Held(MAX_SAMPLES, 20000, bound=20000)
    assert samples.note() == "stopped holding 20000 samples (--max-samples 20000)"
    assert samples.note(BY) == f"stopped holding 20000 samples, {BY} (--max-samples 20000)"
    guard = Held(GUARD, 12, why="stopped near the memory limit", live=7)
    assert guard.note() == "stopped near the memory limit, with 7 sessions live and 12 samples held"
    assert guard.note(BY, AT) == ("stopped near the memory limit, with 7 sessions live (6 of them queued at the "
                                  f"hold at grow.sq:6:3) and 12 samples held ({BY})")
    oom = Held(OUT_OF_MEMORY, 12)
    assert oom.note() == "out of memory holding 12 samples (--max-samples N stops a run once it holds N)"
    assert oom.note(BY) == f"out of memory holding 12 samples, {BY} (--max-samples N stops a run once it holds N)"
    assert Held(OUT_OF_MEMORY, 0).note() == ("out of memory holding no samples (--max-samples bounds only the "
                                             "samples a run holds)")
    # a why that holds the words the note was once cut at is no matter now
    odd = Held(GUARD, 3, why="stopped: 9 sessions live and 2 samples (of another kind)", live=4)
    assert odd.note(BY, AT) == ("stopped: 9 sessions live and 2 samples (of another kind), with 4 sessions live (6 "
                                f"of them queued at the hold at grow.sq:6:3) and 3 samples held ({BY})")


def test_a_holding_stop_says_its_note_without_a_holder():
    e = StopRun.holding("max-samples", Held(MAX_SAMPLES, 5, bound=4))
    assert (e.reason, e.message, e.held.samples, e.held.bound) == ("max-samples",
                                                                   "stopped holding 5 samples (--max-samples 4)", 5, 4)
    assert StopRun("max-wall", "stopped after 1 s").held is None


def _stops(monkeypatch) -> list:
    """The stops Simulation.stopped is given, in order."""
    seen = []
    real = engine.Simulation.stopped

    def stopped(self, e, waits=None):
        seen.append(e)
        return real(self, e, waits)

    monkeypatch.setattr(engine.Simulation, "stopped", stopped)
    return seen


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_guards_stop_carries_its_parts(tier, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "memory_guard", SecondLookGuard)
    seen = _stops(monkeypatch)
    sim, outcome, _ = run_on_tier(grow(tmp_path, monkeypatch), tier)
    assert outcome[0] == "report" and sim.partial == "memory"
    [e] = seen
    held = e.held
    assert (held.kind, held.why) == (GUARD, "stopped near the memory limit")
    # the counts of the run where it stopped: a's sample a session that arrived, b's one that ended
    assert held.samples == sim.arrivals + sim.ended
    assert held.live == sim.arrivals - sim.ended
    assert e.message == (f"stopped near the memory limit, with {held.live} sessions live and {held.samples} "
                         "samples held")
    assert sim.partial_note == (f"stopped near the memory limit, with {held.live} sessions live ({held.live - 1} "
                                f"of them queued at the hold at grow.sq:6:3) and {held.samples} samples held "
                                f"({sim.arrivals} of them by observe a at grow.sq:5:3)")


class _OwnStop:
    """A memory guard whose second look stops the run with a note of its own (a StopRun with no parts)."""

    NOTE = "stopped by a rule of its own, with 3 sessions live and 2 samples (counted its way)"

    def __init__(self):
        self.looks = 0

    def over(self):
        self.looks += 1
        if self.looks >= 2:
            raise StopRun("memory", self.NOTE)
        return None


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_stop_with_a_note_of_its_own_keeps_it(tier, tmp_path, monkeypatch):
    """Before, its note was cut at " sessions live and " and the holders spliced in."""
    monkeypatch.setattr(engine, "memory_guard", _OwnStop)
    sim, outcome, _ = run_on_tier(grow(tmp_path, monkeypatch), tier)
    assert outcome[0] == "report" and sim.partial == "memory"
    assert sim.partial_note == _OwnStop.NOTE


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_max_samples_stop_carries_its_parts(tier, tmp_path, monkeypatch):
    import os

    from serq_sim.api import registries

    seen = _stops(monkeypatch)
    program = grow(tmp_path, monkeypatch)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    sim = engine.Simulation(program, registries(), check_invariants=False, progress=False, trace_path=None,
                            max_samples=20_000)
    sim.run()
    assert os.environ["SERQ_SIM_TIER"] == tier
    [e] = seen
    assert (e.reason, e.held.kind, e.held.bound) == ("max-samples", MAX_SAMPLES, 20_000)
    assert e.held.samples >= 20_000
    assert e.message == f"stopped holding {e.held.samples} samples (--max-samples 20000)"
    m = re.fullmatch(rf"stopped holding {e.held.samples} samples, (\d+) of them by observe a at grow\.sq:5:3 "
                     r"\(--max-samples 20000\)", sim.partial_note)
    assert m, sim.partial_note
    assert int(m.group(1)) == len(sim.obs[0].values) == sim.arrivals
