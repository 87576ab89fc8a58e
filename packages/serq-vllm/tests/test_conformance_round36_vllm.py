"""language.txt §7's rules of vLLM v1's scheduler, one small scenario each, traced by hand and run through
``serq vllm scenario`` on both simulator tiers (``SERQ_SIM_TIER`` unset and ``general``: the same answer, byte
for byte) and through the plain-Python peer (bench/vllm_peer.py).

The rules, as vLLM's ``schedule()`` applies them (vllm/v1/core/sched/scheduler.py, kv_cache_manager.py,
block_pool.py):

* budget: a step's ``max_num_batched_tokens``; running requests first, in running order, each asking for
  every token it lacks; then waiting requests with what is left (BUDGET);
* ``long_prefill_token_threshold`` cuts a chunk only while more than one request runs or waits at the step's
  start (CHUNK_ALONE), a waiting request that cannot be admitted counted (CHUNK_BLOCKED_WAITER), a preempted one
  too (CHUNK_PREEMPTED_WAITER), a turn sent at the step's start counted (CHUNK_TURN_AT_STEP_START);
* ``max_num_seqs`` stops the waiting loop (SEQ_CAP);
* the prefix cache's hit: whole cached blocks, generated tokens' blocks included, at most
  ``num_tokens - 1`` tokens (HIT_WHOLE_BLOCKS, HIT_GENERATED_BLOCK);
* freed blocks go to the free queue's back tail first, requests in the order they finish, and eviction
  takes the front (EVICT_TAIL_FIRST, EVICT_FINISH_ORDER);
* a missing block preempts ``running[-1]`` (recompute: its blocks freed, nothing computed kept, its outputs
  kept), the victim put at the waiting queue's head (LIFO_TWO_VICTIMS, VICTIM_AHEAD_OF_WAITER); a re-admitted
  request looks its own freed full blocks up again (PREEMPTED_OWN_BLOCKS, against PREEMPTED_NO_CACHE);
* a request's first token counts at the end of the step whose chunk completed its prefill, once: a request
  preempted after it keeps it (LIFO_TWO_VICTIMS, VICTIM_AHEAD_OF_WAITER).

Not pinned here, because no scenario of this format can show it: "no admission in a step that preempted"
(scheduler.py's waiting loop runs only without preempted_reqs). The victim goes to the waiting queue's head
and the queue is FCFS, so only the victim could be admitted, and it never fits in that step: the free blocks
after it are at most the blocks it held less one (the request that preempted it needed more than were free),
fewer than its known tokens need. The prefix cache's ``num_tokens - 1`` bound never binds in this format
either (test_conformance_round23_vllm.py, case 7, pins it on the replay's program).

Clock (oracle/README.md): step k runs from k to k + 1; ``arrive: a`` joins just before step a; ``first`` is
the end of the step that completed the prefill, ``done`` of the one that sampled the last token, ``steps``
the last ``done`` + 1. ``q [..]`` is the free queue, front first; ``xN`` the N-th block of request x; a
decode step j of a request of prompt p computes position p - 1 + j and samples output j + 1.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]
FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


def _load_peer():
    spec = importlib.util.spec_from_file_location("vllm_peer_round36", REPO / "bench" / "vllm_peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_peer_round36"] = mod
    spec.loader.exec_module(mod)
    return mod


peer = _load_peer()


def _scenario(budget, block_size, num_blocks, requests, *, chunk=0, max_seqs=4, prefix_caching=False):
    return {"budget": budget, "max_seqs": max_seqs, "block_size": block_size, "num_blocks": num_blocks,
            "chunk": chunk, "prefix_caching": prefix_caching, "requests": requests}


def _hand(first, done, steps, preempted=None, cached=None):
    n = len(first)
    preempted = preempted or {}
    return {
        "first": {str(i): first[i] for i in range(n)},
        "done": {str(i): done[i] for i in range(n)},
        "preempted": {str(i): preempted.get(i, 0) for i in range(n)},
        "cached": {str(i): (cached or {}).get(i, 0) for i in range(n)},
        "preemptions": sum(preempted.values()),
        "steps": steps,
    }


# BUDGET. Budget 10, blocks plenty, no caching.
#   step 0  R0 6 (its prompt; first0 = 1), R1 min(8, 10 - 6) = 4
#   step 1  R0 1 (decode), R1 4 (completes: first1 = done1 = 2); R2 arrives, min(8, 10 - 5) = 5
#   step 2  R0 1 (its third token: done0 = 3), R2 3 (first2 = done2 = 3)
BUDGET = _scenario(10, 4, 20, [{"prompt": 6, "out": 3}, {"prompt": 8, "out": 1},
                               {"prompt": 8, "out": 1, "arrive": 1}])
BUDGET_ANSWER = _hand(first=[1, 2, 3], done=[3, 2, 3], steps=4)

# CHUNK_ALONE. Threshold 3, budget 10.
#   step 0  two waiting: cut. R0 3, R1 3
#   step 1  two running: cut. R0 3 (6), R1 2 (first1 = done1 = 2; it leaves)
#   step 2  R0 alone: no cut, min(6, 10) = 6 (first0 = done0 = 3)
#   (cut always: R0 would need steps 2 and 3, first0 = 4)
CHUNK_ALONE = _scenario(10, 4, 20, [{"prompt": 12, "out": 1}, {"prompt": 5, "out": 1}], chunk=3)
CHUNK_ALONE_ANSWER = _hand(first=[3, 2], done=[3, 2], steps=4)

# CHUNK_BLOCKED_WAITER. Threshold 3, budget 10, 4 usable blocks of 4.
#   step 0  R0 3 (reserves 12 = 3 blocks of 4 free, allocates 1); R1 (16 = 4 blocks) does not fit in 3: waits
#   steps 1-3  R0 running, R1 waiting: cut, 3 a step (6, 9, 12: first0 = done0 = 4); R1 never fits beside it
#   step 4  R1 alone: 10; step 5: 6 (first1 = done1 = 6)
#   (the waiter not counted: R0 would take 9 at step 1, first0 = 2)
CHUNK_BLOCKED_WAITER = _scenario(10, 4, 5, [{"prompt": 12, "out": 1}, {"prompt": 16, "out": 1}], chunk=3)
CHUNK_BLOCKED_WAITER_ANSWER = _hand(first=[4, 6], done=[4, 6], steps=7)

# CHUNK_TURN_AT_STEP_START. Threshold 3, budget 10; s2 is sent at s1's done + 0 = 2, just before step 2.
#   step 0  s1 3, X 3 (both waiting: cut)
#   step 1  s1 1 (first = done = 2), X 3 (6)
#   step 2  X 3 (9) (s2 counted), s2 3
#   step 3  X 3 (12), s2 3 (6)
#   step 4  X 3 (15), s2 2 (first2 = done2 = 5)
#   step 5  X alone: 5 (first1 = done1 = 6)
#   With prefix caching, s2 hits s1's one full block (4): step 2 X 3, s2 3 (7); step 3 X 3 (12), s2 1
#   (first2 = done2 = 4); step 4 X alone: 8 (first1 = done1 = 5).
#   (s2 not counted at step 2: X would take 10 there, 16, and s2 nothing)
TURN_REQUESTS = [{"session": "s", "turn": 1, "prompt": 4, "out": 1}, {"prompt": 20, "out": 1},
                 {"session": "s", "turn": 2, "prompt": 8, "out": 1, "think": 0}]
CHUNK_TURN_AT_STEP_START = _scenario(10, 4, 20, TURN_REQUESTS, chunk=3)
CHUNK_TURN_AT_STEP_START_ANSWER = _hand(first=[2, 6, 5], done=[2, 6, 5], steps=7)
CHUNK_TURN_CACHED = _scenario(10, 4, 20, TURN_REQUESTS, chunk=3, prefix_caching=True)
CHUNK_TURN_CACHED_ANSWER = _hand(first=[2, 5, 4], done=[2, 5, 4], steps=6, cached={2: 4})

# SEQ_CAP. max_num_seqs 1.
#   step 0  R0 4 (first0 = 1); the waiting loop stops at the cap: R1 waits
#   step 1  R0 1 (done0 = 2)
#   step 2  R1 4 (first1 = done1 = 3)
SEQ_CAP = _scenario(32, 4, 20, [{"prompt": 4, "out": 2}, {"prompt": 4, "out": 1}], max_seqs=1)
SEQ_CAP_ANSWER = _hand(first=[1, 3], done=[2, 3], steps=4)

# HIT_WHOLE_BLOCKS. Blocks of 4, caching.
#   s1 (6 + 3): step 0 computes 6 (first = 1), steps 1, 2 positions 6, 7 (done = 3): 8 computed, 2 full
#   blocks, the second holding its first generated token. s2 (14, sent at 3): hit min(8, floor(13/4)*4 = 12)
#   = 8; computes 6 at step 3 (first = done = 4).
#   t1 (10 + 1): computes 10 at step 0 (first = done = 1): 2 full blocks and 2 tokens of a third, never
#   cached. t2 (15, sent at 1): hit 8, computes 7 at step 1 (first = done = 2).
HIT_WHOLE_BLOCKS = _scenario(32, 4, 20, [
    {"session": "s", "turn": 1, "prompt": 6, "out": 3}, {"session": "s", "turn": 2, "prompt": 14, "out": 1, "think": 0},
    {"session": "t", "turn": 1, "prompt": 10, "out": 1}, {"session": "t", "turn": 2, "prompt": 15, "out": 1, "think": 0},
], prefix_caching=True)
HIT_WHOLE_BLOCKS_ANSWER = _hand(first=[1, 4, 1, 2], done=[3, 4, 1, 2], steps=5, cached={1: 8, 3: 8})

# HIT_GENERATED_BLOCK. A turn that adds nothing to its history but the last output.
#   a1 (7 + 2): step 0 computes 7 (first = 1), step 1 position 7, its first output (done = 2): 8 computed.
#   a2 (9, sent at 2): hit min(8, floor(8/4)*4 = 8) = 8, the second block's last token a generated one;
#   computes 1 (first = done = 3).
#   b1 (8 + 1): computes 8 (first = done = 1), 2 full blocks. b2 (9, sent at 1): num_tokens - 1 = 8 allows the
#   whole 8; computes 1 (first = done = 2).
HIT_GENERATED_BLOCK = _scenario(32, 4, 20, [
    {"session": "a", "turn": 1, "prompt": 7, "out": 2}, {"session": "a", "turn": 2, "prompt": 9, "out": 1, "think": 0},
    {"session": "b", "turn": 1, "prompt": 8, "out": 1}, {"session": "b", "turn": 2, "prompt": 9, "out": 1, "think": 0},
], prefix_caching=True)
HIT_GENERATED_BLOCK_ANSWER = _hand(first=[1, 3, 1, 2], done=[2, 3, 1, 2], steps=4, cached={1: 8, 3: 8})

# EVICT_TAIL_FIRST. 6 usable blocks of 4, caching. q [1 2 3 4 5 6].
#   step 0  a1 (8) takes 1, 2 (first = done = 1); freed tail first: q [3 4 5 6 a2 a1]
#   step 1  X (20, arrives) takes 3 4 5 6 and a2, which loses its hash (first = done = 2); freed tail first
#   step 2  a2 (12, sent at 2): a1 still cached, a2 not: hit 4 (first = done = 3)
#   (head first, X would evict a1 and the hit be 0)
EVICT_TAIL_FIRST = _scenario(32, 4, 7, [
    {"session": "a", "turn": 1, "prompt": 8, "out": 1}, {"prompt": 20, "out": 1, "arrive": 1},
    {"session": "a", "turn": 2, "prompt": 12, "out": 1, "think": 1},
], prefix_caching=True)
EVICT_TAIL_FIRST_ANSWER = _hand(first=[1, 2, 3], done=[1, 2, 3], steps=4, cached={2: 4})

# EVICT_FINISH_ORDER. 4 usable blocks of 4, caching. q [1 2 3 4].
#   step 0  a1 takes 1, b1 takes 2 (both first = done = 1); freed in scheduling order: q [3 4 a1 b1]
#   step 1  X (12, arrives) takes 3 4 a1 (first = done = 2); freed tail first: q [b1 X3 X2 X1]
#   step 2  b2 (8, sent at 1 + 1): hit 4 (b1), computes 4 in X3 (first = done = 3)
#   step 3  a2 (8, sent at 1 + 2): a1 was evicted: hit 0 (first = done = 4)
#   (b1 freed before a1, X would evict b1: b2's hit 0, a2's 4)
EVICT_FINISH_ORDER = _scenario(32, 4, 5, [
    {"session": "a", "turn": 1, "prompt": 4, "out": 1}, {"session": "b", "turn": 1, "prompt": 4, "out": 1},
    {"prompt": 12, "out": 1, "arrive": 1},
    {"session": "a", "turn": 2, "prompt": 8, "out": 1, "think": 2},
    {"session": "b", "turn": 2, "prompt": 8, "out": 1, "think": 1},
], prefix_caching=True)
EVICT_FINISH_ORDER_ANSWER = _hand(first=[1, 1, 2, 4, 3], done=[1, 1, 2, 4, 3], steps=5, cached={4: 4})

# LIFO_TWO_VICTIMS. 4 usable blocks of 4, budget 32, no caching; three requests of 4 + 6.
#   step 0  R0, R1, R2 one block each (all first = 1); q [4]
#   step 1  R0's 5th token takes 4; R1's finds none: running[-1] = R2 is preempted (1 output kept, its block
#           freed), R1 takes it. No admission in a step that preempted. waiting [R2]
#   steps 2-4  R0, R1 positions 5-7 (outputs 3-5)
#   step 5  R0's position 8 needs a third block: running[-1] = R1 is preempted (5 outputs kept, 2 blocks
#           freed) and put at the head: waiting [R1 R2]. R0 samples its 6th (done0 = 6) and frees 3.
#   step 6  R1 first: 4 + 5 = 9 tokens, 3 of 4 blocks; it samples its 6th (done1 = 7). R2 (4 + 1 = 5 tokens,
#           2 blocks) does not fit in 1: head-of-line
#   step 7  R2 computes 5, samples its 2nd; steps 8-11 positions 5-8 (done2 = 12)
LIFO_TWO_VICTIMS = _scenario(32, 4, 5, [{"prompt": 4, "out": 6}] * 3)
LIFO_TWO_VICTIMS_ANSWER = _hand(first=[1, 1, 1], done=[6, 7, 12], steps=13, preempted={1: 1, 2: 1})

# VICTIM_AHEAD_OF_WAITER. 4 usable blocks of 4, no caching.
#   step 0  R0 (4 + 6) one block, R1 (8 + 5) two (both first = 1); q [4]
#   step 1  R2 arrives and waits; R0 position 4 takes 4; R1 position 8 finds none: running[-1] is R1 itself,
#           preempted (1 output kept, known 9), put at the head: waiting [R1 R2]
#   steps 2-4  R0 positions 5-7; R1 (3 blocks) blocks R2 (2 would fit in 2): head-of-line
#   step 5  R0 position 8 takes a block (done0 = 6), 3 freed: 4 free
#   step 6  R1 recomputes 9 (3 blocks), samples its 2nd; steps 7-9 positions 9-11 (done1 = 10); R2 (2 blocks)
#           does not fit in 1
#   step 10 R2 8 (first2 = done2 = 11)
#   (a victim at the queue's tail: R2 admitted at step 2)
VICTIM_AHEAD_OF_WAITER = _scenario(32, 4, 5, [{"prompt": 4, "out": 6}, {"prompt": 8, "out": 5},
                                              {"prompt": 8, "out": 1, "arrive": 1}])
VICTIM_AHEAD_OF_WAITER_ANSWER = _hand(first=[1, 1, 11], done=[6, 10, 11], steps=12, preempted={1: 1})

# PREEMPTED_OWN_BLOCKS. 5 usable blocks of 4, budget 6, caching.
#   step 0  R0 4 (1 block, first0 = 1); R1 min(8, 2) = 2 (reserves 2 blocks, allocates 1)
#   step 1  R0 position 4 (2nd block); R1 5 (7: its 2nd block); q: 1 block
#   step 2  R0 position 5; R1 1 (first1 = 3)
#   step 3  R0 position 6; R1 position 8 takes the last block
#   step 4  R0 position 7; R1 position 9 (3 outputs)
#   step 5  R0 position 8 needs a 3rd block: R1 preempted with 10 computed: freed tail first, its partial
#           third block (no hash) at the front: q [R1c R1b R1a]; R0 takes R1c. No admission.
#   steps 6-8  R0 positions 9-11 (done0 = 9). R1 (known 8 + 3 = 11) hits R1a, R1b (8, at most 10) but needs
#           3 blocks, the 2 cached ones counted, in 2 free: waits
#   step 9  R1 hits 8, computes 3 of the budget's 6 and samples its 4th (done1 = 10)
# PREEMPTED_NO_CACHE: the same without caching: step 9 computes 6 of 11, step 10 5 (done1 = 11).
PREEMPTED_REQUESTS = [{"prompt": 4, "out": 9}, {"prompt": 8, "out": 4}]
PREEMPTED_OWN_BLOCKS = _scenario(6, 4, 6, PREEMPTED_REQUESTS, prefix_caching=True)
PREEMPTED_OWN_BLOCKS_ANSWER = _hand(first=[1, 3], done=[9, 10], steps=11, preempted={1: 1})
PREEMPTED_NO_CACHE = _scenario(6, 4, 6, PREEMPTED_REQUESTS)
PREEMPTED_NO_CACHE_ANSWER = _hand(first=[1, 3], done=[9, 11], steps=12, preempted={1: 1})

# CHUNK_PREEMPTED_WAITER. Threshold 3, budget 10, 4 usable blocks of 4.
#   step 0  two waiting: cut. R0 (16) 3 (reserves 4 blocks, allocates 1), R1 (4 + 3) 3 (1 block); q: 2
#   step 1  R0 3 (6: 2nd block), R1 1 (first1 = 2); q: 1
#   step 2  R0 3 (9: 3rd block, the last); R1's 5th token finds none: running[-1] is R1, preempted (1 output
#           kept, known 5), its block freed: q 1. No admission.
#   step 3  R0 running, R1 waiting: cut, R0 3 (12); R1 (2 blocks) does not fit in 1
#   step 4  R0 3 (15: 4th block); step 5 R0 1 (first0 = done0 = 6), its 4 blocks freed
#   step 6  R1 alone: 5 tokens, samples its 2nd; step 7 its 3rd (done1 = 8)
#   (the preempted waiter not counted: R0 takes 7 at step 3, done0 = 4, done1 = 6)
CHUNK_PREEMPTED_WAITER = _scenario(10, 4, 5, [{"prompt": 16, "out": 1}, {"prompt": 4, "out": 3}], chunk=3)
CHUNK_PREEMPTED_WAITER_ANSWER = _hand(first=[6, 2], done=[6, 8], steps=9, preempted={1: 1})

# SAME_STEP_TURNS. Two turns sent at the same step join the waiting queue in the scenario's listing order, as
# the bridge adds them (real.py: the due requests in index order), not in the order their think times began.
#   step 0  a1 4, b1 4 (both first = 1; b1 done = 1; b2 is sent at 1 + 2 = 3)
#   step 1  a1 its 2nd (done = 2; a2 is sent at 2 + 1 = 3)
#   step 3  a2 (listed first) 8 of the budget's 8 (first = done = 4); b2 waits
#   step 4  b2 8 (first = done = 5)
SAME_STEP_TURNS = _scenario(8, 4, 20, [
    {"session": "a", "turn": 1, "prompt": 4, "out": 2}, {"session": "b", "turn": 1, "prompt": 4, "out": 1},
    {"session": "a", "turn": 2, "prompt": 8, "out": 1, "think": 1},
    {"session": "b", "turn": 2, "prompt": 8, "out": 1, "think": 2},
])
SAME_STEP_TURNS_ANSWER = _hand(first=[1, 1, 4, 5], done=[2, 1, 4, 5], steps=6)

CASES = [
    pytest.param(BUDGET, BUDGET_ANSWER, id="budget"),
    pytest.param(CHUNK_ALONE, CHUNK_ALONE_ANSWER, id="chunk_alone"),
    pytest.param(CHUNK_BLOCKED_WAITER, CHUNK_BLOCKED_WAITER_ANSWER, id="chunk_blocked_waiter"),
    pytest.param(CHUNK_TURN_AT_STEP_START, CHUNK_TURN_AT_STEP_START_ANSWER, id="chunk_turn_at_step_start"),
    pytest.param(CHUNK_TURN_CACHED, CHUNK_TURN_CACHED_ANSWER, id="chunk_turn_cached"),
    pytest.param(CHUNK_PREEMPTED_WAITER, CHUNK_PREEMPTED_WAITER_ANSWER, id="chunk_preempted_waiter"),
    pytest.param(SAME_STEP_TURNS, SAME_STEP_TURNS_ANSWER, id="same_step_turns"),
    pytest.param(SEQ_CAP, SEQ_CAP_ANSWER, id="seq_cap"),
    pytest.param(HIT_WHOLE_BLOCKS, HIT_WHOLE_BLOCKS_ANSWER, id="hit_whole_blocks"),
    pytest.param(HIT_GENERATED_BLOCK, HIT_GENERATED_BLOCK_ANSWER, id="hit_generated_block"),
    pytest.param(EVICT_TAIL_FIRST, EVICT_TAIL_FIRST_ANSWER, id="evict_tail_first"),
    pytest.param(EVICT_FINISH_ORDER, EVICT_FINISH_ORDER_ANSWER, id="evict_finish_order"),
    pytest.param(LIFO_TWO_VICTIMS, LIFO_TWO_VICTIMS_ANSWER, id="lifo_two_victims"),
    pytest.param(VICTIM_AHEAD_OF_WAITER, VICTIM_AHEAD_OF_WAITER_ANSWER, id="victim_ahead_of_waiter"),
    pytest.param(PREEMPTED_OWN_BLOCKS, PREEMPTED_OWN_BLOCKS_ANSWER, id="preempted_own_blocks"),
    pytest.param(PREEMPTED_NO_CACHE, PREEMPTED_NO_CACHE_ANSWER, id="preempted_no_cache"),
]


def _fields(answer: dict) -> dict:
    return {k: {str(i): v for i, v in sorted(answer[k].items(), key=lambda kv: int(kv[0]))}
            if isinstance(answer[k], dict) else answer[k] for k in FIELDS}


@pytest.mark.parametrize("scenario, hand", CASES)
def test_serq_vllm_scenario_gives_the_hand_answer_on_both_tiers(scenario, hand, tmp_path, serq_in_process,
                                                                monkeypatch):
    # (in this process: what is checked is the answer the command prints)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    outs = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_in_process("vllm", "scenario", str(path))
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
        assert _fields(json.loads(r.stdout)) == hand, tier or "fast"
    assert outs[0] == outs[1]


@pytest.mark.parametrize("scenario, hand", CASES)
def test_the_peer_gives_the_hand_answer(scenario, hand):
    assert _fields(peer.run_scenario(scenario)) == hand
