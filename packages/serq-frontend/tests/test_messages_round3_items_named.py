"""Items, clauses and options whose next word is missing or wrong, told what the word takes.

Each was the grammar's want alone: `pool { … }`, `stage : delay;`, `let = 3;` and `gauge = 1;` "(expected a
name)", `pool kv cap 100;` "(expected `[`, `{`)", `step budget 4;` and `workload arrive …` "(expected `{`)",
`memory;`, `admit via;`, `hidden;` and `lease;` "(expected a name)", `admit tool;` "(expected via)", `trace;`,
`trace x.csv;` and `use foo.sq;` "(expected a string)", `at (h = 1)` "(expected admission)", `at admission h
= 1` "(expected `(`)", `at admission (h)` "(expected `=`)", `at admission ()` "(expected a name)", `def f x`
"(expected `(`)", `def f(x) x + 1;` "(expected `=`, `{`)", `def f(1)` "(expected `)`, a name)", and `pool
kv[] { … }` "(expected `!`, `(`, …)". Each is told at the token with the form (language.txt §2).
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("old, new, said", [
    ("pool kv { cap 100; }", "pool ⟨{ cap 100; }", "unexpected `{`: `pool` names what it declares, `pool NAME { … }`"),
    ("stage tool : delay;", "stage ⟨: delay;", "unexpected `:`: `stage` names what it declares, `stage NAME : "
     "KIND;`"),
    ("pool kv { cap 100; }", "let ⟨= 3; pool kv { cap 100; }", "unexpected `=`: `let` names what it declares, `let "
     "NAME = …;`"),
    ("pool kv { cap 100; }", "gauge ⟨= 1; pool kv { cap 100; }", "unexpected `=`: `gauge` names what it declares, "
     "`gauge NAME = …;`"),
    ("pool kv { cap 100; }", "pool kv ⟨cap 100;", "unexpected `cap`: a pool's options are in a block, `pool kv { cap "
     "…; … }`"),
    ("pool kv { cap 100; }", "pool kv[⟨] { cap 100; }", "unexpected `]`: a family's size is a number in the "
     "brackets, `pool kv[N] { … }`"),
    ("stage tool : delay;", "stage tool : step ⟨budget 4;", "unexpected `budget`: `step` takes a block, `step { "
     "budget …; cost …; }`"),
    ("workload { arrive poisson(1); }", "workload ⟨arrive poisson(1);", "unexpected `arrive`: `workload` takes a "
     "block, `workload { arrive …; … }`"),
    ("stage tool : delay;", "stage tool : delay; stage e : step { budget 4; cost 1; memory⟨; }",
     "unexpected `;`: `memory` names the pool whose KV the step stage's iterations count, `memory kv;`"),
    ("cap 100;", "cap 100; admit via⟨;", "unexpected `;`: `admit via` names the step stage whose scheduler admits "
     "the pool's queue, `admit via E;`"),
    ("cap 100;", "cap 100; admit ⟨tool;", "unexpected `tool`: `admit` is followed by `via` and the step stage, "
     "`admit via E;`"),
    ("arrive poisson(1);", "arrive poisson(1); hidden⟨;", "unexpected `;`: `hidden` names the attributes the "
     "scheduler may not read, `hidden a, b;`"),
    ("arrive poisson(1);", "arrive poisson(1); trace⟨;", 'unexpected `;`: `trace` takes its file\'s name in double '
     'quotes, `trace "file.csv";`'),
    ("arrive poisson(1);", "arrive poisson(1); trace ⟨x.csv;", 'unexpected `x`: `trace` takes its file\'s name in '
     'double quotes, `trace "file.csv";`'),
    ("pool kv { cap 100; }", "use ⟨foo.sq; pool kv { cap 100; }", 'unexpected `foo`: `use` takes its file\'s name '
     'in double quotes, `use "file.sq";`'),
    ("tool (1); } }", "tool (1); } lease⟨; }", "unexpected `;`: `lease` names one of the hold's pools, then its "
     "time, `lease P (time)`"),
])
def test_the_item_or_option_says_what_its_word_takes(old, new, said):
    assert told_in(BASE, old, new) == said


AT = "`at admission (x = e, …)`"


@pytest.mark.parametrize("new, said", [
    ("hold kv (4) at ⟨(h = 1)", "unexpected `(`: `at` is followed by `admission` and the bindings, " + AT),
    ("hold kv (4) at admission ⟨h = 1", "unexpected `h`: `at admission` takes its bindings in parentheses, " + AT),
    ("hold kv (4) at admission (h⟨)", "unexpected `)`: a binding gives its name a value, `at admission (h = …)`"),
    ("hold kv (4) at admission (⟨)", "unexpected `)`: `at admission` binds a name to a value, one at least, each "
     "after a `,`, " + AT),
    ("hold kv (4) at admission (h = 1, ⟨)", "unexpected `)`: `at admission` binds a name to a value, one at least, "
     "each after a `,`, " + AT),
])
def test_at_admission_says_its_form(new, said):
    assert told_in(BASE, "hold kv (4)", new) == said


def test_a_misspelt_admission_is_offered_the_word():
    assert told_in(BASE, "hold kv (4)", "hold kv (4) at ⟨admision (h = 1)").endswith("(did you mean `admission`?)")


@pytest.mark.parametrize("new, said", [
    ("def f ⟨x = x;", "unexpected `x`: a definition's parameters are in parentheses after its name, `def f(a, …) …` "
     "(`def f() …` for none)"),
    ("def f(x) ⟨x + 1;", "unexpected `x`: a definition is `def f(…) = expression;` or `def f(…) { statements }`"),
    ("def f(⟨1) = 1;", "unexpected `1`: a definition's parameters are names, `def f(a, b) …`"),
    ("def f(x, ⟨) = x;", "unexpected `)`: a definition's parameters are names, `def f(a, b) …`"),
])
def test_a_definitions_header_says_its_form(new, said):
    assert told_in(BASE, "pool kv { cap 100; }", new + "\npool kv { cap 100; }") == said


def test_the_forms_compile():
    compile_src(BASE.replace("hold kv (4)", "hold kv (4) at admission (h = 1, g = 2)")
                .replace("pool kv { cap 100; }", "def f(x) = x + 1;\nlet a = f(1);\ngauge g = used(kv[0]);\n"
                         "pool kv[2] { cap 100; }").replace("hold kv", "hold kv[0]"))
