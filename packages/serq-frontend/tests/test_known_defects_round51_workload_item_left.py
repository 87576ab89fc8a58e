"""A workload item the kernel does not have (``arrive``, ``trace``, ``init``, ``turn``, ``hidden``), left for the
linker by a plugin's sugar layer (its rewrite adds ``WlItem("weird")`` to the workload, or its builder builds
one), is refused at the item's place naming the layer, as its stage kinds and pool options are
(test_known_defects_round51_kind_left, _pool_option_left). Before, the linker kept it among the workload's
items and never read it: the program compiled without it, without a word."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq_frontend import ast as A
from serq_frontend.diagnostics import CompileError, Pos
from serq_frontend.sugar import SugarLayer

SOURCE = "stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"


def adding(kind, arg=3):
    def rewrite(module, ctx):
        for item in module.items:
            if isinstance(item, A.WorkloadItem):
                item.items.append(A.WlItem(kind, Pos(item.pos.file, 2, 12), arg))
        return module
    return rewrite


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


@pytest.mark.parametrize("kind", ["weird", "arrive_twice", 7])
def test_an_item_a_rewrite_added_is_refused_naming_its_layer(kind):
    pm = manager(SugarLayer("wl", "", {}, adding(kind)))
    assert first_line(SOURCE, pm) == (f"<source>:2:12: error: the workload: an item the kernel does not have "
                                      f"({kind!r}), left by the sugar layer 'wl' {PLUGIN}, whose rewrite made it")


def test_an_item_a_builder_built_is_refused_naming_its_layer():
    layer = SugarLayer("every", '%extend wl_item: "every" NUMBER ";" -> wl_every\n',
                       {"wl_every": lambda ctx, pos, k: A.WlItem("every", pos, float(k[0]))}, None)
    line = first_line(SOURCE.replace("arrive batch(1);", "arrive batch(1); every 5;"), manager(layer))
    assert line == ("<source>:2:29: error: the workload: an item the kernel does not have ('every'), left by the "
                    f"sugar layer 'every' {PLUGIN}, whose builder built it and whose rewrite (if any) left it")


def test_the_kernels_items_compile_as_before():
    pm = manager(SugarLayer("wl", "", {}, adding("hidden", [])))  # a kernel item (hiding no name)
    program = serq_frontend.compile(source=SOURCE, pm=pm)
    assert type(program.workload.arrive).__name__ == "Batch"
