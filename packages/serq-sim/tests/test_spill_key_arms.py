"""An eviction key of a conditional whose test is a constant reads only the arm it takes
(policies.eviction.key_reads through compile.reads_taken). examples/multi-turn/offload.sq chooses its GPU
order with a `let`, `evict by (order == 0 ? last : order == 1 ? size : -size)`, which the linker leaves a
conditional of the test 1 (or 0): the key was judged to read `size`, so a pool that spills, evicting a
block at a time, ranked its entry again for every block it spilled (87 000 of the 112 000 events' blocks).

The truth is the key written as the arm itself (`evict by (last)`, `evict by (size)`, `evict by (-size)`):
the same report byte for byte on both tiers; and the rankings are counted: with `order = 0` an entry is
ranked when it is cached, not again at each block (before, one ranking per block spilled)."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_sim.policies.eviction import EvictionOrder
from tiers import run_on_tier

SOURCE = (Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "offload.sq").read_text()
CHOSEN = "evict by (order == 0 ? last : order == 1 ? size : -size);"
ARMS = {0: "evict by (last);", 1: "evict by (size);", 2: "evict by (-size);"}


def _program(text: str, order: int):
    assert CHOSEN in SOURCE
    return serq_frontend.compile(source=text.replace("horizon 300;", "horizon 120;"),
                                 sets={"order": order, "blocks": 1500})


@pytest.mark.timeout(120)
@pytest.mark.parametrize("order", [0, 1, 2])
def test_a_constant_choice_of_key_is_the_key_chosen(monkeypatch, order):
    chosen = _program(SOURCE, order)
    written = _program(SOURCE.replace(CHOSEN, ARMS[order]), order)
    rankings = {}
    rank = EvictionOrder._rank

    def counted(self, entry):
        if self.pool.node.name == "kv":
            rankings[key] = rankings.get(key, 0) + 1
        rank(self, entry)

    monkeypatch.setattr(EvictionOrder, "_rank", counted)
    out = {}
    for name, program in (("chosen", chosen), ("written", written)):
        for tier in ("", "general"):
            key = (name, tier)
            sim, outcome, samples = run_on_tier(program, tier)
            assert outcome[0] == "report", outcome
            out[key] = (outcome, samples)
            if tier == "":
                kv = next(p for p in sim.pools if p.node.name == "kv")
                spills = kv.spills
    assert len({repr(v) for v in out.values()}) == 1
    assert spills > 2000  # (the blocks spilled after the warm-up: the work the key was ranked again for)
    if order == 0:
        # `last` does not change as an entry shrinks: a ranking an entry cached, not one a block
        assert rankings[("chosen", "")] == rankings[("written", "")] < spills / 4
        assert rankings[("chosen", "general")] == rankings[("written", "general")]
    else:
        # a key of the size is ranked again at each block its entry loses, as the arm written alone is
        assert rankings[("chosen", "")] == rankings[("written", "")] > spills
