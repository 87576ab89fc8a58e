"""A unit written after a number (`horizon 100 s;`, `tool (2 ms);`, `cap 8 GB;`, `100s`), told as a number that
takes no unit (language.txt §2: expressions are numbers; the program's clock is seconds), at the number.

`2 ms` was "missing `;` (found `ms` next)", inside parentheses too, where no `;` can stand; `100s` was "`100s` is
not a number: a number is decimal digits, …", which did not say what was meant. A time's unit is told its value in
seconds; another unit that a number takes none.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
NO_UNIT = "a number takes no unit; a time is a number of seconds (the program's clock), "
SIZE = ("a number takes no unit; a pool's units are what its holds take (tokens, blocks, requests), a stage's work "
        "what its kind serves, and a multiple is written out (`8 * 1024`, `16e3`)")


def _told(old: str, new: str) -> str:
    assert BASE.count(old) == 1
    return told(BASE.replace(old, new))


@pytest.mark.parametrize("old, new, said", [
    ("horizon 10;", "horizon ⟨100 s;", "`100 s`: " + NO_UNIT + "`100` here"),
    ("horizon 10;", "horizon ⟨2 h;", "`2 h`: " + NO_UNIT + "`7200` here"),
    ("tool (1);", "tool (⟨2 ms);", "`2 ms`: " + NO_UNIT + "`0.002` here"),
    ("tool (1);", "tool (~exp(⟨250 us));", "`250 us`: " + NO_UNIT + "`0.00025` here"),
    ("cap 100;", "cap ⟨8 GB;", "`8 GB`: " + SIZE),
    ("horizon 10;", "horizon ⟨100s;", "`100s` is not a number: " + NO_UNIT + "`100` here"),
    ("horizon 10;", "horizon ⟨1.5min;", "`1.5min` is not a number: " + NO_UNIT + "`90` here"),
    ("cap 100;", "cap ⟨8GB;", "`8GB` is not a number: " + SIZE),
])
def test_a_unit_after_a_number(old, new, said):
    assert _told(old, new) == said


@pytest.mark.parametrize("old, new, said", [
    ("horizon 10;", "horizon ⟨0x10;", "`0x10` is not a number: a number is decimal digits"),  # no unit: as before
    # a name that is no unit: a word inside the parenthesis (it was "missing `;` (found `y` next)", a `;` that
    # ends nothing inside a parenthesis)
    ("tool (1);", "tool (2 ⟨y);", "unexpected `y` inside the `(` at"),
])
def test_other_words_after_a_number_are_told_as_before(old, new, said):
    assert _told(old, new).startswith(said)


def test_the_numbers_written_out_compile():
    compile_src(BASE.replace("cap 100;", "cap 8 * 1024;").replace("tool (1);", "tool (0.002);"))
