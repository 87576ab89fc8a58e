"""The vLLM engine configuration a serQ program implies (the ``*.target.json`` shape).

A program that is a vLLM engine has one ``step`` stage whose memory is a block pool with ``preempt
lifo`` and whose admission pool (``admit via``) has a cap: the stage's budget is
``max_num_batched_tokens``, the least cap of the pools besides the memory pool that a request the stage
admits needs room in (the ``admit via`` pool, or the request-slot pool of a hold that names the memory
pool first and so waits in its queue) ``max_num_seqs``, the memory pool's block
``block_size`` and ``cap / block + 1`` blocks ``num_gpu_blocks`` (vLLM keeps one null block), the chunk
cap ``long_prefill_token_threshold``, and the ``serve by`` keys the running order, written in the
reference implementation's serde form (``{"Ctx": "Admission"}``, ``{"Unary": ["Neg", …]}``).

A program vLLM cannot run is refused, at the construct (file:line:col, the source line and a caret):
an engine no pool says ``admit via`` of (its requests would be admitted between its iterations),
``serve exclusive prefill`` (vLLM's scheduler has no batch isolation), a serve key reading ``remaining``
(vLLM does not know how many tokens a request has left: the output length is ``max_tokens`` at most) or a
session attribute (serq_vllm.SerqScheduler sorts by admission and decoding only),
``reserve held`` on the engine's pools (vLLM checks a reservation at admission only), a memory pool that
does not ``preempt lifo`` or ``evict lru``, a ``queue by`` key of a pool the engine's requests wait in that
reads ``waited`` other than as ``-waited`` (vLLM's waiting queue is first come first served: :func:`_waited_key`), or
whose first key that orders is neither that (nor ``now - waited``, the instant it joined) nor a send time
(``queue by (prompt)``: :func:`_unsent_key`), a send time that is not the request's arrival (a ``set t1 = now``
before a tool call: :func:`_refuse_late_send`), and a constant chunk cap (vLLM's
``long_prefill_token_threshold`` lifts for a lone request: ``chunk long_prefill(reqs, C)`` says so), or
one below 0 (``--set C=-5``; the threshold is at least 0).
The engine may be a step family ``stage engine[N]``: its members are replicas of one configuration, which
the target says under ``replicas`` for N > 1 (how many, which: :func:`_replicas`), each a memory pool of its own
(``pool kv[N]``): members that share one are refused (:func:`_refuse_shared_memory`).
Served in admission order with no keys (no ``serve`` clause, or ``serve admission``), the program is
vLLM's own scheduler and its configuration names no ``scheduler_cls``; any ``serve by`` keys, even
``(admission)``, name serQ's scheduler class, which sorts the running requests by them.

A program vLLM runs otherwise is warned of, under ``warnings`` (a key only a target with a warning has):
a request admitted by the engine whose first chunk on the memory pool is cut at another long-prefill
threshold than the engine's chunk (:func:`_first_chunk_cut`; lib/vllm.sq's ``vllm_request``, which passes
the threshold inf, beside ``chunk long_prefill(reqs, 64)``): vLLM cuts a waiting request's first chunk at
the engine's threshold (scheduler.py:1115-1128), so such a program takes blocks from the free queue at
admission that vLLM does not; and a memory pool that spills what it evicts to another pool (an offload
tier, :func:`_offload_warning`), which the configuration does not describe: vLLM offloads KV only through a
KV connector, which a target does not write.
"""

from __future__ import annotations

import math
from typing import Any

from serq import UserError
from serq_ir import nodes as n
from serq_ir.analysis import budget_not_given, builtin_slots, taken_arm
from serq_ir.rules import show_number


class TargetError(UserError):
    """A program vLLM cannot run, at the construct that says so."""

    def __init__(self, span: n.Span | n.ExpandedSpan | None, message: str, base: str | None = None):
        from serq_sim.errors import format_error

        super().__init__(format_error(span, None, None, message, base))


def _span(*nodes: Any) -> n.Span | n.ExpandedSpan | None:
    """The first source span among ``nodes`` and what they contain (a node a definition's use expanded has
    an :class:`~serq_ir.nodes.ExpandedSpan`, whose uses the error's notes name)."""
    for node in nodes:
        for x in _walk(node):
            span = getattr(x, "span", None)
            if span is not None:
                return span
    return None

_BINARY = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "%": "Rem", "<": "Lt", "<=": "Le", ">": "Gt",
           ">=": "Ge", "==": "Eq", "!=": "Ne", "&&": "And", "||": "Or"}


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def serde_expr(e: n.Expr, base: str | None = None) -> Any:
    """An IR expression in the reference implementation's serde (externally tagged) form; a TargetError at
    a node that has none (an observable, a draw), ``base`` the program's file for the message."""
    if isinstance(e, n.Num):
        return {"Num": float(e.value) if not isinstance(e.value, str) else e.value}
    if isinstance(e, n.Ctx):
        return {"Ctx": _camel(e.name)}
    if isinstance(e, n.Unary):
        return {"Unary": ["Neg" if e.op == "-" else "Not", serde_expr(e.arg, base)]}
    if isinstance(e, n.Binary):
        return {"Binary": [_BINARY[e.op], serde_expr(e.lhs, base), serde_expr(e.rhs, base)]}
    if isinstance(e, n.Cond):
        return {"Cond": [serde_expr(e.test, base), serde_expr(e.then, base), serde_expr(e.orelse, base)]}
    if isinstance(e, n.Attr):
        return {"Attr": e.slot}
    if isinstance(e, n.Call):
        return {"Call": [e.fn, [serde_expr(a, base) for a in e.args]]}
    what = f"`{e.name}(…)`" if isinstance(e, n.Observable) else "a draw" if isinstance(e, n.Draw) else \
        type(e).__name__
    raise TargetError(_span(e), f"a serve key that reads {what} has no vLLM form", base)


def _const(e: n.Expr | None, what: str, base: str | None = None) -> float:
    if isinstance(e, n.Num):
        return math.inf if e.value == "inf" else float(e.value)
    raise TargetError(_span(e), f"the engine's {what} is not a constant, so it has no vLLM setting", base)


def _family_const(e: n.Expr | None, what: str, stage: n.Stage, sid: int, base: str | None) -> float:
    """:func:`_const` of a step family's own expression (its ``budget``), which may read ``member(E)``: the
    one value every member gives, or the error naming each member's where they differ (it said "the
    engine's budget is not a constant" for `budget member(engine) == 0 ? 256 : 512;`, as of an expression
    no member can fold)."""
    if isinstance(e, n.Num) or e is None or stage.size <= 1:
        return _const(e, what, base)
    values = [_member_value(e, sid, i) for i in range(stage.size)]
    if any(v is None for v in values):
        return _const(e, what, base)
    if len(set(values)) == 1:
        return values[0]
    shown = ", ".join(f"{stage.name}[{i}] {show_number(v)}" for i, v in enumerate(values))
    raise TargetError(_span(e), f"the engine's {what} differs between the members of step family "
                      f"`{stage.name}` ({shown}), and a vLLM target is one configuration for every engine: give "
                      f"the members one {what}", base)


def _pool_cap(pool: n.Pool, what: str, base: str | None) -> float:
    """The cap of ``pool``, every member's: a family whose members' caps differ (``caps``, a fleet of unlike
    GPUs) is refused as a step family whose members' budgets differ is (:func:`_family_const`)."""
    if pool.caps is None or len(set(pool.caps)) == 1:
        return _const(n.Num(value=pool.cap if pool.caps is None else pool.caps[0]), what)
    shown = ", ".join(f"{pool.name}[{i}] {show_number(_const(n.Num(value=c), what))}" for i, c in enumerate(pool.caps))
    raise TargetError(pool.span, f"the engine's {what} differs between the members of pool family `{pool.name}` "
                      f"({shown}), and a vLLM target is one configuration for every engine: describe each engine "
                      "with a program of its own", base)


_MEMBER_OPS: dict[str, Any] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b if b else math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1, b),
    "==": lambda a, b: float(a == b), "!=": lambda a, b: float(a != b), "<": lambda a, b: float(a < b),
    "<=": lambda a, b: float(a <= b), ">": lambda a, b: float(a > b), ">=": lambda a, b: float(a >= b),
    "&&": lambda a, b: float(bool(a) and bool(b)), "||": lambda a, b: float(bool(a) or bool(b)),
}


def _member_value(e: Any, sid: int, i: int) -> float | None:
    """The value of the expression ``e`` of step family ``sid``'s member ``i``: numbers, ``member(E)`` of
    the family itself, arithmetic, tests, conditionals, ``min``, ``max``, ``floor``, ``ceil``, ``abs``;
    None for anything else it reads (then it is not a constant of the member)."""
    if isinstance(e, n.Num):
        return _value(e)
    if (isinstance(e, n.Observable) and e.name == "member" and isinstance(e.target, n.StageRef)
            and e.target.stage == sid and e.target.index is None):
        return float(i)
    if isinstance(e, n.Cond):
        t = _member_value(e.test, sid, i)
        return None if t is None else _member_value(e.then if t != 0 else e.orelse, sid, i)
    if isinstance(e, n.Unary):
        a = _member_value(e.arg, sid, i)
        return None if a is None else -a if e.op == "-" else float(a == 0) if e.op == "!" else None
    if isinstance(e, n.Binary) and e.op in _MEMBER_OPS:
        a, b = _member_value(e.lhs, sid, i), _member_value(e.rhs, sid, i)
        return None if a is None or b is None else _MEMBER_OPS[e.op](a, b)
    if isinstance(e, n.Call) and e.fn in ("min", "max", "floor", "ceil", "abs") and e.args:
        args = [_member_value(x, sid, i) for x in e.args]
        if any(a is None for a in args):
            return None
        if e.fn in ("min", "max"):
            return (min if e.fn == "min" else max)(args)  # type: ignore[type-var]
        x = args[0]
        return abs(x) if e.fn == "abs" else x if not math.isfinite(x) else float(
            math.floor(x) if e.fn == "floor" else math.ceil(x))
    return None


#: serQ's numbers are doubles, which hold every whole number only below this (serq_vllm.real.EXACT)
_EXACT = 2**53


def _whole(v: float, setting: str, what: str, span: n.Span | n.ExpandedSpan | None, base: str | None) -> int:
    """``v`` as the whole number of at least 1 vLLM's ``setting`` is, or a TargetError at ``span``: an
    infinite value ended in an ``OverflowError`` traceback, a fraction was cut (a budget of 0.5 tokens
    became ``max_num_batched_tokens: 0``, a block of 2.5 tokens ``block_size: 2``)."""
    if not (math.isfinite(v) and v >= 1 and v == math.floor(v)):
        # every digit of a fraction (exact): a block of 16.000000000000004 said `is 16: … a whole number`
        raise TargetError(span, f"{what} is {show_number(v, exact=True)}: vLLM's {setting} is a whole number, at "
                          "least 1", base)
    if v >= _EXACT:  # (1e300 was written as the 301 digits of the double nearest it)
        raise TargetError(span, f"{what} is {show_number(v)}, not below 2**53, where serQ's numbers (doubles) do not tell "
                          f"one whole number from the next: no whole number for vLLM's {setting}", base)
    return int(v)


def _truth(e: n.Expr) -> bool | None:
    """Whether a test is always true or always false whatever the state, or None: a number, and `&&`, `||`
    of tests one side of which decides (the linker folds `C > 0` of a constant C, not `0 && x`)."""
    if isinstance(e, n.Num):
        return _value(e) != 0  # (NaN is true)
    if isinstance(e, n.Binary) and e.op in ("&&", "||"):
        a, b = _truth(e.lhs), _truth(e.rhs)
        if e.op == "&&":
            return False if False in (a, b) else True if a is True and b is True else None
        return True if True in (a, b) else False if a is False and b is False else None
    return None


def _chunk(e: n.Expr | None, base: str | None = None, top: bool = True) -> int:
    """``long_prefill_token_threshold``: 0 for no cap (no chunk, or inf); the constant of
    ``long_prefill(reqs, c)``. A finite constant cap is refused: vLLM's threshold lifts while a request is
    alone, a constant does not; so is a constant chunk of 0, which gives a prefill no token, and a cap below 0,
    constant or in either branch of the lone-request conditional (:func:`_negative_chunk`)."""
    if e is None:
        return 0
    if isinstance(e, n.Num):
        v = _const(e, "chunk", base)
        if v < 0:
            raise _negative_chunk(e, v, base)
        if math.isinf(v):
            return 0
        if v <= 0:
            raise TargetError(_span(e), "a chunk of 0 gives a prefill no token, which no vLLM setting does "
                              "(vLLM's long_prefill_token_threshold 0 is no cap, which a chunk says with inf)", base)
        if top:
            raise TargetError(_span(e), f"a constant chunk cap ({show_number(v)}) caps a request alone too, and vLLM's "
                              "long_prefill_token_threshold lifts for a lone request: write `chunk "
                              "long_prefill(reqs, C)` (lib/vllm.sq) for vLLM's rule", base)
        return _whole(v, "long_prefill_token_threshold", "the engine's chunk cap", _span(e), base)
    if isinstance(e, n.Cond):  # the lone-request exception: `… ? c : inf`, either way round
        truth = _truth(e.test)
        # a negative cap is refused, taken or not: `long_prefill(reqs, C)` of C -5 folds its test `C > 0` to 0, and
        # its branch inf gave the threshold 0 (no cap), where `serq vllm scenario` refuses a negative chunk
        for x in (e.then, e.orelse):
            if isinstance(x, n.Num) and _value(x) < 0:
                raise _negative_chunk(x, _value(x), base)
        # a branch the test never takes has no setting (`C > 0 && … ? C : inf` with C 0)
        live = [x for x, dead in ((e.then, truth is False), (e.orelse, truth is True)) if not dead]
        finite = [_chunk(x, base, False) for x in live if isinstance(x, n.Num)]
        if finite:
            return max(finite)
    raise TargetError(_span(e), "the engine's chunk is neither a constant nor `test ? c : inf`, so it has no "
                      "vLLM setting", base)


def _replicas(stage: n.Stage, sid: int) -> dict[str, Any]:
    """What the target of a step family ``stage engine[N]`` (N > 1) says of its members: how many, which, and that
    the configuration is each one's (the budget read for every member: :func:`_family_const`). The target said
    nothing of N: the configuration of ``engine[2]`` read as one engine's. A family whose cost reads
    ``member(engine)`` (engines of unlike speed: docs/step-costs.md, "A fleet of unlike engines") is said to be
    one: its members are no replicas of one deployment, though they take the same engine arguments."""
    size, name = stage.size, stage.name
    members = (", ".join(f"{name}[{i}]" for i in range(size)) if size <= 4
               else f"{name}[0], {name}[1], …, {name}[{size - 1}]")
    note = (f"the configuration is each member's, the same for all {size} (step family `{name}[{size}]`): "
            f"{size} vLLM instance{'s' if size != 1 else ''} of it, one a member")
    if _reads_member(getattr(stage.kind, "cost", None), sid):
        note += (f"; the step cost reads member({name}), so the members run at unlike speeds (unlike GPUs or "
                 "models), each with these engine arguments: deploy each kind as its own")
    replicas = {
        "count": size,
        "members": members,
        "note": note,
        "stage": name,
    }
    return replicas


def _reads_member(e: Any, sid: int) -> bool:
    """Whether the IR expression ``e`` reads ``member(E)`` of step family ``sid`` anywhere in it."""
    if isinstance(e, n.Observable) and e.name == "member" and isinstance(e.target, n.StageRef) \
            and e.target.stage == sid:
        return True
    if isinstance(e, (list, tuple)):
        return any(_reads_member(x, sid) for x in e)
    fields = getattr(e, "__struct_fields__", None)
    return bool(fields) and any(_reads_member(getattr(e, f), sid) for f in fields)


def _refuse_shared_memory(stage: n.Stage, kv: n.Pool, base: str | None) -> None:
    """Refuse a step family ``stage engine[N]`` (N > 1) whose members share one memory pool (``pool kv``, not
    ``pool kv[N]``), at the pool: each vLLM instance has a KV cache of its own, so no configuration of N instances
    runs the program, one cache the members draw on as each needs. Such a target was the configuration with the whole
    pool's num_gpu_blocks for each instance, N times the memory, and a warning; a share of it each (the pool's blocks
    over N) is another program, one whose members cannot use each other's room. The pool a family is admitted via
    is one a member already: the compiler refuses one pool there."""
    size = stage.size
    if stage.array and size > 1 and not (kv.array and kv.size == size):
        raise TargetError(kv.span, f"the {size} members of step family `{stage.name}` share memory pool `{kv.name}` "
                          f"(one pool, not `pool {kv.name}[{size}]`), while each vLLM instance has a KV cache of its "
                          f"own: no configuration of {size} instances runs them on one cache (the whole pool each "
                          f"is {size} times its memory, a share each is a cache one member cannot lend another); "
                          f"declare `pool {kv.name}[{size}]` for a cache a member", base)


def _negative_chunk(e: n.Num, v: float, base: str | None) -> TargetError:
    """The error of a chunk cap ``v`` below 0 (``e``), in the words of ``serq vllm scenario``'s refusal of a negative
    'chunk' (a ``--set`` that gave it is noted after it: serq.loading.sets_noted)."""
    return TargetError(_span(e), f"the engine's chunk cap is {show_number(v, exact=True)}, negative: vLLM's "
                       "long_prefill_token_threshold is a whole number, at least 0 (0: no long-prefill threshold, which "
                       "a chunk of 0 or inf says)", base)


def _walk(e: Any) -> Any:
    yield e
    if hasattr(e, "__struct_fields__"):
        for f in e.__struct_fields__:
            v = getattr(e, f)
            if isinstance(v, list):
                for x in v:
                    yield from _walk(x)
            elif hasattr(v, "__struct_fields__"):
                yield from _walk(v)


def _selected(e: n.Expr | None) -> n.Expr | None:
    """``e`` with conditionals on a constant test replaced by the branch they take."""
    while isinstance(e, n.Cond) and isinstance(e.test, n.Num):
        e = e.orelse if e.test.value == 0 else e.then
    return e


def _value(e: n.Num) -> float:
    return math.inf if e.value == "inf" else float(e.value)


def _folded(e: Any) -> Any:
    """``e`` with what its constants decide written as numbers (the constants are the program's after
    ``--set``): a conditional on a constant test is the branch it takes, a product with a constant 0 is 0
    (its other factor is a finite amount in a run that goes on: an infinite or NaN one makes the product
    NaN, and a NaN bound or amount is a run-time error), and ``min``, ``max``, ``floor``, ``ceil``, ``+``,
    ``-`` and ``*`` of numbers are their value. ``caching * floor(…) * bs`` with ``caching`` 0 is 0."""
    e = _selected(e)
    if isinstance(e, n.Cond):
        test = _folded(e.test)
        arm = taken_arm(n.Cond(test=test, then=e.then, orelse=e.orelse))  # (a NaN test takes the first)
        if arm is not None:
            return _folded(arm)
        return n.Cond(test=test, then=_folded(e.then), orelse=_folded(e.orelse))
    if isinstance(e, n.Binary) and e.op in ("+", "-", "*"):
        a, b = _folded(e.lhs), _folded(e.rhs)
        if e.op == "*" and any(isinstance(x, n.Num) and _value(x) == 0 for x in (a, b)):
            return n.Num(value=0)
        if isinstance(a, n.Num) and isinstance(b, n.Num):
            x, y = _value(a), _value(b)
            v = x + y if e.op == "+" else x - y if e.op == "-" else x * y
            if v == v:
                return n.Num(value="inf" if v == math.inf else v)
        return n.Binary(op=e.op, lhs=a, rhs=b)
    if isinstance(e, n.Call) and e.fn in ("min", "max", "floor", "ceil"):
        args = [_folded(x) for x in e.args]
        if all(isinstance(x, n.Num) for x in args):
            vs = [_value(x) for x in args]
            v = (min(vs) if e.fn == "min" else max(vs) if e.fn == "max" else
                 math.floor(vs[0]) if e.fn == "floor" and math.isfinite(vs[0]) else
                 math.ceil(vs[0]) if e.fn == "ceil" and math.isfinite(vs[0]) else vs[0])
            if v == v and v != -math.inf:
                return n.Num(value="inf" if v == math.inf else v)
        return n.Call(fn=e.fn, args=args)
    return e


def _most(e: Any) -> float:
    """An upper bound of the folded expression ``e``'s value (inf when none is known): what a reuse bound
    can come to."""
    if isinstance(e, n.Num):
        return _value(e)
    if isinstance(e, n.Call) and e.fn == "min":
        return min(_most(x) for x in e.args)
    if isinstance(e, n.Call) and e.fn == "max":
        return max(_most(x) for x in e.args)
    if isinstance(e, n.Call) and e.fn in ("floor", "ceil"):
        m = _most(e.args[0])
        return (math.floor(m) if e.fn == "floor" else math.ceil(m)) if math.isfinite(m) else m
    if isinstance(e, n.Binary) and e.op == "+":
        return _most(e.lhs) + _most(e.rhs)
    if isinstance(e, n.Cond):
        return max(_most(e.then), _most(e.orelse))
    return math.inf


def _uses_cache(program: n.Program, pool: int) -> bool:
    """Whether some hold on ``pool`` reads the prefix cache: a cache clause, and a reuse (or, without
    one, the units) that reads ``cachedin`` of the pool, by the value the constants give it (:func:`_folded`):
    a reuse bound that is never positive (``min(cachedin(kv), caching * …)`` with ``caching`` 0) consumes
    nothing (a negative bound is taken as 0), so reads nothing, and a ``cachedin`` in a part the constants
    rule out is not read."""
    for x in _walk_program(program):
        if isinstance(x, n.Hold) and x.cache is not None and any(hp.pool.pool == pool for hp in x.pools):
            if x.reuse is not None:
                reads = [_folded(x.reuse)]
                if _most(reads[0]) <= 0:
                    continue
            else:
                reads = [_folded(hp.units) for hp in x.pools if hp.pool.pool == pool]
            for e in reads:
                if any(isinstance(o, n.Observable) and o.name == "cachedin" for o in _walk(e)):
                    return True
    return False


def _walk_program(program: n.Program):
    for block in (program.session, program.workload.init, program.workload.turn):
        for s in block:
            yield from _walk(s)


def _refuse_unrunnable(program: n.Program, stage: n.Stage, kv: n.Pool, admitted: list[n.Pool],
                       base: str | None) -> None:
    """Refuse, at the construct, what vLLM's scheduler cannot do (the module's docstring)."""
    kind = stage.kind
    if isinstance(kind.serve, n.ServeExclusivePrefill):
        raise TargetError(stage.span, f"step stage `{stage.name}` serves exclusive prefill (one prefill alone or "
                          "a decode-only batch), which vLLM's scheduler cannot do: it mixes prefill chunks "
                          "and decodes in one step", base)
    for key in kind.serve.keys:
        for x in _walk(key):
            if isinstance(x, n.Ctx) and x.name == "remaining":
                raise TargetError(x.span or stage.span, f"step stage `{stage.name}` serves by `remaining`, "
                                  "the tokens a request has left, which vLLM's scheduler does not know (it "
                                  "knows max_tokens, not the output length)", base)
            if isinstance(x, n.Attr):
                name = program.attributes[x.slot].name
                raise TargetError(x.span or stage.span, f"step stage `{stage.name}` serves by `{name}`, an "
                                  "attribute of the program's sessions, which serq_vllm.SerqScheduler does not "
                                  "read: it sorts vLLM's running requests by their admission and whether they "
                                  "decode (`admission`, `decoding`)", base)
    for pool in (kv, *admitted):
        if pool.reserve_held:
            raise TargetError(pool.span, f"pool `{pool.name}` says `reserve held`: vLLM checks a request's "
                              "reservation at its admission only, later admissions do not count it", base)
    for pool in (kv, *admitted):
        key = _waited_key(pool.queue) if pool.admit_via is not None else None
        if key is not None:
            raise TargetError(_span(key) or pool.span, f"pool `{pool.name}` orders the requests waiting for "
                              f"`{stage.name}` by how long they have waited (a `queue by` key reading `waited`), "
                              "where vLLM's waiting queue is first come first served (a preempted request at its "
                              "head), whatever a request has waited; `-waited` or `slo - waited` (a number less "
                              "`waited`) alone orders as vLLM does", base)
    sent = _send_times(program)
    for pool in (kv, *admitted):
        key = _unsent_key(pool.queue, sent) if pool.admit_via is not None else None
        if key is None and pool.admit_via is not None:
            _refuse_late_send(program, pool, stage, base)
        if key is not None:
            raise TargetError(_span(key) or pool.span, f"pool `{pool.name}` orders the requests waiting for "
                              f"`{stage.name}` by a key that is not the order they were sent in (a shortest "
                              "prompt or a priority first), where vLLM's waiting queue is first come first "
                              "served (a preempted request at its head; its `priority` scheduling policy, "
                              "which orders by the priority each request is sent with, is not one a target "
                              "writes); an attribute set to `now` when the request is sent (`set t0 = now;`, "
                              "`queue by (t0)`) or `-waited` orders as vLLM does", base)
    lifo = n.PreemptBy(keys=[n.Unary(op="-", arg=n.Ctx(name="admission"))], requeue="head")
    preempt = kv.preempt
    if not (isinstance(preempt, n.PreemptBy) and preempt.requeue == "head" and len(preempt.keys) == 1
            and _same(preempt.keys[0], lifo.keys[0])):
        raise TargetError(kv.span, f"memory pool `{kv.name}` does not `preempt lifo`: vLLM preempts the last "
                          "admitted running request and re-queues it at the head", base)
    if not isinstance(kv.evict, n.EvictLru):
        raise TargetError(kv.span, f"memory pool `{kv.name}` does not `evict lru`: vLLM's free queue is LRU",
                          base)


def _joined_at(e: Any) -> bool:
    """Whether the folded key ``e`` is ``now - waited``: the instant the request joined the queue (``waited``
    counts from there, language.txt §3), which is vLLM's arrival order. It orders as ``-waited`` does: for the
    requests waiting at one admission both are functions of ``waited`` alone that never rise as it grows, and a
    tie keeps the order the requests joined in."""
    return (isinstance(e, n.Binary) and e.op == "-" and isinstance(e.lhs, n.Ctx) and e.lhs.name == "now"
            and isinstance(e.rhs, n.Ctx) and e.rhs.name == "waited")


def _waited_key(queue: Any) -> Any:
    """The first ``queue by`` key of a pool that reads ``waited`` other than as ``-waited`` or ``slo - waited``
    (after ``--set``: a conditional on a constant is the branch it takes; serq_sim.pools.model's
    ``falls_with_waited``), None when there is none. ``-waited``, the longest wait first, is vLLM's first come
    first served (requests that joined at one instant tie, and a tie keeps the
    order they joined in). A key of attributes is judged by :func:`_unsent_key`."""
    from serq_sim.pools.model import falls_with_waited

    if not isinstance(queue, n.QueueBy):
        return None
    for key in queue.keys:
        folded = _folded(key)
        if not (falls_with_waited(folded) or _joined_at(folded)) and any(
                isinstance(x, n.Ctx) and x.name == "waited" for x in _walk(folded)):
            return key
    return None


def _send_times(program: n.Program) -> set[int]:
    """The attribute slots that hold a send time: every write of them is ``set X = now`` (none by a
    ``choose``, a preset or the language)."""
    now: set[int] = set()
    other: set[int] = set()
    for x in _walk_program(program):
        if isinstance(x, n.Set):
            (now if isinstance(x.value, n.Ctx) and x.value.name == "now" else other).add(x.slot)
        elif isinstance(x, n.Choose):
            other.add(x.slot)
    for preset in program.workload.presets:
        other.update(v.slot for v in preset.attrs)
        other.update(v.slot for turn in preset.turns for v in turn)
    return now - other - builtin_slots(program)  # (by the names: the IR's builtin flag is read nowhere)


def _unsent_key(queue: Any, sent: set[int]) -> Any:
    """The first ``queue by`` key that orders (after ``--set``: :func:`_folded`; a number orders nothing)
    when it is neither a send time (an attribute of ``sent``) nor a key that falls with ``waited``
    (``-waited``, ``slo - waited``), None when there is none: a waiting order by anything else (``queue by
    (prompt)``, ``queue by (prio, t0)``) is not vLLM's first come first served. The keys after a send time
    order only the requests sent at one instant, which vLLM takes in the order they were submitted, as the
    scenario programs' ``(t0, idx)`` does."""
    from serq_sim.pools.model import falls_with_waited

    key = _first_order_key(queue)
    if key is None:
        return None
    folded = _folded(key)
    if falls_with_waited(folded) or _joined_at(folded) or (isinstance(folded, n.Attr) and folded.slot in sent):
        return None
    return key


def _first_order_key(queue: Any) -> Any:
    """The first ``queue by`` key that orders (after ``--set``: :func:`_folded`; a number orders nothing), as
    written, or None."""
    if not isinstance(queue, n.QueueBy):
        return None
    for key in queue.keys:
        folded = _folded(key)
        if not isinstance(folded, n.Num):
            return key
    return None


#: the statements that let no simulated time pass (a ``turn`` loads the workload's turn block)
_INSTANT = (n.Set, n.Observe, n.Record, n.Choose, n.Drop, n.Release, n.Turn)


def _refuse_late_send(program: n.Program, pool: n.Pool, stage: n.Stage, base: str | None) -> None:
    """Refuse a send time that is not the request's arrival at the engine. vLLM's first come first served
    orders its waiting queue by arrival, the instant ``add_request`` puts a request in it, which in serQ is the
    instant its hold joins the queue of its first pool. An attribute written only as ``set X = now``
    (:func:`_send_times`) is that instant only when, on every path to every hold that waits in ``pool``'s
    queue, the last ``set X = now`` comes with no statement that lets time pass after it (a stage, a hold, a
    grow or a load): ``set t0 = now;`` just before ``vllm_request``, as the examples write it. One set before a
    tool call, or none on some path (a value of an earlier turn), orders the requests by another instant; such
    a key is refused at its place, naming the hold and what came between."""
    key = _first_order_key(pool.queue)
    folded = _folded(key) if key is not None else None
    if not isinstance(folded, n.Attr):
        return
    slot = folded.slot
    index = program.pools.index(pool)
    name = program.attributes[slot].name
    dead = object()  # no path reaches here (after an `end`)
    found: list[tuple[Any, str]] = []
    #: each loop and the state its body was walked from: a walk from a state finds what it found before, and
    #: walking each pass of nested loops again took a number of walks exponential in their depth
    walked: set[tuple[int, Any]] = set()

    def place(x: Any) -> str:
        where, _ = _call_site(getattr(x, "span", None))
        return f" at {where}" if where else ""

    def merge(a: Any, b: Any) -> Any:
        return b if a is dead else a if b is dead else a if a is not None else b

    def walk(block: list, state: Any) -> Any:
        for st in block:
            if state is dead:
                return dead
            if isinstance(st, n.Set):
                if st.slot == slot:
                    state = None if isinstance(st.value, n.Ctx) and st.value.name == "now" else f"`set {name}`" \
                        + place(st)
            elif isinstance(st, n.Turn):
                state = walk(program.workload.turn, state)
            elif isinstance(st, n.End):
                return dead
            elif isinstance(st, n.Branch):
                state = merge(walk(st.then, state), walk(st.orelse, state))
            elif isinstance(st, n.Loop):
                entry = state
                for _ in range(2):  # (two values: the second pass sees what the body leaves at its end)
                    if (id(st), entry) in walked:
                        break  # (walked from this state before, finding the same: nested loops walk once each)
                    walked.add((id(st), entry))
                    entry = merge(entry, walk(st.body, entry))
                state = dead  # (a loop is left by `end` only)
            elif isinstance(st, n.Hold):
                if st.pools and st.pools[0].pool.pool == index and state is not None:
                    found.append((st, state))
                state = walk(st.body, f"the hold{place(st)}")
                if state is not dead:
                    state = f"the hold{place(st)}"
            elif not isinstance(st, _INSTANT):
                what = (f"a visit of stage `{program.stages[st.stages[0].stage].name}`"
                        if isinstance(st, n.Run) and st.stages else f"`{type(st).__name__.lower()}`")
                state = what + place(st)
        return state

    walk(program.session, walk(program.workload.init, f"`{name}` not set to `now` before it"))
    if not found:
        return
    hold, why = found[0]
    where, use = _call_site(hold.span)
    request = f"the request that joins its queue{' at ' + where if where else ''}" + (f" ({use})" if use else "")
    between = (f"with `{name}` not set to `now` before it on some path" if why.startswith(f"`{name}` not set")
               else f"after {why}, which comes later than `set {name} = now` on some path")
    raise TargetError(_span(key) or pool.span, f"pool `{pool.name}` orders the requests waiting for `{stage.name}` by "
                      f"`{name}`, which is not the instant a request arrives there: {request} does so {between}; "
                      "vLLM's first come first served orders by arrival, the instant a request joins the waiting "
                      f"queue: set `{name}` to `now` with nothing that takes time between it and the request's "
                      "hold, or order by `now - waited` or `-waited`", base)


def _same(a: n.Expr, b: n.Expr) -> bool:
    """Two expressions equal up to their spans."""
    import msgspec

    def bare(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: bare(v) for k, v in x.items() if k != "span"}
        if isinstance(x, list):
            return [bare(v) for v in x]
        return x

    return bare(msgspec.to_builtins(a)) == bare(msgspec.to_builtins(b))


def _first_chunk_cut(units: n.Expr) -> float:
    """The long-prefill threshold at which the units of a hold on the memory pool cut the first chunk at
    admission, in the engine's chunk's own terms (:func:`_chunk`, 0 for none): the least finite, positive
    value of a ``test ? c : inf`` in the units, as the constants (after ``--set``) fold them
    (:func:`_folded`). lib/vllm.sq's ``vllm_request_at(…, threshold)`` writes ``long_prefill(reqs,
    threshold)`` there, ``holders(reqs) + queued(reqs) > 1 ? threshold : inf``; ``vllm_request`` passes inf,
    no cut."""
    cuts = []
    for x in _walk(_folded(units)):
        if isinstance(x, n.Cond) and isinstance(x.then, n.Num) and isinstance(x.orelse, n.Num):
            low, high = sorted((_value(x.then), _value(x.orelse)))
            if high == math.inf and 0 < low < math.inf:
                cuts.append(low)
    return min(cuts, default=0)


def _call_site(span: Any) -> tuple[str | None, str | None]:
    """Where a node stands in the program's own text, ``FILE:LINE:COL``, and the definition whose use put it
    there (None for a node written there): the outermost use that expanded it (``vllm_request(…)`` in the
    program, not lib/vllm.sq's hold), else its own span; (None, None) without a span."""
    from serq.errors import printable

    if span is None:
        return None, None
    via = getattr(span, "via", ())
    at = via[-1] if via else span
    return f"{printable(at.file)}:{at.line}:{at.col}", (via[-1].name if via else None)


def _unbounded_seqs(seqs_pool: n.Pool | None, stage: n.Stage, kv: n.Pool, usable: int, budget: int,
                    base: str | None) -> tuple[int, str]:
    """``max_num_seqs`` and its warning for an engine whose requests no pool caps (no pool but the memory pool
    admits them, or its cap is inf): vLLM has no unbounded ``max_num_seqs`` (``null`` is its default, 256 or
    what its usage context sets, which capped the requests the program does not), so it is the KV cache's
    ``usable`` blocks, which never binds (a running request holds a block of its own at least: its last
    prompt token is never a prefix hit). vLLM refuses ``max_num_seqs`` above ``max_num_batched_tokens``: when
    the blocks are more than ``budget``, the largest value it takes can bind where the program has no cap,
    and the program is refused (a :class:`TargetError` at the pool, else the stage)."""
    what = f"the cap of pool `{seqs_pool.name}` is inf" if seqs_pool is not None else \
        f"no pool but the memory pool `{kv.name}` caps the requests stage `{stage.name}` admits"
    if usable > budget:
        raise TargetError(seqs_pool.span if seqs_pool is not None else stage.span,
                          f"{what}: vLLM's max_num_seqs has no unbounded value, and its largest, the budget "
                          f"{budget} (vLLM refuses max_num_seqs > max_num_batched_tokens), can cap the running "
                          f"requests where the program does not (the KV cache's {usable} blocks hold up to {usable}); "
                          "give the requests a cap, `pool reqs { cap max_seqs; }`", base)
    return usable, (f"{what}: max_num_seqs is the KV cache's {usable} blocks, which never caps the running requests "
                    "(each holds a block of its own at least); vLLM has no unbounded max_num_seqs, and its default "
                    "(null) caps them at 256")


def _warnings(program: n.Program, sid: int, stage: n.Stage, kv: n.Pool, threshold: int) -> list[str]:
    """The module docstring's warnings: each hold a request's admission by step stage ``sid`` makes on the
    memory pool whose first chunk is cut at another threshold than the engine's chunk, ``threshold``
    (:func:`_chunk`: 0 for none), once per place in the program's text."""
    out: dict[str, str] = {}
    t = show_number(threshold)
    for x in _walk_program(program):
        if not (isinstance(x, n.Hold) and x.pools and program.pools[x.pools[0].pool.pool].admit_via == sid):
            continue
        for hp in x.pools:
            cut = _first_chunk_cut(hp.units) if hp.pool.pool == stage.kind.memory else threshold
            if cut == threshold:
                continue
            where, use = _call_site(x.span)
            engine = (f"cuts a prefill at {t} tokens (chunk long_prefill(reqs, {t}): long_prefill_token_threshold "
                      f"{t})" if threshold else "has no long-prefill threshold (long_prefill_token_threshold 0)")
            hold = (f"cuts its first chunk at {show_number(cut)} tokens" if cut else "takes its first chunk uncut"
                    + (" (lib/vllm.sq's vllm_request passes the threshold inf)" if use == "vllm_request" else ""))
            fix = (f"call vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, {t})" if threshold
                   else "pass the threshold inf (vllm_request)")
            out.setdefault(where or str(len(out)), (
                f"the engine `{stage.name}` {engine}, and the request admitted {'at ' + where if where else 'by it'} "
                f"on memory pool `{kv.name}` {hold}: vLLM cuts a waiting request's first chunk at the engine's "
                f"threshold (scheduler.py:1115-1128), so the blocks this program takes at admission are not "
                f"vLLM's; {fix}"))
    return list(out.values())


def _offload_warning(program: n.Program, kv: n.Pool) -> str | None:
    """The module docstring's warning of a memory pool that spills (an offload tier), None when it never
    does (no ``spill`` clause, or a predicate the constants make 0, :func:`_folded`)."""
    spill = kv.spill
    if spill is None:
        return None
    when = _folded(spill.when)
    if isinstance(when, n.Num) and _value(when) == 0:
        return None
    tier = program.pools[spill.tier.pool].name
    where, _ = _call_site(spill.tier.span or kv.span)
    return (f"memory pool `{kv.name}` spills the blocks it evicts to pool `{tier}`"
            + (f" (at {where})" if where else "") + f", and this configuration has no KV offloading: the vLLM "
            f"engine it describes drops an evicted block where the program keeps it in `{tier}`. vLLM offloads "
            "KV to another tier only through a KV connector (kv_transfer_config), which a target does not write")


def _admission_pools(program: n.Program, sid: int, memory: int) -> list[n.Pool]:
    """The pools besides the memory pool that a request needs room in to be admitted by step stage
    ``sid``: every pool that says ``admit via`` the stage, and every other pool of a hold that waits in
    such a pool's queue (a hold waits in its first pool's, language.txt §3, and is admitted when all of
    its pools have room). Their least cap is ``max_num_seqs``. The memory pool is the KV cache, whose cap
    is ``num_gpu_blocks``, also when the hold names it first and so waits in its queue (`hold kv (…),
    reqs (1)` with `admit via` on kv)."""
    found = {i for i, p in enumerate(program.pools) if p.admit_via == sid}
    for x in _walk_program(program):
        if isinstance(x, n.Hold) and x.pools and program.pools[x.pools[0].pool.pool].admit_via == sid:
            found.update(hp.pool.pool for hp in x.pools)
    return [program.pools[i] for i in sorted(found) if i != memory]


def target(program: n.Program, base: str | None = None) -> dict[str, Any]:
    """The vLLM configuration ``program`` implies; ``base`` is the program's file, for messages.
    Raises UserError (a TargetError at the construct) for a program vLLM cannot run."""
    steps = [(i, s) for i, s in enumerate(program.stages) if isinstance(s.kind, n.Step)]
    if len(steps) != 1:
        # with several, at the second: the one a single engine does not have (P/D's decode instances)
        names = ", ".join(f"`{s.name}`" for _, s in steps)
        raise TargetError(steps[1][1].span if steps else None,
                          f"a vLLM target needs exactly one step stage; the program has {len(steps)}"
                          + (f" ({names})" if steps else "")
                          # several: what to write instead (a P/D pair, unlike engines behind a router)
                          + (": a target describes one vLLM instance, so describe each engine with a program of "
                             "its own (replicas of one configuration are one family, `stage engine[N]`)"
                             if len(steps) > 1 else ""), base)
    sid, stage = steps[0]
    kind = stage.kind
    if kind.memory is None:
        raise TargetError(stage.span, f"step stage {stage.name!r} names no memory pool, so it has no KV cache",
                          base)
    kv = program.pools[kind.memory]
    if kv.block is None:
        raise TargetError(kv.span, f"memory pool {kv.name!r} has no block size", base)
    if not any(p.admit_via == sid for p in program.pools):
        # vLLM admits its waiting requests in its step, with the budget the running ones left; a queue no
        # stage serves admits at once, between iterations (budget_left reads the whole budget there)
        raise TargetError(stage.span, f"no pool says `admit via {stage.name}`: its requests are admitted "
                          "between its iterations, not by its scheduler, where vLLM admits a waiting request in "
                          f"its step with the budget the running ones left; add `admit via {stage.name};` to "
                          "the pool a request's hold waits in (its first pool)", base)
    _refuse_shared_memory(stage, kv, base)
    admitted = _admission_pools(program, sid, kind.memory)
    _refuse_unrunnable(program, stage, kv, admitted, base)
    seqs_pool = min(admitted, key=lambda p: _pool_cap(p, "cap", base), default=None)
    seqs = math.inf if seqs_pool is None else _pool_cap(seqs_pool, "cap", base)
    cap = _pool_cap(kv, "memory cap", base)
    if math.isinf(cap):  # (no cap, or one past the largest double: `cap blocks * bs` of a block of 1e308)
        raise TargetError(kv.span, f"memory pool `{kv.name}`'s cap is inf: vLLM's num_gpu_blocks is a whole "
                          "number of blocks, and a KV cache without bound has none", base)
    serve = kind.serve
    serve_by = [serde_expr(k, base) for k in serve.keys]
    fcfs = serve_by == []  # vLLM's own order: its own scheduler
    if fcfs:
        serve_by = [{"Ctx": "Admission"}]
    block = _whole(kv.block, "block_size", f"the block of memory pool `{kv.name}`", kv.span, base)
    if stage in budget_not_given(program):
        # no `budget` in the stage: the frontend reads it as an infinite budget (docs/language.md, a step stage
        # without `budget`), which vLLM has no value for
        raise TargetError(stage.span, f"stage `{stage.name}` gives no `budget`, so its budget is infinite (a step "
                          "stage without `budget` has an infinite one): vLLM's max_num_batched_tokens has no "
                          "unbounded value; give the engine the tokens of an iteration, `budget B;`", base)
    budget = _whole(_family_const(kind.budget, "budget", stage, sid, base), "max_num_batched_tokens",
                    "the engine's budget", _span(kind.budget) or stage.span, base)
    max_seqs = None if seqs_pool is None or math.isinf(seqs) else _whole(
        seqs, "max_num_seqs", f"the cap of pool `{seqs_pool.name}`", seqs_pool.span, base)
    if max_seqs is not None and seqs_pool is not None and max_seqs > budget:
        # vLLM's SchedulerConfig refuses it at start-up (and `serq vllm scenario` refuses such a scenario)
        raise TargetError(seqs_pool.span, f"the cap of pool `{seqs_pool.name}` is {max_seqs}, above the engine's "
                          f"budget {budget}: vLLM refuses max_num_seqs > max_num_batched_tokens", base)
    blocks = cap // kv.block + 1
    if blocks < 2:
        # vLLM's KV cache would be its null block alone: it does not start a cache that cannot hold one request
        # (kv_cache_utils.py:864-900), and serQ's pool would reject every request
        raise TargetError(kv.span, f"memory pool `{kv.name}` holds no whole block (its cap {show_number(cap)} / its "
                          f"block {show_number(kv.block)}): vLLM's num_gpu_blocks would be its null block alone, and "
                          "vLLM does not start a KV cache that cannot hold one request", base)
    if blocks >= _EXACT:
        raise TargetError(kv.span, f"memory pool `{kv.name}` is {show_number(blocks)} blocks (its cap {show_number(cap)} / its block "
                          f"{show_number(kv.block)}, and vLLM's null block), not below 2**53, where serQ's numbers "
                          "(doubles) do not tell one whole number from the next: no whole number for vLLM's "
                          "num_gpu_blocks", base)
    seqs_note = None
    if max_seqs is None:
        max_seqs, seqs_note = _unbounded_seqs(seqs_pool, stage, kv, int(blocks) - 1, budget, base)
    threshold = _chunk(kind.chunk, base)
    config = {
        "block_size": block,
        "enable_prefix_caching": _uses_cache(program, kind.memory),
        "long_prefill_token_threshold": threshold,
        "max_num_batched_tokens": budget,
        "max_num_seqs": max_seqs,
        "num_gpu_blocks": int(blocks),
    }
    if not fcfs:
        config["scheduler_cls"] = "serq_vllm.SerqScheduler"
    out = {"config": config, "engine": "vllm", "serve_by": serve_by, "target": "vllm"}
    warnings = _warnings(program, sid, stage, kv, threshold)
    offload = _offload_warning(program, kv)
    if offload:
        warnings.append(offload)
    if seqs_note is not None:
        warnings.append(seqs_note)
    if stage.array and stage.size > 1:  # (a key only then: the target of one engine, or of a family of 1, as it was)
        out["replicas"] = _replicas(stage, sid)
    if warnings:  # (a key only then: the target of a program without one is as it was)
        out["warnings"] = warnings
    return out
