"""Conformance of two rows of language.txt §7's table, by hand, on lib/vllm.sq's request, on both simulator
tiers (the same report and samples, byte for byte):

* "the prefix cache holds every computed full block, generated tokens included; a hit is the longest run
  of cached full blocks, at most num_tokens − 1 | cache (prompt + out − 1); reuse (floor(min(prev prompt,
  prompt − 1)/bs)·bs); the unmatched blocks stay cached, dead";
* "a forced miss (a nonce at the head of the prompt) matches nothing; the old blocks stay | reuse (0)";

with "admission needs blocks for the whole prompt (scheduler_reserve_full_isl = True), but only the first
chunk is allocated | kv (hit + min(prompt − hit, budget_left(engine))) reserve (prompt)".

One session sends two requests on the step clock (cost 1: a time is a step count), blocks of 4 tokens,
budget 16: the first of 10 prompt tokens and 3 output tokens, the second of 18 prompt tokens (the first
request's 13 and 5 new ones) and 2 output tokens, either extending the first (vllm_request: `match` inf)
or a forced miss (`match` 0).
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

PROGRAM = """
use "vllm.sq";
let bs = 4;
pool reqs { cap 4; admit via engine; }
pool kv { cap 64; block bs; evict lru; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); hidden o; }
session {
  set prompt = 10;
  set o = 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  set prompt = 18;
  set o = 2;
  set t0 = now;
  vllm_request_at(reqs, kv, engine, prompt, o, t0, MATCH, inf);
  observe own = cachedin(kv);
}
run { horizon 10; }
"""


def _both(src: str, monkeypatch):
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(prog)
        cols = {n: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
                for n, o in r.observes.items()}
        out.append((encode_json(r), cols, r))
    assert out[0][:2] == out[1][:2]
    r = out[1][2]
    return r, {n: list(zip(o.times.tolist(), o.values.tolist())) for n, o in r.observes.items()}


@pytest.mark.parametrize("match, hit, first, done, used, cached", [
    # The first request: admitted at 0 with its 10 tokens (reserve 10, 3 blocks: 12), prefilled over
    # [0, 1] (first token at 1), 2 more tokens decoded over [1, 3] at positions 11 and 12, within the 12.
    # It caches min(10 + 3, 12 computed) = 12: three full blocks, the third holding generated tokens.
    # Extending it, the second request's hit is min(12 cached, floor((18 - 1) / 4) * 4 = 16) = 12: it
    # allocates 12 + min(6, 16) = 18 (20 in blocks), prefills 6 over [3, 4] and decodes its last token
    # over [4, 5]. It caches min(20, 19 computed) rounded down: 16.
    # used: 12 on [0, 3], 20 on [3, 5]: 76 over 10; cached: none until 5 (the 12 consumed at 3), 16 on [5, 10].
    ("inf", 12.0, [1.0, 4.0], [3.0, 5.0], 7.6, 8.0),
    # A forced miss consumes none of the 12 (reuse 0): they stay, dead. Its first chunk is the budget,
    # 16 tokens (16 allocated, 18 reserved: 20 fits beside the dead 12, which never block), prefilled
    # over [3, 4]; the other 2 over [4, 5], the hold grown to 20 (first token at 5); its last token over
    # [5, 6]. It caches 16 beside the dead 12.
    # used: 12 on [0, 3], 16 on [3, 4], 20 on [4, 6]: 92 over 10; cached: 12 on [3, 6], 28 on [6, 10].
    ("0", 0.0, [1.0, 5.0], [3.0, 6.0], 9.2, 14.8),
])
def test_a_hit_counts_the_generated_tokens_blocks_and_a_forced_miss_leaves_them_dead(monkeypatch, match, hit,
                                                                                      first, done, used,
                                                                                      cached):
    r, o = _both(PROGRAM.replace("MATCH", match), monkeypatch)
    assert o["hit"] == [(0.0, 0.0), (3.0, hit)]
    assert [t for t, _v in o["first_token"]] == first
    assert [t for t, _v in o["done"]] == done
    assert [v for _t, v in o["own"]] == [16.0]
    kv = next(p for p in r.result.pools if p.name == "kv")
    assert (kv.admissions, kv.preemptions, kv.used, kv.cached, kv.evicted_units) == (2, 0, used, cached, 0.0)
