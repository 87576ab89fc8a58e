"""Releases: the end of a hold's scope (caching ``round_down(min(cache, computed, allocation))``), leases
(a slot kept past the scope until its time is up), ``release`` of one pool; each release retries
admissions at once.
"""

from __future__ import annotations

from . import admission, cache
from .model import EPS, INF, SLOT_COMPUTED, Entry, HoldRT, Lease, Pool, Slot


def innermost(s, pool: Pool):
    for hi in range(len(s.holds) - 1, -1, -1):
        for slot in s.holds[hi].slots:
            if slot.pool is pool:
                return hi, slot
    return None, None


def release_slot(sim, s, slot: Slot, cache_value, grown: bool) -> None:
    pool = slot.pool
    pool.acc()
    pool.used -= slot.alloc
    pool.reserved -= slot.u
    pool.holders.pop(slot, None)
    if cache_value is not None:
        computed = slot.pos if grown else slot.alloc
        keep = pool.round_down(min(cache_value, computed, slot.alloc))
        if keep > EPS:
            old = pool.own.pop(s.serial, None)
            if old is not None:
                old.alive = False
                pool.evict.on_remove(old)
                pool.cached -= old.size
            snap = list(s.attrs) if pool.needs_snap else None
            e = Entry(keep, sim.now, next(sim.release_counter), s, snap, next(sim.eid_counter))
            pool.own[s.serial] = e
            pool.cached += keep
            pool.evict.on_insert(e)


def release_hold(sim, s, h: HoldRT) -> None:
    cv = cache.cache_value(sim, s, h.info)
    for slot in h.slots:
        release_slot(sim, s, slot, cv, h.grown)
    h.slots = []


def end_hold(sim, s) -> None:
    h = s.holds.pop()
    info = h.info
    cv = cache.cache_value(sim, s, info)
    lease_pool = None
    if info.lease_ref is not None:
        lease_pool = info.lease_ref(s, s.attrs, sim.null_ctx)
    for slot in h.slots:
        if slot.pool is lease_pool:
            t = info.lease_time(s, s.attrs, sim.null_ctx)
            slot.lease = True
            lease = Lease(slot, info.cache, h.grown, info.span)
            s.leases.append(lease)
            if t == t and t != INF:
                sim.at(sim.now + max(t, 0.0), sim.lease_end, lease)
            continue
        release_slot(sim, s, slot, cv, h.grown)
        if s.preempt_pos:
            s.preempt_pos.pop(slot.pool, None)
    s.attrs[SLOT_COMPUTED] = 0.0
    if sim.any_pools:
        admission.admit_all(sim)


def end_lease(sim, lease: Lease) -> None:
    if not lease.alive:
        return
    lease.alive = False
    s = lease.slot.owner
    s.leases.remove(lease)
    cv = None
    if lease.cache is not None:
        v = lease.cache(s, s.attrs, sim.null_ctx)
        if v != v:  # as at the end of a hold's scope
            raise sim.error("the cache length is NaN (at the end of the lease)", None, s, lease.span)
        cv = max(v, 0.0)
    release_slot(sim, s, lease.slot, cv, lease.grown)


def lease_end(sim, lease: Lease) -> None:
    if lease.alive:
        end_lease(sim, lease)
        admission.admit_all(sim)


def release(sim, s, pool: Pool) -> None:
    hi, slot = innermost(s, pool)
    if slot is not None:
        h = s.holds[hi]
        h.slots.remove(slot)
        release_slot(sim, s, slot, cache.cache_value(sim, s, h.info), h.grown)
        if s.preempt_pos:
            s.preempt_pos.pop(pool, None)
    else:
        for lease in s.leases:
            if lease.slot.pool is pool:
                end_lease(sim, lease)
                break
        else:
            return
    admission.admit_all(sim)
