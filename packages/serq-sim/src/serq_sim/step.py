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

from .compile import mentions
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
        self.budget_fn = c.fn(k.budget, span=node.span)
        self.cost_fn = c.fn(k.cost, span=node.span)
        self.chunk_fn = c.fn(k.chunk, span=node.span) if k.chunk is not None else None
        self.exclusive = isinstance(k.serve, N.ServeExclusivePrefill)
        keys = k.serve.keys if isinstance(k.serve, N.ServeBy) else []
        self.serve_keys = c.keys_fn(keys, span=node.span) if keys else None
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
        res = self.residents
        i = len(res)
        while i > 0 and (res[i - 1].owner.adm_seq if res[i - 1].owner is not None else math.inf) > seq:
            i -= 1
        res.insert(i, job)
        if job.mode == "decode":
            self.ndec += 1
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
        return float(len(self.iter)) if self.iter is not None else 0.0

    def work(self) -> float:
        return sum(j.work for j in self.residents)

    def budget_left(self) -> float:
        pre = self._pre()
        budget = self.budget_fn(None, None, pre)
        chunk = self._chunk(pre)
        want = 0.0
        for j in self.residents:
            want += min(1.0, j.work) if j.mode == "decode" else min(j.work, chunk)
        return max(budget - want, 0.0)

    # ------------------------------------------------------------------ planning
    def _held(self, s) -> float:
        pool = self.memory
        if pool is None or s is None:
            return 0.0
        m = 0  # as sum() would: an int 0 when nothing is held there
        for h in s.holds:
            for sl in h.slots:
                if sl.pool is pool:
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
                m = held(j.owner)
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
            assign = [j for j in planned if j.stage is self and j.assigned > 0]
            held = self._held
            for j in assign:
                tokens += j.assigned
                m = held(j.owner)
                if j.mode == "decode":
                    dec += 1
                    kvd += m
                else:
                    pre_t += j.assigned
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
        if cost != cost:
            raise sim.error(f"stage {self.name}: the iteration's cost is NaN", span=self.node.span)
        cost = max(cost, 0.0)
        if _TRACE:
            parts = " ".join(f"{j.owner.serial}:{'d' if j.mode == 'decode' else 'p'}{j.assigned:g}" for j in assign)
            kv = self.memory
            print(f"ITER t={sim.now:g} {parts} | preempted={preempted} used={kv.used if kv else 0:g} "
                  f"cached={kv.cached if kv else 0:g}", file=sys.stderr)
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
        self.epoch += 1
        if sim.warm:
            self.iterations += 1
        _heappush(sim.heap, (sim.now + cost, next(sim._seq), self._end, self.epoch))

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
            hi, slot = sim._innermost(owner, pool)
            if slot is None:
                raise sim.error(f"run {self.name} … growing {pool.name}: outside a hold of {pool.name}",
                                job.span, owner)
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
        if finished is None:
            return
        residents = self.residents
        job_done = self.sim.job_done
        for job in finished:
            residents.remove(job)
            if job.mode == "decode":
                self.ndec -= 1
            self.present -= 1
            job.stage = None
            job.work = 0.0
            job_done(self, job)


#: the context variables set at the budget moment, and for the cost
_PRE_NAMES = ("residents", "decoders", "kv_decode", "kv_prefill")
_COST_NAMES = ("tokens", "decoders", "prefilled", "residents", "kv_decode", "kv_prefill", "attention")


def step_factory(sim, node, member, flat):
    return StepStage(sim, node, member, flat)
