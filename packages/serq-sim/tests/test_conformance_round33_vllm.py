"""Conformance of language.txt §7, "vLLM v1 as a serQ program", by hand, in the scheduler's rules the oracle
scenarios and the earlier rounds did not hold alone, each read against vLLM's scheduler (vllm/v1/core/sched/
scheduler.py, schedule() and update_from_output()):

* "preemption of running[-1], waiting.prepend_request": the running loop's `while True: new_blocks =
  allocate_slots(…); if new_blocks is not None: break; preempted_req = self.running.pop(); …` pops as many
  victims as the chunk's blocks need, last first, and each `_preempt_request` prepends its victim, so the
  waiting queue gets them back in running order (the last victim, the earliest admitted, at the head);
  serQ: a growing job "first grows its hold to the position it will reach (block by block, preempting if
  needed)", each victim "re-enters the head of the pool's queue";
* "the free queue: freed blocks appended tail first (LRU), in the order requests finish" and "evict lru per
  block from the tail, ties by release order": update_from_output frees the requests that stopped in the
  order of num_scheduled_tokens, which is the step's scheduling order (running first, then the new ones), so
  two requests finishing at one step's end go to the free queue in serving order; serQ releases them in the
  order the iteration served them, and evicts the first released first;
* "a hit is the longest run of cached full blocks": a prefix whose tail block was evicted hits the blocks
  before it;
* the priority policy of examples/single-turn/vllm_priority.sq (`queue by (prio, t0)`, `preempt by (-prio,
  -t0, admission) requeue tail`): vLLM's running loop takes `max(self.running, key=(priority,
  arrival_time))`, which may be a request the step already scheduled, and then gives its tokens back to the
  budget (`token_budget += num_scheduled_tokens.pop(…)`); serQ's victim leaves the iteration with the token
  it was planned. When the grower is its own victim, serQ serves the residents after it under such an order
  (docs/language.md, "A grower that preempts itself, and the residents after it", which reads vLLM 0.33.0's
  priority path so); the copies of scheduler.py this was read against end the running loop there under
  both policies (`if preempted_req == request: break`, then `if new_blocks is None: break`), so that case
  pins serQ's documented choice, not a line of those copies.

lib/vllm.sq's vllm_request on the step clock (cost 1: an iteration is one time unit), blocks of 4 tokens.
Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples). Per request the report's `request` table (session, sent, admitted, first_token, last_token,
cached, preemptions), in session then send order; the engine's and kv's figures as the JSON report reads
them. Horizon 100: time averages are over 100.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, request_rows, run, vllm_engine

#: sessions that send one or two requests: session s sends a request of prompt P1 and O1 tokens out after
#: waiting W1, and, when P2 > 0, a second of prompt P2 (one token out) W2 after the first one's last token
TURNS = """
use "vllm.sq";
pool reqs { cap 256; admit via engine; }
pool kv { cap BLOCKS * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
stage think : delay;
workload { arrive batch(N); hidden o; }
session {
  run think (W1);
  set prompt = P1;
  set o = O1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  branch ((P2) > 0) {
    run think (W2);
    set prompt = P2;
    set o = 1;
    set t0 = now;
    vllm_request(reqs, kv, engine, prompt, o, t0);
  }
}
run { horizon 100; WARMUP }
"""


def _turns(**kw) -> str:
    kw.setdefault("WARMUP", "")
    src = TURNS
    for k, v in kw.items():
        src = src.replace(k, v)
    return src


CASES = [
    # Two victims in one step. 4 blocks, budget 16, threshold 8 (chunk long_prefill(reqs, 8), the first
    # chunk cut by the same rule). s0 (prompt 16, one token out), s1 and s2 (prompt 4, 3 out). [0, 1]: s0
    # admitted with min(16, min(16, 8)) = 8 (2 blocks; its reserve of 16 fits the empty pool), s1 and s2 with
    # 4 each (one block each: 16 tokens, the pool full); s1's and s2's first tokens at 1. [1, 2]: s0, first in
    # running order, wants 8 more, 2 blocks: vLLM pops running[-1] = s2 (one block back, not enough) and then
    # s1, both prepended (s1 at the head); serQ grows block by block, taking s2 then s1 (each caches its one
    # computed block, and s0's growth evicts both). No admission in that step. s0's prefill ends at 2 (first
    # and last token; it caches its 16). [2, 3]: s1 then s2, known = 4 + 1 = 5 (the output they keep), hit 0
    # (their blocks were evicted), each allocates 5 (2 blocks) and recomputes 5; [3, 4] each decodes its
    # last 3 - 1 - 1 = 1: done at 4. Tokens 16, 8, 10, 2: 9 a step; kv 5 admissions, 2 preemptions.
    ("two_victims_in_one_step",
     vllm_engine(MAXSEQ="256", BLOCKS="4", B="16", CHUNK="chunk long_prefill(reqs, 8);", N="3",
                 PROMPT="serial == 0 ? 16 : 4", OUT="serial == 0 ? 1 : 3",
                 REQUEST="vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, 8)"),
     [(0, 0.0, 0.0, 2.0, 2.0, 0, 0), (1, 0.0, 0.0, 1.0, 4.0, 0, 1), (2, 0.0, 0.0, 1.0, 4.0, 0, 1)],
     {"iterations": 4, "tokens": 9.0},
     {"preemptions": 2, "admissions": 5}),
    # A hit is the longest run of cached full blocks, after its tail block was evicted. 4 blocks, budget 16.
    # s0 sends 12 (one token out) at 0: [0, 1], caching 12 (3 blocks) at 1. s1 sends 8 at 1.5: admitted at
    # 1.5 with 8 (2 blocks), 8 + 12 > 16, so one block of s0's entry goes, from its tail (vLLM: the free
    # queue held [the unused block, s0's blocks tail first], and s1 takes the first two); done at 2.5, caching
    # 8. s0's second request (prompt 16) at 3 hits min(8, floor(15 / 4) · 4) = 8, its first two blocks;
    # admitted with 16 (evicting s1's 8), prefills 8: done at 4. kv used 12 + 8 + 16 = 36; cached 12 over [1,
    # 1.5], 8 over [1.5, 2.5], 16 over [2.5, 3], 0 over [3, 4], 16 from 4: 6 + 8 + 8 + 1536 = 1558; evicted 4 +
    # 8 units.
    ("a_hit_after_a_tail_eviction",
     _turns(BLOCKS="4", N="2", W1="serial == 0 ? 0 : 1.5", P1="serial == 0 ? 12 : 8", O1="1",
            W2="2", P2="serial == 0 ? 16 : 0"),
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 3.0, 3.0, 4.0, 4.0, 8, 0), (1, 1.5, 1.5, 2.5, 2.5, 0, 0)],
     {"iterations": 3},
     {"used": 0.36, "cached": 15.58, "evicted_units": 12.0, "admissions": 3}),
    # Requests finishing at one step's end go to the free queue in the order the step served them. 3 blocks,
    # budget 16. s0 and s1 send 4 (one token out) at 0: [0, 1], each caching one block at 1, s0's released
    # first. s2 sends 8 at 1.5: 8 + 8 > 12, one block goes: s0's (released first; vLLM: s0 first in
    # num_scheduled_tokens, freed first, evicted first); done at 2.5, caching 8. s1's second request (prompt
    # 8) at 2.9 hits min(4, floor(7 / 4) · 4) = 4: admitted with 8, one more block, evicting s2's tail; done
    # at 3.9 (caching 8). s0's second at 3 waits for the engine (busy until 3.9) and hits 0: its block went
    # at 1.5; admitted at 3.9 with 8 (evicting s2's first block, released at 2.5, then s1's tail, released at
    # 3.9), done at 4.9.
    ("finished_together_evicted_in_serving_order",
     _turns(BLOCKS="3", N="3", W1="serial == 2 ? 1.5 : 0", P1="serial == 2 ? 8 : 4", O1="1",
            W2="serial == 0 ? 2 : 1.9", P2="serial == 2 ? 0 : 8"),
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 3.0, 3.9, 4.9, 4.9, 0, 0), (1, 0.0, 0.0, 1.0, 1.0, 0, 0),
      (1, 2.9, 2.9, 3.9, 3.9, 4, 0), (2, 1.5, 1.5, 2.5, 2.5, 0, 0)],
     {"iterations": 4},
     {"evicted_units": 16.0, "admissions": 5}),
    # A think time of 0 (§3's "A run of zero work completes at once"): the next turn is sent at the instant
    # the last token came, and the step that starts then (no other event pending) admits it, with the
    # prefix the previous request cached at that instant. s0 sends 8 (one token out): [0, 1], caching 8 at
    # 1; its second request (prompt 12) at 1 hits min(8, floor(11 / 4) · 4) = 8, prefills 4: [1, 2]. Tokens
    # 8, 4.
    ("zero_think_next_turn_at_the_same_instant",
     _turns(BLOCKS="100", N="1", W1="0", P1="8", O1="1", W2="0", P2="12"),
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (0, 1.0, 1.0, 2.0, 2.0, 8, 0)],
     {"iterations": 2, "tokens": 6.0},
     {"admissions": 2, "evicted_units": 0.0}),
    # The priority policy's victim already served in the step. 4 blocks, budget 32. s0 (priority 1, prompt 4,
    # 6 out) is sent at 0 and s1 (priority 0, prompt 6, 5 out) at 0.5. [0, 1]: s0 prefills 4 (first token 1).
    # [1, 2]: s0 decodes at position 4 (a second block); s1 admitted (reserve 6, 2 blocks: 4 in use), prefills
    # 6 (first token 2). [2, 3], [3, 4]: both decode (s0 positions 5, 6; s1 6, 7). [4, 5]: s0, first in running
    # order, is given position 7 (no new block); s1's position 8 wants a third block: the least keys (-prio,
    # -t0, admission) are s0's (-1), so s0, already served in this step, is the victim: its token is not
    # computed (vLLM gives it back to the budget), it caches its 7 computed (one block) and goes to the
    # queue by its keys. s1 decodes 8, 9 (done 6, caching 10 in blocks: 8). [6, 7]: s0 known 4 + 4 = 8 (the
    # 4 outputs sampled by 4), hit min(4, floor(7 / 4) · 4) = 4, allocates 8 and recomputes 4 (its fifth
    # token at 7); [7, 8] its last (a third block, evicting s1's tail block): done 8. Tokens 4, 7, 2, 2, 1, 1,
    # 4, 1: 22 / 8; batch 1, 2, 2, 2, 1, 1, 1, 1: 11 / 8. kv used 4 + 16 · 3 + 12 · 2 + 8 + 12 = 96; cached s0's
    # 4 over [4, 6], s1's 8 over [6, 7], 4 over [7, 8], s1's 4 and s0's 8 from 8: 8 + 8 + 4 + 1104.
    ("priority_victim_already_served", """
use "vllm.sq";
pool reqs { cap 256; admit via engine; queue by (prio, t0); }
pool kv { cap 4 * 4; block 4; evict lru; preempt by (-prio, -t0, admission) requeue tail; }
stage engine : step { budget 32; cost 1; memory kv; }
stage think : delay;
workload { arrive batch(2); hidden o; }
session {
  run think (serial == 0 ? 0 : 0.5);
  set prio = serial == 0 ? 1 : 0;
  set prompt = serial == 0 ? 4 : 6;
  set o = serial == 0 ? 6 : 5;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 100; }
""", [(0, 0.0, 0.0, 1.0, 8.0, 0, 1), (1, 0.5, 1.0, 2.0, 6.0, 0, 0)],
     {"iterations": 8, "tokens": 2.75, "batch": 1.375},
     {"used": 0.96, "cached": 11.24, "preemptions": 1, "evicted_units": 4.0, "admissions": 3}),
    # The priority policy's grower that is its own victim, and the resident after it: docs/language.md ("A
    # grower that preempts itself, and the residents after it"): under an order other than lifo the serving
    # goes on (the project's reading of vLLM 0.33.0's priority path). 3 blocks, budget 32. s0 (priority 1,
    # prompt 7, 4 out) at 0, s1 (priority 0, prompt 4, 3 out) at 0.5. [0, 1]: s0 prefills 7 (2 blocks; first
    # token 1). [1, 2]: s0 decodes position 7; s1 admitted (one block: 3 in use), prefills 4 (first token 2).
    # [2, 3]: s0's position 8 wants a third block; the least keys are s0's own (-1): it is its own victim,
    # caching its 8 computed; s1 is still served: its position 4 takes a second block, evicting s0's tail
    # block. [3, 4]: s1's last (done 4, caching 4). s0, known 7 + 2 = 9 (3 blocks), waits for s1's blocks;
    # [4, 5]: admitted, hit min(4, floor(8 / 4) · 4) = 4 (evicting s1's block), recomputes 5 (its third
    # token); [5, 6] its last: done 6. Tokens 7, 5, 1, 1, 5, 1: 20 / 6; batch 7 / 6. kv used 8, 12, 8, 8, 12,
    # 12: 60; cached s0's 4 over [2, 4], s0's 8 from 6: 8 + 752.
    ("priority_grower_its_own_victim",
     """
use "vllm.sq";
pool reqs { cap 256; admit via engine; queue by (prio, t0); }
pool kv { cap 3 * 4; block 4; evict lru; preempt by (-prio, -t0, admission) requeue tail; }
stage engine : step { budget 32; cost 1; memory kv; }
stage think : delay;
workload { arrive batch(2); hidden o; }
session {
  run think (serial == 0 ? 0 : 0.5);
  set prio = serial == 0 ? 1 : 0;
  set prompt = serial == 0 ? 7 : 4;
  set o = serial == 0 ? 4 : 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 100; }
""", [(0, 0.0, 0.0, 1.0, 6.0, 0, 1), (1, 0.5, 1.0, 2.0, 4.0, 0, 0)],
     {"iterations": 6, "tokens": 20 / 6, "batch": 7 / 6},
     {"used": 0.6, "cached": 7.6, "preemptions": 1, "evicted_units": 8.0, "admissions": 3}),
    # arrive closed(1): a session ends at its request's last token and its replacement arrives at that
    # instant, its request admitted by the step that starts then (§3: a step "sees every arrival up to it").
    # Prompt 4, one token out, horizon 5: session k's request runs [k, k + 1] for k = 0 … 4; session 5 arrives
    # at 5 and the step planned then (at the horizon) counts (docs/language.md: "an iteration planned then
    # … is counted in iterations"), its row never written. Iterations 6, admissions 6, requests 5; kv used 4
    # throughout; cached 4 from 1, 2, 3, 4 (and 5): 4 · (4 + 3 + 2 + 1) = 40.
    ("closed_replacement_at_the_same_instant", """use "vllm.sq";
pool reqs { cap 256; admit via engine; }
pool kv { cap 100 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; memory kv; }
workload { arrive closed(1); hidden o; }
session {
  set prompt = 4;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 5; }
""",
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (1, 1.0, 1.0, 2.0, 2.0, 0, 0), (2, 2.0, 2.0, 3.0, 3.0, 0, 0),
      (3, 3.0, 3.0, 4.0, 4.0, 0, 0), (4, 4.0, 4.0, 5.0, 5.0, 0, 0)],
     {"iterations": 6, "requests": 5, "tokens": 4.0},
     {"used": 4.0, "cached": 8.0, "admissions": 6}),
    # The warm-up's end (1) on the engine: the request table keeps the requests sent at or after it (docs/
    # language.md: "the warm-up applies to a request as a whole, by its send time"), the engine's `requests`
    # count those that ended after it, and an iteration counts when it is planned at or after it. s0 sends 4
    # (3 out) at 0: prefill [0, 1] (first token 1), decodes [1, 3]; s1 sends 4 (3 out) at 1: admitted at 1,
    # prefill [1, 2], decodes [2, 4]. Table: s1's row alone; engine: requests 2 (ends 3, 4); iterations [1, 2],
    # [2, 3], [3, 4]: tokens 5, 2, 1, batch 2, 2, 1; kv admissions 1 (s1's, at the warm-up's instant); over
    # [1, 100]: used 12, 16, 8 (36), cached s0's 4 from 3, s1's 4 from 4: 4 + 768.
    ("warmup_cuts_requests_by_sent_and_the_engine_by_end",
     _turns(BLOCKS="100", N="2", W1="serial", P1="4", O1="3", W2="0", P2="0", WARMUP="warmup 1;"),
     [(1, 1.0, 1.0, 2.0, 4.0, 0, 0)],
     {"iterations": 3, "requests": 2, "tokens": 8 / 3, "batch": 5 / 3, "mixed": 1, "decode_only": 2},
     {"admissions": 1, "used": 36 / 99, "cached": 772 / 99}),
]


def _requests(report) -> list[tuple]:
    """(session, sent, admitted, first_token, last_token, cached, preemptions) a request, by session and sent."""
    return sorted(request_rows(report), key=lambda row: (row[0], row[1]))


@pytest.mark.parametrize("src, requests, engine, kv", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vllm_scheduler_rule_by_hand(monkeypatch, src, requests, engine, kv):
    r, _obs = run(src, monkeypatch)
    assert _requests(r) == requests
    e = next(s for s in report_json(r)["stages"] if s["name"] == "engine")
    assert {k: e[k] for k in engine} == pytest.approx(engine, rel=1e-12)
    got = pool_json(r, "kv")
    assert {k: got[k] for k in kv} == pytest.approx(kv, rel=1e-12)


def test_two_victims_come_back_in_running_order(monkeypatch):
    # The table is in the order the last tokens came: s0 at 2, then s1 and s2 at one step's end (4), in the
    # order that step served them, which is the order they were admitted again: s1 (the head of the waiting
    # queue after the two prepends), then s2.
    r, _obs = run(CASES[0][1], monkeypatch)
    assert [row[0] for row in request_rows(r)] == [0, 1, 2]
