"""The syntax errors of pool-reference.txt's `preempt` and `queue` options written wrong, each one message
at the word, saying what the page's grammar allows there:

    preempt none;  |  preempt lifo;  |  preempt by (expr, …) [requeue head | tail];
    queue fifo;  |  queue by (key, …);

`requeue` follows `preempt by (…)` only: after `preempt lifo` or `preempt none`, after the pool's `queue`,
or as an option of its own it said `missing `;` (found `requeue` next)` or `did you mean `queue``. And a
pool's `queue` with another word (`queue lifo;`, `queue;`) said "`queue` begins an item: write it at the
top level, outside every block", taking the pool's option for a `queue` station.
"""

from __future__ import annotations

import pytest
from sqhelpers import commands_refuse_and_leave, compile_src, refused

REST = """stage d : delay;
workload { arrive batch(1); }
session { hold p (1) { run d (1); } }
run { horizon 5; }
"""


@pytest.mark.parametrize("option, message", [
    ("preempt lifo ⟨requeue tail;", "unexpected `requeue`: `preempt lifo` is `preempt by (-admission) requeue "
                                    "head`; a victim that goes back at the tail is `preempt by (-admission) "
                                    "requeue tail;`"),
    ("preempt none ⟨requeue head;", "unexpected `requeue`: `preempt none` preempts no one, so no victim goes "
                                    "back; `requeue` follows `preempt by (…)`"),
    ("queue fifo ⟨requeue tail;", "unexpected `requeue`: where a preemption's victim goes back is said where "
                                  "the victim is chosen, `preempt by (…) requeue tail;`, not in the pool's "
                                  "waiting order"),
    ("queue by (waited) ⟨requeue tail;", "unexpected `requeue`: where a preemption's victim goes back"),
    ("⟨requeue tail;", "unexpected `requeue`: it follows `preempt by (…)`: `preempt by (key, …) requeue head;`"),
])
def test_requeue_anywhere_but_after_preempt_by(option, message):
    refused("pool p { cap 4; " + option + " }\n" + REST, message)


@pytest.mark.parametrize("head", ["pool p", "pool p[2]"])
@pytest.mark.parametrize("option, message", [
    ("queue ⟨lifo;", "unexpected `lifo` (expected by, fifo) (did you mean `fifo`?)"),
    ("queue⟨;", "unexpected `;`: a pool's `queue` names the order of its waiting requests, `queue fifo;` or `queue "
                "by (key, …);`"),
])
def test_a_pools_queue_option_written_wrong_is_no_misplaced_station(head, option, message):
    e = refused(head + " { cap 4; " + option + " }\n" + REST.replace("hold p", "hold p[0]" if "[" in head else "hold p"),
                message)
    assert "begins an item" not in str(e)


def test_a_queue_stations_pool_says_the_same():
    """A queue's own pool (language.txt, Queues: `qitem := pool NAME { poolopt* }`) has the same options."""
    src = ("queue Q : prefill { pool kv { cap 4; queue ⟨lifo; } serve fifo; prefill (x) { hold kv (x) { run (x); } } }\n"
           + REST)
    refused(src, "unexpected `lifo` (expected by, fifo)")


def test_a_queue_station_inside_a_block_is_still_a_misplaced_item():
    refused("stage d : delay;\nworkload { arrive batch(1); }\nsession { ⟨queue Q : gateway { } }\nrun { horizon 5; }\n",
            "`queue` begins an item: write it at the top level, outside every block")


@pytest.mark.parametrize("option", ["preempt by (-admission) requeue tail;", "preempt by (-admission) requeue head;",
                                    "preempt by (-admission);", "preempt lifo;", "queue fifo;", "queue by (waited);"])
def test_the_pages_forms_compile(option):
    compile_src("pool p { cap 4; " + option + " }\n" + REST)


def test_serq_check_says_it_once_with_a_caret(tmp_path):
    data = ("pool p { cap 4; preempt lifo requeue tail; }\n" + REST).encode()
    commands_refuse_and_leave(tmp_path, data, "p.sq:1:30: error: unexpected `requeue`: `preempt lifo` is `preempt by "
                              "(-admission) requeue head`; a victim that goes back at the tail is `preempt by "
                              "(-admission) requeue tail;`")


@pytest.mark.parametrize("src, message", [
    ("pool p { cap⟨; }\n" + REST, "unexpected `;`: `cap` takes a value, `cap …;`"),
    ("pool p[2] { cap 4; block ⟨}\n" + REST.replace("hold p", "hold p[0]"), "unexpected `}`: `block` takes a value"),
    ("pool p { cap 4; }\nstage E : step { cost⟨; }\n" + REST, "unexpected `;`: `cost` takes a value, `cost …;`"),
    ("pool p { cap 4; }\nstage E : step { cost 1; budget⟨; }\n" + REST, "`budget` takes a value"),
    ("pool p { cap 4; }\nstage E : step { cost 1; chunk⟨; }\n" + REST, "`chunk` takes a value"),
    ("pool p { cap 4; }\n" + REST.replace("horizon 5;", "horizon⟨;"), "`horizon` takes a value, `horizon …;`"),
    ("pool p { cap 4; }\n" + REST.replace("horizon 5;", "horizon 5; arrivals⟨;"), "`arrivals` takes a value"),
    ("queue Q : prefill { pool kv { cap 4; } serve step { cost 1; chunk⟨; } prefill (x) { hold kv (x) { prefill (x); } } }\n"
     + REST, "`chunk` takes a value"),
])
def test_a_field_without_its_value_says_so(src, message):
    """pool-reference.txt's `cap expr;`, `block expr;`, language.txt's `step { budget expr; cost expr; [chunk
    expr;] }` and program-reference.txt's `run { horizon expr; warmup expr; seed expr; arrivals expr; }`
    with the value left out: it said the expression's first tokens were expected (`unexpected `;` (expected
    `!`, `(`, `-`, `~`, a name, a number)`), and `cost;` that `cost` "is not part of this language", taking
    it for the pool reference's other dialect's `cost(…)`."""
    e = refused(src, message)
    assert "not part of this language" not in str(e)


def test_the_other_dialects_cost_call_is_still_told_where_it_stands():
    """`cost` as a statement of a session is still the other dialect's (docs/language.md, Diagnostics)."""
    refused("pool p { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\nsession { ⟨cost; }\n"
            "run { horizon 5; }\n", "`cost` is not part of this language")


@pytest.mark.parametrize("first, second", [("serve exclusive prefill;", "⟨serve by (remaining);"),
                                           ("serve decode first;", "⟨serve exclusive prefill;")])
def test_exclusive_prefill_with_an_order_says_it_is_no_order(first, second):
    """language.txt §3: the residents are served "the way serve names, said once per stage: an order, by
    (k₁, …) …, or the rule exclusive prefill, below, which is not an order and so cannot be combined with
    one". It said only "`serve` is given twice"."""
    refused(f"stage E : step {{ cost 1; {first} {second} }}\n" + REST.replace("hold p (1) { run d (1); }", ""),
            "`serve` is given twice in this step stage: `serve exclusive prefill` is a rule, not an order, and "
            "cannot be combined with one")


def test_two_orders_are_given_twice():
    refused("stage E : step { cost 1; serve admission; ⟨serve by (remaining); }\n"
            + REST.replace("hold p (1) { run d (1); }", ""), "`serve` is given twice in this step stage")
