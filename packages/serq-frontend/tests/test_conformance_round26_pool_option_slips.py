"""Two slips in pool-reference.txt's pool options, each one message at the word, saying what to write:

    preempt by (expr, …) [requeue head | tail];
    reserve held;

* the keys' `)` left out before `requeue` (`preempt by (prio requeue tail;`, and `queue by (prio requeue
  tail;`, where `requeue` does not belong either; each `(` left open is told with its place) said "two names side by side, `prio requeue`; an operator
  or a `,` is missing between them (an aggregate is `max j in n (e)`)", or, after a number, "missing `;`
  (found `requeue` next)";
* a hold's `reserve (r)` clause written as the pool's option (`pool kv { reserve (4); }`) said "unexpected
  `(` (expected held)".
"""

from __future__ import annotations

import pytest
from sqhelpers import commands_refuse_and_leave, compile_src, refused

REST = """stage d : delay;
workload { arrive batch(1); }
session { set prio = 1; hold p (1) { run d (1); } }
run { horizon 5; }
"""



def keys_open(at: str = "1:28") -> str:
    """The message of the keys' `(` at ``at`` left open before `requeue` (the one rule of a bracket left open,
    parser._unclosed_said: where each opener is)."""
    return (f"unexpected `requeue`: a `)` is missing before it, the `(` at {at} is not closed; `preempt by (key, …) "
            "requeue head;` or `… requeue tail;`")


@pytest.mark.parametrize("option", [
    "preempt by (prio ⟨requeue tail;",
    "preempt by (prio, -admission ⟨requeue head;",
    "preempt by (1 ⟨requeue tail;",
    "preempt by ((prio) ⟨requeue tail;",
    "preempt by (max(prio, 1) ⟨requeue tail;",
])
def test_the_keys_parenthesis_missing_before_requeue(option):
    refused("pool p { cap 4; " + option + " }\n" + REST, keys_open())


@pytest.mark.parametrize("option", ["queue by (prio ⟨requeue tail;", "queue by (prio, 1 ⟨requeue head;"])
def test_the_queue_keys_parenthesis_missing_before_requeue_says_both(option):
    """`requeue` after the pool's waiting order is refused as such (test_conformance_round25_pool_options); with
    the keys' `)` missing too, the message says both."""
    refused("pool p { cap 4; " + option + " }\n" + REST, "unexpected `requeue`: a `)` is missing before it, the "
            "`(` at 1:26 is not closed, and where a preemption's victim goes back is said where the victim is "
            "chosen, `preempt by (…) requeue tail;`, not in the pool's waiting order")


def test_the_keys_parenthesis_missing_in_a_family_and_on_another_line():
    refused("pool p[2] { cap 4;\n  preempt by (prio\n    ⟨requeue tail; }\n" + REST.replace("hold p", "hold p[0]"),
            keys_open("2:14"))


@pytest.mark.parametrize("head", ["pool p", "pool p[2]"])
def test_a_holds_reserve_clause_written_as_the_pools_option(head):
    rest = REST.replace("hold p", "hold p[0]") if "[" in head else REST
    refused(head + " { cap 4; reserve ⟨(4); }\n" + rest, "unexpected `(`: a pool's option is `reserve held;` (each "
            "live hold's unallocated reservation counts against later admissions); the units a hold reserves are "
            "its clause, `hold P (u) reserve (r) { … }`")


@pytest.mark.parametrize("src, message", [
    # `requeue` used as a name in the keys is the linker's unknown name, not a parenthesis missing
    ("pool p { cap 4; preempt by (⟨requeue) requeue tail; }\n" + REST, "unknown name `requeue`"),
    # a hold's clause misplaced after its block keeps its own message
    ("pool p { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { hold p (1) { run d (1); } ⟨reserve (3); }\nrun { horizon 5; }\n",
     "`reserve` goes before the hold's block"),
    # the page's forms still read as before: `requeue` with no word after it
    ("pool p { cap 4; preempt by (prio) requeue⟨; }\n" + REST, "unexpected `;`: `requeue` names where a preempted request waits again, `requeue head;` or `requeue tail;`"),
])
def test_the_other_errors_are_as_they_were(src, message):
    refused(src, message)


@pytest.mark.parametrize("option", ["preempt by (prio) requeue tail;", "preempt by (prio, -admission) requeue head;",
                                    "reserve held;", "preempt by (max(prio, 1));"])
def test_the_pages_forms_compile(option):
    compile_src("pool p { cap 4; " + option + " }\n" + REST)


def test_serq_check_and_fmt_say_it_once_with_a_caret(tmp_path):
    data = ("pool p { cap 4; preempt by (prio requeue tail; }\n" + REST).encode()
    commands_refuse_and_leave(tmp_path, data, "p.sq:1:34: error: " + keys_open())
    data = ("pool p { cap 4; reserve (4); }\n" + REST).encode()
    commands_refuse_and_leave(tmp_path, data, "p.sq:1:25: error: unexpected `(`: a pool's option is `reserve held;` "
                              "(each live hold's unallocated reservation counts against later admissions); the "
                              "units a hold reserves are its clause, `hold P (u) reserve (r) { … }`")
