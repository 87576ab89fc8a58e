"""A parenthesis that holds one expression, given none or several, told as the form's arity.

`arrive poisson();` was "unexpected `)` (expected `!`, `(`, `-`, `~`, a name, a number)" and `arrive
poisson(2, 3);` "unexpected `,` (expected `)`)": neither said that poisson takes one rate. The same held for
every form of language.txt §2 whose parenthesis holds one expression: the arrivals, `ps(…)`, `fifo(…)`, a
hold's units, `reserve`, `reuse`, `cache`, `lease`, `grow`, `load`, `run`, `branch`, `branch with`, a
spill's work and test, a transfer's work and tokens, a serving form's work; and an expression's own
parenthesis given a `,` (`horizon (10, 20);`). Each is told at the token, with what the expression is, how
many were found and how the form is written; `arrive none(1);` that `none` takes none.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
stage link : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""


def one(owner: str, what: str, found: str, shape: str) -> str:
    return f"{owner} takes one expression, {what}, and found {found}: {shape}"


@pytest.mark.parametrize("form, what, shape", [
    ("poisson", "its rate", "`arrive poisson(rate);`"),
    ("renewal", "its gap", "`arrive renewal(gap);`"),
    ("closed", "its number of sessions", "`arrive closed(n);`"),
    ("batch", "its number of sessions", "`arrive batch(n);`"),
])
def test_every_arrival_form_names_its_one_argument(form, what, shape):
    assert told_in(BASE, "arrive poisson(1);", f"arrive {form}(⟨);") == "unexpected `)`: " + one(
        f"`arrive {form}`", what, "none", shape)
    assert told_in(BASE, "arrive poisson(1);", f"arrive {form}(2⟨, 3);") == "unexpected `,`: " + one(
        f"`arrive {form}`", what, "2", shape)
    # the count is of the expressions at the parenthesis' own depth: a call's `,` is inside one
    assert told_in(BASE, "arrive poisson(1);", f"arrive {form}(min(1, 2)⟨, 3, 4);") == "unexpected `,`: " + one(
        f"`arrive {form}`", what, "3", shape)


def test_arrive_none_takes_no_argument():
    assert told_in(BASE, "arrive poisson(1);", "arrive none⟨(1);") == "unexpected `(`: `arrive none` takes no argument, `arrive none;`"


@pytest.mark.parametrize("old, new, said", [
    ("stage tool : delay;", "stage tool : ps(⟨);", one("`ps`", "its capacity", "none", "`ps(capacity)`")),
    ("stage tool : delay;", "stage tool : ps(1⟨, 2);", one("`ps`", "its capacity", "2", "`ps(capacity)`")),
    ("stage tool : delay;", "stage tool : fifo(1⟨, 2);",
     one("`fifo`", "its number of servers", "2", "`fifo(2)`, or nothing for one, `fifo`")),
    ("hold kv (4)", "hold kv (⟨)", one("a hold's `kv`", "its units", "none",
                                       "`hold kv (units) { … }`, each pool with its own (`hold kv (units), Q (units) "
                                       "{ … }`)")),
    ("hold kv (4)", "hold kv (4⟨, 5)", one("a hold's `kv`", "its units", "2",
                                           "`hold kv (units) { … }`, each pool with its own (`hold kv (units), Q "
                                           "(units) { … }`)")),
    ("hold kv (4)", "hold kv (4) reserve (1⟨, 2)", one("`reserve`", "its units", "2", "`reserve (units)`")),
    ("hold kv (4)", "hold kv (4) reuse (⟨)", one("`reuse`", "its bound", "none", "`reuse (bound)`")),
    ("tool (1); } }", "tool (1); } cache (1⟨, 2); }", one("`cache`", "the units it keeps", "2", "`cache (units)`")),
    ("tool (1); } }", "tool (1); } lease kv (⟨); }", one("`lease`", "its time", "none", "`lease kv (time)`")),
    ("tool (1);", "grow kv (1⟨, 2);", one("`grow`", "its units", "2", "`grow kv (units);`")),
    ("tool (1);", "load kv (⟨);", one("`load`", "its units", "none", "`load kv (units);`")),
    ("tool (1);", "run tool (⟨);", one("`run`", "its work", "none", "`run tool (work);`")),
    ("tool (1);", "run tool, link (1⟨, 2);", one("`run`", "its work", "2", "`run tool, link (work);`")),
    ("tool (1);", "branch (1⟨, 2) { tool (1); }", one("`branch`", "its test", "2", "`branch (test) { … }`")),
    ("tool (1);", "branch with (⟨) { tool (1); }",
     one("`branch with`", "its probability", "none", "`branch with (p) { … }`")),
    ("tool (1);", "tool (1⟨, 2);", one("`tool`", "its work", "2", "`tool (work);`")),
    ("tool (1);", "tool on link (1⟨, 2);", one("`tool`", "its work", "2", "`tool (work);`")),
    ("tool (1);", "transfer (1⟨, 2) from kv to kv (1);",
     one("a transfer", "the link's work", "2", "`transfer (X) from P to Q (n);`")),
    ("tool (1);", "transfer (1) from kv to kv (1⟨, 2);",
     one("a transfer", "the tokens that move", "2", "`transfer (X) from P to Q (n);`")),
    ("cap 100;", "cap 100; spill kv via link (1⟨, 2) when (1);",
     one("a spill", "the work of its write", "2", "`spill TIER via LINK (work) when (pred);`")),
    ("cap 100;", "cap 100; spill kv via link (1) when (⟨);",
     one("a spill's `when`", "its test", "none", "`spill TIER via LINK (work) when (pred);`")),
])
def test_every_form_of_one_expression_names_it(old, new, said):
    token = "`)`" if "(⟨)" in new else "`,`"
    assert told_in(BASE, old, new) == f"unexpected {token}: {said}"


@pytest.mark.parametrize("old, new", [
    ("horizon 10;", "horizon (10⟨, 20);"),
    ("tool (1);", "tool (1 + (2⟨, 3));"),
    ("tool (1);", "set x = (1⟨, 2); tool (x);"),
])
def test_an_expressions_parenthesis_holds_one(old, new):
    assert told_in(BASE, old, new) == ("unexpected `,`: a parenthesis holds one expression; a `,` separates the arguments "
                               "of a call (`min(a, b)`) and the keys of a `by (…)`")


@pytest.mark.parametrize("old, new, said", [
    # forms of another arity keep their words
    ("stage tool : delay;", "stage tool : fifo(⟨);",
     "unexpected `)`: `fifo` takes its number of servers, `fifo(2)`, or nothing for one, `fifo`"),
    ("cap 100;", "cap 100; evict by (⟨);", "unexpected `)`: `by` takes its keys, one at least, `by (key, …)`"),
])
def test_forms_of_other_arities_are_told_as_before(old, new, said):
    assert told_in(BASE, old, new) == said


def test_the_forms_written_right_compile():
    compile_src(BASE.replace("tool (1);", "tool (min(1, 2)); branch with (0.5) { tool (1); }")
                .replace("arrive poisson(1);", "arrive renewal(~uniform(1, 2));"))
