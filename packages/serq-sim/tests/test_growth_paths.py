"""The hot paths of a block growth (serq_sim.pools: ``grow_slot`` with the block rounding inlined,
``make_room`` of an order that evicts several blocks at once in one loop with ``evict`` inlined, the LRU pick read from the sorted
list's first sublist) give exactly what the general calls they replace give: each program runs twice, once
as shipped and once with those functions put back to their plain form (written out below: ``round_up``,
``evict_amount`` and ``evict`` called per eviction, ``SortedList[0]`` for the pick), and the JSON reports
and every observe sample must be equal. Each case also proves the fast path ran (and evicted), so the test
cannot pass by never taking it."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_sim.policies import eviction
from serq_sim.pools import cache, growth
from serq_sim.pools.model import EPS
from serq_sim.step import lazy, planner
from tiers import run_on_tier

HERE = Path(__file__).resolve().parent
STRESS = HERE / "lazy" / "vllm_stress.sq"


def plain_make_room(sim, pool, need):
    """make_room as it reads without its shortcuts: a pick, evict_amount and evict for every eviction."""
    order = pool.evict
    cap = pool.cap
    by_blocks = (pool.block is not None and pool.spill is None and not order.batch and order.fixed_key
                 and not order.reads_size)
    while pool.used + pool.cached + need > cap + EPS:
        e = order.pick(pool)
        if e is None:
            return
        if by_blocks:
            cache.evict_blocks(sim, pool, e, need)
        else:
            cache.evict(sim, pool, e, cache.evict_amount(pool, e, pool.used + pool.cached + need - cap))


def plain_grow_slot(sim, s, slot, d, job):
    """grow_slot with ``pool.round_up`` and ``grow_alloc`` → ``make_room`` called as they are written."""
    pool = slot.pool
    need = pool.round_up(slot.alloc + d) - slot.alloc
    if need <= EPS:
        return None
    while True:
        if pool.used + pool.reserved - slot.u + need <= pool.cap + EPS:
            pool.acc()
            plain_make_room(sim, pool, need)
            pool.used += need
            slot.alloc += need
            if pool.reserve_held:
                u = max(slot.r - slot.alloc, 0.0)
                pool.reserved += u - slot.u
                slot.u = u
            return None
        victim = pool.preempt.victim(pool, s)
        if victim is None:
            s.status = growth.GROWING
            s.grow = (pool, slot, d, job)
            pool.growers.append(s)
            return True
        exc = growth.preempt(sim, victim, pool)
        if victim is s:
            return exc


def plain_pick(self, pool):
    if self.keyed:
        try:
            return self.ranked[0][-1]
        except IndexError:
            return None
    return self.scan(pool)


CASES = [
    dict(blocks=60, rate=6), dict(blocks=40, rate=8, C=8), dict(blocks=300, rate=10, turns=3),
    dict(B=16, bs=1, blocks=500, rate=4), dict(B=2048, bs=16, blocks=30, rate=6, E_n=100),
    dict(bs=3, blocks=150, rate=7, turns=4), dict(B=5, max_seqs=16, rate=8, blocks=120),
]


@pytest.mark.parametrize("sets", CASES, ids=str)
def test_growth_fast_paths_agree_with_the_plain_calls(sets, monkeypatch):
    prog = serq_frontend.compile(str(STRESS), sets={k: float(v) for k, v in sets.items()})

    def no_evict(*_a):
        raise AssertionError("the batch loop of make_room calls no evict")

    monkeypatch.setattr(cache, "evict", no_evict)  # every eviction here is LRU's batch loop's
    sim, got, got_samples = run_on_tier(prog, "")
    assert got[0] == "report", got
    assert sim.pools[1].evicted_units > 0  # it ran and evicted
    monkeypatch.undo()

    monkeypatch.setattr(cache, "make_room", plain_make_room)
    monkeypatch.setattr(growth, "grow_slot", plain_grow_slot)
    monkeypatch.setattr(planner, "grow_slot", plain_grow_slot)
    monkeypatch.setattr(lazy, "grow_slot", plain_grow_slot)
    monkeypatch.setattr(eviction.EvictionOrder, "pick", plain_pick)
    _sim, ref, ref_samples = run_on_tier(prog, "")
    assert got == ref
    assert got_samples == ref_samples
