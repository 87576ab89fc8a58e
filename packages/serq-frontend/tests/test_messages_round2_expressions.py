"""Expressions written as other languages write them (language.txt §2, Expressions: `c ? a : b`; names are read
without parentheses).

`now()` was "unknown function `now` (did you mean `pow`?)", and `prompt()`, `B(2)` of an attribute and a `let`
"unknown function"; each is now told as the name it is, read without parentheses. `if (c) a else b` in an
expression was "unexpected `a` after an expression", and is told the conditional's form too.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

BASE = """let B = 4;
stage s : delay;
workload { arrive batch(1); }
session { set prompt = 3; observe x = VALUE; run s (1); }
run { horizon 10; }
"""


def _told(value: str) -> str:
    return told(BASE.replace("VALUE", value))


@pytest.mark.parametrize("value, said", [
    ("⟨now()", "`now` is a context variable, not a function: it is read without parentheses, `now`, not `now()`"),
    ("⟨inf()", "`inf` is the language's infinity, not a function: it is read without parentheses, `inf`, not "
     "`inf()`"),
    ("⟨serial()", "`serial` is a built-in attribute, not a function: it is read without parentheses, `serial`, not "
     "`serial()`"),
    ("1 + ⟨prompt()", "`prompt` is a session attribute, not a function: it is read without parentheses, `prompt`, "
     "not `prompt()`"),
    ("⟨B(2)", "`B` is a constant (a `let`), not a function: it is read without parentheses, `B`"),
    ("⟨nwo()", "unknown function `nwo`"),  # no such name: the function's words, as before
])
def test_a_name_called_as_a_function(value, said):
    assert _told(value).startswith(said)


@pytest.mark.parametrize("value", ["if (prompt > 2) ⟨1 else 2", "max(if (1) ⟨1 else 2, 3)"])
def test_if_in_an_expression_is_told_the_conditional(value):
    assert _told(value).endswith("; a value chosen by a test is `test ? a : b` (`if (test) a else b` is not an "
                                 "expression)")


def test_the_forms_of_the_language_compile():
    compile_src(BASE.replace("VALUE", "prompt > 2 ? now : B + serial"))
