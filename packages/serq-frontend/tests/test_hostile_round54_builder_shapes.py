"""A plugin's sugar layer whose builders build what the passes after the parse cannot walk, left for the
linker by a layer without a rewrite (a layer may build kernel nodes directly): a statement that is no
statement (None, a str, a list of statements), or a node without a place (``pos=None``), statement or
expression, or a number where an expression belongs (``3.0`` for ``Num(3.0, pos)``). Each is the plugin's failure, named with its layer and the place of the nearest enclosing node,
when the layers are about to run (serq_frontend._desugar). Before, each was the linker's AttributeError
(``type object 'NoneType' has no attribute 'BLOCKS'``, ``'NoneType' object has no attribute 'uses'``), a
traceback naming no plugin (the number: ``<source>: error: an expression the linker does not know
(float)``, naming neither the plugin nor a place). A builder that builds kernel nodes with their places compiles as before."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

STATEMENT = "stage s : delay;\nworkload { arrive batch(1); }\nsession { zz; run s (1); }\n"
EXPRESSION = "stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (qq); }\n"


def run_at(pos, place):
    return A.SRun([A.Var([("s", None)], pos)], "plain", A.Num(1.0, pos), place)


def statement(build):
    return SugarLayer("zz", '%extend stmt: "zz" ";" -> s_zz\n', {"s_zz": build}, None)


def expression(build):
    return SugarLayer("qq", '%extend atom: "qq" -> e_qq\n', {"e_qq": build}, None)


def manager(*layers):
    class Builders:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            for layer in layers:
                register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Builders()])


def test_builders_of_kernel_nodes_compile():
    program = serq_frontend.compile(source=STATEMENT, pm=manager(statement(lambda ctx, pos, k: run_at(pos, pos))))
    assert [type(s).__name__ for s in program.session] == ["Run", "Run"]
    program = serq_frontend.compile(source=EXPRESSION, pm=manager(expression(lambda ctx, pos, k: A.Num(3.0, pos))))
    assert program.session[0].work.value == 3.0


@pytest.mark.parametrize(("layer", "source", "why"), [
    (statement(lambda ctx, pos, k: None), STATEMENT,
     "failed in the builders of its sugar layer 'zz': the program they built holds None in a block, not a "
     "statement (a serq_frontend.ast.Node, or a class that declares BLOCKS) (within the node at <source>:3:1)"),
    (statement(lambda ctx, pos, k: "run s (1);"), STATEMENT, "holds an object of type str in a block"),
    (statement(lambda ctx, pos, k: [run_at(pos, pos)]), STATEMENT, "holds an object of type list in a block"),
    (statement(lambda ctx, pos, k: run_at(pos, None)), STATEMENT,
     "holds a node SRun whose pos is None, not a place (a serq_frontend.diagnostics.Pos: give a node the pos of "
     "the sugar it stands for) (within the node at <source>:3:1)"),
    (expression(lambda ctx, pos, k: A.Num(3.0, None)), EXPRESSION,
     "failed in the builders of its sugar layer 'qq': the program they built holds a node Num whose pos is None"),
    (expression(lambda ctx, pos, k: 3.0), EXPRESSION,
     "holds an object of type float where SRun.work holds an expression (a node: serq_frontend.ast.Num for a "
     "number) (within the node at <source>:3:11)"),
    (expression(lambda ctx, pos, k: A.Binary("+", A.Num(1.0, pos), 2, pos)), EXPRESSION,
     "holds an object of type int where Binary holds an expression"),
], ids=["None", "a str", "a list", "a statement without a place", "an expression without a place",
        "a float for an expression", "an int within one"])
def test_what_a_builder_built_of_another_shape_is_the_plugins_failure(layer, source, why):
    for call in (lambda pm: serq_frontend.compile(source=source, pm=pm),
                 lambda pm: serq_frontend.parse(source=source, pm=pm, desugar=True)):
        with pytest.raises(PluginError) as e:
            call(manager(layer))
        first = str(e.value).splitlines()[0]
        assert first.startswith(f"error: plugin '{__name__}.manager.<locals>.Builders' failed in the builders of "
                                f"its sugar layer '{layer.name}': the program they built holds "), first
        assert why in first, first
    # the AST as parsed, before any layer, is shown as it is (serq ast without --desugar)
    assert isinstance(serq_frontend.parse(source=source, pm=manager(layer)), A.Module)


def test_two_layers_the_program_uses_are_both_said():
    good = expression(lambda ctx, pos, k: A.Num(3.0, pos))
    bad = statement(lambda ctx, pos, k: None)
    source = STATEMENT.replace("run s (1)", "run s (qq)")
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=source, pm=manager(good, bad))
    assert "(one of the sugar layers 'qq', 'zz' the program uses)" in str(e.value).splitlines()[0]
