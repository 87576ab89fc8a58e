"""Prefix-cache and offload-tier hits, spills and the pools' cached units of a schedule traced by hand.

An engine on the step clock (cost 1, budget 100) with a GPU KV pool of 4 blocks of 4 tokens (no preemption:
``reserve held``) that spills each block it evicts to a CPU pool over a delay stage ``pcie`` (wr seconds a
block), read back there at rd = 0.25 s a block, written as examples/multi-turn/offload.sq writes it: a request
takes its own prefix from the GPU first (``reuse``), then what its conversation lacks there from the CPU.
Session A (serial 0) sends 8 tokens at 0 and, 2 s after its answer, 12 (its history of 9 and 3 new); session B
(serial 1) sends 12 at 1.5; every answer is one token.

With wr = 0.5:
  t=0    A1 admitted (2 blocks), prefills 8 in [0, 1]: its token at 1, done; caches floor(8 / 4) = 2 blocks
  t=1.5  B admitted: 3 blocks (its reserve of 13 needs 4 of the 4: the cached ones never block it), 2 free,
         so one of A's blocks is evicted from the entry's tail and spilled (lands in the CPU at 2.0);
         B prefills 12 in [1.5, 2.5], caches 3 blocks: the GPU holds A's first block and B's 3
  t=3    A2: GPU hit min(cachedin(kv) = 4, reusable(12) = 8) = 4; its 12 tokens take 2 more blocks: B's last 2
         are evicted and spilled (they land at 3.5); CPU hit max(0, min(cachedin(cpu) = 4, reusable(9) - 4 =
         4)) = 4, read in [3, 3.25]; prefill 12 - 4 - 4 = 4 in [3.25, 4.25]: its token at 4.25, the end
  records: A1 (cached 0), B (0), A2 (4 + 4 = 8): hit rate 8 / (8 + 12 + 12) = 0.25; GPU spills 1 + 2 = 3
  blocks, evicted 12 units, no entry whole; the CPU's cached units (docs/language.md: a spilled block takes its
  room in the tier from its eviction, usable when its write lands) 4 over [1.5, 3] (A2's hold takes it then)
  and 8 over [3, 4.25]: 16 token-seconds, over the run's 4.25 s
With wr = 2 A's block lands at 3.5, after A2 looked at 3: no CPU hit, A2 prefills 8 in [3, 4], hit rate
4 / 32 = 0.125; the run (horizon inf) goes on to the last write's landing, B's at 3 + 2 = 5: the CPU holds A's
block over [1.5, 5] and B's two over [3, 5], 14 + 16 = 30 token-seconds over 5 s.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

PROGRAM = """
let bs = 4;
let wr = 0.5;
let rd = 0.25;

def reusable(x) = floor((x - 1) / bs) * bs;

pool reqs { cap 8; admit via engine; }
pool kv {
  cap 4 * bs;
  block bs;
  evict lru;
  preempt lifo;
  reserve held;
  spill cpu via pcie (size / bs * wr) when (1);
}
pool cpu { cap 10 * bs; block bs; evict lru; }
stage engine : step { budget 100; cost 1; memory kv; }
stage pcie : delay;
stage user : delay;

workload { arrive batch(2); }

session {
  set K = 0;
  set turns = serial == 0 ? 2 : 1;
  set n = serial == 0 ? 8 : 12;
  branch (serial == 1) { run user (1.5); }
  loop {
    turn;
    set prompt = K + n;
    set o = 1;
    set t0 = now;
    hold reqs (1), kv (prompt) reserve (prompt + o) reuse (hg)
         at admission (hg = min(cachedin(kv), reusable(prompt))) {
      set gpu_hit = cached;
      hold cpu (hc) reuse (hc)
           at admission (hc = max(0, min(cachedin(cpu), reusable(K) - gpu_hit))) {
        set cpu_hit = cached;
        run pcie (cpu_hit / bs * rd);
        load kv (cpu_hit);
      } cache (0);
      prefill on engine (prompt - gpu_hit - cpu_hit) growing kv;
      set t_first = now;
      decode on engine (o - 1) growing kv;
    } cache (prompt + o);
    record request {
      sent = t0;
      first_token = t_first;
      last_token = now;
      prompt = prompt;
      output = o;
      cached = gpu_hit + cpu_hit;
      gpu = gpu_hit;
      cpu = cpu_hit;
    }
    set K = prompt + o;
    set turns = turns - 1;
    set n = 3;
    branch (turns > 0) { run user (2); } else { end; }
  }
}

run { horizon inf; warmup 0; seed 1; }
"""


def _run(monkeypatch, wr):
    prog = serq_frontend.compile(source=PROGRAM, sets={"wr": float(wr)}, defs={})
    r = same_json(prog, monkeypatch)
    return r, {p["name"]: p for p in r["pools"]}


def _rows(monkeypatch, wr):
    import serq_sim

    prog = serq_frontend.compile(source=PROGRAM, sets={"wr": float(wr)}, defs={})
    rec = serq_sim.run(prog).records(kind="numpy")
    return [tuple(rec[c].tolist()[i] for c in ("session", "sent", "first_token", "prompt", "cached", "gpu", "cpu"))
            for i in range(len(rec["session"]))]


def test_a_gpu_and_a_cpu_hit_by_hand(monkeypatch):
    r, pools = _run(monkeypatch, 0.5)
    assert _rows(monkeypatch, 0.5) == [(0, 0.0, 1.0, 8, 0, 0, 0), (1, 1.5, 2.5, 12, 0, 0, 0),
                                      (0, 3.0, 4.25, 12, 8, 4, 4)]
    assert r["end"] == 4.25 and r["requests"]["prefix_cache_hit_rate"] == 0.25
    kv, cpu = pools["kv"], pools["cpu"]
    assert (kv["spills"], kv["evicted_units"], kv["evicted_entries"], kv["preemptions"]) == (3, 12.0, 0, 0)
    assert cpu["cached"] == pytest.approx(16 / 4.25, rel=1e-15)
    assert cpu["used"] == pytest.approx(4 * 0.25 / 4.25, rel=1e-15)  # A2's CPU hold of 4 over [3, 3.25]
    # the GPU: held 8 over [0, 1], 12 over [1.5, 2.5] and 12 over [3, 4.25]; cached 8 over [1, 1.5], 4 over
    # [1.5, 3], B's 12 over [2.5, 3] and its first block's 4 over [3, 4.25] (A2 caches at the end)
    assert kv["used"] == pytest.approx((8 + 12 + 12 * 1.25) / 4.25, rel=1e-15)
    assert kv["cached"] == pytest.approx((4 + 6 + 6 + 5) / 4.25, rel=1e-15)


def test_a_block_still_on_the_link_is_no_hit_but_takes_its_room(monkeypatch):
    r, pools = _run(monkeypatch, 2)
    assert _rows(monkeypatch, 2)[-1] == (0, 3.0, 4.0, 12, 4, 4, 0)
    assert r["end"] == 5.0 and r["requests"]["prefix_cache_hit_rate"] == 0.125
    assert pools["cpu"]["cached"] == 30 / 5 and pools["cpu"]["used"] == 0
    assert pools["kv"]["spills"] == 3
