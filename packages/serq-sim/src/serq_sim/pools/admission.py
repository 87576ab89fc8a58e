"""Admission: a hold joins its first pool's queue (at the tail, or at the head when its session was
preempted with ``requeue head``), the head is the first of the re-queued, else the least ``queue by``
key, else the first to join; the head is admitted when every pool of its hold has room for
``round_up(max(units, reserve))`` over what is used and reserved (cached entries never block).
"""

from __future__ import annotations

import math
from collections import deque

from serq_ir import rules

from ..errors import SessionGone, amount_message, show
from ..stats import HUGE_SPAN
from ..status import QUEUED
from . import cache, growth
from .model import EPS, INF, NONE_YET, SLOT_CACHED, Entry, HoldRT, Pending, Pool, Slot, refused_amount


def hold(sim, s, info) -> None:
    A = s.attrs
    C = sim.null_ctx
    pools = info.pools  # prepared with the statement when every pool is named without an index
    if pools is None:
        pools = [ref(s, A, C) for ref in info.pool_refs]
        if len(pools) > 1 and len(set(map(id, pools))) < len(pools):
            twice(sim, s, info, pools)
    floor = None
    for k, pool in enumerate(pools):
        if info.units_now[k]:
            u = info.units[k](s, A, C)
            if not 0.0 <= u < INF:
                amount_error(sim, s, info, pool, "units", u, k)
            if pool.round_up(u) > pool.cap + EPS:
                reject(sim, s, pool, u, info, "units")
        if info.static[k]:
            r = info.reserves[k](s, A, C)
            if not 0.0 <= r < INF:
                amount_error(sim, s, info, pool, "reserve", r, k)
            need = pool.round_up(r)
            if need > pool.cap + EPS:
                reject(sim, s, pool, r, info, "reserve")
            if not info.pure:
                if floor is None:
                    floor = [(pool, 0.0, need)]
                else:
                    floor.append((pool, 0.0, need))
    if s.outgrew is not None:
        outgrown(sim, s, pools, info)
    first = pools[0]
    first.acc()
    pend = s.pending = Pending(info, pools, sim.now, next(sim.join_counter))
    pend.floor = floor
    s.status = QUEUED
    s.qpool = first
    enqueue(first, s)


def twice(sim, s, info, pools) -> None:
    """A hold whose computed indices name one pool member twice (the linker refuses the written-out case:
    :func:`serq_ir.rules.hold_twice`)."""
    seen = set()
    for pool in pools:
        if id(pool) in seen:
            from ..report import member_label

            raise sim.error(rules.same_member_message(member_label(pool)), None, s, info.span)
        seen.add(id(pool))


def enqueue(pool: Pool, s) -> None:
    """``s`` joins ``pool``'s queue: at its tail, or, re-entering after a preemption whose policy says
    ``requeue head``, at the head (before every session waiting there, those re-queued at the head before it
    included). A step stage that admits the pool may be idle now (Simulation.step_mark); a pool admitted by
    none has a queue for the settle to look at (Simulation.pool_mark)."""
    via = pool.via
    if via is not None:
        if not via.hot:
            via.sim.step_mark(via)
    else:
        if not pool.hot:
            pool.sim.pool_mark(pool)
        if not pool.ahot:
            pool.sim.adm_mark(pool)
    rq = s.requeue
    if rq is not None:
        s.requeue = None
        if rq == "head":
            if pool.front is NONE_YET:
                pool.front = deque()
            pool.front.appendleft(s)
            return
    if pool.queue is NONE_YET:
        pool.queue = deque()
    pool.queue.append(s)


def reject(sim, s, pool: Pool, ask: float, info, what: str) -> None:
    """``s``'s hold can never fit ``pool``: the session ends. ``ask``, the units or reserve (``what``) it was
    judged by, is kept when it fits the cap and its blocks do not (``Pool.rounded_out``, the least such), for
    the warning to say the rounding that rejected it (notes.rejections). A closed workload's guard tripped by
    this end is located at the hold (``info.span``) and names the pool, the amount and the capacity
    (Simulation.rep_rejected)."""
    if sim.warm:
        pool.rejections += 1
        if s.requeue is not None:  # set by the preemption, cleared when the hold joins a queue again
            pool.refused += 1
        if ask is not None and ask <= pool.cap + EPS and (pool.rounded_out is None or ask < pool.rounded_out[0]):
            pool.rounded_out = (ask, pool.round_up(ask))
    if sim.closed:
        from ..report import member_label

        sim.rep_rejected = (s, info.span, (member_label(pool), what, ask, pool.round_up(ask), pool.cap))
        sim.end_session(s)
        sim.rep_rejected = None
    else:
        sim.end_session(s)
    raise SessionGone


def outgrown(sim, s, pools, info) -> None:
    """The hold of a session whose growth on a pool, beyond its cap for the hold alone (with what the session
    keeps there through the preemption), preempted the session itself (``s.outgrew``, set by
    :func:`.growth.grow_slot` only when the run has no horizon) joins the queue again, its units and reserve
    judged first (a reserve beyond the cap, lib/vllm.sq's ``reserve (known)``, rejects it, as ever).
    language.txt §3 re-executes such a hold: admitted again, it grows to the same position and preempts itself
    again, for ever, and the run, with no horizon to end it, would never end: its run-time error at the hold,
    at the instant of its first such preemption (docs/language.md, "A hold that outgrows its pool")."""
    pool, units, kept = s.outgrew
    s.outgrew = None
    if not any(p is pool for p in pools):
        return
    from ..report import member_label

    name = member_label(pool)
    cap = show(pool.cap)
    if kept > EPS:
        need = (f"takes the hold to {show(units)} units of {name}, beside the {show(kept)} the session keeps there "
                f"through the preemption (an outer hold, a lease), {show(units + kept)} in all, above the pool's "
                f"capacity {cap}")
    else:
        need = f"takes the hold to {show(units)} units of {name}, above the pool's capacity {cap}"
    raise sim.error(f"hold: its growth {need}, so the hold preempted itself and, executed again, would grow into "
                    "the same preemption for ever; the run has no horizon (horizon inf) to end it: give the run a "
                    "horizon (horizon T, or --horizon T), the pool a larger capacity, the body a cut before the "
                    "growth, or the hold a reserve of what it will need (reserve), which rejects it once that is "
                    "above the capacity", None, s, info.span)


def head(sim, pool: Pool):
    """The session ``pool`` admits next: the first re-queued at the head, else the least of the ``queue by``
    keys (ties: the first to join), else the first to join."""
    if pool.front:
        return pool.front[0]
    q = pool.queue
    if not q:
        return None
    if pool.keyed is None or len(q) == 1 or (pool.keyed_at_join and not q.scan):
        return q[0]
    if pool.waited_queue:
        s = q.head(sim.now)
        if s is not None:
            return s
    # every key read is a unit of the event's work (Simulation.pulse_out): under a chain of admissions at
    # one instant, each scanning thousands of waiting sessions, one event ran for minutes
    sim.pulse -= len(q)
    if sim.pulse < 0:
        scan_pulse(sim, pool, len(q))
    ctx = sim.null_ctx
    now = sim.now
    keyed = pool.keyed
    best = None
    bk = None
    for s in q:
        ctx.waited = now - s.pending.queued_at
        k = keyed(s, s.attrs, ctx)
        if best is None or k < bk:
            best, bk = s, k
    ctx.waited = math.nan
    return best


def room_floors(program) -> list[float]:
    """Per pool family of ``program``, the least room any hold that waits in its queue can need, when it is
    known before the run and reading the queue's keys can do nothing but choose the head; else 0.0. A pool
    whose free room is below it admits no one, so no admission attempt needs its keys (both tiers: the
    general engine's :func:`try_admit`, the fast tier's ``_adm``): a queue by keys that scanned every
    waiting session at every attempt cost the square of the sessions waiting at one instant, and arrivals
    the clock cannot resolve into a full pool (``queue by (waited / 0)``) took minutes to meet the
    no-progress guard (docs/simulator.md, "No progress").

    Known when every hold that queues there (its first pool is the family) has units and reserves that are
    numbers (finite, not negative: no amount error can wait for the attempt; the floor is the least of the
    first pools' units, which round up to no less), and the keys read no member of a family by an index (a
    key's only run-time error: reading them at an attempt that admits no one could say it sooner), in a
    program of no plugin's stage kind or policy."""
    from serq_ir import nodes as N

    from ..compile import num, walk

    def known(e) -> bool:  # a number a hold's units or reserve may be (finite, not negative)
        return isinstance(e, N.Num) and 0.0 <= num(e.value) < INF

    floors = [0.0] * len(program.pools)
    keyed = [g for g, node in enumerate(program.pools) if isinstance(node.queue, N.QueueBy)]
    if not keyed:
        return floors
    least = [INF] * len(program.pools)
    for x in walk(program, presets=False):
        if isinstance(x, N.Extension):
            return floors
        if isinstance(x, N.Hold):
            g = x.pools[0].pool.pool
            u = num(x.pools[0].units.value) if isinstance(x.pools[0].units, N.Num) else 0.0
            if not all(known(hp.units) and (hp.reserve is None or known(hp.reserve)) for hp in x.pools):
                u = 0.0
            least[g] = min(least[g], u)
    for g in keyed:
        if least[g] != INF and not any(isinstance(y, (N.PoolRef, N.StageRef)) and y.index is not None
                                       for k in program.pools[g].queue.keys for y in walk(k)):
            floors[g] = least[g]
    return floors


def scan_pulse(sim, pool: Pool, waiting: int) -> None:
    """The countdown of the event's work ran out at a scan of ``pool``'s keys (``waiting`` sessions): read
    the clock (:meth:`serq_sim.engine.Simulation.pulse_out`), naming the pool's ``queue by``."""
    from ..report import member_label

    sim.pulse_out(f"reading the queue by keys of pool {member_label(pool)} for {waiting} waiting sessions",
                  None, None, None, pool.node.span)


def pop_head(sim, pool: Pool, s) -> None:
    pool.acc()
    if pool.front and pool.front[0] is s:
        pool.front.popleft()
    elif pool.queue[0] is s:
        pool.queue.popleft()
    else:
        pool.queue.remove(s)


def amount_error(sim, s, info, pool: Pool, what: str, x: float, k: int) -> None:
    """A hold's units or reserve ``x`` (``what``, of its pool ``k``) that is not ``0 <= x < inf``: the
    run-time error at the expression that gave it (``info.at``) when the pool refuses it
    (:func:`.model.refused_amount`: NaN or negative; infinite units, or an infinite reserve the pool
    holds, on a pool without a cap), else nothing (inf on a pool with a cap never fits; a reserve
    the pool does not hold is only the room the hold needs, never booked)."""
    if not refused_amount(pool.cap, x, what == "units" or pool.reserve_held):
        return
    from ..report import member_label

    raise sim.error(amount_message(what, member_label(pool), x), None, s, info.at[what, k])


def demand_of(sim, s, pend: Pending):
    """``[(pool, units, room needed)]`` of a waiting hold, evaluated now (once, for a hold whose units
    and reserves read only attributes and numbers: a waiting session's attributes do not change)."""
    demand = pend.demand
    if demand is not None:
        return demand
    info = pend.info
    A = s.attrs
    C = sim.null_ctx
    units = info.units
    reserves = info.reserves
    out = []
    k = 0
    for pool in pend.pools:
        u = units[k](s, A, C)
        if not 0.0 <= u < INF:
            amount_error(sim, s, info, pool, "units", u, k)
        rf = reserves[k]
        r = u
        if rf is not None:
            r = rf(s, A, C)
            if not 0.0 <= r < INF:
                amount_error(sim, s, info, pool, "reserve", r, k)
            r = max(r, u)
        out.append((pool, u, pool.round_up(r)))
        k += 1
    if info.pure:
        pend.demand = out
    return out


def fits(demand) -> bool:
    for pool, _u, need in demand:
        if pool.used + pool.reserved + need > pool.cap + EPS:
            return False
    return True


def admissible(pend: Pending) -> bool:
    """Whether the waiting hold ``pend`` may fit now as far as what it needs at least (its ``floor``,
    known at the join) tells: ``False`` when that does not fit. Every admission tests this first; only a
    hold that passes has its other amounts evaluated (so a units expression that is NaN or negative is
    reported at the first attempt whose floor fits)."""
    floor = pend.floor
    return floor is None or fits(floor)


def admit_all(sim) -> None:
    for pool in sim.grow_pools:  # (the pools that can ever have growers, in their order)
        if pool.growers:
            growth.retry_growers(sim, pool)
    hot = sim.adm_hot
    if hot is None:
        for pool in sim.free_pools:
            if pool.front or pool.queue:
                try_admit(sim, pool)
        return
    if not hot:
        return
    # of many pools admitted by no stage, those whose head may be admitted now, in their order: a head that
    # did not fit, whose demand and place cannot change while it waits, fits no sooner than room frees in a
    # pool it needs (release.wake_waiters) or its queue changes (enqueue, a session leaving it: Simulation.adm_mark);
    # nothing frees room or joins a queue while this loop admits
    pools = sorted(hot, key=_flat) if len(hot) > 1 else list(hot)
    hot.clear()
    for pool in pools:
        pool.ahot = False
        if pool.front or pool.queue:
            try_admit(sim, pool)
            if pool.front or pool.queue:
                _blocked(sim, pool)


def _flat(pool: Pool) -> int:
    return pool.flat


def _blocked(sim, pool: Pool) -> None:
    """``pool``'s head did not fit: it waits for room in the pools its hold needs when neither its demand
    nor which session is the head can change while it waits, else ``pool`` is tried at every admit_all."""
    if pool.keyed is None or (pool.keyed_at_join and not pool.queue.scan):
        pend = head(sim, pool).pending
        if pend.info.pure:
            for p in pend.pools:
                p.waiters[pool] = None
            return
    # (a queue whose keys are read at every attempt: which session is its head is not looked up again)
    sim.adm_mark(pool)


def try_admit(sim, pool: Pool) -> None:
    floor = pool.room_floor  # (room_floors: 0.0 where it is not known)
    while True:
        if floor and pool.used + pool.reserved + floor > pool.limit:
            return  # no session waiting here fits: its keys are not read
        s = head(sim, pool)
        if s is None:
            return
        if not admissible(s.pending):
            return
        demand = demand_of(sim, s, s.pending)
        if not fits(demand):
            return
        reuse = reuse_of(sim, s, s.pending.info)
        pop_head(sim, pool, s)
        admit(sim, s, s.pending, demand, reuse)


def admit_from(sim, pool: Pool, budget_left: float, stage):
    """A step stage's scheduler admits the head of ``pool`` with ``budget_left`` tokens left (what
    ``budget_left(stage)`` reads in the header, and in the queue's keys that choose the head); runs the
    admitted session until it blocks. The admitted session, or ``None`` when no session waits or the
    head's demand does not fit."""
    sim.admit_budget = (stage, budget_left)
    try:
        s = head(sim, pool)  # (read at each call: a variant patched in is the one called)
    finally:
        sim.admit_budget = None
    if s is None:
        return None
    fast = s.pending.info.fast
    if fast is not None:
        # the same, prepared for this hold (serq_sim.pools.prepared); the header reads ``budget_left`` as its
        # argument, the admitted body as it runs at the admission's instant (below, admit_head)
        sim.admit_budget = (stage, budget_left)
        try:
            return s if fast(sim, pool, s, budget_left, stage) else None
        finally:
            sim.admit_budget = None
    return s if admit_head(sim, pool, s, budget_left, stage) else None


def admit_head(sim, pool: Pool, s, budget_left: float, stage) -> bool:
    """:func:`admit_from` once the head ``s`` of ``pool`` is found (:func:`head`): its hold is admitted if
    its demand fits; ``True`` when it was."""
    fast = s.pending.info.fast
    if fast is not None:
        # the same, prepared for this hold (serq_sim.pools.prepared)
        return fast(sim, pool, s, budget_left, stage)
    if not admissible(s.pending):
        return False
    sim.admit_budget = (stage, budget_left)
    try:
        demand = demand_of(sim, s, s.pending)
        if not fits(demand):
            return False
        reuse = reuse_of(sim, s, s.pending.info)
        pop_head(sim, pool, s)
        admit(sim, s, s.pending, demand, reuse)
        # the body starts at the admission's instant, inside the stage's waiting loop: until it first waits
        # (its run joins the stage, say), ``budget_left(stage)`` there reads the attempt's figure, what the
        # header read (under ``serve exclusive prefill`` the whole budget, which the prefill it is about to
        # start is given when it displaces the tentative decodes); it read the estimate of a read made
        # elsewhere, which knows no exclusive prefill (docs/language.md, budget_left)
        sim.drain_ready()
    finally:
        sim.admit_budget = None
    return True


def take_own(sim, pool: Pool, s, e: Entry, reuse, alloc: float) -> float:
    """The part of ``s``'s own cached entry ``e`` (just taken out of ``pool.own``) that its admission with
    ``alloc`` units on ``pool`` consumes (the one rule, for :func:`admit` and the prepared admissions of
    :mod:`.prepared`): at most the ``reuse`` bound (rounded down to blocks, language.txt §3 Pools: "consumes
    at most ρ units of its own cached prefix") and at most the allocation, since the consumed prefix is
    part of what the hold holds (its position starts there; docs/language.md). The rest of the entry stays
    cached as a dead remainder with the entry's release time and order ("the rest of that entry stays in
    the cache as a dead entry with the same age, unusable, until evicted")."""
    e.alive = False
    pool.evict.on_remove(e)
    pool.cached -= e.size
    own = e.size
    bound = alloc
    if reuse is not None:
        r = pool.round_down(reuse)
        if r < bound:
            bound = r
    if own > bound + EPS:
        dead = Entry(own - bound, e.last, e.seq, s, e.snap, next(sim.eid_counter), True)
        pool.dead[dead.eid] = dead
        pool.cached += dead.size
        pool.evict.on_insert(dead)
        own = bound
    return own


def reuse_of(sim, s, info):
    """The reuse bound of the hold ``info`` that ``s`` is admitted by, or None without one: read at the
    admission's one moment, with its units and reserve (language.txt §3: everything in a hold's header is
    evaluated when the session is admitted), so before the head leaves its queue (``queued``) and with the
    budget the admitting stage passes (``budget_left``: under ``serve exclusive prefill`` the whole budget)."""
    if info.reuse is None:
        return None
    reuse = info.reuse(s, s.attrs, sim.null_ctx)
    if reuse != reuse:
        raise sim.error("the reuse bound is NaN", None, s, info.at["reuse"])
    if reuse < 0.0:  # at most a negative number of units: none (language.txt §3), warned of once
        cache.clamped(sim, s, "reuse", info.at["reuse"], reuse)
        return 0.0
    return reuse


def admit(sim, s, pend: Pending, demand, reuse) -> None:
    """Admit ``s``, already taken from its queue: allocate ``demand`` (:func:`demand_of`) on every pool,
    consuming its own prefix up to ``reuse`` (:func:`reuse_of`, read before it left the queue)."""
    info = pend.info
    A = s.attrs
    has_cache = info.cache is not None
    hold = HoldRT(info, [])
    consumed = 0.0
    now = sim.now
    warm = sim.warm
    for pool, units, need in demand:
        pool.acc()
        alloc = pool.round_up(units)
        own = 0.0
        if has_cache:
            e = pool.own.pop(s.serial, None)
            if e is not None:
                own = take_own(sim, pool, s, e, reuse, alloc)
        if own > consumed:
            consumed = own
        cache.make_room(sim, pool, alloc)
        pool.used += alloc
        u = max(need - alloc, 0.0) if pool.reserve_held else 0.0
        pool.reserved += u
        slot = Slot(pool, alloc, own, need, u, s, hold)
        pool.holders[slot] = None
        hold.slots.append(slot)
        if warm:
            pool.admissions += 1
    if info.lease_ref is not None:
        hold.named = pend.pools
    if warm:
        if now < HUGE_SPAN:
            pend.pools[0].wait_sum += now - pend.queued_at
        else:
            pend.pools[0].add_wait(now - pend.queued_at)
    s.adm_seq = next(sim.adm_counter)
    sim.admitted += 1
    A[SLOT_CACHED] = consumed
    s.pending = None
    s.qpool = None
    s.holds.append(hold)
    sim.make_ready(s)
