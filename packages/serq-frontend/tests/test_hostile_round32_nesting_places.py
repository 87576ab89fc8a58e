"""A program nested more than 1 000 deep is refused at a place, whatever node passes the limit.

The nesting walk (``serq_frontend._check_nesting``) counted a position (``Pos``, a dataclass: an aggregate's
``var_pos``, a definition's ``name_pos``) as a level, and refused at the first level beyond 1 000 at that
node's own position, which a position does not have: ``max j in 2 (max j in 2 (…))`` of 997 or of 1 100
aggregates was ``deep.sq: error: the program nests more than 1000 deep here``, without a line, a column, the
source line or a caret (the hostile-program fuzz test's shape ``aggregates``). A position is no level now,
and a node without a position of its own would be refused at its nearest enclosing node's.

By hand: the module is level 1, the session 2, the ``set`` 3, the k-th aggregate k + 3 and the innermost
body after n aggregates n + 4. Each ``max j in 2 (`` is 12 characters from column 11.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)


def deep(n: int) -> str:
    e = "y"
    for _ in range(n):
        e = f"max j in 2 ({e})"
    return (f"stage svc : fifo;\nworkload {{ arrive poisson(1); }}\nsession {{\n  set y = ~exp(1);\n  set x = {e};\n"
            "  run svc (0.01);\n  observe o = x;\n  end;\n}\nrun { horizon 30; }\n")


def first_line(source: str) -> str:
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=source)
    return str(info.value).splitlines()[0]


@pytest.mark.parametrize(("n", "col"), [
    (997, 11 + 12 * 997),    # the innermost body, y, level 997 + 4 = 1001
    (998, 11 + 12 * 997),    # the 998th aggregate, level 998 + 3 = 1001
    (1100, 11 + 12 * 997),   # the same: the walk stops at the first node beyond 1 000
])
def test_the_node_beyond_1000_is_named_at_its_place(n, col):
    line = first_line(deep(n))
    assert line.startswith(f"<source>:5:{col}: error: the program nests more than 1000 deep here"), line


def test_996_aggregates_nest_1000_deep_and_meet_the_next_rule():
    # the innermost body at level 1000: within the limit; the index rule speaks, at the second aggregate
    line = first_line(deep(996))
    assert line.startswith("<source>:5:27: error: `max j in …`: `j` is the index of the aggregate around it"), line


def test_the_command_shows_the_line_and_a_caret(tmp_path):
    (tmp_path / "deep.sq").write_text(deep(1100))
    r = subprocess.run([sys.executable, "-m", "serq", "check", "deep.sq"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    head, quoted, caret = r.stderr.splitlines()[:3]
    col = 11 + 12 * 997
    assert head.startswith(f"deep.sq:5:{col}: error: the program nests more than 1000 deep here")
    # the long line is quoted around the column, the caret under the `m` of the 998th aggregate
    assert caret.strip() == "^" and quoted[len(caret) - 1:].startswith("max j in 2 (")
