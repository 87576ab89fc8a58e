"""A statement's or item's word followed by something other than what it takes, told in the word's terms.

Each was the grammar's wants alone: `release;` and `drop;` "unexpected `;` (expected a name)", `run s (1)
growing;` the same, `hold (4) kv { … }` "unexpected `(` (expected a name)", `set x 1;` and `observe y;`
"(expected `=`)", `branch (1) tool (1);` and `loop tool (1);` "(expected `{`)", `stage tool delay;`
"(expected `:`, `[`)", `prefill;` the tokens an expression begins with, and `choose in 2 by (…)` "two names
side by side, `choose in`". Each is told at the token with what the word takes and the form (language.txt §2).
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
stage prefill : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("old, new, said", [
    ("tool (1);", "release⟨;", "unexpected `;`: `release` names the pool whose allocation it gives back (or whose "
     "lease it ends), `release P;`"),
    ("tool (1);", "drop⟨;", "unexpected `;`: `drop` names the pool whose cached prefix it discards, `drop P;`"),
    ("tool (1);", "run tool (1) growing⟨;", "unexpected `;`: `growing` names the pool the run grows, `run S (work) "
     "growing P;`"),
    ("tool (1);", "prefill (1) growing⟨;", "unexpected `;`: `growing` names the pool the run grows, `prefill (W) "
     "growing P;`"),
    ("hold kv (4)", "hold ⟨(4) kv", "unexpected `(`: `hold` names its pool, then the pool's units, `hold P (units) "
     "{ … }`"),
    ("tool (1);", "set x ⟨1; tool (x);", "unexpected `1`: `set` gives a name its value with `=`, `set x = …;`"),
    ("tool (1);", "observe y⟨; tool (1);", "unexpected `;`: `observe` records a sample of a value with `=`, "
     "`observe y = …;`"),
    ("tool (1);", "branch (1) ⟨tool (1);", "unexpected `tool`: a branch takes a block after its parenthesis, "
     "`branch (test) { … }`"),
    ("tool (1);", "branch with (0.5) ⟨tool (1);", "unexpected `tool`: a branch takes a block after its "
     "parenthesis, `branch with (p) { … }`"),
    ("tool (1);", "loop ⟨tool (1);", "unexpected `tool`: `loop` takes a block, `loop { … }`"),
    ("stage tool : delay;", "stage tool ⟨delay;", "unexpected `delay`: a stage's kind follows `:`, `stage tool : "
     "KIND;`"),
    ("tool (1);", "prefill⟨;", "unexpected `;`: `prefill` takes its work (seconds, or tokens on a step engine), "
     "`prefill (W);`"),
    ("tool (1);", "choose ⟨in 2 by (1);", "unexpected `in`: `choose` names its index first, `choose k in n by "
     "(key, …);`"),
])
def test_the_word_says_what_it_takes(old, new, said):
    assert told_in(BASE, old, new) == said


def test_the_forms_compile():
    compile_src(BASE.replace("tool (1);", "tool (1); set x = 1; observe y = x; loop { tool (1); end; }")
                .replace("hold kv (4) {", "hold kv (4) { release kv;"))
