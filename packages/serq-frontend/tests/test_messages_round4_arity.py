"""A call of another number of arguments than it takes is told in one wording by the linker and by the IR's
validator (serq_ir.rules.takes): a builtin's, a definition's and a queue entry's. serq_ir.validate said "pow
takes 2 argument(s), not 1" of the IR the linker told "`pow` takes two arguments, `pow(x, y)`, and got 1", and
a definition's use was "`f` takes 1 argument(s), got 2: `f(x)`".
"""

from __future__ import annotations

import json

import pytest
import serq_ir
from sqhelpers import compile_src, told

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (W); } }
run { horizon 10; }
"""


def _ir_said(call: str, k: int) -> str:
    """The validator's words for the IR of ``tool (call)`` whose call (or draw) is given ``k`` arguments."""
    data = json.loads(serq_ir.encode(compile_src(BASE.replace("W", call)), spans=False))
    data["session"][0]["body"][0]["work"]["args"] = [{"kind": "Ctx", "name": "now"}] * k
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(json.dumps(data), name="x")
    said, at = str(info.value).removeprefix("error: x: ").rsplit(" - at ", 1)
    assert at == "'$.session[0].body[0].work.args'"
    return said


@pytest.mark.parametrize("fn, right, wrong", [
    ("abs", 1, 2), ("floor", 1, 0), ("exp", 1, 3), ("pow", 2, 1), ("pow", 2, 3), ("min", 1, 0), ("max", 2, 0),
    ("~exp", 1, 2), ("~uniform", 2, 1), ("~erlang", 2, 0), ("~bernoulli", 1, 2),
])
def test_the_linker_and_the_validator_say_the_same(fn, right, wrong):
    args = ", ".join(["now"] * wrong)
    source = told(BASE.replace("W", f"⟨{fn}({args})"))
    assert source == _ir_said(f"{fn}({', '.join(['now'] * right)})", wrong)
    assert "argument(s)" not in source


@pytest.mark.parametrize("item, call, said", [
    ("def f(x) = x;\n", "⟨f(1, 2)", "`f` takes one argument, `f(x)`, and got 2"),
    ("def f(a, b, c) = a + b + c;\n", "⟨f(1)", "`f` takes three arguments, `f(a, b, c)`, and got 1"),
    ("def f() = 1;\n", "⟨f(2)", "`f` takes no argument, `f()`, and got 1"),
    ("def f(a, b, c, d, e) = a;\n", "⟨f()", "`f` takes five arguments, `f(a, b, c, d, e)`, and got none"),
])
def test_a_definition_of_another_count_is_told_as_a_builtin_is(item, call, said):
    assert told(item + BASE.replace("W", call)) == said


def test_a_queue_entry_of_another_count_is_told_as_a_builtin_is():
    src = ("queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
           "queue gw : gateway { route { ⟨P.prefill (1, 2); } }\n"
           "workload { arrive batch(1); session { request gw; end; } }\nrun { horizon 5; }\n")
    assert told(src) == "`P.prefill` takes one argument, `P.prefill(p)`, and got 2"
