"""llm-d's routers over a family of lib/vllm.sq engines, on a workload built for a closed form: two-turn
conversations (161 prompt tokens and 40 output, then 100 new), blocks to spare, so a follow-up finds its
history on the engine of its first turn and nowhere else.

The history is 161 + 40 tokens of which 200 are computed (the last sampled token is never fed back): 12 blocks
of 16, 192 tokens, a hit of min(192, reusable(301)) = 192 of the follow-up's 301. Over the 462 prompt tokens
of a conversation: prefix affinity (`choose` by -cachedin) sends every follow-up home, 192 / 462; round robin
never (the next engine), 0; random routing home with probability 1 / N, 192 / (462 N) in expectation, and
exactly 192 x (follow-ups sent home) / (462 x conversations) in every run.
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(120)

SRC = """use "vllm.sq";

let N = 4;
let policy = 0;
let bs = 16;

pool reqs[N] { cap 64; admit via engine; }
pool kv[N] { cap 4000 * bs; block bs; evict lru; preempt lifo; }
stage engine[N] : step {
  budget 512;
  cost 0.01 + 4e-5 * decoders + 6e-5 * prefilled;
  memory kv;
}
stage user : delay;

workload {
  arrive poisson(2);
  hidden o;
  init {
    set K = 0;
  }
  turn {
    set n = turn_no == 1 ? 161 : 100;
    set o = 40;
  }
}

session {
  turn;
  loop {
    set prompt = K + n;
    set t0 = now;
    set coin = floor(~uniform(0, N));
    choose j in N by (policy == 0 ? -min(cachedin(kv[j]), reusable(prompt, bs))
                      : policy == 2 ? (j == coin ? 0 : 1)
                      : (j == (serial + turn_no) % N ? 0 : 1),
                      holders(reqs[j]) + queued(reqs[j]));
    vllm_request(reqs[j], kv[j], engine[j], prompt, o, t0);
    set K = prompt + o;
    branch (turn_no < 2) {
      run user (2);
      turn;
    } else {
      end;
    }
  }
}

run { horizon inf; arrivals 500; seed 1; }
"""

RATE = 192 / 462


def run(policy: int, seed: int = 1):
    prog = serq_frontend.compile(source=SRC, sets={"policy": policy}, defs={})
    r = serq_sim.run(prog, seed=seed)
    return r, r.records("request", kind="numpy")


@pytest.mark.parametrize(("policy", "rate"), [(0, RATE), (1, 0.0)])
def test_affinity_and_round_robin(policy, rate):
    r, _ = run(policy)
    assert r.result.requests.completed == 1000
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(rate, rel=1e-12, abs=0)


def test_random_routing_hits_when_it_sends_a_follow_up_home():
    home = conversations = 0
    for seed in (1, 2, 3, 4):
        r, rec = run(2, seed)
        first = {s: e for s, t, e in zip(rec["session"], rec["turn"], rec["engine"]) if t == 1}
        follow = [(s, e, c) for s, t, e, c in zip(rec["session"], rec["turn"], rec["engine"], rec["cached"])
                  if t == 2]
        assert len(first) == len(follow) == 500
        # exact, run by run: a follow-up hits its 192 tokens at home and nothing elsewhere
        assert all(c == (192 if e == first[s] else 0) for s, e, c in follow)
        n_home = sum(e == first[s] for s, e, _ in follow)
        assert r.result.requests.prefix_cache_hit_rate == pytest.approx(192 * n_home / (462 * 500), rel=1e-12)
        home += n_home
        conversations += 500
    # the closed form: home with probability 1 / N = 1 / 4, within 3.5 standard deviations over 2 000
    p = home / conversations
    assert abs(p - 0.25) < 3.5 * math.sqrt(0.25 * 0.75 / conversations), p
