"""Round 36 of programs as vLLM engineers and capacity planners write them (peer_programs36/), each run to its
horizon on both simulator tiers and checked against an independent truth: the step engine of one token an
iteration as the M/D/1 queue (three requests by hand, the Pollaczek-Khinchine mean, Little's law), and the
variance reduction ``serq compare`` reports recomputed from the per-seed runs; a fleet sized for a diurnal
day (each quarter's arrivals against its rate, the fewest replicas by ``find``, the TTFT floor of a prompt's
own prefill); the spread of output lengths at one mean (the records' outputs, Little's law, the TPOT
paired); admission bound by slots against the KV cache (one slot by hand, the tails); the cost of a million
tokens on two step costs (``find`` per GPU, the throughput at the rate found); the warm-up (the report at W
as the records sent after W); an offline batch job (two requests by hand, every token accounted for, the
makespan against the slots); a load test of chat users (each turn's prefix-cache hit by hand, prompts =
computed + hits); two tenants under FCFS and priority (by hand behind a running prefill, paired); and the
decode stall of a long prompt's chunks (a decoder's gaps by hand, the ITL p99 against the budget)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
import serq_sweep
from peers import covers, pool, run_both, stage
from serq_report.json import encode_json

HERE = Path(__file__).parent / "peer_programs36"


def compiled(name: str, *, sets=None, defs=None):
    return serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})


def run(name: str, monkeypatch, *, sets=None, defs=None, **kw):
    """(JSON report, records as numpy columns or None) of peer_programs36/NAME on the default tier and the
    general engine, which must give the same bytes and the same records."""
    return run_both(compiled(name, sets=sets, defs=defs), monkeypatch, **kw)


# md1.sq


def test_md1_three_requests_by_hand(monkeypatch):
    # sent at 4, 8 and 12 ms; one request an iteration of 10 ms: the first starts at once, the others
    # each wait for the iteration before theirs
    doc, recs = run("md1.sq", monkeypatch, defs={"gap": "~det(0.004)"}, arrivals=3, warmup=0)
    order = np.argsort(recs["session"])
    assert np.allclose(recs["sent"][order], [0.004, 0.008, 0.012])
    assert np.allclose(recs["admitted"][order], [0.004, 0.014, 0.024])
    assert np.allclose(recs["first_token"][order], [0.014, 0.024, 0.034])
    assert np.allclose(recs["last_token"][order], [0.014, 0.024, 0.034])
    assert stage(doc, "engine")["iterations"] == 3
    assert doc["observes"]["ttft"]["mean"] == pytest.approx((0.010 + 0.016 + 0.022) / 3)


@pytest.mark.parametrize("lam", [50, 80])
def test_md1_pollaczek_khinchine(monkeypatch, lam):
    c = 0.010
    rho = lam * c
    wq = rho * c / (2 * (1 - rho))
    doc, recs = run("md1.sq", monkeypatch, sets={"Lambda": lam}, horizon=200, warmup=20, seed=1)
    o = doc["observes"]["ttft"]
    covers(o, wq + c, 0.12)
    covers(doc["requests"]["queue"], wq, 0.25)
    assert doc["requests"]["prefill"]["mean"] == pytest.approx(c)  # the service is deterministic
    assert stage(doc, "engine")["utilisation"] == pytest.approx(rho, abs=0.02)
    # Little's law: the sessions in the system on average = the completions a second x the mean TTFT
    assert doc["mean_live"] == pytest.approx(doc["requests"]["request_throughput"] * o["mean"], rel=0.02)
    assert pool(doc, "kv")["preemptions"] == 0 and recs["cached"].sum() == 0


def test_md1_target_and_slots():
    from serq_vllm.target import TargetError, target

    config = target(compiled("md1.sq"))["config"]
    assert (config["max_num_batched_tokens"], config["max_num_seqs"]) == (1, 1)
    with pytest.raises(TargetError, match="above the engine's budget 1"):
        target(compiled("md1.sq", sets={"max_seqs": 256}))
    # more slots change nothing: a request of one token is admitted and done within one iteration
    docs = [json.loads(encode_json(serq_sim.run(compiled("md1.sq", sets={"max_seqs": s}), horizon=30, warmup=3)))
            for s in (1, 256)]
    assert docs[0]["requests"] == docs[1]["requests"] and docs[0]["observes"] == docs[1]["observes"]


def test_md1_compare_variance_reduction_by_hand():
    """serq compare's paired difference, its CI and its variance reduction, against the same runs made one
    by one: the arms share each seed's arrivals (the gaps scaled), so the paired CI is far narrower."""
    seeds = [1, 2, 3, 4, 5]
    table = serq_sweep.compare(str(HERE / "md1.sq"), sets={"Lambda": [60, 70]}, seeds="1..5", horizon=60,
                               warmup=5, workers=0, progress=False, figures=["observes.ttft.mean"])
    (row,) = table.to_dict("records")
    per = {}
    for lam in (60, 70):
        per[lam] = np.array([json.loads(encode_json(serq_sim.run(compiled("md1.sq", sets={"Lambda": lam}),
                                                                 horizon=60, warmup=5, seed=s)))
                             ["observes"]["ttft"]["mean"] for s in seeds])
    a, b = per[60], per[70]
    d = b - a
    assert row["a"] == pytest.approx(a.mean()) and row["b"] == pytest.approx(b.mean())
    assert row["diff"] == pytest.approx(d.mean())
    t4 = 2.7764451051977987  # Student t, 97.5 %, 4 degrees of freedom
    assert row["ci_paired"] == pytest.approx(t4 * d.std(ddof=1) / math.sqrt(5))
    vr = 1 - d.var(ddof=1) / (a.var(ddof=1) + b.var(ddof=1))
    assert row["variance_reduction"] == pytest.approx(vr)
    assert vr > 0.5 and row["ci_paired"] < row["ci_unpaired"]
    # the higher load waits longer on every seed, and the closed forms' difference is inside the CI
    assert (d > 0).all()
    pk = [lam * 0.01 * 0.01 / (2 * (1 - lam * 0.01)) + 0.01 for lam in (60, 70)]
    assert abs(d.mean() - (pk[1] - pk[0])) <= row["ci_unpaired"]


# fleet_sizing.sq

DAY = {"day": 240}


def test_fleet_sizing_arrivals_follow_the_day(monkeypatch):
    doc, recs = run("fleet_sizing.sq", monkeypatch, sets={"N": 4, **DAY}, horizon=300, warmup=0, seed=2)
    mean_rate = 10000 * 50 / 86400
    sent = recs["sent"][recs["sent"] < 240]
    counts = np.bincount((sent // 60).astype(int), minlength=4)
    for q, share in enumerate((0.4, 1.0, 1.6, 1.0)):
        expected = mean_rate * share * 60
        assert abs(counts[q] - expected) <= 4 * math.sqrt(expected), (q, counts[q], expected)
    # the afternoon peak's TTFT observe counts the requests sent in it (all done by the horizon)
    assert doc["observes"]["peak_ttft"]["count"] >= counts[2]
    # single-turn chats: nothing hit, nothing preempted; every replica served some
    assert recs["cached"].sum() == 0 and recs["preemptions"].sum() == 0
    assert set(recs["engine"].tolist()) == {0, 1, 2, 3}


def test_fleet_sizing_find_fewest_replicas():
    _cols, rows = serq_sweep.find(str(HERE / "fleet_sizing.sq"), "requests.ttft.p99 <= 1", ("N", "1:6:1"),
                                  sets=DAY, seeds="1..2", horizon=240, warmup=0, workers=0, progress=False)
    ((outcome, n, fails),) = [(r["outcome"], r["N"], r["fails"]) for r in rows]
    assert (outcome, n, fails) == ("found_smallest", 4, 3)


# output_variance.sq


@pytest.mark.parametrize("cv2", [0, 1])
def test_output_variance_records(monkeypatch, cv2):
    doc, recs = run("output_variance.sq", monkeypatch, sets={"cv2": cv2}, horizon=200, warmup=20, seed=1)
    out = recs["output"]
    if cv2 == 0:
        assert (out == 300).all()
    else:
        # the completed requests' outputs: exponential of mean 300 (the longest in flight at the horizon aside)
        se = out.std(ddof=1) / math.sqrt(len(out))
        assert abs(out.mean() - 300) <= 3 * se and 0.7 < out.var() / out.mean() ** 2 < 1.3
    assert pool(doc, "kv")["preemptions"] == 0 and recs["cached"].sum() == 0
    if cv2 == 0:
        # Little's law on the request slots: running requests on average = the time each held its slot
        # over the window (the requests in flight at the window's edges aside, a few per cent here; at
        # cv2 = 1 the longest outputs straddle the edges and the records alone undercount by some 8 %)
        held = (recs["last_token"] - recs["admitted"]).sum() / (200 - 20)
        assert pool(doc, "reqs")["holders"] == pytest.approx(held, rel=0.05)


def test_output_variance_paired_tpot():
    table = serq_sweep.compare(str(HERE / "output_variance.sq"), sets={"cv2": [0, 1]}, seeds="1..3", horizon=150,
                               warmup=15, workers=0, progress=False,
                               figures=["requests.tpot.mean", "requests.e2el.p99"])
    rows = {r["figure"]: r for r in table.to_dict("records")}
    tpot, e2e = rows["requests.tpot.mean"], rows["requests.e2el.p99"]
    assert tpot["diff"] > tpot["ci_paired"] > 0  # spread outputs: more decoders beside each other
    assert e2e["diff"] > e2e["ci_paired"]         # and a far longer tail of E2E latency


# admission.sq


def test_admission_one_slot_by_hand(monkeypatch):
    doc, recs = run("admission.sq", monkeypatch, sets={"max_seqs": 1, "n": 100},
                    defs={"gap": "~det(0.001)", "output_len": "3"}, arrivals=2, warmup=0)
    order = np.argsort(recs["session"])
    # a100_qwen3_8b: a lone prefill of 100 tokens at context 0 is c + a 100 + b 100 (0 + 50); each decode of
    # one request is c + d + e 112 (kv_decode counts the allocation, 101 or 102 tokens in 7 blocks of 16)
    prefill = 0.013939 + 0.000051527 * 100 + 0.0000000040196 * 100 * 50
    decode = 0.013939 + 0.00004105 + 0.00000013786 * 112
    first = 0.001 + prefill
    last = first + 2 * decode
    assert recs["admitted"][order] == pytest.approx([0.001, last], abs=1e-12)
    assert recs["first_token"][order] == pytest.approx([first, last + prefill], abs=1e-12)
    assert recs["last_token"][order] == pytest.approx([last, last + prefill + 2 * decode], abs=1e-12)
    assert stage(doc, "engine")["iterations"] == 6


def test_admission_slots_against_kv(monkeypatch):
    got = {}
    for arm, sets in (("slots", {"max_seqs": 32, "blocks": 8010}), ("kv", {"max_seqs": 256, "blocks": 3600})):
        doc, recs = run("admission.sq", monkeypatch, sets=sets, horizon=200, warmup=20, seed=1)
        reqs, kv = pool(doc, "reqs"), pool(doc, "kv")
        assert reqs["holders"] <= sets["max_seqs"]
        assert int(recs["preemptions"].sum()) <= kv["preemptions"]
        got[arm] = (kv["preemptions"], reqs["holders"], doc["requests"]["ttft"]["p99"],
                    doc["requests"]["tpot"]["p99"])
    assert got["slots"][0] == 0 and got["kv"][0] > 50
    # about the same number running (29.6 and 29.2), yet the KV limit's tails are the longer
    assert got["slots"][1] == pytest.approx(got["kv"][1], rel=0.05)
    assert got["kv"][2] > 1.5 * got["slots"][2] and got["kv"][3] > 1.2 * got["slots"][3]


# cost_per_mtok.sq


def test_cost_per_mtok_find_and_price():
    _cols, rows = serq_sweep.find(str(HERE / "cost_per_mtok.sq"), "requests.tpot.p99 <= 0.03",
                                  ("Lambda", "0.5:20:0.5"), sets={"gpu": [0, 1]}, seeds="1..2", workers=0,
                                  progress=False)
    found = {r["gpu"]: (r["outcome"], r["Lambda"], r["fails"]) for r in rows}
    assert found == {0: ("found", 4.5, 5.0), 1: ("found", 13.5, 14.0)}
    per_mtok = {g: price * 1e6 / (3600 * found[g][1] * 200) for g, price in ((0, 2.0), (1, 4.0))}
    assert per_mtok[0] == pytest.approx(0.617, abs=1e-3) and per_mtok[1] == pytest.approx(0.412, abs=1e-3)


@pytest.mark.parametrize(("gpu", "lam"), [(0, 4.5), (1, 13.5)])
def test_cost_per_mtok_throughput_at_the_rate_found(monkeypatch, gpu, lam):
    doc, recs = run("cost_per_mtok.sq", monkeypatch, sets={"gpu": gpu, "Lambda": lam}, seed=1)
    req = doc["requests"]
    assert (recs["output"] == 200).all() and (recs["prompt"] == 1000).all()
    # the engine keeps up: it serves the offered output rate, Lambda x E_o, within the Poisson count's noise
    offered = lam * 200
    assert req["output_throughput"] == pytest.approx(offered, rel=4 / math.sqrt(lam * 100))
    assert req["total_output_tokens"] == 200 * req["completed"]
    assert pool(doc, "kv")["preemptions"] == 0


# warmup.sq


def test_warmup_cut_is_the_records_sent_before_it(monkeypatch):
    doc0, recs0 = run("warmup.sq", monkeypatch, sets={"W": 0}, horizon=300, seed=1)
    live = [doc0["mean_live"]]
    for w in (30, 100):
        doc, recs = run("warmup.sq", monkeypatch, sets={"W": w}, horizon=300, seed=1)
        kept = recs0["sent"] >= w
        for col in ("session", "turn", "sent", "first_token", "last_token", "cached"):
            assert np.array_equal(recs[col], recs0[col][kept]), col
        ttft = recs0["first_token"][kept] - recs0["sent"][kept]
        assert doc["requests"]["completed"] == kept.sum()
        assert doc["requests"]["ttft"]["mean"] == pytest.approx(ttft.mean(), rel=1e-12)
        live.append(doc["mean_live"])
    # the sessions alive build up from none: the later the window starts, the more on average
    assert live[0] < live[1] < live[2]


def test_warmup_first_window_lighter():
    first, later = [], []
    for seed in range(1, 6):
        r = serq_sim.run(compiled("warmup.sq", sets={"W": 0}), horizon=300, seed=seed)
        recs = {k: np.asarray(v) for k, v in r.records(kind="numpy").items()}
        ttft = recs["first_token"] - recs["sent"]
        window = (recs["sent"] // 30).astype(int)
        first.append(ttft[window == 0].mean())
        later.append(np.mean([ttft[window == k].mean() for k in range(1, 10)]))
    assert np.mean(first) < np.mean(later) - 0.003


# batch_job.sq


def computed_less_served(doc: dict) -> float:
    """The tokens the engine computed less the prompts and outputs of the completed requests (every output
    token but the last is fed back once): 0 when nothing was recomputed and nothing was a hit."""
    eng = stage(doc, "engine")
    req = doc["requests"]
    return eng["tokens"] * eng["iterations"] - (req["total_input_tokens"] + req["total_output_tokens"]
                                                - req["completed"])


def test_batch_job_two_requests_by_hand(monkeypatch):
    doc, recs = run("batch_job.sq", monkeypatch, sets={"N": 2}, defs={"prompt_len": "100", "output_len": "3"})
    # both prompts in one iteration (200 tokens, attention 2 x 100 x 50), then two decodes of both
    # (kv_decode 2 x 112: seven blocks each)
    prefill = 0.013939 + 0.000051527 * 200 + 0.0000000040196 * 2 * 100 * 50
    decode = 0.013939 + 0.00004105 * 2 + 0.00000013786 * 224
    assert recs["first_token"] == pytest.approx([prefill, prefill], abs=1e-12)
    assert recs["last_token"] == pytest.approx([prefill + 2 * decode] * 2, abs=1e-12)
    assert doc["end"] == pytest.approx(prefill + 2 * decode, abs=1e-12)
    assert stage(doc, "engine")["iterations"] == 3


@pytest.mark.parametrize(("max_seqs", "blocks", "preempts"), [(16, 8010, False), (64, 8010, False), (256, 900, True)])
def test_batch_job_every_token_accounted(monkeypatch, max_seqs, blocks, preempts):
    doc, recs = run("batch_job.sq", monkeypatch, sets={"N": 300, "max_seqs": max_seqs, "blocks": blocks})
    req = doc["requests"]
    assert req["completed"] == doc["arrivals"] == 300 and len(recs["sent"]) == 300
    assert (recs["sent"] == 0).all() and doc["end"] == pytest.approx(recs["last_token"].max())
    preempted = pool(doc, "kv")["preemptions"]
    assert (preempted > 0) == preempts
    assert int(recs["preemptions"].sum()) == preempted  # nothing in flight at the end
    extra = computed_less_served(doc)
    if preempted == 0:
        assert extra == pytest.approx(0, abs=1e-6)
    else:
        assert extra > 0  # the preempted requests' recomputation


def test_batch_job_makespan_by_slots(monkeypatch):
    ends = []
    for max_seqs in (16, 32, 64, 128, 256):
        r = serq_sim.run(compiled("batch_job.sq", sets={"N": 400, "max_seqs": max_seqs}), seed=1)
        ends.append(json.loads(encode_json(r))["end"])
    assert ends[0] > ends[1] > ends[2] > ends[3]
    assert ends[4] == pytest.approx(ends[3], rel=0.02)  # the KV cache, not the slots, binds at 128


# loadtest.sq


@pytest.mark.parametrize("users", [5, 20])
def test_loadtest_hits_and_tokens_by_hand(monkeypatch, users):
    doc, recs = run("loadtest.sq", monkeypatch, sets={"M": users})
    assert doc["requests"]["completed"] == 5 * users and pool(doc, "kv")["evicted_units"] == 0
    for s in np.unique(recs["session"]):
        mine = recs["session"] == s
        order = np.argsort(recs["turn"][mine])
        prompt, out, hit = (recs[c][mine][order] for c in ("prompt", "output", "cached"))
        assert recs["turn"][mine][order].tolist() == [1, 2, 3, 4, 5]
        k = np.concatenate([[0], prompt[:-1] + out[:-1]])  # the conversation so far
        assert np.array_equal(prompt[1:] - k[1:] > 0, np.ones(4, bool))
        assert hit.tolist() == [0] + [(x - 1) // 16 * 16 for x in k[1:]]
    # prompts = computed + hits: the engine computed each prompt's miss and every output token but the last
    eng = stage(doc, "engine")
    computed = (recs["prompt"] - recs["cached"] + recs["output"] - 1).sum()
    assert eng["tokens"] * eng["iterations"] == pytest.approx(computed, rel=1e-12)
    req = doc["requests"]
    assert req["prefix_cache_hit_rate"] == pytest.approx(recs["cached"].sum() / recs["prompt"].sum(), rel=1e-12)
    # the users' time: each stayed for its requests and its thinks, all from t = 0; the last to leave ends it
    stay = doc["observes"]["stay"]
    think = stage(doc, "think")
    assert stay["count"] == users
    total = doc["observes"]["response"]["mean"] * 5 * users + think["completions"] * think["service"]
    assert stay["mean"] * users == pytest.approx(total, rel=1e-9)
    assert doc["mean_live"] * doc["end"] == pytest.approx(total, rel=1e-9)


# tenants.sq

C, D, E, A, BATT = 0.013939, 0.00004105, 0.00000013786, 0.000051527, 0.0000000040196  # a100_qwen3_8b's terms
TRIO = {"gap": "~det(0.001)", "is_doc": "serial < 2", "doc_prompt": "serial == 0 ? 4096 : 2048",
        "chat_prompt": "100", "doc_output": "2", "chat_output": "2"}


@pytest.mark.parametrize("policy", [0, 1])
def test_tenants_chat_behind_a_document_by_hand(monkeypatch, policy):
    # a document of 4 096 tokens sent at 1 ms takes the budget for two iterations; a document of 2 048 (2 ms)
    # and a chat request of 100 (3 ms) wait. In iteration 3 the first document decodes its last token
    # (kv_decode 4 112: 257 blocks) and 2 047 tokens of budget are left: FCFS gives them to the document, the
    # chat request waiting for iteration 4; priority admits the chat request first, the document after it
    doc, recs = run("tenants.sq", monkeypatch, sets={"policy": policy}, defs=TRIO, arrivals=3, warmup=0)
    order = np.argsort(recs["session"])
    t1 = 0.001 + C + A * 2048 + BATT * 2048 * 1024
    t2 = t1 + C + A * 2048 + BATT * 2048 * (2048 + 1024)
    if policy == 0:
        t3 = t2 + C + D + E * 4112 + A * 2047 + BATT * 2047 * 2047 / 2
        t4 = t3 + C + A * 101 + BATT * (1 * (2047 + 0.5) + 100 * 50)
        admitted, first = [0.001, t2, t3], [t2, t4, t4]
    else:
        t3 = t2 + C + D + E * 4112 + A * 2047 + BATT * (100 * 50 + 1947 * 1947 / 2)
        # iteration 4: the chat request's decode (kv_decode 112) and the document's last 101 tokens at 1 947
        t4 = t3 + C + D + E * 112 + A * 101 + BATT * 101 * (1947 + 101 / 2)
        admitted, first = [0.001, t2, t2], [t2, t4, t3]
    assert recs["admitted"][order] == pytest.approx(admitted, abs=1e-12)
    assert recs["first_token"][order] == pytest.approx(first, abs=1e-12)
    assert pool(doc, "kv")["preemptions"] == 0


def keyed(d) -> dict:
    """An observe's samples as {(session, turn): value}."""
    return dict(zip(zip(d.sessions.tolist(), d.turns.tolist()), d.values.tolist()))


def test_tenants_classes_split_the_ttft(monkeypatch):
    for policy in (0, 1):
        doc, _recs = run("tenants.sq", monkeypatch, sets={"policy": policy}, horizon=200, warmup=20, seed=1)
        o = doc["observes"]
        assert pool(doc, "kv")["preemptions"] == 0  # policy 0 is FCFS exactly
        # the class observes are taken after the request's last token, as the library's response is: the
        # same requests (done after the warm-up), not the library's ttft's (first token after it)
        assert o["ttft_chat"]["count"] + o["ttft_docs"]["count"] == o["response"]["count"]
        r = serq_sim.run(compiled("tenants.sq", sets={"policy": policy}), horizon=200, warmup=20, seed=1)
        chat, docs, ttft, resp = (keyed(r.observe(n)) for n in ("ttft_chat", "ttft_docs", "ttft", "response"))
        assert chat.keys() | docs.keys() == resp.keys() and not chat.keys() & docs.keys()
        # each request's class sample is its TTFT (where the library's was taken after the warm-up too)
        both = [k for k in chat.keys() | docs.keys() if k in ttft]
        assert len(both) > 0.9 * len(ttft)
        assert all({**chat, **docs}[k] == ttft[k] for k in both)


def test_tenants_priority_paired():
    table = serq_sweep.compare(str(HERE / "tenants.sq"), sets={"policy": [0, 1]}, seeds="1..8", horizon=300,
                               warmup=30, workers=0, progress=False,
                               figures=["ttft_chat.p99", "ttft_chat.mean", "ttft_docs.mean"])
    rows = {r["figure"].removeprefix("observes."): r for r in table.to_dict("records")}
    for f in ("ttft_chat.p99", "ttft_chat.mean"):  # the chat tenant's first tokens sooner
        assert rows[f]["diff"] < 0 and abs(rows[f]["diff"]) > rows[f]["ci_paired"], rows[f]
    docs = rows["ttft_docs.mean"]  # the documents' later: the same requests, served in another order
    assert docs["diff"] > docs["ci_paired"] > 0, docs


def test_tenants_target_refuses_the_queue_key():
    from serq_vllm.target import TargetError, target

    with pytest.raises(TargetError) as err:
        target(compiled("tenants.sq"))
    assert "queue" in str(err.value)


def test_docs_three_sets_under_a_warmup(monkeypatch):
    """docs/vllm.md's figures of the three sets of requests a warm-up leaves: the library's ttft (first token
    after it), response and the class observes (done after it), the requests table (sent after it)."""
    doc, recs = run("tenants.sq", monkeypatch, horizon=200, warmup=20, seed=1)
    o, req = doc["observes"], doc["requests"]
    got = (o["ttft"]["count"], o["response"]["count"], o["ttft_chat"]["count"], o["ttft_docs"]["count"],
           req["completed"])
    assert got == (631, 622, 539, 83, 614)
    weighted = (o["ttft_chat"]["mean"] * 539 + o["ttft_docs"]["mean"] * 83) / 622
    text = " ".join((Path(__file__).parents[3] / "docs" / "vllm.md").read_text().split())
    assert (f"`ttft` 631 samples of mean {o['ttft']['mean']:.5f} s, `response` 622 and the classes 539 + 83 of "
            f"mean {weighted:.5f} s, the `requests` table 614 of mean {req['ttft']['mean']:.5f} s") in text
    assert (recs["sent"] >= 20).all() and len(recs["sent"]) == 614


def test_fleet_sizing_ttft_floor_of_a_prompt(monkeypatch):
    """No fleet size brings a request's TTFT below its own prefill: ceil(n / B) iterations of at least c each,
    a n for its tokens and b n^2 / 2 for their attention (the chunks' n (K + n/2) summed). A TTFT SLO of
    0.5 s is beyond every prompt above 6 810 tokens, 3.3 % of an exponential of mean 2 000: the attainment
    stops below 0.967 however many replicas serve."""
    _doc, recs = run("fleet_sizing.sq", monkeypatch, sets={"N": 8, **DAY}, horizon=150, warmup=0, seed=1)
    n = recs["prompt"]
    floor = np.ceil(n / 2048) * 0.013939 + 0.000051527 * n + 0.0000000040196 * n * n / 2
    ttft = recs["first_token"] - recs["sent"]
    assert (ttft >= floor - 1e-12).all()
    assert (floor[n > 6810] > 0.5).all() and (floor[n <= 6810] <= 0.5).all()
    met = (ttft <= 0.5).mean()
    assert met <= 1 - (n > 6810).mean() and met > 0.9


# stall.sq

STALL = {"gap": "~det(0.001)", "is_long": "serial == 1", "chat_prompt": "16", "chat_output": "6",
         "long_output": "1", "long_prompt": "4096"}


@pytest.mark.parametrize("b", [2048, 512])
def test_stall_gaps_by_hand(monkeypatch, b):
    doc, recs = run("stall.sq", monkeypatch, sets={"B": b}, defs=STALL, arrivals=2, warmup=0)
    order = np.argsort(recs["session"])
    first = 0.001 + C + A * 16 + BATT * 16 * 8  # the chat prompt alone
    decode = C + D + E * 32  # beside it, one decoder of 17 to 21 tokens: two blocks
    if b == 2048:
        # the document arrives at 2 ms: chunks of 2 047 (what the decode leaves), 2 047 and 2
        gaps = [decode + A * 2047 + BATT * 2047 * 2047 / 2, decode + A * 2047 + BATT * 2047 * (2047 + 2047 / 2),
                decode + A * 2 + BATT * 2 * (4094 + 1), decode, decode]
    else:
        # chunks of 511 beside each of the chat request's five decodes
        gaps = [decode + A * 511 + BATT * 511 * (511 * k + 511 / 2) for k in range(5)]
    assert recs["first_token"][order][0] == pytest.approx(first, abs=1e-12)
    assert recs["last_token"][order][0] == pytest.approx(first + sum(gaps), abs=1e-12)
    itl = doc["requests"]["itl"]
    assert itl["count"] == 5 and itl["mean"] == pytest.approx(np.mean(gaps), rel=1e-12)
    assert stage(doc, "engine")["iterations"] == (6 if b == 2048 else 10)


def test_stall_p99_not_monotone_in_the_budget():
    table = serq_sweep.sweep(str(HERE / "stall.sq"), sets={"B": [512, 2048, 8192]}, seeds="1", horizon=300,
                             warmup=30, workers=0, progress=False)
    rows = {r["B"]: r for r in table.to_dict("records")}
    p99 = {b: rows[b]["requests.itl.p99"] for b in rows}
    ttft = {b: rows[b]["observes.ttft_long.mean"] for b in rows}
    assert p99[2048] > 2 * p99[512] and p99[2048] > 2 * p99[8192]
    assert ttft[512] > ttft[2048] > ttft[8192]
