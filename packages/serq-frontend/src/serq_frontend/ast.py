"""The AST: dataclasses with a position each, what the parser builds and the rewrites transform.

Expressions are :class:`Num`, :class:`Var` (a name, a reference ``kv[j]`` or ``D[j].kv``, a dotted
attribute ``D.first_token``), :class:`Call` (a function, an observable or an expression definition),
:class:`Draw`, :class:`Unary`, :class:`Binary`, :class:`Cond` and the sugar :class:`Agg`. A reference in a
statement (``hold kv[j] (…)``) is a :class:`Var` too.

Statements and items are dataclasses. Every node class names its parts in three class attributes, which
the generic walks (:func:`map_stmt`, :func:`walk_stmts`) read: ``EXPRS`` (fields holding an expression or
``None``), ``EXPR_LISTS`` (lists of expressions), ``REFS`` (a reference or ``None``), ``REF_LISTS``,
``BLOCKS`` (statement lists). A sugar plugin's own statement classes declare the same attributes (a
subclass of :class:`Node` has them all, empty: a leaf), and its rewrite replaces them before the linker sees
the program; a statement whose class declares no ``BLOCKS`` is refused as its plugin's failure
(serq_frontend._shape_problem), since every walk reads it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Pos

# ---------------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Num:
    value: float
    pos: Pos


@dataclass(slots=True, eq=False)
class Var:
    """``a``, ``kv[j]``, ``D.kv[j]``, ``D[j].kv``: parts of a name, each with an optional index."""

    parts: list[tuple[str, Any]]
    pos: Pos

    @property
    def simple(self) -> str | None:
        """The name, when this is one name with no index."""
        if len(self.parts) == 1 and self.parts[0][1] is None:
            return self.parts[0][0]
        return None

    @property
    def dotted(self) -> str:
        return ".".join(p[0] for p in self.parts)

    def indexes(self) -> list[Any]:
        return [p[1] for p in self.parts if p[1] is not None]


@dataclass(slots=True, eq=False)
class Call:
    name: str
    args: list[Any]
    pos: Pos


@dataclass(slots=True, eq=False)
class Draw:
    dist: str
    args: list[Any]
    pos: Pos


@dataclass(slots=True, eq=False)
class Unary:
    op: str
    arg: Any
    pos: Pos


@dataclass(slots=True, eq=False)
class Binary:
    op: str
    lhs: Any
    rhs: Any
    pos: Pos


@dataclass(slots=True, eq=False)
class Cond:
    test: Any
    then: Any
    orelse: Any
    pos: Pos


@dataclass(slots=True, eq=False)
class Agg:
    """``max j in n (body)`` (sugar)."""

    op: str
    var: str
    n: Any
    body: Any
    pos: Pos
    #: where the index is written (for a message refusing its name)
    var_pos: Pos | None = None

    @property
    def var_at(self) -> Pos:
        """Where the index is written (the aggregate's place when that is not known)."""
        return self.var_pos or self.pos


Expr = Num | Var | Call | Draw | Unary | Binary | Cond | Agg


def name_at(item: Any) -> Any:
    """Where a declaration's name is written (its keyword's place when that is not known): a message refusing
    the name is at the name."""
    return getattr(item, "name_pos", None) or item.pos


def expr_children(e: Any) -> list[Any]:
    t = type(e)
    if t is Num:
        return []
    if t is Var:
        return [i for _, i in e.parts if i is not None]
    if t is Call or t is Draw:
        return e.args
    if t is Unary:
        return [e.arg]
    if t is Binary:
        return [e.lhs, e.rhs]
    if t is Cond:
        return [e.test, e.then, e.orelse]
    if t is Agg:
        return [e.n, e.body]
    return []


def walk_expr(e: Any) -> Iterator[Any]:
    """Every node of ``e``, ``e`` first."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(expr_children(x))


def expr_size(e: Any) -> int:
    """The number of nodes of ``e``."""
    return sum(1 for _ in walk_expr(e))


def map_expr(e: Any, f: Callable[[Any], Any | None]) -> Any:
    """A copy of ``e`` where ``f`` replaces the nodes it returns something for (top-down: a replaced
    node's children are not visited)."""
    r = f(e)
    if r is not None:
        return r
    t = type(e)
    if t is Num:
        return e
    if t is Var:
        if all(i is None for _, i in e.parts):
            return e
        return Var([(n, None if i is None else map_expr(i, f)) for n, i in e.parts], e.pos)
    if t is Call:
        return Call(e.name, [map_expr(a, f) for a in e.args], e.pos)
    if t is Draw:
        return Draw(e.dist, [map_expr(a, f) for a in e.args], e.pos)
    if t is Unary:
        return Unary(e.op, map_expr(e.arg, f), e.pos)
    if t is Binary:
        return Binary(e.op, map_expr(e.lhs, f), map_expr(e.rhs, f), e.pos)
    if t is Cond:
        return Cond(map_expr(e.test, f), map_expr(e.then, f), map_expr(e.orelse, f), e.pos)
    if t is Agg:
        return Agg(e.op, e.var, map_expr(e.n, f), map_expr(e.body, f), e.pos, e.var_pos)
    return e


def draws(e: Any) -> bool:
    return any(type(x) is Draw for x in walk_expr(e))


# ---------------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------------


class Node:
    EXPRS: tuple[str, ...] = ()
    EXPR_LISTS: tuple[str, ...] = ()
    REFS: tuple[str, ...] = ()
    REF_LISTS: tuple[str, ...] = ()
    BLOCKS: tuple[str, ...] = ()


@dataclass(slots=True, eq=False)
class STurn(Node):
    pos: Pos


@dataclass(slots=True, eq=False)
class SEnd(Node):
    pos: Pos


@dataclass(slots=True, eq=False)
class SSet(Node):
    name: str
    value: Any
    pos: Pos
    EXPRS = ("value",)


@dataclass(slots=True, eq=False)
class SObserve(Node):
    name: str
    value: Any
    pos: Pos
    EXPRS = ("value",)


@dataclass(slots=True, eq=False)
class SRecord(Node):
    """``record NAME { col = expr; … }``: one row of the table NAME, every column at once."""

    name: str
    cols: list[str]
    values: list[Any]
    pos: Pos
    col_pos: list[Pos]
    EXPR_LISTS = ("values",)


@dataclass(slots=True, eq=False)
class HoldPool(Node):
    ref: Var
    units: Any
    reserve: Any = None
    EXPRS = ("units", "reserve")
    REFS = ("ref",)


@dataclass(slots=True, eq=False)
class Binding:
    name: str
    value: Any
    pos: Pos


@dataclass(slots=True, eq=False)
class SHold(Node):
    pools: list[HoldPool]
    body: list[Any]
    pos: Pos
    reuse: Any = None
    bindings: list[Binding] = field(default_factory=list)
    cache: Any = None
    lease: Var | None = None
    lease_time: Any = None
    EXPRS = ("reuse", "cache", "lease_time")
    REFS = ("lease",)
    BLOCKS = ("body",)


@dataclass(slots=True, eq=False)
class SGrow(Node):
    ref: Var
    amount: Any
    pos: Pos
    EXPRS = ("amount",)
    REFS = ("ref",)


@dataclass(slots=True, eq=False)
class SDrop(Node):
    ref: Var
    pos: Pos
    REFS = ("ref",)


@dataclass(slots=True, eq=False)
class SRelease(Node):
    ref: Var
    pos: Pos
    #: what the program wrote: ``release``, or the ``transfer … from`` (a queue call's ``from``) that gives
    #: the KV's source back (a message names it)
    verb: str = "release"
    REFS = ("ref",)


@dataclass(slots=True, eq=False)
class SLoad(Node):
    ref: Var
    amount: Any
    pos: Pos
    #: what the program wrote: ``load``, or the ``transfer … to`` whose KV lands here (a message names it)
    verb: str = "load"
    EXPRS = ("amount",)
    REFS = ("ref",)


@dataclass(slots=True, eq=False)
class SRun(Node):
    """``run a, b mode (work) growing g``; no stages: the queue's own (inside an entry)."""

    stages: list[Var]
    mode: str
    work: Any
    pos: Pos
    growing: Var | None = None
    EXPRS = ("work",)
    REFS = ("growing",)
    REF_LISTS = ("stages",)


@dataclass(slots=True, eq=False)
class SBranch(Node):
    guard: Any
    then: list[Any]
    orelse: list[Any]
    pos: Pos
    EXPRS = ("guard",)
    BLOCKS = ("then", "orelse")


@dataclass(slots=True, eq=False)
class SBranchWith(Node):
    prob: Any
    then: list[Any]
    orelse: list[Any]
    pos: Pos
    EXPRS = ("prob",)
    BLOCKS = ("then", "orelse")


@dataclass(slots=True, eq=False)
class SLoop(Node):
    body: list[Any]
    pos: Pos
    BLOCKS = ("body",)


@dataclass(slots=True, eq=False)
class SChoose(Node):
    name: str
    n: Any
    keys: list[Any]
    pos: Pos
    EXPRS = ("n",)
    EXPR_LISTS = ("keys",)


@dataclass(slots=True, eq=False)
class SRequest(Node):
    gateway: str | None
    pos: Pos
    #: where the gateway's name came from when a definition's parameter put it there (its argument's
    #: place); ``None``: it is written in the statement (:func:`name_place`)
    name_pos: Pos | None = None


@dataclass(slots=True, eq=False)
class SMark(Node):
    name: str
    pos: Pos


@dataclass(slots=True, eq=False)
class SServing(Node):
    """``prefill|decode|tool [ [j] | on S, … ] work [growing g];``"""

    verb: str
    index: Any
    on: list[Var]
    work: Any
    pos: Pos
    growing: Var | None = None
    EXPRS = ("index", "work")
    REFS = ("growing",)
    REF_LISTS = ("on",)


@dataclass(slots=True, eq=False)
class STransfer(Node):
    """``transfer [ [j] | on S, … ] work from P to Q (amount);``"""

    index: Any
    on: list[Var]
    work: Any
    src: Var
    dst: Var
    amount: Any
    pos: Pos
    pulled: bool = False
    EXPRS = ("index", "work", "amount")
    REFS = ("src", "dst")
    REF_LISTS = ("on",)


@dataclass(slots=True, eq=False)
class SDefCall(Node):
    name: str
    args: list[Any]
    pos: Pos
    EXPR_LISTS = ("args",)


@dataclass(slots=True, eq=False)
class SQCall(Node):
    """``Q[i].verb (args) [from S[k]] [to P (m)];``"""

    queue: str
    index: Any
    verb: str
    args: list[Any]
    pos: Pos
    src: Var | None = None
    to: Var | None = None
    to_amount: Any = None
    #: where the queue's name came from when a definition's parameter put it there (its argument's place);
    #: ``None``: it is written in the statement, at ``pos`` (:func:`name_place`)
    name_pos: Pos | None = None
    EXPRS = ("index", "to_amount")
    EXPR_LISTS = ("args",)
    REFS = ("src", "to")


# ---------------------------------------------------------------------------------------------------
# Items
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class Let(Node):
    name: str
    value: Any
    pos: Pos
    #: where the name is written (for a message refusing it)
    name_pos: Pos | None = None


#: the pool options the linker reads (another is a sugar layer's own, for it to rewrite)
KERNEL_POOL_OPTIONS = frozenset({"cap", "block", "evict_lru", "evict_by", "evict_ext", "preempt_ext", "preempt_none",
                                 "preempt_lifo", "preempt_by", "queue_fifo", "queue_by", "reserve_held", "admit_via",
                                 "spill", "cache_computed", "cache_scheduled"})
#: the stage kinds the linker reads (another is a sugar layer's own, for it to rewrite)
KERNEL_STAGE_KINDS = frozenset({"fifo", "ps", "delay", "step", "ext"})
#: the workload's items the linker reads (``session`` it refuses, naming the layer that gives it; another is a
#: sugar layer's own, for it to rewrite)
KERNEL_WORKLOAD_ITEMS = frozenset({"arrive", "trace", "init", "turn", "hidden", "session"})


@dataclass(slots=True, eq=False)
class PoolOpt:
    kind: str
    args: list[Any]
    pos: Pos
    extra: Any = None


@dataclass(slots=True, eq=False)
class PoolItem(Node):
    name: str
    size: Any
    opts: list[PoolOpt]
    pos: Pos
    #: where the name is written (for a message refusing it)
    name_pos: Pos | None = None


@dataclass(slots=True, eq=False)
class ExtRef:
    """``@name`` or ``@name(args)``: a plugin's stage kind or policy by its registered name. ``args``
    holds ``(name or None, expr, pos)``: a named argument has its name, a positional one ``None``."""

    name: str
    args: list[tuple[str | None, Any, Pos]]
    pos: Pos


@dataclass(slots=True, eq=False)
class Kind:
    """A stage kind: ``fifo`` (args: count or None), ``ps`` (capacity), ``delay``, ``step`` (fields),
    ``ext`` (a plugin's: arg is its :class:`ExtRef`)."""

    kind: str
    pos: Pos
    arg: Any = None
    #: a step stage's fields, each ``(value, pos)``
    fields: dict[str, tuple[Any, Pos]] = field(default_factory=dict)

    #: what ``arg`` holds, by kind, beyond an expression or None (serq_frontend._shape_problem holds a
    #: plugin's node to it)
    ARGS = {"ext": ExtRef}


@dataclass(slots=True, eq=False)
class StageItem(Node):
    name: str
    size: Any
    kind: Kind
    pos: Pos
    #: where the name is written (for a message refusing it)
    name_pos: Pos | None = None


@dataclass(slots=True, eq=False)
class WlItem:
    kind: str
    pos: Pos
    arg: Any = None
    extra: Any = None

    #: what ``arg`` holds, by kind, where it is not an expression, None or a statement block (the blocks:
    #: ``WL_BLOCKS``): ``hidden``'s names with their places, ``trace``'s file name (serq_frontend._shape_problem
    #: holds a plugin's item to it, the linker reads it so)
    ARGS = {"hidden": list[tuple[str, Pos]], "trace": str}


@dataclass(slots=True, eq=False)
class WorkloadItem(Node):
    items: list[WlItem]
    pos: Pos


@dataclass(slots=True, eq=False)
class SessionItem(Node):
    body: list[Any]
    pos: Pos


@dataclass(slots=True, eq=False)
class ServerItem(Node):
    body: list[Any]
    pos: Pos


@dataclass(slots=True, eq=False)
class RunItem(Node):
    fields: list[tuple[str, Any, Pos]]
    pos: Pos


@dataclass(slots=True, eq=False)
class ShareItem(Node):
    policy: str
    pos: Pos


@dataclass(slots=True, eq=False)
class GaugeItem(Node):
    name: str
    value: Any
    pos: Pos


@dataclass(slots=True, eq=False)
class DefItem(Node):
    name: str
    params: list[str]
    expr: Any
    body: list[Any] | None
    pos: Pos
    #: where the name and each parameter are written (for a message about one of them)
    name_pos: Pos | None = None
    param_pos: list[Pos] = field(default_factory=list)

    def at_param(self, i: int) -> Pos:
        """Where the ``i``-th parameter is written (the definition's place when that is not known)."""
        return self.param_pos[i] if i < len(self.param_pos) else self.pos


@dataclass(slots=True, eq=False)
class UseItem(Node):
    path: str
    pos: Pos


@dataclass(slots=True, eq=False)
class QEntry:
    verb: str
    params: list[str]
    src: str | None
    body: list[Any]
    pos: Pos
    #: where each parameter is written (for a message about one of them)
    param_pos: list[Pos] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class QueueItem(Node):
    name: str
    size: Any
    roles: list[tuple[str, Pos]]
    pools: list[PoolItem]
    serve: Kind | None
    latency: Any
    nic: Kind | None
    entries: list[QEntry]
    pos: Pos
    order_errors: list[tuple[Pos, str]] = field(default_factory=list)
    #: where the name is written (for a message refusing it)
    name_pos: Pos | None = None
    #: where the serve's clause ``latency x`` begins, its word ``latency`` (for a message refusing it)
    latency_pos: Pos | None = None


@dataclass(slots=True, eq=False)
class PullItem(Node):
    reader: str
    source: str
    latency: Any
    share: str
    pos: Pos


@dataclass(slots=True, eq=False)
class Module:
    """A parsed file: its items, in order."""

    items: list[Any]
    file: str


# ---------------------------------------------------------------------------------------------------
# Generic walks over statements
# ---------------------------------------------------------------------------------------------------


def own_text(p: Pos) -> bool:
    """Whether a node at ``p`` is of the text of the body it stands in (a definition's, a queue entry's), where
    a parameter of that body is read as its argument: a name that came into the body from a definition the
    body uses has the place of that use in its ``uses`` and is that definition's, the program's
    (program-reference.txt, def: "Only the parameters are the definition's own. Every other name in the body
    is the program's"), whatever the parameters are called; an argument keeps the place it is written at.
    The one rule of the definitions', the entries' and (:func:`same_text`) the aggregates' and bindings'
    substitutions."""
    return p.uses is None


def same_text(a: Any, x: Any) -> bool:
    """Whether the nodes ``a`` and ``x`` are of one text: both written where they stand, or both written out
    from the same expansion of a definition's or an entry's body (:func:`own_text`'s rule for a name read by
    an aggregate's index or an `at admission` binding rather than by a body's parameter)."""
    return a.pos.uses == x.pos.uses


def name_place(s: SRequest | SQCall) -> Pos:
    """Where the gateway's name of a ``request gw;`` or the queue's name of a queue call came from: the
    argument's place when a definition's parameter put it there, else the statement's own; as an
    expression's name has its place, whose ``uses`` say whether it came from a definition's body."""
    return s.name_pos if s.name_pos is not None else s.pos


def map_stmt(s: Any, fe: Callable[[Any], Any] | None = None, fr: Callable[[Any], Any] | None = None,
             fb: Callable[[list[Any]], list[Any]] | None = None,
             fp: Callable[[Pos], Pos] | None = None) -> Any:
    """A shallow copy of ``s`` with ``fe`` applied to its expressions, ``fr`` to its references,
    ``fb`` to its blocks and ``fp`` to its own position and its bindings' (each may be ``None``: left as
    is)."""
    cls = type(s)
    n = copy.copy(s)
    if cls is SHold:
        n.pools = [map_stmt(p, fe, fr, fb) for p in s.pools]
        if fe is not None or fp is not None:
            n.bindings = [Binding(b.name, b.value if fe is None else fe(b.value),
                                  b.pos if fp is None else fp(b.pos)) for b in s.bindings]
    if fp is not None and hasattr(s, "pos"):
        n.pos = fp(s.pos)
        if (cls is SRequest or cls is SQCall) and s.name_pos is not None:
            n.name_pos = fp(s.name_pos)
    if fe is not None:
        for a in cls.EXPRS:
            v = getattr(s, a)
            if v is not None:
                setattr(n, a, fe(v))
        for a in cls.EXPR_LISTS:
            setattr(n, a, [fe(v) for v in getattr(s, a)])
    if fr is not None:
        for a in cls.REFS:
            v = getattr(s, a)
            if v is not None:
                setattr(n, a, fr(v))
        for a in cls.REF_LISTS:
            setattr(n, a, [fr(v) for v in getattr(s, a)])
    if fb is not None:
        for a in cls.BLOCKS:
            setattr(n, a, fb(getattr(s, a)))
    return n


def stmt_exprs(s: Any) -> Iterator[Any]:
    """The expressions directly in ``s`` (not in its blocks), references' indexes included."""
    cls = type(s)
    if cls is SHold:
        for p in s.pools:
            yield from stmt_exprs(p)
        for b in s.bindings:
            yield b.value
    for a in cls.EXPRS:
        v = getattr(s, a)
        if v is not None:
            yield v
    for a in cls.EXPR_LISTS:
        yield from getattr(s, a)
    for a in cls.REFS:
        v = getattr(s, a)
        if v is not None:
            yield v
    for a in cls.REF_LISTS:
        yield from getattr(s, a)


def blocks_of(s: Any) -> Iterator[list[Any]]:
    for a in type(s).BLOCKS:
        yield getattr(s, a)


def walk_stmts(stmts: list[Any]) -> Iterator[Any]:
    """Every statement of ``stmts``, nested ones included, in source order (each before the statements of its
    blocks, its blocks in order). One generator and a stack of the blocks under way: a generator a block, each
    statement handed up through every enclosing one, cost the statements times their depth (a body nested 990
    holds deep walked once per hold took ``serq ast --desugar`` 10 s)."""
    stack = [iter(stmts)]
    while stack:
        for s in stack[-1]:
            yield s
            names = type(s).BLOCKS
            if names:
                # its blocks next, the first on top; the rest of this block after them
                for a in reversed(names):
                    stack.append(iter(getattr(s, a)))
                break
        else:
            stack.pop()


def block_size(stmts: list[Any]) -> int:
    """The number of statements of ``stmts`` (nested ones included) and of the nodes of their expressions."""
    return sum(1 + sum(expr_size(e) for e in stmt_exprs(s)) for s in walk_stmts(stmts))


def assigned_in(stmts: list[Any]) -> set[str]:
    """Names a block assigns: set, choose, and the bindings of its holds."""
    out: set[str] = set()
    for s in walk_stmts(stmts):
        if isinstance(s, (SSet, SChoose)):
            out.add(s.name)
        elif isinstance(s, SHold):
            out.update(b.name for b in s.bindings)
    return out


def rewrite_block(stmts: list[Any], f: Callable[[Any], list[Any] | None]) -> list[Any]:
    """Bottom-up statement rewrite: blocks first, then ``f(s)`` (a list replaces ``s``; ``None`` keeps it)."""
    out: list[Any] = []
    for s in stmts:
        if type(s).BLOCKS:
            s = map_stmt(s, fb=lambda b: rewrite_block(b, f))
        r = f(s)
        if r is None:
            out.append(s)
        else:
            out.extend(r)
    return out


#: the workload items that hold a statement block (``init { … }``, ``turn { … }``, ``session { … }``)
WL_BLOCKS = ("init", "turn", "session")


def map_item(item: Any, fe: Callable[[Any], Any], fb: Callable[[list[Any]], list[Any]],
             fr: Callable[[Any], Any] | None = None) -> Any:
    """A copy of a top-level item with ``fe`` applied to every expression in it, ``fr`` (default
    ``fe``) to every reference, and ``fb`` to every statement block."""
    fr = fr or fe
    t = type(item)
    if t is Let:
        return Let(item.name, fe(item.value), item.pos, item.name_pos)
    if t is PoolItem:
        return PoolItem(item.name, _opt(item.size, fe), [map_pool_opt(o, fe, fr) for o in item.opts], item.pos,
                        item.name_pos)
    if t is StageItem:
        return StageItem(item.name, _opt(item.size, fe), map_kind(item.kind, fe, fr), item.pos, item.name_pos)
    if t is WorkloadItem:
        out = []
        for w in item.items:
            if w.kind in WL_BLOCKS:
                out.append(WlItem(w.kind, w.pos, fb(w.arg), w.extra))
            elif w.kind == "arrive" and w.arg is not None:
                out.append(WlItem(w.kind, w.pos, fe(w.arg), w.extra))
            else:
                out.append(w)
        return WorkloadItem(out, item.pos)
    if t is SessionItem:
        return SessionItem(fb(item.body), item.pos)
    if t is ServerItem:
        return ServerItem(fb(item.body), item.pos)
    if t is RunItem:
        return RunItem([(n, fe(v), p) for n, v, p in item.fields], item.pos)
    if t is GaugeItem:
        return GaugeItem(item.name, fe(item.value), item.pos)
    if t is QueueItem:
        q = copy.copy(item)
        q.size = _opt(item.size, fe)
        q.pools = [map_item(p, fe, fb, fr) for p in item.pools]
        q.serve = map_kind(item.serve, fe, fr) if item.serve else None
        q.latency = _opt(item.latency, fe)
        q.nic = map_kind(item.nic, fe, fr) if item.nic else None
        q.entries = [QEntry(e.verb, e.params, e.src, fb(e.body), e.pos, e.param_pos) for e in item.entries]
        return q
    if t is PullItem:
        return PullItem(item.reader, item.source, _opt(item.latency, fe), item.share, item.pos)
    return item


def _opt(x: Any, f: Callable[[Any], Any]) -> Any:
    return None if x is None else f(x)


REF_OPTS = {"admit_via": (0,), "spill": (0, 1)}


def map_pool_opt(o: PoolOpt, fe: Callable[[Any], Any], fr: Callable[[Any], Any]) -> PoolOpt:
    refs = REF_OPTS.get(o.kind, ())
    args = []
    for i, a in enumerate(o.args):
        if isinstance(a, list):
            args.append([fe(x) for x in a])
        elif i in refs:
            args.append(fr(a))
        else:
            args.append(fe(a))
    return PoolOpt(o.kind, args, o.pos, o.extra)


def map_kind(k: Kind, fe: Callable[[Any], Any], fr: Callable[[Any], Any]) -> Kind:
    n = Kind(k.kind, k.pos, _opt(k.arg, fe), {})
    for name, (v, p) in k.fields.items():
        if name == "memory":
            n.fields[name] = (fr(v), p)
        elif name == "serve":
            how, keys = v
            n.fields[name] = ((how, [fe(x) for x in keys] if keys is not None else None), p)
        else:
            n.fields[name] = (fe(v), p)
    return n


_DECLARES = {Let: "a `let`", PoolItem: "a pool", StageItem: "a stage", QueueItem: "a queue"}


def declared_names(module: Module) -> dict[str, str]:
    """The names the lets, pools, stages and queues of a module declare, each with what it is."""
    return {item.name: _DECLARES[type(item)] for item in module.items if type(item) in _DECLARES}


def item_blocks(item: Any) -> Iterator[list[Any]]:
    """The statement blocks of a top-level item."""
    t = type(item)
    if t is WorkloadItem:
        for w in item.items:
            if w.kind in WL_BLOCKS:
                yield w.arg
    elif t in (SessionItem, ServerItem):
        yield item.body
    elif t is QueueItem:
        for e in item.entries:
            yield e.body
    elif t is DefItem and item.body is not None:
        yield item.body
