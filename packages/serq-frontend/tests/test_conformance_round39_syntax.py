"""program-reference.txt's `let`, `def` and `run` by hand, round 39: each rule a program breaks, refused at its
place with a caret (`⟨` marks where the error must point), and the overrides from outside the program
(`sets`, `defs`, the API's `--set` and `--def`) held to the same rules.

* let: "A named constant, folded at link time"; NAME "May not also be a session attribute"; expr "May read
  earlier constants" (const: no draw, no clock, no pool or stage state).
* def: NAME "Not a keyword, a function, a distribution, a pool, a stage or a let, and not defined twice.
  Defined before its first use; a body uses only the definitions before it, so none reaches itself"; PARAM
  "Not a keyword or a function, and not a name the body assigns"; "An argument that draws … may be passed
  only to a parameter the body reads once"; "An expression definition's body can be given from outside".
* run: horizon "required … End of the simulation"; warmup "Must be below horizon"; seed; arrivals "a
  positive integer … Only with an open workload".
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(120)

B = "stage d : delay;\npool kv { cap 10; }\nworkload { arrive batch(1); }\n"
OPEN = B.replace("batch(1)", "renewal(1)")

REFUSED = [
    # a let reads only the lets before it, and is a constant
    ("let b = ⟨a + 1;\nlet a = 1;\n" + B + "session { run d (b); }\n", "`let b` reads `a`, declared after it"),
    ("let a = ⟨a + 1;\n" + B + "session { run d (a); }\n", "`let a` is not a constant: it reads `a`"),
    ("let a = ⟨now;\n" + B + "session { run d (a); }\n", "`let a` is not a constant: it reads `now`"),
    ("let a = ⟨~exp(1);\n" + B + "session { run d (a); }\n", "it reads the draw `~exp(…)`"),
    ("let a = ⟨used(kv);\n" + B + "session { run d (a); }\n", "it reads `used(…)`"),
    ("let a = ⟨0 / 0;\n" + B + "session { run d (1); }\n", "`let a` evaluates to NaN"),
    ("let a = ⟨inf - inf;\n" + B + "session { run d (1); }\n", "`let a` evaluates to NaN"),
    ("let a = 1;\nlet ⟨a = 2;\n" + B + "session { run d (a); }\n", "`a` is declared twice"),
    # a let and an attribute have names of their own
    ("let x = 1;\n" + B + "session { ⟨set x = 2; run d (x); }\n", "`x` is a `let` constant and an attribute"),
    ("let ⟨serial = 1;\n" + B + "session { run d (1); }\n", "`serial` is a built-in attribute of a session"),
    # a definition's name
    ("def ⟨min(x) = x;\n" + B + "session { run d (min(1)); }\n", "`min` is a function of the language"),
    ("def ⟨exp(x) = x;\n" + B + "session { run d (1); }\n", "`exp` is a function of the language"),
    ("def ⟨kv(x) = x;\n" + B + "session { run d (kv(1)); }\n", "`kv` is a pool"),
    ("let k = 1;\ndef ⟨k(x) = x;\n" + B + "session { run d (k(1)); }\n", "`k` is a `let`"),
    ("def f(x) = x + 1;\ndef ⟨f(y) = y;\n" + B + "session { run d (f(1)); }\n", "`f` is defined twice"),
    # none reaches itself, and each is defined before its first use
    ("def f(x) = ⟨f(x) + 1;\n" + B + "session { run d (f(1)); }\n", "`f` uses itself"),
    ("def f(x) = ⟨g(x);\ndef g(x) = x;\n" + B + "session { run d (f(1)); }\n",
     "`g` is used before its definition"),
    # a parameter
    ("def f(⟨min) = min + 1;\n" + B + "session { run d (f(1)); }\n", "`min` cannot be a parameter of `f`: it is a function"),
    ("def f(⟨hold) = hold + 1;\n" + B + "session { run d (f(1)); }\n", "`hold` cannot be a parameter of `f`: it is a keyword"),
    ("def f(⟨x) { set x = 1; }\n" + B + "session { f(2); }\n", "`x` is a parameter of `f` and its body assigns it"),
    # an argument that draws, to a parameter read twice; the number of arguments; the kind of use
    ("def f(x) = x + x;\n" + B + "session { run d (f(⟨~exp(1))); }\n", "the argument for `x` of `f` draws"),
    ("def f(x) = x + 1;\n" + B + "session { run d (⟨f(2, 3)); }\n", "`f` takes one argument, `f(x)`, and got 2"),
    ("def f(x) = x + 1;\n" + B + "session { ⟨f(2); }\n", "`f` is an expression definition"),
    ("def s(x) { run d (x); }\n" + B + "session { observe o = ⟨s(2); }\n", "`s` is a statement definition"),
    ("def s(x) { run d (x); observe o = now; }\n" + B + "session { s(⟨now); }\n",
     "an argument of the statements `s` reads the clock"),
    # the run block
    (B + "session { run d (1); }\nrun { horizon 10; ⟨arrivals 2; }\n", "`arrivals` needs an open workload"),
    # a batch of one starts its one session (the message said "its 1 sessions")
    (B + "session { run d (1); }\nrun { horizon 10; ⟨arrivals 2; }\n",
     "`arrive batch(1)` starts its 1 session at time 0 and no more"),
    (OPEN + "session { run d (1); }\nrun { horizon 10; arrivals ⟨2.5; }\n", "arrivals is a whole number from 1"),
    (OPEN + "session { run d (1); }\nrun { horizon 10; arrivals ⟨0; }\n", "arrivals is a whole number from 1"),
    (B + "session { run d (1); }\nrun { horizon 10; seed ⟨-1; }\n", "the seed must be an integer of at least 0"),
    (B + "session { run d (1); }\nrun { horizon 10; seed ⟨1.5; }\n", "the seed must be an integer of at least 0"),
    (B + "session { run d (1); }\nrun { horizon ⟨0; }\n", "the horizon must be above 0"),
    (B + "session { run d (1); }\nrun { horizon 10; warmup ⟨-1; }\n", "the warmup must be a finite number"),
    (B + "session { run d (1); }\nrun { horizon inf; warmup ⟨inf; }\n", "the warmup must be a finite number"),
    (B + "session { run d (1); }\nrun { horizon 10; ⟨warmup 12; }\n", "warmup 12 is not below the horizon 10"),
    (B + "session { run d (1); }\nrun { horizon 10; ⟨horizon 5; }\n", "`horizon` is given twice in the run block"),
    (B + "session { run d (1); }\nrun { horizon 10; }\n⟨run { horizon 5; }\n", "a second `run { … }` block"),
]


@pytest.mark.parametrize("src, message", REFUSED, ids=[f"r{i}" for i in range(len(REFUSED))])
def test_lets_defs_and_the_run_block_refused_at_their_place(src, message):
    refused(src, message)


def test_overrides_from_outside_are_held_to_the_programs_rules():
    """`sets` names a `let` the program has; `defs` gives an expression definition's body, parsed and linked
    as the program's own (an unknown name in it, a body cut short, a statement definition's name refused)."""
    src = "let a = 1;\ndef f(x) = x;\ndef s(x) { run d (x); }\n" + B + "session { run d (a + f(1)); s(1); }\n"
    cases = [
        ({"c": 1}, {}, "<source>: error: sets['c']: the program has no `let c`"),
        ({}, {"s": "2"}, "<source>:3:5: error: defs['s']: `s` is a statement definition"),
        ({}, {"f": "y"}, "defs['f']:1:1: error: unknown name `y`"),
        ({}, {"f": "x +"}, "defs['f']:1:4: error: unexpected end of the file"),
    ]
    for sets, defs, first in cases:
        with pytest.raises(serq_frontend.CompileError) as e:
            compile_src(src, sets=sets, defs=defs)
        assert str(e.value).splitlines()[0].startswith(first), (sets, defs, str(e.value))
    # a body given from outside may draw where the definition is used once
    assert compile_src(src, sets={"a": 2}, defs={"f": "~exp(x)"}) is not None
