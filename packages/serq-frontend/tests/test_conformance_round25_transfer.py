"""Conformance of the serving form `transfer` (language.txt §2, The serving vocabulary) at its misuses.

"transfer (X) from P to Q (n); — run link (X); load Q (n); release P; — the KV of n tokens moves from the
session's lease (or hold) on P to its hold on Q". A transfer whose two pools are one moves nothing: its
`release P` gives back the innermost hold on P, which is the hold on Q its `load` has just filled. The spec
is silent on it; it compiled, and the body held nothing on the pool from the transfer on (by hand: `hold p
(2) { transfer (1) from p to p (1); observe u = used(p); }` read 0). It is refused at its `to`
(docs/language.md, Sugar: serving).

"The form transfer does not write this: without from P to Q (n) it is a parse error, and a link that
stores and forwards is spelled with the kernel's run." The parse error said `unexpected `;` (expected
from)`, and `missing `;`` before a `to` written without its `from`; it now says how a transfer is written.
"""

from __future__ import annotations

import pytest
from sqhelpers import commands_refuse_and_leave, compile_src, ir_bytes, refused

HEAD = """let z = 1;
pool p { cap 8; }
pool q { cap 8; }
pool kv[2] { cap 8; }
stage link : delay;
workload { arrive batch(1); }
"""
RUN = "run { horizon 5; }\n"

SAME = "the KV from one pool to another, and both name"


@pytest.mark.parametrize("body, named", [
    ("hold p (1) { transfer (1) from p to ⟨p (1); }", "`p`"),
    ("hold kv[1] (1) { transfer (1) from kv[z] to ⟨kv[2 - 1] (1); }", "`kv[1]`"),
    ("set j = 1; hold kv[j] (1) { transfer (1) from kv[j] to ⟨kv[j] (1); }", "`kv[…]`"),
    ("set j = 0; hold kv[j + 1] (1) { transfer (1) from kv[j + 1] to ⟨kv[j + 1] (1); }", "`kv[…]`"),
    ("hold p (1) { transfer on link (1) from p to ⟨p (1); }", "`p`"),
])
def test_a_transfer_from_a_pool_to_itself_is_refused_at_its_to(body, named):
    """One pool named twice, by the same name, the same constant member (a `let`, a folded expression) or
    the same expression of attributes (which the session cannot change between the transfer's three
    statements): refused at `to`, naming the pool and the hold the `release` would give back."""
    e = refused(HEAD + "session { " + body + " }\n" + RUN, SAME + " " + named)
    assert "it ends with `release" in str(e) and "its load has just filled" in str(e)


def test_a_transfer_to_itself_through_a_definition_is_refused_at_the_argument():
    """A definition's parameters are its arguments (program-reference.txt, def): `mv(p, p)` is the
    transfer from p to p, refused where the second `p` is written, with a note at the use."""
    src = HEAD + "def mv(a, b) { transfer (1) from a to b (1); }\nsession { hold p (1) { mv(p, ⟨p); } }\n" + RUN
    refused(src, SAME + " `p`")


def test_a_link_queues_transfer_to_itself_is_refused():
    """A link queue's entry called as `L.transfer (n) from S to P (m)` (language.txt, Queues) ends with the
    same load and release: one pool named twice is refused at the `to`."""
    src = """pool a { cap 9; }
pool b { cap 9; }
queue L : link { serve ps(10); transfer (m) { run (m); } }
queue gw : gateway { route { hold a (1) { run L (1); } lease a (inf); hold b (1) { L.transfer (3) from b to ⟨b (1); } } }
workload { arrive poisson(1); session { request gw; end; } }
""" + RUN
    refused(src, SAME + " `b`")


@pytest.mark.parametrize("src, dst", [("p", "q"), ("kv[0]", "kv[1]"), ("kv[i]", "kv[j]"), ("kv[1 - j]", "kv[j]")])
def test_two_pools_or_members_the_linker_cannot_prove_one_still_transfer(src, dst):
    """Two pools, two constant members, and members whose indexes may differ compile, to the kernel the
    spec writes out (`run link (X); load Q (n); release P;`), byte for byte."""
    pre = "set i = 0; set j = 1; "
    hold = f"hold {src} (2) {{ run link (1); }} cache (2) lease {src} (inf); "
    sugar = HEAD + "session { " + pre + hold + f"hold {dst} (2) {{ transfer (1) from {src} to {dst} (2); }} }}\n" + RUN
    kernel = (HEAD + "session { " + pre + hold
              + f"hold {dst} (2) {{ run link (1); load {dst} (2); release {src}; }} }}\n" + RUN)
    assert ir_bytes(compile_src(sugar)) == ir_bytes(compile_src(kernel))


HOW = "a transfer says where the KV moves, `transfer (X) from P to Q (n);`"


@pytest.mark.parametrize("body", [
    "transfer (1)⟨;",
    "transfer on link (1)⟨;",
])
def test_a_transfer_without_from_p_to_q_n_says_how_one_is_written(body):
    """Leaving out `from P to Q (n)` is one message at the word found instead that shows the form and names
    the kernel's `run` for a link that stores and forwards."""
    e = refused(HEAD + "session { hold q (1) { " + body + " } }\n" + RUN, HOW)
    assert "a link that stores and forwards is the kernel's `run link (X);`" in str(e)


@pytest.mark.parametrize("body, said", [
    ("transfer (1) from p⟨;", "`to Q (n)` is missing"),
    ("transfer (1) from p to q⟨;", "the tokens that move are missing after `to q`"),
    ("transfer (1) ⟨to q (1);", "`from P` is missing before it"),
    ("transfer (1) ⟨frm p to q (1);", "unexpected `frm` (did you mean `from`?)"),
    ("branch (1) { transfer [0] (1) from p⟨; }", "`to Q (n)` is missing"),
])
def test_a_transfer_with_part_of_from_p_to_q_n_says_which_part(body, said):
    """Part of `from P to Q (n)` left out or misspelt is told as that part (test_messages_round3_transfer),
    with the form."""
    e = refused(HEAD + "session { hold q (1) { " + body + " } }\n" + RUN, said)
    assert "`transfer (X) from P to Q (n);`" in str(e)


@pytest.mark.parametrize("body, message", [
    ("transfer (1 +⟨) from p to q (1);", "unexpected `)`"),  # inside the work: the expression's own error
    ("transfer (1) from p to q (1)⟨ x;", "missing `;` (found `x` next)"),  # after the whole form
])
def test_errors_inside_or_after_a_whole_transfer_keep_their_own_words(body, message):
    e = refused(HEAD + "session { hold q (1) { " + body + " } }\n" + RUN, message)
    assert HOW not in str(e)


def test_a_link_queues_transfer_entry_is_no_transfer_statement():
    """`transfer (n) { … }` in a link queue declares an entry; its syntax errors are the grammar's."""
    e = refused("queue L : link { serve ps(10); transfer (m) ⟨run (m); }\n" + RUN, "unexpected `run`")
    assert HOW not in str(e)


def test_the_commands_say_it_once_with_a_caret(tmp_path):
    """`serq check` and `serq fmt`: status 1, the one message first, no traceback, the file left as it was."""
    data = (HEAD + "session { hold p (1) { transfer (1) from p to p (1); } }\n" + RUN).encode()
    commands_refuse_and_leave(tmp_path, data, "p.sq:7:47: error: `transfer … from p to p`: a transfer moves "
                              "the KV from one pool to another, and both name `p`; it ends with `release p`, "
                              "which would give back the hold on `p` its load has just filled. `from` names "
                              "the pool the KV is leased or held on, `to` the pool of the hold it moves into",
                              commands=(("check",),))
    data = (HEAD + "session { hold p (1) { transfer (1); } }\n" + RUN).encode()
    commands_refuse_and_leave(tmp_path, data, "p.sq:7:36: error: unexpected `;`: " + HOW + " (X the link's "
                              "work, n the tokens that move from the lease or hold on P to the hold on Q); a "
                              "link that stores and forwards is the kernel's `run link (X);`")
