"""Aggregates over an index, ``max j in n (e)``, ``min …``, ``sum …``: written out with j = 0 … n-1."""

from __future__ import annotations

from typing import Any

from .. import ast as A
from ..consts import MAX_TERMS, SUM, BadConstant, agg_count
from ..parser import grammar_text, name_pos
from . import SugarLayer

OPS = ("max", "min", "sum")


def _aggregate(b: Any, p: Any, c: list[Any]) -> A.Agg:
    op, var, n, body = str(c[0]), str(c[1]), c[2], c[3]
    if op not in OPS:
        raise b.error(p, f"`{op} {var} in …`: an aggregate is `max`, `min` or `sum`")
    return A.Agg(op, var, n, body, p, name_pos(b, c[1]))


BUILDERS = {
    "aggregate": _aggregate,
    "agg_name": lambda b, p, c: A.Var([(str(c[0]), None)], p),
    "agg_n": lambda b, p, c: c[0],
}

__all__ = ["LAYER", "MAX_TERMS", "own_index"]


def own_index(op: str, var: str, taken: Any = ()) -> str:
    """What to write where an aggregate's index ``var`` is a name it may not take (the program's, an aggregate's
    around it, a definition's parameter, a binding's): ``give the index a name of its own: write `sum j2 in …`
    and `j2` in its body``, the name offered one that ``taken`` does not hold. (The message ended "give the
    index its own", which reads as cut short, and said no name.)"""
    k = 2
    while f"{var}{k}" in taken:
        k += 1
    return f"give the index a name of its own: write `{op} {var}{k} in …` and `{var}{k}` in its body"


class Writer:
    def __init__(self, ctx: Any, taken: set[str]):
        self.ctx = ctx
        self.taken = taken
        #: the terms written out so far in the body of the aggregate being written
        self.inner = 0
        #: the aggregates around the one being written, by their index, the innermost last
        self.around: dict[str, list[A.Agg]] = {}

    def expr(self, e: Any) -> Any:
        def f(x: Any) -> Any:
            if type(x) is A.Agg:
                return self.write(x)
            return None

        return A.map_expr(e, f)

    def write(self, a: A.Agg) -> Any:
        ctx = self.ctx
        # the first aggregate of each index name, for the linker's word on the name read outside every
        # aggregate over it (a name the program does not have, since an index may not be one: link.Linker.var)
        ctx.notes.setdefault("aggregate_indexes", {}).setdefault(a.var, a)
        if a.var in self.taken:
            raise ctx.error(a.var_at, f"`{a.op} {a.var} in …`: `{a.var}` is a name the program has already; "
                            + own_index(a.op, a.var, {*self.taken, *self.around}))
        # an index of the aggregate's own text is the one name the aggregate takes (_subst): one of the same
        # text around it would be hidden in the body, which would read the inner index where the outer was
        # meant; an aggregate of another text around it (the use of a definition whose body aggregates over
        # `j`, inside `sum j in …`) keeps its own names, each read by its own aggregate
        o = next((o for o in reversed(self.around.get(a.var, ())) if A.same_text(o, a)), None)
        if o is not None:
            where = o.pos.seen_from(a.pos)
            raise ctx.error(a.var_at, f"`{a.op} {a.var} in …`: `{a.var}` is the index of the aggregate around it "
                            f"(`{o.op} {o.var} in …` at {where}); " + own_index(a.op, a.var, {*self.taken, *self.around}))
        v = ctx.const(a.n, f"the count of `{a.op} {a.var} in …`")
        try:
            n = agg_count(a, v)
        except BadConstant as x:
            raise ctx.error(x.node.pos, x.message) from None
        outer, self.inner = self.inner, 0
        self.around.setdefault(a.var, []).append(a)
        try:
            body = self.expr(a.body)
            inner = max(1, self.inner)  # the terms the aggregates in the body write out (1: none)
        finally:
            self.inner = outer
            self.around[a.var].pop()
            if not self.around[a.var]:
                del self.around[a.var]
        if n * inner > MAX_TERMS:
            raise ctx.error(a.pos, f"`{a.op} {a.var} in …` writes out {n} × {inner} terms with the aggregates "
                            f"inside it; an aggregate writes out at most {MAX_TERMS} terms")
        self.inner += n * inner
        ctx.write_out(n * A.expr_size(body), a.pos, f"`{a.op} {a.var} in {n} (…)`")
        terms = [_subst(body, a, k) for k in range(n)]
        if n == 1:
            return terms[0]
        if a.op == "sum":
            # one flat node (the linker's IR Call "sum", a left fold): a chain of 10 000 Binary nodes nested
            # too deeply for the passes after this one and for the simulator's generated code
            return A.Call(SUM, terms, a.pos)
        return A.Call(a.op, terms, a.pos)


def _subst(e: Any, a: A.Agg, k: int) -> Any:
    """``e`` with the index of ``a`` read as ``k``: the names ``a.var`` of the aggregate's own text
    (:func:`serq_frontend.ast.same_text`). A definition's body the aggregate's body uses reads the program's
    names, whatever the index is called, so ``def g() = j * 2;`` in ``sum j in 3 (g())`` reads an unknown `j`
    (it read the index: 0 + 2 + 4); an argument keeps the place it is written at, so an index passed to a
    definition is the index."""
    var = a.var

    def f(x: Any) -> Any:
        if type(x) is A.Var and x.simple == var and A.same_text(a, x):
            return A.Num(float(k), x.pos)
        return None

    return A.map_expr(e, f)


def _names(module: A.Module, ctx: Any) -> set[str]:
    """The names the program has (language.txt §2: an aggregate's index "may not be a name the program
    already has"): what its items declare (a definition's name too, the defs layer having written its
    uses out), what its blocks assign and the names the language supplies."""
    out: set[str] = {"inf", "self", *ctx.notes.get("definitions", ())}
    for item in module.items:
        name = getattr(item, "name", None)
        if isinstance(name, str):
            out.add(name)
        for b in A.item_blocks(item):
            out |= A.assigned_in(b)
    from ..names import BUILTIN_ATTRIBUTES, CONTEXT, TRACE_ATTRIBUTES

    return out | CONTEXT | set(BUILTIN_ATTRIBUTES) | set(TRACE_ATTRIBUTES)


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    w = Writer(ctx, _names(module, ctx))

    def fb(b: list[Any]) -> list[Any]:
        return [A.map_stmt(s, w.expr, w.expr, fb) for s in b]

    return A.Module([A.map_item(i, w.expr, fb) for i in module.items], module.file)


LAYER = SugarLayer("aggregates", grammar_text("aggregates"), BUILDERS, rewrite)
