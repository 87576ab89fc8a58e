"""Preparing a program once: expressions to Python code, statement blocks to generator functions.

Every expression becomes Python source in which an attribute is ``A[slot]`` (a list index), a context
variable ``C.name`` (``now`` is ``E.now``), a pool or stage a module-level name bound to its runtime object
(or a bounds-checked lookup when it has an index expression), and a draw a call on its stream's bound
``random`` method. The source of a whole program is compiled with one ``exec``.

The session block becomes one generator function. Commands that take no time run inline; a command that
waits (``hold``, ``run``, a ``grow`` that does not fit) calls the engine, which records where the session
waits, and then ``yield``\\ s; the engine resumes the generator when the session is ready again. A hold is
the loop::

    while True:
        E.hold(s, H)          # join the queue of the first pool
        try:
            yield             # admitted (a preemption may come before the body starts)
            ...body...
        except Preempted as x:
            if x.depth != d: raise
            continue          # re-execute the hold (computed is set by the engine)
        break
    E.end_hold(s)

so a preemption is ``gen.throw(Preempted(d))``, caught by the hold at stack depth ``d``.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from serq_ir import nodes as N
from serq_ir.analysis import taken_arm
from serq_ir.rules import MAX_MEMBERS, branch_with_draw, choose_problem, greatest, least

from . import fleet as _fleet
from . import fold, nankeys, rand
from .errors import Preempted, fmt_time, work_message
from .tier_env import forced_general

#: loops and trys open at once in one generated function (Python allows 20), and its deepest indentation
#: (Python allows 100): a statement nested deeper goes into a generator function of its own
NEST_LIMIT = 16
INDENT_LIMIT = 60
#: a block of more statements than this is compiled as functions of this many statements each (one
#: function of 20 000 took CPython's compiler 1 s and 400 MB; in pieces, a few MB at a time)
CHUNK = 64

#: passes of loop heads a session may make at one instant before its loop is an error (it never waits)
#: the work done inside one event between two readings of the clock under ``--max-wall`` or the progress
#: bar (:meth:`Simulation.pulse_out`): a unit is a session resumed, a pass of a loop at one instant, a
#: ``choose`` candidate, a ``queue by`` key, an entry or a block evicted, a preemption candidate, a job
#: whose share or progress a settle computes. Most units take under a few µs, but one may take far longer
#: (a session resumed that draws ``~erlang(100000, 1)``: some 60 ms), so the countdown adapts: it starts at
#: :data:`PULSE_FIRST` units, is halved (down to 1) after a countdown that took longer than
#: :data:`PULSE_SECONDS` and doubled (up to PULSE) after one that took less, so the clock is read every few
#: ms whatever a unit costs. Reading the clock changes nothing a run computes.
PULSE = 2048
PULSE_FIRST = 1
PULSE_SECONDS = 0.01
#: the countdown without a wall-clock bound or a progress bar: it runs out after a billion units of work
#: (then is set again), one small int's decrement a unit
NO_PULSE = (1 << 30) - 1
SPIN_LIMIT = 1_000_000
#: (what the passes did, not what the body has: one that reaches its run of time one pass in ten million,
#: `loop { branch with (1e-7) { run d (1); } }`, has one, and meets the guard some nine runs in ten)
SPIN_MESSAGE = (f"loop: {SPIN_LIMIT} passes at one instant without simulated time passing (none of them reached "
                "a run, hold or grow that took time; a `choose` of n candidates in it counts n passes)")


#: a loop's pass counts one pass of the spin guard per SPIN_BODY statements of its body, begun: a pass of a body
#: of 16 000 branches counted one, and SPIN_LIMIT passes of it took hours to reach the guard (every loop of the
#: tree's programs has fewer, and counts one)
SPIN_BODY = 64


def spin_weight(body: list) -> tuple[int, int]:
    """``(weight, size)``: the passes of the spin guard a pass of a loop of ``body`` counts, and the statements
    of the body (those of its blocks too)."""
    from serq_ir.analysis import blocks

    size = sum(len(b) for b in (body, *blocks(body)))
    return max(1, -(-size // SPIN_BODY)), size


def spin_message(now: float, weight: int = 1, size: int = 0) -> str:
    """:data:`SPIN_MESSAGE` at time ``now``; past 0 it says what time moves the clock there (half the spacing
    of the doubles at ``now``): at t = 1e16 a loop of ``run s (0.5)`` passes at one instant, as
    1e16 + 0.5 is 1e16, and the words "no run … that took time" alone did not say why. A loop whose pass
    counts ``weight`` passes (:func:`spin_weight`, its body of ``size`` statements) says so."""
    message = SPIN_MESSAGE
    if weight > 1:
        message = message.replace(" passes at one instant ", f" passes at one instant, a pass of its body of {size} "
                                  f"statements counting {weight} (one per {SPIN_BODY}, begun), ", 1)
    if not 0.0 < now < math.inf:
        return message
    return (message[:-1] + f"; at t={fmt_time(now)} a time below {fmt_time(math.ulp(now) / 2)} does not move "
            f"the clock: its doubles there are {fmt_time(math.ulp(now))} apart)")


#: "one instant" for the no-progress guards (the event loop's, Simulation.tick; a step stage's iterations of
#: no time): times within ZENO × max(|t|, 1 s) of the instant's start (about 1e-12 s near 0). A clock that
#: moves by steps far below any model's time scale (a loop of `run d (1e-300)`, arrivals at rate 1e300)
#: makes its events at ever new times and would take ~1e300 events to reach its horizon, which is a hang;
#: legitimate work at distinct times that close together is bounded as work at one instant is
ZENO = 2.0 ** -40


def instant_span(t0: float) -> float:
    """How long after ``t0`` the no-progress guard's instant that began at ``t0`` lasts (:data:`ZENO`)."""
    return ZENO * (t0 if t0 > 1.0 else -t0 if t0 < -1.0 else 1.0)


#: re-executions of preempted holds a session may make at one instant before its hold is an error (each is
#: a preemption, far dearer than a loop pass: a smaller limit stops the spin as soon)
REDO_LIMIT = 10_000
REDO_MESSAGE = (f"hold: preempted and re-executed {REDO_LIMIT} times at one instant without simulated time "
                "passing (its body makes the pool preempt it again before any time passes, as a grow beyond what "
                "the pool can ever give does, or one that the other holders leave no room for, where the pool "
                "preempts the grower itself)")


def _floor(x: float) -> float:
    try:
        return float(math.floor(x))
    except (OverflowError, ValueError):
        return x


def _ceil(x: float) -> float:
    try:
        return float(math.ceil(x))
    except (OverflowError, ValueError):
        return x


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else (x if x != x else math.nan)


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _ln(x: float) -> float:
    if x > 0:
        return math.log(x)
    if x == 0:
        return -math.inf
    return math.nan


def _pow(x: float, y: float) -> float:
    """``pow(x, y)`` as IEEE 754 has it (serq_frontend.consts folds it the same way): beyond the floats'
    range, or 0 to a negative power, an infinity, negative for a negative base (-0 too) to an odd whole
    power; a negative base to a power that is not whole is NaN, however large (the overflow made
    pow(-1e300, 2.5) inf and pow(-1e300, 3) inf, not NaN and -inf)."""
    try:
        r = x ** y
    except ZeroDivisionError:
        return -math.inf if math.copysign(1.0, x) < 0 and y % 2 == 1 else math.inf
    except OverflowError:
        if x < 0:
            return math.nan if y != int(y) else (-math.inf if y % 2 == 1 else math.inf)
        return math.inf
    # a negative base to a fractional power is complex: not a number here; ints (work() of an empty
    # stage is 0) power to ints
    return math.nan if isinstance(r, complex) else float(r)


def _not_nan(fn, sim, message: str, span):
    """``fn`` (an expression's ``(s, A, ctx)`` function) whose NaN or negative value is the run-time error
    ``message`` + what is wrong with it (errors.not_an_amount) at ``span``: a hold's lease time, a number of
    seconds as a run's work is (NaN was taken as inf, a lease for ever, and a negative time as 0)."""
    from .errors import not_an_amount

    def checked(s, A, ctx):
        t = fn(s, A, ctx)
        if t != t or t < 0.0:
            raise sim.error(f"{message} is {not_an_amount(t)}", None, s, span)
        return t

    return checked


def choose_message(name: str, n: float) -> str:
    """The run-time error of a ``choose`` whose count of candidates came out NaN, below 1, fractional or
    beyond :data:`serq_ir.rules.MAX_MEMBERS` (both tiers; it chose 0, was cut, or ran for ever). The count is
    shown as every run-time value is (serq_sim.errors.show: ``0.970374``, not its 17 digits), and the error
    points at the count's expression."""
    return f"choose {name}: {choose_problem(n, exact=False)}"


def _div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _mod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def _sum(*xs: float) -> float:
    t = xs[0]
    for x in xs[1:]:
        t = t + x
    return t


def _no_nan(keys: tuple) -> bool:
    """Whether no value of ``keys`` is NaN: each compared with itself (``operator.eq``, no identity shortcut:
    a tuple's own ``==`` takes a NaN for equal to itself), in C."""
    return all(map(operator.eq, keys, keys))


def _all_of(tests: list[str]) -> str:
    """The source of ``t0 & t1 & …``, every test evaluated in order. Up to 32 as one chain; more split in
    halves, ``(left) & (right)``, nesting as deep as the logarithm of their count: a chain nests as deep as
    it is long, and Python's compiler refuses a few thousand (a clause of 3 000 keys was a RecursionError)."""
    if len(tests) <= 32:
        return " & ".join(tests)
    half = len(tests) // 2
    return f"({_all_of(tests[:half])}) & ({_all_of(tests[half:])})"


#: the language's min and max (NaN passed over): serq_ir.rules, the linker's folding's too
_min = least
_max = greatest


HELPERS: dict[str, Any] = {
    "_floor": _floor, "_ceil": _ceil, "_sqrt": _sqrt, "_exp": _exp, "_ln": _ln, "_pow": _pow,
    "_div": _div, "_mod": _mod, "_sum": _sum, "_min": _min, "_max": _max, "_INF": math.inf, "_NAN": math.nan,
    "_log": math.log,
    "_Preempted": Preempted, "_d_exp": rand.d_exp, "_d_uniform": rand.d_uniform,
    "_d_erlang": rand.d_erlang, "_d_h2": rand.d_h2, "_d_bernoulli": rand.d_bernoulli,
    "_d_det": rand.d_det, "_k_det": rand.k_det, "_k_exp": rand.k_exp, "_k_uniform": rand.k_uniform, "_k_erlang": rand.k_erlang,
    "_k_h2": rand.k_h2, "_k_bernoulli": rand.k_bernoulli, "_k_branch_with": rand.k_branch_with,
    "_pu": rand.place_draw, "_part": functools.partial,
}

_FN = {"abs": "abs", "floor": "_floor", "ceil": "_ceil", "sqrt": "_sqrt", "exp": "_exp", "ln": "_ln",
       "pow": "_pow"}
_CMP = {"<", "<=", ">", ">=", "==", "!="}

#: Stream names as the generated code knows them.
RNG = {"arrivals": "_ra", "workload": "_rw", "session": "_rs", "eviction": "_re", "trace": "_rt", "places": "_rp"}


def state_dependent(e: N.Expr) -> bool:
    """Whether ``e`` reads anything but attributes and numbers (an observable, a context variable, a
    draw): its value may change while a session waits."""
    return reads(e, _not_pure)


#: a pool's observables written out in generated code, ``{p}`` the pool's code and ``{v}`` a temporary of
#: the function (the values of Simulation.obs_*: pools.prepared writes a hold's admission with them, and a
#: choose's loop its candidates' keys, Compiler.choose_fn)
POOL_OBS = {
    "cachedin": "({v}.size if ({v} := {p}.own.get(s.serial)) is not None else 0.0)",
    "holders": "float(len({p}.holders))",
    "queued": "float(len({p}.front) + len({p}.queue))",
    "used": "(+{p}.used)",  # (plain floats: the nearest double of an exact count, pools/exact.py)
    "free": "(+({p}.cap - {p}.used - {p}.reserved))",  # Simulation.obs_free
}


def _member_rows(varying: list, rows: tuple, members: dict[int, list]) -> tuple:
    """A fold's ``rows`` with the numbers at the positions of ``members`` (:meth:`Compiler.member_columns`)
    replaced by the members they index."""
    if len(varying) == 1:
        family = members[0]
        return tuple(family[int(v)] for v in rows)
    return tuple(tuple(members[k][int(v)] if k in members else v for k, v in enumerate(row)) for row in rows)


def _not_pure(e: N.Expr) -> bool:
    # numbers, attributes and the operators and functions over them; any other node reads state
    return not isinstance(e, (N.Num, N.Attr, N.Call, N.Unary, N.Binary, N.Cond))


def reads(e: N.Expr, pred, taken: bool = False) -> bool:
    """Whether some node of ``e`` satisfies ``pred``; with ``taken``, some node its evaluation can reach: of a
    conditional whose test is a number (a constant the linker folded, ``order == 0 ? last : size`` with ``let
    order = 0``), only the arm it always takes."""
    if pred(e):
        return True
    if isinstance(e, (N.Draw, N.Call)):
        return any(reads(a, pred, taken) for a in e.args)
    if isinstance(e, N.Observable):
        return any(reads(a, pred, taken) for a in e.args) or (
            e.target.index is not None and reads(e.target.index, pred, taken))
    if isinstance(e, N.Unary):
        return reads(e.arg, pred, taken)
    if isinstance(e, N.Binary):
        return reads(e.lhs, pred, taken) or reads(e.rhs, pred, taken)
    if isinstance(e, N.Cond):
        arm = taken_arm(e) if taken else None
        if arm is not None:
            return reads(arm, pred, True)
        return reads(e.test, pred, taken) or reads(e.then, pred, taken) or reads(e.orelse, pred, taken)
    return False


def reads_taken(e: N.Expr, pred) -> bool:
    """:func:`reads` of what ``e``'s evaluation can reach (``taken``)."""
    return reads(e, pred, True)


def _may_fail(e: N.Expr) -> bool:
    # a draw checks its computed parameters, an observable its member's index and kind
    return isinstance(e, (N.Draw, N.Observable))


def reads_any(exprs, pred) -> bool:
    """Whether some node of one of ``exprs`` (expressions, or None) satisfies ``pred``."""
    return any(e is not None and reads(e, pred) for e in exprs)


def reads_context(exprs, names) -> bool:
    """Whether one of ``exprs`` reads one of the context variables ``names``."""
    return reads_any(exprs, lambda e: isinstance(e, N.Ctx) and e.name in names)


def walk(node, presets: bool = True):
    """Every IR node in ``node`` and below it (every field of every struct, every item of every list),
    depth first; an ``Extension``'s parameters are the plugin's JSON, not IR, and are not entered, nor is
    a node's ``span`` (where its text is: a ``Span``, no node, on about every other struct). With
    ``presets`` false the workload's presets (numbers only: a ``Preset`` holds ``SlotValue`` rows, one
    preset a session) are not entered either.

    Inside :class:`kept_walks` the nodes of a walk made before (the same ``node`` object, the same
    ``presets``) are given again without walking."""
    kept = _kept_walks.get()
    if kept is None:
        return _walk(node, presets)
    found = kept.get((id(node), presets))
    if found is None or found[0] is not node:
        found = kept[(id(node), presets)] = (node, list(_walk(node, presets)))
    return iter(found[1])


#: a struct type's fields but its ``span``, last first (what the walk pushes on its stack)
_FIELDS_REVERSED: dict[type, tuple[str, ...]] = {}


def _walk(node, presets: bool):
    from msgspec import Struct

    stack = [node]
    pop, push = stack.pop, stack.append
    inner = (Struct, list, tuple)
    while stack:
        x = pop()
        if isinstance(x, Struct):
            yield x
            if isinstance(x, N.Extension):
                continue
            fields = _FIELDS_REVERSED.get(type(x))
            if fields is None:
                fields = _FIELDS_REVERSED[type(x)] = tuple(f for f in reversed(x.__struct_fields__) if f != "span")
            if not presets and isinstance(x, N.Workload):
                fields = tuple(f for f in fields if f != "presets")
            for f in fields:
                v = getattr(x, f)
                if isinstance(v, inner):  # a number, a string or None holds no node
                    push(v)
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(x))


class kept_walks:
    """``with kept_walks(): ...``: :func:`walk` keeps what it walks and gives the nodes of a walk of the same
    object again without walking. For the set-up of one simulation, which walks its program several times
    (the draws' places twice, the observables read, the record columns, the grown pools) and changes none
    of it; only there, as the IR's lists can be changed in place between two runs."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _kept_walks.set(_kept_walks.get() or {})

    def __exit__(self, *exc: object) -> None:
        _kept_walks.reset(self._token)


_kept_walks: ContextVar[dict[tuple[int, bool], tuple[Any, list[Any]]] | None] = ContextVar("serq_sim_walks",
                                                                                          default=None)


def places(program) -> dict[int, int]:
    """The draws of ``program``'s session block (with its holds' headers), by ``id``, numbered 0, 1, ...
    in the order :func:`walk` meets them: a draw's place."""
    out: dict[int, int] = {}
    for x in walk(program.session):
        if isinstance(x, N.Draw) and id(x) not in out:
            out[id(x)] = len(out)
    return out


def observables_read(program) -> set[str]:
    """The names of the observables some expression of ``program`` reads."""
    return {x.name for x in walk(program, presets=False) if isinstance(x, N.Observable)}


def num(v: N.Number) -> float:
    if isinstance(v, str):
        return math.inf if v == "inf" else -math.inf
    return float(v)


def clause_spans(st: N.Hold) -> dict:
    """Where each clause of the hold ``st`` is written: ``("units", k)`` and ``("reserve", k)`` of its pool k,
    ``"reuse"``, ``"cache"``, ``"lease"`` (the lease's time) and ``"lease pool"`` (the pool it names), the span
    of the clause's expression, else (an IR file without spans there, or no such clause) the hold's. A
    run-time error about a clause's value (NaN, negative; a lease's computed member the hold does not hold)
    points at the expression that gave it, as one about a stage's budget or cost does, and as the linker
    points at a constant one."""

    def at(e):
        return getattr(e, "span", None) or st.span

    lease = st.lease
    out: dict = {"reuse": at(st.reuse), "cache": at(st.cache), "lease": at(lease.time if lease else None),
                 "lease pool": at(lease.pool if lease else None)}
    for k, hp in enumerate(st.pools):
        out["units", k] = at(hp.units)
        out["reserve", k] = at(hp.reserve)
    return out


class HoldInfo:
    """A hold statement, prepared: its pools' references, units, reserves and clauses as functions
    ``f(s, A, C)``. ``units_dep[k]``: pool k's units read deployment state; ``static[k]``: pool k has a
    reserve that reads none (both decide rejection at queue time against over_cap at the end)."""

    __slots__ = ("pool_refs", "units", "reserves", "static", "reuse", "cache", "lease_ref", "lease_time",
                 "depth", "span", "node", "units_dep", "pure", "fast", "pools", "units_now", "at")

    def __init__(self):
        self.pool_refs: list = []
        #: the pools themselves when every one is named without an index (distinct: the linker refuses one
        #: named twice), else None (the references are evaluated at every hold)
        self.pools: list | None = None
        #: pool k's units are checked against its capacity when the hold queues: they read no deployment
        #: state (``units_dep``) and are not a number known, with the pool, to fit
        self.units_now: list[bool] = []
        self.units: list = []
        self.reserves: list = []
        self.static: list[bool] = []
        self.units_dep: list[bool] = []
        #: no pool's units or reserve reads state: the demand of a waiting hold never changes
        self.pure = True
        self.reuse = None
        self.cache = None
        self.lease_ref = None
        self.lease_time = None
        self.depth = 0
        self.span = None
        self.node = None
        #: where each clause's expression is written, which a run-time error about its value points at
        #: (:func:`clause_spans`)
        self.at: dict = {}
        #: the admission by a step stage prepared for this hold (:mod:`serq_sim.pools.prepared`), or None
        self.fast = None


class Compiler:
    """Compiles a program's expressions and blocks against one simulation's runtime objects."""

    def __init__(self, sim, program: N.Program):
        self.sim = sim
        self.program = program
        #: the check of the runs that may hold another member's memory (fleet.checker), made at the first
        self._fleet_check = None
        self.g: dict[str, Any] = dict(HELPERS)
        self.g["E"] = sim
        # a key that came out NaN (nankeys.seen): its session is the Session ``s`` of the generated code
        first = sim.nan_keys
        self.g["_nk"] = lambda places, t, s, keys: nankeys.seen(first, places, t, None if s is None else s.serial, keys)
        #: the clauses' key places the generated code names (kept here: :meth:`obj` names an object by its id)
        self.key_places: list = []
        for name, r in sim.rngs.items():
            self.g[RNG[name]] = r.random
        self._objs: dict[int, str] = {}
        self._codes: dict[str, Any] = {}
        self.spans: list = [None]
        self._span_ids: dict[int, int] = {}
        self.cur_span = 0
        self._n = 0
        #: the session block's draws by their place (common random numbers, rand.place_draw): the
        #: position of the draw among the draws of ``program.session``, depth first in the IR's order
        self.places: dict[int, int] = places(program)
        #: (size, member) of the stage family whose own expressions are being compiled: there a pool or
        #: stage family of that size named without an index is the member paired with the stage's own
        self.own: tuple[int, int] | None = None
        #: while compiling a :meth:`ctx_fn`: the context variables that are its arguments
        self.ctx_args: tuple[str, ...] | None = None
        #: the lean session code (guards that are comparisons tested as bools, a run of observes appended
        #: under one test of the warm-up, a record's row appended column by column, a step stage's run in
        #: one call, a hold's pools named without an index found once); SERQ_SIM_TIER=general gives the
        #: reference code instead (the same results, byte for byte: the differential tests compare them)
        self.lean = not forced_general()
        #: in the lean code, two-argument min and max, floor and ceil written out as expressions (no call;
        #: their operands kept in temporaries of the generated function); not in the fast tier's generator
        self.inline = self.lean and type(self) is Compiler
        #: the generated session code, by its file name (``<serq NAME>``): its lines, how the session being
        #: run is read from the locals of its frame, and the spans its marks index; a line ``# @sid N`` (a comment: it costs nothing)
        #: says that the lines after it run statement N of :attr:`spans`, ``# @sid -`` none (statement_at)
        self.sources: dict[str, tuple[list[str], Callable[[dict], Any], list]] = {}
        #: the statement whose code is being written (its spans index), None outside any
        self.stmt_sid: int | None = None
        #: while writing a choose's loop (:meth:`choose_fn`): the choose's attribute slot and the sizes of the
        #: families its keys index by it (a member named by the candidate is read as ``family[_j]``)
        self.choose_ix: tuple[int, list[int]] | None = None
        #: while writing a fold's first term (:meth:`fold`): the numbers that differ among its terms, by
        #: ``id``, and the name of each in the loop's row
        self.rows: dict[int, str] = {}
        #: of those numbers, the ``id`` of each that is a member index whose row holds the member itself
        #: (:meth:`member_columns`): the member is read as the row, not looked up and checked at every term
        self.member_rows: frozenset[int] = frozenset()
        #: how many long aggregates were written as loops (:meth:`fold`)
        self.folds = 0
        #: :func:`fold.plan` of each long aggregate outside any fold, by the call's ``id`` (with the call)
        self.fold_plans: dict[int, tuple[N.Call, Any]] = {}

    # ---------------------------------------------------------------- helpers
    def obj(self, o: Any, prefix: str = "_o") -> str:
        key = id(o)
        name = self._objs.get(key)
        if name is None:
            name = f"{prefix}{len(self._objs)}"
            self._objs[key] = name
            self.g[name] = o
        return name

    def span_id(self, span) -> int:
        if span is None:
            return self.cur_span
        k = id(span)
        i = self._span_ids.get(k)
        if i is None:
            i = len(self.spans)
            self.spans.append(span)
            self._span_ids[k] = i
        return i

    def fresh(self, stem: str) -> str:
        self._n += 1
        return f"{stem}{self._n}"

    # ------------------------------------------------------------ expressions
    def pool_ref(self, r: N.PoolRef, rng: str) -> str:
        sim = self.sim
        return self._member(r, rng, sim.pool_base[r.pool], self.program.pools[r.pool].size, sim.pools, "pool")

    def stage_ref(self, r: N.StageRef, rng: str) -> str:
        sim = self.sim
        return self._member(r, rng, sim.stage_base[r.stage], self.program.stages[r.stage].size, sim.stages,
                            "stage")

    def _member(self, r, rng: str, base: int, size: int, objs: list, what: str) -> str:
        """The code of a pool's or stage's member: the object itself when the reference has no index (in a
        step family's own expressions, the member paired with the stage's), else the checked lookup
        ``E.pool_at`` / ``E.stage_at`` of the computed index."""
        idx = r.index
        if idx is not None and id(idx) in self.member_rows:
            return self.rows[id(idx)]  # (a fold's row that holds the member: checked when the loop was made)
        if isinstance(idx, N.Num) and not (self.rows and id(idx) in self.rows):
            # a constant index (the linker's: a whole number in range), the member itself when it is built,
            # as E.pool_at / E.stage_at would give it at every evaluation (one out of range, as an IR built
            # elsewhere may hold, is left to them: refused where it is read, as before)
            v = num(idx.value)
            if 0.0 <= v < size and int(v) == v and objs[base + int(v)] is not None:
                return self.obj(objs[base + int(v)], "_p" if what == "pool" else "_s")
        if self._candidate(r, size):
            members = objs[base:base + size]
            if all(m is not None for m in members):  # (every member built: the loop reads them directly)
                return f"{self.obj(members, '_fm')}[_j]"
        if r.index is None:
            own = self.own
            if own is not None and size > 1 and own[0] == size:
                base += own[1]
            obj = objs[base]
            if obj is None:  # a stage not built yet: a stage's own expressions read it or a later one (at run time)
                return f"E.{what}s[{base}]"
            return self.obj(obj, "_p" if what == "pool" else "_s")
        return f"E.{what}_at({base}, {size}, {self.expr(r.index, rng)}, {self.span_id(getattr(r, 'span', None))}, s)"

    def _candidate(self, r, size: int) -> bool:
        """Whether member reference ``r`` is named by the candidate of the choose whose keys are being
        written (``choose_ix``: then the member may be read as the loop's ``_j``, unchecked, in the loop
        taken when the count is within every family so named; the family's size is noted for that test)."""
        ci = self.choose_ix
        if ci is not None and isinstance(r.index, N.Attr) and r.index.slot == ci[0]:
            ci[1].append(size)
            return True
        return False

    def expr(self, e: N.Expr, rng: str = "session") -> str:
        r = self.expr
        if isinstance(e, N.Num):
            if self.rows and id(e) in self.rows:  # a number that differs among a fold's terms: its row's
                return self.rows[id(e)]
            v = num(e.value)
            if v == math.inf:
                return "_INF"
            if v == -math.inf:
                return "(-_INF)"
            if v != v:
                return "_NAN"
            return repr(v)
        if isinstance(e, N.Attr):
            return f"A[{e.slot}]"
        if isinstance(e, N.Ctx):
            if e.name == "now":
                return "E.now"
            args = self.ctx_args
            if args is not None and e.name in args:
                return f"c_{e.name}"
            return f"C.{e.name}"
        if isinstance(e, N.Unary):
            if e.op == "-":
                return f"(-{r(e.arg, rng)})"
            return f"(0.0 if {self.nonzero(e.arg, rng)} else 1.0)"
        if isinstance(e, N.Binary) and e.op in ("&&", "||") and self.lean:
            return f"(1.0 if {self.truth(e, rng)} else 0.0)"
        if isinstance(e, N.Binary):
            a, b = r(e.lhs, rng), r(e.rhs, rng)
            op = e.op
            if op in ("+", "-", "*"):
                return f"({a} {op} {b})"
            if op == "/":
                if isinstance(e.rhs, N.Num) and num(e.rhs.value) not in (0.0,) and num(e.rhs.value) == num(
                        e.rhs.value) and id(e.rhs) not in self.rows:
                    return f"({a} / {b})"
                return f"_div({a}, {b})"
            if op == "%":
                return f"_mod({a}, {b})"
            if op in _CMP:
                return f"(1.0 if {a} {op} {b} else 0.0)"
            if op == "&&":
                return f"(1.0 if ({a} != 0.0 and {b} != 0.0) else 0.0)"
            if op == "||":
                return f"(1.0 if ({a} != 0.0 or {b} != 0.0) else 0.0)"
            raise ValueError(f"unknown operator {op!r}")
        if isinstance(e, N.Cond):
            return f"({r(e.then, rng)} if {self.nonzero(e.test, rng)} else {r(e.orelse, rng)})"
        if isinstance(e, N.Call):
            if len(e.args) > fold.LOOP_TERMS and e.fn in ("sum", "min", "max"):
                code = self.fold(e, rng)
                if code is not None:
                    return code
            args = [r(a, rng) for a in e.args]
            if e.fn == "sum":
                # the left fold, as ((a + b) + c) …; a long one through a helper (one call, however many
                # terms: the parser and compiler of Python refuse deep nesting)
                if len(args) == 1:
                    return args[0]
                if len(args) <= 32:
                    return "(" + " + ".join(args) + ")"
                return f"_sum({', '.join(args)})"
            if e.fn in ("min", "max"):
                if len(args) == 1:
                    return args[0]
                if len(args) == 2 and self.inline:
                    # max(a, b) is b when b > a or a is NaN, else a (min: b when b < a or a is NaN; _min),
                    # without the call: a, then b, evaluated once each, in order
                    a, b = self.fresh("_m"), self.fresh("_m")
                    op = "<" if e.fn == "max" else ">"
                    return f"({b} if ({a} := {args[0]}) {op} ({b} := {args[1]}) or {a} != {a} else {a})"
                return f"_{e.fn}({', '.join(args)})"
            if e.fn in ("floor", "ceil") and self.inline:
                # _floor / _ceil without the call: a finite x floor-divided by 1 is its floor exactly (+ 0.0
                # makes -0.0 the 0.0 that float(math.floor(x)) gives); NaN and ±inf are x itself
                v = self.fresh("_m")
                f = f"{v} // 1.0" if e.fn == "floor" else f"-((-{v}) // 1.0)"
                return f"({f} + 0.0 if -_INF < ({v} := {args[0]}) < _INF else {v})"
            return f"{_FN[e.fn]}({', '.join(args)})"
        if isinstance(e, N.Draw):
            rv = RNG[rng]
            args = [r(a, rng) for a in e.args]
            place = self.places.get(id(e)) if rng == "session" else None
            if place is not None and e.dist != "det":
                # a draw of the session block: its session's stream of (turn, place)
                if e.dist == "exp" and all(isinstance(a, N.Num) for a in e.args):
                    return f"(-{args[0]} * _log(1.0 - _pu({self.draw_state()}, {place})))"
                rv = f"_part(_pu, {self.draw_state()}, {place})"
            if not all(isinstance(a, N.Num) for a in e.args):
                # computed parameters are checked when the draw is made (constant ones were, at link time
                # or by serq_ir.validate); ~det's too, for NaN (rand.k_det)
                sid = self.span_id(getattr(e, "span", None))
                kind = "branch_with" if branch_with_draw(e) else e.dist
                return f"_k_{kind}({rv}, {', '.join(args)}, {self.draw_fail(sid)})"
            if e.dist == "exp":
                return f"(-{args[0]} * _log(1.0 - {rv}()))"
            if e.dist == "det":
                return f"({args[0]})"
            return f"_d_{e.dist}({rv}, {', '.join(args)})"
        if isinstance(e, N.Observable):
            return self.observable(e, rng)
        raise TypeError(f"not an expression: {e!r}")

    def fold(self, e: N.Call, rng: str) -> str | None:
        """The code of a long ``sum``, ``min`` or ``max`` whose terms are of one shape as the call of a loop
        (:mod:`serq_sim.fold`: the same terms evaluated in the same order, folded to the same double, without
        the code of every term or the tuple of their values); None when the terms are not of one shape."""
        if self.rows:  # (inside an enclosing fold's first term: the plan depends on its rows)
            found = fold.plan(e.args, self.rows)
        else:  # planned once for both tiers' generators (the general engine's compiler keeps the plans)
            plans = getattr(self.sim, "compiler", self).fold_plans
            kept = plans.get(id(e))
            if kept is None or kept[0] is not e:
                kept = plans[id(e)] = (e, fold.plan(e.args, self.rows))
            found = kept[1]
        if found is None:
            return None
        varying, rows = found
        members = self.member_columns(e.args[0], varying, rows)
        if members:
            rows = _member_rows(varying, rows, members)
        outer, outer_members = self.rows, self.member_rows
        # the numbers' names in the loop's row, other than an enclosing fold's (whose rows its code may read)
        base = len(set(outer.values()))
        names = [f"_ag_k{base + i}" for i in range(len(varying))]
        self.rows = {**outer, **{id(x): n for x, n in zip(varying, names)}}
        self.member_rows = outer_members | {id(varying[i]) for i in members}
        try:
            body = self.expr(e.args[0], rng)
        finally:
            self.rows, self.member_rows = outer, outer_members
        own = set(names)
        params = [n for n in fold.free_names(body) if n not in own]  # (an enclosing fold's row is passed in)
        f = fold.make(e.fn, body, names, params)
        self.folds += 1
        return f"{self.bind(f, '_ag')}({self.bind(rows, '_agK')}{''.join(', ' + n for n in params)})"

    def member_columns(self, term: N.Expr, varying: list, rows: tuple) -> dict[int, list]:
        """Of a fold's numbers that differ among its terms (``varying``, their ``rows``), those that are the
        member index of a pool or a stage family in the first term (``kv[q]`` of ``max q in N (used(kv[q]))``,
        written out as ``kv[0]``, ``kv[1]``, …) and whose every row is a member, a whole number in range as
        :meth:`Simulation.pool_at` requires, of members already built: their positions in ``varying``, each
        with the family's members. Their rows then hold the members themselves (:func:`_member_rows`), read
        as such (:meth:`_member`): a family of 256 engines with gauges over it looked up and checked 35
        million members in 5 s of simulated time. An index out of range is left to the lookup, which refuses
        it at its term as before."""
        at = {id(x): i for i, x in enumerate(varying)}
        found: dict[int, list] = {}
        for node in walk(term):
            if isinstance(node, N.PoolRef):
                base, size, objs = self.sim.pool_base[node.pool], self.program.pools[node.pool].size, self.sim.pools
            elif isinstance(node, N.StageRef):
                base, size, objs = self.sim.stage_base[node.stage], self.program.stages[node.stage].size, self.sim.stages
            else:
                continue
            k = at.get(id(node.index)) if isinstance(node.index, N.Num) else None
            if k is None:
                continue
            family = objs[base:base + size]
            column = rows if len(varying) == 1 else [row[k] for row in rows]
            if all(m is not None for m in family) and all(0.0 <= v < size and int(v) == v for v in column):
                found[k] = family
        return found

    def bind(self, o: Any, stem: str) -> str:
        """A name the generated code reads ``o`` by (a global of :attr:`g`)."""
        return self.obj(o, stem)

    def truth(self, e: N.Expr, rng: str = "session") -> str | None:
        """For an expression whose value can only be 1.0 or 0.0 (a comparison, ``&&``, ``||``, ``!``): the
        source of a Python bool, true when the value is 1.0 (evaluating what the value's code evaluates, in
        the same order); else None (always, for the reference code: see :attr:`lean`)."""
        if not self.lean:
            return None
        if isinstance(e, N.Binary):
            if e.op in _CMP:
                return f"({self.expr(e.lhs, rng)} {e.op} {self.expr(e.rhs, rng)})"
            if e.op in ("&&", "||"):
                a, b = self.nonzero(e.lhs, rng), self.nonzero(e.rhs, rng)
                return f"({a} {'and' if e.op == '&&' else 'or'} {b})"
        if isinstance(e, N.Unary) and e.op == "!":
            return f"(not {self.nonzero(e.arg, rng)})"
        return None

    def nonzero(self, e: N.Expr, rng: str = "session") -> str:
        """The source of the Python bool ``value of e != 0.0``."""
        t = self.truth(e, rng)
        return t if t is not None else f"({self.expr(e, rng)} != 0.0)"

    def draw_state(self) -> str:
        """The draw state (rand.place_state) of the session an expression is evaluated for."""
        return "s.draws"

    def draw_fail(self, sid: int) -> str:
        """The trailing arguments of a checked draw: ``fail, span id, session, time`` (``fail(message, sid,
        session, time)`` raises the run-time error)."""
        return f"{self.obj(self.sim.draw_fail, '_df')}, {sid}, s, E.now"

    def observable(self, e: N.Observable, rng: str) -> str:
        t = e.target
        ref = self.pool_ref(t, rng) if isinstance(t, N.PoolRef) else self.stage_ref(t, rng)
        args = "".join(", " + self.expr(a, rng) for a in e.args)
        if e.name in POOL_OBS and (self.choose_ix is not None and ref.endswith("[_j]") or e.name != "cachedin"
                                   and isinstance(t, N.PoolRef) and t.index is not None
                                   and id(t.index) in self.member_rows):
            # a candidate's pool, or a fold row's (not its cachedin: a gauge's has no session, E.obs_cachedin's 0)
            return POOL_OBS[e.name].format(p=ref, v=self.fresh("_v"))
        if e.name == "cachedin":
            return f"E.obs_cachedin({ref}, s)"
        if e.name == "member":  # the checked member's own index
            return f"float({ref}.index)"
        if isinstance(t, N.StageRef) and isinstance(self.program.stages[t.stage].kind, N.Extension):
            # a third party's stage: read through E.read_by, which tells a failure of its queue(), busy() or
            # work() where it was read (the statement) and by which session (serq_sim.guards.reading)
            return f"E.read_by(E.obs_{e.name}, {ref}, {self.cur_span}, s)"
        return f"E.obs_{e.name}({ref}{args})"

    def _lambda(self, body, span):
        """``lambda s, A, C: <body()>`` compiled, ``body()`` (the source of the value) generated with
        ``span`` (if any) as the current span."""
        old = self.cur_span
        if span is not None:
            self.cur_span = self.span_id(span)
        try:
            src = f"lambda s, A, C: {body()}"
        finally:
            self.cur_span = old
        return eval(self._code(src), self.g)  # noqa: S307 - our own generated code

    def _code(self, src: str):
        """``src``, an expression of generated code, compiled once (the members of a family of stages
        have the same budget, cost and chunk, most often written the same)."""
        code = self._codes.get(src)
        if code is None:
            code = self._codes[src] = compile(src, "<serq>", "eval")
        return code

    def fn(self, e: N.Expr | None, rng: str = "session", span=None):
        """``e`` as a function ``f(s, A, C)``; ``None`` stays ``None``."""
        if e is None:
            return None
        return self._lambda(lambda: self.expr(e, rng), span)

    def ctx_fn(self, e: N.Expr, names: tuple[str, ...], span=None):
        """``e`` as a function of the context variables ``names``, in that order, given as arguments
        (``f(*values)``, no context object): the same value as ``fn(e)(None, None, C)`` with ``C`` holding
        them (any other context variable reads NaN, as an unset one does)."""
        old = self.cur_span
        if span is not None:
            self.cur_span = self.span_id(span)
        self.ctx_args = names
        try:
            params = ", ".join(f"c_{n}" for n in names)
            src = f"lambda {params}, s=None, A=None, C=_NULL_CTX: {self.expr(e, 'session')}"
        finally:
            self.ctx_args = None
            self.cur_span = old
        if "_NULL_CTX" not in self.g:
            from .stages import Ctx

            self.g["_NULL_CTX"] = Ctx()
        return eval(self._code(src), self.g)  # noqa: S307 - our own generated code

    def keys_fn(self, keys: list[N.Expr], rng: str = "session", span=None, kind: str | None = None):
        """Several keys as one function returning a tuple; ``kind``, the clause they are the keys of (a key
        of :data:`serq_sim.nankeys.MEANING`): a key that comes out NaN is noted (:meth:`checked_keys`)."""
        if kind is None:
            return self._lambda(lambda: "(" + "".join(self.expr(k, rng) + ", " for k in keys) + ")", span)
        return self._lambda(lambda: self.checked_keys([self.expr(k, rng) for k in keys], keys, kind, span), span)

    def checked_keys(self, codes: list[str], keys: list[N.Expr], kind: str, span, one: bool = False) -> str:
        """The source of the tuple of the keys whose code is ``codes`` (of ``keys``, a ``kind`` clause whose
        owner is at ``span``), evaluated in order, each into a temporary tested against itself: when one is
        NaN, :func:`serq_sim.nankeys.seen` notes it (the report's warning ``nan-key``). The same values; one
        comparison a key when none is NaN. ``one``: the value of the one key, not a tuple (a choose of one
        key compares numbers)."""
        places = nankeys.key_places(kind, keys, span)
        self.key_places.append(places)
        if not codes:  # (an IR's clause of no keys: the empty tuple, no key to be NaN; `( if  else …)` was no code)
            return "()"
        if len(codes) > CHUNK:
            # many keys: their tuple in one name, tested in one call (a name and a test a key, written out,
            # made the code of a choose of 100 000 keys three times the size, a local variable a key)
            t = self.fresh("_nt")
            seen = self.nan_seen(self.bind(places, "_kp"), t, kind)
            return f"({t} if {self.bind(_no_nan, '_nn')}({t} := ({''.join(c + ', ' for c in codes)})) else {seen})"
        names = [self.fresh("_nq") for _ in codes]
        test = _all_of([f"(({n} := {c}) == {n})" for n, c in zip(names, codes)])
        tup = "(" + "".join(n + ", " for n in names) + ")"
        seen = self.nan_seen(self.bind(places, "_kp"), tup, kind)
        if one and len(names) == 1:
            return f"({names[0]} if {test} else {seen}[0])"
        return f"({tup} if {test} else {seen})"

    def nan_seen(self, places: str, keys: str, kind: str) -> str:
        """The call noting the NaN keys of the tuple ``keys`` (source) of the clause ``places`` (its name), a
        ``kind`` clause. A ``serve by`` key's time is when the resident's run joined the stage, not when the
        key is read: the per-job planning reads it at every iteration, the ranked residents once, at the join
        (step.stage.StepStage.attach), and both name the same time. An ``evict by`` key's session is the
        entry's owner (``C.owner``), which its expressions are not given once it has ended: the rule of the
        keys' run-time errors (serq_sim.errors.of_entry), which named it where the NaN named none."""
        if kind == "serve by":
            return f"_nk({places}, s.job.started if s is not None and s.job is not None else E.now, s, {keys})"
        if kind == "evict by":  # the entry's session, whether it lives or has ended (policies.evict_context)
            return f"_nk({places}, E.now, C.owner, {keys})"
        return f"_nk({places}, E.now, s, {keys})"

    def choose_fn(self, st: N.Choose, sid: int, kf: str) -> str:
        """The code of a function ``f(s, A, n)`` that does ``E.choose(s, A, slot, n, keys, sid)`` (``kf`` the
        keys' function) with the loop over the candidates written out: the keys evaluated inline for each
        (no call per candidate), a member of a family named by the candidate (``reqs[j]``) read from the
        family's list and a pool's observable of it written out (``pools.prepared`` writes them the same
        way), the same values compared in the same order; a count beyond a family indexed (an index error
        at its end) goes to ``E.choose``."""
        old_ix, old_span = self.choose_ix, self.cur_span
        self.choose_ix = (st.slot, [])
        self.cur_span = self.span_id(st.span)
        try:
            keys = [self.expr(k, "session") for k in st.keys]
            key = self.checked_keys(keys, st.keys, "choose", st.span, one=True)  # (one key: a number)
        finally:
            sizes = self.choose_ix[1]
            self.choose_ix, self.cur_span = old_ix, old_span
        name = self.fresh("_choose")
        lines = [f"def {name}(s, A, n):", "    C = E.null_ctx"]
        if sizes:
            lines.append(f"    if n > {float(min(sizes))!r}:")
            lines.append(f"        return E.choose(s, A, {st.slot}, n, {kf}, {sid})")
        lines += ["    n = int(n)",
                  "    E.pulse -= n  # its candidates are units of the event's work (Simulation.choose)",
                  "    if E.pulse < 0:",
                  f"        E.choose_out(n, {sid}, s)",
                  "    best = None",
                  "    bi = 0",
                  "    for _j in range(n):",
                  f"        A[{st.slot}] = float(_j)",
                  f"        k = {key}",
                  "        if best is None or k < best:",
                  "            best = k",
                  "            bi = _j",
                  "    return float(bi)"]
        return self.obj(self._define("\n".join(lines) + "\n", name[1:]), "_ch")

    # ------------------------------------------------------------- statements
    def session_fn(self, stmts: list[N.Stmt], name: str = "session"):
        """A generator function ``g(s)`` running ``stmts`` for session ``s``."""
        lines = [f"def _{name}(s):", "    A = s.attrs", "    C = E.null_ctx"]
        self._block(stmts, lines, 1, 0)
        lines += ["    return", "    yield"]
        src = "\n".join(lines) + "\n"
        fn = self._define(src, name)
        fn.__serq_source__ = src
        self.sources[fn.__code__.co_filename] = (lines, _session_serial, self.spans)
        return fn

    def plain_fn(self, stmts: list[N.Stmt], name: str, rng: str = "workload"):
        """A plain function ``f(s)`` for an ``init`` or ``turn`` block (``set``, ``observe`` and ``branch``
        over them)."""
        lines = [f"def _{name}(s):", "    A = s.attrs", "    C = E.null_ctx"]
        self._plain(stmts, lines, 1, name, rng)
        lines.append("    return")
        return self._define("\n".join(lines) + "\n", name)

    def _plain(self, stmts: list[N.Stmt], lines: list[str], ind: int, name: str, rng: str) -> None:
        """The statements of a plain block at indentation ``ind``: a run longer than CHUNK, and a branch
        nested deeper than Python's limits allow, become plain functions of their own, called in place."""
        pad = "    " * ind
        if not stmts:
            lines.append(pad + "pass")
            return
        if len(stmts) > CHUNK or ind > NEST_LIMIT:
            for k in range(0, len(stmts), CHUNK):
                fn = self.plain_fn(stmts[k:k + CHUNK], self.fresh("_plain")[1:], rng)
                lines.append(f"{pad}{self.obj(fn, '_pf')}(s)")
            return
        for st in stmts:
            self.cur_span = sid = self.span_id(getattr(st, "span", None))
            if isinstance(st, N.Set):
                lines.append(f"{pad}A[{st.slot}] = {self.expr(st.value, rng)}")
            elif isinstance(st, N.Observe):
                lines.append(f"{pad}E.observe(s, {st.observe}, {self.expr(st.value, rng)})")
            elif isinstance(st, N.Branch):
                self._branch(st, lines, pad, sid, rng, lambda arm: self._plain(arm, lines, ind + 1, name, rng))
            else:
                raise ValueError(f"a workload {name} block only sets, observes and branches, not "
                                 f"{type(st).__name__}")

    def _branch(self, st: N.Branch, out: list[str], pad: str, sid: int, rng: str, arm) -> None:
        """A branch at ``pad``, its arms written by ``arm(stmts)`` one level deeper (a session's block, or a
        plain block's): a guard that can only be 1 or 0 (a comparison, a logic operator) tested as a bool,
        any other held to 0 or 1 (else the statement's run-time error)."""
        t = self.truth(st.guard, rng)
        if t is not None:
            out.append(f"{pad}if {t}:")
            arm(st.then)
            if st.orelse:
                out.append(f"{pad}else:")
                arm(st.orelse)
            return
        g = self.fresh("_g")
        out.append(f"{pad}{g} = {self.expr(st.guard, rng)}")
        out.append(f"{pad}if {g} == 1.0:")
        arm(st.then)
        out.append(f"{pad}elif {g} == 0.0:")
        arm(st.orelse)
        out.append(f"{pad}else:")
        out.append(f"{pad}    E.guard_error(s, {g}, {sid})")

    def _define(self, src: str, name: str):
        """The function ``_name`` that ``src`` defines, compiled against the program's globals."""
        ns: dict[str, Any] = {}
        exec(compile(src, f"<serq {name}>", "exec"), self.g, ns)  # noqa: S102 - our own generated code
        return ns[f"_{name}"]

    def _sub(self, st: N.Stmt | list[N.Stmt], out: list[str], pad: str, depth: int, ret: str) -> None:
        """``st`` (a loop, branch or hold; or a run of statements) as a generator function of its own,
        delegated to with ``yield from``: Python refuses more than 20 statically nested blocks and 100
        indentation levels in one function, and compiling one function of thousands of statements takes
        seconds and hundreds of megabytes (``CHUNK``). The function returns True when the session ended
        in it (``end``)."""
        name = self.fresh("_sub")
        lines = [f"def {name}(s):", "    A = s.attrs", "    C = E.null_ctx"]
        self._block(st if isinstance(st, list) else [st], lines, 1, depth, 0, "return True")
        lines += ["    return False", "    yield"]
        fn = self._define("\n".join(lines) + "\n", name[1:])
        self.sources[fn.__code__.co_filename] = (lines, _session_serial, self.spans)
        ref = self.obj(fn, "_sg")
        out.append(f"{pad}if (yield from {ref}(s)):")
        out.append(f"{pad}    {ret}")

    def _block(self, stmts: list[N.Stmt], out: list[str], ind: int, depth: int, nest: int = 0,
               ret: str = "return") -> None:
        """``stmts`` at indentation ``ind`` with ``depth`` holds open and ``nest`` loops and trys open in this
        function; ``ret`` is how ``end`` leaves it. Each statement's code is headed by the comment
        ``# @sid N`` and the block's is followed by the enclosing statement's (:func:`statement_at`)."""
        outer = self.stmt_sid
        try:
            self._block_code(stmts, out, ind, depth, nest, ret)
        finally:
            self.stmt_sid = outer
            out.append(f"{'    ' * ind}# @sid {'-' if outer is None else outer}")

    def mark(self, out: list[str], pad: str, sid: int) -> None:
        """Head the code of the statement ``sid`` that follows in ``out`` with its mark (:func:`statement_at`)."""
        self.stmt_sid = sid
        out.append(f"{pad}# @sid {sid}")

    def _block_code(self, stmts: list[N.Stmt], out: list[str], ind: int, depth: int, nest: int, ret: str) -> None:
        pad = "    " * ind
        if not stmts:
            out.append(pad + "pass")
            return
        if len(stmts) > CHUNK:
            # a long run of statements: functions of CHUNK statements each, one after the other (what
            # one statement keeps in a local is read only inside it: splitting between two changes nothing; a
            # transfer's load and release, which share the member the load filled, go in one function)
            k = 0
            while k < len(stmts):
                e = min(k + CHUNK, len(stmts))
                if e < len(stmts) and e - 1 > k and _transfer_pair(stmts[e - 1], stmts[e]):
                    e -= 1
                self._sub(stmts[k:e], out, pad, depth, ret)
                k = e
            return
        i = 0
        while i < len(stmts):
            st = stmts[i]
            i += 1
            self.cur_span = sid = self.span_id(getattr(st, "span", None))
            self.mark(out, pad, sid)
            x = self.expr
            cost = 2 if isinstance(st, N.Hold) else 1 if isinstance(st, N.Loop) else 0
            if isinstance(st, (N.Loop, N.Branch, N.Hold)) and (nest + cost > NEST_LIMIT or ind > INDENT_LIMIT):
                self._sub(st, out, pad, depth, ret)
                continue
            if isinstance(st, N.Set):
                out.append(f"{pad}A[{st.slot}] = {x(st.value)}")
            elif isinstance(st, N.Observe) and not self.lean:
                # E.observe inlined: the value is taken whether or not the warm-up is over (it may draw)
                va, ta, sa, tu = (self.obj(f, "_oa") for f in self.sim.obs_app[st.observe])
                out.append(f"{pad}_ov = {x(st.value)}")
                out.append(f"{pad}if E.warm:")
                out.append(f"{pad}    {va}(_ov); {ta}(E.now); {sa}(s.serial); {tu}(int(A[1]))")
                self._samples_added(out, pad + "    ", 1)
            elif isinstance(st, N.Observe):
                # E.observe inlined, for a run of consecutive observes at once: every value that may draw
                # or fail is taken, in order, whether or not the warm-up is over, then the samples appended
                # (no time passes between them: the same time, session and turn)
                run = [st]
                while i < len(stmts) and isinstance(stmts[i], N.Observe):
                    run.append(stmts[i])
                    i += 1
                vals = []
                for k, ob in enumerate(run):
                    self.cur_span = self.span_id(getattr(ob, "span", None))
                    v = x(ob.value)
                    if reads(ob.value, _may_fail):
                        out.append(f"{pad}_ov{k} = {v}")
                        v = f"_ov{k}"
                    vals.append(v)  # else it has no effect and cannot fail: taken in the append
                out.append(f"{pad}if E.warm:")
                if len(run) > 1:
                    out.append(f"{pad}    _ot = E.now; _os = s.serial; _ou = int(A[1])")
                    at = ("_ot", "_os", "_ou")
                else:
                    at = ("E.now", "s.serial", "int(A[1])")
                for ob, v in zip(run, vals):
                    va, ta, sa, tu = (self.obj(f, "_oa") for f in self.sim.obs_app[ob.observe])
                    out.append(f"{pad}    {va}({v}); {ta}({at[0]}); {sa}({at[1]}); {tu}({at[2]})")
                self._samples_added(out, pad + "    ", len(run))
            elif isinstance(st, N.Record) and not self.lean:
                # one row, every column taken at once (the warm-up applies to whole rows, in the report)
                add = self.obj(self.sim.record_tables[st.record].add, "_ra")
                vals = ", ".join(x(v) for v in st.values)
                out.append(f"{pad}{add}(s.serial, int(A[1]), E.now, ({vals},))")
                self._token_close(out, pad)
                self._samples_added(out, pad, len(self.sim.record_tables[st.record].columns))
            elif isinstance(st, N.Record):
                # one row, every column taken at once (the warm-up applies to whole rows, in the report):
                # the values first (a draw or an observable may fail: no part of a row is appended), then
                # one append a column
                tab = self.sim.record_tables[st.record]
                vals = [x(v) for v in st.values]
                if reads_any(st.values, _may_fail):
                    for k, v in enumerate(vals):
                        out.append(f"{pad}_rv{k} = {v}")
                    vals = [f"_rv{k}" for k in range(len(vals))]
                apps = [self.obj(a, "_ra") for a in (tab.sessions.append, tab.turns.append, tab.times.append)]
                row = [f"{apps[0]}(s.serial)", f"{apps[1]}(int(A[1]))", f"{apps[2]}(E.now)"]
                row += [f"{self.obj(col.append, '_ra')}({v})" for col, v in zip(tab.values, vals)]
                out.append(pad + "; ".join(row))
                self._token_close(out, pad)
                self._samples_added(out, pad, len(tab.columns))
            elif isinstance(st, N.Turn):
                out.append(f"{pad}E.turn(s)")
            elif isinstance(st, N.End):
                out.append(f"{pad}{ret}")
            elif isinstance(st, N.Loop):
                # a loop whose iterations take no time would spin at one instant forever: past SPIN_LIMIT
                # passes of a loop head at one instant (the session's, whatever loop), it is an error
                weight, size = spin_weight(st.body)
                out += [f"{pad}while True:",
                        f"{pad}    if E.now == s.spin_t:",
                        f"{pad}        s.spin_k += {weight}",
                        f"{pad}        if s.spin_k > {SPIN_LIMIT}:",
                        f"{pad}            E.spin_error(s, {sid}, {weight}, {size})",
                        # a pass at one instant is a unit of the event's work (Simulation.pulse_out)
                        f"{pad}        E.pulse -= 1",
                        f"{pad}        if E.pulse < 0:",
                        f"{pad}            E.pulse_out('running a loop whose passes take no time', {sid}, s.serial)",
                        f"{pad}    else:",
                        f"{pad}        s.spin_t = E.now",
                        f"{pad}        s.spin_k = 0"]
                self._block(st.body, out, ind + 1, depth, nest + 1, ret)
            elif isinstance(st, N.Branch):
                self._branch(st, out, pad, sid, "session",
                             lambda arm, out=out: self._block(arm, out, ind + 1, depth, nest, ret))
            elif isinstance(st, N.Choose):
                kf = self.obj(self.keys_fn(st.keys, span=st.span, kind="choose"), "_k")
                # the count is a whole number of candidates, 1 to MAX_MEMBERS (choose_message, both tiers)
                out.append(f"{pad}_cn = {x(st.n)}")
                out.append(f"{pad}if not (1.0 <= _cn <= {float(MAX_MEMBERS)!r} and _cn == int(_cn)):")
                name = self.program.attributes[st.slot].name
                # (at the count's expression, as a clause's value is told: clause_spans)
                out.append(f"{pad}    raise E.error({self.obj(choose_message, '_cm')}({self.obj(name, '_nm')}, _cn), "
                           f"{self.span_id(getattr(st.n, 'span', None))}, s)")
                # a choose evaluates its keys for every candidate: at an instant its session's loop heads
                # passed, it counts a pass a candidate (SPIN_LIMIT passes of a choose of 100 000 candidates,
                # 10¹¹ keys, took days)
                out.append(f"{pad}if E.now == s.spin_t:")
                out.append(f"{pad}    s.spin_k += int(_cn) - 1")
                if self.lean:  # the loop written out (the reference calls the keys' function per candidate)
                    out.append(f"{pad}A[{st.slot}] = {self.choose_fn(st, sid, kf)}(s, A, _cn)")
                else:
                    out.append(f"{pad}A[{st.slot}] = E.choose(s, A, {st.slot}, _cn, {kf}, {sid})")
            elif isinstance(st, N.Hold):
                h = self.obj(self.hold_info(st, depth), "_h")
                out.append(f"{pad}while True:")
                out.append(f"{pad}    E.hold(s, {h})")
                out.append(f"{pad}    try:")
                out.append(f"{pad}        yield")
                self._block(st.body, out, ind + 2, depth + 1, nest + 2, ret)
                self.cur_span = sid
                out.append(f"{pad}    except _Preempted as _x:")
                out.append(f"{pad}        if _x.depth != {depth}:")
                out.append(f"{pad}            raise")
                # re-executed at the instant it was preempted, again and again, it would spin for ever
                out.append(f"{pad}        if E.now == s.redo_t:")
                out.append(f"{pad}            s.redo_k += 1")
                out.append(f"{pad}            if s.redo_k > {REDO_LIMIT}:")
                out.append(f"{pad}                E.redo_error(s, {sid})")
                out.append(f"{pad}        else:")
                out.append(f"{pad}            s.redo_t = E.now")
                out.append(f"{pad}            s.redo_k = 0")
                out.append(f"{pad}        continue")
                out.append(f"{pad}    break")
                out.append(f"{pad}E.end_hold(s)")
            elif isinstance(st, N.Grow):
                out.append(f"{pad}_r = E.grow(s, {self.pool_ref(st.pool, 'session')}, {x(st.amount)}, {sid})")
                out.append(f"{pad}if _r is not None:")
                out.append(f"{pad}    if _r is True:")
                out.append(f"{pad}        yield")
                out.append(f"{pad}    else:")
                out.append(f"{pad}        raise _r")
            elif isinstance(st, N.Drop):
                out.append(f"{pad}E.drop(s, {self.pool_ref(st.pool, 'session')})")
            elif isinstance(st, N.Release):
                if i >= 2 and _transfer_pair(stmts[i - 2], st):
                    # a transfer's release of its `from`: refused when it names the member the load filled
                    out.append(f"{pad}_tr = {self.pool_ref(st.pool, 'session')}")
                    out.append(f"{pad}if _tr is _tl:")
                    out.append(f"{pad}    E.transfer_error(s, _tr, {sid})")
                    out.append(f"{pad}E.transfer_release(s, _tr)")
                elif i >= 2 and _transfer_of(stmts[i - 2], st):  # a transfer's release of its `from`
                    out.append(f"{pad}E.transfer_release(s, {self.pool_ref(st.pool, 'session')})")
                else:
                    out.append(f"{pad}E.release(s, {self.pool_ref(st.pool, 'session')})")
            elif isinstance(st, N.Load):
                if i < len(stmts) and _transfer_pair(st, stmts[i]):  # a transfer's load of its `to`: kept
                    out.append(f"{pad}_tl = {self.pool_ref(st.pool, 'session')}")
                    out.append(f"{pad}E.load(s, _tl, {x(st.amount)}, {sid})")
                else:
                    out.append(f"{pad}E.load(s, {self.pool_ref(st.pool, 'session')}, {x(st.amount)}, {sid})")
            elif isinstance(st, N.Run):
                # A run of zero work completes at once: the session goes on without waiting (it keeps its
                # place among the sessions ready at this instant, so, e.g., two requests that finish in
                # one iteration release in the order the iteration served them). NaN goes to the engine,
                # which reports it; negative work is reported here.
                # (the stage, the work and the growing pool are evaluated in this order either way)
                if len(st.stages) == 1:
                    fast = self._fast_start(st)
                    if fast is not None:
                        out.append(f"{pad}_zw = {x(st.work)}")
                        call = f"{fast}(s, _zw, {sid})"
                    elif (step := self._step_start(st)) is not None:
                        out.append(f"{pad}_zw = {x(st.work)}")
                        g = "None" if st.growing is None else self.pool_ref(st.growing, "session")
                        call = f"{step}(s, _zw, {st.mode!r}, {g}, {sid})"
                    else:
                        out.append(f"{pad}_zs = {self.stage_ref(st.stages[0], 'session')}")
                        out.append(f"{pad}_zw = {x(st.work)}")
                        g = "None"
                        if st.growing is not None:
                            out.append(f"{pad}_zg = {self.pool_ref(st.growing, 'session')}")
                            g = "_zg"
                        call = f"E.run_job(s, _zs, _zw, {st.mode!r}, {g}, {sid})"
                        if _fleet.wanted(self.program, st.stages[0]):  # (another member's memory: fleet.py)
                            if self._fleet_check is None:
                                self._fleet_check = _fleet.checker(self.sim)
                            call = f"{self.obj(self._fleet_check, '_fm')}(s, _zs, {g}, {sid}); {call}"
                else:
                    stages = ", ".join(self.stage_ref(r, "session") for r in st.stages)
                    out.append(f"{pad}_zs = ({stages},)")
                    out.append(f"{pad}_zw = {x(st.work)}")
                    call = f"E.run_flow(s, _zs, _zw, {sid})"
                out.append(f"{pad}if _zw > 0.0 or _zw != _zw:")
                out.append(f"{pad}    {call}")
                out.append(f"{pad}    yield")
                # negative work is an error, as a negative hold amount is (errors.work_message, both tiers)
                out.append(f"{pad}elif _zw < 0.0:")
                out.append(f"{pad}    raise E.error({self.obj(work_message, '_wm')}(_zw), {sid}, s)")
            else:
                raise TypeError(f"unknown statement {type(st).__name__}")

    def _samples_added(self, out: list[str], pad: str, k: int) -> None:
        """``k`` samples added by an observe or a record (a row's columns): the countdown of the samples left
        (Simulation.samples_left, samples_out), so that ``--max-samples`` stops the run at the statement that
        makes it hold the bound, one decrement a statement."""
        out.append(f"{pad}E.samples_left -= {k}")
        out.append(f"{pad}if E.samples_left <= 0: E.samples_out()")

    def _token_close(self, out: list[str], pad: str) -> None:
        """A record ends the request's output tokens (step/tokens.py)."""
        from .step.tokens import TokenGaps

        close = self.obj(TokenGaps.close, "_tc")
        out.append(f"{pad}if s.tokst is not None: {close}(s, E.warm)")

    def _fast_start(self, st: N.Run) -> str | None:
        """A plain run on one stage named without an index, whose kind offers ``start(s, work, sid)``
        (``E.run_job`` and ``attach`` in one call): the name of that bound method, else None."""
        r = st.stages[0]
        if r.index is not None or st.growing is not None or st.mode != "plain":
            return None
        stage = self.sim.stages[self.sim.stage_base[r.stage]]
        if not vars(type(stage)).get("fast_start", False):
            return None
        start = stage.start
        return self.obj(start, "_st")

    def _step_start(self, st: N.Run) -> str | None:
        """A run on one stage named without an index (and growing a pool named without one, if any), whose
        kind offers ``start_run(s, work, mode, growing, sid)`` (``E.run_job`` and ``attach`` in one call, a
        step stage's): the name of that bound method, else None. Nothing of the run is evaluated but its
        work, as before (the stage and the pool are the objects themselves)."""
        r = st.stages[0]
        if not self.lean or r.index is not None or (st.growing is not None and st.growing.index is not None):
            return None
        stage = self.sim.stages[self.sim.stage_base[r.stage]]
        start = getattr(stage, "start_run", None)
        return None if start is None else self.obj(start, "_st")

    def hold_info(self, st: N.Hold, depth: int) -> HoldInfo:
        h = HoldInfo()
        h.depth = depth
        h.span = st.span
        h.node = st
        h.at = clause_spans(st)
        sp = st.span
        for hp in st.pools:
            h.pool_refs.append(self._lambda(lambda hp=hp: self.pool_ref(hp.pool, "session"), sp))
            h.units.append(self.fn(hp.units, span=sp))
            h.reserves.append(self.fn(hp.reserve, span=sp))
            h.units_dep.append(state_dependent(hp.units))
            h.static.append(hp.reserve is not None and not state_dependent(hp.reserve))
            if h.units_dep[-1] or (hp.reserve is not None and not h.static[-1]):
                h.pure = False
        if self.lean and all(hp.pool.index is None for hp in st.pools):
            pools = [ref(None, None, None) for ref in h.pool_refs]
            if len(set(map(id, pools))) == len(pools):
                h.pools = pools
        from .pools.model import EPS, refused_amount

        for k, hp in enumerate(st.pools):
            fits = False
            if h.pools is not None and isinstance(hp.units, N.Num):
                # a number the pool accepts (pools.model.refused_amount) that fits: nothing to check at the join
                u, pool = num(hp.units.value), h.pools[k]
                fits = not refused_amount(pool.cap, u) and not (pool.round_up(u) > pool.cap + EPS)
            h.units_now.append(not h.units_dep[k] and not fits)
        h.reuse = self.fn(st.reuse, span=sp)
        h.cache = self.fn(st.cache, span=sp)
        if st.lease is not None:
            h.lease_ref = self._lambda(lambda: self.pool_ref(st.lease.pool, "session"), sp)
            h.lease_time = _not_nan(self.fn(st.lease.time, span=sp), self.sim, "the lease time",
                                    h.at["lease"])
        from .pools.prepared import prepare

        h.fast = prepare(self, st, h)
        return h


def _transfer_of(load, release) -> bool:
    """Whether ``load`` and the statement after it, ``release``, are a ``transfer … from P to Q``'s last two, of
    any pools: a load and a release at one place (:func:`_transfer_pair` is the case of one family)."""
    return (isinstance(load, N.Load) and isinstance(release, N.Release) and load.span is not None
            and load.span == release.span)


def _transfer_pair(load, release) -> bool:
    """Whether ``load`` and the statement after it, ``release``, are a ``transfer … from P to Q``'s last two (the
    frontend writes a transfer as a run, ``load Q``, ``release P``, all three at the transfer's place): a load
    and a release of one pool family at one place. Its release is refused at run time when its member is the
    one the load filled (indexes that came out equal; the linker refuses equal constants): it would give back
    the very hold the load has just filled (rules.transfer_itself_message)."""
    return _transfer_of(load, release) and load.pool.pool == release.pool.pool


def _session_serial(f_locals: dict) -> int | None:
    """The serial of the session a frame of the general engine's session code runs (its argument ``s``)."""
    return getattr(f_locals.get("s"), "serial", None)


def _line_of(tb) -> int:
    """The line of the source a traceback entry stood at: ``tb.tb_lineno``, or, where the instruction it stood at
    has no line of its own (Python 3.11's ``None``: an instruction the compiler added, as the clean-up of a
    ``try``, where a signal's exception may land), the line of the nearest instruction before it that has one;
    0 when none has."""
    line = tb.tb_lineno
    if line is not None:
        return line
    last = 0
    for start, _end, at in tb.tb_frame.f_code.co_lines():
        if start > tb.tb_lasti:
            break
        if at is not None:
            last = at
    return last


def statement_at(compiler: Compiler, tb) -> tuple[Any, int | None] | None:
    """Where the traceback ``tb`` of an exception raised while a run went on (Ctrl-C, SIGTERM) stood in the
    session code generated for the run (``compiler.sources``), its innermost frame there: the span of the
    statement whose code ran, by the nearest ``# @sid`` mark above the line, and the serial of the session
    (None when the frame does not say); None when it stood in no statement's code (the engine's own, a
    stage's)."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        entry = compiler.sources.get(code.co_filename)
        if entry is not None:
            lines, serial_of, spans = entry
            k = _line_of(tb) - 1
            sid = None
            for j in range(min(k, len(lines) - 1), -1, -1):
                text = lines[j].lstrip()
                if text.startswith("# @sid "):
                    mark = text[7:].strip()
                    sid = int(mark) if mark.isdigit() else None
                    break
            span = spans[sid] if sid is not None and sid < len(spans) else None
            found = None if span is None else (span, serial_of(tb.tb_frame.f_locals))
        tb = tb.tb_next
    return found
