"""Every builtin of a fixed arity, called with another number of arguments, is told its parameters.

The functions, draws and observables (language.txt §2: `~exp(mean)`, `~uniform(lo,hi)`, …; `min`, `max`,
`abs`, …, `pow`; `queue(s)`, …, `price(s, s_hit, ds)`, `blocksize(p)`) were told "`~exp` takes 1
argument(s), got 2": how many, and nothing of what they are. Each is now told its form as §2 writes it and
how many it got, in an expression and in a `let` alike.
"""

from __future__ import annotations

import pytest
from sqhelpers import told

BASE = """pool kv { cap 100; }
stage tool : delay;
stage e : step { budget 4; cost 1; }
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""

# (the call written wrong, what the builtin takes and its form as language.txt §2 names them, how many it got)
CASES = [
    ("~exp(1, 2)", "one argument, `~exp(mean)`", "2"),
    ("~det()", "one argument, `~det(x)`", "none"),
    ("~uniform(1)", "two arguments, `~uniform(lo, hi)`", "1"),
    ("~erlang(1, 2, 3)", "two arguments, `~erlang(k, mean)`", "3"),
    ("~h2(1)", "two arguments, `~h2(mean, cv2)`", "1"),
    ("~bernoulli()", "one argument, `~bernoulli(p)`", "none"),
    ("abs(1, 2)", "one argument, `abs(x)`", "2"),
    ("floor()", "one argument, `floor(x)`", "none"),
    ("ceil(1, 2)", "one argument, `ceil(x)`", "2"),
    ("sqrt()", "one argument, `sqrt(x)`", "none"),
    ("exp(1, 2)", "one argument, `exp(x)`", "2"),
    ("ln()", "one argument, `ln(x)`", "none"),
    ("pow(2)", "two arguments, `pow(x, y)`", "1"),
    ("queue()", "one argument, `queue(stage)`", "none"),
    ("busy(tool, tool)", "one argument, `busy(stage)`", "2"),
    ("work()", "one argument, `work(stage)`", "none"),
    ("used(kv, kv)", "one argument, `used(pool)`", "2"),
    ("free()", "one argument, `free(pool)`", "none"),
    ("cachedin()", "one argument, `cachedin(pool)`", "none"),
    ("holders(kv, 1)", "one argument, `holders(pool)`", "2"),
    ("queued()", "one argument, `queued(pool)`", "none"),
    ("budget_left()", "one argument, `budget_left(stage)`", "none"),
    ("price(tool, tool)", "three arguments, `price(s, s_hit, ds)`", "2"),
    ("est_lambda()", "one argument, `est_lambda(stage)`", "none"),
    ("est_rho(tool, 1)", "one argument, `est_rho(stage)`", "2"),
    ("est_wait()", "one argument, `est_wait(stage)`", "none"),
]


@pytest.mark.parametrize("call, takes, got", CASES)
def test_a_builtin_given_another_count_is_told_its_form(call, takes, got):
    name = call.split("(")[0]
    assert told(BASE.replace("tool (1);", f"tool (⟨{call});")) == f"`{name}` takes {takes}, and got {got}"


@pytest.mark.parametrize("name", ["min", "max"])
def test_min_and_max_take_one_at_least(name):
    assert told(BASE.replace("tool (1);", f"tool (⟨{name}());")) == (
        f"`{name}` takes one argument at least, `{name}(a, …)`, and got none")


@pytest.mark.parametrize("call, said", [
    ("pow(2)", "`pow` takes two arguments, `pow(x, y)`, and got 1"),
    ("blocksize(kv, 1)", "`blocksize` takes one argument, `blocksize(pool)`, and got 2"),
])
def test_in_a_let_too(call, said):
    assert told(f"let a = ⟨{call};\n" + BASE.replace("tool (1);", "tool (a);")) == said
