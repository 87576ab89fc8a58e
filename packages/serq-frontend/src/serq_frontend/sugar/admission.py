"""``at admission (x = e, …)`` on a hold: each binding substituted into the hold's header (units,
reserve, reuse); one the body reads is set at the body's top, ``set x = e;``."""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ast as A
from ..names import CONTEXT, LIVE_OBSERVABLES, binding_outside, language_name
from ..parser import grammar_text
from . import SugarLayer
from .aggregates import own_index
from .defs import IN_EXPRESSIONS, MAX_EXPANDED_DEPTH, too_deep

BUILDERS = {
    "hold_at": lambda b, p, c: ("at", list(c), p),
    "binding": lambda b, p, c: A.Binding(str(c[0]), c[1], p),
}


def _subst(e: Any, env: dict[str, Any], h: A.SHold) -> Any:
    """``e`` with each binding of ``env`` put in where the hold ``h``'s own text reads its name
    (:func:`serq_frontend.ast.same_text`: a name a definition used in the header reads is the program's)."""
    if not env:
        return e

    def f(x: Any) -> Any:
        if type(x) is A.Var and x.simple in env and A.same_text(h, x):
            return env[x.simple]
        return None

    return A.map_expr(e, f)


def _put_in(e: Any, env: dict[str, Any], sizes: dict[str, tuple[int, int]], h: A.SHold) -> tuple[int, int]:
    """The nodes :func:`_subst` adds to ``e`` (each read of a binding replaced by its value) and how deep the
    result nests, from ``sizes`` (each binding's value substituted: its nodes and depth), without making it or
    walking the values put in: they are shared, not copied, so a clause of bindings that each read the one
    before twice (``h2 = max(h1, h1)``, …) is a value of 2**k nodes, which every later pass walks in full."""
    added = deepest = 0
    todo = [(e, 1)]
    while todo:
        x, k = todo.pop()
        if type(x) is A.Var and x.simple in env and A.same_text(h, x):
            n, d = sizes[x.simple]
            added += n - 1
            deepest = max(deepest, k - 1 + d)
            continue
        deepest = max(deepest, k)
        todo.extend((c, k + 1) for c in A.expr_children(x))
    return added, deepest


def live_read(e: Any) -> str | None:
    for x in A.walk_expr(e):
        if type(x) is A.Call and x.name in LIVE_OBSERVABLES:
            return f"`{x.name}(…)`"
        if type(x) is A.Var and x.simple is not None and (x.simple in CONTEXT or x.simple == "cached"):
            return f"`{x.simple}`"
    return None


def _set_first(stmts: list[Any], name: str, index: _Reads | None = None) -> bool:
    """Whether the block sets ``name`` at its top level before anything reads it (``index``: the module's
    reads, :class:`_Reads`, for a statement it holds)."""
    for s in stmts:
        known = None if index is None else index.reads(s, name)
        if known is None:
            known = name in _reads([s], [])
        if known:
            return False
        if isinstance(s, A.SSet) and s.name == name:
            return True
    return False


class _Reads:
    """Where the statements of a module read each name: every statement numbered in source order
    (:func:`serq_frontend.ast.walk_stmts`), with the number past its last nested statement, and per name the
    numbers of the statements that read it, ascending, each with the name's node. Whether a statement, or a
    hold's body, reads a name is then a search of one list, where walking the statements under it again for
    every hold cost a body nested n holds deep n times its size (``serq ast --desugar`` of 990 holds, each
    ``at admission``, took seconds). Made once, from the module the layer reads; a statement it does not
    hold (made by the layer) is answered None, and walked."""

    def __init__(self, blocks: list[list[Any]]):
        #: a statement's number and the number past its subtree, by ``id`` (the statements are kept alive by
        #: the module, so an id is no other's)
        self.span: dict[int, tuple[int, int]] = {}
        #: a name's reads: the statement numbers, ascending, and the Var nodes, in step
        self.at: dict[str, tuple[list[int], list[Any]]] = {}
        n = 0
        for block in blocks:
            todo: list[Any] = [(False, s) for s in reversed(block)]
            while todo:
                done, s = todo.pop()
                if done:
                    self.span[id(s)] = (self.span[id(s)][0], n)
                    continue
                i = n
                n += 1
                self.span[id(s)] = (i, i)
                for root in A.stmt_exprs(s):
                    for x in A.walk_expr(root):
                        if type(x) is A.Var:
                            where, nodes = self.at.setdefault(x.parts[0][0], ([], []))
                            where.append(i)
                            nodes.append(x)
                todo.append((True, s))
                for b in reversed(list(A.blocks_of(s))):
                    todo.extend((False, t) for t in reversed(b))

    def _any(self, lo: int, hi: int, name: str, h: A.SHold | None) -> bool:
        import bisect

        found = self.at.get(name)
        if found is None:
            return False
        where, nodes = found
        k = bisect.bisect_left(where, lo)
        while k < len(where) and where[k] < hi:
            if h is None or A.same_text(h, nodes[k]):
                return True
            k += 1
        return False

    def reads(self, s: Any, name: str) -> bool | None:
        """Whether statement ``s`` (its expressions, its blocks') reads ``name``; None for one not indexed."""
        span = self.span.get(id(s))
        return None if span is None else self._any(span[0], span[1], name, None)

    def body_reads(self, h: A.SHold, name: str) -> bool | None:
        """Whether the body of hold ``h`` reads ``name`` where ``h``'s own text does (:func:`_reads` with
        ``h``); None for a hold not indexed."""
        span = self.span.get(id(h))
        return None if span is None else self._any(span[0] + 1, span[1], name, h)


def _same_expr(a: Any, b: Any) -> bool:
    """Whether expressions ``a`` and ``b`` are written alike (the same nodes, names and numbers), wherever."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_expr(x, y) for x, y in zip(a, b, strict=True))
    if dataclasses.is_dataclass(a):
        return all(_same_expr(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
                   if f.name not in ("pos", "var_pos"))
    return bool(a == b)


def _reads(stmts: list[Any], extra: list[Any], h: A.SHold | None = None) -> set[str]:
    """The names the statements (and ``extra``) read; with ``h``, those the hold ``h``'s own text reads
    (:func:`serq_frontend.ast.same_text`: a name a definition used in the header reads is the program's)."""
    out: set[str] = set()
    roots = list(extra)
    for s in A.walk_stmts(stmts):
        roots.extend(A.stmt_exprs(s))
    for r in roots:
        for x in A.walk_expr(r):
            if type(x) is A.Var and (h is None or A.same_text(h, x)):
                out.add(x.parts[0][0])
    return out


class Admission:
    def __init__(self, module: A.Module, ctx: Any):
        self.ctx = ctx
        self.taken = A.declared_names(module)
        self.sets: set[str] = set()
        #: whether the workload replays a trace (a binding may not take a column's name, an attribute then)
        self.trace = any(w.kind == "trace" for item in module.items if type(item) is A.WorkloadItem
                         for w in item.items)
        blocks = []
        for item in module.items:
            for b in A.item_blocks(item):
                blocks.append(b)
                for s in A.walk_stmts(b):
                    if isinstance(s, (A.SSet, A.SChoose)):
                        self.sets.add(s.name)
        #: where the module's statements read each name (made when a hold first binds something)
        self.blocks = blocks
        self.index: _Reads | None = None
        #: binding names a body reads: they become attributes, read only inside their holds
        self.attrs: dict[str, Any] = {}
        #: every binding's name, a body's read or not
        self.bound: set[str] = set()

    def hold(self, h: A.SHold) -> A.SHold:
        ctx = self.ctx
        if not h.bindings:
            return h
        self.bound.update(b.name for b in h.bindings)
        env: dict[str, Any] = {}
        sizes: dict[str, tuple[int, int]] = {}

        def put_in(e: Any) -> Any:
            """``e`` with the bindings of ``env`` substituted, counted first as what a program writes out is
            (Context.write_out; its depth held to the bound of a definition's use)."""
            if e is None or not env:
                return e
            added, deep = _put_in(e, env, sizes, h)
            what = "this expression, with the bindings it reads put in,"
            if added:
                ctx.write_out(added, e.pos, what)
            if deep > MAX_EXPANDED_DEPTH:
                raise too_deep(ctx, e.pos, f"{what} nests", deep, IN_EXPRESSIONS)
            return _subst(e, env, h)

        # where each name is bound last: a name is bound at or after binding i when its last is (the names
        # bound from i on, made for every binding, took a clause of 10 000 bindings 8 s)
        last = {b.name: i for i, b in enumerate(h.bindings)}
        for i, b in enumerate(h.bindings):
            if A.draws(b.value):
                raise ctx.error(b.value.pos, f"the binding `{b.name}` draws: a binding is substituted, so a "
                                "name used twice would draw twice; draw into an attribute with `set` first")
            if b.name in env:
                raise ctx.error(b.pos, f"`{b.name}` is bound twice in this `at admission`")
            why = self.taken.get(b.name) or language_name(b.name, self.trace)
            if why is not None:
                raise ctx.error(b.pos, f"the binding `{b.name}` is {why}; give it a name of its own")
            for x in A.walk_expr(b.value):
                if (type(x) is A.Var and last.get(x.simple, -1) >= i and x.simple not in env
                        and x.simple not in self.sets and A.same_text(h, x)):
                    what = "itself" if x.simple == b.name else f"`{x.simple}`, bound after it"
                    raise ctx.error(x.pos, f"the binding `{b.name}` reads {what}: a binding reads only the "
                                    "ones before it in its clause")
            # (a binding's value is made, not written out: only the header and the body's sets put it in)
            added, deep = _put_in(b.value, env, sizes, h)
            sizes[b.name] = (A.expr_size(b.value) + added, deep)
            env[b.name] = _subst(b.value, env, h)
        # an aggregate in the header whose index is a binding's name: the substitution would put the
        # binding's value where the index was meant
        header = [b.value for b in h.bindings] + [h.reuse]
        header += [x for p in h.pools for x in (p.ref, p.units, p.reserve)]
        for e in header:
            for x in A.walk_expr(e) if e is not None else ():
                if type(x) is A.Agg and x.var in env and A.same_text(h, x):
                    raise ctx.error(x.var_at, f"`{x.op} {x.var} in …`: `{x.var}` is a binding of this `at "
                                    "admission`; " + own_index(x.op, x.var, env))
        n = A.map_stmt(h)
        n.bindings = []
        n.pools = [A.HoldPool(put_in(p.ref), put_in(p.units), put_in(p.reserve)) for p in h.pools]
        if h.reuse is not None:
            n.reuse = put_in(h.reuse)
        if self.index is None:
            self.index = _Reads(self.blocks)
        index = self.index
        extra = _reads([], [e for e in (h.cache, h.lease_time) if e is not None], h)
        walked: set[str] | None = None  # (a hold the index does not hold: its body walked, once)
        top: list[Any] = []
        for b in h.bindings:
            read = b.name in extra or index.body_reads(h, b.name)
            if read is None:
                if walked is None:
                    walked = _reads(h.body, [], h)
                read = b.name in walked
            if not read:
                continue
            if _set_first(h.body, b.name, index):
                # the body sets it itself at its top (lib/vllm.sq): to the binding's own expression only, or the
                # body would read another value than the header's under the binding's name
                at = next(i for i, s in enumerate(h.body) if isinstance(s, A.SSet) and s.name == b.name)
                first = h.body[at]
                # (an earlier binding's name set before it holds that binding's value: checked in its turn)
                read = {x.simple for x in A.walk_expr(b.value) if type(x) is A.Var and x.simple is not None} - env.keys()
                moved = next((s.name for s in A.walk_stmts(h.body[:at])
                              if isinstance(s, (A.SSet, A.SChoose)) and s.name in read), None)
                if moved is not None or not _same_expr(first.value, b.value):
                    why = (f"reads `{moved}`, which the body sets before it, so it" if moved is not None
                           else "is not the binding's own expression, so it")
                    raise ctx.error(first.pos, f"`set {b.name} = …;` at the top of the body {why} gives the "
                                    f"binding `{b.name}` another value than the one the header was admitted "
                                    "with; leave the set out (the body reads the binding's value), or give the "
                                    "attribute a name of its own")
                continue
            value = env[b.name]
            # counted before it is walked (live_read walks it)
            what = f"the binding `{b.name}`, set for the body to read,"
            ctx.write_out(sizes[b.name][0], b.pos, what)
            if sizes[b.name][1] > MAX_EXPANDED_DEPTH:
                raise too_deep(ctx, b.pos, f"{what} nests", sizes[b.name][1], IN_EXPRESSIONS)
            live = live_read(value)
            if live is not None:
                raise ctx.error(b.pos, f"the body reads `{b.name}`, a binding that reads live state "
                                f"({live}): it has another value there than at the admission; the body "
                                "reads `cached`, the units the admission consumed")
            if b.name in self.sets:
                raise ctx.error(b.pos, f"the binding `{b.name}`, which the body reads, is an attribute the "
                                "program sets; give the binding a name of its own")
            self.attrs.setdefault(b.name, b.pos)
            top.append(A.SSet(b.name, value, b.pos))
        n.body = top + h.body
        return n

    def block(self, stmts: list[Any], inside: frozenset[str]) -> list[Any]:
        out = []
        for s in stmts:
            if isinstance(s, A.SHold):
                bound = inside | {b.name for b in s.bindings}
                s = self.hold(s)
                s = A.map_stmt(s, fb=lambda b, bound=bound: self.block(b, bound))
            else:
                s = A.map_stmt(s, fb=lambda b: self.block(b, inside))
            out.append(s)
        return out


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    adm = Admission(module, ctx)
    items = []
    for item in module.items:
        items.append(A.map_item(item, lambda e: e, lambda b: adm.block(b, frozenset())))
    if adm.bound:
        # a read outside every hold that binds the name: refused here when the body reads the binding (an
        # attribute now, which the read would take); one its body does not read has no attribute, and the
        # linker finds no name for the read, which it tells as a binding's at the places noted here
        outside: set[Any] = set()
        for item in module.items:
            for b in A.item_blocks(item):
                _scan_outside(ctx, adm, b, frozenset(), outside)
        ctx.notes["bindings_read_outside"] = outside
    return A.Module(items, module.file)


def _scan_outside(ctx: Any, adm: Admission, stmts: list[Any], inside: frozenset[str],
                  outside: set[Any]) -> None:
    for s in stmts:
        here = inside
        if isinstance(s, A.SHold):
            here = inside | {b.name for b in s.bindings}
        exprs = list(A.stmt_exprs(s))
        for r in exprs:
            for x in A.walk_expr(r):
                if type(x) is A.Var and x.simple in adm.bound and x.simple not in here:
                    if x.simple in adm.attrs:
                        raise ctx.error(x.pos, binding_outside(x.simple))
                    if x.pos is not None:
                        outside.add(x.pos)
        for b in A.blocks_of(s):
            _scan_outside(ctx, adm, b, here, outside)


LAYER = SugarLayer("admission", grammar_text("admission"), BUILDERS, rewrite)
