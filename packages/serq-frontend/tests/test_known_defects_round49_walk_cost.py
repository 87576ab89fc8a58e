"""``serq ast --desugar`` of a program nested 990 holds deep, each with an ``at admission`` binding, took some
10 s in its sugar layers: ``serq_frontend.ast.walk_stmts`` was a generator a block, so each statement was
handed up through every enclosing one (a walk cost the statements times their depth), and the admission layer
walked the body of every hold again to learn which bindings it reads (the sum of every hold's body: the size
times the depth again). Now the walk is one generator with a stack, and the layer looks a name's reads up in
an index of the module made once (sugar.admission._Reads). The work is counted, not timed: the Python calls
(a generator's resumption is one) of a walk, and of the whole parse with its sugar, grow as the program does.
The order of the walk is the recursive one, on every program of examples/ (and every program's IR was
compared before and after: byte-identical)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_frontend.ast as A

ROOT = Path(__file__).resolve().parents[3]


def _nested(n: int, head: str, inner: str = "run s (h);") -> str:
    lines = ["stage s : delay;", "pool m { cap 10; }", "", "workload {", "  arrive batch(1);", "}", "", "session {"]
    for i in range(n):
        lines += ["  " * (i + 1) + "set x = 1;", "  " * (i + 1) + head]
    lines.append("  " * (n + 1) + inner)
    lines += ["  " * (i + 1) + "}" for i in reversed(range(n))]
    return "\n".join([*lines, "}", "", "run { horizon 10; }", ""])


def _session(module):
    (item,) = [item for item in module.items if type(item) is A.SessionItem]
    return item.body


def _calls(f, code=None) -> int:
    """The Python calls made while ``f()`` runs (a generator's resumption counts as one); with ``code``, those
    of that function alone (a collection of garbage may run a finalizer among them)."""
    n = 0

    def prof(frame, event, arg):
        nonlocal n
        if event == "call" and (code is None or frame.f_code is code):
            n += 1

    sys.setprofile(prof)
    try:
        f()
    finally:
        sys.setprofile(None)
    return n


def _recursive(stmts):
    for s in stmts:
        yield s
        for b in A.blocks_of(s):
            yield from _recursive(b)


@pytest.mark.parametrize("n", [100, 400])
def test_a_walk_costs_a_call_a_statement(n):
    """2n statements (a set and a branch at each of n levels) and the run: 2n + 2 resumptions of the one
    generator (the first and the last, which ends it). The recursive walk made
    about n² (each statement handed up through the generators of the blocks around it)."""
    module = serq_frontend.parse(source=_nested(n, "branch (1) {"))
    block = _session(module)
    got = []
    calls = _calls(lambda: got.extend(A.walk_stmts(block)), A.walk_stmts.__code__)
    assert len(got) == 2 * n + 1
    assert got == list(_recursive(block))
    assert calls == len(got) + 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("inner, read", [("run s (h);", True), ("run s (1);", False)])
def test_the_sugar_of_nested_admissions_grows_as_the_program(inner, read):
    """Nested holds, each binding h at its admission: the calls of the whole parse with its sugar at 400
    levels are about twice those at 200 (the walks of every hold's body made them grow as the square of the
    depth, 2.5 times and more). The bindings the bodies read are set at their tops as before: where the
    innermost statement reads h, every hold's body reads it (the statement is in each), and none where it
    does not."""
    head = "hold m (1) at admission (h = 1) {"
    counts = {}
    for n in (200, 400):
        src = _nested(n, head, inner)
        serq_frontend.parse(source=src, desugar=True)  # (the grammar and the layers loaded first)
        out: list = []
        counts[n] = _calls(lambda src=src, out=out: out.append(serq_frontend.parse(source=src, desugar=True)))
        holds = [s for s in A.walk_stmts(_session(out[0])) if isinstance(s, A.SHold)]
        assert len(holds) == n
        tops = [s.body[0].name if isinstance(s.body[0], A.SSet) and s.body[0].name == "h" else None for s in holds]
        assert tops == [("h" if read else None)] * n
        assert all(not s.bindings for s in holds)
    assert counts[400] < 2.15 * counts[200], counts


def test_the_walk_is_in_source_order_on_every_example():
    files = subprocess.run(["git", "ls-files", "examples/*.sq"], capture_output=True, text=True, cwd=ROOT,
                           timeout=30).stdout.split()
    assert len(files) >= 20
    for f in files:
        module = serq_frontend.parse(str(ROOT / f), desugar=True)
        for item in module.items:
            for block in A.item_blocks(item):
                assert list(A.walk_stmts(block)) == list(_recursive(block)), f
