"""The cache of a pool: its entries (a session's own prefix, and dead remainders past a ``reuse``
bound), eviction in the pool's order until an allocation fits, spilling evicted units to a tier, and
``drop``. (The orders themselves are :mod:`serq_sim.policies.eviction`.)
"""

from __future__ import annotations

import math
from heapq import heapify, heappop, heapreplace

from ..compile import PULSE
from ..errors import SimError, not_an_amount, of_entry
from ..policies import evict_context
from ..policies.eviction import EvictionOrder, evict_pulse
from ..stages import Ctx, Job
from ..stats import HUGE_UNITS, PER_HUGE, add_units
from .exact import WIDE
from .model import EPS, INF, Entry, Pool, SpillMember

_PICK = EvictionOrder.pick
_ON_SHRINK = EvictionOrder.on_shrink


def make_room(sim, pool: Pool, need: float) -> None:
    """Evict cached entries (in the pool's order, per block from the tail) until ``need`` fits. The
    caller has brought the pool's statistics up to now (``pool.acc()``); the clock does not move here."""
    if pool.used + pool.cached + need > pool.limit:
        evict_for(sim, pool, need)


def evict_for(sim, pool: Pool, need: float) -> None:
    """:func:`make_room` once its test held (``need`` does not fit beside what is used and cached)."""
    if pool.lru:
        # evict lru with no stray (LruOrder): its pick is its first, it takes the blocks still short at
        # once (evict_amount), and evict is inlined (a hot path: every block a decoder grows on a full
        # cache): the same subtractions in the same order
        order = pool.evict
        e = order.first
        if e is not None:
            used = pool.used
            cap = pool.cap
            limit = pool.limit
            warm = sim.warm
            while True:
                amount = evict_amount(pool, e, used + pool.cached + need - cap)  # the rule: one function
                e.size -= amount
                pool.cached -= amount
                if warm:
                    if amount < HUGE_UNITS:  # stats.add_units, inlined
                        pool.evicted_units += amount
                    else:
                        pool.b_evicted += amount * PER_HUGE
                if e.size <= EPS:
                    evicted(sim, pool, e)
                if not (used + pool.cached + need > limit):
                    return
                e = order.first
                if e is None:  # nothing cached is left (no stray comes in here)
                    return
    order = pool.evict
    cap = pool.cap
    if pool.batch_room:
        # an order that evicts several blocks of its pick at once, on a pool with blocks that spills
        # nothing: evict inlined, as above, and the pick of the built-in ranking read here
        warm = sim.warm
        cls = type(order)
        shrink = order.on_shrink if (order.reads_size or cls.on_shrink is not _ON_SHRINK) else None
        ranked = cls.pick is _PICK
        while True:  # the test of the loop below held above
            if ranked and order.keyed:
                lists = order.ranked._lists  # EvictionOrder.pick, inlined
                e = lists[0][0][-1] if lists else None
            else:
                e = order.pick(pool)
            if e is None:
                return
            amount = evict_amount(pool, e, pool.used + pool.cached + need - cap)  # the rule: one function
            e.size -= amount
            pool.cached -= amount
            if warm:
                if amount < HUGE_UNITS:  # stats.add_units, inlined
                    pool.evicted_units += amount
                else:
                    pool.b_evicted += amount * PER_HUGE
            if e.size <= EPS:
                evicted(sim, pool, e)
            elif shrink is not None:
                shrink(e)
            if not (pool.used + pool.cached + need > cap + EPS):
                return
    if pool.spill is not None:
        # while it makes room, a spill that comes back to this pool (its own, or round a cycle of tiers)
        # finds none there (spill): writing it here would give the loop below the entry to evict again, at
        # this instant, for ever
        pool.making_room = True
        try:
            if getattr(order, "instant", False) and not order.keyed and _evict_at_instant(sim, pool, order, need):
                return
            while pool.used + pool.cached + need > cap + EPS:
                e = order.pick(pool)
                if e is None:
                    return
                evict(sim, pool, e, evict_amount(pool, e, pool.used + pool.cached + need - cap))
                if e.alive:
                    _block_taken(sim, pool)
        finally:
            pool.making_room = False
        return
    # the pick stays the same entry while it shrinks when the order's key is fixed and reads no size: its
    # blocks then go one by one in evict_blocks, as picking again for every block would take them
    if getattr(order, "instant", False) and not order.keyed and _evict_at_instant(sim, pool, order, need):
        return
    b = pool.block
    by_blocks = b is not None and not order.batch and order.fixed_key and not order.reads_size
    while pool.used + pool.cached + need > cap + EPS:
        e = order.pick(pool)
        if e is None:
            return
        if by_blocks:
            evict_blocks(sim, pool, e, need)
        else:
            evict(sim, pool, e, evict_amount(pool, e, pool.used + pool.cached + need - cap))
            if e.alive:
                _block_taken(sim, pool)


def _block_taken(sim, pool: Pool) -> None:
    """Part of an entry evicted, the entry left cached: a unit of the event's work (Simulation.pulse_out), as an
    entry evicted whole is (:func:`evicted`). An order whose key reads the size picks again for every block, so
    an entry of 2**59 blocks of 1 is as many picks in one admission: --max-wall and the progress bar read the
    clock among them."""
    sim.pulse -= 1
    if sim.pulse < 0:
        evict_pulse(sim, pool)


def _evict_at_instant(sim, pool: Pool, order, need: float) -> bool:
    """The loop of :func:`evict_for` for an order that scans its entries at every pick, whose keys cannot
    change while it makes room (``order.instant``: they read no draw and no observable): the entries are
    ranked once, by ``(key, seq)`` and then in the scan's order, and each pick is the least of them (an
    entry evicted in part ranked again when the keys read its size; a spill's writes go to other pools,
    none back to this one while it makes room), so making room for many entries
    costs a sort, not a scan of every entry for each. ``False`` (nothing evicted yet, or the rest left to
    the scan) when a key is NaN: the scan's comparisons decide then."""
    sim.pulse -= len(pool.own) + len(pool.dead)  # a key a unit of the event's work, as in the scan
    if sim.pulse < 0:
        evict_pulse(sim, pool)
    key = order.key
    heap = []
    for i, e in enumerate(pool.iter_entries()):
        k = key(e)
        for x in k:
            if x != x:
                return False
        heap.append((k, e.seq, i, e))
    heapify(heap)
    reads_size = order.reads_size
    cap = pool.cap
    while pool.used + pool.cached + need > cap + EPS:
        if not heap:
            return True
        top = heap[0]
        e = top[3]
        evict(sim, pool, e, evict_amount(pool, e, pool.used + pool.cached + need - cap))
        if not e.alive:
            heappop(heap)
            continue
        _block_taken(sim, pool)
        if reads_size:
            k = key(e)
            for x in k:
                if x != x:
                    return False
            heapreplace(heap, (k, top[1], top[2], e))
    return True


def evict_amount(pool: Pool, e: Entry, short: float) -> float:
    """How much of entry ``e`` one eviction takes when ``short`` units are missing: the whole entry on a
    pool without blocks; else from the entry's tail, one block (its prefix stays cached), or, for an
    order whose key does not change as the entry shrinks (``batch``) and without a spill, the blocks
    still short at once (what one block at a time would take, as the entry stays the one picked)."""
    b = pool.block
    if b is None:
        return e.size
    size = e.size
    if pool.batch_room:
        r = pool.round_up(short)  # (an infinite short stays: round_up leaves inf as it is)
        return r if r < size else size
    return size if size < b else b  # min(b, size)


def evict(sim, pool: Pool, e: Entry, amount: float) -> None:
    pool.acc()
    size = e.size
    e.size = size - amount
    if e.size == size and amount > 0.0 and pool.cap < WIDE:  # (an exact count, pools/exact.py, still moves)
        _no_room(sim, pool, size, amount)
    pool.cached -= amount
    if sim.warm:
        pool.evicted_units, pool.b_evicted = add_units(pool.evicted_units, pool.b_evicted, amount)
    if e.size <= EPS:
        evicted(sim, pool, e)
    else:
        pool.evict.on_shrink(e)
    if pool.spill is not None:
        spill(sim, pool, e, amount)


def _no_room(sim, pool: Pool, size: float, amount: float) -> None:
    """An eviction of ``amount`` units (a block) that leaves an entry of ``size`` units as it was, on a pool whose
    counts are doubles: the block is below what the doubles can take from the entry, so evicting it again and
    again (a block at a time, as a pool that spills evicts) would never make room: the run spun at one instant
    for ever (a pool of blocks of 1e-30 spilling an entry of 8 units). A run-time error at the pool."""
    from ..report import member_label

    raise sim.error(f"pool {member_label(pool)}: a block of {amount!r} units evicted from a cached entry of {size:g} "
                    f"units leaves it {size:g} (the block is below half the entry's precision in doubles, "
                    f"{math.ulp(size) / 2:g}): evicting a block at a time, as a pool that spills does, it would "
                    "never make room", span=pool.node.span)


def evict_blocks(sim, pool: Pool, e: Entry, need: float) -> None:
    """:func:`evict` of one block at a time from ``e`` while ``need`` does not fit and ``e`` is left, on a
    pool that spills nothing: the same subtractions in the same order, in locals (a hot path: a small
    pool under a keyed order gives hundreds of thousands of blocks a run)."""
    pool.acc()
    b = pool.block
    used = pool.used
    limit = pool.cap + EPS
    size = e.size
    cached = pool.cached
    warm = sim.warm
    units = pool.evicted_units
    if size > _BLOCKS_AT_ONCE * b:
        # many blocks (an entry of 10⁹ units in blocks of 1 took 10⁹ turns of the loop below, minutes in
        # one admission): when every amount is a whole number within the doubles' exact range, the loop's
        # subtractions are exact and its count is found at once, with the same result
        total = _whole_blocks(b, size, used, cached, need, limit, units if warm else 0.0)
        if total is None and pool.cap >= WIDE:  # an exact count (pools/exact.py)
            at_once = _exact_blocks(b, size, used, cached, need, limit)
            if at_once is not None:
                take, size = at_once
                pool.cached = cached - take  # (exact: an int off an exact count)
                if warm:
                    pool.evicted_units, pool.b_evicted = add_units(units, pool.b_evicted, float(take))
                e.size = size
                if size <= EPS:
                    evicted(sim, pool, e)
                return
        if total is not None:
            size -= total
            cached -= total
            if warm:
                units = _units_after(units, b, total)
            e.size = size
            pool.cached = cached
            pool.evicted_units = units
            if size <= EPS:
                evicted(sim, pool, e)
            return
    turns = PULSE
    while True:
        amount = min(b, size)
        size -= amount
        cached -= amount
        if warm:
            if amount < HUGE_UNITS:  # stats.add_units, inlined
                units += amount
            else:
                pool.b_evicted += amount * PER_HUGE
        if size <= EPS or not (used + cached + need > limit):
            break
        turns -= 1
        if not turns:  # PULSE blocks taken, units of the event's work (Simulation.pulse_out)
            turns = PULSE
            e.size = size
            pool.cached = cached
            pool.evicted_units = units
            sim.pulse -= PULSE
            if sim.pulse < 0:
                evict_pulse(sim, pool)
    e.size = size
    pool.cached = cached
    pool.evicted_units = units
    if size <= EPS:
        evicted(sim, pool, e)


#: an entry of more blocks than this is evicted by :func:`_whole_blocks` when it can be
_BLOCKS_AT_ONCE = 64
_EXACT = 2.0 ** 53


def _whole_blocks(b: float, size: float, used: float, cached: float, need: float, limit: float,
                  units: float) -> float | None:
    """What :func:`evict_blocks`' loop takes from an entry of ``size`` in blocks of ``b`` (the entry's tail, a
    block a turn, until ``used + cached + need <= limit`` or at most EPS of the entry is left), computed at
    once; ``None`` unless the amounts the loop changes (the entry, the pool's cached, its evicted units) are
    whole numbers of some power of two (a whole number, or a block of 0.5 and amounts in halves) within 2⁵³
    of that unit, on a pool below 2⁵³ (plain doubles): then each of the loop's subtractions and additions is
    exact, so taking the total once gives the same doubles. Its test, ``used + cached + need > limit``, is
    evaluated as the loop evaluates it (its sum may round: a pool of 4·10¹⁵ in blocks of 0.5 is 1.6·10¹⁶
    halves), at the turns a bisection picks: the test can only turn false as ``cached`` falls, since rounding
    is monotone."""
    if not limit < _EXACT:  # (a pool of 2⁵³ or more counts exactly: _exact_blocks)
        return None
    if not all(0.0 <= x <= _EXACT for x in (b, size, cached)):
        return None
    shift = _unit_shift(b, size, cached)
    bi, si, ci = (int(math.ldexp(float(x), shift)) for x in (b, size, cached))
    if not (bi >= 1 and si <= _EXACT and ci <= _EXACT):
        return None
    # the loop stops when what is left of the entry is at most EPS (its last block may be partial, and a
    # remainder of EPS or less is given back by evicted(), not taken): after turn `gone`, EPS in the same
    # units, floored, exactly (a whole number left is <= EPS when it is <= floor(EPS))
    p, q = EPS.as_integer_ratio()
    gone = max(1, -(-(si - (p << shift) // q) // bi))

    def fits(k: int) -> bool:  # the loop's test after k turns, on the doubles it holds then
        return not (used + math.ldexp(float(ci - min(k * bi, si)), -shift) + need > limit)

    # or at the first turn k (at least 1) after which the need fits
    if fits(gone):
        lo, hi = 1, gone  # fits(hi); the first k that fits is in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if fits(mid):
                hi = mid
            else:
                lo = mid + 1
        gone = lo
    return math.ldexp(float(min(gone * bi, si)), -shift)


def _unit_shift(*xs: float) -> int:
    """The least ``k`` for which every finite ``x`` of ``xs`` is a whole number of ``2**-k`` (0 for whole
    numbers, 1 for halves): the unit :func:`_whole_blocks` and :func:`_units_after` count in."""
    shift = 0
    for x in xs:
        d = float(x).as_integer_ratio()[1]  # (a power of two)
        if d > 1:
            shift = max(shift, d.bit_length() - 1)
    return shift


def _units_after(units: float, b: float, total: float) -> float:
    """The evicted units after :func:`evict_blocks`' loop took ``total`` in blocks of ``b`` (``units += amount``
    a turn: ``b``, and the rest of a partial last block), in few steps. Within 2⁵³ of a unit that makes them
    whole, the sum at once; beyond, the doubles' sums a binade at a time: adding ``b`` moves by one step
    while the sum stays in the binade, once two steps agree (a tie to even may change the first), or by
    none (``b`` below half the spacing: stuck)."""
    if math.ldexp(units + total, _unit_shift(units, b, total)) < _EXACT:
        return units + total  # every sum exact (units + total is then exact too)
    from fractions import Fraction

    full = total // b  # (floor of the exact quotient: fmod is exact)
    rest = math.fmod(total, b)

    n = int(full)
    u = units
    while n:
        v = u + b
        n -= 1
        if v == u:  # each addition rounds back to u: stuck
            break
        u = v
        if n < 2:
            continue
        s = (u + b) - u  # (exact: u <= u + b <= 2u once u >= b)
        t = u + s
        if s == 0.0 or u < b or (t + b) - t != s:
            continue  # (a tie to even whose step changes, or a binade's end: one addition a turn)
        # two equal steps: then every step is s while the sum stays below the binade's end (its spacing sp
        # decides each rounding alike); counted exactly in integers of sp
        e = math.frexp(u)[1]  # u in [2**(e-1), 2**e): 2**52 to 2**53 spacings
        sp = math.ldexp(1.0, e - 53)
        ui, si = int(u / sp), int(s / sp)
        k = min(max(0, math.ceil((2**53 - ui - Fraction(b) / Fraction(sp)) / si)), n)
        u = math.ldexp(float(ui + k * si), e - 53)
        n -= k
    return u + rest if rest else u


def _exact_blocks(b: float, size: float, used, cached, need: float, limit: float) -> tuple[int, float] | None:
    """:func:`_whole_blocks` on a pool whose count is exact (a cap of 2⁵³ or more, pools/exact.py), where the
    loop's doubles are not: an entry of 2⁵⁹ units less a block of 1 is 2⁵⁹ again, so the loop took a block a
    turn off the exact count and none off the entry, some 2⁵⁹ turns (a run that never ended). ``(taken, left)``:
    the whole blocks the loop would take, counted exactly (the first k after which used + cached - k b + need
    <= limit, at least 1), and what is left of the entry, a double; when that is no double it is the one
    below, and the blocks taken are that much more (exact, so the pool's count stays the sum of its
    entries'). ``None`` unless the block, the entry, the need and the counts are whole numbers."""
    from .exact import _exact

    if not (1.0 <= b < INF and b.is_integer() and 0.0 <= size < INF and size.is_integer() and 0.0 <= need < INF
            and need.is_integer() and limit < INF):
        return None
    u, c = _exact(used), _exact(cached)
    if type(u) is not int or type(c) is not int:
        return None
    bi, si = int(b), int(size)
    over = u + c + int(need) - int(limit // 1)
    take = max(1, -(-over // bi)) * bi
    if take >= si:
        return si, 0.0
    left = float(si - take)
    if left > si - take:  # rounded up: the double below, and that much more taken
        left = math.nextafter(left, 0.0)
    return si - int(left), left


def evicted(sim, pool: Pool, e: Entry) -> None:
    """``e``, evicted down to nothing (what is left, at most EPS, given back), leaves the pool."""
    pool.cached -= e.size
    e.size = 0.0
    e.alive = False
    if e.dead:
        del pool.dead[e.eid]
    else:
        del pool.own[e.owner.serial]
    pool.evict.on_remove(e)
    if sim.warm:
        pool.evicted_entries += 1
    # an entry evicted is a unit of the event's work (Simulation.pulse_out): one admission may evict
    # millions of them
    sim.pulse -= 1
    if sim.pulse < 0:
        evict_pulse(sim, pool)


class SpillWrite(Job):
    """A spill's write on its link (an ownerless job): when it completes, what is left of the units it
    writes (``entry``, pending in ``tier``) lands there (:func:`land`). ``key`` is the session whose own
    prefix the units join, or ``None`` for a dead remainder's (they stay dead)."""

    __slots__ = ("tier", "entry", "key")

    def on_done(self, sim) -> None:
        land(sim, self.tier, self.entry, self.key)


def spill(sim, pool: Pool, e: Entry, units: float) -> None:
    """``units`` of entry ``e`` evicted from ``pool`` are spilled: written to the tier over the link (the
    pool's ``spill TIER via LINK (work) when (pred)``), the rule of language.txt's spill and
    pool-reference.txt's (docs/language.md: what a spill writes, and when it lands).

    ``pred`` reads ``size`` = the units evicted. The tier takes what fits after evicting its own entries
    (a spill never breaks its invariant), in whole blocks of its own (its entries are kept in blocks, as a
    release caches them: rounded down); a tier that is itself making room (:func:`evict_for`: the spill
    came back to it) has none. ``work`` reads ``size`` = the units written, and is what the write puts on
    the link. The units written are cached in the tier at once (they take its room: counted, evictable),
    but pending, unusable, until the write completes; then they land (:func:`land`). Units evicted from an
    entry whose own write has not landed are not spilled on: they were never in the tier."""
    if e.pending:
        return
    tier, link, work_fn, when_fn = pool.spill
    ctx = Ctx()
    try:  # the clauses read the entry's session: their errors name it (errors.of_entry)
        owner, attrs = evict_context(ctx, e, units, sim.now)
        if when_fn(owner, attrs, ctx) == 0:
            return
        if type(tier) is not Pool:  # a member named by a computed index (model.SpillMember), at this moment
            tier = tier.at(sim, owner, attrs, ctx)
        if type(link) is SpillMember:
            link = link.at(sim, owner, attrs, ctx)
        if tier.making_room:
            return
        room = +(tier.cap - tier.used)  # (a plain float: the count may be exact, exact.Units; size reads it)
        units = min(units, max(room, 0.0))
        if tier.block is not None:
            units = tier.round_down(units)
        if units <= EPS:
            return
        ctx.size = units
        work = work_fn(owner, attrs, ctx)
        if not work >= 0.0:  # an amount, as a run's work is (errors.work_message)
            from ..report import member_label

            raise sim.error(f"pool {member_label(pool)}: the spill's work is {not_an_amount(work)}",
                            span=getattr(pool.node.spill.work, "span", None) or pool.node.span)
    except SimError as x:
        raise of_entry(sim, x, e) from None
    tier.acc()
    make_room(sim, tier, units)
    # (make_room evicts every entry if it must: the room for units was there beside what is used)
    units = min(units, +(tier.cap - tier.used - tier.cached))
    if tier.block is not None:
        units = tier.round_down(units)
    key = e.owner.serial if (not e.dead and e.owner is not None) else None
    ne = None
    if units > EPS:
        ne = Entry(units, sim.now, next(sim.release_counter), e.owner, e.snap, next(sim.eid_counter), True)
        ne.pending = True
        tier.dead[ne.eid] = ne
        tier.cached += units
        tier.evict.on_insert(ne)
    if sim.warm:
        pool.spills += 1
    if work > 0.0:
        w = SpillWrite(None, work, "plain", None, sim.now)
        w.tier, w.entry, w.key = tier, ne, key
        sim.start_job(link, work, w)
    elif ne is not None:  # a write of no work completes at once (as a run of zero work does)
        land(sim, tier, ne, key)


def land(sim, tier: Pool, ne: Entry | None, key) -> None:
    """A spill's write has completed: what is left in ``tier`` of the units it wrote (``ne``; the tier
    may have evicted some or all of them meanwhile) becomes usable. A dead remainder's units stay dead;
    a session's join its own prefix there (``key`` its serial), as one entry of the two sizes with the
    later release time and order of the two (the spill's, unless the session cached there since), or
    become it."""
    if ne is None:
        return
    ne.pending = False
    if not ne.alive or key is None:
        return
    tier.acc()
    order = tier.evict
    del tier.dead[ne.eid]
    order.on_remove(ne)
    old = tier.own.get(key)
    if old is not None:
        old.alive = False
        order.on_remove(old)
        late = old if old.seq > ne.seq else ne
        ne = Entry(old.size + ne.size, late.last, late.seq, ne.owner, late.snap, next(sim.eid_counter))
    else:
        ne.dead = False
    tier.own[key] = ne
    order.on_insert(ne)


def drop(sim, s, pool: Pool) -> None:
    e = pool.own.pop(s.serial, None)
    if e is not None:
        pool.acc()
        e.alive = False
        pool.evict.on_remove(e)
        pool.cached -= e.size


def cache_value(sim, s, info):
    """The ``cache (ℓ)`` length of the hold ``info`` that ``s`` releases, or None without a cache clause."""
    if info.cache is None:
        return None
    return cache_length(sim, s, info.cache, info.at["cache"])


def cache_length(sim, s, fn, span, where: str = "") -> float:
    """A ``cache (ℓ)`` clause's length ``fn`` read as ``s`` releases (the end of a hold's scope, a
    ``release``, a lease's end, a preemption): the one rule of every release. A NaN is the run-time error
    at ``span``, where the clause's expression is written (``where`` says at which moment, when not its
    scope's end); a negative length caches nothing, as 0 does (language.txt §3: ``min(ℓ, computed)`` units
    stay cached, a bound), and the report warns of it once for the clause (:func:`clamped`)."""
    v = fn(s, s.attrs, sim.null_ctx)
    if v != v:
        raise sim.error("the cache length is NaN" + where, None, s, span)
    if v < 0.0:
        clamped(sim, s, "cache", span, v)
        return 0.0
    return v


def clamped(sim, s, clause: str, span, v: float) -> None:
    """Count a negative value of a hold's ``clause`` (``"cache"`` or ``"reuse"``, the bounds a negative value
    of which is taken as 0), written at ``span``, that ``s`` read at this moment: the first one's time,
    session and value are kept for the report's warning (code ``negative-bound``, notes.negative_bounds)."""
    key = (clause, id(span))
    seen = sim.clamped.get(key)
    if seen is None:
        sim.clamped[key] = [clause, span, sim.now, s.serial, v, 1]
    else:
        seen[5] += 1
