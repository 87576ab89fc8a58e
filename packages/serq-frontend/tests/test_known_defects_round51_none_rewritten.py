"""None where an expression belongs that no plugin's builder built, left by a plugin's sugar layer's rewrite (a
run's work set to None, a let's value), is that layer's failure, naming it, at the statement or item that holds
it: ``failed in the rewrite of its sugar layer 'nonify': rewrite(module, ctx) returned a program that holds None
where an expression belongs …, in the SRun at <source>:3:11``. Before, it was ``<source>: error: an expression
the linker does not know (NoneType)`` at no place (a let's, an AttributeError). With several plugins' rewrites,
the first is named and all are listed."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

SOURCE = "stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\nlet k = 2;\n"
BELONGS = "where an expression belongs (a node: serq_frontend.ast.Num for a number)"


def no_work(module, ctx):
    for item in module.items:
        if isinstance(item, A.SessionItem):
            item.body[0].work = None
    return module


def no_value(module, ctx):
    return A.Module([A.Let(i.name, None, i.pos) if isinstance(i, A.Let) else i for i in module.items], module.file)


def innocent(module, ctx):
    return module


def manager(*layers):
    class Layers:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            for layer in layers:
                register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Layers()])


HEAD = f"error: plugin '{__name__}.manager.<locals>.Layers' failed in the rewrite of its sugar layer "


@pytest.mark.parametrize(("rewrite", "where"), [(no_work, "in the SRun at <source>:3:11"),
                                                (no_value, "in the Let at <source>:4:1")], ids=["a run", "a let"])
def test_a_rewrites_none_is_its_failure_at_the_node(rewrite, where):
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=SOURCE, pm=manager(SugarLayer("nonify", "", {}, rewrite)))
    assert str(e.value).splitlines()[0] == (HEAD + "'nonify': rewrite(module, ctx) returned a program that holds "
                                            f"None {BELONGS}, {where}")


def test_of_several_rewrites_all_are_listed():
    pm = manager(SugarLayer("first", "", {}, innocent), SugarLayer("nonify", "", {}, no_work))
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=SOURCE, pm=pm)
    assert str(e.value).splitlines()[0] == (HEAD + "'first': rewrite(module, ctx) returned a program that holds "
                                            f"None {BELONGS}, in the SRun at <source>:3:11 (one of the sugar layers "
                                            "'first', 'nonify' whose rewrites ran)")


def test_an_innocent_rewrite_compiles():
    program = serq_frontend.compile(source=SOURCE, pm=manager(SugarLayer("first", "", {}, innocent)))
    assert program.session[0].work.value == 1.0
