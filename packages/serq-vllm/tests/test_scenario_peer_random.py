"""`serq vllm scenario` (programs/scenario.sq on lib/vllm.sq) against the benchmark's plain-Python scheduler
loop (bench/vllm_peer.py, written apart from the simulator, which matches the real scheduler on every
shipped oracle scenario it can express: test_bench_peer.py) on small random scenarios in the oracle's
format, served in admission order: the same answer to the last field (first and done step of every request,
its preemptions and prefix-cache hit, the total preemptions, the steps).

The shipped scenarios fix one setting at a time; these vary them together and into their corners: blocks of
1 token, a budget of 1, a chunk cap below the block or not dividing the prompt, the cap on a lone request
(vLLM applies it only while more than one request is running or waiting), max_num_seqs as the binding limit,
a pool just large enough for the longest request (recompute preemptions, the victim the last running
request), prefix caching on and off, idle steps between arrivals, and turns of a session sent after a think
time whose prompts begin with the previous turn's tokens. Every generated scenario is a valid vLLM
configuration (max_num_seqs ≤ max_num_batched_tokens, every request fits the pool alone).

Power (each a one-line change to the peer, the test failing on that many of the 200 scenarios): its victim
taken from the front of its running list instead of the back (``running.pop(0)``), 58; its chunk cap applied
to a lone request too, 54; its admission asking room for the tokens the cache does not supply rather than for
the request's whole count (``-(-(known - hit) // bs)``), 42. (vLLM's rule that a hit never covers the last
token is not seen in this format: a turn's cached history ends before its last output token, whose KV was
never computed, and a preempted request's own prefix before the token it resumes at.)
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")
COUNT = 200


def _load_peer():
    spec = importlib.util.spec_from_file_location("vllm_peer_random", REPO / "bench" / "vllm_peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_peer_random"] = mod
    spec.loader.exec_module(mod)
    return mod


peer = _load_peer()


def scenario(seed: int) -> dict:
    """A random scenario in the oracle's format (docs/vllm-oracle.md), valid for vLLM."""
    rng = random.Random(seed)
    bs = rng.choice([1, 2, 4, 8, 16])
    budget = rng.choice([1, 2, 3, 8, 16, 32, 64, 128])
    sc: dict = {"budget": budget, "max_seqs": min(budget, rng.choice([1, 2, 3, 4, 8, 64])), "block_size": bs,
                "num_blocks": 0, "chunk": rng.choice([0, 0, 1, 3, 8, 17, 64]),
                "prefix_caching": rng.random() < 0.6, "requests": []}
    longest = 0
    for s in range(rng.randint(1, 8)):
        turns = rng.randint(2, 4) if rng.random() < 0.5 else 1
        prompt = rng.randint(1, 80)
        arrive = rng.choice([0, 0, rng.randint(0, 40)])
        for t in range(turns):
            r: dict = {"prompt": prompt, "out": rng.randint(1, 30)}
            if turns > 1:
                r["session"], r["turn"] = s, t + 1
                if t:
                    r["think"] = rng.choice([0, 0, 1, 5])
            if t == 0 and arrive:
                r["arrive"] = arrive
            sc["requests"].append(r)
            longest = max(longest, prompt + r["out"])
            # the next turn's prompt: this one's tokens, then fresh ones, or none (all of them cached but for the
            # blocks of the last output token, which the cache never had: the hit then leaves the last token out)
            prompt += r["out"] + rng.choice([rng.randint(1, 40), 0])
    # vLLM keeps one block as its null block: the longest request alone fits, with a margin of 0 to 100 blocks
    sc["num_blocks"] = -(-longest // bs) + 1 + rng.choice([0, 0, 1, 2, 5, 20, 100])
    return sc


CASES = [scenario(seed) for seed in range(COUNT)]


@pytest.fixture(scope="module")
def answers():
    from serq_vllm.scenarios import run_scenario

    return [(run_scenario(sc), peer.run_scenario(sc)) for sc in CASES]


def test_serq_answers_every_random_scenario_as_the_peer_does(answers):
    differ = [(k, [f for f in FIELDS if a[f] != b[f]]) for k, (a, b) in enumerate(answers)
              if any(a[f] != b[f] for f in FIELDS)]
    assert not differ, differ[:5]


def test_the_scenarios_reach_the_corners_they_are_drawn_for(answers):
    preempting = sum(1 for a, _ in answers if a["preemptions"] > 0)
    hits = sum(1 for a, _ in answers if any(v > 0 for v in a["cached"].values()))
    lone_cap = sum(1 for sc in CASES if sc["chunk"] and len(sc["requests"]) == 1 and sc["requests"][0]["prompt"]
                   > sc["chunk"])
    # idle steps: no request has arrived yet (every session's first turn arrives after step 0)
    idle = sum(1 for sc in CASES if all(r.get("arrive", 0) > 0 for r in sc["requests"] if r.get("turn", 1) == 1))
    assert preempting >= 20, preempting
    assert hits >= 20, hits
    assert lone_cap >= 3, lone_cap
    assert idle >= 5, idle
    assert sum(1 for sc in CASES if sc["block_size"] == 1) >= 20
    assert sum(1 for sc in CASES if sc["budget"] == 1) >= 10
    assert sum(1 for sc in CASES if any("think" in r for r in sc["requests"])) >= 40
