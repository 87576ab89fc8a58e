"""Conformance of language.txt §7, "vLLM v1 as a serQ program", by hand: what each line of lib/vllm.sq's
vllm_request does in vLLM's scheduler, on the step clock (cost 1: an iteration is one time unit), blocks of
4 tokens:

* "a token budget per step, running requests first in running order, then waiting requests with the budget
  left" (step { budget B }, admit via engine);
* "max_num_seqs" (pool reqs { cap max_seqs }), "FCFS, head-of-line blocking (if new_blocks is None: break)"
  (the first request that does not fit blocks), "admission needs blocks for the whole prompt
  (scheduler_reserve_full_isl = True), but only the first chunk is allocated" (reserve (known));
* "chunked prefill, long_prefill_token_threshold" (chunk), "allocate_slots block by block as the request
  advances" (growing kv);
* "preemption of running[-1] …, num_computed_tokens = 0" and "a preempted request keeps its output tokens:
  it is rescheduled with num_tokens = prompt + outputs, reserves and recomputes that many, and generates
  the rest" (preempt lifo; known = computed < prompt ? prompt : computed + 1);
* "the prefix cache holds every computed full block, generated tokens included; a hit is the longest run of
  cached full blocks, at most num_tokens − 1" (cache (prompt + out − 1) … floor((known − 1) / bs) · bs), "a
  forced miss … matches nothing; the old blocks stay" (reuse (0)), "the free queue … (LRU)" (evict lru).

Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples). Per request the report's `request` table (lib/vllm.sq's record: admitted, first_token, last_token,
cached, preemptions); the engine's and kv's figures as the JSON report reads them. Horizon 100: time
averages are over 100.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, request_rows, run, vllm_engine

TWO_TURNS = """
use "vllm.sq";
pool reqs { cap 256; admit via engine; }
pool kv { cap 100 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive batch(1); hidden o; }
session {
  set prompt = P1;
  set o = O1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  set prompt = P2;
  set o = 2;
  set t0 = now;
  SECOND;
}
run { horizon 100; }
"""


def _engine(**kw) -> str:
    subs = dict(MAXSEQ="256", BLOCKS="100", B="8", CHUNK="", N="2", PROMPT="serial == 0 ? 10 : 6",
                OUT="serial == 0 ? 3 : 2", REQUEST="vllm_request(reqs, kv, engine, prompt, o, t0)")
    subs.update(kw)
    return vllm_engine(**subs)


def _two_turns(p1, o1, p2, second="vllm_request(reqs, kv, engine, prompt, o, t0)") -> str:
    return (TWO_TURNS.replace("P1", str(p1)).replace("O1", str(o1)).replace("P2", str(p2))
            .replace("SECOND", second))


def _requests(report) -> list[tuple]:
    """(session, sent, admitted, first_token, last_token, cached, preemptions) a request, in send order."""
    return sorted(request_rows(report), key=lambda r: (r[1], r[0]))


CASES = [
    # Budget 8, s0 (prompt 10, 3 out: decode 2) and s1 (6, 2 out: decode 1), both waiting at 0.
    # [0, 1]: s0 admitted with min(10, 0 + budget_left 8) = 8 units, prefills 8; no budget left, s1 waits.
    # [1, 2]: the running request first: s0's last 2; then s1 with the 6 left: admitted, prefills 6; both
    # prefills end: first tokens at 2. [2, 3]: a decode each (s1 done at 3); [3, 4] s0's last (4).
    # Tokens 8, 8, 2, 1: 19/4; jobs 1, 2, 2, 1: 1.5; two prefill-only, two decode-only iterations. kv:
    # s0 8 (2 blocks) on [0, 1], 12 from 1 (positions 10, 11, 12); s1 8 (positions 6, 7): 8 + 20 + 20 + 12
    # = 60; cached from its release: s1 floor(7 / 4) · 4 = 4 from 3, s0 12 from 4: 4 · 97 + 12 · 96 = 1540.
    ("budget", _engine(),
     [(0, 0.0, 0.0, 2.0, 4.0, 0, 0), (1, 0.0, 1.0, 2.0, 3.0, 0, 0)],
     {"iterations": 4, "tokens": 4.75, "batch": 1.5, "prefill_only": 2, "decode_only": 2, "mixed": 0},
     {"used": 0.6, "cached": 15.4, "admissions": 2, "preemptions": 0}),
    # max_num_seqs 1: s1 waits for s0's slot, whatever budget is left: s0 as above (done at 4), s1 admitted
    # in the iteration starting at 4, prefill 6 (first token 5), its decode over [5, 6]. Tokens 8, 2, 1, 1,
    # 6, 1: 19/6. kv 8 + 12 · 3 + 8 + 8 = 60; cached s0 12 from 4, s1 4 from 6: 1152 + 376 = 1528.
    ("max_num_seqs", _engine(MAXSEQ="1"),
     [(0, 0.0, 0.0, 2.0, 4.0, 0, 0), (1, 0.0, 4.0, 5.0, 6.0, 0, 0)],
     {"iterations": 6, "tokens": 19 / 6, "batch": 1.0, "prefill_only": 3, "decode_only": 3, "mixed": 0},
     {"used": 0.6, "cached": 15.28, "admissions": 2}),
    # long_prefill_token_threshold 4 (the stage's chunk and the admission's first chunk, vllm_request_at's
    # threshold): [0, 1] s0 admitted with min(10, min(8, 4)) = 4 units, prefills 4; s1 with the 4 left, 4.
    # [1, 2]: s0 4 more, s1 its last 2 (first token 2). [2, 3]: s0's last 2 (first token 3), s1's decode
    # (done 3): a mixed iteration. [3, 4], [4, 5]: s0's two decodes (5). Tokens 8, 6, 3, 1, 1: 19/5. kv:
    # 8, then 8 + 8 (positions 8, 6), then 12 + 8, 12, 12: 68; cached s1 4 from 3, s0 12 from 5: 1528.
    ("chunk", _engine(CHUNK="chunk long_prefill(reqs, 4);",
                      REQUEST="vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, 4)"),
     [(0, 0.0, 0.0, 3.0, 5.0, 0, 0), (1, 0.0, 0.0, 2.0, 3.0, 0, 0)],
     {"iterations": 5, "tokens": 3.8, "batch": 1.6, "prefill_only": 2, "decode_only": 2, "mixed": 1},
     {"used": 0.68, "cached": 15.28, "admissions": 2}),
    # Head-of-line blocking and running[-1]: 4 blocks (16 tokens), budget 32. s0 (8, decode 2), s1 (12,
    # decode 1), s2 (2, decode 1). [0, 1]: s0 admitted (8 units, reserve 8), prefills 8 (first token 1);
    # s1's reserve 12 does not fit beside 8, and s2, which would, waits behind it (FCFS). [1, 2], [2, 3]:
    # s0 decodes (position 9 takes a third block), done at 3, caching floor(10 / 4) · 4 = 8. [3, 4]: s1
    # admitted (12, evicting s0's 8: it does not block, the one entry, 2 blocks); with 20 of budget left
    # s2 too (12 + 4 ≤ 16); both prefill (first tokens 4). [4, 5]: s1's decode at position 13 wants a
    # fourth block: none free, so the last admitted, s2, is preempted (computed 2, nothing cached: no full
    # block) and requeued at the head; s1 decodes (done 5, caching floor(13 / 4) · 4 = 12). [5, 6]: s2
    # again: known = computed + 1 = 3 (its sampled token), hit min(cachedin 0, …) = 0, 3 units; prefills 3
    # and decodes 2 - 1 - (3 - 2) = 0: done at 6, one preemption. Tokens 8, 1, 1, 14, 1, 3: 28/6. kv 8 +
    # 12 + 12 + 16 + 16 + 4 = 68; evicted s0's entry (8 units); cached s0's 8 on [3, 3] (0), s1's 12 from 5,
    # s2's computed 3 → 0: 12 · 95 = 1140.
    ("head_of_line_and_running_last", _engine(BLOCKS="4", B="32", N="3",
                                              PROMPT="serial == 0 ? 8 : serial == 1 ? 12 : 2",
                                              OUT="serial == 0 ? 3 : 2"),
     [(0, 0.0, 0.0, 1.0, 3.0, 0, 0), (1, 0.0, 3.0, 4.0, 5.0, 0, 0), (2, 0.0, 3.0, 4.0, 6.0, 0, 1)],
     {"iterations": 6, "tokens": 28 / 6, "batch": 7 / 6, "prefill_only": 3, "decode_only": 3, "mixed": 0},
     {"used": 0.68, "cached": 11.4, "admissions": 4, "preemptions": 1, "evicted_entries": 1,
      "evicted_units": 8.0}),
    # The whole prompt reserved, the first chunk allocated: 4 blocks, budget 6, s0 (prompt 8) and s1 (12),
    # one output token each. [0, 1]: s0 admitted with min(8, 6) = 6 units (2 blocks), prefills 6. [1, 2]:
    # s0's last 2 (done at 2: first and last token); 4 of budget left, and s1's first chunk (4, one block)
    # would fit beside s0's 8, but its reserve, the prompt's 12, does not: it waits. At 2 s0 caches its 8.
    # [2, 3]: s1 admitted with min(12, 6) = 6 units (8, two blocks: not the 12 it reserved), prefills 6;
    # [3, 4] 6 more, growing to 12, which evicts the tail block of s0's entry (4 units). kv 8 + 8 + 8 + 12 =
    # 36; cached 8 on [2, 3], 4 on [3, 4], then 4 + 12 from 4: 8 + 4 + 1536 = 1548.
    ("reserve_whole_prompt_allocate_first_chunk", _engine(BLOCKS="4", B="6", PROMPT="serial == 0 ? 8 : 12",
                                                          OUT="1"),
     [(0, 0.0, 0.0, 2.0, 2.0, 0, 0), (1, 0.0, 2.0, 4.0, 4.0, 0, 0)],
     {"iterations": 4, "tokens": 5.0, "prefill_only": 4},
     {"used": 0.36, "cached": 15.48, "admissions": 2, "evicted_entries": 0, "evicted_units": 4.0}),
    # Recompute after a decode preemption: 4 blocks, budget 32, two requests of prompt 4 and 6 out (decode
    # 5). [0, 1] both prefill 4 (first tokens 1); [1, 5] both decode (positions 5 … 8, two blocks each:
    # the pool full from 1). [5, 6]: s0 at position 9 wants a third block: s1 (the last admitted) is
    # preempted at computed 8, caching 8; s0 takes a block, evicting the tail block of s1's entry (lru,
    # the only one: 4 left), decodes its last (done 6, caching floor(9 / 4) · 4 = 8). [6, 7]: s1 again with
    # known = 8 + 1 = 9 (vLLM's num_tokens: prompt and outputs), hit min(4, floor(8 / 4) · 4) = 4, 9
    # units (3 blocks; evicting s0's tail block), recomputes 9 - 4 = 5 and decodes 6 - 1 - (9 - 4) = 0:
    # done at 7, its six tokens 1 + 4 + 1. Tokens 8, 2, 2, 2, 2, 1, 5: 22/7. kv 8 + 16 · 4 + 12 + 12 = 96;
    # evicted 4 + 4 units, no whole entry; cached 4 on [5, 6], s0's 4 on [6, 7], then s0's 4 and s1's 8
    # (computed 9) from 7: 4 + 4 + 12 · 93 = 1124.
    ("recompute", _engine(BLOCKS="4", B="32", PROMPT="4", OUT="6"),
     [(0, 0.0, 0.0, 1.0, 6.0, 0, 0), (1, 0.0, 0.0, 1.0, 7.0, 0, 1)],
     {"iterations": 7, "tokens": 22 / 7, "batch": 12 / 7, "prefill_only": 2, "decode_only": 5, "mixed": 0},
     {"used": 0.96, "cached": 11.24, "admissions": 3, "preemptions": 1, "evicted_entries": 0,
      "evicted_units": 8.0}),
    # The prefix cache holds generated tokens: turn 1 (prompt 10, 3 out) computes positions 1 … 12 and
    # caches min(13, 12) = 12 at 4. Turn 2 (prompt 18 = 13 + 5) hits min(12, floor(17 / 4) · 4 = 16) = 12
    # (two of them generated), allocates min(18, 12 + 8) = 18 (20), prefills 6 (first token 5), decodes 1
    # (6). kv 44 + 20 + 20 = 84; the 12 consumed at 4, then floor(19 / 4) · 4 = 16 cached from 6: 16 · 94.
    ("hit_includes_outputs", _two_turns(10, 3, 18),
     [(0, 0.0, 0.0, 2.0, 4.0, 0, 0), (0, 4.0, 4.0, 5.0, 6.0, 12, 0)],
     {"iterations": 6, "prefill_only": 3, "decode_only": 3},
     {"used": 0.84, "cached": 15.04, "admissions": 2}),
    # A hit is at most num_tokens − 1: turn 1 (prompt 8, 1 out) caches 8 at 1; the same prompt of 8 again
    # hits floor(7 / 4) · 4 = 4, not 8: the last block is recomputed for its logits (prefill 4, first
    # token 2, done 3).
    ("hit_below_num_tokens", _two_turns(8, 1, 8),
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 1.0, 1.0, 2.0, 3.0, 4, 0)],
     {"iterations": 3}, {"used": 0.28, "admissions": 2}),
    # One token more (prompt 9) and the whole 8 is a hit: floor(8 / 4) · 4.
    ("hit_whole_blocks", _two_turns(8, 1, 9),
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 1.0, 1.0, 2.0, 3.0, 8, 0)],
     {"iterations": 3}, {"used": 0.32, "admissions": 2}),
    # A forced miss (vllm_request_at's match -1: reuse (0)) matches nothing and the old 12 stay cached,
    # dead: turn 2 prefills all 18 in chunks of the budget, 8, 8, 2 (first token 7), decodes 1 (8). kv 44 +
    # 8 + 16 + 20 + 20 = 108; cached 12 from 4 (never consumed) and 16 (computed 19) from 8: 1152 + 1472.
    ("forced_miss", _two_turns(10, 3, 18, "vllm_request_at(reqs, kv, engine, prompt, o, t0, -1, inf)"),
     [(0, 0.0, 0.0, 2.0, 4.0, 0, 0), (0, 4.0, 4.0, 7.0, 8.0, 0, 0)],
     {"iterations": 8, "tokens": 31 / 8, "prefill_only": 5, "decode_only": 3},
     {"used": 1.08, "cached": 26.24, "admissions": 2, "evicted_entries": 0}),
]


@pytest.mark.parametrize("src, requests, engine, kv", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vllm_request_in_the_scheduler(monkeypatch, src, requests, engine, kv):
    r, _obs = run(src, monkeypatch)
    assert _requests(r) == requests
    e = next(s for s in report_json(r)["stages"] if s["name"] == "engine")
    assert {k: e[k] for k in engine} == pytest.approx(engine, rel=1e-12)
    got = pool_json(r, "kv")
    assert {k: got[k] for k in kv} == pytest.approx(kv, rel=1e-12)


WAIT_CHANNEL = """
use "vllm.sq";
pool reqs { cap 1; admit via engine; }
pool kv { cap 3 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; memory kv; }
workload { arrive batch(2); hidden o; }
session {
  set prompt = serial == 0 ? 8 : 4;
  set o = serial == 0 ? 1 : 6;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  branch (serial == 0) {
    set prompt = 12;
    set o = 1;
    set t0 = now;
    vllm_request(reqs, kv, engine, prompt, o, t0);
  }
}
run { horizon 100; }
"""


def test_a_waiting_requests_prefix_is_evictable_until_it_is_scheduled(monkeypatch):
    """§7: "a waiting request's prefix is looked up and its blocks touched only when it is scheduled"
    (units evaluated at admission; the queue served by the engine). One slot, 3 blocks. s0's first request
    (prompt 8, one token) runs [0, 1] and caches 8; its second (prompt 12) is sent at 1 and waits for the
    slot s1 took at 1 (prompt 4, 6 out: prefill [1, 2], decodes [2, 7]). While it waits s1's growth evicts
    its prefix block by block from the tail: at 2 (position 5, a second block) and at 6 (position 9, a
    third). Admitted at 7, it finds nothing cached (it would have found 8 when it queued): cached 0, all 12
    prefilled (first token 8), evicting s1's 8 just cached. kv: 8 + 4 + 8 · 4 + 12 + 12 = 68; cached 8 on [1,
    2], 4 on [2, 6], s0's 12 from 8: 8 + 16 + 1104; two whole entries and 16 units evicted."""
    r, _obs = run(WAIT_CHANNEL, monkeypatch)
    assert _requests(r) == [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (1, 0.0, 1.0, 2.0, 7.0, 0, 0),
                            (0, 1.0, 7.0, 8.0, 8.0, 0, 0)]
    kv = pool_json(r, "kv")
    assert {k: kv[k] for k in ("used", "cached", "evicted_entries", "evicted_units")} == \
        pytest.approx({"used": 0.68, "cached": 11.28, "evicted_entries": 2, "evicted_units": 16.0}, rel=1e-12)


FREE_QUEUE = """
use "vllm.sq";
pool reqs { cap 256; admit via engine; }
pool kv { cap 6 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); hidden o; }
session {
  set prompt = serial < 2 ? 8 : LONG;
  set o = 1;
  run d (serial < 2 ? 0 : 1.5);
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  run d (2);
  observe mine = cachedin(kv);
}
run { horizon 100; }
"""


@pytest.mark.parametrize("long, mine, evicted, cached", [
    # s0 and s1 (prompt 8, one output token) prefill together over [0, 1] and finish in that iteration,
    # s0 first (served first, admission order): each caches min(9, 8) = 8, two blocks; the free queue is
    # s0's blocks (tail first), then s1's. At 1.5 s2 (prompt 16) needs 4 of the 6 blocks: 2 are free, and
    # the two evicted are s0's, the entry released first (ties in release time go by release order): s0
    # keeps 0, s1 8; s2 caches 16 at 2.5. Cached 16 on [1, 1.5], 8 on [1.5, 2.5], 24 from 2.5: 8 + 8 +
    # 2340 = 2356 over 100.
    (16, [0.0, 8.0, 16.0], 8.0, 23.56),
    # prompt 12 needs 3 blocks: one evicted, the tail block of s0's entry: s0 keeps its first 4. Cached 16
    # on [1, 1.5], 12 on [1.5, 2.5], 24 from 2.5: 8 + 12 + 2340 = 2360.
    (12, [4.0, 8.0, 12.0], 4.0, 23.6),
])
def test_the_free_queue_is_lru_tail_first_in_release_order(monkeypatch, long, mine, evicted, cached):
    r, obs = run(FREE_QUEUE.replace("LONG", str(long)), monkeypatch)
    assert [v for _s, _t, v in obs["mine"]] == mine
    kv = pool_json(r, "kv")
    assert (kv["evicted_units"], kv["cached"]) == (evicted, pytest.approx(cached, rel=1e-12))


SERVING_ORDER = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 64 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; SERVE CHUNK memory kv; }
workload {
  arrive poisson(0.08);
  hidden o;
  turn { set n = 1 + floor(~exp(40)); set o = 1 + floor(~exp(20)); }
}
session {
  turn;
  set prompt = n;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 2000; seed 3; }
"""


def test_admission_order_is_decode_first_without_a_chunk_cap(monkeypatch):
    """§3: "decode first is by (decoding ? 0 : 1) … Without a per-request chunk cap, serving in admission
    order is serving decode-first (SerqLang.Serve.serve_eq_decode_first; a cap breaks it …), which is why the
    paper's 'prefill from the budget decode leaves' describes vLLM too". lib/vllm.sq's requests (about 160
    over 2 000 iterations, a prefill often cut by the budget) give the same report, byte for byte, under
    `serve admission` and `serve decode first`; with `chunk 8` the two differ, and `serve decode first` is
    `serve by (decoding ? 0 : 1)` with or without it. Each on both tiers."""
    import serq_frontend
    from tiers import same_json

    def report(serve: str, chunk: str) -> dict:
        src = SERVING_ORDER.replace("SERVE", serve).replace("CHUNK", chunk)
        return same_json(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch)

    plain = report("serve admission;", "")
    assert plain == report("serve decode first;", "") == report("serve by (decoding ? 0 : 1);", "")
    assert plain["records"]["request"] > 100 and plain["stages"][0]["mixed"] > 100
    capped = report("serve decode first;", "chunk 8;")
    assert capped == report("serve by (decoding ? 0 : 1);", "chunk 8;")
    assert capped != report("serve admission;", "chunk 8;")


def test_a_request_that_outgrows_the_pool_is_rejected_by_its_reserve(monkeypatch):
    """§3: "A hold that reserves what it will need (reserve (known) after a preemption) is rejected instead,
    once the reservation is above the cap." One request, prompt 8, 10 out, 3 blocks (12). Prefill [0, 1]
    (first token 1), decodes to position 12 by 5 (a third block at 9); at 5 position 13 wants a fourth: the
    only resident is the victim, caching its 12 computed. Joining again it reserves known = 12 + 1 = 13,
    16 in blocks, above 12: rejected, the session ends (no done, no row; its hit and first token stay
    observed). kv: 8 on [0, 1], 12 on [1, 5]: 56 over 100; cached 12 from 5: 1140."""
    src = _engine(BLOCKS="3", B="32", N="1", PROMPT="8", OUT="10")
    src = src.replace("  vllm_request(reqs, kv, engine, prompt, o, t0);", "  vllm_request(reqs, kv, engine, prompt, o, t0);\n"
                      "  observe after = now;")
    r, obs = run(src, monkeypatch)
    assert (obs["hit"], obs["first_token"]) == ([(0, 0.0, 0.0)], [(0, 1.0, 1.0)])
    assert obs["done"] == [] and obs["after"] == [] and report_json(r)["records"] == {"request": 0}
    kv = pool_json(r, "kv")
    assert {k: kv[k] for k in ("used", "cached", "preemptions", "rejections", "admissions", "stuck")} == \
        {"used": 0.56, "cached": 11.4, "preemptions": 1, "rejections": 1, "admissions": 1, "stuck": 0}
