"""The decisions of vLLM v1's scheduler that lib/vllm.sq models, each pinned by a scenario at its edge.

The source read is vLLM 0.33.0's (the release the newer oracle answers record) ``vllm/v1/core/sched/
scheduler.py``, ``kv_cache_manager.py``, ``single_type_kv_cache_manager.py`` and ``block_pool.py``; line
numbers below are that release's. vLLM 0.33.0's own scheduler, driven through the bridge (``serq vllm real``,
docs/vllm-oracle.md), gives each of the six answers below.

What ``schedule()`` decides, in order, and where this project stands on it (the shipped oracle scenarios
that take each path, by oracle/README.md and oracle/generated/README.md; "here" is this file):

Running loop (scheduler.py:794-1035)
  1. A step's token budget is ``max_num_batched_tokens`` (719); the running requests are served in list
     order while budget is left (795). Modelled: ``step { budget B; }``. Exercised by every scenario.
  2. A running request asks for every token it lacks, cut at the long-prefill threshold, then at the
     budget left (839-848); the threshold is 0 (no cut) when at most one request runs or waits at the
     step's start (754-762). Modelled: ``chunk long_prefill(reqs, C)``. vllm/chunked, vllm/longchunk,
     vllm/alone, generated/chunk_many; a resumed request's first chunk cut: here, RESUMED_FROM_WHOLE_BLOCKS.
     The threshold's adaptive floor (763-769, ``long_prefill_token_threshold_adaptive``, off by default)
     is not modelled.
  3. The cap at ``max_model_len`` (850-856): not modelled (docs/vllm.md, "What is not modelled").
  4. A request given no token is passed over (``continue``, 891-906): only with encoder inputs, Mamba
     alignment, pipeline parallelism, speculative or asynchronous scheduling; not modelled, not reachable
     here.
  5. ``allocate_slots`` failing preempts ``running[-1]``, the last admitted, under FCFS (938, 970), or the
     lowest priority under the priority policy (932-967), and tries again; under FCFS a request that is
     its own victim ends the loop (978-994; the priority policy goes on to the requests after it).
     Modelled: ``preempt lifo``; the priority path is the bridge's serving orders (docs/vllm-oracle.md).
     vllm/preempt, generated/preempt_*, recompute_preempt; two victims in one step whose re-admission
     order shows: here, TWO_VICTIMS.
  6. The growth takes free blocks from the free queue's front (block_pool.py:721), a cached block there
     losing its hash, before the waiting loop looks anything up: here, GROWTH_BEFORE_LOOKUP.
Waiting loop (scheduler.py:1050-1616), only in a step that preempted nothing (1050)
  7. ``max_num_seqs`` stops it (1069-1070). vllm/seqcap.
  8. Requests set aside instead of stopping the loop (a KV transfer, a grammar, ``max_loras``, stale
     outputs: ``skip_request``, 1053-1101; put back at the waiting queue's head, 1608-1610): not
     modelled (docs/vllm.md).
  9. The prefix cache is looked up when a request is scheduled with nothing computed (1110), a preempted
     one included (``_preempt_request`` zeroes it, 1822): the longest run of cached full blocks from the
     start (single_type_kv_cache_manager.py:794), at most ``num_tokens - 1`` tokens
     (kv_cache_manager.py:301-302). Modelled: ``reusable``, ``cachedin``. vllm/multiturn,
     generated/turns_*, preempt_cached_resume. The ``num_tokens - 1`` bound never cuts a hit in the
     scenario format (test_hand_scenarios.py, case 7); where it does, a repeated prompt in the replay's
     program: here, case 7; a cached prefix cut to whole blocks when a preemption left a partial one:
     here, RESUMED_FROM_WHOLE_BLOCKS.
 10. The request asks for its tokens less the hit (1306: ``num_tokens``, so a resumed request recomputes
     its kept outputs too), cut at the threshold (1332-1333) and the budget (1346). Modelled: ``known``,
     the hold's units. generated/preempt_victims, recompute_preempt.
 11. Chunked prefill off stops the loop at a request above the budget left (1337-1344): not modelled
     (docs/vllm.md); the bridge runs vLLM with it on.
 12. ``allocate_slots`` with ``full_sequence_must_fit`` (1440-1452; kv_cache_manager.py:531-548) needs
     free blocks for every token the request has, its own cached hit blocks counted among those it takes
     from the free queue (single_type_kv_cache_manager.py:255-261); failing, the loop stops (1454-1461):
     head-of-line blocking. Modelled: ``reserve (known)``, ``queue fifo``. vllm/hol; a resumed request's
     own cached block counted: here, PARTIAL_BLOCK_FIRST.
 13. An admission allocates from the free queue's front, before the next waiting request's lookup in the
     same step: here, ADMISSION_BEFORE_NEXT_LOOKUP.
Preemption and freeing
 14. A victim's blocks are freed (its full blocks keep their hashes), its computed tokens zeroed, and it is
     put at the FRONT of the waiting queue (``prepend_request``, 1799-1843), so of two victims of one step
     the one preempted last, the older, is at the head. Modelled: ``requeue head``. Here, TWO_VICTIMS.
 15. Blocks are hashed when allocated, up to the tokens the step schedules (kv_cache_manager.py:621-627),
     and freed tail first (single_type_kv_cache_manager.py:599): hashed blocks to the queue's back,
     blocks without a hash (a partial last block) to its front (block_pool.py:816-847). Modelled: the
     tail-first, least recently released eviction of serq_sim's pools, a partial block's room free.
     generated/turns_evict; a partial block reused before an older cached one: here,
     PARTIAL_BLOCK_FIRST and FREED_PARTIAL_BEFORE_OLDER_CACHE.
 16. Finished requests are freed in the step's scheduling order (2313, 2476). test_release_order.py.

Each scenario below is traced by hand from those rules on the step clock of oracle/README.md (step k runs
from k to k + 1; a request arriving at a joins just before step a; ``first`` is the end of the step that
completed the prefill, ``done`` of the one that sampled the last token). ``q [..]`` is the free queue,
front first, after the step; ``yN`` the N-th block of request or session y. Both serQ (``serq vllm
scenario FILE``) and the plain-Python peer (bench/vllm_peer.py) must give exactly the hand answer.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[3]


def _load_peer():
    spec = importlib.util.spec_from_file_location("vllm_peer_round23", REPO / "bench" / "vllm_peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_peer_round23"] = mod
    spec.loader.exec_module(mod)
    return mod


peer = _load_peer()

FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


def _hand(first, done, steps, preempted=None, cached=None, preemptions=0):
    n = len(first)
    return {
        "first": {str(k): v for k, v in first.items()},
        "done": {str(k): v for k, v in done.items()},
        "preempted": {str(i): (preempted or {}).get(i, 0) for i in range(n)},
        "cached": {str(i): (cached or {}).get(i, 0) for i in range(n)},
        "preemptions": preemptions,
        "steps": steps,
    }


# 1. GROWTH_BEFORE_LOOKUP (decision 6): a running request's growth evicts the tail block of a session's cached
#    turn in the running loop, before that session's next turn is looked up in the same step's waiting loop.
#    Block size 4, 6 usable blocks, prefix caching.
#
#   step  scheduled        notes
#   0     R0 8, R1 7       R0 (session b) takes blocks 1, 2, R1 3, 4; q [5 6]; R0 samples its only token:
#                          first0 = done0 = 1, freed tail first, both hashed: q [5 6 b2 b1]; first1 = 1
#   1     R1 1, R2 8       R1 has 8 tokens (2 blocks); R2 arrives, reserves 2 of 4 free, takes 5, 6 (the
#                          front); first2 = done2 = 2: q [b2 b1 d2 d1]
#   2     R1 1, R3 5       R1's 9th token needs a 3rd block: the front, b2, loses its hash; then R3 (b's
#                          turn 2, sent at 1 + 1, 9 tokens) looks up: b1 cached, b2 not: hit 4; it reserves
#                          3 blocks of the 3 free (b1, d2, d1) and computes 5; done1 = first3 = done3 = 3
#   (the lookup before the growth would hit 8, and the growth evict d2.)
GROWTH_BEFORE_LOOKUP = {
    "budget": 32, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "chunk": 0, "prefix_caching": True,
    "requests": [{"session": "b", "turn": 1, "prompt": 8, "out": 1}, {"prompt": 7, "out": 3},
                 {"prompt": 8, "out": 1, "arrive": 1},
                 {"session": "b", "turn": 2, "prompt": 9, "out": 1, "think": 1}],
}
GROWTH_BEFORE_LOOKUP_ANSWER = _hand(first={0: 1, 1: 1, 2: 2, 3: 3}, done={0: 1, 1: 3, 2: 2, 3: 3}, steps=4,
                                    cached={3: 4})

# 2. RESUMED_FROM_WHOLE_BLOCKS (decisions 2, 9, 10): a request preempted in the middle of its prefill, at 15
#    computed tokens, keeps its 3 full blocks cached (12 tokens: the partial 4th block has no hash); re-admitted,
#    it hits 12, and its 8 tokens left are cut at the threshold 5. Block size 4, 6 usable blocks, threshold 5,
#    budget 16, prefix caching.
#
#   step  scheduled        blocks R0/R1  notes
#   0     R0 4, R1 5       1/2           two waiting: the threshold cuts; R1 reserves 5 of 5 free; first0 = 1
#   1     R0 1, R1 5       2/3
#   2     R0 1, R1 5       2/4           free 0; R1's blocks hashed up to its 15 scheduled tokens: 3 full
#   3     R0 1             2/-           R1 needs a 5th block: none free, the last running is R1, its own victim
#                                        (ends the loop); it frees its partial block to the front, its 3
#                                        hashed ones to the back; no admission
#   4     R0 1             2/-           R1 at the head: hit 12, but it reserves all 20 tokens (5 blocks), 4
#                                        free: waits; R0 tok5: done0 = 5 (its blocks freed)
#   5     R1 5, R2 1       -/5           R2 arrives; two waiting: R1 hits 12, 8 left, cut at 5 (17 tokens, 5
#                                        blocks); R2 takes the last block: first2 = 6
#   6     R1 3, R2 1                     R1 complete, samples its only token: first1 = done1 = 7; R2 tok2
#   7     R2 1                           done2 = 8
#   (with 15 cached tokens, R1 would be done at 6; with nothing cached at the preemption, at 9.)
RESUMED_FROM_WHOLE_BLOCKS = {
    "budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "chunk": 5, "prefix_caching": True,
    "requests": [{"prompt": 4, "out": 5}, {"prompt": 20, "out": 1}, {"prompt": 1, "out": 3, "arrive": 5}],
}
RESUMED_FROM_WHOLE_BLOCKS_ANSWER = _hand(first={0: 1, 1: 7, 2: 6}, done={0: 5, 1: 7, 2: 8}, steps=9,
                                         preempted={1: 1}, preemptions=1)

# 3. PARTIAL_BLOCK_FIRST (decisions 12, 15): the victim of a growth frees its partial block to the front of the
#    free queue and its full block to the back, so the grower takes the partial one and the victim keeps its
#    cached block; re-admitted, the victim reserves its own cached block among the blocks it needs. Block
#    size 4, 3 usable blocks, budget 10, prefix caching.
#
#   step  scheduled        notes
#   0     R0 4, R1 6       R0 takes r0a, R1 r1a (hashed) and r1b (2 tokens, no hash); free 0; first0 = first1 = 1
#   1     R0 1             R0's 5th token needs a block: R1 (the last) is preempted with 6 computed tokens and
#                          1 output (7 tokens): q [r1b r1a]; R0 takes r1b; no admission; R0 tok2
#   2     R0 1             R1 at the head: hit 4 (r1a), but it needs 2 blocks, r1a among them, and 1 is free:
#                          waits; R0 tok3: done0 = 3, freed: its partial block to the front: q [r1b r1a r0a]
#   3     R1 3, R2 4       R1 hits 4, recomputes 3 (taking r1b) and samples its 2nd token; R2 arrives behind
#                          it and gets 4 of the 7 tokens left (r0a): first2 = done2 = 4
#   4     R1 1             tok3: done1 = 5
#   (had the grower taken R1's hashed block, R1 would recompute 7 at step 3 and R2 get 3 of its 4: done2 = 5.)
PARTIAL_BLOCK_FIRST = {
    "budget": 10, "max_seqs": 4, "block_size": 4, "num_blocks": 4, "chunk": 0, "prefix_caching": True,
    "requests": [{"prompt": 4, "out": 3}, {"prompt": 6, "out": 3}, {"prompt": 4, "out": 1, "arrive": 3}],
}
PARTIAL_BLOCK_FIRST_ANSWER = _hand(first={0: 1, 1: 1, 2: 4}, done={0: 3, 1: 5, 2: 4}, steps=6,
                                   preempted={1: 1}, preemptions=1)

# 4. ADMISSION_BEFORE_NEXT_LOOKUP (decisions 13, 15): an admission's blocks come from the free queue's front,
#    evicting the tail of a session's cached turn before that session's next turn, behind it in the same
#    step, looks it up. Block size 4, 6 usable blocks, prefix caching.
#
#   step  scheduled        notes
#   0     R0 8             session y: blocks 1, 2; first0 = done0 = 1: q [3 4 5 6 y2 y1]
#   1     R1 8             blocks 3, 4; first1 = done1 = 2: q [5 6 y2 y1 z2 z1]
#   2     R2 12, R3 5      R2 (arrived 2) reserves 3 and takes 5, 6, y2 (y's tail loses its hash); R3 (y's
#                          turn 2, sent at 1 + 1, behind R2 by request order) hits 4 (y1), reserves 3 of the 3
#                          free (y1, z2, z1) and computes 5; first2 = done2 = first3 = done3 = 3
#   (R3's lookup before R2's allocation would hit 8.)
ADMISSION_BEFORE_NEXT_LOOKUP = {
    "budget": 32, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "chunk": 0, "prefix_caching": True,
    "requests": [{"session": "y", "turn": 1, "prompt": 8, "out": 1}, {"prompt": 8, "out": 1, "arrive": 1},
                 {"prompt": 12, "out": 1, "arrive": 2},
                 {"session": "y", "turn": 2, "prompt": 9, "out": 1, "think": 1}],
}
ADMISSION_BEFORE_NEXT_LOOKUP_ANSWER = _hand(first={0: 1, 1: 2, 2: 3, 3: 3}, done={0: 1, 1: 2, 2: 3, 3: 3},
                                            steps=4, cached={3: 4})

# 5. TWO_VICTIMS (decisions 5, 14): one growth preempts the last running request, then the grower behind it is
#    its own victim; each victim goes to the front of the waiting queue, so the older (preempted last) is at
#    the head, and it blocks the newer one, which would fit. Block size 4, 6 usable blocks, threshold 8,
#    budget 24, no prefix caching.
#
#   step  scheduled          free  notes
#   0     R0 8, R1 8, R2 1   1     three waiting: the threshold cuts; reservations of 4, 3 and 1 blocks fit;
#                                  first2 = 1
#   1     R0 8               2     R0 needs 2 more blocks, 1 free: R2 (the last) is preempted (2 tokens: its
#                                  prompt and output), then R0 takes 2; R1's 9th token needs a block, none
#                                  free: the last running is R1 itself (preempted with its 9 prompt tokens,
#                                  freeing 2), the loop ends; waiting [R1 R2]; first0 = 2
#   2     R0 1               1     R0's 17th token takes a 5th block; R1 at the head reserves 3: waits, and
#                                  R2 (1 block) waits behind it; done0 = 3
#   3     R1 8, R2 2         3     two waiting: R1 cut at 8 (2 blocks); R2 recomputes its 2 tokens and samples
#                                  its last: done2 = 4
#   4     R1 1                     first1 = 5; tok2, tok3 at steps 5, 6: done1 = 7
#   (with the newer victim at the head, [R2 R1], R2 would take the block left at step 2: done2 = 3.)
TWO_VICTIMS = {
    "budget": 24, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "chunk": 8, "prefix_caching": False,
    "requests": [{"prompt": 16, "out": 2}, {"prompt": 9, "out": 3}, {"prompt": 1, "out": 2}],
}
TWO_VICTIMS_ANSWER = _hand(first={0: 2, 1: 5, 2: 1}, done={0: 3, 1: 7, 2: 4}, steps=8,
                           preempted={1: 1, 2: 1}, preemptions=2)

# 6. FREED_PARTIAL_BEFORE_OLDER_CACHE (decision 15): a finished request's partial block (no hash) goes to the
#    front of the free queue, ahead of an older session's cached blocks, so the next allocation reuses it and
#    the older session keeps its whole prefix. Block size 4, 4 usable blocks, prefix caching.
#
#   step  scheduled   notes
#   0     R0 8        session a: blocks 1, 2; first0 = done0 = 1: q [3 4 a2 a1]
#   1     R1 5        blocks 3 (hashed) and 4 (1 token); first1 = done1 = 2: 4 to the front, 3 to the back:
#                     q [4 a2 a1 3]
#   2     R2 4        one block: 4, no eviction; first2 = done2 = 3: q [a2 a1 3 4]
#   3     R3 1        a's turn 2 (sent at 1 + 2, 9 tokens) hits 8 (a1, a2); first3 = done3 = 4
#   (the partial block freed to the back, behind a's, would leave a2 at the front for R2: R3 would hit 4.)
FREED_PARTIAL_BEFORE_OLDER_CACHE = {
    "budget": 32, "max_seqs": 4, "block_size": 4, "num_blocks": 5, "chunk": 0, "prefix_caching": True,
    "requests": [{"session": "a", "turn": 1, "prompt": 8, "out": 1}, {"prompt": 5, "out": 1, "arrive": 1},
                 {"prompt": 4, "out": 1, "arrive": 2},
                 {"session": "a", "turn": 2, "prompt": 9, "out": 1, "think": 2}],
}
FREED_PARTIAL_BEFORE_OLDER_CACHE_ANSWER = _hand(first={0: 1, 1: 2, 2: 3, 3: 4}, done={0: 1, 1: 2, 2: 3, 3: 4},
                                                steps=5, cached={3: 8})

CASES = [
    pytest.param(GROWTH_BEFORE_LOOKUP, GROWTH_BEFORE_LOOKUP_ANSWER, id="growth_before_lookup"),
    pytest.param(RESUMED_FROM_WHOLE_BLOCKS, RESUMED_FROM_WHOLE_BLOCKS_ANSWER, id="resumed_from_whole_blocks"),
    pytest.param(PARTIAL_BLOCK_FIRST, PARTIAL_BLOCK_FIRST_ANSWER, id="partial_block_first"),
    pytest.param(ADMISSION_BEFORE_NEXT_LOOKUP, ADMISSION_BEFORE_NEXT_LOOKUP_ANSWER, id="admission_before_lookup"),
    pytest.param(TWO_VICTIMS, TWO_VICTIMS_ANSWER, id="two_victims"),
    pytest.param(FREED_PARTIAL_BEFORE_OLDER_CACHE, FREED_PARTIAL_BEFORE_OLDER_CACHE_ANSWER,
                 id="freed_partial_before_older_cache"),
]


def _fields(answer: dict) -> dict:
    return {k: answer[k] for k in FIELDS}


@pytest.mark.parametrize("scenario, hand", CASES)
def test_serq_vllm_scenario_gives_the_hand_answer(scenario, hand, tmp_path, serq_in_process):
    # (in this process: what is checked is the answer the command prints)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    r = serq_in_process("vllm", "scenario", str(path))
    assert r.returncode == 0, r.stderr
    assert _fields(json.loads(r.stdout)) == hand


@pytest.mark.parametrize("scenario, hand", CASES)
def test_the_peer_gives_the_hand_answer(scenario, hand):
    assert _fields(peer.run_scenario(scenario)) == hand


# 7. The ``num_tokens - 1`` bound of decision 9 where it binds: a prompt that repeats a cached one, which the
#    scenario format cannot give (a turn extends its history) but the replayed trace's program can (its match is
#    the previous prompt). Turn 1 prompts 1 008 tokens, 63 whole blocks of 16, all cached when it ends (it
#    computed 1 008 + 3); turn 2 sends the same 1 008 tokens. vLLM looks up at most 1 007 tokens
#    (kv_cache_manager.py:301-302): 62 blocks, 992 tokens, and recomputes the whole last block, 16 tokens, to
#    sample from it (the comment at 296-300 says so). Its TTFT is c0 and one prefill step of 16 tokens at K = 992.
def test_a_repeated_prompt_recomputes_its_whole_last_block(tmp_path, serq_in_process):
    replay = REPO / "examples" / "replay" / "vllm_replay.sq"
    fit = json.loads((REPO / "examples" / "replay" / "a100_step_fit.json").read_text())["sum"]
    c_it, c0 = 0.004, 0.040  # the program's per-step and per-request constants (test_replay.py)
    trace = tmp_path / "same.csv"
    trace.write_text("session,turn,new,out,think,forced\n0,1,1008,4,1.0,0\n0,2,1008,2,0.0,0\n", encoding="utf-8")
    dump = tmp_path / "dump"
    r = serq_in_process("run", str(replay), "--no-progress", "--json", "--trace", str(trace), "--dump", str(dump),
                        "--arrivals", "1")
    assert r.returncode == 0, r.stderr

    def sample(name: str) -> float:
        rows = (dump / f"{name}.csv").read_text(encoding="utf-8").splitlines()[1:]
        return {tuple(row.split(",")[1:3]): float(row.split(",")[3]) for row in rows}[("0", "2")]

    assert sample("hit") == 992
    assert sample("ttft") == pytest.approx(c0 + c_it + fit["a"] * 16 + fit["b"] * 16 * (992 + 8), abs=1e-12)
