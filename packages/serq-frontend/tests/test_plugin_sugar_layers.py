"""A plugin's sugar layer whose parts cannot be used as the parser and the desugaring use them (docs/hooks.md,
"``register`` is called wrongly"): a builder that cannot be called as ``builder(ctx, pos, children)``, a
rewrite that cannot be called as ``rewrite(module, ctx)``, builders that are no mapping, or a rule of its
grammar (an alias ``-> name``, or a rule it defines) that no builder builds. Each is one message naming the
plugin and the layer, when the layers are collected. Before, the first two were a TypeError raised by
serQ's own call (a traceback from serq_frontend, blaming serQ), and a rule without a builder left lark's
parse tree in the AST, an AttributeError deep in the desugaring (the misspelt builder silently unused)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

GRAMMAR = '%extend stmt: "twice" block   -> s_twice\n'
SOURCE = "stage s : delay;\nworkload { arrive batch(1); }\nsession { twice { run s (1); } }\n"


@dataclass(slots=True, eq=False)
class STwice(A.Node):
    body: list
    pos: Any
    EXPRS = ()
    BLOCKS = ("body",)


def build(ctx, pos, children):
    (body,) = children
    return STwice(body, pos)


def rewrite(module, ctx):
    def unroll(s):
        return [x for _ in range(2) for x in copy.deepcopy(s.body)] if isinstance(s, STwice) else None

    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, unroll)) for i in module.items],
                    module.file)


def manager(layer):
    class Twice:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Twice()])


def test_the_layer_as_it_should_be():
    program = serq_frontend.compile(source=SOURCE, pm=manager(SugarLayer("twice", GRAMMAR, {"s_twice": build},
                                                                         rewrite)))
    assert len(program.session) == 2


@pytest.mark.parametrize(("layer", "why"), [
    (SugarLayer("twice", GRAMMAR, {"s_twice": lambda ctx, pos: None}, rewrite),
     "its builder 's_twice' cannot be called as builder(ctx, pos, children)"),
    (SugarLayer("twice", GRAMMAR, {"s_twice": build}, lambda module: module),
     "its rewrite cannot be called as rewrite(module, ctx)"),
    (SugarLayer("twice", GRAMMAR, {"s_twise": build}, rewrite),
     "its grammar's rule 's_twice' has no builder"),
    (SugarLayer("twice", GRAMMAR, [build], rewrite),
     "its builders are an object of type list, not a dict of rule names to builders"),
], ids=["builder", "rewrite", "a rule without a builder", "builders a list"])
def test_a_layer_whose_parts_cannot_be_used_is_named(layer, why):
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=SOURCE, pm=manager(layer))
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"error: plugin '{__name__}.manager.<locals>.Twice' registers a sugar layer wrongly "
                            "in serq_frontend_register_sugar: sugar layer 'twice': "), first
    assert why in first, first
