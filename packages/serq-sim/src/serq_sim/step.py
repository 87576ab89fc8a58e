"""The ``step`` stage kind: the iteration-level engine of continuous batching.

An iteration is planned at one instant, when the stage is idle, the settle has nothing left to run and no
other event is pending at that instant (a scheduler step sees every arrival up to it):

1. The budget moment: ``residents``, ``decoders``, ``kv_decode``, ``kv_prefill`` (the jobs present and the
   memory their sessions hold on the stage's ``memory`` pool) are fixed; ``budget`` and ``chunk`` are
   evaluated with them (``chunk`` absent, ≤ 0, NaN or ``inf``: no cap).
2. The residents are served in the ``serve by`` order (keys ascending, then admission order): one token to
   a decoding job, up to ``chunk`` to a prefilling one, until the budget is spent. A growing job first
   grows its hold to the position it will reach, block by block, preempting per the pool's rule; a victim
   already served gives its tokens back. Its position advances now (so a later victim's ``computed`` and
   the cache see it), its work when the iteration ends.
3. Unless this planning preempted someone, the stage admits from the pools it serves (``admit via``), in
   declaration order, while budget is left: ``budget_left(S)`` in the head's header reads the budget left;
   the first head that does not fit ends the admissions. The admitted session runs at once (zero time)
   until it joins the stage or blocks, and a newcomer is served like a resident.
4. Nothing scheduled and nothing preempted: no iteration. Otherwise the iteration lasts ``cost``
   (``tokens``, ``decoders``, ``prefilled``, ``residents``, ``kv_decode``, ``kv_prefill``, ``attention``);
   an iteration that only preempted costs ``cost`` at zero tokens.

``serve exclusive prefill``: a resident prefill (the first in admission order) is served alone; otherwise
the decodes are scheduled tentatively, and a waiting prefill admitted while budget is left (its header
sees the full budget) displaces them: they keep any allocation they acquired but neither execute nor
advance their position, and the prefill gets the whole budget. A selected prefill ends admission.
"""

from __future__ import annotations

import math
import os
import sys
from heapq import heappush as _heappush

from serq_ir import nodes as N

from .compile import mentions, reads
from .errors import SimError, format_error
from .stages import Ctx, Job, StageKind

EPS = 1e-9
#: ``SERQ_TRACE_ITER=1``: print every iteration's composition on stderr (debugging).
_TRACE = bool(os.environ.get("SERQ_TRACE_ITER"))


class StepStage(StageKind):
    """``step { budget B; cost C; chunk K; serve …; memory POOL; }``."""

    wants_start = True

    def __init__(self, sim, node: N.Stage, member: int, flat: int):
        super().__init__(sim, node, member, flat)
        k: N.Step = node.kind
        c = sim.compiler
        # a family of the stage's size named without an index in these is this member's own
        c.own = (node.size, member)
        try:
            self.budget_fn = c.fn(k.budget, span=node.span)
            self.cost_fn = c.fn(k.cost, span=node.span)
            self.chunk_fn = c.fn(k.chunk, span=node.span) if k.chunk is not None else None
            keys = k.serve.keys if isinstance(k.serve, N.ServeBy) else []
            self.serve_keys = c.keys_fn(keys, span=node.span) if keys else None
        finally:
            c.own = None
        self.exclusive = isinstance(k.serve, N.ServeExclusivePrefill)
        self.memory_family = k.memory
        self.memory = None
        self.served_pools: list = []
        self.residents: list[Job] = []
        self.iter: list[Job] | None = None
        self.epoch = 0
        self.iterations = 0
        self.planning = False
        self.assign: list[Job] = []
        self.left = 0.0
        self.budget = 0.0
        self.attn = 0.0
        #: how many residents decode (kept as ``residents`` changes: attach, detach, the end of an iteration)
        self.ndec = 0
        # ``acc`` may read ``iter`` directly unless a subclass redefines ``busy_level``
        self._own_busy = type(self).busy_level is StepStage.busy_level
        # Whether the budget moment's expressions (budget, chunk, serve keys) and the cost read the memory
        # held by decoders and prefills: summing it per resident is most of a plan's time when they do not.
        # Judged from the encoded IR (any mention of the name counts), so it errs towards computing.
        pre_exprs = [k.budget, k.chunk, *keys]
        self.pre_kv = mentions(pre_exprs, ("kv_decode", "kv_prefill"))
        self.cost_kv = mentions([k.cost], ("kv_decode", "kv_prefill"))
        # Whether the cost reads any of the sums over the iteration's jobs (judged the same way)
        self.cost_sums = self.cost_kv or mentions([k.cost], ("tokens", "decoders", "prefilled"))
        # Whether the budget moment's expressions and the cost read any of their context variables at all:
        # when not, they are given a context with none set (every name reads NaN, as an unset one would)
        self._no_ctx = Ctx()
        self.pre_ctx = mentions(pre_exprs, _PRE_NAMES)
        self.cost_ctx = mentions([k.cost], _COST_NAMES)
        #: detachments so far: none during a planning means every planned job is still here, with tokens
        self.detached = 0
        # Lazy decoding (see _start_lazy): a decoding job that grows nothing and has a whole number of tokens
        # left takes exactly one token per iteration until it is done, so it is not visited per iteration:
        # ``rounds`` counts the iterations that ended, a lazy job's ``work`` is its work at round ``job.lz``
        # and ``due[r]`` lists the lazy jobs whose last token is in round r. ``eager`` holds the other
        # residents (admission order). Off when anything read per job could tell (serve keys, exclusive
        # prefill, kv sums), in a subclass, and under SERQ_SIM_TIER=general (the per-job reference).
        self.lazy_ok = (type(self) is StepStage and self.serve_keys is None and not self.exclusive
                        and not self.pre_kv and not self.cost_kv
                        and os.environ.get("SERQ_SIM_TIER", "").strip().lower() != "general")
        self.eager: list[Job] = []
        self.nlazy = 0
        self.ngrow = 0
        self.rounds = 0
        self.due: dict[int, list[Job]] = {}
        #: lazy jobs in the running iteration, and how many of ``iter`` were residents when it was planned
        self.iter_lazy = 0
        self.iter_split = 0
        #: planning the lazy way (a lazy job detached now gives its token back)
        self.fast = False
        #: iterations planned the lazy way with lazy jobs in them (tests read it; not reported)
        self.lazy_iterations = 0
        #: whether quiet rounds may be completed without the event loop, as far as the program tells
        #: (None: not judged yet; see _quiet)
        self._quiet_static: bool | None = None

    def bind(self) -> None:
        """Called once all stages and pools exist: find the memory pool and the pools admitted here."""
        sim = self.sim
        p = sim.program
        if self.memory_family is not None:
            f = self.memory_family
            size = p.pools[f].size
            base = sim.pool_base[f]
            if size == self.node.size:
                self.memory = sim.pools[base + self.index]
            elif size == 1:
                self.memory = sim.pools[base]
            else:
                raise SimError(format_error(self.node.span, None, None, f"stage {self.name}[{self.node.size}]"
                                            f": memory {p.pools[f].name}[{size}] cannot be paired", sim.source))
            self.memory.memory_of.append(self)
        self.served_pools = [pl for pl in sim.pools if pl.via is self]

    # ------------------------------------------------------------------ the contract
    def busy_level(self) -> float:
        return 1.0 if self.iter is not None else 0.0

    def idle(self) -> bool:
        if self.iter is not None:
            return False
        if self.residents:
            return True
        for pl in self.served_pools:
            if pl.front or pl.queue:
                return True
        return False

    def attach(self, job: Job) -> None:
        if job.mode == "plain":
            raise self.sim.error(f"run {self.name}: a run on a step stage is prefill or decode", job.span,
                                 job.owner)
        self.acc()
        job.stage = self
        job.started = self.sim.now
        job.assigned = 0.0
        seq = job.owner.adm_seq if job.owner is not None else math.inf
        _insert(self.residents, job, seq)
        _insert(self.eager, job, seq)
        if job.mode == "decode":
            self.ndec += 1
        if job.growing is not None:
            self.ngrow += 1
        self.present += 1

    def detach(self, job: Job) -> None:
        self.detached += 1
        self.acc()
        try:
            self.residents.remove(job)
        except ValueError:
            pass
        else:
            if job.mode == "decode":
                self.ndec -= 1
            if job.growing is not None:
                self.ngrow -= 1
            if job.lz >= 0:
                self._materialize(job)
                if self.planning and self.fast:
                    self.left += 1.0  # its token of this iteration, as a planned job's below
            else:
                self.eager.remove(job)
        self.present -= 1
        job.stage = None
        if job.assigned > 0:
            t = job.assigned
            job.assigned = 0.0
            self._unadvance(job, t)
            if self.planning:
                self.left += t

    def settle(self) -> None:
        self._marked = False

    def acc(self) -> None:
        if not self._own_busy:
            return super().acc()
        now = self.sim.now
        dt = now - self.t_last
        if dt > 0:
            self.a_present += self.present * dt
            self.a_busy += (1.0 if self.iter is not None else 0.0) * dt
        self.t_last = now

    # ------------------------------------------------------------------ observables
    def busy(self) -> float:
        return float(len(self.iter) + self.iter_lazy) if self.iter is not None else 0.0

    def work(self) -> float:
        r = self.rounds
        return sum(j.work - (r - j.lz) if j.lz >= 0 else j.work for j in self.residents)

    def budget_left(self) -> float:
        pre = self._pre()
        budget = self.budget_fn(None, None, pre)
        chunk = self._chunk(pre)
        want = 0.0
        r = self.rounds
        for j in self.residents:
            w = j.work - (r - j.lz) if j.lz >= 0 else j.work
            want += min(1.0, w) if j.mode == "decode" else min(w, chunk)
        return max(budget - want, 0.0)

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
                    dec += 1
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

    def _cost_error(self, cost: float) -> None:
        """An iteration's cost that is NaN or negative (an iteration cannot end before it starts)."""
        from .engine import _show

        how = "NaN" if cost != cost else f"negative ({_show(cost)})"
        raise self.sim.error(f"stage {self.name}: the iteration's cost is {how}", span=self.node.span)

    def _chunk(self, pre: Ctx) -> float:
        if self.chunk_fn is None:
            return math.inf
        c = self.chunk_fn(None, None, pre)
        if not (c > 0):
            return math.inf
        return c

    def _order(self, jobs: list[Job], pre: Ctx) -> list[Job]:
        if self.serve_keys is None:
            return list(jobs)
        keys = self.serve_keys
        ctx = Ctx()
        ctx.__dict__.update(pre.__dict__)
        keyed = []
        for j in jobs:
            ctx.decoding = 1.0 if j.mode == "decode" else 0.0
            ctx.admission = float(j.owner.adm_seq) if j.owner is not None else math.inf
            ctx.remaining = j.work
            s = j.owner
            keyed.append((keys(s, s.attrs if s is not None else None, ctx), j))
        keyed.sort(key=lambda kv: kv[0])
        return [j for _, j in keyed]

    def try_start(self) -> None:
        sim = self.sim
        pre = self._pre() if self.pre_ctx else self._no_ctx
        budget = self.budget_fn(None, None, pre)
        if budget != budget:
            raise sim.error(f"stage {self.name}: the budget is NaN", span=self.node.span)
        chunk = self._chunk(pre) if self.chunk_fn is not None else math.inf
        if self.lazy_ok and self.ngrow == 0 and (budget == _INF or -_EXACT < budget < _EXACT
                                                  and budget == int(budget)):
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
                assign = [j for j in planned if j.stage is self and j.assigned > 0]
            held = self._held
            for j in assign:
                t = j.assigned
                tokens += t
                slots = j.mslots
                if slots is None:
                    m = held(j)
                else:  # held(j), inlined
                    m = 0
                    for sl in slots:
                        m += sl.alloc
                if j.mode == "decode":
                    dec += 1
                    kvd += m
                else:
                    pre_t += t
                    kvp += m
        elif not self.cost_sums:
            # the cost reads none of the sums; without a detachment during the planning every planned job
            # is still here with its tokens (a job is planned only with tokens > 0)
            if self.detached == d0:
                assign = planned
            else:
                assign = [j for j in planned if j.stage is self and j.assigned > 0]
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
                            dec += 1
                        else:
                            pre_t += t
        preempted = sim.preempt_count > p0
        if not assign and not preempted:
            return
        if self.cost_ctx:
            ctx = Ctx()
            ctx.tokens = tokens
            ctx.decoders = dec
            ctx.prefilled = pre_t
            ctx.residents = float(len(self.residents))
            ctx.kv_decode = kvd
            ctx.kv_prefill = kvp
            ctx.attention = self.attn
        else:
            ctx = self._no_ctx
        cost = self.cost_fn(None, None, ctx)
        if not cost >= 0.0:
            self._cost_error(cost)
        if _TRACE:
            self._trace(assign, 0, preempted)
        if self._own_busy:  # self.acc(), inlined: no iteration runs until now
            now = sim.now
            dt = now - self.t_last
            if dt > 0:
                self.a_present += self.present * dt
                self.a_busy += 0.0 * dt
            self.t_last = now
        else:
            self.acc()
        self.iter = assign
        self.iter_lazy = 0
        self.epoch += 1
        if sim.warm:
            self.iterations += 1
        _heappush(sim.heap, (sim.now + cost, next(sim._seq), self._end, self.epoch))

    def _trace(self, assign: list[Job], nl: int, preempted: bool) -> None:
        parts = " ".join(f"{j.owner.serial}:{'d' if j.mode == 'decode' else 'p'}{j.assigned:g}" for j in assign)
        if nl:
            parts += f" +{nl} lazy d1"
        kv = self.memory
        print(f"ITER t={self.sim.now:g} {parts} | preempted={preempted} used={kv.used if kv else 0:g} "
              f"cached={kv.cached if kv else 0:g}", file=sys.stderr)

    def _plan(self, pre: Ctx, chunk: float, p0: int) -> None:
        sim = self.sim
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
                    if owner is None or owner.status != 3:
                        w = job.work
                        if job.mode == "decode":
                            want = 1.0 if w > 1.0 else w
                            tokens = want if want < left else left
                            if tokens > 0:
                                job.assigned = tokens
                                append(job)
                                left = left - tokens
                        else:
                            want = w if w < chunk else chunk
                            tokens = want if want < left else left
                            if tokens > 0:
                                attn += tokens * ((job.total - w) + tokens / 2.0)
                                job.assigned = tokens
                                append(job)
                                left = left - tokens
                else:
                    self.left = left
                    self.attn = attn
                    stop = serve(job, chunk)
                    left = self.left
                    attn = self.attn
                    if stop:
                        return
            if left <= 0:
                self.left = left
                self.attn = attn
                return
        self.left = left
        self.attn = attn
        served = None
        while self.left > 0 and sim.preempt_count == p0:
            if not self._admit_one(self.left):
                return
            if served is None:
                served = set(order)
            for job in self._order([j for j in self.residents if j not in served], pre):
                served.add(job)
                if job.stage is self and self._serve(job, chunk):
                    return
                if self.left <= 0:
                    return

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
        # decoders that have become lazy (none grows: there are no growers)
        if eager:
            keep = None
            for k, job in enumerate(eager):
                w = job.work
                if job.mode == "decode" and job.owner is not None and 1.0 <= w <= _EXACT and w == int(w):
                    if keep is None:
                        keep = eager[:k]
                    job.lz = rounds
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
                served = set(self.eager)
                while self.left > 0 and sim.preempt_count == p0:
                    if not self._admit_one(self.left):
                        break
                    stop = False
                    for job in [j for j in self.eager if j not in served]:
                        served.add(job)
                        if (job.stage is self and self._serve(job, chunk)) or self.left <= 0:
                            stop = True
                            break
                    if stop:
                        break
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
        cost = self.cost_fn(None, None, ctx)
        if not cost >= 0.0:
            self._cost_error(cost)
        if _TRACE:
            self._trace(assign, nl, preempted)
        now = sim.now  # self.acc(), inlined: no iteration runs until now
        dt = now - self.t_last
        if dt > 0:
            self.a_present += self.present * dt
        self.t_last = now
        self.iter = assign
        self.iter_lazy = nl
        self.iter_split = split
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
        while t < t_next and t <= horizon and (r + n + 1) not in due:
            dt = t - last
            if dt > 0:
                a_present += present * dt
                a_busy += 1.0 * dt
            last = t
            n += 1
            t = t + cost
        if n:
            self.a_present = a_present
            self.a_busy = a_busy
            self.t_last = last
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
                demand = sim._head(pool).pending.demand
                return demand is None or sim.fits(demand)
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
        job.lz = -1
        self.nlazy -= 1

    def _materialize_all(self) -> None:
        r = self.rounds
        for job in self.residents:
            if job.lz >= 0:
                job.work = job.work - (r - job.lz)
                job.lz = -1
        self.eager = list(self.residents)
        self.nlazy = 0
        self.due.clear()

    def _plan_exclusive(self, pre: Ctx, chunk: float, p0: int) -> None:
        sim = self.sim
        order = self._order(self.residents, pre)
        for job in order:
            if job.mode == "prefill" and job.owner.status != 3:
                self._serve(job, chunk)
                return
        served = set()
        for job in order:
            served.add(job)
            if job.stage is self and self._serve(job, chunk):
                return
        while self.left > 0 and sim.preempt_count == p0:
            if not self._admit_one(self.budget):
                return
            for job in self._order([j for j in self.residents if j not in served], pre):
                served.add(job)
                if job.stage is not self:
                    continue
                if job.mode == "prefill":
                    self._displace()
                    self._serve(job, chunk)
                    return
                self._serve(job, chunk)

    def _displace(self) -> None:
        """Cancel the tentative decodes: they keep their allocation, not their tokens."""
        for j in self.assign:
            if j.assigned > 0:
                self._unadvance(j, j.assigned)
            j.assigned = 0.0
        self.assign = []
        self.left = self.budget
        self.attn = 0.0

    def _unadvance(self, job: Job, tokens: float) -> None:
        """Take back the ``tokens`` a growing job's planning advanced its hold's position by."""
        if job.growing is not None and job.owner is not None:
            slot = job.gslot
            if slot is None:
                _hi, slot = self.sim._innermost(job.owner, job.growing)
            if slot is not None:
                slot.pos -= tokens

    def _admit_one(self, budget_left: float) -> bool:
        for pool in self.served_pools:
            if pool.front or pool.queue:
                return self.sim.admit_from(pool, budget_left, self)
        return False

    def _serve(self, job: Job, chunk: float) -> bool:
        """Schedule ``job``'s tokens; ``True`` when its growth preempted itself (serving stops)."""
        owner = job.owner
        if owner is not None and owner.status == 3:  # a stalled grower gets nothing
            return False
        if job.mode == "decode":
            want = 1.0 if job.work > 1.0 else job.work
        else:
            want = job.work if job.work < chunk else chunk
        tokens = want if want < self.left else self.left
        if tokens <= 0:
            return False
        pool = job.growing
        if pool is not None:
            sim = self.sim
            slot = job.gslot
            if slot is None:
                hi, slot = sim._innermost(owner, pool)
                if slot is None:
                    raise sim.error(f"run {self.name} … growing {pool.name}: outside a hold of {pool.name}",
                                    job.span, owner)
                job.gslot = slot
                job.ghi = hi
            else:
                hi = job.ghi
            need = slot.pos + tokens - slot.alloc
            if need > EPS:
                r = sim.grow_slot(owner, slot, need, job)
                if r is True:
                    return False
                if r is not None:
                    # the grower preempted itself: vLLM's running loop stops here
                    # (scheduler.py: `if new_blocks is None: break`), so the residents after it in the
                    # serving order get nothing this iteration
                    return True
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

    def _end(self, epoch: int) -> None:
        if epoch != self.epoch or self.iter is None:
            return
        assign = self.iter
        if self._own_busy:  # self.acc(), inlined: an iteration ran until now
            now = self.sim.now
            dt = now - self.t_last
            if dt > 0:
                self.a_present += self.present * dt
                self.a_busy += 1.0 * dt
            self.t_last = now
        else:
            self.acc()
        self.iter = None
        self.rounds += 1
        lazy_done = self.due.pop(self.rounds, None) if self.iter_lazy else None
        finished = None
        for job in assign:
            if job.stage is not self:
                continue
            w = job.work - job.assigned
            job.assigned = 0.0
            job.work = w
            if w <= EPS:
                if finished is None:
                    finished = [job]
                else:
                    finished.append(job)
        if lazy_done is not None:
            # in the per-job order: the residents at the planning in admission order, then the newcomers
            split = self.iter_split
            first = [j for j in assign[:split] if finished is not None and j in finished]
            rest = [j for j in finished if j not in first] if finished is not None else []
            for job in lazy_done:
                job.lz = -1
                job.work = 0.0
                self.nlazy -= 1
            first.extend(lazy_done)
            first.sort(key=_adm_seq)
            finished = first + rest
        elif finished is None:
            return
        residents = self.residents
        eager = self.eager
        job_done = self.sim.job_done
        for job in finished:
            residents.remove(job)
            if job.mode == "decode":
                self.ndec -= 1
            if job.growing is not None:
                self.ngrow -= 1
            try:
                eager.remove(job)
            except ValueError:
                pass  # a lazy job
            self.present -= 1
            job.stage = None
            job.work = 0.0
            job_done(self, job)


_INF = math.inf
#: below this a float holds every whole number exactly (and subtracting one is exact)
_EXACT = 9007199254740992.0


def _not_steady(names: tuple[str, ...]):
    """A predicate for :func:`reads`: a node whose value may differ between two quiet rounds."""
    def pred(e) -> bool:
        return isinstance(e, (N.Draw, N.Observable, N.Attr)) or (isinstance(e, N.Ctx) and e.name not in names)
    return pred


def _unplan(assign: list[Job]) -> bool:
    for j in assign:
        j.assigned = 0.0
    return False


def _adm_seq(job: Job) -> float:
    return job.owner.adm_seq if job.owner is not None else math.inf


def _insert(jobs: list[Job], job: Job, seq: float) -> None:
    """Insert ``job`` into ``jobs`` (in admission order) after every job admitted no later."""
    i = len(jobs)
    while i > 0 and _adm_seq(jobs[i - 1]) > seq:
        i -= 1
    jobs.insert(i, job)


#: the context variables set at the budget moment, and for the cost
_PRE_NAMES = ("residents", "decoders", "kv_decode", "kv_prefill")
_COST_NAMES = ("tokens", "decoders", "prefilled", "residents", "kv_decode", "kv_prefill", "attention")


def step_factory(sim, node, member, flat):
    return StepStage(sim, node, member, flat)
