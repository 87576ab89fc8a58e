"""Checks of an IR program beyond its schema: every reference names something the program has.

The schema says a slot is an integer; only the program says how many attributes there are. A file a
user wrote by hand, or a tool built, is checked here when it is read, so that a bad reference is one
error naming the place (``$.session[0].slot``) rather than a failure deep inside a simulation. So are the
rules of the language the simulator relies on: each function, draw and observable has its number of
arguments, an observable reads a pool or a stage as its name says, an expression read where there is no
session (a ps stage's capacity, a step stage's budget, chunk and cost, a gauge, an arrival gap) reads no
attribute, and a workload ``init`` or ``turn`` block only sets and observes (and branches over them).
"""

from __future__ import annotations

import math
from typing import Any, get_args

import msgspec

from . import rules
from .errors import at_path
from .errors import quoted as _q
from .nodes import (
    BUILTIN_ATTRIBUTES,
    RECORD_OWN_COLUMNS,
    TRACE_ATTRIBUTES,
    Attr,
    Batch,
    Binary,
    BinaryOp,
    Branch,
    Call,
    Choose,
    Closed,
    ContextName,
    Ctx,
    Delay,
    Draw,
    Evict,
    EvictBy,
    Extension,
    Fifo,
    Grow,
    Hold,
    HoldPool,
    Load,
    Loop,
    Num,
    Observable,
    Observe,
    Poisson,
    Pool,
    PoolRef,
    Preempt,
    PreemptBy,
    Preset,
    Program,
    Ps,
    QueueBy,
    Record,
    Renewal,
    Run,
    Set,
    SlotValue,
    Spill,
    Stage,
    StageKind,
    StageRef,
    Step,
    Unary,
    UnaryOp,
)

#: the most sessions `arrive batch(n)` or `arrive closed(n)` may start: they are all live at once, and a
#: live session takes memory (a larger n could only end in a MemoryError, after a long wait)
MAX_POPULATION = 100_000_000

#: function -> (least, most) arguments (``None``: any number; min, max and sum take rules.MAX_ARGS at most)
FUNCTION_ARGS = {"min": (1, rules.MAX_ARGS), "max": (1, rules.MAX_ARGS), "sum": (1, rules.MAX_ARGS), "abs": (1, 1),
                 "floor": (1, 1), "ceil": (1, 1),
                 "sqrt": (1, 1), "exp": (1, 1), "ln": (1, 1), "pow": (2, 2)}
#: distribution -> its arguments
DRAW_ARGS = {"exp": 1, "det": 1, "uniform": 2, "erlang": 2, "h2": 2, "bernoulli": 1}
#: observable -> (what it reads, the number of arguments after the target)
OBSERVABLE_ARGS = {
    "queue": ("stage", 0), "busy": ("stage", 0), "work": ("stage", 0), "used": ("pool", 0),
    "free": ("pool", 0), "cachedin": ("pool", 0), "holders": ("pool", 0), "queued": ("pool", 0),
    "budget_left": ("stage", 0), "price": ("stage", 2), "est_lambda": ("stage", 0),
    "est_rho": ("stage", 0), "est_wait": ("stage", 0), "member": ("pool or stage", 0),
}


#: the IR's own node kinds: an extension node names a plugin's kind, never one of these (the simulator would
#: hand the extension to the built-in kind's code, which reads fields the extension does not have)
BUILTIN_KINDS = frozenset(t.__name__ for t in (*StageKind.__args__, *Evict.__args__, *Preempt.__args__)
                          if t is not Extension)


_NAMES = {Ctx: frozenset(get_args(ContextName)), Unary: frozenset(get_args(UnaryOp)),
          Binary: frozenset(get_args(BinaryOp))}


def _named(obj: Any) -> bool:
    value = obj.name if isinstance(obj, Ctx) else obj.op
    return type(value) is str and value in _NAMES[type(obj)]


def _first_attr(obj: Any, path: str) -> tuple[str, Attr] | None:
    """The first attribute read in ``obj`` (an expression, or a list of them), with its path."""
    if isinstance(obj, list):
        for i, x in enumerate(obj):
            found = _first_attr(x, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(obj, Attr):
        return path, obj
    if not isinstance(obj, msgspec.Struct):
        return None
    for field in obj.__struct_fields__:
        if field != "span":
            found = _first_attr(getattr(obj, field), f"{path}.{field}")
            if found:
                return found
    return None


def _shown(k: int) -> str:
    """An index (or a count) of the IR as a message shows it: its digits, but one longer than 24 characters cut to
    its first 12 and last 6 with its count of digits, as serq.jsonin shows an integer beyond a number's range
    (``attribute slot 999…`` of 4 000 digits was quoted whole)."""
    text = str(k)
    return text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text.lstrip('-'))} digits)"


def _raw(x: Any) -> str:
    """A number field's value as a message quotes it: ``NaN`` for NaN (Python's ``nan`` read as a word, and
    "not negative (nan)" of a NaN capacity said it was what it is not), else as written (``-1.0``, ``inf``)."""
    return "NaN" if isinstance(x, float) and x != x else str(x)


def _cap_problem(c: Any) -> str | None:
    """What is wrong with a pool's capacity ``c`` (its ``cap``, or a member's of its ``caps``), or None."""
    if isinstance(c, float) and not c >= 0 or c == "-inf":
        # (the value and the rule, NaN's as a negative one's: "a capacity is not negative (-1.0)" read as if it were not)
        return f"a capacity is {'NaN' if c != c else f'negative ({c})'}; it is a number at least 0, or \"inf\""
    return None


#: what a number of the IR is (nodes.Number), said of one that is NaN where no rule of its own field says more
NAN_NUMBER = "is NaN: a number of the IR is finite, or \"inf\" or \"-inf\" where the IR allows one"


def _value(n: Num) -> float:
    v = n.value
    return math.inf if v == "inf" else -math.inf if v == "-inf" else float(v)


def _pool_name(program: Program, ref: PoolRef) -> str:
    """A pool member as a message names it: the family's name, with its index when that is a number. A
    member chosen by a computed index is named by its family, as the linker names it (``lease kv`` of a
    hold that holds no member of ``kv``): there is no number to show before the run."""
    ok = 0 <= ref.pool < len(program.pools)
    name = program.pools[ref.pool].name if ok else f"#{ref.pool}"
    return name if not isinstance(ref.index, Num) else f"{name}[{_value(ref.index):g}]"


def _nan_index(ref: PoolRef) -> bool:
    """Whether ``ref`` names its member by a NaN (which the index's own rule says, below the hold)."""
    return isinstance(ref.index, Num) and isinstance(ref.index.value, float) and ref.index.value != ref.index.value


def _unheld(program: Program) -> tuple[Any, str] | None:
    """``(path, message)`` of the first ``load``, ``grow`` or growing run of the session that stands in no
    hold of its pool (:func:`rules.unheld`), or None; walked without recursion (the blocks' depth is
    bounded, but not by much)."""
    todo: list[tuple[list, Any, tuple]] = [(program.session, "$.session", ())]
    while todo:
        stmts, at, held = todo.pop()
        for i, st in enumerate(stmts):
            path = (at, i)
            t = type(st)
            if t is Hold:
                todo.append((st.body, (path, "body"), held + tuple(hp.pool for hp in st.pools)))
            elif t is Branch:
                todo.append((st.then, (path, "then"), held))
                todo.append((st.orelse, (path, "orelse"), held))
            elif t is Loop:
                todo.append((st.body, (path, "body"), held))
            elif t is Grow or t is Load:
                if rules.unheld(held, st.pool):
                    return ((path, "pool"), rules.unheld_message("grow" if t is Grow else "load",
                                                                 _pool_name(program, st.pool)))
            elif t is Run and st.growing is not None and rules.unheld(held, st.growing):
                return ((path, "growing"), rules.unheld_message("run … growing", _pool_name(program, st.growing)))
    return None


def _spill_unpaired(program: Program, pool: Pool) -> tuple[str, str] | None:
    """The field of ``pool``'s spill (``tier``, ``link``) that names, without an index, a family that does
    not pair with the pool's (``rules.pairs``), and why; None when both pair (a reference that does not
    exist is said elsewhere)."""
    sp = pool.spill
    for field, ref, table, kind in (("tier", sp.tier, program.pools, "pool"),
                                    ("link", sp.link, program.stages, "stage")):
        k = ref.pool if kind == "pool" else ref.stage
        if ref.index is None and 0 <= k < len(table) and table[k].size >= 1 and not rules.pairs(pool.size, table[k].size):
            return field, (f"{rules.family('pool', pool.name, pool.size)} spills "
                           f"{'to' if kind == 'pool' else 'over'} {rules.family(kind, table[k].name, table[k].size)}, "
                           f"and the two cannot be paired ({rules.PAIRING}); name one member by index")
    return None


#: the most characters of a name a program writes (a stage's, a pool's, an observe's, a gauge's, a record
#: table's or column's, a let's, an attribute's, and every other): the report prints names whole, in its rows
#: and its warnings, and an observe of a 5 MB name printed 15 MB. A source's longer name is refused at it
#: (serq_frontend.parser); docs/language.md
MAX_NAME = 256
#: the most characters of a name in an IR file (refused here): the language composes a name of a few of its
#: own at most (a disaggregated pair's ``D.nic.latency``), each at most :data:`MAX_NAME`
MAX_IR_NAME = 4 * MAX_NAME


def long_name(quoted: str, length: int, most: int = MAX_NAME) -> str:
    """The error of a name of ``length`` characters, more than ``most``: a source's (serq_frontend.parser, the
    name ``quoted`` in backquotes) and an IR file's (:data:`MAX_IR_NAME`, by its repr), in the same words."""
    return f"the name {quoted} is {length} characters long; a name is at most {most} characters"


def _named_once(name: str, at: str, space: dict[str, str], kind: str, fail: Any) -> None:
    """A declaration's name at JSON path ``at``: printable, and not one ``space`` (name -> path) has already
    given a declaration of its kind."""
    _printable(name, at, fail)
    if name in space:
        fail(at, f"the name {_q(name)} is given twice (first at {space[name]}); every {kind} has a name of its own")
    space[name] = at


#: the first characters of a cell a spreadsheet reads as a formula (formula injection): no declared name begins
#: with one (docs/security.md, "A CSV cell is data"); a source's names are identifiers, which never do
FORMULA_START = "=+-@"


def _printable(text: str, path: str, fail: Any) -> None:
    """Refuse a declared name that is empty or holds a character that does not print (a control character,
    a newline, a bidirectional override): the text report, its warnings and the CSV headers print names
    as they are, so such a name would drive the terminal of whoever reads the report (``\\x1b[2J``) or
    break its table. A source program's names are identifiers, which always print."""
    if not text:
        fail(path, "a name is not empty")
    if len(text) > MAX_IR_NAME:
        fail(path, long_name(_q(text), len(text), MAX_IR_NAME))
    if not text.isprintable():
        bad = next(ch for ch in text if not ch.isprintable())
        shown = text if len(text) <= 40 else text[:40] + "…"
        fail(path, f"the name {ascii(shown)} holds {ascii(bad)}, a character that does not print; a name is "
             "printable text")
    elif text[0] in FORMULA_START:
        fail(path, f"the name {_q(text)} begins with {text[0]!r}, which a spreadsheet reads as a formula in the CSV "
             "files that print names as they are (the summary report, records, dumps); a name begins with another "
             "character")


def _member_labels(program: Program, fail: Any) -> None:
    """Refuse a stage or pool name that is the label of a member of a family (``s[1]`` beside ``stage s[2]``):
    the report names a member of an array ``NAME[INDEX]`` (its rows, and a sweep's figures
    ``stages.s[1].completions``), so the two were one label, a text report showed two rows ``s[1]``, and a
    sweep's table kept one column of each figure, the family member's values replaced by the other's. The
    language's names cannot hold ``[``; an IR file's could. Stages and pools share one name space."""
    decls = [(f"$.{field}[{i}]", d) for field in ("stages", "pools") for i, d in enumerate(getattr(program, field))]
    if not any("[" in d.name for _, d in decls):  # (a label clashes only with a name that holds a bracket)
        return
    labels: dict[str, str] = {}
    for at, d in decls:
        if d.size > 1 or getattr(d, "array", False):
            labels.update((f"{d.name}[{j}]", f"member {j} of the family {_q(d.name)} at {at}") for j in range(d.size))
    for at, d in decls:
        if not (d.size > 1 or getattr(d, "array", False)) and d.name in labels:
            fail(f"{at}.name", f"the name {_q(d.name)} is the report's label of {labels[d.name]}: the two would be "
                 "one row of the report and one column of a sweep's table; give it another name")


#: the node types a rule of :func:`validate`'s walk reads, each named in an ``isinstance`` (or ``type(obj)
#: is``) of its chain (test_validate_walk.py checks the list against the chain's source): a node of another
#: type is only walked into
_CHECKED = (Num, Preset, Attr, Set, Choose, SlotValue, Observe, Record, PoolRef, StageRef, Pool, Stage, Step, Hold,
            Spill, Run, Ctx, Unary, Binary, Call, Draw, Ps, HoldPool, Grow, Load, Observable, Extension, Closed,
            Batch, Fifo, Renewal, Poisson)
_CHECKED_TYPES: dict[type, bool] = {}
#: a node type's classes (its ``__mro__``): the rules below ask ``Type in mro`` where they asked
#: ``isinstance(obj, Type)``, the same answer for a struct (a struct type's ``isinstance`` goes through its
#: metaclass, several times slower, and the rules ask it about 30 times a node)
_MROS: dict[type, frozenset[type]] = {}
#: what may hold a node (a number, a string or None holds none)
_INNER = (msgspec.Struct, list)


def too_many_members(program: Program) -> tuple[str, str] | None:
    """``(JSON path, message)`` at the family whose members take the program's pools or stages past
    :data:`serq_ir.rules.MAX_MEMBERS`, or None: judged before anything else, from the families' sizes alone,
    so that a program too big to run is refused in a time of its families' count (an IR file of 200 000 pools
    was walked whole, twice, before it was refused at ``$.pools[100000].size``). A size below 1 counts none
    here (the walk refuses it)."""
    for what, families in (("pool", program.pools), ("stage", program.stages)):
        total = 0
        for i, fam in enumerate(families):
            if fam.size > 0:
                total += fam.size
            if total > rules.MAX_MEMBERS:
                return (f"$.{what}s[{i}].size", f"more than {rules.MAX_MEMBERS} {what}s (a program has at most "
                        f"{rules.MAX_MEMBERS}, counting every member of every family)")
    return None


def validate(program: Program, *, name: str = "<ir>") -> Program:
    """Raise :class:`IRError` at the first reference to something the program does not have."""
    n_attrs, n_obs = len(program.attributes), len(program.observes)
    n_pools, n_stages = len(program.pools), len(program.stages)

    def fail(path: Any, message: str) -> None:
        raise at_path(name, message, rules.json_path(path))

    many = too_many_members(program)  # (first: every walk below takes a time in the program's size)
    if many is not None:
        fail(*many)
    shared = rules.shared_problem(program)  # (before any walk that takes a shared node at each place)
    if shared is not None:
        fail(*shared)
    deep = rules.nesting_problem(program)
    if deep is not None:
        fail(*deep)

    head = tuple(a.name for a in program.attributes[: len(BUILTIN_ATTRIBUTES)])
    if head != BUILTIN_ATTRIBUTES:
        fail("$.attributes", f"the first attributes must be the built-in {', '.join(BUILTIN_ATTRIBUTES)}")

    traced = TRACE_ATTRIBUTES if program.workload.trace is not None else ()
    for i, a in enumerate(program.attributes):
        if a.builtin and a.name not in BUILTIN_ATTRIBUTES and a.name not in traced:
            # the flag is the frontend's, which writes it on these names only (serq_ir.analysis.builtin_slots
            # reads the names, not the flag): one on another name said what the program does not do
            what = ("an attribute a trace supplies, and the program replays none" if a.name in TRACE_ATTRIBUTES
                    else "none of the language's")
            fail(f"$.attributes[{i}].builtin", f"attribute {_q(a.name)} is marked builtin, and it is {what}: the "
                 f"built-in attributes are {', '.join(BUILTIN_ATTRIBUTES)}, and with a trace "
                 f"{', '.join(TRACE_ATTRIBUTES)}; a program's own attribute has no `builtin` (or false)")

    for i, a in enumerate(program.attributes):
        if a.hidden and a.name in ("cached", "computed"):  # (the frontend's rule: `hidden cached;` is refused)
            fail(f"$.attributes[{i}].hidden", f"attribute {_q(a.name)} is hidden, and the scheduler itself sets it: "
                 "it cannot be hidden from the scheduler")

    def slot(path: str, k: int) -> None:
        if not 0 <= k < n_attrs:
            fail(path, f"attribute slot {_shown(k)} does not exist (the program has {n_attrs})")

    n_builtin = len(BUILTIN_ATTRIBUTES)

    def walk(obj: Any, path: Any) -> None:
        if isinstance(obj, list):
            for i, x in enumerate(obj):
                if isinstance(x, _INNER):
                    walk(x, (path, i))
            return
        if not isinstance(obj, msgspec.Struct):
            return
        checked = _CHECKED_TYPES.get(type(obj))
        if checked is None:
            checked = _CHECKED_TYPES[type(obj)] = issubclass(type(obj), _CHECKED)
        if not checked:  # no rule below reads a node of its type: only what it holds is walked
            for field in obj.__struct_fields__:
                if field != "span" and isinstance(v := getattr(obj, field), _INNER):
                    walk(v, (path, field))
            return
        if type(obj) is Num:  # (a field with a rule of its own, its parent's, is said there, before)
            v = obj.value
            if type(v) is float and v != v:
                fail((path, "value"), f"the number {NAN_NUMBER}")
            return
        mro = _MROS.get(type(obj))
        if mro is None:  # (isinstance of a struct type, judged by its type's MRO: a set lookup, not a call)
            mro = _MROS[type(obj)] = frozenset(type(obj).__mro__)
        if type(obj) is Preset:
            at = obj.at
            t = type(at)
            if (t is float or t is int) and not 0.0 <= at < math.inf:
                # the run starts at 0: a session arriving before it took the clock back (samples at t < 0)
                fail((path, "at"), f"a preset session arrives at a finite time at least 0, not {_raw(at) if t is float else repr(at)}")
            dup = rules.slot_given_twice(obj)
            if dup is not None:  # (the last value silently won)
                row, i, k = dup
                where = (path, "attrs") if row < 0 else ((path, "turns"), row)
                fail(((where, i), "slot"), f"attribute slot {k} is given twice in one row; give each slot once")
            if rules.plain_preset(obj, n_builtin, n_attrs):
                return  # every value sets an attribute the program has and may write: what the walk below checks
        if Attr in mro or Set in mro or Choose in mro or SlotValue in mro:
            slot((path, "slot"), obj.slot)
            if Attr not in mro and 0 <= obj.slot < len(BUILTIN_ATTRIBUTES):
                fail((path, "slot"), f"the built-in attribute '{BUILTIN_ATTRIBUTES[obj.slot]}' is kept by the "
                     "simulator; a program does not write it")
            if Choose in mro and isinstance(obj.n, Num) and (why := rules.choose_problem(_value(obj.n))):
                fail((path, "n"), why)
        elif Observe in mro and not 0 <= obj.observe < n_obs:
            fail((path, "observe"), f"observe {_shown(obj.observe)} does not exist (the program has {n_obs})")
        elif Record in mro:
            if not 0 <= obj.record < len(program.records):
                fail((path, "record"), f"record table {_shown(obj.record)} does not exist (the program has "
                     f"{len(program.records)})")
            cols = program.records[obj.record].columns
            if len(obj.values) != len(cols):
                fail((path, "values"), f"{len(obj.values)} values for the {len(cols)} columns of record "
                     f"{_q(program.records[obj.record].name)}")
        elif PoolRef in mro and not 0 <= obj.pool < n_pools:
            fail((path, "pool"), f"pool {_shown(obj.pool)} does not exist (the program has {n_pools})")
        elif StageRef in mro and not 0 <= obj.stage < n_stages:
            fail((path, "stage"), f"stage {_shown(obj.stage)} does not exist (the program has {n_stages})")
        elif ((PoolRef in mro or StageRef in mro) and isinstance(obj.index, Num)
              and (program.pools[obj.pool] if PoolRef in mro else program.stages[obj.stage]).size >= 1
              and (why := rules.member_problem(
                "pool" if PoolRef in mro else "stage", _value(obj.index),
                *((program.pools[obj.pool].size, program.pools[obj.pool].name) if PoolRef in mro
                  else (program.stages[obj.stage].size, program.stages[obj.stage].name))))):
            fail((path, "index"), why)  # a constant index naming no member (serq run refused it, serq check not)
        elif (Pool in mro or Stage in mro) and obj.size < 1:
            fail((path, "size"), f"a family has at least one member, not {_shown(obj.size)}")
        elif Pool in mro and obj.admit_via is not None and not 0 <= obj.admit_via < n_stages:
            fail((path, "admit_via"), f"stage {_shown(obj.admit_via)} does not exist (the program has {n_stages})")
        elif Pool in mro and obj.admit_via is not None and not isinstance(
                program.stages[obj.admit_via].kind, Step):  # as the frontend's `admit via` (nothing admitted
            # the pool's queue: every session that reached it waited for ever, and serq check said OK)
            fail((path, "admit_via"), f"a pool is admitted by a step stage's scheduler, and stage "
                 f"{_q(program.stages[obj.admit_via].name)} is no step")
        elif Pool in mro and obj.admit_via is not None and (via := program.stages[obj.admit_via]).size >= 1 and not (
                rules.pairs(obj.size, via.size)):  # (serq run refused it, serq check not; a size below 1 is said at
            # the stage's own path: "a family of -1" was said here first)
            fail((path, "admit_via"), f"{rules.family('pool', obj.name, obj.size)} is admitted via "
                 f"{rules.family('stage', via.name, via.size)}, and the two cannot be paired ({rules.PAIRING})")
        elif Step in mro and obj.memory is not None and not 0 <= obj.memory < n_pools:
            fail((path, "memory"), f"pool {_shown(obj.memory)} does not exist (the program has {n_pools})")
        elif (Stage in mro and isinstance(obj.kind, Step) and obj.kind.memory is not None
              and 0 <= obj.kind.memory < n_pools  # (one that does not exist is said at the Step, below)
              and (mem := program.pools[obj.kind.memory]).size >= 1 and not rules.pairs(obj.size, mem.size)):
            fail(((path, "kind"), "memory"), f"{rules.family('stage', obj.name, obj.size)} names "
                 f"{rules.family('pool', mem.name, mem.size)} as its memory, and the two cannot be paired "
                 f"({rules.PAIRING})")
        elif Hold in mro and not obj.pools:
            fail((path, "pools"), "a hold names at least one pool")
        elif Hold in mro and (k := rules.hold_twice(obj.pools)) is not None:
            fail(((path, "pools"), k), rules.same_member_message(_pool_name(program, obj.pools[k].pool)))
        elif (Hold in mro and obj.lease is not None
              and all(0 <= r.pool < n_pools and not _nan_index(r) for r in (obj.lease.pool, *(hp.pool for hp in obj.pools)))
              and rules.lease_unheld(obj.pools, obj.lease)):  # (a pool that does not exist is said below)
            fail(((path, "lease"), "pool"), rules.lease_unheld_message(_pool_name(program, obj.lease.pool)))
        elif (Hold in mro and obj.lease is not None and isinstance(obj.lease.time, Num)
              and _value(obj.lease.time) < 0  # (a NaN number is the IR's own rule's, as everywhere)
              and (why := rules.lease_time_problem(_value(obj.lease.time)))):
            fail(((path, "lease"), "time"), f"{why}; a lease's time is not negative")
        elif Spill in mro and isinstance(obj.work, Num) and (why := rules.work_problem(_value(obj.work))):
            fail((path, "work"), f"{why}; a write's work is not negative")
        elif Run in mro and not obj.stages:
            fail((path, "stages"), "a run names at least one stage")
        elif Run in mro and isinstance(obj.work, Num) and (why := rules.work_problem(_value(obj.work))):
            fail((path, "work"), f"{why}; a run's work is not negative")
        elif (Run in mro and obj.growing is not None
              and (k := _time_kind(program, obj)) is not None):
            # as the frontend's `run`: a growing run's work is tokens, which a step stage's planning gives;
            # elsewhere it was run as plain work (time) and grew nothing
            fail((path, "growing"), "a run over several stages grows no pool" if k == "" else
                 f"a run grows a pool on a step stage only, and stage {_q(k[0])} is a {k[1]} stage")
        elif Run in mro and len(obj.stages) > 1 and program.share is None:  # (serq run refused it)
            fail((path, "stages"), "a run holds several stages but the program declares no share (share "
                 "maxmin; or share bottleneck;)")
        elif Run in mro and len(obj.stages) > 1:
            for i, ref in enumerate(obj.stages):
                if not 0 <= ref.stage < n_stages:
                    break  # the walk below names the dangling reference
                kind = program.stages[ref.stage].kind
                if not (isinstance(kind, Ps) and isinstance(kind.capacity, Num)
                        and kind.capacity.value != "-inf" and (kind.capacity.value == "inf"
                                                              or kind.capacity.value > 0)):
                    fail(((path, "stages"), i), "every stage of a run over several stages is ps with a "
                         f"constant capacity above 0; {_q(program.stages[ref.stage].name)} is not")
        elif (Run in mro and len(obj.stages) == 1 and 0 <= obj.stages[0].stage < n_stages
              and isinstance(program.stages[obj.stages[0].stage].kind, Step) != (obj.mode != "plain")):
            # as the frontend's `run`: a step stage runs prefill and decode only (a plain run there was an
            # error once it ran), and a mode is a step stage's (elsewhere it was run as plain work)
            st = program.stages[obj.stages[0].stage]
            fail((path, "mode"), f"a run on step stage {_q(st.name)} is prefill or decode, not plain"
                 if obj.mode == "plain" else f"a run of mode {_q(obj.mode)} is for a step stage, and stage "
                 f"{_q(st.name)} is no step")
        elif (Pool in mro and obj.spill is not None and 0 <= obj.spill.link.stage < n_stages
              and isinstance(program.stages[obj.spill.link.stage].kind, Step)):
            # as the frontend's `spill … via`: the write is plain work, which a step stage does not run (the
            # first eviction was a run-time error that named no place)
            fail(((path, "spill"), "link"), f"a spill's write is plain work, and stage "
                 f"{_q(program.stages[obj.spill.link.stage].name)} is a step stage")
        elif (Pool in mro and obj.spill is not None and 0 <= obj.spill.tier.pool < len(program.pools)
              and rules.spills_to_itself(program.pools[obj.spill.tier.pool] is obj, obj.size,
                                         obj.spill.tier.index is not None)):
            fail(((path, "spill"), "tier"), rules.spill_to_itself_message(_q(obj.name)))
        elif (Pool in mro and obj.spill is not None
              and (k := _spill_unpaired(program, obj)) is not None):
            # a spill's tier or link without an index pairs as a declaration does (the frontend's rule);
            # the simulator wrote a family of another size's evictions to its first member
            fail(((path, "spill"), k[0]), k[1])
        elif (Ctx in mro or Unary in mro or Binary in mro) and not _named(obj):
            # a Program built in Python skips decode's check of these names, which the simulator's code
            # generator writes into Python source: a name outside the IR's own list is refused here
            field = "name" if Ctx in mro else "op"
            fail((path, field), f"{type(obj).__name__} {field} {_q(getattr(obj, field))} is not one of the IR's")
        elif Call in mro and obj.fn not in FUNCTION_ARGS:
            fail((path, "fn"), f"unknown function {_q(obj.fn)}")
        elif Draw in mro and obj.dist not in DRAW_ARGS:
            fail((path, "dist"), f"unknown distribution {_q(obj.dist)}")
        elif Observable in mro and obj.name not in OBSERVABLE_ARGS:
            fail((path, "name"), f"unknown observable {_q(obj.name)}")
        elif Call in mro:
            lo, hi = FUNCTION_ARGS[obj.fn]
            k = len(obj.args)
            if lo == hi and k != lo:
                fail((path, "args"), rules.takes(obj.fn, k))
            elif k < lo:
                fail((path, "args"), rules.takes_at_least(obj.fn, k, lo))
            elif hi is not None and k > hi:
                fail((path, "args"), f"`{obj.fn}` takes at most {hi} arguments, and got {k}")
        elif Draw in mro and len(obj.args) != DRAW_ARGS[obj.dist]:
            fail((path, "args"), rules.takes(f"~{obj.dist}", len(obj.args)))
        elif Draw in mro and all(isinstance(a, Num) for a in obj.args):
            values = [_value(a) for a in obj.args]
            why = (rules.branch_with_problem(values[0]) if rules.branch_with_draw(obj)
                   else rules.draw_problem(obj.dist, values))
            if why:
                fail((path, "args"), why)
        elif Ps in mro and isinstance(obj.capacity, Num):
            why = rules.capacity_problem(_value(obj.capacity))
            if why:
                fail((path, "capacity"), f"{why}; a ps stage's capacity is at least 0")
        elif Step in mro:
            if isinstance(obj.budget, Num) and (why := rules.budget_problem(_value(obj.budget))):
                fail((path, "budget"), f"{why}; an iteration's budget is at least 0")
            if not obj.budget_given and not (isinstance(obj.budget, Num) and obj.budget.value == "inf"):
                # (the stage's source gave no budget, so its budget is inf: serq_ir.analysis.budget_not_given)
                fail((path, "budget_given"), "budget_given is false, yet the budget is not inf: a step stage "
                     "whose source gives no budget has the budget inf")
            if isinstance(obj.cost, Num) and (why := rules.cost_problem(_value(obj.cost))):
                fail((path, "cost"), f"{why}; an iteration's cost is at least 0")
            if isinstance(obj.chunk, Num) and (why := rules.chunk_problem(_value(obj.chunk))):
                fail((path, "chunk"), f"{why}; a prefill's chunk is at least 0")
        elif HoldPool in mro or Grow in mro or Load in mro:
            for field in ("units", "reserve") if HoldPool in mro else ("amount",):
                x = getattr(obj, field)
                if isinstance(x, Num):
                    why = rules.amount_problem(f"the {field}", _value(x))
                    if why:
                        fail((path, field), f"{why}; an amount of memory is not negative")
        elif Observable in mro:
            what, extra = OBSERVABLE_ARGS[obj.name]
            if what in ("pool", "stage") and not isinstance(obj.target, PoolRef if what == "pool" else StageRef):
                fail((path, "target"), f"{obj.name}(…) reads a {what}, not a "
                     f"{'stage' if what == 'pool' else 'pool'}")
            if len(obj.args) != extra:
                fail((path, "args"), rules.takes(obj.name, len(obj.args), rules.PARAMS.get(obj.name, what), what))
            if (obj.name == "budget_left" and isinstance(obj.target, StageRef) and 0 <= obj.target.stage < n_stages
                    and not isinstance((st := program.stages[obj.target.stage]).kind, Step)):
                # as the linker's: only a step stage plans iterations (the simulator's admission code met a
                # delay stage's budget_left as an AttributeError, a traceback)
                fail((path, "target"), rules.budget_left_message(st.name))
        elif Extension in mro and obj.name in BUILTIN_KINDS:
            fail((path, "name"), f"an extension names a plugin's kind, not the built-in {_q(obj.name)} (write "
                 f"the node {{\"kind\": \"{obj.name}\", …}} itself)")
        elif (Closed in mro or Batch in mro) and obj.n < 0:
            fail((path, "n"), f"a population is negative ({obj.n}); it is a number of sessions at least 0")
        elif (Closed in mro or Batch in mro) and obj.n > MAX_POPULATION:
            fail((path, "n"), f"a population is at most {MAX_POPULATION:,} sessions (each is live at once), "
                 f"not {obj.n if obj.n < 10**15 else format(float(obj.n), '.3g')}")
        elif Fifo in mro and not (obj.servers == "inf" or (isinstance(obj.servers, float)
                                                                     and obj.servers >= 1
                                                                     and obj.servers == int(obj.servers))):
            fail((path, "servers"), f"a fifo has a whole number of servers, at least 1, not {_raw(obj.servers)}")
        elif Renewal in mro and isinstance(obj.gap, Num) and (why := rules.gap_problem(_value(obj.gap))):
            fail((path, "gap"), why)
        elif Poisson in mro and not (isinstance(obj.rate, float) and 0 < obj.rate < math.inf):
            fail((path, "rate"), f"an arrival rate is positive and finite, not {_raw(obj.rate)}")
        elif Pool in mro:
            if why := _cap_problem(obj.cap):
                fail((path, "cap"), why)
            if obj.caps is not None:
                if obj.cap != "inf":  # (one meaning: the members' caps are the list's, or all the one cap)
                    fail((path, "caps"), "a pool gives its members' caps as `cap` (one for every member) or as "
                         "`caps` (one a member), not both")
                elif len(obj.caps) != obj.size:
                    fail((path, "caps"), f"a family of {obj.size} has {obj.size} caps, one a member, not "
                         f"{len(obj.caps)}")
                for j, c in enumerate(obj.caps):
                    if why := _cap_problem(c):
                        fail(((path, "caps"), j), why)
                        break
            if obj.block is not None and not 0 < obj.block < math.inf:
                fail((path, "block"), f"a block is positive and finite, not {_raw(obj.block)}")
        for field in obj.__struct_fields__:
            if field != "span" and isinstance(v := getattr(obj, field), _INNER):
                walk(v, (path, field))

    walk(program, "$")
    for i, c in enumerate(program.constants):  # (a constant's value is a number, not a node the walk takes)
        if isinstance(c.value, float) and c.value != c.value:
            fail(f"$.constants[{i}][1]", f"constant {_q(c.name)} {NAN_NUMBER} (a constant that evaluates to "
                 "NaN does not link)")

    unheld = _unheld(program)
    if unheld is not None:
        fail(*unheld)

    cycle = rules.budget_cycle(program.stages)
    if cycle is not None:
        i, field, at, obs = cycle
        fail(f"$.stages[{i}].kind.{field}{at}", f"the {field} of step stage {_q(program.stages[i].name)} reads "
             f"budget_left({program.stages[obs.target.stage].name}), which reads it back: evaluating it would "
             "never end")

    def no_session(expr: Any, path: str, what: str) -> None:
        found = _first_attr(expr, path)
        if found:
            at, attr = found
            name = program.attributes[attr.slot].name
            fail(at, f"{what} has no session: it may not read the attribute {_q(name)}")

    for i, stage in enumerate(program.stages):
        kind = stage.kind
        if isinstance(kind, Ps):
            no_session(kind.capacity, f"$.stages[{i}].kind.capacity", "a ps stage's capacity")
        elif isinstance(kind, Step):
            for field in ("budget", "chunk", "cost"):
                no_session(getattr(kind, field), f"$.stages[{i}].kind.{field}", f"a step stage's {field}")
    for i, gauge in enumerate(program.gauges):
        no_session(gauge.value, f"$.gauges[{i}].value", "a gauge")
    wl = program.workload
    if isinstance(wl.arrive, Renewal):
        no_session(wl.arrive.gap, "$.workload.arrive.gap", "an arrival gap")
    def plain(stmts, where: str, block: str) -> None:
        for i, st in enumerate(stmts):
            if isinstance(st, Branch):
                plain(st.then, f"{where}[{i}].then", block)
                plain(st.orelse, f"{where}[{i}].orelse", block)
            elif not isinstance(st, Set | Observe):
                fail(f"{where}[{i}]", f"a workload {block} block only sets, observes and branches over them, "
                     f"not {type(st).__name__}")

    for block in ("init", "turn"):
        plain(getattr(wl, block), f"$.workload.{block}", block)

    # a context variable is read at its moment only (serq_ir.rules.CONTEXT, the linker's rule): elsewhere
    # the simulator read it as NaN, silently (`decoders` in a session's observe: every sample NaN); and a
    # draw is made only at the moments that draw (rules.DRAWS_AT, the linker's rule too): an IR file's draw
    # in a queue key, a ps capacity or a gauge ran, from a stream in schedule order; and what a moment may
    # not read beyond them (rules.OBSERVABLE_REFUSED, ATTRIBUTE_REFUSED) is refused as the linker refuses it
    def context(obj: Any, path: str, moment: str) -> None:
        if isinstance(obj, list):
            for i, x in enumerate(obj):
                context(x, (path, i), moment)
            return
        if not isinstance(obj, msgspec.Struct):
            return
        if isinstance(obj, Ctx) and obj.name not in rules.CONTEXT[moment].split():
            has = rules.CONTEXT[moment].split()
            fail((path, "name"), f"the context variable {_q(obj.name)} does not exist at the {moment} moment "
                 f"(which has {', '.join(has) if has else 'none'})")
        if isinstance(obj, Observable) and (why := rules.OBSERVABLE_REFUSED.get((moment, obj.name))) is not None:
            fail(path, why)  # as the linker's: `work(s)` in a gauge, `budget_left(E)` in a preemption key
        if (isinstance(obj, Attr) and 0 <= obj.slot < n_builtin
                and (why := rules.ATTRIBUTE_REFUSED.get((moment, BUILTIN_ATTRIBUTES[obj.slot]))) is not None):
            fail((path, "slot"), why)
        if isinstance(obj, Draw) and moment not in rules.DRAWS_AT:
            fail(path, f"~{obj.dist} draws at the {moment} moment, which may not draw (the moments that draw: "
                 f"{', '.join(sorted(rules.DRAWS_AT))})")
        for field in obj.__struct_fields__:
            if field != "span":
                context(getattr(obj, field), (path, field), moment)

    def unindexed(obj: Any, path: str, own: int | None) -> None:
        """A member named without an index (``index`` absent) is the family's one member, or, in a step
        family's own expressions (budget, chunk, cost, serve keys: ``own`` its size), the member paired with
        the stage's of a family of its size; any other such reference names no member (the linker's rule:
        the simulator took member 0 of it in silence). A spill's tier and link are paired by their own rule
        (``_spill_unpaired``)."""
        if isinstance(obj, list):
            for i, x in enumerate(obj):
                unindexed(x, (path, i), own)
            return
        if not isinstance(obj, msgspec.Struct) or isinstance(obj, Spill | Preset):
            return  # (a preset holds numbers only: not walked value by value, as walk's rules.plain_preset)
        if isinstance(obj, PoolRef | StageRef) and obj.index is None:
            table, k = (program.pools, obj.pool) if isinstance(obj, PoolRef) else (program.stages, obj.stage)
            if 0 <= k < len(table) and table[k].size > 1 and table[k].size != own:
                fam = table[k]
                if own is not None:
                    fail(path, f"`{fam.name}` is a family of {fam.size} and this step stage one of {own}: a stage's "
                         "own expressions name a family of its size without an index (each member its own), any "
                         f"other by member, `{fam.name}[0]`")
                fail(path, f"`{fam.name}` is a family of {fam.size}; index it, `{fam.name}[j]`")
        for field in obj.__struct_fields__:
            if field != "span":
                unindexed(getattr(obj, field), (path, field), own)

    # (only a family of several members can be named without an index where that names no member)
    if any(f.size > 1 for f in program.pools) or any(f.size > 1 for f in program.stages):
        for i, stage in enumerate(program.stages):
            if isinstance(stage.kind, Step):
                at = f"$.stages[{i}].kind"
                for field in ("budget", "chunk", "cost", "serve"):
                    unindexed(getattr(stage.kind, field), f"{at}.{field}", stage.size)
        for field in program.__struct_fields__:
            if field != "stages":
                unindexed(getattr(program, field), f"$.{field}", None)
        for i, stage in enumerate(program.stages):
            if not isinstance(stage.kind, Step):
                unindexed(stage.kind, f"$.stages[{i}].kind", None)

    context(program.session, "$.session", "Session")
    context(wl.init, "$.workload.init", "Session")
    context(wl.turn, "$.workload.turn", "Session")
    if isinstance(wl.arrive, Renewal):
        context(wl.arrive.gap, "$.workload.arrive.gap", "Arrival")
    for i, gauge in enumerate(program.gauges):
        context(gauge.value, f"$.gauges[{i}].value", "Gauge")
    for i, pool in enumerate(program.pools):
        at = f"$.pools[{i}]"
        if isinstance(pool.evict, EvictBy):
            context(pool.evict.keys, f"{at}.evict.keys", "Evict")
        if pool.spill is not None:
            context(pool.spill, f"{at}.spill", "Evict")
        if isinstance(pool.preempt, PreemptBy):
            context(pool.preempt.keys, f"{at}.preempt.keys", "Victim")
        if isinstance(pool.queue, QueueBy):
            context(pool.queue.keys, f"{at}.queue.keys", "Queue")
    for i, stage in enumerate(program.stages):
        kind, at = stage.kind, f"$.stages[{i}].kind"
        if isinstance(kind, Ps):
            context(kind.capacity, f"{at}.capacity", "Ps")
        elif isinstance(kind, Step):
            context(kind.budget, f"{at}.budget", "Budget")
            context(kind.chunk, f"{at}.chunk", "Budget")
            context(kind.cost, f"{at}.cost", "Cost")
            context(kind.serve, f"{at}.serve", "Serve")
    # Names are the source's (a stage and a pool share one name space, a gauge may not take an observe's
    # name): the report keys its figures, and a dump its files, by name, so a second observe, gauge, stage
    # or pool of one name would silently replace the first's figures and overwrite its dump file.
    spaces: dict[str, dict[str, str]] = {"attributes": {}, "observes": {}, "stages": {}}
    spaces["gauges"] = spaces["observes"]
    spaces["pools"] = spaces["stages"]
    for field, kind in (("attributes", "attribute"), ("observes", "observe"), ("gauges", "gauge"),
                        ("stages", "stage"), ("pools", "pool")):
        for i, decl in enumerate(getattr(program, field)):
            _named_once(decl.name, f"$.{field}[{i}].name", spaces[field], kind, fail)
    _member_labels(program, fail)
    # a constant's name is the knob's a sweep sets and finds by (`serq sweep --find --over NAME`, `--set`): a
    # second constant of one name was taken, and which of the two a tool read was the first it met
    constants: dict[str, str] = {}
    for i, const in enumerate(program.constants):
        _named_once(const.name, f"$.constants[{i}][0]", constants, "constant", fail)
    seen_tables: set[str] = set()
    for i, rec in enumerate(program.records):
        _printable(rec.name, f"$.records[{i}].name", fail)
        for j, col in enumerate(rec.columns):
            _printable(col, f"$.records[{i}].columns[{j}]", fail)
        if rec.name in seen_tables:
            fail(f"$.records[{i}].name", f"a second record table {_q(rec.name)}")
        seen_tables.add(rec.name)
        seen_cols: set[str] = set()  # (a set: a table of n columns looked back over the others, n * n steps)
        for j, col in enumerate(rec.columns):
            if col in RECORD_OWN_COLUMNS or col in seen_cols:
                fail(f"$.records[{i}].columns[{j}]", f"column {_q(col)} is " + (
                    "one the simulator adds" if col in RECORD_OWN_COLUMNS else "named twice"))
            seen_cols.add(col)
    run = program.run
    if run.horizon is not None and not (run.horizon == "inf" or (type(run.horizon) is float and run.horizon > 0)):
        # as the frontend refuses `run { horizon -1; }`: a run cannot end before it starts
        fail("$.run.horizon", f"the horizon is above 0 (or inf), not {_raw(run.horizon)}")
    why = None if run.arrivals is None else rules.arrivals_count_problem(run.arrivals)
    if why:
        fail("$.run.arrivals", why)
    why = rules.arrivals_problem(program.workload.arrive, run.arrivals)  # (serq check took it; serq run not)
    if why:
        fail("$.run.arrivals", why)
    why = rules.seed_problem(run.seed)
    if why:
        fail("$.run.seed", why)
    if not run.warmup >= 0:
        fail("$.run.warmup", "warmup is NaN; it is a number at least 0" if run.warmup != run.warmup
             else f"warmup is negative ({run.warmup}); it is a number at least 0")
    why = rules.window_problem(run.horizon, run.warmup)  # (serq check took it; serq run refused it)
    if why:
        fail("$.run.warmup", why)
    return program


def _time_kind(program: Program, run: Run):
    """Why ``run``, which grows a pool, may not: ``""`` for a run over several stages, ``(name, kind)`` for
    one on a built-in stage whose work is time (fifo, ps, delay); ``None`` when it may (a step stage, a
    plugin's kind, or a reference the walk names as dangling)."""
    if len(run.stages) > 1:
        return ""
    i = run.stages[0].stage
    if not 0 <= i < len(program.stages):
        return None
    st = program.stages[i]
    for cls, word in ((Fifo, "fifo"), (Ps, "ps"), (Delay, "delay")):
        if isinstance(st.kind, cls):
            return st.name, word
    return None
