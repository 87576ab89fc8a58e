"""Growth and preemption: ``load`` and ``grow`` inside a hold, a grow that does not fit preempting per
the pool's policy (or waiting as a grower), the victim candidates and their computed positions, the
preemption of a victim (released down to the preempted hold, its computed prefix cached, re-queued at the
head or the tail) and the ``stuck`` count.
"""

from __future__ import annotations

import math
from collections import deque

from ..errors import Preempted, SimError, not_bookable, show
from ..orders import admission_order
from ..stages import rank_seq
from ..status import GROWING, STAGE
from . import cache, release
from .exact import WIDE
from .model import EPS, INF, NONE_YET, SLOT_COMPUTED, Pool, Slot, refused_amount


def held_for(sim, s, pool: Pool, what: str, x: float, sid: int):
    """``(index of the hold, slot)``: the innermost hold of ``s`` on ``pool`` that statement ``what``
    (``load``, ``grow``) of amount ``x`` acts on; outside one, or with an amount the pool refuses
    (:func:`.model.refused_amount`: NaN or negative; a grow's infinite amount on a pool without a cap, which
    the pool would book), the statement's run-time error. (An infinite load books nothing: it does not fit
    the allocation, :func:`load`'s error.)"""
    hi, slot = release.innermost(s, pool)
    if slot is None or not 0.0 <= x < INF and refused_amount(pool.cap, x, what == "grow"):
        from ..report import member_label  # (an error names the member, kv[1], as the report's tables do)

        name = member_label(pool)
        if slot is None:
            raise sim.error(f"{what} {name}: outside a hold of {name}", sid, s)
        raise sim.error(f"{what} {name}: the amount is {not_bookable(x)}", sid, s)
    return hi, slot


def load(sim, s, pool: Pool, n: float, sid: int) -> None:
    """``load``: the innermost hold's position on ``pool`` advances by ``n``, within its allocation."""
    hi, slot = held_for(sim, s, pool, "load", n, sid)
    if slot.pos + n > slot.alloc + EPS:
        from ..report import member_label

        if slot.pos > 0.0 and not s.holds[hi].grown:
            # nothing advanced the hold since its admission: its position is the session's own prefix it
            # found cached then (a hold with `cache` and no `reuse` bound consumes all of it), which a
            # program that loads the whole sequence again (a transfer re-run after a preemption) overlooks
            raise sim.error(f"load {member_label(pool)} ({show(n)}): the hold has {show(slot.alloc)} allocated and "
                            f"{show(slot.pos)} computed, the session's own prefix it found cached when it was "
                            "admitted (`cached` reads it; a `reuse` bound limits it), and a load adds to that; "
                            "a load must fit the allocation (load what the prefix lacks, or grow first)", sid, s)
        raise sim.error(f"load {member_label(pool)} ({show(n)}): the hold has {show(slot.alloc)} allocated and "
                         f"{show(slot.pos)} computed; a load must fit the allocation (grow first)", sid, s)
    slot.pos += n
    s.holds[hi].grown = True


def grow(sim, s, pool: Pool, d: float, sid: int):
    """``grow``: ``None`` when done, ``True`` when the session waits, or the :class:`Preempted` to
    raise when the grower preempted itself."""
    _hi, slot = held_for(sim, s, pool, "grow", d, sid)
    return grow_slot(sim, s, slot, d, None, sid)


def grow_slot(sim, s, slot: Slot, d: float, job, sid: int | None = None, waiting: bool = False):
    """Grow ``slot`` by ``d`` (rounded to blocks), preempting per the pool's rule. Returns ``None``
    when it grew, ``True`` when the grower waits (queued as a grower), or the :class:`Preempted`
    exception when the grower itself was the victim (already thrown if its generator is not
    running). ``waiting``: the retry of a grower that waits (:func:`retry_growers`): it grows if it
    fits, else ``True`` with nothing done (it stays where it waits; no victim is asked for): the one
    rule of a growth's blocks and fit for both. A growth that fits grows at once, whether growers of the
    pool wait or not (language.txt §3:
    a grow waits only when it does not fit; the waiting growers are retried in the order they stalled,
    the head blocking the rest, by :func:`retry_growers`). An infinite growth on a pool without a cap (a
    growing run's tokens with an infinite budget and work, or a sum past the float range; a ``grow``
    statement's infinite amount is refused before, by :func:`held_for`) is the run-time error of the run
    ``job``, else of the statement ``sid``: the pool books only finite amounts
    (:func:`.model.refused_amount`)."""
    pool = slot.pool
    alloc = slot.alloc
    x = alloc + d
    if pool.block is not None:
        x = pool.round_up(x)
    need = x - alloc
    exact = pool.cap >= WIDE
    if exact:
        x, need = exact_growth(pool, alloc, d, x, need)
    if need <= EPS:
        return None
    if need == INF and refused_amount(pool.cap, need):
        from ..report import member_label

        name = member_label(pool)
        # a finite growth whose sum with the allocation is beyond the doubles (1e308 grown by 1e308): the
        # growth is not infinite, the hold's units would be (the pool counts its total exactly; a hold's own
        # allocation is a double)
        why = (f"the growth of {name} is {not_bookable(need)}" if not d < INF else
               f"the growth of {name} by {show(d)} makes the hold's units {show(alloc)} + {show(d)}, beyond the "
               "largest double: a hold on a pool without a cap holds a finite amount")
        raise sim.error(why, job.span if job is not None else sid, s)
    while True:
        used = pool.used
        limit = pool.limit
        if used + pool.reserved - slot.u + need <= limit:
            take_fitting(sim, pool, used, need)  # it fits: allocate, evicting to make room
            if exact:
                slot.alloc = x  # (the pool booked x - alloc exactly)
            else:
                slot.alloc += need
            if pool.reserve_held:
                u = max(slot.r - slot.alloc, 0.0)
                pool.reserved += u - slot.u
                slot.u = u
            return None
        if waiting:
            return True
        try:
            victim = pool.preempt.victim(pool, s)
        except SimError as e:  # (a key's error: noted with the grower, its statement and the time)
            from ..policies.preemption import chosen_for

            raise chosen_for(e, sim, pool, s, job.span if job is not None else sid) from None
        if victim is None:
            s.status = GROWING
            s.grow = (pool, slot, d, job)
            if pool.growers is NONE_YET:
                pool.growers = deque()
            pool.growers.append(s)
            if not pool.hot:
                sim.pool_mark(pool)
            return True
        if victim is s:
            kept = kept_through_preemption(s, pool)
            if x + kept > pool.limit:
                return preempt_outgrown(sim, s, pool, x, kept)
        exc = preempt(sim, victim, pool, victim is s, job)
        if victim is s:
            return exc


def preempt_outgrown(sim, s, pool: Pool, x: float, kept: float) -> Preempted:
    """Preempt ``s``, the victim of its own growth on ``pool`` to ``x`` units, when those units with the
    ``kept`` ones the session keeps there through the preemption (:func:`kept_through_preemption`) are above
    the cap: no other holder's leaving makes room, and the hold, executed again, grows into this preemption
    again. language.txt §3 keeps that livelock (the hold is re-queued per the policy and re-executed) and
    ``stuck`` names it: a stuck session preempted so is counted livelocked too, once (``Pool.livelocked``, its
    serial, with the units of the first, for the stuck warning's words, notes.stuck). In a run
    with no horizon it would never end: ``s.outgrew`` is set before the preemption re-executes the hold, whose
    joining the queue again is then the run-time error (admission.outgrown), its units and reserve judged
    first (docs/language.md, "A hold that outgrows its pool")."""
    if sim.horizon == INF:
        s.outgrew = (pool, x, kept)
    exc = preempt(sim, s, pool, True)
    if s.stuck and s.serial not in pool.livelocked:
        if pool.livelocked is NONE_YET:
            pool.livelocked = set()
        pool.livelocked.add(s.serial)
        if pool.livelock_units is None:
            pool.livelock_units = x + kept
    return exc


def kept_through_preemption(s, pool: Pool) -> float:
    """The units of ``pool`` that session ``s`` keeps when it is preempted there (:func:`preempt` releases
    its holds from the innermost one on the pool): those of its outer holds on the pool and of its leases
    there, with their reserve where the pool counts it (``reserve held``). A hold of 10 inside a hold of 60
    on a pool of 100 that grew to 50 had units (50) below the cap, and was admitted again beside the 60
    and preempted at 50 again, for ever."""
    hi, _slot = release.innermost(s, pool)
    held = pool.reserve_held
    kept = 0.0
    for h in s.holds[:hi]:
        for slot in h.slots:
            if slot.pool is pool:
                kept += slot.alloc + (slot.u if held else 0.0)
    for lease in s.leases:
        slot = lease.slot
        if slot.pool is pool:
            kept += slot.alloc + (slot.u if held else 0.0)
    return kept


def exact_growth(pool: Pool, alloc: float, d: float, x: float, need: float) -> tuple[float, float]:
    """The hold's units after a growth by ``d`` and what the pool books, ``(x, need)``, on a pool whose count
    is exact (a cap of 2⁵³ or more, pools/exact.py), given the doubles' ``x`` (``alloc + d``, rounded up to
    blocks) and ``need`` (``x - alloc``). A hold's units are a double, so ``x`` is one; the pool books
    ``x - alloc`` exactly, the difference the hold's units make (the double ``x - alloc`` may be another:
    a hold of 0.1 grown by 1e20 booked 1e20 and released 1e20 - 0.1 rounded, which is 1e20, so used(P) read
    0.1 with no hold left). Without blocks, an ``x`` the sum rounded down is the next double up, as a block
    rounds a growth up: a hold of 2**59 grown by 1 was 2**59 again, the growth booked as nothing (it fitted a
    full pool, no preemption); it takes 2**59 + 128 now. With blocks, from 2**53 (where the doubles' spacing
    swallows whole units: 2**59 + 1 in blocks of 1 was 2**59), the next double up rounded up to blocks again;
    below, the blocks' own rounding (:meth:`Pool.round_up`) as ever. inf or NaN: as the doubles give them.
    A whole ``alloc`` and ``d`` with ``alloc <= x < 2⁵³`` (every growth of tokens in blocks of tokens: the hot
    path) are returned as given, at once: ``alloc + d`` was exact (the doubles hold every whole number there) and
    so is ``x - alloc`` (a multiple of the spacing at ``x``, at most ``x``)."""
    if (type(alloc) is float and type(d) is float and type(x) is float and 0.0 <= d and 0.0 <= alloc <= x < WIDE
            and alloc.is_integer() and d.is_integer()):
        return x, need
    from .exact import _exact, _make

    a, g, e = _exact(alloc), _exact(d), _exact(x)
    if a is None or g is None or e is None:
        return x, need
    b = pool.block
    while e < a + g and (b is None or x >= WIDE):
        y = math.nextafter(x, INF)
        if b is not None:
            z = pool.round_up(y)
            if z > x:  # (a block no double near x is a multiple of: the next double)
                y = z
        x = y
        e = _exact(x)
        if e is None:  # (beyond the largest double: the caller's error of a hold's units beyond it)
            return x, INF
    if _exact(need) != e - a:
        need = _make(e - a)
    return x, need


def take_fitting(sim, pool: Pool, used: float, need: float) -> None:
    """Allocate ``need`` units on ``pool`` (``used``: its units in use now) where they fit beside what is
    used and reserved: the pool's statistics brought up to now, cached entries evicted in the pool's order
    until the allocation fits beside them, the units taken. The allocation of a growth that fits
    (:func:`grow_slot`); also several such growths at once, when each is known to fit (lazy growers at a
    block boundary in a quiet round): with whole blocks their summed need evicts exactly what they would
    evict one after the other."""
    now = sim.now
    dt = now - pool.t_last
    if dt > 0.0:  # pool.acc(), inlined (a hot path: every block a decoder grows): the same sums
        if dt < pool.span_lim:
            pool.a_used += pool.used * dt
            pool.a_cached += pool.cached * dt
            if not pool.unqueued:
                pool.a_queue += (len(pool.front) + len(pool.queue)) * dt
            pool.a_holders += len(pool.holders) * dt
        else:
            pool.acc_huge(dt)
    pool.t_last = now
    if used + pool.cached + need > pool.limit:  # cache.make_room(sim, pool, need)
        cache.evict_for(sim, pool, need)
    pool.used = used + need


def retry_growers(sim, pool: Pool) -> None:
    """Grow the waiting growers of ``pool`` in the order they came, while the head's growth fits."""
    while pool.growers:
        s = pool.growers[0]
        _p, slot, d, job = s.grow
        if grow_slot(sim, s, slot, d, job, None, True) is True:
            return  # it does not fit yet: the head blocks the rest
        pool.growers.popleft()
        s.grow = None
        if job is not None:
            s.status = STAGE
            s.job = job
        else:
            sim.make_ready(s)


def preempt_candidates(sim, pool: Pool):
    """The victim candidates of ``pool`` in admission order: ``[(session, slot)]``. On a pool that is
    some step stage's memory, the residents there in the order of their sessions' latest admission
    (the engine's serving order); on any other pool, its holders in the order the pool admitted them
    (``pool.holders`` is in that order), a session with several holds there placed by its latest."""
    seen = {}
    if pool.memory_of:
        for s, slot, _job in resident_slots(pool):
            seen[s] = slot  # the innermost (latest) slot wins
        return sorted(seen.items(), key=_by_admission)
    for slot in pool.holders:
        if slot.lease:
            continue
        s = slot.owner
        seen.pop(s, None)  # placed by its latest admission here
        seen[s] = slot
    return list(seen.items())


def _by_admission(kv) -> int:
    return kv[0].adm_seq


_CANDIDATE = (STAGE, GROWING)


def resident_slots(pool: Pool):
    """The holders of ``pool``, some step stage's memory, that are preemption candidates there, as
    ``(session, slot, job)`` in the pool's order: not a lease, and the session's job is at one of the
    stages whose memory the pool is, being served or waiting to grow."""
    engines = pool.memory_of
    for slot in pool.holders:
        if slot.lease:
            continue
        s = slot.owner
        job = s.job
        if job is not None and job.stage in engines and s.status in _CANDIDATE:
            yield s, slot, job


def last_candidate(sim, pool: Pool):
    """The session of the last of ``sim.preempt_candidates(pool)`` (``None`` when there is none) without
    building their list: on a step stage's memory pool the candidate admitted last (the greatest
    ``adm_seq``); on any other pool the owner of the last holder's slot that is not a lease. ``False``
    when the engine's candidates are not :func:`preempt_candidates`, or two of them share an admission
    (the list's order then decides): ask for the list."""
    if type(sim).preempt_candidates is not preempt_candidates:
        return False
    engines = pool.memory_of
    if not engines:
        for slot in reversed(pool.holders):
            if not slot.lease:
                return slot.owner
        return None
    if len(engines) == 1:
        engine = engines[0]
        found = _last_ranked(pool, engine) if engine.ranked else _last_resident(pool, engine)
        if found is not None:
            return found
    best = None
    bseq = None
    for s, _slot, _job in resident_slots(pool):
        q = s.adm_seq
        if best is None or q > bseq:
            best, bseq = s, q
        elif s is not best and not q < bseq:
            return False  # the same admission, or one that does not compare
    return best


def _last_resident(pool: Pool, engine):
    """:func:`last_candidate` on the memory pool of one step stage whose residents are in admission order
    (their rank is their session's ``adm_seq``: a stage that ranks by no kept keys), walked from the last:
    the first candidate met is the one admitted last, so a burst of preemptions at one instant does not
    walk every holder for each victim. ``False`` for two candidates of one admission, ``None`` when the
    walk cannot tell (a rank that is not the session's admission now, or no candidate at the stage: the
    holders' walk decides)."""
    return _last_of(pool, reversed(engine.residents), _rank_is_seq)


def _last_ranked(pool: Pool, engine):
    """:func:`_last_resident` on the memory pool of one step stage whose residents are ranked by kept serve
    keys: walked from the last of its residents in admission order (orders.admission_order: made at the
    first call and kept as jobs join and leave), so a burst of preemptions does not walk every holder for each
    victim. The same answers as the holders' walk."""
    order = admission_order(engine)
    if order is None:
        return None
    return _last_of(pool, reversed(order.jobs), rank_seq)


def _rank_is_seq(job):
    return job.rank


def _last_of(pool: Pool, jobs, seq_of):
    """The walk of :func:`_last_resident` over ``jobs``, a stage's residents from the last admitted, whose
    admission at attach ``seq_of(job)`` gives."""
    best = None
    bseq = None
    for job in jobs:
        s = job.owner
        if s is None:
            continue
        q = s.adm_seq
        if q != seq_of(job):
            return None
        if best is not None and q != bseq:
            return best
        if s is best or s.job is not job or s.status not in _CANDIDATE or not holds_on(s, pool):
            continue
        if best is not None:
            return False  # the same admission: the list's order decides
        best, bseq = s, q
    return best


def holds_on(s, pool: Pool) -> bool:
    """Whether session ``s`` holds an allocation on ``pool`` that is not a lease (a preemption candidate
    there, when its job is at the stage whose memory the pool is)."""
    for h in s.holds:
        for sl in h.slots:
            if sl.pool is pool and not sl.lease:
                return True
    return False


def computed_position(s, slot: Slot) -> float:
    """The position ``slot``'s hold has computed: its position less the tokens the step iteration
    being planned or run gives the session's growing job there (applied only when it ends)."""
    job = s.job
    if job is not None and job.assigned > 0 and job.growing is slot.pool and job.stage is not None:
        gslot = job.gslot
        if gslot is None or gslot is slot:
            return slot.pos - job.assigned
    return slot.pos


def scheduled_tokens(victim, slot: Slot, by) -> float:
    """The tokens the planning in progress of a step stage gave ``victim``'s growing run on ``slot``'s pool
    before the growth of ``by`` (the grower's job, or None) asks for a victim: the position the planning
    advanced its hold by (``assigned``), or the one token of a lazy decoder that planning counted (every
    lazy decoder in the admissions of a lazy planning, ``fast``; in the walk of the lazy-grower planning,
    ``gwalk``, the ones before the grower in serving order, whose tokens the walk has counted). 0 when the
    victim's stage is not planning (an iteration that runs: its tokens are the running iteration's), or its
    run grows another pool. What ``cache scheduled`` caches besides the computed prefix (:func:`preempt`)."""
    job = victim.job
    if job is None or job.growing is not slot.pool:
        return 0.0
    stage = job.stage
    if stage is None or not getattr(stage, "planning", False):
        return 0.0
    gslot = job.gslot
    if gslot is not None and gslot is not slot:
        return 0.0
    if job.assigned > 0.0:
        return job.assigned
    if job.lz >= 0:
        if stage.fast:
            return 1.0
        if stage.gwalk and by is not None and by.stage is stage and by is not job:
            from ..step.common import position

            res = stage.residents
            return 1.0 if position(res, job) < position(res, by) else 0.0
    return 0.0


def preempt(sim, victim, pool: Pool, own: bool = False, by=None) -> Preempted:
    """Preempt ``victim`` on ``pool``; ``own``: by its own growth (the grower its own victim); ``by``: the
    grower's job, when a run grows. A second preemption at no greater position counts the session ``stuck``
    (once); by its own growth it is noted in ``Pool.self_stuck`` too (the stuck warning's count where no hold
    has a position, notes.stuck). Under ``cache scheduled`` (the pool's option) the preempted hold caches its
    computed prefix and the tokens the step stage's planning in progress had given it
    (:func:`scheduled_tokens`); ``computed``, the attribute, is the computed prefix alone."""
    hi, slot = release.innermost(victim, pool)
    given = scheduled_tokens(victim, slot, by) if pool.node.cache_scheduled and not own else 0.0
    sim._detach(victim)
    computed = slot.pos
    pp = victim.preempt_pos
    if pp is None:
        pp = victim.preempt_pos = {}
    prev = pp.get(pool)
    if computed > EPS:
        pool.positioned = True
    if prev is not None and computed <= prev + EPS:
        if not victim.stuck:
            victim.stuck = True
            pool.stuck += 1
        if own and victim.serial not in pool.self_stuck:
            if pool.self_stuck is NONE_YET:
                pool.self_stuck = set()
            pool.self_stuck.add(victim.serial)
    pp[pool] = computed
    victim.attrs[SLOT_COMPUTED] = computed
    if given > 0.0:
        # cached as if computed (vLLM hashes a block when allocate_slots gives it for the tokens a step
        # schedules): the allocation covers them, the planning grew it so; the slot goes with the hold
        slot.pos = computed + given
    while len(victim.holds) > hi:
        h = victim.holds.pop()
        # the aborted holds cache their computed prefix (their position), as a hold does whose
        # body advanced it, whether or not this one's had
        h.grown = True
        release.release_hold(sim, victim, h)
    if sim.warm:
        pool.preemptions += 1
    sim.preempt_count += 1
    victim.requeue = pool.preempt.requeue
    victim.tokp = True  # its next prefill's token continues the request (step/tokens.py)
    exc = Preempted(hi)
    if victim.gen.gi_running:
        return exc
    sim._throw(victim, exc)
    return exc
