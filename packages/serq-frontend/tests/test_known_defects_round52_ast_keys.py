"""A dict's keys that are not strings, in a plugin's node, are written by one rule in ``serq ast``'s text and in
``serq_frontend.commands.to_json``: Python's JSON encoder's (``True`` is ``"true"``, ``None`` ``"null"``, ``1.5``
``"1.5"``, an infinity ``"Infinity"``, NaN ``"NaN"``). Before, ``to_json`` wrote ``str(k)`` (``"True"``,
``"None"``, ``"inf"``), and so did ``serq ast`` for a dict held in a node's field, while for a dict in a list it
wrote the encoder's ``"true"``, and for a float key that is no JSON number ``"\\"inf\\""``, or ``"null"`` for
NaN, which ran into None's key and lost one of the two."""

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
                       {"s_note": lambda ctx, pos, children: SNote(keep, pos)}, drop)

    class Note:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Note()])


KEYS = {True: 1, False: 2, None: 3, 7: 4, 1.5: 5, math.inf: 6, -math.inf: 7, math.nan: 8, np.int64(9): 9,
        "s": 10}
# the encoder's own text of those keys (json.dumps's), written out by hand
ENCODED = {"true": 1, "false": 2, "null": 3, "7": 4, "1.5": 5, "Infinity": 6, "-Infinity": 7, "NaN": 8, "9": 9,
           "s": 10}


def notes(tmp_path, keep):
    prog = tmp_path / "n.sq"
    prog.write_text(SOURCE)
    pm = manager(keep)
    r = CliRunner().invoke(ast_command, [str(prog)], obj=pm)
    assert r.exit_code == 0, r.output
    module = serq_frontend.parse(prog, pm=pm)
    tree = to_json(module.items)
    # the text is the whole tree's, json.dumps of to_json, and a write in the smallest parts the same
    assert r.output == json.dumps(tree, indent=1, allow_nan=False) + "\n"
    parts: list[str] = []
    write_json(module.items, parts.append, size=1)
    assert "".join(parts) == r.output
    (shown,) = [s["extra"] for s in json.loads(r.output)[2]["body"] if s["node"] == "SNote"]
    (made,) = [s["extra"] for s in tree[2]["body"] if s["node"] == "SNote"]
    return shown, made


@pytest.mark.parametrize("where", ["a field", "a list", "a dict"])
def test_keys_are_the_encoders_in_the_text_and_in_to_json(tmp_path, where):
    keep = {"a field": KEYS, "a list": [KEYS], "a dict": {"k": KEYS}}[where]
    want = {"a field": ENCODED, "a list": [ENCODED], "a dict": {"k": ENCODED}}[where]
    shown, made = notes(tmp_path, keep)
    assert shown == made == want
    # what the encoder itself writes (numpy's integer, a key it takes none of, written as the int it is)
    plain = {k: v for k, v in KEYS.items() if not isinstance(k, np.integer)}
    assert json.loads(json.dumps(plain)) == {k: v for k, v in ENCODED.items() if v != 9}


def test_a_key_the_encoder_takes_none_of_is_its_type(tmp_path):
    shown, made = notes(tmp_path, [{(1, 2): 1, frozenset(): 2}])
    assert shown == made == [{"<tuple>": 1, "<frozenset>": 2}]
