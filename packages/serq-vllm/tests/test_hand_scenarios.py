"""Small vLLM scenarios whose answers are derived by hand, step by step, from vLLM v1's scheduler rules.

Each scenario pins one rule at its edge. Its answer is written out below as a trace table (the step clock of
oracle/README.md: step k runs from k to k + 1, a request arriving at a joins just before step a, ``first`` is
the end of the step that completed the prefill, ``done`` of the one that sampled the last token). Both serQ
(``serq vllm scenario``: lib/vllm.sq in programs/scenario.sq) and the plain-Python peer (bench/vllm_peer.py)
must give exactly the hand answer.

Notation in the tables: ``R0 8`` means request 0 is given 8 tokens in the step, ``free`` the KV blocks left
free after the step's allocations (``num_blocks - 1`` hold KV; vLLM keeps a null block), ``tokN`` the N-th
output token sampled at the step's end.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from serq_vllm.scenarios import run_scenario

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[3]


def _load_peer():
    spec = importlib.util.spec_from_file_location("vllm_peer_hand", REPO / "bench" / "vllm_peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_peer_hand"] = mod
    spec.loader.exec_module(mod)
    return mod


peer = _load_peer()

FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


def _keyed(d: dict) -> dict:
    return {str(k): v for k, v in d.items()}


def _hand(first, done, steps, preempted=None, cached=None, preemptions=0):
    n = len(first)
    return {
        "first": _keyed(first),
        "done": _keyed(done),
        "preempted": _keyed(preempted or {i: 0 for i in range(n)}),
        "cached": _keyed(cached or {i: 0 for i in range(n)}),
        "preemptions": preemptions,
        "steps": steps,
    }


# 1. The budget used exactly by a chunk: admission stops when nothing is left (`while waiting and budget > 0`).
#
#   step  scheduled                 left  notes
#   0     R0 8 (its whole prompt)   0     R1, R2 wait: no budget left; R0 tok1 -> first0 = 1
#   1     R0 1, R1 4, R2 3          0     R2's first chunk is cut at the 3 tokens left; R0 tok2 -> done0 = 2;
#                                         R1 tok1 -> first1 = done1 = 2
#   2     R2 4                      28    R2 tok1 -> first2 = done2 = 3
BUDGET_EXACT = {
    "budget": 8, "max_seqs": 4, "block_size": 4, "num_blocks": 17, "chunk": 0, "prefix_caching": False,
    "requests": [{"prompt": 8, "out": 2}, {"prompt": 4, "out": 1}, {"prompt": 7, "out": 1}],
}
BUDGET_EXACT_ANSWER = _hand(first={0: 1, 1: 2, 2: 3}, done={0: 2, 1: 2, 2: 3}, steps=4)

# 2. The long-prefill threshold (chunk 4) only while more than one request runs or waits (vLLM >= 0.31).
#
#   step  running + waiting   cap   scheduled       notes
#   0     0 + 1 (R0)          none  R0 12           alone: its whole prompt in one chunk; first0 = done0 = 1
#   1     0 + 2 (R1, R2)      4     R1 4, R2 4      R1's first chunk cut at 4 (not 16); first2 = done2 = 2
#   2     1 + 0 (R1)          none  R1 16           alone again: the 16 tokens left in one chunk;
#                                                   first1 = done1 = 3 (capped alone too: 4 a step, 6)
LONG_PREFILL_ALONE = {
    "budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 33, "chunk": 4, "prefix_caching": False,
    "requests": [{"prompt": 12, "out": 1}, {"prompt": 20, "out": 1, "arrive": 1}, {"prompt": 4, "out": 1, "arrive": 1}],
}
LONG_PREFILL_ALONE_ANSWER = _hand(first={0: 1, 1: 3, 2: 2}, done={0: 1, 1: 3, 2: 2}, steps=4)

# 3. max_num_seqs (2) reached with budget left: R2 waits though 24 tokens of the budget are unused.
#
#   step  scheduled        left  notes
#   0     R0 4, R1 4       24    two running = max_seqs: R2 not admitted; first0 = first1 = 1
#   1     R0 1, R1 1       30    tok2
#   2     R0 1, R1 1       30    tok3: done0 = done1 = 3, both leave at the step's end
#   3     R2 4             28    first2 = 4
#   4, 5  R2 1             31    done2 = 6
MAX_SEQS = {
    "budget": 32, "max_seqs": 2, "block_size": 4, "num_blocks": 33, "chunk": 0, "prefix_caching": False,
    "requests": [{"prompt": 4, "out": 3}, {"prompt": 4, "out": 3}, {"prompt": 4, "out": 3}],
}
MAX_SEQS_ANSWER = _hand(first={0: 1, 1: 1, 2: 4}, done={0: 3, 1: 3, 2: 6}, steps=7)

# 4. A preemption (recompute) of the last admitted request, its re-admission at the head of the waiting queue
#    ahead of a request that waited before it, and its output tokens kept (block size 2, 6 blocks).
#
#   step  scheduled          blocks R0/R1/R2  free  notes
#   0     R0 4, R1 4         2/2/-            2     budget 8 used; first0 = first1 = 1
#   1     R0 1, R1 1         3/3/-            0     R2 arrives, needs 1 block: none free, waits; tok2
#   2     R0 1, R1 1         3/3/-            0     (6 tokens each: still 3 blocks); tok3
#   3     R0 1               4/-/-            2     R0's 7th token needs a 4th block: R1 (last admitted) is
#                                                   preempted, frees 3, goes to the head: waiting [R1, R2];
#                                                   no admission in this step (nor could R1 fit: the head
#                                                   a preemption puts back needs more blocks than the step
#                                                   leaves free, so the rule never shows in admission order);
#                                                   R0 tok4: done0 = 4
#   4     R1 7, R2 1         -/4/1            1     R1 has prompt 4 + 3 outputs = 7 tokens, recomputes all 7
#                                                   and samples its 4th: done1 = 5 (first1 stays 1); R2 gets the
#                                                   1 token left
#   5     R2 1               -/-/1            5     first2 = done2 = 6
#   (R2 first would give done1 = 6, done2 = 5; recomputing the prompt only, R1 would decode 3 more: done1 = 8.)
PREEMPT_HEAD = {
    "budget": 8, "max_seqs": 4, "block_size": 2, "num_blocks": 7, "chunk": 0, "prefix_caching": False,
    "requests": [{"prompt": 4, "out": 4}, {"prompt": 4, "out": 4}, {"prompt": 2, "out": 1, "arrive": 1}],
}
PREEMPT_HEAD_ANSWER = _hand(first={0: 1, 1: 1, 2: 6}, done={0: 4, 1: 5, 2: 6}, steps=7,
                            preempted={0: 0, 1: 1, 2: 0}, preemptions=1)

# 5. Head-of-line blocking: the head of the waiting queue does not fit, so a smaller request behind it that would
#    fit is not admitted either (`if new_blocks is None: break`). Block size 4, 6 blocks.
#
#   step  scheduled       free  notes
#   0     R0 16           2     R1 needs 3 blocks for its 12 tokens: stops admission; R2 (1 block) waits behind it;
#                               first0 = 1
#   1     R0 1            1     R0's 17th token takes a 5th block; R1 still does not fit; tok2
#   2     R0 1            1     tok3: done0 = 3, its 5 blocks freed at the step's end
#   3     R1 12, R2 4     2     first1 = done1 = first2 = done2 = 4
HEAD_OF_LINE = {
    "budget": 32, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "chunk": 0, "prefix_caching": False,
    "requests": [{"prompt": 16, "out": 3}, {"prompt": 12, "out": 1}, {"prompt": 4, "out": 1}],
}
HEAD_OF_LINE_ANSWER = _hand(first={0: 1, 1: 4, 2: 4}, done={0: 3, 1: 4, 2: 4}, steps=5)

# 6. A prefix-cache hit counts whole blocks only: turn 1 (prompt 6, out 2) computes 7 tokens (its last sampled
#    token is never fed back), one full block of 4 and a partial block of 3 that is not cached.
#
#   step  scheduled          notes
#   0     T1 6               first = 1
#   1     T1 1               tok2: done = 2; cached: 1 full block (4 tokens)
#   2     T2 9 (13 - hit 4)  T2 joins at 2 (think 0); hit = min(4 cached, floor(12 / 4) * 4) = 4;
#                            first = done = 3
WHOLE_BLOCKS = {
    "budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 17, "chunk": 0, "prefix_caching": True,
    "requests": [{"session": 0, "turn": 1, "prompt": 6, "out": 2},
                 {"session": 0, "turn": 2, "prompt": 13, "out": 1, "think": 0}],
}
WHOLE_BLOCKS_ANSWER = _hand(first={0: 1, 1: 3}, done={0: 2, 1: 3}, steps=4, cached={0: 0, 1: 4})

# 7. A second turn hits the first turn's blocks up to, never including, its last token. Turn 1 (prompt 7,
#    out 2) computes 8 tokens: 2 full blocks. Turn 2's prompt is turn 1's sequence, 9 tokens: the hit is
#    floor((9 - 1) / 4) * 4 = 8, every token but the last, which is computed (budget 4 makes the hit show in
#    the times: without it turn 2's prefill is 3 steps). The hit is at the cap's edge, all but the last token;
#    in this format the cap never cuts a hit: a session's cached tokens are at most the previous turn's
#    prompt + out - 1, at most the next prompt - 1, and a preempted request's at most its computed tokens,
#    below its token count, so `reusable(x)` with `x` in place of `x - 1` gives the same answers here.
#
#   step  scheduled   notes
#   0     T1 4        budget 4
#   1     T1 3        first = 2
#   2     T1 1        tok2: done = 3; cached: 8 tokens
#   3     -           T2 joins at 3 + think 1 = 4: an idle step
#   4     T2 1        hit 8: one token to compute; first = 5
#   5     T2 1        done = 6
TURN_HIT = {
    "budget": 4, "max_seqs": 4, "block_size": 4, "num_blocks": 17, "chunk": 0, "prefix_caching": True,
    "requests": [{"session": "s", "turn": 1, "prompt": 7, "out": 2},
                 {"session": "s", "turn": 2, "prompt": 9, "out": 2, "think": 1}],
}
TURN_HIT_ANSWER = _hand(first={0: 2, 1: 5}, done={0: 3, 1: 6}, steps=7, cached={0: 0, 1: 8})

# 8. A prompt that needs exactly the free blocks is admitted (the reservation is `needed <= free`). Block size 4,
#    6 blocks.
#
#   step  scheduled       free  notes
#   0     R0 8, R1 16     0     R0 takes 2 blocks; R1's 16 tokens need 4 = the 4 free: admitted; R2 (2 blocks)
#                               waits; first0 = 1, first1 = done1 = 1 (R1's 4 blocks freed at the end)
#   1     R0 1, R2 5      1     R0's 9th token takes a 3rd block (free 3), R2 then takes 2; tok2;
#                               first2 = done2 = 2
#   2     R0 1            3     tok3: done0 = 3
#   (were it `needed < free`, R1 would wait, R2 behind it, until R0's blocks are freed: first1 = first2 = 4.)
EXACT_FREE_BLOCKS = {
    "budget": 32, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "chunk": 0, "prefix_caching": False,
    "requests": [{"prompt": 8, "out": 3}, {"prompt": 16, "out": 1}, {"prompt": 5, "out": 1}],
}
EXACT_FREE_BLOCKS_ANSWER = _hand(first={0: 1, 1: 1, 2: 2}, done={0: 3, 1: 1, 2: 2}, steps=4)

# 9. A preempted request's recompute starts from its own cached blocks (prefix caching on), less the block the
#    grower evicted from its tail. Scenario 4 with prefix caching.
#
#   step  scheduled          notes
#   0-2   as in scenario 4   (no prefix shared between requests: cached 0 for all)
#   3     R0 1               R1 preempted with 6 computed tokens: its 3 full blocks go to the free queue,
#                            tail first; R0's new block takes the least recently freed one, R1's tail block:
#                            R1 keeps 2 cached blocks (4 tokens); done0 = 4
#   4     R1 3, R2 2         R1: 7 tokens, hit min(4, floor(6 / 2) * 2) = 4, recomputes 3 and samples its 4th:
#                            done1 = 5; R2 gets its 2 tokens: first2 = done2 = 5 (6 without the cache)
PREEMPT_CACHED = dict(PREEMPT_HEAD, prefix_caching=True)
PREEMPT_CACHED_ANSWER = _hand(first={0: 1, 1: 1, 2: 5}, done={0: 4, 1: 5, 2: 5}, steps=6,
                              preempted={0: 0, 1: 1, 2: 0}, preemptions=1)

# 11. A request preempted a second time while it recomputes still has the outputs it kept (vLLM's num_tokens
#     never falls; lib/vllm.sq's `had`, where it departs from language.txt §7's formula). Block size 1, 7 blocks,
#     budget 5.
#
#   step  scheduled            blocks R0/R1/R2  free  notes
#   0     -                    -                7     idle: nothing has arrived
#   1     R1 2, R2 1           -/2/1            4     first1 = first2 = 2
#   2     R1 1, R2 1, R0 2     2/3/2            0     R0 arrives, admitted with 2 of the 3 tokens left; first0 = 3
#   3     R1 1, R2 1           -/4/3            0     R1 grows: R0 (last admitted) preempted with 2 computed and 1
#                                                     output: 3 tokens; waiting [R0]
#   4     R1 1                 -/5/-            2     R1 grows: R2 preempted (3 computed, 3 outputs: 4 tokens),
#                                                     at the head: waiting [R2, R0]; R1 tok4: done1 = 5
#   5     R2 4, R0 1           1/-/4            2     R2 recomputes its 4 tokens and samples its 4th; R0 gets 1 of 3
#   6     R2 1                 -/-/5            2     R0's 2 tokens left need 2 blocks, 1 free: R0, the last
#                                                     admitted, preempts itself with 1 computed token (below its
#                                                     prompt) and ends the pass; R2 tok5: done2 = 7
#   7     R0 3                 3/-/-            4     R0 still has 3 tokens (prompt 2 + its output): recomputes
#                                                     them and samples its 2nd: done0 = 8
#   (§7's known = computed < prompt ? prompt : computed + 1 is 2 here: R0 would sample its first token again and
#    decode once more, done0 = 9.)
PREEMPT_TWICE = {
    "budget": 5, "max_seqs": 3, "block_size": 1, "num_blocks": 8, "chunk": 0, "prefix_caching": False,
    "requests": [{"prompt": 2, "out": 2, "arrive": 2}, {"prompt": 2, "out": 4, "arrive": 1},
                 {"prompt": 1, "out": 5, "arrive": 1}],
}
PREEMPT_TWICE_ANSWER = _hand(first={0: 3, 1: 2, 2: 2}, done={0: 8, 1: 5, 2: 7}, steps=9,
                             preempted={0: 2, 1: 0, 2: 1}, preemptions=3)

# 10. Serve order -admission (newest first): the running requests are served newest first, so a younger
#     request's prefill takes the budget (3) before an older request's decode.
#
#   step  order     scheduled      notes
#   0     -         R0 2           first0 = 1
#   1     R0        R0 1, R1 2     R1 arrives; admitted with the 2 tokens left; R0 tok2
#   2     R1, R0    R1 3           R1 first takes the whole budget; R0 gets nothing
#   3     R1, R0    R1 3           R1 complete (8 tokens): first1 = done1 = 4; R0 gets nothing
#   4     R0        R0 1           tok3: done0 = 5
#   (in admission order: done0 = 3, first1 = done1 = 5)
NEWEST_FIRST = {
    "budget": 3, "max_seqs": 3, "block_size": 4, "num_blocks": 17, "chunk": 0, "prefix_caching": False,
    "serve": "-admission",
    "requests": [{"prompt": 2, "out": 3}, {"prompt": 8, "out": 1, "arrive": 1}],
}
NEWEST_FIRST_ANSWER = _hand(first={0: 1, 1: 4}, done={0: 5, 1: 4}, steps=6)
NEWEST_FIRST_IN_ADMISSION_ORDER = _hand(first={0: 1, 1: 5}, done={0: 3, 1: 5}, steps=6)

CASES = [
    pytest.param(BUDGET_EXACT, BUDGET_EXACT_ANSWER, id="budget_exact"),
    pytest.param(LONG_PREFILL_ALONE, LONG_PREFILL_ALONE_ANSWER, id="long_prefill_alone"),
    pytest.param(MAX_SEQS, MAX_SEQS_ANSWER, id="max_seqs_budget_left"),
    pytest.param(PREEMPT_HEAD, PREEMPT_HEAD_ANSWER, id="preempt_head_outputs_kept"),
    pytest.param(HEAD_OF_LINE, HEAD_OF_LINE_ANSWER, id="head_of_line"),
    pytest.param(WHOLE_BLOCKS, WHOLE_BLOCKS_ANSWER, id="whole_blocks"),
    pytest.param(TURN_HIT, TURN_HIT_ANSWER, id="turn_hit_not_last_token"),
    pytest.param(EXACT_FREE_BLOCKS, EXACT_FREE_BLOCKS_ANSWER, id="exact_free_blocks"),
    pytest.param(PREEMPT_CACHED, PREEMPT_CACHED_ANSWER, id="preempt_recompute_from_cache"),
    pytest.param(PREEMPT_TWICE, PREEMPT_TWICE_ANSWER, id="preempted_again_while_recomputing"),
]


def _fields(answer: dict) -> dict:
    return {k: answer[k] for k in FIELDS}


@pytest.mark.parametrize("scenario, hand", CASES)
def test_serq_gives_the_hand_answer(scenario, hand):
    assert _fields(run_scenario(scenario)) == hand


@pytest.mark.parametrize("scenario, hand", CASES)
def test_the_peer_gives_the_hand_answer(scenario, hand):
    assert _fields(peer.run_scenario(scenario)) == hand


def test_serq_serves_newest_first_as_traced():
    assert _fields(run_scenario(NEWEST_FIRST)) == NEWEST_FIRST_ANSWER


def test_the_same_requests_in_admission_order_on_both_sides():
    # the peer serves in admission order only; the scenario without `serve` is the contrast of case 10
    plain = {k: v for k, v in NEWEST_FIRST.items() if k != "serve"}
    assert _fields(run_scenario(plain)) == NEWEST_FIRST_IN_ADMISSION_ORDER
    assert _fields(peer.run_scenario(plain)) == NEWEST_FIRST_IN_ADMISSION_ORDER
    with pytest.raises(ValueError):
        peer.run_scenario(NEWEST_FIRST)
