"""`serq vllm scenario` under vLLM's priority policy: a scenario's ``"policy": "priority"`` (vLLM's
``SchedulerConfig.policy``) and each request's ``priority`` (``Request.priority``, the lower the sooner), run
through programs/scenario_priority.sq. Before, the runner took neither key: the policy was run only by test
runners of their own (peer_programs2/vllm_priority.sq).

Held to vLLM 0.33.0's answers under the priority policy (peer_programs2/priority_vllm.json, taken with the
bridge's driver given the policy and the priorities), to the block model (vllm_blocks.py) on drawn scenarios
with sessions, prefix caching and a long-prefill threshold, and to a hand-traced case of ties, which vLLM's
waiting heap breaks by request id as a string (``Request.__lt__``: "10" before "2").
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import vllm_blocks
import vllm_cases
from serq_vllm.real import ScenarioError, check_scenario, config_out
from serq_vllm.scenarios import run_scenario

pytestmark = pytest.mark.timeout(120)

PRIORITY = json.loads((Path(__file__).parent / "peer_programs2" / "priority_vllm.json").read_text())["scenarios"]


def _both_tiers(sc: dict, monkeypatch) -> dict:
    """The answer on the tier serQ picks, checked equal to the general engine's."""
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    got = run_scenario(sc)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    assert run_scenario(sc) == got
    monkeypatch.delenv("SERQ_SIM_TIER")
    return got


def test_vllms_answers_under_the_priority_policy(monkeypatch):
    for case in PRIORITY:
        sc = {**case["scenario"], "policy": "priority"}
        got = _both_tiers(sc, monkeypatch)
        want = case["vllm"]
        for field in ("first", "done", "preempted"):
            assert got[field] == want[field], (case["name"], field)
        assert got["preemptions"] == want["preemptions"], case["name"]
        assert vllm_cases.fields(got) == vllm_cases.fields(vllm_blocks.run(sc)), case["name"]
        assert got["config"]["policy"] == "priority"


# Twelve requests of one priority sent at step 0, one slot (max_num_seqs 1): each runs alone, admitted the step
# after the previous one's last token, its 4-token prompt in one step (first token at that step's end) and its
# second token the step after. The request at place p of the waiting queue has its first token at 2p + 1 and
# is done at 2p + 2. vLLM's heap orders the ids "0" … "11" as strings: "0", "1", "10", "11", "2", … "9"; under
# FCFS the queue is the order of submission, 0 … 11.
TIES = {"budget": 64, "max_seqs": 1, "block_size": 4, "num_blocks": 10,
        "requests": [{"prompt": 4, "out": 2} for _ in range(12)]}


def test_ties_go_by_the_request_ids_as_strings(serq_in_process, tmp_path):
    order = ["0", "1", "10", "11", "2", "3", "4", "5", "6", "7", "8", "9"]
    sc = {**TIES, "policy": "priority", "requests": [{**r, "priority": 0} for r in TIES["requests"]]}
    (tmp_path / "ties.json").write_text(json.dumps(sc))
    r = serq_in_process("vllm", "scenario", str(tmp_path / "ties.json"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["first"] == {i: 2 * p + 1 for p, i in enumerate(order)}
    assert got["done"] == {i: 2 * p + 2 for p, i in enumerate(order)}
    assert list(got["first"]) == order  # (the answer lists requests by first token)
    assert vllm_cases.fields(got) == vllm_cases.fields(vllm_blocks.run(sc))
    # the same requests under FCFS (no policy, or "fcfs", a priority of 0 written or not): by index
    for fcfs in (TIES, {**TIES, "policy": "fcfs"}, {**sc, "policy": "fcfs"}):
        got = run_scenario(fcfs)
        assert got["first"] == {str(i): 2 * i + 1 for i in range(12)}
        assert "policy" not in got["config"]
    # two priorities: the lower first, the ids' string order within each; a later arrival of a better
    # priority waits for the slot (vLLM does not preempt a running request for a waiting one) and goes next
    reqs = [{**r, "priority": i % 2} for i, r in enumerate(sc["requests"])]
    reqs[3] = {"prompt": 4, "out": 2, "priority": -1, "arrive": 3}
    got = run_scenario({**sc, "requests": reqs})
    even = [i for i in order if int(i) % 2 == 0]
    odd = [i for i in order if int(i) % 2 == 1 and i != "3"]
    # steps 0-1 serve "0", 2-3 "10" (r3 arrives at 3, while "10" runs), 4-5 r3, then the rest of the evens
    want = even[:2] + ["3"] + even[2:] + odd
    assert got["first"] == {i: 2 * p + 1 for p, i in enumerate(want)}
    assert vllm_cases.fields(got) == vllm_cases.fields(vllm_blocks.run({**sc, "requests": reqs}))


def _draw(rng: random.Random) -> dict:
    """Sessions of one to three turns (each later turn extends the whole previous sequence), priorities from -1 to
    2, prefix caching on or off, a threshold or none, a KV cache that barely holds the largest sequence."""
    bs = rng.choice([2, 4, 8])
    reqs = []
    for s in range(rng.randint(2, 5)):
        prompt = rng.randint(3, 24)
        for t in range(rng.randint(1, 3)):
            r = {"prompt": prompt, "out": rng.randint(1, 6), "priority": rng.randint(-1, 2), "session": s, "turn": t}
            if t == 0:
                r["arrive"] = rng.randint(0, 6)
            else:
                r["think"] = rng.randint(0, 3)
            reqs.append(r)
            prompt += r["out"] + rng.randint(1, 8)
    need = max(vllm_blocks.cdiv(r["prompt"] + r["out"] - 1, bs) for r in reqs)
    budget = rng.randint(6, 24)
    return {"budget": budget, "max_seqs": rng.randint(1, min(4, budget)), "block_size": bs,
            "num_blocks": need + 1 + rng.randint(0, 3), "chunk": rng.choice([0, 0, 3, 5]),
            "prefix_caching": rng.random() < 0.7, "policy": "priority", "requests": reqs}


def test_drawn_scenarios_agree_with_the_block_model(monkeypatch):
    rng = random.Random(4848)
    preempted = hits = 0
    for n in range(40):
        sc = _draw(rng)
        check_scenario(sc)
        want = vllm_cases.fields(vllm_blocks.run(sc))
        got = _both_tiers(sc, monkeypatch) if n < 8 else run_scenario(sc)
        assert vllm_cases.fields(got) == want, (n, sc)
        preempted += want["preemptions"] > 0
        hits += any(v > 0 for v in want["cached"].values())
    assert preempted >= 8 and hits >= 8, (preempted, hits)  # the draws reach the victim order and the cache


@pytest.mark.parametrize("change, message, at", [
    ({"policy": "lifo"}, "'policy': must be \"fcfs\" or \"priority\" (vLLM's scheduling_policy), not 'lifo'",
     ("policy",)),
    ({"policy": True}, "'policy': must be \"fcfs\" or \"priority\" (vLLM's scheduling_policy), not true", ("policy",)),
    ({"policy": ["priority"]}, "not a list", ("policy",)),
    ({"policy": "priority", "serve": "-admission"}, "'serve' with 'policy': \"priority\" is not modelled",
     ("serve",)),
    ({"requests": [{"prompt": 4, "out": 1, "priority": 1.5}]},
     "requests[0].priority: must be an integer (vLLM's request priority, the lower the sooner), not 1.5",
     ("requests", 0, "priority")),
    ({"requests": [{"prompt": 4, "out": 1, "priority": "1"}]}, "not '1'", ("requests", 0, "priority")),
    ({"requests": [{"prompt": 4, "out": 1, "priority": False}]}, "not false", ("requests", 0, "priority")),
    ({"requests": [{"prompt": 4, "out": 1, "priority": 2**53}]}, "9007199254740992 is not below 2**53",
     ("requests", 0, "priority")),
    ({"requests": [{"prompt": 4, "out": 1}, {"prompt": 4, "out": 1, "priority": 2}]},
     "requests[1].priority: 2 under the 'fcfs' policy (the scenario's default): vLLM refuses a request whose "
     "priority is not 0 unless priority scheduling is enabled (\"Got priority 2 but Priority scheduling is not "
     "enabled.\"); give the scenario \"policy\": \"priority\"", ("requests", 1, "priority")),
    ({"policy": "fcfs", "requests": [{"prompt": 4, "out": 1, "priority": -3}]},
     "-3 under the 'fcfs' policy (the scenario's policy)", ("requests", 0, "priority")),
])
def test_a_policy_or_a_priority_neither_side_models_is_refused_at_its_path(change, message, at):
    sc = {"budget": 16, "max_seqs": 2, "block_size": 4, "num_blocks": 10,
          "requests": [{"prompt": 4, "out": 1}], **change}
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    assert message in str(e.value) and e.value.json_path == at, str(e.value)


def test_the_command_says_it_at_the_line_and_column(serq_in_process, tmp_path):
    text = '{"budget": 16, "max_seqs": 2, "block_size": 4, "num_blocks": 10,\n "requests": [{"prompt": 4, ' \
           '"out": 1, "priority": 2}]}\n'
    (tmp_path / "p.json").write_text(text)
    for command in ("scenario", "real"):  # (both sides refuse it before anything runs; vLLM need not be here)
        r = serq_in_process("vllm", command, str(tmp_path / "p.json"))
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.splitlines()
        assert lines[0].startswith(f"{tmp_path / 'p.json'}:2:51: error: requests[0].priority: 2 under the 'fcfs' "
                                   "policy"), r.stderr
        # the source line, the caret under the value
        assert lines[1][lines[2].index("^"):].startswith("2}]}") and '"requests"' in lines[1], r.stderr


def test_the_config_says_the_policy_only_when_it_is_priority():
    base = {"budget": 16, "max_seqs": 2, "block_size": 4, "num_blocks": 10, "requests": [{"prompt": 4, "out": 1}]}
    assert "policy" not in config_out(base) and "policy" not in config_out({**base, "policy": "fcfs"})
    assert config_out({**base, "policy": "priority"})["policy"] == "priority"


def test_the_bridge_gives_vllm_the_policy_and_each_priority(monkeypatch):
    # vLLM is not a dependency: a stand-in with the interface serq_vllm.real drives, which records the
    # scheduler's configuration and the requests, and schedules nothing (the run then stops, stuck)
    import types

    from serq_vllm import real

    seen: dict = {"requests": []}

    class Config:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class Scheduler:
        def __init__(self, **kw):
            seen["scheduler"] = kw["vllm_config"].scheduler_config.__dict__
            self.requests = {}

        def add_request(self, req):
            seen["requests"].append(req.__dict__)
            self.requests[req.request_id] = req

        def schedule(self):
            return types.SimpleNamespace(num_scheduled_tokens={}, preempted_req_ids=set())

        def update_from_output(self, out, runner_output):
            pass

    def fake() -> dict:
        cfg = lambda **kw: Config(**kw)  # noqa: E731
        return {"ModelConfig": cfg, "CacheConfig": cfg, "SchedulerConfig": cfg, "VllmConfig": cfg,
                "DeviceConfig": cfg, "KVCacheConfig": cfg, "KVCacheGroupSpec": lambda *a: a,
                "FullAttentionSpec": cfg, "torch": types.SimpleNamespace(float32="float32"),
                "resolve_kv_cache_block_sizes": lambda kv, vc: (4, 4), "Scheduler": Scheduler,
                "StructuredOutputManager": lambda vc: None, "SamplingParams": cfg, "Request": cfg,
                "ModelRunnerOutput": cfg}

    monkeypatch.setattr(real, "_import_vllm", fake)
    base = {"budget": 16, "max_seqs": 2, "block_size": 4, "num_blocks": 10}
    sc = {**base, "policy": "priority", "requests": [{"prompt": 4, "out": 1, "priority": 3}, {"prompt": 4, "out": 1}]}
    with pytest.raises(real.ScenarioStuck):
        real.run_real(sc)
    assert seen["scheduler"]["policy"] == "priority"
    assert [(r["request_id"], r.get("priority")) for r in seen["requests"]] == [("0", 3), ("1", 0)]
    # under FCFS neither is passed: the configuration the bridge always ran
    seen["requests"].clear()
    with pytest.raises(real.ScenarioStuck):
        real.run_real({**base, "requests": [{"prompt": 4, "out": 1, "priority": 0}]})
    assert "policy" not in seen["scheduler"] and "priority" not in seen["requests"][0]
