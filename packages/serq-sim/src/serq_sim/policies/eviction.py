"""Eviction orders: the contract and the built-ins ``evict lru`` and ``evict by (k, …)``.

An order is registered through ``serq_sim_register_eviction_orders`` as ``register(name, factory)``,
``name`` the IR tag (``"EvictLru"``, ``"EvictBy"``) or an ``Extension`` evict node's ``name``;
``factory(sim, pool, node)`` is called once per pool member when a simulation is built and returns an
:class:`EvictionOrder`: ``pick(pool)`` returns the cache entry to evict next (from its tail, a block at a
time when the pool has blocks), or ``None`` when the pool caches nothing; ``on_insert(entry)`` is called
whenever an entry is cached. The usual way to write one is to override ``key(entry)``: the entry with the
least key goes first, ties in release order (``entry.seq``). An entry has ``size``, ``last`` (release
time), ``seq`` (release order), ``owner`` (the session; ``owner.attrs`` while it lives, ``snap`` after it
has ended) and ``dead`` (a remainder past a ``reuse`` bound).
"""

from __future__ import annotations

import heapq

from ..stages import Ctx
from ..status import ENDED, QUEUED


class EvictionOrder:
    """Base of eviction orders: least ``key(entry)`` first, ties in release order."""

    #: The picked entry keeps its key while it shrinks, so several blocks of it may go at once.
    batch = False

    def __init__(self, sim, pool, node):
        self.sim = sim
        self.pool = pool
        self.node = node

    def key(self, entry) -> tuple:
        raise NotImplementedError

    def pick(self, pool):
        best = None
        bk = None
        for e in pool.iter_entries():
            k = (*self.key(e), e.seq)
            if best is None or k < bk:
                best, bk = e, k
        return best

    def on_insert(self, entry) -> None:
        pass


class LruOrder(EvictionOrder):
    """``evict lru``: release time, then release order (a heap with lazy deletion)."""

    batch = True

    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        self.heap: list = []

    def key(self, entry) -> tuple:
        return (entry.last,)

    def on_insert(self, entry) -> None:
        heapq.heappush(self.heap, (entry.last, entry.seq, entry.eid, entry))

    def pick(self, pool):
        heap = self.heap
        while heap:
            e = heap[0][3]
            if e.alive:
                return e
            heapq.heappop(heap)
        return None


class KeyedOrder(EvictionOrder):
    """``evict by (k1, …)``: ascending keys evaluated per entry at the Evict moment (``size``, ``age``,
    ``last``, ``waiting`` and the entry's session's attributes), then release order."""

    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        self.keys = sim.compiler.keys_fn(node.keys, rng="eviction", span=pool.node.span)
        self.ctx = Ctx()

    def key(self, entry) -> tuple:
        s, attrs = evict_context(self.ctx, entry, entry.size, self.sim.now)
        return self.keys(s, attrs, self.ctx)


def evict_context(ctx, entry, size: float, now: float):
    """Set the context of the Evict moment of ``entry`` in ``ctx`` (``size``, ``last``, ``age``,
    ``waiting``), ``size`` the units at stake; return the session and the attributes its expressions
    read: the owner's while it lives, else ``None`` and the snapshot taken at release (if any)."""
    ctx.size = size
    ctx.last = entry.last
    ctx.age = now - entry.last
    owner = entry.owner
    live = owner is not None and owner.status != ENDED
    ctx.waiting = 1.0 if (live and owner.status == QUEUED) else 0.0
    attrs = owner.attrs if (live or entry.snap is None) else entry.snap
    return (owner if live else None), attrs


def lru_factory(sim, pool, node):
    return LruOrder(sim, pool, node)


def keyed_factory(sim, pool, node):
    return KeyedOrder(sim, pool, node)
