"""A transfer written with a part of its form missing or malformed, told as that part (language.txt §2:
`transfer [ '[' expr ']' | on STAGE [, STAGE]* ] expr from POOL to POOL ( expr ) ;`).

Every such transfer was told the general "a transfer says where the KV moves, `transfer (X) from P to Q (n);`
…", whatever was missing: the work (`transfer from kv to kv (1);`, told at the `to`), the pool after `from`,
the `to`, the pool after it, the tokens. Each is now told at the place, in its own words, with the form; a
transfer without any of `from P to Q (n)` keeps the general words, which name the kernel's `run` for a link
that stores and forwards.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told_in

BASE = """pool p { cap 8; }
pool q { cap 8; }
stage link : delay;
workload { arrive batch(1); }
session { hold p (1) { run link (1); } lease p (inf); hold q (1) { BODY } }
run { horizon 5; }
"""
FORM = "`transfer (X) from P to Q (n);`"


@pytest.mark.parametrize("body, said", [
    # the work
    ("transfer ⟨from p to q (1);",
     "unexpected `from`: the transfer's work is missing before it, " + FORM
     + " (X the link's work: the time the KV takes over the link)"),
    ("transfer on link ⟨from p to q (1);",
     "unexpected `from`: the transfer's work is missing before it, " + FORM
     + " (X the link's work: the time the KV takes over the link)"),
    ("transfer ⟨from p;",
     "unexpected `from`: the transfer's work is missing before it, " + FORM
     + " (X the link's work: the time the KV takes over the link)"),
    ("transfer⟨;", "unexpected `;`: a transfer takes its work and says where the KV moves, " + FORM
     + " (X the link's work, n the tokens that move from the lease or hold on P to the hold on Q)"),
    # the pool it leaves
    ("transfer (1) from ⟨3 to q (1);",
     "unexpected `3`: `from` takes the pool the KV leaves (the session's lease or hold on it), " + FORM),
    ("transfer (1) from ⟨to q (1);",
     "unexpected `to`: `from` takes the pool the KV leaves (the session's lease or hold on it) before `to`, "
     + FORM),
    ("transfer (1) ⟨to q (1);",
     "unexpected `to`: `from P` is missing before it, the pool the KV leaves (the session's lease or hold on "
     "it), " + FORM),
    ("transfer (1) ⟨frm p to q (1);", "unexpected `frm` (did you mean `from`?): " + FORM),
    # the `to` and the pool it moves to
    ("transfer (1) from p ⟨q (1);", "unexpected `q`: `to` is missing before it, " + FORM
     + " (Q the pool the KV moves to)"),
    ("transfer (1) from p⟨;", "unexpected `;`: `to Q (n)` is missing, the pool the KV moves to and the tokens "
     "that move, " + FORM),
    ("transfer (1) from p to ⟨(1);",
     "unexpected `(`: `to` takes the pool the KV moves to (the session's hold on it), " + FORM),
    # the tokens
    ("transfer (1) from p to q⟨;", "unexpected `;`: the tokens that move are missing after `to q`, in "
     "parentheses, " + FORM),
    ("transfer w from p to q⟨;", "unexpected `;`: the tokens that move are missing after `to q`, in "
     "parentheses, " + FORM),
    # the stages after the work
    ("transfer (1) ⟨on link from p to q (1);",
     "unexpected `on`: a transfer names its stages before its work, `transfer on L (X) from P to Q (n);`"),
])
def test_the_part_missing_is_told(body, said):
    assert told_in(BASE, "BODY", body) == said


def test_a_transfer_without_where_the_kv_moves_keeps_the_general_words():
    assert told_in(BASE, "BODY", "transfer (1)⟨;") == (
        "unexpected `;`: a transfer says where the KV moves, " + FORM + " (X the link's work, n the tokens that "
        "move from the lease or hold on P to the hold on Q); a link that stores and forwards is the kernel's "
        "`run link (X);`")


def test_the_whole_form_compiles():
    compile_src(BASE.replace("BODY", "transfer (1) from p to q (1);"))
