"""An offload tier (LMCache's CPU pool) traced by hand: which blocks spill, which are read back on a later turn
of the same conversation, the hit tokens, and the pool figures, on both tiers.

The GPU pool holds 5 blocks of 4 tokens; each iteration lasts 1 s. Conversation A (session 0) sends 10 tokens
at 0 and gets 3: prefill [0, 1], decodes to 3, cached 12 tokens (3 blocks: the last sampled token is never fed
back). B (session 1) sends 14 at 3.5: 4 blocks, 2 free, so A's two tail blocks are evicted and spilled (written
by 3.6, 0.1 s a block); B is done at 5.5, its 15 computed tokens cached as 3 blocks. A's second turn at 6 sends
16 (its 13 and 3 new): it finds 1 block of its own on the GPU (4 tokens), takes 3 more blocks (1 free, 2
evicted from B's tail, spilled) and reads the 8 tokens the GPU lacks from the tier (0.25 s a block: 6.5),
prefills the other 4 [6.5, 7.5] and, growing to 17 tokens, evicts B's last block (spilled at 7.5) for its
decode [7.5, 8.5]. So 5 spills, 1 whole entry evicted (B's, 12 tokens) and 20 tokens evicted; A's second turn
hits 4 on the GPU and 8 in the tier, 12 of the 40 prompt tokens of the three requests.

The time averages over [0, 8.5]: the GPU's used 12 x 3 + 16 x 2 + 16 x 1.5 + 20 x 1 = 112; the tier's used 8
tokens over the read [6, 6.5], 4; its cached units count a spilled block from its eviction (docs/language.md,
"A spilled prefix is usable when its write completes"): A's 8 over [3.5, 6], B's 8 over [6, 8.5] and 4 over
[7.5, 8.5], 44 (A's 8, read back and released with cache (0), leave the tier).

With the tier off A finds its 4 tokens and prefills 12 [6, 7]. With a write of 5 s a block A's blocks land at
8.5, after its second turn looked (at 6): no tier hit, and under `horizon inf` the run goes on until the last
write lands (B's last block, evicted at 7 and landing at 12), so the report's window ends at 12, 4 s after
the last session, and the request throughput is 3 / 12 (docs/vllm.md's metrics table said the window ends at
the last session's end).
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

SRC = """let bs = 4;
let tier = 1;
let wr = 0.1;
let rd = 0.25;

def reusable(x) = floor((x - 1) / bs) * bs;

pool reqs { cap 4; admit via engine; }
pool kv {
  cap 5 * bs;
  block bs;
  evict lru;
  preempt lifo;
  spill cpu via pcie (size / bs * wr) when (tier);
}
pool cpu { cap 100 * bs; block bs; evict lru; }
stage engine : step {
  budget 100;
  cost 1;
  memory kv;
}
stage pcie : delay;
stage user : delay;

workload {
  arrive batch(2);
  hidden o;
  init {
    set K = 0;
  }
  turn {
    set n = serial == 0 ? (turn_no == 1 ? 10 : 3) : 14;
    set o = serial == 0 ? (turn_no == 1 ? 3 : 2) : 2;
    set more = serial == 0 && turn_no == 1;
  }
}

session {
  run user (serial * 3.5);
  turn;
  loop {
    set prompt = K + n;
    set t0 = now;
    hold reqs (1), kv (prompt) reuse (hg) at admission (hg = min(cachedin(kv), reusable(prompt))) {
      set gpu_hit = cached;
      hold cpu (hc) reuse (hc) at admission (hc = max(0, min(cachedin(cpu), reusable(K) - gpu_hit))) {
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
    branch (more) {
      run user (3);
      turn;
    } else {
      end;
    }
  }
}

run { horizon inf; }
"""


def report(monkeypatch, **sets):
    prog = serq_frontend.compile(source=SRC, sets=sets, defs={})
    return same_json(prog, monkeypatch)


def requests(monkeypatch, **sets):
    import serq_sim

    prog = serq_frontend.compile(source=SRC, sets=sets, defs={})
    df = serq_sim.run(prog).records("request", kind="numpy")
    return sorted(zip(*(df[c].tolist() for c in ("session", "turn", "sent", "first_token", "last_token", "gpu",
                                                 "cpu"))))


def pool(rep, name):
    return next(p for p in rep["pools"] if p["name"] == name)


def test_the_blocks_spilled_and_read_back(monkeypatch):
    rep = report(monkeypatch)
    assert rep["end"] == 8.5
    kv, cpu = pool(rep, "kv"), pool(rep, "cpu")
    assert (kv["spills"], kv["evicted_entries"], kv["evicted_units"]) == (5, 1, 20.0)
    assert kv["used"] == pytest.approx(112 / 8.5, rel=1e-12)
    assert cpu["used"] == pytest.approx(4 / 8.5, rel=1e-12)
    assert cpu["cached"] == pytest.approx(44 / 8.5, rel=1e-12)
    assert rep["requests"]["prefix_cache_hit_rate"] == pytest.approx(12 / 40, rel=1e-12)
    assert requests(monkeypatch) == [(0, 1, 0.0, 1.0, 3.0, 0, 0), (0, 2, 6.0, 7.5, 8.5, 4, 8),
                                     (1, 1, 3.5, 4.5, 5.5, 0, 0)]


def test_without_the_tier_the_turn_prefills_what_the_gpu_lost(monkeypatch):
    rep = report(monkeypatch, tier=0)
    assert pool(rep, "kv")["spills"] == 0 and rep["end"] == 8.0
    assert rep["requests"]["prefix_cache_hit_rate"] == pytest.approx(4 / 40, rel=1e-12)
    assert requests(monkeypatch, tier=0)[1] == (0, 2, 6.0, 7.0, 8.0, 4, 0)


def test_a_slow_write_is_no_hit_and_the_run_waits_for_it(monkeypatch):
    rep = report(monkeypatch, wr=5)
    assert requests(monkeypatch, wr=5)[1] == (0, 2, 6.0, 7.0, 8.0, 4, 0)
    # the last session ends at 8, B's last block (evicted at 7) lands at 12: the window is [0, 12]
    assert rep["end"] == 12.0
    assert rep["requests"]["request_throughput"] == pytest.approx(3 / 12, rel=1e-12)
    # the tier's cached units: A's 8 from 3.5, B's 8 from 6 and 4 from 7, to 12
    assert pool(rep, "cpu")["cached"] == pytest.approx((8 * 8.5 + 8 * 6 + 4 * 5) / 12, rel=1e-12)


def test_under_arrivals_the_run_ends_with_its_last_session(monkeypatch):
    # the same sessions sent by a renewal of 3.5 s (A at 3.5, B at 7), A's second turn at 9.5: done at 11.5,
    # with B's last block (evicted at 10.5) still on the link until 15.5
    src = (SRC.replace("arrive batch(2);", "arrive renewal(3.5);").replace("run user (serial * 3.5);", "")
           .replace("run { horizon inf; }", "run { horizon inf; arrivals 2; }"))
    rep = same_json(serq_frontend.compile(source=src, sets={"wr": 5}, defs={}), monkeypatch)
    assert rep["end"] == 11.5
    assert rep["requests"]["request_throughput"] == pytest.approx(3 / 11.5, rel=1e-12)
