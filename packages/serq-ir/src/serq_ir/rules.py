"""Rules on values that the language states, or that this implementation chose where it is silent
(docs/language.md, "Rules chosen where the spec is silent"). The frontend's linker applies them to
constants (an error at the source position), :mod:`serq_ir.validate` to the constants of an IR file (an
error at the JSON path), and the simulator to computed values when it evaluates them (a run-time error
naming the statement, the time and the session). One function per rule, so the three say the same.
"""

from __future__ import annotations

import math
import operator

#: The most members a program's pool families may have together, and likewise its stage families: each
#: member is a runtime object with its own statistics, and a family of 10⁹ would exhaust memory before
#: the run began.
MAX_MEMBERS = 100_000

#: How deep an expression may nest (operators, calls, conditionals and draws inside one another; a
#: written-out ``sum j in n (…)`` is one level however long), and how deep loops, branches and holds may nest
#: in a block. Deeper programs are refused where the nesting crosses the limit: the passes over a program,
#: its IR and the code the simulator generates from it stay within Python's own limits.
MAX_EXPR_DEPTH = 64
MAX_BLOCK_DEPTH = 32

#: The most arguments a call of ``min``, ``max`` or ``sum`` has (the terms an aggregate writes out, the
#: arguments the language takes): each is some 1 KB of the code the simulator generates, and a ``max`` of
#: 1 000 000 arguments in an IR file of 26 MB took 1.2 GB and 20 s.
MAX_ARGS = 10_000

#: the parameters of the language's functions, draws and observables of a fixed arity, as language.txt §2 names
#: them: what a call given another number of arguments is told (:func:`takes`), by the frontend's linker and
#: by :mod:`serq_ir.validate` alike
PARAMS = {"abs": "x", "floor": "x", "ceil": "x", "sqrt": "x", "exp": "x", "ln": "x", "pow": "x, y",
          "~exp": "mean", "~det": "x", "~uniform": "lo, hi", "~erlang": "k, mean", "~h2": "mean, cv2",
          "~bernoulli": "p",
          **{o: "stage" for o in ("queue", "busy", "work", "budget_left", "est_lambda", "est_rho", "est_wait")},
          **{o: "pool" for o in ("used", "free", "cachedin", "holders", "queued", "blocksize")},
          "price": "s, s_hit, ds"}
_COUNT = {0: "no argument", 1: "one argument",
          **{k: f"{w} arguments" for k, w in enumerate("two three four five six seven eight nine ten".split(), 2)}}


def counted(k: int) -> str:
    """``k`` arguments in words: "no argument", "one argument", "two arguments", …, "12 arguments"."""
    return _COUNT.get(k, f"{k} arguments")


def takes(name: str, n: int, params: str | None = None, after: str = "") -> str:
    """The words for a call of ``name`` on ``n`` arguments, another number than it takes: how many it takes,
    its form and how many it got, "`~exp` takes one argument, `~exp(mean)`, and got 2". ``params`` the
    parameters as written (a definition's, a queue entry's; by default a builtin's of :data:`PARAMS`, a draw's
    name with its ``~``); ``after`` what the count follows (an observable's "pool" in the IR, whose target is
    a field of its own). The one text of every arity of a fixed count, the frontend's and the IR's: they said
    "takes 1 argument(s), got 0", with no word of what the one is."""
    params = PARAMS[name] if params is None else params
    k = len(params.split(", ")) if params else 0
    if after:
        k -= 1  # (the target is one of the parameters §2 writes)
    return (f"`{name}` takes {counted(k)}{' after its ' + after if after else ''}, `{name}({params})`, and got "
            f"{n or 'none'}")


def takes_at_least(name: str, n: int, lo: int) -> str:
    """The words for a call of ``name`` (``min``, ``max``, ``sum``) on fewer than the ``lo`` arguments it takes."""
    return f"`{name}` takes {counted(lo)} at least, `{name}(a, …)`, and got {n or 'none'}"


def nesting_problem(program) -> tuple[str, str] | None:
    """``(JSON path, message)`` where an expression of ``program`` nests deeper than
    :data:`MAX_EXPR_DEPTH` or its statements deeper than :data:`MAX_BLOCK_DEPTH`, or None (walked without
    recursion, so any depth is judged)."""
    import msgspec

    from .nodes import (
        Attr,
        Binary,
        Branch,
        Call,
        Cond,
        Ctx,
        Draw,
        Hold,
        Loop,
        Num,
        Observable,
        PoolRef,
        Preset,
        StageRef,
        Unary,
    )

    exprs = (Num, Attr, Ctx, Draw, Call, Observable, Unary, Binary, Cond)
    blocks = (Branch, Loop, Hold)
    inner = (msgspec.Struct, list)
    kinds = _NEST_KINDS
    # a node's JSON path is kept as a chain (parent, key), written out only for the message
    todo = [(program, "$", 0, 0)]
    while todo:
        obj, at, ed, bd = todo.pop()
        if isinstance(obj, list):
            todo.extend((x, (at, i), ed, bd) for i, x in enumerate(obj) if isinstance(x, inner))
            continue
        t = type(obj)
        if t is Preset and plain_preset(obj):  # numbers only: nothing nests (thousands of them)
            continue
        kind = kinds.get(t)
        if kind is None:  # what a node of this type is, judged once a type
            kind = kinds[t] = (issubclass(t, exprs), issubclass(t, (PoolRef, StageRef)), issubclass(t, blocks),
                               tuple(f for f in t.__struct_fields__ if f != "span"))
        expr, ref, block, fields = kind
        if expr:
            ed += 1
            if ed > MAX_EXPR_DEPTH:
                return json_path(at), f"an expression nests more than {MAX_EXPR_DEPTH} deep"
        elif not ref:  # a reference's index nests in its observable
            ed = 0
        if block:
            bd += 1
            if bd > MAX_BLOCK_DEPTH:
                return json_path(at), f"loops, branches and holds nest more than {MAX_BLOCK_DEPTH} deep"
        for f in fields:
            if isinstance(v := getattr(obj, f), inner):
                todo.append((v, (at, f), ed, bd))
    return None


#: the most nodes a program's tree may have when some of its nodes are one object met at several places (a
#: program built in Python; a program read from a file has a node for each text, and is held by the file's
#: size): 2**19 took the simulator's set-up 12 s and 870 MB, growing with them
MAX_TREE = 2**20


def shared_problem(program) -> tuple[str, str] | None:
    """``(JSON path, message)`` when ``program`` (built in Python, not read from a file) uses one node object at
    several places and its tree, each written out where it stands, has more than :data:`MAX_TREE` nodes;
    None otherwise. Counted once an object (a tree of 2**40 nodes may be forty objects, ``e = Binary("+", e,
    e)`` forty times, which every walk of the program, this module's included, took as 2**40 and never
    ended)."""
    import msgspec

    from .nodes import Preset

    inner = (msgspec.Struct, list)
    sizes: dict[int, int] = {}
    todo = [(program, False)]
    while todo:
        obj, ready = todo.pop()
        key = id(obj)
        if key in sizes:
            continue
        if type(obj) is Preset and plain_preset(obj):  # numbers only, none shared below (one loop: a session's)
            sizes[key] = 1
            continue
        if isinstance(obj, list):
            kids = [x for x in obj if isinstance(x, inner)]
        else:
            kids = [v for f in obj.__struct_fields__ if f != "span" and isinstance(v := getattr(obj, f), inner)]
        if ready:
            sizes[key] = (not isinstance(obj, list)) + sum(sizes[id(k)] for k in kids)
        else:
            todo.append((obj, True))
            todo.extend((k, False) for k in kids if id(k) not in sizes)
    tree = sizes[id(program)]
    distinct = sum(1 for _ in sizes)
    if tree <= MAX_TREE or tree <= distinct:
        return None
    return "$", (f"the program, each node written out where it stands, has {tree} nodes, more than {MAX_TREE}: a "
                 "node object is used at several places, and is a copy at each (an expression built in Python and "
                 "put in twice is two); build a smaller program")


#: per node type met by :func:`nesting_problem`: whether it is an expression, a reference, a block, and its
#: fields but ``span``
_NEST_KINDS: dict[type, tuple[bool, bool, bool, tuple[str, ...]]] = {}


def json_path(path: object) -> str:
    """A JSON path kept as a chain ``(parent, key)`` down from a string (``"$"``, or any path written out),
    written out: a key an int is an index (``[3]``), a string a field (``.session``). The walks over a
    program keep their paths so, and make no string for each of its nodes."""
    if type(path) is str:
        return path
    keys = []
    while type(path) is tuple:
        path, key = path
        keys.append(f"[{key}]" if type(key) is int else f".{key}")
    keys.append(path)
    return "".join(reversed(keys))


_NUMBERS = (float, int)


def plain_preset(preset, lo: int = 0, hi: float = math.inf) -> bool:
    """Whether a workload ``Preset`` holds numbers only, as the IR's types say it does: its ``at``, and
    lists of ``SlotValue`` of a number each, every slot in ``lo <= slot < hi``. Such a preset holds no
    expression, block or reference, so the passes that walk a program for those skip it in one loop (a
    workload given as presets has one per session; the JSON path of a node is made only for a problem)."""
    from .nodes import SlotValue

    if type(preset.at) not in _NUMBERS or type(preset.attrs) is not list or type(preset.turns) is not list:
        return False
    for row in (preset.attrs, *preset.turns):
        if type(row) is not list:
            return False
        for sv in row:
            if type(sv) is not SlotValue or type(sv.slot) is not int or type(sv.value) not in _NUMBERS \
                    or not lo <= sv.slot < hi:
                return False
    return True


def slot_given_twice(preset) -> tuple[int, int, int] | None:
    """The first attribute slot a workload ``Preset`` gives twice in one row, as ``(row, index, slot)``
    (``row`` -1 for its ``attrs``, else the turn's index; ``index`` the second value's place in the row),
    or None. Rows of one value, and rows whose slots are not all integers (the walk refuses those), are
    not looked at; the rest cost no Python call a turn (a scenario has thousands)."""
    turns = preset.turns
    rows = (preset.attrs, *turns) if type(turns) is list else (preset.attrs,)
    r = -1
    for row in rows:
        if type(row) is list and len(row) > 1:
            try:
                slots = list(map(_SLOT, row))
            except AttributeError:  # (not a value of a slot: the walk refuses it)
                slots = ()
            if all(map(_is_int, slots)) and len(set(slots)) != len(slots):
                seen = set()
                for i, k in enumerate(slots):
                    if k in seen:
                        return r, i, k
                    seen.add(k)
        r += 1
    return None


_SLOT = operator.attrgetter("slot")
_is_int = int.__instancecheck__  # (C-level: no Python call a value; bool is an int too: the walk refuses it)


#: Seeds are the integers 0 … 2**64 - 1 (the streams are seeded from 64 bits; a negative seed or a larger
#: one would silently equal another seed).
MAX_SEED = 2**64 - 1


def seed_problem(seed) -> str | None:
    """Why ``seed`` is no seed, or None."""
    import operator

    try:
        v = None if isinstance(seed, bool) else operator.index(seed)
    except TypeError:
        v = None
    if v is None or not 0 <= v <= MAX_SEED:
        from serq.numbers import shown  # (not repr: an int of 4301 digits is no text to Python)

        return f"a seed is an integer from 0 to 2**64 - 1 ({MAX_SEED}), not {shown(seed)}"
    return None


#: the context variables each moment of evaluation has (docs/language.md, Moments), by the moment's name:
#: the rule of the linker (serq_frontend.link's moments) and of an IR file (serq_ir.validate); the
#: simulator reads any other as NaN
CONTEXT = {
    "Session": "now", "Admit": "now", "Queue": "now waited", "Evict": "size age last waiting now",
    "Victim": "admission decoding position now", "Ps": "present now",
    "Budget": "residents decoders kv_decode kv_prefill now",
    "Cost": "tokens decoders prefilled residents kv_decode kv_prefill attention now",
    "Serve": "decoding admission remaining residents decoders kv_decode kv_prefill now",
    "Gauge": "", "Arrival": "now",
}

#: the moments whose expressions may draw (docs/language.md, Moments): a session's statements (its holds'
#: headers included), eviction keys and spill clauses, an arrival gap. Elsewhere (a pool's queue or
#: preemption key, a ps capacity, a step stage's budget, chunk, cost or serve key, a gauge) a draw is refused,
#: by the linker and in an IR file alike (the description: "a key may not draw")
DRAWS_AT = frozenset({"Session", "Admit", "Evict", "Arrival"})

#: the observables a moment may not read, by (moment, observable): the message of the refusal, by the linker
#: and in an IR file alike (docs/language.md, Moments). A gauge is sampled when the state changes, so it reads
#: nothing that moves between events or belongs to a session; a preemption key ranks the candidates of one
#: growth, which ``budget_left`` would plan anew
OBSERVABLE_REFUSED = {
    ("Gauge", "cachedin"): "a gauge may not read `cachedin(…)` (the session's own prefix)",
    ("Gauge", "work"): "a gauge may not read `work(…)` (it moves between events)",
    ("Gauge", "budget_left"): "a gauge may not read `budget_left(…)` (it plans an iteration)",
    ("Victim", "budget_left"): "a preemption key may not read `budget_left(…)`",
}
# the other moments without a session (they read no attribute either): `cachedin(p)`, the session's own
# prefix, would read 0 there, silently
for _moment, _what in (("Ps", "a ps stage's capacity"), ("Budget", "a step stage's budget or chunk"),
                       ("Cost", "a step stage's cost"), ("Arrival", "an arrival gap")):
    OBSERVABLE_REFUSED[(_moment, "cachedin")] = (f"{_what} has no session: it may not read `cachedin(…)` (the "
                                                 "session's own prefix)")
del _moment, _what
#: the built-in attributes a moment may not read, by (moment, attribute), as :data:`OBSERVABLE_REFUSED`
ATTRIBUTE_REFUSED = {
    ("Victim", "computed"): "a preemption key may not read `computed` (the position at the session's last "
                            "preemption); `position` is where the candidate is now",
}


def budget_left_message(stage: str) -> str:
    """The refusal of ``budget_left(S)`` of a stage that is no step stage (only a step stage plans
    iterations), by the linker and in an IR file alike."""
    return f"`budget_left({stage})`: `{stage}` is no step stage"


#: the most arrivals a run may count (``run { arrivals N; }``, ``--arrivals N``, ``serq_sim.run(arrivals=)``):
#: below 2**53, where a double tells whole numbers apart. The run block's numbers are doubles (``arrivals
#: 9007199254740993;`` was read as 2**53, silently), and so is each session's ``serial`` (0 … N - 1). No
#: bound was held: ``serq_sim.run(arrivals=10**5000)`` ran to the horizon and then failed in Python's words
#: (``Exceeds the limit (4300 digits) for integer string conversion``) as its message quoted the count
MAX_ARRIVALS = 2**53 - 1


def arrivals_count_problem(n) -> str | None:
    """Why ``n`` (an int, or a float from the run block) is no count of arrivals, or None: a whole number
    from 1 to :data:`MAX_ARRIVALS`. The rule of an IR file (serq_ir.validate), the run block (the linker),
    ``--arrivals`` (serq.loading.apply_run_overrides) and ``serq_sim.run``."""
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        return None  # (a type the caller's own check refuses)
    if (n == int(n) if isinstance(n, int) or math.isfinite(n) else False) and 1 <= n <= MAX_ARRIVALS:
        return None
    if not isinstance(n, int):
        shown = show_number(n, exact=True)
    elif abs(n) < SHOWN_WHOLE:
        shown = str(n)
    else:  # as a message shows a number (%g), not in its digits: one of thousands was a ValueError
        shown = f"{float(n):g}" if n.bit_length() <= 1023 else f"an integer of {n.bit_length()} bits"
    return (f"arrivals is a whole number from 1 to 2**53 - 1 ({MAX_ARRIVALS}, where a double tells whole "
            f"numbers apart), not {shown}")


def arrivals_problem(arrive, arrivals) -> str | None:
    """Why a count of ``arrivals`` (``run { arrivals N; }``, ``--arrivals N``) cannot end a workload that
    arrives by ``arrive`` (the IR's node), or None: it counts the arrivals of an open workload. The rule of
    an IR file (serq_ir.validate), of the command line's ``--arrivals`` (serq.loading.apply_run_overrides)
    and of the simulator's build: ``serq check`` took an IR file ``serq run`` refused, and ``serq ir
    --arrivals 5`` of a closed workload wrote one."""
    from .nodes import Poisson, Renewal

    if arrivals is None or isinstance(arrive, (Poisson, Renewal)):
        return None
    return f"arrivals N {NEEDS_OPEN}{open_advice(arrive)}"


#: what :func:`arrivals_problem` says of a count of arrivals, after the setting it names (and before
#: :func:`open_advice`)
NEEDS_OPEN = "needs an open workload (arrive poisson or renewal)"


def open_advice(arrive) -> str:
    """What works instead of a count of arrivals for the workload that is not open ``arrive`` (the IR's node),
    said after :data:`NEEDS_OPEN` (``""`` for ``arrive none``): a closed population is ended by a horizon, or
    is a batch of M sessions behind a pool of its n slots (`--arrivals N` of `arrive closed(n)` was refused
    with no word of what does the job); a batch ends by its horizon, ``inf`` running its sessions to the end
    (it was told to change its count, and no count of a batch is taken). Either drops the count, or keeps it
    and makes the workload open: the words fit each place a count is given (the run block, ``--arrivals``,
    an IR file, an argument of ``serq_sim.run``)."""
    from .nodes import Batch, Closed

    if isinstance(arrive, Closed):
        n = arrive.n
        return (f"; `arrive closed({n})` starts a session again as each one ends, so no count of arrivals ends "
                f"it: remove the count and bound the run by its horizon (`--horizon T`, `run {{ horizon T; }}`), "
                f"or run M sessions, {n} at a time, as `arrive batch(M);` behind a pool of {n} slots "
                f"(`pool slots {{ cap {n}; }}`, the session inside `hold slots (1) {{ … }}`; `--horizon inf` runs "
                f"them to the end){_OPEN_INSTEAD}")
    if isinstance(arrive, Batch):
        n = arrive.n
        them = "it" if n == 1 else f"the {n}"
        return (f"; `arrive batch({n})` starts its {n} session{'' if n == 1 else 's'} at time 0 and no more, so "
                f"no count of arrivals ends it: remove the count and bound the run by its horizon (`--horizon inf`,"
                f" `run {{ horizon inf; }}`, runs {them} to the end){_OPEN_INSTEAD}")
    return ""


#: the other way out :func:`open_advice` gives of a workload that is not open: the one a count ends
_OPEN_INSTEAD = ", or keep the count and make the workload open (`arrive poisson(RATE);` with a horizon)"


def setting_message(origins: dict, values: dict, names: tuple[str, ...], message: str) -> tuple[object, str]:
    """The one rule of an error a run setting causes, at the set-up or while it runs, on both tiers and on
    the command line (``serq_sim.errors.setting_error``, ``serq.loading.apply_run_overrides``): where the
    error points, and its text. ``names``: the settings the error is about, the one it concerns first
    (``("arrivals", "horizon")``); ``origins``: where each came from (``serq_sim.errors.setting_origins``:
    the IR's ``RunSpans``, a span in the run block or the option that gave it as written, ``--arrivals 5``,
    or an argument of ``serq_sim.run``, ``arrivals=5``; None: not known); ``values`` the settings' values.

    The text is headed by the first setting as its origin names it: an option or an argument as given,
    else as the run block writes it (``run { arrivals 5; }``). Each other setting that came from an option
    or an argument is named after the message (``(--horizon 4)``). The place is the first setting's span
    when it was given in the run block (the caller quotes the line there, with a caret: where its user
    changes it), else None."""
    from serq.errors import printable

    def text(name: str) -> str:
        v = values[name]
        return "inf" if v == math.inf or v == "inf" else show_number(v)

    first = names[0]
    origin = origins.get(first)
    head = printable(origin) if isinstance(origin, str) else f"run {{ {first} {text(first)}; }}"
    others = [printable(o) for o in (origins.get(n) for n in names[1:]) if isinstance(o, str)]
    tail = f" ({', '.join(others)})" if others else ""
    return (None if isinstance(origin, str) else origin), f"{head}: {message}{tail}"


def window_problem(horizon, warmup) -> str | None:
    """Why a run's measured window is empty, or None: a ``warmup`` not below a finite ``horizon`` (a number;
    ``"inf"``, or None for a horizon the command gives later, ends after any warmup): the rule of an IR file
    (``serq_ir.validate``) and of the command line's ``--warmup``/``--horizon``
    (``serq.loading.apply_run_overrides``), of the frontend's run block (an error at the item) and of
    ``serq_sim.run(horizon=, warmup=)`` (serq_sim.build)."""
    if horizon is None or horizon == "inf" or isinstance(horizon, bool) or not isinstance(horizon, (int, float)):
        return None
    if horizon == math.inf or not isinstance(warmup, (int, float)) or warmup < horizon:
        return None
    return f"warmup {show_number(warmup)} is not below the horizon {show_number(horizon)}"


def _show(x: float) -> str:
    return show_number(x, exact=True)


#: the rule of :func:`pairs` in words, as the linker's and serq_ir.validate's messages give it
PAIRING = ("a declaration names a family of its own size (member for member) or one of a single member (which "
           "every member shares)")


def family(kind: str, name: str, size: int) -> str:
    """A declaration as a message about pairing names it: ``stage E (a family of 2)``. Its size in words, not
    in brackets, where ``E[2]`` reads as the member of index 2 (an IR file's ``stage e[1]: memory kv[3]``
    spoke of a stage e of one member and a pool kv of three)."""
    return f"{kind} {name} (a family of {size})"


def pairs(size: int, named: int) -> bool:
    """Whether a family of ``size`` may name a family of ``named`` members in a declaration (``admit via``,
    ``memory``): member for member, or every member the one of a family of one. The rule of the linker,
    of an IR file (serq_ir.validate) and of the simulator's build."""
    return named == size or named == 1


def pairs_message(kind: str, owner: str, size: int, named: str, count: int, owner_kind: str | None = None) -> str:
    """Why a family of ``size`` (``owner``) may not name the ``kind`` (pool, stage) family ``named`` of
    ``count`` members (:func:`pairs` said no): the linker's words. The rule is directional: one
    declaration does not name a family of several (one queue admitted by several engines, one engine
    counting several KV pools), which would leave open which member takes a request."""
    owner_kind = owner_kind or ("stage" if kind == "pool" else "pool")  # (a spill's: a pool naming a pool)
    what = f"`{owner}` is one {owner_kind}" if size == 1 else (
        f"`{owner}` is a family of {size}")
    return (f"{what} and `{named}` a {kind} family of {count}: {PAIRING}, not a family of {count}; declare "
            f"`{owner}[{count}]`, one for each member of `{named}`")


def spills_to_itself(same: bool, size: int, indexed: bool) -> bool:
    """Whether a pool's ``spill TIER`` names the pool itself as its tier, every member its own (``same``: the
    tier is the pool's family; a family of one, or one named without an index, which pairs member for
    member). A pool evicts only while it makes room, and language.txt's spill into a pool making room (a
    cycle of tiers coming back to it) writes nothing: such a clause never spills. The rule of the linker and
    of an IR file (serq_ir.validate). A member named by index in a larger family spills the others' there."""
    return same and (size == 1 or not indexed)


def spill_to_itself_message(pool: str) -> str:
    """Why :func:`spills_to_itself` refuses ``pool``'s spill: the words of the linker and of an IR file."""
    return (f"pool {pool} spills to itself: it evicts only while it makes room, and a spill into a pool "
            "making room writes nothing, so this spill never writes; spill to another pool (a tier)")


def member_problem(kind: str, idx: float, size: int, name: str) -> str | None:
    """Why ``idx`` names no member of the ``kind`` (pool, stage) family ``name`` of ``size``, or None: the rule
    of a computed index at run time (the simulator, both tiers), of a spill's constant index at its build, and
    of a constant index in an IR file (serq_ir.validate: ``serq check`` took ``kv[5]`` of a family of 2, which
    ``serq run`` refused). The family is named (``pool kv: index 2 out of range (the family has 2)``): a
    statement may name several (``hold kv[i] (1) { run E[j] (1); }``), and the words said only ``pool``."""
    if idx != idx:
        return f"{kind} {name}: the index is NaN, which names no member (the family has {size})"
    if idx < 0 or idx >= size:
        return f"{kind} {name}: index {show_number(idx)} out of range (the family has {size})"
    if int(idx) != idx:
        return f"{kind} {name}: index {show_number(idx)} is not a whole number (the family has {size})"
    return None


#: whole numbers from this size on are shown as ``%g``, as other numbers are: a double that large is the
#: whole number nearest a value (1e308 written out was its 309 digits, a message of a screen)
SHOWN_WHOLE = 1e16


def show_number(x: float, exact: bool = False) -> str:
    """A number as a message shows it, the one rule of every message (these rules', the simulator's
    serq_sim.errors.show and its times, the linker's, a run setting's option): ``NaN``, a whole number below
    :data:`SHOWN_WHOLE` in size without a point, else ``%g``; with ``exact``, every other number by all its
    digits (``repr``: a parameter quoted as given, ``~uniform(0.1, 0.30000000000000004)``)."""
    if x != x:
        return "NaN"
    x = float(x)
    if math.isfinite(x) and x == int(x) and abs(x) < SHOWN_WHOLE:
        return str(int(x))
    return repr(x) if exact and math.isfinite(x) else f"{x:g}"


#: the most phases an Erlang draw has: each is an exponential draw, so ~erlang(1e9, m) took minutes a draw
#: (a run of a few seemed to hang); one of 100 000 phases is m within a standard deviation of 0.32 %
MAX_PHASES = 100_000

#: The largest cv2 of ``~h2(mean, cv2)``. Its slow phase is drawn with probability ``(1 - sqrt((cv2 - 1) / (cv2 +
#: 1))) / 2``, about ``1 / (2 cv2)``, by one uniform of 53 bits: the law's mean is kept exactly while that
#: probability is above 0 in a double, but its cv2 is off by 1e-7 up to cv2 1e11, 1e-4 at 1e12, 8e-4 from 1e13,
#: 12 to 25 % at 1e15; from about 1e16 the probability rounds to 0, no draw is the slow phase's and the draws are
#: ~exp(mean / 2): half the mean, cv2 1 (``~h2(1, 1e17)`` drew a mean of 0.508 over 102 draws, without a word).
MAX_CV2 = 1e12
_MAX_CV2_SHOWN = "1e12"


def draw_problem(dist: str, args: list[float]) -> str | None:
    """Why ``~dist(args)`` is no draw (its parameters are outside the distribution's domain), or None.

    ``~exp(mean)``: mean ≥ 0; ``~uniform(lo, hi)``: finite, lo ≤ hi; ``~erlang(k, mean)``: k a whole
    number from 1 to :data:`MAX_PHASES`, mean ≥ 0; ``~h2(mean, cv2)``: mean ≥ 0, 1 ≤ cv2 ≤ :data:`MAX_CV2`; ``~bernoulli(p)``: 0 ≤ p ≤ 1;
    ``~det(x)``: any number but NaN (it is x). Infinite means are allowed (the draw is inf). A NaN parameter
    is no parameter of any law, ``~det``'s too (it was taken as the draw NaN, where ``~exp(NaN)`` was refused)."""
    if dist == "det" and not any(a != a for a in args):
        return None
    shown = ", ".join(_show(a) for a in args)
    head = f"~{dist}({shown})"
    if any(a != a for a in args):
        return f"{head}: a parameter is NaN"
    if dist == "exp":
        if args[0] < 0:
            return f"{head}: the mean is negative"
    elif dist == "uniform":
        lo, hi = args
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return f"{head}: the bounds must be finite"
        if lo > hi:
            return f"{head}: the low bound is above the high bound"
    elif dist == "erlang":
        k, mean = args
        if not (1 <= k < math.inf and k == int(k)):
            return f"{head}: the number of phases must be a whole number of at least 1"
        if k > MAX_PHASES:
            return (f"{head}: more than {MAX_PHASES} phases (each phase is a draw of its own; so many are the "
                    "mean within a third of a percent: ~det(mean))")
        if mean < 0:
            return f"{head}: the mean is negative"
    elif dist == "h2":
        mean, cv2 = args
        if mean < 0:
            return f"{head}: the mean is negative"
        if not 1 <= cv2 < math.inf:
            return f"{head}: cv2 must be at least 1 and finite (a hyperexponential is at least as variable as ~exp)"
        if cv2 > MAX_CV2:
            return (f"{head}: cv2 above {_MAX_CV2_SHOWN} (its slow phase, of probability about 1 / (2 cv2), is "
                    "drawn by one uniform of 53 bits: the draws' cv2 would be off by more than 0.01 %, and from about "
                    "1e16 no draw is the slow phase's and their mean is half the law's)")
    elif dist == "bernoulli":
        if not 0 <= args[0] <= 1:
            return f"{head}: a probability is between 0 and 1"
    return None


def guard_problem(g: float) -> str:
    """The words for a ``branch`` guard whose value is not 0 or 1 (language.txt §3 Branching, a guard is a
    test): the simulator's run-time error for a computed one (both tiers: serq_sim.errors.guard_message),
    and the linker's for a constant NaN (``branch (0/0)``). A fraction reads as a probability meant for
    ``branch with``; a count, a negative number, inf or NaN as a value where its test was meant."""
    if 0 < g < 1:
        return f"branch guard is {show_number(g)}, not 0 or 1 (a draw is written `branch with (p)`)"
    return (f"branch guard is {show_number(g)}, not 0 or 1: a guard is a test; write the comparison meant "
            "(`n > 0`, `x != 0`)")


def branch_with_draw(draw) -> bool:
    """Whether the IR node ``draw`` is the draw that ``branch with (p)`` is written as (the kernel's ``branch
    (~bernoulli(p))``): the frontend places that draw where its probability is written, so its span is its
    argument's, where a ``~bernoulli(p)`` written out begins at its ``~``, before the argument. Its domain
    error is then told in the words the program wrote (:func:`branch_with_problem`); a node without spans
    (an IR file written without them) cannot tell, and keeps the draw's words."""
    span = getattr(draw, "span", None)
    args = getattr(draw, "args", None)
    return (getattr(draw, "dist", None) == "bernoulli" and span is not None and args is not None
            and len(args) == 1 and getattr(args[0], "span", None) == span)


def branch_with_problem(p: float) -> str | None:
    """Why ``p`` is no probability of ``branch with (p)`` (outside [0, 1], or NaN), or None: the linker's
    words for a constant, the run-time error's for a computed one (both tiers)."""
    if 0 <= p <= 1:
        return None
    return f"branch with (…): a probability is between 0 and 1, got {_show(p)}"


def capacity_problem(phi: float) -> str | None:
    """Why ``phi`` is no ps capacity (negative or NaN; 0 serves nothing and is allowed), or None."""
    return _not_negative("the capacity", "is", phi)


def budget_problem(b: float) -> str | None:
    """Why ``b`` is no iteration budget (negative or NaN; 0 schedules nothing), or None."""
    return _not_negative("the budget", "is", b)


def chunk_problem(c: float) -> str | None:
    """Why ``c`` is no chunk, the most tokens a prefill takes in an iteration (negative or NaN; 0 gives a
    prefill none, inf is no cap), or None."""
    return _not_negative("the chunk", "is", c)


def cost_problem(c: float) -> str | None:
    """Why ``c`` is no iteration cost (negative or NaN: an iteration cannot end before it starts)."""
    return _not_negative("the cost", "is", c)


def amount_problem(what: str, x: float) -> str | None:
    """Why ``x`` is no amount of memory (``what``: "the units", "the reserve", "the amount"), or None:
    an amount is not negative and not NaN (inf is allowed: it never fits)."""
    return _not_negative(what, "are" if what == "the units" else "is", x)


def lease_time_problem(t: float) -> str | None:
    """Why ``t`` is no lease time (language.txt §3: the allocation is kept "t seconds" past the scope's end,
    a duration as a run's work is; negative or NaN), or None (0 ends it at the scope's instant, inf never)."""
    return _not_negative("the lease time", "is", t)


def negative_bound_message(clause: str, x: float) -> str:
    """The linker's warning at a constant negative ``reuse`` bound or ``cache`` length (``clause``), which is
    taken as 0 (language.txt §3: the hold consumes at most ρ units; min(ℓ, computed) units stay cached)."""
    what, did = {"reuse": ("reuse bound", "consumes none of its prefix, as `reuse (0)`"),
                 "cache": ("cache length", "caches nothing, as `cache (0)`")}[clause]
    return f"the {what} is negative ({_show(x)}), taken as 0: the hold {did} does"


def choose_problem(n: float, exact: bool = True) -> str | None:
    """Why ``n`` is no count of a ``choose``'s candidates (0 … n-1), or None: a whole number from 1 to
    :data:`MAX_MEMBERS` (a family's most members; each candidate's keys are evaluated, so a count of 1e9
    or inf ran for ever). ``exact``: the count by all its digits (a constant, quoted as written); else as
    every other number of a message (:func:`show_number`: a computed count at run time)."""
    if n != n:
        return "the count of candidates is NaN"
    if not 1 <= n <= MAX_MEMBERS or n != int(n):
        return (f"the count of candidates is {show_number(n, exact=exact)}, not a whole number from 1 to "
                f"{MAX_MEMBERS}")
    return None


def gap_problem(g: float) -> str | None:
    """Why ``g`` is no gap of ``arrive renewal`` (language.txt §2: "Gaps must be positive and finite"), or
    None: a constant gap does not link, a drawn or computed one is an error when it is drawn."""
    if not 0 < g < math.inf:
        return f"the gap is {_show(g)}; gaps must be positive and finite"
    return None


def work_problem(x: float) -> str | None:
    """Why ``x`` is no run's work (negative or NaN; 0 completes at once, inf never), or None."""
    return _not_negative("the work", "is", x)


def _not_negative(what: str, verb: str, x: float) -> str | None:
    """The one rule of capacities, costs and amounts: NaN and negative values are refused (inf is not)."""
    if x != x:
        return f"{what} {verb} NaN"
    if x < 0:
        return f"{what} {verb} negative ({_show(x)})"
    return None


def _budget_reads(expr, path: str):
    """``(path, stage family)`` of every ``budget_left(…)`` in ``expr`` (walked without recursion)."""
    import msgspec

    from .nodes import Observable

    out = []
    todo = [(expr, path)]
    while todo:
        obj, at = todo.pop()
        if isinstance(obj, list):
            todo.extend((x, f"{at}[{i}]") for i, x in reversed(list(enumerate(obj))))
            continue
        if not isinstance(obj, msgspec.Struct):
            continue
        if isinstance(obj, Observable) and obj.name == "budget_left":
            out.append((at, obj))
        todo.extend((getattr(obj, f), f"{at}.{f}") for f in reversed(obj.__struct_fields__) if f != "span")
    return out


def budget_cycle(stages) -> tuple[int, str, str, object] | None:
    """A step stage whose budget or chunk reads ``budget_left`` of itself, or of a stage whose budget or
    chunk reads it back (through any number of stages): evaluating ``budget_left(S)`` evaluates S's budget
    and chunk, so such a program would recurse without end. Families count as one stage. Returns
    ``(stage, field, path inside the field, the Observable)`` of the first read that closes a cycle, or
    None."""
    from .nodes import Step

    edges: dict[int, list] = {}
    for i, st in enumerate(stages):
        if not isinstance(st.kind, Step):
            continue
        for field in ("budget", "chunk"):
            e = getattr(st.kind, field)
            if e is not None:
                for at, obs in _budget_reads(e, ""):
                    edges.setdefault(i, []).append((obs.target.stage, field, at, obs))

    def reaches(a: int, goal: int) -> bool:
        seen, todo = {a}, [a]
        while todo:
            x = todo.pop()
            if x == goal:
                return True
            for y, *_ in edges.get(x, ()):
                if y not in seen and 0 <= y < len(stages):
                    seen.add(y)
                    todo.append(y)
        return False

    for i in sorted(edges):
        for target, field, at, obs in edges[i]:
            if reaches(target, i):
                return i, field, at, obs
    return None


def hold_twice(pools) -> int | None:
    """The position of the first of a hold's pools (:class:`~serq_ir.nodes.HoldPool`) that names the same
    pool member as an earlier one, when both are written the same way (no index, or the same number), or
    None. A hold takes one amount of each pool: ``hold m (a), m (b)`` would leave ``release m``, ``lease m``
    and the pool's admission test ambiguous; it is written ``hold m (a + b)``. Members chosen by computed
    indices are compared when the hold executes (:func:`same_member_message`)."""
    from .nodes import Num

    seen = set()
    for k, hp in enumerate(pools):
        ix = hp.pool.index
        if ix is None:
            key = (hp.pool.pool, None)
        elif type(ix) is Num:
            key = (hp.pool.pool, ix.value)
        else:
            continue
        if key in seen:
            return k
        seen.add(key)
    return None


def lease_unheld(pools, lease) -> bool:
    """Whether a hold's ``lease`` (:class:`~serq_ir.nodes.Lease`) names a pool member none of its ``pools``
    (:class:`~serq_ir.nodes.HoldPool`) names (:func:`names_none`). "lease P (t) names one of the hold's
    pools" (language.txt §2); members chosen by computed indices are compared when the lease is taken
    (:func:`lease_unheld_message`)."""
    return names_none([hp.pool for hp in pools], lease.pool)


def unheld(held, ref) -> bool:
    """Whether a ``load``, a ``grow`` or a growing run of pool ``ref`` (a :class:`~serq_ir.nodes.PoolRef`)
    stands in no hold of it: ``held`` the pools the holds around the statement name (:func:`names_none`).
    Such a statement acts on "the innermost enclosing hold" on its pool (language.txt §3), which a hold's
    scope is, written around it (a definition's body and a queue's entry are written out where they are
    used), so one that stands in none can never run; members chosen by computed indices are compared when
    the statement runs (the run-time error of the same words)."""
    return names_none(held, ref)


def unheld_message(what: str, name: str) -> str:
    """The message of :func:`unheld`'s rule, at the link and in an IR file (the run-time error says
    ``load kv: outside a hold of kv``)."""
    return (f"`{what} {name}` stands in no hold of `{name}`: it acts on the innermost hold around it that holds "
            f"`{name}` (write it inside `hold {name} (…) {{ … }}`)")


def names_none(refs, target) -> bool:
    """Whether pool reference ``target`` names a member none of ``refs`` names, as far as the written forms
    tell: another family, or a member written with a number (or none) that no reference of that family has,
    each of them written with a number (or none); a computed index may name any member."""
    from .nodes import Num

    same = [r for r in refs if r.pool == target.pool]
    if not same:
        return True

    def key(ix):
        return None if ix is None else ix.value if type(ix) is Num else ...

    lk = key(target.index)
    if lk is ...:
        return False
    keys = [key(r.index) for r in same]
    if any(k is ... for k in keys):
        return False
    return lk not in keys


def lease_unheld_message(name: str) -> str:
    """The message of :func:`lease_unheld`'s rule, at the link, in an IR file and at run time."""
    return f"`lease {name}`: the hold does not hold `{name}`; a lease names one of its pools"


def same_member_message(name: str) -> str:
    """The message of :func:`hold_twice`'s rule, at the link, in an IR file and at run time."""
    return f"the hold names pool {name} twice; a hold takes one amount of each pool (write one amount, the sum)"


def transfer_itself_message(a: str, b: str) -> str:
    """The message of a ``transfer … from a to b`` whose two pools are one member (``a`` and ``b`` as the transfer
    names them): at the link for the same names and constant indexes (serq_frontend.sugar.serving), and at run
    time for indexes that come out equal (serq_sim.compile, its ``release``, both tiers)."""
    return (f"`transfer … from {a} to {b}`: a transfer moves the KV from one pool to another, and both name "
            f"`{b}`; it ends with `release {a}`, which would give back the hold on `{b}` its load has just "
            "filled. `from` names the pool the KV is leased or held on, `to` the pool of the hold it moves into")


def least(*xs: float) -> float:
    """The language's ``min``: the least argument that is not NaN (the first of equal ones), NaN only when
    every argument is; NaN is no argument's rival, whatever its place (the reference's ``f64::min``,
    IEEE 754's minNum). Python's ``min`` kept a NaN in first place and passed over one after it, so
    ``min(n, 1)`` was NaN and ``min(1, n)`` 1. The linker folds with it, the simulator computes with it."""
    r = xs[0]
    for x in xs[1:]:
        if x < r or r != r:
            r = x
    return r


def greatest(*xs: float) -> float:
    """The language's ``max``, as :func:`least`: the greatest argument that is not NaN."""
    r = xs[0]
    for x in xs[1:]:
        if x > r or r != r:
            r = x
    return r
