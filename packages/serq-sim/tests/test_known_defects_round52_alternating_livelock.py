"""A step stage whose iterations alternate for ever between recomputing the same tokens and only preempting:
the livelock the no-progress guards do not stop (docs/simulator.md, "Iterations that alternate"). The guard
over iterations that move nothing (``StepStage._dust``) counts them in a row, and here every second one
moves 4 tokens; whether the cycle repeats for ever depends on what the re-executed hold does (its units,
its draws, what it sets), which nothing in the engine proves cheaply. Under a horizon the run goes to it,
and the stuck column and warning name the session; by hand, on both tiers."""

from __future__ import annotations

import serq_frontend
from tiers import same_json

# kv cap 8, blocks of 4, budget 4, cost 1. [0,1]: s0 and s1 admitted with a block each; s0 prefills its 4
# and from 1 holds them on d for ever (1 / 0: no end is due), away from the engine. [1,2]: s1 prefills 4
# (position 4, its block full). At 2 its next 4 need a second block: 4 + 8 > 8, s1 the only candidate is
# its own victim at position 4, an iteration [2,3] that only preempted. At 3 it is admitted again (its
# prefix not cached: no cache clause), recomputes 4 over [3,4], and at 4 is preempted at position 4 again:
# stuck. So on: preemptions at 2, 4, …, 20 (10; the iteration that starts at the horizon 20 is the run's),
# kv admissions 2 + 9 (at 3, 5, …, 19), 21 iterations of which 11 prefilled 4 tokens (44 / 21 a mean),
# one completion (s0's prefill).
ALTERNATING = """pool kv { cap 8; block 4; preempt lifo; }
pool reqs { admit via e; }
stage e : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (4) {
      prefill (4) growing kv;
      run d (1 / 0);
    }
  } else {
    hold reqs (1), kv (4) {
      prefill (8) growing kv;
    }
  }
}
run { horizon 20; }
"""


def test_iterations_that_alternate_between_recomputing_and_preempting_run_to_the_horizon(monkeypatch):
    doc = same_json(serq_frontend.compile(source=ALTERNATING), monkeypatch)
    (e,) = [s for s in doc["stages"] if s["name"] == "e"]
    assert (e["iterations"], e["prefill_only"], e["decode_only"], e["completions"]) == (21, 11, 0, 1)
    assert e["tokens"] == 44 / 21
    (kv,) = [p for p in doc["pools"] if p["name"] == "kv"]
    assert (kv["preemptions"], kv["stuck"], kv["admissions"]) == (10, 1, 11)
    (w,) = [n for n in doc["notes"] if "stuck" in n]
    assert w.startswith("warning: 1 session stuck in the run, preempted again without progress (at no greater "
                        "position than at their previous preemption): kv (1 stuck, 10 preemption(s))")
