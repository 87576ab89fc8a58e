"""A run on a step family's member that grows another member's memory, or runs inside a hold of one, where
both indexes are numbers, is refused at it (docs/language.md, "A run on another member's memory"):
`stage engine[N] : step { memory kv; }` beside `pool kv[N]` counts kv[i] for engine[i] (language.txt §3), and
`vllm_request(reqs[1], kv[1], engine[0], …)` ran without a word. What the spec allows on purpose still links:
a member's own memory, a memory every member shares, a hold of another family's pool (a prefiller's lease
while the decoder runs), and indexes computed at run time (the simulator's warning, serq-sim's
test_fleet_round47_other_memory)."""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

pytestmark = pytest.mark.timeout(60)


def program(session: str, kv: str = "kv[2]") -> str:
    return ("pool reqs[2] { cap 8; admit via engine; }\n"
            f"pool {kv} {{ cap 4000; block 16; }}\n"
            "pool other[2] { cap 4000; }\n"
            "stage engine[2] : step { budget 256; cost 1; memory kv; }\n"
            "workload { arrive poisson(1); }\n"
            "session {\n"
            f"  {session}\n"
            "}\n"
            "run { horizon 50; }\n")


GROWS = ("`engine[0]`'s memory is `kv[0]` (`memory kv` pairs `engine[i]` with `kv[i]`), and this run grows "
         "`kv[1]`, another member's: no iteration of `engine[0]` would count that KV, and its growth would "
         "preempt among `engine[1]`'s residents; run it on `engine[1]`, or hold `kv[0]`")


def test_a_run_growing_another_members_memory_is_told_at_the_pool_it_grows():
    src = program("hold reqs[0] (1), kv[1] (16) { prefill on engine[0] (10) growing ⟨kv[1]; }")
    assert told(src) == GROWS


def test_a_run_inside_a_hold_of_another_members_memory_is_told_at_its_stage():
    src = program("hold reqs[1] (1), kv[1] (16) { run ⟨engine[0] decode (3); }")
    assert told(src) == GROWS.replace("this run grows", "this run is inside a hold of")


def test_the_library_request_on_another_member_is_told_at_the_argument():
    src = ("use \"vllm.sq\";\n" + program("set t0 = now;\n  set o = 5;\n  vllm_request(reqs[1], ⟨kv[1], engine[0], 10, o, t0);")
           ).replace("workload { arrive poisson(1); }", "workload { arrive poisson(1); hidden o; }")
    assert told(src) == GROWS


@pytest.mark.parametrize("session, kv", [
    ("hold reqs[1] (1), kv[1] (16) { prefill on engine[1] (10) growing kv[1]; }", "kv[2]"),   # its own
    ("set j = serial % 2;\n  hold reqs[j] (1), kv[j] (16) { prefill on engine[0] (10) growing kv[j]; }", "kv[2]"),
    ("hold reqs[0] (1), kv (16) { prefill on engine[0] (10) growing kv; }", "kv"),  # one pool, every member's
    # another family's pool held around the run (a prefiller's KV kept while a decoder runs): no memory of engine
    ("hold other[1] (16) { hold reqs[0] (1), kv[0] (16) { prefill on engine[0] (10) growing kv[0]; } }", "kv[2]"),
    # the innermost hold of the memory's family is the member's own
    ("hold kv[1] (16) { hold reqs[0] (1), kv[0] (16) { run engine[0] decode (3); } }", "kv[2]"),
])
def test_what_the_spec_allows_still_links(session, kv):
    compile_src(program(session, kv))
