"""Known defects, round 24 (the frontend's part): the hint of a transfer written without `from P to Q (n)`
(parser._transfer_unfinished) copied the loop of parser._depth0 to have the depth at its end as well; the
one loop is now parser._depth0_open (the words outside parentheses and brackets, and how many are left open),
which _depth0, the transfer's hint and the spill's hint read. The messages are unchanged, and so is the IR of
every tracked .sq file."""

from __future__ import annotations

import pytest
from serq_frontend.parser import _depth0, _depth0_open, _tokens_before
from sqhelpers import refused

HEAD = """pool p { cap 8; }
pool q { cap 8; }
stage link : delay;
workload { arrive batch(1); }
"""
RUN = "run { horizon 5; }\n"
HOW = "a transfer says where the KV moves, `transfer (X) from P to Q (n);`"


@pytest.mark.parametrize("text, words, depth", [
    ("transfer (1) from p to q (2", ["transfer", "from", "p", "to", "q"], 1),
    ("transfer (1) from p to q (2)", ["transfer", "from", "p", "to", "q"], 0),
    ("transfer (f(a[1], (2))) from kv[", ["transfer", "from", "kv"], 1),
    ("spill cpu via pcie ((w)", ["spill", "cpu", "via", "pcie"], 1),
    ("x ) y", ["x"], -1),
])
def test_the_words_outside_parentheses_and_the_depth_at_the_end(text, words, depth):
    before = _tokens_before(text, len(text))
    assert _depth0_open(before, 0) == (words, depth)
    assert _depth0(before, 0) == words


@pytest.mark.parametrize("body, said", [
    ("transfer (1) from p⟨;", "`to Q (n)` is missing"),
    ("transfer (1) from p to q⟨;", "the tokens that move are missing after `to q`"),
    ("transfer (1)⟨;", HOW),
])
def test_a_transfer_left_unfinished_at_depth_0_is_told_its_form(body, said):
    # (test_messages_round3_transfer: each part that is missing is told as such)
    e = refused(HEAD + "session { hold q (1) { " + body + " } }\n" + RUN, said)
    assert "`transfer (X) from P to Q (n);`" in str(e)


@pytest.mark.parametrize("body, message", [
    ("transfer (1) from p to q (1 +⟨;", "unexpected `;`"),  # inside the amount's ( : the expression's own error
    ("transfer (1 +⟨) from p to q (1);", "unexpected `)`"),
])
def test_an_error_inside_an_open_parenthesis_of_a_transfer_keeps_its_words(body, message):
    e = refused(HEAD + "session { hold q (1) { " + body + " } }\n" + RUN, message)
    assert HOW not in str(e)
