"""Constant folding: the value of an expression over numbers, lets and pure functions."""

from __future__ import annotations

import math
from typing import Any

from serq_ir.rules import greatest, least, show_number

from . import ast as A
from .names import FUNCTIONS, arity_problem

INF = math.inf

#: the most terms an aggregate ``max j in n (e)`` is written out to
MAX_TERMS = 10_000

#: the most nodes (expressions and statements) writing out a program's definitions and aggregates may make
#: in all: each use of a definition copies its body, each aggregate its body per term, so a few lines can
#: ask for 2**40 of them (``def f1(a) = f0(a) + f0(a);`` … ``f40``) or for 10 000 copies of a large term
MAX_WRITTEN = 200_000

#: the name of a written-out ``sum j in n (e)`` in the kernel AST (``Call(SUM, terms)``, a left fold of
#: ``+``; no source can name it): the IR's ``Call(fn="sum")``
SUM = "+"


class NotConstant(Exception):
    """The expression reads something other than numbers and constants."""

    def __init__(self, node: Any):
        self.node = node


class BadConstant(Exception):
    """A constant that cannot be: an aggregate's count that is not a whole number of terms."""

    def __init__(self, node: Any, message: str):
        self.node = node
        self.message = message


def agg_count(a: Any, n: float) -> int:
    """The number of terms of aggregate ``a`` whose count folded to ``n``; :class:`BadConstant` when it is
    not a whole number from 1 to :data:`MAX_TERMS`."""
    what = f"the count of `{a.op} {a.var} in …`"
    if not math.isfinite(n) or n != int(n) or n < 1:
        raise BadConstant(a.n, f"{what} must be an integer of at least 1, not {show_number(n, exact=True)}")
    if n > MAX_TERMS:  # (the count as messages show a number: 1e300 was its 301 digits)
        raise BadConstant(a.n, f"`{a.op} {a.var} in {show_number(n)}`: more than {MAX_TERMS} terms")
    return int(n)


def _aggregates_in(e: Any) -> list[Any]:
    """The aggregates in ``e`` that are inside no other aggregate of ``e`` (those a writer of ``e`` meets)."""
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if type(x) is A.Agg:
            out.append(x)
        else:
            stack.extend(A.expr_children(x))
    return out


def agg_terms(a: Any, lets: dict[str, float], block: Any = None) -> int:
    """The terms aggregate ``a`` writes out with the aggregates in its body (each of its ``n`` terms holds the
    terms of those, at least 1), as sugar/aggregates.py counts them; :class:`BadConstant` when past
    :data:`MAX_TERMS`, or when an inner aggregate's count is not a constant. Found from the counts alone,
    before any term is folded: a ``let`` of ``sum j in 10000 (sum k in 10000 (1))`` was folded term by term
    (10**8 terms, 13 s) before the writer refused it, and three such levels never ended."""
    n = agg_count(a, fold(a.n, lets, block))
    inner = 0
    for b in _aggregates_in(a.body):
        try:
            inner += agg_terms(b, lets, block)
        except NotConstant as x:
            if x.node is not b.n and not any(x.node is y for y in A.walk_expr(b.n)):
                raise
            from .context import describe

            raise BadConstant(x.node, f"the count of `{b.op} {b.var} in …` must be a constant (numbers and "
                              f"`let`s): it reads {describe(x.node)}") from None
    inner = max(1, inner)
    if n * inner > MAX_TERMS:
        raise BadConstant(a, f"`{a.op} {a.var} in …` writes out {n} × {inner} terms with the aggregates inside it; "
                          f"an aggregate writes out at most {MAX_TERMS} terms")
    return n * inner


def truth(x: float) -> bool:
    """Whether ``x`` is true: a non-zero operand is (language.txt §2), NaN among them, as the simulator
    tests it (``x != 0.0``)."""
    return x != 0


def unary_value(op: str, a: float) -> float:
    return -a if op == "-" else float(not truth(a))


def fn_value(name: str, args: list[float]) -> float:
    try:
        if name == "min":  # NaN passed over, as the simulator computes it (serq_ir.rules.least)
            return least(*args)
        if name == "max":
            return greatest(*args)
        if name == "abs":
            return abs(args[0])
        if name == "floor":
            return float(math.floor(args[0])) if math.isfinite(args[0]) else args[0]
        if name == "ceil":
            return float(math.ceil(args[0])) if math.isfinite(args[0]) else args[0]
        if name == "sqrt":
            return math.sqrt(args[0]) if args[0] >= 0 else math.nan
        if name == "exp":
            try:
                return math.exp(args[0])
            except OverflowError:
                return INF
        if name == "ln":
            x = args[0]
            if x < 0 or math.isnan(x):
                return math.nan
            return -INF if x == 0 else math.log(x)
        if name == "pow":
            return _pow(args[0], args[1])
    except (ValueError, IndexError):
        return math.nan
    raise KeyError(name)


def _pow(x: float, y: float) -> float:
    """``pow(x, y)`` as the simulator computes it (serq_sim.compile._pow; IEEE 754's pow): beyond the
    floats' range, or 0 to a negative power, an infinity, negative for a negative base (-0 too) to an odd
    whole power; a negative base to a power that is not whole is NaN."""
    try:
        r = x ** y
    except ZeroDivisionError:
        return -INF if math.copysign(1.0, x) < 0 and y % 2 == 1 else INF
    except OverflowError:
        if x < 0:
            return math.nan if y != int(y) else (-INF if y % 2 == 1 else INF)
        return INF
    return math.nan if isinstance(r, complex) else float(r)


def binary_value(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        if (a == 0 and math.isinf(b)) or (b == 0 and math.isinf(a)):
            return math.nan
        return a * b
    if op == "/":
        if b == 0:
            if a == 0 or math.isnan(a):
                return math.nan
            return math.copysign(INF, a) * (math.copysign(1.0, b))
        return a / b
    if op == "%":
        if b == 0 or math.isinf(a):
            return math.nan
        return math.fmod(a, b)
    if op == "<":
        return float(a < b)
    if op == "<=":
        return float(a <= b)
    if op == ">":
        return float(a > b)
    if op == ">=":
        return float(a >= b)
    if op == "==":
        return float(a == b)
    if op == "!=":
        return float(a != b)
    if op == "&&":
        return float(truth(a) and truth(b))
    if op == "||":
        return float(truth(a) or truth(b))
    raise KeyError(op)


def fold(e: Any, lets: dict[str, float], block: Any = None) -> float:
    """The value of ``e``; raises :class:`NotConstant` at the first node that is not constant (and
    :class:`BadConstant` at an aggregate whose count is not a whole number of terms).

    ``block`` gives ``blocksize(P)``, the block of pool ``P``, a constant folded at link time (language.txt
    §2): called with the call node (``Context.block_of``); without it such a call is not constant."""
    t = type(e)
    if t is A.Num:
        return e.value
    if t is A.Var:
        name = e.simple
        if name is not None:
            if name in lets:
                return lets[name]
            if name == "inf":
                return INF
        raise NotConstant(e)
    if t is A.Unary:
        return unary_value(e.op, fold(e.arg, lets, block))
    if t is A.Binary:
        return binary_value(e.op, fold(e.lhs, lets, block), fold(e.rhs, lets, block))
    if t is A.Cond:
        c = fold(e.test, lets, block)
        return fold(e.then, lets, block) if truth(c) else fold(e.orelse, lets, block)
    if t is A.Call and e.name == SUM:
        out = fold(e.args[0], lets, block)
        for x in e.args[1:]:
            out = binary_value("+", out, fold(x, lets, block))
        return out
    if t is A.Agg:
        # a constant where its terms are: the terms written out (sugar/aggregates.py) fold the same way, and
        # are as many (agg_terms: refused from the counts, before the terms are folded)
        agg_terms(e, lets, block)
        n = agg_count(e, fold(e.n, lets, block))
        env = dict(lets)
        vals = []
        for k in range(n):
            env[e.var] = float(k)
            vals.append(fold(e.body, env, block))
        if e.op == "sum":
            out = vals[0]
            for v in vals[1:]:
                out = binary_value("+", out, v)
            return out
        return vals[0] if n == 1 else fn_value(e.op, vals)
    if t is A.Call and e.name in FUNCTIONS:
        problem = arity_problem(e.name, len(e.args))
        if problem is not None:  # (told as the linker tells it: `abs(1, 2)` was "not a constant")
            raise BadConstant(e, problem)
        return fn_value(e.name, [fold(a, lets, block) for a in e.args])
    if t is A.Call and e.name == "blocksize" and block is not None:
        return block(e, lets)
    raise NotConstant(e)
