"""A block, a `/`, an operator or a parenthesis where its construct's word or operand is missing, told so.

Found by mutating the examples (a token left out or replaced): `{ horizon 10; }` with its `run` left out was
"unexpected `{` (expected a name)"; a `{` where a statement begins "(expected `;`, `}`, a name)"; a comment
with one `/` "unexpected `/` (expected a name)"; `arrive (3);` "(expected batch, closed, poisson, renewal,
none)"; `~exp(+)` and `f(, a)` and `cost ();` the tokens an operand begins with; `~ ~exp(1)` "(expected a name)";
`(free(kv) > 1) { … }` (a test without its `branch`) "(expected `}`, a name)"; `lease set o = 1;` (a hold's
clause where a statement begins) "unexpected `set` (expected `(`, `.`, `[`)". Each is told what is missing.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
ITEM = ("unexpected `{`: a block where an item begins; an item begins with its word (`session { … }`, `workload { … "
        "}`, `run { … }`, `pool NAME { … }`)")
STATEMENT = ("unexpected `{`: a block where a statement begins; a block follows its statement's header (`branch "
             "(test) { … }`, `loop { … }`, `hold P (units) { … }`)")
BEFORE = ("an operand is missing before it (a number, a name, a call or a parenthesised expression; `-`, `!` and `~` "
          "are the operators an operand may begin with)")


@pytest.mark.parametrize("old, new, said", [
    ("run { horizon 10; }", "⟨{ horizon 10; }", "unexpected `{`: a block where an item begins, of the run's "
     "settings: `run { horizon …; }`"),
    ("workload { arrive poisson(1); }", "⟨{ arrive poisson(1); }", "unexpected `{`: a block where an item begins, "
     "of the workload's items: `workload { … }`"),
    ("session { hold kv (4) { tool (1); } }", "⟨{ hold kv (4) { tool (1); } }", ITEM),
    ("tool (1);", "tool (1); ⟨{ tool (1); }", STATEMENT),
    ("tool (1);", "tool (1); ⟨/ a comment", "unexpected `/`: a comment runs from `//` to the end of the line"),
    ("arrive poisson(1);", "arrive ⟨(1);", "unexpected `(`: `arrive` names its form before the parenthesis, "
     "`arrive poisson(rate);`, `arrive renewal(gap);`, `arrive closed(n);`, `arrive batch(n);` (or `arrive "
     "none;`)"),
    ("tool (1);", "tool (~exp(⟨+));", "unexpected `+`: " + BEFORE),
    ("tool (1);", "tool (min(⟨, 1));", "unexpected `,`: an expression is missing before it (a `,` separates "
     "arguments or keys, each one)"),
    ("tool (1);", "tool ((⟨));", "unexpected `)`: the parentheses hold no expression"),
    ("cap 100;", "cap (⟨);", "unexpected `)`: the parentheses hold no expression"),
    ("tool (1);", "tool (~ ⟨~exp(1));", "unexpected `~`: a draw is `~` and its distribution's name, `~exp(mean)`, "
     "`~det(x)`, `~uniform(lo, hi)`, `~erlang(k, mean)`, `~h2(mean, cv2)`, `~bernoulli(p)`"),
    ("tool (1);", "⟨(free(kv) > 1) { tool (1); }", "unexpected `(`: a statement begins with its word; a test is "
     "`branch (test) { … }`, a value `set x = (…);`"),
    ("tool (1);", "tool (1); ⟨lease set o = 1;", "`lease` begins no statement: it is a hold's clause, after its "
     "block, `hold P (u) { … } lease P (time)`"),
    ("tool (1);", "tool (1); ⟨cache x;", "`cache` begins no statement: it is a hold's clause, after its block, "
     "`hold P (u) { … } cache (units)`"),
    ("stage tool : delay;", "⟨: tool : delay;", "unexpected `:`: an item begins with its word; a stage is `stage "
     "NAME : KIND;`, a queue `queue NAME : ROLE { … }`"),
    ("tool (1);", "turn ⟨{ tool (1); }", "unexpected `{`: a session's `turn;` takes no block (the next turn's "
     "attributes are the workload's `turn { … }`, an item of `workload { … }`)"),
    ("tool (1);", "set x = (⟨; tool (1);", "unexpected `;`: an expression and its `)` are missing after the `(`"),
    ("arrive poisson(1);", "arrive ⟨%(1);", "unexpected `%`: `arrive` names its form before the parenthesis, "
     "`arrive poisson(rate);`, `arrive renewal(gap);`, `arrive closed(n);`, `arrive batch(n);` (or `arrive "
     "none;`)"),
    # a number or an operator where an item, a statement or a block's field begins: what begins one there
    ("pool kv { cap 100; }", "pool kv { cap 100; ⟨5; }", "unexpected `5`: a pool's option begins with its word "
     "(`cap`, `block`, `evict`, `preempt`, `queue`, `reserve`, `cache`, `admit`, `spill`)"),
    ("stage tool : delay;", "stage tool : step { budget 4; ⟨5; }", "unexpected `5`: a step stage's field begins "
     "with its word (`budget`, `cost`, `chunk`, `serve`, `memory`)"),
    ("horizon 10;", "horizon 10; ⟨5;", "unexpected `5`: the run block's settings begin with their word (`horizon`, "
     "`warmup`, `seed`, `arrivals`)"),
    ("arrive poisson(1);", "arrive poisson(1); ⟨5;", "unexpected `5`: a workload's item begins with its word "
     "(`arrive`, `trace`, `hidden`, `init`, `turn`, `session`)"),
    ("tool (1);", "⟨- set K = 1; tool (1);", "unexpected `-`: a statement begins with one of the language's words "
     "(`run`, `hold`, `set`, …), or calls a definition, `NAME(…);`"),
    ("pool kv { cap 100; }", "pool kv { cap 100; }\n⟨5 NP = 2;", "unexpected `5`: an item begins with its word "
     "(`let`, `def`, `pool`, `stage`, `queue`, `workload`, `session`, `server`, `run`, `share`, `gauge`, `use`), "
     "or is `READER pull SOURCE …;`"),
    ("hold kv (4)", "hold kv (4) ⟨admission (h = 1)", "unexpected `admission`: it follows `at`, `at admission (x = "
     "e, …)`"),
    ("hold kv (4)", "hold kv (4) ⟨hold kv (1)", "unexpected `hold`: a hold's pools are separated by `,`, `hold P (u), "
     "Q (u) { … }` (a hold inside another stands in its block)"),
    # a pool's own `reserve held;` keeps its words
    ("cap 100;", "cap 100; reserve ⟨hold;", "unexpected `hold`: a pool's option is `reserve held;` (each live "
     "hold's unallocated reservation counts against later admissions); the units a hold reserves are its clause, "
     "`hold P (u) reserve (r) { … }`"),
])
def test_the_missing_word_or_operand_is_told(old, new, said):
    assert told_in(BASE, old, new) == said


def test_a_declaration_cut_short_at_the_end_of_the_file():
    # (the end of the file is said as such, not "the the end of the file")
    assert told("stage tool : delay; pool⟨") == (
        "unexpected end of the file: `pool` names what it declares, `pool NAME { … }`")


def test_the_forms_compile():
    compile_src(BASE.replace("tool (1);", "tool (~exp(-(1 - 2)) + min(1, 2)); // a comment\n"))


def test_a_number_first_in_the_file():
    assert told("⟨5 NP = 2;\n" + BASE) == (
        "unexpected `5`: an item begins with its word (`let`, `def`, `pool`, `stage`, `queue`, `workload`, "
        "`session`, `server`, `run`, `share`, `gauge`, `use`), or is `READER pull SOURCE …;`")


def test_a_number_in_a_queue():
    src = "queue P : prefill { pool kv { cap 9; } serve fifo; ⟨5; }\nrun { horizon 5; }\n"
    assert told(src) == ("unexpected `5`: a queue's item begins with its word (`pool`, `serve`, `nic`, or an "
                         "entry's verb)")


def test_a_single_slash_first_in_the_file():
    assert told("⟨/ a comment\n" + BASE) == "unexpected `/`: a comment runs from `//` to the end of the line"
