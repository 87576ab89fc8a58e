"""lib/vllm.sq against vLLM v1's scheduler read at the level of its KV blocks (vllm_blocks.py).

vllm_blocks.py is written from vLLM's ``schedule()``, ``KVCacheManager``, ``BlockPool`` and the bridge's driver,
and keeps what they keep: the free queue block by block, the hashes, the reference counts. It is first held to
the real scheduler's own answers (every shipped oracle scenario, and the priority-policy scenarios of
peer_programs2), then used as the reference on scenarios drawn at random: FCFS and the bridge's serving orders,
prefix caching on and off, multi-turn sessions, the long-prefill threshold, KV caches that barely hold the
largest request. serQ (``serq vllm scenario``) must give its answer request for request, every field.

vLLM hashes a block when it allocates it, before its tokens are computed: a request the running loop served
earlier in a step and then preempted in that step (a victim found anywhere in the running list: vLLM's
priority policy, the bridge's serving orders) leaves those blocks cached, and its re-admission finds KV that
was never computed. The scenario program's KV pool says `cache scheduled` (docs/language.md, Pools), which
caches a victim's computed prefix and the tokens the planning had given it, so the random scenarios are
compared with that rule as vLLM has it; the last two tests trace a scenario where it shows, under a serving
order and under vLLM's priority policy (test_vllm_round46_served_victim.py draws more of them).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import serq_vllm.scenarios
import vllm_blocks
from serq_vllm.scenarios import answer_path, list_scenarios, read_scenario, run_scenario
from vllm_cases import FIELDS
from vllm_cases import computed_only as _computed_only
from vllm_cases import fields as _fields
from vllm_cases import priority_answer as _priority_answer

pytestmark = pytest.mark.timeout(120)

PRIORITY = json.loads((Path(__file__).parent / "peer_programs2" / "priority_vllm.json").read_text())["scenarios"]


def test_the_block_model_gives_every_shipped_oracle_answer():
    # the real scheduler's answers (vLLM 0.31-0.33, oracle/README.md), serving orders included
    checked = 0
    for s in list_scenarios():
        want = json.loads(Path(answer_path(s.path)).read_text())
        got = vllm_blocks.run(read_scenario(s.path))
        fields = [k for k in FIELDS if k in want]
        assert _fields(got, fields) == _fields(want, fields), s.name
        checked += 1
    assert checked >= 43


@pytest.mark.parametrize("case", PRIORITY, ids=[c["name"] for c in PRIORITY])
def test_the_block_model_gives_vllms_priority_policy_answers(case):
    # vLLM 0.33.0's own scheduler under policy="priority" (peer_programs2/priority_vllm.json)
    got = vllm_blocks.run(case["scenario"])
    want = case["vllm"]
    assert _fields(got, ("first", "done", "preempted", "preemptions")) == _fields(
        want, ("first", "done", "preempted", "preemptions"))


def _draw(rng: random.Random) -> dict:
    bs = rng.choice([1, 2, 3, 4, 5, 8, 16])
    reqs: list[dict] = []
    sessions = rng.randint(0, 3)
    last: dict[int, dict] = {}
    for i in range(rng.randint(2, 12)):
        r: dict = {"prompt": rng.randint(1, 48), "out": rng.randint(1, 20)}
        s = rng.randint(0, sessions - 1) if sessions and rng.random() < 0.6 else None
        if s is None:
            if rng.random() < 0.6:
                r["arrive"] = rng.randint(0, 12)
        else:
            r["session"], r["turn"] = s, i
            if s in last:
                prev = last[s]
                r["prompt"] = prev["prompt"] + prev["out"] + rng.randint(0, 10)
                r["think"] = rng.choice([0, 0, 1, 3])
            elif rng.random() < 0.5:
                r["arrive"] = rng.randint(0, 10)
            last[s] = r
        reqs.append(r)
    need = max(vllm_blocks.cdiv(r["prompt"] + r["out"], bs) for r in reqs)
    budget = rng.randint(1, 64)
    sc = {"budget": budget, "max_seqs": rng.randint(1, min(8, budget)), "block_size": bs,
          "num_blocks": need + 1 + (rng.randint(0, need // 2) if rng.random() < 0.6 else rng.randint(0, 2 * need)),
          "chunk": rng.choice([0, 0, 1, 3, 8, 20]), "prefix_caching": rng.random() < 0.7, "requests": reqs}
    if rng.random() < 0.5:
        sc["serve"] = rng.choice(["-admission", "decoding ? 1 : 0", "decoding ? 0 : 1", "-decoding"])
    return sc


def test_serq_gives_the_block_models_answer_on_random_scenarios():
    # 20 scenarios of seed 45; some 3 000 other draws of this kind gave no difference either
    rng = random.Random(45)
    kinds = {"preempted": 0, "cached": 0, "served": 0}
    for n in range(20):
        sc = _draw(rng)
        want = vllm_blocks.run(sc)
        got = run_scenario(sc)
        assert _fields(got) == _fields(want), (n, sc)
        kinds["preempted"] += want["preemptions"] > 0
        kinds["cached"] += any(v > 0 for v in want["cached"].values())
        kinds["served"] += "serve" in sc
    # the draws reach the rules they are for
    assert kinds["preempted"] >= 5 and kinds["cached"] >= 5 and kinds["served"] >= 5, kinds


def test_turns_that_reuse_only_the_previous_prompt_agree_with_the_block_model(tmp_path, monkeypatch):
    # the replayed trace's turns (oracle/README.md, ../traces/): a turn's prompt begins with the previous
    # turn's prompt, not its output, so the blocks holding the outputs stay cached and match nothing (a dead
    # remainder of the entry in serQ, hashes nobody asks for in vLLM) until they are evicted. The scenario
    # program with lib/vllm.sq's match set to the previous prompt, as vllm_replay.sq sets it.
    text = (Path(serq_vllm.scenarios._PROGRAM)).read_text()
    text = text.replace("set more = 0; }", "set more = 0; set prevp = 0; }")
    text = text.replace("t0, caching ? inf : -1, C > 0 ? C : inf);",
                        "t0, caching ? prevp : -1, C > 0 ? C : inf);\n    set prevp = prompt;")
    assert text.count("prevp") == 3
    program = tmp_path / "replay_scenario.sq"
    program.write_text(text)
    monkeypatch.setattr(serq_vllm.scenarios, "_PROGRAM", str(program))
    rng = random.Random(4545)
    dead = 0
    for n in range(10):
        sc = _draw(rng)
        want = vllm_blocks.run(sc, history="prompt")
        assert _fields(run_scenario(sc)) == _fields(want), (n, sc)
        # a later turn that found the previous prompt's blocks, behind which that turn's outputs stay cached
        dead += any("think" in r and want["cached"][str(i)] > 0 for i, r in enumerate(sc["requests"]))
    assert dead >= 3, dead
    # the two histories differ where a turn reuses the previous turn's outputs
    turns = {"budget": 64, "max_seqs": 4, "block_size": 4, "num_blocks": 20, "prefix_caching": True,
             "requests": [{"prompt": 8, "out": 9, "session": 0, "turn": 0},
                          {"prompt": 20, "out": 1, "session": 0, "turn": 1}]}
    assert run_scenario(turns)["cached"] == {"0": 0, "1": 8} == vllm_blocks.run(turns, history="prompt")["cached"]
    assert vllm_blocks.run(turns)["cached"] == {"0": 0, "1": 16}


# Blocks of 4, 5 usable blocks (num_blocks 6), budget 7, newest first (`-admission`), prefix caching.
# R0 (prompt 7, 4 out) at 0, R1 (prompt 12, 2 out) at 1.
#
#   step  order     R0                    R1                                      free
#   0     R0        7 (2 blocks), tok1    -                                       3
#   1     R0, R1    1 (8 tokens), tok2    admitted: 12 tokens need 3 blocks, 3    1
#                                         free; 6 tokens (2 blocks: block 0
#                                         hashed, block 1 partial)
#   2     R1, R0    1 (9 tokens: a 3rd    6 more (to 12: its 3rd block, the last   2
#                   block, none free:     free one; vLLM hashes blocks 1 and 2
#                   R1, the last          now, for the tokens this step
#                   admitted, is the      schedules), then preempted: its 6
#                   victim), tok3         tokens go back to the budget, its
#                                         blocks freed tail first; R0 takes the
#                                         first in the free queue, R1's block 2
#   3     R0        1 (10 tokens), tok4:  waits: 12 tokens need 3 blocks, 2 free   5 (R0 freed)
#                   done at 4             (no admission in step 2: it preempted)
#   4     R1        -                     admitted: the hit is R1's cached blocks
#
# vLLM finds blocks 0 and 1 (8 tokens, block 1's never computed), prefills 4 and samples at 5, done at 6;
# so does serQ under `cache scheduled` (R1's 6 computed tokens and the 6 step 2 gave it: 12, three whole
# blocks, the hit at most 8). With the pool's `cache computed` R1 caches its computed prefix, 6 tokens, one
# whole block: the hit is 4, 7 of the 8 left in step 4 and the last in step 5, first at 6, done at 7. In
# vLLM's own order (admission) R1 is served after R0, fails its own growth in step 2 and is its own victim
# before anything is scheduled for it: both give 6 and 7.
SERVED_VICTIM = {"budget": 7, "max_seqs": 4, "block_size": 4, "num_blocks": 6, "chunk": 0, "prefix_caching": True,
                 "serve": "-admission",
                 "requests": [{"prompt": 7, "out": 4}, {"prompt": 12, "out": 2, "arrive": 1}]}


def test_a_victim_served_earlier_in_its_step_caches_what_the_step_gave_it(tmp_path, monkeypatch):
    serq = _fields(run_scenario(SERVED_VICTIM))
    assert serq["first"] == {"0": 1, "1": 5} and serq["done"] == {"0": 4, "1": 6}
    assert serq["preempted"] == {"0": 0, "1": 1} and serq["cached"] == {"0": 0, "1": 0}
    assert serq == _fields(vllm_blocks.run(SERVED_VICTIM))
    # in admission order the victim is never a request the step has served: the two hash rules agree
    plain = {k: v for k, v in SERVED_VICTIM.items() if k != "serve"}
    both = _fields(run_scenario(plain))
    assert both["first"] == {"0": 1, "1": 6} and both["done"] == {"0": 4, "1": 7}
    assert both == _fields(vllm_blocks.run(plain)) == _fields(vllm_blocks.run(plain, eager_hash=False))
    # the pool's `cache computed`: the victim's computed prefix alone, a step later (the block model's
    # scheduler that drops the hashes of blocks never computed)
    _computed_only(tmp_path, monkeypatch)
    late = _fields(run_scenario(SERVED_VICTIM))
    assert late["first"] == {"0": 1, "1": 6} and late["done"] == {"0": 4, "1": 7}
    assert late == _fields(vllm_blocks.run(SERVED_VICTIM, eager_hash=False))
    assert _fields(run_scenario(plain)) == both


# vLLM's own priority policy, with a long-prefill threshold: blocks of 4, 5 usable blocks, budget 3, threshold 2
# (while two requests run or wait), prefix caching. R0 (prompt 13, 1 out, priority 2) at 1, R1 (prompt 6, 2
# out, priority 0) at 2.
#
#   step  R0 (admitted first: running[0])            R1                                   free
#   1     alone, no threshold: 3 tokens (1 block)    -                                    4
#   2     2 (to 5: 2 blocks)                         admitted: 6 tokens need 2 blocks, 3  2
#                                                    free; 1 token (1 block)
#   3-5   2 a step (to 11: 3 blocks)                 1 a step (to 4)                      1
#   6     2 more (to 13: its 4th block, the last;    1 more (to 5) needs a 2nd block,     3
#         vLLM hashes its blocks 0-2, block 2's      none free: the victim is the lowest
#         tokens 11 and 12 not computed), then       priority, R0, served before it: its
#         preempted: its 2 tokens go back            blocks freed, R1 takes the unhashed
#                                                    4th
#   7     waits: 13 tokens need 4 blocks, 3 free     1 (to 6), tok1 (first 8)             3
#   8     waits                                      tok2: done at 9                      5
#   9     alone, no threshold: vLLM's hit is 12      -
#         (3 blocks), 1 token, tok1: first and
#         done at 10; serQ's too under `cache
#         scheduled` (11 computed and 2 given: 13,
#         3 whole blocks); under `cache computed`
#         it is 8 (R0 had computed 11): 3 tokens,
#         then 2 at step 10: first and done at 11
PRIORITY_VICTIM = {"budget": 3, "max_seqs": 4, "block_size": 4, "num_blocks": 6, "chunk": 2, "prefix_caching": True,
                   "requests": [{"prompt": 13, "out": 1, "priority": 2, "arrive": 1},
                                {"prompt": 6, "out": 2, "priority": 0, "arrive": 2}]}


def test_under_vllms_priority_policy_too(tmp_path):
    serq = _priority_answer(PRIORITY_VICTIM, tmp_path)
    assert serq == {"first": {"0": 10, "1": 8}, "done": {"0": 10, "1": 9}, "preempted": {"0": 1, "1": 0},
                    "cached": {"0": 0, "1": 0}}
    assert serq == _fields(vllm_blocks.run(PRIORITY_VICTIM), tuple(serq))
    # the pool's `cache computed`: a step later, as the block model's scheduler without the eager hash
    late = _priority_answer(PRIORITY_VICTIM, tmp_path, "computed")
    assert late["first"] == {"0": 11, "1": 8} and late["done"] == {"0": 11, "1": 9}
    assert late == _fields(vllm_blocks.run(PRIORITY_VICTIM, eager_hash=False), tuple(late))
