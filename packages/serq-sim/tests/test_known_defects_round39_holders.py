"""A run stopped by the memory guard or by ``--max-samples`` names what holds most of what it counts: the
statement most waiting sessions wait at (its file:line:col and what they do there) and the observe holding
most samples. Before, the note gave the counts alone (``with 241158 sessions live and 22041 samples held``).
Both tiers; the stop comes at the same tick on both (every 20 000 events)."""

from __future__ import annotations

import re

import pytest
from holders_prog import SecondLookGuard, grow
from serq_sim import engine
from tiers import run_on_tier


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_memory_guard_names_the_hold_the_sessions_wait_at_and_the_observe(tier, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "memory_guard", SecondLookGuard)
    sim, outcome, _ = run_on_tier(grow(tmp_path, monkeypatch), tier)
    assert outcome[0] == "report"
    assert sim.partial == "memory"
    note = sim.partial_note
    m = re.fullmatch(r"stopped near the memory limit, with (\d+) sessions live \((\d+) of them queued at the "
                     r"hold at grow\.sq:6:3\) and (\d+) samples held \((\d+) of them by observe a at grow\.sq:5:3\)",
                     note)
    assert m, note
    live, queued, held, by_a = map(int, m.groups())
    # one session holds the pool (at the stage), every other live one waits at the hold
    assert queued == live - 1
    # a's samples: one a session that arrived; b's: one a session that ended
    assert by_a == sim.arrivals == len(sim.obs[0].values)
    assert held == by_a + sim.ended
    assert sim.ended < sim.arrivals


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_max_samples_names_the_observe_holding_most(tier, tmp_path, monkeypatch):
    sim2 = _run_bounded(grow(tmp_path, monkeypatch), tier, 20_000)
    m = re.fullmatch(r"stopped holding (\d+) samples, (\d+) of them by observe a at grow\.sq:5:3 "
                     r"\(--max-samples 20000\)", sim2.partial_note)
    assert m, sim2.partial_note
    assert int(m.group(2)) == len(sim2.obs[0].values) == sim2.arrivals
    assert len(sim2.obs[0].values) > len(sim2.obs[1].values)


def _run_bounded(program, tier, n):
    import os

    from serq_sim.api import registries

    old = os.environ.get("SERQ_SIM_TIER")
    os.environ["SERQ_SIM_TIER"] = tier
    try:
        sim = engine.Simulation(program, registries(),
                                check_invariants=False, progress=False, trace_path=None, max_samples=n)
        sim.run()
    finally:
        if old is None:
            del os.environ["SERQ_SIM_TIER"]
        else:
            os.environ["SERQ_SIM_TIER"] = old
    return sim
