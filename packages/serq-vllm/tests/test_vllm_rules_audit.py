"""vLLM v1's scheduling rules that the shipped oracle scenarios do not single out, each traced by hand
through vLLM 0.33.0's source and checked against ``lib/vllm.sq`` on the step clock (``run_scenario``).

The rules that decide a request's first-token step, last-token step, preemptions and cached tokens,
where vLLM 0.33.0 has them, and what checks them (the scenarios under ``serq_vllm/oracle/``, or here):

- one token budget a step: the running requests in running order, then the waiting ones with what is
  left (scheduler.py:795, 1062, 1346): vllm/chunked, vllm/mixed;
- the long-prefill threshold applies only while running + waiting > 1, counted once when ``schedule()``
  starts (scheduler.py:754-763): generated/chunk_many, vllm/alone; here, a request added just before
  that step and one held back by max_num_seqs;
- max_num_seqs stops the waiting loop (scheduler.py:1071-1073): vllm/seqcap;
- FCFS: the first waiting request that does not fit stops admission (scheduler.py:1454-1461): vllm/hol;
- admission needs blocks for the whole sequence, the hit's cached blocks taken off the free queue counted
  (kv_cache_manager.py:530-548, single_type_kv_cache_manager.py:255-265): generated/preempt_victims;
  here, the hit's blocks against the free ones;
- a failed allocation preempts ``running[-1]``, the request itself when it is last, and no request is
  admitted in a step that preempted (scheduler.py:938-985, 1050): vllm/preempt, generated/
  preempt_victims; here, no part of the chunk is computed before a self-preemption;
- the victim's blocks are freed, its ``num_computed_tokens`` set to 0, it goes to the front of the waiting
  queue and recomputes its prompt and kept outputs (scheduler.py:1799-1843): generated/preempt_repeat,
  generated/recompute_preempt;
- a victim's re-admission looks its prefix up again (scheduler.py:1107): generated/preempt_cached_resume;
  here, after its tail blocks were evicted;
- a hit is whole cached blocks, at most ``num_tokens - 1`` tokens (kv_cache_manager.py:302,
  single_type_kv_cache_manager.py:794): generated/turns_evict, generated/preempt_cached_resume;
- blocks are cached when allocated, up to the tokens the step computes (kv_cache_manager.py:621-625):
  every scenario with prefix caching;
- a request's blocks are freed in reverse (single_type_kv_cache_manager.py:599), finished requests in
  scheduling order (scheduler.py:2313, 2476): generated/turns_evict, test_release_order; cached blocks go
  to the free queue's back, a block without a hash (a partial last block) to its front, and allocation
  takes the front (block_pool.py:721, 816-847): here;
- a waiting request's prefix is looked up when the waiting loop reaches it (scheduler.py:1107-1126): here,
  an admission earlier in the same step evicts part of it.

A request whose sequence can never fit is refused by ``check_scenario`` (test_peer_programs2); the
watermark (0 by default) and speculative decoding are not modelled (docs/vllm.md).

The traces below number the free queue's blocks as vLLM does: block 0 is the null block, the others
start in the queue in order 1, 2, ...; "(h)" marks a block with a prefix-cache hash.
"""

from __future__ import annotations

import pytest
from serq_vllm.scenarios import run_scenario

# each scenario runs in a few milliseconds
pytestmark = pytest.mark.timeout(30)


def answer(sc):
    got = run_scenario(sc)
    return ({int(k): v for k, v in got["first"].items()}, {int(k): v for k, v in got["done"].items()},
            {int(k): v for k, v in got["preempted"].items()}, {int(k): v for k, v in got["cached"].items()},
            got["preemptions"], got["steps"])


def test_a_request_added_at_a_step_counts_for_that_steps_long_prefill_threshold():
    """Budget 64, threshold 16, block 16, 39 blocks. Request 0 (100 tokens, 1 out) at step 0, request 1
    (4 tokens, 3 out) added before step 1.

    step 0: running + waiting = 1, no threshold: 0 takes 64 (64 computed).
    step 1: 1 was added before schedule(): the count is 2, the threshold 16: 0 takes 16 (80), 48 left;
            1 is admitted with its 4 tokens and samples its first token (first 2).
    step 2: count 2: 0 takes 16 (96); 1 decodes (its 2nd token).
    step 3: count 2: 0 takes its last 4 (100) and samples (first = done = 4); 1 samples its 3rd (done 4).
    Counting only the running requests would give 0 its 36 at step 1 and its first token at 3."""
    sc = {"budget": 64, "max_seqs": 4, "block_size": 16, "num_blocks": 40, "chunk": 16,
          "requests": [{"prompt": 100, "out": 1}, {"prompt": 4, "out": 3, "arrive": 1}]}
    assert answer(sc) == ({0: 4, 1: 2}, {0: 4, 1: 4}, {0: 0, 1: 0}, {0: 0, 1: 0}, 0, 5)


def test_a_turn_sent_at_a_step_is_counted_and_cut_by_the_threshold():
    """Budget 32, threshold 8, block 16, prefix caching. Request 0 (200 tokens) and session 1's first
    turn (4 tokens, 1 out) at step 0; its second turn (10 tokens) is sent think 0 after its done.

    step 0: count 2: 0 takes 8; turn 1 takes its 4 and samples (done 1). Turn 2 is added before step 1.
    step 1: count 2 (0 and turn 2): 0 takes 8 (16); turn 2 (no full block cached: hit 0) is cut to 8.
    step 2: count 2: 0 takes 8 (24); turn 2 its last 2, samples (first = done = 3).
    steps 3-8: 0 alone takes 32 a step (56, 88, 120, 152, 184), then its last 16: first = done = 9."""
    sc = {"budget": 32, "max_seqs": 4, "block_size": 16, "num_blocks": 40, "chunk": 8, "prefix_caching": True,
          "requests": [{"prompt": 200, "out": 1}, {"prompt": 4, "out": 1, "session": 1, "turn": 1},
                       {"prompt": 10, "out": 1, "session": 1, "turn": 2, "think": 0}]}
    assert answer(sc) == ({0: 9, 1: 1, 2: 3}, {0: 9, 1: 1, 2: 3}, {0: 0, 1: 0, 2: 0},
                          {0: 0, 1: 0, 2: 0}, 0, 10)


def test_a_request_held_back_by_max_num_seqs_still_counts_for_the_threshold():
    """Budget 32, threshold 8, max_num_seqs 1. Requests 0 (40 tokens) and 1 (4 tokens) at step 0.

    steps 0-4: 1 waits (one running request is the cap, scheduler.py:1071) but is counted: 0 takes 8 a
            step, 40 at step 4, first = done = 5.
    step 5: 1 alone: 4 tokens, first = done = 6."""
    sc = {"budget": 32, "max_seqs": 1, "block_size": 16, "num_blocks": 40, "chunk": 8,
          "requests": [{"prompt": 40, "out": 1}, {"prompt": 4, "out": 1}]}
    assert answer(sc) == ({0: 5, 1: 6}, {0: 5, 1: 6}, {0: 0, 1: 0}, {0: 0, 1: 0}, 0, 7)


def test_a_partial_block_freed_is_reused_before_an_older_cached_block():
    """Block 4, 4 usable blocks, budget 16, prefix caching. Session a's first turn (4 tokens, 1 out) at
    step 0, its second (8 tokens) think 5 after; request 2 (2 tokens) at 1, request 3 (12 tokens) at 2.

    step 0: turn 1 takes block 1, cached when allocated (4 of 4 tokens: 1(h)), samples, done 1; freed:
            queue [2, 3, 4, 1(h)].
    step 1: request 2 takes block 2 (2 tokens: no full block, no hash), done 2; freed without a hash it
            goes to the queue's front (block_pool.py:845): [2, 3, 4, 1(h)].
    step 2: request 3 needs 3 blocks: 2, 3, 4 (done 3); 1(h) stays. (Appended, as older releases did,
            block 2 would follow 1(h), and request 3 would evict 1(h).)
    step 6: turn 2 (turn 1's 4 tokens, its output, 3 new) finds block 1: 4 cached, computes 4, done 7."""
    sc = {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 5, "prefix_caching": True,
          "requests": [{"prompt": 4, "out": 1, "session": "a", "turn": 1},
                       {"prompt": 8, "out": 1, "session": "a", "turn": 2, "think": 5},
                       {"prompt": 2, "out": 1, "arrive": 1}, {"prompt": 12, "out": 1, "arrive": 2}]}
    assert answer(sc) == ({0: 1, 1: 7, 2: 2, 3: 3}, {0: 1, 1: 7, 2: 2, 3: 3}, {0: 0, 1: 0, 2: 0, 3: 0},
                          {0: 0, 1: 4, 2: 0, 3: 0}, 0, 8)


def test_an_admission_earlier_in_the_step_evicts_part_of_a_later_ones_prefix():
    """Block 4, 6 usable blocks, budget 32, prefix caching. Session y's first turn (8 tokens, 1 out) and
    request 1 (8 tokens, 2 out) at step 0; request 2 (12 tokens) at 2; y's second turn (9 tokens) think 1.

    step 0: y1 takes 1(h), 2(h), done 1, freed in reverse: [5, 6, 2(h), 1(h)]; 1 takes 3(h), 4(h).
    step 1: 1 decodes into block 5 (9 tokens), done 2; freed: its partial 5 to the front, 4(h), 3(h) to
            the back: [5, 6, 2(h), 1(h), 4(h), 3(h)].
    step 2: waiting [2, y2]. 2 needs 3 blocks: 5, 6, 2(h): y1's tokens 4-7 are evicted; done 3. Then y2
            is looked up: block 1 only (4 cached); it needs 3 blocks, 1 of them its hit, 3 free (1, 4, 3):
            admitted, computes 5, first = done = 3. (Looked up before 2's allocation it would find 8.)"""
    sc = {"budget": 32, "max_seqs": 4, "block_size": 4, "num_blocks": 7, "prefix_caching": True,
          "requests": [{"prompt": 8, "out": 1, "session": "y", "turn": 1}, {"prompt": 8, "out": 2},
                       {"prompt": 12, "out": 1, "arrive": 2},
                       {"prompt": 9, "out": 1, "session": "y", "turn": 2, "think": 1}]}
    assert answer(sc) == ({0: 1, 1: 1, 2: 3, 3: 3}, {0: 1, 1: 2, 2: 3, 3: 3}, {0: 0, 1: 0, 2: 0, 3: 0},
                          {0: 0, 1: 0, 2: 0, 3: 4}, 0, 4)


def test_the_admission_gate_counts_the_cached_blocks_a_hit_takes_off_the_free_queue():
    """Block 4, 4 usable blocks, budget 16, prefix caching. Session a's first turn (8 tokens, 1 out) and
    request 1 (4 tokens, out 6 or 12) at step 0; a's second turn (13 tokens) sent think 0 after.

    step 0: a1 takes 1(h), 2(h), done 1, freed: [4, 2(h), 1(h)]; 1 takes 3(h).
    step 1: 1 grows into 4. a2 hits 8 (blocks 1, 2) and needs 4 blocks for 13 tokens: 4 - 2 hit + 2
            taken off the free queue = 4 > 2 free (kv_cache_manager.py:530-548): it waits. (Not counting
            the hit's blocks, 2 new blocks would fit.)
    step 5: 1 needs its 3rd block (9 tokens): the queue's front, 2(h), goes: a2's hit is now 4.
    With out 6, 1 is done at 6 and freed (its partial 2 to the front, 4(h), 3(h) behind 1(h)); at step 6
    a2 hits 4, needs 4 - 1 + 1 = 4 of 4 free, computes 9: done 7.
    With out 12, 1 takes 1(h) too at step 9 and is done at 12; a2 finds nothing at 12, done 13."""
    reqs = [{"prompt": 8, "out": 1, "session": "a", "turn": 1}, {"prompt": 4, "out": 6},
            {"prompt": 13, "out": 1, "session": "a", "turn": 2, "think": 0}]
    sc = {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 5, "prefix_caching": True,
          "requests": reqs}
    assert answer(sc) == ({0: 1, 1: 1, 2: 7}, {0: 1, 1: 6, 2: 7}, {0: 0, 1: 0, 2: 0},
                          {0: 0, 1: 0, 2: 4}, 0, 8)
    reqs[1] = {"prompt": 4, "out": 12}
    assert answer(sc) == ({0: 1, 1: 1, 2: 13}, {0: 1, 1: 12, 2: 13}, {0: 0, 1: 0, 2: 0},
                          {0: 0, 1: 0, 2: 0}, 0, 14)


def test_a_prefill_that_cannot_grow_preempts_itself_without_computing_part_of_its_chunk():
    """Block 4, 3 usable blocks, budget 4, prefix caching. Request 0 (3 tokens, 8 out) at step 0, request
    1 (7 tokens, 1 out) at step 1.

    step 0: 0 takes block 1, samples (first 1).
    step 1: 0 decodes (4 tokens, block 1). 1: 2 blocks for 7 fit in the 2 free; its first chunk, 3
            tokens, takes block 2 (not full: no hash).
    step 2: 0's 5th token takes block 3, the last. 1's chunk of 3 (tokens 3-5) needs a second block:
            none; 1 is running[-1], its own victim (scheduler.py:938, 978), with 3 tokens computed, none
            in a full block: nothing cached. (Computing token 3 alone would have filled block 2 and
            cached it, and its re-admission would hit 4.)
    steps 3-7: 1 waits (2 blocks, 1 free: its block 2); 0 takes it at step 6 and is done at 8.
    step 8: 1 hits nothing, takes 4; step 9 its last 3: first = done = 10."""
    sc = {"budget": 4, "max_seqs": 4, "block_size": 4, "num_blocks": 4, "prefix_caching": True,
          "requests": [{"prompt": 3, "out": 8}, {"prompt": 7, "out": 1, "arrive": 1}]}
    assert answer(sc) == ({0: 1, 1: 10}, {0: 8, 1: 10}, {0: 0, 1: 1}, {0: 0, 1: 0}, 1, 11)


def test_a_victims_blocks_are_evicted_from_its_tail_before_it_resumes():
    """Block 4, 5 usable blocks, budget 5, prefix caching. Requests 0 (4 tokens, 10 out) and 1 (8
    tokens, 6 out) at step 0.

    step 0: 0 takes 4 (block 1), samples; 1 takes 1 (block 2).
    step 1: 0 grows into block 3; 1 takes 4 (5 computed, block 4): 2(h).
    step 2: 1 takes its last 3 (8), 4(h), samples (first 3).
    step 3: 1 grows into block 5, the last; steps 3, 4: both decode.
    step 5: 0 needs a 3rd block: 1 is preempted with 3 outputs (11 tokens, 10 computed); freed in
            reverse: its partial block 5 to the front, 4(h), 2(h) behind: [5, 4(h), 2(h)]. 0 takes 5.
    steps 6-8: 1 would hit 8 (blocks 2, 4) but needs 3 blocks, 2 free: it waits.
    step 9: 0 takes a 4th block, the front: 4(h), 1's tokens 4-7; 0 is done at 10 and freed.
    step 10: 1 hits 4 (block 2), 3 blocks fit; it recomputes 7 of its 11 tokens: 5 now,
    step 11: 2, and samples its 4th token; steps 12, 13 its 5th and 6th: done 14.
    (A hit of 8 would resume in one step, done 13; a hit of 0 in three, done 15.)"""
    sc = {"budget": 5, "max_seqs": 4, "block_size": 4, "num_blocks": 6, "prefix_caching": True,
          "requests": [{"prompt": 4, "out": 10}, {"prompt": 8, "out": 6}]}
    assert answer(sc) == ({0: 1, 1: 3}, {0: 10, 1: 14}, {0: 0, 1: 1}, {0: 0, 1: 0}, 1, 15)
