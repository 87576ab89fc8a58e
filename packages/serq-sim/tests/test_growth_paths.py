"""The hot paths of a block growth (serq_sim.pools: ``grow_slot`` with the block rounding inlined and
``make_room``'s test made before the call, ``evict_for`` with ``evict`` inlined, LRU's pick read from its
``OrderedDict`` of entries (``LruOrder.first``), ``evict_amount``'s rounding of one block) give exactly what
the general calls they replace give: each program runs twice, once as shipped and once with those functions
put back to their plain form (written out below: ``round_up``, ``evict_amount`` and ``evict`` called per
eviction, ``LruOrder`` ranking every entry in the base class's sorted list and the pick read as
``SortedList[0]``), and the JSON reports and every observe sample must be equal. Each case also proves that
what it is there for ran (evictions on the fast path, entries evicted in part, several entries evicted for
one growth, growths that preempted, entries that came into LRU out of release order), so the test cannot
pass by never taking it."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest
import serq_frontend
from serq_sim.policies import eviction
from serq_sim.pools import cache, growth
from serq_sim.pools.model import EPS, NONE_YET
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
    """grow_slot with ``pool.round_up`` and the allocation → ``make_room`` called as they are written (and its
    rule of a grower that is its own victim beyond the cap, growth.preempt_outgrown, as it is: the livelock
    the report names)."""
    pool = slot.pool
    x = pool.round_up(slot.alloc + d)
    need = x - slot.alloc
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
            if pool.growers is NONE_YET:
                pool.growers = deque()
            pool.growers.append(s)
            return True
        if victim is s:
            kept = growth.kept_through_preemption(s, pool)
            if x + kept > pool.limit:
                return growth.preempt_outgrown(sim, s, pool, x, kept)
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


_LRU_INIT = eviction.LruOrder.__init__


def plain_lru_init(self, sim, pool, node):
    """LruOrder without its OrderedDict: every entry ranked in the base class's sorted list."""
    _LRU_INIT(self, sim, pool, node)
    self.fifo = None
    self.keyed = None


def stress(sets: dict, evict: str = "evict lru;", match: float | None = None):
    """vllm_stress.sq with ``sets``, its eviction order replaced by ``evict``, and the requests' prefix
    match bounded by ``match`` (a later turn's first admission then reuses at most that much of its cached
    entry: the rest of the entry stays cached, dead, with the entry's release order)."""
    src = STRESS.read_text()
    src = src.replace("evict lru;", evict)
    if match is not None:
        src = src.replace("t0, inf, C)", f"t0, {match:g}, C)")
    return serq_frontend.compile(source=src, sets={k: float(v) for k, v in sets.items()})


#: (sets, eviction order, prefix match bound, what the case must show)
CASES = [
    (dict(blocks=60, rate=6), "evict lru;", None, {"preempted"}),
    (dict(blocks=40, rate=8, C=8), "evict lru;", None, {"preempted", "partial"}),
    (dict(blocks=300, rate=10, turns=3), "evict lru;", None, {"partial", "several"}),
    (dict(B=16, bs=1, blocks=500, rate=4), "evict lru;", None, {"partial"}),
    (dict(B=2048, bs=16, blocks=30, rate=6, E_n=100), "evict lru;", None, {"preempted"}),
    (dict(bs=3, blocks=150, rate=7, turns=4), "evict lru;", None, {"partial", "several"}),
    (dict(B=5, max_seqs=16, rate=8, blocks=120), "evict lru;", None, {"partial"}),
    # dead remainders past the reuse bound: entries that come into LRU before others cached (strays)
    (dict(blocks=300, rate=10, turns=3), "evict lru;", 8, {"strays", "partial", "merged"}),
    (dict(blocks=300, rate=14, turns=3), "evict lru;", 8, {"strays", "preempted", "merged"}),
    (dict(bs=3, blocks=300, rate=12, turns=4), "evict lru;", 5, {"strays", "merged"}),
    # other orders: the general loops (evict_blocks for a fixed key, evict for one that reads the size)
    (dict(blocks=300, rate=10, turns=3), "evict by (last);", None, {"evicted"}),
    (dict(blocks=150, rate=8, turns=3), "evict by (-size);", 8, {"evicted"}),
]


def _case_id(v) -> str:
    """A case's id, the same in every process (a set's order is its hashes', which differ between runs)."""
    return "+".join(sorted(v)) if isinstance(v, set) else str(v)


@pytest.mark.parametrize(("sets", "evict", "match", "shows"), CASES, ids=_case_id)
def test_growth_fast_paths_agree_with_the_plain_calls(sets, evict, match, shows, monkeypatch):
    prog = stress(sets, evict, match)
    lru = evict == "evict lru;"
    seen = {"partial": 0, "several": 0, "strays": 0, "fast": 0, "merged": 0}

    def counting_amount(pool, e, short):
        a = evict_amount(pool, e, short)
        if a < e.size - EPS:
            seen["partial"] += 1
        return a

    def counting_evict_for(sim, pool, need):
        n0 = pool.evicted_entries
        if pool.lru and pool.evict.first is not None:
            seen["fast"] += 1
        elif pool.lru and pool.evict.strays:
            seen["merged"] += 1  # a stray cached: LruOrder.pick takes the least of the two structures
        evict_for(sim, pool, need)
        if pool.evicted_entries - n0 > 1:
            seen["several"] += 1

    def counting_rank(self, entry):
        seen["strays"] += 1
        rank(self, entry)

    evict_amount = cache.evict_amount
    evict_for = cache.evict_for
    rank = eviction.LruOrder._rank
    monkeypatch.setattr(cache, "evict_amount", counting_amount)
    monkeypatch.setattr(cache, "evict_for", counting_evict_for)
    monkeypatch.setattr(eviction.LruOrder, "_rank", counting_rank)
    if lru:
        def no_evict(*_a):
            raise AssertionError("the LRU loops of evict_for call no evict")

        monkeypatch.setattr(cache, "evict", no_evict)
    sim, got, got_samples = run_on_tier(prog, "")
    assert got[0] == "report", got
    kv = sim.pools[1]
    assert kv.evicted_units > 0  # it ran and evicted
    if lru:
        assert kv.lru and seen["fast"] > 0  # through LRU's first
    if "preempted" in shows:
        assert sim.preempt_count > 0
    for what in ("partial", "several", "strays", "merged"):
        if what in shows:
            assert seen[what] > 0, what
    if "strays" not in shows and lru:
        assert seen["strays"] == 0 and seen["merged"] == 0
    monkeypatch.undo()

    monkeypatch.setattr(cache, "make_room", plain_make_room)
    monkeypatch.setattr(growth, "grow_slot", plain_grow_slot)
    monkeypatch.setattr(planner, "grow_slot", plain_grow_slot)
    monkeypatch.setattr(lazy, "grow_slot", plain_grow_slot)
    monkeypatch.setattr(eviction.EvictionOrder, "pick", plain_pick)
    monkeypatch.setattr(eviction.LruOrder, "pick", plain_pick)
    monkeypatch.setattr(eviction.LruOrder, "__init__", plain_lru_init)

    def no_fast(*_a):
        raise AssertionError("the plain run calls no evict_for")

    monkeypatch.setattr(cache, "evict_for", no_fast)
    psim, ref, ref_samples = run_on_tier(prog, "")
    assert not psim.pools[1].lru and psim.pools[1].evict.fifo is None
    assert got == ref
    assert got_samples == ref_samples


@pytest.mark.parametrize("seed", range(8))
def test_lru_order_of_strays(seed):
    """LruOrder's pick against the ranking it stands for, under random caching and removal, some entries
    coming in out of release order (a dead remainder keeps its entry's): the least ``(seq, eid)`` cached,
    whichever structure holds it, ``first`` set exactly while no stray is cached, and ``strays`` the
    entries outside the ``OrderedDict``."""
    import random

    from serq_sim.pools.model import Entry

    rng = random.Random(seed)
    order = eviction.LruOrder.__new__(eviction.LruOrder)
    _LRU_INIT(order, None, None, None)
    cached = []
    seq = 0
    most = 0
    for eid in range(400):
        r = rng.random()
        if r < 0.5 or not cached:
            seq += 1
            s = seq if (rng.random() < 0.8 or not cached) else rng.choice(cached).seq
            e = Entry(1.0, float(s), s, None, None, eid)
            cached.append(e)
            order.on_insert(e)
        else:
            e = cached.pop(rng.randrange(len(cached)) if r < 0.8 else 0)
            order.on_remove(e)
        want = min(cached, key=lambda x: (x.seq, x.eid)) if cached else None
        assert order.pick(None) is want
        assert order.strays == sum(1 for x in cached if x not in order.fifo)
        assert order.first is (want if order.strays == 0 else None)
        most = max(most, order.strays)
    assert most > 0  # the ranking took part
