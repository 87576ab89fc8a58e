"""Two step engines whose memory is one pool: a growth on one engine may preempt the other's resident. The
candidates are the residents of every step stage the pool is the memory of, ordered together by their
sessions' latest admission (pools.growth.preempt_candidates; docs/simulator.md, "Step engines sharing one
memory pool"); with preempt lifo the victim is the one admitted last, of either engine. Both tiers (the
fast tier hands step engines to the general engine: the same report)."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import run_on_tier

# cap 6. Session 0 holds 2 at t = 0 on engine A (cost 1 an iteration): prefill [0, 1] (position 2), then
# four decodes [1, 2], [2, 3], [3, 4], [4, 5], each growing its hold to the next position first: 3 at 1, 4
# at 2 (6 used, with session 1's 2), 5 at 3, which does not fit (7 > 6). Session 1 holds 2 from t = 0.5
# on engine B (cost 100: its prefill iteration [0.5, 100.5]), admitted after session 0, so it is the
# victim, though it is B's resident and the grower A's. Its hold is released, re-queued at the head,
# and re-admitted (2 more do not fit beside session 0's 5, 6) when session 0's hold ends at 5; B's
# iteration under way ends at 100.5, and its prefill again is [100.5, 200.5].
# Were the grower's own engine's residents the only candidates, session 0 would preempt itself at 3.
TWO = """pool kv { cap 6; preempt lifo; }
stage A : step { budget 10; cost 1; memory kv; }
stage B : step { budget 10; cost 100; memory kv; }
stage D : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) {
      run A prefill (2) growing kv;
      run A decode (4) growing kv;
      observe done0 = now;
    }
  } else {
    run D (0.5);
    hold kv (2) {
      observe in1 = now;
      run B prefill (2) growing kv;
      observe done1 = now;
    }
  }
}
run { horizon 1000; }
"""


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_growth_on_one_engine_preempts_the_other_engines_resident_admitted_last(tier):
    prog = serq_frontend.compile(source=TWO)
    sim, outcome, _ = run_on_tier(prog, tier)
    assert outcome[0] == "report", outcome
    samples = {o.name: list(sim.obs[k].values) for k, o in enumerate(prog.observes)}
    assert samples == {"done0": [5.0], "in1": [0.5, 5.0], "done1": [200.5]}
    (kv,) = sim.pools
    assert (kv.preemptions, kv.admissions, kv.rejections) == (1, 3, 0)


def test_the_grower_is_its_own_victim_only_when_admitted_last():
    # the same, session 1 not delayed and session 0 delayed by 0.5 is the other way round: session 0, A's
    # resident, admitted last, grows at 3.5 to 5 (7 > 6) and is its own victim; B's resident is kept
    src = TWO.replace("  branch (serial == 0) {\n    hold", "  branch (serial == 0) {\n    run D (0.5);\n    hold")
    src = src.replace("  } else {\n    run D (0.5);\n", "  } else {\n")
    prog = serq_frontend.compile(source=src)
    sim, outcome, _ = run_on_tier(prog, "general")
    assert outcome[0] == "report", outcome
    samples = {o.name: list(sim.obs[k].values) for k, o in enumerate(prog.observes)}
    # session 1 admitted once at 0 and never preempted: its prefill [0, 100]
    assert samples["in1"] == [0.0] and samples["done1"] == [100.0]
    assert sim.pools[0].preemptions >= 1
