"""A message that quotes a stretch of the program quotes the user's own text, not its tokens joined.

`tool (5 %);` was told "`5%` is no number", a text the program does not have (the percentage's number and
its `%` joined without the blank between them); a unit after a number (`100   s`, `2<tab>ms`) and two names
side by side (`a  b`) were rebuilt from their tokens the same way. Each now quotes the source from its first
token to its last, with each run of blanks and line ends one space (parser._written): what the user wrote,
on one line of the message.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
PERCENT = " is no number: a percentage is written as its fraction, `0.05` (`%` is the remainder, `a % b`)"


@pytest.mark.parametrize("new, quoted", [
    ("tool (⟨5 %);", "`5 %`"),
    ("tool (⟨5%);", "`5%`"),
    ("tool (⟨5   %);", "`5 %`"),
    ("tool (⟨5\n  %);", "`5 %`"),  # (a line end inside: one space, the message one line)
])
def test_a_percentage_is_quoted_as_written(new, quoted):
    assert told_in(BASE, "tool (1);", new) == quoted + PERCENT


@pytest.mark.parametrize("old, new, said", [
    ("horizon 10;", "horizon ⟨100   s;", "`100 s`: a number takes no unit; a time is a number of seconds (the "
     "program's clock), `100` here"),
    ("tool (1);", "tool (⟨2  ms);", "`2 ms`: a number takes no unit; a time is a number of seconds (the "
     "program's clock), `0.002` here"),
])
def test_a_unit_after_a_number_is_quoted_as_written(old, new, said):
    assert told_in(BASE, old, new) == said


def test_two_names_side_by_side_are_quoted_as_written():
    assert told_in(BASE, "tool (1);", "tool (min(a  ⟨b, 2));") == (
        "unexpected `b`: two names side by side, `a b`; an operator or a `,` is missing between them (an "
        "aggregate is `max j in n (e)`)")


@pytest.mark.parametrize("new, quoted", [("tool (5\t%);", "`5 %`"), ("tool (2\tms);", "`2 ms`")])
def test_a_tab_between_is_one_space(new, quoted):
    # (a tab is shown in the source line as the terminal shows it: the message's own words are checked)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(BASE.replace("tool (1);", new))
    assert str(info.value).splitlines()[0].startswith(f"<source>:4:31: error: {quoted}")
