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
from peers import pool, run_both, stage
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


def serq(*args, timeout=120):
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
    assert len(files) >= 7
    r = subprocess.run([SERQ, "fmt", "--check", *map(str, files)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


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
