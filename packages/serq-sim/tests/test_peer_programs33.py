"""Round 33 of programs as serQ's users write them (peer_programs33/), each run to its horizon on both
simulator tiers and checked against an independent truth: an M/D/1 and an M/E4/1 against the
Pollaczek-Khinchine mean (and ``find``'s largest rate against the formula's), a prefill -> decode tandem with
a finite hand-off buffer and blocking against its Markov chain solved numerically, vLLM's
max_num_batched_tokens by hand on a request alone and its TTFT/ITL trade-off under load (token conservation,
the ITL's tail is one full-budget iteration), enable_prefix_caching off and on by hand on one conversation and
paired over common random numbers, a GPU that fails and restarts against its Markov chain, two classes on a
processor-sharing GPU against the M/G/1-PS mean x / (1 - rho), vLLM at max_num_seqs = 1 as an M/G/1, a
random router against session affinity (the follow-up turn's full hit has probability 1 / N), and a KV cache
too small for its batch (a preemption and its recomputation by hand, iteration by iteration; under load the
records' preemptions add up to the pool's), a fast and a slow GPU under a static split (two M/M/1 queues;
the best split's closed form) against a queue-aware router, a GPU whose throughput grows with the batch
(a ps stage of capacity phi(present) against its birth-death chain), an agent's fan-out to three tool
servers joined as one job over them (one M/G/1-PS server, under either share), and prefill/decode
disaggregation on two engines with a prompt-sized KV read (by hand; tokens conserved per engine)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
import serq_sweep
from peers import covers, run_both
from serq_report.json import encode_json

HERE = Path(__file__).parent / "peer_programs33"


def run(name: str, monkeypatch, *, sets=None, defs=None, **kw):
    """(JSON report, records as numpy columns or None) of peer_programs33/NAME on the default tier and the
    general engine, which must give the same bytes and the same records."""
    prog = serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})
    return run_both(prog, monkeypatch, **kw)


def stage(doc: dict, name: str) -> dict:
    (s,) = [s for s in doc["stages"] if s["name"] == name and s["index"] is None]
    return s


def pool(doc: dict, name: str) -> dict:
    (p,) = [p for p in doc["pools"] if p["name"] == name and p["index"] is None]
    return p


def stationary(q: np.ndarray) -> np.ndarray:
    """The stationary law of the generator ``q`` (rows sum to 0)."""
    a = q.T.copy()
    a[-1, :] = 1
    b = np.zeros(len(q))
    b[-1] = 1
    return np.linalg.solve(a, b)


# md1.sq


@pytest.mark.parametrize(("service", "es2"), [("~det(s)", 1.0), ("~erlang(4, s)", 1.25)])
def test_md1_is_pollaczek_khinchine(monkeypatch, service, es2):
    doc, _ = run("md1.sq", monkeypatch, defs={"service": service}, horizon=40000)
    lam = 0.8
    wait = lam * es2 / (2 * (1 - lam))  # 2 s deterministic, 2.5 s Erlang-4
    covers(doc["observes"]["wait"], wait, 0.12)
    covers(doc["observes"]["response"], wait + 1, 0.08)
    gpu = stage(doc, "gpu")
    assert gpu["utilisation"] == pytest.approx(lam, rel=0.02)
    assert gpu["present"] == pytest.approx(gpu["throughput"] * doc["observes"]["response"]["mean"], rel=0.01)
    if service == "~det(s)":
        assert doc["observes"]["response"]["p50"] - doc["observes"]["wait"]["p50"] == pytest.approx(1)


def test_md1_find_largest_rate_is_the_formula():
    # the mean wait lam / (2 (1 - lam)) is 1 s at lam = 2/3
    _cols, rows = serq_sweep.find(str(HERE / "md1.sq"), "wait.mean <= 1", ("lam", "0.4:0.9"), seeds="1..2",
                                  horizon=20000, warmup=200, tol=0.01, workers=0, progress=False)
    (row,) = rows
    assert row["outcome"] == "found"
    assert row["lam"] <= 2 / 3 + 0.03 and row["fails"] >= 2 / 3 - 0.03, row
    assert row["fails"] - row["lam"] <= 0.01 + 1e-9


# tandem_block.sq


def tandem_chain(lam, s1, s2, b, n=120):
    """L1, L2, the prefill GPU's held share and the share of prefills that end blocked, of the chain
    (jobs at the prefill side, jobs on the decode side, blocked)."""
    cap = b + 1
    states = [(n1, n2, k) for n1 in range(n + 1) for n2 in range(cap + 1) for k in (0, 1)
              if not (k and (n2 < cap or n1 == 0))]
    ix = {st: i for i, st in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    for (n1, n2, k), i in ix.items():
        def add(to, rate, i=i):
            q[i, ix[to]] += rate
            q[i, i] -= rate
        if n1 < n:
            add((n1 + 1, n2, k), lam)
        if n1 > 0 and not k:
            add((n1 - 1, n2 + 1, 0) if n2 < cap else (n1, n2, 1), 1 / s1)
        if n2 > 0:
            add((n1 - 1, n2, 0) if k else (n1, n2 - 1, 0), 1 / s2)
    p = stationary(q)
    l1 = sum(p[i] * st[0] for st, i in ix.items())
    l2 = sum(p[i] * st[1] for st, i in ix.items())
    held = sum(p[i] for st, i in ix.items() if st[0] > 0)
    blocked = sum(p[i] for st, i in ix.items() if st[0] > 0 and not st[2] and st[1] == cap) / s1 / lam
    return l1, l2, held, blocked


def test_tandem_block_is_its_markov_chain(monkeypatch):
    doc, _ = run("tandem_block.sq", monkeypatch, horizon=40000)
    lam = 0.5
    l1, l2, held, blocked = tandem_chain(lam, 1, 1.2, 1)  # 3.99 s, 1.87 s, 0.650, 0.252
    covers(doc["observes"]["at_prefill"], l1 / lam, 0.1)
    covers(doc["observes"]["at_decode"], l2 / lam, 0.03)
    covers(doc["observes"]["response"], (l1 + l2) / lam, 0.07)
    covers(doc["observes"]["blocked"], blocked, 0.05)
    # the prefill GPU is held (serving or blocked) more than it serves: lam x s1 = 0.5 of the time it serves
    assert pool(doc, "pre_gpu")["used"] == pytest.approx(held, rel=0.02)
    assert stage(doc, "prefill")["utilisation"] == pytest.approx(lam * 1, rel=0.02)
    assert stage(doc, "decode")["utilisation"] == pytest.approx(lam * 1.2, rel=0.02)  # flow balance
    assert pool(doc, "dec_room")["used"] <= 2
    # a request is blocked exactly as long as it waits in the decode side's queue
    assert pool(doc, "dec_room")["wait"] * lam == pytest.approx(pool(doc, "dec_room")["queue"], rel=0.03)


def test_tandem_block_without_buffer_blocks_more(monkeypatch):
    doc, _ = run("tandem_block.sq", monkeypatch, sets={"B": 0}, horizon=30000)
    l1, l2, held, blocked = tandem_chain(0.5, 1, 1.2, 0)  # 8.52 s: the prefill GPU is held 0.73 of the time
    covers(doc["observes"]["response"], (l1 + l2) / 0.5, 0.15)
    covers(doc["observes"]["blocked"], blocked, 0.05)
    assert pool(doc, "pre_gpu")["used"] == pytest.approx(held, rel=0.03)


def test_tandem_block_with_an_unbounded_buffer_is_two_mm1(monkeypatch):
    # B = inf: nothing blocks, and the tandem is Jackson's: 1 / (1 - 0.5) + 1.2 / (1 - 0.6) = 5 s (Burke)
    doc, _ = run("tandem_block.sq", monkeypatch, sets={"B": math.inf}, horizon=30000)
    assert doc["observes"]["blocked"]["mean"] == 0
    covers(doc["observes"]["at_prefill"], 2, 0.06)
    covers(doc["observes"]["at_decode"], 3, 0.1)
    covers(doc["observes"]["response"], 5, 0.06)


# vllm_budget.sq

ALONE = {"gap": "~det(100)", "prompt_len": "2000", "output_len": "100"}


@pytest.mark.parametrize(("b", "ttft"), [(512, 4 * 0.01 + 2000 * 5e-5), (4096, 0.01 + 2000 * 5e-5),
                                         (1000, 2 * 0.01 + 2000 * 5e-5)])
def test_vllm_budget_alone_by_hand(monkeypatch, b, ttft):
    doc, recs = run("vllm_budget.sq", monkeypatch, sets={"B": b}, defs=ALONE, horizon=1000, warmup=0)
    req = doc["requests"]
    assert req["completed"] == 9
    for k in ("mean", "median", "p99"):
        assert req["ttft"][k] == pytest.approx(ttft, abs=1e-9)
        assert req["tpot"][k] == pytest.approx(0.01 + 5e-5, abs=1e-9)
        assert req["itl"][k] == pytest.approx(0.01 + 5e-5, abs=1e-9)
    assert req["e2el"]["mean"] == pytest.approx(ttft + 99 * (0.01 + 5e-5), abs=1e-9)
    assert np.allclose(recs["first_token"] - recs["sent"], ttft, atol=1e-9)
    assert np.array_equal(recs["sent"], 100.0 * np.arange(1, 10))


def test_vllm_budget_trade_off_under_load(monkeypatch):
    figures = {}
    for b in (256, 1024, 4096):
        doc, recs = run("vllm_budget.sq", monkeypatch, sets={"B": b}, horizon=120, warmup=0, arrivals=300)
        req = doc["requests"]
        assert req["completed"] == 300
        # every prompt token and every output token but the last is computed once
        eng = stage(doc, "engine")
        total = req["total_input_tokens"] + req["total_output_tokens"] - req["completed"]
        assert eng["tokens"] * eng["iterations"] == pytest.approx(total, rel=1e-9)
        assert int(recs["prompt"].sum()) == req["total_input_tokens"]
        figures[b] = (req["ttft"]["mean"], req["itl"]["p99"])
    # the ITL's tail is an iteration that fills its budget with a prefill chunk: c_it + a_tok x B
    assert figures[256][1] == pytest.approx(0.01 + 5e-5 * 256, rel=0.02)
    assert figures[1024][1] == pytest.approx(0.01 + 5e-5 * 1024, rel=0.02)
    # the larger the budget, the sooner the first token and the longer the tail of the gaps
    assert figures[256][0] > 1.3 * figures[1024][0] > 1.3 * figures[4096][0]
    assert figures[256][1] < figures[1024][1] < figures[4096][1]


# prefix_cache.sq

CHAT = {"gap": "~det(1000)", "msg": "100", "answer": "50", "think": "5", "more": "1"}


@pytest.mark.parametrize(("caching", "bs"), [(1, 16), (0, 16), (1, 64), (1, 1)])
def test_prefix_cache_one_conversation_by_hand(monkeypatch, caching, bs):
    # block_size is the hit's granularity: the previous sequence's full blocks
    doc, recs = run("prefix_cache.sq", monkeypatch, sets={"caching": caching, "bs": bs}, defs=CHAT, horizon=1060,
                    warmup=0)
    k = np.arange(1, len(recs["prompt"]) + 1)
    assert len(k) == 11
    prompt = 1000 + 100 * k + 50 * (k - 1)
    assert np.array_equal(recs["prompt"], prompt)
    hit = np.where(k > 1, (prompt - 100 - 1) // bs * bs, 0) if caching else np.zeros_like(prompt)
    assert np.array_equal(recs["cached"], hit)
    # the prefill of prompt - hit tokens in chunks of at most B = 2048 (without caching, two from turn 7)
    new = prompt - hit
    assert np.allclose(recs["first_token"] - recs["sent"], np.ceil(new / 2048) * 0.01 + 5e-5 * new, atol=1e-9)
    assert doc["requests"]["ttft"]["count"] == 11
    rate = hit.sum() / prompt.sum()
    assert doc["requests"]["prefix_cache_hit_rate"] == pytest.approx(rate, rel=1e-12)


def test_prefix_cache_paired_under_load():
    table = serq_sweep.compare(str(HERE / "prefix_cache.sq"), sets={"caching": [1, 0]}, seeds="1..3",
                               horizon=400, warmup=40, workers=0, progress=False,
                               figures=["requests.ttft.mean", "requests.prefix_cache_hit_rate"])
    got = {r["figure"]: r for r in table.to_dict("records")}
    ttft = got["requests.ttft.mean"]
    # without caching every turn prefills the whole conversation again: about 0.14 s more per request
    assert ttft["diff"] - ttft["ci_paired"] > 0.1
    assert ttft["ci_paired"] < 0.2 * ttft["diff"]
    hits = got["requests.prefix_cache_hit_rate"]
    assert hits["b"] == 0 and hits["a"] > 0.8


# gpu_failure.sq


def failure_chain(lam, s, f, r, n=200):
    """Mean requests present, the share of time down and the restarts per request of the chain (requests
    present, GPU up)."""
    ix = lambda k, u: 2 * k + u  # noqa: E731
    q = np.zeros((2 * (n + 1),) * 2)
    for k in range(n + 1):
        for u in (0, 1):
            i = ix(k, u)
            moves = [(ix(k + 1, u), lam)] if k < n else []
            moves.append((ix(k, 0), f) if u else (ix(k, 1), 1 / r))
            if u and k > 0:
                moves.append((ix(k - 1, 1), 1 / s))
            for j, rate in moves:
                q[i, j] += rate
                q[i, i] -= rate
    p = stationary(q)
    mean = sum(p[ix(k, u)] * k for k in range(n + 1) for u in (0, 1))
    down = sum(p[ix(k, 0)] for k in range(n + 1))
    restarts = f * sum(p[ix(k, 1)] for k in range(1, n + 1)) / lam
    return mean, down, restarts


def test_gpu_failure_is_its_markov_chain(monkeypatch):
    doc, _ = run("gpu_failure.sq", monkeypatch, horizon=40000)
    lam = 0.5
    mean, down, restarts = failure_chain(lam, 1, 0.05, 4)  # 14/3 s, 1/6, 0.05
    assert down == pytest.approx(1 - 1 / (1 + 0.05 * 4))  # up 1 / (1 + f r) of the time
    covers(doc["observes"]["response"], mean / lam, 0.1)
    covers(doc["gauges"]["gpu_down"], down, 0.07)
    covers(doc["observes"]["restarts"], restarts, 0.08)
    assert stage(doc, "serve")["throughput"] == pytest.approx(lam, rel=0.02)
    # every preemption is a restart of a request: the pool's count is the restarts observed
    assert pool(doc, "gpu")["preemptions"] == pytest.approx(
        doc["observes"]["restarts"]["mean"] * doc["observes"]["restarts"]["count"], abs=5)
    assert doc["gauges"]["gpu_down"]["max"] == 1


# ps_classes.sq


@pytest.mark.parametrize("long_work", ["s_long", "~exp(s_long)"])
def test_ps_classes_are_insensitive(monkeypatch, long_work):
    doc, _ = run("ps_classes.sq", monkeypatch, defs={"long_work": long_work}, horizon=40000)
    rho = 0.8 * (0.8 * 0.5 + 0.2 * 2.5)
    covers(doc["observes"]["response_short"], 0.5 / (1 - rho), 0.1)
    covers(doc["observes"]["response_long"], 2.5 / (1 - rho), 0.12)
    gpu = stage(doc, "gpu")
    assert gpu["utilisation"] == pytest.approx(rho, rel=0.02)
    if long_work == "s_long":
        covers(doc["observes"]["slowdown"], 1 / (1 - rho), 0.08)


# max_seqs.sq


def test_max_seqs_one_is_mg1(monkeypatch):
    doc, _ = run("max_seqs.sq", monkeypatch, horizon=2500, warmup=100)
    q = math.exp(-1 / 50)
    eg, eg2 = q / (1 - q), q * (1 + q) / (1 - q) ** 2  # o - 1 is geometric
    a, b = 0.01 * 1 + 5e-5 * 1000, 0.01 + 5e-5
    es, es2 = a + b * eg, a * a + 2 * a * b * eg + b * b * eg2
    wait = es2 / (2 * (1 - es))  # at Lambda = 1: 0.636 s
    req = doc["requests"]
    covers(req["queue"], wait, 0.3)
    covers(req["ttft"], wait + a, 0.3)
    assert req["prefill"]["mean"] == pytest.approx(a, abs=1e-9)
    assert doc["gauges"]["running"]["max"] == 1
    assert stage(doc, "engine")["utilisation"] == pytest.approx(es, rel=0.03)


def test_max_seqs_caps_the_batch(monkeypatch):
    doc, _ = run("max_seqs.sq", monkeypatch, sets={"max_seqs": 3, "Lambda": 4}, horizon=300, warmup=30)
    assert doc["gauges"]["running"]["max"] == 3
    assert pool(doc, "reqs")["used"] <= 3


# router_hits.sq


@pytest.mark.parametrize("policy", [0, 1])
def test_router_hits_follow_the_replica(monkeypatch, policy):
    doc, recs = run("router_hits.sq", monkeypatch, sets={"policy": policy}, horizon=1600, warmup=200)
    obs = doc["observes"]
    # nothing is evicted, so a follow-up turn hits fully when it lands where its last turn did (and now and
    # then elsewhere: on a replica that served it before, when the turns since added less than a block)
    assert all(p["evicted_entries"] == 0 for p in doc["pools"] if p["name"] == "kv")
    if policy == 1:
        assert obs["full_hit"]["mean"] == obs["same_replica"]["mean"] == 1
    else:
        covers(obs["same_replica"], 1 / 4, 0.2)
        extra = (obs["full_hit"]["mean"] - obs["same_replica"]["mean"]) * obs["full_hit"]["count"]
        assert 0 <= extra <= 0.01 * obs["full_hit"]["count"]
    # the hit rate of each replica from the records, and the share of the requests it serves
    eng = recs["engine"]
    total = 0
    for j in range(4):
        mine = eng == j
        assert 0.2 < mine.mean() < 0.3
        total += recs["cached"][mine].sum()
    assert total / recs["prompt"].sum() == pytest.approx(doc["requests"]["prefix_cache_hit_rate"], rel=1e-12)


# kv_preempt.sq


def test_kv_preempt_two_requests_by_hand(monkeypatch):
    doc, recs = run("kv_preempt.sq", monkeypatch, sets={"blocks": 12, "a_tok": 0},
                    defs={"gap": "~det(0.001)", "prompt_len": "64", "output_len": "64"},
                    arrivals=2, horizon=10, warmup=0)
    assert np.allclose(recs["sent"], [0.001, 0.002])
    assert np.allclose(recs["admitted"], [0.001, 0.011])  # the first admission (request 1: iteration 2)
    assert np.allclose(recs["first_token"], [0.011, 0.021])
    assert np.allclose(recs["last_token"], [0.641, 0.961])
    assert recs["preemptions"].tolist() == [0, 1]
    assert recs["cached"].tolist() == [0, 0]  # the hit of the first admission
    eng = stage(doc, "engine")
    assert eng["iterations"] == 96
    assert eng["tokens"] * eng["iterations"] == pytest.approx(127 + 95 + 63)
    kv = pool(doc, "kv")
    assert (kv["preemptions"], kv["evicted_units"], kv["admissions"]) == (1, 64, 3)
    assert doc["observes"]["hit"]["count"] == 2


def test_kv_preempt_blocks_under_load(monkeypatch):
    got = {}
    for blocks in (250, 1000):
        doc, recs = run("kv_preempt.sq", monkeypatch, sets={"blocks": blocks}, arrivals=300, horizon=1000,
                        warmup=0)
        kv = pool(doc, "kv")
        assert doc["requests"]["completed"] == 300 and kv["rejections"] == 0
        # every preemption is one of a request's, and every preempted request completed
        assert int(recs["preemptions"].sum()) == kv["preemptions"]
        # every prompt token is computed once at least, every output but the last once: recomputation adds
        eng = stage(doc, "engine")
        least = doc["requests"]["total_input_tokens"] + doc["requests"]["total_output_tokens"] - 300
        computed = eng["tokens"] * eng["iterations"]
        got[blocks] = (kv["preemptions"], doc["requests"]["ttft"]["mean"], computed - least)
        assert computed >= least - 1e-6
    assert got[1000][0] == 0 and got[1000][2] == pytest.approx(0, abs=1e-6)
    assert got[250][0] > 30 and got[250][2] > 0
    assert got[250][1] > 10 * got[1000][1]


# hetero_split.sq


def split_response(p, lam=2, mu_f=2, mu_s=1):
    return p / (mu_f - p * lam) + (1 - p) / (mu_s - (1 - p) * lam)


@pytest.mark.parametrize("p", [0.6, 0.7071, 0.8])
def test_hetero_split_is_two_mm1(monkeypatch, p):
    doc, _ = run("hetero_split.sq", monkeypatch, sets={"p": p}, horizon=30000)
    covers(doc["observes"]["response"], split_response(p), 0.1)
    covers(doc["observes"]["on_fast"], p, 0.01)
    fast, slow = [s for s in doc["stages"] if s["name"] == "gpu"]
    assert fast["utilisation"] == pytest.approx(p * 2 * 0.5, rel=0.02)
    assert slow["utilisation"] == pytest.approx((1 - p) * 2 * 1, rel=0.03)


def test_hetero_split_best_static_and_the_queue_aware_router():
    # the minimising split: lam_f = mu_f - sqrt(mu_f) (mu_f + mu_s - lam) / (sqrt(mu_f) + sqrt(mu_s)) = sqrt(2)
    best = (2 - math.sqrt(2) * 1 / (math.sqrt(2) + 1)) / 2
    assert best == pytest.approx(math.sqrt(2) / 2)
    assert split_response(best) < min(split_response(best - 0.05), split_response(best + 0.05))
    table = serq_sweep.compare(str(HERE / "hetero_split.sq"), sets={"policy": [0, 1]}, seeds="1..3",
                               horizon=8000, workers=0, progress=False, figures=["response.mean"])
    (row,) = table.to_dict("records")
    # least expected delay beats the best static split by about 0.58 s of its 1.91
    assert row["diff"] + row["ci_paired"] < -0.4


# batch_speedup.sq


def batching_chain(lam, alpha, s=1, k=8, n=800):
    """Mean present and the share of time busy of the birth-death chain with departures phi(min(j, k)) / s."""
    w = [1.0]
    for j in range(1, n + 1):
        m = min(j, k)
        w.append(w[-1] * lam * s * (1 + alpha * (m - 1)) / m)
    p = np.array(w) / sum(w)
    return float((np.arange(n + 1) * p).sum()), 1 - float(p[0])


# alpha 0.1 runs 10 000 s: its CIs (response, batch) are 0.29 and 0.45 of the widths allowed (0.21 and 0.31 over
# 20 000 s), so a figure 0.9 % to 3.4 % off the chain's fails (0.95 % to 2.35 % over 20 000 s), the utilisation
# within 0.05 % of the 1 % allowed; alpha 0.25's CIs (0.44 and 0.55 over 20 000 s, 0.74 over 10 000) keep 20 000
@pytest.mark.parametrize(("alpha", "horizon"), [(0.25, 20000), (0.1, 10000)])
def test_batch_speedup_is_its_birth_death_chain(monkeypatch, alpha, horizon):
    doc, _ = run("batch_speedup.sq", monkeypatch, sets={"alpha": alpha}, horizon=horizon)
    mean, busy = batching_chain(2, alpha)  # 4.152 and 0.9385 at alpha = 0.25
    covers(doc["observes"]["response"], mean / 2, 0.06)
    gpu = stage(doc, "gpu")
    assert gpu["utilisation"] == pytest.approx(busy, rel=0.01)
    assert doc["gauges"]["batch"]["mean"] == pytest.approx(gpu["present"], rel=1e-9)
    covers(doc["gauges"]["batch"], mean, 0.06)


# fanout.sq


@pytest.mark.parametrize(("share", "work"), [("bottleneck", "~exp(s)"), ("maxmin", "~det(s)")])
def test_fanout_is_one_ps_server(monkeypatch, share, work):
    text = (HERE / "fanout.sq").read_text()
    assert text.count("share bottleneck;") == 1
    prog = serq_frontend.compile(source=text.replace("share bottleneck;", f"share {share};"),
                                 defs={"w_each": work})
    docs = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        docs.append(encode_json(serq_sim.run(prog, horizon=30000)))
    assert docs[0] == docs[1]
    doc = json.loads(docs[0])
    rho = 0.6 * 1
    covers(doc["observes"]["response"], 1 / (1 - rho), 0.1)  # 2.5 s, whatever the law of the work
    for name in ("search", "code", "retrieve"):
        assert stage(doc, name)["utilisation"] == pytest.approx(rho, rel=0.03)
        assert stage(doc, name)["present"] == pytest.approx(stage(doc, "search")["present"], rel=1e-12)


def test_one_array_twice_in_a_run_says_why_and_what_to_write():
    text = (HERE / "fanout.sq").read_text()
    old = "stage search : ps(1);\nstage code : ps(1);\nstage retrieve : ps(1);"
    assert text.count(old) == 1
    text = text.replace(old, "stage tool[3] : ps(1);").replace("run search, code, retrieve (", "run tool[0], tool[2] (")
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=text)
    assert str(info.value).splitlines()[0].endswith(
        "error: `tool` is named twice in one run (`tool[0]` and `tool[2]`); a run names each stage array once, "
        "whatever the indexes (an index is known only when the run starts): a job on several members is a run "
        "over stages declared apart (`stage tool_0 : ps(…); stage tool_1 : ps(…);`, `run tool_0, tool_1 (w);`)")


# pd_transfer.sq


def test_pd_transfer_alone_by_hand(monkeypatch):
    doc, recs = run("pd_transfer.sq", monkeypatch, defs={"gap": "~det(10)", "prompt_len": "1000",
                                                         "output_len": "50"}, horizon=100, warmup=0)
    obs = doc["observes"]
    for name, value in (("at_prefill", 0.01 + 5e-5 * 1000), ("xfer", 0.002 + 999 / 1e5),
                        ("ttft", 0.06 + 0.01199 + 0.01005), ("response", 0.08204 + 49 * 0.01005)):
        assert obs[name]["count"] == 9
        assert obs[name]["mean"] == pytest.approx(value, abs=1e-9), name
    assert np.allclose(recs["first_token"] - recs["sent"], 0.08204, atol=1e-9)
    assert doc["requests"]["tpot"]["mean"] == pytest.approx(0.01005, abs=1e-9)


def test_pd_transfer_conserves_tokens_per_engine(monkeypatch):
    doc, recs = run("pd_transfer.sq", monkeypatch, arrivals=200, horizon=1000, warmup=0)
    req = doc["requests"]
    assert req["completed"] == 200
    p, d, link = stage(doc, "P"), stage(doc, "D"), stage(doc, "link")
    # the prefill instance computes every prompt token; the decode instance one token of each prompt (the
    # last, for its logits) and every output token but the last
    assert p["tokens"] * p["iterations"] == pytest.approx(req["total_input_tokens"], rel=1e-12)
    assert d["tokens"] * d["iterations"] == pytest.approx(200 + req["total_output_tokens"] - 200, rel=1e-12)
    # the reads in flight: their work over the run (Little), and some read is in flight a little less often
    work = 200 * 0.002 + (recs["prompt"] - 1).sum() / 1e5
    assert link["present"] == pytest.approx(work / doc["end"], rel=1e-9)
    assert link["utilisation"] <= link["present"]


def test_pd_transfer_decode_preemptions_read_again(monkeypatch):
    # a decode instance of 400 blocks preempts; each preempted request executes its decode hold again and reads
    # the KV again (the decode hold caches nothing, so the read fits), and its first token is taken once
    doc, recs = run("pd_transfer.sq", monkeypatch, sets={"d_blocks": 400}, arrivals=200, horizon=1000, warmup=0)
    dkv = pool(doc, "dkv")
    assert dkv["preemptions"] > 10 and dkv["rejections"] == 0
    assert doc["requests"]["completed"] == 200 == doc["observes"]["ttft"]["count"]
    link = stage(doc, "link")
    assert link["completions"] == 200 + dkv["preemptions"]  # a read a preemption
    assert (recs["first_token"] <= recs["last_token"]).all() and (recs["first_token"] > recs["sent"]).all()


# the stuck warning of a pool where no hold computes a position


def test_gpu_failure_restarts_are_counted_stuck_and_not_warned_of(monkeypatch):
    doc, _ = run("gpu_failure.sq", monkeypatch, horizon=4000)
    # a request preempted twice or more is what the stuck column counts: the restarts' samples above 1 (after
    # the warm-up) are among them; each was preempted by a failure, another session's growth, on a pool where
    # no hold has a position: it starts over, as the model has it, and the stuck warning, kept for a sign of
    # no progress, says nothing (docs/simulator.md, "Stuck")
    assert pool(doc, "gpu")["stuck"] == 11
    assert not [n for n in doc["notes"] if "stuck" in n]


POSITIONED = """
pool reqs { cap 3; admit via E; }
pool kv { cap 8; block 2; preempt by (-admission) requeue head; }
stage E : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 2 ? 0.5 : 0);
  hold reqs (1), kv (2) {
    run E prefill (2) growing kv;
    run E decode (serial == 2 ? 1 : 6) growing kv;
  }
}
run { horizon 30; }
"""


def test_stuck_warning_of_a_pool_with_positions_is_unchanged(monkeypatch):
    # s1 is preempted at position 4, then at 2: stuck on a pool whose growing runs advance positions, so the
    # warning is the one it was, with no word of position 0
    prog = serq_frontend.compile(source=POSITIONED)
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(prog)
        assert r.pool("kv").stuck == 1
        assert r.warnings[-1] == (
            "warning: 1 session stuck in the run, preempted again without progress (at no greater position than "
            "at their previous preemption): kv (1 stuck, 2 preemption(s)); such a session can cycle between "
            "admission and preemption for as long as the pool is short, and its latency grows with it")

    from serq_sim import notes

    (w,) = notes.stuck([("kv", 2, 5, True, 0), ("gpu", 3, 4, False, 1)])
    assert w.endswith("kv (2 stuck, 5 preemption(s)), gpu (1 stuck, 4 preemption(s)); such a session can cycle "
                      "between admission and preemption for as long as the pool is short, and its latency grows "
                      "with it; on gpu no growing run or load advances a hold's position, so every preemption "
                      "there found position 0, and only a session preempted again by its own growth is counted "
                      "(re-executed, its hold grows into the same shortage); the stuck column counts too the "
                      "sessions another's growth preempted twice, which start over as a restart after a failure or "
                      "a preemptive priority does (the column: 3 on gpu)")
    assert notes.stuck([("gpu", 3, 4, False, 0)]) == []
    (w,) = notes.stuck([("kv", 2, 5, True, 0)])
    assert w.endswith("kv (2 stuck, 5 preemption(s)); such a session can cycle between admission and preemption "
                      "for as long as the pool is short, and its latency grows with it")


# `true` and `false`, as a user of a language with booleans writes them

TRUTH = " (serQ has no `true` or `false`: a truth value is a number, 1 for true and 0 for false)"


@pytest.mark.parametrize(("old", "new", "word", "said"), [
    ("let caching = 1; ", "let caching = true;", "true", "`let caching` is not a constant: it reads `true`"),
    ("let caching = 1; ", "let caching = False;", "False", "`let caching` is not a constant: it reads `False`"),
    ("    branch (more) {", "    branch (more == TRUE) {", "TRUE", "unknown name `TRUE`"),
])
def test_true_and_false_are_said_to_be_numbers(tmp_path, old, new, word, said):
    text = (HERE / "prefix_cache.sq").read_text()
    assert text.count(old) == 1
    text = text.replace(old, new)
    path = tmp_path / "prefix_cache.sq"
    path.write_text(text)
    before = text[:text.index(new) + new.index(word)]
    line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(path=str(path))
    assert str(info.value).splitlines()[0] == f"{path}:{line}:{col}: error: {said}{TRUTH}"


def test_true_on_the_command_line_is_said_to_be_no_number(serq):
    r = serq("run", str(HERE / "prefix_cache.sq"), "--set", "caching=true")
    assert (r.returncode, r.stderr) == (2, "error: --set caching=true: 'true' is not a number" + TRUTH + "\n")
    r = serq("compare", str(HERE / "prefix_cache.sq"), "--set", "caching=true,false", "--workers", "0")
    assert r.returncode == 2 and r.stderr.startswith("error: --set caching: 'true' is not a number" + TRUTH)
    # any other word is told only that it is no number, a name no program has only that it is unknown
    r = serq("run", str(HERE / "prefix_cache.sq"), "--set", "caching=off")
    assert r.stderr == "error: --set caching=off: 'off' is not a number\n"


def test_compare_few_seeds_paired_ci_can_be_wider_than_a_reduction_suggests():
    # docs/tutorial.md: 3 seeds, pairing removes 31 % of the variance, yet the paired CI (t of 2 degrees of
    # freedom) is wider than Welch's (up to 4): it narrows only past 1 - (t975(4) / t975(2))^2 = 58 %
    from serq_sweep.stats import t975

    table = serq_sweep.compare(str(HERE / "md1.sq"), defs={"service": ["~det(s)", "~erlang(4, s)"]}, seeds="1..3",
                               horizon=5000, workers=0, progress=False, figures=["wait.mean"])
    (row,) = table.to_dict("records")
    assert row["variance_reduction"] == pytest.approx(0.311, abs=0.001)
    assert row["ci_paired"] > row["ci_unpaired"]
    # the two half-widths the tutorial quotes for `serq compare md1.sq … --seeds 1..3 --horizon 5000`, ±0.47 and ±0.36
    assert (round(row["ci_paired"], 2), round(row["ci_unpaired"], 2)) == (0.47, 0.36)
    assert 1 - (t975(4) / t975(2)) ** 2 == pytest.approx(0.5836, abs=1e-4)
