"""Under `serve exclusive prefill`, a tentative decode that a session's `grow` preempts during the planning, before
the prefill that session brings displaces the tentative decodes, counts its one token as given under `cache
scheduled`: it caches its computed prefix and that token, as a victim the planning had served does under any
serving order (docs/language.md, "What a preempted hold caches"; docs/vllm.md, "A victim the step had already
served"). vLLM hashes a block when allocate_slots is called for the tokens a step schedules, before they are
computed, and a request its step un-schedules (a victim served earlier in the step: scheduler.py gives its tokens
back to the budget and pops its new blocks) keeps those hashes when its blocks are freed; vLLM has no other way to
take tokens back, so the displacement (which takes back the tokens of the decodes it displaces, not their
allocations) is not one that drops a hash. A displaced decode that is not preempted keeps its allocation and its
computed prefix, and caches nothing then. Traced by hand on both tiers.

Blocks of 1 unit, a KV pool of 14, budget 8, cost 1. A (serial 0) and B (serial 1) queue at 0, each `hold reqs
(1), kv (6) reuse (cachedin(kv)) { observe c = cached; prefill (2); decode (4); } cache (inf)`; C (serial 2)
queues at 2.5: `hold reqs (1), kv (2) { grow kv (2); prefill (2); decode (1); }`.
  t=0  A admitted (6 used), its prefill served alone: [0, 1] A p2 (B waits: a selected prefill ends admission)
  t=1  A's decode tentative; B admitted (12 used), its prefill displaces it: [1, 2] B p2
  t=2  [2, 3] A d1, B d1: A and B have computed 3
  t=3  A and B tentative (4 each); C admitted (14 used), and its `grow kv (2)` finds no room and nothing cached:
       the victim is the earliest admitted, A (`preempt by (admission)`), given its token already. Under `cache
       scheduled` A caches 3 + 1 = 4 units and frees 2, under `cache computed` 3 and frees 3; C's grow takes 2.
       C's prefill displaces B's tentative token: [3, 4] C p2 alone (used 10: B 6, C 4)
  t=4  [4, 5] B d1, C d1; A waits at the head (6 units: its own cached prefix and the free room fall short)
  t=5  C ends (its 4 units freed, no cache); A admitted, consuming its own prefix: c = 4, or 3 under
       `cache computed`; [5, 6] A's prefill of 2 alone
  t=6  [6, 7], [7, 8] A d1, B d1: B's fourth token at 8; A's at [8, 9], [9, 10]: A done at 10
"""

from __future__ import annotations

import pytest
from conform import run

pytestmark = pytest.mark.timeout(60)

SRC = """pool reqs { cap 4; admit via E; }
pool kv { cap 14; preempt by (admission); evict lru; cache CACHE; }
stage E : step { budget 8; cost 1; serve exclusive prefill; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 2 ? 2.5 : 0);
  branch (serial < 2) {
    hold reqs (1), kv (6) reuse (cachedin(kv)) { observe c = cached; run E prefill (2) growing kv;
                                                  run E decode (4) growing kv; } cache (inf);
  } else {
    hold reqs (1), kv (2) { grow kv (2); run E prefill (2) growing kv; run E decode (1) growing kv; }
  }
  observe done = now;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("cache, hit", [("scheduled", 4.0), ("computed", 3.0)])
def test_a_tentative_decode_a_grow_preempts_before_the_displacement_caches_its_token(cache, hit, monkeypatch):
    report, obs = run(SRC.replace("CACHE", cache), monkeypatch)
    # (session, time, value): A's first admission at 0, B's at 1, A's second at 5
    assert obs["c"] == [(0, 0.0, 0.0), (1, 1.0, 0.0), (0, 5.0, hit)]
    kv = next(p for p in report.result.pools if p.name == "kv")
    assert kv.preemptions == 1
    # C: prefill [3, 4], decode [4, 5]; B: decodes [2, 3], [4, 5] (its token of [3, 4] displaced), then beside A
    done = {s: t for s, t, _v in obs["done"]}
    assert done[2] == 5.0
    assert done[1] == 8.0 and done[0] == 10.0
