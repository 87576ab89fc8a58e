"""The ``step`` stage kind: its state, the stage-kind contract, the observables and the end of an
iteration; the planning is :mod:`.planner`, :mod:`.lazy` and :mod:`.exclusive`."""

from __future__ import annotations

import math
from bisect import bisect_right

from serq_ir import nodes as N
from serq_ir.rules import PAIRING, family, pairs

from ..compile import _not_pure, instant_span, reads_any, reads_context
from ..errors import SimError, format_error
from ..stages import Ctx, Job, StageKind, work_pulse
from ..stats import HUGE_SPAN
from ..status import STAGE
from ..tier_env import forced_general
from .common import (
    _COST_NAMES,
    _EXACT,
    _PRE_NAMES,
    _TRACE,
    EPS,
    _rank,
    admission_order,
    constant,
    position,
    tally_class,
)
from .exclusive import ExclusivePrefill
from .lazy import LazyDecoding
from .planner import Planner
from .tokens import gaps_of

#: the context variables of serve keys that do not change while a job is resident
_KEPT = ("admission", "decoding")

#: iterations in a row of less than a token that change no job's work, nothing else happening between them,
#: beyond which a stage whose budget, chunk and serve keys do not read the clock is stopped (StepStage._dust)
DUST_ITERATIONS = 1000


def _admission(job: Job) -> float:
    """A ranked resident's admission, the last of its rank (StepStage.attach)."""
    return job.rank[-1]


class StepStage(Planner, LazyDecoding, ExclusivePrefill, StageKind):
    """``step { budget B; cost C; chunk K; serve …; memory POOL; }``."""

    wants_start = True

    #: the attributes the engine sets on a step stage, as slots: an instance with more than 30 attributes in
    #: its dict has each method call and attribute read looked up by name (CPython specializes neither),
    #: and this one's are read every iteration (test_slots.py checks that every one a run sets is here)
    __slots__ = (
        "_end_cb", "_glazy_judged", "orders", "hot", "spos", "_held_fn", "_marked", "_no_ctx", "_own_busy", "_quiet_static", "_wake_batch", "_wake_static",
        "a_busy", "a_present", "b_busy", "b_present", "b_service", "b_wait", "assign", "attn", "budget", "budget_const", "budget_fn", "budget_whole",
        "chunk_fn", "completions", "cost_ctx", "cost_fn", "cost_kv", "cost_of", "cost_sums", "detached", "due",
        "eager", "epoch", "est", "exclusive", "fast", "flat", "gaps", "glazy_iterations", "glazy_ok", "glazy_wide", "gwalk",
        "index", "it_decode", "joins", "it_mixed", "it_prefill", "iter", "iter_lazy", "iter_split", "iterations",
        "kv_lazy", "lazy_iterations", "lazy_ok", "left", "lz_gone", "memory", "memory_family", "name", "ndec",
        "ngrow", "nlazy", "nlazy_x", "node", "planning", "pre_ctx", "pre_kv", "present", "quiet_rounds",
        "quiet_wakes", "busy_rounds", "rank_ctx", "ranked", "requests", "residents", "rounds", "serve_fixed", "serve_keys", "served_keys", "served_pools", "service_sum", "sim",
        "still_cap", "still_n", "still_t", "sum_budget", "sum_jobs", "sum_tokens", "t_last", "t_round", "t_start",
        "iter_tokens", "dust_n", "dust_ev", "dust_fixed",
        "tal_dec", "tal_pre", "tpend", "wait_sum", "wake", "wake_batches",
    )

    def __init__(self, sim, node: N.Stage, member: int, flat: int):
        super().__init__(sim, node, member, flat)
        k: N.Step = node.kind
        c = sim.compiler
        # a family of the stage's size named without an index in these is this member's own
        c.own = (node.size, member)
        try:
            self.budget_fn = c.fn(k.budget, span=node.span)
            self.cost_fn = c.fn(k.cost, span=node.span)
            #: the cost as a function of its context variables (_COST_NAMES, in order): the lazy plannings'
            #: (no context object per iteration; the per-job planning, the reference, keeps cost_fn)
            self.cost_of = c.ctx_fn(k.cost, _COST_NAMES, span=node.span)
            # a chunk that is inf whatever the state is no chunk (what _chunk gives for none), not evaluated
            # every iteration
            self.chunk_fn = (c.fn(k.chunk, span=node.span) if k.chunk is not None and constant(k.chunk) != math.inf
                             else None)
            keys = k.serve.keys if isinstance(k.serve, N.ServeBy) else []
            if admission_order(keys) and not forced_general():
                keys = []  # the residents are kept in that order already (the per-job reference sorts)
            self.serve_keys = c.keys_fn(keys, span=node.span, kind="serve by") if keys else None
            #: the serve keys read nothing that changes while a job is resident (attributes, numbers,
            #: ``admission`` and ``decoding``: a session's code runs only between its jobs, a new admission
            #: is a new job, and a job is a prefill or a decode for good): each job's keys are evaluated
            #: once (Planner._kept_keys: at its attach, as its rank, on a ``ranked`` stage; else at the
            #: first planning that orders it); the per-job reference evaluates them every iteration
            self.serve_fixed = bool(keys) and not forced_general() and not reads_any(
                keys, lambda e: _not_pure(e) and not (isinstance(e, N.Ctx) and e.name in _KEPT))
            self.served_keys = {}
        finally:
            c.own = None
        #: the budget when it is the same whatever the state (not NaN: that is an error when planning), not
        #: evaluated every iteration, and whether it is a whole number or inf (what the lazy plannings take)
        b = constant(k.budget)
        self.budget_const = b if b is not None and b == b else None
        self.budget_whole = b is not None and (b == math.inf or -_EXACT < b < _EXACT and b == int(b))
        self.exclusive = isinstance(k.serve, N.ServeExclusivePrefill)
        #: the residents are kept in their serving order, not in admission order: serve keys that do not
        #: change while a job is resident (``serve_fixed``) are taken once, at its attach, as its ``rank``
        #: (the keys, then its admission: the ties' order); the residents and ``eager`` are kept sorted by
        #: rank, so the lazy plannings walk them in the serving order as they walk admission order
        #: without keys (where a job's rank is its admission). Not under exclusive prefill.
        self.ranked = self.serve_fixed and type(self) is StepStage and not self.exclusive
        self.rank_ctx = Ctx()
        self.hot = True
        self.spos = -1
        self.memory_family = k.memory
        self.memory = None
        self.served_pools: list = []
        self.residents: list[Job] = []
        #: while a planning admits (Planner._admissions), the jobs that join the residents (or, on a lazy
        #: planning, the ones not lazy) since its last look at them; None otherwise
        self.joins: list[Job] | None = None
        #: the residents in orders of their own (serq_sim.orders: for the choice of a preemption victim), each
        #: made when first asked for and kept as jobs join and leave; ``False`` for one whose key raised
        self.orders: dict = {}
        self.iter: list[Job] | None = None
        self.epoch = 0
        #: the end of an iteration, the callback every iteration queues (bound once: reading a method
        #: as an attribute makes a new bound method each time)
        self._end_cb = self._end
        #: the no-progress guard of iterations of no time (_no_time): the instant they began, the jobs they
        #: served since, and the bound; an instant is the event guard's (compile.instant_span: the times within
        #: ZENO × max(|t|, 1) of its start)
        self.still_t = math.nan
        self.still_n = 0
        #: the tokens of the iteration running (common.tally_rounds), the iterations in a row that changed no
        #: job's work with nothing else happening between them (_dust), the event count at the last of them,
        #: and whether the stage's budget, chunk and serve keys read nothing that changes with time alone
        #: (None: not looked at yet)
        self.iter_tokens = math.inf
        self.dust_n = 0
        self.dust_ev = -1
        self.dust_fixed = None
        self.still_cap = 0
        #: what a job holds on the memory pool (Planner._held), bound once for the cost's sums
        self._held_fn = self._held
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
        pre_exprs = [k.budget, k.chunk, *keys]
        self.pre_kv = reads_context(pre_exprs, ("kv_decode", "kv_prefill"))
        self.cost_kv = reads_context([k.cost], ("kv_decode", "kv_prefill"))
        # Whether the cost reads any of the sums over the iteration's jobs
        self.cost_sums = self.cost_kv or reads_context([k.cost], ("tokens", "decoders", "prefilled"))
        # Whether the budget moment's expressions and the cost read any of their context variables at all:
        # when not, they are given a context with none set (every name reads NaN, as an unset one would)
        self._no_ctx = Ctx()
        self.pre_ctx = reads_context(pre_exprs, _PRE_NAMES)
        self.cost_ctx = reads_context([k.cost], _COST_NAMES)
        #: detachments so far: none during a planning means every planned job is still here, with tokens
        self.detached = 0
        # Lazy decoding (see _start_lazy): a decoding job that grows nothing and has a whole number of tokens
        # left takes exactly one token per iteration until it is done, so it is not visited per iteration:
        # ``rounds`` counts the iterations that ended, a lazy job's ``work`` is its work at round ``job.lz``
        # and ``due[r]`` lists the lazy jobs whose last token is in round r. ``eager`` holds the other
        # residents (serving order: by rank). Off when anything read per job could tell (serve keys that
        # change while a job is resident, exclusive prefill, kv sums), in a subclass, and under
        # SERQ_SIM_TIER=general (the per-job reference).
        self.lazy_ok = (type(self) is StepStage and (self.serve_keys is None or self.ranked) and not self.exclusive
                        and not self.pre_kv and not self.cost_kv
                        and not forced_general())
        self.eager: list[Job] = []
        self.nlazy = 0
        #: the lazy decoders whose request's gaps do not count (sent before the warm-up; tokens.py)
        self.nlazy_x = 0
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
        # Lazy growers (see _start_glazy): decoders that grow their hold are lazy between block boundaries
        # (``wake[r]`` lists those whose next token, in round r, needs a block), and the cost may read the
        # kv sums (``kv_lazy``: what the lazy decoders' sessions hold on the memory pool). Judged once the
        # pools are bound (_glazy_judge).
        self.glazy_ok = (type(self) is StepStage and (self.serve_keys is None or self.ranked) and not self.exclusive
                         and not self.pre_kv and not _TRACE and not forced_general())
        self._glazy_judged = False
        #: whether the memory pool of the lazy growers has no cap (``cap inf``): its totals are exact counts that
        #: may pass 2**53, and the lazy planning is taken while they stay below :data:`.lazy._WIDE_LIM` (_glazy_judge)
        self.glazy_wide = False
        self.wake: dict[int, list[Job]] = {}
        self.kv_lazy = 0.0
        self.lz_gone: list[Job] = []
        self.gwalk = False
        #: iterations planned with lazy jobs by the lazy-grower planning (tests read it; not reported)
        self.glazy_iterations = 0
        #: whether quiet rounds may be completed without the event loop, as far as the program tells
        #: (None: not judged yet; see _quiet)
        self._quiet_static: bool | None = None
        #: whether those quiet rounds may take the block boundaries of lazy growers too (judged with it)
        self._wake_static = False
        #: rounds completed as quiet rounds, and rounds among them in which lazy growers grew a block
        #: (tests read them; not reported)
        self.quiet_rounds = 0
        self.quiet_wakes = 0
        #: rounds among them that planned a prefill's next chunk (LazyDecoding._busy_job; tests read it)
        self.busy_rounds = 0
        #: whether lazy growers at a block boundary may take their blocks at once in a planning (None: not
        #: judged yet; see _judge_wake_batch), and how many plannings did (tests read it; not reported)
        self._wake_batch: bool | None = None
        self.wake_batches = 0
        #: the output tokens' gaps (ITL, step/tokens.py): the running iteration's start, the end of the
        #: last round that ended, and the lazy decoders made lazy at this planning whose previous token
        #: was not its start, (job, that token's time)
        self.gaps = gaps_of(sim)
        self.t_start = 0.0
        self.t_round = -1.0
        self.tpend: list = []
        #: engine statistics after the warm-up (the report's): iterations by composition, the jobs
        #: served, tokens and budget summed over the iterations, and the requests completed here (whose
        #: first output token was produced here, counted when the request ends: step/tokens.py)
        self.it_prefill = self.it_decode = self.it_mixed = 0
        self.sum_jobs = 0
        self.sum_tokens = 0.0
        self.sum_budget = 0.0
        self.requests = 0
        #: the decoders and prefills the running iteration was tallied with (its last round: a stretch of
        #: rounds is tallied round by round alike), -1 when it was not tallied (planned before the warm-up's
        #: end, or no iteration runs): a job taken from it by another's event gives its token back there
        #: too (:meth:`_untally`)
        self.tal_dec = self.tal_pre = -1

    def bind(self) -> None:
        """Called once all stages and pools exist: find the memory pool and the pools admitted here."""
        sim = self.sim
        p = sim.program
        if self.memory_family is not None:
            f = self.memory_family
            size = p.pools[f].size
            base = sim.pool_base[f]
            if pairs(self.node.size, size):  # (serq_ir.rules: member for member, or a family of one)
                self.memory = sim.pools[base + (self.index if size == self.node.size else 0)]
            else:
                raise SimError(format_error(self.node.span, None, None, f"{family('stage', self.name, self.node.size)} "
                                            f"names {family('pool', p.pools[f].name, size)} as its memory, and the "
                                            f"two cannot be paired ({PAIRING})", sim.source))
            self.memory.memory_of.append(self)
        served = sim.served_by  # (build.py: the pools by the stage that admits them, found in one pass)
        self.served_pools = (served.get(id(self), []) if served is not None
                             else [pl for pl in sim.pools if pl.via is self])

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
        mode = job.mode
        # the linker's rule, and the IR's (serq_ir.validate: a run on a step stage is prefill or decode, and a
        # stage family's members are of one kind; a spill's write never goes to one): no run reaches here plain
        assert mode != "plain", f"a plain run reached step stage {self.name}"
        now = self.sim.now
        if self._own_busy:  # self.acc(), inlined: every run on the stage passes here
            dt = now - self.t_last
            if dt > 0.0:
                if dt < HUGE_SPAN:
                    self.a_present += self.present * dt
                    self.a_busy += (1.0 if self.iter is not None else 0.0) * dt
                else:
                    self.acc_huge(dt, 1.0 if self.iter is not None else 0.0)
            self.t_last = now
        else:
            self.acc()
        job.stage = self
        job.started = now
        job.assigned = 0.0
        owner = job.owner
        seq = owner.adm_seq if owner is not None else math.inf
        job.rank = (*self._kept_keys(job), seq) if self.ranked else seq
        self._join(job)

    def _join(self, job: Job) -> None:
        """``job`` joins the residents and the residents that are not lazy (both in serving order, by
        ``rank``: after every job of a rank no greater, where bisect_right puts it; a decode re-attached
        behind the later-admitted residents is found in log n steps, not by walking back over them), and
        the stage's counts."""
        rank = job.rank
        res = self.residents
        if not res or res[-1].rank <= rank:
            res.append(job)
        else:
            res.insert(bisect_right(res, rank, key=_rank), job)
        eager = self.eager
        if not eager or eager[-1].rank <= rank:
            eager.append(job)
        else:
            eager.insert(bisect_right(eager, rank, key=_rank), job)
        if self.joins is not None:
            self.joins.append(job)
        if not self.hot:  # residents: it may be idle (Simulation.step_mark)
            self.sim.step_mark(self)
        orders = self.orders
        if orders:
            for tag, o in orders.items():
                if o:
                    try:
                        o.add(job)
                    except Exception:  # noqa: BLE001 - the walk evaluates the keys, and raises, as it would
                        orders[tag] = False
        if job.mode == "decode":
            self.ndec += 1
        if job.growing is not None:
            self.ngrow += 1
        self.present += 1

    def start_run(self, s, work: float, mode: str, growing, sid: int) -> None:
        """``sim.run_job(s, self, work, mode, growing, sid)`` in one call (the compiled session code's run
        of a prefill or decode on a step stage named without an index)."""
        if not (work > 0) or mode == "plain":  # NaN, nothing to do, or a plain run (errors): the general path
            self.sim.run_job(s, self, work, mode, growing, sid)
            return
        now = self.sim.now
        job = Job(s, work, mode, growing, now, sid)
        s.job = job
        s.status = STAGE
        self.attach(job)

    def detach(self, job: Job) -> None:
        self.detached += 1
        self.acc()
        try:
            _take(self.residents, job)
        except ValueError:
            pass
        else:
            if job.mode == "decode":
                self.ndec -= 1
            if job.growing is not None:
                self.ngrow -= 1
            if job.lz >= 0:
                self._materialize(job)
                if self.planning:
                    if self.fast:
                        self.left += 1.0  # its token of this iteration, as a planned job's below
                    elif self.gwalk:
                        self.lz_gone.append(job)  # the walk gives its token back if it was counted
                elif self.iter_lazy and self.tal_dec > 0:
                    self._untally(True, 1.0)  # its token of the running iteration (a lazy decoder has one)
            else:
                _take(self.eager, job)
            if self.orders:
                for o in self.orders.values():
                    if o:
                        o.remove(job)
        self.present -= 1
        job.stage = None
        if job.assigned > 0.0:
            t = job.assigned
            job.assigned = 0.0
            self._unadvance(job, t)
            if self.planning:
                self.left += t
            elif self.tal_dec >= 0:
                self._untally(job.mode == "decode", t)

    def _untally(self, decode: bool, t: float) -> None:
        """A job served ``t`` tokens in the running iteration, which was tallied, is taken away before its
        end (preempted by a growth another stage's iteration or a session makes: the iteration's own
        planning gives the tokens back to its budget instead): the engine statistics leave out its tokens
        and its job, and class the iteration by the jobs it still serves (none: it is counted as one that
        only preempted). The iteration itself, its cost and its time stay."""
        d = self.tal_dec
        p = self.tal_pre
        tally_class(self, d, d + p, -1)
        if decode:
            d -= 1
        else:
            p -= 1
        tally_class(self, d, d + p, 1)
        self.tal_dec = d
        self.tal_pre = p
        self.sum_jobs -= 1
        self.sum_tokens -= t

    def settle(self) -> None:
        pass  # the engine cleared the mark; an iteration is started by try_start, not here

    def acc(self) -> None:
        if not self._own_busy:
            return super().acc()
        now = self.sim.now
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
                self.a_busy += (1.0 if self.iter is not None else 0.0) * dt
            else:
                self.acc_huge(dt, 1.0 if self.iter is not None else 0.0)
        self.t_last = now

    # ------------------------------------------------------------------ observables
    def busy(self) -> float:
        return float(len(self.iter) + self.iter_lazy) if self.iter is not None else 0.0

    def _by_admission(self) -> list[Job]:
        """The residents in admission order, the order the per-job planning keeps them in (a ``ranked`` stage
        keeps them by its serve keys): the order of the sums ``work(S)`` and ``budget_left(S)`` take over them,
        which are the same float on both plannings only in one order when they are not exact (fractions, or
        past 2**53: a stage serving by (-O, admission) read a work of 9007199254741000 where the per-job
        planning read 9007199254741002)."""
        res = self.residents
        return sorted(res, key=_admission) if self.ranked and len(res) > 1 else res

    def _whole_sum(self, chunk: float | None) -> float | None:
        """On a ``ranked`` stage, the sum ``work(S)`` (``chunk`` None) or the tokens ``budget_left(S)`` wants
        (``chunk``: a prefill's cap) takes, in the residents' serving order, when every term is a whole
        number at least 0 and the sum is below 2**53: then every partial sum is exact and any order gives it,
        so the residents need no sort into admission order (:meth:`_by_admission`). ``None`` otherwise."""
        r = self.rounds
        t = 0.0
        for j in self.residents:
            w = j.work - (r - j.lz) if j.lz >= 0 else j.work
            if chunk is not None:
                w = (1.0 if w > 1.0 else w) if j.mode == "decode" else (w if w < chunk else chunk)
            if not 0.0 <= w < _EXACT or w % 1.0 != 0.0:
                return None
            t += w
        return t if t < _EXACT else None

    def work(self) -> float:
        r = self.rounds
        work_pulse(self, len(self.residents))
        if self.ranked and len(self.residents) > 1:
            t = self._whole_sum(None)
            if t is not None:
                return t
        return sum(j.work - (r - j.lz) if j.lz >= 0 else j.work for j in self._by_admission())

    def budget_left(self) -> float:
        pre = self._pre()
        budget = self.budget_fn(None, None, pre)
        chunk = self._chunk(pre)
        want = 0.0
        r = self.rounds
        sim = self.sim
        sim.pulse -= len(self.residents)  # units of the event's work (Simulation.pulse_out)
        if sim.pulse < 0:
            sim.pulse_out(f"reading budget_left of stage {self.name} ({len(self.residents)} residents)", None,
                          None, None, self.node.span)
        if self.exclusive:
            return max(budget - self._exclusive_want(chunk), 0.0)
        if self.ranked and len(self.residents) > 1:
            t = self._whole_sum(chunk)
            if t is not None:
                return max(budget - t, 0.0)
        for j in self._by_admission():
            w = j.work - (r - j.lz) if j.lz >= 0 else j.work
            want += min(1.0, w) if j.mode == "decode" else min(w, chunk)
        return max(budget - want, 0.0)

    def _exclusive_want(self, chunk: float) -> float:
        """What the residents would take at the next iteration under ``serve exclusive prefill`` (the estimate
        :meth:`budget_left` makes outside the waiting loop): the first resident prefill in admission order that
        would be given tokens (its session not waiting to grow, ``min(work, chunk)`` above 0) alone, as the
        planning selects it (step.exclusive), else every decode's token. It summed every resident's tokens,
        as though the prefill were served beside the decodes."""
        from ..status import GROWING

        for j in self.residents:
            if j.mode == "prefill" and (j.owner is None or j.owner.status != GROWING):
                t = min(j.work, chunk)
                if t > 0.0:
                    return t
        return sum(min(1.0, j.work) for j in self.residents if j.mode == "decode")

    def _end(self, epoch: int) -> None:
        if epoch != self.epoch or self.iter is None:
            return
        assign = self.iter
        sim = self.sim
        sim.pulse -= len(assign)  # its jobs are units of the event's work (Simulation.pulse_out)
        if sim.pulse < 0:
            sim.pulse_out(f"ending an iteration of stage {self.name} ({len(assign)} jobs)", None, None, None,
                          self.node.span)
        t0 = self.t_start
        if self.sim.now - t0 <= instant_span(t0):  # an iteration of no time (a cost of 0, or far below any
            self._no_time(assign)                       # time scale at this clock: within the guard's instant)
        if self._own_busy:  # self.acc(), inlined: an iteration ran until now
            now = self.sim.now
            dt = now - self.t_last
            if dt > 0.0:
                if dt < HUGE_SPAN:
                    self.a_present += self.present * dt
                    self.a_busy += 1.0 * dt
                else:
                    self.acc_huge(dt, 1.0)
            self.t_last = now
        else:
            self.acc()
        self.iter = None
        self.tal_dec = -1
        if not self.hot:  # no iteration: it may be idle (Simulation.step_mark)
            self.sim.step_mark(self)
        self.rounds += 1
        self.t_round = self.sim.now
        lazy_done = self.due.pop(self.rounds, None) if self.iter_lazy else None
        if self.iter_tokens < 1.0:  # (less than a token in the whole iteration: rare)
            self._dust(assign)
        finished = None
        partial = None
        for job in assign:
            if job.stage is not self:
                continue
            a = job.assigned
            old = job.work
            w = old - a
            job.assigned = 0.0
            job.work = w
            if w <= EPS:
                if finished is None:
                    finished = [job]
                else:
                    finished.append(job)
            elif a < 1.0 and job.mode == "decode" and (w == old or math.ceil(w - EPS) == math.ceil(old - EPS)):
                # a decoder given part of a token (the budget's last fraction) that completes no whole
                # token of its work: no output token of its request this iteration (tokens.py). Its tokens
                # left unchanged (w == old) first: a decode (inf) keeps inf tokens left, which math.ceil
                # refuses (an OverflowError traceback on both tiers)
                if partial is None:
                    partial = [job]
                else:
                    partial.append(job)
        if assign or lazy_done is not None or self.tpend or not self.iter_lazy:
            if partial is not None:
                partial = set(partial)  # (a look-up per job: thousands may end one iteration)
            self.gaps.iteration(self, assign if partial is None else [j for j in assign if j not in partial],
                                self.t_start, self.t_round, self.nlazy if self.iter_lazy else 0,
                                self.tpend, lazy_done, self.sim.warm)
        elif self.sim.warm:
            # TokenGaps.iteration of lazy decoders alone, none pending and none ending (an iteration of an
            # engine whose residents all decode): one gap of the iteration's length each, for those counted
            n = self.nlazy - self.nlazy_x
            if n:
                self.gaps.add(self.t_round - self.t_start, n)
        if self.tpend:
            self.tpend = []
        if lazy_done is not None:
            # in the per-job order: the residents at the planning in admission order, then the newcomers
            if finished is None:  # (the usual case: only lazy jobs end)
                first = lazy_done
                rest = None
            else:
                split = self.iter_split
                ended = set(finished)  # (look-ups in sets: thousands may end one iteration)
                first = [j for j in assign[:split] if j in ended]
                ended = set(first)
                rest = [j for j in finished if j not in ended]
            r = self.rounds
            cost_kv = self.cost_kv
            for job in lazy_done:
                if job.growing is not None:
                    job.gslot.pos += r - job.lz
                    if r > job.lz:  # its growing run advanced the hold (release caches its position)
                        job.owner.holds[job.ghi].grown = True
                if cost_kv:
                    self.kv_lazy -= job.lzm
                job.lz = -1
                job.work = 0.0
                self.nlazy -= 1
                if not job.owner.tokw:
                    self.nlazy_x -= 1
            if first is not lazy_done:
                first.extend(lazy_done)
            if len(first) > 1:
                first.sort(key=_rank)
            finished = first + rest if rest else first
        elif finished is None:
            return
        residents = self.residents
        eager = self.eager
        orders = [o for o in self.orders.values() if o] if self.orders else None
        job_done = self.sim.job_done
        many = len(finished) > 16
        if many:
            # thousands ending in one iteration: the lists filtered once, in place (each kept in its order),
            # where a removal each walked them (quadratic); a job's completion only marks its session ready,
            # so the books below are the same in either order
            ended = set(finished)
            residents[:] = [j for j in residents if j not in ended]
            eager[:] = [j for j in eager if j not in ended]
            if orders:
                for o in orders:
                    o.drop(ended)
        for job in finished:
            if not many:
                residents.remove(job)
                if job in eager:  # not a lazy job (no exception raised for one: most finish lazy)
                    eager.remove(job)
                if orders:
                    for o in orders:
                        o.remove(job)
            if job.mode == "decode":
                self.ndec -= 1
            if job.growing is not None:
                self.ngrow -= 1
            self.present -= 1
            job.stage = None
            job.work = 0.0
            job_done(self, job)

    def _dust(self, assign: list[Job]) -> None:
        """The no-progress guard of an iteration of less than a token that ends (before its jobs' work is
        reduced): one whose tokens change no job's work in floating point (a budget of ``1e-300`` against a
        prompt of 1 000 tokens: ``1000 - 1e-300`` is ``1000``), completes none and gives no output token. When
        nothing else happened since the stage's previous such iteration (its end the only event between
        them) the run is as it was then but for the clock, and when the budget, chunk and serve keys read
        nothing that changes with the clock alone (:meth:`_reads_clock`) the next iteration is this one again:
        more than :data:`DUST_ITERATIONS` of them in a row is the run-time error ``Simulation.dust_error``
        (under ``--horizon inf`` the run went on for ever; under a horizon, it iterated to it, idle in all
        but name). An iteration of a budget's last fraction given to a job after others took whole tokens
        moved those: it is no such iteration. An iteration that only preempted (no job served: it admitted a
        session again whose growth it preempted, language.txt §3's "scheduler step that only preempted") is
        one too. While another event that will happen is due (a delay's end that gives the memory back, an
        arrival) the run is not the same for ever, and the count starts again: that event may end the
        repetition (before, such a run was stopped with this error while a holder's release was due)."""
        for job in assign:
            if job.stage is self:
                w = job.work
                left = w - job.assigned
                if left != w or left <= EPS:
                    self.dust_n = 0
                    return
        sim = self.sim
        ev = sim.events
        self.dust_n = self.dust_n + 1 if self.dust_ev == ev - 1 else 1
        self.dust_ev = ev
        if self.dust_n > DUST_ITERATIONS:
            if self.dust_fixed is None:
                self.dust_fixed = not self._reads_clock()
            if self.dust_fixed:
                if sim.event_due():
                    # another event will happen (a delay's end, an arrival): the run is not this iteration
                    # for ever, and the guard counts again from here
                    self.dust_n = 0
                    return
                sim.dust_error(self, DUST_ITERATIONS, not any(j.stage is self for j in assign))

    def _reads_clock(self) -> bool:
        """Whether the stage's budget, chunk or serve keys read what changes with the clock alone: ``now``,
        ``waited`` or a draw."""
        k = self.node.kind
        exprs = [k.budget, k.chunk, *(k.serve.keys if isinstance(k.serve, N.ServeBy) else [])]
        return reads_any(exprs, lambda e: isinstance(e, N.Draw) or isinstance(e, N.Ctx) and e.name in ("now", "waited"))

    def _no_time(self, assign: list[Job]) -> None:
        """The no-progress guard of a stage whose iterations take no time: more than ``STALL_EVENTS +
        STALL_PER_SESSION`` × (the sessions live when the first began) jobs served by such iterations at
        one instant is the run-time error ``Simulation.still_error``. An iteration is one event, but its
        planning visits every job it serves: counted in events, the bound let 2 000 decoders of ``decode
        (inf)`` at ``cost 0`` take 3 million iterations of 2 000 jobs each (hours), while one job's run of
        no time is all the event guard needs to count. The jobs served are those of both plannings (the
        lazy decoders counted, ``iter_lazy``: the engine statistics' ``batch``), so both stop at the same
        iteration; one that only preempted counts 1."""
        sim = self.sim
        now = sim.now
        t0 = self.still_t
        if not (now - t0 <= instant_span(t0)):  # (a new instant; NaN before the first: not within one)
            self.still_t = now
            self.still_n = 0
            self.still_cap = sim.stall_cap()
        self.still_n += len(assign) + self.iter_lazy or 1
        if self.still_n > self.still_cap:
            sim.still_error(self, self.still_cap)


def iteration_ends(heap) -> dict[int, float]:
    """The time of the end event of each step stage's iteration under way on ``heap`` (the simulation's event
    queue), by ``id`` of the stage: its ``_end`` at the stage's current epoch. One pass over the queue, for
    the judgements made at a run's end (an iteration that never ends, one that outlasts the run)."""
    out = {}
    for t, _seq, cb, arg in heap:
        if getattr(cb, "__func__", None) is StepStage._end and arg == cb.__self__.epoch:
            out[id(cb.__self__)] = t
    return out


def step_factory(sim, node, member, flat):
    return StepStage(sim, node, member, flat)


def _take(jobs: list, job: Job) -> None:
    """``jobs.remove(job)`` on a list in serving order (by ``rank``: common.position)."""
    del jobs[position(jobs, job)]
