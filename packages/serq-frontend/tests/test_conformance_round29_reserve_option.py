"""pool-reference.txt's `reserve held;` written without its word, or with another: one message at the token
after `reserve`, saying what the option is and where a hold's reservation goes.

`pool kv { reserve; }` said "unexpected `;` (expected held)", `reserve 4;` and `reserve hold;` the same of
their token; only `reserve (4);` (test_conformance_round26_pool_option_slips.py) said what to write.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, refused

REST = """stage d : delay;
workload { arrive batch(1); }
session { hold p (1) { run d (1); } }
run { horizon 5; }
"""
SAID = ("a pool's option is `reserve held;` (each live hold's unallocated reservation counts against later "
        "admissions); the units a hold reserves are its clause, `hold P (u) reserve (r) { … }`")


@pytest.mark.parametrize("option, token", [
    ("reserve ⟨;", ";"),
    ("reserve ⟨4;", "4"),
    ("reserve ⟨hold;", "hold"),
    ("reserve ⟨all;", "all"),
    ("reserve ⟨}", "}"),
])
def test_a_pools_reserve_says_its_word(option, token):
    refused("pool p { cap 4; " + option + (" }\n" if not option.endswith("}") else "\n") + REST,
            f"unexpected `{token}`: {SAID}")


def test_in_a_queues_pool_too():
    src = ("queue Q : decode { pool kv { cap 4; reserve ⟨; } serve fifo; decode (n) { hold kv (1) { run (n); } } }\n"
           "workload { arrive batch(1); turn { set n = 1; } session { turn; Q.decode (n); end; } }\n"
           "run { horizon 5; }\n")
    refused(src, f"unexpected `;`: {SAID}")


def test_reserve_held_and_the_holds_clause_still_compile():
    compile_src("pool p { cap 4; reserve held; }\n" + REST.replace("hold p (1)", "hold p (1) reserve (2)"))
