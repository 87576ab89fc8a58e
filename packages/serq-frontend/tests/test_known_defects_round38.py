"""Known defects, round 38, in the frontend.

1. A `;` where a statement or item begins (`let x = 1;;` at the top level, `;` first in the file, in a
   block, in a pool's options or the run block) said ``unexpected `;` (expected a name)``, or the token
   alone: it says it is a stray `;`, an empty statement, at the `;`.
2. A token after a whole expression that neither goes on with it nor ends it (`let x = 3 !;`) was
   ``unexpected `!` `` alone: it says an operator or what ends the expression there was expected.
3. `set x == 1;` was ``unexpected `=` (expected `!`, `(`, …)`` at the second `=`: it says `set` takes `=`,
   at the `==`.
6. A number literal beyond the doubles (`horizon 1e999;`, `cap 1e400;`) was read as inf, where the command
   line and an IR file refuse it: refused at the literal, in their words.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

BASE = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
STRAY = "unexpected `;`: a stray `;`, an empty statement, which the language does not have"

# ---------------------------------------------------------------- 1. a stray `;`


@pytest.mark.parametrize("src", [
    "let x = 1;⟨;\n" + BASE,
    "⟨;;\n" + BASE,
    "⟨;\n" + BASE,
    "stage s : delay;\nworkload { arrive poisson(1); }\nsession { ⟨; run s (1); }\nrun { horizon 5; }\n",
    "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1);⟨; }\nrun { horizon 5; }\n",
    "pool p { cap 1;⟨; }\n" + BASE,
    "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5;⟨; }\n",
])
def test_a_stray_semicolon_is_told_as_such_at_it(src):
    refused(src, STRAY)


def test_one_semicolon_after_a_statement_still_compiles():
    compile_src("let x = 1;\n" + BASE)


# ---------------------------------------------------------------- 2. after a whole expression


@pytest.mark.parametrize("src, ends", [
    ("let x = 3 ⟨!;\n" + BASE, "the `;` that ends the statement"),
    ("let x = (1 + 2) ⟨!;\n" + BASE, "the `;` that ends the statement"),
    ("pool p { cap 1; }\nstage s : delay;\nworkload { arrive poisson(1); }\n"
     "session { hold p (1 ⟨!) { run s (1); } }\nrun { horizon 5; }\n", "the `)` of the `(` at 4:18"),
    ("pool p { cap 1 ⟨{ }\n" + BASE, "the `;` that ends the statement"),
])
def test_a_token_after_an_expression_says_what_was_wanted(src, ends):
    e = refused(src, "after an expression: expected an operator (`+`, `==`, `&&`, …) or " + ends)
    first = str(e).splitlines()[0]
    # `!` only: what it is for
    assert ("`!` negates the value after it" in first) == ("⟨!" in src)


# ---------------------------------------------------------------- 3. `==` where a value is given


@pytest.mark.parametrize("word, src", [
    ("set", "stage s : delay;\nworkload { arrive poisson(1); }\nsession { set x ⟨== 1; run s (x); }\n"
            "run { horizon 5; }\n"),
    ("let", "let x ⟨== 1;\n" + BASE),
    ("observe", "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe w ⟨== now; }\n"
                "run { horizon 5; }\n"),
])
def test_double_equals_where_a_value_is_given(word, src):
    name = "w" if word == "observe" else "x"
    refused(src, f"unexpected `==`: `{word}` gives a name its value with `=`, `{word} {name} = …;` "
                 "(`==` is a test of equality)")


def test_double_equals_in_a_test_still_compiles():
    compile_src("stage s : delay;\nworkload { arrive poisson(1); }\n"
                "session { set x = 1 == 1; branch (x == 1) { run s (1); } }\nrun { horizon 5; }\n")


# ---------------------------------------------------------------- 6. a literal beyond the doubles

BEYOND = "is beyond the range of a double (at most about 1.8e308 in size); an infinite value is written `inf`"


@pytest.mark.parametrize("src, text", [
    ("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon ⟨1e999; }\n",
     "1e999"),
    ("pool p { cap ⟨1e400; }\n" + BASE, "1e400"),
    ("let a = 2 * ⟨1.8e308;\n" + BASE, "1.8e308"),
    ("let a = -⟨1e309;\n" + BASE, "1e309"),
    ("let a = " + "⟨1" + "0" * 400 + ";\n" + BASE, "1" + "0" * 400),
])
def test_a_literal_beyond_the_doubles_is_refused_at_it(src, text):
    e = refused(src, BEYOND)
    # (quoted between backquotes, as the frontend quotes source text, the first 40 characters of a long one)
    assert f"`{text}` " in str(e) if len(text) <= 40 else f"`{text[:40]}...` " in str(e)


@pytest.mark.parametrize("text, value", [
    ("1.7976931348623157e308", 1.7976931348623157e308),  # the greatest double
    ("1.7976931348623158e308", 1.7976931348623157e308),  # rounds to it (below the halfway point to 2**1024)
    ("5e-324", 5e-324),                                  # the least double (1e-400 is refused: round 41)
    ("0e-400", 0.0),                                     # a zero written with an exponent
])
def test_the_greatest_doubles_and_the_least_are_still_numbers(text, value):
    (c,) = compile_src(f"let a = {text};\n" + BASE).constants
    assert float(c.value) == value


def test_infinity_is_still_written_inf():
    (c,) = compile_src("let a = inf;\n" + BASE).constants
    assert float(c.value) == float("inf")
    program = compile_src(BASE.replace("horizon 5", "horizon inf; arrivals 3"))
    assert program.run.horizon in ("inf", float("inf"))
