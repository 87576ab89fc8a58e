"""More mutations of the examples (a parenthesis doubled, a word replaced, a block or a `;` put where the other
stands), each told what is wrong where the grammar's tokens were listed:

- a word right after an operand inside a `(` (`transfer ( (n) from P to Q (m);`, `max(1 from 2)`, `by (a
  growing b)`, `(2 foo)`): "unexpected `from` (expected `)`)", "(expected `)`, `,`)", or for a name "missing `;`
  (found `foo` next)", a `;` that ends nothing inside a parenthesis; now the `(` it stands in and what may
  follow an operand there;
- `admission;` and a keyword of another place alone where a statement begins (`from;`): "(expected `(`, `.`,
  `[`)";
- a hold ended with `;` (`hold kv (1);`): "(expected `,`, `{`, at, reserve, reuse)";
- a block after a statement that takes none (`run s (1) { … }`): "(expected `;`, growing)".
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


def inside(word: str, at: str, comma: bool) -> str:
    return (f"unexpected `{word}` inside the `(` at {at}: after an operand comes an operator"
            + (", a `,` (between a call's arguments)" if comma else "") + " or the `)` that closes it")


@pytest.mark.parametrize("new, said", [
    ("transfer ( (1) ⟨from kv to kv (1);", inside("from", "4:34", False)),
    ("run tool ((1) ⟨growing kv;", inside("growing", "4:34", False)),
    ("set x = max(1, (2 ⟨from 3);", inside("from", "4:40", False)),
    ("set x = max(1 ⟨from 2);", inside("from", "4:36", True)),
    ("choose j in 2 by (1 ⟨growing 2);", inside("growing", "4:42", True)),
    ("set x = max(1 ⟨foo 2);", inside("foo", "4:36", True)),
    ("set x = (2 ⟨foo);", inside("foo", "4:33", True)),
])
def test_a_word_after_an_operand_inside_a_parenthesis(new, said):
    assert told_in(BASE, "tool (1);", new) == said


def test_two_names_in_a_call_are_told_as_before():
    # (`min(a b, 2)`: the aggregate's start the parser took, told as two names side by side)
    assert told_in(BASE, "tool (1);", "set x = min(prompt ⟨serial, 2);").startswith("unexpected `serial`: two names")


@pytest.mark.parametrize("new, said", [
    ("⟨admission;", "`admission` begins no statement: `at admission (x = e, …)` is a hold's clause, in its header "
                    "before its block, `hold P (u) at admission (x = e) { … }`"),
    ("⟨from;", "`from` does not begin a statement: it is a word of another place, and a statement begins with its own "
               "(`run`, `hold`, `set`, `observe`, `branch`, …)"),
])
def test_a_keyword_alone_where_a_statement_begins(new, said):
    assert told_in(BASE, "tool (1);", new) == said


def test_a_hold_without_its_block():
    assert told_in(BASE, "tool (1);", "hold kv (1)⟨;") == ("unexpected `;`: a hold takes its block after its pools, "
                                                          "`hold P (u) { … }`; the units are held while the block's "
                                                          "statements run")


@pytest.mark.parametrize("new, word", [
    ("run tool (1) ⟨{ tool (1); }", "run"),
    ("grow kv (1) ⟨{", "grow"),
])
def test_a_block_after_a_statement_that_takes_none(new, word):
    assert told_in(BASE, "tool (1);", new) == (f"unexpected `{{`: `{word}` takes no block, it ends with `;`; the "
                                               "statements after it follow that `;` (a block is a hold's, a "
                                               "branch's or a loop's)")
