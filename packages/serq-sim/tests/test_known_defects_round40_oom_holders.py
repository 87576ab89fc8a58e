"""A run that ran out of memory (a MemoryError inside it) names the observe holding most samples, as a run
stopped by the memory guard or ``--max-samples`` does (serq_sim.holders): its note said ``out of memory
holding N samples (--max-samples N stops a run once it holds N)`` and not where. Naming the holder needs
memory too: a MemoryError there leaves the note as it was. Both tiers."""

from __future__ import annotations

import re

import pytest
from holders_prog import grow
from serq_sim import engine, holders
from tiers import run_on_tier


class _RunsOut:
    """A memory guard whose second look (the second tick, 40 000 events) finds no memory: a MemoryError in the
    run's loop, as an allocation that fails there raises."""

    def __init__(self):
        self.looks = 0

    def over(self):
        self.looks += 1
        if self.looks >= 2:
            raise MemoryError
        return None


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_out_of_memory_names_the_observe_holding_most(tier, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "memory_guard", _RunsOut)
    sim, outcome, _ = run_on_tier(grow(tmp_path, monkeypatch), tier)
    assert outcome[0] == "report"
    assert sim.partial == "memory"
    m = re.fullmatch(r"out of memory holding (\d+) samples, (\d+) of them by observe a at grow\.sq:5:3 "
                     r"\(--max-samples N stops a run once it holds N\)", sim.partial_note)
    assert m, sim.partial_note
    held, by_a = map(int, m.groups())
    # a's samples: one a session that arrived; b's: one a session that ended
    assert by_a == sim.arrivals == len(sim.obs[0].values)
    assert held == by_a + len(sim.obs[1].values) == by_a + sim.ended
    assert sim.ended < sim.arrivals


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_no_memory_to_name_the_holder_keeps_the_note(tier, tmp_path, monkeypatch):
    def no_memory(sim):
        raise MemoryError

    monkeypatch.setattr(engine, "memory_guard", _RunsOut)
    monkeypatch.setattr(holders, "samples_note", no_memory)
    sim, outcome, _ = run_on_tier(grow(tmp_path, monkeypatch), tier)
    assert outcome[0] == "report"
    assert sim.partial == "memory"
    assert re.fullmatch(r"out of memory holding \d+ samples \(--max-samples N stops a run once it holds N\)",
                        sim.partial_note), sim.partial_note
