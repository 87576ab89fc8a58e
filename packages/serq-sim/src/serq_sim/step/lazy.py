"""Lazy decoding and quiet rounds (docs/simulator.md, "Lazy decoding and quiet rounds"): a decoder
that grows nothing and has a whole number of tokens left is not visited per iteration."""

from __future__ import annotations

from heapq import heappush as _heappush

from serq_ir import nodes as N

from ..compile import reads
from ..pools import admission
from ..stages import Ctx, Job
from .common import (
    _COST_NAMES,
    _EXACT,
    _INF,
    _PRE_NAMES,
    _TRACE,
    _not_steady,
    _unplan,
)


class LazyDecoding:
    """The lazy planning of a step stage (a part of :class:`~serq_sim.step.StepStage`)."""

    def _start_lazy(self, budget: float, chunk: float) -> bool:
        """Plan and start an iteration in which every lazy job gets its token (``try_start`` for a stage
        with lazy decoding and no growers): the residents that are not lazy are served in admission order,
        each seeing the budget the jobs before it left, lazy ones included; then the admissions, as in
        ``_plan``. ``False`` (nothing planned) when the per-job planning must run instead: a lazy job would
        go without its token, or a resident's tokens are not a whole number.

        ``budget`` is a whole number or ``inf``; with the residents' tokens whole numbers too, every
        ``left`` and every sum below is exact, so it equals what the per-job order computes; the tokens of
        the jobs admitted here are added after, in the per-job order."""
        rounds = self.rounds
        eager = self.eager
        if self.tpend:
            self.tpend = []
        # decoders that have become lazy (none grows: there are no growers)
        if eager:
            keep = None
            now = self.sim.now
            for k, job in enumerate(eager):
                w = job.work
                if job.mode == "decode" and job.owner is not None and 1.0 <= w <= _EXACT and w == int(w):
                    if keep is None:
                        keep = eager[:k]
                    job.lz = rounds
                    tok = job.owner.tok
                    if tok != now:  # its previous output token was not this iteration's start (tokens.py)
                        self.tpend.append((job, tok))
                    key = rounds + int(w)
                    lst = self.due.get(key)
                    if lst is None:
                        self.due[key] = [job]
                    else:
                        lst.append(job)
                    self.nlazy += 1
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
            last = len(res) - 1  # the position of the last lazy resident
            if nl:
                while res[last].lz < 0:
                    last -= 1
                before = 0  # lazy residents before the job; -1: all of them are
            else:
                before = -1
            for k, job in enumerate(eager):
                if before >= 0:
                    pos = res.index(job)
                    if pos > last:
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
                w = job.work
                if job.mode == "decode":
                    want = 1.0 if w > 1.0 else w
                    if want != int(want):
                        return _unplan(assign)
                    tokens = want if want < left else left
                    if tokens > 0:
                        job.assigned = tokens
                        assign.append(job)
                        spent += tokens
                else:
                    want = w if w < chunk else chunk
                    if want != int(want):
                        return _unplan(assign)
                    tokens = want if want < left else left
                    if tokens > 0:
                        attn += tokens * ((job.total - w) + tokens / 2.0)
                        job.assigned = tokens
                        assign.append(job)
                        spent += tokens
            if before >= 0 and budget - nl - spent < 0:
                return _unplan(assign)
        split = len(assign)
        left = budget - nl - spent
        sim = self.sim
        p0 = sim.preempt_count
        tried = False
        if left > 0 and self.served_pools and self._may_admit():
            # the admissions, as in _plan: the newcomers are the residents not lazy and not yet served
            tried = True
            d0 = self.detached
            self.budget = budget
            self.left = left
            self.attn = attn
            self.assign = assign
            self.planning = True
            self.fast = True
            try:
                # the newcomers are the residents not lazy and not yet served (no serve keys here)
                self._admissions(p0, chunk, set(self.eager), None, lazy=True)
            finally:
                self.planning = False
                self.fast = False
            self.assign = []
            attn = self.attn
            if self.detached != d0:
                # a detachment (a preemption by an admitted session) took planned jobs out
                split = sum(1 for j in assign[:split] if j.stage is self and j.assigned > 0)
                assign = [j for j in assign if j.stage is self and j.assigned > 0]
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
                    dec += 1
                else:
                    pre_t += t
            ctx = Ctx()
            ctx.tokens = tokens
            ctx.decoders = dec
            ctx.prefilled = pre_t
            ctx.residents = float(len(self.residents))
            ctx.kv_decode = 0.0
            ctx.kv_prefill = 0.0
            ctx.attention = attn
        else:
            ctx = self._no_ctx
        cost = self._cost(ctx, assign, nl, preempted)
        now = sim.now  # self.acc(), inlined: no iteration runs until now
        dt = now - self.t_last
        if dt > 0:
            self.a_present += self.present * dt
        self.t_last = now
        self.iter = assign
        self.iter_lazy = nl
        self.iter_split = split
        self.t_start = now
        t = now + cost
        n = 0
        if not assign and not tried and not preempted and self._quiet():
            n = self._quiet_rounds(now, t, cost)
            if n:
                for _ in range(n):
                    t += cost
        if nl:
            self.lazy_iterations += 1 + n
        self.epoch += 1
        if sim.warm:
            self.iterations += 1 + n
            self._tally(assign, nl, budget, 1 + n)
        _heappush(sim.heap, (t, next(sim._seq), self._end, self.epoch))
        return True

    def _quiet(self) -> bool:
        """Whether the rounds after this iteration would repeat it until something happens: it served only
        lazy jobs and admitted no one (so only a lazy job's last token or another event can change what
        the next planning sees), and nothing else in the settle acts: no ready session, grower, marked
        stage, queue at a pool admitted outside the engine, gauge, other step stage or invariant check;
        and the budget, chunk and cost read nothing that could change (no draw, observable or ``now``)."""
        ok = self._quiet_static
        if ok is None:
            sim = self.sim
            k: N.Step = self.node.kind
            ok = (self.lazy_ok and len(sim.step_stages) == 1 and not sim.gauges and not sim.check
                  and not _TRACE and not reads(k.budget, _not_steady(_PRE_NAMES))
                  and (k.chunk is None or not reads(k.chunk, _not_steady(_PRE_NAMES)))
                  and not reads(k.cost, _not_steady(_COST_NAMES)))
            self._quiet_static = ok
        if not ok:
            return False
        sim = self.sim
        if sim.ready or sim.dirty:
            return False
        for pool in sim.pools:
            if pool.growers or (pool.via is None and (pool.front or pool.queue)):
                return False
        return True

    def _quiet_rounds(self, now: float, t: float, cost: float) -> int:
        """Complete the quiet rounds that follow at once: round k ends at ``t`` (each a sum with ``cost``,
        as the event loop would take them) before any other event, at or before the horizon, and with no
        lazy job's last token in it; after it the same iteration is planned again. Their accounting is
        the per-round one (the sums in the same order); the event count takes one per round. Returns how
        many rounds were completed this way (the iteration then pushed ends one ``cost`` after them)."""
        sim = self.sim
        heap = sim.heap
        t_next = heap[0][0] if heap else _INF
        horizon = sim.horizon
        due = self.due
        r = self.rounds
        n = 0
        last = now
        a_present = self.a_present
        a_busy = self.a_busy
        present = self.present
        gaps = self.gaps
        warm = sim.warm
        nlazy = self.nlazy
        while t < t_next and t <= horizon and (r + n + 1) not in due:
            dt = t - last
            if dt > 0:
                a_present += present * dt
                a_busy += 1.0 * dt
            # the round's output tokens (tokens.py): the first round's pending decoders, then all regular
            if n == 0:
                gaps.iteration(self, (), last, t, nlazy, self.tpend, None, warm)
                if self.tpend:
                    self.tpend = []
            elif warm:
                gaps.add(t - last, nlazy)
            last = t
            n += 1
            t = t + cost
        if n:
            self.a_present = a_present
            self.a_busy = a_busy
            self.t_last = last
            self.t_start = self.t_round = last
            self.rounds = r + n
            sim.virtual_events += n
        return n

    def _may_admit(self) -> bool:
        """Whether the admission ``_admit_one`` would attempt might succeed: ``False`` only when the head
        of the first pool with a waiting session has its demand known (it reads only attributes and
        numbers) and that demand does not fit."""
        sim = self.sim
        for pool in self.served_pools:
            if pool.front or pool.queue:
                if pool.keyed is not None and not pool.front and len(pool.queue) > 1:
                    return True  # the head is chosen by keys, evaluated at the attempt
                demand = admission.head(sim, pool).pending.demand
                return demand is None or admission.fits(demand)
        return False

    def _materialize(self, job: Job) -> None:
        """Bring a lazy job's ``work`` up to date; it is no longer lazy."""
        w = job.work
        key = job.lz + int(w)
        lst = self.due[key]
        lst.remove(job)
        if not lst:
            del self.due[key]
        job.work = w - (self.rounds - job.lz)
        if self.rounds > job.lz:  # its last output token was the last round's end (tokens.py)
            job.owner.tok = self.t_round
        job.lz = -1
        self.nlazy -= 1

    def _materialize_all(self) -> None:
        r = self.rounds
        for job in self.residents:
            if job.lz >= 0:
                job.work = job.work - (r - job.lz)
                if r > job.lz:  # its last output token was the last round's end (tokens.py)
                    job.owner.tok = self.t_round
                job.lz = -1
        if self.tpend:
            self.tpend = []
        self.eager = list(self.residents)
        self.nlazy = 0
        self.due.clear()
