"""None where an expression belongs, built by a plugin's sugar layer (its builder of an expression returned
None, or its statement's builder left the statement's expression None), is the plugin's failure, naming the
layer and placed at the construct the builder built: ``its builder of `e_qq` built None at p.sq:3:18``, the
``qq`` the builder was called for. Before, it was ``<source>: error: an expression the linker does not know
(NoneType)``, at no place and naming no plugin. None in a block (a statement's builder that returned None) names
the builder's call too, beside the enclosing node it was told at."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

HEAD = "stage s : delay;\nworkload { arrive batch(1); }\n"
PLUGIN = f"error: plugin '{__name__}.manager.<locals>.Builders' failed in the builders of its sugar layer "


def expression(build):
    return SugarLayer("qq", '%extend atom: "qq" -> e_qq\n', {"e_qq": build}, None)


def statement(build):
    return SugarLayer("zz", '%extend stmt: "zz" ";" -> s_zz\n', {"s_zz": build}, None)


def manager(*layers):
    class Builders:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            for layer in layers:
                register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Builders()])


def failure(tmp_path, source, *layers) -> str:
    prog = tmp_path / "p.sq"
    prog.write_text(source)
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(prog, pm=manager(*layers))
    return str(e.value).splitlines()[0]


def test_an_expression_builder_that_built_none_is_told_at_its_construct(tmp_path):
    # `run s (qq);`: the builder of `qq` (3:18) returned None, which the run holds as its work
    first = failure(tmp_path, HEAD + "session { run s (qq); }\n", expression(lambda ctx, pos, k: None))
    prog = tmp_path / "p.sq"
    assert first == (PLUGIN + f"'qq': its builder of `e_qq` built None at {prog}:3:18, and the program holds it "
                     "where an expression belongs (a node: serq_frontend.ast.Num for a number)")


def test_of_several_such_calls_the_one_in_the_node_linked_is_told(tmp_path):
    # the session's `qq` (3:18) is built first, the let's (4:9) after it; the lets are folded before the
    # session is linked, and the let's `qq` is told, not the first the parse built
    source = HEAD + "session { run s (qq); }\nlet k = qq;\n"
    first = failure(tmp_path, source, expression(lambda ctx, pos, k: None))
    assert first.startswith(PLUGIN + "'qq': its builder of `e_qq` built None at "), first
    assert f"{tmp_path / 'p.sq'}:4:9," in first, first
    # without the let, the session's
    first = failure(tmp_path, HEAD + "session {\n  run s (1);\n  run s (qq);\n}\n",
                    expression(lambda ctx, pos, k: None))
    assert f"built None at {tmp_path / 'p.sq'}:5:10," in first, first


def test_in_a_let(tmp_path):
    # a let's value (folded by the compile's context, where it was an AttributeError, a traceback)
    source = HEAD.replace("stage s", "let k = qq;\nstage s") + "session { run s (k); }\n"
    first = failure(tmp_path, source, expression(lambda ctx, pos, k: None))
    assert first.startswith(PLUGIN + "'qq': its builder of `e_qq` built None at "), first
    assert f"{tmp_path / 'p.sq'}:1:9," in first, first


def test_a_statement_built_with_none_for_its_expression(tmp_path):
    def run_without_work(ctx, pos, k):
        return A.SRun([A.Var([("s", None)], pos)], "plain", None, pos)

    first = failure(tmp_path, HEAD + "session { zz; }\n", statement(run_without_work))
    assert first == (PLUGIN + "'zz': the program they built holds None where an expression belongs (a node: "
                     f"serq_frontend.ast.Num for a number), in the SRun at {tmp_path / 'p.sq'}:3:11 (a class of "
                     "node its builders built)")


def test_a_statement_builder_that_built_none_names_its_call(tmp_path):
    first = failure(tmp_path, HEAD + "session { run s (1); zz; }\n", statement(lambda ctx, pos, k: None))
    prog = tmp_path / "p.sq"
    assert first.startswith(PLUGIN + "'zz': the program they built holds None in a block, not a statement"), first
    assert first.endswith(f"(within the node at {prog}:3:1); the builder of `s_zz` of the layer 'zz' built None "
                          f"at {prog}:3:22"), first


def test_builders_of_nodes_compile_as_before():
    program = serq_frontend.compile(source=HEAD + "session { run s (qq); }\n",
                                    pm=manager(expression(lambda ctx, pos, k: A.Num(3.0, pos))))
    assert program.session[0].work.value == 3.0
