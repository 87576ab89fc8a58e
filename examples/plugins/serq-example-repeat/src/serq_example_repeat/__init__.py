"""``repeat (n) { … }``: the block written ``n`` times (``n`` a constant: numbers and lets).

A sugar layer is a :class:`serq_frontend.sugar.SugarLayer`: grammar that ``%extend``\\ s one of the
kernel's rules, builders that turn the new rules into AST nodes, and a rewrite from the sugared AST to
one without them. Layers apply in registration order: serQ's own first, so this rewrite sees a module in
which its own nodes are the only sugar left.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from serq import hookimpl
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

GRAMMAR = '%extend stmt: "repeat" "(" expr ")" block   -> s_repeat\n'


@dataclass(slots=True, eq=False)
class SRepeat(A.Node):
    count: Any
    body: list[Any]
    pos: Any
    EXPRS = ("count",)
    BLOCKS = ("body",)


def _build(b, pos, children):
    count, body = children
    return SRepeat(count, body, pos)


def rewrite(module, ctx):
    def unroll(s):
        if not isinstance(s, SRepeat):
            return None
        n = ctx.const(s.count, "the count of `repeat`")
        if not (0 <= n <= 10_000 and n == int(n)):
            raise ctx.error(s.count.pos, f"`repeat ({n:g})`: the count is a whole number from 0 to 10 000")
        return [stmt for _ in range(int(n)) for stmt in copy.deepcopy(s.body)]

    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, unroll)) for i in module.items],
                    module.file)


LAYER = SugarLayer("repeat", GRAMMAR, {"s_repeat": _build}, rewrite)


@hookimpl
def serq_frontend_register_sugar(register):
    register(LAYER)
