"""The linker: the kernel AST to the IR (``serq_ir``), with every check of §2 and §3 that is not syntax.

Names are resolved (attributes to slots, pools and stages to family numbers, lets folded), constants
fold, and each expression is read at its *moment* (:data:`MOMENTS`): the context variables it may read,
whether it sees a session's attributes, whether it may draw, whether hidden attributes are visible.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from serq.numbers import truth_hint
from serq_ir import nodes as ir
from serq_ir import rules
from serq_ir.validate import MAX_POPULATION

from . import ast as A
from . import reach
from .consts import SUM, BadConstant, NotConstant, binary_value, fn_value, fold, truth, unary_value
from .context import Context, fmt_num, no_pool, not_a_family
from .diagnostics import Pos, did_you_mean, uses_of
from .names import (
    BUILTIN_ATTRIBUTES,
    CONTEXT,
    DRAWS,
    FUNCTIONS,
    OBSERVABLES,
    TRACE_ATTRIBUTES,
    arity_problem,
    attribute_kind,
    binding_outside,
    declared_name_problem,
    language_name,
    takes,
)
from .names import supplied as _supplied
from .stale import HEADER, QUEUE_KEY, SERVE_KEY, VICTIM_KEY, Taint, as_written, stale_message

#: a numeric literal's text (kernel.lark's NUMBER), to read a seed beyond 2**53 from its digits
_LITERAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


@dataclass(frozen=True)
class Moment:
    name: str
    what: str
    context: frozenset[str]
    attrs: bool = True
    draws: bool = False
    hidden: bool = False
    gauge: bool = False
    victim: bool = False


def _m(name: str, what: str, **kw: Any) -> Moment:
    # the context variables of each moment are serq_ir.rules.CONTEXT's, and the moments that draw
    # rules.DRAWS_AT: the rules an IR file is held to too
    return Moment(name, what, frozenset(rules.CONTEXT[name].split()), draws=name in rules.DRAWS_AT, **kw)


SESSION = _m("Session", "a session statement", hidden=True)
ADMIT = _m("Admit", "a hold's header (units, reserve, reuse: read at admission)")
QUEUE = _m("Queue", "a pool's queue key")
EVICT = _m("Evict", "an eviction key or a spill clause")
VICTIM = _m("Victim", "a preemption key", victim=True)
PS = _m("Ps", "a ps stage's capacity", attrs=False)
BUDGET = _m("Budget", "a step stage's budget or chunk", attrs=False)
COST = _m("Cost", "a step stage's cost", attrs=False)
SERVE = _m("Serve", "a step stage's serve key")
GAUGE = _m("Gauge", "a gauge", attrs=False, gauge=True)
ARRIVAL = _m("Arrival", "an arrival gap", attrs=False)
MOMENTS = (SESSION, ADMIT, QUEUE, EVICT, VICTIM, PS, BUDGET, COST, SERVE, GAUGE, ARRIVAL)

#: where each context variable exists, for messages
CONTEXT_HOME = {
    "size": "eviction keys and spill clauses", "age": "eviction keys and spill clauses",
    "last": "eviction keys and spill clauses", "waiting": "eviction keys and spill clauses",
    "present": "a ps stage's capacity", "residents": "a step stage's budget, chunk, cost and serve keys",
    "decoders": "a step stage's budget, chunk, cost and serve keys",
    "kv_decode": "a step stage's budget, chunk, cost and serve keys",
    "kv_prefill": "a step stage's budget, chunk, cost and serve keys",
    "tokens": "a step stage's cost", "prefilled": "a step stage's cost", "attention": "a step stage's cost",
    "decoding": "a step stage's serve keys and preemption keys",
    "admission": "a step stage's serve keys and preemption keys",
    "remaining": "a step stage's serve keys", "position": "preemption keys", "waited": "a pool's queue keys",
    "now": "every expression but a gauge",
}


def span(p: Pos) -> ir.Span | ir.ExpandedSpan:
    """The IR's span of a place: ``[file, line, col]``, or, for a place a definition's use (a queue's entry
    call) expanded, the place and those uses (:class:`serq_ir.nodes.ExpandedSpan`), as a compile-time
    error's notes name them, so that a run-time error there names them too."""
    if p.uses is None:
        return ir.Span(file=p.file, line=p.line, col=p.col)
    return ir.ExpandedSpan(file=p.file, line=p.line, col=p.col, via=_via(p.uses))


@functools.lru_cache(maxsize=4096)
def _via(link: tuple[Pos, str, Any]) -> tuple[ir.Use, ...]:
    """The uses of an expansion, one tuple for all the nodes of that expansion (every node of a body
    expanded at one use has an equal link): the IR does not grow a tuple a node."""
    return tuple(ir.Use(name, use.file, use.line, use.col) for use, name in uses_of(link))


def number(v: float) -> ir.Number:
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return float(v)


def _written_ref(v: A.Var) -> str:
    """A pool reference as the program wrote it, for a message: each part with its index when that is a
    number or a name (`pkv[i]`, `D.kv[0]`), `[…]` for any other expression."""
    parts = []
    for name, ix in v.parts:
        if ix is None:
            parts.append(name)
        elif type(ix) is A.Num:
            parts.append(f"{name}[{fmt_num(ix.value)}]")
        elif type(ix) is A.Var and ix.simple is not None:
            parts.append(f"{name}[{ix.simple}]")
        else:
            parts.append(f"{name}[…]")
    return ".".join(parts)


def _outside_indexes(e: Any) -> Iterator[Any]:
    """Every node of ``e`` but those in the index of a reference (``j`` of ``used(kv[j])``)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if type(x) is not A.Var:
            stack.extend(A.expr_children(x))


def _num_value(n: ir.Num) -> float:
    v = n.value
    if v == "inf":
        return math.inf
    if v == "-inf":
        return -math.inf
    return float(v)


@dataclass
class Family:
    index: int
    size: int
    item: Any
    kind: str = ""


#: the built-in stage kinds whose run's work is time, not tokens (no mode, no growth)
_TIME_KINDS = ("fifo", "ps", "delay")
#: how many of the pools a step stage admits from the warning of its `est_wait` names (the rest it counts)
_VIA_SHOWN = 3


class Linker:
    def __init__(self, module: A.Module, ctx: Context, source: str | None):
        self.module = module
        self.ctx = ctx
        self.source = source
        #: the places that read ``est_wait`` of a step stage, each warned of once (:meth:`step_wait_read`)
        self.step_waits: set = set()
        self.lets = ctx.lets()
        self.pools: dict[str, Family] = {}
        self.stages: dict[str, Family] = {}
        self.slots: dict[str, int] = {}
        self.attributes: list[ir.Attribute] = []
        self.hidden: set[str] = set()
        self.observes: dict[str, int] = {}
        self.observe_at: dict[str, Pos] = {}  # an observe's first statement
        self.observe_tests: list[bool] = []
        self.observe_instants: list[bool] = []
        #: record tables by name: their index and columns (every site of one table names the same columns)
        self.records: dict[str, tuple[int, list[str]]] = {}
        #: the gauges' names, for the word on one read as a value
        self.gauge_names: set[str] = {i.name for i in self.module.items if isinstance(i, A.GaugeItem)}
        self.hold_stack: list[A.SHold] = []
        #: the pools the holds around the statement being linked name (rules.unheld)
        self.held: list = []
        #: the first pool of each hold around the statement being linked, outermost first: the queue the hold
        #: waits in, whose `admit via` names the engine that admits it (_other_admitter)
        self.firsts: list = []
        self.tainted: dict[str, Pos] = {}
        #: the attributes set from live state, where they are read later than the set (stale.Taint)
        self.stale = Taint([])
        self.multi_run: Pos | None = None
        self.edepth = 0
        self.bdepth = 0
        #: the statement being linked (None: an item's expressions): a missing expression is told at its place
        self.at: Any = None
        #: the places warned of `queue(s) + busy(s)` (Linker.queue_and_busy), each once
        self.queue_busy_warned: set[tuple[str, int, int]] = set()
        #: while linking a value the program keeps (a `set`, an `observe`, a `record` column, a `gauge`): a
        #: constant subexpression whose value is NaN is a value there, as it is at run time, not an error
        self.nan_ok = False
        #: while linking a `branch` guard: its place, where a constant NaN is kept written out (as under
        #: :attr:`nan_ok`) for :meth:`guard` to refuse in a guard's words (the guard itself, or the
        #: probability of `branch with`, which is written at the guard's place)
        self.nan_at: Pos | None = None
        #: such subexpressions, kept written out (an IR number is never NaN), by id: (node, its value)
        self.kept_nan: dict[int, tuple[Any, float]] = {}
        #: while linking the arm a constant test never takes (`c ? a : b`, `branch (c) { … } else { … }`
        #: with c a constant): a value that is refused when it is a constant (a NaN, a draw's parameters
        #: outside its domain, a negative amount or work) is not an error there, since that arm is never
        #: evaluated; each is counted in :attr:`dead_hits`, and an arm that has one is left out of the IR
        #: (:meth:`dead_arm`). Names and every other rule are checked in it as anywhere.
        self.dead = 0
        self.dead_hits = 0
        #: where each pool says how to preempt (a `preempt` other than `none`): a pool no hold grows is told
        #: that it never applies (:meth:`ungrown_preempts`)
        self.preempt_at: dict[str, Pos] = {}
        #: where each pool says `cache scheduled`: one that preempts nobody is told that it never applies
        #: (:meth:`ungrown_preempts`)
        self.scheduled_at: dict[str, Pos] = {}
        #: the pools the program's holds lease, and each `release` (a transfer's included) that stands in no
        #: hold of its pool, with that pool: one no hold leases either is told (:meth:`unleased_releases`)
        self.leased: list[ir.PoolRef] = []
        self.loose_releases: list[tuple[A.SRelease, ir.PoolRef]] = []
        #: each `release` (a transfer's included) in a hold of its pool that comes after as many releases of
        #: its member in the same block as there are holds of it around, with its pool and the first of those
        #: releases: one no hold leases is told (:meth:`unleased_releases`)
        self.again_releases: list[tuple[A.SRelease, ir.PoolRef, A.SRelease]] = []
        #: each hold that leases, its pool and whether it runs at most once a session (in no loop and no hold,
        #: whose preemption runs its body again), and each `release` (a transfer's included) in no hold of its
        #: member that follows another of it in the same block with no hold leasing the pool between, with
        #: the first: told when the pool's one lease is taken once (:meth:`lease_ended_before`)
        self.lease_holds: list[tuple[str, bool]] = []
        self.loose_again: list[tuple[A.SRelease, ir.PoolRef, A.SRelease]] = []
        self.loops = 0
        #: the step-stage family whose own expressions (budget, chunk, cost, serve keys) are being linked:
        #: there a family of its size named without an index is the member paired with the stage's member
        self.own: Family | None = None

    def error(self, pos: Pos | None, msg: str) -> Exception:
        return self.ctx.error(pos, msg)

    def value_problem(self, pos: Pos | None, msg: str) -> None:
        """A constant value outside its domain: an error, except in an arm a constant test never takes
        (:attr:`dead`), where it is counted instead."""
        if self.dead:
            self.dead_hits += 1
            return
        raise self.error(pos, msg)

    def dead_arm(self, link: Callable[[], Any], empty: Any) -> Any:
        """An arm a constant test never takes, linked by ``link()`` with its constant values' domains not
        enforced: the arm as linked, or ``empty`` when one of them is outside its domain (the arm is never
        evaluated, and an IR never holds such a constant)."""
        hits = self.dead_hits
        self.dead += 1
        try:
            arm = link()
        finally:
            self.dead -= 1
        return arm if self.dead_hits == hits else empty

    # -----------------------------------------------------------------------------------------------
    # Declarations
    # -----------------------------------------------------------------------------------------------

    def declare(self) -> None:
        """The pools and stages, each under a name of its own. A queue's stage (named as the queue) never
        meets these refusals: the queue layer refuses every name a queue may not take, with or without a
        `serve` (``QueueRewriter.check_names``), before the queue makes its stage."""
        ctx = self.ctx
        members = {"pool": 0, "stage": 0}
        for item in self.module.items:
            if isinstance(item, (A.PoolItem, A.StageItem)):
                table = self.pools if isinstance(item, A.PoolItem) else self.stages
                what = "pool" if table is self.pools else "stage"
                name = item.name
                at = A.name_at(item)
                if name in self.pools or name in self.stages:
                    other = self.pools.get(name) or self.stages[name]
                    raise self.error(at, ctx.declared_twice(name, other.item.pos, item.pos))
                if name in self.lets:
                    let = ctx.let_name_pos.get(name)
                    where = f" (at {let.seen_from(at)})" if let is not None else ""
                    raise self.error(at, f"the {what} `{name}` has the name of a `let`{where}")
                why = declared_name_problem(what, name, False)  # (a trace's columns: collect_attributes)
                if why is not None:
                    raise self.error(at, why)
                size = 1
                if item.size is not None:
                    size = ctx.const_int(item.size, f"the size of {what} `{name}`")
                members[what] += size
                if members[what] > rules.MAX_MEMBERS:
                    at = item.size.pos if item.size is not None else item.pos
                    raise self.error(at, f"the {what} `{name}`{f' (a family of {size})' if size > 1 else ''} "
                                     f"makes more than {rules.MAX_MEMBERS} {what}s: a program has at most "
                                     f"{rules.MAX_MEMBERS} {what}s, counting every member of every family")
                kind = item.kind.kind if isinstance(item, A.StageItem) else ""
                table[name] = Family(len(table), size, item, kind)
        for name in self.lets:
            if name in CONTEXT or name == "inf":
                raise self.error(ctx.let_name_pos.get(name), f"`let {name}`: `{name}` is {_supplied(name)}")

    def collect_attributes(self, init: list[Any], turn: list[Any], session: list[Any], trace: bool) -> None:
        for n in BUILTIN_ATTRIBUTES + (TRACE_ATTRIBUTES if trace else ()):
            if n in self.lets:  # an attribute and a constant have names of their own (language.txt §2): the
                # constant was read where the attribute was meant (`let new = 5;` beside a trace replayed
                # prompts of 5 tokens, `let serial = 7;` made every session's serial 7), silently
                raise self.error(self.ctx.let_name_pos.get(n), f"`let {n}`: `{n}` is {attribute_kind(n)}; give the constant "
                                 "another name (it would be read where the attribute was meant)")
            fam = self.pools.get(n) or self.stages.get(n)
            if fam is not None:  # as an attribute the program sets may not take a pool's or a stage's name
                raise self.error(A.name_at(fam.item), declared_name_problem(
                    "pool" if n in self.pools else "stage", n, True))
            self.slots[n] = len(self.attributes)
            self.attributes.append(ir.Attribute(name=n, builtin=True))
        for block in (init, turn, session):
            for s in A.walk_stmts(block):
                if isinstance(s, (A.SSet, A.SChoose)):
                    self.assign(s.name, s.pos, f"choose {s.name} in …" if isinstance(s, A.SChoose) else
                                f"set {s.name} = …")
                elif isinstance(s, A.SRecord):
                    self.declare_record(s)
                elif isinstance(s, A.SObserve):
                    # a test-valued observe is one every site of which is a test (`observe hit = 0;` at one
                    # site and a comparison at another is not: its zeros need not be a test that failed)
                    # an instant is an observe that is `now` at every site (a time, not a duration)
                    if s.name not in self.observes:
                        self.observes[s.name] = len(self.observes)
                        self.observe_at[s.name] = s.pos
                        self.observe_tests.append(is_test(s.value))
                        self.observe_instants.append(is_now(s.value))
                    else:
                        if not is_test(s.value):
                            self.observe_tests[self.observes[s.name]] = False
                        if not is_now(s.value):
                            self.observe_instants[self.observes[s.name]] = False

    def declare_record(self, s: A.SRecord) -> None:
        """A record statement's table: its columns are the statement's, the same (and in the same order)
        at every site of the table, none of them named twice or as a column the simulator adds."""
        seen: set[str] = set()  # (a set: each column looked back over the others took n * n steps)
        for col, pos in zip(s.cols, s.col_pos):
            if col in ir.RECORD_OWN_COLUMNS:
                raise self.error(pos, f"`{col}` is a column every record has ({', '.join(ir.RECORD_OWN_COLUMNS)}: "
                                 "the session's serial, its turn number and the time of the row); give this "
                                 "column another name")
            if col in seen:
                raise self.error(pos, f"column `{col}` twice in one record")
            seen.add(col)
        if not s.cols:
            raise self.error(s.pos, f"record `{s.name}` has no column: write `record {s.name} {{ name = expr; … }}`")
        if s.name in self.records:
            cols = self.records[s.name][1]
            if cols != s.cols:
                raise self.error(s.pos, f"record `{s.name}` has the columns {', '.join(cols)} elsewhere; every "
                                 "record of one table names the same columns in the same order")
        else:
            self.records[s.name] = (len(self.records), list(s.cols))

    def assign(self, name: str, pos: Pos, written: str = "") -> None:
        """Make ``name`` an attribute the program sets, refused where it is another name's; ``written``: the
        statement as the program writes it there (`set x = …`, `choose x in …`), which a refusal shows."""
        if name in self.slots:
            if name in BUILTIN_ATTRIBUTES:
                raise self.error(pos, f"`{name}` is a built-in attribute; the language sets it")
            return
        if name in self.lets:
            let = self.ctx.let_name_pos.get(name)
            where = f"; the `let` is at {let.seen_from(pos)}" if let is not None and pos is not None else ""
            raise self.error(pos, f"`{name}` is a `let` constant and an attribute this sets: give them two "
                             f"names (the attribute would be read where the constant was meant{where})")
        if name in CONTEXT or name == "inf":
            raise self.error(pos, f"`{name}` is {_supplied(name)}; an attribute needs another name "
                             f"(`{written or f'set {name} = …'}` would shadow it)")
        if name in self.pools or name in self.stages:
            what = "pool" if name in self.pools else "stage"
            # (the declaration named where it is, as a `let`'s is: the refusal said what, not where)
            at = A.name_at((self.pools.get(name) or self.stages[name]).item)
            where = f" (at {at.seen_from(pos)})" if at is not None and pos is not None else ""
            raise self.error(pos, f"`{name}` is a {what}{where}; an attribute needs another name")
        self.slots[name] = len(self.attributes)
        self.attributes.append(ir.Attribute(name=name))

    # -----------------------------------------------------------------------------------------------
    # Expressions
    # -----------------------------------------------------------------------------------------------

    def num(self, v: float, pos: Pos, what: str = "this expression") -> ir.Num:
        if math.isnan(v):
            raise self.error(pos, f"{what} evaluates to NaN")
        return ir.Num(value=number(v), span=span(pos))

    def cval(self, x: Any) -> float | None:
        """The value of a linked expression that is constant (a number, or a NaN kept written out), else
        None."""
        if type(x) is ir.Num:
            return _num_value(x)
        kept = self.kept_nan.get(id(x))
        return kept[1] if kept is not None and kept[0] is x else None

    def folded(self, v: float, pos: Pos, written: Callable[[], Any]) -> Any:
        """A constant subexpression of value ``v``: its number; when ``v`` is NaN, in a value the program
        keeps (:attr:`nan_ok`), the expression as written (``written()``), which the simulator computes to
        the same NaN (the IR has no NaN number), and elsewhere an error."""
        if v == v:
            return self.num(v, pos)
        if not (self.nan_ok or (self.nan_at is not None and pos == self.nan_at)):
            if not self.dead:
                return self.num(v, pos)
            self.dead_hits += 1  # (where a NaN is a value, as in a `set`, it is no error in a dead arm either)
        node = written()
        self.kept_nan[id(node)] = (node, v)
        return node

    def guard(self, e: Any) -> Any:
        """A ``branch`` guard, linked. One that is a constant NaN (``branch (0/0)``) is refused in the words
        the simulator gives a computed NaN guard (rules.guard_problem: it is a branch guard, not just some
        expression), and ``branch with (0/0)`` in its own (rules.branch_with_problem); a NaN constant
        elsewhere in a guard (``branch (x > 0/0)``) is the error it is in any expression, at its place."""
        kept = len(self.kept_nan)
        self.nan_at = e.pos
        try:
            g = self.expr(e, SESSION)
        finally:
            self.nan_at = None
        v = self.cval(g)
        if v is not None and v != v:
            raise self.error(e.pos, rules.guard_problem(v))
        if len(self.kept_nan) > kept:  # a NaN inside (`0/0 > x`): linked again as any expression, refused there
            g = self.expr(e, SESSION)
        return g

    def value(self, e: Any, m: Moment) -> Any:
        """An expression whose value the program keeps (a `set`, `observe`, `record` column, `gauge`)."""
        self.nan_ok = True
        try:
            return self.expr(e, m)
        finally:
            self.nan_ok = False

    def expr(self, e: Any, m: Moment) -> Any:
        self.edepth += 1
        try:
            if self.edepth > rules.MAX_EXPR_DEPTH:
                raise self.error(getattr(e, "pos", None), f"this expression nests more than {rules.MAX_EXPR_DEPTH} "
                                 "deep (operators, calls and conditionals inside one another); name a part with "
                                 "`set` or a `def`")
            return self._expr(e, m)
        finally:
            self.edepth -= 1

    def _expr(self, e: Any, m: Moment) -> Any:
        t = type(e)
        if t is A.Num:
            return self.num(e.value, e.pos)
        if t is A.Var:
            return self.var(e, m)
        if t is A.Unary:
            a = self.expr(e.arg, m)
            va = self.cval(a)
            if va is not None:
                return self.folded(unary_value(e.op, va), e.pos, lambda: ir.Unary(op=e.op, arg=a, span=span(e.pos)))
            return ir.Unary(op=e.op, arg=a, span=span(e.pos))
        if t is A.Binary:
            lhs, rhs = self.expr(e.lhs, m), self.expr(e.rhs, m)
            if e.op == "+":
                self.queue_and_busy(e, lhs, rhs)
            vl, vr = self.cval(lhs), self.cval(rhs)
            if vl is not None and vr is not None:
                return self.folded(binary_value(e.op, vl, vr), e.pos,
                                   lambda: ir.Binary(op=e.op, lhs=lhs, rhs=rhs, span=span(e.pos)))
            return ir.Binary(op=e.op, lhs=lhs, rhs=rhs, span=span(e.pos))
        if t is A.Cond:
            test = self.expr(e.test, m)
            vt = self.cval(test)
            if vt is None:
                then, orelse = self.expr(e.then, m), self.expr(e.orelse, m)
                return ir.Cond(test=test, then=then, orelse=orelse, span=span(e.pos))
            # a constant test: the arm it does not take is never evaluated (self.dead_arm), and when that
            # arm holds a constant outside its domain (`k > 0 ? ~erlang(k, m) : ~exp(m)` at k = 0) the
            # expression is the arm taken
            taken = truth(vt)
            then = self.expr(e.then, m) if taken else self.dead_arm(lambda: self.expr(e.then, m), None)
            orelse = self.dead_arm(lambda: self.expr(e.orelse, m), None) if taken else self.expr(e.orelse, m)
            if then is None or orelse is None:
                return then if taken else orelse
            if self.cval(then) is not None and self.cval(orelse) is not None:
                return then if taken else orelse
            return ir.Cond(test=test, then=then, orelse=orelse, span=span(e.pos))
        if t is A.Call:
            return self.call(e, m)
        if t is A.Draw:
            if e.dist not in DRAWS:
                raise self.error(e.pos, f"unknown distribution `~{e.dist}` (the distributions: "
                                 f"{', '.join(DRAWS)})")
            if len(e.args) != DRAWS[e.dist]:
                raise self.error(e.pos, takes(f"~{e.dist}", len(e.args)))
            if not m.draws:
                raise self.error(e.pos, f"{m.what} may not draw (`~{e.dist}`)")
            args = [self.expr(a, m) for a in e.args]
            values = [self.cval(a) for a in args]
            node = ir.Draw(dist=e.dist, args=args, span=span(e.pos))
            if all(v is not None for v in values):
                # the draw `branch with (p)` is written as is told in those words (rules.branch_with_draw)
                why = (rules.branch_with_problem(values[0]) if rules.branch_with_draw(node)
                       else rules.draw_problem(e.dist, values))
                if why:
                    self.value_problem(e.pos, why)
            return node
        if t is A.Agg:
            raise self.error(e.pos, "an aggregate the aggregates layer did not write out")
        if e is None:
            raise self.missing()
        raise self.error(getattr(e, "pos", None), f"an expression the linker does not know ({t.__name__})")

    def missing(self) -> Exception:
        """The error of None where an expression belongs, in the statement being linked
        (:func:`serq_frontend._missing_expression`)."""
        from . import _missing_expression

        return _missing_expression(self.ctx, self.at)

    def var(self, v: A.Var, m: Moment) -> Any:
        name = v.dotted
        idx = v.indexes()
        if name in self.lets and not idx:
            return self.num(self.lets[name], v.pos)
        if name == "inf" and not idx:
            return ir.Num(value="inf", span=span(v.pos))
        if name in CONTEXT and not idx:
            return self.context_var(name, v.pos, m)
        if name in self.slots:
            if idx:
                hint = f"; write `{name}`" if len(v.parts) > 1 else ""
                raise self.error(v.pos, f"`{name}` is an attribute of the request; it takes no index{hint}")
            return self.attr(name, v.pos, m)
        if name in self.pools or name in self.stages:
            what = "pool" if name in self.pools else "stage"
            raise self.error(v.pos, f"`{name}` is a {what}, not a value (an observable reads it, "
                             f"{'used' if what == 'pool' else 'busy'}({name}))")
        if "." in name and name.split(".")[0] in self.queue_names():
            raise self.error(v.pos, f"unknown name `{name}`: nothing sets or marks it")
        if name in self.ctx.notes.get("expression_defs", ()):
            raise self.error(v.pos, f"`{name}` is a definition, not a value; call it, `{name}(…)`")
        if name in self.observes and not idx:
            raise self.error(v.pos, f"`{name}` is an observe's name, not a value: an observe records a sample for "
                             f"the report and sets nothing; `set` an attribute to the value to read it again "
                             f"(`set v = …; observe {name} = v;`)")
        if not idx and v.pos is not None and v.pos in self.ctx.notes.get("bindings_read_outside", ()):
            # a binding its body does not read is substituted into the header alone: read after its hold, it
            # is told as one its body reads is (sugar.admission._scan_outside), not as a name nobody gave
            raise self.error(v.pos, binding_outside(name))
        # an aggregate's index read where the program's text is written, outside every aggregate over it (in
        # one's body it is written out; a definition's body read inside one reads the program's name)
        agg = (self.ctx.notes.get("aggregate_indexes", {}).get(name)
               if not idx and v.pos is not None and v.pos.uses is None else None)
        if agg is not None:
            raise self.error(v.pos, f"`{name}` is the index of `{agg.op} {name} in …` (at {agg.pos.seen_from(v.pos)}), "
                             "read only inside its body")
        if name in self.gauge_names and not idx:
            raise self.error(v.pos, f"`{name}` is a gauge's name, not a value: a gauge is a time average the report "
                             "gives and sets nothing; read the state it averages where it is wanted (its expression "
                             "itself)")
        if name in self.records and not idx:
            raise self.error(v.pos, f"`{name}` is a record table's name, not a value: a `record` writes a row for the "
                             f"report and sets nothing; `set` an attribute to the value to read it again")
        if not idx and (name in FUNCTIONS or name in OBSERVABLES or name == "member"):
            # `tool (min);`, `set x = used;`: a function or an observable without its call (it was "unknown name
            # `min` (did you mean `inf`?)")
            what = "a function" if name in FUNCTIONS else "an observable"
            form = (f"`{name}(a, …)`" if name in ("min", "max") else f"`{name}({rules.PARAMS[name]})`"
                    if name in rules.PARAMS else f"`{name}(…)`")
            raise self.error(v.pos, f"`{name}` is {what}, not a value: call it, {form}")
        if name == "self" and not idx and self.own is not None and self.own.size > 1:
            # a queue entry's index, written where a step family's member is meant (its cost, budget, chunk)
            stage = self.own.item.name
            raise self.error(v.pos, f"unknown name `self`: `self` is a queue entry's index; in a step family's own "
                             f"expressions the member's index is `member({stage})` (`cost member({stage}) == 0 ? "
                             "… : …;`)")
        raise self.error(v.pos, f"unknown name `{name}`" + ((truth_hint(name) if not idx else "") or did_you_mean(
            name, [*self.lets, *self.slots, *(c for c in CONTEXT if c in m.context), "inf"])))

    def queue_names(self) -> set[str]:
        return {n.split(".")[0] for n in list(self.pools) + list(self.stages) if "." in n}

    def context_var(self, name: str, pos: Pos, m: Moment) -> ir.Ctx:
        if name not in m.context:
            if m.gauge and name == "now":
                raise self.error(pos, "a gauge may not read `now`: it moves between events")
            raise self.error(pos, f"`{name}` is not readable in {m.what}: it exists in "
                             f"{CONTEXT_HOME[name]} (reading it here would be a silent 0)")
        return ir.Ctx(name=name, span=span(pos))

    def attr(self, name: str, pos: Pos, m: Moment) -> ir.Attr:
        if not m.attrs:
            what = "a gauge may not read an attribute" if m.gauge else f"{m.what} has no session"
            raise self.error(pos, f"{what}: `{name}` is a session attribute")
        if name in self.hidden and not m.hidden:
            raise self.error(pos, f"`{name}` is hidden: {m.what} is the scheduler's, and may not read it")
        if (why := rules.ATTRIBUTE_REFUSED.get((m.name, name))) is not None:  # `computed` in a preemption key
            raise self.error(pos, why)
        if name == "cached" and m is SESSION and self.hold_stack and self.hold_stack[-1].cache is None:
            raise self.error(pos, "`cached` in the body of a hold without `cache`: that hold consumes no "
                             "prefix, so `cached` would read 0; give the hold a `cache (…)` clause")
        if m is ADMIT and name in self.tainted:
            raise self.error(pos, stale_message(name, self.stale.chain(name, self.tainted[name]), *HEADER, at=pos))
        return ir.Attr(slot=self.slots[name], span=span(pos))

    def call(self, e: A.Call, m: Moment) -> Any:
        name = e.name
        if name == SUM:
            # a written-out sum: folded as the chain ((t0 + t1) + t2) … would be (its constant head)
            args = [self.expr(a, m) for a in e.args]
            k = 1
            while k < len(args) and (v0 := self.cval(args[0])) is not None and (vk := self.cval(args[k])) is not None:
                a0, ak = args[0], args[k]
                args[0] = self.folded(binary_value("+", v0, vk), e.pos,
                                      lambda a0=a0, ak=ak: ir.Binary(op="+", lhs=a0, rhs=ak, span=span(e.pos)))
                k += 1
            args = [args[0]] + args[k:]
            if len(args) == 1:
                return args[0]
            return ir.Call(fn="sum", args=args, span=span(e.pos))
        if name == "member":
            return self.member(e, m)
        if name in FUNCTIONS:
            problem = arity_problem(name, len(e.args))
            if problem is not None:
                raise self.error(e.pos, problem)
            args = [self.expr(a, m) for a in e.args]
            values = [self.cval(a) for a in args]
            if all(v is not None for v in values):
                return self.folded(fn_value(name, values), e.pos, lambda: ir.Call(fn=name, args=args, span=span(e.pos)))
            return ir.Call(fn=name, args=args, span=span(e.pos))
        if name in OBSERVABLES:
            kind, extra = OBSERVABLES[name]
            if len(e.args) != 1 + extra:
                raise self.error(e.pos, takes(name, len(e.args)))
            target = e.args[0]
            if not isinstance(target, A.Var):
                raise self.error(e.pos, f"`{name}(…)` reads a {kind}: its first argument names one")
            if (why := rules.OBSERVABLE_REFUSED.get((m.name, name))) is not None:
                raise self.error(e.pos, why)
            if name == "blocksize":
                # the member named as any reference names one (an index in range, or read at run time: the
                # members share the family's block), then the constant a `let` or a constant position reads
                # too (Context.block_of: one rule)
                self.ref(target, "pool", m, family_ok=True)
                family = A.Call(e.name, [A.Var([(n, None) for n, _ in target.parts], target.pos)], e.pos)
                return self.num(self.ctx.const(family, f"the block of pool `{target.dotted}`"), e.pos)
            ref = self.ref(target, kind, m)
            if name == "budget_left" and self.stages_kind(target) != "step":
                raise self.error(target.pos, rules.budget_left_message(target.dotted))
            if name == "est_wait" and self.stages_kind(target) == "step":
                self.step_wait_read(target, e.pos)
            args = [self.expr(a, m) for a in e.args[1:]]
            return ir.Observable(name=name, target=ref, args=args, span=span(e.pos))
        what = (language_name(name) or ("a constant (a `let`)" if name in self.lets else None)
                or ("a session attribute" if name in self.slots else None))
        if what is not None:
            # `now()`, `prompt()`, `B(2)`: a name read as a function (it offered the closest function, `pow`)
            raise self.error(e.pos, f"`{name}` is {what}, not a function: it is read without parentheses, "
                             f"`{name}`" + ("" if e.args else f", not `{name}()`"))
        raise self.error(e.pos, self.ctx.unknown_function(e) or f"unknown function `{name}`")

    def step_wait_read(self, target: A.Var, pos: Pos) -> None:
        """A warning at each place that reads ``est_wait(S)`` of a step stage ``S`` (once a place): the estimate
        is the stage's weighted wait from a run's arrival at it to its start (docs/language.md, "The online
        estimates"), and a run joins a step stage's residents at once, so it reads 0 throughout the run; the
        requests wait in the queue of the pool the stage admits from (`admit via`), which ``queued(P)``
        reads. Not an error: the value is what the definition gives."""
        if pos in self.step_waits:
            return
        self.step_waits.add(pos)
        stage = target.dotted
        via = [n for n, fam in self.pools.items()
               if any(o.kind == "admit_via" and o.args and getattr(o.args[0], "dotted", None) == stage
                      for o in fam.item.opts)]
        # every pool it admits from, in the order they are declared (the order the stage serves their queues),
        # the first SHOWN of them by name: one named alone left the others' waits unsaid
        named = [f"`queued({n})`" for n in via[:_VIA_SHOWN]]
        more = len(via) - len(named)
        if more:
            named.append(f"{more} more")
        listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}" if named else ""
        read = (f"read `queued({via[0]})`, the requests waiting in the queue of the pool it admits from"
                if len(via) == 1 else f"read {listed}, the requests waiting in the queues of the {len(via)} pools "
                "it admits from" if via else "read `queued(P)` of the pool its requests wait in (a pool with "
                f"`admit via {stage}`)")
        self.ctx.reporter.warn(pos, f"`est_wait({stage})` is 0 throughout the run: step stage `{stage}` has no "
                               "queue of its own (a run joins its residents at once, so no run waits there); "
                               + read)

    def queue_and_busy(self, e: A.Binary, lhs: Any, rhs: Any) -> None:
        """Warn of ``queue(s) + busy(s)`` (either order) of one stage member: ``queue(s)`` is every job at
        ``s``, served or waiting, so the sum counts the jobs in service twice (a gauge of a station's
        number present so written read 1.06 where the M/M/1's 0.67 was meant). The IR is as written."""
        # the terms of the whole sum, as written and as linked: `2 * K + queue(s) + busy(s)` is
        # `(2 * K + queue(s)) + busy(s)`, whose two sides were no queue and busy (no warning)
        terms = _sum_terms(e.lhs, lhs) + _sum_terms(e.rhs, rhs)
        queues = [(t, x) for t, x in terms if isinstance(x, ir.Observable) and x.name == "queue"]
        busies = [(t, x) for t, x in terms if isinstance(x, ir.Observable) and x.name == "busy"]
        for qa, q in queues:
            for ba, b in busies:
                if _same_stage_member(q.target, b.target):
                    self._warn_queue_and_busy(e, qa, ba)

    def _warn_queue_and_busy(self, e: A.Binary, qa: Any, ba: Any) -> None:
        """The warning of :meth:`queue_and_busy` of the terms ``qa`` (``queue(s)``) and ``ba`` (``busy(s)``),
        as written, of the sum ``e``: once a pair of terms (the sum's inner sums are linked first, and each
        term of an aggregate is linked at one place)."""
        key = (qa.pos.file, qa.pos.line, qa.pos.col, ba.pos.file, ba.pos.line, ba.pos.col)
        if key in self.queue_busy_warned:
            return
        self.queue_busy_warned.add(key)
        call = qa
        name = "s"
        if isinstance(call, A.Call) and isinstance(call.args[0], A.Var):
            target = call.args[0]
            name = target.dotted
            # as written: `s[j]` inside an aggregate, whose terms are linked with j a number
            text = self.ctx.reporter.sources.line(target.pos.file, target.pos.line) or ""
            m = re.match(r"[A-Za-z_][\w.]*(\[[^\[\]()]*\])?", text[target.pos.col - 1:])
            if m is not None and m.group(0).split("[")[0] == name:
                name = m.group(0)
        step = isinstance(call, A.Call) and isinstance(call.args[0], A.Var) and self.stages_kind(call.args[0]) == "step"
        waiting = ("the requests waiting for it are `queued(P)` of the pool it admits from" if step else
                   f"the jobs waiting are `queue({name}) - busy({name})`")
        # at the first of the two terms (`queue(s)` of `2 * K + queue(s) + busy(s)`): the sum's own place when
        # the two are the sum's sides
        at = min(qa.pos, ba.pos, key=lambda p: (p.line, p.col)) if qa.pos.file == ba.pos.file == e.pos.file else e.pos
        self.ctx.reporter.warn(at, f"`queue({name})` already counts the jobs in service at `{name}` (it is every "
                               f"job there, served or waiting: the stage's present), so `+ busy({name})` counts "
                               f"them twice; {waiting}")

    def member(self, e: A.Call, m: Moment) -> Any:
        """``member(X)``: the index of the pool or stage member ``X`` names, ``j`` for ``kv[j]`` and 0 for
        a pool or stage declared without a size (a record's `engine = member(engine);`)."""
        if len(e.args) != 1 or not isinstance(e.args[0], A.Var):
            raise self.error(e.pos, "`member(…)` takes one pool or stage member, `member(kv[j])`")
        target = e.args[0]
        kind = "stage" if target.dotted in self.stages else "pool"
        ref = self.ref(target, kind, m)
        size = self.family(target, kind).size
        if ref.index is None and size > 1 and self.own is not None and self.own.size == size:
            # the member paired with each of the stage's members: its index is the member's own
            return ir.Observable(name="member", target=ref, span=span(e.pos))
        if ref.index is None:
            return self.num(0.0, e.pos)
        if type(ref.index) is ir.Num:  # a number the reference has checked
            return ref.index
        # a computed index: the member names one, checked when it is read as every reference is (an index
        # past the family was the number itself)
        return ir.Observable(name="member", target=ref, span=span(e.pos))

    def stages_kind(self, v: A.Var) -> str:
        fam = self.stages.get(v.dotted)
        return fam.kind if fam else ""

    def family(self, v: A.Var, kind: str) -> Family:
        name = v.dotted
        table = self.pools if kind == "pool" else self.stages
        fam = table.get(name)
        if fam is None:
            if kind == "pool" and name in self.ctx.notes.get("queues", ()):
                raise self.error(v.pos, no_pool(v, table, True))
            other = self.stages if kind == "pool" else self.pools
            if name in other:
                raise self.error(v.pos, f"`{name}` is a {'stage' if kind == 'pool' else 'pool'}, and a "
                                 f"{kind} is wanted here")
            raise self.error(v.pos, f"unknown {kind} `{name}`" + (did_you_mean(name, table)
                                                                  or self._role_word(name, kind, v.pos)))
        return fam

    def _role_word(self, name: str, kind: str, pos: Any) -> str:
        """What ``run decode (…);`` (a stage named by a serving form's word, where no stage has that name)
        means to say: the serving form, which finds its stage, or the kernel's run on the step engine with
        the mode (it was ``unknown stage `decode` `` alone, in a queue's entry too, where the stage is the
        queue's)."""
        if kind != "stage" or name not in ("prefill", "decode"):
            return ""
        steps = [k for k, f in self.stages.items() if f.kind == "step"]
        engine = steps[0] if len(steps) == 1 else "E"
        link, entry = pos.uses, None
        while link is not None:  # the innermost expansion: in a queue's entry (`D.decode`), the queue's stage
            entry, link = link[1], link[2]
        if entry is not None and "." in entry and entry.rsplit(".", 1)[0] in steps:
            engine = entry.rsplit(".", 1)[0]
        return (f": no stage is named `{name}`; the serving form `{name} (…);` runs on the stage it finds (a step "
                f"engine's iteration), and the kernel's run on a step engine says its mode, "
                f"`run {engine} {name} (…);`")

    def ref(self, v: A.Var, kind: str, m: Moment, *, family_ok: bool = False) -> Any:
        fam = self.family(v, kind)
        idx = v.indexes()
        if len(idx) > 1:
            raise self.error(v.pos, f"`{v.dotted}` is indexed twice")
        index = None
        if idx:
            self._no_family(v, fam, kind, idx[0])
            # which member is where the session goes, read when it queues (a hold's pool) or naming the member
            # it queued at: a routing decision, as a `choose` is, not a value the first lint is about
            tainted, self.tainted = self.tainted, {}
            try:
                index = self.expr(idx[0], m)
            finally:
                self.tainted = tainted
            k = self.cval(index)
            if k is not None:
                if not 0 <= k < fam.size or k != int(k):  # range first: int(inf) and int(nan) raise
                    raise self.error(idx[0].pos, f"`{v.dotted}[{fmt_num(k)}]`: `{v.dotted}` has members "
                                     f"0 … {fam.size - 1}")
            elif m.gauge:
                raise self.error(idx[0].pos, f"a gauge names `{v.dotted}` by a number, `{v.dotted}[0]`")
            if fam.size == 1 and k is not None:
                index = None  # the member 0 the range check found: a family of one's one member
        elif fam.size > 1 and not family_ok and not (self.own is not None and self.own.size == fam.size):
            if self.own is not None:
                raise self.error(v.pos, f"`{v.dotted}` is a family of {fam.size} and this step stage one of "
                                 f"{self.own.size}: a stage's own expressions name a family of its size "
                                 f"without an index (each member its own), any other by member, `{v.dotted}[0]`")
            raise self.error(v.pos, f"`{v.dotted}` is a family of {fam.size}; index it, `{v.dotted}[j]`")
        cls = ir.PoolRef if kind == "pool" else ir.StageRef
        if kind == "pool":
            return cls(pool=fam.index, index=index, span=span(v.pos))
        return cls(stage=fam.index, index=index, span=span(v.pos))

    def _no_family(self, v: A.Var, fam: Family, kind: str, at: Any) -> None:
        """An index on a pool or stage declared without a size (``stage engine : step;`` and ``prefill on
        engine[0]``), told at the index: such a declaration is one pool or stage, not a family of one (a
        queue's call ``D[0].decode`` of a queue declared without a size is told the same, sugar/queues.py). It
        was taken for a family of one's member, and ``engine[0]`` ran on ``engine`` without a word, so a
        program written for a family whose size was left out, or an index meant for another name, ran."""
        if fam.item.size is not None or not isinstance(fam.item, (A.PoolItem, A.StageItem)):
            return
        name = v.dotted
        queue = name.split(".")[0] if "." in name and name.split(".")[0] in self.queue_names() else None
        try:
            k = fold(at, self.ctx.lets(), self.ctx.block_of)
        except (NotConstant, BadConstant):
            k = None
        if k == 0:
            # the one member a family of one would have: it runs as written (a program that wrote it ran so
            # before, and its IR is the one the name gives), told as a warning
            self.ctx.warn_once(at.pos, not_a_family(name, kind, queue, zero=True))
            return
        raise self.error(at.pos, not_a_family(name, kind, queue))

    def family_ref(self, v: A.Var, kind: str, owner: Family, owner_name: str) -> int:
        """A family named in a declaration (``admit via S``, ``memory kv``): paired member for member."""
        fam = self.family(v, kind)
        idx = v.indexes()
        if idx:
            self._no_family(v, fam, kind, idx[0])
        if idx and fam.size == 1:
            # a family of one's member may be written with its index, which goes away (as in any reference)
            if len(idx) > 1:
                raise self.error(v.pos, f"`{v.dotted}` is indexed twice")
            k = self.ctx.const(idx[0], f"the index of `{v.dotted}`")
            if k != 0:
                raise self.error(idx[0].pos, f"`{v.dotted}[{fmt_num(k)}]`: `{v.dotted}` has members 0 … 0")
        elif idx:
            if owner.size == fam.size:
                raise self.error(v.pos, f"`{v.dotted}[…]`: a {kind} family is paired member for member with "
                                 f"`{owner_name}`; name it without an index")
            raise self.error(v.pos, f"`{v.dotted}[…]`: a declaration does not name one member of a family; "
                             + rules.pairs_message(kind, owner_name, owner.size, v.dotted, fam.size))
        if not rules.pairs(owner.size, fam.size):
            raise self.error(v.pos, rules.pairs_message(kind, owner_name, owner.size, v.dotted, fam.size))
        return fam.index

    def spill_ref(self, v: A.Var, kind: str, owner: Family, owner_name: str) -> Any:
        """A spill's tier (``kind`` pool) or link (stage): a member by index, read at the Evict moment, or a
        family without one, paired with the spilling pool's family as a declaration pairs (``rules.pairs``:
        ``pool kv[N] { spill cpu via pcie …; }`` next to ``pool cpu[N]`` and ``stage pcie[N]`` writes kv[i]'s
        evictions to cpu[i] over pcie[i]; a family of one is every member's)."""
        fam = self.family(v, kind)
        idx = v.indexes()
        if len(idx) == 1 and fam.size > 1 and owner.size == fam.size:
            # `spill cpu[N] via pcie[N]` written as the families are declared: the member past the end, where
            # the pairing names the family without an index (as `admit via` and `memory` say)
            k = self.cval(self.expr(idx[0], EVICT))
            if k is not None and not 0 <= k < fam.size:
                raise self.error(idx[0].pos, f"`{v.dotted}[{fmt_num(k)}]`: `{v.dotted}` has members 0 … "
                                 f"{fam.size - 1}; {owner_name}[i] is paired with {v.dotted}[i] when the family "
                                 f"is named without an index, `{v.dotted}`")
        if idx or fam.size == 1:
            return self.ref(v, kind, EVICT)
        if not rules.pairs(owner.size, fam.size):
            raise self.error(v.pos, rules.pairs_message(kind, owner_name, owner.size, v.dotted, fam.size, "pool")
                             + f", or name one member, `{v.dotted}[0]`")
        return self.ref(v, kind, EVICT, family_ok=True)

    # -----------------------------------------------------------------------------------------------
    # Pools and stages
    # -----------------------------------------------------------------------------------------------

    def pool(self, name: str, fam: Family) -> ir.Pool:
        ctx = self.ctx
        item: A.PoolItem = fam.item
        seen: dict[str, Pos] = {}
        kw: dict[str, Any] = {"name": name, "size": fam.size, "span": span(item.pos)}
        if item.size is not None:
            kw["array"] = True
        for o in item.opts:
            if not isinstance(o.kind, str) or o.kind not in A.KERNEL_POOL_OPTIONS:
                # (only the kernel's options reach here: one a sugar layer left was passed over, the pool
                # compiled without it, without a word)
                raise self.error(o.pos, f"pool `{name}`: a pool option the kernel does not have ({o.kind!r}), left "
                                 f"by {self._kind_left_by('pool', item.name, o.kind)}")
            group = o.kind.split("_")[0]
            if group in seen:
                raise self.error(o.pos, f"pool `{name}`: `{group.replace('reserve', 'reserve held')}` is "
                                 "given twice")
            seen[group] = o.pos
            if group == "preempt" and o.kind != "preempt_none":
                self.preempt_at[name] = o.pos
            if o.kind == "cap":
                caps = self.member_caps(o.args[0], fam, name)
                if len(set(caps)) == 1:  # one cap, every member's (the IR of a cap that reads no member)
                    kw["cap"] = number(caps[0])
                else:
                    kw["caps"] = [number(v) for v in caps]
            elif o.kind == "block":
                kw["block"] = float(ctx.const_positive(o.args[0], f"the block of pool `{name}`", "units"))
            elif o.kind == "evict_lru":
                kw["evict"] = ir.EvictLru()
            elif o.kind == "evict_by":
                kw["evict"] = ir.EvictBy(keys=[self.expr(k, EVICT) for k in o.args[0]])
            elif o.kind == "evict_ext":
                kw["evict"] = self.extension("eviction order", o.args[0], f"pool `{name}`")
            elif o.kind == "preempt_ext":
                kw["preempt"] = self.extension("preemption policy", o.args[0], f"pool `{name}`")
            elif o.kind == "preempt_none":
                kw["preempt"] = ir.PreemptNone()
            elif o.kind == "preempt_lifo":
                kw["preempt"] = ir.PreemptBy(keys=[ir.Unary(op="-", arg=ir.Ctx(name="admission"))],
                                             requeue="head")
            elif o.kind == "preempt_by":
                kw["preempt"] = ir.PreemptBy(keys=[self.expr(k, VICTIM) for k in o.args[0]],
                                             requeue=o.extra)
                self.stale_keys(o.args[0], self.stale.holding, name, VICTIM_KEY)
            elif o.kind == "queue_fifo":
                kw["queue"] = ir.QueueFifo()
            elif o.kind == "queue_by":
                kw["queue"] = ir.QueueBy(keys=[self.expr(k, QUEUE) for k in o.args[0]])
                self.stale_keys(o.args[0], self.stale.waiting, name, QUEUE_KEY)
            elif o.kind == "reserve_held":
                kw["reserve_held"] = True
            elif o.kind == "cache_scheduled":
                kw["cache_scheduled"] = True
                self.scheduled_at[name] = o.pos
            elif o.kind == "cache_computed":
                pass  # the default, written out (cache_scheduled False: written_defaults_left_out)
            elif o.kind == "admit_via":
                s = self.family_ref(o.args[0], "stage", fam, name)
                if self.stages[o.args[0].dotted].kind != "step":
                    raise self.error(o.args[0].pos, f"`admit via {o.args[0].dotted}`: a pool is admitted by "
                                     "a step stage's scheduler, and this stage is no step")
                kw["admit_via"] = s
            elif o.kind == "spill":
                tier, link, work, when = o.args
                tier_ref, link_ref = self.spill_ref(tier, "pool", fam, name), self.spill_ref(link, "stage", fam, name)
                if rules.spills_to_itself(self.family(tier, "pool") is fam, fam.size, bool(tier.indexes())):
                    raise self.error(o.pos, rules.spill_to_itself_message(f"`{name}`"))
                if self.stages[link.dotted].kind == "step":  # the write is plain work, which a step runs not
                    raise self.error(link.pos, f"pool `{name}`: `spill … via {link.dotted}`: `{link.dotted}` is "
                                     "a step stage, whose runs are prefill or decode; a spill's write is "
                                     "plain work on a fifo, ps or delay stage")
                w = self.expr(work, EVICT)
                if type(w) is ir.Num and (why := rules.work_problem(_num_value(w))):
                    raise self.error(work.pos, f"pool `{name}`: the spill's {why.removeprefix('the ')}; a "
                                     "write's work is not negative")
                kw["spill"] = ir.Spill(tier=tier_ref, link=link_ref, work=w, when=self.expr(when, EVICT))
        return ir.Pool(**written_defaults_left_out(ir.Pool, kw))

    def member_caps(self, e: Any, fam: Family, name: str) -> list[float]:
        """The cap ``e`` of pool ``name`` (family ``fam``), each member's: a constant, where ``member(X)`` of a
        pool or stage family ``X`` of the pool's size named without an index is the member's own index (as in a
        step family's own expressions, `member(E)`), so `pool kv[2] { cap member(kv) == 0 ? 8000 : 2000; }`
        is a fleet of unlike GPUs; 0 on a pool declared without a size. One value, every member's, when ``e``
        reads no member (docs/language.md, "A family's members' caps")."""
        ctx = self.ctx

        def own(x: Any) -> bool:
            if type(x) is not A.Call or x.name != "member" or len(x.args) != 1 or type(x.args[0]) is not A.Var:
                return False
            v = x.args[0]
            if v.indexes():
                return False
            other = self.pools.get(v.dotted) or self.stages.get(v.dotted)
            if other is None:
                return False
            if other.size != fam.size:
                raise self.error(x.pos, f"`member({v.dotted})` in the cap of pool `{name}`: `{v.dotted}` is a "
                                 f"family of {other.size} and `{name}` one of {fam.size}; a family's cap reads the "
                                 f"index of a family of its size, each member its own (`member({name})`)")
            return True

        reads = any(own(x) for x in A.walk_expr(e))
        members = range(fam.size) if reads else range(1)
        out = []
        for i in members:
            x = A.map_expr(e, lambda y, i=i: A.Num(float(i), y.pos) if own(y) else None) if reads else e
            label = f"{name}[{i}]" if reads and (fam.size > 1 or fam.item.size is not None) else name
            v = ctx.const(x, f"the cap of pool `{label}`")
            if v < 0:
                raise self.error(e.pos, f"the cap of pool `{label}` is negative ({fmt_num(v)}){ctx.given(e)}")
            out.append(v)
        return out

    def extension(self, point: str, ref: A.ExtRef, owner: str) -> ir.Extension:
        """``@name(args)``: a plugin's stage kind or policy, which the plugins must register (looked up in
        the registries of the compile's plugin manager); its arguments, constants, are the node's params: a
        list when positional, an object when named, none without arguments."""
        why = self.ctx.extensions.problem(point, ref.name, f"`@{ref.name}`")
        if why:
            raise self.error(ref.pos, f"{owner}: {why}")
        params: Any = None
        if ref.args:
            named = [a for a in ref.args if a[0] is not None]
            if named and len(named) != len(ref.args):
                first = ref.args[0][0] is not None
                odd = next(a for a in ref.args if (a[0] is not None) != first)
                raise self.error(odd[2], f"`@{ref.name}(…)`: its arguments are all named or all positional")
            values = []
            for i, (key, e, _pos) in enumerate(ref.args):
                what = f"argument `{key}` of `@{ref.name}`" if key else f"argument {i + 1} of `@{ref.name}`"
                values.append(number(self.ctx.const(e, what)))
            if named:
                params = {}
                for (key, _e, pos), v in zip(ref.args, values):
                    if key in params:
                        raise self.error(pos, f"`@{ref.name}(…)`: argument `{key}` is given twice")
                    params[key] = v
            else:
                params = values
        return ir.Extension(name=ref.name, params=params)

    def stage(self, name: str, fam: Family) -> ir.Stage:
        ctx = self.ctx
        item: A.StageItem = fam.item
        k = item.kind
        kind: Any
        if k.kind == "fifo":
            c = 1.0 if k.arg is None else ctx.const(k.arg, f"the server count of stage `{name}`")
            if c < 1 or (math.isfinite(c) and c != int(c)):
                raise self.error(k.arg.pos, f"stage `{name}`: a fifo has a whole number of servers, at least 1, "
                                 f"not {fmt_num(c)}{ctx.given(k.arg)}")
            kind = ir.Fifo(servers=number(c))
        elif k.kind == "ps":
            phi = self.expr(k.arg, PS)
            if type(phi) is ir.Num:
                why = rules.capacity_problem(_num_value(phi))
                if why:
                    raise self.error(k.arg.pos, f"stage `{name}`: {why}; a ps stage's capacity is at least 0")
            kind = ir.Ps(capacity=phi)
        elif k.kind == "delay":
            kind = ir.Delay()
        elif k.kind == "ext":
            kind = self.extension("stage kind", k.arg, f"stage `{name}`")
        elif k.kind != "step":  # only the kernel's kinds reach here (a sugar layer's own are its to rewrite)
            raise self.error(k.pos, f"stage `{name}`: a stage kind the kernel does not have ({k.kind!r}), left "
                             f"by {self._kind_left_by('stage', item.name, k.kind)}")
        else:
            f = k.fields
            if "cost" not in f:
                raise self.error(k.pos, f"step stage `{name}` has no `cost`")
            self.own = fam
            try:
                budget = self.expr(f["budget"][0], BUDGET) if "budget" in f else ir.Num(value="inf")
                cost = self.expr(f["cost"][0], COST)
                chunk = self.expr(f["chunk"][0], BUDGET) if "chunk" in f else None
                keys = [self.expr(x, SERVE) for x in (f["serve"][0][1] or [])] if "serve" in f else []
            finally:
                self.own = None
            self.stale_keys(f["serve"][0][1] or [] if "serve" in f else [], self.stale.running, name, SERVE_KEY)
            if type(budget) is ir.Num and (why := rules.budget_problem(_num_value(budget))):
                raise self.error(f["budget"][0].pos, f"stage `{name}`: {why}; an iteration's budget is at "
                                 "least 0")
            if type(cost) is ir.Num:
                why = rules.cost_problem(_num_value(cost))
                if why:
                    raise self.error(f["cost"][0].pos, f"stage `{name}`: {why}; an iteration's cost is at "
                                     "least 0")
            if type(chunk) is ir.Num and (why := rules.chunk_problem(_num_value(chunk))):
                raise self.error(f["chunk"][0].pos, f"stage `{name}`: {why}; a prefill's chunk is at least 0")
            # a constant amount of 0 is a stage that never serves what it names: allowed (an amount, as the
            # spec says), but said, since 0 means "no cap" elsewhere (vLLM's long_prefill_token_threshold)
            for field, amount, what in (("budget", budget, "schedules no token, so no job on it ever runs"),
                                        ("chunk", chunk, "gives a prefill no token, so no prefill on it ever "
                                         "runs (no cap is `chunk inf`, or no chunk: vLLM's "
                                         "long_prefill_token_threshold of 0)")):
                if type(amount) is ir.Num and _num_value(amount) == 0.0:
                    self.ctx.reporter.warn(f[field][0].pos, f"stage `{name}`: a {field} of 0 {what}")
            serve: Any = ir.ServeBy()
            if "serve" in f:
                how = f["serve"][0][0]
                if how == "by":
                    serve = ir.ServeBy(keys=keys)
                elif how == "decode_first":
                    serve = ir.ServeBy(keys=[ir.Cond(test=ir.Ctx(name="decoding"), then=ir.Num(value=0.0),
                                                     orelse=ir.Num(value=1.0))])
                else:
                    serve = ir.ServeExclusivePrefill()
            memory = None
            if "memory" in f:
                memory = self.family_ref(f["memory"][0], "pool", fam, name)
            if type(chunk) is ir.Num and chunk.value == "inf":
                # `chunk inf` is no cap, the omission's (serq_sim.step.stage reads no chunk_fn for either): one IR
                chunk = None
            kind = ir.Step(budget=budget, cost=cost, chunk=chunk, serve=serve, memory=memory,
                           budget_given="budget" in f)
        return ir.Stage(name=name, kind=kind, size=fam.size, array=item.size is not None, span=span(item.pos))

    # -----------------------------------------------------------------------------------------------
    # Statements
    # -----------------------------------------------------------------------------------------------

    def block(self, stmts: list[Any], where: str) -> list[Any]:
        out = []
        released: dict | None = None
        loose: dict | None = None  # (pool, member) -> the first release of it in no hold of it, in this block
        for s in stmts:
            out.append(self.stmt(s, where))
            if type(s) is A.SRelease:
                released = self._again(s, out[-1].pool, released)
                loose = self._loose_again(s, out[-1].pool, loose)
                continue
            if loose and type(s) in (A.SHold, A.SBranch, A.SLoop):
                for pool in _leased_in(out[-1]):  # a lease taken between: the next release may end it
                    loose = {k: v for k, v in loose.items() if k[0] != pool}
            if loose and any(type(k[1]) is tuple for k in loose):
                # a member written with a computed index is the same member at the next release only while
                # nothing between sets a name its index reads (a `turn;` may set any)
                turn = any(type(x) is A.STurn for x in A.walk_stmts([s]))
                assigned = A.assigned_in([s])
                loose = {k: v for k, v in loose.items()
                         if type(k[1]) is not tuple or not (turn or assigned & k[1][1])}
        return out

    def _loose_again(self, s: A.SRelease, r: ir.PoolRef, loose: dict | None) -> dict | None:
        """Keep ``s``, a `release P` in no hold of P, for :meth:`lease_ended_before` when a release of its member
        in no hold of it came before it in the same block (``loose``, by member). A member written with a
        computed index is the same member as an earlier one written with the same expression of numbers and
        names when no statement between sets a name it reads (:func:`_member_read`, :meth:`block`); any other
        computed index is not compared (it may name another member each time)."""
        ix = r.index
        k = None if ix is None else ix.value if type(ix) is ir.Num else _member_read(s.ref)
        if k is ... or not rules.unheld(self.held, r):
            return loose
        if loose is None:
            loose = {}
        if type(k) is tuple:  # a computed index: the same expression, read since by nothing set between
            from .sugar.serving import _same_value

            first = next((v for (pool, kk), v in loose.items()
                          if pool == r.pool and type(kk) is tuple and _same_value(kk[0], k[0])), None)
            if first is None:
                loose[(r.pool, (k[0], k[1], id(s)))] = s
            else:
                self.loose_again.append((s, r, first))
            return loose
        first = loose.setdefault((r.pool, k), s)
        if first is not s:
            self.loose_again.append((s, r, first))
        return loose

    def lease_ended_before(self) -> None:
        """A warning at a `release P` (a transfer's included) in no hold of P that follows another of the same
        member in the same block, no hold leasing P between, when the program's one hold that leases P runs at
        most once a session: the session holds one lease of P at most, which the first release ends (or there
        was none), so the second gives nothing back, and a transfer's reads KV the session no longer holds. A
        decode entry with two transfers from the prefill's leased pool ran the second read without a word."""
        seen = set()
        for s, r, first in self.loose_again:
            holds = [once for pool, once in self.lease_holds if pool == r.pool]
            at = s.pos
            key = (at.file, at.line, at.col)
            if holds != [True] or key in seen:
                continue  # (no lease at all: unleased_releases tells it)
            seen.add(key)
            fam, ref = s.ref.dotted, _written_ref(s.ref)
            if r.index is None or type(r.index) is ir.Num:
                ended = (f"ended the session's lease of `{fam}`, the one the program takes (its one hold that "
                         f"leases `{fam}` runs once)")
            else:  # the same computed member: its release ended the lease if the lease was of it, or found none
                ended = (f"released the same member (its index reads nothing set between), which ended the "
                         f"session's lease of `{fam}` if the lease was of that member and found nothing otherwise "
                         f"(the program's one hold that leases `{fam}` runs once)")
            text = (f"`{s.verb} {ref}` gives nothing back: `{first.verb} {ref}` at {first.pos.line}:{first.pos.col}, "
                    f"in the same block and in no hold of `{fam}` either, {ended}, and no hold leases it "
                    "again between, so the session holds nothing there when it runs")
            if s.verb != "release":
                text += "; the transfer reads KV the session no longer holds"
            self.ctx.reporter.warn(at, text)

    def _again(self, s: A.SRelease, r: ir.PoolRef, released: dict | None) -> dict | None:
        """Count ``s``, a `release P` (a transfer's included) in a hold of P, among the releases of its member
        written before it in the same block (``released``, by member); one that comes after as many of them as
        there are holds of the member around it gives nothing back when no hold of the program leases P: each
        release gave back the innermost hold's allocation that was left (language.txt §3), and "a session that
        holds and leases nothing on m releases nothing". Such a release is kept for :meth:`unleased_releases`
        with the first release of the member in the block. Members written with a computed index are not
        counted (they may name another member each time)."""
        if rules.unheld(self.held, r):
            return released  # (told as a release outside a hold, unleased_releases)

        def key(ix):
            return None if ix is None else ix.value if type(ix) is ir.Num else ...

        k = key(r.index)
        around = [key(h.index) for h in self.held if h.pool == r.pool]
        if k is ... or ... in around:
            return released
        if released is None:
            released = {}
        seen = released.setdefault((r.pool, k), [])
        seen.append(s)
        if len(seen) > around.count(k):
            self.again_releases.append((s, r, seen[0]))
        return released

    def stmt(self, s: Any, where: str) -> Any:
        nests = type(s) in (A.SHold, A.SBranch, A.SLoop)
        self.bdepth += nests
        outer, self.at = self.at, s
        try:
            if self.bdepth > rules.MAX_BLOCK_DEPTH:
                raise self.error(s.pos, f"loops, branches and holds nest more than {rules.MAX_BLOCK_DEPTH} deep "
                                 "here; a branch in a branch is one branch on both tests (`branch (a && b) { … }`), "
                                 "and a hold of pools taken together one hold (`hold P (u), Q (v) { … }`)")
            return self._stmt(s, where)
        finally:
            self.bdepth -= nests
            self.at = outer

    def workload_blocks(self, init: list[Any], turn: list[Any]) -> None:
        """What the workload's `init` and `turn` blocks may hold, told before the analyses that walk them
        (stale.Taint, Unset): a `turn;` in the `turn` block, whose `turn;` runs that block, sent them round
        it to Python's recursion limit, and the program was refused unlocated, "the program nests too deeply
        to compile", not at the statement (as :meth:`_stmt` tells it, linking the blocks, later)."""
        for where, block in (("init", init), ("turn", turn)):
            for s in A.walk_stmts(block):
                self._workload_stmt(s, where)

    def _workload_stmt(self, s: Any, where: str) -> None:
        t = type(s)
        if where in ("init", "turn") and t not in (A.SSet, A.SObserve, A.SBranch):
            what = KIND_NAMES.get(t, t.__name__)
            raise self.error(s.pos, f"{what} in the workload's `{where}` block: `{where}` holds only `set` "
                             "and `observe` (and `branch` over them)")

    def _stmt(self, s: Any, where: str) -> Any:
        t = type(s)
        self._workload_stmt(s, where)
        sp = span(s.pos) if hasattr(s, "pos") else None
        if t is A.SSet:
            return ir.Set(slot=self.slots[s.name], value=self.value(s.value, SESSION), span=sp)
        if t is A.SObserve:
            return ir.Observe(observe=self.observes[s.name], value=self.value(s.value, SESSION), span=sp)
        if t is A.SRecord:
            return ir.Record(record=self.records[s.name][0], values=[self.value(v, SESSION) for v in s.values],
                             span=sp)
        if t is A.STurn:
            return ir.Turn(span=sp)
        if t is A.SEnd:
            return ir.End(span=sp)
        if t is A.SHold:
            return self.hold(s, where)
        if t is A.SGrow:
            return ir.Grow(pool=self.held_ref(s.ref, "grow"), amount=self.amount(s.amount, f"grow {s.ref.dotted}"), span=sp)
        if t is A.SDrop:
            return ir.Drop(pool=self.ref(s.ref, "pool", SESSION), span=sp)
        if t is A.SRelease:
            r = self.ref(s.ref, "pool", SESSION)
            if rules.unheld(self.held, r):
                self.loose_releases.append((s, r))
            return ir.Release(pool=r, span=sp)
        if t is A.SLoad:
            return ir.Load(pool=self.held_ref(s.ref, s.verb), amount=self.amount(s.amount, f"load {s.ref.dotted}"), span=sp)
        if t is A.SRun:
            return self.run(s)
        if t is A.SBranch:
            guard = self.guard(s.guard)
            if type(guard) is ir.Num:
                v = _num_value(guard)
                if 0 < v < 1:
                    raise self.error(s.guard.pos, f"the guard is the constant {fmt_num(v)}, strictly between "
                                     f"0 and 1: that is a draw; write `branch with ({fmt_num(v)})`")
                if v not in (0.0, 1.0):
                    raise self.error(s.guard.pos, f"the guard is the constant {fmt_num(v)}; a guard is a "
                                     "test, 0 or 1")
                # the block a constant guard does not take is never run (self.dead_arm)
                if v == 1:
                    then = self.block(s.then, where)
                    orelse = self.dead_arm(lambda: self.block(s.orelse, where), [])
                else:
                    then = self.dead_arm(lambda: self.block(s.then, where), [])
                    orelse = self.block(s.orelse, where)
                return ir.Branch(guard=guard, then=then, orelse=orelse, span=sp)
            return ir.Branch(guard=guard, then=self.block(s.then, where), orelse=self.block(s.orelse, where),
                             span=sp)
        if t is A.SLoop:
            self.loops += 1
            try:
                return ir.Loop(body=self.block(s.body, where), span=sp)
            finally:
                self.loops -= 1
        if t is A.SChoose:
            n = self.expr(s.n, SESSION)
            count = self.cval(n)
            why = None if count is None else rules.choose_problem(count)
            if why:
                raise self.error(s.n.pos, f"choose {s.name}: {why}")
            return ir.Choose(slot=self.slots[s.name], n=n, keys=[self.expr(k, SESSION) for k in s.keys], span=sp)
        if t is A.SRequest:
            raise self.error(s.pos, "`request` outside a workload's session")
        if t is A.SMark:
            raise self.error(s.pos, "`mark` belongs in a queue's entry")
        raise self.error(getattr(s, "pos", None), f"{KIND_NAMES.get(t, t.__name__)}: a statement the "
                         f"kernel does not have, left by {self._left_by(t)}")

    def _kind_left_by(self, what: str, name: str, kind: Any) -> str:
        """Which sugar layer left the stage kind (``what`` "stage"), pool option (``what`` "pool") or workload item
        (``what`` "workload", ``name`` "") ``kind`` of ``name``, which the kernel does not have: ``the sugar layer 'weird' (plugin acme (serq-acme 0.3.0)),
        whose rewrite made it`` (or ``whose builder built it``), from Context.kinds_left; ``a sugar layer``
        when no plugin's layer did (it named none)."""
        key = kind if isinstance(kind, str) else repr(kind)  # (as _odd_kinds keys a kind that is no str)
        found = getattr(self.ctx, "kinds_left", {}).get((what, name, key))
        if found is None:
            return "a sugar layer"
        name, how = found
        pm = self.ctx.extensions.pm
        from . import _layer_provider

        by = f" (plugin {_layer_provider(pm, name)})" if pm is not None else ""
        did = "whose rewrite made it" if how == "rewrite" else "whose builder built it and whose rewrite (if any) left it"
        return f"the sugar layer {name!r}{by}, {did}"

    def _left_by(self, t: type) -> str:
        """Which sugar layer left a node of class ``t`` for the linker: ``the sugar layer 'twice' (plugin acme
        (serq-acme 0.3.0)), whose builder built it and whose rewrite leaves it`` when a plugin's builder built
        it in this compile (``a sugar layer`` otherwise: it named none)."""
        parser = getattr(self.ctx, "parser", None)
        name = getattr(getattr(parser, "context", None), "made", {}).get(t)
        if name is None:
            return "a sugar layer"
        from . import _layer_provider

        pm = self.ctx.extensions.pm
        by = f" (plugin {_layer_provider(pm, name)})" if pm is not None else ""
        return f"the sugar layer {name!r}{by}, whose builder built it and whose rewrite (if any) left it"

    def held_ref(self, ref: A.Var, what: str) -> ir.PoolRef:
        """The pool of a ``grow``, a ``load`` or a growing run (``what``), which stands in a hold of it
        (serq_ir.rules.unheld, at the pool's name)."""
        r = self.ref(ref, "pool", SESSION)
        if rules.unheld(self.held, r):
            ix = r.index
            name = ref.dotted if type(ix) is not ir.Num else f"{ref.dotted}[{_num_value(ix):g}]"
            raise self.error(ref.pos, rules.unheld_message(what, name))
        return r

    def amount(self, e: Any, verb: str, what: str = "the amount", m: Moment = SESSION) -> Any:
        """An amount of memory (a hold's units or reserve, a grow's or load's amount): a constant one is
        not negative."""
        x = self.expr(e, m)
        if type(x) is ir.Num:
            why = rules.amount_problem(what, _num_value(x))
            if why:
                self.value_problem(e.pos, f"{verb}: {why}; an amount of memory is not negative")
        return x

    def negative_bound(self, x: Any, e: Any, clause: str) -> None:
        """A warning at a hold's constant negative ``reuse`` bound or ``cache`` length (``clause``): language.txt
        §3 makes each a bound (the hold consumes at most ρ units of its prefix; min(ℓ, computed) units stay
        cached), so a negative one is taken as 0, as a computed one is (the report warns of that once), but
        written as a constant it is a slip for 0 or another number (rules.negative_bound_message)."""
        if type(x) is ir.Num and not self.dead and _num_value(x) < 0:
            self.ctx.warn_once(e.pos, rules.negative_bound_message(clause, _num_value(x)))

    def hold(self, s: A.SHold, where: str) -> ir.Hold:
        pools = []
        names = []
        self.tainted = self.stale.headers.get(id(s), {})
        for p in s.pools:
            ref = self.ref(p.ref, "pool", ADMIT)
            names.append(p.ref.dotted)
            pools.append(ir.HoldPool(pool=ref, units=self.amount(p.units, f"hold {p.ref.dotted}", "the units", ADMIT),
                                     reserve=None if p.reserve is None else
                                     self.amount(p.reserve, f"hold {p.ref.dotted}", "the reserve", ADMIT)))
        twice = rules.hold_twice(pools)
        if twice is not None:
            p, ix = s.pools[twice], pools[twice].pool.index
            name = p.ref.dotted if ix is None else f"{p.ref.dotted}[{_num_value(ix):g}]"
            raise self.error(p.ref.pos, rules.same_member_message(f"`{name}`"))
        reuse = None
        if s.reuse is not None:
            if s.cache is None:
                raise self.error(s.reuse.pos, "`reuse` on a hold without `cache`: a memory-only hold consumes "
                                 "no prefix; give it a `cache (…)` clause")
            reuse = self.expr(s.reuse, ADMIT)
            self.negative_bound(reuse, s.reuse, "reuse")
        self.tainted = {}
        self.hold_stack.append(s)
        n_held = len(self.held)
        self.held.extend(hp.pool for hp in pools)
        self.firsts.append(pools[0].pool)
        try:
            body = self.block(s.body, where)
        finally:
            self.hold_stack.pop()
            del self.held[n_held:]
            self.firsts.pop()
        cache = None if s.cache is None else self.expr(s.cache, SESSION)
        if cache is not None:
            self.negative_bound(cache, s.cache, "cache")
        lease = None
        if s.lease is not None:
            if s.lease.dotted not in names:
                raise self.error(s.lease.pos, rules.lease_unheld_message(s.lease.dotted))
            lease = ir.Lease(pool=self.ref(s.lease, "pool", SESSION), time=self.expr(s.lease_time, SESSION))
            if type(lease.time) is ir.Num and (why := rules.lease_time_problem(_num_value(lease.time))):
                self.value_problem(s.lease_time.pos, f"lease {s.lease.dotted}: {why}; a lease's time is not negative")
            if rules.lease_unheld(pools, lease):  # another member of a family the hold holds
                ix = lease.pool.index
                name = s.lease.dotted if ix is None else f"{s.lease.dotted}[{_num_value(ix):g}]"
                raise self.error(s.lease.pos, rules.lease_unheld_message(name))
            self.leased.append(lease.pool)
            self.lease_holds.append((lease.pool.pool, not self.loops and not self.hold_stack))
        return ir.Hold(pools=pools, body=body, reuse=reuse, cache=cache, lease=lease, span=span(s.pos))

    def run(self, s: A.SRun) -> ir.Run:
        if not s.stages:
            raise self.error(s.pos, "`run (…)` names no stage: only in a queue's entry does it run on the "
                             "queue's own; write `run STAGE (…)`")
        refs = [self.ref(v, "stage", SESSION) for v in s.stages]
        kinds = [self.stages[v.dotted].kind for v in s.stages]
        if len(s.stages) > 1:
            seen: dict[str, A.Var] = {}
            for v, k in zip(s.stages, kinds):
                if v.dotted in seen:
                    first = seen[v.dotted]
                    if not (first.indexes() or v.indexes()):
                        raise self.error(v.pos, f"`{v.dotted}` is named twice in one run; a run names each stage "
                                         "array once")
                    # members of one array, by constant indexes too: a user of `tool[0], tool[1]` asked why
                    name = v.dotted
                    raise self.error(v.pos, f"`{name}` is named twice in one run (`{_written_ref(first)}` and "
                                     f"`{_written_ref(v)}`); a run names each stage array once, whatever the "
                                     "indexes (an index is known only when the run starts): a job on several "
                                     "members is a run over stages declared apart (`stage "
                                     f"{name}_0 : ps(…); stage {name}_1 : ps(…);`, `run {name}_0, {name}_1 (w);`)")
                seen[v.dotted] = v
                fam = self.stages[v.dotted]
                cap = fam.item.kind.arg if k == "ps" else None
                ok = False
                if cap is not None:
                    try:
                        ok = self.ctx.const(cap, "") > 0
                    except Exception:
                        ok = False
                if not ok:
                    raise self.error(v.pos, f"`{v.dotted}` in a run over several stages: every stage of such "
                                     "a run is ps(φ) with a constant φ above 0")
            if s.mode != "plain":
                raise self.error(s.pos, f"a run over several stages has no mode (`{s.mode}`)")
            self.multi_run = self.multi_run or s.pos
        else:
            k = kinds[0]
            name = s.stages[0].dotted
            if k == "step" and s.mode == "plain":
                raise self.error(s.pos, f"`run {name} (…)`: `{name}` is a step stage, and a run there says "
                                 f"what it is, `run {name} prefill (…)` or `run {name} decode (…)`")
            if k != "step" and s.mode != "plain":
                raise self.error(s.pos, f"`run {name} {s.mode} (…)`: `{name}` is no step stage; a mode is "
                                 "for a step stage only")
        if s.growing is not None:
            # a growing run's work is tokens, its growth the position a step stage's planning gives it;
            # a plain run's work is time (§3 Stages), and it grew nothing: the user's mistake, as a mode is
            g = s.growing.dotted
            if len(s.stages) > 1:
                raise self.error(s.growing.pos, f"`growing {g}`: a run over several stages grows no pool; a "
                                 "run grows a pool token by token on a step stage only")
            if kinds[0] in _TIME_KINDS:
                name = s.stages[0].dotted
                raise self.error(s.growing.pos, f"`growing {g}`: `{name}` is a {kinds[0]} stage, whose work "
                                 "is time; a run grows a pool token by token on a step stage only")
        growing = None if s.growing is None else self.held_ref(s.growing, "run … growing")
        if len(refs) == 1 and kinds[0] == "step":
            self._other_memory(s, refs[0], growing)
            self._other_admitter(s, refs[0])
        work = self.expr(s.work, SESSION)
        if type(work) is ir.Num:
            why = rules.work_problem(_num_value(work))
            if why:
                names = ", ".join(v.dotted for v in s.stages)
                self.value_problem(s.work.pos, f"run {names}: {why}; a run's work is not negative")
        return ir.Run(stages=refs, work=work, mode=s.mode, growing=growing, span=span(s.pos))

    def _other_memory(self, s: A.SRun, ref: ir.StageRef, growing: ir.PoolRef | None) -> None:
        """A run on a member of a step family whose `memory` is a pool family of its size (`engine[i]` counts
        `kv[i]`) that grows another member of that family, or runs inside a hold of one: refused where both
        indexes are numbers (`prefill on engine[0] (…) growing kv[1]`); where either is computed, the
        simulator says so at the first such run (serq_sim.fleet; docs/language.md, "A run on another member's
        memory")."""
        stages = getattr(self, "ir_stages", None)
        if stages is None or not 0 <= ref.stage < len(stages):
            return
        st = stages[ref.stage]
        mem = getattr(st.kind, "memory", None)
        fam = next((f for f in self.pools.values() if f.index == mem), None) if mem is not None else None
        if fam is None or st.size < 2 or fam.size != st.size or type(ref.index) is not ir.Num:
            return
        a = _num_value(ref.index)
        if growing is not None and growing.pool == mem:
            other, pos, how = growing, s.growing.pos, "this run grows"
        else:
            other = next((r for r in reversed(self.held) if r.pool == mem), None)
            pos, how = s.stages[0].pos, "this run is inside a hold of"
        if other is None or type(other.index) is not ir.Num or _num_value(other.index) == a:
            return
        b = _num_value(other.index)
        stage, pool = st.name, fam.item.name
        raise self.error(pos, f"`{stage}[{a:g}]`'s memory is `{pool}[{a:g}]` (`memory {pool}` pairs `{stage}[i]` "
                         f"with `{pool}[i]`), and {how} `{pool}[{b:g}]`, another member's: no iteration of "
                         f"`{stage}[{a:g}]` would count that KV, and its growth would preempt among "
                         f"`{stage}[{b:g}]`'s residents; run it on `{stage}[{b:g}]`, or hold `{pool}[{a:g}]`")

    def _other_admitter(self, s: A.SRun, ref: ir.StageRef) -> None:
        """A run on a member of a step family inside a hold whose first pool another member admits (`pool
        reqs[N] { admit via engine; }` beside `stage engine[N]` pairs `reqs[i]` with `engine[i]`; the innermost
        hold whose first pool is of such a family): refused where both indexes are numbers (`hold reqs[0] (1)
        { run engine[1] decode (…); }`); where either is computed, the simulator says so at the first such run
        (serq_sim.fleet; docs/language.md, "A run on another member's engine")."""
        stages, pools = getattr(self, "ir_stages", None), getattr(self, "ir_pools", None)
        if stages is None or pools is None or not 0 <= ref.stage < len(stages):
            return
        st = stages[ref.stage]
        if st.size < 2 or type(ref.index) is not ir.Num:
            return
        first = next((r for r in reversed(self.firsts)
                      if pools[r.pool].admit_via == ref.stage and pools[r.pool].size == st.size), None)
        if first is None or type(first.index) is not ir.Num:
            return
        a, b = _num_value(ref.index), _num_value(first.index)
        if a == b:
            return
        stage, pool = st.name, pools[first.pool].name
        raise self.error(s.stages[0].pos, f"`{pool}[{b:g}]` is admitted by `{stage}[{b:g}]` (`admit via {stage}` "
                         f"pairs `{pool}[i]` with `{stage}[i]`), and this run inside its hold is on `{stage}[{a:g}]`: "
                         f"`{stage}[{b:g}]`'s waiting loop would admit the request (its budget, its slots) and "
                         f"`{stage}[{a:g}]` serve it; run it on `{stage}[{b:g}]`, or hold `{pool}[{a:g}]`")

    # -----------------------------------------------------------------------------------------------
    # The program
    # -----------------------------------------------------------------------------------------------

    def taint(self, init: list[Any], turn: list[Any], session: list[Any]) -> None:
        """The first lint of §3, flow-sensitive: for every hold, the attributes whose value reaching its
        header was set from live pool or stage state (directly, or from an attribute so set), each with
        the set that did it; and the same for the keys read later than the statements (stale.Taint)."""
        self.stale = Taint(turn).run(init, session)

    def stale_keys(self, keys: list[Any], states: dict[str, dict[str, Pos]], name: str,
                   place: tuple[str, str, str]) -> None:
        """A warning at the first read, in a pool's or a stage's ``keys``, of each attribute set from live
        state that reaches them (``states``, by the family's ``name``): the first lint's trap, where the
        scheduler reads the attribute later than the set (stale.py)."""
        state = states.get(name) or {}
        told: set[str] = set()
        for k in keys:
            for x in _outside_indexes(k):  # (a member's index names the member, as in a hold's header: ref)
                n = x.simple if type(x) is A.Var else None
                if n in state and n not in told and n in self.slots:
                    told.add(n)
                    where, when, instead = place
                    self.ctx.reporter.warn(x.pos, stale_message(n, self.stale.chain(n, state[n]),
                                                                where.format(name), when, instead, at=x.pos))

    def unloaded_columns(self, init: list[Any], session: list[Any]) -> None:
        """A warning at the first read of a trace's column that no `turn;` has loaded on some path to it
        (:class:`Unloaded`): the session's columns are 0 until its first `turn;` loads its first row
        (docs/language.md, "A trace file"), so a session that reads `new` before it, having left out its first
        `turn;`, ran its first request on a prompt of 0 tokens and failed far from the cause (lib/vllm.sq's
        `prefill on engine`: "the run's work is negative (-1)")."""
        reads = Unloaded().run(init, session)
        if not reads:
            return
        pos, name = reads[0]
        others = sorted({n for _, n in reads} - {name}, key=TRACE_ATTRIBUTES.index)
        also = (f" (and so {', '.join(f'`{n}`' for n in others)})" if others else "")
        self.ctx.reporter.warn(pos, f"`{name}` is read before the session's first `turn;`, where it is 0{also}: a "
                               "trace's columns are loaded by `turn;`, the session's first row at its first "
                               "`turn;`, so a session that replays the trace begins with `turn;`")

    def unreachable(self, session: list[Any]) -> None:
        """A warning at the first statement of each block that the session never reaches (:mod:`.reach`), once
        for each place in the source (a definition's body written out at several uses warns once)."""
        seen = set()
        for s, why in reach.unreachable(session):
            key = (s.pos.file, s.pos.line, s.pos.col)
            if key not in seen:
                seen.add(key)
                self.ctx.reporter.warn(s.pos, f"this statement never runs: {why}")

    def unset_reads(self, init: list[Any], turn: list[Any], session: list[Any]) -> None:
        """A warning at the first read of each attribute the program sets that no path has set before it
        (:class:`Unset`): an attribute is 0 until the session sets it, so the read is of 0 on every path, and
        a P/D program that named its decoder's member `pkv[j]` one statement before its `choose j` prefilled
        on member 0 whatever the router chose (an error only when a prefill member other than 0 held it). In a
        queue's entry the name is said as the entry writes it (`t`, not the `D.t` the queue sugar gives it),
        as the live-state lint says it (stale.as_written)."""
        attributes = {a.name for a in self.attributes if not a.builtin}
        reads = Unset(attributes, turn).run(init, session)
        if not reads:
            return
        warn_unset_reads(self.ctx.reporter, reads, (init, turn, session), as_written)

    def link(self) -> ir.Program:
        ctx = self.ctx
        self.declare()
        workload = None
        session_item = None
        run_item = None
        share_item = None
        gauges: list[A.GaugeItem] = []
        for item in self.module.items:
            if isinstance(item, A.WorkloadItem):
                if workload is not None:
                    raise self.error(item.pos, "duplicate workload: a program has one")
                workload = item
            elif isinstance(item, A.SessionItem):
                if session_item is not None:
                    raise self.error(item.pos, "a second `session`: a program has one")
                session_item = item
            elif isinstance(item, A.RunItem):
                if run_item is not None:
                    raise self.error(item.pos, "a second `run { … }` block")
                run_item = item
            elif isinstance(item, A.ShareItem):
                if share_item is not None:  # at the second, the first noted (a program divides its stages one way)
                    raise self.ctx.reporter.noted(
                        self.error(item.pos, "`share` is given twice: a program divides its stages one way and says "
                                   f"it once; the first is `share {share_item.policy}`"),
                        share_item.pos, f"the first `share {share_item.policy}` is here")
                share_item = item
            elif isinstance(item, A.GaugeItem):
                gauges.append(item)
            elif isinstance(item, (A.Let, A.PoolItem, A.StageItem)):
                pass
            else:
                what = type(item).__name__
                raise self.error(getattr(item, "pos", None), f"an item the kernel does not have ({what}), "
                                 f"left by {self._left_by(type(item))}")
        wl: dict[str, Any] = {}
        if workload is not None:
            for w in workload.items:
                key = w.kind
                if not isinstance(key, str) or key not in A.KERNEL_WORKLOAD_ITEMS:
                    # (only the kernel's items reach here: one a sugar layer left was kept and never read, and
                    # the workload compiled without it, without a word)
                    raise self.error(w.pos, f"the workload: an item the kernel does not have ({key!r}), left by "
                                     f"{self._kind_left_by('workload', '', key)}")
                if key in wl and key != "hidden":
                    raise self.error(w.pos, f"the workload has two `{key}`s")
                if key == "hidden":
                    for name, pos in w.arg:
                        first = next((p for n, p in wl.get("hidden", []) if n == name), None)
                        if first is not None:
                            raise self.error(pos, f"`{name}` is hidden twice (first at {first.line}:{first.col})")
                        wl.setdefault("hidden", []).append((name, pos))
                elif key == "session":
                    raise self.error(w.pos, "a workload `session` needs the two-sides layer")
                else:
                    wl[key] = w
        init = wl["init"].arg if "init" in wl else []
        turn = wl["turn"].arg if "turn" in wl else []
        session = session_item.body if session_item is not None else []
        self.workload_blocks(init, turn)
        self.collect_attributes(init, turn, session, "trace" in wl)
        for name, pos in wl.get("hidden", []):
            if name in ("cached", "computed"):
                raise self.error(pos, f"`{name}` cannot be hidden: the scheduler itself sets it")
            if name not in self.slots:
                raise self.error(pos, f"`hidden {name}`: the program sets no attribute `{name}`")
            self.hidden.add(name)
        self.attributes = [ir.Attribute(name=a.name, builtin=a.builtin, hidden=a.name in self.hidden)
                           for a in self.attributes]
        self.taint(init, turn, session)
        self.unreachable(session)
        self.unset_reads(init, turn, session)
        if "trace" in wl:
            self.unloaded_columns(init, session)
        pools = [self.pool(n, f) for n, f in self.pools.items()]
        stages = [self.stage(n, f) for n, f in self.stages.items()]
        self.ir_stages = stages  # (a step run's memory: _other_memory)
        self.ir_pools = pools  # (the engine that admits a hold: _other_admitter)
        cycle = rules.budget_cycle(stages)
        if cycle is not None:
            i, field, _at, obs = cycle
            target = stages[obs.target.stage].name
            me = stages[i].name
            via = "its own stage's" if target == me else f"and `{target}`'s budget or chunk reads `budget_left({me})` back"
            sp = obs.span
            raise self.error(Pos(sp.file, sp.line, sp.col) if sp is not None else None,
                             f"the {field} of step stage `{me}` reads `budget_left({target})`, {via}: "
                             "`budget_left(S)` evaluates S's budget and chunk, so this would never end")
        ir_init = self.block(init, "init")
        ir_turn = self.block(turn, "turn")
        ir_session = self.block(session, "session")
        # workload
        arrive: Any = ir.NoArrivals()
        if "arrive" in wl:
            w = wl["arrive"]
            kind = w.extra
            if kind == "poisson":
                rate = ctx.const_positive(w.arg, "the arrival rate", "arrivals per second")
                arrive = ir.Poisson(rate=number(rate), span=span(w.pos))
            elif kind == "renewal":
                gap = self.expr(w.arg, ARRIVAL)
                if type(gap) is ir.Num and (why := rules.gap_problem(_num_value(gap))):
                    raise self.error(w.arg.pos, f"arrive renewal: {why}")
                arrive = ir.Renewal(gap=gap, span=span(w.pos))
            elif kind in ("closed", "batch"):
                what = "the population of `arrive closed`" if kind == "closed" else "the count of `arrive batch`"
                n = ctx.const_int(w.arg, what)
                if n > MAX_POPULATION:  # all live at once: more could only end in a MemoryError
                    raise self.error(w.arg.pos, f"{what} is at most {MAX_POPULATION:,} sessions (all live at "
                                                f"once), not {fmt_num(float(n))}")
                arrive = (ir.Closed if kind == "closed" else ir.Batch)(n=n, span=span(w.pos))
        trace = None
        if "trace" in wl:
            w = wl["trace"]
            if len(w.arg) > ir.MAX_PATH:  # (no file has such a name; the IR holds a file's name to it)
                raise self.error(w.pos, ir.long_file_name("the trace's", len(w.arg)))
            trace = ir.Trace(path=w.arg, ordered=bool(w.extra), span=span(w.pos))
        workload_ir = ir.Workload(arrive=arrive, trace=trace, init=ir_init, turn=ir_turn)
        self.ungrown_preempts(pools, (ir_init, ir_turn, ir_session))
        self.unleased_releases()
        self.lease_ended_before()
        # gauges
        gauge_ir = []
        gauge_names: set[str] = set()
        for g in gauges:
            if g.name in gauge_names:
                raise self.error(g.pos, f"gauge `{g.name}` is declared twice")
            if g.name in self.observes:
                first = self.observe_at[g.name]  # (its file named when it is another's: a library's)
                raise self.error(g.pos, f"gauge `{g.name}` has the name of an observe (at {first.seen_from(g.pos)})")
            gauge_names.add(g.name)
            gauge_ir.append(ir.Gauge(name=g.name, value=self.value(g.value, GAUGE), span=span(g.pos)))
        # share
        share = None
        if share_item is not None:
            why = self.ctx.extensions.problem("share policy", share_item.policy, f"`{share_item.policy}`")
            if why:
                raise self.error(share_item.pos, f"`share {share_item.policy}`: {why}")
            self.unread_pulls()
            if self.multi_run is None:
                raise self.error(share_item.pos, "`share` with no run over several stages: it divides such "
                                 "runs' stages, and the program has none")
            share = share_item.policy
        elif self.multi_run is not None:
            raise self.error(self.multi_run, "a run over several stages needs the program's `share maxmin;` "
                             "or `share bottleneck;`: there is no default")
        run = self.run_settings(run_item, arrive)
        observes = [ir.ObserveDecl(name=n, test=self.observe_tests[i], instant=self.observe_instants[i])
                    for n, i in self.observes.items()]
        constants = [ir.Constant(name=n, value=number(v)) for n, v in self.lets.items()]
        records = [ir.RecordDecl(name=n, columns=cols) for n, (_, cols) in self.records.items()]
        return ir.Program(version=ir.IR_VERSION, attributes=self.attributes, constants=constants,
                          observes=observes, records=records, gauges=gauge_ir, pools=pools, stages=stages, workload=workload_ir,
                          session=ir_session, share=share,
                          share_span=span(share_item.pos) if share_item is not None else None, run=run,
                          source=self.source)

    def unread_pulls(self) -> None:
        """The pull relations (sugar.queues) whose reader reads nothing: no entry of the reader that holds a
        read (a `transfer` without `on`) is called `from` the source. When no run over several stages is left,
        none reads, and the share the first wrote divides nothing: an error at the first, naming every
        relation, each with a note where it stands past the first. Otherwise a warning at each relation that
        reads nothing, by name (the others' reads use the share): its latency and NICs are never used."""
        pulled = self.ctx.notes.get("share_of_pull") or []
        read = self.ctx.notes.get("pull_read") or set()

        def why(r: str, src: str, reads: bool) -> str:
            return (f"`{r} pull {src}` reads nothing: its read is a `transfer` without `on` in an entry of `{r}` "
                    f"called `from {src}`, and " + (f"no entry of `{r}` that holds one is called `from {src}`"
                                                    if reads else f"no entry of `{r}` holds one"))

        if self.multi_run is None and pulled:
            if len(pulled) == 1:
                r, src, reads, at = pulled[0]
                raise self.error(at, why(r, src, reads) + ", so the relation's share divides no NIC")
            e = self.error(pulled[0][3], "no pull relation reads, so their share divides no NIC: "
                           + "; ".join(why(r, src, reads) for r, src, reads, _ in pulled))
            for r, src, _, at in pulled[1:]:
                e = self.ctx.reporter.noted(e, at, f"`{r} pull {src}` is here")
            raise e
        for r, src, reads, at in pulled:
            if r not in read:
                self.ctx.reporter.warn(at, why(r, src, reads) + ", so the relation, its latency and its "
                                       "share, applies to no read")

    def ungrown_preempts(self, pools: list[ir.Pool], blocks: tuple[list, ...]) -> None:
        """A warning at the `preempt` of each pool that no statement grows (no `grow`, `load` or run `growing`
        of it): a pool preempts only when a grow finds no room (pool-reference.txt), so its order never
        applies, and a program that put a priority preemption there (`pool reqs { …; preempt by (-prio)
        requeue tail; }` beside an engine that grows `kv`) ran the memory pool's order without a word."""
        from serq_ir.analysis import blocks as nested

        grown: set[int] = set()
        runs: set[int] = set()  # the pools a run grows (the runs a step stage gives tokens)
        for top in blocks:
            for block in (top, *nested(top)):
                for x in block:
                    if isinstance(x, (ir.Grow, ir.Load)):
                        grown.add(x.pool.pool)
                    elif isinstance(x, ir.Run) and x.growing is not None:
                        grown.add(x.growing.pool)
                        runs.add(x.growing.pool)
        for i, p in enumerate(pools):
            at = self.scheduled_at.get(p.name)
            if at is None or (i in runs and p.name in self.preempt_at):
                continue
            why = ("preempts nobody (`preempt none`, the default)" if p.name not in self.preempt_at
                   else f"no run grows it (`growing {p.name}`)")
            self.ctx.reporter.warn(at, f"pool `{p.name}` says `cache scheduled`, and {why}: it caches the tokens "
                                   "a step stage's planning gave a hold that the same planning preempts, so this "
                                   "never applies")
        others = [p.name for i, p in enumerate(pools) if i in grown]
        for i, p in enumerate(pools):
            at = self.preempt_at.get(p.name)
            if at is None or i in grown:
                continue
            where = (f"; the program grows {', '.join(f'`{o}`' for o in others)}, whose `preempt` decides"
                     if others else "")
            self.ctx.reporter.warn(at, f"pool `{p.name}` says how to preempt, and nothing grows it (no `grow`, "
                                   f"`load` or run `growing {p.name}`): a pool preempts only when a hold grows "
                                   f"past its room, so this never applies{where}")

    def unleased_releases(self) -> None:
        """A warning at each `release P` (a `transfer … from P`'s included) that stands in no hold of P when
        no hold of the program leases P: a release outside a hold on P ends the session's lease of it, and "a
        session that holds and leases nothing on m releases nothing" (language.txt §3), so such a release
        never gives anything back. A P/D program whose prefill hold had no `lease` ran its transfer silently:
        the prefill's KV went back to the cache at the hold's end, evictable before the read, and the read
        counted its tokens at the decoder all the same. Once for each place in the source."""
        seen = set()
        # one lease of each written member is enough to tell (a number, none, or computed): a release asked of
        # every lease of a program of thousands took a time quadratic in its size
        forms = {(p.pool, None if p.index is None else p.index.value if type(p.index) is ir.Num else ...): p
                 for p in self.leased}
        leased = list(forms.values())
        # the releases outside a hold, then the second releases in one block (each told once, at its place)
        for s, r, first in [(s, r, None) for s, r in self.loose_releases] + self.again_releases:
            at = s.ref.pos
            key = (at.file, at.line, at.col)
            if key in seen or not rules.names_none(leased, r):
                continue
            seen.add(key)
            fam, ref = s.ref.dotted, _written_ref(s.ref)
            if first is not None:
                text = (f"`{s.verb} {ref}` gives nothing back: `{first.verb} {ref}` at {first.pos.line}:{first.pos.col}, in "
                        f"the same block, gave back the allocation on `{fam}` of the hold around it, no other hold "
                        f"around holds `{fam}`, and no hold of the program leases `{fam}`, so the session holds "
                        "nothing there when it runs (a release gives back the innermost hold's allocation that is "
                        "left, and then the lease a hold took)")
                if s.verb != "release":
                    text += "; the transfer reads KV the session no longer holds"
            elif s.verb == "release":
                text = (f"`release {ref}` gives nothing back: it stands in no hold of `{fam}`, and no hold of "
                        f"the program leases `{fam}`, so the session holds nothing there when it runs (a release "
                        f"outside a hold ends the lease a hold took, `hold {ref} (…) {{ … }} lease {ref} (t)`)")
            else:
                text = (f"`{s.verb} {ref}` reads KV the session no longer holds: it stands in no hold of "
                        f"`{fam}`, and no hold of the program leases `{fam}`, so the hold that computed the KV "
                        "gave it back at its end, to the cache, where it may be evicted before the read, and the "
                        f"transfer's release ends nothing; keep the KV for the read: `lease {ref} (inf)` after "
                        "that hold's block")
            self.ctx.reporter.warn(at, text)

    def seed(self, value: Any) -> int:
        """The run block's seed, a whole number from 0 to 2**64 - 1, exactly as written. The language's
        numbers are doubles, which hold every whole number only up to 2**53: ``seed 9007199254740993;`` ran
        the seed 9007199254740992, and ``seed 18446744073709551615;`` (2**64 - 1, the largest seed) was
        refused as "not 18446744073709551616". A seed of that size written as a number is read from its
        digits; one computed (a let, an expression) is refused there, where its value is not exact."""
        v = self.ctx.const_int(value, "the seed", minimum=0)
        if v < 2**53:
            return v
        text = self._literal(value)
        if text is None:
            raise self.error(value.pos, f"the seed is computed as {v}, beyond 2**53, where a number is not "
                             "exact: write the seed's digits in the run block (or give --seed N)")
        from decimal import Decimal

        d = Decimal(text)
        if d.adjusted() >= 20 or int(d) > rules.MAX_SEED:  # (a fraction is refused above: v is whole)
            shown = text if len(text) <= 40 else f"{text[:20]}… ({len(text)} characters)"
            raise self.error(value.pos, f"the seed is at most 2**64 - 1 ({rules.MAX_SEED}), not {shown}")
        if d != d.to_integral_value():
            raise self.error(value.pos, f"the seed must be an integer of at least 0, not {text}")
        return int(d)

    def _literal(self, value: Any) -> str | None:
        """The text of the numeric literal ``value`` in the source (``18446744073709551615``), or None when
        ``value`` is not one (a name, an expression)."""
        if not isinstance(value, A.Num) or value.pos is None:
            return None
        line = self.ctx.sources.line(value.pos.file, value.pos.line)
        m = _LITERAL.match(line or "", value.pos.col - 1)
        return None if m is None else m.group()

    def run_settings(self, item: A.RunItem | None, arrive: Any) -> ir.RunSettings:
        if item is None:
            return ir.RunSettings()
        ctx = self.ctx
        kw: dict[str, Any] = {}
        seen: set[str] = set()
        spans: dict[str, ir.Span] = {}  # where each setting is given: a run-time error it causes points there
        for name, value, pos in item.fields:
            if name in seen:
                raise self.error(pos, f"`{name}` is given twice in the run block")
            seen.add(name)
            spans[name] = span(pos)
            if name == "horizon":
                v = ctx.const(value, "the horizon")
                if not v > 0:
                    raise self.error(value.pos, f"the horizon must be above 0, not {fmt_num(v)}{ctx.given(value)}")
                kw["horizon"] = number(v)
            elif name == "warmup":
                v = ctx.const(value, "the warmup")
                if not (v >= 0 and math.isfinite(v)):
                    raise self.error(value.pos, f"the warmup must be a finite number of at "
                                     f"least 0, not {fmt_num(v)}{ctx.given(value)}")
                if v != 0:  # (`warmup 0;` is the default's IR: written_defaults_left_out)
                    kw["warmup"] = float(v)
            elif name == "seed":
                kw["seed"] = self.seed(value)
            elif name == "arrivals":
                if not isinstance(arrive, (ir.Poisson, ir.Renewal)):
                    raise self.error(pos, "`arrivals` needs an open workload (`arrive poisson` or "
                                     f"`arrive renewal`){rules.open_advice(arrive)}")
                v = ctx.const(value, "`arrivals`")
                why = rules.arrivals_count_problem(v)  # (the one rule: a float beyond 2**53 is not exact)
                if why:
                    raise self.error(value.pos, f"{why}{ctx.given(value)}")
                kw["arrivals"] = int(v)
        why = rules.window_problem(kw.get("horizon", "inf"), kw.get("warmup", 0.0))  # the one rule
        if why is not None:
            # at the warmup, as an IR file's is ('$.run.warmup') and the command line's (--warmup): a warmup of 0
            # is below every horizon, so the block gives one
            raise self.error(next(pos for name, _v, pos in item.fields if name == "warmup"), why)
        if not spans:  # `run { }`: the block's own place, for an error of a setting it does not give
            spans["block"] = span(item.pos)
        return ir.RunSettings(**written_defaults_left_out(ir.RunSettings, kw), span=ir.RunSpans(**spans))


def written_defaults_left_out(cls: type, kw: dict[str, Any]) -> dict[str, Any]:
    """``kw``, the fields of an IR node ``cls`` as a declaration gave them, without those equal to the field's
    default: an option written as its default (`evict lru;`, `preempt none;`, `queue fifo;`, `cap inf;`, `seed
    1;`) compiles to the IR of the declaration that leaves it out, byte for byte. The IR leaves out a field whose
    value is its default object itself (msgspec's omit_defaults compares by identity), so an equal value made
    anew was written (`"evict":{"kind":"EvictLru"}`), and programs that mean the same had two IRs and two IR
    hashes; `serve admission;` and `fifo (1)` were already one node with their omission. docs/language.md
    ("Defaults written out")."""
    import msgspec

    defaults = {f.name: f.default for f in msgspec.structs.fields(cls)}
    out = {}
    for k, v in kw.items():
        d = defaults.get(k, msgspec.NODEFAULT)
        if d is not msgspec.NODEFAULT and type(v) is type(d) and v == d:
            continue
        out[k] = v
    return out


class Flow:
    """An analysis of the names a path to each statement has given a value, in execution order: a block's
    statements one after another from the state before it, ``None`` once the flow has ended (``end;``); each
    analysis says what a statement does (``stmt``)."""

    def block(self, stmts: list[Any], state: frozenset[str] | None) -> frozenset[str] | None:
        for s in stmts:
            if state is None:
                return None
            state = self.stmt(s, state)
        return state

    def stmt(self, s: Any, state: frozenset[str]) -> frozenset[str] | None:
        raise NotImplementedError


class Unloaded(Flow):
    """The reads of a trace's columns (``new``, ``out``, ``think``, ``more``, ``forced``) that some path reaches
    before any `turn;` has loaded them: a must-analysis over the statements in execution order, the state the
    columns every path to a point has loaded (all of them after a `turn;`) or given a value (a `set`). A
    branch keeps what both arms have, a loop's body starts from its entry (its first pass), a hold's header is
    read before its body and its `cache` and `lease` after it; ``end;`` ends the flow (``None``). The
    branches' tests are not read: a read behind a test that only a later turn makes true is still found."""

    def __init__(self) -> None:
        #: (position, column) of each read found, in execution order
        self.reads: list[tuple[Pos, str]] = []

    def run(self, init: list[Any], session: list[Any]) -> list[tuple[Pos, str]]:
        self.block(session, self.block(init, frozenset()))
        return self.reads

    def see(self, exprs: Any, state: frozenset[str]) -> None:
        found = [(x.pos, x.simple) for e in exprs for x in A.walk_expr(e)
                 if type(x) is A.Var and x.simple in TRACE_ATTRIBUTES and x.simple not in state]
        self.reads.extend(sorted(found, key=lambda r: (r[0].line, r[0].col)))

    def stmt(self, s: Any, state: frozenset[str]) -> frozenset[str] | None:
        t = type(s)
        if t is A.STurn:
            return frozenset(TRACE_ATTRIBUTES)
        if t is A.SEnd:
            return None
        if t is A.SHold:
            self.see([x for p in s.pools for x in A.stmt_exprs(p)] + [b.value for b in s.bindings]
                     + ([s.reuse] if s.reuse is not None else []), state)
            end = self.block(s.body, state)
            if end is not None:
                self.see([x for x in (s.cache, s.lease_time) if x is not None], end)
            return end
        self.see(A.stmt_exprs(s), state)
        if t is A.SSet:
            return state | {s.name} if s.name in TRACE_ATTRIBUTES else state
        if t is A.SBranch:
            a, b = self.block(s.then, state), self.block(s.orelse, state)
            return b if a is None else a if b is None else a & b
        for b in A.blocks_of(s):
            state = self.block(b, state)
            if state is None:
                return None
        return state


def warn_unset_reads(reporter: Any, reads: dict[str, Pos], blocks: Any, shown: Callable[[str, Pos], str]) -> None:
    """The warning at each of ``reads`` (:class:`Unset`'s first reads, name to place), the one rule of its
    words: the name as ``shown`` says it (as the statement writes it) and the first statement of ``blocks``
    that sets it (the session's, or an entry's nobody calls: serq_frontend.sugar.queues)."""
    # (an attribute is a name a `set` or a `choose` of these blocks assigns: collect_attributes) the first
    # statement that sets each, found in one walk (one walk per warning took a time quadratic in the size)
    firsts: dict[str, Pos] = {}
    for block in blocks:
        for s in A.walk_stmts(block):
            if isinstance(s, (A.SSet, A.SChoose)):
                firsts.setdefault(s.name, s.pos)
    for name, pos in reads.items():
        first = firsts.get(name)
        at = "" if first is None else f"; the first statement that sets it is at {first.seen_from(pos)}"
        reporter.warn(pos, f"`{shown(name, pos)}` is read here before any statement sets it, so it reads 0 (an "
                      f"attribute is 0 until the session sets it{at}): set it before this read, or write 0")


class Unset:
    """The first read of each attribute the program sets that no path has set before it, so that it reads 0
    there: a may-analysis over the statements in execution order (the workload's `init`, then the session,
    the workload's `turn` block at every `turn;`), the state the attributes some path to a point has set (a
    `set`, a `choose`; a hold's bindings in its body). A branch keeps what either arm has, a loop's body
    starts from what its entry has and anything the body sets (a set later in the body reaches its top on
    the next pass, the `turn` block's at a `turn;` in it too), a hold's header and body read what its body sets too (executed again after a preemption),
    ``end;`` ends the flow (the walk does not go on). A `choose`'s keys read its index, not the attribute.
    The `turn` block is one place run at every `turn;`: it reads what any `turn;` reaching it has set (a read
    behind `branch (turn_no > 1)` of what the session sets after its first `turn;` is not told).

    Every statement only adds names to the state, so the `turn` block adds the same names at every `turn;`
    (``self.adds``, one walk); a first walk of the session, told nothing, gathers what the `turn;`s reach it
    with (``self.entry``), and the second tells the block's reads against that, at the first `turn;`.

    The state is one set, ``self.state``, with the log of the names added to it (``self.log``): a branch walks
    one arm, takes back what it added, walks the other, then adds what each arm that goes on added, so a
    statement costs what it adds, not a copy of the state. (A new state at every `set` and every branch, a copy
    of every name before it, took 16 000 branches that set names 140 s of the compile.) A `turn;` costs what
    it adds too: the names added since the last `turn;` not yet in ``self.entry`` wait in ``self.pending``,
    and those of the `turn` block's not in the state in ``self.missing`` (each state at a `turn;` was copied
    into the entry, and the block's names added one by one, a time of the turns times the names).
    ``self.copied`` counts the names those two moved, the work the `turn;`s did."""

    def __init__(self, attributes: set[str], turn: list[Any]) -> None:
        self.attributes = attributes
        self.turn = turn
        #: the first read found of each attribute, in execution order: name -> position
        self.reads: dict[str, Pos] = {}
        #: whether reads are told (not in the first walk)
        self.telling = False
        #: what the `turn` block adds to the state (None: it ends the flow), and the union of the states
        #: every `turn;` reaches it with
        self.adds: frozenset[str] | None = frozenset()
        self.entry: set[str] = set()
        self.turn_told = False
        #: the state at the statement walked, and the names added to it, in order
        self.state: set[str] = set()
        self.log: list[str] = []
        #: names added to the state that may not be in ``entry`` (the first walk's, until its next `turn;`), and
        #: the names of ``adds`` not in the state
        self.pending: list[str] = []
        self.missing: set[str] = set()
        #: the names the `turn;`s moved (into ``entry``, into the state): what they cost
        self.copied = 0
        #: the state the last walk (:meth:`walk`) ended with
        self.walked: frozenset[str] = frozenset()

    def walk(self, stmts: list[Any], state: Any) -> bool:
        """Walk ``stmts`` from ``state`` alone (``self.state`` and its log put back after); whether the flow goes on
        after them, the state then left in ``self.state``'s place as ``self.walked``."""
        kept = self.state, self.log, self.pending, self.missing
        self.state, self.log = set(state), []
        self.pending = list(self.state)
        self.missing = set(self.adds or ()) - self.state
        try:
            goes_on = self.block(stmts)
            self.walked = frozenset(self.state)
        finally:
            self.state, self.log, self.pending, self.missing = kept
        return goes_on

    def run(self, init: list[Any], session: list[Any]) -> dict[str, Pos]:
        self.adds = self.walked if self.walk(self.turn, ()) else None
        for telling in (False, True):
            self.telling = telling
            start = self.walked if self.walk(init, ()) else frozenset()
            self.walk(session, start)
        return self.reads

    def add(self, names: Any) -> None:
        state, missing = self.state, self.missing
        for n in names:
            if n not in state:
                state.add(n)
                self.log.append(n)
                self.pending.append(n)
                missing.discard(n)

    def back_to(self, mark: int) -> list[str]:
        """Take back the names added since the log was ``mark`` long; they are returned."""
        added = self.log[mark:]
        del self.log[mark:]
        self.state.difference_update(added)
        if self.adds:
            self.missing.update(n for n in added if n in self.adds)
        return added

    def sets_in(self, stmts: list[Any]) -> frozenset[str]:
        """The attributes ``stmts`` may set, the `turn` block's at a `turn;` among them."""
        names = A.assigned_in(stmts)
        if self.adds and any(type(x) is A.STurn for x in A.walk_stmts(stmts)):
            names |= self.adds
        return frozenset(names)

    def see(self, exprs: Any, bound: str | None = None) -> None:
        if not self.telling:
            return
        state = self.state
        found = [(x.pos, x.simple) for e in exprs for x in A.walk_expr(e)
                 if type(x) is A.Var and x.simple in self.attributes and x.simple not in state
                 and x.simple != bound and x.simple not in self.reads]
        for pos, name in sorted(found, key=lambda r: (r[0].line, r[0].col)):
            self.reads.setdefault(name, pos)

    def block(self, stmts: list[Any]) -> bool:
        """Walk ``stmts`` from the state; whether the flow goes on after them (not after an `end;`)."""
        for s in stmts:
            if not self.stmt(s):
                return False
        return True

    def stmt(self, s: Any) -> bool:
        """Walk ``s``, adding to the state what it may set; whether the flow goes on after it."""
        t = type(s)
        if t is A.SSet:
            self.see(A.stmt_exprs(s))
            self.add((s.name,))
            return True
        if t is A.SChoose:
            self.see([s.n])
            self.see(s.keys, bound=s.name)
            self.add((s.name,))
            return True
        if t is A.STurn:
            if not self.telling:  # the state here joins the entry: what was added since the last `turn;`
                self.copied += len(self.pending)
                self.entry.update(n for n in self.pending if n in self.state)
            self.pending.clear()  # (the state is in the entry now; in the telling walk it is not gathered)
            if self.telling and not self.turn_told:
                self.turn_told = True
                self.walk(self.turn, frozenset(self.entry))
            if self.adds is None:
                return False
            if self.missing:
                self.copied += len(self.missing)
                self.add(list(self.missing))
            return True
        if t is A.SEnd:
            return False
        if t is A.SHold:
            # a hold preempted in its body executes again, its header and body reading what the body set
            self.add(self.sets_in(s.body))
            self.see([x for p in s.pools for x in A.stmt_exprs(p)] + [b.value for b in s.bindings]
                     + ([s.reuse] if s.reuse is not None else []))
            self.add([b.name for b in s.bindings])
            if not self.block(s.body):
                return False
            self.see([x for x in (s.cache, s.lease_time) if x is not None])
            return True
        self.see(A.stmt_exprs(s))
        if t is A.SBranch:
            mark = len(self.log)
            then_on = self.block(s.then)
            then = self.back_to(mark)
            else_on = self.block(s.orelse)
            orelse = self.back_to(mark)
            if then_on:
                self.add(then)
            if else_on:
                self.add(orelse)
            return then_on or else_on
        if t is A.SLoop:
            # a pass after the first starts from what an earlier one set: anything the body sets (one walk of
            # the body, where a fixpoint of nested loops' passes took a number of passes exponential in their
            # depth)
            self.add(self.sets_in(s.body))
            self.block(s.body)
            return False  # a loop is left by an `end;` alone
        return all(self.block(b) for b in A.blocks_of(s))


KIND_NAMES = {A.STurn: "`turn;`", A.SEnd: "`end;`", A.SHold: "`hold`", A.SGrow: "`grow`", A.SDrop: "`drop`",
              A.SRelease: "`release`", A.SLoad: "`load`", A.SRun: "`run`", A.SBranch: "`branch`",
              A.SLoop: "`loop`", A.SChoose: "`choose`", A.SRequest: "`request;`", A.SMark: "`mark`",
              A.SServing: "a serving form", A.STransfer: "`transfer`", A.SDefCall: "a definition's use",
              A.SQCall: "a queue's entry call", A.SBranchWith: "`branch with`",
              A.SRecord: "`record`"}


def is_now(e: Any) -> bool:
    """Whether ``e`` is the clock itself, ``now`` (no let or attribute can take that name)."""
    return isinstance(e, A.Var) and e.simple == "now"


def is_test(e: Any) -> bool:
    if isinstance(e, A.Binary):
        return e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||")
    if isinstance(e, A.Unary):
        return e.op == "!"
    return False


#: names whose value changes with no statement of the session setting them (an index reading one may name
#: another member at each read)
_MOVING = frozenset(("now", "cached", "computed", "turn_no"))


def _member_read(ref: A.Var) -> Any:
    """For a reference whose member index is computed (``kv[i + 1]``): ``(index, names it reads)`` when the index
    is arithmetic over numbers and names alone (:func:`serq_frontend.sugar.serving._same_value`), which names
    one member wherever the session reads it until one of those names is set; ``...`` otherwise (a call, a
    draw, the clock, `cached` or `computed`, or an index in more than one part)."""
    from .sugar.serving import _same_value

    indexes = ref.indexes()
    if len(indexes) != 1 or not _same_value(indexes[0], indexes[0]):
        return ...
    names = frozenset(v.simple for v in A.walk_expr(indexes[0]) if type(v) is A.Var)
    if names & _MOVING:
        return ...
    return (indexes[0], names)


def _leased_in(node: Any) -> set[str]:
    """The pools the holds of the IR statement ``node`` (and of its blocks) lease."""
    out, stack = set(), [node]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is ir.Hold:
            if x.lease is not None:
                out.add(x.lease.pool.pool)
            stack.extend(x.body)
        elif t is ir.Branch:
            stack.extend(x.then)
            stack.extend(x.orelse)
        elif t is ir.Loop:
            stack.extend(x.body)
    return out


def link(module: A.Module, ctx: Context, source: str | None) -> ir.Program:
    return Linker(module, ctx, source).link()


def _sum_terms(written: Any, linked: Any) -> list[tuple[Any, Any]]:
    """The terms of a sum, ``(as written, as linked)`` each: a `+` whose linked node is a `+` too is its two
    sides' terms (a sum folded to a number, or linked to another node, is one term)."""
    if (isinstance(written, A.Binary) and written.op == "+" and isinstance(linked, ir.Binary)
            and linked.op == "+"):
        return _sum_terms(written.lhs, linked.lhs) + _sum_terms(written.rhs, linked.rhs)
    return [(written, linked)]


def _same_stage_member(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` (an observable's targets) are one stage member: one stage, no index or one
    constant index."""
    if not (isinstance(a, ir.StageRef) and isinstance(b, ir.StageRef)) or a.stage != b.stage:
        return False
    return (a.index is None and b.index is None) or (
        isinstance(a.index, ir.Num) and isinstance(b.index, ir.Num) and a.index.value == b.index.value)
