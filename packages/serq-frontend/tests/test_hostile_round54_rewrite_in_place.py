"""A plugin's sugar layer whose rewrite adds its declaration to the module it is handed, in place, and
returns that module (rather than a new one): a name the program declares too is refused naming the layer
and its plugin, as for a rewrite that returns a new module (test_known_defects_round44_sugar_declared_twice).
Before, the declarations were compared before and after on the one module, so the layer added none, and the
refusal was `` `sleeper` is declared twice (first at 2:1)`` at the layer's statement, which declares nothing
the user wrote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import serq_frontend
import serq_frontend.plugin
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_frontend import CompileError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

GRAMMAR = '%extend stmt: "sleep" "(" expr ")" ";"   -> s_sleep\n'


@dataclass(slots=True, eq=False)
class SSleep(A.Node):
    time: Any
    pos: Any
    EXPRS = ("time",)


def rewrite_in_place(module, ctx):
    used = []

    def expand(s):
        if not isinstance(s, SSleep):
            return None
        used.append(s)
        return [A.SRun([A.Var([("sleeper", None)], s.pos)], "plain", s.time, s.pos)]

    module.items[:] = [A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, expand)) for i in module.items]
    if used:
        module.items.append(A.StageItem("sleeper", None, A.Kind("delay", used[0].pos), used[0].pos))
    return module


class Sleep:
    @hookimpl
    def serq_frontend_register_sugar(self, register):
        register(SugarLayer("sleep", GRAMMAR, {"s_sleep": lambda ctx, pos, children: SSleep(children[0], pos)},
                            rewrite_in_place))


SLEEPS = """stage d : delay;
stage sleeper : fifo;
workload { arrive batch(3); }
session { set t0 = now; sleep (2 + serial); run d (1); observe t = now - t0; }
run { horizon 10; }
"""


def manager():
    return get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Sleep()])


def test_the_layers_declaration_added_in_place_is_named():
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=SLEEPS, pm=manager())
    assert str(e.value).splitlines() == [
        "<source>:4:25: error: `sleeper` is declared twice (first at 2:1); here by the sugar layer 'sleep' "
        f"(plugin {__name__}.Sleep) for its statement",
        "  session { set t0 = now; sleep (2 + serial); run d (1); observe t = now - t0; }",
        " " * 26 + "^"]


def test_the_layer_in_place_compiles_a_program_that_declares_no_sleeper():
    program = serq_frontend.compile(source=SLEEPS.replace("stage sleeper : fifo;\n", ""), pm=manager())
    assert [s.name for s in program.stages] == ["d", "sleeper"]
    assert [type(s).__name__ for s in program.session] == ["Set", "Run", "Run", "Observe"]
