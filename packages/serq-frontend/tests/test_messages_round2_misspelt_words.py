"""Misspelt and misplaced words, each told as what the user wrote wrong, at the word (language.txt §2).

A statement's word misspelt before more of the statement (`brnch with (p) { … }`, `} els { … }`) was
"unexpected `with` (expected `(`, `.`, `[`)" at the word after it; misspelt before its parentheses (`tools (z);`,
`} cached (n);` after a hold) "no definition `tools`"; a keyword run on into more letters (`capacity`,
`preemption`) "unexpected `capacity`" with no word offered; a name with an underscore (`warm_up`) was offered
none; a field written as a mapping's key (`cap: 100;`) "unexpected `:` (expected …)"; a percentage (`50%`)
"unexpected `)`"; an unknown word among a pool's options listed nothing (nine words were too many to list).
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

BASE = """pool kv { cap 100; block 4; evict lru; preempt lifo; }
stage tool : delay;
stage s : fifo;
workload { arrive poisson(1); }
session {
  hold kv (4) { run s (1); } cache (4);
  branch with (0.5) { tool (1); } else { end; }
}
run { horizon 10; warmup 1; }
"""
NOT_BEGUN = ": a statement begins with one of the language's words (`run`, `hold`, `set`, …), or calls a definition, "


def _told(old: str, new: str) -> str:
    assert BASE.count(old) == 1
    return told(BASE.replace(old, new))


@pytest.mark.parametrize("old, new, said", [
    ("branch with (0.5)", "⟨brnch with (0.5)", "`brnch` does not begin a statement (did you mean `branch`?)"
     + NOT_BEGUN + "`brnch(…);`"),
    ("} else {", "} ⟨els {", "`els` does not begin a statement (did you mean `else`?)" + NOT_BEGUN + "`els(…);`"),
    ("  branch with", "  ⟨foo bar;\n  branch with", "`foo` does not begin a statement" + NOT_BEGUN + "`foo(…);`"),
])
def test_a_word_that_begins_no_statement_before_more_of_one(old, new, said):
    assert _told(old, new) == said


@pytest.mark.parametrize("old, new, meant", [
    ("tool (1);", "⟨tools (1);", "tool"),
    ("} cache (4);", "} ⟨cached (4);", "cache"),
    ("} cache (4);", "} ⟨leas kv (4);", "lease"),
])
def test_a_misspelt_statement_word_before_its_parentheses(old, new, meant):
    word = new.split("⟨")[1].split(" ")[0]
    said = _told(old, new)
    assert said.startswith(f"`{word}` does not begin a statement (did you mean `{meant}`?): a name there calls a "
                           f"definition, `{word}(…);`"), said


def test_an_unknown_call_close_to_no_word_is_still_no_definition():
    assert _told("tool (1);", "⟨foo (1);") == "`foo(…);`: no definition `foo`"


@pytest.mark.parametrize("old, new, said", [
    ("cap 100;", "⟨capacity 100;", "unexpected `capacity` (did you mean `cap`?)"),
    ("preempt lifo;", "⟨preemption lifo;", "unexpected `preemption` (did you mean `preempt`?)"),
    ("warmup 1;", "⟨warm_up 1;", "unexpected `warm_up` (expected `}`, arrivals, horizon, seed, warmup) (did you mean "
     "`warmup`?)"),
    ("preempt lifo; }", "preempt lifo; ⟨priority 1; }", "`priority` does not begin a pool's option: a pool's option "
     "begins with its word (`cap`, `block`, `evict`, `preempt`, `queue`, `reserve`, `cache`, `admit`, `spill`)"),
])
def test_a_misspelt_field_is_offered_the_word_meant_or_the_words_there(old, new, said):
    assert _told(old, new) == said


@pytest.mark.parametrize("old, new, word", [
    ("cap 100;", "cap⟨: 100;", "cap"),
    ("horizon 10;", "horizon⟨: 10;", "horizon"),
])
def test_a_field_written_as_a_key(old, new, word):
    assert _told(old, new) == f"unexpected `:`: `{word}` takes its value without one, `{word} …;`"


@pytest.mark.parametrize("old, new, number, fraction", [
    ("with (0.5)", "with (⟨50%)", "50", "0.5"),
    ("tool (1);", "tool (⟨12.5%);", "12.5", "0.125"),
])
def test_a_percentage(old, new, number, fraction):
    assert _told(old, new) == (f"`{number}%` is no number: a percentage is written as its fraction, `{fraction}` "
                               "(`%` is the remainder, `a % b`)")


def test_the_remainder_still_compiles():
    compile_src(BASE.replace("tool (1);", "tool (5 % 2);"))
