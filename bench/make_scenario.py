"""Writes bench/scenario_1000.json, the 1 000-request scenario of bench/run.py's `serq vllm scenario` row.

A scenario in the oracle's format (packages/serq-vllm/src/serq_vllm/oracle/README.md) on the step clock,
drawn with Python's random (seed 11): 400 sessions arriving about every 6 steps, each of 1 to 5 turns
(1 000 requests in all) that extend the whole conversation, prompts of 20-300 new tokens, 8-120 output
tokens, think times of 0-20 steps; budget 256, max_seqs 32, blocks of 16 tokens, 600 blocks (so requests
are preempted and cached prefixes evicted), long-prefill threshold 64, prefix caching on. serq vllm
scenario and bench/vllm_peer.py scenario must print the same answer for it (bench/run.py checks).

    python bench/make_scenario.py
"""

import json
import random
from pathlib import Path


def make(seed: int = 11, total: int = 1000) -> dict:
    rng = random.Random(seed)
    requests = []
    t = 0
    s = 0
    while len(requests) < total:
        t += rng.randint(0, 12)
        turns = min(rng.randint(1, 5), total - len(requests))
        hist = 0
        for k in range(turns):
            new = rng.randint(20, 300)
            out = rng.randint(8, 120)
            r = {"prompt": hist + new, "out": out, "session": s, "turn": k + 1}
            if k == 0:
                r["arrive"] = t
            else:
                r["think"] = rng.randint(0, 20)
            requests.append(r)
            hist += new + out
        s += 1
    return {"budget": 256, "max_seqs": 32, "block_size": 16, "num_blocks": 600, "chunk": 64,
            "prefix_caching": True, "requests": requests}


if __name__ == "__main__":
    out = Path(__file__).with_name("scenario_1000.json")
    sc = make()
    out.write_text(json.dumps(sc, separators=(",", ":")) + "\n")
    print(f"{out}: {len(sc['requests'])} requests")
