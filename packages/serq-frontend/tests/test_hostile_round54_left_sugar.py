"""A plugin's sugar layer whose rewrite leaves its own statements or items for the linker (or that has no
rewrite): the refusal at the node says which layer and plugin built it (serq_frontend.link, from the
classes the plugins' builders built in the compile: parser.BuildContext.made). Before, it was ``STwice: a
statement the kernel does not have, left by a sugar layer``, naming neither, when the program may use the
syntax of several plugins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer


@dataclass(slots=True, eq=False)
class STwice(A.Node):
    body: list
    pos: Any
    BLOCKS = ("body",)


@dataclass(slots=True, eq=False)
class INote(A.Node):
    pos: Any


TWICE = SugarLayer("twice", '%extend stmt: "twice" block -> s_twice\n',
                   {"s_twice": lambda ctx, pos, children: STwice(children[0], pos)}, lambda module, ctx: module)
NOTE = SugarLayer("note", '%extend item: "note" ";" -> i_note\n', {"i_note": lambda ctx, pos, children: INote(pos)})


class Twice:
    @serq.hookimpl
    def serq_frontend_register_sugar(self, register):
        register(TWICE)


class Note:
    @serq.hookimpl
    def serq_frontend_register_sugar(self, register):
        register(NOTE)


def manager():
    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Twice(), Note()])


PROGRAM = "stage s : delay;\nworkload { arrive batch(1); }\nsession { twice { run s (1); } }\n"


@pytest.mark.parametrize(("source", "first"), [
    (PROGRAM, "<source>:3:11: error: STwice: a statement the kernel does not have, left by the sugar layer 'twice' "
              f"(plugin {__name__}.Twice), whose builder built it and whose rewrite (if any) left it"),
    ("note;\n" + PROGRAM.replace("twice { run s (1); }", "run s (1);"),
     "<source>:1:1: error: an item the kernel does not have (INote), left by the sugar layer 'note' (plugin "
     f"{__name__}.Note), whose builder built it and whose rewrite (if any) left it"),
], ids=["a statement", "an item"])
def test_the_layer_that_left_it_is_named(source, first):
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=source, pm=manager())
    assert str(e.value).splitlines()[0] == first


def test_a_node_no_plugin_built_is_told_as_before():
    # a rewrite that puts in a node of a class no builder of this compile built
    @dataclass(slots=True, eq=False)
    class SOwn(A.Node):
        pos: Any

    def rewrite(module, ctx):
        def swap(s):
            return [SOwn(s.pos)] if isinstance(s, A.SRun) else None

        return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, swap)) for i in module.items],
                        module.file)

    class Swap:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(SugarLayer("swap", "", {}, rewrite))

    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Swap()])
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=PROGRAM.replace("twice { run s (1); }", "run s (1);"), pm=pm)
    assert str(e.value).splitlines()[0] == ("<source>:3:11: error: SOwn: a statement the kernel does not have, left "
                                            "by a sugar layer")
