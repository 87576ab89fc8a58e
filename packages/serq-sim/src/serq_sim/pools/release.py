"""Releases: the end of a hold's scope (caching ``round_down(min(cache, computed, allocation))``), leases
(a slot kept past the scope until its time is up), ``release`` of one pool. A release admits no one
itself: the settle retries the growers and admissions once the ready sessions have run (§3).
"""

from __future__ import annotations

import math

from serq_ir import rules

from . import cache
from .model import EPS, INF, SLOT_COMPUTED, Entry, HoldRT, Lease, Pool, Slot

_floor = math.floor


def innermost(s, pool: Pool):
    for hi in range(len(s.holds) - 1, -1, -1):
        for slot in s.holds[hi].slots:
            if slot.pool is pool:
                return hi, slot
    return None, None


def wake_waiters(pool: Pool) -> None:
    """Room freed in ``pool``: the pools whose blocked head waits for it are tried again (admission.admit_all,
    Simulation.adm_mark)."""
    for q in pool.waiters:
        if not q.ahot:
            q.sim.adm_mark(q)
    pool.waiters.clear()


def release_slot(sim, s, slot: Slot, cache_value, grown: bool) -> None:
    pool = slot.pool
    pool.acc()
    alloc = slot.alloc
    pool.used -= alloc
    pool.reserved -= slot.u
    pool.holders.pop(slot, None)
    if pool.waiters:
        wake_waiters(pool)
    if cache_value is not None:
        # min(cache_value, slot.pos if grown else alloc, alloc), inlined (the first of equal ones kept)
        keep = cache_value
        x = slot.pos if grown else alloc
        if x < keep:
            keep = x
        if alloc < keep:
            keep = alloc
        b = pool.block
        if b is not None and keep != INF:  # pool.round_down(keep), inlined
            try:
                keep = _floor(keep / b + 1e-12) * b
            except OverflowError:
                pass
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
    A = s.attrs
    cf = info.cache
    cv = None if cf is None else cache.cache_length(sim, s, cf, info.at["cache"])
    grown = h.grown
    if info.lease_ref is None:
        for slot in h.slots:
            release_slot(sim, s, slot, cv, grown)
            if s.preempt_pos:
                s.preempt_pos.pop(slot.pool, None)
        # the hold and its slots refer to each other (``Slot.hold``): emptied, they are freed now, and the
        # session with them once nothing else holds it, instead of by the cyclic garbage collector
        h.slots = []
    else:
        lease_pool = info.lease_ref(s, A, sim.null_ctx)
        if all(p is not lease_pool for p in h.named):
            # a computed member the hold was not admitted to (the linker refuses the written-out case)
            from ..report import member_label

            raise sim.error(rules.lease_unheld_message(member_label(lease_pool)), None, s, info.at["lease pool"])
        for slot in h.slots:
            if slot.pool is lease_pool:
                t = info.lease_time(s, A, sim.null_ctx)
                slot.lease = True
                if slot.u:  # a reservation ends with the scope: a lease retains none (reserve held)
                    slot.pool.reserved -= slot.u
                    slot.u = 0.0
                    if slot.pool.waiters:
                        wake_waiters(slot.pool)
                lease = Lease(slot, info.cache, grown, info.at["cache"])
                s.leases.append(lease)
                if s.lapsed is not None and slot.pool in s.lapsed:  # a new lease of it: the KV is kept again
                    s.lapsed.remove(slot.pool)
                if t == t and t != INF:
                    sim.at(sim.now + t, sim.lease_end, lease)
                    lease.timer = True
                # the hold completed, into a lease: a later preemption on the pool is of another execution,
                # not one more without progress (stuck), as when the scope's end releases the slot
                if s.preempt_pos:
                    s.preempt_pos.pop(slot.pool, None)
                continue
            release_slot(sim, s, slot, cv, grown)
            if s.preempt_pos:
                s.preempt_pos.pop(slot.pool, None)
    A[SLOT_COMPUTED] = 0.0
    # the growers and queues the units freed may let in are retried by the settle, once the ready sessions
    # (this one first) have run (§3): a session that holds again at once joins the queue before that


def end_lease(sim, lease: Lease) -> None:
    if not lease.alive:
        return
    lease.alive = False
    if lease.timer:  # ended before its time: its event is left in the heap, and will do nothing
        sim.dead_timers += 1
    s = lease.slot.owner
    s.leases.remove(lease)
    cv = None
    if lease.cache is not None:
        cv = cache.cache_length(sim, s, lease.cache, lease.span, " (at the end of the lease)")
    release_slot(sim, s, lease.slot, cv, lease.grown)


def lease_end(sim, lease: Lease) -> None:
    """A lease's time is up (``lease P (t)``): it ends, and its session remembers that its lease of P
    lapsed (``Session.lapsed``), for a transfer from P that comes after (:func:`transfer_release`)."""
    if lease.timer and not lease.alive:  # the lease ended before: this was one of the dead timers
        sim.dead_timers -= 1
    lease.timer = False
    if lease.alive:
        s = lease.slot.owner
        end_lease(sim, lease)  # an event: the settle after it retries the growers and admissions
        if s.lapsed is None:
            s.lapsed = [lease.slot.pool]
        elif lease.slot.pool not in s.lapsed:
            s.lapsed.append(lease.slot.pool)


def transfer_release(sim, s, pool: Pool) -> None:
    """The ``release P`` of a ``transfer … from P to Q``. When the session holds and leases nothing on P and its
    lease of P ended by its time before (``Session.lapsed``), the transfer has read KV that the lease no
    longer kept: what the cache kept of it then, evictable since, and the link's time and the load count as
    though all of it were there. The spec says nothing of such a read; the run goes on as it is written and
    the pool counts it (``Pool.lapsed_reads``, after the warm-up), which the report's warning
    ``lease-lapsed`` gives (notes.lapsed_reads; docs/simulator.md, "A transfer after its lease")."""
    lapsed = s.lapsed
    if lapsed is not None and pool in lapsed and innermost(s, pool)[1] is None:
        lapsed.remove(pool)
        if all(lease.slot.pool is not pool for lease in s.leases):
            pool.lapsed_reads += 1
            return
    release(sim, s, pool)


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
    # the settle retries the growers and admissions, after the ready sessions (end_hold)
