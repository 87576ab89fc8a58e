"""An expression with a part missing, told as that part (parser._expression_wants, parser._comment_cut).

Each listed the tokens an operand begins with, "unexpected `)` (expected `!`, `(`, `-`, `~`, a name, a
number)", or the one token the grammar wanted: an operand after an operator (`now - )`, `1 +* 2`, `!)`), a
value after `=` (`set x = ;`), an expression after a `,` (`min(1, )`), an index in empty brackets (`kv[)`),
an expression begun with `[`, a name after `.` (`kv.)`), a conditional's `:` (`1 ? 2)` "(expected `:`)"), a
draw's parentheses (`~exp)` "(expected `(`)"), an aggregate's `in` or body (`sum j 2 (j)` "(expected in)",
`max j in 2)`). `tool (1 // 2);` was "missing `;` (found `run` next)" on the next line: the `//` began a
comment inside the open `(`.
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
OPERAND = "an operand is missing after {} (a number, a name, a call or a parenthesised expression)"
AGGREGATE = "`max j in n (e)` (or `min`, `sum`)"


@pytest.mark.parametrize("new, said", [
    ("tool (now - ⟨);", "unexpected `)`: " + OPERAND.format("`-`")),
    ("tool (1 +⟨* 2);", "unexpected `*`: " + OPERAND.format("`+`")),
    ("tool (!⟨);", "unexpected `)`: " + OPERAND.format("`!`")),
    ("tool (1 < ⟨< 2);", "unexpected `<`: " + OPERAND.format("`<`")),
    ("tool (1 ? 2 : ⟨);", "unexpected `)`: " + OPERAND.format("`:`")),
    ("set x = ⟨; tool (1);", "unexpected `;`: the value is missing after `=`"),
    ("tool (min(1, ⟨));", "unexpected `)`: an expression is missing after `,` (a `,` separates arguments or keys, "
     "each one expression)"),
    ("tool (kv[⟨);", "unexpected `)`: an index is an expression in the brackets, `kv[j]`"),
    ("tool (⟨[1]);", "unexpected `[`: a `[` follows the name it indexes, `kv[j]`"),
    ("tool (kv.⟨);", "unexpected `)`: a `.` is followed by a name, the member's (`D.kv`, `Q.first_token`)"),
    ("tool (1 ? 2⟨);", "unexpected `)`: a conditional is `c ? a : b`, its `:` and the value if false after `a`"),
    ("tool (~exp⟨);", "unexpected `)`: a draw takes its parameters in parentheses, `~exp(mean)`"),
    ("tool (~uniform⟨);", "unexpected `)`: a draw takes its parameters in parentheses, `~uniform(lo, hi)`"),
    ("tool (sum j ⟨2 (j));", "unexpected `2`: an aggregate names its index, then `in` and the count, " + AGGREGATE),
    ("tool (max j in 2⟨);", "unexpected `)`: an aggregate takes its body in parentheses after its count, "
     + AGGREGATE),
    ("tool (1 ⟨// 2);", "`//` begins a comment, to the end of the line, inside a `(` left open: a division is `/` "
     "(`floor(a / b)` for a whole quotient)"),
])
def test_the_missing_part_is_told(new, said):
    assert told_in(BASE, "tool (1);", new) == said


@pytest.mark.parametrize("new, said", [
    # the hints of their own stay first
    ("set x ⟨== 1; tool (x);", "unexpected `==`: `set` gives a name its value with `=`"),
    ("tool (1 ⟨= 2);", "unexpected `=` in an expression: a test of equality is `==`"),
    ("tool (1 ⟨** 2);", "unexpected `**`: a power is `pow(x, y)`"),
])
def test_other_hints_keep_their_words(new, said):
    assert told_in(BASE, "tool (1);", new).startswith(said)


def test_the_expressions_written_whole_compile():
    compile_src(BASE.replace("tool (1);", "set x = 1; tool (min(1, 2) + (1 ? 2 : 3) + ~exp(1) + max j in 2 (j) "
                                          "+ floor(3 / 2)); // a comment\n"))
