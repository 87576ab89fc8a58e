"""Conformance of language.txt §7's sentences on preemption and recompute, read against vLLM 0.33.0's
scheduler (vllm/v1/core/sched/scheduler.py) and KV cache manager, by hand:

* "preemption of running[-1], waiting.prepend_request, num_computed_tokens = 0, no admission in a step
  that preempted": the running loop's `while True: new_blocks = allocate_slots(…); …; preempted_req =
  self.running[-1]` (FCFS) takes the request last in running order, whichever request grows, and
  `_preempt_request` frees its blocks (`_free_request_blocks`), sets `num_computed_tokens = 0`, counts
  `num_preemptions` and `self.waiting.prepend_request(request)`; the waiting loop runs only `if not
  preempted_reqs` (serQ: preempt lifo, "re-enters the head of the pool's queue", admit via skips a
  preempting iteration);
* "a preempted request keeps its output tokens: it is rescheduled with num_tokens = prompt + outputs,
  reserves and recomputes that many, and generates the rest" (lib/vllm.sq: known, reserve (known),
  prefill (known − c), decode (o − 1 − (known − prompt)));
* "the prefix cache holds every computed full block … a hit is the longest run of cached full blocks, at
  most num_tokens − 1" and "the free queue: freed blocks appended tail first (LRU)": a victim's freed
  blocks go to the free queue tail first, so the grower that takes one takes the victim's last block and
  the victim's re-admission hits the full blocks before it; a partial block, which has no hash, is
  taken before a full one (serQ: the victim "is released with its computed prefix cached", min(cache,
  computed) rounded down to blocks, and eviction per block from the tail).

Each scenario is also a scenario file of `serq vllm scenario` (the same program) and was run through vLLM
0.33.0's real scheduler with `serq vllm real --python …` (docs/vllm-oracle.md): the first-token, last-token
and preemption counts below are its answer too; the test holds serQ to the hand derivation, vLLM not being
a dependency of any test. lib/vllm.sq's vllm_request on the step clock (cost 1: iteration n is [n, n + 1],
a token sampled at its end), blocks of 4 tokens; `known` and `c` (the prefix the latest admission consumed)
observed after the request. Both tiers (conform.run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conform import pool_json, report_json, request_rows, run

ENGINE = """
use "vllm.sq";
pool reqs { cap 16; admit via engine; }
pool kv { cap BLOCKS * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget B; cost 1; memory kv; }
stage think : delay;
workload { arrive batch(N); hidden o; }
session {
  run think (ARRIVE);
  set prompt = PROMPT;
  set o = OUT;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  observe k = known;
  observe hit_last = c;
}
run { horizon 100; }
"""


def engine(**subs: str) -> str:
    src = ENGINE
    for k, v in subs.items():
        src = src.replace(k, v)
    return src


CASES = [
    # A decode preemption that costs the victim its last block. 6 blocks, budget 16; s0 and s1 send 8 (8
    # out) at 0 (vLLM: {"budget": 16, "block_size": 4, "num_blocks": 7, "prefix_caching": true, "requests":
    # [{"prompt": 8, "out": 8}, {"prompt": 8, "out": 8}]}). [0, 1]: both prefill 8 (2 blocks each); first
    # tokens at 1. [1, 2]: position 8, a third block each (6, the pool full). [5, 6]: s0, first in running
    # order, reaches position 12 and wants a fourth: running[-1] is s1, preempted with 12 computed (3 full
    # blocks cached) and 5 outputs (sampled at 1 … 5); s0 takes one block: s1's last (tail first). No
    # admission then; [6, 7] s1 does not fit (known 13: reserve 4 blocks beside s0's 4); s0's eighth token
    # at 8 (done). [8, 9]: s1 admitted, known 12 + 1 = 13, hit min(8, floor(12 / 4) · 4) = 8 (its two
    # first blocks), prefills 13 − 8 = 5 (its sixth token at 9), decodes 8 − 1 − 5 = 2: done at 11.
    ("decode_victim_loses_its_tail_block",
     engine(BLOCKS="6", B="16", N="2", ARRIVE="0", PROMPT="8", OUT="8"),
     [(0, 0.0, 0.0, 1.0, 8.0, 0, 0), (1, 0.0, 0.0, 1.0, 11.0, 0, 1)],
     {"k": [(0, 8.0, 8.0), (1, 11.0, 13.0)], "hit_last": [(0, 8.0, 0.0), (1, 11.0, 8.0)]},
     {"preemptions": 1}),
    # running[-1] rather than the grower, two victims at two steps, and the head of the queue. 5 blocks,
    # budget 16: s0 sends 8, s1 and s2 4 (6 out each) at 0, s3 16 (1 out) at 1 (vLLM: num_blocks 6, the
    # requests in that order, s3 "arrive": 1). [0, 1]: s0 2 blocks, s1 and s2 one each; first tokens at 1.
    # [1, 2]: s0 at position 8 takes the fifth block; s1 at position 4 wants a second: running[-1] is s2
    # (not the grower s1), preempted with 4 computed and 1 output, prepended ahead of s3 (which came at 1);
    # s1 takes s2's block. [5, 6]: s0 at position 12 wants a fourth: running[-1] is now s1, preempted with 8
    # computed (5 outputs), prepended ahead of s2; s0 takes s1's last block (tail first). s0's sixth token at
    # 6 (done). [6, 7]: s1 (the head) known 9, hit min(4, 8) = 4, 3 blocks, prefills 5, its sixth token at
    # 7: decodes 6 − 1 − 5 = 0, done at 7. s2 next, known 5, hit 0 (s1 took its block at 1), 2 blocks (5 in
    # use), prefills 5 (second token at 7), decodes 4: done at 11. s3 (4 blocks) waits behind them until s2
    # frees at 11: [11, 12], done at 12. Had s3 been ahead of s2 at 6, it would have blocked s2 there.
    # reqs: six admissions, waits 0, 0, 0, 1 (s1 again), 5 (s2 again), 10 (s3): 16 / 6.
    ("running_last_victims_prepended",
     engine(BLOCKS="5", B="16", N="4", ARRIVE="serial == 3 ? 1 : 0",
            PROMPT="serial == 0 ? 8 : serial == 3 ? 16 : 4", OUT="serial == 3 ? 1 : 6"),
     [(0, 0.0, 0.0, 1.0, 6.0, 0, 0), (1, 0.0, 0.0, 1.0, 7.0, 0, 1), (2, 0.0, 0.0, 1.0, 11.0, 0, 1),
      (3, 1.0, 11.0, 12.0, 12.0, 0, 0)],
     {"k": [(0, 6.0, 8.0), (1, 7.0, 9.0), (2, 11.0, 5.0), (3, 12.0, 16.0)],
      "hit_last": [(0, 6.0, 0.0), (1, 7.0, 4.0), (2, 11.0, 0.0), (3, 12.0, 0.0)]},
     {"preemptions": 2}),
    # One request preempted twice; at the second its partial block goes and its full one stays. 5 blocks,
    # budget 8: s1 sends 3 (4 out) and s2 8 (6 out) at 0, s0 4 (5 out) at 1 (vLLM: num_blocks 6, requests
    # [{"prompt": 4, "out": 5, "arrive": 1}, {"prompt": 3, "out": 4}, {"prompt": 8, "out": 6}]). [0, 1]: s1
    # 3 (1 block), s2 the 5 the budget leaves (2 blocks; reserve 8 fits); s1's first at 1. [1, 2]: s1
    # decodes, s2 its last 3 (first at 2), s0 admitted with the 4 left (1 block; first at 2). [2, 3]: s1 at
    # position 4 takes the fifth block; s2 at 8 wants a third: running[-1] is s0 (4 computed, 1 output),
    # and s2 takes its block. [3, 4]: s1's fourth token at 4 (done; frees 2 blocks); s0 (known 5, 2 blocks)
    # does not fit beside s2's 3 until then. [4, 5]: s0 known 5, hit 0, prefills 5 (second token at 5).
    # [5, 6]: s0 decodes position 5 (third token at 6). [6, 7]: s2 at position 12 wants a fourth block:
    # running[-1] is s0 again, 6 computed (one full block, one partial) and 3 outputs; s2 takes the partial
    # block (no prefix: vLLM frees it first, it has no hash; serQ caches min(cache, 6) rounded down, 4, and
    # the pool has room without evicting). s2's sixth token at 7 (done). [7, 8]: s0 known 4 + 3 = 7, hit
    # min(4, floor(6 / 4) · 4) = 4, prefills 3 (fourth token at 8), decodes 5 − 1 − 3 = 1: done at 9.
    ("preempted_twice_keeps_its_full_block",
     engine(BLOCKS="5", B="8", N="3", ARRIVE="serial == 0 ? 1 : 0",
            PROMPT="serial == 0 ? 4 : serial == 1 ? 3 : 8", OUT="serial == 0 ? 5 : serial == 1 ? 4 : 6"),
     [(1, 0.0, 0.0, 1.0, 4.0, 0, 0), (2, 0.0, 0.0, 2.0, 7.0, 0, 0), (0, 1.0, 1.0, 2.0, 9.0, 0, 2)],
     {"k": [(1, 4.0, 3.0), (2, 7.0, 8.0), (0, 9.0, 7.0)],
      "hit_last": [(1, 4.0, 0.0), (2, 7.0, 0.0), (0, 9.0, 4.0)]},
     {"preemptions": 2}),
    # Preempted while it recomputes: the request keeps the output it had (vLLM's num_tokens never falls).
    # 5 blocks, budget 6: s0 sends 4 (6 out), s1 2 (8 out), s2 8 (2 out), all at 0 (vLLM: num_blocks 6,
    # budget 6, max_seqs 4, the requests in that order). [0, 1]: s0 4, s1 2 (1 block each), no budget
    # for s2; first tokens at 1. [1, 2]: s0 at position 4 takes a second block, s1 decodes; s2 admitted
    # with the 4 left (1 block; reserve 8, 2 blocks, fits: 3 + 2). [2, 3]: s2 its last 4 (a second block:
    # 5 in use), first token at 3. [3, 4]: s1 at position 4 wants a second block: running[-1] is s2, 8
    # computed (2 full blocks), 1 output; s1 takes its last block. [4, 5], [5, 6]: s2 (known 9, reserve 3
    # blocks) does not fit beside s0's 2 and s1's 2, and at [5, 6] s0's position 8 takes the fifth block,
    # s2's cached first block (evicted); s0's sixth token at 6 (done). [6, 7]: s2 known 9, hit 0, 5 tokens
    # (the budget less s1's 1: 2 blocks, reserve 3 beside s1's 2). [7, 8]: s1 at position 8 takes the fifth
    # block, its eighth token at 8 (done); s2's next 4 (positions 5 … 8) want a third block: running[-1] is
    # s2 itself, preempted with 5 computed (1 full block) — vLLM keeps num_tokens = 8 + 1 = 9. [8, 9]: s2
    # known max(9, 8) = 9, hit min(4, 8) = 4, 3 blocks, prefills 5: its second token at 9, decodes 2 − 1 − 1
    # = 0: done at 9, first token still 3, 2 preemptions. (The spec's known, computed < prompt ? prompt :
    # computed + 1, is 8 here: see test_the_specs_known_forgets_the_output.) Waits of reqs: 1 (s2 at 1), 3
    # (from 3 to 6), 1 (from 7 to 8).
    ("preempted_while_it_recomputes",
     engine(BLOCKS="5", B="6", N="3", ARRIVE="0",
            PROMPT="serial == 0 ? 4 : serial == 1 ? 2 : 8", OUT="serial == 0 ? 6 : serial == 1 ? 8 : 2"),
     [(0, 0.0, 0.0, 1.0, 6.0, 0, 0), (1, 0.0, 0.0, 1.0, 8.0, 0, 0), (2, 0.0, 1.0, 3.0, 9.0, 0, 2)],
     {"k": [(0, 6.0, 4.0), (1, 8.0, 2.0), (2, 9.0, 9.0)],
      "hit_last": [(0, 6.0, 0.0), (1, 8.0, 0.0), (2, 9.0, 4.0)]},
     {"preemptions": 2}),
]


@pytest.mark.parametrize("name, src, rows, observes, kv", CASES, ids=[c[0] for c in CASES])
def test_preemption_and_recompute_as_vllm_does(monkeypatch, name, src, rows, observes, kv):
    r, obs = run(src, monkeypatch)
    assert request_rows(r) == rows
    for key, want in observes.items():
        assert obs[key] == want, key
    got = pool_json(r, "kv")
    assert {k: got[k] for k in kv} == kv


def test_the_queue_waits_of_two_victims_and_a_newcomer(monkeypatch):
    """running_last_victims_prepended's request slots: six admissions, waits 0, 0, 0 (the first three),
    1 (s1 again: preempted at 5, admitted at 6), 5 (s2: preempted at 1, admitted at 6) and 10 (s3: sent at
    1, admitted at 11): 16 / 6; the time in the queue 1 + 5 + 10 over the horizon, 100."""
    r, _obs = run(CASES[1][1], monkeypatch)
    reqs = pool_json(r, "reqs")
    assert reqs["admissions"] == 6
    assert abs(reqs["wait"] - 16 / 6) < 1e-12
    assert abs(reqs["queue"] - 0.16) < 1e-12
    assert report_json(r)["end"] == 100.0


LIB = Path(__file__).resolve().parents[3] / "packages" / "serq-vllm" / "src" / "serq_vllm" / "lib" / "vllm.sq"


def test_the_specs_known_forgets_the_output(monkeypatch):
    """language.txt §3 and §7 write a preempted request's tokens as `known = computed < prompt ? prompt :
    computed + 1`; lib/vllm.sq writes `max(had, …)` (its comment: the spec's formula "forgets the kept
    outputs on that path; the real scheduler does not"). On preempted_while_it_recomputes, vllm_request_at
    with the spec's formula gives s2 known 8 at its third admission (5 computed, below the prompt): it
    prefills 8 − 4 = 4, takes that for its first token (sampled again, at 9) and decodes 2 − 1 − 0 = 1 more:
    done at 10, one token more than o. vLLM 0.33.0's scheduler (serq vllm real) ends it at 9 with its first
    token at 3, as the library does (the case above)."""
    text = LIB.read_text(encoding="utf-8")
    start = text.index("def vllm_request_at(")
    lib_def = text[start:text.index("\n}\n", start) + 3]
    spec = lib_def.replace("def vllm_request_at(", "def spec_request_at(").replace(
        "max(had, computed < prompt ? prompt : computed + 1)", "(computed < prompt ? prompt : computed + 1)")
    assert spec.count("(computed < prompt ? prompt : computed + 1)") == 2
    src = CASES[3][1].replace('use "vllm.sq";', 'use "vllm.sq";\n' + spec).replace(
        "vllm_request(reqs, kv, engine, prompt, o, t0);", "spec_request_at(reqs, kv, engine, prompt, o, t0, inf, inf);")
    r, obs = run(src, monkeypatch)
    assert request_rows(r)[2] == (2, 0.0, 1.0, 9.0, 10.0, 0, 2)
    assert obs["k"][2] == (2, 10.0, 8.0)
