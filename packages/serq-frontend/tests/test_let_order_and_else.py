"""Two messages that named the wrong cause. A `let` reading a `let` declared after it said the later
one was 'not a constant' (it is one: the order is what is wrong). `else branch (…) { … }` (or `else if`,
`else run …;`) said only 'unexpected `branch` (expected `{`)', not that `else` takes a block."""

from __future__ import annotations

import pytest
from sqhelpers import refused

TAIL = "stage svc : fifo;\nworkload { arrive poisson(1); }\n"


def test_a_let_reading_a_later_let():
    refused("let a = ⟨b + 1;\nlet b = 2;\n" + TAIL + "session { run svc (a); }\n",
            "`let a` reads `b`, declared after it (at 2:1); a `let` reads only the ones before it")


def test_a_let_reading_a_name_no_let_gives_is_still_not_a_constant():
    refused("let a = ⟨bb + 1;\nlet b = 2;\n" + TAIL + "session { run svc (a); }\n", "`let a` is not a constant")


@pytest.mark.parametrize("after", ["branch (2) { end; }", "run svc (2);"])
def test_else_takes_a_block(after):
    refused(TAIL + f"session {{\n  branch (1) {{ run svc (1); }} else ⟨{after}\n}}\n", "`else` takes a block, `else { … }`")
