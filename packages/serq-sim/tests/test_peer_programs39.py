"""Round 39 of programs as vLLM and llm-d engineers and capacity planners write them (peer_programs39/), each
run on both simulator tiers and checked against an independent truth: four replicas read engine by engine
with ``serq metrics --by engine`` against the records; a rate sweep's knee and which throughput flattens
there; block_size 16 against 32 under a shared system prompt, turn by turn by hand; the fewest replicas for a
TTFT p99 under bursty arrivals (--find against the grid); a chat and a batch kind under vLLM's priority
policy, each kind's attainment from the joined records; the closed loop of --max-concurrency and Little's
law; the token budget's ITL-TTFT trade against vLLM's scheduler written out."""

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
from peers import covers, pool, run_both, stage
from serq_report.json import encode_json

HERE = Path(__file__).parent / "peer_programs39"
SERQ = str(Path(sys.executable).parent / "serq")


def compiled(name: str, *, sets=None, defs=None):
    return serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})


def run(name: str, monkeypatch, *, sets=None, defs=None, **kw):
    """(JSON report, records) of peer_programs39/NAME on both tiers, which must agree byte for byte."""
    return run_both(compiled(name, sets=sets, defs=defs), monkeypatch, **kw)


def report(name: str, *, sets=None, defs=None, **kw) -> dict:
    return json.loads(encode_json(serq_sim.run(compiled(name, sets=sets, defs=defs), **kw)))


def serq(*args, timeout=120, here=None):
    """``serq ARGS``, status 0, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process (a test of the tables, figures and lines a command gives, not of the process)."""
    if here is not None:
        r = here(*map(str, args))
    else:
        r = subprocess.run([SERQ, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def read_csv(path) -> dict:
    """The columns of a CSV file as numpy arrays of floats."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def test_every_program_is_in_fmt_form():
    files = sorted(HERE.glob("*.sq"))
    assert len(files) >= 8
    r = subprocess.run([SERQ, "fmt", "--check", *map(str, files)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def member(doc: dict, kind: str, name: str, j: int) -> dict:
    """Member j of the stage or pool family ``name`` in the JSON report ``doc`` (kind "stages" or "pools")."""
    (s,) = [s for s in doc[kind] if s["name"] == name and s["index"] == j]
    return s


def _vllm_engine(reqs, budget, step, slots=256):
    """vLLM v1's scheduler written out for requests that never preempt and share nothing (ample KV, match 0):
    at each iteration's start the running requests, in admission order, take a decode token or their
    prompt's next chunk (cut to the budget left), then the waiting ones are admitted in arrival order while
    a slot and budget last, each with the first chunk the budget leaves; the iteration lasts step(tokens).
    ``reqs``: dicts of sent, p (prompt), o (outputs). Each request gets first and last (token times) and
    the iterations' token counts are returned."""
    for r in reqs:
        r.update(done=0, outs=0)
    t, pending, waiting, running, its = 0.0, sorted(reqs, key=lambda r: r["sent"]), [], [], []
    while pending or waiting or running:
        waiting += [r for r in pending if r["sent"] <= t + 1e-12]
        pending = [r for r in pending if r["sent"] > t + 1e-12]
        if not waiting and not running:
            t = pending[0]["sent"]
            continue
        left, sched = budget, []
        for r in running:
            if left <= 0:
                break
            k = min(r["p"] - r["done"], left) if r["done"] < r["p"] else 1
            sched.append((r, k))
            left -= k
        while waiting and len(running) < slots and left > 0:
            r = waiting.pop(0)
            running.append(r)
            k = min(r["p"], left)
            sched.append((r, k))
            left -= k
        n = sum(k for _, k in sched)
        its.append(n)
        t += step(n)
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
    return its


# batched_tokens.sq

def _step(n):
    return 1 + 0.001 * n


_PAIR = {"step_cost": "1 + 0.001 * tokens", "gap": "~det(0.5)", "prompt_len": "serial == 0 ? 100 : 3000",
         "output_len": "serial == 0 ? 6 : 2"}


@pytest.mark.parametrize("b, gaps, long_ttft", [
    # the short request prefills in [0.5, 1.6]; the long one, sent at 1.0, waits for that iteration. B 8 192:
    # the whole prompt beside the decoder's token, one iteration of 4.001 s, then the long one's decode
    # beside it (1.002) and the decoder alone
    (8192, [4.001, 1.002, 1.001, 1.001, 1.001], 1.6 + 4.001 - 1.0),
    # B 512: chunks of 511 beside the decoder (1.512 s) for its five gaps, then the last 445 alone
    (512, [1.512] * 5, 1.6 + 5 * 1.512 + 1.445 - 1.0),
])
def test_budget_decoder_stall_by_hand(monkeypatch, b, gaps, long_ttft):
    doc, recs = run("batched_tokens.sq", monkeypatch, sets={"B": b}, defs=_PAIR, arrivals=2, horizon=math.inf,
                    warmup=0)
    short, long_ = np.argsort(recs["session"])
    assert recs["first_token"][short] == pytest.approx(1.6)
    assert recs["last_token"][short] - recs["first_token"][short] == pytest.approx(sum(gaps))
    assert recs["first_token"][long_] - recs["sent"][long_] == pytest.approx(long_ttft)
    # the ITL samples: the short request's five gaps and the long one's one
    assert doc["requests"]["itl"]["count"] == 5 + 1
    long_gap = recs["last_token"][long_] - recs["first_token"][long_]
    assert long_gap == pytest.approx(1.002 if b == 8192 else 1.001)
    assert doc["requests"]["itl"]["mean"] == pytest.approx((sum(gaps) + long_gap) / 6)
    e = stage(doc, "engine")
    assert e["tokens"] * e["iterations"] == pytest.approx(100 + 5 + 3000 + 1)


@pytest.mark.parametrize("n, gap, p, o, budget", [
    (14, 0.9, "300 + (serial * 737) % 4000", "1 + (serial * 13) % 9", 512),
    (14, 0.9, "300 + (serial * 737) % 4000", "1 + (serial * 13) % 9", 2048),
    (20, 0.3, "50 + (serial * 911) % 3000", "2 + (serial * 7) % 11", 1024),
    (10, 2.0, "6000", "3", 8192),
])
def test_budget_against_the_scheduler_written_out(monkeypatch, n, gap, p, o, budget):
    def at(expr, i):
        return eval(expr.replace("serial", str(i)))  # the --def's body at serial i

    reqs = [dict(sent=(i + 1) * gap, p=at(p, i), o=at(o, i)) for i in range(n)]
    its = _vllm_engine(reqs, budget, _step)
    doc, recs = run("batched_tokens.sq", monkeypatch, sets={"B": budget}, arrivals=n, horizon=math.inf,
                    warmup=0, defs={"step_cost": "1 + 0.001 * tokens", "gap": f"~det({gap})", "prompt_len": p,
                                    "output_len": o})
    order = np.argsort(recs["session"])
    assert np.allclose(recs["first_token"][order], [r["first"] for r in reqs], rtol=1e-12, atol=1e-9)
    assert np.allclose(recs["last_token"][order], [r["last"] for r in reqs], rtol=1e-12, atol=1e-9)
    e = stage(doc, "engine")
    assert e["iterations"] == len(its)
    assert e["tokens"] * e["iterations"] == pytest.approx(sum(its))


def test_budget_every_token_computed_once(monkeypatch):
    doc, recs = run("batched_tokens.sq", monkeypatch, sets={"B": 1024}, arrivals=30, horizon=math.inf, warmup=0)
    e = stage(doc, "engine")
    assert pool(doc, "kv")["preemptions"] == 0 and recs["cached"].sum() == 0 and len(recs["prompt"]) == 30
    assert e["tokens"] * e["iterations"] == pytest.approx((recs["prompt"] + recs["output"] - 1).sum())


def test_budget_trades_itl_for_ttft():
    table = serq_sweep.sweep(str(HERE / "batched_tokens.sq"), sets={"B": [512, 2048, 4096]}, seeds="1..2",
                             horizon=120, warmup=10, workers=0, progress=False)
    for _seed, rows in table.groupby("seed"):
        t = rows.set_index("B")
        itl, ttft = t["requests.itl.p99"], t["requests.ttft.mean"]
        assert itl[512] < itl[2048] < itl[4096]
        assert ttft[512] > ttft[2048] > ttft[4096]


# closed_loop.sq

_TINY = {"input_len": 10, "output_len": 3}


@pytest.mark.parametrize("m", [1, 2, 8])
def test_closed_loop_lockstep_by_hand(monkeypatch, m):
    """M clients in lockstep on a step clock: the M prompts prefill in one iteration (1 + 0.01 x 10 M s),
    then two decode iterations of M tokens (1 + 0.01 M s each): R for every request, X = M / R."""
    r = (1 + 0.1 * m) + 2 * (1 + 0.01 * m)
    doc, recs = run("closed_loop.sq", monkeypatch, sets={"M": m, **_TINY}, defs={"step_cost": "1 + 0.01 * tokens"},
                    horizon=60, warmup=0)
    assert np.allclose(recs["last_token"] - recs["sent"], r, rtol=0, atol=1e-9)
    assert doc["requests"]["ttft"]["mean"] == pytest.approx(1 + 0.1 * m)
    assert doc["mean_live"] == pytest.approx(m)
    assert doc["gauges"]["in_flight"]["min"] == doc["gauges"]["in_flight"]["max"] == m
    # the requests done by 60: M per round of R
    assert doc["requests"]["completed"] == m * math.floor(60 / r + 1e-9)


def test_closed_loop_littles_law_exact(monkeypatch):
    """Little's law without edges (warm-up 0): a client sends its next request at its last one's last token,
    so the sends are M zeros and the other requests' last tokens, and the M last tokens no recorded request
    was sent at are the sends of the M requests in flight at the horizon T. The time every request spent in
    flight before T, over T, is then the gauge in_flight's mean (its integral, kept by the engine), and M."""
    m, t = 12, 80.0
    doc, recs = run("closed_loop.sq", monkeypatch, sets={"M": m}, horizon=t, warmup=0)
    sent, last = np.sort(recs["sent"]), np.sort(recs["last_token"])
    assert (sent == 0).sum() == m
    # every later send is some request's last token: remove them one for one, M remain
    rest = list(last)
    for x in sent[m:]:
        i = int(np.searchsorted(rest, x))
        assert i < len(rest) and rest[i] == x
        rest.pop(i)
    assert len(rest) == m
    in_flight = (recs["last_token"] - recs["sent"]).sum() + sum(t - x for x in rest)
    g = doc["gauges"]["in_flight"]
    assert g["min"] == g["max"] == m
    assert in_flight / t == pytest.approx(g["mean"], rel=1e-12) and g["mean"] == pytest.approx(m, rel=1e-12)


def test_closed_loop_refuses_a_count_of_arrivals_as_such():
    """run(arrivals=N, horizon=inf) of a closed workload says that the count is the problem and what works
    instead, as the command line does (it was refused as a run with no bound, the count unmentioned)."""
    prog = compiled("closed_loop.sq")
    with pytest.raises(serq_sim.SimError, match=r"arrivals=150: needs an open workload.*arrive batch\(M\)"):
        serq_sim.run(prog, arrivals=150, horizon=math.inf)
    with pytest.raises(ValueError, match="horizon=inf, which is no bound"):
        serq_sim.run(prog, horizon=math.inf)


@pytest.mark.parametrize("m", [4, 32])
def test_closed_loop_littles_law_from_the_report(monkeypatch, m):
    """X R = M up to the window's edges: the records count the requests sent after the warm-up's end and done
    by the run's, M R / T fewer than the engine served."""
    doc, _ = run("closed_loop.sq", monkeypatch, sets={"M": m}, horizon=130, warmup=10)
    q = doc["requests"]
    x, r, t = q["request_throughput"], q["e2el"]["mean"], 120
    assert doc["mean_live"] == pytest.approx(m)
    assert x * r == pytest.approx(m * (1 - r / t), rel=0.05)
    assert x * r < m
    e = stage(doc, "engine")
    # the engine's req/s counts every request it finished in the window: X R / M within the window's edge
    assert e["request_throughput"] * r == pytest.approx(m, rel=0.05)


def test_closed_loop_concurrency_ceiling():
    table = serq_sweep.sweep(str(HERE / "closed_loop.sq"), sets={"M": [1, 8, 64]}, seeds="1", horizon=100,
                             warmup=10, workers=0, progress=False).set_index("M")
    tput, e2el, tpot = (table[f"requests.{k}"] for k in ("output_throughput", "e2el.mean", "tpot.mean"))
    assert tput[1] < tput[8] < tput[64] and e2el[1] < e2el[8] < e2el[64] and tpot[1] < tpot[8] < tpot[64]
    # the throughput per client falls: 8 clients get less than 8 times one's, 64 less than 8 times 8's
    assert tput[8] < 8 * tput[1] and tput[64] < 8 * tput[8]


# replica_metrics.sq

def test_replica_metrics_by_engine_against_the_records(tmp_path, serq_in_process):
    """serq metrics --by engine: each replica's row recomputed from the records, the replicas' rates adding
    up to the run's, and the `all` row under --duration the report's requests table, figure for figure."""
    sq = HERE / "replica_metrics.sq"
    serq("run", sq, "--horizon", 300, "--warmup", 50, "--records", tmp_path / "r.csv", "--json", "-o",
         tmp_path / "r.json", "--no-progress")
    # (the run as a child process, the module's other commands in this process)
    out = json.loads(serq("metrics", tmp_path / "r.csv", "--by", "engine", "--duration", 250, "--json",
                          here=serq_in_process).stdout)
    doc = json.loads((tmp_path / "r.json").read_text())
    recs = read_csv(tmp_path / "r.csv")
    rows = {r["group"].get("engine", "all"): r["requests"] for r in out["rows"]}
    assert set(rows) == {0, 1, 2, 3, "all"}
    whole = dict(rows["all"])
    assert whole.pop("table") == str(tmp_path / "r.csv")
    want = dict(doc["requests"])
    assert want.pop("table") == "request" and want.pop("itl") is not None and whole.pop("itl") is None
    assert {k: whole[k] for k in want} == want
    ttft = recs["first_token"] - recs["sent"]
    for j in range(4):
        mine = recs["engine"] == j
        r = rows[j]
        assert r["completed"] == mine.sum() > 0
        assert r["request_throughput"] == pytest.approx(mine.sum() / 250)
        assert r["ttft"]["mean"] == pytest.approx(ttft[mine].mean())
        assert r["ttft"]["p99"] == pytest.approx(np.percentile(ttft[mine], 99))
        assert r["prefix_cache_hit_rate"] == pytest.approx(recs["cached"][mine].sum() / recs["prompt"][mine].sum())
        k = mine & (recs["output"] > 1)
        tpot = (recs["last_token"] - recs["first_token"])[k] / (recs["output"][k] - 1)
        assert r["tpot"]["mean"] == pytest.approx(tpot.mean())
        # the stage table counts every request the engine finished in the window, those sent before it too
        e = member(doc, "stages", "engine", j)
        assert e["requests"] >= r["completed"]
    assert sum(rows[j]["request_throughput"] for j in range(4)) == pytest.approx(rows["all"]["request_throughput"])


def test_replica_tokens_are_their_requests(monkeypatch):
    """A run that drains without warm-up: each replica computes its requests' prompts less their hits and
    their outputs but the last token, as nothing is preempted."""
    doc, recs = run("replica_metrics.sq", monkeypatch, arrivals=40, horizon=math.inf, warmup=0)
    for j in range(4):
        mine = recs["engine"] == j
        e = member(doc, "stages", "engine", j)
        assert member(doc, "pools", "kv", j)["preemptions"] == 0
        want = (recs["prompt"] - recs["cached"] + recs["output"] - 1)[mine].sum()
        assert e["tokens"] * e["iterations"] == pytest.approx(want)
    # a hit is whole blocks and never the whole prompt
    assert (recs["cached"] % 16 == 0).all() and (recs["cached"] <= recs["prompt"] - 1).all()


def test_replica_one_engine_is_the_same_whatever_the_routing(monkeypatch):
    a = run("replica_metrics.sq", monkeypatch, sets={"N": 1, "sticky": 0}, horizon=150, warmup=0)
    b = run("replica_metrics.sq", monkeypatch, sets={"N": 1, "sticky": 1}, horizon=150, warmup=0)
    for k in a[1]:
        assert np.array_equal(a[1][k], b[1][k]), k


def test_replica_sticky_routing_finds_the_history(monkeypatch):
    """Random routing finds a follow-up's history on its replica one time in four; sticky every time (the
    cache holds every conversation): the follow-ups' hit rate, and each one's hit against its history."""
    rnd, rr = run("replica_metrics.sq", monkeypatch, sets={"sticky": 0}, horizon=200, warmup=0)
    stk, rs = run("replica_metrics.sq", monkeypatch, sets={"sticky": 1}, horizon=200, warmup=0)
    assert stk["requests"]["prefix_cache_hit_rate"] > rnd["requests"]["prefix_cache_hit_rate"] + 0.3
    # sticky: every follow-up (turn > 1) hits; under random routing a good share find nothing
    follow = rs["turn"] > 1
    assert (rs["cached"][follow] > 0).all()
    assert (rr["cached"][rr["turn"] > 1] == 0).mean() > 0.4


# rate_knee.sq

def test_knee_every_request_served_below_the_knee(monkeypatch):
    """Below the knee the engine computes each request's prompt and outputs but the last, once (no hit, no
    preemption), and the random dataset's lengths are uniform on [512, 1536] and [128, 384]."""
    doc, recs = run("rate_knee.sq", monkeypatch, sets={"Lambda": 3}, arrivals=120, horizon=math.inf, warmup=0)
    e = stage(doc, "engine")
    assert len(recs["prompt"]) == 120 and pool(doc, "kv")["preemptions"] == 0 and recs["cached"].sum() == 0
    assert e["tokens"] * e["iterations"] == pytest.approx((recs["prompt"] + recs["output"] - 1).sum())
    assert recs["prompt"].min() >= 512 and recs["prompt"].max() <= 1536
    assert recs["output"].min() >= 128 and recs["output"].max() <= 384
    # a drained run: the engine's and the requests' req/s are both every request over the run's length
    assert e["request_throughput"] == pytest.approx(120 / doc["end"])
    assert doc["requests"]["request_throughput"] == pytest.approx(120 / doc["end"])


def test_knee_which_throughput_flattens(monkeypatch):
    """Past the knee the engine's req/s is its capacity and the requests table's falls below it: the backlog
    the warm-up left is served in the window and counted by the engine alone (docs/vllm.md, "Past the
    knee"). Below the knee both follow the rate."""
    lo, _ = run("rate_knee.sq", monkeypatch, sets={"Lambda": 3}, horizon=200, warmup=20)
    hi, _ = run("rate_knee.sq", monkeypatch, sets={"Lambda": 12}, horizon=120, warmup=20)
    e_lo, e_hi = stage(lo, "engine"), stage(hi, "engine")
    assert e_lo["request_throughput"] == pytest.approx(3, rel=0.15)
    assert lo["requests"]["request_throughput"] == pytest.approx(e_lo["request_throughput"], rel=0.05)
    assert 6.5 < e_hi["request_throughput"] < 7.5
    assert hi["requests"]["request_throughput"] < e_hi["request_throughput"] - 0.4
    assert any("not steady" in w for w in hi["notes"]) and not any("not steady" in w for w in lo["notes"])


def test_knee_latency_rises_with_the_rate():
    table = serq_sweep.sweep(str(HERE / "rate_knee.sq"), sets={"Lambda": [2, 5, 8]}, seeds="1..2", horizon=100,
                             warmup=10, workers=0, progress=False)
    for _seed, rows in table.groupby("seed"):
        t = rows.set_index("Lambda")
        p99, tpot, x = t["requests.ttft.p99"], t["requests.tpot.mean"], t["stages.engine.request_throughput"]
        assert p99[2] < p99[5] < 1 < 5 < p99[8]
        assert tpot[2] < tpot[5] < tpot[8]
        assert x[2] == pytest.approx(2, rel=0.3) and x[8] < 7.5


# chat_batch.sq

def _joined(tmp_path, here, name, *sets):
    """serq run chat_batch.sq's records, the request table joined to the kind table on (session, turn), written
    as NAME.csv (docs/sweep.md, "A column of the program's own"); the run's JSON report beside them."""
    base = tmp_path / name
    serq("run", HERE / "chat_batch.sq", *sets, "--horizon", 200, "--warmup", 20, "--records", f"{base}.csv",
         "--slo", "ttft=0.5,tpot=0.05", "--json", "-o", f"{base}.json", "--no-progress", here=here)
    req, kind = read_csv(f"{base}.request.csv"), read_csv(f"{base}.kind.csv")
    at = {(s, t): b for s, t, b in zip(kind["session"], kind["turn"], kind["batch"])}
    assert len(at) == len(kind["session"])  # one kind row a request
    req["batch"] = np.array([at[(s, t)] for s, t in zip(req["session"], req["turn"])])
    cols = list(req)
    with open(f"{base}.joined.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerows(zip(*(req[c] for c in cols)))
    return req, json.loads(Path(f"{base}.json").read_text())


def _meets(recs, ttft=math.inf, tpot=math.inf, e2el=math.inf):
    """Whether each request meets every objective given: TTFT, TPOT (over more than one output token) and E2E."""
    dec = recs["last_token"] - recs["first_token"]
    tp = np.divide(dec, recs["output"] - 1, out=np.zeros_like(dec), where=recs["output"] > 1)
    return ((recs["first_token"] - recs["sent"] <= ttft) & (tp <= tpot)
            & (recs["last_token"] - recs["sent"] <= e2el))


def test_chat_batch_attainment_by_kind(tmp_path, serq_in_process):
    recs, doc = _joined(tmp_path, serq_in_process, "p1")
    joined = tmp_path / "p1.joined.csv"
    out = json.loads(serq("metrics", joined, "--by", "batch", "--duration", 180, "--slo", "ttft=0.5,tpot=0.05",
                          "--json", here=serq_in_process).stdout)
    rows = {r["group"].get("batch", "all"): r["requests"] for r in out["rows"]}
    good = _meets(recs, ttft=0.5, tpot=0.05)
    for b in (0, 1):
        mine = recs["batch"] == b
        assert rows[b]["completed"] == mine.sum() > 0
        assert rows[b]["good"] == good[mine].sum()
        assert rows[b]["attainment"] == pytest.approx(good[mine].mean())
    assert rows[0]["completed"] + rows[1]["completed"] == doc["requests"]["completed"]
    # the whole row is the run's own --slo figures
    for k in ("good", "goodput", "attainment"):
        assert rows["all"][k] == pytest.approx(doc["requests"][k])
    # the batch's own objective, a run of its own with --where
    out = json.loads(serq("metrics", joined, "--where", "batch=1", "--duration", 180, "--slo", "e2el=60",
                          "--json", here=serq_in_process).stdout)
    (row,) = out["rows"]
    assert row["requests"]["attainment"] == pytest.approx(_meets(recs, e2el=60)[recs["batch"] == 1].mean())


def test_chat_batch_priority_helps_the_chat(tmp_path, serq_in_process):
    """Both policies see the same requests (common random numbers); priority raises the chat's attainment and
    lowers its TTFT p99, and the batch pays for it."""
    r1, _ = _joined(tmp_path, serq_in_process, "p1")
    r0, _ = _joined(tmp_path, serq_in_process, "p0", "--set", "policy=0")
    a = {(s, b, p, o) for s, b, p, o in zip(r1["session"], r1["batch"], r1["prompt"], r1["output"])}
    b = {(s, b, p, o) for s, b, p, o in zip(r0["session"], r0["batch"], r0["prompt"], r0["output"])}
    common = a & b
    assert len(common) > 0.9 * min(len(a), len(b))
    sent1 = dict(zip(r1["session"], r1["sent"]))
    assert all(sent1[s] == t for s, t in zip(r0["session"], r0["sent"]) if s in sent1)
    chat1, chat0 = r1["batch"] == 0, r0["batch"] == 0
    assert _meets(r1, 0.5, 0.05)[chat1].mean() > _meets(r0, 0.5, 0.05)[chat0].mean() + 0.1
    t1, t0 = (r["first_token"] - r["sent"] for r in (r1, r0))
    assert np.percentile(t1[chat1], 99) < np.percentile(t0[chat0], 99)
    assert np.mean(t1[~chat1]) > np.mean(t0[~chat0])


def test_chat_batch_both_tiers_and_tables(monkeypatch):
    """Both tiers give the same two tables; every request row has its kind row (the kind table also holds the
    requests sent before the warm-up's end, recorded after it)."""
    _doc, recs = run("chat_batch.sq", monkeypatch, horizon=100, warmup=10)
    req, kind = recs["request"], recs["kind"]
    keys = set(zip(kind["session"], kind["turn"]))
    assert set(zip(req["session"], req["turn"])) <= keys and len(kind["session"]) > len(req["session"])
    assert (req["sent"] >= 10).all()


# block_share.sq

_TURNS = {"msg_len": "100", "out_len": "20", "again": "turn_no < 4"}


@pytest.mark.parametrize("bs, s_pin, prompts, hits", [
    # the remainder 1 016 - S_pin opens each conversation; turn k's own prompt is that + 100 k + 20 (k - 1),
    # its hit the previous turn's prompt and answer in whole blocks, never the last token
    (16, 1008, [108, 228, 348, 468], [0, 112, 240, 352]),
    (32, 992, [124, 244, 364, 484], [0, 128, 256, 352]),
])
def test_block_share_turns_by_hand(monkeypatch, bs, s_pin, prompts, hits):
    doc, recs = run("block_share.sq", monkeypatch, sets={"bs": bs, "S": 1016}, defs=_TURNS, arrivals=1,
                    horizon=math.inf, warmup=0)
    order = np.argsort(recs["turn"])
    assert recs["prompt"][order].tolist() == prompts and recs["cached"][order].tolist() == hits
    assert doc["requests"]["prefix_cache_hit_rate"] == pytest.approx(sum(hits) / sum(prompts))
    whole = (4 * s_pin + sum(hits)) / (4 * s_pin + sum(prompts))
    assert whole == pytest.approx({16: 4736 / 5184, 32: 4704 / 5184}[bs])
    # the pinned blocks are out of the pool's cap: the same 128 160 tokens of GPU either way
    assert pool(doc, "kv")["over_cap"] == 0


@pytest.mark.parametrize("bs", [16, 32])
def test_block_share_every_follow_up_finds_its_history(monkeypatch, bs):
    """With a cache that evicts only ended conversations (LRU: a live one was used within a think time),
    every follow-up's hit is its previous turn's prompt and answer in whole blocks of bs, never the last
    token (the records' previous row of the same conversation)."""
    doc, recs = run("block_share.sq", monkeypatch, sets={"bs": bs}, horizon=250, warmup=0)
    assert pool(doc, "kv")["evicted_entries"] > 0 and pool(doc, "kv")["preemptions"] == 0
    prev = {(s, t): (p, o) for s, t, p, o in zip(recs["session"], recs["turn"], recs["prompt"], recs["output"])}
    n = 0
    for s, t, c in zip(recs["session"], recs["turn"], recs["cached"]):
        if t == 1:
            assert c == 0
        elif (s, t - 1) in prev:
            p, o = prev[(s, t - 1)]
            assert c == (p + o - 1) // bs * bs
            n += 1
    assert n > 50


# autoscale.sq

def _batch_ci(x, k=20):
    """Mean and 95 % CI half-width of x by k batch means."""
    b = np.array([c.mean() for c in np.array_split(x, k)])
    return {"mean": x.mean(), "ci": 2.093 * b.std(ddof=1) / math.sqrt(k)}


def _cv2(g):
    return g.var() / g.mean() ** 2


@pytest.mark.parametrize(("cv2", "n"), [(1, 8000), (4, 16000)])
def test_autoscale_arrivals_law(monkeypatch, cv2, n):
    """The gaps between sends: mean 1 / Lambda and squared coefficient of variation cv2 (one-token requests on
    a fast clock, so that the run is the arrivals). The cv2's CI is the jackknife's over 20 blocks (a
    ratio's estimate from blocks of a few hundred gaps is biased low for a hyperexponential).

    Poisson gaps (cv2 1) take 8 000 requests: the mean's CI is 0.36 of the width allowed (0.31 over 16 000), so a
    mean gap 1.3 % above or 3.0 % below 1/12 fails (2.1 % and 1.7 % over 16 000), and the cv2's CI 0.14 of its
    width, an error of 2.7 % above or 5.5 % below failing (2.6 % and 3.6 %). Hyperexponential gaps keep 16 000:
    over 8 000 a mean 5.8 % too high would pass."""
    k = 20
    _doc, recs = run("autoscale.sq", monkeypatch, sets={"cv2": cv2, "N": 1},
                     defs={"step_cost": "0.0001", "prompt_len": "1", "output_len": "1"}, arrivals=n,
                     horizon=math.inf, warmup=0)
    gaps = np.diff(np.concatenate([[0.0], np.sort(recs["sent"])]))
    assert len(gaps) == n
    covers(_batch_ci(gaps, k), 1 / 12, 0.06)
    blocks = np.array_split(gaps, k)
    loo = np.array([_cv2(np.concatenate(blocks[:i] + blocks[i + 1:])) for i in range(k)])
    est = k * _cv2(gaps) - (k - 1) * loo.mean()
    ci = 2.093 * math.sqrt((k - 1) / k * ((loo - loo.mean()) ** 2).sum())
    covers({"mean": est, "ci": ci}, cv2, 0.3)


def test_autoscale_find_is_the_grid():
    """--find's fewest replicas for the TTFT p99 is the grid's, and the p99 falls as replicas are added (common
    random numbers: every N sees the same requests)."""
    kw = dict(sets={"cv2": [4]}, seeds="1..2", horizon=100, warmup=10, workers=0, progress=False)
    table = serq_sweep.sweep(str(HERE / "autoscale.sq"), **dict(kw, sets={"cv2": [4], "N": [1, 2, 3, 4]}))
    p99 = table.groupby("N")["requests.ttft.p99"].mean()
    assert p99[1] > p99[2] > p99[3] >= p99[4]
    for _seed, rows in table.groupby("seed"):
        t = rows.set_index("N")["requests.ttft.p99"]
        assert t[1] > t[2] > t[3]
    bound = 0.45
    want = min(n for n in p99.index if p99[n] <= bound)
    _cols, rows = serq_sweep.find(str(HERE / "autoscale.sq"), f"requests.ttft.p99 <= {bound}", ("N", "1:4:1"),
                                  **kw)
    (row,) = rows
    assert row["outcome"] == "found_smallest" and row["N"] == want and 2 <= want <= 4
    # the replicas that keep up serve the whole rate
    x = table[table["N"] == want]["requests.request_throughput"].mean()
    assert x == pytest.approx(12, rel=0.15)


# token_ledger.sq

def _ledger(recs):
    """The records' side of the ledger: each request's prompt less its first hit and its outputs but the
    last, and for a preempted one the tokens its last re-admission recomputed (had - 1 - c); and the request
    rows joined to the redo rows."""
    req, redo = recs["request"], recs["redo"]
    at = {(s, t): (h, c) for s, t, h, c in zip(redo["session"], redo["turn"], redo["had"], redo["c"])}
    hc = np.array([at[(s, t)] for s, t in zip(req["session"], req["turn"])])
    base = (req["prompt"] - req["cached"] + req["output"] - 1).sum()
    pre = req["preemptions"] > 0
    return base, base + (hc[pre, 0] - 1 - hc[pre, 1]).sum()


@pytest.mark.parametrize("blocks, iterations, tokens, preempted, had, c", [
    (3, 11, 22, 1, 5, 0),  # preempted in iteration 3 with 4 computed, its block evicted: recomputes 4
    (4, 8, 21, 1, 8, 4),   # preempted in iteration 6 with 7 computed, one block cached: recomputes 3
    (6, 7, 18, 0, 4, 0),   # room for both: no preemption
])
def test_ledger_two_requests_by_hand(monkeypatch, blocks, iterations, tokens, preempted, had, c):
    doc, recs = run("token_ledger.sq", monkeypatch, sets={"blocks": blocks, "bs": 4},
                    defs={"step_cost": "1", "gap": "~det(1)", "prompt_len": "4", "output_len": "6"}, arrivals=2,
                    horizon=math.inf, warmup=0)
    e = stage(doc, "engine")
    assert e["iterations"] == iterations and e["tokens"] * e["iterations"] == pytest.approx(tokens)
    assert doc["end"] == 1 + iterations
    req, redo = recs["request"], recs["redo"]
    assert req["preemptions"][np.argsort(req["session"])].tolist() == [0, preempted]
    second, last = int(np.argmax(req["session"])), int(np.argmax(redo["session"]))
    assert redo["had"][last] == had and redo["c"][last] == c and redo["runs"][last] == 1 + preempted
    assert req["first_token"][second] == 3 and req["last_token"][second] == 1 + iterations
    base, total = _ledger(recs)
    assert base == 18 and total == tokens


def test_ledger_closes_on_a_drained_run(monkeypatch):
    """Every request recorded and each preempted once: the engine's tokens are the records' ledger to the
    token."""
    doc, recs = run("token_ledger.sq", monkeypatch, sets={"blocks": 1800, "Lambda": 0.7}, arrivals=150,
                    horizon=math.inf, warmup=0)
    req = recs["request"]
    assert len(req["session"]) == 150
    assert req["preemptions"].max() == 1 and req["preemptions"].sum() == pool(doc, "kv")["preemptions"] == 8
    e = stage(doc, "engine")
    base, total = _ledger(recs)
    assert total > base
    assert e["tokens"] * e["iterations"] == pytest.approx(total, rel=1e-12)


def test_ledger_is_a_bound_under_repeated_preemption(monkeypatch):
    """Requests preempted several times: the last re-admission's figures undercount, and the tokens computed
    are at least the ledger's; fewer blocks, more preemptions and more tokens (this workload, seed 1)."""
    counts, tokens = [], []
    for blocks in (1000, 1200, 1400):
        doc, recs = run("token_ledger.sq", monkeypatch, sets={"blocks": blocks}, arrivals=60, horizon=math.inf,
                        warmup=0)
        e = stage(doc, "engine")
        base, total = _ledger(recs)
        assert recs["request"]["preemptions"].max() >= 2 or blocks == 1400
        assert e["tokens"] * e["iterations"] >= total - 1e-6 and total >= base
        counts.append(pool(doc, "kv")["preemptions"])
        tokens.append(e["tokens"] * e["iterations"])
    assert counts[0] > counts[1] > counts[2] and tokens[0] > tokens[1] > tokens[2]


# preempt_swap.sq

def test_swap_tier_off_is_the_library(monkeypatch):
    """With the tier off the written-out request is lib/vllm.sq's, request for request."""
    kw = dict(arrivals=40, horizon=math.inf, warmup=0)
    doc1, r1 = run("preempt_swap.sq", monkeypatch, sets={"tier": 0, "path": 1}, **kw)
    doc0, r0 = run("preempt_swap.sq", monkeypatch, sets={"tier": 0, "path": 0}, **kw)
    assert pool(doc0, "kv")["preemptions"] > 10
    for k in r0["request"]:
        assert np.array_equal(r0["request"][k], r1["request"][k]), k
    assert stage(doc0, "engine") == stage(doc1, "engine")


def test_swap_ledger_and_link_on_a_drained_run(monkeypatch):
    """Each preempted request preempted once: the engine's tokens are the ledger's, the hits of its
    re-admission split between the GPU and the tier; the link's busy time is its blocks moved at 0.1 ms each,
    the GPU's spills written and the tier's hits read."""
    doc, recs = run("preempt_swap.sq", monkeypatch, sets={"blocks": 1800, "Lambda": 0.7}, arrivals=150,
                    horizon=math.inf, warmup=0)
    req, led = recs["request"], recs["ledger"]
    assert len(req["session"]) == 150 and req["preemptions"].max() == 1
    at = {(s, t): (h, g, c) for s, t, h, g, c in zip(led["session"], led["turn"], led["had"], led["gpu"], led["cpu"])}
    hgc = np.array([at[(s, t)] for s, t in zip(req["session"], req["turn"])])
    pre = req["preemptions"] > 0
    assert pre.sum() == pool(doc, "kv")["preemptions"] > 3 and hgc[pre, 2].sum() > 0
    assert (hgc[~pre, 1:] == 0).all() and (req["cached"] == 0).all()
    want = (req["prompt"] + req["output"] - 1).sum() + (hgc[pre, 0] - 1 - hgc[pre, 1] - hgc[pre, 2]).sum()
    e = stage(doc, "engine")
    assert e["tokens"] * e["iterations"] == pytest.approx(want, rel=1e-12)
    spills = pool(doc, "kv")["spills"]
    busy = stage(doc, "pcie")["utilisation"] * doc["end"]
    assert busy == pytest.approx(spills * 0.0001 + hgc[pre, 2].sum() / 16 * 0.0001, rel=1e-9)


def test_swap_saves_recomputation(monkeypatch):
    """The same requests with the tier off and on: the tier's engine computes fewer tokens, near what the
    answers need (prompt + output - 1 each: nothing is shared)."""
    kw = dict(arrivals=60, horizon=math.inf, warmup=0)
    off, r0 = run("preempt_swap.sq", monkeypatch, sets={"tier": 0}, **kw)
    on, r1 = run("preempt_swap.sq", monkeypatch, sets={"tier": 1}, **kw)
    need = (r0["request"]["prompt"] + r0["request"]["output"] - 1).sum()
    assert need == (r1["request"]["prompt"] + r1["request"]["output"] - 1).sum()
    t0, t1 = (stage(d, "engine")["tokens"] * stage(d, "engine")["iterations"] for d in (off, on))
    assert t0 > 1.2 * need and need <= t1 < 1.05 * need


def test_knee_plot_and_per_replica_sweep_records(tmp_path, serq_in_process):
    """The curve's plot from a sweep table, the engine's throughput as x; and a sweep's records read per run
    and per replica by serq metrics --by engine, each run's replicas adding up to its whole."""
    serq("sweep", HERE / "rate_knee.sq", "--set", "Lambda=2,8", "--horizon", 60, "--warmup", 10, "--out",
         tmp_path / "knee.csv", "--no-progress")
    serq("plot", tmp_path / "knee.csv", "--x", "stages.engine.request_throughput", "--y", "requests.ttft.p99",
         "--log", "y", "-o", tmp_path / "curve.svg", here=serq_in_process)
    assert (tmp_path / "curve.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    serq("sweep", HERE / "autoscale.sq", "--set", "N=2,3", "--horizon", 40, "--warmup", 5, "--records",
         tmp_path / "recs.csv", "--out", tmp_path / "as.csv", "--no-progress")
    out = json.loads(serq("metrics", tmp_path / "recs.csv", "--by", "engine", "--json", here=serq_in_process).stdout)
    runs = {}
    for r in out["rows"]:
        runs.setdefault(r["run"]["N"], {})[r["group"].get("engine", "all")] = r["requests"]["completed"]
    assert set(runs) == {2, 3}
    for n, groups in runs.items():
        assert set(groups) == set(range(n)) | {"all"}
        assert sum(groups[j] for j in range(n)) == groups["all"] > 0


def test_chat_batch_metrics_by_a_column_of_another_table(tmp_path, serq_in_process):
    """serq metrics --by a column the request table lacks and the run's other table has: the message says
    where the column is and to join the two (it named the request table's columns alone)."""
    _joined(tmp_path, serq_in_process, "p1")
    joined = tmp_path / "p1.joined.csv"
    joined.rename(tmp_path / "p1_kind.csv")
    r = subprocess.run([SERQ, "metrics", tmp_path / "p1.request.csv", "--by", "batch"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert f"the column batch is in {tmp_path / 'p1.kind.csv'}, another table of the same run: join the two on " \
           "session and turn first" in r.stderr
    # the join saved beside them as a table of the run's name is named as the file to give
    (tmp_path / "p1_kind.csv").rename(tmp_path / "p1.all.csv")
    # (the first refusal as a child process, the others in this process)
    r = serq_in_process("metrics", str(tmp_path / "p1.request.csv"), "--by", "batch")
    assert r.returncode == 1 and f"{tmp_path / 'p1.all.csv'} beside it is a table of requests with the column " \
        "batch: give serq metrics that file" in r.stderr
    (tmp_path / "p1.all.csv").rename(joined)
    # a column no table of the run has: no such sentence
    r = serq_in_process("metrics", str(tmp_path / "p1.request.csv"), "--by", "tenant")
    assert r.returncode == 1 and "has no column tenant" in r.stderr and "another table" not in r.stderr
    # the joined file has it
    serq("metrics", tmp_path / "p1.joined.csv", "--by", "batch", here=serq_in_process)


def test_swap_preempted_while_reading_back():
    """docs/vllm.md, "A request preempted while it reads the tier back": at 0.1 ms a block one session is
    preempted again before its prefill computed anything (the pool's stuck count and the report's warning);
    with reads that take no time none is, and the tokens computed hardly move."""
    slow = report("preempt_swap.sq")  # (the program's two tiers agree in the tests above)
    fast = report("preempt_swap.sq", sets={"rd": 0})
    assert pool(slow, "kv")["stuck"] == 1 and pool(fast, "kv")["stuck"] == 0
    assert any("preempted again without progress" in n for n in slow["notes"])
    t_slow, t_fast = (stage(d, "engine")["tokens"] * stage(d, "engine")["iterations"] for d in (slow, fast))
    assert t_slow == pytest.approx(t_fast, rel=0.005)


def test_closed_loop_peak_concurrency_is_m(tmp_path, serq_in_process):
    """serq metrics' peak concurrent requests of the closed loop is M: each send is at the instant another
    request's last token came, a departure counted before the arrival at one instant (M + 1 otherwise)."""
    serq("run", HERE / "closed_loop.sq", "--set", "M=12", "--horizon", 60, "--warmup", 5, "--records",
         tmp_path / "c.csv", "--no-progress", "-o", tmp_path / "c.txt", here=serq_in_process)
    recs = read_csv(tmp_path / "c.csv")
    assert len(set(recs["sent"]) & set(recs["last_token"])) > 50
    out = json.loads(serq("metrics", tmp_path / "c.csv", "--duration", 55, "--json", here=serq_in_process).stdout)
    (row,) = out["rows"]
    assert row["max_concurrent_requests"] == 12
