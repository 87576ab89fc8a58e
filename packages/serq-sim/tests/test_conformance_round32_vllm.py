"""Conformance of language.txt §7, "vLLM v1 as a serQ program", by hand, in the scheduler's rules no earlier
case held alone: lib/vllm.sq's vllm_request on the step clock (cost 1: an iteration is one time unit),
blocks of 4 tokens:

* "a token budget per step, running requests first in running order, then waiting requests with the budget
  left": a request is admitted only while budget is left, with the first chunk the budget leaves;
* "preemption of running[-1], waiting.prepend_request, num_computed_tokens = 0, no admission in a step that
  preempted" (preempt lifo, re-queued at the head, hold re-executed; admit via skips preempting iterations),
  with §3's "An iteration that schedules no token is not an iteration, unless it preempted: then it is the
  scheduler step that only preempted … It lasts C at zero tokens";
* "chunked prefill, long_prefill_token_threshold" with the threshold's "alone" exception that lib/vllm.sq
  models (docs/vllm.md: §7 lists it as not modelled; vLLM 0.31 on has it): a request alone takes what the
  budget allows;
* "known = computed < prompt ? prompt : computed + 1": a request preempted while it prefills recomputes
  its prompt from the blocks it cached, and samples its first token only then.

Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples). Per request the report's `request` table (lib/vllm.sq's record: sent, admitted, first_token,
last_token, cached, preemptions); the engine's and kv's figures as the JSON report reads them.
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
  set prompt = 10;
  set o = 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  set prompt = 20;
  set o = 1;
  set t0 = now;
  vllm_request_at(reqs, kv, engine, prompt, o, t0, MATCH, inf);
}
run { horizon 100; }
"""


def _engine(**kw) -> str:
    subs = dict(MAXSEQ="256", BLOCKS="100", B="32", CHUNK="", N="2", PROMPT="4", OUT="1",
                REQUEST="vllm_request(reqs, kv, engine, prompt, o, t0)")
    subs.update(kw)
    return vllm_engine(**subs)


def _requests(report) -> list[tuple]:
    """(session, sent, admitted, first_token, last_token, cached, preemptions) a request, in session order."""
    return sorted(request_rows(report))


CASES = [
    # Admission only while budget is left. Budget 2, three requests of prompt 2 and 2 tokens out (a decode
    # of 1). [0, 1]: s0 admitted with min(2, 0 + 2) = 2, prefills 2 (first token 1); no budget left: s1 and
    # s2 wait. [1, 2]: s0's decode (done 2), 1 left: s1 admitted with min(2, 1) = 1, prefills 1. [2, 3]: s1's
    # last 1 (first token 3), s2 admitted with the 1 left. [3, 4]: s1's decode (done 4), s2's last (first
    # token 4). [4, 5]: s2's decode (5). Tokens 2 each, then 1: 9/5; prefill only [0, 1], [2, 3]; mixed
    # [1, 2], [3, 4]; decode only [4, 5].
    ("admitted_while_budget_is_left", _engine(B="2", N="3", PROMPT="2", OUT="2"),
     [(0, 0.0, 0.0, 1.0, 2.0, 0, 0), (1, 0.0, 1.0, 3.0, 4.0, 0, 0), (2, 0.0, 2.0, 4.0, 5.0, 0, 0)],
     {"iterations": 5, "tokens": 1.8, "prefill_only": 2, "mixed": 2, "decode_only": 1}, {"admissions": 3}),
    # Running requests first, in running order, then the waiting with what is left: budget 8, two prompts
    # of 6 (one token out). [0, 1]: s0 admitted with 6, s1 with the 2 left; [1, 2]: s1's last 4. s0 done at
    # 1, s1 at 2, both admitted at 0. Tokens 8, 4: 6 a step.
    ("budget_shared_in_admission_order", _engine(B="8", PROMPT="6"),
     [(0, 0.0, 0.0, 1.0, 1.0, 0, 0), (1, 0.0, 0.0, 2.0, 2.0, 0, 0)],
     {"iterations": 2, "tokens": 6.0, "prefill_only": 2}, {"admissions": 2}),
    # No admission in a step that preempted, and the step that only preempted lasts C at no token. One slot,
    # 3 blocks. s0 (prompt 8, 10 out) prefills [0, 1] and decodes positions 9 … 12 over [1, 5]; at 5 position
    # 13 wants a fourth block: s0, the only resident, is its own victim, caching its 12 computed, and joins
    # again reserving known = 13 (16 in blocks) above 12: rejected, its session ends (no row). The step [5,
    # 6] only preempted: s1 (prompt 4, one token), waiting for the slot since 0, is not admitted in it; at 6
    # it is (hit 0: s0's prefix is not its own), evicting the tail block of s0's entry: first and last token
    # 7. Tokens 8, 1 × 4, 0, 4: 16/7. kv: 8 + 12 · 4 + 4 = 60 over 100; cached 12 [5, 6], 8 [6, 7], 8 + s1's 4
    # from 7: 12 + 8 + 1116.
    ("no_admission_in_a_step_that_preempted", _engine(MAXSEQ="1", BLOCKS="3", PROMPT="serial == 0 ? 8 : 4",
                                                      OUT="serial == 0 ? 10 : 1"),
     [(1, 0.0, 6.0, 7.0, 7.0, 0, 0)],
     {"iterations": 7, "tokens": 16 / 7},
     {"used": 0.6, "cached": 11.36, "preemptions": 1, "rejections": 1, "admissions": 2, "evicted_units": 4.0}),
    # The victim re-enters at the head, ahead of a request waiting longer. Two slots, 3 blocks, budget 32.
    # s0 and s1 (prompt 4, 5 out: decode 4) prefill [0, 1] (first tokens 1); s2 (prompt 1, one token) waits
    # for a slot. [1, 2]: s0 at position 5 takes a second block (3 in use); s1 at position 5 wants one more:
    # s1, the last admitted, is its own victim: it caches its 4 computed (one block) and goes back to the
    # head of the queue, its slot free. No admission in that step; from [2, 3] s1 (known 5, reserve 2
    # blocks beside s0's 2 of 3) does not fit, and s2, which would (one block), waits behind it. s0 decodes
    # positions 6, 7, 8 (done 5, caching 8). [5, 6]: s1 admitted with known 5, hit min(4, floor(4/4)·4) = 4,
    # recomputes 1 token; s2 with the budget left (its first and last token 6), the two evicting s0's 8.
    # s1 decodes 5 - 1 - (5 - 4) = 3 more: [6, 9], done 9. Tokens 8, 1, 1, 1, 1, 2, 1, 1, 1: 17/9.
    ("the_victim_goes_back_ahead_of_the_waiting", _engine(MAXSEQ="2", BLOCKS="3", N="3",
                                                          PROMPT="serial < 2 ? 4 : 1", OUT="serial < 2 ? 5 : 1"),
     [(0, 0.0, 0.0, 1.0, 5.0, 0, 0), (1, 0.0, 0.0, 1.0, 9.0, 0, 1), (2, 0.0, 5.0, 6.0, 6.0, 0, 0)],
     {"iterations": 9, "tokens": 17 / 9},
     {"preemptions": 1, "admissions": 4, "evicted_units": 8.0}),
    # The long-prefill threshold's "alone" exception: threshold 4 (chunk long_prefill(reqs, 4), and the first
    # chunk's allocation cut by the same rule), one request of prompt 10 and 2 tokens out: alone (one
    # holder or waiting), it is not cut: min(10, min(8, inf)) = 8 at admission, 8 then 2 (first token 2),
    # its decode [2, 3]. Tokens 8, 2, 1: 11/3.
    ("threshold_spares_a_request_alone", _engine(B="8", N="1", PROMPT="10", OUT="2",
                                                 CHUNK="chunk long_prefill(reqs, 4);",
                                                 REQUEST="vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, 4)"),
     [(0, 0.0, 0.0, 2.0, 3.0, 0, 0)],
     {"iterations": 3, "tokens": 11 / 3, "prefill_only": 2, "decode_only": 1}, {"admissions": 1}),
    # With a second request waiting (one slot) it is cut: s0 4, 4, 2 (first token 3), decode [3, 4]; then
    # s1, alone again, 8 then 2 (first token 6), decode [6, 7]. Tokens 4, 4, 2, 1, 8, 2, 1: 22/7.
    ("threshold_cuts_while_another_waits", _engine(MAXSEQ="1", B="8", PROMPT="10", OUT="2",
                                                   CHUNK="chunk long_prefill(reqs, 4);",
                                                   REQUEST="vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, 4)"),
     [(0, 0.0, 0.0, 3.0, 4.0, 0, 0), (1, 0.0, 4.0, 6.0, 7.0, 0, 0)],
     {"iterations": 7, "tokens": 22 / 7}, {"admissions": 2}),
    # Preempted while it prefills: known stays the prompt, and the first token is sampled only when the
    # recomputed prefill ends. Threshold 2, 3 blocks, budget 32. s0 (prompt 4, 4 out) and s1 (prompt 6, one
    # token): [0, 1] each admitted with 2 (one block) and prefilling 2; [1, 2] 2 more each (s0's first token
    # 2); [2, 3] s0 decodes at position 5, a second block (3 in use); s1's chunk to 6 wants a second: s1 is
    # its own victim at computed 4, caching one block. From [3, 4] s1 reserves 6 (2 blocks) beside s0's 2:
    # it waits; s0 decodes 6, 7 (done 5, caching 4). [5, 6]: s1 admitted alone (no cut), known 6, hit
    # min(4, floor(5/4)·4) = 4, recomputes 2: first and last token 6. Its row's cached is its first
    # admission's hit, 0. Tokens 4, 4, 1, 1, 1, 2: 13/6.
    ("preempted_while_prefilling", _engine(BLOCKS="3", PROMPT="serial == 0 ? 4 : 6", OUT="serial == 0 ? 4 : 1",
                                           CHUNK="chunk long_prefill(reqs, 2);",
                                           REQUEST="vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, 2)"),
     [(0, 0.0, 0.0, 2.0, 5.0, 0, 0), (1, 0.0, 0.0, 6.0, 6.0, 0, 1)],
     {"iterations": 6, "tokens": 13 / 6},
     {"preemptions": 1, "admissions": 3}),
    # "a hit is the longest run of cached full blocks … the unmatched blocks stay cached, dead", with the
    # replayed trace's match: turn 2 shares only turn 1's prompt (match 10), not its outputs. Turn 1 (prompt
    # 10, 3 out, budget 8): 8, 2 (first token 2), decodes [2, 4], caching positions 1 … 12. Turn 2 (prompt
    # 20) at 4 hits min(12, floor(min(19, 10) / 4) · 4) = 8; the third block (positions 9 … 12, two of them
    # outputs) stays cached, dead. Units min(20, 8 + 8) = 16; prefills 12: 8, 4 (first and last token 6),
    # caching floor(20 / 4) · 4 = 20. kv used 8 + 12 + 12 · 2 + 16 + 20 = 80; cached 12 on [4, 4], the dead
    # 4 on [4, 6], 24 from 6: 8 + 2256 = 2264 over 100. Tokens 8, 2, 1, 1, then 8, 4: 24/6.
    ("a_match_leaves_the_unmatched_blocks_dead", TWO_TURNS.replace("MATCH", "10"),
     [(0, 0.0, 0.0, 2.0, 4.0, 0, 0), (0, 4.0, 4.0, 6.0, 6.0, 8, 0)],
     {"iterations": 6, "tokens": 24 / 6},
     {"used": 0.8, "cached": 22.64, "admissions": 2, "evicted_units": 0.0}),
    # With match inf (a chat: the prompt extends the whole sequence) the hit is all 12: floor(min(19, inf) /
    # 4) · 4 = 16, bounded by the 12 cached; prefill 8 in one iteration [4, 5]. used 44 + 20 = 64; cached 20
    # from 5: 1900. Tokens 8, 2, 1, 1, 8: 20/5.
    ("a_chat_hits_the_outputs_too", TWO_TURNS.replace("MATCH", "inf"),
     [(0, 0.0, 0.0, 2.0, 4.0, 0, 0), (0, 4.0, 4.0, 5.0, 5.0, 12, 0)],
     {"iterations": 5, "tokens": 20 / 5},
     {"used": 0.64, "cached": 19.0, "admissions": 2}),
]


@pytest.mark.parametrize("src, requests, engine, kv", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vllm_scheduler_rule_by_hand(monkeypatch, src, requests, engine, kv):
    r, _obs = run(src, monkeypatch)
    assert _requests(r) == requests
    e = next(s for s in report_json(r)["stages"] if s["name"] == "engine")
    assert {k: e[k] for k in engine} == pytest.approx(engine, rel=1e-12)
    got = pool_json(r, "kv")
    assert {k: got[k] for k in kv} == pytest.approx(kv, rel=1e-12)
