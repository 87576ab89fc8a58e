"""A plugin's sugar layer that declares a name the program declares too: the refusal names the layer and its
plugin, and says that the place it gives for the layer's declaration is the layer's statement (it said
`` `sleeper` is declared twice (first at 4:25) `` alone, 4:25 a ``sleep`` statement, which declares nothing
the user wrote). The layer is test_plugin_authors4_sugar.py's ``sleep (t);``, written again here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import serq_frontend
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


def _build(b, pos, children):
    (time,) = children
    return SSleep(time, pos)


def _rewriter(first: bool, item):
    def rewrite(module, ctx):
        used = []

        def expand(s):
            if not isinstance(s, SSleep):
                return None
            used.append(s)
            return [A.SRun([A.Var([("sleeper", None)], s.pos)], "plain", s.time, s.pos)]

        items = [A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, expand)) for i in module.items]
        if used:
            made = item(used[0].pos)
            items.insert(0 if first else len(items), made)
        return A.Module(items, module.file)

    return rewrite


def _stage(pos):
    return A.StageItem("sleeper", None, A.Kind("delay", pos), pos)


def _manager(first: bool, item=_stage):
    class Sleep:
        @hookimpl
        def serq_frontend_register_sugar(self, register):
            register(SugarLayer("sleep", GRAMMAR, {"s_sleep": _build}, _rewriter(first, item)))

    plugin = Sleep()
    return get_plugin_manager(plugins=[plugin]), f"{Sleep.__module__}.{Sleep.__qualname__}"


SLEEPS = """stage d : delay;
stage sleeper : fifo;
workload { arrive batch(3); }
session { set t0 = now; sleep (2 + serial); run d (1); observe t = now - t0; }
run { horizon 10; }
"""


def _refusal(pm, source=SLEEPS) -> list[str]:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=source, pm=pm)
    return str(e.value).splitlines()


def test_the_layers_declaration_first_is_named():
    """The layer puts its stage first: the program's at 2:7 is the second, and the first (4:25, the sleep
    statement) is said to be the layer's."""
    pm, plugin = _manager(first=True)
    assert _refusal(pm) == [
        f"<source>:2:7: error: `sleeper` is declared twice (first at 4:25, by the sugar layer 'sleep' (plugin "
        f"{plugin}) for its statement there)",
        "  stage sleeper : fifo;",
        "        ^"]


def test_the_layers_declaration_second_is_named():
    """The layer puts its stage last: the refusal is at its statement (4:25), said to be the layer's; the first is the
    program's (at its keyword, 2:1, as every such message places the first)."""
    pm, plugin = _manager(first=False)
    assert _refusal(pm) == [
        f"<source>:4:25: error: `sleeper` is declared twice (first at 2:1); here by the sugar layer 'sleep' "
        f"(plugin {plugin}) for its statement",
        "  session { set t0 = now; sleep (2 + serial); run d (1); observe t = now - t0; }",
        " " * 26 + "^"]


def test_two_declarations_of_the_program_are_told_as_before():
    pm, _ = _manager(first=True)
    lines = _refusal(pm, "let a = 1;\nlet a = 2;\n" + SLEEPS.replace("stage sleeper : fifo;\n", ""))
    assert lines[0] == "<source>:2:5: error: `a` is declared twice (first at 1:1)"
