"""A step-stage family's own expressions (budget, chunk, cost, serve keys) name a family of its size
without an index, and each member reads its own member: `chunk long_prefill(reqs, C)` on `engine[N]`."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

PROGRAM = """
pool reqs[2] { admit via engine; }
stage engine[2] : step { budget 8; cost 1; chunk holders(reqs) + queued(reqs) > 1 ? 2 : inf; };
workload { arrive batch(3); }
session {
  set j = serial < 2 ? 0 : 1;
  hold reqs[j] (1) { run engine[j] prefill (8); }
  observe done0 = j == 0 ? now : -1;
  observe done1 = j == 1 ? now : -1;
}
run { horizon 100; }
"""


def test_each_member_reads_its_own_pool():
    """Step clock (cost 1). engine[0] has two requests of 8 tokens waiting at its first iteration, so its
    chunk is 2: each takes 2 tokens an iteration and is done at 4. engine[1] has one, alone in reqs[1],
    so no cap: 8 tokens in one iteration, done at 1 (had it read reqs[0], it would be done at 4 too)."""
    r = serq_sim.run(serq_frontend.compile(source=PROGRAM))
    assert sorted(v for v in r.observe("done0").values.tolist() if v >= 0) == [4.0, 4.0]
    assert [v for v in r.observe("done1").values.tolist() if v >= 0] == [1.0]


def test_a_family_of_another_size_is_refused():
    src = PROGRAM.replace("pool reqs[2] { admit via engine; }",
                          "pool reqs[2] { admit via engine; }\npool other[3] { cap 1; }").replace(
        "holders(reqs) + queued(reqs)", "holders(other) + queued(reqs)")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src)
    assert "`other` is a family of 3 and this step stage one of 2" in str(e.value)


def test_outside_a_stage_an_unindexed_family_is_still_refused():
    src = PROGRAM.replace("set j = serial < 2 ? 0 : 1;", "set j = serial < 2 ? 0 : holders(reqs);")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src)
    assert "`reqs` is a family of 2; index it" in str(e.value)
