"""Programs of a second round of users (peer_programs2/*.sq), of kinds the first round (test_peer_programs.py)
lacks: bursty arrivals (GI/M/1), a router over heterogeneous replicas (weighted random, join the shortest
queue, power of two choices), P/D disaggregation with several prefillers and a KV link that is the
bottleneck (a Jackson network), a token-bucket admission limiter (M/D/1/K), a closed loop of agents on a
step engine with prefix caching (the interactive response time law), speculative decoding as a cost model,
a cap on concurrent prefills (vLLM's max_num_partial_prefills), and a prefix-cache-heavy chat with a CPU
offload tier. Each runs on the tier serQ picks and on the general engine, which must agree byte for byte,
and is checked against a closed form, a hand trace or an identity. Statistical checks fix their seeds and
assert a 95 % CI that covers the theory and is narrow."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conform import both_tiers, covers, gim1_sigma

HERE = Path(__file__).resolve().parent / "peer_programs2"


def both(name: str, monkeypatch, *, sets=None, **kw):
    """``peer_programs2/NAME`` on both tiers (conform.both_tiers). Returns the report."""
    return both_tiers(HERE / name, monkeypatch, sets=sets, **kw)


def samples(report, name: str) -> dict[tuple[int, int], float]:
    o = report.observe(name)
    return {(int(s), int(t)): float(v) for s, t, v in zip(o.sessions, o.turns, o.values)}


# --- closed forms ------------------------------------------------------------------------------------------------

def h2m1_sigma(mean_gap: float, cv2: float, mu: float) -> float:
    """GI/M/1 with serQ's ~h2(mean, cv2) gaps (balanced means): sigma for their transform."""
    p = 0.5 * (1 + math.sqrt((cv2 - 1) / (cv2 + 1)))
    l1, l2 = 2 * p / mean_gap, 2 * (1 - p) / mean_gap
    return gim1_sigma(lambda s: p * l1 / (l1 + s) + (1 - p) * l2 / (l2 + s), mu)


@pytest.mark.timeout(60)
def test_bursty_arrivals_are_gim1(monkeypatch):
    # bursty_gim1.sq: H2 gaps of mean 2 and cv2 4 into an exp(1) server (rho 0.5). sigma = 1 - 1/sqrt(10)
    # = 0.683772: an arrival finds the server busy with probability sigma, and its mean response is
    # 1 / (1 - sigma) = sqrt(10) = 3.162278, against 2 for Poisson arrivals at the same rate (M/M/1).
    sigma = h2m1_sigma(2, 4, 1)
    assert math.isclose(sigma, 1 - 1 / math.sqrt(10), rel_tol=1e-9)
    r = both("bursty_gim1.sq", monkeypatch)
    covers(r.stats("response"), 1 / (1 - sigma), 0.04)
    covers(r.stats("waited"), sigma, 0.015)
    assert abs(r.stage("gpu").utilisation - 0.5) < 0.01


def test_a_router_over_heterogeneous_replicas(monkeypatch):
    # hetero_router.sq, lambda 3 over speeds 2, 1, 1. Weighted random (1/2, 1/4, 1/4) splits the Poisson
    # stream: three M/M/1 at rho 0.75, response 1/(2 - 1.5) = 2 and 1/(1 - 0.75) = 4: mean 0.5 * 2 + 0.5 * 4
    # = 3, each replica busy 0.75. Join the shortest (expected) queue and power of two choices, on the same
    # arrivals and work: JSQ < power of two < random, and above the pooled bound (one server of speed 4:
    # 1 / (4 - 3) = 1).
    rnd = both("hetero_router.sq", monkeypatch, horizon=30000)
    covers(rnd.stats("response"), 3.0, 0.06)
    for j in range(3):
        assert abs(rnd.stage("r", j).utilisation - 0.75) < 0.025
    jsq = both("hetero_router.sq", monkeypatch, sets={"policy": 1}, horizon=30000).stats("response")
    po2 = both("hetero_router.sq", monkeypatch, sets={"policy": 2}, horizon=30000).stats("response")
    assert 1.0 < jsq.mean + jsq.ci and jsq.mean + jsq.ci < po2.mean - po2.ci
    assert po2.mean + po2.ci < rnd.stats("response").mean - rnd.stats("response").ci


def test_pd_with_a_bottleneck_link_is_a_jackson_network(monkeypatch):
    # pd_jackson.sq: lambda 4 sprayed over 3 prefillers (mu 2: each M/M/1 at 4/3) into one KV link (mu 5,
    # M/M/1 at 4, rho 0.8: the bottleneck). To the decoder: 3 / (6 - 4) + 1 / (5 - 4) = 2.5, at the link 1.
    # Little: kvP is held (leased) until the link has read it, so its holders are 4 x 2.5 = 10; kvD from the
    # read's start to the decode's end: 4 x (1 + 0.5) = 6; its units lambda E[n] x that time.
    r = both("pd_jackson.sq", monkeypatch, horizon=15000)
    covers(r.stats("to_decoder"), 2.5, 0.05)
    covers(r.stats("at_link"), 1.0, 0.08)
    link = r.stage("link")
    assert abs(link.utilisation - 0.8) < 0.015
    kvP, kvD = r.pool("kvP"), r.pool("kvD")
    assert abs(kvP.holders - 10) < 0.4 and abs(kvD.holders - 6) < 0.25
    en = 1 + 1 / (math.exp(1 / 800) - 1)  # E[1 + floor(exp(800))]
    assert abs(kvD.used - 4 * en * 1.5) < 0.04 * 4 * en * 1.5
    assert kvP.preemptions == kvD.preemptions == 0


def mdk_blocking(lam: float, d: float, k: int) -> float:
    """M/D/1/K blocking: the chain at departures over 0..K-1 (a_j = P(j Poisson arrivals in d)), then
    P_K = 1 - 1 / (pi_0 + rho)."""
    rho = lam * d
    a = [math.exp(-rho) * rho**j / math.factorial(j) for j in range(k + 1)]
    p = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            m = j if i == 0 else j - i + 1
            if m >= 0:
                p[i, j] = a[m] if j < k - 1 else 1 - sum(a[:m])
    w, v = np.linalg.eig(p.T)
    pi = np.real(v[:, np.argmin(abs(w - 1))])
    pi /= pi.sum()
    return 1 - 1 / (pi[0] + rho)


@pytest.mark.timeout(60)
def test_a_token_bucket_refuses_with_md1k_blocking(monkeypatch):
    # token_bucket.sq: lambda 1.5, r 1, b 3: the missing tokens are an M/D/1/3 line, blocking 0.365012
    # (b = 1 would be Erlang's a / (1 + a) = 0.6, checked here as the formula's own sanity). The refill is
    # busy lambda (1 - P) / r of the time (utilisation law), and Little holds at it.
    assert math.isclose(mdk_blocking(1.5, 1, 1), 0.6, rel_tol=1e-12)
    p = mdk_blocking(1.5, 1, 3)
    assert abs(p - 0.365012) < 1e-6
    r = both("token_bucket.sq", monkeypatch)
    covers(r.stats("refused"), p, 0.02)
    refill = r.stage("refill")
    assert abs(refill.utilisation - 1.5 * (1 - p)) < 0.01
    assert math.isclose(refill.present, refill.throughput * (refill.wait + refill.service), rel_tol=0.01)


# --- identities and hand traces ----------------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_closed_agents_keep_the_response_time_law_and_find_their_history(monkeypatch):
    # closed_agents.sq: 12 agents. Every follow-up finds exactly floor((K - 1) / 16) * 16 cached (hit_error
    # 0 on every turn), the engine computes prompt - cached + o - 1 tokens a turn (201..216 new + 39 for a
    # follow-up, 239 for a first turn), and the interactive response time law N = X (R + Z) holds with the
    # measured means (12 seats always taken: mean live 12).
    r = both("closed_agents.sq", monkeypatch)
    assert set(r.observe("hit_error").values.tolist()) == {0.0}
    ct = r.observe("computed_tokens").values
    assert set(ct.tolist()) <= {239.0} | {float(x + 39) for x in range(201, 217)} and (ct == 239).sum() > 100
    res = r.result
    x = r.stage("think").throughput  # turns a second
    big_r, z = r.stats("response").mean, r.stats("thought").mean
    assert abs(12 - x * (big_r + z)) < 0.02 * 12
    assert math.isclose(res.mean_live, 12, rel_tol=1e-12)
    assert r.pool("kv").preemptions == 0 and r.pool("reqs").queue < 0.05


@pytest.mark.timeout(30)
def test_speculative_decoding_cost_model_by_hand(monkeypatch):
    # spec_decode.sq: 4 requests at 0 (prompts 100..400, 60 tokens out), k 3 drafts, acceptance 0.8:
    # g = (1 - 0.8^4) / 0.2 = 2.952 tokens an iteration. One prefill iteration of 1 000 tokens: 0.02 +
    # 0.05 = 0.07 (TTFT); then ceil(59 / 2.952) = 20 iterations of 0.02 + 0.0001 * 4 * 4 = 0.0216: E2E
    # 0.502, TPOT 20 * 0.0216 / 59. The report's ITL is per iteration, as vLLM's benchmark takes it per
    # streamed chunk: 20 gaps a request, not output - 1. Plain decoding (spec 0): 59 iterations of 0.0204.
    r = both("spec_decode.sq", monkeypatch)
    m = r.result.requests
    assert m.completed == 4 and math.isclose(m.ttft.mean, 0.07, rel_tol=1e-9)
    assert math.isclose(m.e2el.mean, 0.07 + 20 * 0.0216, rel_tol=1e-9)
    assert math.isclose(m.tpot.mean, 20 * 0.0216 / 59, rel_tol=1e-9)
    assert m.itl.count == 80 and math.isclose(m.itl.mean, 0.0216, rel_tol=1e-9)
    plain = both("spec_decode.sq", monkeypatch, sets={"spec": 0}).result.requests
    assert math.isclose(plain.e2el.mean, 0.07 + 59 * 0.0204, rel_tol=1e-9)
    assert plain.itl.count == 4 * 59 and math.isclose(plain.tpot.mean, 0.0204, rel_tol=1e-9)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("p, first, done", [(1, [2, 4, 6], [4, 6, 8]), (math.inf, [2, 4, 5], [4, 6, 7])])
def test_a_cap_on_concurrent_prefills_by_hand(monkeypatch, p, first, done):
    # partial_prefills.sq: budget 100, cost 1, three prompts of 150 (3 tokens out) at 0.
    # P = 1: [0, 1] r0 100; [1, 2] r0 50 (r1 and r2 admitted with the 50 left, both wait for the prefill
    # slot); r0's first token at 2 frees it: [2, 3] r0 decodes, r1 99; [3, 4] r0 decodes (done 4), r1 51
    # (first 4); r2 [4, 5] 99, [5, 6] 51 (first 6), decodes at 6 and 7 (done 8); r1 done 6.
    # P = inf: [1, 2] r0 50, r1 50; [2, 3] r0 1, r1 99; [3, 4] r0 1 (done 4), r1 1 (first 4), r2 admitted
    # with 98; [4, 5] r2 52 (first 5); done r1 6, r2 7.
    r = both("partial_prefills.sq", monkeypatch, sets={"P": p})
    assert [v for _, v in sorted(samples(r, "first").items())] == first
    assert [v for _, v in sorted(samples(r, "done").items())] == done


@pytest.mark.timeout(60)
def test_an_offload_tier_gives_back_the_history_the_gpu_evicted(monkeypatch):
    # offload_chat.sq: every evicted GPU block is written to the tier (spills x 16 = evicted units); a
    # follow-up reads its GPU head and the tier's tail: lost = reusable(K) - from GPU - from CPU is 0 on all
    # but a few turns (below), most histories came partly from the CPU tier, and the engine computed exactly
    # the tokens neither tier gave back.
    r = both("offload_chat.sq", monkeypatch)
    kv = r.pool("kv")
    assert kv.spills > 1000 and kv.spills * 16 == kv.evicted_units and kv.preemptions == 0
    lost = r.observe("lost").values
    cpu = r.observe("from_cpu").values
    assert (cpu > 0).sum() > 100
    # A write evicted at the instant of a turn's admission is still on the link when the turn reads the
    # tier (lost 16), and lands after the turn's read as a block of the tier's entry the GPU holds again,
    # which the next turn counts once more (lost -16): the tier's entry is a length, not positions.
    assert (lost != 0).sum() <= 6 and set(np.abs(lost[lost != 0]) % 16) <= {0.0}
    e = r.stage("E")
    assert abs(e.tokens * e.iterations - r.observe("computed_tokens").values.sum()) < 0.01 * e.tokens * e.iterations
