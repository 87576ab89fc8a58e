"""Round 38 of programs as vLLM and llm-d engineers and capacity planners write them (peer_programs38/), each
run on both simulator tiers and checked against an independent truth: three requests traced iteration by
iteration against ``--dump``'s gauges and the records; a prefill-heavy RAG service and the long-prefill
threshold's cut of the decoders' stalls (one stall by hand on a step clock, every token computed once, the
ITL tail falling with the threshold)."""

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

HERE = Path(__file__).parent / "peer_programs38"
SERQ = str(Path(sys.executable).parent / "serq")


def compiled(name: str, *, sets=None, defs=None):
    return serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})


def run(name: str, monkeypatch, *, sets=None, defs=None, **kw):
    """(JSON report, records) of peer_programs38/NAME on both tiers, which must agree byte for byte."""
    return run_both(compiled(name, sets=sets, defs=defs), monkeypatch, **kw)


def report(name: str, *, sets=None, defs=None, **kw) -> dict:
    return json.loads(encode_json(serq_sim.run(compiled(name, sets=sets, defs=defs), **kw)))


def serq(*args, timeout=60, here=None):
    """``serq ARGS``, status 0, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process (a test of the report, records or configuration a command gives, not of the process)."""
    if here is not None:
        r = here(*map(str, args))
    else:
        r = subprocess.run([SERQ, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_every_program_is_in_fmt_form():
    files = sorted(HERE.glob("*.sq"))
    assert len(files) >= 8
    r = subprocess.run([SERQ, "fmt", "--check", *map(str, files)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# step3.sq


def _step3_by_hand():
    """vLLM's scheduler written out for step3.csv's three requests (B 16, two slots, ample KV): each iteration
    the running requests take a decode token or their prompt's next chunk in admission order, then the waiting
    ones are admitted while a slot and budget last; an iteration lasts 1 + 0.01 per token. The iterations'
    (start, tokens) and each request's (admitted, first token, last token)."""
    reqs = [dict(sent=0.0, p=10, o=3), dict(sent=0.5, p=20, o=2), dict(sent=1.5, p=6, o=4)]
    for r in reqs:
        r.update(done=0, outs=0, adm=None, first=None, last=None)
    t, its, running, waiting = 0.0, [], [], []
    pending = list(reqs)
    while pending or running or waiting:
        waiting += [r for r in pending if r["sent"] <= t + 1e-12]
        pending = [r for r in pending if r["sent"] > t + 1e-12]
        if not running and not waiting:
            t = pending[0]["sent"]
            continue
        left, sched = 16, []
        for r in running:
            k = min(r["p"] - r["done"], left) if r["done"] < r["p"] else 1
            sched.append((r, k))
            left -= k
        while waiting and len(running) < 2 and left > 0:
            r = waiting.pop(0)
            r["adm"] = t
            running.append(r)
            k = min(r["p"], left)
            sched.append((r, k))
            left -= k
        n = sum(k for _, k in sched)
        its.append((t, n))
        t += 1 + 0.01 * n
        for r, k in sched:
            if r["done"] < r["p"]:
                r["done"] += k
                if r["done"] == r["p"]:
                    r["outs"], r["first"] = 1, t
            else:
                r["outs"] += 1
            if r["outs"] == r["o"]:
                r["last"] = t
        running = [r for r in running if r["outs"] < r["o"]]
    return its, reqs


def test_step3_iterations_by_hand(monkeypatch):
    its, reqs = _step3_by_hand()
    assert [n for _, n in its] == [10, 16, 6, 7, 1, 1, 1]
    doc, recs = run("step3.sq", monkeypatch)
    e = stage(doc, "engine")
    assert e["iterations"] == 7 and doc["end"] == pytest.approx(7.42, abs=1e-12)
    assert e["tokens"] * e["iterations"] == pytest.approx(42) == sum(r["p"] + r["o"] - 1 for r in reqs)
    order = np.argsort(recs["session"])
    for col, key in (("sent", "sent"), ("admitted", "adm"), ("first_token", "first"), ("last_token", "last")):
        assert np.allclose(recs[col][order], [r[key] for r in reqs], rtol=0, atol=1e-12), col
    assert doc["requests"]["ttft"]["mean"] == pytest.approx((1.1 + 2.82 + 2.89) / 3)
    # (mixed, decode-only, prefill-only) iterations: 2, 3 and 4 are mixed; 1 a prefill; 5 to 7 decodes
    assert (e["prefill_only"], e["decode_only"], e["mixed"]) == (1, 3, 3)


def test_step3_dump_gauges_are_the_iterations(tmp_path):
    its, _ = _step3_by_hand()
    serq("run", HERE / "step3.sq", "--dump", tmp_path / "d", "--no-progress", "-o", tmp_path / "r.txt")

    def points(name):
        with open(tmp_path / "d" / "gauge" / f"{name}.csv", newline="") as f:
            return np.array([(float(r["time"]), float(r["value"])) for r in csv.DictReader(f)])

    starts = [t for t, _ in its]
    assert starts == pytest.approx([0, 1.1, 2.26, 3.32, 4.39, 5.40, 6.41])
    assert np.allclose(points("running"), [(0, 1), (1.1, 2), (4.39, 1), (7.42, 0)])
    assert np.allclose(points("waiting"), [(0, 0), (0.5, 1), (1.1, 0), (1.5, 1), (3.32, 0)])
    # KV in whole blocks of 4, allocated at the start of the iteration that computes the tokens
    assert np.allclose(points("kv_used"), [(0, 12), (1.1, 28), (2.26, 32), (4.39, 8), (6.41, 12), (7.42, 0)])
    # the observes' samples are the records' instants
    with open(tmp_path / "d" / "first_token.csv", newline="") as f:
        firsts = sorted(float(r["value"]) for r in csv.DictReader(f))
    assert firsts == pytest.approx([1.1, 3.32, 4.39])


# rag_itl.sq

_RAG_PAIR = {"step_cost": "1 + 0.001 * tokens", "gap": "~det(0.5)", "prompt_len": "serial == 0 ? 100 : 8000",
             "output_len": "serial == 0 ? 5 : 2"}


@pytest.mark.parametrize("c, gaps, long_first, long_gap", [
    # no threshold: the long prompt's 8 000 tokens beside the decoder's one, one iteration of 9.001 s; the
    # long request's decode beside the short one's (1.002)
    (0, [9.001, 1.002, 1.001, 1.001], 1.6 + 9.001, 1.002),
    # C = 1 000: chunks of 1 000 while the decoder runs (4 of them), then the last 4 000 alone, uncut, and
    # the long request's decode alone (1.001)
    (1000, [2.001, 2.001, 2.001, 2.001], 1.6 + 4 * 2.001 + 5.0, 1.001),
])
def test_rag_decoder_stall_by_hand(monkeypatch, c, gaps, long_first, long_gap):
    doc, recs = run("rag_itl.sq", monkeypatch, sets={"C": c}, defs=_RAG_PAIR, arrivals=2, horizon=math.inf,
                    warmup=0)
    order = np.argsort(recs["session"])
    short, long_ = order
    # the short request (sent at 0.5) prefills alone in [0.5, 1.6]; the long one is sent at 1.0
    assert recs["first_token"][short] == pytest.approx(1.6)
    assert recs["last_token"][short] - recs["first_token"][short] == pytest.approx(sum(gaps))
    assert doc["requests"]["itl"]["count"] == 4 + 1
    # the ITL samples: the short request's four gaps and the long one's single gap
    assert doc["requests"]["itl"]["mean"] == pytest.approx((sum(gaps) + long_gap) / 5)
    assert doc["requests"]["itl"]["median"] == pytest.approx(sorted(gaps + [long_gap])[2])
    assert recs["first_token"][long_] == pytest.approx(long_first)
    e = stage(doc, "engine")
    assert e["tokens"] * e["iterations"] == pytest.approx(100 + 4 + 8000 + 1)


def _threshold_engine(n, gap, plen, olen, budget, c, slots=128):
    """vLLM's scheduler with long_prefill_token_threshold c written out, on the step clock 1 + 0.001 a token,
    ample KV, request i sent at (i + 1) gap: at each iteration's start the cap is c while more than one request
    runs or waits (none at c = 0); the running requests in admission order take a decode token or a chunk of
    their prompt (cut to the budget left and the cap), then the waiting ones are admitted while slots and
    budget last, their first chunk cut the same way. Each request's (first token, last token)."""
    reqs = [dict(sent=(i + 1) * gap, p=plen(i), o=olen(i), done=0, outs=0) for i in range(n)]
    t, pending, waiting, running = 0.0, list(reqs), [], []
    while pending or waiting or running:
        waiting += [r for r in pending if r["sent"] <= t + 1e-12]
        pending = [r for r in pending if r["sent"] > t + 1e-12]
        if not waiting and not running:
            t = pending[0]["sent"]
            continue
        cap = c if c > 0 and len(running) + len(waiting) > 1 else math.inf
        left, sched = budget, []
        for r in running:
            if left <= 0:
                break
            k = min(r["p"] - r["done"], left, cap) if r["done"] < r["p"] else 1
            sched.append((r, k))
            left -= k
        while waiting and len(running) < slots and left > 0:
            r = waiting.pop(0)
            running.append(r)
            k = min(r["p"], left, cap)
            sched.append((r, k))
            left -= k
        t += 1 + 0.001 * sum(k for _, k in sched)
        for r, k in sched:
            if r["done"] < r["p"]:
                r["done"] += k
                if r["done"] == r["p"]:
                    r["outs"], r["first"] = 1, t
            else:
                r["outs"] += 1
            if r["outs"] == r["o"]:
                r["last"] = t
        running = [r for r in running if r["outs"] < r["o"]]
    return [(r["first"], r["last"]) for r in reqs]


@pytest.mark.parametrize("n, gap, p, o, budget, c", [
    (12, 0.7, "300 + (serial * 737) % 2500", "1 + (serial * 13) % 9", 1024, 256),
    (20, 0.3, "50 + (serial * 911) % 3000", "2 + (serial * 7) % 11", 2048, 500),
    (15, 2.0, "8000", "3", 8192, 1000),
    (10, 0.1, "100 + (serial * 97) % 700", "5", 512, 128),
    (12, 0.7, "300 + (serial * 737) % 2500", "1 + (serial * 13) % 9", 1024, 0),
])
def test_rag_against_the_threshold_written_out(monkeypatch, n, gap, p, o, budget, c):
    def at(expr):
        return lambda i: eval(expr.replace("serial", str(i)))  # the --def's body at serial i

    want = _threshold_engine(n, gap, at(p), at(o), budget, c)
    _doc, recs = run("rag_itl.sq", monkeypatch, sets={"C": c, "B": budget}, arrivals=n, horizon=math.inf,
                     warmup=0, defs={"step_cost": "1 + 0.001 * tokens", "gap": f"~det({gap})", "prompt_len": p,
                                     "output_len": o})
    order = np.argsort(recs["session"])
    assert np.allclose(recs["first_token"][order], [f for f, _ in want], rtol=1e-12, atol=1e-9)
    assert np.allclose(recs["last_token"][order], [last for _, last in want], rtol=1e-12, atol=1e-9)


def test_rag_every_token_computed_once(monkeypatch):
    doc, recs = run("rag_itl.sq", monkeypatch, sets={"C": 1024}, arrivals=25, horizon=math.inf, warmup=0)
    e = stage(doc, "engine")
    assert pool(doc, "kv")["preemptions"] == 0 and recs["cached"].sum() == 0
    assert e["tokens"] * e["iterations"] == pytest.approx((recs["prompt"] + recs["output"] - 1).sum())
    assert len(recs["prompt"]) == 25 and recs["prompt"].min() >= 6000 and recs["prompt"].max() < 10000


def test_rag_threshold_cuts_the_itl_tail():
    table = serq_sweep.sweep(str(HERE / "rag_itl.sq"), sets={"C": [0, 512, 2048]}, seeds="1..2", horizon=150,
                             warmup=20, workers=0, progress=False)
    by = table.groupby("C").mean(numeric_only=True)
    itl, ttft = by["requests.itl.p99"], by["requests.ttft.mean"]
    assert itl[0] > 2 * itl[2048] and itl[2048] > itl[512]
    assert ttft[0] < ttft[2048] < ttft[512]
    for _seed, rows in table.groupby("seed"):
        t = rows.set_index("C")["requests.itl.p99"]
        assert t[0] > t[2048] > t[512]


def test_rag_target_threshold(serq_in_process):
    out = json.loads(serq("vllm", "target", HERE / "rag_itl.sq", "--set", "C=1024", here=serq_in_process).stdout)
    cfg = out["config"]
    assert cfg["long_prefill_token_threshold"] == 1024 and cfg["max_num_batched_tokens"] == 8192
    assert cfg["num_gpu_blocks"] == 8011 and cfg["max_num_seqs"] == 128
    assert json.loads(serq("vllm", "target", HERE / "rag_itl.sq", here=serq_in_process).stdout)["config"][
        "long_prefill_token_threshold"] == 0


# chat_history.sq


def test_chat_history_hits_by_hand(monkeypatch):
    doc, recs = run("chat_history.sq", monkeypatch, defs={"msg_len": "100", "out_len": "20", "again": "turn_no < 4"},
                    arrivals=3, horizon=math.inf, warmup=0)
    assert sorted(recs["turn"]) == [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    for k, (prompt, hit) in enumerate([(1100, 0), (1220, 1104), (1340, 1232), (1460, 1344)], start=1):
        assert np.all(recs["prompt"][recs["turn"] == k] == prompt)
        assert np.all(recs["cached"][recs["turn"] == k] == hit)
        if k > 1:
            assert hit == (prompt - 100 - 1) // 16 * 16  # the previous prompt and answer, never its last token
    e = stage(doc, "engine")
    assert e["tokens"] * e["iterations"] == pytest.approx((recs["prompt"] - recs["cached"] + 20 - 1).sum())


def test_chat_history_hit_rate_by_turn_from_the_records(tmp_path, serq_in_process):
    out = tmp_path / "chat.csv"
    serq("run", HERE / "chat_history.sq", "--horizon", 300, "--warmup", 30, "--records", out, "--json", "-o",
         tmp_path / "r.json", "--no-progress", here=serq_in_process)
    doc = json.loads((tmp_path / "r.json").read_text())
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    by = {}
    for r in rows:
        c, p = by.get(int(r["turn"]), (0, 0))
        by[int(r["turn"])] = (c + int(r["cached"]), p + int(r["prompt"]))
    rate = {k: c / p for k, (c, p) in by.items()}
    assert rate[1] == 0  # a conversation's first turn has nothing of its own cached
    # with the whole cache (light load) a follow-up finds most of its history, more of it the longer it is
    assert 0.85 < rate[2] < rate[3] < rate[4] < 1
    assert doc["requests"]["prefix_cache_hit_rate"] == pytest.approx(
        sum(c for c, _ in by.values()) / sum(p for _, p in by.values()))
    assert doc["requests"]["completed"] == len(rows)


def test_chat_history_hits_fall_with_the_cache(monkeypatch):
    rates = {b: report("chat_history.sq", sets={"blocks": b}, horizon=300, warmup=30)["requests"]
             ["prefix_cache_hit_rate"] for b in (1500, 3000, 8010)}
    assert rates[1500] < rates[3000] < rates[8010]
    assert rates[1500] < 0.2 and rates[8010] > 0.8


# preempt_storm.sq


def test_preempt_storm_by_hand(monkeypatch):
    doc, recs = run("preempt_storm.sq", monkeypatch, sets={"N": 3, "P": 16, "O": 40, "blocks": 7},
                    defs={"step_cost": "1"})
    e, kv = stage(doc, "engine"), pool(doc, "kv")
    assert e["iterations"] == 63 and (e["prefill_only"], e["mixed"]) == (2, 0)
    assert e["tokens"] * e["iterations"] == pytest.approx(197)
    assert (kv["preemptions"], kv["evicted_units"]) == (2, 80)
    order = np.argsort(recs["session"])
    assert list(recs["preemptions"][order]) == [0, 1, 1]
    assert np.all(recs["cached"] == 0)  # the first admission's hit: nothing shared
    # on the step clock: every first token after iteration 1; session 0 ends with iteration 40, session 1
    # with 47 (it resumes in 41 with 33 of its 40 outputs), session 2 with 63 (it resumes with 17)
    assert np.all(recs["first_token"] == 1) and np.all(recs["admitted"] == 0)
    assert list(recs["last_token"][order]) == [40, 47, 63]
    assert pool(doc, "reqs")["admissions"] == 5


def _storm(doc, recs):
    e, kv = stage(doc, "engine"), pool(doc, "kv")
    job = (recs["prompt"] - recs["cached"] + recs["output"] - 1).sum()
    return kv["preemptions"], e["tokens"] * e["iterations"] - job


@pytest.mark.parametrize("blocks", [600, 1100, 2100])
def test_preempt_storm_records_against_the_totals(monkeypatch, blocks):
    doc, recs = run("preempt_storm.sq", monkeypatch, sets={"N": 40, "P": 500, "O": 500, "blocks": blocks})
    pre, recomputed = _storm(doc, recs)
    assert len(recs["session"]) == 40 == doc["requests"]["completed"]
    assert recs["preemptions"].sum() == pre
    assert doc["observes"]["preempted"]["mean"] * 40 == pytest.approx(pre)
    # a preemption recomputes what its cached blocks no longer hold; none, none recomputed
    assert (recomputed > 0) == (pre > 0) and recomputed >= 0
    if blocks == 2100:  # 40 x 999 tokens in whole blocks of 16: 63 blocks each, 2 520 in all
        assert pre > 0
    assert pool(doc, "reqs")["admissions"] == 40 + pre


def test_preempt_storm_more_blocks_fewer_preemptions(monkeypatch):
    seen = []
    for blocks in (600, 900, 1300, 1900, 2600):
        doc, recs = run("preempt_storm.sq", monkeypatch, sets={"N": 40, "P": 500, "O": 500, "blocks": blocks})
        seen.append((*_storm(doc, recs), doc["end"]))
    pre, recomputed, end = zip(*seen)
    assert list(pre) == sorted(pre, reverse=True) and pre[-1] == 0 and pre[0] > 0
    assert list(end) == sorted(end, reverse=True)
    assert recomputed[-1] == 0


# half_kv.sq

_HALF_FOUR = {"gap": "~det(0.001)", "prompt_len": "1000", "output_len": "10"}


@pytest.mark.parametrize("policy, to", [(0, [0, 1, 0, 1]), (1, [0, 1, 0, 0])])
def test_half_kv_four_requests_by_hand(monkeypatch, policy, to):
    doc, recs = run("half_kv.sq", monkeypatch, sets={"policy": policy}, defs=_HALF_FOUR, arrivals=4,
                    horizon=math.inf, warmup=0)
    routed = recs["routed"]
    assert list(routed["to"][np.argsort(routed["session"])]) == to
    # a replica's tokens: its requests' prompts and outputs but the last, each computed once
    n_small = sum(to)
    for name, n in (("large", 4 - n_small), ("small", n_small)):
        e = stage(doc, name)
        assert e["tokens"] * e["iterations"] == pytest.approx(n * (1000 + 9))
    assert pool(doc, "kvS")["preemptions"] == pool(doc, "kvL")["preemptions"] == 0


def _joined(recs):
    r, q = recs["routed"], recs["request"]
    to = {(s, t): j for s, t, j in zip(r["session"], r["turn"], r["to"])}
    return np.array([to[(s, t)] for s, t in zip(q["session"], q["turn"])])


def test_half_kv_least_loaded_preempts_on_the_small_replica(monkeypatch):
    doc, recs = run("half_kv.sq", monkeypatch, horizon=200, warmup=20)
    q, to = recs["request"], _joined(recs)
    assert pool(doc, "kvS")["preemptions"] > 10 and pool(doc, "kvL")["preemptions"] == 0
    # the records' preemptions are the pools', less those of requests still running or sent in the warm-up
    assert q["preemptions"][to == 1].sum() <= pool(doc, "kvS")["preemptions"]
    assert q["preemptions"][to == 0].sum() == 0
    ttft = q["first_token"] - q["sent"]
    assert ttft[to == 1].mean() > 5 * ttft[to == 0].mean()
    # the router balances the counts: the small replica takes close to half
    assert 0.4 < to.mean() < 0.55
    assert doc["observes"]["ttft_small"]["count"] >= (to == 1).sum()


def test_half_kv_equal_caches_are_symmetric():
    pre = {"kvL": [], "kvS": []}
    for s in (1, 2, 3, 4):
        doc = report("half_kv.sq", sets={"blocksS": 4005, "blocksL": 4005}, horizon=150, warmup=15, seed=s)
        for k in pre:
            pre[k].append(pool(doc, k)["preemptions"])
    assert sum(pre["kvL"]) > 0 and sum(pre["kvS"]) > 0
    # replica 0 takes the ties, so it is not exactly even, but neither side dominates over the seeds
    assert 0.5 < sum(pre["kvL"]) / sum(pre["kvS"]) < 2


def test_half_kv_kv_aware_paired():
    table = serq_sweep.compare(str(HERE / "half_kv.sq"), sets={"policy": [0, 1]}, seeds="1..3", horizon=200,
                               warmup=20, figures=["requests.ttft.mean", "pools.kvS.preemptions"], workers=0,
                               progress=False)
    rows = {r["figure"]: r for r in table.to_dict("records")}
    for f in ("requests.ttft.mean", "pools.kvS.preemptions"):
        assert rows[f]["diff"] + rows[f]["ci_paired"] < 0, rows[f]


# diurnal.sq


def _day_log():
    with open(HERE / "diurnal.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return np.array([float(r["think"]) for r in rows]), np.array([int(r["new"]) for r in rows])


def test_diurnal_replays_the_log(monkeypatch):
    sends, prompts = _day_log()
    assert len(sends) == 1363  # the program's N
    doc, recs = run("diurnal.sq", monkeypatch)
    kept = sends >= 20
    order = np.argsort(recs["sent"], kind="stable")
    assert np.allclose(recs["sent"][order], np.sort(sends[kept]), rtol=0, atol=1e-9)
    assert np.array_equal(np.sort(recs["prompt"]), np.sort(prompts[kept]))
    assert doc["requests"]["completed"] == kept.sum() == 1345
    hours = np.bincount((recs["sent"] // 20).astype(int), minlength=24)
    assert np.array_equal(hours, np.bincount((sends[kept] // 20).astype(int), minlength=24))
    # the night's hour against the afternoon's: the load sets the tail
    ttft = recs["first_token"] - recs["sent"]
    hour = recs["sent"] // 20
    assert np.quantile(ttft[(hour >= 1) & (hour < 6)], 0.99) < np.quantile(ttft[(hour >= 10) & (hour < 16)], 0.99)
    assert doc["end"] < sends.max() + 10  # it keeps up: the day drains within seconds of its last send


def test_diurnal_littles_law_over_the_whole_day(monkeypatch):
    doc, recs = run("diurnal.sq", monkeypatch, sets={"W": 0})
    assert doc["requests"]["completed"] == 1363
    g = doc["gauges"]["in_engine"]
    assert g["mean"] == pytest.approx((recs["last_token"] - recs["sent"]).sum() / doc["end"], rel=1e-9)
    e = stage(doc, "engine")
    job = (recs["prompt"] + recs["output"] - 1).sum()
    recomputed = e["tokens"] * e["iterations"] - job
    assert recs["cached"].sum() == 0
    assert (recomputed > 0) == (pool(doc, "kv")["preemptions"] > 0) and recomputed >= 0


# joint.sq

_JOINT = dict(seeds="1..2", horizon=150, warmup=15, workers=0, progress=False)


def test_joint_find_against_direct_runs():
    _cols, rows = serq_sweep.find(str(HERE / "joint.sq"), "requests.ttft.p99 <= 1", ("blocks", "1000:8000:250"),
                                  sets={"max_seqs": [32, 64]}, **_JOINT)
    by = {r["max_seqs"]: r for r in rows}
    # 32 slots: the queue is the slots', and no cache meets the target
    assert by[32]["outcome"] == "fails_everywhere"
    assert by[64]["outcome"] == "found_smallest" and by[64]["fails"] == by[64]["blocks"] - 250
    found = by[64]["blocks"]
    table = serq_sweep.sweep(str(HERE / "joint.sq"), sets={"max_seqs": [64], "blocks": [found - 250, found, 8000]},
                             **_JOINT)
    p99 = table.groupby("blocks")["requests.ttft.p99"].mean()
    assert p99[found] <= 1 < p99[found - 250]
    assert p99[8000] <= p99[found]


def test_joint_ample_blocks_change_nothing(monkeypatch):
    a, ra = run("joint.sq", monkeypatch, sets={"blocks": 8010}, horizon=100, warmup=10)
    b, rb = run("joint.sq", monkeypatch, sets={"blocks": 16000}, horizon=100, warmup=10)
    assert pool(a, "kv")["preemptions"] == pool(b, "kv")["preemptions"] == 0
    for k in ra:
        assert np.array_equal(ra[k], rb[k]), k
    assert a["requests"] == b["requests"]


def test_joint_preemptions_not_monotone_in_the_blocks():
    # the program's comment: 32 slots, seed 1, 300 s
    count, done = [], []
    for blocks in (600, 1000, 1500, 2500, 8010):
        doc = report("joint.sq", sets={"max_seqs": 32, "blocks": blocks})
        count.append(pool(doc, "kv")["preemptions"])
        done.append(doc["requests"]["completed"])
    assert count == [100, 156, 196, 162, 0]
    # the small caches serve fewer requests to preempt: the count a request completed falls
    assert done == sorted(done) and done[0] < done[-1] / 3
    per = [c / d for c, d in zip(count, done)]
    assert per == sorted(per, reverse=True)


# two_sizes.sq

# the A100 / Qwen3-8B profile's terms (lib/step_costs.sq's a100_qwen3_8b)
C, D, E, A, BATT = 0.013939, 0.00004105, 0.00000013786, 0.000051527, 0.0000000040196


def _member(doc, kind, name, j):
    (x,) = [x for x in doc[kind] if x["name"] == name and x["index"] == j]
    return x


def test_two_sizes_one_request_each_by_hand(monkeypatch):
    doc, recs = run("two_sizes.sq", monkeypatch, arrivals=2, horizon=math.inf, warmup=0,
                    defs={"gap": "~det(0.001)", "wants_large": "serial == 1", "prompt_len": "1000",
                          "output_len": "3"})
    q = recs["request"]
    small, large = np.argsort(q["session"])
    assert (q["engine"][small], q["engine"][large]) == (0, 2)  # member 0, and member NS = 2
    pre = A * 1000 + BATT * 1000 * 500
    dec = D + E * 1008  # a decode of a 1 001- or 1 002-token sequence: 63 blocks of 16
    assert q["first_token"][small] - q["sent"][small] == pytest.approx(C + pre, rel=1e-12)
    assert q["first_token"][large] - q["sent"][large] == pytest.approx(2 * C + 2.2 * pre, rel=1e-12)
    assert q["last_token"][small] - q["first_token"][small] == pytest.approx(2 * (C + dec), rel=1e-12)
    assert q["last_token"][large] - q["first_token"][large] == pytest.approx(2 * (2 * C + 2.2 * dec), rel=1e-12)
    assert [_member(doc, "stages", "engine", j)["iterations"] for j in range(4)] == [3, 0, 3, 0]


def test_two_sizes_each_model_on_its_replicas(monkeypatch):
    doc, recs = run("two_sizes.sq", monkeypatch, horizon=120, warmup=12)
    r, q = recs["routed"], recs["request"]
    assert np.all((r["to"] >= 2) == (r["large"] == 1))
    to = {(s, t): (j, b) for s, t, j, b in zip(r["session"], r["turn"], r["to"], r["large"])}
    for s, t, e in zip(q["session"], q["turn"], q["engine"]):
        assert to[(s, t)][0] == e
    # each member's tokens: its requests' prompts and outputs (no hit, no preemption); the requests in flight
    # at the edges of the window aside, so over the whole run drained
    doc, recs = run("two_sizes.sq", monkeypatch, arrivals=200, horizon=math.inf, warmup=0)
    q = recs["request"]
    for j in range(4):
        e = _member(doc, "stages", "engine", j)
        mine = q["engine"] == j
        assert e["tokens"] * e["iterations"] == pytest.approx((q["prompt"][mine] + q["output"][mine] - 1).sum())
    assert sum(_member(doc, "pools", "kv", j)["preemptions"] for j in range(4)) == 0


def test_two_sizes_a_large_replica_more():
    table = serq_sweep.sweep(str(HERE / "two_sizes.sq"), sets={"NL": [1, 2]}, seeds="1..2", horizon=150,
                             warmup=15, workers=0, progress=False)
    by = table.groupby("NL").mean(numeric_only=True)
    assert by["observes.ttft_large.mean"][1] > by["observes.ttft_large.mean"][2]
    # the small model's replicas see the same requests: its figures do not move
    for _seed, rows in table.groupby("seed"):
        t = rows.set_index("NL")
        assert t["observes.ttft_small.mean"][1] == t["observes.ttft_small.mean"][2]
        assert t["observes.ttft_small.count"][1] == t["observes.ttft_small.count"][2]


# gpu_count.sq


def test_gpu_count_one_request_on_member_0(monkeypatch):
    doc, recs = run("gpu_count.sq", monkeypatch, sets={"N": 3}, arrivals=1, horizon=math.inf, warmup=0,
                    defs={"prompt_len": "2000", "output_len": "2"})
    assert list(recs["engine"]) == [0]
    assert recs["first_token"][0] - recs["sent"][0] == pytest.approx(C + A * 2000 + BATT * 2000 * 1000, rel=1e-12)
    assert [_member(doc, "stages", "engine", j)["iterations"] for j in range(3)] == [2, 0, 0]


def test_gpu_count_compare_recomputed_seed_by_seed(tmp_path):
    out = tmp_path / "gpus.csv"
    serq("compare", HERE / "gpu_count.sq", "--set", "N=1,2", "--seeds", "1..3", "--horizon", 100, "--warmup", 10,
         "--figure", "requests.output_throughput", "--figure", "requests.ttft.p99", "-o", out, "--workers", 0,
         "--no-progress", timeout=120)
    with open(out, newline="") as f:
        rows = {r["figure"]: r for r in csv.DictReader(f)}
    figs = {n: [report("gpu_count.sq", sets={"N": n}, horizon=100, warmup=10, seed=s)["requests"]
                for s in (1, 2, 3)] for n in (1, 2)}
    t975 = 4.302652729911275  # Student's t, 2 degrees of freedom
    for name in ("output_throughput", "ttft"):
        fig = f"requests.{name}" if name != "ttft" else "requests.ttft.p99"
        get = (lambda q: q["output_throughput"]) if name != "ttft" else (lambda q: q["ttft"]["p99"])
        a = np.array([get(q) for q in figs[1]])
        b = np.array([get(q) for q in figs[2]])
        r = rows[fig]
        assert (r["arm"], r["base"]) == ("N=2", "N=1")
        assert float(r["a"]) == pytest.approx(a.mean()) and float(r["b"]) == pytest.approx(b.mean())
        assert float(r["diff"]) == pytest.approx((b - a).mean())
        assert float(r["ci_paired"]) == pytest.approx(t975 * (b - a).std(ddof=1) / math.sqrt(3))
    # the cost table: one GPU is cheaper a token only because it serves less than the traffic
    thr = {n: np.mean([q["output_throughput"] for q in figs[n]]) for n in (1, 2)}
    usd = {n: n * 2.0 * 1e6 / (3600 * thr[n]) for n in (1, 2)}
    assert usd[1] < usd[2]
    assert thr[1] < 0.8 * 8 * 300.5 < thr[2] < 8 * 300.5


def test_gpu_count_output_rate_under_counts_at_short_horizons(monkeypatch):
    # the requests in flight at the horizon are not counted: the longer run reads closer to the traffic's rate
    short = report("gpu_count.sq", sets={"N": 2}, horizon=150, warmup=15)["requests"]
    long_ = report("gpu_count.sq", sets={"N": 2}, horizon=600, warmup=15)["requests"]
    assert short["output_throughput"] < long_["output_throughput"] < 8 * 300.5 * 1.02
    # the figure is the records' outputs over the window: nothing else is counted
    doc, recs = run("gpu_count.sq", monkeypatch, horizon=150, warmup=15)
    assert doc["requests"]["output_throughput"] == pytest.approx(recs["output"].sum() / (doc["end"] - 15))


def test_half_kv_a_pools_cap_is_no_observable(tmp_path):
    # a KV-usage router written with cap(kv): told what to write, not pointed at the program's `gap`
    src = (HERE / "half_kv.sq").read_text().replace("used(kvL) / (blocksL * bs)", "used(kvL) / cap(kvL)")
    prog = tmp_path / "cap.sq"
    prog.write_text(src)
    r = subprocess.run([SERQ, "check", str(prog)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{prog}:") and "unknown function `cap`: the language has no `cap`" in first
    assert "`used(p) + free(p)`" in first and "did you mean" not in first
    # used + free is the cap of lib/vllm.sq's KV pool, at every instant: the router by it routes the same
    same = (HERE / "half_kv.sq").read_text().replace("used(kvL) / (blocksL * bs)",
                                                     "used(kvL) / (used(kvL) + free(kvL))")
    prog.write_text(same)
    a = report("half_kv.sq", sets={"policy": 1}, horizon=100, warmup=10)
    b = json.loads(encode_json(serq_sim.run(serq_frontend.compile(path=str(prog), sets={"policy": 1}),
                                            horizon=100, warmup=10)))
    assert a["requests"] == b["requests"] and a["pools"] == b["pools"]


def test_a_constant_gauge_has_no_spread(monkeypatch, tmp_path, serq_in_process):
    # step3.sq with the KV pool's cap as a gauge (used + free, lib/vllm.sq's pool holds reserve no units) and
    # a literal: each holds one value throughout, which is its mean, with a CI of 0 (it was some ulps' spread)
    src = (HERE / "step3.sq").read_text().replace("gauge kv_used = used(kv);",
                                                  "gauge kv_used = used(kv);\ngauge kv_cap = used(kv) + free(kv);\n"
                                                  "gauge three = 3;")
    (tmp_path / "step3.csv").write_text((HERE / "step3.csv").read_text())
    (tmp_path / "g.sq").write_text(src)
    doc, _ = run_both(serq_frontend.compile(path=str(tmp_path / "g.sq")), monkeypatch)
    assert doc["gauges"]["kv_cap"] == {"mean": 400.0, "ci": 0.0, "min": 400.0, "max": 400.0}
    assert doc["gauges"]["three"] == {"mean": 3.0, "ci": 0.0, "min": 3.0, "max": 3.0}
    # a gauge that changes keeps its batch-means CI
    assert doc["gauges"]["kv_used"]["ci"] > 1
    out = serq("run", tmp_path / "g.sq", "--no-progress", here=serq_in_process).stdout
    assert [ln.split() for ln in out.splitlines() if ln.startswith("three ")] == [["three", "3", "±0", "3", "3"]]


def test_half_kv_records_names_the_files_it_writes(tmp_path):
    # two record tables: FILE is not written, FILE.routed.csv and FILE.request.csv are, and the run says so
    r = subprocess.run([SERQ, "run", str(HERE / "half_kv.sq"), "--horizon", "100", "--records", "hq.csv",
                        "--no-progress", "-o", "hq.txt"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr == ("serq: --records hq.csv: the program has 2 record tables, written as hq.routed.csv and "
                        "hq.request.csv\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hq.request.csv", "hq.routed.csv", "hq.txt"]
    # one table: FILE itself, and nothing said
    r = subprocess.run([SERQ, "run", str(HERE / "step3.sq"), "--records", "s.csv", "--no-progress", "-o", "s.txt"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "" and (tmp_path / "s.csv").is_file()


@pytest.mark.parametrize("n, rows, note", [
    (20, 7, "note: `arrive batch(20)` replays the ordered trace d.csv, of 7 sessions, session by session (serial "
            "mod 7): each of its sessions is replayed 2 or 3 times, the copies at the same times (the trace once is "
            "`arrive batch(7)`)"),
    (14, 7, "note: `arrive batch(14)` replays the ordered trace d.csv, of 7 sessions, session by session (serial "
            "mod 7): each of its sessions is replayed 2 times, the copies at the same times (the trace once is "
            "`arrive batch(7)`)"),
    (5, 20, "note: `arrive batch(5)` replays the first 5 of the ordered trace d.csv's 20 sessions: its last 15 (in "
            "the file's order) are not replayed (the whole trace is `arrive batch(20)`)"),
    (20, 20, None),
])
def test_diurnal_batch_against_the_logs_sessions(monkeypatch, tmp_path, n, rows, note):
    log = tmp_path / "d.csv"
    log.write_text("".join((HERE / "diurnal.csv").read_text().splitlines(keepends=True)[:rows + 1]))
    doc, recs = run_both(compiled("diurnal.sq", sets={"N": n, "W": 0}), monkeypatch, trace=str(log))
    assert [x for x in doc["notes"] if x.startswith("note: `arrive batch")] == ([note] if note else [])
    # what it says: the sessions replayed, each row's send time as many times as it is replayed
    sends = np.array([float(line.split(",")[4]) for line in log.read_text().splitlines()[1:]])
    assert np.allclose(np.sort(recs["sent"]), np.sort(sends[np.arange(n) % rows]), atol=1e-9)


def test_gpu_count_plot_of_a_compare_table_says_what_it_is(tmp_path):
    # the table serq compare -o writes (a row per arm and figure) drawn with serq plot: told what the table is
    # and what to draw instead (it was "the table sweeps no name", and --x N "did you mean `n`?")
    out = tmp_path / "gpus.csv"
    serq("compare", HERE / "gpu_count.sq", "--set", "N=1,2", "--seeds", "1..2", "--horizon", 40, "--warmup", 4,
         "--figure", "requests.ttft.p99", "-o", out, "--workers", 0, "--no-progress", timeout=120)
    for flags in (["--y", "requests.ttft.p99"], ["--x", "N", "--y", "requests.ttft.p99"]):
        r = subprocess.run([SERQ, "plot", str(out), *flags, "-o", str(tmp_path / "g.svg")], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith(f"error: {out}: this is serq compare's table (columns arm, base, figure, n, a, b,")
        assert "serq plot T.csv --y requests.ttft.p99" in r.stderr and "did you mean" not in r.stderr
        assert not (tmp_path / "g.svg").exists()
    from serq.errors import UserError

    with pytest.raises(UserError, match="serq compare's table"):
        serq_sweep.plot(str(out), x="N", y="requests.ttft.p99")


def test_two_sizes_no_large_replica_routes_to_member_0(monkeypatch):
    # the program's comment: with NL = 0 every candidate's first key is inf for a large request, and the second
    # key (the index) sends it to member 0, a small replica
    doc, recs = run("two_sizes.sq", monkeypatch, sets={"NL": 0}, horizon=30, warmup=3)
    r = recs["routed"]
    assert r["large"].sum() > 0 and np.all(r["to"][r["large"] == 1] == 0)
    assert doc["observes"]["ttft_large"]["count"] > 0


@pytest.mark.parametrize("name, unlike", [("two_sizes.sq", True), ("gpu_count.sq", False)])
def test_target_of_a_family_of_unlike_costs_says_so(serq_in_process, name, unlike):
    out = json.loads(serq("vllm", "target", HERE / name, here=serq_in_process).stdout)
    note = out["replicas"]["note"]
    n = out["replicas"]["count"]
    assert note.startswith(f"the configuration is each member's, the same for all {n} (step family `engine[{n}]`)")
    said = "; the step cost reads member(engine), so the members run at unlike speeds"
    assert (said in note) == unlike
    assert out["config"]["max_num_seqs"] == 256 and out["config"]["num_gpu_blocks"] == 8011


def test_rag_littles_law_over_a_drained_run(monkeypatch):
    # each session is one request from its send to its last token: the run's mean live sessions are the
    # requests' time in the system over the run's length (warm-up 0, every session drained)
    doc, recs = run("rag_itl.sq", monkeypatch, sets={"C": 1024}, arrivals=60, horizon=math.inf, warmup=0)
    assert len(recs["sent"]) == 60
    assert doc["mean_live"] == pytest.approx((recs["last_token"] - recs["sent"]).sum() / doc["end"], rel=1e-9)
    # and the engine's request slots: the mean running and waiting are the same time split at admission
    reqs = pool(doc, "reqs")
    assert reqs["holders"] == pytest.approx((recs["last_token"] - recs["admitted"]).sum() / doc["end"], rel=1e-9)
    assert reqs["queue"] == pytest.approx((recs["admitted"] - recs["sent"]).sum() / doc["end"], rel=1e-9)
