"""``serq ast`` writes its JSON with a loop and a stack of the open lists and objects
(serq_frontend.commands.write_json), the text that of ``json.JSONEncoder(indent=1, default=json_node)``. The
encoder (Python's own, as with an indent) is a generator a level, and hands each piece it makes up through
every level around it: ``serq ast --desugar`` of a program nested 990 holds deep made 324 million generator
steps for its 51 MB. The work is counted, not timed: the Python calls of the write (a generator's resumption
is one) grow as the program does, where they grew as its size times its depth."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import serq_frontend
from serq_frontend import ast as A
from serq_frontend.commands import json_node, write_json
from serq_frontend.diagnostics import Pos


def _nested(n: int) -> str:
    lines = ["stage s : delay;", "pool m { cap 10; }", "", "workload {", "  arrive batch(1);", "}", "", "session {"]
    for i in range(n):
        lines += ["  " * (i + 1) + "set x = 1;", "  " * (i + 1) + "hold m (1) at admission (h = 1) {"]
    lines.append("  " * (n + 1) + "run s (h);")
    lines += ["  " * (i + 1) + "}" for i in reversed(range(n))]
    return "\n".join([*lines, "}", "", "run { horizon 10; }", ""])


def encoder_text(items: Any) -> str:
    return "".join(json.JSONEncoder(indent=1, default=json_node).iterencode(items)) + "\n"


def written(items: Any, size: int = 2**16) -> str:
    parts: list[str] = []
    write_json(items, parts.append, size=size)
    assert all(len(p) < size + 10_000 for p in parts[:-1])  # given out as it is made, a part at a time
    return "".join(parts)


def calls(f) -> int:
    n = 0

    def prof(frame, event, arg):
        nonlocal n
        if event == "call":
            n += 1

    sys.setprofile(prof)
    try:
        f()
    finally:
        sys.setprofile(None)
    return n


@pytest.mark.parametrize("desugar", [False, True])
def test_the_text_is_the_encoders(desugar):
    module = serq_frontend.parse(source=_nested(120), desugar=desugar)
    expected = encoder_text(module.items)
    assert written(module.items) == expected
    assert written(module.items, size=7) == expected
    assert json.loads(expected)[3]["node"] == "SessionItem"


@dataclass(eq=False)
class Odd(A.Node):
    extra: Any
    pos: Any


@pytest.mark.parametrize("extra", [
    [], {}, (), [[]], {"a": {}}, (1, (2, ())), "é\u2028\"\\\n", [True, False, None, 0, -3, 2**80, 1e-300, 0.1],
    {3: "int", 2.5: "float", True: "bool", None: "none", "s": [np.int64(4), np.float64(0.25)]},
    [{"k": frozenset()}, {1, 2}], [Pos("p.sq", 1, 2)],
], ids=["empty list", "empty dict", "empty tuple", "nested empty", "dict of empty", "tuples", "text",
        "scalars", "keys", "objects", "a place"])
def test_values_of_every_kind_are_written_as_the_encoder_writes_them(extra):
    items = [Odd([Odd(extra, Pos("p.sq", 3, 4)), extra], Pos("p.sq", 1, 1))]
    assert written(items) == encoder_text(items)
    assert written(items, size=1) == encoder_text(items)


def test_a_node_within_itself_is_the_encoders_error():
    node = Odd(None, Pos("p.sq", 1, 1))
    node.extra = [node]
    with pytest.raises(ValueError, match="Circular reference detected"):
        encoder_text([node])
    with pytest.raises(ValueError, match="Circular reference detected"):
        written([node])
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        written([Odd(loop, Pos("p.sq", 1, 1))])
    # one object at two places is no cycle
    shared = Odd(1.5, Pos("p.sq", 2, 2))
    items = [Odd([shared, shared], Pos("p.sq", 1, 1))]
    assert written(items) == encoder_text(items)


def test_the_write_costs_the_nodes_not_their_depth():
    """The calls of writing 400 levels are about twice those of 200 (the encoder's grew as the square: each
    piece handed up through every level around it)."""
    counts = {}
    for n in (200, 400):
        module = serq_frontend.parse(source=_nested(n), desugar=True)
        counts[n] = calls(lambda module=module: write_json(module.items, lambda text: None))
    assert counts[400] < 2.15 * counts[200], counts
    module = serq_frontend.parse(source=_nested(200), desugar=True)
    old = calls(lambda: encoder_text(module.items))
    assert counts[200] * 20 < old, (counts, old)
