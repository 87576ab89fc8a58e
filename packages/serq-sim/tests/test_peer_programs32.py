"""Round 32 of programs as serQ's users write them (peer_programs32/), each run to its horizon on both
simulator tiers and checked against an independent truth: an M/G/1 with Pareto service against the
Pollaczek-Khinchine mean, an open Jackson network of three stations against its product form, a
prefill -> shared link -> decode tandem (Burke, and the M/G/1-PS insensitivity of the link), interactive
and batch classes under non-preemptive priority (Cobham), a replica fleet against Erlang C (mean wait, the
share within an SLO, the smallest fleet --find gives, the cost of goodput), a RAG pipeline (the embedder's
utilisation and Little's law per stage, a request's parts adding up), long-context requests among short
ones under vLLM's long-prefill threshold (by hand, iteration by iteration; the TTFT trade-off), a trace
replay with think times (by hand), and a vLLM-like engine with CPU and disk KV tiers (token conservation
per request; no disk hit when the CPU tier never evicts), and two models' engines sharing one KV pool (by hand:
at once with room for both, one after the other with room for one)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
from peers import covers, pool, run_both, stage

HERE = Path(__file__).parent / "peer_programs32"


def run(name: str, monkeypatch, *, sets=None, text=None, **kw):
    """(JSON report, records as numpy columns or None) of peer_programs32/NAME (or ``text`` compiled beside
    it) on the default tier and the general engine, which must give the same bytes and the same records."""
    if text is None:
        prog = serq_frontend.compile(path=str(HERE / name), sets=sets or {})
    else:
        prog = serq_frontend.compile(source=text, sets=sets or {})
    return run_both(prog, monkeypatch, **kw)


def little(doc: dict, name: str) -> None:
    s = stage(doc, name)
    assert s["present"] == pytest.approx(s["throughput"] * (s["wait"] + s["service"]), rel=0.01), s


@pytest.mark.parametrize(("a", "xm", "horizon"), [(4, 0.75, 60000), (3.5, 2.5 / 3.5, 150000)])
def test_mg1_pareto_is_pollaczek_khinchine(monkeypatch, a, xm, horizon):
    # E[S] = 1 both; the heavier tail (a = 3.5: E[S^4] infinite, so the wait's CI is itself noisy) runs longer
    doc, _ = run("mg1_pareto.sq", monkeypatch, sets={"a": a, "xm": xm}, horizon=horizon)
    lam = 0.7
    es = a * xm / (a - 1)
    es2 = a * xm * xm / (a - 2)
    rho = lam * es
    covers(doc["observes"]["response"], es + lam * es2 / (2 * (1 - rho)), 0.05)
    gpu = stage(doc, "gpu")
    assert gpu["service"] == pytest.approx(es, rel=0.02)  # the inversion draws the Pareto's mean
    assert gpu["utilisation"] == pytest.approx(rho, rel=0.02)
    little(doc, "gpu")


def test_jackson3_is_product_form(monkeypatch):
    doc, _ = run("jackson3.sq", monkeypatch, horizon=20000, warmup=200)
    lam, pf, pb = 1, 0.8, 0.25
    l2 = lam / (pf * (1 - pb))
    rates = {"tok": l2 * (1 - pb * pf), "gpu": l2, "filter": pf * l2}
    means = {"tok": 0.3, "gpu": 0.4, "filter": 0.45}
    total = 0.0
    for name, gauge in (("tok", "n_tok"), ("gpu", "n_gpu"), ("filter", "n_filter")):
        rho = rates[name] * means[name]
        s = stage(doc, name)
        assert s["throughput"] == pytest.approx(rates[name], rel=0.02)  # the traffic equations
        assert s["utilisation"] == pytest.approx(rho, rel=0.03)
        # the gauge (queue(s): every job at the stage) is the stage's present; M/M/1 in product form
        assert doc["gauges"][gauge]["mean"] == pytest.approx(s["present"], rel=1e-9)
        assert s["present"] == pytest.approx(rho / (1 - rho), rel=0.08)
        total += rho / (1 - rho)
        little(doc, name)
    covers(doc["observes"]["response"], total / lam, 0.06)  # Little over the network: 25/6 s
    covers(doc["observes"]["gpu_visit"], 0.4 / (1 - rates["gpu"] * 0.4), 0.08)


def test_pd_link_is_burke_and_ps_insensitivity(monkeypatch):
    doc, _ = run("pd_link.sq", monkeypatch, horizon=30000)
    lam = 2
    parts = {"at_prefill": 0.3 / (1 - lam * 0.3), "transfer": 0.2 / (1 - lam * 0.2),
             "at_decode": 0.4 / (1 - lam * 0.4)}
    for name, truth in parts.items():
        covers(doc["observes"][name], truth, 0.1)
    covers(doc["observes"]["response"], sum(parts.values()), 0.06)
    link = stage(doc, "link")
    # the link's utilisation is lam x the work each transfer brings (0.2 s), not x its shared sojourn
    assert link["utilisation"] == pytest.approx(lam * 0.2, rel=0.02)
    assert link["service"] > 0.3  # a transfer shares the link: longer than its 0.2 s of work
    for name in ("prefill_gpu", "link", "decode_gpu"):
        little(doc, name)


def test_batch_fill_is_cobham(monkeypatch):
    doc, _ = run("batch_fill.sq", monkeypatch, horizon=40000)
    lam_i, s_i, lam_b, s_b = 0.5, 0.4, 0.3, 1.5
    w0 = lam_i * s_i * s_i + lam_b * s_b * s_b  # sum lam E[S^2] / 2 with E[S^2] = 2 s^2
    rho1, sigma = lam_i * s_i, lam_i * s_i + lam_b * s_b
    covers(doc["observes"]["wait_interactive"], w0 / (1 - rho1), 0.08)
    covers(doc["observes"]["wait_batch"], w0 / ((1 - rho1) * (1 - sigma)), 0.15)
    # FIFO would give both classes w0 / (1 - sigma) = 2.157 s: the interactive CI lies far below it
    fifo = w0 / (1 - sigma)
    assert doc["observes"]["wait_interactive"]["mean"] + doc["observes"]["wait_interactive"]["ci"] < fifo / 2
    assert stage(doc, "gpu")["utilisation"] == pytest.approx(sigma, rel=0.02)


def erlang_c(n: int, a: float) -> float:
    top = a ** n / math.factorial(n) / (1 - a / n)
    return top / (sum(a ** k / math.factorial(k) for k in range(n)) + top)


def within(n: int, lam: float, s: float, t: float) -> float:
    """P(T <= t) of the M/M/c (c = n): the wait is 0 w.p. 1 - C, else exponential of rate (n - a) / s."""
    c, mu = erlang_c(n, lam * s), 1 / s
    theta = (n - lam * s) / s
    if abs(theta - mu) < 1e-12:
        tail = c * math.exp(-mu * t) * (1 + mu * t)
    else:
        tail = c * (theta * math.exp(-mu * t) - mu * math.exp(-theta * t)) / (theta - mu)
    return 1 - (1 - c) * math.exp(-mu * t) - tail


@pytest.mark.parametrize("n", [7, 8, 9])
def test_fleet_cost_is_erlang_c(monkeypatch, n):
    doc, _ = run("fleet_cost.sq", monkeypatch, sets={"N": n}, horizon=15000)
    c = erlang_c(n, 6)
    covers(doc["observes"]["wait"], c / (n - 6), 0.2 if n < 9 else 0.3)
    assert abs(doc["observes"]["ok"]["mean"] - within(n, 6, 1, 2)) <= doc["observes"]["ok"]["ci"]
    assert stage(doc, "replicas")["utilisation"] == pytest.approx(6 / n, rel=0.02)
    # the balancer's queue: the mean waiting is lam x the mean wait (Little)
    assert pool(doc, "slots")["queue"] == pytest.approx(doc["observes"]["wait"]["mean"] * 6, rel=0.02)


def test_fleet_cost_find_and_dollars_per_goodput(serq, tmp_path):
    assert erlang_c(8, 6) / 2 > 0.1 > erlang_c(9, 6) / 3  # the closed form's smallest fleet is 9
    out = tmp_path / "find.csv"
    r = serq("sweep", str(HERE / "fleet_cost.sq"), "--find", "wait.mean <= 0.1", "--over", "N", "7:16:1",
             "--seeds", "1..2", "--horizon", "3000", "--workers", "0", "--no-progress", "-o", str(out))
    assert r.returncode == 0, r.stderr
    header, row = out.read_text().splitlines()
    got = dict(zip(header.split(","), row.split(",")))
    assert (got["outcome"], got["N"]) == ("found_smallest", "9")
    # the cost of a thousand requests within the SLO (2 s), from a sweep's table: 1.160 $ at N = 7, 1.125 $ at
    # N = 8 (the cheapest: more replicas add little within the SLO, whose bound is the service itself), 1.607 $
    # at N = 12
    table = tmp_path / "fleet.csv"
    r = serq("sweep", str(HERE / "fleet_cost.sq"), "--set", "N=8,12", "--seeds", "1", "--horizon", "3000",
             "--workers", "0", "--no-progress", "-o", str(table))
    assert r.returncode == 0, r.stderr
    lines = table.read_text().splitlines()
    cols = lines[0].split(",")
    cost = {}
    for line in lines[1:]:
        row = dict(zip(cols, line.split(",")))
        n, ok = int(row["N"]), float(row["observes.ok.mean"])
        assert abs(ok - within(n, 6, 1, 2)) < 0.02
        cost[n] = n * 2.5 / 3600 / (6 * ok) * 1000
    truth = {n: n * 2.5 / 3600 / (6 * within(n, 6, 1, 2)) * 1000 for n in range(7, 15)}
    assert min(truth, key=truth.get) == 8
    for n in cost:
        assert cost[n] == pytest.approx(truth[n], rel=0.03)
    assert cost[8] < cost[12]


def test_rag_parts_add_up_and_little_per_stage(monkeypatch):
    doc, recs = run("rag.sq", monkeypatch, horizon=400)
    obs = doc["observes"]
    embed = stage(doc, "embed")
    assert embed["utilisation"] == pytest.approx(4 * 0.2 / 2, rel=0.05)
    assert embed["service"] == pytest.approx(0.2, rel=1e-9)  # deterministic
    assert stage(doc, "search")["present"] == pytest.approx(4 * 0.03, rel=0.12)
    for name in ("embed", "search"):
        little(doc, name)
    # every request's answer_ttft is its embed time + search time + the engine's ttft; the means over the
    # same requests add up (the ttft of a request sent before the warm-up's end but admitted after counts
    # in ttft alone, so the sums agree to within a few samples' worth)
    assert obs["answer_ttft"]["mean"] == pytest.approx(
        obs["embed_time"]["mean"] + obs["search_time"]["mean"] + obs["ttft"]["mean"], rel=0.01)
    # a prompt is the question plus k = 4 passages of 300 tokens
    assert recs["prompt"].min() >= 1 + 4 * 300
    assert doc["requests"]["prefix_cache_hit_rate"] == 0


def long_short_by_hand() -> str:
    src = (HERE / "long_short.sq").read_text()
    return (src.replace("arrive poisson(rate);", "arrive batch(2);").replace("~bernoulli(p_long)", "serial == 0")
            .replace("1 + floor(~exp(E_short))", "200").replace("1 + floor(~exp(E_o))", "2")
            .replace("run { horizon 1200; warmup 60; seed 1; }", "run { horizon inf; }"))


@pytest.mark.parametrize(("c", "short", "long", "end"),
                         [(512, 0.0812, 1.2601, 1.2702), (float("inf"), 1.24, 1.24, 1.2502),
                          (8192, 1.24, 1.24, 1.2502)])
def test_long_short_threshold_by_hand(monkeypatch, c, short, long, end):
    # a long prompt of 12000 tokens and a short one of 200, both sent at t = 0, each with 2 output tokens;
    # iteration by iteration in the program's header (a chunk cap of 8192, the budget, cuts nothing)
    doc, _ = run("long_short.sq", monkeypatch, sets={"C": c}, text=long_short_by_hand())
    assert doc["observes"]["ttft_short"]["mean"] == pytest.approx(short, abs=1e-9)
    assert doc["observes"]["ttft_long"]["mean"] == pytest.approx(long, abs=1e-9)
    assert doc["end"] == pytest.approx(end, abs=1e-9)


def test_long_short_threshold_trades_short_ttft_for_long(monkeypatch):
    got = {c: run("long_short.sq", monkeypatch, sets={"C": c}, horizon=600)[0]["observes"]
           for c in (512, float("inf"))}
    # the same requests under one seed: the short requests' tail falls severalfold, the long ones wait longer
    assert got[512]["ttft_short"]["p99"] < got[float("inf")]["ttft_short"]["p99"] / 3
    assert got[512]["ttft_long"]["mean"] > got[float("inf")]["ttft_long"]["mean"] + 0.1
    assert got[512]["ttft_short"]["count"] == got[float("inf")]["ttft_short"]["count"]


def test_trace_think_by_hand(monkeypatch):
    doc, recs = run("trace_think.sq", monkeypatch)
    rows = sorted(zip(recs["session"], recs["turn"], recs["sent"], recs["done"], recs["prompt"]))
    assert [(int(s), int(t), p) for s, t, _, _, p in rows] == [
        (0, 1, 1000), (0, 2, 1600), (1, 1, 2000), (1, 2, 2500), (1, 3, 2630), (2, 1, 400)]
    want = [(1, 2.5), (4.5, 7.4), (2, 5.5), (10.5, 12.05), (13.05, 14.465), (3, 6.1)]
    for (_, _, sent, done, _), (ws, wd) in zip(rows, want):
        assert (sent, done) == (pytest.approx(ws, abs=1e-9), pytest.approx(wd, abs=1e-9))
    assert doc["end"] == pytest.approx(14.465, abs=1e-9)
    assert doc["observes"]["response"]["mean"] == pytest.approx(2.3275, abs=1e-9)
    (note,) = doc["notes"]  # six samples: no CI, and the remedy names the arrivals, not the horizon
    assert note.endswith("send more than 3 arrivals (--arrivals)"), note


@pytest.mark.parametrize("cpu_blocks", [3000, 1e6])
def test_kv_tiers_conserve_tokens(monkeypatch, cpu_blocks):
    doc, recs = run("kv_tiers.sq", monkeypatch, sets={"cpu_blocks": cpu_blocks}, horizon=700)
    tiers = recs["gpu"] + recs["cpu"] + recs["disk"]
    assert np.array_equal(recs["prompt"], tiers + recs["computed_prefill"])
    assert np.array_equal(recs["cached"], tiers)
    hit = tiers.sum() / recs["prompt"].sum()
    assert doc["requests"]["prefix_cache_hit_rate"] == pytest.approx(hit, rel=1e-9)
    assert recs["gpu"].sum() > 0 and recs["cpu"].sum() > 0
    cpu, disk = pool(doc, "cpu"), pool(doc, "disk")
    if cpu_blocks == 1e6:
        # a CPU tier that never evicts sends nothing to disk, and nothing is found there
        assert cpu["evicted_entries"] == 0 and cpu["spills"] == 0
        assert recs["disk"].sum() == 0 and disk["cached"] == 0
    else:
        assert cpu["evicted_entries"] > 0 and cpu["spills"] > 0 and recs["disk"].sum() > 0
    # every hit is of whole blocks
    for col in ("gpu", "cpu", "disk"):
        assert (recs[col] % 16 == 0).all()


def multi_model_by_hand() -> str:
    src = (HERE / "multi_model.sq").read_text()
    return (src.replace("arrive poisson(rate);", "arrive batch(2);").replace("~bernoulli(p_chat)", "serial == 0")
            .replace("1 + floor(~exp(E_n))", "100").replace("1 + floor(~exp(E_o))", "2")
            .replace("run { horizon 300; warmup 30; seed 1; }", "run { horizon inf; }"))


@pytest.mark.parametrize(("blocks", "chat", "code"), [(2000, (0.02, 0.0301), (0.016, 0.02408)),
                                                      (10, (0.02, 0.0301), (0.0461, 0.05418))])
def test_multi_model_shared_kv_by_hand(monkeypatch, blocks, chat, code):
    # one request per model at t = 0, 100 prompt tokens, 2 output tokens: with room for both the engines run at
    # once; with room for one (7 of 10 blocks each) the code request waits for the chat request's blocks
    doc, recs = run("multi_model.sq", monkeypatch, sets={"kv_blocks": blocks}, text=multi_model_by_hand())
    assert doc["observes"]["ttft_chat"]["mean"] == pytest.approx(chat[0], abs=1e-9)
    assert doc["observes"]["ttft_code"]["mean"] == pytest.approx(code[0], abs=1e-9)
    done = sorted(zip(recs["session"], recs["last_token"]))
    assert [d for _, d in done] == [pytest.approx(chat[1], abs=1e-9), pytest.approx(code[1], abs=1e-9)]


def test_multi_model_shares_one_pool(monkeypatch):
    got = {}
    for blocks in (2000, 300):
        doc, _ = run("multi_model.sq", monkeypatch, sets={"kv_blocks": blocks}, horizon=200)
        kv = pool(doc, "kv")
        assert pool(doc, "reqs_chat")["admissions"] + pool(doc, "reqs_code")["admissions"] == kv["admissions"]
        assert kv["over_cap"] == 0 and kv["used"] <= blocks * 16
        got[blocks] = doc["observes"]
    # the same requests (one seed): a smaller shared pool delays both models' first tokens
    for model in ("ttft_chat", "ttft_code"):
        assert got[300][model]["mean"] > 2 * got[2000][model]["mean"], model


@pytest.mark.parametrize("swapped", [False, True])
def test_multi_model_first_declared_queue_takes_freed_blocks(monkeypatch, swapped):
    # the pool declared first is served first where two queues' heads wait for room in one pool
    # (language.txt, Ties): under heavy memory pressure its model's requests get the freed blocks, the
    # other model's wait; swapping the two declarations swaps who waits
    text = (HERE / "multi_model.sq").read_text()
    if swapped:
        a, b = "pool reqs_chat { cap 64; admit via chat; }\n", "pool reqs_code { cap 64; admit via code; }\n"
        assert a + b in text
        text = text.replace(a + b, b + a)
    doc, _ = run("multi_model.sq", monkeypatch, sets={"kv_blocks": 150}, text=text, horizon=150)
    first, second = ("ttft_code", "ttft_chat") if swapped else ("ttft_chat", "ttft_code")
    assert doc["observes"][second]["mean"] > 5 * doc["observes"][first]["mean"]
    assert doc["observes"][second]["count"] < doc["observes"][first]["count"]
