"""A long ``sum``, ``min`` or ``max`` whose terms are one expression but for their numbers, as a loop.

The linker writes an aggregate out (``max j in n (e)`` is ``max(e[j=0], …, e[j=n-1])``, language.txt §2), so
the IR of ``max j in 10000 (now + j)`` is a call of 10 000 arguments, and its code was one Python call of
10 000 argument expressions: some 200 KB of source for each such term, which CPython's compiler took about
0.2 s and tens of MB to compile, and a tuple of 10 000 values built at every evaluation before the fold.

Where every term has one shape (the same nodes, operators, names, members and places, only their numbers
differing) and none draws or plans an iteration (``budget_left``: the only evaluations with an effect),
the call is instead a function of its own, ``_ag(K, …)``, made once: it evaluates the first term's code with
the numbers that differ read from the row of ``K`` (a tuple kept with the function) and folds each term into
the result as it comes, in the terms' order, with the same operation as the call (``_sum``'s ``t + x``,
``greatest``'s and ``least``'s tests). The terms are evaluated in the same order and fold to the same
double; a term that fails fails at the same term with the same message (the spans the code names are the
first term's, which by the shape are equal to every term's). The names the code reads (the session, its
attributes, the context, the runtime objects, the fast tier's locals) are the function's arguments, read
where the call is, so it is the same in every generated scope.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from msgspec import Struct
from serq_ir import nodes as N

#: a ``sum``, ``min`` or ``max`` of more terms than this is looked at for one shape (fewer are written out:
#: their code is short, and a call with its arguments on the stack is the quicker to evaluate)
LOOP_TERMS = 32

#: what the fold does with the result so far ``_ag_r`` and the next term ``_ag_x``: the operations of
#: ``compile._sum``, ``serq_ir.rules.greatest`` and ``least`` (NaN passed over), written out
_STEP = {
    "sum": "        _ag_r = _ag_r + _ag_x\n",
    "max": "        if _ag_x > _ag_r or _ag_r != _ag_r:\n            _ag_r = _ag_x\n",
    "min": "        if _ag_x < _ag_r or _ag_r != _ag_r:\n            _ag_r = _ag_x\n",
}


def _span_key(span) -> Any:
    if span is None:
        return None
    try:
        hash(span)
    except TypeError:  # (an expanded span whose uses are a list)
        return repr(span)
    return span


def shape(e, nums: list, subst: dict[int, str]) -> Any:
    """A hashable key of ``e`` in which each number is a place (appended to ``nums``, in the order the key
    meets them); None when ``e`` draws or reads ``budget_left`` (no loop). A number that already stands for
    a loop's row (``subst``: inside a term of an enclosing aggregate) is no place: it keys by its name."""
    if isinstance(e, N.Num):
        name = subst.get(id(e))
        if name is not None:
            return ("sub", name)
        nums.append(e)
        return "#"
    if isinstance(e, N.Draw):
        return None
    if isinstance(e, N.Observable) and e.name == "budget_left":
        return None
    if isinstance(e, N.Attr):
        return ("A", e.slot)
    if isinstance(e, N.Ctx):
        return ("C", e.name, _span_key(e.span))
    parts: list[Any] = [type(e).__name__]
    for f in type(e).__struct_fields__:
        v = getattr(e, f)
        if f == "span":
            parts.append(_span_key(v))
        elif isinstance(v, list):
            items = []
            for x in v:
                k = shape(x, nums, subst) if isinstance(x, Struct) else x
                if k is None:
                    return None
                items.append(k)
            parts.append(tuple(items))
        elif isinstance(v, Struct):
            k = shape(v, nums, subst)
            if k is None:
                return None
            parts.append(k)
        else:
            parts.append(v)
    return tuple(parts)


def _value(x: N.Num) -> float:
    v = x.value
    if isinstance(v, str):
        return math.inf if v == "inf" else -math.inf
    return float(v)


def plan(args: list, subst: dict[int, str]) -> tuple[list, tuple] | None:
    """For the terms ``args`` of one shape: the first term's numbers that differ among the terms (their
    nodes) and, per term, the row of those numbers (the number itself when one differs); None when the terms
    are not of one shape."""
    first: list = []
    key = shape(args[0], first, subst)
    if key is None or len({id(x) for x in first}) < len(first):
        return None  # (one number node at two places of the first term: a program built in Python may share one)
    columns: list[list[float]] = [[_value(x)] for x in first]
    for a in args[1:]:
        nums: list = []
        if shape(a, nums, subst) != key:
            return None
        for col, x in zip(columns, nums):
            col.append(_value(x))
    varying = []
    cols = []
    for x, col in zip(first, columns):
        if len({repr(v) for v in col}) > 1:  # (repr: -0.0 is not 0.0, and a NaN is itself)
            varying.append(x)
            cols.append(col)
    if len(cols) == 1:
        return varying, tuple(cols[0])
    return varying, tuple(zip(*cols)) if cols else ((),) * len(args)


def free_names(code: str) -> list[str]:
    """The names ``code`` (an expression) reads that it does not assign (its ``:=`` temporaries), in order."""
    tree = ast.parse(code, mode="eval")
    stored = {n.target.id for n in ast.walk(tree) if isinstance(n, ast.NamedExpr)}
    out: list[str] = []
    seen = set(stored)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id not in seen:
            seen.add(n.id)
            out.append(n.id)
    return out


def make(fn: str, body: str, names: list[str], params: list[str]):
    """The function ``_ag(K, *params)`` that folds ``body`` (the first term's code, its differing numbers read
    by ``names``) over the rows of ``K`` (each the number itself when there is one name) with ``fn``'s
    operation."""
    if len(names) == 1:
        row = names[0]  # (its rows are the numbers themselves)
    else:
        row = "".join(f"{n}, " for n in names) if names else "_ag_"
    src = (f"def _ag(_ag_K, {''.join(p + ', ' for p in params)}):\n"
           f"    _ag_i = iter(_ag_K)\n"
           f"    {row} = next(_ag_i)\n"
           f"    _ag_r = {body}\n"
           f"    for {row} in _ag_i:\n"
           f"        _ag_x = {body}\n"
           f"{_STEP[fn]}"
           f"    return _ag_r\n")
    ns: dict[str, Any] = {}
    exec(compile(src, "<serq fold>", "exec"), {}, ns)  # noqa: S102 - our own generated code
    f = ns["_ag"]
    f.__serq_source__ = src
    return f
