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
    ("queue⟨;", "unexpected `;` (expected by, fifo)"),
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
