"""A `turn;` inside the workload's `turn` block (`turn;` runs that block) is the linker's error at the
statement, as any statement the block may not hold is: the analyses the linker runs before it links the
blocks (stale.Taint, which follows `turn;` into the `turn` block) went round it to Python's recursion limit,
and the program was refused unlocated, `p.sq: error: the program nests too deeply to compile`."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError

HEAD = "stage svc : fifo;\n"
TAIL = "session {\n  turn;\n  run svc (1);\n  end;\n}\nrun { horizon 10; }\n"
RULE = "holds only `set` and `observe` (and `branch` over them)"


def _error(source: str) -> list[str]:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=source)
    return str(e.value).splitlines()


@pytest.mark.parametrize("block, line, col", [
    ("turn {\n    set n = 1;\n    turn;\n  }", 6, 5),
    ("turn {\n    branch (1) { set n = 1; } else { turn; }\n  }", 5, 38),
    ("turn {\n    set n = 1;\n    branch (n > 0) {\n      turn;\n    }\n  }", 7, 7),
])
def test_turn_in_the_turn_block_is_an_error_at_it(block, line, col):
    source = HEAD + "workload {\n  arrive poisson(1);\n  " + block + "\n}\n" + TAIL
    lines = _error(source)
    assert lines[0] == f"<source>:{line}:{col}: error: `turn;` in the workload's `turn` block: `turn` {RULE}", lines
    assert lines[1].strip().startswith("turn;") or "turn;" in lines[1], lines
    assert lines[2].index("^") == col + 1


def test_turn_in_the_turn_block_through_a_definition_is_an_error_at_it():
    source = ("def again() {\n  turn;\n}\n" + HEAD + "workload {\n  arrive poisson(1);\n  turn {\n    again();\n  }\n}\n"
              + TAIL)
    lines = _error(source)
    assert lines[0].startswith("<source>:2:3: error: `turn;` in the workload's `turn` block: "), lines
    assert "nests too deeply" not in "\n".join(lines)


@pytest.mark.parametrize("block, what", [
    ("init {\n    turn;\n  }", "`turn;` in the workload's `init` block"),
    ("turn {\n    end;\n  }", "`end;` in the workload's `turn` block"),
    ("init {\n    run svc (1);\n  }", "`run` in the workload's `init` block"),
])
def test_other_statements_the_workload_blocks_may_not_hold_are_told_as_before(block, what):
    source = HEAD + "workload {\n  arrive poisson(1);\n  " + block + "\n}\n" + TAIL
    lines = _error(source)
    assert lines[0].startswith("<source>:5:5: error: " + what), lines
