"""A stage kind the kernel does not have, left for the linker by a plugin's sugar layer (its rewrite makes
``stage s`` of kind ``weird``, or its builder builds such a stage), is refused naming that layer and its
plugin: ``left by the sugar layer 'weirdify' (plugin …), whose rewrite made it``. Before, it said ``left by a
sugar layer``, naming none, however many plugins' layers the compile ran. A layer that ran after it and left
the kind as it was is not named."""

from __future__ import annotations

import dataclasses

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq_frontend import ast as A
from serq_frontend.diagnostics import CompileError
from serq_frontend.sugar import SugarLayer

SOURCE = "stage s : fifo;\nstage t : delay;\nworkload { arrive batch(1); }\nsession { run s (1); run t (1); }\n"


def weirdify(stage, kind="weird"):
    def rewrite(module, ctx):
        return A.Module([dataclasses.replace(i, kind=A.Kind(kind, i.kind.pos))
                         if isinstance(i, A.StageItem) and i.name == stage else i for i in module.items], module.file)
    return rewrite


def innocent(module, ctx):
    return A.Module(list(module.items), module.file)


def manager(*layers):
    class Layers:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            for layer in layers:
                register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Layers()])


PLUGIN = f"(plugin {__name__}.manager.<locals>.Layers)"


def first_line(source, pm) -> str:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=source, pm=pm)
    return str(e.value).splitlines()[0]


def test_the_rewrite_that_made_the_kind_is_named():
    pm = manager(SugarLayer("before", "", {}, innocent), SugarLayer("weirdify", "", {}, weirdify("s")),
                 SugarLayer("after", "", {}, innocent))
    assert first_line(SOURCE, pm) == ("<source>:1:11: error: stage `s`: a stage kind the kernel does not have "
                                      f"('weird'), left by the sugar layer 'weirdify' {PLUGIN}, whose rewrite "
                                      "made it")


def test_of_two_layers_each_its_own_stage():
    # the first layer's kind is refused first (stage s), naming it; without it, the second's (stage t)
    pm = manager(SugarLayer("one", "", {}, weirdify("s", "odd")), SugarLayer("two", "", {}, weirdify("t", "rare")))
    line = first_line(SOURCE, pm)
    assert "stage `s`: a stage kind the kernel does not have ('odd'), left by the sugar layer 'one' " in line, line
    pm = manager(SugarLayer("one", "", {}, innocent), SugarLayer("two", "", {}, weirdify("t", "rare")))
    line = first_line(SOURCE, pm)
    assert line.startswith("<source>:2:11: error: stage `t`: a stage kind the kernel does not have ('rare'), left "
                           f"by the sugar layer 'two' {PLUGIN}, whose rewrite made it"), line


def test_the_builder_that_built_the_kind_is_named():
    layer = SugarLayer("wk", '%extend item: "wstage" NAME ";" -> i_wstage\n',
                       {"i_wstage": lambda ctx, pos, k: A.StageItem(str(k[0]), None, A.Kind("weird", pos), pos)},
                       None)
    line = first_line(SOURCE.replace("stage s : fifo;", "wstage s;"), manager(layer))
    assert line == ("<source>:1:1: error: stage `s`: a stage kind the kernel does not have ('weird'), left by the "
                    f"sugar layer 'wk' {PLUGIN}, whose builder built it and whose rewrite (if any) left it")


def test_a_kind_a_later_rewrite_makes_a_kernel_one_compiles():
    pm = manager(SugarLayer("one", "", {}, weirdify("s", "odd")), SugarLayer("two", "", {}, weirdify("s", "delay")))
    program = serq_frontend.compile(source=SOURCE, pm=pm)
    assert [type(s.kind).__name__ for s in program.stages] == ["Delay", "Delay"]
