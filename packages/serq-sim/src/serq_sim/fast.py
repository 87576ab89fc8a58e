"""The fast tier: the whole run of a simple program compiled into one Python function.

A program is *simple* when every stage is a built-in ``fifo(c)``, ``delay`` or ``ps(φ)`` (no flows), its
pools are *cap-only*, it has no step stages, no gauges and no extension kinds, its expressions read no
observable but ``queue`` and ``busy`` of stages and ``used``, ``free``, ``holders``, ``queued`` and
``cachedin`` of pools, and ``φ`` and a renewal gap read no attribute. A cap-only pool has a capacity and
a FIFO queue or ``queue by`` keys, and nothing else: no blocks, no eviction order or preemption policy
(nothing is cached and nothing preempts), no ``reserve held``, no spill, no ``admit via``; its holds are
``hold P (u), Q (v) … { … }`` with no reserve, ``reuse``, ``cache`` or ``lease``, naming each pool family
once; ``grow``, ``load``, ``drop``, ``release``, ``record`` and growing runs stay out. For such a program
the settle loop reduces to "run the ready sessions in order, retry the pools' admissions, then let the
marked ps stages reschedule", and :func:`run` generates, from the IR, the source of one function holding
the whole run (workload arrivals, the session's statements, the stages' logic, the pools' queues and
admissions, the statistics) as a specialised event loop over local variables, ``exec``\\ s it once and
runs it instead of :meth:`serq_sim.engine.Simulation.run`.

The generated loop is the general engine's, step for step: the same events ``(time, seq, kind, arg)``
with ``seq`` counted the same way (so the same ties and the same event count, stale ps completions
included), the same draws from the same streams in the same order, the same floating-point operations on
the statistics, and the same :class:`~serq_sim.errors.SimError` messages. The result is written back into
the :class:`~serq_sim.engine.Simulation` built for the run, whose own ``_finish`` and
:func:`serq_sim.report.build_report` make the report, so the report is byte-identical by construction of
the same state.

A session is one list: its attributes, then its continuation point ``pc`` (an integer), its serial, and
its job's enqueue time, start time, work and family member (plus its preset or trace turns when the
program has presets or a trace), then, for the pools, the time it joined a queue and the hold it waits
in, and per hold statement and pool the member (a family) and the units (the demand while it waits,
the allocation while it holds, ``None`` otherwise).

A pool's admissions (``admission.admit_all``) are the nested function ``_adm``, called where the general
engine calls ``admit_all``: after the ready sessions ran (a release does not admit at once: the
settle does, §3); when no queue's keys and no hold's units read state, only after a session joined a queue
or a hold was released since the last attempt (an attempt that admits none changes nothing), and a
session that joins an empty FIFO queue with nothing ready is admitted at the join. A FIFO queue is a deque; ``queue by`` keys that read state (``now``, ``waited``, observables) are
evaluated for every waiting session at every head lookup, as the general engine does; keys that read
only attributes are evaluated once at the join and kept in a heap of ``(key, join order, session)``
(the least key, ties to the first to join: what the scan finds), until a key holds a NaN, after which
that pool scans its stored keys in join order (a NaN does not order). At the end the queues and holders
are written back as the general engine's sessions and slots, so ``over_cap`` and the waiting-for-ever
warning are the general engine's own. The session block becomes basic blocks split at every ``run`` (the
only statement that waits); running a session dispatches on ``pc`` until it starts a job (``pc`` records
where to resume) or ends. A branch or loop that contains no ``run`` stays structured Python code.

``SERQ_SIM_TIER=general`` in the environment forces the general engine; so does ``check_invariants``.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from operator import itemgetter
from typing import Any

from serq_ir import nodes as N
from serq_ir.rules import MAX_MEMBERS, gap_problem, member_problem

from . import nankeys, rand
from .compile import (
    HELPERS,
    PULSE_FIRST,
    RNG,
    SPIN_LIMIT,
    Compiler,
    choose_message,
    num,
    reads,
    spin_message,
    spin_weight,
    state_dependent,
)
from .errors import (
    GUARD,
    SimError,
    StopRun,
    amount_message,
    format_error,
    guard_message,
    session_error,
    work_message,
)
from .pools.exact import WIDE
from .pools.exact import zero as exact_zero
from .pools.linear import LinearQueue, linear_waited
from .pools.model import EPS, ThresholdQueue, WaitedQueue, refused_amount, waited_cuts, waited_last
from .stages import TINY_SHARE
from .stats import HUGE_SPAN, HUGE_UNITS, PER_HUGE, add_sample
from .tier_env import forced_general
from .workload import replace_message, replace_time_message

#: Why a program is not simple: ``None`` when it is.
_ALLOWED_STMTS = (N.Set, N.Observe, N.Turn, N.End, N.Loop, N.Branch, N.Choose, N.Run, N.Hold)
_OBSERVABLES = ("queue", "busy", "member")
#: the observables of a pool the fast tier keeps (``cachedin`` is 0: its pools cache nothing)
_POOL_OBSERVABLES = ("used", "free", "holders", "queued", "cachedin", "member")


def _stmts(stmts):
    for st in stmts:
        yield st
        if isinstance(st, N.Branch):
            yield from _stmts(st.then)
            yield from _stmts(st.orelse)
        elif isinstance(st, N.Loop):
            yield from _stmts(st.body)
        elif isinstance(st, N.Hold):
            yield from _stmts(st.body)


def _exprs_of(st):
    if isinstance(st, (N.Set, N.Observe)):
        yield st.value
    elif isinstance(st, N.Branch):
        yield st.guard
    elif isinstance(st, N.Choose):
        yield st.n
        yield from st.keys
    elif isinstance(st, N.Run):
        yield st.work
        for r in st.stages:
            if r.index is not None:
                yield r.index
    elif isinstance(st, N.Hold):
        for hp in st.pools:
            yield hp.units
            if hp.pool.index is not None:
                yield hp.pool.index


def _bad_expr(e) -> str | None:
    """Why expression ``e`` is outside the fast tier, or None."""
    found: list[str] = []

    def pred(x):
        if isinstance(x, N.Observable):
            if isinstance(x.target, N.PoolRef):
                if x.name not in _POOL_OBSERVABLES:
                    found.append(f"observable {x.name}")
            elif x.name not in _OBSERVABLES:
                found.append(f"observable {x.name}")
        return False

    reads(e, pred)
    return found[0] if found else None


def _bad_sessionless(e, what: str) -> str | None:
    """Why ``e``, evaluated for no session (``what``, a ps capacity or a renewal gap), is outside the
    fast tier, or None."""
    why = _bad_expr(e)
    if why:
        return why
    if reads(e, lambda x: isinstance(x, N.Attr)):
        return f"{what} reading an attribute"
    return None


#: The fast tier's generated function holds the whole run: a program nested deeper, or with more stage
#: families, than these runs in the general engine (which splits deep blocks into functions of their own)
#: rather than meet Python's limits on one function (20 nested blocks, 100 indentation levels, the
#: compiler's recursion).
FAST_NEST = 8
FAST_FAMILIES = 200
FAST_BLOCKS = 2000
#: a settle asks every pool family's queue whether it admits (``_adm``): beyond this many pool families that
#: costs more per event than the general engine, which asks only the pools something changed
FAST_POOLS = 32
#: and every member of a family in turn (``for _m in range(size)``, and ``any(q)`` over its queues before):
#: beyond this many pool members, a family's included, a settle that admits costs more than the general
#: engine's (a family of 10 000 members held one after another: 35 s against 3.4 at horizon 3; at 128 the fast
#: tier is still the faster, 0.15 s against 0.25, at 512 not, 0.54 against 0.28)
FAST_POOL_MEMBERS = 256
#: the generated function holds every statement of the session, init and turn blocks: CPython's compiler
#: takes memory and time out of proportion to one function's size (20 000 observes: 440 MB and 3.1 s,
#: against the general engine's 78 MB and 1.6 s, whose session code is cut into functions of 64
#: statements), so a longer program runs in the general engine
FAST_STATEMENTS = 5000


#: up to this many resumption blocks, the generated loop finds a session's block by testing each in turn;
#: beyond it, by halving the range of labels first (:func:`_dispatch`)
_DISPATCH_LEAF = 8


def _dispatch(L: list[str], items: list[tuple[int, list[str]]], pad: str) -> None:
    """Append to ``L`` the generated loop's dispatch on a session's resumption label ``pc`` to its block,
    ``items`` the (label, lines) of the blocks in label order: a run of ``if pc == label:`` tests at most
    :data:`_DISPATCH_LEAF` long, below tests that halve the range (``if pc < label:``), so a resumption
    costs about log₂ of the blocks rather than their number (a session of 1 000 runs resumed at its last
    one tested every label before it at each event). A block left without a ``break`` or ``continue``
    falls out of the tree and the enclosing loop dispatches again on the ``pc`` it set, as it fell into
    the next test before. Each test line is under its own ``# @sid -`` mark (no statement: the
    resumption, until a block's first statement's mark, compile.statement_at)."""
    todo: list[tuple[int, int, str, bool]] = [(0, len(items), pad, False)]
    while todo:
        lo, hi, p, is_else = todo.pop()
        if is_else:
            L.append(f"{p[:-4]}# @sid -")
            L.append(f"{p[:-4]}else:")
        if hi - lo <= _DISPATCH_LEAF:
            for lbl, blk in items[lo:hi]:
                L.append(f"{p}# @sid -")  # (a block's resumption, until its first statement's mark)
                L.append(f"{p}if pc == {lbl}:")
                for line in blk:
                    L.append(f"{p}    {line}")
            continue
        mid = (lo + hi) // 2
        L.append(f"{p}# @sid -")
        L.append(f"{p}if pc < {items[mid][0]}:")
        # the lower half, then the upper one under the else (popped in that order)
        todo.append((mid, hi, p + "    ", True))
        todo.append((lo, mid, p + "    ", False))


def _nesting(stmts) -> int:
    """How deep loops, branches and holds nest in ``stmts`` (without recursion)."""
    deepest = 0
    todo = [(stmts, 0)]
    while todo:
        block, d = todo.pop()
        for st in block:
            if isinstance(st, N.Branch):
                todo += [(st.then, d + 1), (st.orelse, d + 1)]
            elif isinstance(st, (N.Loop, N.Hold)):
                todo.append((st.body, d + 1))
            deepest = max(deepest, d + 1 if isinstance(st, (N.Branch, N.Loop, N.Hold)) else d)
    return deepest


def _bad_pool(node: N.Pool) -> str | None:
    """Why pool ``node`` is outside the fast tier (it keeps cap-only pools: a capacity, a FIFO queue or
    ``queue by`` keys), or None."""
    if node.block is not None:
        return "a pool with blocks"
    if node.caps is not None and len({_cap_kind(num(c)) for c in node.caps}) > 1:
        # (the code's representation of a family's units is one a family: exact counts from WIDE, the
        # integration of HUGE_UNITS, the books of a pool without a cap; members on both sides of one)
        return "a pool family whose members' caps differ in kind (inf beside a finite cap, or either side of 2**53 or 2**256)"
    if not isinstance(node.evict, N.EvictLru):
        return "a pool with an eviction order"
    if not isinstance(node.preempt, N.PreemptNone):
        return "a pool with a preemption policy"
    if node.reserve_held:
        return "a pool with reserve held"
    if node.spill is not None:
        return "a pool that spills"
    if node.admit_via is not None:
        return "a pool admitted via a stage"
    if isinstance(node.queue, N.QueueBy):
        for k in node.queue.keys:
            why = _bad_expr(k)
            if why:
                return why
    return None


def _bad_hold(st: N.Hold) -> str | None:
    if st.reuse is not None or st.cache is not None or st.lease is not None:
        return "a hold that caches or leases"
    if any(hp.reserve is not None for hp in st.pools):
        return "a hold with a reserve"
    fams = [hp.pool.pool for hp in st.pools]
    if len(set(fams)) < len(fams):
        return "a hold naming one pool family twice"
    return None


def exclusion(program: N.Program) -> str | None:
    """Why ``program`` is not in the fast tier's class (see the module docstring), or ``None``."""
    p = program
    for node in p.pools:
        why = _bad_pool(node)
        if why:
            return why
    if len(p.stages) > FAST_FAMILIES:
        return f"more than {FAST_FAMILIES} stage families"
    if len(p.pools) > FAST_POOLS:
        return f"more than {FAST_POOLS} pool families"
    if sum(node.size for node in p.pools) > FAST_POOL_MEMBERS:
        return f"more than {FAST_POOL_MEMBERS} pool members"
    if _nesting(p.session) > FAST_NEST:
        return f"statements nested more than {FAST_NEST} deep"
    wl = p.workload
    blocks = stmts = 0  # (one pass: the runs, branches and loops of the session; every statement)
    for top in (p.session, wl.init, wl.turn):
        for st in _stmts(top):
            stmts += 1
            if top is p.session and isinstance(st, (N.Run, N.Branch, N.Loop)):
                blocks += 1
    if blocks > FAST_BLOCKS:
        return f"more than {FAST_BLOCKS} runs, branches and loops"
    if stmts > FAST_STATEMENTS:
        return f"more than {FAST_STATEMENTS} statements"
    # each observe declared is six lines and four locals of the generated function, whether a statement
    # observes it or not: an IR file may declare more than its statements (300 000: the compile took 3 GB)
    if len(p.observes) > FAST_STATEMENTS:
        return f"more than {FAST_STATEMENTS} observes"
    if p.gauges:
        return "gauges"
    for stg in p.stages:
        if not isinstance(stg.kind, (N.Fifo, N.Ps, N.Delay)):
            kind = stg.kind
            return f"stage kind {kind.name if isinstance(kind, N.Extension) else type(kind).__name__}"
        if isinstance(stg.kind, N.Ps):
            why = _bad_sessionless(stg.kind.capacity, "a ps capacity")
            if why:
                return why
    if isinstance(wl.arrive, N.Renewal):
        why = _bad_sessionless(wl.arrive.gap, "a renewal gap")
        if why:
            return why
    for top in (p.session, wl.init, wl.turn):
        for st in _stmts(top):
            if not isinstance(st, _ALLOWED_STMTS):
                return f"statement {type(st).__name__}"
            if isinstance(st, N.Run) and (len(st.stages) != 1 or st.growing is not None):
                return "a run over several stages or a growing run"
            if isinstance(st, N.Hold):
                why = _bad_hold(st)
                if why:
                    return why
            for e in _exprs_of(st):
                why = _bad_expr(e)
                if why:
                    return why
    for top in (wl.init, wl.turn):
        for st in top:
            if not isinstance(st, (N.Set, N.Observe)):
                return "a workload block with more than set and observe"
    return None


def tier(program: N.Program, *, check_invariants: bool = False) -> str:
    """``"fast"`` when :func:`serq_sim.run` would run ``program`` in the fast tier (with the built-in stage
    kinds), else ``"general"``."""
    if check_invariants or forced_general() or exclusion(program) is not None:
        return "general"
    return "fast"


def _sim_ok(sim) -> bool:
    """The stage objects the registries built are the built-in kinds themselves (a plugin may replace
    them)."""
    from .stages import DelayStage, FifoStage, PsStage

    want = {N.Fifo: FifoStage, N.Ps: PsStage, N.Delay: DelayStage}
    p = sim.program
    for f, node in enumerate(p.stages):
        for m in range(node.size):
            if type(sim.stages[sim.stage_base[f] + m]) is not want[type(node.kind)]:
                return False
    return sim.flow_network is None and not sim.need_est and not sim.gauges and all(
        pl.via is None for pl in sim.pools)


# ---------------------------------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------------------------------

_FIELDS = {
    "fifo": ("pr", "ac", "tl", "ap", "ab", "n", "ws", "ss"),
    "delay": ("pr", "tl", "ap", "ab", "n", "ws", "ss"),
    "ps": ("pr", "tl", "ap", "ab", "n", "ws", "ss", "v", "vl", "rt", "ep", "ns", "mk", "pd"),
}
#: stats.HUGE_SPAN as the generated code writes it (repr: the same double)
_HUGE = repr(HUGE_SPAN)
_HUGE_UNITS = repr(HUGE_UNITS)
_INIT = {"pr": "0", "ac": "0", "n": "0", "ep": "0", "ns": "0", "mk": "False", "pd": "False"}


def _has_run(stmts) -> bool:
    """Whether ``stmts`` may wait (a run or a hold) or loop: a branch over them is split into blocks."""
    return any(isinstance(s, (N.Run, N.Loop, N.Hold)) for s in _stmts(stmts))


class _Gen(Compiler):
    """Expression source for the fast tier (``now``, stage state and context variables as locals), and
    the generated function."""

    def __init__(self, sim):
        super().__init__(sim, sim.program)
        p = sim.program
        self.p = p
        self.ctx: dict[str, str] = {}
        self.ser = "None"  # the session (its list) an expression is evaluated for, which its errors name
        #: the span (an index of ``spans``) of the run a session at a stage resumes after, by its resume label
        #: (the no-progress guard's message names the runs of the events due now, as the general engine does)
        self.run_span: dict[int, int] = {}
        #: whether a time of stats.HUGE_SPAN or later can happen (a horizon there or beyond): only then does the
        #: code integrate a span, or add a wait, with the test of its size (every time is at or before the
        #: horizon, every span and wait at most it); else the sums as they are (the same code, the same bytes)
        self.huge_time = not sim.horizon < HUGE_SPAN
        self.fam_kind = []
        for node in p.stages:
            self.fam_kind.append({N.Fifo: "fifo", N.Ps: "ps", N.Delay: "delay"}[type(node.kind)])
        na = sim.nattrs
        self.XP, self.XS, self.XE, self.XT, self.XW, self.XM = na, na + 1, na + 2, na + 3, na + 4, na + 5
        #: the instant of the session's last loop-head pass and how many it made then (see compile.SPIN_LIMIT)
        self.XLT, self.XLK = na + 6, na + 7
        nxt = na + 8
        self.presets = bool(p.workload.presets)
        self.traced = sim.trace is not None
        self.XPR = self.XTR = None
        if self.presets:
            self.XPR, nxt = nxt, nxt + 2
        if self.traced:
            self.XTR, nxt = nxt, nxt + 3  # its turns, the next, the trace session (trace.replay_note)
        # pools: a queued session's join time and hold; per hold statement and pool, the member (a family
        # named with an index) and the units (the demand while queued, the allocation while held, None
        # when not held)
        self.XQT, self.XHID = nxt, nxt + 1
        nxt += 2
        self.holds: list[N.Hold] = []
        self.hold_id: dict[int, int] = {}
        self.XHM: list[list[int | None]] = []
        self.XHU: list[list[int]] = []
        for st in _stmts(p.session):
            if isinstance(st, N.Hold):
                self.hold_id[id(st)] = len(self.holds)
                self.holds.append(st)
                ms, us = [], []
                for hp in st.pools:
                    if p.pools[hp.pool.pool].size > 1:
                        ms.append(nxt)
                        nxt += 1
                    else:
                        ms.append(None)
                    us.append(nxt)
                    nxt += 1
                self.XHM.append(ms)
                self.XHU.append(us)
        # the session block's draw state (rand.place_state), when the block draws
        self.XD = None
        if self.places:
            self.XD, nxt = nxt, nxt + 1
        self.width = nxt
        #: per pool family: its queue ("fifo"; "dyn", keys evaluated at every head lookup; "static", keys
        #: evaluated once at the join, a heap of (key, tie, session) until a key holds a NaN; "waited", keys
        #: ``(K…, waited)`` or ``(K…, -waited)``: a pools.model.WaitedQueue, the ``K`` evaluated at the join;
        #: "cuts", keys that read ``waited`` only compared with numbers: a pools.model.ThresholdQueue; "lin",
        #: one key reading ``waited`` linearly: a pools.linear.LinearQueue)
        self.pmode: list[str] = []
        from . import build as _build

        for node in p.pools:  # (the general engine's queues by the same rule, build.queue_form)
            self.pmode.append(_build.queue_form(node.queue.keys) if isinstance(node.queue, N.QueueBy) else "fifo")
        #: the least room a hold waiting at each pool family can need, or 0 (admission.room_floors, found as
        #: the simulation was built)
        self.room_floor = sim.room_floors
        #: the holds that queue at each pool family (their first pool)
        self.queued_at: list[list[int]] = [[] for _ in p.pools]
        for h, st in enumerate(self.holds):
            self.queued_at[st.pools[0].pool.pool].append(h)
        #: whether an admission attempt needs a change since the last one (``admd``): when no queue's keys
        #: and no hold's units read state, whether a head fits changes only when a session joins a queue or
        #: a hold is released (an admission only takes room), and an attempt that admits none has no effect
        self.adm_lazy = not {"dyn", "waited", "cuts", "lin"} & set(self.pmode) and not any(
            state_dependent(hp.units) for st in self.holds for hp in st.pools)
        #: the holds open around the statement being generated (innermost last)
        self.open_holds: list[int] = []
        self.consts: dict[str, Any] = {}
        self._nconst = 0
        wl = p.workload
        every = [st for top in (p.session, wl.init, wl.turn) for st in _stmts(top)]
        self.turn_zero = not any(isinstance(st, N.Turn) or (isinstance(st, N.Set) and st.slot == 1)
                                 for st in every) and not any(sv.slot == 1 for pr in wl.presets for sv in pr.attrs)

    # -- names
    def const(self, v: Any, stem: str = "_c") -> str:
        self._nconst += 1
        name = f"{stem}{self._nconst}"
        self.consts[name] = v
        return name

    def bind(self, o: Any, stem: str) -> str:
        return self.const(o, stem)  # (the generated function's constants: its globals and locals)

    def sv(self, f: int, field: str, m: str = "0") -> str:
        """State ``field`` of member ``m`` (an expression) of stage family ``f``."""
        if self.p.stages[f].size == 1:
            return f"f{f}_{field}"
        return f"f{f}_{field}[{m}]"

    # -- expressions
    def expr(self, e, rng: str = "session") -> str:
        if isinstance(e, N.Ctx):
            if e.name == "now":
                return "now"
            return self.ctx.get(e.name, "_NAN")
        return super().expr(e, rng)

    def draw_fail(self, sid: int) -> str:
        return f"_dfail, {sid}, {self.ser}, now"

    def draw_state(self) -> str:
        return f"A[{self.XD}]"

    def cur_span_of(self, node) -> int:
        return self.span_id(node.span)

    def member(self, r: N.StageRef, rng: str) -> str:
        """The member index of stage reference ``r`` as an expression (checked like ``stage_at``)."""
        size = self.p.stages[r.stage].size
        if r.index is None:
            return "0"
        if self._candidate(r, size):
            return "_j"
        sid = self.span_id(getattr(r, "span", None))
        return f"_sidx({self.expr(r.index, rng)}, {size}, {sid}, {self.ser}, now, {r.stage})"

    def pv(self, g: int, field: str, m: str = "0") -> str:
        """State ``field`` of member ``m`` of pool family ``g``."""
        if self.p.pools[g].size == 1:
            return f"g{g}_{field}"
        return f"g{g}_{field}[{m}]"

    def pcap(self, g: int, eps: bool = False, m: str = "0") -> str:
        """The cap of member ``m`` of pool family ``g`` (plus EPS with ``eps``): a number, or, where the
        members' caps differ (``Pool.caps``), the member's of a tuple of them."""
        node = self.p.pools[g]
        if node.caps is None:
            c = num(node.cap)
            return _flt(c + EPS if eps else c)
        return f"({', '.join(_flt(num(c) + EPS if eps else num(c)) for c in node.caps)},)[{m}]"

    def fcap(self, g: int) -> float:
        """A cap of pool family ``g`` for what the code decides once a family (exact counts, huge units, an
        infinite amount's rule: every member's cap is of one kind there, :func:`_cap_kind`), and the least
        of its members' for a constant's fit."""
        node = self.p.pools[g]
        return num(node.cap) if node.caps is None else min(num(c) for c in node.caps)

    def member_columns(self, term, varying, rows) -> dict:
        """None of a fold's rows holds a member here: this tier reads its pools and stages by index
        (:meth:`pmember`, ``_sidx``)."""
        return {}

    def pmember(self, r, rng: str = "session") -> str:
        """The member index of pool reference ``r`` as an expression (checked like ``pool_at``)."""
        size = self.p.pools[r.pool].size
        if r.index is None:
            return "0"
        if self._candidate(r, size):
            return "_j"
        sid = self.span_id(getattr(r, "span", None))
        return f"_pidx({self.expr(r.index, rng)}, {size}, {sid}, {self.ser}, now, {r.pool})"

    def pool_observable(self, e: N.Observable, rng: str) -> str:
        r = e.target
        g = r.pool
        if e.name == "member":  # the checked index
            return f"float({self.pmember(r, rng)})"
        if e.name == "cachedin":
            return "0.0" if r.index is None else f"(0.0 if {self.pmember(r, rng)} == 0 else 0.0)"
        wide = self.fcap(g) >= WIDE  # an exact count, read as a plain float (pools/exact.py)
        if e.name == "used":
            v = lambda m: f"(+{self.pv(g, 'u', m)})" if wide else self.pv(g, "u", m)  # noqa: E731
        elif e.name == "free":
            # Simulation.obs_free less the reservations, which a fast pool never holds (no reserve held)
            v = lambda m: (f"(+({self.pcap(g, m=m)} - {self.pv(g, 'u', m)}))" if wide  # noqa: E731
                           else f"({self.pcap(g, m=m)} - {self.pv(g, 'u', m)})")
        elif e.name == "holders":
            v = lambda m: f"float({self.pv(g, 'h', m)})"  # noqa: E731
        else:
            v = lambda m: f"float(len({self.pv(g, 'q', m)}))"  # noqa: E731
        if self.p.pools[g].size == 1:
            if r.index is None:
                return v("0")
            return f"({v('0')} if {self.pmember(r, rng)} == 0 else 0.0)"
        return v(self.pmember(r, rng))

    def observable(self, e: N.Observable, rng: str) -> str:
        r = e.target
        if isinstance(r, N.PoolRef):
            return self.pool_observable(e, rng)
        f = r.stage
        size = self.p.stages[f].size
        if e.name == "member":  # the checked index
            return f"float({self.member(r, rng)})"
        field = "ac" if (e.name == "busy" and self.fam_kind[f] == "fifo") else "pr"
        if size == 1:
            if r.index is None:
                return f"float(f{f}_{field})"
            return f"(float(f{f}_{field}) if {self.member(r, rng)} == 0 else 0.0)"
        return f"float(f{f}_{field}[{self.member(r, rng)}])"

    # -- statements
    def if_warm(self, lines: list[str], pad: str) -> list[str]:
        """``lines`` (at ``pad``) under ``if warm:``, or as they are when there is no warm-up."""
        if self.sim.warmup <= 0:
            return [pad + x for x in lines]
        return [f"{pad}if warm:"] + [pad + "    " + x for x in lines]

    def observe_lines(self, k: int, value: str, pad: str) -> list[str]:
        """A sample of observe ``k``: the arrays grow in steps (``_grow``) and are written by index; the
        turn numbers are all 0, and filled in at the end, when nothing changes ``turn_no``."""
        store = [f"if _on{k} == _cap{k}:",
                 f"    _cap{k} = _grow({k}, _on{k}, now)",
                 f"_vv{k}[_on{k}] = _ov",
                 f"_tv{k}[_on{k}] = now",
                 f"_sv{k}[_on{k}] = A[{self.XS}]"]
        if not self.turn_zero:
            store.append(f"_uv{k}[_on{k}] = int(A[1])")
        store.append(f"_on{k} += 1")
        return [f"{pad}_ov = {value}"] + self.if_warm(store, pad)

    def plain_lines(self, stmts, pad: str) -> list[str]:
        """An ``init`` or ``turn`` block (set and observe, workload stream) for the session in ``A``."""
        out = []
        for st in stmts:
            self.cur_span = self.span_id(getattr(st, "span", None))
            if isinstance(st, N.Set):
                out.append(f"{pad}A[{st.slot}] = {self.expr(st.value, 'workload')}")
            else:
                out += self.observe_lines(st.observe, self.expr(st.value, "workload"), pad)
        return out

    def spawn_lines(self, pad: str, preset: str | None) -> list[str]:
        """``Simulation.spawn``: a new session in ``A`` (not yet queued); ``preset`` the expression of the
        preset index, or None."""
        sim = self.sim
        cells = ["next_sf"] + ["0.0"] * (sim.nattrs - 1) + ["0", "next_serial", "0.0", "0.0", "0.0", "0", "_nan", "0"]
        if self.presets:
            cells += ["None", "0"]
        if self.traced:
            cells += ["None", "0", "0"]
        cells += ["0.0", "0"] + ["None"] * (self.width - self.XHID - 1)
        # ``arrivals`` is ``next_serial``; ``next_sf`` is ``float(next_serial)`` (exact below 2**53)
        out = [f"{pad}if now >= live_next:",  # the backlog's bins (backlog.py), before the count moves
               f"{pad}    live_next = _lcut(now, live, live_t, a_live, next_serial)",
               f"{pad}A = [{', '.join(cells)}]",
               f"{pad}next_serial += 1",
               f"{pad}next_sf += 1.0",
               f"{pad}_dt = now - live_t",
               f"{pad}if _dt > 0:",
               *self.live_acc(pad + "    "),
               f"{pad}    live0 = live",
               f"{pad}live_t = now",
               f"{pad}live += 1"]
        if preset is not None:
            out += [f"{pad}for _sl, _sv in _PATTR[{preset}]:",
                    f"{pad}    A[_sl] = _sv",
                    f"{pad}if _PTURN[{preset}]:",
                    f"{pad}    A[{self.XPR}] = _PTURN[{preset}]"]
        elif self.traced:
            out += [f"{pad}_tss = _TRACE.sessions"]
            if sim.trace_ordered:
                out += [f"{pad}_ti = A[{self.XS}] % len(_tss)"]
            else:
                out += [f"{pad}_ti = int(_rt() * len(_tss))"]
            out += [f"{pad}A[{self.XTR}] = _tss[_ti]", f"{pad}A[{self.XTR + 2}] = _ti"]
        if self.XD is not None:  # the session block's draws: a stream per (serial, turn, place)
            out += [f"{pad}A[{self.XD}] = _pnew(_plword(64), {len(self.places)})"]
        wl = self.p.workload
        if wl.init:  # common random numbers (rand.py): the workload stream of (serial, turn 0)
            out += [f"{pad}_rwseed(_rwbase + (int(A[0]) << 32))"]
            out += self.plain_lines(wl.init, pad)
        return out

    def turn_lines(self, pad: str) -> list[str]:
        sim = self.sim
        out = [f"{pad}A[1] += 1.0"]
        if self.XD is not None:
            out += [f"{pad}_pturn(A[{self.XD}], A[1])"]
        out += self.if_warm(["turns += 1"], pad)
        more = sim.slot_more
        # the session's next preset turn, or its next trace row: (its cell in A, how a row is applied)
        sources = []
        if self.presets:
            sources.append((self.XPR, ["for _sl, _sv in _pt[_pi]:",
                                       "    A[_sl] = _sv"]))
        if self.traced:
            sources.append((self.XTR, ["for _sl, _sv in zip(_TSLOTS, _pt[_pi]):",
                                       "    if _sl is not None:",
                                       "        A[_sl] = _sv"]))
        for n, (x, apply) in enumerate(sources):
            out += [f"{pad}{'elif' if n else 'if'} A[{x}] is not None:",
                    f"{pad}    _pt = A[{x}]",
                    f"{pad}    _pi = A[{x + 1}]",
                    f"{pad}    if _pi < len(_pt):"]
            out += [f"{pad}        {line}" for line in apply]
            out += [f"{pad}        A[{x + 1}] = _pi + 1",
                    f"{pad}        _more = 1.0 if _pi + 1 < len(_pt) else 0.0",
                    # (a row loaded is progress through a finite input: workload.turn, the spin guard's count)
                    f"{pad}        A[{self.XLK}] = 0",
                    f"{pad}    else:",
                    f"{pad}        _more = 0.0"]
            if more is not None:
                out.append(f"{pad}    A[{more}] = _more")
        wl = self.p.workload
        if wl.turn:  # the workload stream of (serial, turn)
            out += [f"{pad}_rwseed(_rwbase + (int(A[0]) << 32) + int(A[1]))"]
            out += self.plain_lines(wl.turn, pad)
        return out

    def end_lines(self, pad: str, rejected: str = "") -> list[str]:
        """``end_session`` for the session in ``A`` (then leave the dispatch loop): its open holds released
        (innermost first); the admissions they allow are the settle's, once the ready sessions ran.
        ``rejected``: the arguments that locate the closed workload's guard at a hold that rejects the session
        as never fitting (``hold_lines``; ``_closed_err``)."""
        out = []
        for h in reversed(self.open_holds):
            out += self.release_lines(h, pad)
        out += [f"{pad}if now >= live_next:",
                f"{pad}    live_next = _lcut(now, live, live_t, a_live, next_serial)",
                f"{pad}_dt = now - live_t",
                f"{pad}if _dt > 0:",
                *self.live_acc(pad + "    "),
                f"{pad}    live0 = live",
                f"{pad}live_t = now",
                f"{pad}live -= 1"] + self.if_warm(["ended += 1"], pad)
        if self.sim.closed:  # the closed workload's no-progress guard (workload.replace_limit)
            n = self.sim.rep_n
            out += [f"{pad}if now == rep_t:",
                    f"{pad}    rep_k += 1",
                    f"{pad}    if rep_k > {self.sim.rep_limit}:",
                    f"{pad}        raise _closed_err(now, A{rejected})",
                    f"{pad}    if rep_k > {n}:",  # and the CPU time spent at the instant (workload.REPLACE_SECONDS)
                    f"{pad}        if rep_k == {n + 1}:",
                    f"{pad}            rep_c = _cpu()",
                    f"{pad}        elif _cpu() - rep_c > {_flt(self.sim.rep_seconds)}:",
                    f"{pad}            raise _closed_time_err(now, A{rejected})",
                    f"{pad}else:",
                    f"{pad}    rep_t = now",
                    f"{pad}    rep_k = 1"]
            out += self.spawn_lines(pad, None)
            out.append(f"{pad}ready.append(A)")
        out.append(f"{pad}break")
        return out

    # pools -----------------------------------------------------------------------------------------
    def pacc_lines(self, g: int, m: str, pad: str) -> list[str]:
        """``Pool.acc`` of member ``m`` of pool family ``g`` (nothing is cached: ``a_cached`` stays 0)."""
        v = lambda x: self.pv(g, x, m)  # noqa: E731
        # the units in use are at most the cap (the pool's invariant): below HUGE_UNITS under a cap below it
        huge_units = not self.fcap(g) < HUGE_UNITS
        test = "0 < _dt" + (f" < {_HUGE}" if self.huge_time else "") + (f" and {v('u')} < {_HUGE_UNITS}"
                                                                      if huge_units else "")
        out = [f"{pad}_dt = now - {v('t')}",
               f"{pad}if {test}:",
               f"{pad}    {v('au')} += {v('u')} * _dt",
               f"{pad}    {v('aq')} += len({v('q')}) * _dt",
               f"{pad}    {v('ah')} += {v('h')} * _dt"]
        if self.huge_time:
            out += [f"{pad}elif _dt >= {_HUGE}:",
                    f"{pad}    _huge(('au', {g}, {m}), {v('u')}, _dt)",
                    f"{pad}    _huge(('aq', {g}, {m}), len({v('q')}), _dt)",
                    f"{pad}    _huge(('ah', {g}, {m}), {v('h')}, _dt)"]
        if huge_units:
            out += [f"{pad}elif _dt > 0:",  # units of HUGE_UNITS or more (Pool.acc_huge): the counts as above
                    f"{pad}    _k = ('au', {g}, {m})",
                    f"{pad}    _hb[_k] = _hb.get(_k, 0.0) + {v('u')} * {PER_HUGE!r} * _dt",
                    f"{pad}    {v('aq')} += len({v('q')}) * _dt",
                    f"{pad}    {v('ah')} += {v('h')} * _dt"]
        return out + [f"{pad}{v('t')} = now"]

    def live_acc(self, pad: str) -> list[str]:
        """The live count's integral over ``_dt`` (above 0): a span of HUGE_SPAN or longer in its units when
        a time there can happen (``huge_time``)."""
        if not self.huge_time:
            return [f"{pad}a_live += live * _dt"]
        return [f"{pad}if _dt < {_HUGE}:", f"{pad}    a_live += live * _dt", f"{pad}else:",
                f"{pad}    _huge('l', live, _dt)"]

    def hmember(self, h: int, k: int) -> str:
        cell = self.XHM[h][k]
        return "0" if cell is None else f"A[{cell}]"

    def release_lines(self, h: int, pad: str) -> list[str]:
        """``release_slot`` of every pool of hold ``h`` (its slots in order) for the session in ``A``."""
        out = []
        st = self.holds[h]
        for k, hp in enumerate(st.pools):
            g = hp.pool.pool
            m = self.hmember(h, k)
            if m != "0":
                out.append(f"{pad}_rm = {m}")
                m = "_rm"
            out += self.pacc_lines(g, m, pad)
            out += [f"{pad}{self.pv(g, 'u', m)} -= A[{self.XHU[h][k]}]",
                    f"{pad}{self.pv(g, 'h', m)} -= 1",
                    f"{pad}A[{self.XHU[h][k]}] = None"]
        if self.adm_lazy and st.pools:
            out.append(f"{pad}admd = True")
        return out

    def end_hold_lines(self, h: int, pad: str) -> list[str]:
        """``end_hold``: the scope of hold ``h`` ends; ``computed`` is reset (the admissions it allows are the
        settle's, after the ready sessions)."""
        return self.release_lines(h, pad) + [f"{pad}A[3] = 0.0"]

    def adm_call(self, pad: str) -> list[str]:
        """``admit_all``: ``_adm`` when some queue has a session (with every queue empty it admits none)."""
        qs = [f"g{g}_q" if self.p.pools[g].size == 1 else f"any(g{g}_q)"
              for g in range(len(self.p.pools)) if self.queued_at[g]]
        if not qs:
            return []
        if self.adm_lazy:  # nothing joined and nothing released since the last attempt: it would admit none
            return [f"{pad}if admd and ({' or '.join(qs)}):", f"{pad}    admd = False", f"{pad}    _adm(now, warm)"]
        return [f"{pad}if {' or '.join(qs)}:", f"{pad}    _adm(now, warm)"]

    def leaves_src(self, g: int, leaves: list) -> str:
        """The values of the leaves of pool family ``g``'s linear key (pools.linear.linear_waited), a tuple."""
        old_span = self.cur_span
        self.cur_span = self.span_id(self.p.pools[g].span)
        src = "(" + "".join(self.expr(k) + ", " for k in leaves) + ")"
        self.cur_span = old_span
        return src

    def key_src(self, g: int, rng: str = "session", checked: bool = True) -> str:
        """The ``queue by`` keys of pool family ``g`` (a tuple), a NaN among them noted (Compiler.checked_keys)
        unless not ``checked`` (the keys a ThresholdQueue or LinearQueue reads: at a NaN it hands the
        lookup to the scan, whose keys note it, as build.py's)."""
        node = self.p.pools[g]
        keys = node.queue.keys
        old_ctx, old_span = self.ctx, self.cur_span
        self.ctx = {"waited": "_wt"}
        self.cur_span = self.span_id(node.span)
        codes = [self.expr(k, rng) for k in keys]
        src = (self.checked_keys(codes, keys, "queue by", node.span) if checked
               else "(" + "".join(c + ", " for c in codes) + ")")
        self.ctx, self.cur_span = old_ctx, old_span
        return src

    def nan_seen(self, places: str, keys: str, kind: str) -> str:
        return f"_nkf({places}, now, {self.ser}, {keys})"  # (no step stage here: no serve by key)

    def const_units(self, hp: N.HoldPool, g: int) -> str | None:
        """The units of ``hp`` as a literal when they are a number at most the capacity (never rejected,
        never an amount error), else None."""
        if not isinstance(hp.units, N.Num):
            return None
        u = num(hp.units.value)
        cap = self.fcap(g)  # (the least member's: a literal that fits every member)
        if not refused_amount(cap, u) and not u > cap + EPS:
            return _flt(u)
        return None

    def units_check(self, g: int, m: str, u: str, sid: int, pad: str) -> list[str]:
        """The run-time error of units ``u`` (a variable) that member ``m`` of pool family ``g`` refuses
        (``admission.amount_error``, :func:`serq_sim.pools.model.refused_amount`): NaN or negative, and inf
        too when the pool has no cap (on one with a cap inf is beyond it: rejected, or it waits). It names
        the member as ``report.member_label`` does: ``kv`` for a pool declared without a size, ``kv[1]``;
        ``sid`` is where the units are written (``span_id`` of their expression: the hold's without one)."""
        node = self.p.pools[g]
        test = f"not 0.0 <= {u} < _INF" if refused_amount(self.fcap(g), math.inf) else f"not {u} >= 0.0"
        return [f"{pad}if {test}:",
                f"{pad}    raise _amt({_label_code(node, m)}, {u}, {sid}, A, now)"]

    def hold_lines(self, st: N.Hold, h: int, pad: str, body: int) -> list[str]:
        """``hold``: the pools' members, the units that read no state (a demand beyond the capacity is
        rejected: the session ends), the join to the first pool's queue; the session then waits."""
        sid = self.span_id(st.span)
        self.cur_span = sid
        out = []
        members = []
        for k, hp in enumerate(st.pools):
            r = hp.pool
            if r.index is None:
                members.append("0")
                continue
            out.append(f"{pad}_pm{k} = {self.pmember(r)}")
            members.append(f"_pm{k}" if self.p.pools[r.pool].size > 1 else "0")
        for k, hp in enumerate(st.pools):
            g = hp.pool.pool
            if state_dependent(hp.units):
                continue
            c = self.const_units(hp, g)
            if c is not None:  # a constant that fits: nothing to check
                out.append(f"{pad}A[{self.XHU[h][k]}] = {c}")
                continue
            out.append(f"{pad}_u = {self.expr(hp.units)}")
            out += self.units_check(g, members[k], "_u", self.span_id(hp.units.span), pad)
            out.append(f"{pad}if _u > {self.pcap(g, True, members[k])}:")
            out += self.if_warm([f"{self.pv(g, 'r', members[k])} += 1"], pad + "    ")
            node = self.p.pools[g]
            out += self.end_lines(pad + "    ", f", {sid}, {_label_code(node, members[k])}, _u, "
                                  f"{self.pcap(g, m=members[k])}")
            out.append(f"{pad}A[{self.XHU[h][k]}] = _u")
        for k in range(len(st.pools)):
            if self.XHM[h][k] is not None:
                out.append(f"{pad}A[{self.XHM[h][k]}] = {members[k]}")
        g = st.pools[0].pool.pool
        m = members[0]
        out += self.pacc_lines(g, m, pad)
        out += [f"{pad}A[{self.XQT}] = now", f"{pad}A[{self.XHID}] = {h}"]
        q = self.pv(g, "q", m)
        mode = self.pmode[g]
        if self.adm_lazy and mode == "fifo":
            out += self.join_admit_lines(st, h, members, body, pad)
        if mode == "static":
            # (the keys not checked for NaN here, as KeyedQueue's: once the queue scans, its keys are kept for
            # the scan, which notes a NaN among them where the general engine's scan reads them)
            x = self.pv(g, "x", m)
            out += [f"{pad}if {x}:",
                    f"{pad}    {q}.append(({self.key_src(g, checked=False)}, qtie, A))",
                    f"{pad}else:",
                    f"{pad}    _k = {self.key_src(g, checked=False)}",
                    f"{pad}    if {' or '.join(f'_k[{i}] != _k[{i}]' for i in range(len(self.p.pools[g].queue.keys))) or 'False'}:",
                    f"{pad}        {x} = True",
                    f"{pad}        {q}.sort(key=_tie)",
                    f"{pad}        {q}.append((_k, qtie, A))",
                    f"{pad}    else:",
                    f"{pad}        hpush({q}, (_k, qtie, A))",
                    f"{pad}qtie += 1"]
        elif mode == "waited":  # its keys but the last, evaluated at the join (WaitedQueue.join)
            keys = self.p.pools[g].queue.keys[:-1]
            old_span = self.cur_span
            self.cur_span = self.span_id(self.p.pools[g].span)
            static = "(" + "".join(self.expr(k) + ", " for k in keys) + ")"
            self.cur_span = old_span
            out.append(f"{pad}{q}.join(A, {static})")
        else:
            out.append(f"{pad}{q}.append(A)")
        if self.adm_lazy and mode == "fifo":  # behind a waiting head it is not admitted first
            out += [f"{pad}if len({q}) == 1:", f"{pad}    admd = True"]
        elif self.adm_lazy:  # it may be the least key
            out.append(f"{pad}admd = True")
        out += [f"{pad}A[{self.XP}] = {body}", f"{pad}break"]
        return out

    def join_admit_lines(self, st: N.Hold, h: int, members: list[str], body: int, pad: str) -> list[str]:
        """The admission at the join that ``_adm`` would make next, made in place: with no session ready,
        the queue empty and no change since the last attempt (``admd`` false: every other queue's head
        does not fit), ``_adm`` would admit this session alone and it would run next, so when its demand
        fits it is admitted here and goes on to the hold's body (the waiting time is 0)."""
        units = []
        for k, hp in enumerate(st.pools):
            c = self.const_units(hp, hp.pool.pool)
            units.append(c if c is not None else f"A[{self.XHU[h][k]}]")
        fits = " and ".join(f"{self.pv(hp.pool.pool, 'u', members[k])} + {units[k]} <= "
                            f"{self.pcap(hp.pool.pool, True, members[k])}"
                            for k, hp in enumerate(st.pools))
        q = self.pv(st.pools[0].pool.pool, "q", members[0])
        out = [f"{pad}if not ready and not admd and not {q} and {fits}:"]
        inner = pad + "    "
        for k, hp in enumerate(st.pools):
            gk = hp.pool.pool
            if k:  # the first pool's acc was the join's, at this instant
                out += self.pacc_lines(gk, members[k], inner)
            out += [f"{inner}{self.pv(gk, 'u', members[k])} += {units[k]}",
                    f"{inner}{self.pv(gk, 'h', members[k])} += 1"]
            out += self.if_warm([f"{self.pv(gk, 'n', members[k])} += 1"], inner)
        out += [f"{inner}A[2] = 0.0", f"{inner}pc = {body}", f"{inner}continue"]
        return out

    def adm_source(self) -> list[str]:
        """``admit_all`` as the nested function ``_adm(now, warm)``: every pool member in order admits its
        head while the head's demand fits (``try_admit``); an admitted session joins the ready ones."""
        p = self.p
        old_ser = self.ser
        self.ser = "A"
        L = ["def _adm(now, warm):"]
        scal = []
        for g, node in enumerate(p.pools):
            if node.size == 1:
                scal += [f"g{g}_{x}" for x in ("u", "h", "t", "au", "aq", "ah", "w", "n")]
        if self.pulses:
            scal.append("_pl")
        if scal:
            L.append("    nonlocal " + ", ".join(scal))
        body = []
        for g, node in enumerate(p.pools):
            if not self.queued_at[g]:
                continue
            pad = "    "
            if node.size > 1:
                body.append(f"{pad}for _m in range({node.size}):")
                pad += "    "
                m = "_m"
            else:
                m = "0"
            q = self.pv(g, "q", m)
            body.append(f"{pad}_q = {q}")
            body.append(f"{pad}while _q:")
            pad += "    "
            body += self.head_lines(g, m, pad)
            hs = self.queued_at[g]
            if len(hs) == 1:
                body += self.admit_lines(hs[0], g, m, pad)
            else:
                body.append(f"{pad}_hid = A[{self.XHID}]")
                for i, h in enumerate(hs):
                    body.append(f"{pad}{'if' if i == 0 else 'elif'} _hid == {h}:")
                    body += self.admit_lines(h, g, m, pad + "    ")
        if not body:
            body = ["    pass"]
        self.ser = old_ser
        return L + body

    def scan_what(self, g: int, m: str) -> str:
        """What a scan of the keys of member ``m`` of pool family ``g`` is doing, as
        :func:`.pools.admission.scan_pulse` says it (the expression of a str, with ``_q`` the queue)."""
        node = self.p.pools[g]
        return f"'reading the queue by keys of pool ' + {_label_code(node, m)} + ' for ' + str(len(_q)) + ' waiting sessions'"

    def head_lines(self, g: int, m: str, pad: str) -> list[str]:
        """``head``: the session member ``m`` of pool family ``g`` admits next, into ``A``."""
        mode = self.pmode[g]
        if mode == "fifo":
            return [f"{pad}A = _q[0]"]
        scan = self.pulse_lines("", "len(_q)", self.scan_what(g, m), str(self.span_id(self.p.pools[g].span)))
        if mode in ("dyn", "waited", "cuts", "lin"):
            floor = self.room_floor[g]
            # no session waiting here fits (admission.try_admit): its keys are not read
            skip = [f"{pad}if {self.pv(g, 'u', m)} + {_flt(floor)} > {self.pcap(g, True, m)}:",
                    f"{pad}    break"] if floor else []
            lines = [*scan,
                     "_b = None",
                     "for A in _q:",
                     f"    _wt = now - A[{self.XQT}]",
                     f"    _k = {self.key_src(g)}",
                     "    if _b is None or _k < _bk:",
                     "        _b = A",
                     "        _bk = _k",
                     "A = _b"]
            if mode in ("waited", "cuts", "lin"):  # the scan only when the queue cannot decide
                # (WaitedQueue.head, ThresholdQueue.head, LinearQueue.head)
                lines = ["A = _q.head(now)", "if A is None:", *("    " + x for x in lines)]
            return [*skip,
                    f"{pad}if len(_q) == 1:",
                    f"{pad}    A = _q[0]",
                    f"{pad}else:",
                    *(f"{pad}    {x}" for x in lines)]
        x = self.pv(g, "x", m)
        node = self.p.pools[g]
        # (an IR's clause of no keys holds no NaN: the test False, where the empty join wrote `if :`)
        nan = " or ".join(f"_bk[{i}] != _bk[{i}]" for i in range(len(node.queue.keys))) or "False"
        places = self.bind(nankeys.key_places("queue by", node.queue.keys, node.span), "_kp")
        floor = self.room_floor[g]
        # the scan, as admission.head's once a key held a NaN (KeyedQueue.scan): not for one session, nor
        # when no session waiting fits (admission.try_admit), and a NaN among the keys it reads noted
        return [f"{pad}if not {x}:",
                f"{pad}    A = _q[0][2]",
                f"{pad}elif len(_q) == 1:",
                f"{pad}    _b = _q[0]",
                f"{pad}    A = _b[2]",
                f"{pad}else:",
                *([f"{pad}    if {self.pv(g, 'u', m)} + {_flt(floor)} > {self.pcap(g, True, m)}:",
                   f"{pad}        break"] if floor else []),
                *(f"{pad}    {x}" for x in scan),
                f"{pad}    _b = None",
                f"{pad}    for _e in _q:",
                f"{pad}        if {nan.replace('_bk', '_e[0]')}:",
                f"{pad}            _nkf({places}, now, _e[2], _e[0])",
                f"{pad}        if _b is None or _e[0] < _bk:",
                f"{pad}            _b = _e",
                f"{pad}            _bk = _e[0]",
                f"{pad}    A = _b[2]"]

    def pop_lines(self, g: int, m: str, pad: str) -> list[str]:
        mode = self.pmode[g]
        out = self.pacc_lines(g, m, pad)
        if mode == "fifo":
            return out + [f"{pad}_q.popleft()"]
        if mode == "dyn":
            return out + [f"{pad}if _q[0] is A:",
                          f"{pad}    _q.popleft()",
                          f"{pad}else:",
                          f"{pad}    _drop(_q, A)"]
        if mode in ("waited", "cuts", "lin"):
            return out + [f"{pad}_q.remove(A)"]
        x = self.pv(g, "x", m)
        return out + [f"{pad}if not {x}:",
                      f"{pad}    hpop(_q)",
                      f"{pad}else:",
                      f"{pad}    _drop(_q, _b)"]

    def admit_lines(self, h: int, g: int, m: str, pad: str) -> list[str]:
        """The head ``A`` of member ``m`` of family ``g`` waits in hold ``h``: its demand (units that read
        state evaluated now, in order), the fit (else this pool admits no more now), admission."""
        st = self.holds[h]
        sid = self.span_id(st.span)
        old_span = self.cur_span
        self.cur_span = sid
        out = []
        members = []
        for k in range(len(st.pools)):
            members.append(m if k == 0 else self.hmember(h, k))
            if members[k] not in ("0", m):
                out.append(f"{pad}_am{k} = {members[k]}")
                members[k] = f"_am{k}"
        for k, hp in enumerate(st.pools):
            if state_dependent(hp.units):
                out.append(f"{pad}_u{k} = {self.expr(hp.units)}")
                out += self.units_check(hp.pool.pool, members[k], f"_u{k}", self.span_id(hp.units.span), pad)
            else:
                c = self.const_units(hp, hp.pool.pool)
                out.append(f"{pad}_u{k} = {c if c is not None else f'A[{self.XHU[h][k]}]'}")
        for k, hp in enumerate(st.pools):
            gk = hp.pool.pool
            out += [f"{pad}if {self.pv(gk, 'u', members[k])} + _u{k} > {self.pcap(gk, True, members[k])}:",
                    f"{pad}    break"]
        out += self.pop_lines(g, m, pad)
        for k, hp in enumerate(st.pools):
            gk = hp.pool.pool
            mk = members[k]
            if k:  # the first pool's acc was pop_head's, at this instant
                out += self.pacc_lines(gk, mk, pad)
            out += [f"{pad}{self.pv(gk, 'u', mk)} += _u{k}",
                    f"{pad}{self.pv(gk, 'h', mk)} += 1"]
            out += self.if_warm([f"{self.pv(gk, 'n', mk)} += 1"], pad)
            if state_dependent(hp.units):
                out.append(f"{pad}A[{self.XHU[h][k]}] = _u{k}")
        w = self.pv(g, 'w', m)
        if self.huge_time:
            out += self.if_warm([f"if now < {_HUGE}:", f"    {w} += now - A[{self.XQT}]",
                                 "else:", f"    {w} = _sample(('w', {g}, {m}), {w}, now - A[{self.XQT}])"], pad)
        else:
            out += self.if_warm([f"{w} += now - A[{self.XQT}]"], pad)
        out += [f"{pad}A[2] = 0.0", f"{pad}ready.append(A)"]
        self.cur_span = old_span
        return out

    # stage logic -----------------------------------------------------------------------------------
    def acc_lines(self, f: int, m: str, pad: str) -> list[str]:
        k = self.fam_kind[f]
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        busy = s('ac') if k == "fifo" else f"(1.0 if {s('pr')} else 0.0)"
        out = [f"{pad}_dt = now - {s('tl')}",
               f"{pad}if 0 < _dt < {_HUGE}:" if self.huge_time else f"{pad}if _dt > 0:",
               f"{pad}    {s('ap')} += {s('pr')} * _dt",
               f"{pad}    {s('ab')} += {busy} * _dt"]
        if self.huge_time:
            out += [f"{pad}elif _dt > 0:",
                    f"{pad}    _huge(('ap', {f}, {m}), {s('pr')}, _dt)",
                    f"{pad}    _huge(('ab', {f}, {m}), {busy}, _dt)"]
        return out + [f"{pad}{s('tl')} = now"]

    def advance_lines(self, f: int, m: str, pad: str) -> list[str]:
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        # (as PsStage._advance: an infinite rate measures no virtual time)
        return [f"{pad}if {s('rt')} != _INF:", f"{pad}    {s('v')} += {s('rt')} * (now - {s('vl')})",
                f"{pad}{s('vl')} = now"]

    def mark_lines(self, f: int, m: str, pad: str) -> list[str]:
        flat = self.sim.stage_base[f]
        return [f"{pad}if not {self.sv(f, 'mk', m)}:",
                f"{pad}    {self.sv(f, 'mk', m)} = True",
                f"{pad}    dirty.append({flat} + {m})" if self.p.stages[f].size > 1 else
                f"{pad}    dirty.append({flat})"]

    def start_lines(self, f: int, m: str, pad: str) -> list[str]:
        """Attach the session in ``A`` with work ``_w`` (> 0) to member ``m`` of family ``f``."""
        k = self.fam_kind[f]
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        kind = 3 + f
        out = self.acc_lines(f, m, pad)
        if self.p.stages[f].size > 1 and k != "ps":
            out.append(f"{pad}A[{self.XM}] = {m}")
        if k == "fifo":
            c = self.sim.stages[self.sim.stage_base[f]].c
            cs = "_INF" if c == math.inf else repr(c)
            out += [f"{pad}{s('pr')} += 1",
                    f"{pad}A[{self.XE}] = now",
                    f"{pad}if {s('ac')} < {cs}:",
                    f"{pad}    {s('ac')} += 1",
                    f"{pad}    A[{self.XT}] = now",
                    f"{pad}    push(heap, (now + _w, seq, {kind}, A))",
                    f"{pad}    seq += 1",
                    f"{pad}else:",
                    f"{pad}    A[{self.XW}] = _w",
                    f"{pad}    {s('q')}.append(A)" if self.p.stages[f].size == 1 else
                    f"{pad}    f{f}_q[{m}].append(A)"]
        elif k == "delay":
            out += [f"{pad}{s('pr')} += 1",
                    f"{pad}A[{self.XE}] = now",
                    f"{pad}A[{self.XT}] = now",
                    f"{pad}push(heap, (now + _w, seq, {kind}, A))",
                    f"{pad}seq += 1"]
        else:
            from .stages import PS_REBASE

            h = f"f{f}_h" if self.p.stages[f].size == 1 else f"f{f}_h[{m}]"
            out += self.advance_lines(f, m, pad)
            out += [f"{pad}A[{self.XE}] = now",
                    f"{pad}A[{self.XT}] = now",
                    f"{pad}{s('ns')} += 1",
                    # (as PsStage.attach: a virtual time past PS_REBASE, or a tag beyond the doubles, moves
                    # the virtual time back to 0 first; stages.ps_tag written out, a job's attach being hot)
                    f"{pad}if {s('v')} > {_flt(PS_REBASE)} or ({s('v')} + _w == _INF and _w != _INF):",
                    f"{pad}    {h}[:] = _psrebase({h}, {s('v')})",
                    f"{pad}    {s('v')} = 0.0",
                    f"{pad}hpush({h}, ({s('v')} + _w, {s('ns')}, A))",
                    f"{pad}{s('pr')} += 1"]
            out += self.mark_lines(f, m, pad)
        return out

    def done_stats_lines(self, f: int, m: str, pad: str) -> list[str]:
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        if not self.huge_time:
            return self.if_warm([f"_st = A[{self.XT}]",
                                 f"{s('n')} += 1",
                                 f"{s('ws')} += _st - A[{self.XE}]",
                                 f"{s('ss')} += now - _st"], pad)
        return self.if_warm([f"_st = A[{self.XT}]",
                             f"{s('n')} += 1",
                             f"if now < {_HUGE}:",
                             f"    {s('ws')} += _st - A[{self.XE}]",
                             f"    {s('ss')} += now - _st",
                             "else:",
                             f"    {s('ws')} = _sample(('ws', {f}, {m}), {s('ws')}, _st - A[{self.XE}])",
                             f"    {s('ss')} = _sample(('ss', {f}, {m}), {s('ss')}, now - _st)"], pad)

    def done_lines(self, f: int, pad: str) -> list[str]:
        """The completion event of family ``f`` (``arg`` its argument); leaves the owner in ``A`` or
        ``None`` in ``A``."""
        k = self.fam_kind[f]
        size = self.p.stages[f].size
        out = []
        if k in ("fifo", "delay"):
            out.append(f"{pad}A = arg")
            m = "0"
            if size > 1:
                out.append(f"{pad}_m = A[{self.XM}]")
                m = "_m"
            s = lambda x: self.sv(f, x, m)  # noqa: E731
            out += self.acc_lines(f, m, pad)
            out.append(f"{pad}{s('pr')} -= 1")
            if k == "fifo":
                q = f"f{f}_q" if size == 1 else f"f{f}_q[_m]"
                out += [f"{pad}if {q}:",
                        f"{pad}    _nx = {q}.popleft()",
                        f"{pad}    _nx[{self.XT}] = now",
                        f"{pad}    push(heap, (now + _nx[{self.XW}], seq, {3 + f}, _nx))",
                        f"{pad}    seq += 1",
                        f"{pad}else:",
                        f"{pad}    {s('ac')} -= 1"]
            out += self.done_stats_lines(f, m, pad)
            return out
        # ps: arg is the epoch (a family: (member, epoch))
        m = "0"
        if size > 1:
            out.append(f"{pad}_m, arg = arg")
            m = "_m"
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        h = f"f{f}_h" if size == 1 else f"f{f}_h[_m]"
        if self.sim.horizon == math.inf:
            # without a horizon, PsStage's count of the completions a settle left behind (_dead), which
            # end the run when they are all that is left (engine.Simulation.only_dead_left); pd: whether
            # the current epoch's completion is still to come (PsStage.pending)
            out += [f"{pad}if arg != {s('ep')}:",
                    f"{pad}    _dead -= 1",
                    f"{pad}    A = None",
                    f"{pad}    _idle = True",
                    f"{pad}elif not {h}:",
                    f"{pad}    {s('pd')} = False",
                    f"{pad}    A = None",
                    f"{pad}else:",
                    f"{pad}    {s('pd')} = False"]
        else:
            out += [f"{pad}if arg != {s('ep')}:",  # a completion a settle rescheduled: it does nothing
                    f"{pad}    A = None",
                    f"{pad}    _idle = True",
                    f"{pad}elif not {h}:",
                    f"{pad}    A = None",
                    f"{pad}else:"]
        p2 = pad + "    "
        out += self.acc_lines(f, m, p2)
        out += self.advance_lines(f, m, p2)
        out += [f"{p2}_tag, _, A = hpop({h})",
                f"{p2}{s('v')} = max({s('v')}, _tag)",
                f"{p2}{s('pr')} -= 1"]
        out += self.mark_lines(f, m, p2)
        out += self.done_stats_lines(f, m, p2)
        return out

    def ps_settle_lines(self, f: int, m: str, pad: str) -> list[str]:
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        size = self.p.stages[f].size
        h = f"f{f}_h" if size == 1 else f"f{f}_h[{m}]"
        node = self.p.stages[f]
        old_ctx, old_ser, old_span = self.ctx, self.ser, self.cur_span
        self.ctx, self.ser = {"present": "_pres"}, "None"
        self.cur_span = self.span_id(node.span)
        phi = self.expr(node.kind.capacity)
        # a capacity refused is told at its expression, as the general engine tells it (stages.PsStage)
        at = self.span_id(getattr(node.kind.capacity, "span", None) or node.span)
        self.ctx, self.ser, self.cur_span = old_ctx, old_ser, old_span
        arg = "_e" if size == 1 else f"({m}, _e)"
        label = _label_code(node, m)  # (stages.capacity_message)
        out = [f"{pad}{s('mk')} = False"]
        out += self.advance_lines(f, m, pad)
        out += [f"{pad}_n = {s('pr')}",
                f"{pad}if _n > 0:",
                f"{pad}    _pres = float(_n)",
                f"{pad}    _phi = {phi}",
                f"{pad}    if not _phi >= 0:",
                f"{pad}        raise _err(_G['capacity_message']({label}, _phi, _pres), {at}, None, now)",
                f"{pad}    {s('rt')} = _phi / _n if _phi > 0 else 0.0",
                f"{pad}    if {s('rt')} < {TINY_SHARE!r} and _phi > 0:",  # (stages.share_message)
                f"{pad}        raise _err(_G['share_message']({label}, _phi, _pres, {s('rt')}), {at}, None, now)",
                f"{pad}else:",
                f"{pad}    {s('rt')} = 0.0"]
        forever = self.sim.horizon == math.inf
        if forever:  # (PsStage.settle: the completion still to come will do nothing)
            out += [f"{pad}if {s('pd')}:",
                    f"{pad}    _dead += 1",
                    f"{pad}    {s('pd')} = False"]
        out += [f"{pad}{s('ep')} += 1",
                f"{pad}if {h} and {s('rt')} > 0:",
                f"{pad}    _d = ({h}[0][0] - {s('v')}) / {s('rt')}",
                f"{pad}    if _d == _d:",  # (as PsStage.settle: NaN is infinite work at an infinite rate)
                f"{pad}        _e = {s('ep')}",
                f"{pad}        push(heap, (now + (_d if _d > 0.0 else 0.0), seq, {3 + f}, {arg}))",
                f"{pad}        seq += 1"]
        if forever:
            out.append(f"{pad}        {s('pd')} = True")
        return out

    # the session as blocks --------------------------------------------------------------------------
    def session_blocks(self) -> list[list[str]]:
        self.blocks: list[list[str]] = [[]]
        cur = self._seq(self.p.session, self.blocks[0], "")
        if cur is not None:
            cur += self.end_lines("")
        return self.blocks

    def _new_block(self) -> tuple[int, list[str]]:
        self.blocks.append([])
        return len(self.blocks) - 1, self.blocks[-1]

    def _seq(self, stmts, cur: list[str] | None, pad: str) -> list[str] | None:
        """Append ``stmts`` to block ``cur`` at indentation ``pad`` (blocks are relative to the dispatch);
        returns the block that continues after them, or None when control never gets there. Each
        statement's code is headed by its mark ``# @sid N``, and the code after them by the enclosing
        statement's (compile.statement_at)."""
        outer = self.stmt_sid
        cont = self._seq_code(stmts, cur, pad)
        self.stmt_sid = outer
        if cont is not None:
            cont.append(f"{pad}# @sid {'-' if outer is None else outer}")
        return cont

    def _seq_code(self, stmts, cur: list[str] | None, pad: str) -> list[str] | None:
        for st in stmts:
            if cur is None:
                return None  # unreachable code after end or a loop
            self.cur_span = sid = self.span_id(getattr(st, "span", None))
            self.mark(cur, pad, sid)
            x = self.expr
            if isinstance(st, N.Set):
                cur.append(f"{pad}A[{st.slot}] = {x(st.value)}")
            elif isinstance(st, N.Observe):
                cur += self.observe_lines(st.observe, x(st.value), pad)
            elif isinstance(st, N.Turn):
                cur += self.turn_lines(pad)
            elif isinstance(st, N.End):
                cur += self.end_lines(pad)
                return None
            elif isinstance(st, N.Choose):
                keys = self.checked_keys([x(k) for k in st.keys], st.keys, "choose", st.span)
                # the keys again with a member named by the candidate read as _j (unchecked) and one key
                # compared as a number, in the loop taken when the count is within every family so named
                self.choose_ix = (st.slot, [])
                try:
                    fast_key = self.checked_keys([x(k) for k in st.keys], st.keys, "choose", st.span, one=True)
                finally:
                    sizes = self.choose_ix[1]
                    self.choose_ix = None
                g = self.fresh("")
                name = repr(self.p.attributes[st.slot].name)  # a value, not source text (docs/security.md)
                cur += [f"{pad}_n{g} = {x(st.n)}",
                        # a whole number of candidates, 1 to MAX_MEMBERS (compile.choose_message)
                        f"{pad}if not (1.0 <= _n{g} <= {float(MAX_MEMBERS)!r} and _n{g} == int(_n{g})):",
                        f"{pad}    raise _err(_choosemsg({name}, _n{g}), {self.span_id(getattr(st.n, 'span', None))}, A, now)",
                        f"{pad}else:",
                        f"{pad}    _n{g} = int(_n{g})",
                        # at an instant the session's loop heads passed, a pass a candidate (compile.SPIN_LIMIT)
                        f"{pad}    if now == A[{self.XLT}]:",
                        f"{pad}        A[{self.XLK}] += _n{g} - 1",
                        *self.pulse_lines(pad + "    ", f"_n{g}", f"'running a choose of ' + str(_n{g}) + ' candidates'",
                                          str(sid), f"A[{self.XS}]"),
                        f"{pad}    _best = None",
                        f"{pad}    _bi = 0",
                        f"{pad}    if _n{g} <= {min(sizes, default=MAX_MEMBERS)}:",
                        f"{pad}        for _j in range(_n{g}):",
                        f"{pad}            A[{st.slot}] = float(_j)",
                        f"{pad}            _k = {fast_key}",
                        f"{pad}            if _best is None or _k < _best:",
                        f"{pad}                _best = _k",
                        f"{pad}                _bi = _j",
                        f"{pad}    else:",
                        f"{pad}        for _j in range(_n{g}):",
                        f"{pad}            A[{st.slot}] = float(_j)",
                        f"{pad}            _k = {keys}",
                        f"{pad}            if _best is None or _k < _best:",
                        f"{pad}                _best = _k",
                        f"{pad}                _bi = _j",
                        f"{pad}    A[{st.slot}] = float(_bi)"]
            elif isinstance(st, N.Branch):
                g = self.fresh("_g")
                cur += [f"{pad}{g} = {x(st.guard)}"]
                err = f"{pad}    raise _err(_guard_message({g}), {sid}, A, now)"
                if not _has_run(st.then) and not _has_run(st.orelse):
                    # structured: both arms inline; control continues after the branch unless an arm ends
                    cur.append(f"{pad}if {g} == 1.0:")
                    t = self._seq(st.then, cur, pad + "    ")
                    if not st.then:
                        cur.append(f"{pad}    pass")
                    cur.append(f"{pad}elif {g} == 0.0:")
                    e = self._seq(st.orelse, cur, pad + "    ")
                    if not st.orelse:
                        cur.append(f"{pad}    pass")
                    cur += [f"{pad}else:", err]
                    if t is None and e is None:
                        return None
                    continue
                jl, jb = self._new_block()
                tl, tb = self._new_block()
                el, eb = self._new_block()
                cur += [f"{pad}if {g} == 1.0:",
                        f"{pad}    pc = {tl}",
                        f"{pad}elif {g} == 0.0:",
                        f"{pad}    pc = {el}",
                        f"{pad}else:", err,
                        f"{pad}continue"]
                for lbl_body, blk in ((st.then, tb), (st.orelse, eb)):
                    end = self._seq(lbl_body, blk, "")
                    if end is not None:
                        end += [f"pc = {jl}", "continue"]
                cur, pad = jb, ""
            elif isinstance(st, N.Loop):
                hl, hb = self._new_block()
                cur += [f"{pad}pc = {hl}", f"{pad}continue"]
                lt, lk = self.XLT, self.XLK
                weight, size = spin_weight(st.body)
                hb += [f"if now == A[{lt}]:",
                       f"    A[{lk}] += {weight}",
                       f"    if A[{lk}] > {SPIN_LIMIT}:",
                       f"        raise _err(_spinmsg(now, {weight}, {size}), {sid}, A, now)",
                       *self.pulse_lines("    ", "1", "'running a loop whose passes take no time'", str(sid),
                                         f"A[{self.XS}]"),
                       "else:",
                       f"    A[{lt}] = now",
                       f"    A[{lk}] = 0"]
                end = self._seq(st.body, hb, "")
                if end is not None:
                    end += [f"pc = {hl}", "continue"]
                return None
            elif isinstance(st, N.Hold):
                h = self.hold_id[id(st)]
                bl, bb = self._new_block()
                cur += self.hold_lines(st, h, pad, bl)
                self.open_holds.append(h)
                end = self._seq(st.body, bb, "")
                self.open_holds.pop()
                if end is None:
                    return None
                self.cur_span = sid
                end += self.end_hold_lines(h, "")
                cur, pad = end, ""
            elif isinstance(st, N.Run):
                r = st.stages[0]
                f = r.stage
                size = self.p.stages[f].size
                rl, rb = self._new_block()
                self.run_span[rl] = sid
                if r.index is not None:
                    cur.append(f"{pad}_mm = {self.member(r, 'session')}")
                    m = "_mm" if size > 1 else "0"
                else:
                    m = "0"
                cur.append(f"{pad}_w = {x(st.work)}")
                cur.append(f"{pad}if _w > 0:")
                cur += self.start_lines(f, m, pad + "    ")
                # a run of zero work completes at once: the session goes on in place (the general engine's);
                # NaN or negative work is the run's error (errors.work_message)
                cur += [f"{pad}    A[{self.XP}] = {rl}",
                        f"{pad}    break",
                        f"{pad}elif not _w >= 0:",
                        f"{pad}    raise _err(_workmsg(_w), {sid}, A, now)",
                        f"{pad}pc = {rl}",
                        f"{pad}continue"]
                cur, pad = rb, ""
            else:  # pragma: no cover - excluded by exclusion()
                raise TypeError(type(st).__name__)
        return cur

    # the whole function ------------------------------------------------------------------------------
    def pulse_lines(self, pad: str, units: str, what: str, sid: str = "None", serial: str = "None") -> list[str]:
        """``units`` of work inside one event counted down (engine.PULSE, Simulation.pulse_out: the clock read
        when the countdown runs out, for --max-wall and the progress bar), in the local ``_pl``; nothing
        without either. ``what``, ``sid`` (a span index of this generator's), ``serial``: where it stopped,
        as the general engine names it."""
        if not self.pulses:
            return []
        dec = "_pl -= 1" if units == "1" else f"_pl -= {units}"
        return [f"{pad}{dec}",
                f"{pad}if _pl < 0:",
                f"{pad}    _pl = _pulse({what}, {sid}, {serial}, now)"]

    def source(self, progress: bool) -> str:
        sim = self.sim
        p = self.p
        #: whether the work inside an event is counted down (pulse_lines)
        self.pulses = bool(progress or sim.max_wall is not None)
        self.ser = "A"
        blocks = self.session_blocks()
        L: list[str] = []
        a = L.append
        a("def _fast_run(_G):")
        for name in ("_log", "_NAN", "_INF", "_div", "_mod", "_floor", "_ceil", "_sqrt", "_exp", "_ln", "_pow",
                     "_d_exp", "_d_uniform", "_d_erlang", "_d_h2", "_d_bernoulli", "_d_det", "_sidx", "_err",
                     "_guard_message", "push", "pop", "hpush", "hpop", "_mono", "_PATTR", "_PTURN", "_TRACE",
                     "_TSLOTS", "_pidx", "_amt", "_drop", "_tie", "_workmsg", "_choosemsg"):
            a(f"    {name} = _G[{name!r}]")
        for rname in RNG.values():
            a(f"    {rname} = _G[{rname!r}]")
        a("    _grow = _G['_grow']")
        a("    _tick = _G['_tick']")
        if self.pulses:
            a("    _pulse = _G['_pulse']")
            a(f"    _pl = {PULSE_FIRST}")
        for k in range(len(p.observes)):
            a(f"    _vv{k}, _tv{k}, _sv{k}, _uv{k} = _G['_obs'][{k}]")
            a(f"    _on{k} = 0")
            a(f"    _cap{k} = 0")
        for name in self.consts:
            a(f"    {name} = _G[{name!r}]")
        if isinstance(sim.arrive, N.Poisson):
            a("    rate = _G['rate']")
        a("    heap = []")
        a("    ready = _G['deque']()")
        a("    popleft = ready.popleft")
        a("    dirty = []")
        a("    now = 0.0")
        a("    seq = 0")
        a("    open_arrivals = 0")
        a("    ended = 0")
        a("    turns = 0")
        a("    live = 0")
        a("    live_t = 0.0")
        a("    live0 = 0")
        a("    a_live = 0.0")
        a("    live_next = _G['live_next']")
        a("    _lcut = _G['_lcut']")
        if sim.closed:
            a("    _closed_err = _G['_closed_err']")
            a("    _closed_time_err = _G['_closed_time_err']")
            a("    _cpu = _G['_cpu']")
            a("    rep_t = _nan")
            a("    rep_k = 0")
            a("    rep_c = 0.0")
        a("    next_serial = 0")
        a("    next_sf = 0.0")
        a("    interrupted = False")
        a("    status = 0")
        a("    _dead = 0")  # the completions left to do nothing (ps_settle_lines; only without a horizon)
        a("    _idle = False")  # the event popped did nothing: the pools are not retried (Simulation.settle)
        a(f"    warm = {sim.warmup <= 0}")
        a(f"    horizon = {_flt(sim.horizon)}")
        a(f"    limit = {None if sim.arr_limit is None else int(sim.arr_limit)}")  # int's text (docs/security.md)
        for f, node in enumerate(p.stages):
            k = self.fam_kind[f]
            for field in _FIELDS[k]:
                init = _INIT.get(field, "0.0")
                a(f"    f{f}_{field} = {init}" if node.size == 1 else f"    f{f}_{field} = [{init}] * {node.size}")
            if k == "fifo":
                a(f"    f{f}_q = _G['deque']()" if node.size == 1 else
                  f"    f{f}_q = [_G['deque']() for _ in range({node.size})]")
            if k == "ps":
                a(f"    f{f}_h = []" if node.size == 1 else f"    f{f}_h = [[] for _ in range({node.size})]")
        a("    qtie = 0")
        if p.pools and self.adm_lazy:
            a("    admd = False")
        for g, node in enumerate(p.pools):
            # (a pool of cap 2**53 or more counts exactly, as the general engine's: pools/exact.py)
            fields = [("u", "_G['_U0']" if self.fcap(g) >= WIDE else "0.0"), ("h", "0"), ("t", "0.0"), ("au", "0.0"), ("aq", "0.0"), ("ah", "0.0"),
                      ("w", "0.0"), ("n", "0"), ("r", "0")]
            if self.pmode[g] == "static":
                fields.append(("x", "False"))
            for field, init in fields:
                a(f"    g{g}_{field} = {init}" if node.size == 1 else f"    g{g}_{field} = [{init}] * {node.size}")
            qi = "[]" if self.pmode[g] == "static" else "_G['deque']()"
            qp = "None"
            if self.pulses and self.pmode[g] in ("waited", "cuts", "lin"):
                # the keys a head lookup reads, units of the event's work as the scan's are (build._key_pulse)
                m = "_m" if node.size > 1 else "0"
                a(f"    def _qp{g}(_m):")
                a("        def _qpm(_n, _q, now):")
                a("            nonlocal _pl")
                L.extend(self.pulse_lines("            ", "_n", self.scan_what(g, "_m"),
                                          str(self.span_id(node.span))))
                a("        return _qpm")
                qp = f"_qp{g}({m})"
            if self.pmode[g] == "waited":
                qi = f"_G['_WQ'](None, None, {waited_last(node.queue.keys)}, _G['_JQ'], {qp})"
            elif self.pmode[g] == "cuts":  # the keys at a waited, as the scan reads them
                a(f"    def _kq{g}(A, _wt):")
                a(f"        return {self.key_src(g, checked=False)}")
                qi = f"_G['_TQ'](_kq{g}, {waited_cuts(node.queue.keys)!r}, _G['_JQ'], {qp})"
            elif self.pmode[g] == "lin":  # the keys at a waited, and the linear key's leaves (LinearQueue)
                j, form, leaves = linear_waited(node.queue.keys)
                a(f"    def _kq{g}(A, _wt):")
                a(f"        return {self.key_src(g, checked=False)}")
                lq = "None"
                if leaves:
                    a(f"    def _lq{g}(A):")
                    a(f"        return {self.leaves_src(g, leaves)}")
                    lq = f"_lq{g}"
                qi = f"_G['_LQ'](_kq{g}, {j}, {form!r}, {lq}, _G['_JQ'], {qp})"
            a(f"    g{g}_q = {qi}" if node.size == 1 else f"    g{g}_q = [{qi} for _ in range({node.size})]")
        if p.pools:
            L.extend("    " + line for line in self.adm_source())
        # _start
        if sim.warmup > 0:
            a(f"    push(heap, ({_flt(sim.warmup)}, seq, 1, None))")
            a("    seq += 1")
        if p.workload.presets:  # (a loop over their times: two lines of source a preset took the compiler
            # 440 MB and 2.6 s for 50 000 presets, 1.7 GB for 200 000)
            a("    for _pk, _pat in enumerate(_G['_PAT']):")
            a("        push(heap, (_pat, seq, 2, _pk))")
            a("        seq += 1")
        arrive = sim.arrive
        if isinstance(arrive, N.Poisson):
            a("    push(heap, (0.0, seq, 0, None))")
            a("    seq += 1")
        elif isinstance(arrive, N.Renewal):
            L.extend(self.renewal_lines("    "))
        # the ticks of the general engine's loop (Simulation.tick: the no-progress guard, the bounds, the
        # progress bar), at the same events
        a("    next_tick = 0")
        a("    _tdue = 0")
        a("    try:")
        if isinstance(arrive, (N.Batch, N.Closed)):
            # Simulation.spawn_tick every 4096 sessions: a batch of 10⁸ takes minutes before time moves
            a(f"        for _i in range({arrive.n}):")
            L.extend(self.spawn_lines("            ", None))
            a("            ready.append(A)")
            a("            if _i & 4095 == 4095:")
            a("                _spawn_tick(_i + 1)")
        a("        A = popleft() if ready else None")
        a("        while True:")
        # settle: the ready sessions in order
        a("            while A is not None:")
        a(f"                pc = A[{self.XP}]")
        a("                while True:")
        pad = "                    "
        _dispatch(L, [(lbl, blk) for lbl, blk in enumerate(blocks) if blk], pad)
        a(f"{pad}# @sid -")
        if self.pulses:
            # a session resumed is a unit of the event's work (engine.Simulation.drain_ready)
            a("                if ready:")
            a("                    A = popleft()")
            L.extend(self.pulse_lines("                    ", "1", "'running the sessions ready at this instant'",
                                      "None", f"A[{self.XS}]"))
            a("                else:")
            a("                    A = None")
        else:
            a("                A = popleft() if ready else None")
        if p.pools:
            adm = self.adm_call("                ")
            if adm:
                # after an event that did nothing (a completion a ps stage's settle left behind) the pools
                # are not retried, as the general engine's settle(False)
                a("            if _idle:")
                a("                _idle = False")
                a("            else:")
                L.extend(adm)
            a("            if ready:")
            a("                A = popleft()")
            a("                continue")
        ps_fams = [f for f in range(len(p.stages)) if self.fam_kind[f] == "ps"]
        if ps_fams:
            a("            if dirty:")
            a("                for _d in dirty:")
            kw = "if"
            for f in ps_fams:
                base, size = sim.stage_base[f], p.stages[f].size
                if size == 1:
                    a(f"                    {kw} _d == {base}:")
                    L.extend(self.ps_settle_lines(f, "0", "                        "))
                else:
                    a(f"                    {kw} {base} <= _d < {base + size}:")
                    a(f"                        _pm = _d - {base}")
                    L.extend(self.ps_settle_lines(f, "_pm", "                        "))
                kw = "elif"
            a("                dirty.clear()")
        if sim.arr_limit is not None:
            a("            if live == 0 and open_arrivals >= limit:")
            a("                status = 2")
            a("                break")
        # the ps stages' heaps, by family (the no-progress guard's message names their jobs)
        ps_heaps = "{" + ", ".join(f"{f}: f{f}_h" for f, k in enumerate(self.fam_kind) if k == "ps") + "}"
        if progress or sim.max_events is not None or sim.max_wall is not None:
            a("            if seq - len(heap) >= next_tick:")
            a("                next_tick = _tick(seq - len(heap), now, open_arrivals, live, live0, live_t, heap, "
              f"{ps_heaps})")
        else:
            # the no-progress guard alone: one comparison an event while the events pushed are below the next
            # tick's count (every event is pushed before it is popped, so they reach it first), then the
            # exact count (events popped) until it reaches it: the ticks of the general engine, at the same
            # events. (Ticking at seq + due - popped came late when the heap shrank: the guard tripped after
            # another event than the general engine's, at another time.)
            a("            if seq >= next_tick:")
            a("                _pc = seq - len(heap)")
            a("                if _pc >= _tdue:")
            a("                    _tdue = _tick(_pc, now, open_arrivals, live, live0, live_t, heap, "
              f"{ps_heaps})")
            a("                next_tick = _tdue")
        # the next event
        # every event pushed is popped once, so the event count is seq - len(heap) (less one popped past
        # the horizon); an empty heap ends the loop with IndexError
        if sim.horizon == math.inf and "ps" in self.fam_kind:
            # the run has drained when every event left is a completion a ps stage's settle left behind
            # (engine.Simulation._loop: only_dead_left; here the count is exact, the only such events)
            a("            if _dead and len(heap) <= _dead:")
            a("                break")
        a("            try:")
        a("                _t, _, kind, arg = pop(heap)")
        a("            except IndexError:")
        a("                break")
        # without a horizon, an event at inf is one past it: it never happens (engine.Simulation._loop)
        a("            if _t > horizon:" if sim.horizon != math.inf else "            if _t == _INF:")
        a("                status = 1")
        a("                break")
        a("            now = _t")
        handlers: list[tuple[int, list[str]]] = []
        hp = "                "
        for f in range(len(p.stages)):
            handlers.append((3 + f, self.done_lines(f, hp)))
        if isinstance(arrive, N.Poisson):
            lines = [hp + "open_arrivals += 1"]
            ap = hp
            if sim.arr_limit is not None:
                lines.append(hp + "if open_arrivals < limit:")
                ap = hp + "    "
            lines += [ap + "push(heap, (now + -_log(1.0 - _ra()) / rate, seq, 0, None))", ap + "seq += 1"]
            lines += self.spawn_lines(hp, None)
            handlers.insert(0, (0, lines))
        elif isinstance(arrive, N.Renewal):
            lines = [hp + "open_arrivals += 1"]
            if sim.arr_limit is not None:
                lines.append(hp + "if open_arrivals < limit:")
                lines += self.renewal_lines(hp + "    ")
            else:
                lines += self.renewal_lines(hp)
            lines += self.spawn_lines(hp, None)
            handlers.insert(0, (0, lines))
        if p.workload.presets:
            handlers.append((2, self.spawn_lines(hp, "arg")))
        if sim.warmup > 0:
            lines = [hp + "warm = True", hp + "_idle = True"]  # (no pool is retried: Simulation.quiet)
            for g, node in enumerate(p.pools):
                pad = hp
                m = "0"
                if node.size > 1:
                    lines.append(f"{hp}for _rm in range({node.size}):")
                    pad, m = hp + "    ", "_rm"
                lines += self.pacc_lines(g, m, pad)
                lines += [f"{pad}{self.pv(g, x, m)} = {z}"
                          for x, z in (("au", "0.0"), ("aq", "0.0"), ("ah", "0.0"), ("w", "0.0"), ("n", "0"), ("r", "0"))]
            for f, node in enumerate(p.stages):
                if node.size == 1:
                    lines += self.reset_lines(f, "0", hp)
                else:
                    lines.append(f"{hp}for _rm in range({node.size}):")
                    lines += self.reset_lines(f, "_rm", hp + "    ")
            lines += [hp + "_dt = now - live_t", hp + "if _dt > 0:", *self.live_acc(hp + "    "),
                      hp + "    live0 = live", hp + "live_t = now", hp + "a_live = 0.0", hp + "_lwarm(live, next_serial)", hp + "A = None",
                      hp + "_hb.clear()"]  # (the integrals' huge spans, every one reset here with its sum)
            handlers.append((1, lines))
        kw = "if"
        for kind, lines in handlers:
            a(f"            {kw} kind == {kind}:")
            L.extend(lines)
            kw = "elif"
        a("    except (KeyboardInterrupt, _G['StopRun']) as _e:")
        a("        interrupted = _e")
        a("    except MemoryError:")
        a("        interrupted = _G['out_of_memory']()")
        a("    return locals()")
        return "\n".join(L) + "\n"

    def renewal_lines(self, pad: str) -> list[str]:
        old_ser, old_span = self.ser, self.cur_span
        self.ser = "None"
        gap = self.sim.arrive.gap
        self.cur_span = self.span_id(getattr(gap, "span", None))
        g = self.expr(gap, "arrivals")
        self.ser, self.cur_span = old_ser, old_span
        span = self.const(getattr(gap, "span", None), "_gspan")
        return [f"{pad}_gap = {g}",
                f"{pad}if not (_gap > 0) or _gap == _INF:",
                f"{pad}    raise _G['SimError'](_G['format_error']({span}, now, None, 'arrive renewal: ' + "
                f"_G['gap_problem'](_gap), _G['source']))",
                f"{pad}push(heap, (now + _gap, seq, 0, None))",
                f"{pad}seq += 1"]

    def reset_lines(self, f: int, m: str, pad: str) -> list[str]:
        s = lambda x: self.sv(f, x, m)  # noqa: E731
        return self.acc_lines(f, m, pad) + [f"{pad}{s('ap')} = 0.0", f"{pad}{s('ab')} = 0.0", f"{pad}{s('n')} = 0",
                                             f"{pad}{s('ws')} = 0.0", f"{pad}{s('ss')} = 0.0"]


def _cap_kind(c: float) -> tuple[bool, bool, bool]:
    """What the fast tier's code decides once a pool family from its cap ``c``: an exact count (WIDE), units
    that may reach HUGE_UNITS, an infinite amount refused (no cap). A family whose members' caps differ runs
    here when its members' caps are of one kind."""
    return (c >= WIDE, not c < HUGE_UNITS, refused_amount(c, math.inf))


def _flt(x: float) -> str:
    if x == math.inf:
        return "_INF"
    if x == -math.inf:
        return "(-_INF)"
    return repr(float(x))


# ---------------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------------


def _label_code(node, m: str) -> str:
    """The code of the label of member ``m`` (a variable) of family ``node`` (a pool or a stage), as
    ``report.member_label`` names it: ``'kv'`` for one declared without a size, ``'kv' + '[' + … + ']'``."""
    if node.size > 1 or node.array:
        return f"{node.name!r} + '[' + str(int({m})) + ']'"
    return repr(node.name)


def build(sim, progress: bool):
    """The generated source and its globals for ``sim`` (a built :class:`Simulation`)."""
    from .stages import capacity_message, ps_rebase, share_message

    gen = _Gen(sim)
    src = gen.source(progress)
    p = sim.program
    spans = gen.spans
    source = sim.source

    XS, XTR = gen.XS, gen.XTR

    def _err(msg, sid, A, now):
        # the error of the session in ``A`` (None: of none), as engine.Simulation.error says it: with the note
        # naming the trace row it replays
        if A is None:
            return session_error(sim, spans[sid], now, None, None, msg)
        return session_error(sim, spans[sid], now, A[XS], _replay(A), msg)

    def _replay(A):
        # the trace state of the session in ``A`` (its [turns, next turn, trace session]), None without a trace
        return None if XTR is None or A[XTR] is None else A[XTR:XTR + 3]

    def _dfail(msg, sid, A, now):
        raise _err(msg, sid, A, now)

    def _sidx(idx, size, sid, A, now, g):
        # engine.Simulation.stage_at: the words are the rule's (serq_ir.rules.member_problem), naming family g
        if 0.0 <= idx < size:
            i = int(idx)
            if i == idx:
                return i
        raise _err(member_problem("stage", idx, size, p.stages[g].name), sid, A, now)

    def _pidx(idx, size, sid, A, now, g):
        # engine.Simulation.pool_at, likewise
        if 0.0 <= idx < size:
            i = int(idx)
            if i == idx:
                return i
        raise _err(member_problem("pool", idx, size, p.pools[g].name), sid, A, now)

    def _amt(name, x, sid, A, now):
        # admission.amount_error: a hold's units that the pool refuses (NaN, negative; inf without a cap)
        return _err(amount_message("units", name, x), sid, A, now)

    def _closed_err(now, A, sid=None, pool=None, u=None, cap=None):
        # engine.Simulation.end_session: a closed workload past its replacements at one instant; located at the
        # hold (span sid) that rejected the session as never fitting pool (u units, above cap) when one did
        # (engine.Simulation._replaced_at: a pool of the fast tier has no blocks, and its holds no reserve)
        if sid is None:
            return session_error(sim, sim.arrive.span, now, A[XS], _replay(A), replace_message(sim.rep_limit))
        return session_error(sim, spans[sid], now, A[XS], _replay(A),
                             replace_message(sim.rep_limit, (pool, "units", u, u, cap)))

    def _closed_time_err(now, A, sid=None, pool=None, u=None, cap=None):
        # the same, past the CPU time allowed at one instant (workload.REPLACE_SECONDS)
        rejected = None if sid is None else (pool, "units", u, u, cap)
        return session_error(sim, sim.arrive.span if sid is None else spans[sid], now, A[XS], _replay(A),
                             replace_time_message(sim.rep_n, sim.rep_seconds, rejected))

    def _drop(q, x):
        for i, y in enumerate(q):
            if y is x:
                del q[i]
                return

    # the names the general engine's events have (engine.Simulation.stall_error: its callbacks' names)
    due_names = {0: "arrive poisson" if isinstance(sim.arrive, N.Poisson) else "arrive renewal", 1: "end warmup",
                 2: "arrive preset"}

    # a run's completion (kind 3 + the stage family's index): at a fifo or delay stage its session's list, at
    # a ps stage the epoch ((member, epoch) in a family), whose jobs are the member's heap (f{f}_h), every one
    # of them, as the general engine names a ps stage's jobs (engine._jobs_of)
    xs, xp = gen.XS, gen.XP
    run_span = gen.run_span
    ps_sizes = {f: node.size for f, node in enumerate(p.stages) if gen.fam_kind[f] == "ps"}

    def _due(heap, ps_heaps, now):  # Simulation.due_now, from the fast heaps: the named events and runs due now
        named = []
        runs: dict[int, list] = {}
        for t, _, k, a in sorted(heap, key=lambda e: (e[0], e[1])):
            if t > now:
                break
            if k in due_names:
                named.append(due_names[k])
            elif k >= 3 and type(a) is list and len(a) > xs:
                runs[id(a)] = a
            elif k - 3 in ps_sizes:
                hh = ps_heaps[k - 3]
                if ps_sizes[k - 3] > 1:
                    hh = hh[a[0]]
                for e in hh:
                    runs[id(e[2])] = e[2]
        located = [(int(A[xs]), spans[run_span[A[xp]]] if A[xp] in run_span else None, _replay(A))
                   for A in runs.values()]
        return named, sorted(located, key=lambda r: r[0])

    def _tick(events, now, open_arrivals, live, live0, live_t, heap, ps_heaps):
        sim.events = events
        sim.now = now
        sim.open_arrivals = open_arrivals
        sim.live = live
        sim.live0 = live0
        sim.live_t = live_t
        sim.due_now = lambda t: _due(heap, ps_heaps, t)
        return sim.tick(events)

    import time as _time

    g: dict[str, Any] = dict(HELPERS)
    g.update(gen.consts)
    g.update({
        "push": heapq.heappush, "pop": heapq.heappop, "hpush": heapq.heappush, "hpop": heapq.heappop,
        "deque": deque, "_WQ": WaitedQueue, "_TQ": ThresholdQueue, "_LQ": LinearQueue, "_JQ": itemgetter(gen.XQT), "_sidx": _sidx, "_pidx": _pidx, "_amt": _amt, "_drop": _drop,
        "_tie": lambda e: e[1], "_dfail": _dfail, "_err": _err, "_closed_err": _closed_err, "_guard_message": guard_message, "_mono": _time.monotonic,
        "_closed_time_err": _closed_time_err, "_cpu": _time.process_time,
        "_workmsg": work_message, "_choosemsg": choose_message,
        "_nan": math.nan, "SimError": SimError, "format_error": format_error, "capacity_message": capacity_message,
        "share_message": share_message, "_U0": exact_zero(math.inf),
        "_psrebase": ps_rebase, "_spinmsg": spin_message,
        "gap_problem": gap_problem,
        "source": source, "_tick": _tick, "StopRun": StopRun, "_spawn_tick": sim.spawn_tick,
        "out_of_memory": sim.out_of_memory,
        "_PAT": [float(pr.at) for pr in p.workload.presets],
        "_PATTR": [[(sv.slot, sv.value) for sv in pr.attrs] for pr in p.workload.presets],
        "_PTURN": [[[(sv.slot, sv.value) for sv in row] for row in pr.turns] or None
                   for pr in p.workload.presets],
        "_TRACE": sim.trace, "_TSLOTS": sim.trace_slots,
        "live_next": sim.live_next, "_lwarm": sim.backlog.warm,
    })
    if isinstance(sim.arrive, N.Poisson):
        g["rate"] = sim.rate = num(sim.arrive.rate)
    for name, r in sim.rngs.items():
        g[RNG[name]] = r.random
    g["_rwseed"] = sim.rngs["workload"].seed
    g["_rwbase"] = rand.workload_base(sim.seed)
    g["_pnew"], g["_pturn"], g["_plword"] = rand.place_state, rand.place_turn, sim.rngs["places"].getrandbits
    arrays = [(o.values, o.times, o.sessions, o.turns) for o in sim.obs]
    g["_obs"] = arrays
    widths = (8, 8, 8, 4) if not gen.turn_zero else (8, 8, 8)

    cap = sim.max_samples
    # the samples are checked here, where the buffers grow, not at the ticks: a tick read the buffers' sizes,
    # which pass the bound at a growth, and stopped the run at the first tick after it, whose event depends
    # on what else asks for ticks (--max-wall, --max-events, the progress bar)
    sim.samples_at_ticks = False

    # the samples every observe's buffers hold room for (their sizes), kept as they grow: summed over every
    # observe at each growth, a program of K observes took K * K steps to make its first samples' room (10 000
    # observes 3 s, 40 000 40 s, where the general engine takes under one)
    room = [sum(len(arrs[0]) for arrs in arrays)]

    def _grow(k, n, now):
        # the buffers of observe k are full (n samples): grow them by an eighth, unless the samples of
        # every observe (their buffers' sizes) pass the bound; out of memory, stop the run likewise
        add = max(1024, n >> 3)
        held = room[0]
        if held >= cap:
            sim.now = now
            sim.too_many_samples(held)
        try:
            for arr, w in zip(arrays[k], widths):
                arr.frombytes(bytes(w * add))
        except MemoryError:
            sim.now = now
            raise sim.out_of_memory() from None
        room[0] = held + add
        return n + add

    g["_grow"] = _grow
    hb: dict = {}  # the integrals' spans of HUGE_SPAN or longer, by (field, family, member) or 'l' (the live count)

    def _huge(key, level, dt):
        # Stage.acc_huge, Pool.acc_huge, Simulation.acc_live_huge: such a span in its units (stats.HUGE_SPAN)
        hb[key] = hb.get(key, 0.0) + level * (dt * PER_HUGE)

    def _sample(key, total, x):
        # stats.add_sample: a wait or a service of HUGE_SPAN or longer in its units; the sum with the others
        total, hb[key] = add_sample(total, hb.get(key, 0.0), x)
        return total

    cut = sim.backlog.cut

    def _lcut(now, live, live_t, a_live, arrivals):
        # the backlog's bins read the live count's whole integral, its spans of HUGE_SPAN or longer too
        return cut(now, live, live_t, a_live + hb.get("l", 0.0) * HUGE_SPAN, arrivals)

    g["_huge"], g["_sample"], g["_hb"], g["_lcut"] = _huge, _sample, hb, _lcut

    def _pulse(what, sid, serial, now):
        # engine.Simulation.pulse_out, the span one of this generator's
        return sim.pulse_out(what, None, serial, now, span=None if sid is None else spans[sid])

    g["_pulse"] = _pulse
    first = sim.nan_keys

    def _nkf(places, t, A, keys):
        # a key that came out NaN (nankeys.seen; the general engine's _nk), of the session in ``A``
        return nankeys.seen(first, places, t, None if A is None else int(A[XS]), keys)

    g["_nkf"] = _nkf
    return gen, src, g


def _serial_of(session: Any, xs: int) -> int | None:
    """The serial of the fast tier's session ``session`` (a list; its serial at ``xs``), None if it is none."""
    if isinstance(session, list) and len(session) > xs:
        return int(session[xs])
    return None


def run(sim):
    """Run ``sim`` (a :class:`~serq_sim.engine.Simulation` of a simple program) in the fast tier and
    return its report; ``None`` when the program is not simple."""
    import sys

    if exclusion(sim.program) is not None or not _sim_ok(sim):
        return None
    progress = sim.show_progress = bool(sim.progress and sys.stderr is not None and sys.stderr.isatty())
    from .engine import runs_here

    runs = runs_here()
    nested = bool(runs)
    ns: dict[str, Any] = {}
    try:
        gen, src, g = build(sim, progress)
        code = compile(src, "<serq fast>", "exec")
        exec(code, g, ns)  # noqa: S102 - our own generated code
    except KeyboardInterrupt as e:
        if nested:
            raise  # a run whose plugin's code called this one: its Ctrl-C is that run's
        # Ctrl-C, SIGTERM or SIGHUP while the program was made into Python (a large program's takes seconds):
        # the run stops before its first event with its partial report, nothing simulated, as a signal in the
        # general engine's start or in the reading of a trace does (it gave no report at all)
        sim.setup_stop = compiling_stopped(sim, e)
        return sim.run()
    # where a signal stopped it (compile.statement_at): the session being run is the list A, its serial at XS
    xs = gen.XS
    sim.compiler.sources["<serq fast>"] = (src.splitlines(), lambda f_locals: _serial_of(f_locals.get("A"), xs),
                                           gen.spans)
    from .engine import _signals_deferred

    runs.append(sim)
    try:
        st = ns["_fast_run"](g)
    finally:
        runs.pop()
    # the run is over (to its end, or stopped: st["interrupted"]); what it holds is read back into the
    # simulation (seconds for a run of many sessions waiting) and made its report with a first signal held
    # until the report is made, as while the report is written: a signal then ended the command with no
    # report at all, where one a moment before stopped the run with its partial report
    with _signals_deferred():
        return _after_run(sim, gen, st, nested)


def _after_run(sim, gen: _Gen, st: dict, nested: bool):
    """The report of the fast tier's run ``st`` of ``sim`` (:func:`run`, a signal held)."""
    from .report import build_report

    stop = st["interrupted"]
    if stop.for_other(sim) if isinstance(stop, StopRun) else nested and isinstance(stop, KeyboardInterrupt):
        raise stop  # a run whose plugin's code called this one: its stop, or Ctrl-C, is that run's
    # stopped for memory: the sessions waiting at the pools are not rebuilt as the general engine keeps
    # them (that takes as much memory again as they hold); what reads them at the end (over_cap and the
    # note of sessions waiting for ever) is not taken for such a run (engine.Simulation.memory_stopped)
    _write_back(sim, gen, st, sessions=not (isinstance(stop, StopRun) and stop.reason == "memory"))
    if st["interrupted"]:
        # the sessions waiting, by statement, for the note of a run the memory guard stopped (its parts, which
        # Simulation.stopped formats once with what holds most); a run stopped otherwise names none
        guard = isinstance(stop, StopRun) and stop.held is not None and stop.held.kind == GUARD
        sim.stopped(st["interrupted"], waits=_waits(sim, gen, st) if guard else None)
    elif st["status"] == 2:
        sim.end = sim.now
    else:
        sim.end_at_horizon()
    sim.run_over()
    sim._finish()
    report = build_report(sim)
    report.tier = "fast"
    return report


def compiling_stopped(sim, e: KeyboardInterrupt) -> StopRun:
    """The stop of a run that the signal ``e`` (Ctrl-C, SIGTERM, SIGHUP) came to while the fast tier made its
    program into Python, before the first event: its note says so (nothing was simulated); the signal is
    acknowledged (the run makes its partial report: :mod:`serq.signals`)."""
    from .engine import _signal_caught
    from .report import SIGNAL_NOTES

    reason = getattr(e, "reason", "interrupted")
    said = SIGNAL_NOTES.get(reason, "interrupted")
    _signal_caught()
    return StopRun(reason, f"{said} at set-up, compiling the program, before the run began", owner=sim)


def _stale_ps_only(gen: _Gen, st: dict, events) -> bool:
    """Whether every event of ``events`` (``(time, seq, kind, arg)``) is a ps stage's completion of an epoch
    past (one its settle rescheduled: it does nothing; PsStage.dead_epochs), read at the end of the run."""
    stages = gen.p.stages
    for _t, _s, kind, arg in events:
        f = kind - 3
        if not (0 <= f < len(stages)) or gen.fam_kind[f] != "ps":
            return False
        ep = st[f"f{f}_ep"]
        if stages[f].size > 1:
            m, arg = arg
            ep = ep[m]
        if arg == ep:
            return False
    return True


def _write_back(sim, gen: _Gen, st: dict, sessions: bool = True) -> None:
    sim.now = st["now"]
    # status 1: an event past the horizon was popped (without a horizon, one at inf); an event at inf never
    # happens, under a horizon or without one (engine.Simulation._loop)
    heap = st["heap"]
    # nor is a completion a ps stage's settle left behind, when those are all that is left (the general
    # engine's only_dead_left, under a horizon too: its heap holds the event past the horizon this loop popped)
    left = [(st["_t"], 0, st["kind"], st["arg"])] if st["status"] == 1 else []
    if heap:
        left.append(heap[0])
    sim.heap_left = (bool(left) and min(e[0] for e in left) != math.inf
                     and not _stale_ps_only(gen, st, left + (heap[1:] if heap else [])))
    sim.events = st["seq"] - len(st["heap"]) - (1 if st["status"] == 1 else 0)
    sim.arrivals = st["next_serial"]
    sim.open_arrivals = st["open_arrivals"]
    sim.ended = st["ended"]
    sim.turns = st["turns"]
    sim.live = st["live"]
    sim.live_t = st["live_t"]
    sim.a_live = st["a_live"]
    sim.warm = st["warm"]
    sim.next_serial = st["next_serial"]
    for k, o in enumerate(sim.obs):
        n = st[f"_on{k}"]
        for arr in (o.values, o.times, o.sessions, o.turns):
            del arr[n:]
        if gen.turn_zero:
            o.turns.frombytes(bytes(4 * n))
    p = sim.program
    names = {"pr": "present", "ac": "active", "tl": "t_last", "ap": "a_present", "ab": "a_busy",
             "n": "completions", "ws": "wait_sum", "ss": "service_sum"}
    for f, node in enumerate(p.stages):
        k = gen.fam_kind[f]
        for m in range(node.size):
            obj = sim.stages[sim.stage_base[f] + m]
            for field, attr in names.items():
                if field not in _FIELDS[k]:
                    continue
                v = st[f"f{f}_{field}"]
                setattr(obj, attr, v if node.size == 1 else v[m])
    # a run with no event left and sessions live: they are at stages, which the warning names (engine.forever)
    drained = not sim.heap_left and not st["interrupted"] and st["live"] > 0
    if p.pools or "fifo" in gen.fam_kind or sessions and (drained or _endless_runs(gen, st)):
        _write_back_pools_and_jobs(sim, gen, st, sessions, drained)
    # the integrals' spans of HUGE_SPAN or longer (_huge), where the general engine keeps them
    huge = {"ap": "b_present", "ab": "b_busy", "ws": "b_wait", "ss": "b_service", "au": "b_used", "aq": "b_queue",
            "ah": "b_holders", "w": "b_wait"}
    for key, v in st["_G"]["_hb"].items():
        if key == "l":
            sim.b_live = v
            continue
        field, fam, m = key
        obj = (sim.stages[sim.stage_base[fam] + int(m)] if field in ("ap", "ab", "ws", "ss")
               else sim.pools[sim.pool_base[fam] + int(m)])
        setattr(obj, huge[field], v)


def _waits(sim, gen: _Gen, st: dict):
    """The sessions waiting at the end of a stopped run, by ``(what, span)`` of the statement they wait at (a
    hold's, queued at its first pool; a run's, queued at a fifo stage), as :func:`.holders.count_general`
    counts the general engine's: the note of a run the memory guard stopped names the one most wait at. Made
    once, from the run's own queues (no session is rebuilt)."""
    from collections import Counter

    from .holders import QUEUED_HOLD, QUEUED_RUN

    out: Counter = Counter()
    p = sim.program
    for g, node in enumerate(p.pools):
        qs = [st[f"g{g}_q"]] if node.size == 1 else st[f"g{g}_q"]
        for q in qs:
            for e in q:
                A = e[2] if gen.pmode[g] == "static" else e
                out[(QUEUED_HOLD, gen.holds[A[gen.XHID]].span)] += 1
    for f, node in enumerate(p.stages):
        if gen.fam_kind[f] != "fifo":
            continue
        qs = [st[f"f{f}_q"]] if node.size == 1 else st[f"f{f}_q"]
        for q in qs:
            for A in q:
                sid = gen.run_span.get(A[gen.XP])
                out[(QUEUED_RUN, gen.spans[sid] if sid is not None else None)] += 1
    return out


def _endless_runs(gen: _Gen, st: dict) -> bool:
    """Whether a run of infinite work is under way at the end (a delay stage's completion at inf, a ps stage's
    tag at inf): its session waits for ever, which ``waiting_forever`` tells from the jobs written back."""
    if st["status"] == 1 and st["_t"] == math.inf or any(e[0] == math.inf for e in st["heap"]):
        return True
    for f, node in enumerate(gen.p.stages):
        if gen.fam_kind[f] == "ps":
            hs = [st[f"f{f}_h"]] if node.size == 1 else st[f"f{f}_h"]
            if any(e[0] == math.inf for hh in hs for e in hh):
                return True
    return False


def _write_back_pools_and_jobs(sim, gen: _Gen, st: dict, sessions_too: bool = True, drained: bool = False) -> None:
    """The pools' statistics and state as the general engine keeps them: the queues hold sessions waiting
    with their holds (:class:`~serq_sim.pools.model.Pending`), the holders their slots, so that
    :meth:`~serq_sim.engine.Simulation._finish` (``over_cap``) and ``waiting_forever`` read them; and the
    stages' jobs of infinite work, each with its stage and the span of its run statement: a fifo stage's
    queued (``FifoStage.q``) and in service, a delay stage's (their completions in ``sim.heap``), a ps stage's
    (``PsStage.heap``; every job there when the run ``drained``, no event being left), which
    ``waiting_forever`` reads too."""
    from collections import deque as _deque

    from .compile import HoldInfo
    from .pools.model import Pending, Slot
    from .session import Session
    from .stages import Job
    from .status import QUEUED

    p = sim.program
    infos = {id(v.node): v for v in sim.compiler.g.values() if isinstance(v, HoldInfo)}
    sessions: dict[int, Session] = {}

    def sess(A) -> Session:
        s = sessions.get(id(A))
        if s is None:
            s = Session(int(A[gen.XS]), sim.nattrs)
            s.attrs = list(A[:sim.nattrs])
            if gen.XD is not None:  # its block's draw state (rand.place_state): over_cap draws its units again
                s.draws = A[gen.XD]
            if gen.XTR is not None and A[gen.XTR] is not None:  # the trace row it replays, which its errors name
                s.trace = A[gen.XTR:gen.XTR + 3]
            sessions[id(A)] = s
        return s

    def pool_of(h: int, k: int, A):
        g = gen.holds[h].pools[k].pool.pool
        cell = gen.XHM[h][k]
        return sim.pools[sim.pool_base[g] + (0 if cell is None else int(A[cell]))]

    queued: dict[int, int] = {}  # id(A): the hold it waits in
    live: dict[int, list] = {}
    for g, node in enumerate(p.pools):
        for m in range(node.size):
            pool = sim.pools[sim.pool_base[g] + m]
            get = lambda x: st[f"g{g}_{x}"] if node.size == 1 else st[f"g{g}_{x}"][m]  # noqa: B023, E731
            pool.used = get("u")
            pool.t_last = get("t")
            pool.a_used, pool.a_queue, pool.a_holders = get("au"), get("aq"), get("ah")
            pool.wait_sum, pool.admissions, pool.rejections = get("w"), get("n"), get("r")
            if not sessions_too:
                continue
            q = get("q")
            if gen.pmode[g] == "static":
                q = [e[2] for e in sorted(q, key=lambda e: e[1])]
            pool.queue = _deque()
            for A in q:
                h = A[gen.XHID]
                queued[id(A)] = h
                live[id(A)] = A
                s = sess(A)
                s.status = QUEUED
                s.qpool = pool
                pools = [pool_of(h, k, A) for k in range(len(gen.holds[h].pools))]
                s.pending = Pending(infos[id(gen.holds[h])], pools, A[gen.XQT], 0)
                pool.queue.append(s)
    if not sessions_too:
        return
    # every other live session: at a stage (in the heap, a fifo queue, a ps stage's heap) or ready
    # and those whose run has infinite work (its completion at inf, its work or its ps tag inf): a job of
    # infinite work as the general engine keeps it, which waiting_forever reads (it never releases its holds)
    endless: set[int] = set()
    events = list(st["heap"])
    if st["status"] == 1:  # the event popped past the horizon: the general engine leaves it in the heap
        events.append((st["_t"], None, st["kind"], st["arg"]))
    for t, _seq, kind, arg in events:
        if kind >= 3 and isinstance(arg, list):
            live.setdefault(id(arg), arg)
            if t == math.inf:
                endless.add(id(arg))
    fifo: list = []  # (the stage's member, its queue) of every fifo stage
    for f, node in enumerate(p.stages):
        k = gen.fam_kind[f]
        if k == "fifo":
            qs = [st[f"f{f}_q"]] if node.size == 1 else st[f"f{f}_q"]
            for m, q in enumerate(qs):
                fifo.append((sim.stages[sim.stage_base[f] + m], q))
                for A in q:
                    live.setdefault(id(A), A)
                    if A[gen.XW] == math.inf:
                        endless.add(id(A))
        elif k == "ps":
            hs = [st[f"f{f}_h"]] if node.size == 1 else st[f"f{f}_h"]
            for hh in hs:
                for e in hh:
                    live.setdefault(id(e[2]), e[2])
                    if e[0] == math.inf:
                        endless.add(id(e[2]))
    for A in list(st["ready"]) + ([st["A"]] if isinstance(st.get("A"), list) else []):
        live.setdefault(id(A), A)
    for A in live.values():
        for h, cells in enumerate(gen.XHU):
            if queued.get(id(A)) == h:
                continue
            for k, cell in enumerate(cells):
                if A[cell] is not None:
                    pool = pool_of(h, k, A)
                    slot = Slot(pool, A[cell], 0.0, A[cell], 0.0, sess(A), None)
                    pool.holders[slot] = None
    # the fifo stages' jobs of infinite work in service (a completion at inf of the stage's family, 3 + f), and
    # the queues of the stages that have one, in service or queued (the others' queues are all served)
    # (and so a delay stage's: the general engine's heap holds their completions at inf too)
    fifo_of = {3 + f: f for f in range(len(p.stages)) if gen.fam_kind[f] != "ps"}
    spans = gen.spans

    def span_of(A) -> int:  # the span of the run statement A is at, as an index of sim.spans
        sid = gen.run_span.get(A[gen.XP])
        span = spans[sid] if sid is not None else None
        return 0 if span is None else sim.compiler.span_id(span)

    kept = set()
    for t, _seq, kind, A in events:
        f = fifo_of.get(kind)
        if f is not None and t == math.inf and isinstance(A, list):
            member = sim.stages[sim.stage_base[f] + (int(A[gen.XM]) if p.stages[f].size > 1 else 0)]
            job = sess(A).job = Job(sess(A), math.inf, "plain", None, A[gen.XE], span_of(A))
            job.stage, job.started = member, A[gen.XT]
            sim.heap.append((t, len(sim.heap), member._done_cb, job))
            kept.add(id(member))
    for member, q in fifo:
        if id(member) in kept or any(A[gen.XW] == math.inf for A in q):
            member.q = _deque()
            for A in q:
                job = sess(A).job = Job(sess(A), A[gen.XW], "plain", None, A[gen.XE], span_of(A))
                job.stage = member
                member.q.append(job)
    for f, node in enumerate(p.stages):
        if gen.fam_kind[f] != "ps":
            continue
        hs = [st[f"f{f}_h"]] if node.size == 1 else st[f"f{f}_h"]
        for m, hh in enumerate(hs):
            member = sim.stages[sim.stage_base[f] + m]
            v = st[f"f{f}_v"] if node.size == 1 else st[f"f{f}_v"][m]
            for tag, n, A in sorted((e for e in hh if drained or e[0] == math.inf), key=lambda e: (e[0], e[1])):
                work = tag - v if tag != math.inf else math.inf
                job = sess(A).job = Job(sess(A), work, "plain", None, A[gen.XE], span_of(A))
                job.stage, job.started, job.tag = member, A[gen.XT], tag
                member.heap.append((tag, n, job))
    for A in live.values():
        if id(A) in endless and sess(A).job is None:
            sess(A).job = Job(sess(A), math.inf, "plain", None, sim.now)
