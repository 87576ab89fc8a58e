"""The planning of an iteration: the budget moment, serving the residents in ``serve by`` order, the
one admission loop and its gates, the cost; the per-job planning (the lazy and exclusive-prefill
plannings are beside it and share the admission loop)."""

from __future__ import annotations

import math
import sys
from heapq import heappush as _heappush

from ..errors import not_an_amount
from ..pools import admission
from ..pools.growth import grow_slot
from ..pools.release import innermost
from ..stages import Ctx, Job
from ..stats import HUGE_SPAN
from ..status import GROWING
from .common import (
    _EXACT,
    _INF,
    _TRACE,
    EPS,
    _rank,
    cost_context,
    iteration_sums,
    serve_keys_of,
    tally_class,
    tally_rounds,
)


class Planner:
    """The planning of a step stage's iteration (a part of :class:`~serq_sim.step.StepStage`)."""

    # ------------------------------------------------------------------ planning
    def _held(self, job: Job) -> float:
        """What ``job``'s session holds on the stage's memory pool (its slots found once per job)."""
        slots = job.mslots
        if slots is None:
            pool = self.memory
            s = job.owner
            if pool is None or s is None:
                slots = ()
            else:
                slots = [sl for h in s.holds for sl in h.slots if sl.pool is pool]
            job.mslots = slots
        m = 0  # as sum() would: an int 0 when nothing is held there
        for sl in slots:
            m += sl.alloc
        return m

    def _pre(self) -> Ctx:
        ctx = Ctx()
        res = self.residents
        ctx.residents = float(len(res))
        dec = kvd = kvp = 0.0
        if self.pre_kv:
            held = self._held
            for j in res:
                m = held(j)
                if j.mode == "decode":
                    dec += 1.0
                    kvd += m
                else:
                    kvp += m
        else:
            # nothing reads kv_decode or kv_prefill at the budget moment: their value is never seen
            dec = float(self.ndec)
        ctx.decoders = dec
        ctx.kv_decode = kvd
        ctx.kv_prefill = kvp
        return ctx

    def _cost(self, ctx: Ctx, assign: list[Job], nl: int, preempted: bool) -> float:
        """The iteration's cost at ``ctx`` (an error when NaN or negative); traced under SERQ_TRACE_ITER."""
        cost = self.cost_fn(None, None, ctx)
        if not cost >= 0.0:
            self._cost_error(cost, assign, nl)
        if _TRACE:
            self._trace(assign, nl, preempted)
        return cost

    def _at(self, field: str):
        """Where the stage's ``field`` (``budget``, ``cost``, ``chunk``) is written, which a run-time error about
        its value points at: its expression's place, where a constant one that breaks the same rule is refused
        at link time (as a spill's work is; pools.cache.spill), else the stage's."""
        return getattr(getattr(self.node.kind, field, None), "span", None) or self.node.span

    def _cost_error(self, cost: float, assign: list[Job], nl: int) -> None:
        """An iteration's cost that is NaN or negative (an iteration cannot end before it starts), with the
        sums of the batch it was computed for: the planned jobs ``assign`` and ``nl`` lazy decoders. The
        sessions of the batch are named: one as every run-time error names its session (``at t=T, session
        N``, with the trace row it replays), several after the sums (``sessions 3, 5``); it named none."""
        from ..errors import session_error, show
        from ..report import member_label

        held = self._held_fn
        lazy = [j for j in self.residents if j.lz >= 0 and j.stage is self] if nl else []
        lazy_kv = sum(map(held, lazy)) if nl else 0.0
        tokens, dec, pre_t, kvd, kvp = iteration_sums(assign, held, True, float(nl), float(nl), float(lazy_kv))
        sums = {"tokens": tokens, "decoders": dec, "prefilled": pre_t, "residents": float(len(self.residents)),
                "kv_decode": kvd, "kv_prefill": kvp}
        batch = ", ".join(f"{k} {show(v)}" for k, v in sums.items())
        owners = {j.owner.serial: j.owner for j in [*assign, *lazy] if j.owner is not None}
        msg = f"stage {member_label(self)}: the iteration's cost is {not_an_amount(cost)} (its batch: {batch}"
        sim = self.sim
        if len(owners) == 1:
            (s,) = owners.values()
            raise sim.error(msg + ")", s=s, span=self._at("cost"))
        if owners:
            serials = sorted(owners)
            more = f", … ({len(serials)} in all)" if len(serials) > 5 else ""
            msg += f"; sessions {', '.join(map(str, serials[:5]))}{more}"
        raise session_error(sim, self._at("cost"), sim.now, None, None, msg + ")")

    def _chunk(self, pre: Ctx) -> float:
        """The most tokens a prefill takes in the iteration: the stage's chunk (inf without one), an amount
        of tokens as the budget is (0 gives a prefill none; a negative or NaN one is an error, and a
        constant one does not link)."""
        if self.chunk_fn is None:
            return math.inf
        c = self.chunk_fn(None, None, pre)
        if not c >= 0.0:
            from ..report import member_label

            raise self.sim.error(f"stage {member_label(self)}: the chunk is {not_an_amount(c)}", span=self._at("chunk"))
        return c

    def _order(self, jobs: list[Job], pre: Ctx) -> list[Job]:
        if self.serve_keys is None:
            return list(jobs)
        if self.ranked:
            return list(jobs)  # kept in the serving order (StepStage.attach): ``jobs`` are residents, in it
        keys = self.serve_keys
        if self.serve_fixed:
            # keys that do not change while a job is resident (a subclass's stage: the step kind's own keeps
            # its residents in their order, ``ranked``): each job's taken once, kept while it is here (the
            # same keys, so the same stable sort: ties in the residents' order)
            old = self.served_keys
            new = {}
            kept = self._kept_keys
            for j in jobs:
                k = old.get(j)
                if k is None:
                    k = kept(j)
                new[j] = k
            if jobs is self.residents:
                self.served_keys = new  # (the jobs that left are let go)
            else:
                old.update(new)  # some of the residents (the newcomers of an admission): kept with the rest
            return sorted(jobs, key=new.__getitem__)
        ctx = Ctx()
        ctx.__dict__.update(pre.__dict__)
        keyed = []
        for j in jobs:
            ctx.decoding = 1.0 if j.mode == "decode" else 0.0
            ctx.admission = float(j.owner.adm_seq) if j.owner is not None else math.inf
            ctx.remaining = j.work
            s = j.owner
            keyed.append((serve_keys_of(keys(s, s.attrs if s is not None else None, ctx)), j))
        keyed.sort(key=lambda kv: kv[0])
        return [j for _, j in keyed]

    def _kept_keys(self, job: Job) -> tuple:
        """``job``'s serve keys when they do not change while it is resident (``serve_fixed``: they read
        attributes, numbers, ``admission`` and ``decoding``), a NaN as inf."""
        s = job.owner
        ctx = self.rank_ctx
        ctx.admission = float(s.adm_seq) if s is not None else math.inf
        ctx.decoding = 1.0 if job.mode == "decode" else 0.0
        return serve_keys_of(self.serve_keys(s, s.attrs if s is not None else None, ctx))

    def try_start(self) -> None:
        sim = self.sim
        pre = self._pre() if self.pre_ctx else self._no_ctx
        budget = self.budget_const
        if budget is None:
            budget = self.budget_fn(None, None, pre)
            if not budget >= 0.0:  # an amount of tokens (a constant one that is negative does not link)
                from ..report import member_label

                raise sim.error(f"stage {member_label(self)}: the budget is {not_an_amount(budget)}",
                                span=self._at("budget"))
            whole = budget == _INF or -_EXACT < budget < _EXACT and budget == int(budget)
        else:
            whole = self.budget_whole
        chunk = self._chunk(pre) if self.chunk_fn is not None else math.inf
        if whole:
            if self.glazy_ok and (self.ngrow or self.cost_kv):
                if (self._glazy_judged or self._glazy_judge()) and self._start_glazy(budget, chunk):
                    return
            elif self.lazy_ok and self.ngrow == 0:
                if self._start_lazy(budget, chunk):
                    return
        if self.nlazy:
            self._materialize_all()
        self.budget = budget
        self.left = budget
        self.assign = []
        self.attn = 0.0
        p0 = sim.preempt_count
        d0 = self.detached
        self.planning = True
        try:
            if self.exclusive:
                self._plan_exclusive(pre, chunk, p0)
            else:
                self._plan(pre, chunk, p0)
        finally:
            self.planning = False
        planned = self.assign
        self.assign = []
        tokens = dec = pre_t = kvd = kvp = 0.0
        if self.cost_kv:
            # without a detachment during the planning every planned job is still here with its tokens
            if self.detached == d0:
                assign = planned
            else:
                assign = [j for j in planned if j.stage is self and j.assigned > 0.0]
            tokens, dec, pre_t, kvd, kvp = iteration_sums(assign, self._held_fn, True, 0.0, 0.0, 0.0)
        elif not self.cost_sums:
            # the cost reads none of the sums; without a detachment during the planning every planned job
            # is still here with its tokens (a job is planned only with tokens > 0)
            if self.detached == d0:
                assign = planned
            else:
                assign = [j for j in planned if j.stage is self and j.assigned > 0.0]
        else:
            # the cost reads neither kv_decode nor kv_prefill; the sums are taken while filtering (they are
            # read only if the iteration happens)
            assign = []
            append = assign.append
            for j in planned:
                if j.stage is self:
                    t = j.assigned
                    if t > 0:
                        append(j)
                        tokens += t
                        if j.mode == "decode":
                            dec += 1.0
                        else:
                            pre_t += t
        preempted = sim.preempt_count > p0
        if not assign and not preempted:
            return
        if self.cost_ctx:
            ctx = cost_context(tokens, dec, pre_t, float(len(self.residents)), kvd, kvp, self.attn)
        else:
            ctx = self._no_ctx
        cost = self._cost(ctx, assign, 0, preempted)
        if self._own_busy:  # self.acc(), inlined: no iteration runs until now
            now = sim.now
            dt = now - self.t_last
            if dt > 0.0:
                if dt < HUGE_SPAN:
                    self.a_present += self.present * dt
                    self.a_busy += 0.0 * dt
                else:
                    self.acc_huge(dt, 0.0)
            self.t_last = now
        else:
            self.acc()
        self.iter = assign
        self.iter_lazy = 0
        self.t_start = sim.now
        self.epoch += 1
        if sim.warm:
            self.iterations += 1
            self._tally(assign, 0, budget, 1)
        _heappush(sim.heap, (sim.now + cost, next(sim._seq), self._end_cb, self.epoch))

    def _tally(self, assign: list[Job], nl: int, budget: float, k: int) -> None:
        """The engine statistics of ``k`` iterations like the one planned (after the warm-up): its
        composition (prefill-only, decode-only, mixed; one that only preempted is none of them), the
        jobs served (the batch), the tokens and the budget (the lazy planning, which has the sums, does
        the same in ``_launch``)."""
        tokens = float(nl)
        dec = nl
        for j in assign:
            tokens += j.assigned
            if j.mode == "decode":
                dec += 1
        jobs = len(assign) + nl
        tally_class(self, dec, jobs, k)
        self.tal_dec = dec  # the running iteration's classes (StepStage._untally)
        self.tal_pre = jobs - dec
        self.sum_jobs += jobs * k
        tally_rounds(self, tokens, budget, k)

    def _trace(self, assign: list[Job], nl: int, preempted: bool) -> None:
        parts = " ".join(f"{j.owner.serial}:{'d' if j.mode == 'decode' else 'p'}{j.assigned:g}" for j in assign)
        if nl:
            parts += f" +{nl} lazy d1"
        kv = self.memory
        print(f"ITER t={self.sim.now:g} {parts} | preempted={preempted} used={kv.used if kv else 0:g} "
              f"cached={kv.cached if kv else 0:g}", file=sys.stderr)

    def _plan(self, pre: Ctx, chunk: float, p0: int) -> None:
        order = self._order(self.residents, pre) if self.serve_keys is not None else list(self.residents)
        serve = self._serve
        append = self.assign.append
        # ``left`` and ``attn`` live in locals here and are written back before anything else reads them
        left = self.left
        attn = self.attn
        for job in order:
            if job.stage is self:
                if job.growing is None:
                    # self._serve(job, chunk) for a job that grows nothing (it cannot preempt), inlined
                    owner = job.owner
                    if owner is None or owner.status != GROWING:
                        w = job.work
                        if job.mode == "decode":
                            want = 1.0 if w > 1.0 else w
                            tokens = want if want < left else left
                            if tokens > 0.0:
                                job.assigned = tokens
                                append(job)
                                left = left - tokens
                        else:
                            want = w if w < chunk else chunk
                            tokens = want if want < left else left
                            if tokens > 0.0:
                                attn += tokens * ((job.total - w) + tokens / 2.0)
                                job.assigned = tokens
                                append(job)
                                left = left - tokens
                else:
                    # self._serve(job, chunk) for a grower whose slot is known and whose tokens fit its
                    # allocation (nothing to grow: it cannot preempt), inlined
                    slot = job.gslot
                    done = False
                    if slot is not None:
                        owner = job.owner
                        if owner.status == GROWING:
                            done = True  # a stalled grower gets nothing
                        else:
                            w = job.work
                            if job.mode == "decode":
                                want = 1.0 if w > 1.0 else w
                            else:
                                want = w if w < chunk else chunk
                            tokens = want if want < left else left
                            if tokens <= 0.0:
                                done = True
                            else:
                                k0 = slot.pos
                                if k0 + tokens - slot.alloc <= EPS:
                                    slot.pos = k0 + tokens
                                    owner.holds[job.ghi].grown = True
                                    if job.mode != "decode":
                                        attn += tokens * (k0 + tokens / 2.0)
                                    job.assigned = tokens
                                    append(job)
                                    left = left - tokens
                                    done = True
                    if not done:
                        self.left = left
                        self.attn = attn
                        stop = serve(job, chunk)
                        left = self.left
                        attn = self.attn
                        if stop:
                            return
            if left <= 0.0:
                self.left = left
                self.attn = attn
                return
        self.left = left
        self.attn = attn
        for pool in self.served_pools:
            if pool.front or pool.queue:  # (with no session waiting, no admission: nothing to call)
                self._admissions(p0, chunk, order, pre)
                return

    # ------------------------------------------------------------------ admission (one loop, its gates)
    def _admission_open(self, p0: int) -> bool:
        """The gates of admission in a planning: budget is left, and nothing was preempted since the
        planning began (``p0``, the preemptions then): no admission in an iteration that preempted."""
        return self.left > 0.0 and self.sim.preempt_count == p0

    def _admissions(self, p0: int, chunk: float, before, pre: Ctx | None, lazy: bool = False,
                    exclusive: bool = False) -> None:
        """The admission loop of every planning (per job, lazy, exclusive prefill): while the gates are
        open, admit the head of the first served pool with a waiting session (its header's
        ``budget_left`` reads the budget left; under ``exclusive`` the full budget), then serve the
        residents that admission brought, in serving order (``serve by`` keys when ``pre`` is given; only
        the residents that are not lazy when ``lazy``); ``before`` holds the residents served before the
        admissions. The first head that does not fit ends the admissions, and so does serving that
        stops (:meth:`_serve_admitted`)."""
        served = None
        sim = self.sim
        admit_one = self._admit_one
        # the residents an admission brings: after the first admission's pass over the residents, every
        # resident is served but the ones that joined since (``joins``: StepStage._join, and a lazy decoder
        # woken into ``eager``), so each later admission looks at those only, not at every resident (a
        # planning admitting thousands at one instant was quadratic); a list of residents replaced under it
        # (``src`` another object) is walked whole again
        outer = self.joins
        self.joins = joins = []
        src = None
        try:
            while self._admission_open(p0):
                # the attempt's budget left (under exclusive the whole budget): what budget_left(self) reads
                # in the queue's keys that choose the head, as in its header (admission.admit_head)
                s = admit_one(self.budget if exclusive else self.left)
                if s is None:
                    return
                if served is None:
                    # the lazy planning's set of the residents served before is its own (made for this call)
                    served = before if lazy and type(before) is set else set(before)
                now_src = self.eager if lazy else self.residents
                if now_src is not src:
                    src = now_src
                    work = len(src)
                    jobs = [j for j in src if j not in served]
                else:
                    # the newcomers still residents (not lazy, on a lazy planning: ``eager``), not served yet,
                    # once each, in serving order (by rank, as ``src`` keeps them)
                    work = len(joins) + 1
                    jobs = [j for j in dict.fromkeys(joins)
                            if j.stage is self and j not in served and (not lazy or j.lz < 0)]
                    if len(jobs) > 1:
                        jobs.sort(key=_rank)
                joins.clear()  # (from here on: the residents that join after this pass)
                # the residents looked at are units of the event's work (Simulation.pulse_out): a planning
                # may admit thousands
                sim.pulse -= work
                if sim.pulse < 0:
                    sim.pulse_out(f"admitting to stage {self.name} ({len(self.residents)} residents)", None,
                                  s.serial, None, self.node.span)
                if pre is not None:
                    jobs = self._order(jobs, pre)
                if exclusive:
                    for job in jobs:
                        served.add(job)
                        if self._serve_admitted(job, chunk, True):
                            return
                else:
                    for job in jobs:
                        served.add(job)
                        # self._serve_admitted(job, chunk, False), inlined
                        if job.stage is self:
                            if self._serve(job, chunk) or self.left <= 0.0:
                                return
                        elif self.left <= 0.0:
                            return
        finally:
            self.joins = outer
            if outer is not None:
                outer.extend(joins)  # (a planning of this stage inside another's admission: its newcomers too)

    def _serve_admitted(self, job: Job, chunk: float, exclusive: bool) -> bool:
        """Serve a resident an admission brought; ``True`` when serving stops: its growth preempted itself
        or no budget is left; under ``exclusive``, when it is a prefill (it displaces the tentative
        decodes and is served alone; a decode is served tentatively whatever its growth did). A prefill a
        chunk of 0 gives no token displaces nothing: it joins the residents as a decode does."""
        if job.stage is not self:
            return not exclusive and self.left <= 0
        if exclusive:
            if job.mode == "prefill" and chunk > 0.0:
                self._displace()
                self._serve(job, chunk)
                return True
            self._serve(job, chunk)
            return False
        return self._serve(job, chunk) or self.left <= 0

    def _admit_one(self, budget_left: float):
        """One admission attempt of the stage's waiting loop (:meth:`_admissions`, every planning): the head
        of the first pool it serves, in their declared order, that has a waiting session, admitted if its
        demand fits (:func:`.admission.admit_from`, ``budget_left`` what ``budget_left(S)`` reads in the
        queue's keys that choose the head and in its header). The admitted session, or ``None``: no
        session waits, or the head did not fit, which ends the iteration's admissions (the pools after it
        are not tried)."""
        for pool in self.served_pools:
            if pool.front or pool.queue:
                return admission.admit_from(self.sim, pool, budget_left, self)
        return None

    @staticmethod
    def _grown_slot(job: Job):
        """The slot a growing ``job`` grows, found once (``job.gslot``, and its hold's index ``job.ghi``):
        its session's innermost hold of the pool it grows; None (nothing set) when it holds none."""
        owner = job.owner
        pool = job.growing
        # innermost(owner, pool), its first place inlined: the session's last hold (a newcomer's)
        holds = owner.holds
        hi = len(holds) - 1
        if hi >= 0:
            for slot in holds[hi].slots:
                if slot.pool is pool:
                    break
            else:
                hi, slot = innermost(owner, pool)
        else:
            hi, slot = innermost(owner, pool)
        if slot is not None:
            job.gslot = slot
            job.ghi = hi
        return slot

    def _serve(self, job: Job, chunk: float) -> bool:
        """Schedule ``job``'s tokens; ``True`` when its growth preempted itself and its pool's policy
        stops the serving there (``self_stop``: under lifo)."""
        owner = job.owner
        if owner is not None and owner.status == GROWING:  # a stalled grower gets nothing
            return False
        if job.mode == "decode":
            want = 1.0 if job.work > 1.0 else job.work
        else:
            want = job.work if job.work < chunk else chunk
        tokens = want if want < self.left else self.left
        if tokens <= 0.0:
            return False
        pool = job.growing
        if pool is not None:
            sim = self.sim
            slot = job.gslot
            if slot is None:
                slot = self._grown_slot(job)
                if slot is None:
                    from ..report import member_label

                    name = member_label(pool)
                    raise sim.error(f"run {member_label(self)} … growing {name}: outside a hold of {name}",
                                    job.span, owner)
            hi = job.ghi
            need = slot.pos + tokens - slot.alloc
            if need > EPS:
                r = grow_slot(sim, owner, slot, need, job)
                if r is True:
                    return False
                if r is not None:
                    # the grower preempted itself: under lifo vLLM's running loop stops here
                    # (scheduler.py: `if new_blocks is None: break`), so the residents after it in the
                    # serving order get nothing this iteration; under another victim order (vLLM's
                    # priority policy: `continue`) the serving goes on to them
                    return pool.preempt.self_stop
            k0 = slot.pos
            slot.pos += tokens
            owner.holds[hi].grown = True
        else:
            k0 = job.total - job.work
        if job.mode == "prefill":
            self.attn += tokens * (k0 + tokens / 2.0)
        job.assigned = tokens
        self.assign.append(job)
        self.left -= tokens
        return False

    def _unadvance(self, job: Job, tokens: float) -> None:
        """Take back the ``tokens`` a growing job's planning advanced its hold's position by."""
        if job.growing is not None and job.owner is not None:
            slot = job.gslot
            if slot is None:
                _hi, slot = innermost(job.owner, job.growing)
            if slot is not None:
                slot.pos -= tokens
