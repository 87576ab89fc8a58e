"""The interpreter of the IR: the configuration of §3, the settle loop, the event list.

See docs/simulator.md for the design. In short: a session is a generator (compiled by
:mod:`serq_sim.compile`) plus its attributes, status and active holds; a pool has its holders, cache
entries, queue and growers; a stage kind object has its jobs. Events are ``(time, seq, callback, arg)``
in a heap, ``seq`` from one counter, so events at one instant run in the order they were scheduled. After
every event :meth:`Simulation.settle` runs the ready sessions in the order they became ready, then retries
growers and admissions at every pool not served by a stage until nothing changes, then (when no other
event is pending at the instant) lets every idle step stage start an iteration, then lets marked stages
reschedule.
"""

from __future__ import annotations

import _random
import heapq
import itertools
import math
import sys
import time as _time
from array import array
from collections import deque
from typing import Any

from serq.errors import number_of, place
from serq_ir import nodes as N
from serq_ir.rules import member_problem, transfer_itself_message

from . import rand, records
from . import stages as _stages
from . import workload as _workload
from .backlog import Backlog
from .build import build
from .compile import (
    NO_PULSE,
    PULSE,
    PULSE_FIRST,
    PULSE_SECONDS,
    REDO_MESSAGE,
    ZENO,  # noqa: F401 - (engine.ZENO, as docs/simulator.md names it)
    instant_span,
    num,
    spin_message,
    statement_at,
)
from .compile import places as compile_places
from .errors import (
    GUARD,
    MAX_SAMPLES,
    OUT_OF_MEMORY,
    Held,
    SessionGone,
    SimError,
    StopRun,
    fmt_time,
    format_error,
    guard_message,
    printable,
    session_error,
    setting_error,
    setting_origins,
    show,
    work_message,
)
from .memguard import memory_guard
from .pools import admission as _admission
from .pools import cache as _cache
from .pools import check as _check
from .pools import growth as _growth
from .pools import release as _release
from .pools.model import Pool
from .session import Session
from .stages import Ctx, Job
from .stats import HUGE_SPAN, PER_HUGE
from .status import ENDED, GROWING, QUEUED, READY, STAGE
from .step.tokens import TokenGaps

EPS = 1e-9
INF = math.inf
#: the latest time an event happens at: without a horizon, an event at inf never does (Simulation._loop)
MAX_TIME = sys.float_info.max
#: events between two ticks of the event loop (the no-progress guard, the bounds, the progress bar)
TICK = 20_000
#: the no-progress guard: a run that makes more than STALL_EVENTS + STALL_PER_SESSION × (sessions live when
#: the instant began) events at one instant is an error (legitimate work at one instant is bounded by
#: what its sessions do; a flow or a stage rescheduling at the same instant for ever is not)
STALL_EVENTS = 1_000_000
STALL_PER_SESSION = 1_000
#: the no-progress guard of an open workload: more than STALL_ARRIVALS arrivals (arrive poisson, renewal) at one
#: instant is an error at the next tick. Each arrival is a session live until time moves, so a rate the clock
#: cannot resolve (poisson(1e300)) held a million sessions, 1.4 GB, by the time the events' guard came; an
#: open workload makes rate × ZENO × t arrivals an instant at time t, 10 000 only past some 10¹⁶ arrivals
STALL_ARRIVALS = 10_000
#: "one instant" for that guard: times within ZENO × max(|t|, 1 s) of the instant's start (compile.ZENO,
#: compile.instant_span; the step stages' guard takes the same instant)
_log = math.log


class Observations:
    """One observe's samples: values, times, session serials and turn numbers."""

    __slots__ = ("values", "times", "sessions", "turns")

    def __init__(self):
        self.values = array("d")
        self.times = array("d")
        self.sessions = array("q")
        self.turns = array("i")


#: The most samples a run holds unless told otherwise (``serq run --max-samples``): 28 bytes each
#: (an observe's value, time, session and turn), 2.8 GB in all.
DEFAULT_MAX_SAMPLES = 100_000_000
#: the countdown of the samples left (Simulation.samples_left) once the run is over: what its end adds stops nothing
NO_SAMPLES_LEFT = 1 << 62


def dead_event(cb, arg) -> bool:
    """Whether the event ``(cb, arg)`` of the heap is one that will do nothing and that
    :attr:`Simulation.dead_timers` counts: the timer of a lease that ended before its time, the completion of
    a job that left a fifo or delay stage, a completion a ps stage rescheduled after a job came or left, or
    one the flows rescheduled after a flow left (the epochs they list), and an event of any other stage kind
    (a plugin's) that the kind says is (``StageKind.dead_event(callback, arg)`` is True). Any other is not."""
    f = getattr(cb, "__func__", None)
    if f is _release.lease_end:
        return arg.timer and not arg.alive
    if f is _stages.FifoStage._done or f is _stages.DelayStage._done:
        return arg.stage is not cb.__self__
    if f is _stages.PsStage._done or f is _stages.FlowNetwork._done:
        return arg in cb.__self__.dead_epochs
    st = getattr(cb, "__self__", None)
    if isinstance(st, _stages.StageKind):
        return st.dead_event(cb, arg) is True
    return False


def _endless(s: Session) -> bool:
    """Whether session ``s`` runs a job of infinite work (on a stage or a flow): the job never completes, so the
    session never leaves its hold (:meth:`Simulation.waiting_forever`), unless a preemption takes the pool."""
    job = s.job
    return job is not None and job.work == math.inf and _unpreempted(s)


def _unpreempted(s: Session) -> bool:
    """Whether no preemption can take a hold of session ``s`` (and with it the job it runs, or waits to run)."""
    return all(_never_preempts(sl.pool) for h in s.holds for sl in h.slots)


def _never_served(sim) -> tuple[dict[Session, str], set[Session]]:
    """The sessions queued at a fifo stage that are never served (:meth:`.stages.FifoStage.never_served`:
    its servers all run, or will run first, jobs of infinite work), each with where it waits, and the
    sessions of those runs. A session whose hold a preemption could take is not counted: taken, it leaves
    the queue."""
    fifos = [st for st in sim.stages if type(st) is _stages.FifoStage and st.q]
    if not fifos:
        return {}, set()
    from .report import member_label

    serving: dict[int, list[Job]] = {id(st): [] for st in fifos}
    for t, _seq, cb, job in sim.heap:  # a fifo stage's jobs in service are its completion events
        st = getattr(cb, "__self__", None)
        if t == INF and id(st) in serving and isinstance(job, Job) and job.stage is st:
            serving[id(st)].append(job)

    def endless(job: Job) -> bool:
        return job.owner is not None and job.owner.job is job and _endless(job.owner)

    waiting: dict[Session, str] = {}
    runs: set[Session] = set()
    for st in fifos:
        stuck, by = st.never_served(serving[id(st)], endless)
        stuck = [x for x in stuck if _unpreempted(x)]
        if stuck:
            waiting.update(dict.fromkeys(stuck, f"queued at stage {member_label(st)}"))
            runs.update(by)
    return waiting, runs


def _never_planned(sim) -> tuple[dict[Session, str], dict[str, str]]:
    """The sessions whose jobs are residents of a step stage that will never start an iteration, whatever
    arrives (:func:`.step.stall.stalled`), each with the stage's name; and each such stage's name with why
    (``"budget"`` or ``"chunk"``)."""
    if not sim.step_stages:
        return {}, {}
    from .report import member_label
    from .step.stall import stalled

    stages = stalled(sim)
    return ({j.owner: member_label(st) for st in stages for j in st.residents},
            {member_label(st): why for st, why in stages.items()})


def _endless_iterations(sim) -> list:
    """The step stages of ``sim`` whose iteration under way ends at inf (a cost that is inf), so that none of
    their residents ever completes, each judged only when no pool its residents hold has a preemption rule
    (one could take a resident out of the stage)."""
    if not sim.step_stages:
        return []
    from .step.stage import iteration_ends

    ends = iteration_ends(sim.heap)
    return [st for st in sim.step_stages
            if ends.get(id(st)) == INF and st.iter is not None
            and all(j.owner is None or _unpreempted(j.owner) for j in st.residents)]


def _room(sim, x: Session, memo: dict[int, list]) -> tuple[bool, bool]:
    """``(room, beyond)`` of the hold session ``x`` waits with. ``room``: whether it has room now in each of its
    pools: what it needs (its demand, once an admission attempt evaluated it and when it cannot change while
    it waits: ``info.pure``) fits, else what it needs at least (:func:`_least_needs`: its amounts bounded below
    over every state the run can reach) fits in each pool where that is known, else, nothing known, each pool
    has a unit free. One without room waits for a release as well, whatever admits it: a head of 5 units
    beside 2 free has a unit free, and was taken as waiting for the stage's admission alone (as was one whose
    units read the clock, whose demand no attempt keeps). ``beyond``: whether that need is more than some
    pool's capacity, so that it never fits, whatever frees."""
    pend = x.pending
    need = getattr(pend, "demand", None) or _least_needs(sim, x, memo)
    if not need:
        return all(p.used + p.reserved < p.cap for p in pend.pools), False
    if _admission.fits(need):
        return True, False
    return False, any(n > pool.cap + EPS for pool, _u, n in need)


def _beyond_capacity(sim, x: Session, memo: dict[int, list]) -> str | None:
    """How session ``x``, waiting at the end of a run (queued with a hold, or growing one), needs more of a pool
    than its capacity, so that it never fits whatever is released (``kv (12 of a capacity of 10)``), else
    None: its demand (:func:`_room`'s: what an attempt evaluated, else what it needs at least) on some pool above
    the cap, or its growth on top of what it holds there itself. The waits-for-ever warning tells such a
    session by that cause, not as a deadlock (:func:`_why_forever`)."""
    from .report import member_label

    if x.status == GROWING and x.grow is not None:
        pool, slot, d, _job = x.grow
        own = math.fsum(sl.alloc for sl in pool.holders if sl.owner is x)
        need = own - slot.alloc + pool.round_up(slot.alloc + d)
        return (f"{member_label(pool)} ({show(need)} of a capacity of {show(pool.cap)})"
                if need > pool.cap + EPS else None)
    pend = x.pending
    if pend is None:
        return None
    need = getattr(pend, "demand", None) or _least_needs(sim, x, memo)
    for pool, _u, n in need or ():
        if n > pool.cap + EPS:
            return f"{member_label(pool)} ({show(n)} of a capacity of {show(pool.cap)})"
    return None


def _keys_move(pool) -> bool:
    """Whether the `queue by` keys of ``pool`` read state (`waited`, the clock, an observable), so that the head
    they choose among the same waiting sessions can change as the run goes on (:meth:`Simulation.forever`)."""
    from .compile import state_dependent

    q = getattr(getattr(pool, "node", None), "queue", None)
    return isinstance(q, N.QueueBy) and any(state_dependent(k) for k in q.keys)


def _demand_reads(sim, info) -> set | None:
    """The pools whose state the amounts (units, reserves) of the hold ``info`` read, every member of a family
    read by a computed index; ``None`` when they read something else that changes as the run goes on (a
    stage's observable, a context variable such as ``now``, a draw). Used at the end of a run
    (:meth:`Simulation.forever`): a waiting hold whose demand reads state is read again at every later
    attempt, so it waits for ever only when no pool it reads frees and it reads nothing else that changes."""
    from .compile import walk

    pools: set = set()
    for hp in info.node.pools:
        for e in (hp.units, hp.reserve):
            if e is None:
                continue
            for x in walk(e):
                if isinstance(x, N.Observable):
                    if not isinstance(x.target, N.PoolRef):
                        return None
                    fam = x.target.pool
                    base = sim.pool_base[fam]
                    size = sim.program.pools[fam].size or 1
                    i = x.target.index
                    if isinstance(i, N.Num) and 0 <= float(i.value) < size and float(i.value) == int(float(i.value)):
                        pools.add(sim.pools[base + int(float(i.value))])
                    else:  # (every member: the index is computed, or out of range, which an attempt tells)
                        pools.update(sim.pools[base:base + size])
                elif isinstance(x, (N.Ctx, N.Draw)):
                    return None
    return pools


def _least_needs(sim, x: Session, memo: dict[int, list]) -> list:
    """``[(pool, 0.0, least)]``: for each pool of the hold session ``x`` waits with whose room needed
    (``round_up(max(units, reserve))``) is bounded below over every state the run can reach from now, that
    bound. A waiting session's attributes do not change and ``now`` only grows: an amount that reads only
    attributes and numbers is its value (the hold's own compiled amount, evaluated as an attempt would); one
    that reads ``now`` too, with the operators and functions over them, is bounded by evaluating it over
    intervals (the clock from now up to inf: :func:`.step.stall._bound`, sound under the doubles); anything
    else it reads (an observable, a draw) leaves that amount unknown. Used at the end of a run
    (:meth:`Simulation.forever`), never by admission; ``memo``, kept across the sessions judged there, holds by
    ``id`` of the hold's statement which of its amounts are which (:func:`_amounts`), read once."""
    pend = x.pending
    info = pend.info
    plan = memo.get(id(info))
    if plan is None:
        plan = memo[id(info)] = _amounts(info, len(pend.pools))
    if not plan:
        return list(pend.floor or ())
    pools = pend.pools
    attrs = x.attrs
    lows: dict[int, float] = {}
    for k, value, f, e in plan:
        if f is not None:
            try:
                value = f(x, attrs, sim.null_ctx)
            except Exception:  # noqa: BLE001 - (its error is an attempt's to make: not judged here)
                continue
        elif e is not None:
            from .step.stall import _bound

            box = _bound(_with_attributes(e, attrs), {"now": sim.now})
            if box is None:
                continue
            value = box[0]
        if value == value and value > lows.get(k, 0.0):
            lows[k] = value
    out = [(pools[k], 0.0, pools[k].round_up(v)) for k, v in lows.items()]
    return out or list(pend.floor or ())


def _amounts(info, n: int) -> list:
    """The amounts of a hold's statement (``info``, of ``n`` pools) that :func:`_least_needs` reads, each ``(k,
    value, f, e)`` for its pool ``k``: a number (``value``), one that reads only attributes and numbers (``f``,
    its compiled function) or one that reads ``now`` as well (``e``, bounded over intervals); the others, none."""
    from .compile import state_dependent

    node = getattr(info, "node", None)
    if node is None or len(node.pools) != n:
        return []
    out = []
    for k, hp in enumerate(node.pools):
        for e, f in ((hp.units, info.units[k]), (hp.reserve, info.reserves[k])):
            if e is None or f is None:
                continue
            if isinstance(e, N.Num):
                out.append((k, float(e.value), None, None))
            elif not state_dependent(e):
                out.append((k, 0.0, f, None))
            elif _with_attributes(e, _ANY) is not None:
                out.append((k, 0.0, None, e))
    return out


class _AnyAttributes:
    """Attributes that are all 0, for asking :func:`_with_attributes` whether an expression can be bounded."""

    def __getitem__(self, _slot: int) -> float:
        return 0.0


_ANY = _AnyAttributes()


def _with_attributes(e, attrs):
    """``e`` with each attribute it reads written as its value now (a waiting session's attributes do not
    change), for :func:`_least_needs`; None when it reads anything but attributes, numbers, ``now`` and the
    operators and functions over them."""
    if isinstance(e, N.Num):
        return e
    if isinstance(e, N.Attr):
        v = attrs[e.slot]
        return N.Num(value=float(v)) if isinstance(v, (int, float)) else None
    if isinstance(e, N.Ctx):
        return e if e.name == "now" else None
    if isinstance(e, N.Unary):
        a = _with_attributes(e.arg, attrs)
        return None if a is None else N.Unary(op=e.op, arg=a)
    if isinstance(e, N.Binary):
        a, b = _with_attributes(e.lhs, attrs), _with_attributes(e.rhs, attrs)
        return None if a is None or b is None else N.Binary(op=e.op, lhs=a, rhs=b)
    if isinstance(e, N.Cond):
        parts = [_with_attributes(y, attrs) for y in (e.test, e.then, e.orelse)]
        return None if any(y is None for y in parts) else N.Cond(test=parts[0], then=parts[1], orelse=parts[2])
    if isinstance(e, N.Call):
        args = [_with_attributes(y, attrs) for y in e.args]
        return None if any(y is None for y in args) else N.Call(fn=e.fn, args=args)
    return None


def _behind_heads(sim, via: dict[Session, Any], stuck: set[Session]) -> dict[Session, str]:
    """Of the sessions ``via`` maps to the step stage that admits them, those queued behind a session that
    waits for ever (one of ``stuck``) in the order the stage serves its queues (the pools it admits from in
    their order, each pool's re-queued sessions first, then its queue in the order they joined), each with the
    label of the pool whose head it waits behind: the first head that does not fit stops the stage's
    admissions (language.txt §3, head-of-line blocking), so they wait for ever too, room or none. A queue
    ordered by keys read at the join (``queue by (-serial)``: attributes and numbers) is kept in the order they
    serve it, and is taken in that order: a newcomer of lesser keys may be admitted before its head, but the
    sessions behind the head stay behind it. A pool whose queue is ordered by keys that change as it waits has
    its head chosen among all its queue at each attempt: it blocks only when every session queued there waits
    for ever (a session of it that does not may be the head); behind it, every one."""
    from .report import member_label

    served: dict[int, list[Pool]] = {}
    for pool in sim.pools:
        st = getattr(pool, "via", None)
        if st is not None:
            served.setdefault(id(st), []).append(pool)
    out: dict[Session, str] = {}
    for pools in served.values():
        head: str | None = None  # the pool whose head waits for ever
        for pool in pools:
            label = member_label(pool)
            front = [x for x in pool.front if x in via]
            queue = [x for x in pool.queue if x in via]
            # a queue whose keys were read at the join is kept in the order they serve it (KeyedQueue: the least
            # keys first, ties in join order): a newcomer may go before its head, never lift the rest past it
            keyed = getattr(pool, "keyed", None) is not None and not (
                getattr(pool, "keyed_at_join", False) and not getattr(pool.queue, "scan", True))
            for x in front if keyed else front + queue:
                if head is not None:
                    out[x] = head
                elif x in stuck:
                    head = label
            if keyed:
                if head is not None:
                    out.update((x, head) for x in queue if head != label or x not in stuck)
                elif queue and all(x in stuck for x in queue):
                    head = label
    return out


def _unadmitted(via: dict[Session, Any]) -> dict[Session, str]:
    """Of the sessions ``via`` maps to the step stage that admits them (`admit via` of the pool they are queued
    at), those whose stage will never admit one, each with the stage's name: an idle stage whose budget is
    at most 0 in every state the run can reach (:func:`.step.stall.stalled`'s bound, which an idle stage
    without residents has too). Another stage may admit them at an iteration or a planning to come
    (a budget of ``now > 100 ? B : 0``), so they wait for it and not for ever."""
    if not via:
        return {}
    from .report import member_label
    from .step.stage import StepStage
    from .step.stall import _stays_0

    never: dict[int, bool] = {}
    out: dict[Session, str] = {}
    for x, st in via.items():
        k = id(st)
        if k not in never:
            never[k] = (isinstance(st, StepStage) and st.iter is None
                        and _stays_0(st, st.node.kind.budget))
        if never[k]:
            out[x] = member_label(st)
    return out


def never_completing(label: str) -> str:
    """How the warning of sessions waiting for ever names a stage of serQ's own that holds them: ``at stage s,
    which will never complete them`` (a third party's stage names its kind and plugin too:
    :func:`.guards.held_for_ever`)."""
    return f"at stage {label}, which will never complete them"


def _held_at_stages(sim, skip: set[Session]) -> dict[Session, str]:
    """The sessions (not in ``skip``) whose runs serQ's own stages hold, each with where
    (:func:`never_completing`): a run of a fifo or delay stage in service (its completion an event in
    ``sim.heap``: at inf, when no event is left) or queued at a fifo stage, a run at a ps stage, a flow, a
    resident of a step stage. What the warning names when no event is left: those stages never complete
    them (infinite work, or no rate to do it at)."""
    starved = _starved_flows(sim)
    return {s: (f"at stage{'s' if n > 1 else ''} {label}, where {starved} gives their flows no rate"
                if starved is not None and s.job is not None and s.job.stage is sim.flow_network
                and s.job.rate == 0 else
                never_completing(label) if n == 1 else f"at stages {label}, which will never complete them")
            for s, (label, n) in _stage_runs(sim, skip).items()}


def _starved_flows(sim) -> str | None:
    """The third party's share policy of ``sim`` (:func:`.guards.share_named`), which may give a flow no rate
    (serQ's own give each one above 0): the flows it gives none when no event is left wait for ever, and the
    warning said the stages "will never complete them", naming neither the policy nor its plugin."""
    net = sim.flow_network
    if net is None or net.fair is not None:
        return None
    from .guards import share_named

    return share_named(net.policy)


def _infinite_runs(sim, skip: set[Session]) -> dict[Session, str]:
    """The sessions (not in ``skip``) whose runs at serQ's own stages (or a flow) have infinite work, where no
    preemption can take a hold of theirs (:func:`_endless`), each with where: such a run never completes, so
    its session waits for ever, events left or not (``run S (inf)``; docs/simulator.md)."""
    return {s: f"at stage{'s' if n > 1 else ''} {label}, in a run of infinite work"
            for s, (label, n) in _stage_runs(sim, skip).items() if _endless(s)}


def _stage_runs(sim, skip: set[Session]) -> dict[Session, tuple[str, int]]:
    """The sessions (not in ``skip``) whose runs serQ's own stages hold (:func:`_held_at_stages`), each with the
    stages' labels and how many they are."""
    from .report import member_label

    jobs: list[Job] = []
    own = (_stages.FifoStage, _stages.DelayStage)
    for _t, _seq, cb, job in sim.heap:
        if type(getattr(cb, "__self__", None)) in own and isinstance(job, Job):
            jobs.append(job)
    for st in sim.stages:
        kind = type(st)
        if kind is _stages.FifoStage:
            jobs.extend(st.q)
        elif kind is _stages.PsStage:
            jobs.extend(j for _tag, _n, j in st.heap)
    if sim.flow_network is not None:
        jobs.extend(sim.flow_network.flows)
    for st in sim.step_stages:
        jobs.extend(getattr(st, "residents", ()))  # (a third party's stage kind among them keeps its own)
    held: dict[Session, tuple[str, int]] = {}
    for job in jobs:
        s = job.owner
        if not isinstance(s, Session) or s.job is not job or s in skip or s in held:
            continue
        stages = job.stages or ((job.stage,) if job.stage is not None else ())
        if not stages:
            continue
        held[s] = (", ".join(member_label(x) for x in stages), len(stages))
    return held


def runs_named(places) -> str:
    """``, in the run at P.sq:4:11`` (or ``, in the runs at …``) for the places of the run statements sessions
    wait in, in order; nothing without one."""
    at = list(places)
    return f", in the run{'s' if len(at) > 1 else ''} at {', '.join(at)}" if at else ""


def _shown_sessions(serials) -> str:
    """``session 0`` or ``sessions 0, 2, …`` (the first five)."""
    serials = sorted(serials)
    shown = ", ".join(str(k) for k in serials[:5]) + (", …" if len(serials) > 5 else "")
    return f"session{'s' if len(serials) > 1 else ''} {shown}"


def _why_forever(waiting: set[Session], waits: dict[Session, list[Pool]], endless: set[Session],
                 queued: dict[Session, str], runs: set[Session], stalled: dict[Session, str],
                 why_stalled: dict[str, str], unadmitted: dict[Session, str] | None = None,
                 blocked: dict[Session, str] | None = None, infinite: dict[Session, str] | None = None,
                 beyond: dict[Session, str] | None = None) -> str:
    """Why the sessions of :meth:`Simulation.waiting_forever` wait for ever (a run with events left), each kind
    of waiter in its own words, joined by "or": the residents of a step stage that never starts an iteration
    (``stalled``); the sessions in a fifo stage's queue behind runs of infinite work (``queued``, the sessions
    of those runs ``runs``); and the sessions ``waiting`` for pools (``waits``) none of whose holders will
    release them. Those are told by who holds their pools, followed through the holders that wait themselves:
    when that leads to a session that never releases for a reason of its own (a run of infinite work, one of
    ``endless``; a session ``queued`` or ``stalled``), they wait for it, and it is named; when it leads only
    to sessions that wait for pools, or to none (a demand beyond the capacity), it is a deadlock. Those of
    ``unadmitted`` wait at a pool that a step stage which never admits admits to (:func:`_unadmitted`), told
    with that stage whatever their pools' holders do; those of ``blocked`` behind the head of a queue such a
    stage admits from, which waits for ever (:func:`_behind_heads`), told with that pool; those of ``infinite``
    in a run of infinite work of their own (:func:`_infinite_runs`); those of ``beyond`` need more of a pool
    than its capacity (:func:`_beyond_capacity`), told with it whoever holds what, and only the rest whose
    pools only waiters hold are a deadlock (both were "a deadlock, or a demand beyond the capacity")."""
    clauses = []
    beyond = beyond or {}
    infinite = infinite or {}
    waiting = waiting - infinite.keys()
    if unadmitted:
        names = sorted(set(unadmitted.values()))
        clauses.append(f"to be admitted by step stage{'s' if len(names) > 1 else ''} {', '.join(names)} "
                       "(`admit via`), whose budget cannot rise above 0 as jobs arrive, so it admits none")
        waiting = waiting - unadmitted.keys()
    blocked = {x: label for x, label in (blocked or {}).items() if x in waiting}
    if blocked:
        names = sorted(set(blocked.values()))
        clauses.append(f"in the queue{'s' if len(names) > 1 else ''} of {', '.join(names)} behind a head that waits "
                       "for ever and so blocks the rest: head-of-line blocking")
        waiting = waiting - blocked.keys()
    for kind, words in (("budget", "whose budget cannot rise above 0 as jobs arrive, so no iteration ever starts"),
                        ("chunk", "whose chunk cannot rise above 0 as jobs arrive, and on which no run decodes, so no "
                                  "job is ever given a token"),
                        ("cost", "whose iteration under way, of infinite cost, never ends")):
        names = sorted({x for x in stalled.values() if why_stalled[x] == kind})
        if names:
            clauses.append(f"at step stage{'s' if len(names) > 1 else ''} {', '.join(names)}, {words}")
    if queued:
        n = len(runs)
        clauses.append(f"in a fifo stage's queue behind {'runs' if n > 1 else 'a run'} of infinite work "
                       f"({_shown_sessions(x.serial for x in runs)}), which never complete{'' if n > 1 else 's'}")
    if waiting:
        # each pool waited for: the reasons of its holders that never release (a tag each), and its holders
        # that wait themselves; then, to the fixed point, a waiter's tags are its pools', a pool's its holders'
        tags: dict[Pool, set] = {}
        waiting_holders: dict[Pool, list[Session]] = {}
        ended: set[Session] = set()
        for p in {p for x in waiting for p in waits[x]}:
            t, w = set(), []
            for sl in p.holders:
                h = sl.owner
                if sl.lease:
                    continue
                if h in stalled:
                    t.add(("step", stalled[h]))
                elif h in queued:
                    t.add(("fifo",))
                elif h in endless:
                    t.add(("endless",))
                    ended.add(h)
                elif h in waiting:
                    w.append(h)
            tags[p], waiting_holders[p] = t, w
        changed = True
        while changed:
            mine = {x: set().union(*(tags[p] for p in waits[x])) for x in waiting}
            changed = False
            for p, w in waiting_holders.items():
                for h in w:
                    if not mine[h] <= tags[p]:
                        tags[p] |= mine[h]
                        changed = True
        big = sorted({beyond[x] for x in waiting if x in beyond})
        held = set().union(*(t for x, t in mine.items() if x not in beyond))
        if held:
            roots = [f"the residents of step stage {t[1]}, "
                     + ("whose iteration never ends" if why_stalled.get(t[1]) == "cost" else
                        "which never starts an iteration")
                     for t in sorted(x for x in held if x[0] == "step")]
            if ("endless",) in held:
                roots.append(f"{_shown_sessions(x.serial for x in ended)}, whose run of infinite work never "
                             "completes")
            if ("fifo",) in held:
                roots.append("sessions in a fifo stage's queue behind a run of infinite work")
            clauses.append("for pools that only sessions that never release them hold: " + ", and ".join(roots))
        if any(not t for x, t in mine.items() if x not in beyond):
            clauses.append("for pools that only they hold: a deadlock")
        if big:
            clauses.append(f"for more of a pool than its capacity, which never fits whatever is released: "
                           f"{', '.join(big)}")
    if infinite:
        clauses.append("in a run of infinite work of its own, which never completes")
    return "each waits " + "; or ".join(clauses)


def _never_preempts(pool: Pool) -> bool:
    """Whether ``pool`` preempts no holder: no rule, or ``preempt none`` (a plugin's rule may preempt)."""
    from .policies.preemption import NoPreemption

    return pool.preempt is None or type(pool.preempt) is NoPreemption


class Simulation:
    """One run of one program. Build with :func:`serq_sim.run` (or :meth:`build`), then :meth:`run`."""

    #: the attributes the engine sets, as slots (a step stage's say why: StepStage.__slots__); ``__dict__``
    #: keeps a simulation open to others' attributes (test_slots.py checks that every one a run sets is here)
    __slots__ = (
        "_arrive_cb", "_pl_word", "_rand_arr", "_seq", "_wl_base", "_wl_seed", "a_live", "adm_counter", "b_live",
        "admit_budget", "admitted", "any_pools", "end_memo", "arr_limit", "arrivals", "arrive", "backlog", "check", "closed",
        "compiler", "cur", "dead_timers", "quiet", "dirty", "eid_counter", "end", "ended", "events", "flow_network", "free_pools",
        "gap_fn", "gauge_last", "gauge_points", "gauges", "grow_pools", "heap", "heap_left", "horizon",
        "init_fn", "interrupted", "join_counter", "live", "live_next", "live_t", "max_events", "max_samples",
        "max_wall", "mem_guard", "nan_keys", "nattrs", "need_est", "next_serial", "now", "nplaces", "null_ctx", "obs", "obs_app",
        "open_arrivals", "partial", "partial_note", "plugin_manager", "pool_base", "pools", "preempt_count", "program",
        "progress", "pulse", "pulse_n", "pulse_t", "queue_free", "rate", "ready", "record_tables", "release_counter", "rngs", "seed",
        "session_fn", "setting_from", "setup_stop", "shared_families", "show_progress", "slot_more", "source", "spans", "stage_base",
        "folder", "clock_reached", "other_memory", "other_admitter", "clamped",
        "stages", "rep_c", "rep_k", "rep_limit", "rep_n", "rep_seconds", "rep_t", "rep_rejected", "live0", "due_now", "next_check", "samples_at_ticks", "samples_left", "stall_arr", "stall_ev", "stall_live", "stall_t", "step_stages", "step_heap", "step_later", "step_cur", "step_self", "pool_hot", "grow_lazy_ok", "served_by", "room_floors", "adm_hot", "t_shown", "t_wall0", "token_gaps",
        "trace", "trace_ordered", "trace_slots", "turn_fn", "turns", "virtual_events", "warm", "warmup",
        "__dict__",
    )

    def __init__(self, program: N.Program, registries, *, seed=None, horizon=None, warmup=None,
                 arrivals=None, check_invariants=False, progress=False, trace_path=None, max_events=None,
                 max_wall=None, max_samples=None, trace_digest=None, folder=None):
        from .pools.model import program_kept_keys

        # (the queues of both tiers are built from it: `queue by` keys as they choose the head, kept_keys)
        self.program = program = program_kept_keys(program)
        rs = program.run
        # (a seed given is checked by serq_sim.run, the one caller, before the set-up: api._check_run_args)
        self.seed = int(rs.seed if seed is None else seed)
        if horizon is not None:
            self.horizon = float(horizon)
        else:
            # a program without a horizon runs until no event is left (serq run refuses it)
            self.horizon = INF if rs.horizon is None else num(rs.horizon)
        self.warmup = float(rs.warmup if warmup is None else warmup)
        # an int, whatever Integral the caller gave (numpy's int64): the fast tier writes it into its source
        self.arr_limit = rs.arrivals if arrivals is None else int(arrivals)
        #: where each run setting came from, for the errors it causes (errors.setting_error)
        self.setting_from = setting_origins(rs, {"seed": seed, "horizon": horizon, "warmup": warmup,
                                                 "arrivals": arrivals})
        self.check = check_invariants
        self.progress = progress
        #: the user's bounds (``serq run --max-events/--max-wall``): the run stops with a partial report
        self.max_events = None if max_events is None else int(max_events)
        self.max_wall = max_wall
        #: at most this many samples (observes', gauges' change points, a record row's columns) are held: a run that holds more
        #: stops with its partial report (counted down where the general engine adds them, samples_left, and
        #: checked where the fast tier grows its buffers), instead of running out of memory
        self.max_samples = DEFAULT_MAX_SAMPLES if max_samples is None else int(max_samples)
        #: the samples a session's observes and records may still add before the samples held are counted
        #: (samples_out): counted down where they are added, one decrement a statement, so that a run stops at
        #: the statement that makes it hold max_samples, not at the next tick (every TICK events), which a
        #: loop of observes at one instant passed by 200 times the bound
        self.samples_left = self.max_samples
        self.t_wall0 = self.t_shown = _time.monotonic()
        self.show_progress = False
        #: the work left inside this event before the clock is read again (PULSE, pulse_out); the countdown's
        #: length and when it was set (pulse_out adapts it to the cost of a unit)
        self.pulse = PULSE_FIRST if max_wall is not None else NO_PULSE
        self.pulse_n = PULSE_FIRST
        self.pulse_t = self.t_wall0
        #: under a memory limit, what stops the run while it can still make its report (memguard.py)
        self.mem_guard = memory_guard()
        #: the no-progress guard (see tick): the instant of the first tick at it, the event count and the
        #: live sessions then
        self.stall_t = math.nan
        self.stall_ev = 0
        self.stall_live = 0
        self.stall_arr = 0
        #: the count of popped events at the next tick that checks what the report shows (tick)
        self.next_check = 0
        #: whether a tick checks the samples held (the fast tier checks them where its buffers grow)
        self.samples_at_ticks = True
        #: the fast tier's: the names of its events due at a time that are no stage's (stall_error)
        self.due_now = None
        #: the closed workload's guard (workload.replace_limit): the instant of the last replacement, the
        #: replacements made at it, and how many are allowed; the members, past whose count of replacements
        #: at one instant the CPU time spent there is read, the CPU time when it was passed, and how much
        #: is allowed (workload.REPLACE_SECONDS)
        self.rep_t = math.nan
        self.rep_k = 0
        self.rep_limit = 0
        self.rep_n = 0
        self.rep_c = 0.0
        self.rep_seconds = math.inf
        #: the session a hold is ending as never fitting its pool and what the guard's error then says of the
        #: hold (pools.admission.reject, workload.rejected_words), else None: the guard's error is located there
        self.rep_rejected = None
        self.source = program.source
        #: the folder the program's relative names (its source's, so its trace's) are relative to, when it is not
        #: the current one: the folder a program the library API compiled was compiled in (serq_ir.folders)
        self.folder = folder
        self.now = 0.0
        self.heap: list = []
        self._seq = itertools.count()
        self.ready: deque = deque()
        self.dirty: list = []
        #: whether every pool a run or a grow grows has a preemption policy that a lazy grower's stale position
        #: does not mislead (judged once, by the first step stage that asks: step.lazy._glazy_judge)
        self.grow_lazy_ok: bool | None = None
        #: the first run of each run statement that held another member's memory, by span id (fleet.checker)
        self.other_memory: dict = {}
        #: the first run of each run statement on another member than the one that admitted its hold (fleet.checker)
        self.other_admitter: dict = {}
        #: each hold clause whose negative value was taken as 0 (a `reuse` bound, a `cache` length), by
        #: ``(clause, span)``: its first ``[t, serial, value]`` and how often (pools.cache.clamped)
        self.clamped: dict = {}
        #: the pools each stage admits (``admit via``), by the stage's id (build.py), for StepStage.bind
        self.served_by: dict | None = None
        #: per pool family, the least room a hold waiting there can need, or 0 (build.py:
        #: pools.admission.room_floors), which the general engine's pools and the fast tier read
        self.room_floors: list[float] = []
        self.events = 0
        #: events a step stage's quiet rounds stood for (serq_sim.step: each is an iteration's end that the
        #: event loop did not pop); counted into ``events`` when the loop stops
        self.virtual_events = 0
        self.arrivals = 0
        self.open_arrivals = 0
        self.ended = 0
        self.turns = 0
        self.live = 0
        self.live_t = 0.0
        #: the live sessions when the instant live_t began (before its first spawn or end): set where
        #: live_t moves on, read by the no-progress guard (tick)
        self.live0 = 0
        self.a_live = 0.0
        #: its spans of HUGE_SPAN or longer, in its units (stats.HUGE_SPAN: acc_live_huge)
        self.b_live = 0.0
        #: the live count's integral at the bins' ends (backlog.py; the not-steady test): a spawn or an end
        #: at or past ``live_next`` closes the bins up to it
        self.backlog = Backlog(self.warmup, self.horizon)
        self.live_next = self.backlog.next
        self.warm = self.warmup <= 0
        self.next_serial = 0
        self.adm_counter = itertools.count()
        self.join_counter = itertools.count()
        self.release_counter = itertools.count()
        self.eid_counter = itertools.count()
        self.preempt_count = 0
        #: the admissions made (pools.admission.admit, the prepared admissions): the settle starts again
        #: when the step stages' phase admitted a session
        self.admitted = 0
        self.admit_budget = None
        #: while the run's end is made (run: _finish and the report), the observables read once a stage
        self.end_memo: dict | None = None
        self.interrupted = False
        #: the first NaN of each ordering key, by the key (serq_sim.nankeys): the report's warning nan-key
        self.nan_keys: dict = {}
        #: whether events were left when the run ended (none left: every live session waits for ever)
        self.heap_left = True
        #: the lease timers in ``heap`` whose lease ended before its time (a release, a transfer, the session's
        #: end): events that will do nothing, so a run whose heap holds only those has drained
        #: (pools.release.end_lease, lease_end)
        self.dead_timers = 0
        #: the event just taken changed nothing the program has (the warm-up's end): no pool is retried after it
        self.quiet = False
        #: why the run stopped early (``None``: it did not), and the report's note saying so
        self.partial: str | None = None
        self.partial_note = ""
        #: the plugin manager the run's kinds and policies came from (set by serq_sim.run; it names a
        #: plugin whose code was running when Ctrl-C stopped the run)
        self.plugin_manager = None
        self.cur = None
        self.rngs = rand.streams(self.seed)
        self._rand_arr = self.rngs["arrivals"].random
        # common random numbers (rand.py): the workload stream is reseeded per session and turn
        # (random.Random.seed without its wrapper's checks of the argument's type, which is an int here,
        # nor its reset of gauss_next, which no draw reads)
        self._wl_seed = _random.Random.seed.__get__(self.rngs["workload"])
        self._wl_base = rand.workload_base(self.seed)
        # ... and the session block's draws come from a stream per session, turn and place
        self._pl_word = self.rngs["places"].getrandbits
        self.nplaces = len(compile_places(program))
        self.null_ctx = Ctx()
        self.nattrs = len(program.attributes)
        names = {a.name: i for i, a in enumerate(program.attributes)}
        self.slot_more = names.get("more")
        self.trace_slots = [names.get(n) for n in ("new", "out", "think", "forced")]
        self.obs = [Observations() for _ in program.observes]
        self.obs_app = [(o.values.append, o.times.append, o.sessions.append, o.turns.append) for o in self.obs]
        self.record_tables = records.tables(program)
        self.gauge_points: list[tuple[array, array]] = []
        #: the stop (--max-wall) reached while the run was set up (a trace read, setup_watch): :meth:`run`
        #: makes its partial report at once, nothing simulated
        self.setup_stop: StopRun | None = None
        if self.horizon == INF and self.max_events is None and max_wall is None:
            self._refuse_endless_loop()
        if max_wall is None:
            build(self, registries, trace_path, trace_digest)
        else:
            self._build_bounded(registries, trace_path, trace_digest)

    def _build_bounded(self, registries, trace_path, trace_digest) -> None:
        """``build`` under ``--max-wall``: a third party's factory that does not return by the bound (one that
        loops, or a slow one) is stopped there by the alarm that stops a plugin's code in the run
        (:class:`_wall_in_plugins`), and is the plugin's failure (:class:`WallAtSetUp`, raised from where its
        code was, so the failure names the plugin, its function and line: ``failed in Spin.__init__ during the
        run: WallAtSetUp: it did not return within --max-wall 0.5, …``). No partial report can be made of a
        simulation half built. A factory that looped hung the run, the alarm being set only once the events
        ran; one that took a second was noted as stopped within the first event, in a session not begun."""
        self.plugin_manager = getattr(registries, "pm", None)
        try:
            with _wall_in_plugins(self):
                build(self, registries, trace_path, trace_digest)
        except StopRun as e:
            if e.for_other(self) or e.reason != "max-wall":
                raise
            raise WallAtSetUp(f"it did not return within --max-wall {show(self.max_wall)} while the simulation "
                              f"was built (its factory's code), so the run never began").with_traceback(
                                  e.__traceback__) from None

    def _refuse_endless_loop(self) -> None:
        """Refuse a run of no horizon and no bound whose every session stays in a ``loop`` with no way out
        (serq_sim.endless): it never ended, and ran until the process was killed. Said at the loop."""
        from .endless import endless_loop, endless_message, starts_sessions

        program = self.program
        if not starts_sessions(program, self.arr_limit):
            return
        loop = endless_loop(program)
        if loop is not None:
            raise SimError(format_error(loop.span, None, None, endless_message(self.setting_from, self.arr_limit),
                                        self.source))

    def setup_watch(self, what: str):
        """The check of ``--max-wall`` while the set-up does ``what`` (``reading the trace F``), called with the
        bytes done so far (trace.load_trace's ``watch``): past the bound it raises the run's ``StopRun``, which
        the set-up keeps (:attr:`setup_stop`) and :meth:`run` reports, partial, nothing simulated. A trace of a
        million rows took 8 s to read under ``--max-wall 1``."""
        mw, t0 = self.max_wall, self.t_wall0
        clock = _time.monotonic

        def watch(done: int) -> None:
            w = clock()
            if w - t0 >= mw:
                raise StopRun("max-wall", f"stopped after {w - t0:.3g} s of wall time (--max-wall {show(mw)}) at "
                                          f"set-up, {what} ({done} bytes read), before the run began", owner=self)

        return watch

    # ----------------------------------------------------------------------------------- errors
    def error(self, msg: str, sid: int | None = None, s: Session | None = None, span=None) -> SimError:
        if span is None and sid is not None:
            span = self.spans[sid]
        s = s if s is not None else self.cur
        if s is None:
            return session_error(self, span, self.now, None, None, msg)
        return session_error(self, span, self.now, s.serial, s.trace, msg)

    def spin_error(self, s: Session, sid: int, weight: int = 1, size: int = 0) -> None:
        raise self.error(spin_message(self.now, weight, size), sid, s)

    def draw_fail(self, msg: str, sid: int, s, _t: float) -> None:
        """A draw whose computed parameters are outside its distribution's domain (compile.Compiler.expr)."""
        raise self.error(msg, sid, s)

    def redo_error(self, s: Session, sid: int) -> None:
        raise self.error(REDO_MESSAGE, sid, s)

    def transfer_error(self, s: Session, pool, sid: int) -> None:
        """A transfer whose ``from`` and ``to`` came out the same member ``pool`` (computed indexes equal): the
        linker's words for constant ones (serq_ir.rules.transfer_itself_message), at the transfer."""
        from .report import member_label

        name = member_label(pool)
        raise self.error(transfer_itself_message(name, name), sid, s)

    def guard_error(self, s: Session, g: float, sid: int) -> None:
        raise self.error(guard_message(g), sid, s)

    def pool_at(self, base: int, size: int, idx: float, sid: int, s=None) -> Pool:
        """The member ``idx`` of a pool family (a whole number in range, as the linker requires of a
        constant index), else the run-time error in the rule's words (serq_ir.rules.member_problem)."""
        if 0.0 <= idx < size:
            i = int(idx)
            if i == idx:
                return self.pools[base + i]
        raise self.error(member_problem("pool", idx, size, self.pools[base].name), sid, s)

    def stage_at(self, base: int, size: int, idx: float, sid: int, s=None):
        """The member ``idx`` of a stage family, as :meth:`pool_at`."""
        if 0.0 <= idx < size:
            i = int(idx)
            if i == idx:
                return self.stages[base + i]
        raise self.error(member_problem("stage", idx, size, self.stages[base].name), sid, s)

    # ----------------------------------------------------------------------------------- events
    def at(self, t: float, cb, arg=None) -> None:
        heapq.heappush(self.heap, (t, next(self._seq), cb, arg))

    # ----------------------------------------------------------------------------------- running
    def run(self):
        """Run to the end and return the :class:`serq_sim.report.Report`."""
        from .report import build_report

        self.show_progress = self.progress and sys.stderr is not None and sys.stderr.isatty()
        if self.show_progress:
            self.pulse = self.pulse_n
        runs = runs_here()
        nested = bool(runs)
        runs.append(self)
        try:
            with _wall_in_plugins(self):
                if self.setup_stop is not None:  # stopped at set-up: nothing to simulate
                    raise self.setup_stop
                try:
                    self._start()
                except BaseException:
                    # stopped before the event loop (Ctrl-C, SIGTERM, a bound, an error): the events are the
                    # popped ones (none) and the rounds of the stretches planned in _start (a batch's first
                    # iteration), which the loop's way out adds otherwise: the report said events 0 where the
                    # per-job planning counts them. The one place that writes them back before the loop.
                    self.events += self.virtual_events
                    raise
                self._loop()
        except (KeyboardInterrupt, StopRun) as e:
            if e.for_other(self) if isinstance(e, StopRun) else nested:
                raise  # a run whose plugin's code called this one: its stop, or Ctrl-C, is that run's
            self.stopped(e)
        except MemoryError:
            # a sample may have been cut short between its columns: keep the whole ones
            for cols in [(o.values, o.times, o.sessions, o.turns) for o in self.obs] + self.gauge_points:
                whole = min(map(len, cols))
                for col in cols:
                    del col[whole:]
            self.stopped(self.out_of_memory())
        finally:
            runs.pop()
        self.run_over()
        with _signals_deferred():
            self._finish()
            return build_report(self)

    def run_over(self) -> None:
        """The run is over (both tiers, before ``_finish``): what the end reads off the state (a waiting
        session's demand may read ``budget_left`` over every resident, counted down as work) must not stop
        it again (--max-wall's countdown read the clock there and raised out of the report's making: a
        traceback); and the observables that walk a stage's jobs (``budget_left``, ``work``), read for each
        waiting session's demand there, are the same for all of them: read once a stage (thousands
        waiting, each reading them over thousands of residents, took seconds after a run stopped)."""
        self.max_wall = None
        self.show_progress = False
        self.pulse = NO_PULSE
        self.samples_left = NO_SAMPLES_LEFT
        self.end_memo = {}

    def stop(self, reason: str, message: str) -> None:
        """End the run now with the partial report (see :class:`StopRun`); both tiers."""
        raise StopRun(reason, message)

    def stopped(self, e: BaseException, waits=None) -> None:
        """The run was stopped early by ``e`` (Ctrl-C, SIGTERM or :class:`StopRun`): its report is partial.
        ``waits``: the fast tier's waiting sessions by statement (``fast._waits``), which a stop
        by the memory guard names as the general engine's own (:meth:`_holders`)."""
        self.interrupted = True
        self._settle_appends()
        self.end = self.now
        if isinstance(e, StopRun):
            self.partial, self.partial_note = e.reason, e.message
            if e.held is not None:
                self.partial_note = self._holders(e.held, e.message, waits)
        else:
            self.partial = getattr(e, "reason", "interrupted")
            from .report import SIGNAL_NOTES

            self.partial_note = SIGNAL_NOTES.get(self.partial, "interrupted")
            # the statement and the session it came in, where its traceback says (a session's code), as
            # --max-wall's note names them within an event: the note named the time alone
            compiler = getattr(self, "compiler", None)
            at = statement_at(compiler, e.__traceback__) if compiler is not None else None
            if at is not None:
                self.partial_note += _where(at[0], at[1])
            if self.plugin_manager is not None:
                from serq.plugins import plugin_at

                where = plugin_at(self.plugin_manager, e)
                if where is not None:  # a plugin's code that does not return: named
                    self.partial_note += f" (in {where})"
            _signal_caught()

    def _holders(self, held: Held, message: str, waits) -> str:
        """The note of a run stopped for what it holds (``--max-samples``, the memory guard, out of memory:
        ``held``, the parts of its note), naming what holds most of what it counts: the observe (gauge,
        record) holding most samples, and for the memory guard the statement most waiting sessions wait at
        (a note of 241 158 live sessions said not where they were). Whatever this needs memory for, a
        MemoryError leaves the note as it was, ``message`` (the note naming neither)."""
        try:
            from . import holders

            by = holders.samples_note(self)
            at = ""
            if held.kind == GUARD:
                at = holders.sessions_note(holders.count_general(self) if waits is None else waits)
            return held.note(by, at)
        except MemoryError:  # (the note as it was: what names the holders needs memory too)
            return message

    def _settle_appends(self) -> None:
        """Drop what a stop left half-appended. A sample of an observe is four appends (value, time, session,
        turn), a record's row one a column, a gauge's change point two, a run of equal output-token gaps two
        (step/tokens.py): a signal's ``KeyboardInterrupt`` lands at any bytecode boundary, between two of them,
        and the partial report read columns of unequal lengths (an ``IndexError`` out of the ITL's statistics
        in place of the report; a table whose last row lacked some columns). Each set of columns is cut back
        to its shortest: the sample, row or run that was being added when the stop came is not in the report."""
        groups = [(o.values, o.times, o.sessions, o.turns) for o in self.obs]
        groups += [(t.sessions, t.turns, t.times, *t.values) for t in getattr(self, "record_tables", ())]
        groups += [tuple(pair) for pair in getattr(self, "gauge_points", ())]
        gaps = getattr(self, "token_gaps", None)
        if gaps is not None:
            groups.append((gaps.values, gaps.weights))
        for columns in groups:
            n = min(map(len, columns), default=0)
            for column in columns:
                if len(column) > n:
                    del column[n:]

    def samples_held(self) -> int:
        """The samples the run holds: every observe's, every gauge's change points, a sample a column of
        every record's row and the step stages' runs of equal output-token gaps (step/tokens.py). Rows and
        gaps were not counted: a `record` in a loop, or a step engine whose gaps all differ (a cost that
        reads `now`), held them until memory ran out, past any --max-samples."""
        gaps = getattr(self, "token_gaps", None)
        return (sum(len(o.values) for o in self.obs) + sum(len(ts) for ts, _ in self.gauge_points)
                + sum(len(t) * len(t.columns) for t in self.record_tables)
                + (len(gaps.values) if gaps is not None else 0))

    def samples_out(self) -> None:
        """The countdown of the samples a session's statements add (:attr:`samples_left`) ran out: count the
        samples held (gauges' and output-token gaps' too, which the ticks count), stop the run when they are
        :attr:`max_samples` or more, else count down again from what is left. The general engine's; the fast
        tier checks where its buffers grow."""
        held = self.samples_held()
        if held >= self.max_samples:
            self.too_many_samples(held)
        self.samples_left = self.max_samples - held

    def too_many_samples(self, held: int) -> None:
        """Stop the run: it holds ``held`` samples, more than :attr:`max_samples`."""
        raise StopRun.holding("max-samples", Held(MAX_SAMPLES, held, bound=self.max_samples))

    def out_of_memory(self) -> StopRun:
        """What stops a run that ran out of memory (a ``MemoryError``): its partial report."""
        return StopRun.holding("memory", Held(OUT_OF_MEMORY, self.samples_held()))

    def tick(self, events: int) -> int:
        """Every few thousand events of the event loop (both tiers, at the same events: after an event and
        its settle, ``events`` counted as the report counts them): the no-progress guard, the user's
        bounds, the progress bar. Returns the event count of the next tick.

        The checks whose outcome is in the report (the samples held, the no-progress guard) and the memory
        guard are made every :data:`TICK` events the loop pops (a step stage's quiet rounds, counted in
        ``events`` a stretch at a time, are not: the loop ticks by the events it pops), whatever else asks
        for ticks: ``--max-wall`` reads the clock every 1 000 events, and the checks made there too stopped
        a run at ``--max-samples`` at another event, with another report, than without it (a bound that
        never fired changed the figures)."""
        popped = events - self.virtual_events
        if popped >= self.next_check:
            self.next_check = popped + TICK
            if self.samples_at_ticks:
                held = self.samples_held()
                if held >= self.max_samples:
                    self.too_many_samples(held)
            now = self.now
            t0 = self.stall_t
            if now == t0 or now - t0 <= instant_span(t0):  # (NaN: False)
                if events - self.stall_ev > STALL_EVENTS + STALL_PER_SESSION * self.stall_live:
                    self.stall_error(events - self.stall_ev)
                if self.open_arrivals - self.stall_arr > STALL_ARRIVALS:
                    self.stall_error(self.open_arrivals - self.stall_arr, "arrivals", STALL_ARRIVALS)
            else:
                self.stall_t = now
                self.stall_ev = events
                self.stall_arr = self.open_arrivals
                # the sessions live when the instant began, not those its own events spawned since (a clock
                # stuck on an arrival gap below its precision spawns a session an event: counting them, the
                # allowance grew 1 000 events a session and the guard never came); at 0 the sessions a batch
                # or closed workload spawned before the first event (no event spawns them)
                self.stall_live = self.live_now()
            guard = self.mem_guard
            if guard is not None:
                self.memory_check(guard)
        me = self.max_events
        if me is not None and events >= me:
            self.stop_at_events(events)
        mw = self.max_wall
        if mw is not None or self.show_progress:
            w = _time.monotonic()
            if mw is not None and w - self.t_wall0 >= mw:
                self.stop("max-wall", f"stopped after {w - self.t_wall0:.3g} s of wall time (--max-wall {show(mw)})")
            if self.show_progress and w - self.t_shown > 0.25:
                self.t_shown = w
                self._show_progress()
        due = self.next_check + self.virtual_events  # (as the loop counts: it takes the virtual events off)
        nxt = min(events + 1000, due) if mw is not None else due
        if me is None:
            return nxt
        if self.step_stages:
            # a step stage's stretch of quiet rounds counts many events in one planning (virtual events,
            # which the loop's next tick, counted in events popped, does not see): under a bound the loop
            # ticks after every event, and a stretch stops at the bound itself (LazyDecoding.stop_at_bound)
            return events + 1
        return min(nxt, me)

    def pulse_out(self, what: str, sid: int | None = None, serial: int | None = None, now: float | None = None,
                  span=None) -> int:
        """The work counted down inside one event ran out (:attr:`pulse`, :data:`PULSE` units: sessions
        resumed, loop passes at one instant, keys evaluated, entries evicted, …): read the clock, for
        ``--max-wall`` and the progress bar, and set the countdown again (returned too, for the fast tier's
        generated code, which counts in a local). The ticks read the clock every 1 000 events, but one event
        can run for minutes (a ``queue by`` key read for each of thousands of waiting sessions at every
        admission of a chain at one instant, a loop of no time in each of many sessions, a batch's sessions
        run one after another): the run stops within it, its note naming ``what`` it was doing, at the
        statement of span ``sid`` (a spans index; or ``span`` itself) of session ``serial`` when known.
        ``now``: the fast tier's clock (its own local). Costs nothing more per unit of work than the countdown's decrement."""
        if now is not None:
            self.now = now
        mw = self.max_wall
        if mw is None and not self.show_progress:
            self.pulse = NO_PULSE
            return NO_PULSE
        w = _time.monotonic()
        # the next countdown: halved while one takes longer than PULSE_SECONDS (units that are slow), doubled
        # back up to PULSE while one takes less
        n = self.pulse_n
        if w - self.pulse_t > PULSE_SECONDS:
            n = n >> 1 or 1
        elif n < PULSE:
            n <<= 1
        self.pulse_n = n
        self.pulse_t = w
        self.pulse = n
        if mw is not None and w - self.t_wall0 >= mw:
            where = _where(self.spans[sid] if sid is not None else span, serial)
            self.stop("max-wall", f"stopped after {w - self.t_wall0:.3g} s of wall time (--max-wall {show(mw)}) "
                                  f"within one event, {what}{where}")
        if self.show_progress and w - self.t_shown > 0.25:
            self.t_shown = w
            self._show_progress()
        return n

    def stop_at_events(self, events: int) -> None:
        """Stop the run: it has counted ``events`` events, :attr:`max_events` (``--max-events``)."""
        self.stop("max-events", f"stopped after {events} events (--max-events {self.max_events})")

    def memory_check(self, guard) -> None:
        """Stop the run (its partial report, reason ``memory``) when the memory guard says so."""
        why = guard.over()
        if why is not None:
            raise StopRun.holding("memory", Held(GUARD, self.samples_held(), why=why, live=self.live))

    def spawn_tick(self, spawned: int) -> None:
        """Every 4096 sessions a batch or closed workload spawns at the start (both tiers), before the event
        loop and its ticks run: the user's wall-clock bound and the progress bar (a batch of 10⁸ takes
        minutes before time moves). Spawning is not an event: ``--max-events`` does not count it."""
        if self.mem_guard is not None:
            self.memory_check(self.mem_guard)
        mw = self.max_wall
        if mw is not None or self.show_progress:
            w = _time.monotonic()
            if mw is not None and w - self.t_wall0 >= mw:
                self.stop("max-wall", f"stopped after {w - self.t_wall0:.3g} s of wall time (--max-wall {show(mw)}), "
                                      f"spawning the batch ({spawned} of {self.arrive.n} sessions)")
            if self.show_progress and w - self.t_shown > 0.25:
                self.t_shown = w
                self._show_progress()

    def live_now(self) -> int:
        """The sessions live when this instant began (the no-progress guards' allowance, see tick)."""
        now = self.now
        return self.live0 if now == self.live_t and now > 0 else self.live

    def stall_cap(self) -> int:
        """What the no-progress guards allow at this instant: STALL_EVENTS + STALL_PER_SESSION a session
        live when it began."""
        return STALL_EVENTS + STALL_PER_SESSION * self.live_now()

    def dust_error(self, stage, cap: int, only_preempted: bool = False) -> None:
        """The no-progress guard of a step stage whose iterations give less than a token that changes no job's
        work (``StepStage._dust``): more than ``cap`` of them in a row, the run as it was but for the clock,
        and no other event due. A run-time error naming the stage and its residents' runs, positioned at the
        first; ``only_preempted``: the iterations served no job, they only preempted."""
        if only_preempted:
            msg = (f"no progress: {cap} iterations of stage {stage.name} in a row only preempted (they served no "
                   "token: each admitted a session again and preempted it at its growth), and nothing else is due: "
                   "every iteration will be this one again (a hold on the engine's memory that cannot grow as its "
                   "body needs beside what the other holders keep preempts itself for ever)")
        else:
            msg = (f"no progress: {cap} iterations of stage {stage.name} in a row gave its jobs "
                   f"{stage.iter_tokens:g} tokens, too few to change the work any of them has left (below its "
                   "floating-point precision), and nothing else happened: no iteration would ever end one (its "
                   "budget or chunk is too small for the work)")
        self.residents_error(stage, msg)

    def event_due(self) -> bool:
        """Whether an event that will happen is due: one on the heap within the horizon (not at inf, which never
        happens) that is not one doing nothing (:func:`dead_event`). A no-progress guard of a step stage reads
        it before it judges the run to be the same for ever (``StepStage._dust``)."""
        horizon = self.horizon
        return any(t <= horizon and t != INF and not dead_event(cb, arg) for t, _seq, cb, arg in self.heap)

    def residents_error(self, stage, msg: str) -> None:
        """The run-time error ``msg`` of a step stage's no-progress guard, naming its residents' runs (those of
        the lowest serials), positioned at the first (the stage's own statement when none is a session's)."""
        runs = self._runs_of(j for j in stage.residents if isinstance(j.owner, Session))
        if not runs:
            raise SimError(format_error(stage.node.span, self.now, None, msg, self.source))
        serial, span, replay = runs[0]
        raise session_error(self, span, self.now, serial, replay, f"{msg}: its residents are {_runs_listed(runs)}")

    def still_error(self, stage, cap: int) -> None:
        """The no-progress guard of a step stage whose iterations take no time (``StepStage._no_time``):
        they served more than ``cap`` jobs at this instant. A run-time error naming the stage and its
        residents' runs (those of the lowest serials), positioned at the first."""
        now = self.now
        t0 = stage.still_t  # the instant's start: the clock stuck at it, or moving within ZENO of it (tick)
        if now == t0:
            msg = (f"no progress: the iterations of stage {stage.name} take no time (its cost is 0, or below the "
                   f"clock's precision at this time) and served more than {cap} jobs at one instant without "
                   "simulated time passing")
        else:
            msg = (f"no progress: the iterations of stage {stage.name} take next to no time (its cost is far below "
                   f"any time scale at this time) and served more than {cap} jobs in {fmt_time(now - t0)} s of "
                   f"simulated time since t={fmt_time(t0)}")
        self.residents_error(stage, msg)

    def _runs_of(self, jobs) -> list[tuple[int, Any, Any]]:
        """The runs of ``jobs`` (sessions' jobs) as a no-progress error names them: ``(serial, span, replay)``
        (``replay``: the session's trace state, for the note naming its row), in their sessions' serial order."""
        return sorted(((j.owner.serial, self.spans[j.span], j.owner.trace) for j in jobs), key=lambda r: r[0])

    def stall_error(self, n: int, counted: str = "events", cap: int | None = None) -> None:
        """The no-progress guard tripped: ``n`` events (or open arrivals, ``counted``) at this instant, more than
        ``cap`` (:data:`STALL_EVENTS`). A run-time error naming what the events due now are for (the runs of the
        jobs they complete, their sessions), else the arrivals."""
        if cap is None:
            cap = STALL_EVENTS
        now = self.now
        t0 = self.stall_t
        # the instant: the clock stuck at it, or moving in steps within ZENO of its start (tick)
        upto = now if now == t0 else t0 + instant_span(t0)
        jobs: dict[Job, None] = {}  # in the order met, each once (a list's `in` made it quadratic)
        other = []
        for t, _seq, cb, arg in sorted(self.heap, key=lambda e: (e[0], e[1])):
            if t > upto:
                break
            owner = getattr(cb, "__self__", None)
            if owner is self:  # the simulation's own event (an arrival, the warm-up): no stage's; its ``heap``
                # holds every job's completion, which _jobs_of read as this event's jobs
                other.append(getattr(cb, "__name__", "event").lstrip("_").replace("_", " "))
                continue
            found = [arg] if isinstance(arg, Job) else _jobs_of(owner)
            if found:
                jobs.update(dict.fromkeys(found))
        runs = self._runs_of(j for j in jobs if isinstance(j.owner, Session))
        if self.due_now is not None:  # the fast tier's events, outside self.heap: its runs as (serial, span, replay)
            named, located = self.due_now(upto)
            other += named
            runs = sorted(runs + located, key=lambda r: r[0])
        if now == t0:
            msg = (f"no progress: more than {cap} {counted} at one instant without simulated time passing "
                   "(the clock cannot move past it")
        else:
            msg = (f"no progress: more than {cap} {counted} in {fmt_time(now - t0)} s of simulated time since "
                   f"t={fmt_time(t0)} (steps far below any time scale: at that pace the run would not reach its end")
        if runs:
            serial, span, replay = runs[0]
            again = ("put off to this same instant again and again" if now == t0 else
                     "due again and again within that span")
            raise session_error(self, span, now, serial, replay, f"{msg}): the events due now are those of "
                                f"{_runs_listed(runs)}, {again}")
        what = f"the events due now: {', '.join(dict.fromkeys(other))}" if other else "no event names a statement"
        # arrivals due again and again (a renewal gap below the clock's precision): the workload's `arrive`
        span = self.arrive.span if "arrive poisson" in other or "arrive renewal" in other else None
        raise SimError(format_error(span, now, None, f"{msg}); {what}", self.source))

    def settle_stall_error(self) -> None:
        """The no-progress guard of the settle: more than STALL_EVENTS settles asked for at one instant (a
        stage kind that marks itself again in every :meth:`~serq_sim.stages.StageKind.settle`)."""
        dirty = self.dirty
        names: dict[str, None] = {}
        for x in dirty[-100:]:
            node = getattr(x, "node", None)
            if isinstance(node, N.Stage):
                kind = node.kind
                kind = f"@{kind.name}" if isinstance(kind, N.Extension) else type(kind).__name__.lower()
                names[f"stage {printable(node.name)} ({kind})"] = None
            else:
                names[type(x).__name__] = None
        what = ", ".join(list(names)[:5])
        marked = dirty[-100:]
        dirty.clear()
        msg = (f"no progress: more than {STALL_EVENTS} settles at one instant without simulated time passing (a "
               f"stage kind that marks itself again in every settle: {what})")
        if getattr(self, "plugin_jobs", None) is not None:  # a third party's kind among them: its plugin named
            from .guards import marked_for_ever

            failure = marked_for_ever(self, marked, msg)
            if failure is not None:
                raise failure
        raise SimError(format_error(None, self.now, None, msg, self.source))

    def _start(self) -> None:
        if self.warmup > 0:
            self.at(self.warmup, self._end_warmup)
        _workload.start_arrivals(self)
        self.settle()
        if self.check:  # the state the first settle leaves (a batch's sessions may run to their end in it)
            _check.check_invariants(self)

    def _loop(self) -> None:
        heap = self.heap
        pop = heapq.heappop
        settle = self.settle
        # without a horizon the run ends before an event at inf as it ends before one past a horizon: such an
        # event never happens (a job of infinite work never ends; a clock past the largest double)
        horizon = self.horizon if self.horizon != INF else MAX_TIME
        # without a horizon the run ends when it drains: the timers of leases ended before their time, all that
        # may be left then, are no events to wait for (their time would be the run's end)
        forever = self.horizon == INF
        limit = self.arr_limit
        check = self.check
        next_tick = self.tick(self.events)
        ready = self.ready
        # the settle's later phases matter only with pools, step stages, marked stages or gauges
        simple = not (self.any_pools or self.step_stages or self.gauges or self.flow_network)
        dirty = self.dirty
        # the event count is kept in a local and stored back on every way out (progress reads it too)
        events = self.events
        try:
            while heap:
                if heap[0][0] > horizon or forever and len(heap) <= self.dead_timers and self.only_dead_left():
                    break
                t, _, cb, arg = pop(heap)
                self.now = t
                events += 1
                self.events = events  # (the events popped so far: a stretch of quiet rounds reads them)
                dead = self.dead_timers
                cb(arg)
                if simple and not dirty:
                    # the settle of a program without pools, step stages or gauges: run the ready sessions
                    if ready:
                        self.drain_ready()
                    if dirty:
                        settle()
                elif self.dead_timers < dead or self.quiet:
                    # an event that did nothing (dead_event: a completion a preemption or a ps stage's
                    # reschedule left behind, the timer of a lease that ended), or only for the report (the
                    # warm-up's end): no pool is retried
                    self.quiet = False
                    settle(False)
                else:
                    settle()
                if check:
                    _check.check_invariants(self)
                if self.live == 0 and limit is not None and self.open_arrivals >= limit:
                    self.end = t
                    return
                if events >= next_tick:
                    next_tick = self.tick(events + self.virtual_events) - self.virtual_events
        finally:
            self.events = events + self.virtual_events
            # an event at inf never happens, under a horizon or without one: the heap's least is its first
            # (nor is the timer of a lease that ended before its time)
            self.heap_left = bool(heap) and heap[0][0] != INF and not (
                len(heap) <= self.dead_timers and self.only_dead_left())
        self.end_at_horizon()

    def only_dead_left(self) -> bool:
        """Whether every event left in the heap is one :attr:`dead_timers` counts and that will do nothing (the
        timer of a lease that ended, the completion of a job or a flow that left its stage): read when the
        count says so, and checked event by event (:func:`dead_event`), so a stage kind that counts a dead
        event and does not take it off again (a plugin's kind derived from a built-in one, with a completion
        of its own) ends no run early; the count is then set to what the heap holds."""
        dead = sum(1 for _t, _seq, cb, arg in self.heap if dead_event(cb, arg))
        self.dead_timers = dead
        return dead == len(self.heap)

    def setting_error(self, names: tuple[str, ...], t: float | None, message: str) -> SimError:
        """The error a run setting causes (``names``: the settings it is about, the one it concerns first),
        pointing at where they were given (:func:`serq_sim.errors.setting_error`, the one rule)."""
        values = {"horizon": self.horizon, "warmup": self.warmup, "seed": self.seed, "arrivals": self.arr_limit}
        return setting_error(self.setting_from, values, names, t, message, self.source)

    def end_at_horizon(self) -> None:
        """The run reached the horizon or ran out of events (both tiers): it ends at the horizon, or now
        when there is none; under ``arrivals N`` that is an error saying what was not reached."""
        horizon = self.horizon
        limit = self.arr_limit
        if limit is not None:
            when = horizon if horizon != INF else self.now
            self.now = when
            # without a horizon the run stops when no event is left, which is no horizon to name
            by, at = ("by the horizon", "at the horizon") if horizon != INF else ("when no event is left",) * 2
            if self.open_arrivals < limit:
                n = self.open_arrivals
                raise self.setting_error(("arrivals", "horizon"), when, f"only {n} {number_of(n, 'arrival')} {by}")
            # and which of them wait for ever, and where: the report's warning, which this error replaces (a
            # deadlock at a pool the run could not drain was told as "N session(s) still live" alone)
            live = f"{self.live} {number_of(self.live, 'session')} still live {at} (not drained)"
            forever = self.forever()
            if forever is not None:
                n, why, parts = forever
                who = ("it waits" if n == 1 else "they wait") if n == self.live else (
                    f"{n} of them {number_of(n, 'waits', 'wait')}")
                live += f": {who} for ever ({why}): {'; '.join(parts)}"
            live += self._livelocks()
            raise self.setting_error(("arrivals", "horizon"), when, live)
        self.end = horizon if horizon != INF else self.now

    def _livelocks(self) -> str:
        """What a run under ``arrivals N`` that did not drain adds for the sessions that preempted themselves
        again and again at one position, their hold needing more than the pool's capacity (``Pool.livelocked``,
        pools.growth.preempt_outgrown): language.txt §3's livelock, which only the horizon ends, and which the
        report's stuck warning would have named (the error replaces the report). Nothing when there are none."""
        from .notes import livelocked
        from .report import member_label

        out = ""
        for pool in self.pools:
            k = len(pool.livelocked)
            if k:
                out += (f"; {livelocked(member_label(pool), k, show(pool.livelock_units), show(pool.cap))}: a "
                        "livelock that only the horizon ends; a larger pool, a cut before the growth or a reserve of "
                        "what the hold will need, which rejects it, ends it")
        return out

    def progress_at(self, w: float, now: float, rounds: int) -> None:
        """The progress bar inside a stretch of quiet rounds (one event that can run for minutes), read at wall
        time ``w``: its clock at ``now``, ``rounds`` of its rounds taken so far counted as the report counts
        them (virtual events), drawn as a tick draws it (at most every 0.25 s)."""
        if w - self.t_shown > 0.25:
            self.t_shown = w
            self._show_progress(now, rounds)

    def _show_progress(self, now: float | None = None, rounds: int = 0) -> None:
        """Draw the progress bar: the clock (``now``, or the run's), and the events counted as the report counts
        them (the events popped, those of the stretches of quiet rounds taken, and ``rounds`` of one being taken;
        it is drawn only while the event loop runs, where :attr:`events` counts the events popped)."""
        if now is None:
            now = self.now
        if self.arr_limit is not None:
            frac = self.open_arrivals / self.arr_limit
        elif self.horizon != INF and self.horizon > 0:
            frac = now / self.horizon
        else:
            frac = 0.0
        frac = min(max(frac, 0.0), 1.0)
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r[{bar:<30}] {frac * 100:5.1f}%  t={now:.6g}  events={self.events + self.virtual_events + rounds}")
        sys.stderr.flush()
        self._progress_shown = True

    def _finish(self) -> None:
        if getattr(self, "_progress_shown", False):
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()
        end = self.end
        if self.limit_drained_early(end):
            if self.arr_limit is None:
                raise self.setting_error(("warmup", "horizon"), end, f"no event is left after the warmup "
                                         f"{show(self.warmup)}, so there is nothing to measure (without a horizon a"
                                         " run ends when no event is left)")
            raise self.setting_error(("arrivals", "warmup"), end, f"drained at t={show(end)}, at or before the warmup "
                                     f"{show(self.warmup)} (nothing to measure)")
        #: the clock at the run's last event, before it is set to its end (a run drained at t=58 under a horizon of
        #: 1e300 measured no time past 58: notes.coarse_clock)
        self.clock_reached = min(self.now, end)
        self.now = end
        for pool in self.pools:
            pool.acc()
        for st in self.stages:
            st.acc()
        self._acc_live()
        self.backlog.cut(end, self.live, self.live_t, self.live_integral(), self.arrivals)
        if self.memory_stopped():
            return
        # over_cap: sessions still waiting whose demand exceeds the capacity
        for pool in self.pools:
            for s in list(pool.front) + list(pool.queue):
                try:
                    demand = _admission.demand_of(self, s, s.pending)
                except SimError:
                    continue
                for q, _u, need in demand:
                    if need > q.cap + EPS:
                        q.over_cap += 1

    def memory_stopped(self) -> bool:
        """Whether the run stopped for memory (the guard, or a ``MemoryError``): what the end of a run
        reads off every waiting session (``over_cap``, :meth:`waiting_forever`) is not taken then (it
        would need memory the run no longer has; the fast tier does not rebuild those sessions)."""
        return self.interrupted and getattr(self, "partial", None) == "memory"

    def waiting_forever(self) -> str | None:
        """The warning for sessions that, at the end of the run, wait for ever (no event can wake them):
        every live session when no event is left (the run ran out of them, not stopped early); else the
        sessions queued at a pool or waiting to grow whose pools are held only by such sessions (a
        deadlock, or a demand beyond the capacity). None for a run stopped for memory."""
        forever = self.forever()
        if forever is None:
            return None
        from .notes import warning

        n, why, parts = forever
        return warning("waits-for-ever", f"{n} {number_of(n, 'session waits', 'sessions wait')} for ever at the end "
                       f"of the run ({why}): "
                       f"{'; '.join(parts)}")

    def forever(self) -> tuple[int, str, list[str]] | None:
        """The sessions of :meth:`waiting_forever`: how many, why, and where they wait (``1 growing at
        D.kv[0] (session 95)``, …); the one account the report's warning and a drained run's error give."""
        if self.memory_stopped():
            return None
        from .guards import no_victim
        from .report import member_label

        waits: dict[Session, list[Pool]] = {}
        where: dict[Session, str] = {}
        held: set[Session] = set()  # those a stage holds, whose run statements are named
        via: dict[Session, Any] = {}  # a session queued at a pool a step stage admits to: that stage
        for pool in self.pools:
            label = member_label(pool)
            admits = getattr(pool, "via", None)
            for q in (pool.front, pool.queue):
                for x in q:
                    if x.status == QUEUED and x.pending is not None and x not in waits:
                        waits[x] = list(x.pending.pools)
                        where[x] = f"queued at {label}"
                        if admits is not None:
                            via[x] = admits
            for x in pool.growers:
                if x.status == GROWING and x not in waits:
                    waits[x] = [pool]
                    where[x] = f"growing at {label}{no_victim(self, pool)}"
        # "no event is left" is the verdict of a run that ran out of events; a run stopped early (a bound,
        # a signal) may have stopped between an instant's events or inside its settle, with sessions
        # ready to run (a batch spawned and not yet run) and no event scheduled for them: only the
        # deadlock below is a wait for ever then
        drained = not self.heap_left and not self.interrupted
        if drained:
            if self.live <= 0:
                return None
            stuck = set(waits)
            why = "no event is left that could wake them"
        else:
            # a pool may free units when a holder outside the set (or a lease's end) releases; a session
            # waiting for such a pool may be woken, and then so may its own holds: to the fixed point
            # a holder whose run at a stage has infinite work never releases (the run never completes) unless
            # a preemption can take a pool from it: no pool it holds has a preemption rule
            stuck = set(waits)
            endless = {sl.owner for p in self.pools if _never_preempts(p) for sl in p.holders
                       if not sl.lease and _endless(sl.owner)}
            # a session queued at a fifo stage behind runs of infinite work is never served: it waits for
            # ever, and never releases its holds either
            queued, runs = _never_served(self)
            # a step stage that can never start an iteration, whatever arrives (step/stall.py), never
            # completes its residents, which never release their holds either
            stalled, why_stalled = _never_planned(self)
            # so does one whose iteration under way never ends (of infinite cost)
            for st in _endless_iterations(self):
                label = member_label(st)
                why_stalled[label] = "cost"
                stalled.update((j.owner, label) for j in st.residents if j.owner is not None)
            # a session queued at a pool a step stage admits to (`admit via`) whose hold has room now waits for
            # the stage's admission, not for a release: it waits for ever only when the stage never admits
            unadmitted = _unadmitted(via)
            # (one that needs more than a pool's capacity, amounts that read the clock escaping the join's
            # rejection, never fits, whatever frees: beyond)
            memo: dict[int, list] = {}  # (which amounts of each hold are read: _least_needs)
            admitted, beyond = set(), set()
            for x in via:
                if x not in unadmitted:
                    room, over = _room(self, x, memo)
                    if room:
                        admitted.add(x)
                    elif over:
                        beyond.add(x)
            # a session queued at a pool no stage admits whose demand reads state (`hold kv (used(other) / 2)`)
            # and has room for what it needs at least: every later attempt reads that demand again (pool-
            # reference.txt: "State-dependent demand waits for admission and is reported as over_cap if it
            # still exceeds capacity at the end of the run"), so it waits for ever only when nothing it reads
            # can change that way: no pool it reads frees (None: it reads a stage, the clock or a draw, which
            # change while events are left). It was told to wait for ever when the pool it waits at had no
            # holder, while a holder of the pool its demand read would release it
            # So is one whose demand cannot change and has room now, in a queue whose `queue by` keys read state
            # (`waited`, the clock, an observable): the head they choose can change while events are left, so
            # one blocked behind a head that waits for ever may yet be chosen (it was told to wait for ever with
            # it). (A demand that reads state has room only as far as what it needs at least is known: it is
            # woken by what it reads, not by the keys.)
            reading: dict[Session, set | None] = {}
            for x in waits:
                if x in via or not where[x].startswith("queued at") or x.qpool is None:
                    continue
                pure = x.pending.info.pure
                if pure and not _keys_move(x.qpool):
                    continue
                room, over = _room(self, x, memo)
                if room and not over:
                    reading[x] = None if pure else _demand_reads(self, x.pending.info)
            # ... unless it is queued behind a head that waits for ever (head-of-line blocking): then so does
            # it, whatever frees; to the fixed point, each pass from the start with the sessions found so
            blocked: dict[Session, str] = {}
            while True:
                stuck = set(waits) - (admitted - blocked.keys())
                freeing: set[Pool] = set()
                changed = True
                while changed:
                    changed = False
                    for p in self.pools:
                        if p not in freeing and any(sl.lease or (sl.owner not in stuck and sl.owner not in endless
                                                                 and sl.owner not in queued
                                                                 and sl.owner not in stalled)
                                                    for sl in p.holders):
                            freeing.add(p)
                            changed = True
                    for x in [x for x in stuck if x not in blocked and x not in beyond
                              and any(p in freeing for p in waits[x])]:
                        stuck.discard(x)
                        changed = True
                    if reading:
                        woken = [x for x in stuck if x in reading and x not in blocked and (
                            reading[x] is None or any(p in freeing for p in reading[x]))]
                        if woken:
                            # the head admitted, the sessions behind it in its queue are tried next: each queue
                            # read once, from its first woken session on (a queue of 100 000 read per session
                            # woken in it would take 10^10 steps)
                            stuck.difference_update(woken)
                            homes = {id(x.qpool): x.qpool for x in woken}
                            now_woken = {id(x) for x in woken}
                            for pool in homes.values():
                                after = False
                                for q in (pool.front, pool.queue):
                                    for w in q:
                                        after = after or id(w) in now_woken
                                        if after:
                                            stuck.discard(w)
                            changed = True
                behind = _behind_heads(self, via, stuck) if via else {}
                if behind.keys() <= blocked.keys():
                    break
                blocked.update(behind)
            # a session whose own run has infinite work never completes it (nor releases its holds), unless a
            # preemption can take a hold of it: it waits for ever too, named with its run's statement
            infinite = _infinite_runs(self, set(queued) | set(stalled))
            if not stuck and not queued and not stalled and not infinite:
                return None
            # (behind a stage stalled with residents, the residents' holds tell it: :func:`_why_forever`); a
            # session blocked behind a head is told so when it would wait for nothing else (room, or a pool
            # that frees), else by what it waits for itself
            behind = {x: label for x, label in blocked.items()
                      if x in admitted or any(p in freeing for p in waits[x])}
            over = {}
            for x in stuck:
                if x in waits and x not in infinite and (x.status == GROWING or where[x].startswith("queued at")):
                    why_over = _beyond_capacity(self, x, memo)
                    if why_over is not None:
                        over[x] = why_over
            # behind a head that needs more than its pool's capacity, a queue waits for ever whatever is
            # released: head-of-line blocking, told so (it was told a deadlock, with no holder of the pool)
            for pool in self.pools:
                line = [x for q in (pool.front, pool.queue) for x in q if x.status == QUEUED]
                if line and line[0] in over:
                    label = member_label(pool)
                    for x in line[1:]:
                        if x in stuck and x not in over:
                            behind.setdefault(x, label)
            why = _why_forever(stuck, waits, endless, queued, runs, stalled, why_stalled,
                               {x: unadmitted[x] for x in stuck if x in unadmitted and unadmitted[x] not in why_stalled},
                               behind, infinite, over)
            stuck.update(queued)
            where.update(queued)
            stuck.update(stalled)
            for x, label in stalled.items():
                where[x] = never_completing(label)
            stuck.update(infinite)
            where.update(infinite)
            held = set(stalled) | set(infinite)
        n = self.live if drained else len(stuck)
        if drained and n > len(stuck):
            # the others are at stages, which scheduled nothing more to complete them: serQ's own named here
            # with the run statements they wait in, a third party's below
            at_stages = _held_at_stages(self, stuck)
            stuck.update(at_stages)
            where.update(at_stages)
            held = set(at_stages)
        counts: dict[str, list[int]] = {}
        runs_at: dict[str, dict[str, None]] = {}  # the places of the runs the sessions of each stage wait in
        spans = self.spans
        for x in sorted(stuck, key=lambda x: x.serial):
            w = where[x]
            counts.setdefault(w, []).append(x.serial)
            if x in held:
                sid = x.job.span
                span = spans[sid] if 0 <= sid < len(spans) else None
                runs = runs_at.setdefault(w, {})
                if span is not None:
                    runs[place(span)] = None
        parts = []
        for w, serials in counts.items():
            parts.append(f"{len(serials)} {w} ({_shown_sessions(serials)}{runs_named(runs_at.get(w, ()))})")
        other = n - len(stuck)
        if other > 0 and drained and getattr(self, "plugin_jobs", None) is not None:
            # at a third party's stage kind, which scheduled nothing more to complete them: its stage and plugin
            from .guards import held_for_ever

            for text, count in held_for_ever(self, stuck):
                parts.append(text)
                other -= count
        if other > 0:
            parts.append(f"{other} at a stage that will never complete them")
        return n, why, parts

    def limit_drained_early(self, end: float) -> bool:
        """Whether the run drained at or before its warm-up's end, which leaves nothing to measure (language.txt
        §2: an error): under ``arrivals N``, or without a horizon (``horizon inf``: such a run ends when no
        event is left, the warm-up's own the last when nothing happens after it) when its workload starts a
        session (one that starts none is the report's warning, not an error: docs/language.md). A run
        stopped early is not judged. Under ``arrivals N`` a warm-up of 0 is no exception: a run whose N sessions
        all end at 0 drained at its warm-up, [0, 0] is empty."""
        if self.interrupted or end > self.warmup:
            return False
        if self.arr_limit is not None:
            return True
        if self.warmup <= 0:
            return False
        from .notes import no_sessions

        return self.horizon == INF and not no_sessions(self.program.workload)

    def _end_warmup(self, _=None) -> None:
        self.warm = True
        self.quiet = True  # the measurement starts; the program does nothing here (no pool is retried)
        for pool in self.pools:
            pool.reset_stats()
        for st in self.stages:
            st.reset_stats()
        self._acc_live()
        self.a_live = self.b_live = 0.0
        self.backlog.warm(self.live, self.arrivals)

    def _acc_live(self) -> None:
        now = self.now
        dt = now - self.live_t
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_live += self.live * dt
            else:
                self.acc_live_huge(dt)
            self.live0 = self.live
        self.live_t = now

    def live_integral(self) -> float:
        """The live count's whole integral up to ``live_t`` (its spans of HUGE_SPAN or longer too), as the
        backlog's bins read it."""
        return self.a_live + self.b_live * HUGE_SPAN

    def acc_live_huge(self, dt: float) -> None:
        """Integrate the live count over a span ``dt`` of HUGE_SPAN or longer, in its units (stats.HUGE_SPAN)."""
        self.b_live += self.live * (dt * PER_HUGE)

    def settle(self, pools: bool = True) -> None:
        """Settle the instant after an event (language.txt §3): the ready sessions, then the growers and
        admissions of the pools admitted by no stage, until nothing changes; then the idle step stages (and
        the gauges) when no other event is pending at the instant. ``pools`` False: the event did nothing
        (:func:`dead_event`), so no session is ready and no pool changed, and the pools are not retried: §3
        retries them "after every event", and an instant where only a completion left behind fell is none of
        the program's, where a queue key or a hold's units that read the clock (``waited``, ``now``) or draw
        would have been read again (an admission at a time the heap's bookkeeping made). What an earlier
        event of the instant left for its end (a step stage's start, the gauges) is done."""
        ready = self.ready
        grow_pools = self.grow_pools
        queue_free = self.queue_free
        steps = self.step_stages
        while True:
            if ready:
                self.drain_ready()
                pools = True
            if pools and (grow_pools or queue_free):
                # _admission.admit_all(self) when it has something to do: a grower waits, or a session in
                # the queue of a pool admitted outside the step stages (a settle per event: most have none;
                # only the pools that can ever have growers, or a queue, are looked at: build.py; of many,
                # only those a grower or a session has joined since they were last found with neither)
                hot = self.pool_hot
                if hot is None:
                    for pool in grow_pools:
                        if pool.growers:
                            _admission.admit_all(self)
                            break
                    else:
                        for pool in queue_free:
                            if pool.front or pool.queue:
                                _admission.admit_all(self)
                                break
                else:
                    while hot:
                        pool = hot[-1]
                        if pool.growers or (pool.via is None and (pool.front or pool.queue)):
                            _admission.admit_all(self)
                            break
                        hot.pop()
                        pool.hot = False
                if ready:
                    continue
            pools = True  # (a later pass follows what the step stages' admissions did)
            if steps:
                heap = self.heap
                if not (heap and heap[0][0] <= self.now):
                    admitted = self.admitted
                    if self.step_heap is None:
                        for st in steps:
                            if st.idle():
                                st.try_start()
                    elif self.step_heap:
                        self._step_pass(steps)
                    if ready or admitted != self.admitted:
                        # the stages' admissions made sessions ready, which ran at once (admit_head runs
                        # the admitted session until it blocks, so ready may be empty again): what they
                        # did (a hold of a pool admitted here, a run on an idle stage) is settled at this
                        # instant, not at the next event
                        continue
            break
        dirty = self.dirty
        if dirty:
            # what mark() asked for, in the order asked; the mark is cleared here, before settle(), so a
            # settle that marks again is settled again at this instant (the stage kind's contract)
            i = 0
            while i < len(dirty):
                d = dirty[i]
                d._marked = False
                d.settle()
                i += 1
                if i > STALL_EVENTS:  # marked again at every settle: the instant would never end
                    self.settle_stall_error()
            dirty.clear()
        if self.gauges:
            heap = self.heap
            if not (heap and heap[0][0] <= self.now):
                self._record_gauges()

    def pool_mark(self, pool) -> None:
        """A grower or a session (in the queue of a pool admitted by no stage) has joined ``pool``, one of
        many the settle looks at (build.py: ``pool_hot``): it looks at this one again."""
        pool.hot = True
        self.pool_hot.append(pool)

    def adm_mark(self, pool) -> None:
        """admit_all tries the head of ``pool``, one of many pools with queues of their own (build.py:
        ``adm_hot``), again: a session joined or left its queue, or room freed where its head waits
        (release.wake_waiters)."""
        pool.ahot = True
        self.adm_hot.append(pool)

    def step_mark(self, st) -> None:
        """Step stage ``st``, among many (build.py: ``step_heap``), may be idle now (an iteration ended, a
        job joined its residents, a session joined the queue of a pool it admits: what can make
        ``idle()`` true): the settle asks it, in its place in ``step_stages``: at this pass when the pass
        has not reached that place, else at the next (as a walk over every stage would)."""
        st.hot = True
        if st.spos > self.step_cur:
            heapq.heappush(self.step_heap, st.spos)
        else:
            self.step_later.append(st.spos)

    def _step_pass(self, steps: list) -> None:
        """``for st in steps: if st.idle(): st.try_start()`` over a family of many step stages, asking only
        those that may be idle (``hot``: listed in ``step_heap`` by their place), so a settle costs what
        may start, not the family's size. A step stage asked and not idle is not hot until step_mark; one
        still idle after its try_start stays hot (asked at every settle, as the walk asks it); a stage
        kind that does not mark itself is hot for good."""
        sh = self.step_heap
        later = self.step_later
        own = self.step_self
        pop = heapq.heappop
        try:
            while sh:
                p = pop(sh)
                st = steps[p]
                self.step_cur = p
                if own[p]:
                    st.hot = False
                    if st.idle():
                        st.try_start()
                        if not st.hot and st.idle():
                            st.hot = True
                            later.append(p)
                else:
                    if st.idle():
                        st.try_start()
                    later.append(p)
        finally:
            self.step_cur = -1
            for p in later:
                heapq.heappush(sh, p)
            later.clear()

    def _record_gauges(self) -> None:
        now = self.now
        ctx = self.null_ctx
        for k, (_name, fn) in enumerate(self.gauges):
            v = fn(None, None, ctx)
            if v != self.gauge_last[k]:
                ts, vs = self.gauge_points[k]
                if ts and ts[-1] == now:
                    vs[-1] = v
                else:
                    ts.append(now)
                    vs.append(v)
                    self.samples_left -= 1
                    if self.samples_left <= 0:
                        self.gauge_last[k] = v
                        self.samples_out()
                self.gauge_last[k] = v

    def make_ready(self, s: Session) -> None:
        s.status = READY
        if not s.in_ready:
            s.in_ready = True
            self.ready.append(s)

    def _resume(self, s: Session) -> None:
        try:
            s.gen.send(None)
        except StopIteration:
            self.end_session(s)
        except SessionGone:
            pass

    def _throw(self, s: Session, exc: BaseException) -> None:
        try:
            s.gen.throw(exc)
        except StopIteration:
            self.end_session(s)
        except SessionGone:
            pass

    def drain_ready(self) -> None:
        """Run ready sessions now (a step stage's admission runs the admitted session until it blocks)."""
        ready = self.ready
        pop = ready.popleft
        while ready:
            # a session resumed is a unit of the event's work (pulse_out): a batch's sessions, or a chain of
            # admissions at one instant, run one after another inside one event (counted before it leaves
            # the ready ones: a stop here leaves it among them)
            self.pulse -= 1
            if self.pulse < 0:
                self.pulse_out("running the sessions ready at this instant", None, ready[0].serial)
            s = pop()
            s.in_ready = False
            if s.status == READY:
                try:  # self._resume(s), inlined: every resumption of every session passes here
                    s.gen.send(None)
                except StopIteration:
                    self.end_session(s)
                except SessionGone:
                    pass

    # ----------------------------------------------------------------------------------- workload
    # serq_sim.workload's functions, as the simulation's methods (the arrivals are event callbacks; the
    # compiled session code calls E.turn; a closed workload spawns at every end)
    _arrive_poisson = _workload._arrive_poisson
    _arrive_renewal = _workload._arrive_renewal
    _arrive_preset = _workload._arrive_preset
    spawn = _workload.spawn
    turn = _workload.turn

    def observe(self, s: Session, k: int, v: float) -> None:
        if self.warm:
            va, ta, sa, tu = self.obs_app[k]
            va(v)
            ta(self.now)
            sa(s.serial)
            tu(int(s.attrs[1]))
            self.samples_left -= 1
            if self.samples_left <= 0:
                self.samples_out()

    def choose(self, s: Session, A, slot: int, n: float, keyfn, sid: int | None = None) -> float:
        if not (n == n) or n < 1:
            return 0.0
        n = int(min(n, 1e9))
        self.pulse -= n  # its candidates are units of the event's work (pulse_out)
        if self.pulse < 0:
            self.choose_out(n, sid, s)
        best = None
        bi = 0
        ctx = self.null_ctx
        for j in range(n):
            A[slot] = float(j)
            k = keyfn(s, A, ctx)
            if best is None or k < best:
                best, bi = k, j
        return float(bi)

    def choose_out(self, n: int, sid: int | None, s: Session) -> None:
        """The event's work ran out in a choose of ``n`` candidates (pulse_out)."""
        self.pulse_out(f"running a choose of {n} candidates", sid, s.serial)

    def end_session(self, s: Session) -> None:
        st = s.status
        if st == ENDED:
            return
        if st != READY:
            self._detach(s)
        while s.holds:
            h = s.holds.pop()
            _release.release_hold(self, s, h)
        while s.leases:
            _release.end_lease(self, s.leases[0])
        s.status = ENDED
        if s.tokst is not None:  # its open request ends (step/tokens.py)
            TokenGaps.close(s, self.warm)
        now = self.now  # self._acc_live(), inlined as in spawn
        if now >= self.live_next:
            self.live_next = self.backlog.cut(now, self.live, self.live_t, self.live_integral(), self.arrivals)
        dt = now - self.live_t
        if dt > 0.0:
            if dt < HUGE_SPAN:
                self.a_live += self.live * dt
            else:
                self.acc_live_huge(dt)
            self.live0 = self.live
        self.live_t = now
        self.live -= 1
        if self.warm:
            self.ended += 1
        if self.closed:
            if now == self.rep_t:  # the closed workload's no-progress guard (workload.replace_limit)
                k = self.rep_k = self.rep_k + 1
                if k > self.rep_limit:
                    span, rejected = self._replaced_at(s)
                    raise session_error(self, span, now, s.serial, s.trace,
                                        _workload.replace_message(self.rep_limit, rejected))
                if k > self.rep_n:  # and the CPU time spent at the instant (workload.REPLACE_SECONDS)
                    c = _time.process_time()
                    if k == self.rep_n + 1:
                        self.rep_c = c
                    elif c - self.rep_c > self.rep_seconds:
                        span, rejected = self._replaced_at(s)
                        raise session_error(self, span, now, s.serial, s.trace,
                                            _workload.replace_time_message(self.rep_n, self.rep_seconds, rejected))
            else:
                self.rep_t = now
                self.rep_k = 1
            self.spawn()

    def _replaced_at(self, s: Session):
        """Where the closed workload's guard, tripped by the end of ``s``, is located and what it says of the
        hold that ended ``s`` (``(span, words)``): at that hold when a pool rejected it as never fitting
        (rep_rejected), the statement to change, else at ``arrive closed`` (words None)."""
        r = self.rep_rejected
        if r is not None and r[0] is s:
            return r[1], r[2]
        return self.arrive.span, None

    def _detach(self, s: Session) -> None:
        st = s.status
        if st == QUEUED:
            pool = s.qpool
            pool.acc()
            try:
                pool.front.remove(s)
            except ValueError:
                pool.queue.remove(s)
            if not pool.ahot:  # its head may be another now (admission.admit_all)
                self.adm_mark(pool)
            s.pending = None
            s.qpool = None
        elif st == STAGE:
            job = s.job
            if job is not None and job.stage is not None:
                job.stage.detach(job)
            s.job = None
        elif st == GROWING:
            pool = s.grow[0]
            pool.growers.remove(s)
            job = s.grow[3]
            if job is not None and job.stage is not None:
                job.stage.detach(job)
            s.grow = None
            s.job = None
        s.status = READY

    # ----------------------------------------------------------------------------------- stages
    def _no_work(self, s: Session, work: float, sid: int) -> None:
        """A run (``run_job``, ``run_flow``) whose work is not positive: none to do, the session goes on;
        NaN or negative is an error (a run's work is an amount; the compiled code checks first)."""
        if not work == 0:
            raise self.error(work_message(work), sid, s)
        self.make_ready(s)

    def run_job(self, s: Session, st, work: float, mode: str, growing, sid: int) -> None:
        if not work > 0.0:
            return self._no_work(s, work, sid)
        job = Job(s, work, mode, growing, self.now, sid)
        s.job = job
        s.status = STAGE
        st.attach(job)

    def run_flow(self, s: Session, stages, work: float, sid: int) -> None:
        if not work > 0.0:
            return self._no_work(s, work, sid)
        job = Job(s, work, "plain", None, self.now, sid)
        s.job = job
        s.status = STAGE
        self.flow_network.add(job, tuple(stages))

    # a job's completion (the stages' contract; stages.job_done owns it, FifoStage._done inlines it there)
    stage_stats = _stages.stage_stats
    job_done = _stages.job_done

    def start_job(self, st, work: float, job: Job | None = None) -> None:
        """An ownerless job of ``work`` at stage ``st``: ``job`` (one whose ``on_done`` says what its
        completion does: a spill's write, pools.cache.SpillWrite), or a plain one."""
        if work > 0:
            st.attach(job if job is not None else Job(None, work, "plain", None, self.now))

    # ----------------------------------------------------------------------------------- pools
    # The pools' behaviour is the package serq_sim.pools (functions of the simulation). These are its
    # entry points as methods of the simulation: the compiled session code calls E.hold, E.end_hold,
    # E.grow, E.load, E.release and E.drop; a lease's end is an event (a callback of the simulation);
    # preemption policies ask sim.preempt_candidates and sim.computed_position (their contract).
    hold = _admission.hold
    end_hold = _release.end_hold
    release = _release.release
    transfer_release = _release.transfer_release
    lease_end = _release.lease_end
    grow = _growth.grow
    load = _growth.load
    drop = _cache.drop
    preempt_candidates = _growth.preempt_candidates
    computed_position = staticmethod(_growth.computed_position)

    # ----------------------------------------------------------------------------------- observables
    def obs_queue(self, st) -> float:
        return st.queue()

    def read_by(self, read, st, sid: int | None, s) -> float:
        """``read(st)``, an observable of a third party's stage read by the statement of span ``sid`` of session
        ``s`` (None: of none): a failure of the plugin there names them (serq_sim.guards.reading)."""
        from .guards import reading

        with reading(self, None if sid is None else self.spans[sid], s):
            return read(st)

    def obs_busy(self, st) -> float:
        return st.busy()

    def obs_work(self, st) -> float:
        memo = self.end_memo
        if memo is not None:  # the run is over (_finish): the state stands still, read once a stage
            return _read_once(memo, "work", st, st.work)
        return st.work()

    def obs_used(self, p: Pool) -> float:
        return +p.used  # (a plain float: the nearest double of an exact count, pools/exact.py)

    def obs_free(self, p: Pool) -> float:
        """The room a new admission has (pools.admission.fits): the capacity less the units allocated and,
        under ``reserve held``, the live holds' unallocated reservations (``reserved``, 0 otherwise); cached
        units never block, so they are not subtracted (docs/language.md). pools/prepared.py's ``_POOL_OBS``
        writes the same expression out."""
        return +(p.cap - p.used - p.reserved)

    def obs_cachedin(self, p: Pool, s) -> float:
        if s is None:
            return 0.0
        e = p.own.get(s.serial)
        return e.size if e is not None else 0.0

    def obs_holders(self, p: Pool) -> float:
        return float(len(p.holders))

    def obs_queued(self, p: Pool) -> float:
        return float(len(p.front) + len(p.queue))

    def obs_budget_left(self, st) -> float:
        ab = self.admit_budget
        if ab is not None and ab[0] is st:
            return ab[1]
        # the linker's rule, and the IR's (serq_ir.validate, rules.budget_left_message): budget_left reads a step
        # stage, and a stage family's members are of one kind
        f = getattr(st, "budget_left", None)
        assert f is not None, f"budget_left({st.name}) of a stage that is no step stage"
        memo = self.end_memo
        if memo is not None:  # (obs_work)
            return _read_once(memo, "budget_left", st, f)
        return f()

    def obs_price(self, st, s_h: float, ds: float) -> float:
        return st.est.price(s_h, ds)

    def obs_est_lambda(self, st) -> float:
        return st.est.estimates()[0]

    def obs_est_rho(self, st) -> float:
        return st.est.estimates()[1]

    def obs_est_wait(self, st) -> float:
        return st.est.estimates()[2]


def _jobs_of(owner) -> list:
    """The jobs a stage or the flow network has in progress (for the no-progress guard's message)."""
    if owner is None:
        return []
    flows = getattr(owner, "flows", None)
    if isinstance(flows, dict):
        return list(flows)
    out = []
    for name in ("heap", "active", "jobs", "residents", "queue"):
        got = getattr(owner, name, None)
        # only the containers of that name (a step stage's ``queue`` is a method, a plugin's may be
        # anything): the message must not fail where the guard tripped
        if not got or not isinstance(got, (list, tuple, deque, dict, set)):
            continue
        for x in got:
            j = x[-1] if isinstance(x, tuple) else x
            if isinstance(j, Job) and j not in out:
                out.append(j)
    return out


def _runs_listed(runs: list[tuple[int, Any, Any]]) -> str:
    """The runs a no-progress error names (``(serial, span, replay)`` in serial order,
    :meth:`Simulation._runs_of`): the first five as "the run at FILE:L:C of session N", then how many more."""
    where = []
    for serial, sp, _replay in runs[:5]:
        at = f" at {place(sp)}" if sp is not None else ""
        where.append(f"the run{at} of session {serial}")
    more = f" and {len(runs) - 5} more" if len(runs) > 5 else ""
    return f"{', '.join(where)}{more}"


def _read_once(memo: dict, what: str, st, read) -> float:
    """``read()``, an observable ``what`` of stage ``st``, once at the run's end (``Simulation.end_memo``)."""
    v = memo.get((what, st))
    if v is None:
        v = memo[(what, st)] = read()
    return v


def _where(span, serial: int | None) -> str:
    """`` at FILE:LINE:COL, session N`` (each part when known): where a partial report's note says the run
    stood (--max-wall within an event, Ctrl-C, SIGTERM). A statement of a definition's body names the uses that
    expanded it too (:func:`serq.errors.place`: ``at lib.sq:3:5 in `f` used at p.sq:9:3``)."""
    where = ""
    if span is not None:
        where += f" at {place(span)}"
    if serial is not None:
        where += f", session {serial}"
    return where


class WallAtSetUp(Exception):  # noqa: N818 - named as its message reads
    """A third party's code called while the simulation was built (a factory) that had not returned when
    ``--max-wall`` was reached: the plugin's failure (Simulation._build_bounded)."""


class _wall_in_plugins:  # noqa: N801 - a context manager, named as the functions around it
    """While the run's events run, under ``--max-wall`` (``max_wall``), in the main thread, with no other
    ``SIGALRM`` handler (of Python's, or one set outside Python, which ``signal.getsignal`` gives as None and
    ``signal.signal`` cannot put back) or alarm set: a timer (``SIGALRM``) at the bound stops a run that is inside a
    third-party plugin's own code then (a stage kind's method that does not return), with the bound's
    partial report and a note naming the plugin and its line. serQ's own work inside an event is counted
    down and stops at the bound (:meth:`Simulation.pulse_out`), but a plugin's loop is not, and the run
    went on past the bound for as long as the plugin's code ran (``--max-wall 1`` of a stage kind whose
    ``attach`` loops: until Ctrl-C). Fired in serQ's code, the timer looks again 10 ms later; and so it
    does after it stopped the run, until the run is over: a plugin that catches the stop (``except
    BaseException``) and works on is stopped again (it went on for as long as it worked: 5 s past a
    bound of 0.3). The stop is this run's own (``StopRun.owner``): a simulation that a plugin's code runs
    inside it lets it pass (it took the stop for its own, made a partial report of it, and the outer run
    went on, unbounded, in the plugin's next simulation), and the plugin's code that called this run is
    not running in it (only the frames above the run's count)."""

    __slots__ = ("sim", "alarm", "watch")

    def __init__(self, sim):
        self.sim = sim
        #: on the main thread, the entered :func:`serq.plugins.plugin_alarm` (the one alarm of ``--max-wall``
        #: over a plugin's code, a report format's too)
        self.alarm = None
        #: off the main thread, the :class:`_WallWatch` that stands for the alarm
        self.watch = None

    def __enter__(self):
        sim = self.sim
        if sim.max_wall is None or sim.plugin_manager is None:
            return self
        import threading

        if threading.current_thread() is not threading.main_thread():
            # no signal reaches this thread (a Dask worker runs its tasks in a thread of its own): a thread of
            # the run's own stands for the alarm. On Dask a plugin's loop ran on past the bound (a stage kind
            # whose attach loops: until the sweep was killed), where a local worker's alarm stopped it
            self.watch = _WallWatch(sim, sys._getframe(1))
            return self
        from serq.plugins import plugin_alarm, plugin_running

        def deadline():  # (None once the run is over: Simulation.run_over)
            mw = sim.max_wall
            return None if mw is None else sim.t_wall0 + mw

        def stop(where):
            return StopRun("max-wall", f"stopped after {_time.monotonic() - sim.t_wall0:.3g} s of wall time "
                                       f"(--max-wall {show(sim.max_wall)}) within the code of {where}", owner=sim)

        alarm = plugin_alarm(plugin_running(sim.plugin_manager, sys._getframe(1)), deadline, stop)
        if alarm.__enter__():
            self.alarm = alarm
        else:
            alarm.__exit__(None, None, None)
        return self

    def __exit__(self, *exc) -> None:
        watch = self.watch
        if watch is not None:
            self.watch = None
            watch.end()
            return
        alarm = self.alarm
        if alarm is not None:
            self.alarm = None
            alarm.__exit__(None, None, None)


class _WallWatch:
    """:class:`_wall_in_plugins`' alarm for a run off the main thread, where no signal reaches: a daemon thread
    that wakes at the bound and, while a third-party plugin's code is running in the run's thread (the same
    ``plugin_running`` over that thread's frames, ``sys._current_frames``), raises the run's ``StopRun`` there
    (``PyThreadState_SetAsyncExc``), then looks again every 10 ms until the run is over, as the alarm does.
    The stop comes at the next instruction of Python the run's thread runs: a plugin inside one call into C
    that blocks (``time.sleep(60)``) is stopped when the call returns. Nothing is raised once :meth:`end`
    has begun (the lock), and one raised and not yet come is taken there."""

    __slots__ = ("sim", "tid", "lock", "live", "done", "raised")

    def __init__(self, sim, base):
        import threading

        from serq.plugins import plugin_running

        self.sim = sim
        self.tid = threading.get_ident()
        self.lock = threading.Lock()
        self.live = True
        self.done = threading.Event()
        self.raised = False  # whether a stop was raised in the run's thread
        running = plugin_running(sim.plugin_manager, base)
        threading.Thread(target=self._look, args=(running,), name="serq-max-wall", daemon=True).start()

    def _look(self, running) -> None:
        import ctypes

        from serq.plugins import ALARM_MOST

        sim, tid, lock = self.sim, self.tid, self.lock
        while True:
            mw = sim.max_wall
            if mw is None:  # the run is over (Simulation.run_over)
                return
            left = sim.t_wall0 + mw - _time.monotonic()
            if self.done.wait(min(max(left, 0.01 if left <= 0 else 0.001), ALARM_MOST)):
                return
            with lock:
                mw = sim.max_wall
                if not self.live or mw is None:
                    return
                if sim.t_wall0 + mw - _time.monotonic() > 0:
                    continue
                where = running(sys._current_frames().get(tid))
                if where is None:  # serQ's own code, whose countdown reads the clock: look again soon
                    continue
                stop = _stop_class(sim, f"stopped after {_time.monotonic() - sim.t_wall0:.3g} s of wall time "
                                        f"(--max-wall {show(mw)}) within the code of {where}")
                stop.watch = self
                self.raised = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(stop))

    def end(self) -> None:
        """End the watch, in the run's thread: nothing is raised from here on (``live``, under the lock), and a
        stop raised and not come yet is taken here, where it comes: at this thread's next check of the eval
        breaker (a call). It is not taken back with ``PyThreadState_SetAsyncExc(tid, NULL)``, which marks the
        interpreter as holding an asynchronous exception that no thread then takes (CPython 3.11 marks it
        whatever the exception, NULL too): every thread checked for it at every call from then on, and one that
        profiles or traces (``sys.setprofile``: a test counting calls, cProfile, coverage) spun for ever at the
        first instruction of the next function it called, holding the GIL, so not even pytest-timeout's thread
        ran (every run of a Dask worker under --max-wall with a plugin left its process so)."""
        while True:
            try:
                with self.lock:
                    self.live = False
                self.done.set()
                if self.raised:
                    _a_call()  # (where a stop raised and not come yet comes)
                return
            except StopRun as e:
                if getattr(e, "watch", None) is not self:
                    raise


def _a_call() -> None:
    """A call of Python, nothing more: where an asynchronous exception for the thread that makes it is raised."""


def _stop_class(sim, message: str) -> type:
    """The run's ``StopRun("max-wall", message)`` as a class of no arguments: what ``PyThreadState_SetAsyncExc``
    raises is made by calling its class, in the run's thread (:class:`_WallWatch`)."""

    class _Stop(StopRun):
        def __init__(self):
            StopRun.__init__(self, "max-wall", message, owner=sim)

    _Stop.__name__ = _Stop.__qualname__ = "StopRun"
    return _Stop


_threads_runs = None


def runs_here() -> list:
    """The runs under way in this thread, outermost first (both tiers keep it): a run started while
    another is under way (``serq_sim.run`` called by a plugin's code in a run) lets Ctrl-C and SIGTERM
    pass on to the outermost one, which makes the partial report. The inner run took them for its own:
    its partial report went back to the plugin, the signal was acknowledged (a repeated one then ignored),
    and the outer run went on, into the plugin's next simulation, unbounded: killed only by SIGKILL."""
    global _threads_runs
    local = _threads_runs
    if local is None:
        import threading

        local = _threads_runs = threading.local()
    runs = getattr(local, "runs", None)
    if runs is None:
        runs = local.runs = []
    return runs


def _signal_caught() -> None:
    """A run caught Ctrl-C or SIGTERM and makes its partial report: the ``serq`` command's handlers
    (:mod:`serq.signals`) are told, so the signal is not delivered again; nothing otherwise."""
    signals = sys.modules.get("serq.signals")
    if signals is not None:
        signals.acknowledge()


def _signals_deferred():
    """While the report is made, a first Ctrl-C or SIGTERM is recorded, not raised (when the ``serq``
    command handles them, :mod:`serq.signals`); a context that does nothing otherwise."""
    try:
        from serq.signals import deferred
    except ImportError:  # pragma: no cover - the host is a dependency
        import contextlib

        return contextlib.nullcontext()
    return deferred()
