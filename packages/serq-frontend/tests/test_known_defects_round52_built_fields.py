"""A kernel node a plugin's sugar layer built (or its rewrite left) whose fields other than expressions and
statements are not of the types serq_frontend/ast.py declares is that layer's failure at the construct, naming
the layer and its plugin. Before, ``WlItem("hidden", pos, 3)`` (a list of names expected) reached the linker,
whose ``for name, pos in w.arg`` was ``TypeError: 'int' object is not iterable``, a traceback; the shape check
(serq_frontend._shape_problem) held expressions and statements only."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import ast as A
from serq_frontend.diagnostics import Pos
from serq_frontend.sugar import SugarLayer
from serq_ir.codec import encode

SOURCE = "stage s : delay;\nworkload { arrive batch(1); init { set x = 1; } }\nsession { run s (x); }\n"
HIDE = SOURCE.replace("arrive batch(1);", "arrive batch(1); hide;")  # `hide` at 2:29


def manager(*layers):
    class Layers:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            for layer in layers:
                register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Layers()])


BUILT = f"error: plugin '{__name__}.manager.<locals>.Layers' failed in the builders of its sugar layer 'hide': "
REWROTE = f"error: plugin '{__name__}.manager.<locals>.Layers' failed in the rewrite of its sugar layer 'rw': "


def hide(build):
    return SugarLayer("hide", '%extend wl_item: "hide" ";" -> wl_hide\n', {"wl_hide": build}, None)


def failure(tmp_path, source, *layers) -> str:
    prog = tmp_path / "p.sq"
    prog.write_text(source)
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(prog, pm=manager(*layers))
    return str(e.value).splitlines()[0]


@pytest.mark.parametrize("arg, kind", [(3, "int"), ("x", "str"), ([("x", None)], "list"), ([("x",)], "list")])
def test_a_hidden_item_built_without_its_list_of_names_is_the_layers_failure(tmp_path, arg, kind):
    first = failure(tmp_path, HIDE, hide(lambda ctx, pos, k: A.WlItem("hidden", pos, arg)))
    assert first == (BUILT + f"the program they built holds an object of type {kind} where WlItem.arg holds, for "
                     f"`hidden`, list[tuple[str, Pos]] (within the node at {tmp_path / 'p.sq'}:2:29)")


def test_a_trace_item_built_with_a_number_for_its_file(tmp_path):
    first = failure(tmp_path, HIDE, hide(lambda ctx, pos, k: A.WlItem("trace", pos, 5)))
    assert first == (BUILT + "the program they built holds an object of type int where WlItem.arg holds, for "
                     f"`trace`, str (within the node at {tmp_path / 'p.sq'}:2:29)")


def test_an_item_built_with_no_place_of_its_own_names_the_field(tmp_path):
    # a workload of the builder's whose items are not WlItems: the WorkloadItem's field, at its place
    layer = SugarLayer("hide", '%extend item: "hideall" ";" -> i_hide\n',
                       {"i_hide": lambda ctx, pos, k: A.WorkloadItem(["hidden"], pos)}, None)
    first = failure(tmp_path, "hideall;\n" + SOURCE, layer)
    assert first == (BUILT + "the program they built holds an object of type list where WorkloadItem.items holds "
                     f"list[WlItem] (within the node at {tmp_path / 'p.sq'}:1:1)")


def test_a_rewrite_that_leaves_a_stage_kind_a_string_is_its_failure(tmp_path):
    def rewrite(module, ctx):
        for item in module.items:
            if isinstance(item, A.StageItem):
                item.kind = "delay"
        return module

    first = failure(tmp_path, SOURCE, SugarLayer("rw", "", {}, rewrite))
    assert first == (REWROTE + "rewrite(module, ctx) returned an object of type str where StageItem.kind holds Kind "
                     f"(within the node at {tmp_path / 'p.sq'}:1:1)")


def test_a_rewrite_that_leaves_a_plugin_kind_without_its_reference(tmp_path):
    def rewrite(module, ctx):
        for item in module.items:
            if isinstance(item, A.StageItem):
                item.kind = A.Kind("ext", item.kind.pos, "mine")
        return module

    first = failure(tmp_path, SOURCE, SugarLayer("rw", "", {}, rewrite))
    assert first == (REWROTE + "rewrite(module, ctx) returned an object of type str where Kind.arg holds, for "
                     f"`ext`, ExtRef (within the node at {tmp_path / 'p.sq'}:1:11)")


def test_the_same_items_of_the_declared_types_compile_as_their_text_does(tmp_path):
    # a list of names, or a tuple of them, is the program written with `hidden x;`; a trace's str is read
    written = serq_frontend.compile(source=SOURCE.replace("arrive batch(1);", "arrive batch(1); hidden x;"))
    for names in ([("x", Pos("<source>", 2, 36))], (("x", Pos("<source>", 2, 36)),)):
        layer = hide(lambda ctx, pos, k, names=names: A.WlItem("hidden", pos, names))
        built = serq_frontend.compile(source=HIDE, pm=manager(layer))
        assert encode(built, spans=False) == encode(written, spans=False)
