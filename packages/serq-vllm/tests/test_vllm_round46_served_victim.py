"""A victim the step had already served, and the order of request ids, against vLLM's scheduler at the level of
its blocks (vllm_blocks.py, held to every shipped oracle answer and to vLLM's priority-policy answers by
test_vllm_round45_blocks.py).

vLLM hashes a block when ``allocate_slots`` gives it for the tokens a step schedules (``cache_blocks`` before
they are computed), so a request the running loop served earlier in a step and then preempted in that step
leaves those blocks cached and finds them when it is admitted again. The vLLM programs' KV pools say so with
`cache scheduled` (docs/language.md, Pools). Such a victim exists only where the victim is looked for anywhere
in the running list: vLLM's priority policy (peer_programs2/vllm_priority.sq) and the serving orders of `serq
vllm real`'s scheduler class (programs/scenario.sq under a `serve`). Scenarios where the rule decides a request's
figures are rare among random ones (a few in a thousand: the victim must be mid-prefill, given tokens that
complete a block, and its blocks must outlive its wait), so the draws are many and cheap on the block model, and
serQ runs the ones where the block model's two rules (``eager_hash``) give different answers, with some others.

vLLM's priority queue breaks a tie of priority and arrival by request id, a string (``Request.__lt__``): the
bridge's driver gives request i the id ``str(i)``, so "10" is served before "2".
"""

from __future__ import annotations

import random

import pytest
import vllm_blocks
import vllm_cases
from serq_vllm.scenarios import run_scenario

pytestmark = pytest.mark.timeout(120)

FIELDS = ("first", "done", "preempted", "cached")


def _fields(answer: dict) -> dict:
    return vllm_cases.fields(answer, FIELDS)


def _draw(rng: random.Random, priority: bool) -> dict:
    """A scenario where a request prefills a long prompt in chunks (a long-prefill threshold, a small budget)
    while others arrive and grow in a KV cache that barely holds the largest request: under the priority
    policy the long prompts have the lowest priority, under a serving order every request has none."""
    bs = rng.choice([2, 3, 4])
    reqs = []
    for i in range(rng.randint(3, 6) if priority else rng.randint(2, 6)):
        if i == 0 or rng.random() < 0.3:
            r = {"prompt": rng.randint(16, 40) if priority else rng.randint(10, 30), "out": rng.randint(1, 4),
                 "arrive": rng.randint(0, 1)}
            if priority:
                r["priority"] = 2
        else:
            r = {"prompt": rng.randint(3, 12), "out": rng.randint(2, 8), "arrive": rng.randint(1, 5)}
            if priority:
                r["priority"] = rng.randint(0, 1)
        reqs.append(r)
    need = max(vllm_blocks.cdiv(r["prompt"] + r["out"], bs) for r in reqs)
    budget = rng.randint(5, 10)
    sc = {"budget": budget, "max_seqs": rng.randint(2, 4), "block_size": bs,
          "num_blocks": need + 1 + rng.randint(0, 2), "chunk": rng.choice([2, 3, 4]), "prefix_caching": True,
          "requests": reqs}
    if not priority:
        sc["serve"] = rng.choice(["-admission", "decoding ? 1 : 0", "-decoding"])
    return sc


def _cases(seed: int, priority: bool, want: int, others: int, tries: int) -> tuple[list, list]:
    """The first ``want`` drawn scenarios where the eager hash decides a request's figures, and ``others``
    where it does not."""
    rng = random.Random(seed)
    hit, miss = [], []
    for _ in range(tries):
        sc = _draw(rng, priority)
        eager, late = vllm_blocks.run(sc), vllm_blocks.run(sc, eager_hash=False)
        if vllm_cases.fields(eager, FIELDS) != vllm_cases.fields(late, FIELDS):
            hit.append((sc, eager, late))
        elif len(miss) < others:
            miss.append((sc, eager, late))
        if len(hit) >= want and len(miss) >= others:
            break
    return hit, miss


def _serq(sc: dict, tmp_path, cache: str = "scheduled") -> dict:
    if "priority" in sc["requests"][0]:
        return vllm_cases.priority_answer(sc, tmp_path, cache)
    return _fields(run_scenario(sc))


@pytest.mark.parametrize("priority", [True, False], ids=["priority", "serving_order"])
def test_served_victims_give_vllms_answers(priority, tmp_path, monkeypatch):
    hit, miss = _cases(46 if priority else 4646, priority, 4, 6, 3000)
    assert len(hit) >= 4, len(hit)  # the draws reach the rule
    for n, (sc, eager, _late) in enumerate(hit + miss):
        assert _serq(sc, tmp_path) == _fields(eager), (n, sc)
    # the general engine gives the same (the default tier plans lazy decoders as a count)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    for n, (sc, eager, _late) in enumerate(hit):
        assert _serq(sc, tmp_path) == _fields(eager), (n, sc)
    monkeypatch.delenv("SERQ_SIM_TIER")
    # and under the language's default, `cache computed`, serQ gives the other rule's answers: the option is
    # what makes the difference
    if not priority:
        vllm_cases.computed_only(tmp_path, monkeypatch)
    for n, (sc, _eager, late) in enumerate(hit[:2]):
        assert _serq(sc, tmp_path, "computed") == _fields(late), (n, sc)


# Twelve requests of one priority sent at step 0, one slot (max_num_seqs 1): each runs alone, admitted the step
# after the previous one's last token, its 4-token prompt in one step (first token at the step's end) and its
# second token the step after. The request at place p of the waiting queue has its first token at 2p + 1 and
# is done at 2p + 2. vLLM's queue orders the ids "0" … "11" as strings: "0", "1", "10", "11", "2", … "9".
TIES = {"budget": 64, "max_seqs": 1, "block_size": 4, "num_blocks": 10, "chunk": 0, "prefix_caching": True,
        "requests": [{"prompt": 4, "out": 2, "priority": 0} for _ in range(12)]}


def test_ties_of_priority_and_arrival_go_by_the_request_ids_as_strings(tmp_path):
    order = ["0", "1", "10", "11", "2", "3", "4", "5", "6", "7", "8", "9"]
    first = {i: 2 * p + 1 for p, i in enumerate(order)}
    done = {i: 2 * p + 2 for p, i in enumerate(order)}
    want = {"first": first, "done": done, "preempted": dict.fromkeys(order, 0), "cached": dict.fromkeys(order, 0)}
    assert _fields(vllm_blocks.run(TIES)) == want
    got = vllm_cases.priority_answer(TIES, tmp_path)
    assert got == want
    assert got["first"]["10"] == 5 and got["first"]["2"] == 9  # (by number, 10 would be served eleventh)
    # two priorities: the ids' order holds within each
    sc = {**TIES, "requests": [{**r, "priority": i % 2} for i, r in enumerate(TIES["requests"])]}
    even = [i for i in order if int(i) % 2 == 0]
    odd = [i for i in order if int(i) % 2 == 1]
    got = vllm_cases.priority_answer(sc, tmp_path)
    assert got["first"] == {i: 2 * p + 1 for p, i in enumerate(even + odd)}
    assert _fields(vllm_blocks.run(sc)) == got

