"""Whether an idle step stage with residents will never start an iteration, whatever arrives.

At the end of a run that still has events (an open workload's next arrival), a step stage whose header
gives it no budget with its residents there, as ``budget residents > 0 ? 0 : 64``, never serves them: a
run that drains says so (no event is left), and :meth:`serq_sim.engine.Simulation.waiting_forever` asks
this module for the other runs. While the stage is idle and no preemption can take its residents' holds,
what its budget reads only grows: ``residents`` and ``decoders`` (newcomers join, and no job leaves a stage
that runs no iteration), ``kv_decode`` and ``kv_prefill`` (the residents' units on the memory pool: no
resident grows or releases while it waits) and ``now``. So the budget is bounded by evaluating its
expression over intervals, each of those from its value now up to inf: when the interval's top is at most
0, no state the run can reach gives the stage a token (a budget of 0 schedules nothing; a negative one is
a run-time error), and the residents wait for ever. A stage on which no run decodes (every job a prefill)
whose ``chunk`` is so bounded at most 0 gives no job a token either. sqrt, exp, ln and pow are bounded
where they are monotone (:func:`_monotone`), ``%`` by its divisor (fmod: the dividend's sign, below the
divisor in magnitude; at an infinite dividend it is NaN, which as a budget is a run-time error, no token
either). Anything the bound does not know (a draw, sqrt or ln of what may be negative, pow of a base that
may be 0 or below, ``%`` by what may be 0, a NaN) makes it no bound, and the stage is not judged. The bound
is sound under the doubles: each operation is monotone in each argument, rounding included (the platform's
exp, ln and pow, which may be an ulp off, widened by two), or bounded whatever its arguments (``%``).
"""

from __future__ import annotations

import math

from serq_ir import nodes as N

INF = math.inf

#: the context variables of the budget moment that only grow while a stage runs no iteration
_GROWING = ("residents", "decoders", "kv_decode", "kv_prefill", "now")


def stalled(sim) -> dict:
    """The step stages of ``sim`` that, idle with residents, have a budget at most 0 in every state the run
    can reach from here (the module's words), so they never start an iteration and never complete a
    resident, each with why: ``"budget"``; or ``"chunk"``, a stage on which no run decodes (so every job on it
    is a prefill) whose chunk is at most 0 in every such state (bounded as the budget is), so that no job is
    ever given a token.

    A resident whose hold a preemption could take leaves its stage, and the count the budget reads falls:
    a stage is judged only when no such hold can be taken. A preemption needs a growth on a pool that
    preempts: a ``grow`` or ``load`` statement naming it, or an iteration of a step stage (which grows its
    growing runs). So the stages are judged together, the greatest set whose residents hold no preempting
    pool that a statement names, or that is there while some step stage outside the set may iterate."""
    from ..build import _all_blocks
    from ..engine import _never_preempts
    from .stage import StepStage

    # (``step_stages`` are every stage that starts work once an instant has settled, a third party's kind that
    # wants_start among them: only a step stage has a budget to bound; the others may iterate, as below)
    program = sim.program
    decoding = None  # the names of the stages some run decodes on (read once, when a chunk is judged)
    judged, chunked = set(), set()
    for st in sim.step_stages:
        if isinstance(st, StepStage) and st.iter is None and st.residents:
            if _stays_0(st, st.node.kind.budget):
                judged.add(st)
            elif st.node.kind.chunk is not None:
                if decoding is None:
                    decoding = {program.stages[r.stage].name for blk in _all_blocks(program) for x in blk
                                if isinstance(x, N.Run) and x.mode == "decode" for r in x.stages}
                if st.node.name not in decoding and _stays_0(st, st.node.kind.chunk):
                    judged.add(st)
                    chunked.add(st)
    if not judged:
        return {}
    named = {program.pools[x.pool.pool].name for blk in _all_blocks(program) for x in blk
             if isinstance(x, (N.Grow, N.Load))}
    changed = True
    while changed and judged:
        changed = False
        others = len(judged) < len(sim.step_stages)  # a step stage outside the set may iterate and grow
        for st in list(judged):
            for j in st.residents:
                s = j.owner
                if s is None or any(not _never_preempts(sl.pool) and (others or sl.pool.name in named)
                                    for h in s.holds for sl in h.slots):
                    judged.discard(st)
                    changed = True
                    break
    return {st: "chunk" if st in chunked else "budget" for st in sim.step_stages if st in judged}


def _stays_0(st, e) -> bool:
    """Whether ``e``, the stage's budget or chunk, is at most 0 in every state the run can reach from here: a
    budget of 0 starts no iteration; a chunk of 0 gives a prefill no token, and a stage on which no run decodes
    (the caller's test: every job on it is a prefill, every resident and every newcomer) never starts an
    iteration either."""
    box = _bound(e, _pre_values(st))
    return box is not None and box[1] <= 0.0


def _pre_values(st) -> dict[str, float]:
    """The budget moment's context variables now (as the planner's ``_pre`` takes them, kv_* always)."""
    res = st.residents
    dec = kvd = kvp = 0.0
    held = st._held if st.memory is not None else None
    for j in res:
        m = held(j) if held is not None else 0.0
        if j.mode == "decode":
            dec += 1.0
            kvd += m
        else:
            kvp += m
    return {"residents": float(len(res)), "decoders": dec, "kv_decode": kvd, "kv_prefill": kvp,
            "now": st.sim.now}


def _ok(lo: float, hi: float) -> tuple[float, float] | None:
    return None if lo != lo or hi != hi else (lo, hi)


def _truth(b: tuple[float, float]) -> tuple[float, float]:
    """The interval of a value's truth (non-zero is true): [1, 1], [0, 0] or [0, 1]."""
    lo, hi = b
    if lo > 0.0 or hi < 0.0:
        return (1.0, 1.0)
    if lo == hi == 0.0:
        return (0.0, 0.0)
    return (0.0, 1.0)


def _bound(e, ctx: dict[str, float]) -> tuple[float, float] | None:
    """``(lo, hi)`` bounding ``e`` over every reachable state, or None when it cannot be bounded."""
    if isinstance(e, N.Num):
        v = float(e.value)
        return _ok(v, v)
    if isinstance(e, N.Ctx):
        if e.name in _GROWING:
            return _ok(ctx[e.name], INF)
        return None
    if isinstance(e, N.Unary):
        a = _bound(e.arg, ctx)
        if a is None:
            return None
        if e.op == "-":
            return _ok(-a[1], -a[0])
        t = _truth(a)
        return (1.0 - t[1], 1.0 - t[0])
    if isinstance(e, N.Cond):
        t = _bound(e.test, ctx)
        if t is None:
            return None
        t = _truth(t)
        if t == (1.0, 1.0):
            return _bound(e.then, ctx)
        if t == (0.0, 0.0):
            return _bound(e.orelse, ctx)
        a, b = _bound(e.then, ctx), _bound(e.orelse, ctx)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if isinstance(e, N.Binary):
        a, b = _bound(e.lhs, ctx), _bound(e.rhs, ctx)
        if a is None or b is None:
            return None
        return _binary(e.op, a, b)
    if isinstance(e, N.Call) and e.fn in _MONOTONE:
        args = [_bound(x, ctx) for x in e.args]
        if len(args) != _MONOTONE[e.fn] or any(x is None for x in args):
            return None
        return _monotone(e.fn, args)
    if isinstance(e, N.Call) and e.fn in ("min", "max", "abs", "floor", "ceil"):
        args = [_bound(x, ctx) for x in e.args]
        if not args or any(x is None for x in args):
            return None
        if e.fn == "min":
            return (min(x[0] for x in args), min(x[1] for x in args))
        if e.fn == "max":
            return (max(x[0] for x in args), max(x[1] for x in args))
        if len(args) != 1:
            return None
        lo, hi = args[0]
        if e.fn in ("floor", "ceil"):
            f = math.floor if e.fn == "floor" else math.ceil
            return _ok(_whole(f, lo), _whole(f, hi))
        if lo >= 0.0:
            return (lo, hi)
        if hi <= 0.0:
            return (-hi, -lo)
        return (0.0, max(-lo, hi))
    return None


def _whole(f, x: float) -> float:
    """``floor`` or ``ceil`` (``f``) of a bound, a float as the language's is: Python's int of 1e308 made the
    bounds ints, and an int beyond the doubles (1e308 * 1e308) stopped the next operation with an
    OverflowError, not the float's inf. A double is exactly a float's floor or ceil; inf and NaN stay."""
    return float(f(x)) if math.isfinite(x) else x


#: the functions bounded from their arguments' bounds where they are monotone, and how many arguments each takes
_MONOTONE = {"sqrt": 1, "exp": 1, "ln": 1, "pow": 2}


def _out(lo: float, hi: float, ulps: int = 2) -> tuple[float, float] | None:
    """``(lo, hi)`` widened by ``ulps`` units in the last place each way: exp, ln and pow are the platform's,
    within an ulp of the exact value but not always correctly rounded, so a computed value at an end of an
    interval may lie an ulp beyond the value computed inside it; widened, the bound holds of both."""
    if lo != lo or hi != hi:
        return None
    for _ in range(ulps):
        lo, hi = math.nextafter(lo, -INF), math.nextafter(hi, INF)
    return (lo, hi)


def _monotone(fn: str, args: list[tuple[float, float]]) -> tuple[float, float] | None:
    """The bound of ``fn`` (the language's sqrt, exp, ln, pow: serq_sim.compile's) over its arguments' boxes
    where it is monotone: sqrt over x >= 0 (correctly rounded, so exactly monotone), exp everywhere, ln over x
    >= 0 (ln 0 is -inf), pow over a base x > 0, where pow(x, y) = exp(y ln x) and y ln x, bilinear in y and ln
    x, takes its extremes over a box at the box's corners (the infinite ones as IEEE 754 has them: pow(inf, 0)
    is 1). Elsewhere (a negative base or argument, where the value may be NaN or change sign) no bound."""
    from ..compile import _exp, _ln, _pow, _sqrt

    lo, hi = args[0]
    if fn == "sqrt":
        return (_sqrt(lo), _sqrt(hi)) if lo >= 0.0 else None
    if fn == "exp":
        return _out(_exp(lo), _exp(hi))
    if fn == "ln":
        return _out(_ln(lo), _ln(hi)) if lo >= 0.0 else None
    (yl, yh) = args[1]
    if not lo > 0.0:
        return None
    corners = [_pow(x, y) for x in (lo, hi) for y in (yl, yh)]
    return _out(min(corners), max(corners))


def _binary(op: str, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float] | None:
    (al, ah), (bl, bh) = a, b
    if op == "%":
        # fmod (exact): the sign of the dividend, below the divisor in magnitude, and no larger than the
        # dividend in magnitude. A divisor that may be 0 gives NaN: no bound
        if bl <= 0.0 <= bh or bl != bl or bh != bh:
            return None
        m = max(abs(bl), abs(bh))
        return (0.0 if al >= 0.0 else max(al, -m), 0.0 if ah <= 0.0 else min(ah, m))
    if op == "+":
        return _ok(al + bl, ah + bh)
    if op == "-":
        return _ok(al - bh, ah - bl)
    if op == "*":
        ps = (al * bl, al * bh, ah * bl, ah * bh)
        return None if any(p != p for p in ps) else (min(ps), max(ps))
    if op == "/":
        if bl <= 0.0 <= bh:
            return None
        ps = (al / bl, al / bh, ah / bl, ah / bh)
        return None if any(p != p for p in ps) else (min(ps), max(ps))
    if op in ("<", "<=", ">", ">="):
        if op in (">", ">="):
            (al, ah), (bl, bh), op = (bl, bh), (al, ah), "<" if op == ">" else "<="
        if (ah < bl) if op == "<" else (ah <= bl):
            return (1.0, 1.0)
        if (al >= bh) if op == "<" else (al > bh):
            return (0.0, 0.0)
        return (0.0, 1.0)
    if op in ("==", "!="):
        if al == ah == bl == bh:
            same = (1.0, 1.0)
        elif ah < bl or bh < al:
            same = (0.0, 0.0)
        else:
            same = (0.0, 1.0)
        return same if op == "==" else (1.0 - same[1], 1.0 - same[0])
    if op in ("&&", "||"):
        ta, tb = _truth(a), _truth(b)
        if op == "&&":
            return (min(ta[0], tb[0]), min(ta[1], tb[1]))
        return (max(ta[0], tb[0]), max(ta[1], tb[1]))
    return None
