"""``serq ast`` of a program whose plugin syntax leaves a float that is no JSON number in its AST (a builder's
``Num(nan)``, an infinity kept in a node's field) prints valid JSON: NaN as ``null``, as the JSON report writes
it, and an infinity as ``"inf"`` / ``"-inf"``, as the IR writes it. Before, Python's encoder wrote ``NaN`` and
``-Infinity``, which a strict JSON reader refuses. A program of finite numbers prints what it printed."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from click.testing import CliRunner
from serq_frontend import ast as A
from serq_frontend.commands import ast_command, json_node, to_json, write_json
from serq_frontend.sugar import SugarLayer

SOURCE = "stage s : delay;\nworkload { arrive batch(1); }\nsession { note hi; run s (1); }\n"


@dataclass(eq=False)
class SNote(A.Node):
    extra: Any
    pos: Any


def drop(module, ctx):
    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(
        b, lambda s: [] if isinstance(s, SNote) else None)) for i in module.items], module.file)


def manager(keep):
    layer = SugarLayer("note", '%extend stmt: "note" NAME ";" -> s_note\n',
                       {"s_note": lambda ctx, pos, children: SNote(keep(pos), pos)}, drop)

    class Note:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Note()])


def strict(text: str) -> Any:
    """``json.loads`` that refuses NaN and the infinities (Python's reader takes them unless told)."""
    def refuse(word):
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(("keep", "shown"), [
    (lambda pos: math.nan, None),
    (lambda pos: [math.inf, -math.inf, 2.5], ["inf", "-inf", 2.5]),
    (lambda pos: A.Num(math.nan, pos), {"node": "Num", "value": None, "pos": "3:11"}),
    (lambda pos: {"k": (A.Num(-math.inf, pos),)}, {"k": [{"node": "Num", "value": "-inf", "pos": "3:11"}]}),
    (lambda pos: [np.float64("nan"), np.float32("inf")], [None, "inf"]),
], ids=["nan", "infinities in a list", "a Num of nan", "in a dict", "numpy's"])
def test_a_number_json_has_not_is_written_as_json(tmp_path, keep, shown):
    prog = tmp_path / "n.sq"
    prog.write_text(SOURCE)
    pm = manager(keep)
    r = CliRunner().invoke(ast_command, [str(prog)], obj=pm)
    assert r.exit_code == 0, r.output
    assert "NaN" not in r.output and "Infinity" not in r.output
    items = strict(r.output)
    (note,) = [s for s in items[2]["body"] if s["node"] == "SNote"]
    assert note == {"node": "SNote", "extra": shown, "pos": "3:11"}
    # the whole-tree form says the same, and a write in the smallest parts too
    module = serq_frontend.parse(prog, pm=pm)
    assert r.output == json.dumps(to_json(module.items), indent=1, allow_nan=False) + "\n"
    parts: list[str] = []
    write_json(module.items, parts.append, size=1)
    assert "".join(parts) == r.output


def test_finite_numbers_are_written_as_before(tmp_path):
    """Python's encoder's text for a program of finite numbers, 1e-300 and 1e300 among them."""
    prog = tmp_path / "f.sq"
    prog.write_text("stage s : delay;\nworkload { arrive batch(3); }\n"
                    "session { set a = 1e-300; set b = 1e300; set c = 0.1; run s (a + b * c); }\n")
    r = CliRunner().invoke(ast_command, [str(prog)], obj=serq.get_plugin_manager(
        autoload=False, plugins=[serq_frontend.plugin]))
    assert r.exit_code == 0, r.output
    module = serq_frontend.parse(prog)
    assert r.output == "".join(json.JSONEncoder(indent=1, default=json_node).iterencode(module.items)) + "\n"
    values = [s["value"]["value"] for s in strict(r.output)[2]["body"] if s["node"] == "SSet"]
    assert values == [1e-300, 1e300, 0.1]
