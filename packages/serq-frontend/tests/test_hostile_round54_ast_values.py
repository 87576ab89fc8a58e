"""``serq ast`` of a program whose plugin syntax builds a node holding what is no JSON value (docs/hooks.md,
``serq_frontend_register_sugar``): a builder may keep what its rewrite reads, its context or a set, in a
field of its node. ``serq ast`` shows such a value by its type, ``{"object": "set"}``, and a number of
numpy's as the number; the text is ``json.dumps(to_json(items), indent=1)``, as for every program. Before,
it was ``TypeError: an AST holds no set``, a traceback naming no plugin, with the part of the AST encoded
so far written to standard output (status 1)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from click.testing import CliRunner
from serq_frontend import ast as A
from serq_frontend.commands import ast_command, to_json, write_json
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
                       {"s_note": lambda ctx, pos, children: SNote(keep(ctx), pos)}, drop)

    class Note:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Note()])


@pytest.mark.parametrize(("keep", "shown"), [
    (lambda ctx: {1, 2}, {"object": "set"}),
    (lambda ctx: ctx, {"object": "BuildContext"}),
    (lambda ctx: [np.int64(3), np.float64(0.5), frozenset()], [3, 0.5, {"object": "frozenset"}]),
    (lambda ctx: {"k": (np.int32(7),)}, {"k": [7]}),
], ids=["set", "the builder's context", "numpy's numbers", "in a dict"])
def test_a_value_of_no_json_form_is_shown_by_its_type(tmp_path, keep, shown):
    prog = tmp_path / "n.sq"
    prog.write_text(SOURCE)
    pm = manager(keep)
    r = CliRunner().invoke(ast_command, [str(prog)], obj=pm)
    assert r.exit_code == 0, r.output
    items = json.loads(r.output)
    (note,) = [s for s in items[2]["body"] if s["node"] == "SNote"]
    assert note == {"node": "SNote", "extra": shown, "pos": "3:11"}
    module = serq_frontend.parse(prog, pm=pm)
    assert r.output == json.dumps(to_json(module.items), indent=1) + "\n"
    parts: list[str] = []
    write_json(module.items, parts.append, size=1)
    assert "".join(parts) == r.output
    # the desugared program holds none of it, and its AST is the kernel's
    r = CliRunner().invoke(ast_command, [str(prog), "--desugar"], obj=pm)
    assert r.exit_code == 0, r.output
    assert [s["node"] for s in json.loads(r.output)[2]["body"]] == ["SRun"]
