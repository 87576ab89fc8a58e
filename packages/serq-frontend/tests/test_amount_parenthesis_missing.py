"""A statement that takes an amount in parentheses written without it (`hold kv { … }`, `grow kv;`,
`run s;`, a hold's `reserve`, `reuse`, `cache` or `lease` without its parenthesis, `branch x { … }`) was
only "unexpected `{`" or "unexpected `;` (expected `(`)": it names the statement's word and how it is
written, at the token found where the `(` should be. A hold's clause on the wrong side of its block
(`reuse`, `reserve` or `at admission` after it, `cache` before it) says which side it goes on
(language.txt §3: `hold P (u) [reserve (r)] … [reuse (ρ)] [at admission (…)] { … } [cache (ℓ)] [lease P (t)]`)."""

from __future__ import annotations

import pytest
from sqhelpers import refused

HEAD = "pool kv { cap 100; }\npool kv2 { cap 100; }\nstage s : fifo;\nworkload { arrive poisson(1); }\n"


def _session(stmt: str) -> str:
    return HEAD + "session {\n  " + stmt + "\n}\n"


def test_a_hold_without_its_units_is_told_at_the_brace_with_a_caret():
    e = refused(_session("hold kv ⟨{ run s (1); }"),
                "unexpected `{`: `hold` takes its units in parentheses after each pool, "
                "`hold kv (units) { … }`")
    assert str(e).splitlines()[1:] == ["    hold kv { run s (1); }", "            ^"]


@pytest.mark.parametrize("stmt, message", [
    ("hold kv (1), kv2 ⟨{ run s (1); }", "unexpected `{`: `hold` takes its units in parentheses after each "
                                         "pool, `hold kv2 (units) { … }`"),
    ("grow kv⟨;", "unexpected `;`: `grow` takes its units in parentheses after the pool, `grow kv (units);`"),
    ("load kv⟨;", "unexpected `;`: `load` takes its units in parentheses after the pool, `load kv (units);`"),
    ("run s⟨;", "unexpected `;`: `run` takes its work in parentheses after the stage, `run s (work);`"),
    ("run s prefill⟨;", "`run s prefill (work);`"),
    ("run⟨;", "`run S (work);`"),
    ("hold kv (1) reserve ⟨{ run s (1); }", "unexpected `{`: `reserve` takes its units in parentheses, "
                                            "`reserve (units)`"),
    ("hold kv (1) reuse ⟨{ run s (1); }", "unexpected `{`: `reuse` takes its bound in parentheses, `reuse (bound)`"),
    ("hold kv (1) { run s (1); } cache⟨;", "unexpected `;`: `cache` takes the units it keeps in parentheses, "
                                         "`cache (units)`"),
    ("hold kv (1) { run s (1); } lease kv⟨;", "unexpected `;`: `lease` takes its time in parentheses after the "
                                            "pool, `lease kv (time)`"),
    ("branch ⟨x { run s (1); }", "unexpected `x`: `branch` takes its test in parentheses, `branch (test) { … }`"),
])
def test_each_statement_without_its_parenthesis_says_how_it_is_written(stmt, message):
    refused(_session(stmt), message)


@pytest.mark.parametrize("stmt, message", [
    ("hold kv (1) { run s (1); } ⟨reuse (8)", "`reuse` goes before the hold's block: "
                                              "`hold P (units) reuse (bound) { … }`"),
    ("hold kv (1) { run s (1); } ⟨reuse (8);", "`reuse` goes before the hold's block"),
    ("hold kv (1) { run s (1); } ⟨reserve (8);", "`reserve` goes before the hold's block: "
                                                 "`hold P (units) reserve (units) { … }`"),
    ("hold kv (1) { run s (1); } ⟨at admission (x = 1)", "`at admission` goes before the hold's block"),
    ("hold kv (1) ⟨cache (1) { run s (1); }", "`cache` goes after the hold's block: "
                                              "`hold P (units) { … } cache (units)`"),
])
def test_a_hold_clause_on_the_wrong_side_of_the_block_says_where_it_goes(stmt, message):
    refused(_session(stmt), message)


def test_a_name_before_an_unexpected_token_is_not_taken_for_a_statement():
    # `foo` is a name an expression may call, `foo(…)`: no statement's word, so no such hint; the two names
    # side by side are told at the second
    e = refused(_session("set y = foo ⟨bar;"), "unexpected `bar`: two names side by side, `foo bar`")
    assert "takes" not in str(e)


@pytest.mark.parametrize("src, message", [
    ("stage s : fifo;\nworkload { arrive poisson⟨; }\nsession { run s (1); }\n",
     "unexpected `;`: `arrive poisson` takes its rate in parentheses, `arrive poisson(rate);`"),
    ("stage s : fifo;\nworkload { arrive closed⟨; }\nsession { run s (1); }\n",
     "unexpected `;`: `arrive closed` takes its number of sessions in parentheses, `arrive closed(n);`"),
    ("stage s : ps⟨;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n",
     "unexpected `;`: `ps` takes its capacity in parentheses, `ps(capacity)`"),
    ("pool p { cap 1; queue by ⟨waited; }\nstage s : fifo;\nworkload { arrive poisson(1); }\n"
     "session { run s (1); }\n", "unexpected `waited`: `by` takes its keys in parentheses, `by (key, …)`"),
    ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { choose c in 4 by ⟨c; run s (1); }\n",
     "unexpected `c`: `by` takes its keys in parentheses, `by (key, …)`"),
])
def test_an_item_or_clause_without_its_parenthesis_says_how_it_is_written(src, message):
    refused(src, message)
