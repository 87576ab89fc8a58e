"""`serq vllm scenario` with its KV pool's `cache` option drawn, `scheduled` (the scenario programs', vLLM's rule:
a block is hashed when allocate_slots gives it, before its tokens are computed) or `computed` (the language's
default: a victim caches its computed prefix alone), on drawn scenarios under serving orders and under vLLM's
priority policy (a scenario's "policy": "priority", programs/scenario_priority.sq), with sessions of several
turns: the same answer on both simulator tiers, and the block model's (vllm_blocks.py) under the same rule
(``eager_hash``). The draws are screened on the block model, which is cheap, for scenarios where the two rules
give different answers (a victim the step had already served mid-prefill, its blocks outliving its wait: a few
in a hundred of these draws), and serQ runs those with each option, and some others.

The random generators of the tier-differential tests (stress18.py, test_differential_random.py) draw the option
too, on a third of the KV pools that preempt (stress18.scheduled)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import serq_vllm.scenarios
import vllm_blocks
import vllm_cases
from serq_vllm.scenarios import run_scenario

pytestmark = pytest.mark.timeout(120)


def _draw(rng: random.Random) -> dict:
    """Long prompts prefilled in chunks (a threshold, a small budget) while short requests arrive and grow in a
    KV cache that barely holds the largest sequence; under the priority policy the long prompts have the lowest
    priority, otherwise a serving order other than vLLM's; a second turn now and then."""
    priority = rng.random() < 0.5
    bs = rng.choice([2, 3, 4])
    reqs = []
    for i in range(rng.randint(3, 6)):
        if i == 0 or rng.random() < 0.3:
            r = {"prompt": rng.randint(10, 36), "out": rng.randint(1, 4), "arrive": rng.randint(0, 1)}
            if priority:
                r["priority"] = 2
        else:
            r = {"prompt": rng.randint(3, 12), "out": rng.randint(2, 8), "arrive": rng.randint(1, 5)}
            if priority:
                r["priority"] = rng.randint(0, 1)
        reqs.append(r)
    if rng.random() < 0.3:  # a second turn of the last request, extending its sequence
        last = reqs[-1]
        last["session"] = "s"
        reqs.append({**{k: v for k, v in last.items() if k != "arrive"}, "turn": 1, "think": rng.randint(0, 2),
                     "prompt": last["prompt"] + last["out"] + rng.randint(1, 4)})
    need = max(vllm_blocks.cdiv(r["prompt"] + r["out"], bs) for r in reqs)
    sc = {"budget": rng.randint(5, 10), "max_seqs": rng.randint(2, 4), "block_size": bs,
          "num_blocks": need + 1 + rng.randint(0, 2), "chunk": rng.choice([2, 3, 4]), "prefix_caching": True,
          "requests": reqs}
    if priority:
        sc["policy"] = "priority"
    else:
        sc["serve"] = rng.choice(["-admission", "decoding ? 1 : 0", "-decoding"])
    return sc


def _computed_programs(tmp_path) -> dict:
    """The two scenario programs with their KV pool's `cache computed` instead of `cache scheduled`."""
    out = {}
    for name in ("_PROGRAM", "_PRIORITY_PROGRAM"):
        text = Path(getattr(serq_vllm.scenarios, name)).read_text()
        assert text.count("cache scheduled;") == 1
        path = tmp_path / f"computed_{name.lower()}.sq"
        path.write_text(text.replace("cache scheduled;", "cache computed;"))
        out[name] = str(path)
    return out


def test_both_rules_on_both_tiers_agree_with_the_block_model(tmp_path, monkeypatch):
    rng = random.Random(4848)
    hits, others = [], []
    for _ in range(2000):
        sc = _draw(rng)
        eager, late = vllm_blocks.run(sc), vllm_blocks.run(sc, eager_hash=False)
        if vllm_cases.fields(eager) != vllm_cases.fields(late):
            hits.append((sc, eager, late))
        elif len(others) < 8:
            others.append((sc, eager, late))
        if len(hits) >= 8 and len(others) >= 8:
            break
    assert len(hits) >= 8, len(hits)  # the draws reach the rule
    assert {"policy" in sc for sc, _, _ in hits} == {True, False}  # under both policies' victim paths
    computed = _computed_programs(tmp_path)
    scheduled = {name: getattr(serq_vllm.scenarios, name) for name in computed}
    for k, (sc, eager, late) in enumerate(hits + others):
        option = ("scheduled", "computed")[k % 2]  # each option on half the hits
        for name in computed:
            monkeypatch.setattr(serq_vllm.scenarios, name, scheduled[name] if option == "scheduled" else computed[name])
        want = vllm_cases.fields(eager if option == "scheduled" else late)
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        got = run_scenario(sc)
        assert vllm_cases.fields(got) == want, (k, option, sc)
        if k < len(hits):  # the general engine gives the same
            monkeypatch.setenv("SERQ_SIM_TIER", "general")
            assert run_scenario(sc) == got, (k, option, sc)
