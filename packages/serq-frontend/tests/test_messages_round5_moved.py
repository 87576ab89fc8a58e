"""Mutations of the examples that move a clause away or double a `)`, told what is wrong where the grammar's words
were listed:

- a pool's `queue` without its order (`queue;`, `queue }`, its `fifo` moved away): "(expected by, fifo)";
- a stage's kind left out before the next item (`stage s :` and, on the next line, `pool q { … }`): "(expected a
  plugin's name (@name), delay, fifo, ps, step)";
- a `,` after a statement's parenthesis closed early (`choose j in 2 by ((a) * (b) ), j);`, a `)` doubled): it
  was "unexpected `,` (expected `;`)"; the parenthesis, where it ended, and the `)` that closes no `(`.
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
QUEUE = "a pool's `queue` names the order of its waiting requests, `queue fifo;` or `queue by (key, …);`"


@pytest.mark.parametrize("new, found", [("cap 100; queue⟨; }", "`;`"), ("cap 100; queue ⟨}", "`}`")])
def test_a_pools_queue_without_its_order(new, found):
    assert told_in(BASE, "cap 100; }", new) == f"unexpected {found}: {QUEUE}"


@pytest.mark.parametrize("word, after", [("pool", "pool q { cap 1; }"), ("workload", "workload { arrive none; }")])
def test_a_stage_kind_left_out_before_the_next_item(word, after):
    said = told_in(BASE, "stage tool : delay;\n", f"stage tool :\n⟨{after}\nstage t2 : delay;\n")
    assert said == (f"unexpected `{word}`: a stage's kind follows `:`, `fifo`, `fifo(c)`, `ps(capacity)`, `delay` "
                    f"or `step {{ … }}` (or a plugin's `@name`); `{word}` begins the next item, so the kind is missing")


@pytest.mark.parametrize("new, said", [
    ("choose j in 2 by ((1) * (2) )⟨, j);", "unexpected `,`: the parenthesis of `by` at 4:42 ended at the `)` at "
                                           "4:53, before it; the `)` at 4:57 closes no `(`: the parentheses are "
                                           "unbalanced"),
    ("run tool (1)⟨, 2);", "unexpected `,`: the parenthesis of `run` at 4:34 ended at the `)` at 4:36, before it; "
                           "the `)` at 4:40 closes no `(`: the parentheses are unbalanced"),
])
def test_a_comma_after_a_parenthesis_closed_early(new, said):
    assert told_in(BASE, "tool (1);", new) == said
