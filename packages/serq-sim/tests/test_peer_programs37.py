"""Round 37 of programs as vLLM and llm-d engineers and capacity planners write them (peer_programs37/), each
run on both simulator tiers and checked against an independent truth: a batch of 500 requests at t = 0 and
its drain worked out iteration by iteration; the chunked-prefill budget's TTFT/ITL trade-off (a lone prompt's
chunks by hand, every token computed once, the sweep's monotone ends, the plot's log axis ticked at the
swept budgets); disaggregated prefill and decode over a link of swept bandwidth (one request by hand, the
link's utilisation, where TTFT stops improving); coding agents' prefix hits against the KV cache's size
(each turn's hit by hand, tokens in = computed + hits, the hit rate rising with the cache); the SLO
attainment's capacity (goodput recomputed from the records, the rate --find returns against direct runs,
the target); every metric of the report recomputed from the records CSV with the csv module alone; four
replicas behind round-robin, least-loaded and prefix-aware routers (placements by hand, one replica the
same run under each policy, the hit rates ordered); two TP=1 replicas against one TP=2 engine (one request
by hand on each, Little's law, the paired comparison); and a CPU offload tier (off, the library's request
request for request; tokens in = computed + both hits; a hold between the engine's admission and the
prefill, admitted by the engine or at the settle, by hand)."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
import serq_sweep
from peers import pool, run_both, stage
from serq_report.json import encode_json

HERE = Path(__file__).parent / "peer_programs37"
SERQ = str(Path(sys.executable).parent / "serq")

# the A100 / Qwen3-8B profile's terms (lib/step_costs.sq's a100_qwen3_8b)
C, D, E, A, BATT = 0.013939, 0.00004105, 0.00000013786, 0.000051527, 0.0000000040196


def compiled(name: str, *, sets=None, defs=None):
    return serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})


def run(name: str, monkeypatch, *, sets=None, defs=None, **kw):
    """(JSON report, records) of peer_programs37/NAME on both tiers, which must agree byte for byte."""
    return run_both(compiled(name, sets=sets, defs=defs), monkeypatch, **kw)


def report(name: str, *, sets=None, defs=None, **kw) -> dict:
    return json.loads(encode_json(serq_sim.run(compiled(name, sets=sets, defs=defs), **kw)))


def test_every_program_is_in_fmt_form():
    files = sorted(HERE.glob("*.sq"))
    assert len(files) >= 8
    r = subprocess.run([SERQ, "fmt", "--check", *map(str, files)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# burst.sq


def test_burst_drains_as_worked_out_by_hand(monkeypatch):
    c, a, d = 0.013939, 0.000051527, 0.00004105
    doc, recs = run("burst.sq", monkeypatch)
    drain = (c + 4096 * a) + 31 * (c + 256 * d) + (c + 3904 * a) + 31 * (c + 244 * d)
    assert drain == pytest.approx(64 * c + 8000 * a + 15500 * d)
    assert doc["end"] == pytest.approx(drain, rel=1e-12)
    assert stage(doc, "engine")["iterations"] == 64
    assert (stage(doc, "engine")["prefill_only"], stage(doc, "engine")["decode_only"]) == (2, 62)
    # the first 256 (by session) are admitted at 0 and sample their first token after one iteration; the
    # other 244 wait for the slots the first wave frees at the end of iteration 32
    order = np.argsort(recs["session"])
    first, second = order[:256], order[256:]
    assert np.all(recs["admitted"][first] == 0)
    assert np.allclose(recs["first_token"][first], c + 4096 * a)
    wave = (c + 4096 * a) + 31 * (c + 256 * d)
    assert np.allclose(recs["admitted"][second], wave)
    assert np.allclose(recs["first_token"][second], wave + c + 3904 * a)
    assert np.allclose(recs["last_token"][second], drain)
    ttft = (256 * (c + 4096 * a) + 244 * (33 * c + 8000 * a + 7936 * d)) / 500
    assert doc["requests"]["ttft"]["mean"] == pytest.approx(ttft)
    assert doc["requests"]["output_throughput"] == pytest.approx(500 * 32 / drain)
    # Little's law over the drained run: the mean number in the system is the requests' time in it / end
    assert doc["mean_live"] == pytest.approx((recs["last_token"] - recs["sent"]).sum() / drain)
    assert pool(doc, "kv")["preemptions"] == 0


def test_burst_realistic_drain_is_the_step_costs_sum():
    c, a, d = 0.013939, 0.000051527, 0.00004105
    sets = {"P": 1000, "O": 200, "B": 2048}
    big = report("burst.sq", sets={**sets, "blocks": 20000})
    e = stage(big, "engine")
    assert pool(big, "kv")["preemptions"] == 0
    # every token computed once: 500 prompts and 500 x 199 decode tokens, the budget's tokens by iteration
    assert e["tokens"] * e["iterations"] == pytest.approx(500 * 1199)
    assert big["end"] == pytest.approx(c * e["iterations"] + a * 500 * 1000 + d * 500 * 199, rel=1e-9)
    # at the A100's 8 010 blocks the running requests outgrow the cache: the recomputes lengthen the drain
    small = report("burst.sq", sets=sets)
    assert pool(small, "kv")["preemptions"] > 0
    assert stage(small, "engine")["tokens"] * stage(small, "engine")["iterations"] > 500 * 1199
    assert small["end"] > big["end"]


def _fcfs_engine(n, p, o, budget, slots, c=0.013939, a=0.000051527, d=0.00004105):
    """vLLM's scheduler for n like requests sent at once, ample KV, written out: each iteration the running
    requests in admission order take a decode token or a prefill chunk from the budget, then the waiting
    ones are admitted while slots and budget last (the last with a partial chunk); a request samples its
    first token when its prompt is computed and one token an iteration after. (drain, iterations, mean
    TTFT)."""
    waiting, running = list(range(n)), []  # [computed, outputs]
    t, its, first = 0.0, 0, []
    while waiting or running:
        left, pre, dec, sched = budget, 0, 0, []
        for r in running:
            if left <= 0:
                break
            k = min(p - r[0], left) if r[0] < p else 1
            sched.append((r, k))
            left -= k
            pre, dec = (pre + k, dec) if r[0] < p else (pre, dec + 1)
        while waiting and len(running) < slots and left > 0:
            waiting.pop(0)
            r = [0, 0]
            running.append(r)
            k = min(p, left)
            sched.append((r, k))
            left -= k
            pre += k
        t += c + a * pre + d * dec
        its += 1
        for r, k in sched:
            if r[0] < p:
                r[0] += k
                if r[0] == p:
                    r[1] = 1
                    first.append(t)
            else:
                r[1] += 1
        running = [r for r in running if r[1] < o]
    return t, its, sum(first) / n


@pytest.mark.parametrize("n, p, o, budget, slots", [(20, 16, 4, 64, 8), (50, 100, 10, 256, 16), (30, 37, 5, 50, 7),
                                                    (10, 300, 3, 128, 4), (100, 1, 1, 8, 8)])
def test_burst_against_the_scheduler_written_out(monkeypatch, n, p, o, budget, slots):
    drain, its, ttft = _fcfs_engine(n, p, o, budget, slots)
    doc, _ = run("burst.sq", monkeypatch, sets={"N": n, "P": p, "O": o, "B": budget, "max_seqs": slots})
    assert stage(doc, "engine")["iterations"] == its
    assert doc["end"] == pytest.approx(drain, rel=1e-12)
    assert doc["requests"]["ttft"]["mean"] == pytest.approx(ttft, rel=1e-12)


# chunk_budget.sq


@pytest.mark.parametrize("budget, chunks", [(2048, [(0, 2048), (2048, 2048), (4096, 904)]),
                                            (512, [(k * 512, 512) for k in range(9)] + [(4608, 392)])])
def test_chunk_budget_lone_prompt_by_hand(monkeypatch, budget, chunks):
    doc, recs = run("chunk_budget.sq", monkeypatch, sets={"B": budget},
                    defs={"prompt_len": "5000", "output_len": "1"}, arrivals=1, warmup=0)
    ttft = sum(C + A * n + BATT * n * (k + n / 2) for k, n in chunks)
    assert recs["first_token"][0] - recs["sent"][0] == pytest.approx(ttft, rel=1e-12)
    assert stage(doc, "engine")["iterations"] == len(chunks)


def test_chunk_budget_every_token_computed_once(monkeypatch):
    doc, recs = run("chunk_budget.sq", monkeypatch, arrivals=40, horizon=math.inf, warmup=0)
    e = stage(doc, "engine")
    assert pool(doc, "kv")["preemptions"] == 0 and recs["cached"].sum() == 0
    assert e["tokens"] * e["iterations"] == pytest.approx((recs["prompt"] + recs["output"] - 1).sum())


@pytest.fixture(scope="module")
def budget_table(tmp_path_factory):
    out = tmp_path_factory.mktemp("budget") / "budget.csv"
    table = serq_sweep.sweep(str(HERE / "chunk_budget.sq"), sets={"B": [256, 1024, 4096]}, seeds="1..2",
                             horizon=150, warmup=30, workers=0, progress=False, out=str(out))
    return table, out


def test_chunk_budget_trade_off(budget_table):
    table, _ = budget_table
    by = table.groupby("B").mean(numeric_only=True)
    ttft, itl = by["requests.ttft.mean"], by["requests.itl.p99"]
    # a larger budget: fewer chunks before the first token, longer iterations for the decoders
    assert ttft[256] > ttft[1024] > ttft[4096]
    assert itl[256] < itl[1024] < itl[4096]
    # per seed too (common random numbers: the same requests at every budget)
    for _seed, rows in table.groupby("seed"):
        t = rows.set_index("B")["requests.ttft.mean"]
        assert t[256] > t[1024] > t[4096]


def test_plot_log_x_ticks_at_the_swept_budgets(budget_table):
    from matplotlib.ticker import NullFormatter

    _, out = budget_table
    ax = serq_sweep.plot(str(out), y="requests.itl.p99", log="x").axes[0]
    assert ax.get_xscale() == "log"
    assert list(ax.get_xticks()) == [256, 1024, 4096]
    ax.figure.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["256", "1024", "4096"]
    assert isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)
    # a figure as the x (a point per point of the sweep) keeps matplotlib's log ticks
    ax = serq_sweep.plot(str(out), x="requests.tpot.mean", y="requests.ttft.mean", log="x").axes[0]
    assert not isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)


def test_plot_log_x_of_close_values_keeps_matplotlibs_ticks(tmp_path):
    import pandas as pd
    from matplotlib.ticker import NullFormatter

    table = pd.DataFrame({"point": [0, 1, 2], "B": [100, 120, 140], "seed": [1, 1, 1],
                          "status": ["ok"] * 3, "y": [1.0, 2.0, 3.0]})
    ax = serq_sweep.plot(table, x="B", y="y", log="x").axes[0]
    assert not isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)


# pd_bandwidth.sq


def test_pd_bandwidth_one_request_by_hand(monkeypatch):
    p, o, bw = 3000, 3, 25e9
    doc, recs = run("pd_bandwidth.sq", monkeypatch, defs={"prompt_len": str(p), "output_len": str(o)},
                    arrivals=1, warmup=0)
    pre = C + A * p + BATT * p * p / 2                  # the prefill instance: one iteration of the prompt
    link = 0.002 + (p - 1) * 147456 / bw                # x0 + the KV of p - 1 tokens over the link
    first = C + A * 1 + BATT * 1 * (p - 1 + 0.5)        # the decoder recomputes the last prompt token
    t0 = recs["sent"][0]
    assert recs["moved"][0] - t0 == pytest.approx(pre + link, rel=1e-12)
    assert recs["first_token"][0] - t0 == pytest.approx(pre + link + first, rel=1e-12)
    # two decode iterations; kv_decode counts the request's blocks as allocated (3 001 and 3 002 tokens:
    # 188 blocks of 16 each time)
    dec = 2 * (C + D + E * 188 * 16)
    assert recs["last_token"][0] - t0 == pytest.approx(pre + link + first + dec, rel=1e-12)
    assert stage(doc, "link")["completions"] == 1


def test_pd_bandwidth_link_utilisation_and_the_knee(monkeypatch):
    doc, recs = run("pd_bandwidth.sq", monkeypatch, sets={"bw_gbps": 5}, horizon=200, warmup=20)
    link = stage(doc, "link")
    # a FIFO of one server: its utilisation is its throughput times its mean transfer time
    # (over the window: the jobs at its edges make the two differ a little)
    assert link["utilisation"] == pytest.approx(link["throughput"] * link["service"], rel=0.01)
    mean_transfer = np.mean(0.002 + (recs["prompt"] - 1) * 147456 / 5e9)
    assert link["service"] == pytest.approx(mean_transfer, rel=0.1)
    # TTFT against the bandwidth on the same requests: falls, and stops falling once the transfer is small
    ttft = {bw: report("pd_bandwidth.sq", sets={"bw_gbps": bw}, horizon=200, warmup=20, seed=s)
            ["requests"]["ttft"]["mean"] for bw in (1, 5, 25, 100) for s in (1,)}
    assert ttft[1] > ttft[5] > ttft[25] > ttft[100]
    assert ttft[1] - ttft[5] > 10 * (ttft[25] - ttft[100])
    assert (ttft[25] - ttft[100]) / ttft[100] < 0.05


# agent_prefix.sq


def test_agent_prefix_hits_by_hand_and_tokens_conserved(monkeypatch):
    doc, recs = run("agent_prefix.sq", monkeypatch, arrivals=12, horizon=math.inf, warmup=0)
    assert pool(doc, "kv")["preemptions"] == 0
    # each follow-up finds its whole previous sequence (prompt + output) in whole blocks, never its last token
    order = np.lexsort((recs["turn"], recs["session"]))
    s, t = recs["session"][order], recs["turn"][order]
    prompt, out, cached = recs["prompt"][order], recs["output"][order], recs["cached"][order]
    follow = s[1:] == s[:-1]
    assert np.all(t[1:][follow] == t[:-1][follow] + 1)
    k = prompt[:-1] + out[:-1]
    assert np.array_equal(cached[1:][follow], (k[follow] - 1) // 16 * 16)
    assert np.all(cached[np.r_[True, ~follow]] == 0)
    assert doc["observes"]["full_hit"]["mean"] == 1
    # tokens in = tokens computed + hits: the engine computed each prompt's misses and each output but its last
    e = stage(doc, "engine")
    assert e["tokens"] * e["iterations"] == pytest.approx((prompt - cached + out - 1).sum())
    assert doc["requests"]["prefix_cache_hit_rate"] == pytest.approx(cached.sum() / prompt.sum())


def test_agent_prefix_hit_rate_rises_with_the_cache():
    rates = {}
    for blocks in (1500, 2500, 4000):
        rates[blocks] = np.mean([report("agent_prefix.sq", sets={"blocks": blocks}, horizon=400, warmup=60,
                                        seed=s)["requests"]["prefix_cache_hit_rate"] for s in (1, 2)])
    assert rates[1500] < rates[2500] < rates[4000]
    assert rates[1500] < 0.3 and rates[4000] > 0.9


# slo_attain.sq


def _good(rows, ttft, tpot):
    good = 0
    for r in rows:
        first, sent, last, out = (float(r[k]) for k in ("first_token", "sent", "last_token", "output"))
        ok = first - sent <= ttft and (out <= 1 or (last - first) / (out - 1) <= tpot)
        good += ok
    return good


def test_slo_attain_goodput_from_the_records(tmp_path):
    recs, rep = tmp_path / "r.csv", tmp_path / "r.json"
    r = subprocess.run([SERQ, "run", str(HERE / "slo_attain.sq"), "--set", "Lambda=9", "--horizon", "200",
                        "--warmup", "20", "--slo", "ttft=0.5,tpot=0.05", "--records", str(recs), "--json",
                        "-o", str(rep), "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(rep.read_text())
    with open(recs, newline="") as f:
        rows = list(csv.DictReader(f))
    good = _good(rows, 0.5, 0.05)
    q = doc["requests"]
    assert q["completed"] == len(rows) and q["good"] == good
    assert 0 < good < len(rows)  # a load where some requests miss
    assert q["attainment"] == pytest.approx(good / len(rows))
    assert q["goodput"] == pytest.approx(good / (doc["end"] - doc["warmup"]))


def test_slo_attain_find_against_direct_runs():
    _cols, rows = serq_sweep.find(str(HERE / "slo_attain.sq"), ["requests.attainment >= 0.95"],
                                  ("Lambda", "8:12:1"), seeds="1..2", horizon=100, warmup=15,
                                  slo={"ttft": 0.5, "tpot": 0.05}, workers=0, progress=False)
    (row,) = rows
    assert row["outcome"] == "found" and row["fails"] == row["Lambda"] + 1

    def attainment(lam):
        out = []
        for s in (1, 2):
            r = serq_sim.run(compiled("slo_attain.sq", sets={"Lambda": lam}), horizon=100, warmup=15, seed=s)
            r.set_slo({"ttft": 0.5, "tpot": 0.05})
            out.append(json.loads(encode_json(r))["requests"]["attainment"])
        return np.mean(out)

    assert attainment(row["Lambda"]) >= 0.95 > attainment(row["fails"])


def test_slo_attain_target():
    from serq_vllm.target import target

    config = target(compiled("slo_attain.sq"))["config"]
    assert config["max_num_batched_tokens"] == 2048 and config["max_num_seqs"] == 256
    assert config["num_gpu_blocks"] == 8011 and config["block_size"] == 16


# records_metrics.sq


def _pct(values, q):
    """numpy's percentile (linear interpolation) by hand."""
    v = sorted(values)
    i = (len(v) - 1) * q / 100
    lo = math.floor(i)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (i - lo)


def test_records_metrics_recomputed_with_csv_alone(tmp_path, monkeypatch):
    recs, rep = tmp_path / "requests.csv", tmp_path / "report.json"
    r = subprocess.run([SERQ, "run", str(HERE / "records_metrics.sq"), "--records", str(recs), "--json", "-o",
                        str(rep), "--slo", "ttft=0.05,tpot=0.018", "--no-progress"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(rep.read_text())
    with open(recs, newline="") as f:
        rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
    q = doc["requests"]
    assert q["completed"] == len(rows) > 0
    per = {
        "ttft": [r["first_token"] - r["sent"] for r in rows],
        "tpot": [(r["last_token"] - r["first_token"]) / (r["output"] - 1) for r in rows if r["output"] > 1],
        "e2el": [r["last_token"] - r["sent"] for r in rows],
        "queue": [r["admitted"] - r["sent"] for r in rows],
        "prefill": [r["first_token"] - r["admitted"] for r in rows],
        "decode": [r["last_token"] - r["first_token"] for r in rows],
        "infer": [r["last_token"] - r["admitted"] for r in rows],
    }
    for name, v in per.items():
        m = q[name]
        mean = sum(v) / len(v)
        assert m["count"] == len(v), name
        assert m["mean"] == pytest.approx(mean, rel=1e-12), name
        assert m["std"] == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in v) / len(v)), rel=1e-9), name
        assert m["median"] == pytest.approx(_pct(v, 50), rel=1e-12), name
        for p in (90, 95, 99):
            assert m[f"p{p}"] == pytest.approx(_pct(v, p), rel=1e-12), (name, p)
    # the run drains: the ITL gaps are each request's output - 1, adding up to its decode time
    assert q["itl"]["count"] == sum(r["output"] - 1 for r in rows)
    assert q["itl"]["mean"] == pytest.approx(sum(per["decode"]) / q["itl"]["count"], rel=1e-9)
    duration = doc["end"] - doc["warmup"]
    assert doc["end"] == pytest.approx(max(r["last_token"] for r in rows))
    assert q["total_input_tokens"] == sum(r["prompt"] for r in rows)
    assert q["total_output_tokens"] == sum(r["output"] for r in rows)
    assert q["request_throughput"] == pytest.approx(len(rows) / duration)
    assert q["output_throughput"] == pytest.approx(sum(r["output"] for r in rows) / duration)
    assert q["total_token_throughput"] == pytest.approx(sum(r["output"] + r["prompt"] for r in rows) / duration)
    assert q["prefix_cache_hit_rate"] == pytest.approx(sum(r["cached"] for r in rows) / sum(r["prompt"] for r in rows))
    good = _good([{k: str(v) for k, v in r.items()} for r in rows], 0.05, 0.018)
    assert q["good"] == good and 0 < good < len(rows)
    assert q["goodput"] == pytest.approx(good / duration)
    # and the tiers agree on the run
    run("records_metrics.sq", monkeypatch)


# router4.sq


def test_router4_round_robin_placement_by_hand(monkeypatch):
    doc, recs = run("router4.sq", monkeypatch, sets={"policy": 0}, horizon=200, warmup=0)
    # the records' turn counts from 1 (turn_no), session is the serial: turn k of session s goes to
    # replica (s + k - 1) % 4
    assert np.array_equal(recs["engine"], (recs["session"] + recs["turn"] - 1) % 4)
    assert sorted(set(recs["engine"].tolist())) == [0, 1, 2, 3]


def test_router4_least_loaded_spreads_a_burst(monkeypatch):
    doc, recs = run("router4.sq", monkeypatch, sets={"policy": 1, "Lambda": 1e6, "p_more": 0}, arrivals=4,
                    horizon=math.inf, warmup=0)
    order = np.argsort(recs["session"])
    assert list(recs["engine"][order]) == [0, 1, 2, 3]


def test_router4_one_replica_is_one_run_under_every_policy():
    docs = [encode_json(serq_sim.run(compiled("router4.sq", sets={"N": 1, "policy": p}), horizon=120, warmup=10))
            for p in (0, 1, 2)]
    assert docs[0] == docs[1] == docs[2]


def test_router4_hit_rates_ordered():
    for seed in (1, 2):
        hit = {p: report("router4.sq", sets={"policy": p}, horizon=200, warmup=40, seed=seed)
               ["requests"]["prefix_cache_hit_rate"] for p in (0, 1, 2)}
        assert 2 * hit[0] < hit[1] < hit[2]
        assert hit[0] < 0.2 and hit[2] > 0.75


# tp_choice.sq


@pytest.mark.parametrize("tp, s", [(1, 1.0), (2, 0.55)])
def test_tp_choice_one_request_by_hand(monkeypatch, tp, s):
    doc, recs = run("tp_choice.sq", monkeypatch, sets={"tp": tp}, defs={"prompt_len": "1000", "output_len": "2"},
                    arrivals=1, warmup=0)
    pre = C + s * (A * 1000 + BATT * 1000 * 500)
    dec = C + s * (D + E * 63 * 16)  # one decoder, its 1 001 tokens in 63 blocks of 16
    t0 = recs["sent"][0]
    assert recs["first_token"][0] - t0 == pytest.approx(pre, rel=1e-12)
    assert recs["last_token"][0] - t0 == pytest.approx(pre + dec, rel=1e-12)


def test_tp_choice_caches_and_router(monkeypatch):
    from serq_vllm.target import target

    assert target(compiled("tp_choice.sq", sets={"tp": 2}))["config"]["num_gpu_blocks"] == 22802
    doc, recs = run("tp_choice.sq", monkeypatch, sets={"tp": 1, "Lambda": 1e6}, arrivals=2, horizon=math.inf,
                    warmup=0)
    assert sorted(recs["engine"].tolist()) == [0, 1]


@pytest.mark.parametrize("tp", [1, 2])
def test_tp_choice_littles_law(monkeypatch, tp):
    doc, recs = run("tp_choice.sq", monkeypatch, sets={"tp": tp}, arrivals=300, horizon=math.inf, warmup=0)
    # drained from the first arrival: the time-average of the requests in the system is their total time
    # in it over the run
    assert doc["mean_live"] == pytest.approx((recs["last_token"] - recs["sent"]).sum() / doc["end"], rel=1e-9)
    assert doc["requests"]["completed"] == 300


def test_tp_choice_paired_comparison():
    table = serq_sweep.compare(str(HERE / "tp_choice.sq"), sets={"tp": [1, 2]}, seeds="1..4", horizon=150,
                               warmup=20, workers=0, progress=False,
                               figures=["requests.ttft.mean", "requests.tpot.mean"])
    rows = {r["figure"]: r for r in table.to_dict("records")}
    # TP=2 prefills a prompt in fewer seconds (the first token sooner); its one batch of every decoder costs
    # more an iteration than each of the pair's half batches at s2 = 0.55 > 0.5 (the tokens slower)
    assert rows["requests.ttft.mean"]["diff"] + rows["requests.ttft.mean"]["ci_paired"] < 0
    assert rows["requests.tpot.mean"]["diff"] - rows["requests.tpot.mean"]["ci_paired"] > 0


def test_burst_under_a_warm_up_says_every_request_is_left_out(monkeypatch):
    # every request is sent at t = 0, before the warm-up's end: the request metrics cover none of them,
    # and the report says so (it printed `completed 0` and nothing else)
    doc, _ = run("burst.sq", monkeypatch, warmup=1)
    assert doc["requests"]["completed"] == 0
    (note,) = [n for n in doc["notes"] if n.startswith("warning: too few samples")]
    assert "record request keeps none of its 500 rows, each of a request sent before the warm-up's end" in note
    assert note.endswith("the run drained at t=1.94059: shorten the warm-up (--warmup)")
    assert doc["codes"][doc["notes"].index(note)] == "few-samples"
    # however short the warm-up: every request is sent at 0 (the second wave waits in the engine's queue)
    doc, _ = run("burst.sq", monkeypatch, warmup=1e-9)
    assert doc["requests"]["completed"] == 0 and any("keeps none of its 500 rows" in n for n in doc["notes"])
    # without one, every row is kept and nothing is said
    doc, _ = run("burst.sq", monkeypatch)
    assert doc["requests"]["completed"] == 500 and doc["notes"] == []


def test_agent_prefix_find_the_fewest_blocks():
    kw = {"seeds": "1..2", "horizon": 300, "warmup": 60}
    _cols, rows = serq_sweep.find(str(HERE / "agent_prefix.sq"), ["requests.prefix_cache_hit_rate >= 0.9"],
                                  ("blocks", "1000:8000:250"), workers=0, progress=False, **kw)
    (row,) = rows
    assert row["outcome"] == "found_smallest" and row["fails"] == row["blocks"] - 250

    def rate(blocks):
        return np.mean([report("agent_prefix.sq", sets={"blocks": blocks}, horizon=300, warmup=60, seed=s)
                        ["requests"]["prefix_cache_hit_rate"] for s in (1, 2)])

    assert rate(row["blocks"]) >= 0.9 > rate(row["fails"])


# kv_offload.sq


def test_kv_offload_without_the_tier_is_the_librarys_request(monkeypatch):
    docs = [run("kv_offload.sq", monkeypatch, sets={"tier": 0, "path": p}, horizon=300, warmup=30) for p in (0, 1)]
    (lib, lib_recs), (mine, mine_recs) = docs
    assert lib["requests"] == mine["requests"] and lib["observes"] == mine["observes"]
    assert lib["requests"]["completed"] > 100 and pool(lib, "kv")["preemptions"] > 0
    for k in lib_recs["request"]:
        assert np.array_equal(lib_recs["request"][k], mine_recs["request"][k]), k
    assert len(lib_recs["hits"]["cpu"]) == 0 and mine_recs["hits"]["cpu"].sum() == 0


def test_kv_offload_tokens_in_are_computed_plus_both_hits(monkeypatch):
    doc, recs = run("kv_offload.sq", monkeypatch, arrivals=40, horizon=math.inf, warmup=0)
    req, hits = recs["request"], recs["hits"]
    assert np.array_equal(req["session"], hits["session"]) and np.array_equal(req["turn"], hits["turn"])
    assert pool(doc, "kv")["preemptions"] == 0
    e = stage(doc, "engine")
    assert e["tokens"] * e["iterations"] == pytest.approx((req["prompt"] - hits["gpu"] - hits["cpu"]
                                                          + req["output"] - 1).sum())
    assert np.array_equal(req["cached"], hits["gpu"] + hits["cpu"])
    # the tier gives back only what the GPU evicted to it
    assert 0 < hits["cpu"].sum() <= pool(doc, "kv")["evicted_units"]
    assert pool(doc, "kv")["spills"] * 16 == pool(doc, "kv")["evicted_units"]


def test_kv_offload_cuts_recompute_and_preemptions():
    off, on = (report("kv_offload.sq", sets={"tier": t}, horizon=400, warmup=60, seed=1) for t in (0, 1))
    tokens = [stage(d, "engine")["tokens"] * stage(d, "engine")["iterations"] for d in (off, on)]
    assert tokens[1] < tokens[0] / 2
    assert on["requests"]["ttft"]["mean"] < off["requests"]["ttft"]["mean"] / 2
    assert pool(on, "kv")["preemptions"] < pool(off, "kv")["preemptions"]


SIDE_HOLD = """
pool side {{ cap 1000; {via} }}
pool reqs {{ cap 4; admit via engine; }}
pool kv {{ cap 16000; block 16; evict lru; preempt lifo; }}
stage engine : step {{ budget 64; cost 1; memory kv; }}
workload {{ arrive renewal(~det(2.5)); }}
session {{
  set t0 = now;
  hold reqs (1), kv (min(40, budget_left(engine))) reserve (40) {{
    hold side (0) {{ }}
    prefill on engine (40) growing kv;
    set tf = now;
    decode on engine (5) growing kv;
  }}
  record request {{ sent = t0; first_token = tf; last_token = now; output = 6; }}
}}
run {{ horizon inf; warmup 0; seed 1; arrivals 2; }}
"""


@pytest.mark.parametrize("via, first", [("admit via engine;", [3.5, 6.5]), ("", [3.5, 7.5])])
def test_a_hold_between_the_engines_admission_and_the_prefill(tmp_path, monkeypatch, via, first):
    # request 1 is sent at 5, while request 0 decodes (iterations at 2.5, 3.5, 4.5, 5.5, …), and admitted by
    # the iteration that starts at 5.5. A hold of a pool the engine admits is admitted in that planning, and
    # the prefill is in that iteration (first token at 6.5); one admitted at the settle comes after the
    # planning, and the prefill waits for the next iteration (docs/vllm.md, "A CPU offload tier")
    path = tmp_path / "side.sq"
    path.write_text(SIDE_HOLD.format(via=via))
    _doc, recs = run_both(serq_frontend.compile(path=str(path)), monkeypatch)
    assert list(recs["sent"]) == [2.5, 5.0]
    assert list(recs["first_token"]) == first


def test_plot_log_x_of_a_ttft_cdf_ticked_one_two_five(tmp_path):
    from matplotlib.ticker import NullFormatter

    recs = tmp_path / "rr.csv"
    r = subprocess.run([SERQ, "run", str(HERE / "router4.sq"), "--set", "policy=1", "--horizon", "200", "--warmup",
                        "40", "--records", str(recs), "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with open(recs, newline="") as f:
        ttft = [float(row["first_token"]) - float(row["sent"]) for row in csv.DictReader(f)]
    assert 1.3 <= math.log10(max(ttft) / min(ttft)) <= 4  # where matplotlib's labels ran into each other
    ax = serq_sweep.plot(str(recs), cdf_of=["ttft"], log="x").axes[0]
    ax.figure.canvas.draw()
    lo, hi = ax.get_xlim()
    shown = [t for t in ax.get_xticks() if lo <= t <= hi]
    labels = [t.get_text() for t in ax.get_xticklabels() if lo <= t.get_position()[0] <= hi]
    # 1, 2 and 5 times the powers of ten, written as numbers
    assert all(round(t / 10 ** math.floor(math.log10(t)), 9) in (1, 2, 5) for t in shown)
    assert labels == [f"{t:g}" for t in shown] and len(shown) >= 3
    assert isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)


def test_plot_trade_off_names_each_point_by_its_budget(budget_table):
    table, out = budget_table
    ax = serq_sweep.plot(str(out), x="requests.itl.p99", y="requests.ttft.mean").axes[0]
    by = table.groupby("B").mean(numeric_only=True)
    texts = {t.get_text(): t.xy for t in ax.texts}
    assert set(texts) == {"B=256", "B=1024", "B=4096"}
    for b in (256, 1024, 4096):
        assert texts[f"B={b}"] == pytest.approx((by["requests.itl.p99"][b], by["requests.ttft.mean"][b]))
    # a line per --hue: the points are named by the other names only
    import pandas as pd

    parts = []
    for v in (1, 2):
        part = table.copy()
        part.insert(2, "hue", v)  # a swept name (before seed)
        part["point"] += 10 * v
        part["key"] = part["key"] + str(v)
        parts.append(part)
    two = pd.concat(parts, ignore_index=True)
    ax = serq_sweep.plot(two, x="requests.itl.p99", y="requests.ttft.mean", hue="hue").axes[0]
    assert sorted(t.get_text() for t in ax.texts) == sorted(["B=256", "B=1024", "B=4096"] * 2)


def test_slo_attain_past_the_knee_tpot_fails_first():
    r = serq_sim.run(compiled("slo_attain.sq", sets={"Lambda": 11}), horizon=200, warmup=20)
    att = {}
    for name in ("ttft", "tpot"):
        r.set_slo({name: {"ttft": 0.5, "tpot": 0.05}[name]})
        att[name] = json.loads(encode_json(r))["requests"]["attainment"]
    assert att["tpot"] < att["ttft"] and att["tpot"] < 0.95


def test_agent_prefix_preemptions_rise_with_the_cache_below_the_cliff():
    # not monotone, and rightly: admission needs the prompt's blocks only, so a larger cache runs more
    # requests at once, fewer wait, and more of the running ones outgrow it (docs/vllm.md)
    small, large = (report("agent_prefix.sq", sets={"blocks": b}, horizon=600, warmup=90, seed=1) for b in (1500, 2000))
    assert pool(large, "kv")["preemptions"] > pool(small, "kv")["preemptions"] > 0
    assert pool(large, "kv")["holders"] > pool(small, "kv")["holders"]
    assert pool(large, "reqs")["queue"] < pool(small, "reqs")["queue"]
