"""Lazy decoding and quiet rounds (docs/simulator.md, "Lazy decoding and quiet rounds"): a decoder
that grows nothing and has a whole number of tokens left is not visited per iteration."""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from heapq import heappush as _heappush
from math import nextafter
from time import monotonic as _monotonic

from serq_ir import nodes as N

from ..compile import PULSE, ZENO, instant_span, reads, reads_context
from ..errors import show
from ..policies.preemption import NoPreemption, PreemptByKeys
from ..pools import admission
from ..pools.growth import grow_slot, take_fitting
from ..stages import Job
from ..stats import HUGE_SPAN
from ..status import GROWING
from .common import (
    _COST_NAMES,
    _EXACT,
    _INF,
    _PRE_NAMES,
    _TRACE,
    EPS,
    _not_quiet,
    _not_steady,
    _rank,
    _unplan,
    constant,
    iteration_sums,
    position,
    tally_class,
    tally_rounds,
)

#: no end to a stretch of quiet rounds but its own (no bound on events): a round count never reached
_NO_END = 1 << 62

#: under ``--max-wall``, a stretch of quiet rounds reads the clock every this many rounds (a round is a few
#: µs; :data:`~serq_sim.compile.PULSE`, the countdown's longest): a stretch is one event, and one request
#: decoding 10**8 tokens alone is a stretch of 10**8 rounds, which ran 123 s under ``--max-wall 2``
_WALL_ROUNDS = PULSE

#: on a memory pool without a cap (``glazy_wide``), the bound below which its units in use and reserved, with a
#: block for every resident, keep the lazy planning exact: every allocation, position and sum of them a lazy job
#: enters is then a whole number below 2**53, exact in any order (a planning adds at most a block to each
#: resident's allocation; a larger sum is added in the order the per-job planning adds it: ``_wide_sums``)
_WIDE_LIM = 2.0**52


def _position_free(pol) -> bool:
    """Whether preemption policy ``pol`` asks nothing a lazy grower's stale position would answer: none, or
    keys that do not read ``position`` (a plugin's policy might ask anything)."""
    if type(pol) is PreemptByKeys:
        return not reads_context(pol.node.keys, ("position",))
    return type(pol) is NoPreemption


#: up to this many residents, a planning finds its walk's positions with ``list.index`` (fast on a short
#: list); beyond it, in one pass or by bisection (``_positions``, ``common.position``)
_FEW = 64


def _positions(order: list[Job], sub: list[Job]) -> list[int]:
    """The positions in ``order`` of ``sub``, a subsequence of it in its order (as ``eager`` is of the
    residents), found in one pass; by ``position`` each when it is not one (a rank that does not
    compare)."""
    out = []
    if sub:
        it = iter(sub)
        nxt = next(it)
        for i, j in enumerate(order):
            if j is nxt:
                out.append(i)
                nxt = next(it, None)
                if nxt is None:
                    return out
        return [position(order, j) for j in sub]
    return out


class _EveryRound:
    """The rounds a busy stretch plans (:meth:`LazyDecoding._quiet_rounds`): every one, with the lazy
    growers at a block boundary there (``wake``'s list), or ``()`` when none are."""

    __slots__ = ("wake",)

    def __init__(self, wake: dict[int, list[Job]]):
        self.wake = wake

    def get(self, k: int):
        return self.wake.get(k, ())


class LazyDecoding:
    """The lazy planning of a step stage (a part of :class:`~serq_sim.step.StepStage`)."""

    def _start_lazy(self, budget: float, chunk: float) -> bool:
        """Plan and start an iteration in which every lazy job gets its token (``try_start`` for a stage
        with lazy decoding and no growers): the residents that are not lazy are served in serving order,
        each seeing the budget the jobs before it left, lazy ones included; then the admissions, as in
        ``_plan``. ``False`` (nothing planned) when the per-job planning must run instead: a lazy job would
        go without its token, or a resident's tokens are not a whole number.

        ``budget`` is a whole number or ``inf``; with the residents' tokens whole numbers too, and their sum
        with the lazy jobs' below 2**53 (else planned per job), every ``left`` and every sum below is exact,
        so it equals what the per-job order computes; the tokens of the jobs admitted here are added after,
        in the per-job order."""
        rounds = self.rounds
        eager = self.eager
        if self.tpend:
            self.tpend = []
        # decoders that have become lazy (none grows: there are no growers); every lazy job is a decoder, so
        # with as many decoders as lazy jobs there is none to look for among the others (an overloaded stage's
        # hundreds of prefills are not walked at every planning)
        if eager and self.ndec > self.nlazy:
            keep = None
            now = self.sim.now
            for k, job in enumerate(eager):
                w = job.work
                if job.mode == "decode" and job.owner is not None and 1.0 <= w <= _EXACT and w % 1.0 == 0.0:
                    if keep is None:
                        keep = eager[:k]
                    job.lz = rounds
                    tok = job.owner.tok
                    if tok != now:  # its previous output token was not this iteration's start (tokens.py)
                        self.tpend.append((job, tok))
                    key = rounds + int(w)
                    self.due.setdefault(key, []).append(job)
                    self.nlazy += 1
                    if not job.owner.tokw:  # its request's gaps do not count (tokens.py)
                        self.nlazy_x += 1
                elif keep is not None:
                    keep.append(job)
            if keep is not None:
                self.eager = eager = keep
        nl = self.nlazy
        assign: list[Job] = []
        spent = 0.0  # the tokens of the eager residents served so far
        attn = 0.0
        if eager:
            res = self.residents
            before = 0 if nl else -1  # lazy residents before the job; -1: all of them are
            # ``eager`` is the residents that are not lazy, in their order: each is found from the one before, and
            # the one at position pos, eager's k-th, has pos - k lazy residents before it
            p = 0
            n = len(res)
            for k, job in enumerate(eager):
                if before >= 0:
                    while p < n and res[p] is not job:
                        p += 1
                    pos = p if p < n else res.index(job)
                    if pos - k >= nl:
                        # every lazy job comes before this one: each gets its token iff this holds
                        if budget - nl - spent < 0:
                            return _unplan(assign)
                        before = -1
                        left = budget - nl - spent
                    else:
                        before = pos - k
                        left = budget - before - spent
                else:
                    left = budget - nl - spent
                if left <= 0.0:
                    # no token is left for this job, nor for any after it (their ``left`` is at most this one's):
                    # the per-job planning plans none of them; the lazy jobs after are judged below
                    break
                w = job.work
                if job.mode == "decode":
                    want = 1.0 if w > 1.0 else w
                    if want % 1.0 != 0.0:
                        return _unplan(assign)
                    tokens = want if want < left else left
                    if tokens > 0.0:
                        job.assigned = tokens
                        assign.append(job)
                        spent += tokens
                else:
                    want = w if w < chunk else chunk
                    if want % 1.0 != 0.0:
                        return _unplan(assign)
                    tokens = want if want < left else left
                    if tokens > 0.0:
                        attn += tokens * ((job.total - w) + tokens / 2.0)
                        job.assigned = tokens
                        assign.append(job)
                        spent += tokens
            if before >= 0 and budget - nl - spent < 0:
                return _unplan(assign)
            if not nl + spent < _EXACT:
                # the residents' tokens reach 2**53 (a budget of inf, a chunk or a prompt beyond it): the sums
                # below, the lazy jobs' tokens first, are the per-job order's only while every partial sum is
                # a whole number below 2**53 (a prefill of 2**53 + 4 tokens served before two decoders sums
                # to 2**53 + 4 in that order, 2**53 + 6 in this one): planned per job
                return _unplan(assign)
        elif nl > budget:
            return False  # a lazy job would go without its token (the budget is below their count)
        split = len(assign)
        left = budget - nl - spent
        sim = self.sim
        p0 = sim.preempt_count
        if left > 0.0 and self.served_pools and self._may_admit():
            # the admissions, as in _plan: the newcomers are the residents not lazy and not yet served
            d0 = self.detached
            self.budget = budget
            self.left = left
            self.attn = attn
            self.assign = assign
            self._admit_lazily(p0, chunk)
            self.assign = []
            attn = self.attn
            if self.detached != d0:  # a detachment (a preemption by an admitted session) took planned jobs out
                split, assign = self._still_planned(assign, split)
            nl = self.nlazy
        preempted = sim.preempt_count > p0
        if not assign and not nl and not preempted:
            return True  # no iteration
        if self.cost_ctx:
            # the sums in the per-job order: the lazy jobs' and the residents' tokens are whole numbers,
            # so adding them first is exact; then the newcomers' in their order
            tokens = dec = float(nl)
            pre_t = 0.0
            for j in assign:
                t = j.assigned
                tokens += t
                if j.mode == "decode":
                    dec += 1.0
                else:
                    pre_t += t
            cost = self.cost_of(tokens, dec, pre_t, float(len(self.residents)), 0.0, 0.0, attn)
        else:
            cost = self.cost_fn(None, None, self._no_ctx)
        return self._launch(cost, assign, nl, split, preempted, budget, None, 0.0, chunk)

    def _quiet(self) -> bool:
        """Whether the rounds after this iteration would repeat it until something happens: it served only
        lazy jobs and admitted no one (so only a lazy job's last token, a lazy grower's block boundary or
        another event can change what the next planning sees), and nothing else in the settle acts: no
        ready session, grower, marked stage, queue at a pool admitted outside the engine, gauge, other step
        stage or invariant check; and the budget, chunk and cost read nothing that could change (no draw,
        attribute, ``now`` or observable but a plain count of a pool: nothing is admitted, released or
        queued without an event)."""
        ok = self._quiet_static
        if ok is None:
            ok = self._judge_quiet()
        if not ok:
            return False
        sim = self.sim
        if sim.ready or sim.dirty:
            return False
        for pool in sim.pools:
            if pool.growers or (pool.via is None and (pool.front or pool.queue)):
                return False
        return True

    def _judge_quiet(self) -> bool:
        """The static part of :meth:`_quiet` (judged once), and whether quiet rounds may also take the
        block boundaries of lazy growers (``_wake_static``): the memory pool spills nothing, holds no
        reservations and evicts in LRU order (or caches nothing), and the budget and chunk read neither
        the kv sums nor ``used``/``free`` of a pool (a growth changes those)."""
        sim = self.sim
        k: N.Step = self.node.kind
        steady = _not_quiet(_PRE_NAMES)

        def fixed(e, pred) -> bool:
            return e is None or constant(e) is not None or not reads(e, pred)

        ok = ((self.lazy_ok or self.glazy_ok) and len(sim.step_stages) == 1 and not sim.gauges and not sim.check
              and not _TRACE and fixed(k.budget, steady) and fixed(k.chunk, steady)
              and not reads(k.cost, _not_steady(_COST_NAMES)))
        wake = False
        if ok and self._judge_wake_batch():
            grown = _not_quiet(("residents", "decoders"), ("holders", "queued"))
            wake = fixed(k.budget, grown) and fixed(k.chunk, grown)
        self._wake_static = wake
        self._quiet_static = ok
        return ok

    def _judge_wake_batch(self) -> bool:
        """Whether the lazy growers at a block boundary may take their blocks at once (judged once): lazy
        growers are planned (the memory pool judged for them) and the memory pool spills nothing, holds no
        reservations and evicts in LRU order or caches nothing (an eviction then reads no state, and whole
        blocks evict the same, summed or one by one)."""
        pool = self.memory
        return bool(self.glazy_ok and pool is not None and pool.spill is None and not pool.reserve_held
                    and (pool.lru or pool.evict is None))

    def _quiet_rounds(self, now: float, t: float, cost: float, budget: float, busy: Job | None = None,
                      chunk: float = _INF) -> tuple[int, float]:
        """Complete the quiet rounds that follow at once: round k ends at ``t`` (each a sum with the cost,
        as the event loop would take them) before any other event, at or before the horizon, and with no
        lazy job's last token in it; after it the same iteration is planned again, and, at a round in
        which lazy growers reach a block boundary, the same but for their blocks, when the planning of
        that round would be the quiet iteration again but for them: every resident is lazy, no
        admission it would attempt could succeed, the growers' blocks can be taken at once (:meth:`_wake_plan`) and the
        cost it then takes is valid (else the stretch ends before that round, which is planned as usual);
        their blocks are taken at the round's start (the clock set to it: the pool's statistics are
        brought up to it) and the cost is taken again, as the planning would. Their accounting is the
        per-round one (the sums in the same order); the event count takes one per round.

        With ``busy`` (:meth:`_busy_job`), the iteration serves one prefill besides the lazy decoders, and
        the rounds after it are the same iteration but for that prefill's next chunk: each round's planning
        (its chunk ``min(work, chunk, what the lazy decoders leave)``, the growth of its hold, its
        attention, the cost, the tally) is made here, as the walk makes it, while the prefill does not
        complete in the round about to end, its growth fits beside what is used and reserved (no
        preemption, no wait), the cost is valid, and no admission its planning would attempt could
        succeed; the round in which it completes is planned and pushed as usual (its end goes through the
        event loop, where the session goes on). Returns how many rounds were completed this way and when
        the iteration after them (to be pushed) ends."""
        sim = self.sim
        heap = sim.heap
        t_next = heap[0][0] if heap else _INF
        horizon = sim.horizon
        # a round ending at t is taken while t < t_next and t <= horizon: while t < tlim (one test; the
        # float after the horizon bounds it when the horizon comes first)
        tlim = t_next if t_next <= horizon else nextafter(horizon, _INF)
        due = self.due
        r = self.rounds
        if not t < tlim or r + 1 in due or not t - now > instant_span(now):
            return 0, t  # (the loop below would take no round)
        wake = self.wake
        last = now
        a_present = self.a_present
        a_busy = self.a_busy
        present = float(self.present)  # (a float: a float times a float is specialized, an int times one is not)
        gaps = self.gaps
        weights = gaps.weights
        warm = sim.warm
        nlazy = self.nlazy
        # whether the planning of a round would attempt an admission that might succeed (tested once:
        # nothing joins or leaves a queue in the stretch): it attempts none when no budget is left after
        # the lazy decoders' tokens (and the prefill's); and a head whose known demand (or floor) does not
        # fit now does not fit at any round of the stretch: growths only add to what is used, and nothing
        # is released, reserved or admitted in it
        may = bool(self.served_pools) and self._may_admit()
        P = busy
        if may and P is None and budget - nlazy > 0.0:
            return 0, t
        absorb = self._wake_static and budget >= nlazy and (not self.eager or P is not None)
        cost_of = self.cost_of if self.cost_ctx else None
        nl = float(nlazy)
        nres = float(len(self.residents))
        if P is not None:
            pslot = P.gslot if P.growing is not None else None
            ppool = self.memory
            pslots = P.mslots if self.cost_kv else None
            left0 = budget - nlazy  # what the lazy decoders, all before it in the serving order, leave it
            jobs = nlazy + 1
            busy_n = 0
            holds = P.owner.holds
        wakes = 0
        counted = 0
        # the gaps' last run: its value, and what its weight gains in the stretch, added to the array once
        # (an array item written back costs a conversion of the argument every time); the same sum
        glast = gaps.last
        gain = 0
        values = gaps.values
        tally = False  # the gaps of the rounds after the first count (warm, and decoders whose gaps count)
        first = r + 1  # the first round of the stretch
        k = first  # the round about to end
        # a busy stretch plans every round (a round with no lazy grower at a boundary reads ()); a quiet one
        # only the rounds whose growers wake
        rounds_to_plan = wake if P is None else _EveryRound(wake)
        # under a bound on events (max_events) the stretch ends at it: each round is an event, and the
        # per-job planning stops after the round that is the bound's (stop_at_bound)
        me = sim.max_events
        kend = first + (me - sim.events - sim.virtual_events) if me is not None else _NO_END
        # under a bound on wall time (max_wall) the clock is read every _WALL_ROUNDS rounds, and the stretch
        # ends once the bound is passed (stop_at_bound stops the run after it): reading it changes nothing
        # and, with the progress bar shown, the bar is drawn there too (one event can be a stretch of minutes)
        mw = sim.max_wall
        shown = sim.show_progress
        kwall = first + _WALL_ROUNDS if mw is not None or shown else _NO_END
        wall_end = sim.t_wall0 + mw if mw is not None else _INF
        # a round that ends at the instant it starts (a cost of 0, or one below the clock's precision, or
        # one within the no-progress guard's instant: far below any time scale at this clock) is left to the
        # event loop, where it is an iteration of no time the stage's guard counts (StepStage._no_time): taken
        # here, rounds of no time went on for as many rounds as the lazy jobs had tokens (for ever with
        # infinite work), and 3 million rounds of cost 1e-300 ended where the per-job planning met the guard.
        # The test is compile.instant_span's, written out for a clock at or after 0 (a call a round made a
        # long stretch of quiet rounds 40 % slower): the same floats, so the same rounds as _end's test
        zeno = ZENO
        kstop = kend if kend < kwall else kwall
        while True:
            while (t < tlim and k not in due and t - last > zeno * (last if last > 1.0 else 1.0)
                   and k < kstop):
                wl = rounds_to_plan.get(k)
                if wl is not None:
                    # the planning of round k + 1 (at t): the growers' blocks, the prefill's chunk, the cost
                    if P is None:
                        if not absorb:
                            break
                        plan = self._wake_plan(wl, k)
                        if plan is None:
                            break
                        if cost_of is not None:
                            c = cost_of(nl, nl, 0.0, nres, plan[1], 0.0, 0.0)
                            if not c >= 0.0:
                                break
                        else:
                            c = self.cost_fn(None, None, self._no_ctx)
                    else:
                        if wl:
                            if not absorb:
                                break
                            plan = self._wake_plan(wl, k)
                            if plan is None:
                                break
                            grow0 = plan[0]
                            kv1 = plan[1]
                        else:
                            grow0 = 0.0
                            kv1 = self.kv_lazy if self.cost_kv else 0.0
                        # the prefill's chunk, as the walk plans it (Planner._serve) after the lazy decoders
                        w = P.work - P.assigned  # its work after round k (StepStage._end)
                        if w <= EPS:
                            break  # it completes in round k: the session goes on at its end
                        want = w if w < chunk else chunk
                        tok = want if want < left0 else left0
                        if may and left0 - tok > 0.0:
                            break  # budget is left after it: that planning attempts an admission
                        grown = 0.0  # what grow_slot takes (nothing when the tokens fit the allocation)
                        if pslot is not None:
                            k0 = pslot.pos
                            d = k0 + tok - pslot.alloc
                            if d > EPS:
                                grown = ppool.round_up(pslot.alloc + d) - pslot.alloc
                                if grown > EPS and (ppool.used + grow0 + ppool.reserved - pslot.u + grown
                                                    > ppool.limit):
                                    break  # its growth would preempt or wait: planned as usual
                                if self.glazy_wide and not self._wide_room(grow0 + grown):
                                    break  # (a pool without a cap holding near 2**53: planned as usual)
                        else:
                            k0 = P.total - w
                            d = 0.0
                        ptok = nl + tok
                        if cost_of is not None:
                            m = 0.0  # what it holds on the memory pool after the growth (iteration_sums)
                            if pslots is not None:
                                for sl in pslots:
                                    m += (sl.alloc + grown) if sl is pslot and grown > EPS else sl.alloc
                            c = cost_of(ptok, nl, 0.0 + tok, nres, kv1, 0.0 + m, 0.0 + tok * (k0 + tok / 2.0))
                            if not c >= 0.0:
                                break
                        else:
                            c = self.cost_fn(None, None, self._no_ctx)
                if t + (cost if wl is None else c) == _INF and horizon == _INF:
                    # the round after this one would end at inf, which never happens (engine.MAX_TIME): the
                    # run ends when this one does, at an event, as the per-job planning's (a stretch of rounds
                    # of 1e307 ended where it began, 1e307, with their time averages over 1.7e308: util 17)
                    break
                dt = t - last
                if dt > 0.0:
                    if dt < HUGE_SPAN:
                        a_present += present * dt
                        a_busy += dt  # (1.0 * dt, as the stage's own integral writes it: the same float)
                    else:
                        self.acc_huge(dt, 1.0)
                # the round's output tokens (tokens.py): the first round's pending decoders, then all regular
                if tally:
                    # gaps.add(t - last, counted), inlined: one a round (t - last is dt)
                    if dt == glast:
                        gain += counted
                    else:
                        if gain:
                            weights[-1] += gain
                            gain = 0
                        values.append(dt)
                        weights.append(counted)
                        glast = dt
                elif k == first:
                    gaps.iteration(self, (), last, t, nlazy, self.tpend, None, warm)
                    if self.tpend:
                        self.tpend = []
                    counted = nlazy - self.nlazy_x  # the decoders whose gaps count (tokens.py)
                    glast = gaps.last
                    tally = warm and counted != 0
                last = t
                if wl is not None:
                    if P is not None:
                        P.work = w  # (StepStage._end)
                        P.assigned = 0.0
                    if wl or P is None:  # (a busy stretch reads () for a round without woken growers)
                        # their blocks, taken at the round's start
                        sim.now = last
                        try:
                            self._wake_apply(wl, plan, k, last)
                        finally:
                            sim.now = now
                        wakes += 1
                    if P is not None:
                        # the prefill's chunk of round k + 1: its growth at the round's start (it fits: tested
                        # above), its position, its tokens; the iteration's tally
                        if pslot is not None:
                            if d > EPS:
                                sim.now = last
                                try:
                                    grow_slot(sim, P.owner, pslot, d, P)
                                finally:
                                    sim.now = now
                            holds[P.ghi].grown = True
                            pslot.pos = k0 + tok
                        P.assigned = tok
                        if nlazy:
                            self.lazy_iterations += 1
                            self.glazy_iterations += 1
                        if warm:  # (Planner._tally of one iteration)
                            self.iterations += 1
                            if nlazy:
                                self.it_mixed += 1
                            else:
                                self.it_prefill += 1
                            self.sum_jobs += jobs
                            self.sum_tokens += ptok
                            self.sum_budget += budget
                        busy_n += 1
                    cost = c
                t = t + cost
                k += 1
            # the stretch reached kstop: at kwall (before kend), the clock, every _WALL_ROUNDS rounds (a test
            # of its own at every round cost a long stretch some 3 %); ended by anything else, it is over
            if k != kwall or k >= kend:
                break
            w = _monotonic()
            if w >= wall_end:
                break
            if shown:
                sim.progress_at(w, last, k - first)  # (the rounds taken end at ``last``)
            kwall = k + _WALL_ROUNDS
            kstop = kend if kend < kwall else kwall
        n = k - first
        if P is not None and busy_n:
            self.busy_rounds += busy_n
            if warm:  # the iteration to be pushed is the last round tallied above (StepStage._untally)
                self.tal_dec = nlazy
                self.tal_pre = 1
        if gain:
            weights[-1] += gain
        gaps.last = glast
        if wakes:
            self.quiet_wakes += wakes
        if n:
            self.a_present = a_present
            self.a_busy = a_busy
            self.t_last = last
            self.t_start = self.t_round = last
            self.rounds = r + n
            self.quiet_rounds += n
            sim.virtual_events += n
        return n, t

    def _wake_plan(self, wl: list[Job], rounds: int):
        """What the walk of :meth:`_start_glazy` would do with the lazy growers ``wl`` that reach a block
        boundary at round ``rounds``, when it reaches each of them with its token left: grow the block its
        token needs and list it anew, lazy from this round on. ``(total, kv)`` when every one of them gets
        its block without a preemption, a wait or an eviction order that could read the state (all of
        them fit beside what is used and reserved, so each fits after the ones before it whatever their
        order: a slot's unallocated reservation only adds room), the block leaves room for its next
        token, and its KV is that one slot: ``total`` the blocks they take, ``kv`` the lazy decoders' kv
        total after; else ``None`` (nothing done). Their order matters nowhere else: the blocks are taken
        as one sum, and the tables they go to are read in serving order (by rank)."""
        pool = self.memory
        b = pool.block
        if not b >= 2.0:
            return None  # a block of one token leaves no room for the next one
        cost_kv = self.cost_kv
        # (a job listed in ``wake`` is a lazy resident here, not a waiting grower, with its grown slot
        # known, a whole position and allocation, its position at the allocation at that round:
        # test_step_woken.py checks those books after every planning)
        for job in wl:
            if job.wv:
                # listed again by _wake_apply, which found what is checked below and moved it on by a
                # block: its pool and slots are those of a lazy job (fixed), its position is its allocation
                # again, a whole block further
                continue
            slot = job.gslot
            k0 = slot.pos + (rounds - job.lz)  # its position now
            if slot.pool is not pool or k0 != slot.alloc or k0 % b:
                return None  # not this pool's, not at a boundary after all, or not at a whole block: the walk
                # sees to it
            # so the block its token needs (pool.round_up(k0 + 1), as grow_slot rounds it) is one block, b:
            # what it grows, and the room it leaves for the tokens after this one
            if cost_kv:
                slots = job.mslots
                if slots is None or len(slots) != 1 or slots[0] is not slot:
                    return None
        total = len(wl) * b  # (whole numbers below 2**53: the sum of the blocks one by one)
        if self.glazy_wide and not self._wide_room(total):
            return None  # a pool without a cap holding near 2**53 (_wide_room): the walk sees to them
        used = pool.used + total
        if used + pool.reserved > pool.limit:
            return None  # one of them would preempt or wait (or might: the walk sees to it)
        if not pool.lru and used + pool.cached > pool.limit:
            return None  # an eviction in an order that may read the state
        return total, (self.kv_lazy + total if cost_kv else 0.0)

    def _wake_apply(self, wl: list[Job], c, rounds: int, t_round: float) -> None:
        """Carry out the plan :meth:`_wake_plan` made for round ``rounds``: the growers' blocks are taken
        at once (``take_fitting``, the allocation of a growth that fits) and each is listed anew under the
        round of its next boundary or its last token. A lazy job's work and position are those at the
        round it became lazy (``lz``) less the rounds since, so they stay as they are here; its KV grows
        with its allocation."""
        total = c[0]
        pool = self.memory
        if total > 0.0:  # (always, for a list of growers: each grows) as the walk's first growth
            take_fitting(self.sim, pool, pool.used, total)
        b = pool.block
        cost_kv = self.cost_kv
        due = self.due
        late = t_round != self.sim.now  # its last token, the last round's end, was not this planning's start
        # each grows one block (its position was its allocation, a whole block: _wake_plan), which is the
        # room it has for its next tokens: it wakes again b rounds on, unless its last token comes first
        again = []
        for job in wl:
            job.gslot.alloc += b
            if cost_kv:
                job.lzm += b
            if not job.wv:  # (grown already, when it was listed again here)
                job.owner.holds[job.ghi].grown = True
                job.wv = True  # (read only while it is listed in ``wake``; a listing there anew clears it)
            if late:  # (tokens.py) as the walk does it
                job.owner.tok = t_round
                self.tpend.append((job, t_round))
            w = job.work - (rounds - job.lz)
            if w > b:
                again.append(job)
            else:
                key = rounds + int(w)
                lst = due.get(key)
                if lst is None:
                    due[key] = [job]
                else:
                    lst.append(job)
        if again:
            wake = self.wake
            key = rounds + int(b)
            lst = wake.get(key)
            if lst is None:
                wake[key] = again
            else:
                lst.extend(again)
        if cost_kv:
            self.kv_lazy = c[1]
        wl.clear()
        del self.wake[rounds]

    def _may_admit(self) -> bool:
        """Whether the admission ``_admit_one`` would attempt might succeed: ``False`` only when the head
        of the first pool with a waiting session has its demand known (it reads only attributes and
        numbers) and that demand does not fit, or what it needs at least is known (a reserve that reads
        only attributes and numbers: ``Pending.floor``) and does not fit."""
        sim = self.sim
        for pool in self.served_pools:
            if pool.front or pool.queue:
                if pool.keyed is not None and not pool.front and len(pool.queue) > 1:
                    return True  # the head is chosen by keys, evaluated at the attempt
                pend = admission.head(sim, pool).pending
                demand = pend.demand
                if demand is None:
                    return admission.admissible(pend)  # (what it needs at least, when that is known)
                return admission.fits(demand)
        return False

    def _materialize(self, job: Job) -> None:
        """Bring a lazy job's ``work`` (a grower's position) up to date; it is no longer lazy."""
        self._unlazy(job)

    def _materialize_all(self) -> None:
        r = self.rounds
        for job in self.residents:
            if job.lz >= 0:
                d = r - job.lz
                job.work = job.work - d
                if job.growing is not None:
                    job.gslot.pos += d
                    if d > 0:  # its growing run advanced the hold (release caches its position)
                        job.owner.holds[job.ghi].grown = True
                if d > 0:  # its last output token was the last round's end (tokens.py)
                    job.owner.tok = self.t_round
                job.lz = -1
        if self.tpend:
            self.tpend = []
        self.eager = list(self.residents)
        self.nlazy = 0
        self.nlazy_x = 0
        self.kv_lazy = 0.0
        self.due.clear()
        self.wake.clear()

    # ------------------------------------------------------------------ lazy growers
    def _glazy_judge(self) -> bool:
        """Whether lazy decoding may take decoders that grow their hold block by block and a cost that
        reads ``kv_decode``/``kv_prefill`` (judged once, when the pools are bound): the memory pool's
        blocks are whole numbers with a finite whole capacity below 2**53 (every allocation, and every
        sum of them, is then exact in any order), or no cap (``glazy_wide``: its counts are exact, and a
        planning is lazy only while they are far below 2**53, :meth:`_wide_room`), and its preemption policy
        asks nothing a lazy job's stale position would answer (no ``position`` key; a plugin might ask
        anything)."""
        if not self.glazy_ok:
            return False
        pool = self.memory
        ok = True
        if pool is not None:
            b = pool.block
            cap = pool.cap
            ok = b is not None and b >= 1 and b == int(b)
            if ok and cap == _INF:
                # no cap: its counts are exact (pools/exact.py) and nothing is ever evicted or preempted for
                # room; the planning is lazy while what it holds stays below _WIDE_LIM (_wide_room)
                ok = b < _WIDE_LIM / 4
                self.glazy_wide = ok
            else:
                ok = ok and cap == cap and cap < _EXACT and cap == int(cap)
        elif self.cost_kv:
            ok = False
        # a lazy grower's position is stale on the pool it grows, whichever that is (the memory or any
        # pool a `growing` run or a `grow` names), and a victim may be chosen on it by any grower's
        # growth: no such pool's policy may read `position` (the grown pools judged once a simulation: a
        # family of engines asks each)
        sim = self.sim
        grown = sim.grow_lazy_ok
        if grown is None:
            grown = sim.grow_lazy_ok = all([_position_free(pl.preempt) for pl in sim.grow_pools])
        if not grown or (pool is not None and not _position_free(pool.preempt)):
            ok = False
        self.glazy_ok = ok
        self._glazy_judged = True
        return ok

    def _wide_room(self, more: float = 0.0) -> bool:
        """On a memory pool without a cap (``glazy_wide``): whether what it has in use and reserved, with
        ``more`` and a block for every resident and one more, is below :data:`_WIDE_LIM`. Each lazy job's
        allocation is part of what is in use, so while this holds at each planning and at each growth a
        quiet round takes, every allocation and position a lazy job has, and the lazy decoders' kv total, are
        whole numbers below 2**53 through the planning (it grows each resident by a block at most) and the
        rounds after it: exact, as on a pool whose cap is below 2**53. (The float of an exact count is its
        value rounded: far below 2**53 here, within the margin.)"""
        pool = self.memory
        return (float(pool.used) + float(pool.reserved) + more + pool.block * (len(self.residents) + 1.0)
                < _WIDE_LIM)

    def _wide_sums(self, assign: list[Job], split: int, kv: bool):
        """The sums :func:`.common.iteration_sums` takes, in the order the per-job planning adds them: the
        residents the walk gave a token in serving order (the lazy ones, one token each, and the first
        ``split`` of ``assign``), then the jobs the admissions brought (the rest of ``assign``). A lazy
        planning adds the lazy decoders' tokens and KV first, which is the same sum while every partial sum
        is below 2**53; on a memory pool without a cap a sum may pass it (``glazy_wide``). With ``kv`` False
        the KV sums are not taken (0.0), as there."""
        walked = {id(j) for j in assign[:split]}
        jobs = [j for j in self.residents if j.stage is self and (j.lz >= 0 or id(j) in walked)]
        jobs += assign[split:]
        held = self._held_fn
        tokens = dec = pre_t = kvd = kvp = 0.0
        for j in jobs:
            lazy = j.lz >= 0
            t = 1.0 if lazy else j.assigned
            tokens += t
            m = held(j) if kv else 0.0
            if lazy or j.mode == "decode":
                dec += 1.0
                kvd += m
            else:
                pre_t += t
                kvp += m
        return tokens, dec, pre_t, kvd, kvp

    def _lazy_key(self, job: Job) -> tuple[dict, int]:
        """The table (``due`` or ``wake``) and round under which lazy ``job`` is listed."""
        w = job.work
        slot = job.gslot if job.growing is not None else None
        if slot is not None:
            room = slot.alloc - slot.pos
            if w > room:
                return self.wake, job.lz + int(room)
        return self.due, job.lz + int(w)

    def _start_glazy(self, budget: float, chunk: float) -> bool:
        """``try_start`` with lazy decoders that may grow (their next block boundary, where they must grow,
        is known in advance: they wake then) and a cost that may read the kv sums (kept as a running total
        over the lazy decoders). The residents are walked in serving order as the per-job planning
        walks them; a run of lazy decoders between two residents that are not lazy takes one token each,
        as a count (a preemption taking one out gives its token back, or has it skipped). ``False``
        (nothing done) when the per-job planning must run instead: a resident that is not lazy would be
        planned a fraction of a token (checked before anything is done), or, on a memory pool without a
        cap, what it holds is not far below 2**53 (:meth:`_wide_room`)."""
        if self.glazy_wide and not self._wide_room():
            return False
        rounds = self.rounds
        wl = self.wake.get(rounds)
        eager = self.eager
        if self.tpend:
            self.tpend = []
        now = self.sim.now
        frac = False
        cost_kv = self.cost_kv
        if eager:
            keep = None
            for k, job in enumerate(eager):
                w = job.work
                owner = job.owner
                lazy = False
                if job.mode == "decode" and owner is not None and 1.0 <= w <= _EXACT and w % 1.0 == 0.0 \
                        and owner.status != GROWING:
                    if job.growing is None:
                        lazy = True
                        key = rounds + int(w)
                        table = self.due
                    else:
                        slot = job.gslot
                        if slot is None:  # a decode that has not been served yet: its slot found now
                            slot = self._grown_slot(job)
                        if slot is not None:
                            pos = slot.pos
                            room = slot.alloc - pos
                            if room >= 1.0 and pos % 1.0 == 0.0 and room % 1.0 == 0.0:
                                lazy = True
                                if w > room:
                                    key = rounds + int(room)
                                    table = self.wake
                                    job.wv = False  # listed here: checked at its boundary
                                else:
                                    key = rounds + int(w)
                                    table = self.due
                    if lazy and cost_kv:
                        slots = job.mslots
                        if slots is None:
                            m = self._held(job)
                        else:  # self._held(job), inlined
                            m = 0.0
                            for sl in slots:
                                m += sl.alloc
                        if m % 1.0 != 0.0:
                            lazy = False
                        else:
                            job.lzm = m
                            self.kv_lazy += m
                if lazy:
                    if keep is None:
                        keep = eager[:k]
                    job.lz = rounds
                    tok = owner.tok
                    if tok != now:  # its previous output token was not this iteration's start (tokens.py)
                        self.tpend.append((job, tok))
                    table.setdefault(key, []).append(job)
                    self.nlazy += 1
                    if not owner.tokw:  # its request's gaps do not count (tokens.py)
                        self.nlazy_x += 1
                else:
                    if keep is not None:
                        keep.append(job)
                    # what it will be planned must be a whole number of tokens (a lazy job's, and a woken
                    # one's below, are: one)
                    if owner is None or owner.status != GROWING:
                        want = (1.0 if w > 1.0 else w) if job.mode == "decode" else (w if w < chunk else chunk)
                        if not -_EXACT < want < _EXACT or want % 1.0 != 0.0:
                            frac = True
            if keep is not None:
                self.eager = eager = keep
        if frac:
            return False  # a resident that is not lazy would be planned a fraction of a token
        if wl is not None and self._wake_batch is not False:
            # the growers at a block boundary come first in the walk (before every resident that is not
            # lazy) and the budget reaches them: their blocks are taken at once, as the walk would take
            # them one by one, when each fits (_wake_plan); the walk then counts them as lazy
            if self._wake_batch is None:
                self._wake_batch = self._judge_wake_batch()
            res = self.residents
            if (self._wake_batch and budget >= len(res) - len(eager)
                    and (not eager or res[len(res) - len(eager)] is eager[0]  # (eager: the residents' last)
                         or max(wl, key=_rank).rank < eager[0].rank)):
                c = self._wake_plan(wl, rounds)
                if c is not None:
                    self._wake_apply(wl, c, rounds, self.t_round)
                    self.wake_batches += 1
                    wl = None
        sim = self.sim
        p0 = sim.preempt_count
        d0 = self.detached
        nres = len(self.residents)
        if not eager and wl is None and nres < budget:
            # every resident is lazy (none woken) and the budget covers their tokens: the walk below would
            # walk nothing and leave ``budget - nres`` (the same subtraction), serving not stopped
            self.budget = budget
            self.assign = assign = []
            self.attn = 0.0
            left = budget - nres
            stop = -2
        else:
            order = list(self.residents)
            # the positions in ``order`` of the residents walked (``order`` is in serving order, as ``eager``
            # is): the ones that are not lazy and, when there are, the decoders whose next token needs a block
            # (woken), walked in their place, still lazy (and listed) until the walk reaches them
            index = order.index
            ne = len(eager)
            # (``eager`` is a subsequence of the residents in their order: it is their last ``ne`` when its
            # first is where the last ``ne`` begin)
            if ne and order[len(order) - ne] is eager[0]:  # the newest residents (prefills admitted last): no search
                walk = list(range(len(order) - ne, len(order)))
            elif len(order) <= _FEW:
                walk = list(map(index, eager))
            else:  # many residents: found in one pass (an index each walked them: ne × n)
                walk = _positions(order, eager)
            if wl is not None:
                if len(order) <= _FEW:
                    walk += map(index, wl)
                else:
                    walk += [position(order, j) for j in wl]
                walk.sort()
                t_round = self.t_round
            self.budget = budget
            self.assign = assign = []
            self.attn = 0.0
            self.lz_gone = gone = []
            skip = None
            left = budget
            prev = -1
            stop = -2  # the position after which nothing is served (-2: none)
            self.planning = True
            self.gwalk = True
            try:
                for p in walk:
                    job = order[p]
                    g = p - prev - 1
                    if g:
                        if skip:
                            g -= bisect_left(skip, p) - bisect_right(skip, prev)
                        if g >= left:
                            stop = self._lazy_stop(order, prev, left)
                            left = 0.0
                            break
                        left -= g
                    prev = p
                    if job.stage is not self:
                        continue
                    self.left = left
                    slot = job.gslot
                    if job.lz >= 0:
                        # a woken decoder: its token of this round (one: ``left`` is a whole number) and the
                        # block it needs; then lazy again from this round on when the next planning would make
                        # it so (as _relazy), else planned as a resident that is not lazy
                        halt = False
                        owner = job.owner
                        d = rounds - job.lz
                        k0 = slot.pos + d  # its position now
                        if left >= 1.0:
                            need = k0 + 1.0 - slot.alloc
                            r = grow_slot(sim, owner, slot, need, job) if need > EPS else None
                            if r is None:
                                owner.holds[job.ghi].grown = True
                                room = slot.alloc - k0
                                ok = room >= 2.0 and room % 1.0 == 0.0
                                if ok and cost_kv:
                                    m = 0.0  # self._held(job), inlined (a lazy job's slots are known)
                                    for sl in job.mslots:
                                        m += sl.alloc
                                    if m % 1.0 != 0.0:
                                        ok = False
                                if ok:
                                    wl.remove(job)
                                    w = job.work - d
                                    job.work = w
                                    slot.pos = k0
                                    owner.tok = t_round  # its last output token was the last round's end
                                    if t_round != now:  # ... and not this iteration's start (tokens.py)
                                        self.tpend.append((job, t_round))
                                    if cost_kv:
                                        self.kv_lazy += m - job.lzm
                                        job.lzm = m
                                    job.lz = rounds
                                    if w > room:
                                        tbl = self.wake
                                        key = rounds + int(room)
                                        job.wv = False  # listed here: checked at its boundary
                                    else:
                                        tbl = self.due
                                        key = rounds + int(w)
                                    lst = tbl.get(key)  # tbl.setdefault(key, []).append(job), without the list
                                    if lst is None:
                                        tbl[key] = [job]
                                    else:
                                        lst.append(job)
                                else:
                                    self._wake_unlazy(job, wl)
                                    slot.pos = k0 + 1.0
                                    job.assigned = 1.0
                                    assign.append(job)
                                self.left -= 1.0  # self.left: a preemption by the growth may have added
                            elif r is True:
                                self._wake_unlazy(job, wl)  # it waits as a grower
                            else:
                                halt = slot.pool.preempt.self_stop  # the grower preempted itself (see _serve)
                        else:
                            self._wake_unlazy(job, wl)  # nothing is left for it
                    elif slot is None or job.growing is None:
                        halt = self._serve(job, chunk)
                    else:
                        # self._serve(job, chunk) for a grower whose slot is known, inlined
                        halt = False
                        owner = job.owner
                        if owner.status != GROWING:  # a stalled grower gets nothing
                            w = job.work
                            if job.mode == "decode":
                                want = 1.0 if w > 1.0 else w
                            else:
                                want = w if w < chunk else chunk
                            tokens = want if want < left else left
                            if tokens > 0.0:
                                need = slot.pos + tokens - slot.alloc
                                r = grow_slot(sim, owner, slot, need, job) if need > EPS else None
                                if r is None:
                                    k0 = slot.pos
                                    owner.holds[job.ghi].grown = True
                                    if job.mode == "prefill":
                                        slot.pos = k0 + tokens
                                        self.attn += tokens * (k0 + tokens / 2.0)
                                        job.assigned = tokens
                                        assign.append(job)
                                    elif not (tokens == 1.0 and w <= _EXACT and w % 1.0 == 0.0 and k0 % 1.0 == 0.0
                                              and self._relazy(job, owner, slot, k0, rounds, now)):
                                        slot.pos = k0 + tokens
                                        job.assigned = tokens
                                        assign.append(job)
                                    self.left -= tokens  # self.left: a preemption by the growth may have added
                                elif r is not True:
                                    halt = slot.pool.preempt.self_stop  # the grower preempted itself (see _serve)
                    left = self.left
                    if gone:
                        for v in gone:
                            q = position(order, v)
                            if q < p:
                                left += 1.0  # its token of this iteration, given back
                            else:  # skipped when the walk counts the lazy residents after p (kept sorted)
                                if skip is None:
                                    skip = []
                                insort(skip, q)
                        gone.clear()
                    if halt or left <= 0.0:
                        stop = p
                        break
                else:
                    g = len(order) - prev - 1
                    if g:
                        if skip:
                            g -= len(skip) - bisect_right(skip, prev)
                        if g >= left:
                            stop = self._lazy_stop(order, prev, left)
                            left = 0.0
                        else:
                            left -= g
                if stop != -2:
                    # the lazy residents after the stop go without their token: they are lazy no more
                    moved = False
                    for job in order[stop + 1:]:
                        if job.lz >= 0 and job.stage is self:
                            self._unlazy(job)
                            moved = True
                    if moved:
                        self.eager = [j for j in self.residents if j.lz < 0]
            finally:
                self.gwalk = False
                self.planning = False
            if wl is not None and not wl:
                self.wake.pop(rounds, None)  # every woken decoder was walked (or is lazy no more)
        split = len(assign)
        attn = self.attn
        self.left = left
        # the gates of admission are the per-job planning's (_admission_open), and serving did not stop
        if stop == -2 and self.served_pools and self._admission_open(p0) and self._may_admit():
            self._admit_lazily(p0, chunk)
            attn = self.attn
        self.assign = []
        if self.detached != d0:
            split, assign = self._still_planned(assign, split)
        nl = self.nlazy
        preempted = sim.preempt_count > p0
        if not assign and not nl and not preempted:
            return True  # no iteration
        if nl:
            self.glazy_iterations += 1
        if self.cost_ctx:
            cost_kv = self.cost_kv
            if assign:
                tokens, dec, pre_t, kvd, kvp = iteration_sums(assign, self._held_fn, cost_kv, float(nl), float(nl),
                                                              self.kv_lazy if cost_kv else 0.0)
            else:  # (what iteration_sums gives for no planned job: the lazy decoders' sums alone)
                tokens = dec = float(nl)
                pre_t = kvp = 0.0
                kvd = self.kv_lazy if cost_kv else 0.0
            # the sums above add the lazy decoders' first; from 2**52 on (a budget of inf: tokens; a pool without
            # a cap: kv) they are added in the per-job planning's order, which may differ in the last bits
            if nl and not (tokens < _WIDE_LIM and kvd < _WIDE_LIM):
                tokens, dec, pre_t, kvd, kvp = self._wide_sums(assign, split, cost_kv)
            cost_of = self.cost_of  # (a function held in a slot: read, then called, both specialized)
            cost = cost_of(tokens, dec, pre_t, float(len(self.residents)), kvd, kvp, attn)
            # the tally's sums are these (the same additions in the same order)
            return self._launch(cost, assign, nl, split, preempted, budget, tokens, dec, chunk)
        tokens = None
        dec = 0.0
        # (the tally's sums, in the per-job planning's order when they are large: the tokens are at most the
        # budget, and their sum the lazy decoders' first is exact below 2**52)
        if nl and (self.glazy_wide or budget >= _WIDE_LIM
                   and not float(nl) + sum([j.assigned for j in assign]) < _WIDE_LIM):
            tokens, dec, _p, _d, _k = self._wide_sums(assign, split, False)
            if tokens < _WIDE_LIM:
                tokens = None
        return self._launch(self.cost_fn(None, None, self._no_ctx), assign, nl, split, preempted, budget,
                            tokens, dec, chunk)

    def _wake_unlazy(self, job: Job, wl: list[Job]) -> None:
        """A woken decoder (listed in ``wl``, the round's wake list) is lazy no more: brought up to date
        and kept with the residents that are not lazy (serving order: by rank)."""
        wl.remove(job)
        self._unlazy(job, listed=False)
        eager = self.eager
        rank = job.rank
        i = len(eager)  # after every one of a rank no greater, found from the end
        while i > 0 and eager[i - 1].rank > rank:
            i -= 1
        eager.insert(i, job)
        if self.joins is not None:
            self.joins.append(job)  # (an admission's look at the residents not lazy: Planner._admissions)

    def _relazy(self, job: Job, owner, slot, pos: float, rounds: int, now: float) -> bool:
        """A decoder the walk has just given its token of this round (one, its block grown as needed; its
        ``work`` a whole number of at least one, its position ``pos`` a whole number) becomes lazy from
        this round on, as the next planning would make it (its token is then this round's lazy one:
        the same sums, the same gap, the same end); ``False`` (nothing done) when the next planning would
        not: no room left after this token (or a fractional one), or a fractional KV held."""
        room = slot.alloc - pos
        if not (room >= 2.0 and room % 1.0 == 0.0):
            return False
        if self.cost_kv:
            slots = job.mslots
            if slots is None:
                m = self._held(job)
            else:  # self._held(job), inlined
                m = 0.0
                for sl in slots:
                    m += sl.alloc
            if m % 1.0 != 0.0:
                return False
            job.lzm = m
            self.kv_lazy += m
        self.eager.remove(job)
        job.lz = rounds
        tok = owner.tok
        if tok != now:  # its previous output token was not this iteration's start (tokens.py)
            self.tpend.append((job, tok))
        w = job.work
        if w > room:
            job.wv = False  # listed here: checked at its boundary
            self.wake.setdefault(rounds + int(room), []).append(job)
        else:
            self.due.setdefault(rounds + int(w), []).append(job)
        self.nlazy += 1
        if not owner.tokw:  # its request's gaps do not count (tokens.py)
            self.nlazy_x += 1
        return True

    def _lazy_stop(self, order: list[Job], prev: int, left: float) -> int:
        """The position in ``order`` of the last lazy resident after ``prev`` that still gets its token
        when ``left`` tokens are left for them (``prev`` when none does)."""
        k = prev
        n = 0
        while n < left:
            k += 1
            j = order[k]
            if j.lz >= 0 and j.stage is self:
                n += 1
        return k

    def _still_planned(self, assign: list[Job], split: int) -> tuple[int, list[Job]]:
        """After a detachment during a lazy planning: the planned jobs still here with tokens, and how many
        of the first ``split`` (those planned before the admissions) they keep."""
        keep = [j for j in assign if j.stage is self and j.assigned > 0.0]
        return sum(1 for j in assign[:split] if j.stage is self and j.assigned > 0.0), keep

    def _admit_lazily(self, p0: int, chunk: float) -> None:
        """The admission loop inside a lazy planning: the newcomers are the residents neither lazy nor yet
        served (``eager`` is in serving order: the stage keeps it by rank)."""
        self.planning = True
        self.fast = True
        try:
            self._admissions(p0, chunk, set(self.eager), None, lazy=True)
        finally:
            self.planning = False
            self.fast = False

    def _launch(self, cost, assign, nl, split, preempted, budget, tokens, dec, chunk) -> bool:
        """Start the iteration a lazy planning planned (its ``cost``), with its quiet rounds; ``tokens``
        and ``dec``, when given, are the iteration's tokens and decoders (for the tally); ``chunk`` the
        planning's chunk."""
        sim = self.sim
        if not cost >= 0.0:  # self._cost(ctx, assign, nl, preempted), inlined
            self._cost_error(cost, assign, nl)
        if _TRACE:
            self._trace(assign, nl, preempted)
        now = sim.now  # self.acc(), inlined: no iteration runs until now
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
            else:
                self.acc_huge(dt, 0.0)
        self.t_last = now
        self.iter = assign
        self.iter_lazy = nl
        self.iter_split = split
        self.t_start = now
        t = now + cost
        n = 0
        if not preempted and self._quiet_static is not False:
            if not assign:
                if self._quiet() and self._reads_again(budget, chunk):
                    n, t = self._quiet_rounds(now, t, cost, budget)
            elif self._wake_static and len(assign) == 1 and assign[0].mode == "prefill":
                busy = self._busy_job(assign, nl, budget, chunk)
                if busy is not None and self._quiet() and self._reads_again(budget, chunk):
                    # the rounds after it plan its prefill's next chunks, each counted and tallied there:
                    # this one is tallied first (what it planned, before the next chunks change it)
                    if nl:
                        self.lazy_iterations += 1
                    if sim.warm:
                        self.iterations += 1
                        self._tally(assign, nl, budget, 1)
                    n, t = self._quiet_rounds(now, t, cost, budget, busy, chunk)
                    self.epoch += 1
                    _heappush(sim.heap, (t, next(sim._seq), self._end_cb, self.epoch))
                    if n and (sim.max_events is not None or sim.max_wall is not None):
                        self.stop_at_bound()
                    return True
        if nl:
            self.lazy_iterations += 1 + n
        self.epoch += 1
        if sim.warm:
            k = 1 + n
            self.iterations += k
            if tokens is None:
                self._tally(assign, nl, budget, k)
            else:  # self._tally(assign, nl, budget, k, tokens, dec), inlined: the sums are taken
                jobs = len(assign) + nl
                tally_class(self, dec, jobs, k)
                self.tal_dec = int(dec)  # the running iteration's classes (StepStage._untally)
                self.tal_pre = jobs - self.tal_dec
                self.sum_jobs += jobs * k
                tally_rounds(self, tokens, budget, k)
        _heappush(sim.heap, (t, next(sim._seq), self._end_cb, self.epoch))
        if n and (sim.max_events is not None or sim.max_wall is not None):
            self.stop_at_bound()
        return True

    def stop_at_bound(self) -> None:
        """After a stretch of quiet rounds under a bound on events or on wall time: when its rounds brought
        the count to the bound, or the wall time past it (the stretch read the clock every
        :data:`_WALL_ROUNDS` rounds and ended there), stop the run where the per-job planning stops it,
        after the round that is the bound's event and the planning of the next (pushed): the clock at that
        round's end (the stretch kept it at its start; the stage's statistics are at that end, the pools'
        at or before it)."""
        sim = self.sim
        events = sim.events + sim.virtual_events
        me = sim.max_events
        stop = me is not None and events >= me
        mw = sim.max_wall
        spent = _monotonic() - sim.t_wall0 if mw is not None and not stop else 0.0
        if stop or mw is not None and spent >= mw:
            sim.now = self.t_last
            # the count the report gives is written back where the stop is caught: the event loop's way out
            # adds the rounds of the stretches (the virtual events) to the events it popped, and so does
            # Simulation.run for a stop before the loop (a stretch planned in _start's settle: a batch's
            # first iteration; the report of a run stopped there at --max-events 100 said events 0)
            if stop:
                sim.stop_at_events(events)
            sim.stop("max-wall", f"stopped after {spent:.3g} s of wall time (--max-wall {show(mw)}) in the "
                                 f"quiet rounds of step stage {self.name} ({events} events)")

    def _reads_again(self, budget: float, chunk: float) -> bool:
        """Whether the next round's planning would read the ``budget`` and ``chunk`` this one read: the
        planning may have changed what they read (an admission: a pool's holders and queue, the
        residents; a growth, of woken growers or of the prefill: ``used`` and ``free``), and the quiet
        rounds keep them (nothing changes those in the stretch but the growths it takes, which it takes
        only when neither reads ``used``/``free``: ``_wake_static``). Read now, they are what the next
        round reads: the iteration in flight changes none of it. (They read no draw, attribute or kv
        sum here: ``_quiet_static``.)"""
        fn = self.budget_fn if self.budget_const is None else None
        if fn is None and self.chunk_fn is None:
            return True
        pre = self._pre() if self.pre_ctx else self._no_ctx
        if fn is not None and not fn(None, None, pre) == budget:
            return False
        return self.chunk_fn is None or self._chunk(pre) == chunk

    def _busy_job(self, assign: list[Job], nl: int, budget: float, chunk: float) -> Job | None:
        """The prefill whose next chunks the rounds after this iteration may plan (:meth:`_quiet_rounds`),
        or None: the iteration serves one job (``assign``), a prefill of this stage that does not complete in it, the
        stage's newest resident and the only one that is not lazy (every lazy decoder comes before it in
        the serving order); the lazy decoders leave it a token at least; its work, the chunk and the
        budget are whole numbers (so are its chunks); it grows nothing or the memory pool, which holds no
        reservations; and what it holds on the memory pool is known. (The caller has found that quiet
        rounds may take the lazy growers' boundaries, ``_wake_static``: the budget and the chunk read
        nothing its growth changes.)"""
        job = assign[0]  # (a prefill: the caller has seen to it)
        w = job.work - job.assigned
        if not (EPS < w <= _EXACT and w % 1.0 == 0.0):
            return None  # (most often: it completes in this iteration)
        if job.stage is not self or job.owner is None:
            return None
        eager = self.eager
        if len(eager) != 1 or eager[0] is not job or self.residents[-1] is not job:
            return None
        if not budget - nl >= 1.0 or not (chunk == _INF or (chunk <= _EXACT and chunk % 1.0 == 0.0)):
            return None
        pool = job.growing
        if pool is not None and (pool is not self.memory or job.gslot is None or pool.reserve_held):
            return None
        if self.cost_kv and job.mslots is None:
            return None
        return job

    def _unlazy(self, job: Job, listed: bool = True) -> None:
        """Bring a lazy job up to date (its ``work``, a grower's position) at the current round, taking it
        out of the lazy bookkeeping (its table unless ``listed`` is False, the count, the kv total); it is
        no longer lazy."""
        if listed:
            table, key = self._lazy_key(job)
            lst = table[key]
            if lst[-1] is job:  # (lifo's victims: the last listed; a removal's walk from the first each)
                lst.pop()
            else:
                lst.remove(job)
            if not lst:
                del table[key]
        d = self.rounds - job.lz
        job.work = job.work - d
        if job.growing is not None:
            job.gslot.pos += d
            if d > 0:  # its growing run advanced the hold (release caches its position)
                job.owner.holds[job.ghi].grown = True
        if d > 0:  # its last output token was the last round's end (tokens.py)
            job.owner.tok = self.t_round
        if self.cost_kv:
            self.kv_lazy -= job.lzm
        job.lz = -1
        self.nlazy -= 1
        if not job.owner.tokw:
            self.nlazy_x -= 1
