"""The words that take one expression in parentheses are one table (parser._PARENTHESISED): the error of the
parenthesis missing and the error of another count in it say the same of each word, what the expression is
and how the form is written. Two tables said them (`_PARENTHESISED` for the first, `_ONE_EXPRESSION` for the
second) in different words for the same facts ("the units of each pool in parentheses after it" and "its
units"); the hold's missing units are now "`hold` takes its units in parentheses after each pool".
"""

from __future__ import annotations

import re

import pytest
from sqhelpers import told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
HOLD, BODY = "hold kv (4)", "tool (1);"
AFTER = "hold kv (4) { tool (1); }"


@pytest.mark.parametrize("word, old, missing, several, shape", [
    ("hold", HOLD, "hold kv ⟨{", "hold kv (4⟨, 5)", "`hold kv (units) { … }`"),
    ("grow", BODY, "grow kv⟨;", "grow kv (1⟨, 2);", "`grow kv (units);`"),
    ("load", BODY, "load kv⟨;", "load kv (1⟨, 2);", "`load kv (units);`"),
    ("run", BODY, "run tool⟨;", "run tool (1⟨, 2);", "`run tool (work);`"),
    ("lease", AFTER, AFTER + " lease kv⟨;", AFTER + " lease kv (1⟨, 2);", "`lease kv (time)`"),
    ("reserve", HOLD, HOLD + " reserve ⟨{", HOLD + " reserve (1⟨, 2)", "`reserve (units)`"),
    ("reuse", HOLD, HOLD + " reuse ⟨{", HOLD + " reuse (1⟨, 2)", "`reuse (bound)`"),
    ("cache", AFTER, AFTER + " cache⟨;", AFTER + " cache (1⟨, 2);", "`cache (units)`"),
    ("branch", BODY, "branch ⟨{ }", "branch (1⟨, 2) { }", "`branch (test) { … }`"),
])
def test_both_errors_of_a_parenthesis_say_the_same(word, old, missing, several, shape):
    m = re.fullmatch(rf"unexpected `.`: `{word}` takes (.+) in parentheses( after [a-z ]+)?, (`.+`)",
                     told_in(BASE, old, missing.replace(" { }", " { tool (1); }")))
    assert m is not None and m.group(3) == shape
    n = re.fullmatch(r"unexpected `,`: (?:`\w+`|a hold's `kv`) takes one expression, (.+), and found 2: (`[^`]+`)(.*)",
                     told_in(BASE, old, several.replace(" { }", " { tool (1); }")))
    assert n is not None, several
    assert n.group(1) == m.group(1) and n.group(2) == shape  # the same what, the same form


def test_the_hold_says_where_its_units_stand_and_each_pools_own():
    assert told_in(BASE, HOLD, "hold kv ⟨{") == ("unexpected `{`: `hold` takes its units in parentheses after each pool, "
                                         "`hold kv (units) { … }`")
    assert told_in(BASE, HOLD, "hold kv (4⟨, 5)") == ("unexpected `,`: a hold's `kv` takes one expression, its units, and "
                                               "found 2: `hold kv (units) { … }`, each pool with its own (`hold kv "
                                               "(units), Q (units) { … }`)")
