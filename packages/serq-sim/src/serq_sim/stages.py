"""Stage kinds: the contract, and the built-in ``fifo``, ``ps`` and ``delay`` (``step`` is in
:mod:`serq_sim.step`); runs over several stages (flows) and their share policies.

The stage-kind contract
-----------------------

A stage kind is registered through the hook ``serq_sim_register_stage_kinds`` as
``register(name, factory)``, ``name`` the IR tag (``"Fifo"``) or an ``Extension`` stage node's ``name``.
When a simulation is built, ``factory(sim, node, member, flat)`` is called once per member of every stage
family of that kind (``node`` the :class:`serq_ir.nodes.Stage`, ``member`` the index in the family,
``flat`` the index among all stages) and returns an object derived from :class:`StageKind`. The simulator
then talks to it through these methods only:

``attach(job)``
    A :class:`Job` arrives (``job.owner`` the session, ``job.work`` its work, ``job.mode``
    ``"plain" | "prefill" | "decode"``, ``job.growing`` the pool a growing run grows or ``None``). The
    kind must set ``job.stage = self`` and count it in ``present``.
``detach(job)``
    The job leaves before completing (its session was preempted, or ended). Set ``job.stage = None``;
    events already scheduled for it are cancelled lazily (check ``job.stage is self`` when they fire).
``settle()``
    Called at the end of the settle after :meth:`mark` asked for it (at most once per mark: the engine
    clears the mark before the call, so a kind that marks itself again in its settle is settled again at
    the same instant): the place to reschedule (a ps stage's next completion).
``busy_level()``
    The utilisation signal now, in [0, 1] (the time average is the reported utilisation).
``bind()``
    Called once, when every stage and pool of the simulation exists (the place to find the pools it
    serves: ``sim.pools``, ``pool.via``). The base does nothing.
``dead_event(callback, arg)``
    Whether an event the kind scheduled will do nothing when it comes (its job left); the kind counts such
    an event in ``sim.dead_timers`` (:meth:`StageKind.dead_event`). The base says ``False``.

A kind that starts work of its own accord once an instant has settled (a step stage's iteration) sets the
class attribute ``wants_start = True`` and implements:

``idle()``
    Whether it could start work now (no iteration running, and residents or sessions waiting at a pool
    it admits from).
``try_start()``
    Called when ``idle()``, after the settle has run every ready session, grower and admission and no
    other event is pending at this instant (so it sees every arrival up to now); it may admit (through
    :func:`serq_sim.pools.admission.admit_from`) and schedule. If that made sessions ready, the settle
    runs them and asks again.

and it reports a completion with ``self.sim.job_done(self, job)`` (which records wait and service from
``job.enqueued`` and ``job.started`` and makes the owner ready), schedules its events with
``self.sim.at(time, callback, arg)`` (``callback(arg)`` runs at ``time``; ties run in scheduling order),
and calls :meth:`acc` *before* every change of ``present`` or of what ``busy_level`` returns, so that the
time averages integrate the value held until then. ``queue()``, ``busy()`` and ``work()`` answer the
observables of the same names. A kind that reads the program's expressions compiles them once in its
constructor with ``sim.compiler.fn(expr)`` (a function ``f(session, attrs, ctx)``).
"""

from __future__ import annotations

import heapq
import math
from collections import deque

from .compile import num
from .errors import not_an_amount, show
from .stats import HUGE_SPAN, PER_HUGE, PriceEstimator, add_sample
from .status import READY, STAGE

INF = math.inf
_heappush = heapq.heappush


def stage_stats(sim, st, job) -> None:
    """A completion's statistics at stage ``st``: completions, wait and service (after warm-up), and the
    stage's price estimate when a program reads one."""
    started = job.started if job.started is not None else job.enqueued
    if sim.warm:
        st.completions += 1
        if sim.now < HUGE_SPAN:
            st.wait_sum += started - job.enqueued
            st.service_sum += sim.now - started
        else:
            st.add_huge_samples(started - job.enqueued, sim.now - started)
    if sim.need_est:
        st.est.observe(started, started - job.enqueued, sim.now - started)


def job_done(sim, st, job) -> None:
    """``job`` completed at stage ``st`` (``sim.job_done(st, job)``, what every stage kind calls): its
    statistics, and its session, still waiting on it, becomes ready."""
    stage_stats(sim, st, job)
    owner = job.owner
    if owner is not None:
        if owner.job is job:
            owner.job = None
            owner.status = READY
            if not owner.in_ready:
                owner.in_ready = True
                sim.ready.append(owner)
    elif job.on_done is not None:  # an ownerless job that has something to do (a spill's write lands)
        job.on_done(sim)



def rank_seq(job) -> float:
    """A step stage's resident's admission, the last item of its rank on a stage ranked by kept serve keys
    (the order of serq_sim.orders.admission_order)."""
    return job.rank[-1]


class Job:
    """One run on one stage (or one flow over several)."""

    #: what an ownerless job does when it completes, ``on_done(sim)`` (:func:`job_done` calls it): a
    #: spill's write lands in its tier (:class:`serq_sim.pools.cache.SpillWrite`); ``None`` for the others
    on_done = None

    __slots__ = ("owner", "work", "total", "mode", "growing", "enqueued", "started", "stage", "tag", "seq",
                 "rate", "stages", "assigned", "span", "lz", "gslot", "ghi", "mslots", "lzm", "wv", "rank")

    def __init__(self, owner, work: float, mode: str, growing, now: float, span: int = 0):
        self.owner = owner
        self.work = work
        self.total = work
        self.mode = mode
        self.growing = growing
        self.enqueued = now
        self.started = None
        self.stage = None
        self.tag = 0.0
        self.seq = 0
        self.rate = 0.0
        self.stages = None
        self.assigned = 0.0
        self.span = span
        #: a step stage's lazy decode (serq_sim.step): the round its ``work`` was last brought up to date,
        #: or -1 when ``work`` is current
        self.lz = -1
        #: on a step stage: the slot its run grows and that hold's index in the session's holds, and the
        #: slots its session holds on the stage's memory pool (found once: a session's holds do not change
        #: while it runs)
        self.gslot = None
        self.ghi = 0
        self.mslots = None
        #: a lazy decoder's memory on its step stage's memory pool (constant while it is lazy)
        self.lzm = 0.0
        #: a lazy grower listed again by a batch of woken growers (LazyDecoding._wake_apply): at its next
        #: block boundary it meets that batch's conditions again, unchecked (it has grown since listed)
        self.wv = False
        #: on a step stage: its place in the serving order (StepStage.attach sets it)
        self.rank = 0.0


class Ctx:
    """Context variables of one moment (attributes set as needed; unset ones read NaN)."""

    def __getattr__(self, name: str) -> float:
        return math.nan


class StageKind:
    """Base of a stage kind (see the module docstring for the contract)."""

    #: Whether the simulator calls :meth:`try_start` once an instant has settled, while :meth:`idle`
    #: (step engines); see the contract above.
    wants_start = False

    #: A stage with ``wants_start`` among many (a family of engines, build.py): whether the settle must ask
    #: it :meth:`idle` (True for a kind that does not say when it may become idle: asked at every settle;
    #: a step stage is asked only after something that can make it idle, Simulation.step_mark); and its
    #: place in the settle's order (``Simulation.step_stages``)
    hot = True
    spos = -1

    def __init__(self, sim, node, member: int, flat: int):
        self.sim = sim
        self.node = node
        self.name = node.name
        self.index = member
        self.flat = flat
        self.present = 0
        self.t_last = 0.0
        self.a_present = 0.0
        self.a_busy = 0.0
        #: the integrals' spans of HUGE_SPAN or longer, in its units (stats.HUGE_SPAN: :meth:`acc_huge`)
        self.b_present = 0.0
        self.b_busy = 0.0
        self.completions = 0
        self.wait_sum = 0.0
        self.service_sum = 0.0
        #: their samples of HUGE_SPAN or longer, in its units (stats.add_sample: :meth:`add_huge_samples`)
        self.b_wait = self.b_service = 0.0
        self.iterations: int | None = None
        self.est = PriceEstimator()
        self._marked = False

    # -- accounting
    def acc(self) -> None:
        """Integrate ``present`` and ``busy_level()`` up to now (call before changing either)."""
        now = self.sim.now
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
                self.a_busy += self.busy_level() * dt
            else:
                self.acc_huge(dt, self.busy_level())
        self.t_last = now

    def acc_huge(self, dt: float, busy: float) -> None:
        """Integrate a span ``dt`` of :data:`~serq_sim.stats.HUGE_SPAN` or longer (``busy`` the busy level over
        it), in its units: what every integration of the stage's present and busy levels does with such a span
        (stats.time_mean reads both sums)."""
        w = dt * PER_HUGE
        self.b_present += self.present * w
        self.b_busy += busy * w

    def add_huge_samples(self, wait: float, service: float) -> None:
        """A completion's wait and service at a time of HUGE_SPAN or later, each summed apart in its units when
        it is that long (stats.add_sample; the report's wait and service read both sums)."""
        self.wait_sum, self.b_wait = add_sample(self.wait_sum, self.b_wait, wait)
        self.service_sum, self.b_service = add_sample(self.service_sum, self.b_service, service)

    def reset_stats(self) -> None:
        self.acc()
        self.a_present = self.a_busy = self.b_present = self.b_busy = 0.0
        self.completions = 0
        self.wait_sum = self.service_sum = self.b_wait = self.b_service = 0.0
        if self.iterations is not None:
            self.iterations = 0

    #: Whether the compiled session may call :meth:`start` for a plain run on this stage named without
    #: an index (read from the class's own namespace, so a subclass opts in itself).
    fast_start = False

    def start(self, s, work: float, sid: int) -> None:
        """``sim.run_job(s, self, work, "plain", None, sid)`` in one call."""
        sim = self.sim
        if not (work > 0):  # NaN (an error) or nothing to do: the general path
            sim.run_job(s, self, work, "plain", None, sid)
            return
        job = Job(s, work, "plain", None, sim.now, sid)
        s.job = job
        s.status = STAGE
        self.attach(job)

    def mark(self) -> None:
        """Ask for :meth:`settle` at the end of this settle."""
        if not self._marked:
            self._marked = True
            self.sim.dirty.append(self)

    # -- the contract
    def attach(self, job: Job) -> None:
        raise NotImplementedError

    def detach(self, job: Job) -> None:
        raise NotImplementedError

    def settle(self) -> None:
        pass

    def busy_level(self) -> float:
        return 1.0 if self.present else 0.0

    def bind(self) -> None:
        pass

    def dead_event(self, callback, arg) -> bool:
        """Whether the event ``(callback, arg)`` this kind scheduled (``self.sim.at(t, callback, arg)``) will do
        nothing when it comes (the completion of a job that left, :meth:`detach`): a run of no horizon ends at
        its drain rather than at such events. A kind that leaves one adds 1 to ``self.sim.dead_timers`` (the
        trigger: the engine then asks this of every event left, engine.dead_event, before it ends the run)
        and takes 1 off when it comes. The base says no of every event: the run waits for them."""
        return False

    # -- a kind with ``wants_start``
    def idle(self) -> bool:
        return False

    def try_start(self) -> None:
        raise NotImplementedError

    # -- observables
    def queue(self) -> float:
        return float(self.present)

    def busy(self) -> float:
        return float(self.present)

    def work(self) -> float:
        return 0.0


class FifoStage(StageKind):
    """``fifo(c)``: ``c`` servers, jobs in arrival order at rate 1."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.c = num(node.kind.servers)
        self.active = 0
        self.q: deque[Job] = deque()
        self._done_cb = self._done  # one bound method for every completion event

    def busy_level(self) -> float:
        return self.active / self.c if self.c != math.inf else 0.0

    fast_start = True

    def attach(self, job: Job) -> None:
        sim = self.sim
        now = sim.now
        # self.acc(), inlined: every job of the stage passes here
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
                self.a_busy += self.active * dt
            else:
                self.acc_huge(dt, self.active)
        self.t_last = now
        self.present += 1
        job.stage = self
        if self.active < self.c:
            self.active += 1
            job.started = now
            _heappush(sim.heap, (now + job.work, next(sim._seq), self._done_cb, job))
        else:
            self.q.append(job)

    def acc(self) -> None:
        now = self.sim.now
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
                self.a_busy += self.active * dt
            else:
                self.acc_huge(dt, self.active)
        self.t_last = now

    def _done(self, job: Job) -> None:
        if job.stage is not self:  # a job that left before (detach): one of the simulation's dead timers
            self.sim.dead_timers -= 1
            return
        sim = self.sim
        now = sim.now
        # self.acc(), inlined: every job of the stage passes here
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
                self.a_busy += self.active * dt
            else:
                self.acc_huge(dt, self.active)
        self.t_last = now
        self.present -= 1
        job.stage = None
        job.work = 0.0
        if self.q:
            nxt = self.q.popleft()
            nxt.started = now
            _heappush(sim.heap, (now + nxt.work, next(sim._seq), self._done_cb, nxt))
        else:
            self.active -= 1
        # job_done(sim, self, job), inlined (job.started is set: the job was served)
        started = job.started
        if sim.warm:
            self.completions += 1
            if now < HUGE_SPAN:
                self.wait_sum += started - job.enqueued
                self.service_sum += now - started
            else:
                self.add_huge_samples(started - job.enqueued, now - started)
        if sim.need_est:
            self.est.observe(started, started - job.enqueued, now - started)
        owner = job.owner
        if owner is not None:
            if owner.job is job:
                owner.job = None
                owner.status = READY
                if not owner.in_ready:
                    owner.in_ready = True
                    sim.ready.append(owner)
        elif job.on_done is not None:
            job.on_done(sim)

    def detach(self, job: Job) -> None:
        self.acc()
        self.present -= 1
        job.stage = None
        if job.started is not None:
            # its completion is in the heap and will do nothing (Simulation.dead_timers: a run of no horizon
            # drains without waiting for it)
            self.sim.dead_timers += 1
            self.active -= 1
            if self.q:
                nxt = self.q.popleft()
                nxt.started = self.sim.now
                self.active += 1
                self.sim.at(self.sim.now + nxt.work, self._done, nxt)
        else:
            self.q.remove(job)

    def never_served(self, serving, endless) -> tuple[list, list]:
        """The sessions queued here that are never served, and the runs that keep them waiting: the servers
        free in arrival order, so a queued job is served only when fewer than ``c`` of the jobs in service
        (``serving``) and of those queued ahead of it never complete (``endless(job)``: infinite work, and no
        preemption that could take it away). The runs are the ``c`` such jobs served first."""
        ahead = [j for j in serving if endless(j)]
        if self.c == math.inf or len(ahead) + sum(1 for j in self.q if endless(j)) < self.c:
            return [], []
        waiting = []
        for j in self.q:
            if len(ahead) >= self.c:
                if j.owner is not None:
                    waiting.append(j.owner)
            elif endless(j):
                ahead.append(j)
        return waiting, [j.owner for j in ahead if j.owner is not None]

    def busy(self) -> float:
        return float(self.active)

    def work(self) -> float:
        now = self.sim.now
        work_pulse(self, len(self.q) + len(self.sim.heap))
        w = sum(j.work for j in self.q)
        # active jobs: their remaining work
        return w + self._active_work(now)

    def _active_work(self, now: float) -> float:
        # active jobs are not listed; their finish events are: remaining = finish - now
        total = 0.0
        for t, _, cb, arg in self.sim.heap:
            if getattr(cb, "__self__", None) is self and arg.stage is self:
                total += max(t - now, 0.0)
        return total


def work_pulse(stage, n: int) -> None:
    """``work(S)`` of ``stage`` adds up ``n`` jobs or events: units of the event's work
    (:meth:`serq_sim.engine.Simulation.pulse_out`; a statement that reads it for each of many sessions, or in
    a loop, with a million jobs at the stage, ran for minutes between two ticks)."""
    sim = stage.sim
    sim.pulse -= n
    if sim.pulse < 0:
        sim.pulse_out(f"reading work({stage.name}) over {n} jobs", None, None, None, stage.node.span)


class DelayStage(StageKind):
    """``delay``: every job on its own at rate 1, no waiting."""

    fast_start = True

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self._done_cb = self._done

    def attach(self, job: Job) -> None:
        sim = self.sim
        now = sim.now
        # self.acc(), inlined: every job of the stage passes here (measurably slower as a call)
        dt = now - self.t_last
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_present += self.present * dt
                self.a_busy += (1.0 if self.present else 0.0) * dt
            else:
                self.acc_huge(dt, 1.0 if self.present else 0.0)
        self.t_last = now
        self.present += 1
        job.stage = self
        job.started = now
        _heappush(sim.heap, (now + job.work, next(sim._seq), self._done_cb, job))

    def _done(self, job: Job) -> None:
        if job.stage is not self:  # a job that left before (detach): one of the simulation's dead timers
            self.sim.dead_timers -= 1
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def detach(self, job: Job) -> None:
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.dead_timers += 1  # its completion is in the heap and will do nothing

    def work(self) -> float:
        now = self.sim.now
        work_pulse(self, len(self.sim.heap))
        return sum(max(t - now, 0.0) for t, _, cb, arg in self.sim.heap
                   if getattr(cb, "__self__", None) is self and arg.stage is self)


def capacity_message(name: str, phi: float, present: float) -> str:
    """The run-time error of a ps stage whose capacity came out NaN or negative (both tiers)."""
    return f"stage {name}: the capacity is {not_an_amount(phi)} at present = {show(present)}; a ps stage's capacity is at least 0"


#: the smallest normal double: a ps stage's share of a capacity above 0 (``φ / present``, a flow's rate) below it
#: has lost precision, and ``ps(5e-324)`` between two jobs shares to 0, a rate that never completes a job
TINY_SHARE = 2.0**-1022


def _beside_tiny(share: float) -> bool:
    """Whether a share below :data:`TINY_SHARE` reads as it at six digits (``%g``): a message then gives the
    numbers it compares with all their digits (``2.225073858507201e-308``, below ``2.2250738585072014e-308``),
    where both read 2.22507e-308 and the message said a share was below itself."""
    return show(share) == show(TINY_SHARE)


def share_message(name: str, phi: float, present: float, share: float) -> str:
    """The run-time error of a ps stage whose capacity, above 0, gives each job a share below
    :data:`TINY_SHARE` (both tiers)."""
    zero = " (this one is 0: no job would ever complete)" if share == 0 else ""
    exact = _beside_tiny(share)
    return (f"stage {name}: the capacity {show(phi, exact)} at present = {show(present)} gives each job a share of "
            f"{show(share, exact)}, below the smallest normal double ({show(TINY_SHARE, exact)}), where a share "
            f"loses its precision{zero}; a ps stage's capacity is 0 or at least present times that")


def flow_share_message(names: list[str], rate: float, share: str) -> str:
    """The run-time error of a run over several stages whose rate under a built-in share is below
    :data:`TINY_SHARE` (every stage of a flow has a capacity above 0, so its fair share is above 0)."""
    zero = " (this one is 0: the run would never complete)" if rate == 0 else ""
    exact = _beside_tiny(rate)
    return (f"the run over stages {', '.join(names)} gets a rate of {show(rate, exact)} under share {share}, below "
            f"the smallest normal double ({show(TINY_SHARE, exact)}), where a share loses its precision{zero}; the "
            "capacities of its stages shared among the flows give each run at least that")


#: a ps stage's virtual time (the work each job present has received since it began) at which the next
#: attach first moves it back to 0 (:func:`ps_rebase`): a capacity near 1e308 adds some 1e308 a second to it,
#: and a tag, the virtual time plus the work, of 1e308 beside 1e308 was inf, a job that never completed.
PS_REBASE = 2.0**1020


def ps_tag(v: float, work: float) -> bool:
    """Whether a job of ``work`` attached at virtual time ``v`` needs the virtual time moved back to 0 first:
    ``v`` is past :data:`PS_REBASE`, or ``v + work`` leaves the double range though ``work`` does not."""
    return v > PS_REBASE or (v + work == INF and work != INF)


def ps_rebase(heap: list, v: float) -> list:
    """A ps stage's heap of ``(tag, seq, job)`` with virtual time ``v`` moved back to 0: each tag less
    ``v`` (a job's remaining work), in heap order. Infinite work stays inf: beside jobs of infinite work
    alone the virtual time grows without bound, to inf itself (1e308 a second for 2 s), and inf - inf was
    NaN. Both tiers call it at the same attach, so the figures stay the same bytes; a run whose virtual
    time stays below :data:`PS_REBASE` and whose tags stay finite never calls it."""
    out = [(tag - v if tag != INF else INF, seq, job) for tag, seq, job in heap]
    heapq.heapify(out)
    return out


class PsStage(StageKind):
    """``ps(φ)``: every job at once, each at ``φ(present) / present``; completions in the order of the
    finish tags (virtual time), ties in start order."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.phi = sim.compiler.fn(node.kind.capacity, span=node.span)
        self.ctx = Ctx()
        self.v = 0.0
        self.v_last = 0.0
        self.rate = 0.0
        self.heap: list = []
        self.epoch = 0
        self.nseq = 0
        #: whether the completion event of the current epoch is in the simulation's heap, not yet come
        self.pending = False
        #: the epochs of the completions a settle left behind when it rescheduled (a job came or left: each
        #: will do nothing), counted among the dead timers (Simulation.dead_timers) until they come
        self.dead_epochs: set = set()

    def _capacity_error(self, phi: float, share: float | None = None) -> None:
        from .report import member_label

        # at the capacity's expression, where a constant one that breaks the rule is refused (both tiers)
        present = self.ctx.present
        name = member_label(self)
        raise self.sim.error(capacity_message(name, phi, present) if share is None
                             else share_message(name, phi, present, share),
                             span=getattr(self.node.kind.capacity, "span", None) or self.node.span)

    def _advance(self) -> None:
        now = self.sim.now
        rate = self.rate
        if rate != INF:
            self.v += rate * (now - self.v_last)
        # (an infinite rate, ps(inf): every job of finite work there completes at this instant, so the
        # virtual time has nothing to measure; inf times no time passed was NaN, and the clock with it)
        self.v_last = now

    def attach(self, job: Job) -> None:
        self.acc()
        self._advance()
        if ps_tag(self.v, job.work):
            self.heap = ps_rebase([e for e in self.heap if e[2].stage is self], self.v)
            for tag, _, j in self.heap:
                j.tag = tag
            self.v = 0.0
        job.stage = self
        job.started = self.sim.now
        job.tag = self.v + job.work
        self.nseq += 1
        heapq.heappush(self.heap, (job.tag, self.nseq, job))
        self.present += 1
        self.mark()

    def detach(self, job: Job) -> None:
        self.acc()
        self._advance()
        job.work = max(job.tag - self.v, 0.0) if job.tag != INF else INF
        job.stage = None
        self.present -= 1
        self.mark()

    def settle(self) -> None:
        self._advance()
        heap = self.heap
        while heap and heap[0][2].stage is not self:
            heapq.heappop(heap)
        n = self.present
        if n > 0:
            self.ctx.present = float(n)
            phi = self.phi(None, None, self.ctx)
            if not phi >= 0:
                self._capacity_error(phi)
            if phi > 0:
                rate = phi / n
                if rate < TINY_SHARE:
                    self._capacity_error(phi, rate)
                self.rate = rate
            else:
                self.rate = 0.0
        else:
            self.rate = 0.0
        # the completion scheduled before, if still to come, will do nothing: the epoch moves on. A job that
        # left, or one that came under a capacity growing faster than present (ps(2 * present - 1): the new
        # completion is sooner, the old one past the drain), leaves it so
        if self.pending:
            self.dead_epochs.add(self.epoch)
            self.sim.dead_timers += 1
        self.pending = False
        self.epoch += 1
        if heap and self.rate > 0:
            dt = (heap[0][0] - self.v) / self.rate
            if dt == dt:  # (NaN: infinite work at an infinite rate, which never completes)
                self.sim.at(self.sim.now + (dt if dt > 0.0 else 0.0), self._done, self.epoch)
                self.pending = True

    def _done(self, epoch: int) -> None:
        if epoch != self.epoch:
            if epoch in self.dead_epochs:
                self.dead_epochs.discard(epoch)
                self.sim.dead_timers -= 1
            return
        self.pending = False
        heap = self.heap
        while heap and heap[0][2].stage is not self:
            heapq.heappop(heap)
        if not heap:
            return
        self.acc()
        self._advance()
        tag, _, job = heapq.heappop(heap)
        self.v = max(self.v, tag)
        job.stage = None
        job.work = 0.0
        self.present -= 1
        self.mark()
        self.sim.job_done(self, job)

    def work(self) -> float:
        now = self.sim.now
        v = self.v + self.rate * (now - self.v_last) if self.rate != INF else self.v
        work_pulse(self, len(self.heap))
        return sum(max(tag - v, 0.0) for tag, _, j in self.heap if j.stage is self)


# ---------------------------------------------------------------------------------------------------
# Flows: runs over several stages, and every run on a stage family such a run shares
# ---------------------------------------------------------------------------------------------------


class FlowStage(StageKind):
    """A ps stage whose family some run holds together with another: every job on it is a flow of the
    program's share policy (its capacity is constant). The :class:`FlowNetwork` does the work."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        c = sim.compiler.fn(node.kind.capacity, span=node.span)
        ctx = Ctx()
        ctx.present = 1.0
        self.cap = float(c(None, None, ctx))
        self.carried = 0.0
        self.net: FlowNetwork = sim.flow_network

    def busy_level(self) -> float:
        # Σ rate / φ; a stage of infinite capacity carries none of it (an infinite rate there lasts no
        # time: its flows finish at the instant they get it), where inf / inf was NaN
        return self.carried / self.cap if 0.0 < self.cap < math.inf else 0.0

    def attach(self, job: Job) -> None:
        self.net.add(job, (self,))

    def detach(self, job: Job) -> None:
        self.net.detach(job)

    def work(self) -> float:
        self.net.advance()
        work_pulse(self, len(self.net.flows))
        return sum(j.work for j in self.net.flows if self in j.stages)


class FlowNetwork:
    """The flows of a simulation: rates from the share policy, recomputed at every change."""

    def __init__(self, sim, policy):
        self.sim = sim
        self.policy = policy
        self.flows: dict[Job, None] = {}
        self.last = 0.0
        self.epoch = 0
        self._marked = False
        #: as PsStage's: the completion of this epoch still to come; a flow left (detach) since the last
        #: settle; the epochs of completions so left to do nothing, among Simulation.dead_timers
        self.pending = False
        self.left = False
        self.dead_epochs: set = set()
        from .policies.share import share_bottleneck, share_maxmin

        #: the built-in shares give every flow a rate above 0 (a plugin's may give one none), held to TINY_SHARE
        self.fair = next((name for name, fn in (("maxmin", share_maxmin), ("bottleneck", share_bottleneck))
                          if fn is policy), None)

    def advance(self) -> None:
        now = self.sim.now
        dt = now - self.last
        if dt > 0.0:
            for j in self.flows:
                if j.work != math.inf:  # infinite work stays infinite (at an infinite rate too: not NaN)
                    j.work -= j.rate * dt
        self.last = now

    def mark(self) -> None:
        if not self._marked:
            self._marked = True
            self.sim.dirty.append(self)

    def add(self, job: Job, stages) -> None:
        self.advance()
        job.stages = stages
        job.stage = self
        job.started = self.sim.now
        job.rate = 0.0
        self.flows[job] = None
        for st in stages:
            st.acc()
            st.present += 1
        self.mark()

    def remove(self, job: Job) -> None:
        if job not in self.flows:
            return
        self.advance()
        del self.flows[job]
        job.stage = None
        for st in job.stages:
            st.acc()
            st.present -= 1
            st.carried -= job.rate
        job.rate = 0.0
        self.mark()

    def settle(self) -> None:
        self.advance()
        jobs = list(self.flows)
        sim = self.sim
        sim.pulse -= len(jobs)  # its flows are units of the event's work (Simulation.pulse_out)
        if sim.pulse < 0:
            sim.pulse_out(f"sharing the capacity of the stages among {len(jobs)} flows")
        stages: dict = {}
        for j in jobs:
            for st in j.stages:
                stages.setdefault(st, len(stages))
        for st in stages:
            st.acc()
        caps = [st.cap for st in stages]
        rates = self.policy([[stages[st] for st in j.stages] for j in jobs], caps) if jobs else []
        for st in stages:
            st.carried = 0.0
        best = math.inf
        for j, r in zip(jobs, rates):
            j.rate = r
            for st in j.stages:
                st.carried += r
            if r > 0:
                best = min(best, max(j.work, 0.0) / r)
            if r < TINY_SHARE and self.fair is not None:
                from .report import member_label

                raise sim.error(flow_share_message([member_label(st) for st in j.stages], r, self.fair),
                                j.span, j.owner)
        if self.left:  # a flow left: the completion scheduled before, if still to come, will do nothing
            self.left = False
            if self.pending:
                self.dead_epochs.add(self.epoch)
                sim.dead_timers += 1
        self.pending = False
        self.epoch += 1
        if best < math.inf:
            self.sim.at(self.sim.now + best, self._done, self.epoch)
            self.pending = True

    def _done(self, epoch: int) -> None:
        if epoch != self.epoch:
            if epoch in self.dead_epochs:
                self.dead_epochs.discard(epoch)
                self.sim.dead_timers -= 1
            return
        self.pending = False
        self.advance()
        # done: what is left is rounding noise, or so little that its finish time rounds to now (now +
        # work / rate == now, as it does for a residue below half an ulp of now at its rate: rescheduled,
        # the completion would come at this same instant for ever)
        now = self.sim.now
        # a flow of infinite work never ends (its work and its tolerance are both inf)
        done = [j for j in self.flows
                if (j.work <= 1e-9 * max(j.total, 1.0) and j.work != math.inf)
                or (j.rate > 0 and now + j.work / j.rate <= now)]
        if not done:
            self.mark()
            return
        for j in done:
            self.remove(j)
            j.work = 0.0
            for st in j.stages[1:]:
                self.sim.stage_stats(st, j)
            self.sim.job_done(j.stages[0], j)

    def detach(self, job: Job) -> None:
        """A flow whose session leaves it unfinished (a preemption victim): the stage contract's
        ``detach``, which a run over several stages reaches through ``job.stage``, the network."""
        self.left = True
        self.remove(job)
