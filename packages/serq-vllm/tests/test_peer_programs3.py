"""vLLM programs of a third round of users (tests/peer_programs3/ and the shipped examples changed as a user
changes them): an llm-d style router over vLLM replicas scoring them at random, by the KV they use, or by
the session's cached prefix, against the hit rates a two-turn chat must have under each (a binomial 1/2 at
random, every follow-up under prefix affinity, the history's reusable blocks exactly); and
examples/multi-turn/vllm.sq with its KV cache and its token budget changed, whose effects must go the way
a capacity planner expects (fewer preemptions and a shorter TTFT with more blocks; a shorter TTFT with a
larger budget), under one seed so that every variant serves the same requests."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

HERE = Path(__file__).resolve().parent / "peer_programs3"
ROOT = Path(__file__).resolve().parents[3]
VLLM_SQ = ROOT / "examples" / "multi-turn" / "vllm.sq"


def both_tiers(path: Path, monkeypatch, sets=None):
    """The program on the tier serQ picks and on the general engine: the same report, bytes for bytes."""
    prog = serq_frontend.compile(path=str(path), sets=sets or {})
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        out.append(serq_sim.run(prog))
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


def expected_reusable(mean_n: float, mean_o: float, bs: int, top: int = 20000) -> float:
    """E[floor((K - 1) / bs) * bs] for K = (1 + floor(X)) + (1 + floor(Y)), X ~ exp(mean_n), Y ~
    exp(mean_o): floor of an exponential is geometric on 0, 1, … (P(k) = (1 - q) q^k, q = e^(-1/mean))."""
    k = np.arange(top)
    gn = (1 - math.exp(-1 / mean_n)) * np.exp(-k / mean_n)
    go = (1 - math.exp(-1 / mean_o)) * np.exp(-k / mean_o)
    dist = np.convolve(gn, go)[:top]  # P(floor X + floor Y = m); K - 1 = m + 1
    m = np.arange(top)
    assert abs(dist.sum() - 1) < 1e-9
    return float((dist * (np.floor((m + 1) / bs) * bs)).sum())


@pytest.mark.timeout(120)
def test_an_llmd_router_scores_replicas_and_finds_the_hit_rates_of_its_policy(monkeypatch):
    # llmd_router.sq: two-turn chats over 2 replicas, the KV ample. A follow-up's whole history is
    # reusable(K) of the first turn's K = n + o tokens, on the replica that served that turn only.
    e_reuse = expected_reusable(300, 100, 16)
    assert 380 < e_reuse < 400
    # random: a follow-up finds its history with probability 1/2 (a binomial CI), all of it or nothing;
    # its mean cached tokens are half the history's reusable blocks
    rnd = both_tiers(HERE / "llmd_router.sq", monkeypatch)
    hit, miss = rnd.stats("followup_hit"), rnd.stats("followup_miss")
    n = hit.count
    assert n > 2500 and abs(hit.mean - 0.5) < 2 * math.sqrt(0.25 / n) * 1.96
    # every follow-up hits all or nothing: the ones that are both have a history of one block or less
    assert hit.mean + miss.mean - 1 < 0.005
    cached = rnd.stats("followup_cached")
    assert abs(cached.mean - e_reuse / 2) < cached.ci + 0.03 * e_reuse and cached.ci < 0.06 * e_reuse
    # prefix affinity: every follow-up lands where its history is and finds all of it
    aff = both_tiers(HERE / "llmd_router.sq", monkeypatch, sets={"policy": 2})
    assert aff.stats("followup_hit").mean == 1.0
    c = aff.stats("followup_cached")
    assert abs(c.mean - e_reuse) <= c.ci and c.ci < 0.05 * e_reuse
    # the replicas serve the same requests under every policy (one seed), and the hits cut the prefill
    # work: affinity computes fewer tokens and its mean TTFT is below the random router's
    lkv = both_tiers(HERE / "llmd_router.sq", monkeypatch, sets={"policy": 1})
    assert 0.3 < lkv.stats("followup_hit").mean < 0.7
    for r in (rnd, aff, lkv):
        assert r.result.requests.completed == rnd.result.requests.completed
        assert sum(r.pool("kv", j).preemptions for j in range(2)) == 0
    tokens = {k: sum(r.stage("engine", j).tokens * r.stage("engine", j).iterations for j in range(2))
              for k, r in (("rnd", rnd), ("aff", aff))}
    assert tokens["aff"] < tokens["rnd"]
    assert aff.result.requests.ttft.mean < rnd.result.requests.ttft.mean


@pytest.fixture
def serq_json(serq_in_process, monkeypatch):
    """``serq_json(*args)``: the JSON report of ``serq run ARGS`` on the tier serQ picks (in this process:
    what is checked is the report's figures and the samples it dumps)."""
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)

    def call(*args: str) -> dict:
        p = serq_in_process("run", *args, "--no-progress", "--json")
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    return call


@pytest.mark.timeout(180)
def test_more_kv_blocks_preempt_less_and_answer_sooner(serq_json):
    # examples/multi-turn/vllm.sq as a capacity planner runs it, --set blocks from a cache that thrashes to
    # the A100's: preemptions fall to 0, the mean TTFT falls, and with the full cache every follow-up finds
    # its whole history (full_hit 1: nothing is evicted that a session comes back for).
    runs = {b: serq_json(str(VLLM_SQ), "--horizon", "900", "--warmup", "90", "--set", f"blocks={b}")
            for b in (800, 1600, 3200, 8010)}
    pre = [runs[b]["pools"][1]["preemptions"] for b in sorted(runs)]
    ttft = [runs[b]["requests"]["ttft"]["mean"] for b in sorted(runs)]
    assert pre == sorted(pre, reverse=True) and pre[0] > 20 and pre[-1] == 0
    assert ttft == sorted(ttft, reverse=True) and ttft[0] > 10 * ttft[-1]
    assert runs[8010]["observes"]["full_hit"]["mean"] == 1.0
    # the two caches that keep up serve the same requests (one seed: the same sessions, prompts, outputs)
    assert runs[3200]["requests"]["completed"] == runs[8010]["requests"]["completed"]
    assert not runs[8010]["notes"]


@pytest.mark.timeout(180)
def test_a_larger_token_budget_shortens_the_ttft(serq_json):
    # The same example at twice its session rate with max_num_batched_tokens 256 .. 2048: a prompt takes
    # fewer iterations to prefill, so the mean TTFT falls; the decode work is the same requests' (the same
    # iterations within a few, every request done).
    runs = {b: serq_json(str(VLLM_SQ), "--horizon", "900", "--warmup", "90", "--set", "Lambda=0.6",
                         "--set", f"B={b}") for b in (256, 512, 1024, 2048)}
    ttft = [runs[b]["requests"]["ttft"]["mean"] for b in sorted(runs)]
    assert ttft == sorted(ttft, reverse=True) and ttft[0] > 1.3 * ttft[-1]
    done = {runs[b]["requests"]["completed"] for b in runs}
    its = [runs[b]["stages"][0]["iterations"] for b in runs]
    assert len(done) == 1 and max(its) - min(its) < 0.001 * max(its)


@pytest.mark.timeout(120)
def test_llmd_with_disaggregation_off_is_one_vllm_engine(tmp_path, serq_json):
    # examples/pd-disaggregation/llmd_nixl_pull.sq with one decode instance, a router that takes no time and
    # a threshold nothing exceeds (pd_threshold inf: every request is prefilled and decoded on D, the
    # prefill instance idle) is vllm.sq's engine under vllm.sq's workload at the same settings (E_n 1 500,
    # Lambda 0.1: no preemption). Every request's TTFT and response are the same numbers, request for request:
    # the same draws (the router draws nothing), the same admissions, the same iterations. Only the moment
    # the TTFT is observed differs (the route observes it when the request is done), so the TTFTs kept
    # around the warm-up and the horizon may differ by a request or two.
    root = ROOT / "examples"
    common = ["--set", "Lambda=0.1", "--horizon", "900", "--warmup", "90"]
    llmd = serq_json(str(root / "pd-disaggregation" / "llmd_nixl_pull.sq"), *common, "--set", "pd_threshold=inf",
                     "--set", "ND=1", "--set", "NP=1", "--set", "x_route=0", "--dump", str(tmp_path / "l"))
    one = serq_json(str(root / "multi-turn" / "vllm.sq"), *common, "--set", "E_n=1500", "--dump", str(tmp_path / "v"))
    assert one["pools"][1]["preemptions"] == 0 and one["observes"]["response"]["count"] > 300
    d = next(s for s in llmd["stages"] if s["name"] == "D")
    e = next(s for s in one["stages"] if s["name"] == "engine")
    assert (d["iterations"], d["tokens"]) == (e["iterations"], e["tokens"])
    assert next(s for s in llmd["stages"] if s["name"] == "P")["iterations"] == 0

    def samples(folder, name):
        text = (tmp_path / folder / f"{name}.csv").read_text().splitlines()[1:]
        return {(int(s), int(t)): float(v) for _, s, t, v in (line.split(",") for line in text)}

    for name in ("response", "ttft"):
        a, b = samples("l", name), samples("v", name)
        common_keys = a.keys() & b.keys()
        assert len(common_keys) > 0.99 * max(len(a), len(b))
        assert all(a[k] == b[k] for k in common_keys), name
    assert samples("l", "response") == samples("v", "response")
