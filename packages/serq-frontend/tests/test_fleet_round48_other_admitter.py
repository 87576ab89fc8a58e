"""A run on a step family's member inside a hold whose first pool another member admits, where both indexes are
numbers, is refused at the run's stage (docs/language.md, "A run on another member's engine"): `pool reqs[N] {
admit via engine; }` beside `stage engine[N]` serves reqs[i] by engine[i] (language.txt §3), and `hold reqs[0]
(…) { run engine[1] … }` was admitted by engine 0's waiting loop and served by engine 1 without a word. What
stays: a run on the member that admits its hold, a hold no engine admits, another family's engine, a family of
one, and indexes computed at run time (the simulator's warning, serq-sim's test_fleet_round48_other_admitter)."""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

pytestmark = pytest.mark.timeout(60)


def program(session: str, reqs: str = "reqs[2] { cap 8; admit via engine; }") -> str:
    return (f"pool {reqs}\n"
            "pool kv[2] { cap 4000; block 16; }\n"
            "pool free[2] { cap 8; }\n"
            "pool preq { cap 8; admit via P; }\n"
            "stage engine[2] : step { budget 256; cost 1; memory kv; }\n"
            "stage P : step { budget 256; cost 1; }\n"
            "workload { arrive poisson(1); }\n"
            "session {\n"
            f"  {session}\n"
            "}\n"
            "run { horizon 50; }\n")


ADMITTED = ("`reqs[0]` is admitted by `engine[0]` (`admit via engine` pairs `reqs[i]` with `engine[i]`), and this run "
            "inside its hold is on `engine[1]`: `engine[0]`'s waiting loop would admit the request (its budget, its "
            "slots) and `engine[1]` serve it; run it on `engine[0]`, or hold `reqs[1]`")


def test_a_run_on_another_member_than_the_one_that_admits_its_hold_is_told_at_its_stage():
    src = program("hold reqs[0] (1), kv[1] (16) { run ⟨engine[1] decode (3); }")
    assert told(src) == ADMITTED
    # the serving form and a growing run alike; the hold's first pool is the one compared
    src = program("hold reqs[0] (1), kv[1] (16) { prefill on ⟨engine[1] (10) growing kv[1]; }")
    assert told(src) == ADMITTED
    # the innermost hold whose first pool the family admits: here reqs[0], inside a hold of reqs[1]'s
    src = program("hold reqs[1] (1), kv[1] (16) { hold reqs[0] (1) { run ⟨engine[1] decode (3); } }")
    assert told(src) == ADMITTED


def test_the_library_request_with_a_constant_engine_of_another_member_is_told():
    # (at the argument that names the stage: the library's run names its parameter)
    src = ("use \"vllm.sq\";\n" + program("set t0 = now;\n  set o = 5;\n  vllm_request(reqs[0], kv[1], ⟨engine[1], 10, o, t0);")
           ).replace("workload { arrive poisson(1); }", "workload { arrive poisson(1); hidden o; }")
    assert told(src) == ADMITTED


@pytest.mark.parametrize("session", [
    "hold reqs[1] (1), kv[1] (16) { run engine[1] decode (3); }",  # its own
    # computed: the simulator's warning
    "set j = serial % 2;\n  hold reqs[j] (1), kv[1] (16) { run engine[1] decode (3); }",
    # a hold whose first pool no engine admits (admitted at settle time)
    "hold free[0] (1), kv[1] (16) { run engine[1] decode (3); }",
    # another family's engine admits it (a prefiller's queue around a decoder's run)
    "hold preq (1) { hold kv[1] (16) { run engine[1] decode (3); } }",
    # the innermost hold of the family is the run's own member's, another member's around it
    "hold reqs[0] (1) { hold reqs[1] (1), kv[1] (16) { run engine[1] decode (3); } }",
])
def test_what_the_spec_allows_still_links(session):
    compile_src(program(session))


def test_a_pool_of_one_served_by_a_stage_of_one_is_not_compared():
    src = ("pool reqs { cap 8; admit via engine; }\npool kv { cap 4000; block 16; }\n"
           "stage engine : step { budget 256; cost 1; memory kv; }\nworkload { arrive poisson(1); }\n"
           "session { hold reqs (1), kv (16) { run engine decode (3); } }\nrun { horizon 50; }\n")
    compile_src(src)
