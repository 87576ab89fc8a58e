"""Conformance of language.txt §3, Branching: "branch (e) takes the first block when e is 1 and the second
when it is 0; any other value (a fraction, a count, a negative number, NaN) is a run-time error, since a
guard is a test and a test has two answers. … A constant guard that is not 0 or 1 is refused at link time
(one strictly between 0 and 1 reads as a test and was meant as a draw); a computed one is refused when it
is evaluated."

Each of the four kinds, computed, on both tiers (conform.run_error: the same words): the error names the
statement, the time and the session. Its advice fits the value, as the linker's does for a constant: a
fraction is a draw meant (`branch with (p)`); a count, a negative number, inf or NaN a value where the test
of it was meant (it said `a draw is written `branch with (p)`` for every value).
"""

from __future__ import annotations

import pytest
from conform import refused, run, run_error

PROGRAM = """stage d : delay;
workload { arrive batch(3); }
session {
  set g = serial == 2 ? G : serial;
  run d (serial);
  branch (g) { observe first = now; } else { observe second = now; }
}
run { horizon 10; }
"""

DRAW = "(a draw is written `branch with (p)`)"
TEST = ": a guard is a test; write the comparison meant (`n > 0`, `x != 0`)"


def test_zero_and_one_take_the_second_and_the_first_block(monkeypatch):
    """s0's guard is 0 (else block, at 0), s1's is 1 (first block, at 1), s2's is 1 too here."""
    _, o = run(PROGRAM.replace("G", "1"), monkeypatch)
    assert o["second"] == [(0, 0.0, 0.0)]
    assert o["first"] == [(1, 1.0, 1.0), (2, 2.0, 2.0)]


@pytest.mark.parametrize("value, shown, advice", [
    ("0.5", "0.5", " " + DRAW),  # a fraction
    ("1e-300", "1e-300", " " + DRAW),
    ("2", "2", TEST),  # a count
    ("0 - 1", "-1", TEST),  # a negative number
    ("0 / 0", "NaN", TEST),  # NaN
    ("inf", "inf", TEST),
])
def test_any_other_computed_value_is_an_error_when_evaluated(value, shown, advice, monkeypatch):
    """s0 and s1 branch as their guards say (0 at 0, 1 at 1); s2's guard is evaluated at 2 and refused
    there, at the branch: line 6, column 3."""
    first = run_error(PROGRAM.replace("G", value), monkeypatch)
    assert first == f"<source>:6:3: error: at t=2, session 2: branch guard is {shown}, not 0 or 1{advice}"


@pytest.mark.parametrize("guard, words", [
    ("0.5", "the guard is the constant 0.5, strictly between 0 and 1: that is a draw; write `branch with (0.5)`"),
    ("2", "the guard is the constant 2; a guard is a test, 0 or 1"),
    ("0 - 1", "the guard is the constant -1; a guard is a test, 0 or 1"),
])
def test_a_constant_guard_is_refused_at_link_time(guard, words):
    assert refused(PROGRAM.replace("G", "1").replace("branch (g)", f"branch ({guard})")) == words
