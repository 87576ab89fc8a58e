"""A plugin's sugar layer whose builders or rewrite make a program that is no tree: a node within itself (a
cycle), or one node object at several places, ``e = Binary("+", e, e)`` forty times (forty objects, a tree of
2**40 nodes written out). Each is the plugin's failure, named with its layer (serq_frontend._graph_problem,
each object walked once). Before, the cycle was "the program nests more than 1000 deep here" at the user's
statement, and the shared tree a compile (or ``serq ast``) that never ended: the nesting check and the linker
walk every node where it stands. A node shared a few times, a tree within serq_ir.rules.MAX_TREE, compiles
as before (as the IR takes one built in Python)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from click.testing import CliRunner
from serq.errors import PluginError
from serq_frontend import ast as A
from serq_frontend.commands import ast_command
from serq_frontend.sugar import SugarLayer

SOURCE = "stage s : delay;\nworkload { arrive batch(1); }\nsession { twice { run s (1); } }\n"


@dataclass(slots=True, eq=False)
class STwice(A.Node):
    body: list
    pos: Any
    BLOCKS = ("body",)


def doubled(levels):
    def unroll(s):
        if not isinstance(s, STwice):
            return None
        out = copy.deepcopy(s.body)
        for x in out:
            e = A.Num(1.0, x.pos)
            for _ in range(levels):
                e = A.Binary("+", e, e, x.pos)
            x.work = e
        return out

    def rewrite(module, ctx):
        return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, unroll)) for i in module.items],
                        module.file)

    return rewrite


def cyclic(ctx, pos, children):
    node = STwice(children[0], pos)
    node.body = [*node.body, node]
    return node


def manager(build=lambda ctx, pos, children: STwice(children[0], pos), rewrite=None):
    layer = SugarLayer("twice", '%extend stmt: "twice" block -> s_twice\n', {"s_twice": build}, rewrite)

    class Twice:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Twice()])


def test_a_node_shared_a_few_times_compiles():
    program = serq_frontend.compile(source=SOURCE, pm=manager(rewrite=doubled(10)))
    assert program.session[0].work.value == 2.0 ** 10  # 1 doubled ten times, folded


@pytest.mark.parametrize("levels", [20, 40])
def test_a_shared_tree_beyond_the_bound_is_the_rewrites_failure(levels):
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=SOURCE, pm=manager(rewrite=doubled(levels)))
    first = str(e.value).splitlines()[0]
    nodes = 2 ** (levels + 1) - 1 + 15  # the doubled expression, and the program's other nodes and lists
    assert first.endswith("failed in the rewrite of its sugar layer 'twice': rewrite(module, ctx) returned one "
                          "node object at several places, which written out where each stands make a tree of "
                          f"{nodes} nodes, more than 1048576 (copy.deepcopy what is put in twice)"), first


def test_a_cycle_a_builder_built_is_the_plugins_failure(tmp_path):
    pm = manager(build=cyclic)
    message = ("failed in the builders of its sugar layer 'twice': the program they built holds a node STwice "
               "within itself (one of its parts holds it): a program is a tree of nodes")
    for call in (lambda: serq_frontend.compile(source=SOURCE, pm=pm),
                 lambda: serq_frontend.parse(source=SOURCE, pm=pm)):
        with pytest.raises(PluginError) as e:
            call()
        assert str(e.value).splitlines()[0].endswith(message)
    prog = tmp_path / "p.sq"
    prog.write_text(SOURCE)
    r = CliRunner().invoke(ast_command, [str(prog)], obj=pm)
    assert isinstance(r.exception, PluginError) and str(r.exception).splitlines()[0].endswith(message)
    # without the cycle, serq ast shows the plugin's node
    r = CliRunner().invoke(ast_command, [str(prog)], obj=manager())
    assert r.exit_code == 0 and json.loads(r.output)[2]["body"][0]["node"] == "STwice"
