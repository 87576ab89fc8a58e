"""Programs a serving-systems researcher would write (P/D disaggregation over a KV link, a CPU offload
tier with spill, a prefix-aware router over a family of engines, priority scheduling with preemption,
`reserve held`, agent sessions, a trace replay, `run { arrivals }`, gauges and records), each run on the
tier serQ picks and on the general engine (SERQ_SIM_TIER=general), which must agree byte for byte, and
checked against a hand computation or a closed form. The larger programs are files under peer_programs/;
the hand-traced cases are inline. Statistical checks use fixed seeds and an interval that covers the
theory and is narrow."""

from __future__ import annotations

from conform import pool, run, stage

# --- a session a step stage admits, and that then holds a pool admitted outside the engine -------------------

STAGING = """
pool reqs { cap 4; admit via E; }
pool kv { cap 100; admit via E; }
pool cpu { cap 1; }                    // a staging buffer, admitted at settle time (no admit via)
stage E : step { budget 10; cost 1; memory kv; }
stage pcie : fifo;
workload { arrive batch(1); }
session {
  hold reqs (1), kv (4) {
    hold cpu (1) { observe staged = now; run pcie (2); }
    load kv (0);
    run E prefill (4) growing kv;
  }
  observe done = now;
}
run { horizon 10; }
"""


def test_a_session_the_engine_admits_holds_a_free_pool_at_the_same_instant(monkeypatch):
    # docs/simulator.md, the settle loop: idle step stages plan an iteration, "which may admit and run
    # sessions; if that made sessions ready, the loop starts again". At 0 the engine admits s0 (reqs, kv)
    # and runs it at once: it joins cpu's queue (cap 1, empty). The settle must admit it there at 0:
    # pcie [0, 2], then the prefill of 4 tokens is one iteration [2, 3]. (Before, the admitted session had
    # already run, so nothing was ready and the settle ended: s0 waited at an empty pool until the next
    # event, here none, and the run ended with it "waiting for ever".)
    r, o = run(STAGING, monkeypatch)
    assert o["staged"] == [(0, 0.0, 0.0)]
    assert o["done"] == [(0, 3.0, 3.0)]
    assert (pool(r, "cpu").admissions, r.result.ended) == (1, 1)
    assert stage(r, "E").iterations == 1
