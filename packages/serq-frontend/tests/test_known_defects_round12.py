"""Known defects of the frontend, round 12: a queue's name, each found wrong by hand, then fixed at its cause.

1. A `let`, a pool, a stage or an attribute could share the name of a queue without a `serve`: such a queue
   makes no stage, so the linker, which refuses a stage's name shared with a let, a pool, another stage or an
   attribute, never saw it, and the program compiled. A queue, a let, a pool, a stage and an attribute have
   names of their own (language.txt §2), with or without a `serve`; the later of two is refused, at its name.
2. "`Q` is declared twice (first at …)" after a queue with a `serve` gave the place of the `serve` (the place of
   the stage the queue makes), not of the queue; a queue declared first is placed at its name."""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

# the queue's name `Q` is at column 7 of its line (`queue ` is 6 characters)
SERVELESS = "queue Q : prefill { pool kv { cap 4; } prefill (p) { hold kv (p) { run s (p); } } }\n"
SERVE = "queue Q : prefill { pool kv { cap 4; } serve delay; prefill (p) { hold kv (p) { run (p); } } }\n"
REST = ("pool kv { cap 4; }\nstage s : delay;\nworkload { arrive poisson(1); }\n"
        "session { hold kv (1) { run s (1); } }\n")


def test_the_briefs_program_is_refused_at_the_lets_name():
    e = refused(SERVELESS + "let ⟨Q = 1;\n" + REST, "`let Q`: `Q` is a queue; give the constant another name "
                "(first at 1:7)")
    assert str(e).splitlines()[1:] == ["  let Q = 1;", "      ^"]


@pytest.mark.parametrize("queue", [SERVELESS, SERVE], ids=["serveless", "serve"])
@pytest.mark.parametrize("decl, message", [
    ("pool ⟨Q { cap 1; }\n", "`Q` is declared twice (first at 1:7)"),
    ("stage ⟨Q : delay;\n", "`Q` is declared twice (first at 1:7)"),
    ("let ⟨Q = 1;\n", "`let Q`: `Q` is a queue; give the constant another name (first at 1:7)"),
    ("def ⟨Q(x) = x;\n", "`Q` is a queue; a definition needs another name"),
    (SERVELESS.replace("Q", "⟨Q", 1), "queue `Q` is declared twice (first at 1:7)"),
])
def test_a_name_declared_after_a_queue_is_refused_at_the_later_name(queue, decl, message):
    """Item 2 as well: 'first at 1:7' is the queue's name, where with a `serve` it was 1:46, the `serve`'s `delay`."""
    refused(queue + decl + REST, message)


@pytest.mark.parametrize("queue", [SERVELESS, SERVE], ids=["serveless", "serve"])
@pytest.mark.parametrize("decl, message", [
    ("pool Q { cap 1; }\n", "`Q` is declared twice (first at 1:1)"),
    ("stage Q : delay;\n", "`Q` is declared twice (first at 1:1)"),
    ("let Q = 1;\n", "the queue `Q` has the name of a `let`"),
    (SERVE, "queue `Q` is declared twice (first at 1:7)"),
])
def test_a_queue_declared_after_a_name_is_refused_at_the_queues_name(queue, decl, message):
    # the queue is on line 2, its name at column 7
    refused(decl + queue.replace("Q", "⟨Q", 1) + REST, message)


def test_a_def_before_a_serveless_queue_is_refused_at_the_defs_name():
    refused("def ⟨Q(x) = x;\n" + SERVELESS + REST, "`Q` is a queue; a definition needs another name")


@pytest.mark.parametrize("queue", [SERVELESS, SERVE], ids=["serveless", "serve"])
@pytest.mark.parametrize("stmt", ["set Q = 2;", "choose Q in 2 by (1);"])
def test_an_attribute_named_like_a_queue_is_refused_at_its_statement(queue, stmt):
    src = queue + REST.replace("session { ", "session { ⟨" + stmt + " ")
    refused(src, "`Q` is a queue (at 1:7); an attribute needs another name")


def test_names_of_their_own_still_compile():
    """The queue's own pool `kv` beside a global pool `kv`, and a let, a pool and an attribute of other names."""
    compile_src(SERVELESS + "let R = 1;\npool P { cap 1; }\n" + REST.replace("session { ", "session { set A = R; "))
