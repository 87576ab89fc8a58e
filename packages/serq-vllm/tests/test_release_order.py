"""Two requests that finish in one step release their blocks in the order the step scheduled them, as
vLLM frees finished requests in ``update_from_output`` (scheduling order: the running requests in
running order, then those admitted in the step). The freed blocks join the free queue in that order, so
the request freed first loses its cached blocks first, and a later turn's hit shows which it was.

Both scenarios run on the step clock (``serq vllm scenario``), block size 4, budget 16,
long_prefill_token_threshold 8, prefix caching, 12 usable blocks; the answers are worked by hand below.
"""

from __future__ import annotations

from serq_vllm.scenarios import run_scenario

BASE = {"budget": 16, "max_seqs": 8, "block_size": 4, "num_blocks": 13, "chunk": 8, "prefix_caching": True}


def test_a_prefill_finisher_scheduled_first_is_freed_first():
    """Request 0 (session b: 24 tokens, 1 output) is admitted before request 1 (session a: 8 tokens, 3
    outputs) at step 0; two requests wait, so the threshold cuts 0's chunks to 8: steps 0, 1, 2 prefill
    it (8 + 8 + 8), and it samples its only token at the end of step 2. Request 1 takes the 8 tokens left
    at step 0 (first token at 1) and decodes at steps 1 and 2 (done at 3). Both finish at step 2, request
    0 first in the step's order, so it is freed first: the free queue holds 1's partial third block (no
    hash: vLLM puts it at the front, block_pool.py free_blocks), the 3 blocks never used, then 0's 6
    cached blocks, then 1's 2 cached ones (8 of its 10 computed tokens).

    Request 2 (28 tokens, alone: no threshold) arrives at 3: 16 tokens at step 3 and 12 at step 4, done
    at 5; its 7 blocks come from 1's partial block and the 3 never used (serQ counts them free), then 3
    of 0's, never from 1's cached ones. Request 3, session a's
    second turn (8 + 3 + 5 = 16 tokens), is sent think 2 after 1's done, at 5, and finds 1's 2 blocks: 8
    cached tokens, prefill 8, done at 6. (With 1 freed first, as a zero-work decode once made it, 2
    would evict 1's blocks first and 3 would find 0.)"""
    sc = {**BASE, "requests": [
        {"session": "b", "turn": 1, "prompt": 24, "out": 1},
        {"session": "a", "turn": 1, "prompt": 8, "out": 3},
        {"prompt": 28, "out": 1, "arrive": 3},
        {"session": "a", "turn": 2, "prompt": 16, "out": 1, "think": 2},
    ]}
    got = run_scenario(sc)
    assert {int(k): v for k, v in got["first"].items()} == {0: 3, 1: 1, 2: 5, 3: 6}
    assert {int(k): v for k, v in got["done"].items()} == {0: 3, 1: 3, 2: 5, 3: 6}
    assert {int(k): v for k, v in got["cached"].items()} == {0: 0, 1: 0, 2: 0, 3: 8}
    assert got["preemptions"] == 0


def test_a_prefill_finisher_scheduled_last_is_freed_last():
    """The other order. Request 0 (session a: 8 tokens, 3 outputs) runs alone from step 0 (first token
    at 1); request 1 (8 tokens, 1 output) arrives at 2 and is admitted after 0's decode in that step, its
    prefill of 8 completes and samples its only token: both finish at step 2, 0 first, so 0 is freed
    first. The free queue: 0's partial third block (at the front), the 7 blocks never used, then 0's 2
    cached blocks, then 1's 2. Request 2 (36 tokens = 9 blocks, alone) arrives at 3 and takes 16, 16
    and 4 tokens at steps 3, 4 and 5 (done at 6): the 8 free blocks, then one cached block, the newest
    of 0's (its tokens 4-7).
    Request 3, session a's second turn (16 tokens), sent think 3 after 0's done, at 6, finds the block
    left: 4 cached tokens, prefill 12, done at 7."""
    sc = {**BASE, "requests": [
        {"session": "a", "turn": 1, "prompt": 8, "out": 3},
        {"prompt": 8, "out": 1, "arrive": 2},
        {"prompt": 36, "out": 1, "arrive": 3},
        {"session": "a", "turn": 2, "prompt": 16, "out": 1, "think": 3},
    ]}
    got = run_scenario(sc)
    assert {int(k): v for k, v in got["first"].items()} == {0: 1, 1: 3, 2: 6, 3: 7}
    assert {int(k): v for k, v in got["done"].items()} == {0: 3, 1: 3, 2: 6, 3: 7}
    assert {int(k): v for k, v in got["cached"].items()} == {0: 0, 1: 0, 2: 0, 3: 4}
    assert got["preemptions"] == 0
