"""A plugin's sugar layer whose rewrite returns a module the passes after it cannot walk (docs/hooks.md, "It
returns what its contract does not allow"): a statement that is no statement (a str, None, an object of a
class that declares no BLOCKS), an item that is no item, a node without a place (``pos=None``: a node a
rewrite made and gave no position). Each is the plugin's failure, named with its layer and the place of the
nearest enclosing node, when the rewrite returns. Before, each was an AttributeError from the linker's walk
(``type object 'str' has no attribute 'BLOCKS'``) or from its span of the place (``'NoneType' object has
no attribute 'uses'``), a traceback of serQ's naming no plugin, from ``serq check`` as from the API."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
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


@dataclass(eq=False)
class Bare:
    """A statement class that declares none of the walks' attributes (no serq_frontend.ast.Node)."""

    pos: Any


def build(ctx, pos, children):
    (body,) = children
    return STwice(body, pos)


def twice(body):
    return [x for _ in range(2) for x in copy.deepcopy(body)]


def no_place(body):
    out = twice(body)
    for s in out:
        s.pos = None
    return out


def work_without_place(body):
    out = twice(body)
    for s in out:
        s.work = A.Num(2.0, None)
    return out


def layer(replace, items=None):
    def rewrite(module, ctx):
        def unroll(s):
            return replace(s.body) if isinstance(s, STwice) else None

        out = [A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, unroll)) for i in module.items]
        return A.Module(out if items is None else items(out), module.file)

    return SugarLayer("twice", GRAMMAR, {"s_twice": build}, rewrite)


def manager(sugar):
    class Twice:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(sugar)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Twice()])


def test_a_well_formed_rewrite_compiles():
    program = serq_frontend.compile(source=SOURCE, pm=manager(layer(twice)))
    assert [type(s).__name__ for s in program.session] == ["Run", "Run"]
    assert [(s.span.line, s.span.col) for s in program.session] == [(3, 19), (3, 19)]


@pytest.mark.parametrize(("sugar", "why"), [
    (layer(no_place), "returned a node SRun whose pos is None, not a place (a serq_frontend.diagnostics.Pos: "
                      "give a node the pos of the sugar it stands for) (within the node at <source>:3:1)"),
    (layer(work_without_place), "returned a node Num whose pos is None, not a place (a "
                                "serq_frontend.diagnostics.Pos: give a node the pos of the sugar it stands for) "
                                "(within the node at <source>:3:19)"),
    (layer(lambda body: ["run s (1);"]), "returned an object of type str in a block, not a statement (a "
                                         "serq_frontend.ast.Node, or a class that declares BLOCKS) (within the "
                                         "node at <source>:3:1)"),
    (layer(lambda body: [None]), "returned None in a block, not a statement"),
    (layer(lambda body: [Bare(body[0].pos)]), "returned an object of type Bare in a block, not a statement"),
    (layer(twice, items=lambda items: [*items, "hello"]),
     "returned an object of type str among the module's items, not an item of the AST"),
    (layer(lambda body: [A.SRun(s.stages, s.mode, "1", s.pos) for s in body]),
     "returned an object of type str where SRun.work holds an expression (a node: serq_frontend.ast.Num for a "
     "number) (within the node at <source>:3:19)"),
], ids=["statement without a place", "expression without a place", "a str for a statement", "None",
        "a class without BLOCKS", "a str for an item", "a str for an expression"])
def test_a_rewrite_of_another_shape_is_the_plugins_failure(sugar, why):
    for call in (lambda pm: serq_frontend.compile(source=SOURCE, pm=pm),
                 lambda pm: serq_frontend.parse(source=SOURCE, pm=pm, desugar=True)):
        with pytest.raises(PluginError) as e:
            call(manager(sugar))
        first, second = str(e.value).splitlines()
        assert first.startswith(f"error: plugin '{__name__}.manager.<locals>.Twice' failed in the rewrite of its "
                                "sugar layer 'twice': rewrite(module, ctx) "), first
        assert why in first, first
        assert second.startswith("(run without it: ")
        assert e.value.__cause__ is None or not isinstance(e.value.__cause__, AttributeError)


PLUGIN = """
import copy
from dataclasses import dataclass
from typing import Any

from serq import hookimpl
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer


@dataclass(slots=True, eq=False)
class STwice(A.Node):
    body: list
    pos: Any
    BLOCKS = ("body",)


def unroll(s):
    if not isinstance(s, STwice):
        return None
    out = copy.deepcopy(s.body)
    for x in out:
        x.pos = None
    return out


def rewrite(module, ctx):
    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, unroll)) for i in module.items],
                    module.file)


@hookimpl
def serq_frontend_register_sugar(register):
    register(SugarLayer("twice", '%extend stmt: "twice" block -> s_twice', {"s_twice": lambda c, p, k: STwice(k[0], p)},
                        rewrite))
"""


def test_serq_check_names_the_installed_plugin(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_acme54-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme54\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme54 = acme54_shapes\n")
    (site / "acme54_shapes.py").write_text(PLUGIN)
    (tmp_path / "p.sq").write_text(SOURCE)
    env = {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0"}
    r = subprocess.run([sys.executable, "-m", "serq", "check", "p.sq"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0] == (
        "error: plugin 'acme54' (from serq-acme54 0.3.0) failed in the rewrite of its sugar layer 'twice': "
        "rewrite(module, ctx) returned a node SRun whose pos is None, not a place (a "
        "serq_frontend.diagnostics.Pos: give a node the pos of the sugar it stands for) (within the node at "
        "p.sq:3:1)"), r.stderr
