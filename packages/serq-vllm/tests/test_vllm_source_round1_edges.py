"""The edge cases of vLLM 0.33.0's scheduler that language.txt §7's rows rest on, each a shipped oracle
scenario (``oracle/generated/source_*``, the real scheduler's answer recorded by make_oracle.py), run through
lib/vllm.sq on both simulator tiers.

Each answer is vLLM's (independent of serQ); the comments give the steps of the real scheduler that make it
(printed around its ``schedule()`` while recording: per step, each scheduled request's tokens and its computed
tokens after them), and each test checks, besides the whole answer, the figure that tells the rule apart from
the plausible wrong one, so that a scenario edited until it no longer takes its path fails here.
"""

from __future__ import annotations

import json

import pytest
from serq_vllm.scenarios import ORACLE, answer_path, compare, run_scenario

FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


def _scenario(name: str) -> tuple[dict, dict]:
    path = ORACLE / "generated" / f"{name}.json"
    return json.loads(path.read_text()), json.loads(answer_path(path).read_text())


def _serq(name: str, monkeypatch) -> tuple[dict, dict]:
    """serQ's answer on the default tier and the general engine (the same), and vLLM's recorded one."""
    sc, real = _scenario(name)
    answers = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        answers.append(run_scenario(sc))
    assert {f: answers[0][f] for f in FIELDS} == {f: answers[1][f] for f in FIELDS}
    assert compare(answers[0], real) == [] and answers[0]["steps"] == real["steps"]
    assert real["vllm"] == "0.33.0"
    return answers[0], real


def test_prompts_of_one_token_are_preempted_and_recompute_what_they_sampled(monkeypatch):
    # Block 2, 3 usable blocks, budget 4: three one-token prompts. Step 2: request 0's decode needs its
    # second block and there is none; vLLM preempts running[-1] twice, 2 then 1 (both go to the head of the
    # waiting queue, 1 ahead of 2). Request 1 comes back at step 6 with 3 tokens (its prompt and the two it
    # sampled), recomputed in one chunk: a hit of 0, since request 0's decode took its freed block.
    ans, real = _serq("source_prompt_one", monkeypatch)
    assert real["preempted"] == {"0": 0, "1": 1, "2": 2}
    assert real["done"] == {"0": 6, "1": 10, "2": 13}


@pytest.mark.parametrize("name, done1", [("source_block_boundary", 16), ("source_block_boundary_nocache", 18)])
def test_a_victim_preempted_at_a_block_boundary_hits_all_it_has_but_the_last_token(monkeypatch, name, done1):
    # Budget 2, block 4, 5 usable blocks. Request 1 (prompt 4) is admitted at step 4 with the one token the
    # budget leaves beside request 0's decode (less than a block), samples its first token at step 7
    # (computed 4: its one full block). Step 8: request 0's decode at position 12 needs a fifth block;
    # request 1 is preempted with 4 computed tokens and 5 tokens in all. With prefix caching its block is
    # still cached at step 9: the hit is 4 = floor((5 - 1) / 4) * 4, every token but the last, and it
    # recomputes 1 token and samples its second at once: done 9 + 7 = 16. Without prefix caching it
    # recomputes all 5 (steps 9-11) and ends two steps later, at 18. A model that forgot the sampled token
    # on preemption (5 tokens taken as the 4 of the prompt) would hit floor(3 / 4) * 4 = 0 and end at 18
    # with prefix caching too.
    ans, real = _serq(name, monkeypatch)
    assert real["done"]["1"] == done1
    assert real["first"] == {"0": 4, "1": 8} and real["preempted"] == {"0": 0, "1": 1}


def test_a_prefix_hit_of_the_whole_prompt_but_its_last_token(monkeypatch):
    # Block 4. Session 0: 8 prompt tokens and 1 output, cached as 2 blocks; its second turn's prompt is
    # those 9 tokens: the hit is 8, all but the last (kv_cache_manager.py:302, num_tokens - 1), and it
    # computes 1 token. Session 1's second turn (prompt 12) hits the same 8: its 12 - 1 reach only two full
    # blocks cached. Session 2: 7 prompt tokens and 2 outputs; the first output is fed back at the decode
    # step, so the second block (tokens 4-7, a generated one among them) is cached, and its second turn of
    # 9 tokens hits 8 as well.
    ans, real = _serq("source_hit_all_but_one", monkeypatch)
    assert {i: real["cached"][i] for i in ("1", "3", "5")} == {"1": 8, "3": 8, "5": 8}


@pytest.mark.parametrize("name, first1", [("source_preempt_mid_chunk", 14),
                                          ("source_preempt_mid_chunk_nocache", 15)])
def test_a_victim_in_the_middle_of_its_chunked_prefill(monkeypatch, name, first1):
    # Budget 8, block 4, 8 usable blocks. Request 1 (22 prompt tokens) is admitted at step 1 on its
    # reservation of 6 blocks and prefills 7 tokens a step beside request 0's decode. At step 3 it has 14
    # computed (three full blocks and two tokens of a fourth) and needs two more blocks; request 0 took one,
    # so request 1, running[-1], preempts itself. It is re-admitted at step 12 when request 0 frees: with
    # prefix caching its three full blocks are still cached, a hit of 12 (the two tokens of the partial block
    # are lost), then chunks of 8 and 2: first token at 14. Without, 22 tokens in chunks of 8, 8, 6: at 15.
    ans, real = _serq(name, monkeypatch)
    assert real["first"]["1"] == first1 and real["preempted"]["1"] == 1
    assert real["cached"]["1"] == 0  # the hit of its first scheduling, not of its re-admission


def test_max_num_seqs_stops_the_admissions_in_the_middle_of_a_step(monkeypatch):
    # max_seqs 3, budget 32: at step 1 request 0 runs and four short requests wait, with budget for all
    # of them. Requests 1 and 2 are admitted; then len(running) = 3 stops the waiting loop
    # (scheduler.py:1071-1074 in 0.33.0), and 3 and 4 start at step 3, when 1 and 2 have finished.
    ans, real = _serq("source_seqcap_mid_admission", monkeypatch)
    assert real["first"] == {"0": 1, "1": 2, "2": 2, "3": 4, "4": 4}


def test_a_budget_left_smaller_than_a_block(monkeypatch):
    # Budget 6, block 8. Request 1 (prompt 5) is admitted at step 2 with the 1 token request 0's last chunk
    # leaves; session 0's second turn (prompt 21) is admitted at step 6 with a hit of 16 and the 4 tokens the
    # two decoders leave, and finishes its prefill with 1 token at step 7.
    ans, real = _serq("source_budget_below_block", monkeypatch)
    assert real["cached"]["2"] == 16
    assert real["first"] == {"0": 3, "1": 4, "3": 6, "2": 8}


def test_the_long_prefill_threshold_with_one_request_waiting(monkeypatch):
    # Threshold 5, budget 32. Step 0: request 0 (prompt 50) is alone, so it takes 32. Step 1: request 1
    # arrives: one running and one waiting are two, so both are cut to 5 (request 0 mid-prefill too). Step 12:
    # request 2 (prompt 12) waits alone with nothing running: one request, no cut, its whole prompt at once.
    ans, real = _serq("source_threshold_one_waiting", monkeypatch)
    assert real["first"] == {"0": 5, "1": 5, "2": 13}


@pytest.mark.parametrize("name, hit", [("source_free_order", 4), ("source_free_order_newest", 8)])
def test_requests_finishing_in_one_step_are_freed_in_the_order_they_were_scheduled(monkeypatch, name, hit):
    # Block 4, 8 usable blocks. Sessions 0 and 1 both finish at step 2, from the running loop. vLLM frees
    # them in update_from_output's order, the order of the step's schedule: a request's partial last block to
    # the front of the free queue, its full (cached) blocks tail first to the back. In admission order
    # session 0 frees first, so its blocks are nearer the front; the 20-token request at step 4 takes the
    # two partial blocks, the two never used and session 0's second block: session 0's next turn hits 4.
    # Served newest first (serve -admission) session 1 frees first and loses its second block instead;
    # session 0 hits 8. Session 1's next turn hits 0 either way: session 0's turn, admitted before it in
    # the same step, takes the rest of session 1's blocks from the front of the queue.
    ans, real = _serq(name, monkeypatch)
    assert real["cached"]["3"] == hit and real["cached"]["4"] == 0


@pytest.mark.parametrize("name, hit, done", [("source_waiting_prefix_evicted", 0, 14),
                                             ("source_waiting_prefix_kept", 4, 13)])
def test_a_request_waiting_while_the_budget_is_spent_leaves_its_prefix_evictable(monkeypatch, name, hit, done):
    # Budget 4, block 4. Session 0's first turn caches one block (step 0); its second turn (prompt 6) arrives
    # at step 2, while a 40-token prefill takes the whole budget each step (steps 1-10): the waiting loop
    # runs only while budget is left (`while token_budget > 0`, scheduler.py:1062 in 0.33.0), so it is not admitted, its prefix
    # not touched, and the prefill's tenth block comes from the free queue. With 10 usable blocks that is
    # the session's cached block: the turn, admitted at step 11, hits 0 and prefills 6 tokens in two chunks
    # (done 14). With 11 usable blocks the block survives: a hit of 4 (done 13). An admission at a step
    # with no budget left would touch the block, and the prefill would preempt the turn for it instead.
    ans, real = _serq(name, monkeypatch)
    assert real["cached"]["1"] == hit and real["done"]["1"] == done
    assert real["preemptions"] == 0
