"""The serQ IR: the kernel of the language as msgspec Structs.

Every node is frozen and keyword-only and forbids unknown fields. Members of a union carry an internal
tag, ``"kind"``, so a decoder knows which node it reads. The frontend emits these nodes, the simulator
runs them, and a tool that knows what it wants to run may build them directly.

Conventions:

* Names are resolved. An attribute is a slot number into ``Program.attributes``; a pool or stage is a
  family number into ``Program.pools`` / ``Program.stages`` plus an optional member index expression;
  an observe is a number into ``Program.observes``.
* Constants are folded: ``let`` does not exist here, and every constant position holds a number.
  ``inf`` is written as the string ``"inf"`` (JSON has no infinity); see :data:`Number`.
* Every node made from source may carry a ``span`` (file, line, column) so that the simulator can
  point a run-time error at the program; a node written out of a definition's body names the uses that
  expanded it too (:class:`ExpandedSpan`). Spans are data about the program, not part of its meaning:
  :func:`serq_ir.strip_spans` removes them, and IR equivalence is judged without them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple, Union

import msgspec

#: The IR version this package reads and writes. Another version is refused on load.
#: 2: an observe declaration may be ``instant`` (its value is ``now`` at every site); a program may
#: declare tables of records (``records``, the statement ``Record``). Optional data about the source
#: added since (the arrival forms' spans, the run block's and an empty run block's own, ``RunSpans.block``, a
#: span's uses: :class:`ExpandedSpan`, the ``share``'s, ``Program.share_span``) keeps
#: version 2: an IR file written before reads as it did, and equivalence is judged without spans.
IR_VERSION = 2

#: A folded constant: a finite float, or ``"inf"`` / ``"-inf"``.
Number = Union[float, Literal["inf", "-inf"]]


#: A line or column of a span: 1-based (an IR file's ``[file, 0, -2]`` was taken, and a run-time error
#: there said ``p.sq:0:-2:`` with a caret at the line's start, or quoted the wrong line)
Place = Annotated[int, msgspec.Meta(ge=1)]

#: the most characters of a file's name in an IR file (a span's, a use's, the trace's, the source's): a path
#: the system opens is at most 4 096 bytes (PATH_MAX), and an error quotes its span's file whole, so a name of
#: ten million characters in an IR file made a run-time error of 10 MB on stderr
MAX_PATH = 4096
#: a file's name in an IR file: at most :data:`MAX_PATH` characters
FileName = Annotated[str, msgspec.Meta(max_length=MAX_PATH)]


#: why a file's name longer than :data:`MAX_PATH` is refused, an IR file's (serq_ir.codec) or a source's trace
#: clause's (:func:`long_file_name`)
FILE_NAME_BOUND = f"a file's name is at most {MAX_PATH} characters (a path the system opens)"


def long_file_name(whose: str, length: int) -> str:
    """The error of a file's name of ``length`` characters, more than :data:`MAX_PATH` (``whose``: ``"the
    trace's"``, ``"a span's"``), an IR file's or a source's trace clause's, in the same words."""
    return f"{whose} file name is {length} characters long; {FILE_NAME_BOUND}"


class Span(NamedTuple):
    """Where a node came from: ``[file, line, col]`` (1-based). A node the linker wrote out of a
    definition's body has an :class:`ExpandedSpan`, which names the uses too; this one no use expanded
    (``via`` is empty). A named tuple, not a struct: a span field is ``Span | ExpandedSpan``, and msgspec
    decodes a union of two structs only when both are tagged (a tag would be a fourth item of the array)."""

    file: FileName
    line: Place
    col: Place

    #: the uses that expanded the node: none
    via = ()


class Use(NamedTuple):
    """A use of a definition (or a queue's entry) that expanded a node: ``[name, file, line, col]``, the
    definition's name and where it was used. A named tuple as :class:`Span` is: msgspec names no place in
    the file when an array-like struct has too many items."""

    name: str
    file: FileName
    line: Place
    col: Place


#: The uses of an :class:`ExpandedSpan`: at least one (a node no use expanded has a :class:`Span`)
Uses = Annotated[tuple[Use, ...], msgspec.Meta(min_length=1)]


class ExpandedSpan(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where a node written out of a definition's body came from: its place in the body, and ``via``, the
    uses that expanded it, the innermost first (a definition used in another's body: the use in that body,
    then the use of the other). Written as an object, ``{"file": F, "line": L, "col": C, "via": [[name,
    file, line, col], …]}``, where a :class:`Span` is an array: msgspec writes every field of an array-like
    struct, defaults included, so a trailing ``via`` of :class:`Span` would have been written ``[]`` in
    every span of every IR file. This way a span no use expanded stays ``[file, line, col]``, as IR version
    2 has always written it. The linker shares one ``via`` among the nodes of one expansion."""

    file: FileName
    line: Place
    col: Place
    via: Uses


class _Node(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True,
            tag_field="kind", tag=True):
    """Base of every tagged node. The tag is the class name."""


# ---------------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------------

#: The context variables of §2. Each is readable only at its moment (the frontend's linker checks
#: that); the simulator supplies them where they exist.
ContextName = Literal[
    "now", "size", "age", "last", "waiting", "present", "residents", "decoders", "kv_decode",
    "kv_prefill", "tokens", "prefilled", "attention", "decoding", "admission", "remaining", "position",
    "waited",
]

#: Distributions of ``~name(args)``.
DrawName = Literal["exp", "det", "uniform", "erlang", "h2", "bernoulli"]

#: Pure functions of numbers. ``sum`` is the language's ``sum j in n (e)`` written out: the left fold
#: ``((a0 + a1) + a2) + …`` of its arguments, one node however many terms (a chain of ``Binary`` would nest
#: as deep as the sum is long).
FunctionName = Literal["min", "max", "abs", "floor", "ceil", "sqrt", "exp", "ln", "pow", "sum"]

#: Observables of pools and stages, ``name(target, args…)``. ``blocksize`` is folded at link time.
#: ``member`` is the index of the member its target names, of a pool or a stage (the language's
#: ``member(X)``; the linker writes a number when the index is one, so the node has a computed index, and
#: reading it checks that index as every reference does).
ObservableName = Literal[
    "queue", "busy", "work", "used", "free", "cachedin", "holders", "queued", "budget_left", "price",
    "est_lambda", "est_rho", "est_wait", "member",
]

UnaryOp = Literal["-", "!"]
BinaryOp = Literal["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]


class Num(_Node):
    """A number."""

    value: Number
    span: Span | ExpandedSpan | None = None


class Attr(_Node):
    """A session attribute, by slot."""

    slot: int
    span: Span | ExpandedSpan | None = None


class Ctx(_Node):
    """A context variable."""

    name: ContextName
    span: Span | ExpandedSpan | None = None


class Draw(_Node):
    """A random draw ``~name(args)`` from the session's stream."""

    dist: DrawName
    args: list[Expr]
    span: Span | ExpandedSpan | None = None


class Call(_Node):
    """A pure function of its arguments."""

    fn: FunctionName
    args: list[Expr]
    span: Span | ExpandedSpan | None = None


class PoolRef(_Node):
    """A member of a pool family: ``pools[pool]``, member ``index`` (absent for a family of one; also
    absent in a step family's own expressions, budget, chunk, cost and serve keys, for a family of the
    stage's size: there it is the member paired with the stage's member)."""

    pool: int
    index: Expr | None = None
    span: Span | ExpandedSpan | None = None


class StageRef(_Node):
    """A member of a stage family: ``stages[stage]``, member ``index`` (absent for a family of one, or as
    in :class:`PoolRef`, in a step family's own expressions for a family of its size)."""

    stage: int
    index: Expr | None = None
    span: Span | ExpandedSpan | None = None


Ref = Union[PoolRef, StageRef]


class Observable(_Node):
    """An observable of a pool or a stage: ``name(target, args…)``."""

    name: ObservableName
    target: Ref
    args: list[Expr] = []
    span: Span | ExpandedSpan | None = None


class Unary(_Node):
    op: UnaryOp
    arg: Expr
    span: Span | ExpandedSpan | None = None


class Binary(_Node):
    op: BinaryOp
    lhs: Expr
    rhs: Expr
    span: Span | ExpandedSpan | None = None


class Cond(_Node):
    """``test ? then : orelse``; a non-zero test is true."""

    test: Expr
    then: Expr
    orelse: Expr
    span: Span | ExpandedSpan | None = None


Expr = Union[Num, Attr, Ctx, Draw, Call, Observable, Unary, Binary, Cond]


# ---------------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------------


class Turn(_Node):
    """Load the next turn's attributes (workload ``turn`` block, trace row, or preset)."""

    span: Span | ExpandedSpan | None = None


class Set(_Node):
    slot: int
    value: Expr
    span: Span | ExpandedSpan | None = None


class Observe(_Node):
    """Record a sample of ``observes[observe]``."""

    observe: int
    value: Expr
    span: Span | ExpandedSpan | None = None


class Record(_Node):
    """Append one row to the table ``records[record]``: ``values`` in the order of its ``columns``, all
    taken at once (a row is never half-present); the simulator adds the session, turn and time."""

    record: int
    values: list[Expr]
    span: Span | ExpandedSpan | None = None


class HoldPool(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """One pool of a hold: the units it takes and the room it needs (``max(units, reserve)``)."""

    pool: PoolRef
    units: Expr
    reserve: Expr | None = None


class Lease(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """``lease POOL (t)``: the allocation on ``pool`` outlives the scope for ``time``."""

    pool: PoolRef
    time: Expr


class Hold(_Node):
    """``hold p1 (u1) reserve (r1), … reuse (ρ) { body } cache (ℓ) lease P (t)``.

    The session joins the queue of the first pool. ``cache`` absent is the memory-only hold (consumes no
    prefix, caches nothing); ``reuse`` absent with a cache clause consumes the whole own prefix.
    """

    pools: list[HoldPool]
    body: list[Stmt]
    reuse: Expr | None = None
    cache: Expr | None = None
    lease: Lease | None = None
    span: Span | ExpandedSpan | None = None


class Grow(_Node):
    pool: PoolRef
    amount: Expr
    span: Span | ExpandedSpan | None = None


class Drop(_Node):
    """Discard the session's own cached prefix in ``pool``."""

    pool: PoolRef
    span: Span | ExpandedSpan | None = None


class Release(_Node):
    """Give back the innermost enclosing hold's allocation on ``pool`` now, or end a lease of it."""

    pool: PoolRef
    span: Span | ExpandedSpan | None = None


class Load(_Node):
    """The KV of ``amount`` tokens arrived: the innermost hold's computed position on ``pool`` advances."""

    pool: PoolRef
    amount: Expr
    span: Span | ExpandedSpan | None = None


RunMode = Literal["plain", "prefill", "decode"]


class Run(_Node):
    """One job of ``work`` on one stage, or one flow holding several stages at once."""

    stages: list[StageRef]
    work: Expr
    mode: RunMode = "plain"
    growing: PoolRef | None = None
    span: Span | ExpandedSpan | None = None


class Branch(_Node):
    """``branch (guard) { then } else { orelse }``; the guard must be 0 or 1."""

    guard: Expr
    then: list[Stmt]
    orelse: list[Stmt] = []
    span: Span | ExpandedSpan | None = None


class Loop(_Node):
    body: list[Stmt]
    span: Span | ExpandedSpan | None = None


class Choose(_Node):
    """``choose x in n by (k…)``: ``slot`` := the index in ``0..n`` with the least keys (then the least index).

    Each key is evaluated with the candidate index in ``slot``.
    """

    slot: int
    n: Expr
    keys: list[Expr]
    span: Span | ExpandedSpan | None = None


class End(_Node):
    span: Span | ExpandedSpan | None = None


Stmt = Union[Turn, Set, Observe, Record, Hold, Grow, Drop, Release, Load, Run, Branch, Loop, Choose, End]


# ---------------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------------


class EvictLru(_Node):
    """Release time, then release order."""


class EvictBy(_Node):
    """Ascending keys (at the Evict moment), then release order."""

    keys: list[Expr]


class Extension(_Node):
    """A stage kind or policy a plugin provides: ``name`` as registered, ``params`` its own JSON value,
    which the owning plugin decodes (``msgspec.convert(params, ItsParams)``)."""

    name: str
    params: Any = None


Evict = Union[EvictLru, EvictBy, Extension]


class PreemptNone(_Node):
    """A grow that does not fit waits."""


class PreemptBy(_Node):
    """Preempt the candidate with the least keys (ties: the last admitted); ``lifo`` is
    ``by (-admission) requeue head``."""

    keys: list[Expr]
    requeue: Literal["head", "tail"] = "head"


Preempt = Union[PreemptNone, PreemptBy, Extension]


class QueueFifo(_Node):
    pass


class QueueBy(_Node):
    keys: list[Expr]


Queue = Union[QueueFifo, QueueBy]


class Spill(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """``spill TIER via LINK (work) when (pred)``."""

    tier: PoolRef
    link: StageRef
    work: Expr
    when: Expr


class Pool(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A family of ``size`` pools."""

    name: str
    size: int = 1
    #: declared with a size (``pool kv[N]``): a family even when N is 1, whose members the report
    #: labels ``kv[i]``; a pool declared without one is ``kv``
    array: bool = False
    cap: Number = "inf"
    #: each member's capacity, member i's at i, where the members' caps differ (``pool kv[2] { cap
    #: member(kv) == 0 ? 8000 : 2000; }``, a fleet of unlike GPUs); ``cap`` is then left out. Absent (an IR file
    #: written before it, or a family whose members share one cap), every member's is ``cap``
    caps: list[Number] | None = None
    block: float | None = None
    evict: Evict = EvictLru()
    preempt: Preempt = PreemptNone()
    queue: Queue = QueueFifo()
    reserve_held: bool = False
    #: ``cache scheduled``: a hold preempted while a step stage plans an iteration caches, with its computed
    #: prefix, the tokens that planning had given it (vLLM hashes a block when it allocates it)
    cache_scheduled: bool = False
    spill: Spill | None = None
    admit_via: int | None = None
    span: Span | ExpandedSpan | None = None


# ---------------------------------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------------------------------


class Fifo(_Node):
    servers: Number = 1.0


class Ps(_Node):
    """Throughput ``capacity`` (reads ``present``) shared equally."""

    capacity: Expr


class Delay(_Node):
    pass


class ServeBy(_Node):
    """Residents in ascending key order, then admission order (no keys: admission order)."""

    keys: list[Expr] = []


class ServeExclusivePrefill(_Node):
    pass


class Step(_Node):
    """The iteration-level engine of continuous batching."""

    budget: Expr
    cost: Expr
    chunk: Expr | None = None
    serve: ServeBy | ServeExclusivePrefill = ServeBy()
    memory: int | None = None
    #: False: the source gave no ``budget`` (``budget`` is then ``inf``), which ``serq check`` notes
    #: (serq_ir.analysis.budget_not_given) with the IR's spans or without them; written only when False
    budget_given: bool = True


StageKind = Union[Fifo, Ps, Delay, Step, Extension]


class Stage(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A family of ``size`` stages."""

    name: str
    kind: StageKind
    size: int = 1
    #: declared with a size (``stage E[N]``), as for :class:`Pool`
    array: bool = False
    span: Span | ExpandedSpan | None = None


# ---------------------------------------------------------------------------------------------------
# Workload, run, program
# ---------------------------------------------------------------------------------------------------


class Poisson(_Node):
    """An arrival at time 0, then exponential gaps of mean ``1 / rate``. The ``span`` of an arrival form
    (each has one) is the ``arrive`` it was written as: a run-time error of the workload points there."""

    rate: Number
    span: Span | ExpandedSpan | None = None


class Renewal(_Node):
    """The first arrival after one gap; gaps must be positive and finite."""

    gap: Expr
    span: Span | ExpandedSpan | None = None


class Closed(_Node):
    """``n`` sessions; each that ends is replaced at once."""

    n: int
    span: Span | ExpandedSpan | None = None


class Batch(_Node):
    """``n`` sessions at time 0."""

    n: int
    span: Span | ExpandedSpan | None = None


class NoArrivals(_Node):
    """No generated arrivals (the sessions are the presets, if any)."""


Arrive = Union[Poisson, Renewal, Closed, Batch, NoArrivals]


class SlotValue(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, array_like=True):
    """``[slot, value]``: an attribute preset."""

    slot: int
    value: float


class Preset(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A session given explicitly: it arrives at ``at`` with ``attrs`` set before ``init``; each
    ``turn`` statement loads the next entry of ``turns`` and sets ``more`` (1 while turns remain)."""

    at: float
    attrs: list[SlotValue] = []
    turns: list[list[SlotValue]] = []


class Trace(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Replay a CSV trace (``session,turn,new,out,think,forced``); ``ordered``: session i replays trace
    session i, otherwise each arrival samples a trace session."""

    path: FileName
    ordered: bool = False
    span: Span | ExpandedSpan | None = None


class Workload(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    arrive: Arrive = NoArrivals()
    presets: list[Preset] = []
    trace: Trace | None = None
    init: list[Stmt] = []
    turn: list[Stmt] = []


#: Where a run setting came from: the span of the setting in the run block (``arrivals 5;``), or the
#: command-line option that gave it, as written (``"--arrivals 5"``; serq.loading.apply_run_overrides)
Origin = Union[Span, str]


class RunSpans(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Where each setting of the run block came from (:data:`Origin`); absent for a setting not given, or
    one whose origin is not known (an IR written without it). A run-time error a setting causes (``run {
    arrivals N; }`` whose arrivals cannot all happen by the horizon, say) points there
    (serq_sim.errors.setting_error)."""

    horizon: Origin | None = None
    warmup: Origin | None = None
    seed: Origin | None = None
    arrivals: Origin | None = None
    #: the run block itself (its ``run``), given only for a block of no setting (``run { }``): where an error of
    #: a setting it does not give points (no horizon, serq.loading.no_horizon), which had no line. Absent for
    #: every other block (its settings' spans say where it is), so their IR is as it was
    block: Origin | None = None


class RunSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The run block. ``horizon`` ``None``: the program gives none (``serq run`` then needs
    ``--horizon``; ``serq_sim.run`` without one runs until no event is left). ``span``: where each
    setting came from (:class:`RunSpans`), optional as every span is (an IR file without it loads as
    before, IR version 2), and dropped with the other spans (``strip_spans``)."""

    horizon: Number | None = None
    warmup: float = 0.0
    seed: int = 1
    arrivals: int | None = None
    span: RunSpans | None = None


class Attribute(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A session attribute slot. ``builtin`` slots are the language's (``serial``, ``turn_no``,
    ``cached``, ``computed``, and with a trace ``new``, ``out``, ``think``, ``more``, ``forced``): the
    frontend marks them, and no reader takes the mark, only the names (:func:`serq_ir.analysis.builtin_slots`);
    ``hidden`` ones the scheduler may not read."""

    name: str
    builtin: bool = False
    hidden: bool = False


class ObserveDecl(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """An observation. ``test``: its expression is a test (outermost comparison, ``&&``, ``||``, ``!``)
    at every site; ``instant``: it is the clock, ``now``, at every site (an instant, not a duration: the
    report leaves it out of the observe table)."""

    name: str
    test: bool = False
    instant: bool = False


#: The columns the simulator gives every record: the session's serial, its turn number, the time the row
#: was recorded.
RECORD_OWN_COLUMNS = ("session", "turn", "time")


class RecordDecl(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A table of records (``record NAME { col = expr; … }``): its name and its columns, in order. A row
    whose column ``sent`` is before the warm-up's end is left out of the report (without a ``sent``
    column, the row's time decides)."""

    name: str
    columns: list[str]


class Gauge(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    name: str
    value: Expr
    span: Span | ExpandedSpan | None = None


class Constant(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, array_like=True):
    """``[name, value]``: a folded ``let``, kept for reports and tools (the IR never refers to it)."""

    name: str
    value: Number


Share = Literal["maxmin", "bottleneck"]


class Program(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True,
              weakref=True):
    """A whole serQ program. (It takes weak references: :mod:`serq_ir.folders` notes, for a program compiled
    in this process, the folder its relative file names are relative to, without keeping it alive.)"""

    version: int
    attributes: list[Attribute] = []
    constants: list[Constant] = []
    observes: list[ObserveDecl] = []
    records: list[RecordDecl] = []
    gauges: list[Gauge] = []
    pools: list[Pool] = []
    stages: list[Stage] = []
    workload: Workload = Workload()
    session: list[Stmt] = []
    share: str | None = None
    #: where ``share NAME;`` is written (optional data about the source, as every span: a program without a
    #: ``share`` has none, and an IR file written before it reads as it did), where a share policy's failure
    #: in the run points
    share_span: Span | ExpandedSpan | None = None
    run: RunSettings = RunSettings()
    source: FileName | None = None


#: The built-in attributes every program has, in slot order.
BUILTIN_ATTRIBUTES = ("serial", "turn_no", "cached", "computed")
#: The attributes a trace (or a preset's turns) supplies.
TRACE_ATTRIBUTES = ("new", "out", "think", "more", "forced")


def _evaluate_annotations() -> None:
    """Evaluate the nodes' annotations once, here: ``from __future__ import annotations`` keeps them as
    strings, which msgspec's decoder would evaluate one by one as typing forward references (each compiled
    on its own, about a millisecond of every process that decodes IR). Each distinct annotation is
    evaluated once, in this module's namespace, as the decoder would evaluate it; the types are the same."""
    namespace = globals()
    done: dict[str, Any] = {}
    for obj in list(namespace.values()):
        if isinstance(obj, type) and issubclass(obj, msgspec.Struct) and obj.__module__ == __name__:
            annotations = obj.__dict__.get("__annotations__") or {}
            for field, value in annotations.items():
                if isinstance(value, str):
                    if value not in done:
                        done[value] = eval(value, namespace)  # noqa: S307 - this module's own annotations
                    annotations[field] = done[value]


_evaluate_annotations()
