"""A latency of 0 is no wait (language.txt §2, Queues: `D pull P latency x0`, "D waits x0 before each one"; a link's
`serve … latency x`, "the wait before such a transfer"), and declares no stage.

`D pull P latency 0 share maxmin;` declared the delay stage `D.nic.latency` and ran `run D.nic.latency[j] (0);`
before each read: a run of zero work is no job of its stage, so the report listed a stage with no completion and
a wait and service of nan. Now a latency of 0 compiles to the IR of the relation (or the link) without one.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from sqhelpers import compile_src, ir_bytes

PULL = """let x0 = 0.5;
queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  decode (prompt) from s { hold kv (prompt) { transfer (2) from s to kv (1); run (1); } cache (prompt); }
}
RELATION
workload { arrive batch(2); }
session { set prompt = 2; set i = serial % 2; P[i].prefill (prompt); D.decode (prompt) from P[i];
          observe done = now; }
run { horizon 50; }
"""
NONE = "D pull P share maxmin;"

LINK = """let w = 0.5;
queue L[2] : link { serve ps(10)LATENCY; }
pool a { cap 9; }
pool b { cap 9; }
share maxmin;
stage M : ps(5);
workload { arrive batch(1); }
session { hold a (1) { run M (1); } lease a (inf); hold b (1) { transfer on L[1], M (3) from a to b (1); }
          observe done = now; }
run { horizon 50; }
"""


@pytest.mark.parametrize("relation, sets", [
    ("D pull P latency 0 share maxmin;", None),
    ("D pull P latency 0 * x0 share maxmin;", None),
    ("D pull P latency x0 share maxmin;", {"x0": 0}),
])
def test_a_pull_latency_of_0_is_the_relation_without_one(relation, sets):
    program = compile_src(PULL.replace("RELATION", relation), sets=sets)
    assert ir_bytes(program) == ir_bytes(compile_src(PULL.replace("RELATION", NONE), sets=sets))
    assert "D.nic.latency" not in [s.name for s in program.stages]


@pytest.mark.parametrize("latency, sets", [(" latency 0", None), (" latency w - w", None), (" latency w", {"w": 0})])
def test_a_link_latency_of_0_is_the_link_without_one(latency, sets):
    program = compile_src(LINK.replace("LATENCY", latency), sets=sets)
    assert ir_bytes(program) == ir_bytes(compile_src(LINK.replace("LATENCY", ""), sets=sets))
    assert "L.latency" not in [s.name for s in program.stages]


def test_a_latency_above_0_keeps_its_stage_and_its_wait(monkeypatch):
    """The stage and its run stay for a latency above 0: each read waits it first. By hand, a session's read of 2
    units over P.nic[i] (rate 1) and D.nic (rate 1) starts when its prefill (1 s on P[i]) ends and, with the
    latency, 0.5 s later: the two sessions, on P[0] and P[1], share D.nic, at 1/2 each, so the reads take 4 s,
    then 1 s each on D (fifo: the second waits 1 s): done at 6 and 7 s, or 6.5 and 7.5 s with the latency."""
    waited = compile_src(PULL.replace("RELATION", "D pull P latency x0 share maxmin;"))
    assert [s.name for s in waited.stages].count("D.nic.latency") == 1
    none = compile_src(PULL.replace("RELATION", "D pull P latency 0 share maxmin;"))
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        assert sorted(serq_sim.run(none).observe("done").values.tolist()) == [6.0, 7.0]
        assert sorted(serq_sim.run(waited).observe("done").values.tolist()) == [6.5, 7.5]


def test_a_negative_latency_is_still_refused():
    with pytest.raises(serq_frontend.CompileError):
        compile_src(PULL.replace("RELATION", "D pull P latency -1 share maxmin;"))
