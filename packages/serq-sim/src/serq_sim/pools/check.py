"""``check_invariants`` (``--check-invariants``): every pool's bookkeeping, asserted after every event."""

from __future__ import annotations

from ..errors import InvariantError, fmt_time
from ..status import ENDED, GROWING, QUEUED
from .model import INF


def check_invariants(sim) -> None:
    """Assert every pool's bookkeeping (``--check-invariants``): allocated + cached ≤ cap, used and
    cached equal to what the holders and entries account for, and the queues consistent."""
    now = sim.now
    for pool in sim.pools:
        where = f"t={fmt_time(now)}: pool {pool.name}[{pool.index}]"
        used = sum(sl.alloc for sl in pool.holders)
        cached = sum(e.size for e in pool.iter_entries())
        tol = 1e-6 * max(1.0, pool.cap if pool.cap != INF else 1.0, used, cached)
        if pool.used + pool.cached > pool.cap + tol:
            raise InvariantError(f"{where}: allocated {pool.used} + cached {pool.cached} > cap {pool.cap}")
        if abs(used - pool.used) > tol:
            raise InvariantError(f"{where}: used {pool.used} but the holders hold {used}")
        if abs(cached - pool.cached) > tol:
            raise InvariantError(f"{where}: cached {pool.cached} but the entries hold {cached}")
        if pool.used < -tol or pool.cached < -tol:
            raise InvariantError(f"{where}: negative used/cached")
        for e in pool.iter_entries():
            if not e.alive or e.size <= 0:
                raise InvariantError(f"{where}: an entry of size {e.size} (alive {e.alive}) is cached")
        res = sum(sl.u for sl in pool.holders)
        if abs(res - pool.reserved) > tol:
            raise InvariantError(f"{where}: reserved {pool.reserved} but the holds reserve {res}")
        seen = set()
        for s in list(pool.front) + list(pool.queue):
            if s in seen:
                raise InvariantError(f"{where}: session {s.serial} is queued twice")
            seen.add(s)
            if s.status != QUEUED or s.qpool is not pool or s.pending is None:
                raise InvariantError(f"{where}: session {s.serial} is in the queue with status {s.status}")
        for s in pool.growers:
            if s.status != GROWING or s.grow is None or s.grow[0] is not pool:
                raise InvariantError(f"{where}: grower {s.serial} has status {s.status}")
        for sl in pool.holders:
            if sl.owner.status == ENDED:
                raise InvariantError(f"{where}: an ended session {sl.owner.serial} still holds")
