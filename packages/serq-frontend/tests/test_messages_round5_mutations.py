"""Mutations of the example programs (a token replaced by a keyword of another place, a statement's word swapped)
told what is wrong where the grammar's tokens or nothing were said:

- a keyword of another place where a statement begins (`from o = 1;`, `fifo t = now;`, `on (1);`, a `set`
  replaced): it was "unexpected `o` (expected `(`, `.`, `[`)", the keyword read as a definition's name, or
  "no definition `on`"; it begins no statement, and where a name and `=` follow, the `set` that gives a value;
- a statement's word that gives no value before a name and `=` (`release prio = 1;`, `drop x = 1;`): it was
  "unexpected `=`" alone;
- a keyword of another place after a hold's units (`hold kv (1) cap (1) { … }`): it was "(expected `,`, `{`,
  at, reserve, reuse)";
- a keyword after the top level's `run` (`run in horizon 10; }`): "(expected `{`)", now told as a name there is.
"""

from __future__ import annotations

import pytest
from sqhelpers import told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
BEGINS = ("does not begin a statement: it is a word of another place, and a statement begins with its own (`run`, "
          "`hold`, `set`, `observe`, `branch`, …)")


@pytest.mark.parametrize("new, said", [
    ("⟨from o = 1;", f"`from` {BEGINS}; a name is given a value with `set o = …;`"),
    ("⟨fifo t = now;", f"`fifo` {BEGINS}; a name is given a value with `set t = …;`"),
    ("⟨in x = 1;", f"`in` {BEGINS}; a name is given a value with `set x = …;`"),
    ("⟨to x == 1;", f"`to` {BEGINS}"),
    ("⟨on (1);", f"`on` {BEGINS}"),
    ("⟨growing (1);", "`growing` begins no statement: it is a run's clause, after its work, `run S (work) growing P;`"),
    ("⟨via (1);", "`via` begins no statement: it is a pool's option's word, after `admit` (`admit via E;`) or a "
                  "spill's tier (`spill TIER via LINK (work) when (pred);`)"),
])
def test_a_keyword_of_another_place_where_a_statement_begins(new, said):
    assert told_in(BASE, "tool (1);", new) == said


def test_an_option_where_a_statement_begins_is_still_told_where_it_stands():
    assert told_in(BASE, "tool (1);", "⟨cap 1;") == ("`cap` is a pool's option, not a statement: it stands in its "
                                                      "block, `pool NAME { cap …; }`")


@pytest.mark.parametrize("new, said", [
    ("release prio ⟨= 1;", "unexpected `=`: `release` does not give a name a value; a name is given one with `set "
                           "prio = …;`"),
    ("drop x ⟨= 1;", "unexpected `=`: `drop` does not give a name a value; a name is given one with `set x = …;`"),
    # (a word that names its pool is told its form, as before)
    ("grow g ⟨= 2;", "unexpected `=`: `grow` takes its units in parentheses after the pool, `grow g (units);`"),
])
def test_a_statements_word_that_gives_no_value(new, said):
    assert told_in(BASE, "tool (1);", new) == said


HEADER = ("a hold's header is its pools, `P (units), Q (units)`, each with its `reserve (r)`, then its `reuse "
          "(bound)` and `at admission (x = e)`; its block follows, `hold P (u) … { … }`")


@pytest.mark.parametrize("new, word", [
    ("hold kv (4) ⟨cap (1) {", "cap"),
    ("hold kv (4) ⟨let {", "let"),
    ("hold kv (4) ⟨when (1) {", "when"),
    ("hold kv (4) at admission (h = 1) ⟨queue {", "queue"),
    ("hold kv (4) ⟨preempt admission (h = 1) {", "preempt"),
])
def test_a_keyword_of_another_place_after_a_holds_units(new, word):
    assert told_in(BASE, "hold kv (4) {", new) == f"unexpected `{word}`: {HEADER}"


@pytest.mark.parametrize("new, said", [
    # (the clauses that go after the block, a statement's word and a misspelt clause are told as before)
    ("hold kv (4) ⟨cache (1) {", "`cache` goes after the hold's block: `hold P (units) { … } cache (units)`"),
    ("hold kv (4) ⟨lease kv (1) {", "`lease` goes after the hold's block: `hold P (units) { … } lease P (time)`"),
])
def test_the_clauses_after_the_block_are_told_as_before(new, said):
    assert told_in(BASE, "hold kv (4) {", new) == said


def test_a_keyword_after_the_top_levels_run():
    assert told_in(BASE, "run { horizon 10; }", "run ⟨in horizon 10; }") == (
        "unexpected `in`: `run` at the top level begins the run block, `run { horizon …; }`; a statement `run S "
        "(…);` belongs in a block (a session, a server, a definition's)")


@pytest.mark.parametrize("word", ["in", "on", "to"])
def test_a_keyword_of_another_place_before_a_test_and_a_block(word):
    # (`branch` replaced: `in (test) { … }` was read as a definition's call, "unexpected `{` (expected `;`)")
    assert told_in(BASE, "tool (1);", f"⟨{word} (prompt == 0) {{ tool (1); }}") == f"`{word}` {BEGINS}"
