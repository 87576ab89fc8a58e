"""vLLM programs of an eleventh round of users (tests/peer_programs11/), each checked against truths of its
own: a replica set behind a router by KV use or queue length, chunked prefill under a long-prefill
threshold traced by hand on the step clock, a prefix-heavy chat with short think times (its hit rate counted
by hand on a conversation of two turns), an engine whose KV cache is too small (preemption storms) and a
max_num_seqs sweep. Every run: requests in = completed + in flight, the report's request metrics recomputed
from the records, Little's law on the engine's residents, hit rates within [0, 1]."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_vllm.target import target

HERE = Path(__file__).resolve().parent / "peer_programs11"
pytestmark = pytest.mark.timeout(60)


def run(name: str, sets: dict | None = None, defs: dict | None = None, **over):
    prog = serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})
    return prog, serq_sim.run(prog, **over)


def drained(name: str, n: int, sets: dict | None = None, defs: dict | None = None):
    """Exactly n sessions, every one drained, measured from time 0."""
    return run(name, sets, defs, arrivals=n, horizon=math.inf, warmup=0.0)


def check_metrics(r) -> dict:
    """The report's request metrics against the records' rows, recomputed: TTFT = first - sent, E2EL =
    last - sent, TPOT = (last - first) / (output - 1) over the requests of more than one token (vLLM's
    benchmark); the totals and the prefix-cache hit rate, cached tokens over prompt tokens."""
    rows = r.records("request", kind="numpy")
    req = r.result.requests
    assert req.completed == len(rows["sent"])
    o = rows["output"]
    many = o > 1
    values = {"ttft": rows["first_token"] - rows["sent"], "e2el": rows["last_token"] - rows["sent"],
              "tpot": (rows["last_token"][many] - rows["first_token"][many]) / (o[many] - 1)}
    for name, v in values.items():
        s = getattr(req, name)
        assert s.count == len(v), name
        assert math.isclose(s.mean, float(v.mean()), rel_tol=1e-12), name
        assert math.isclose(s.std, float(np.std(v)), rel_tol=1e-9, abs_tol=1e-15), name
        assert math.isclose(s.median, float(np.median(v)), rel_tol=1e-12), name
        assert math.isclose(s.p99, float(np.percentile(v, 99)), rel_tol=1e-12), name
    assert req.total_input_tokens == rows["prompt"].sum()
    assert req.total_output_tokens == o.sum()
    rate = req.prefix_cache_hit_rate
    assert 0 <= rate <= 1
    assert math.isclose(rate, rows["cached"].sum() / rows["prompt"].sum(), rel_tol=1e-12, abs_tol=1e-15)
    assert (rows["cached"] >= 0).all() and (rows["cached"] <= rows["prompt"] - 1).all()
    return rows


def check_little(r, rows, engines: int) -> None:
    """Little's law on each engine's residents, exactly, where nothing was preempted: a request is a resident
    (holds a slot of reqs[j], a job of engine[j]) from its admission to its last token, so the time-average
    residents over [0, end] are the residence times summed over end."""
    assert (rows["preemptions"] == 0).all()
    for j in range(engines):
        on = rows["engine"] == j
        held = float((rows["last_token"][on] - rows["admitted"][on]).sum())
        idx = j if engines > 1 else None
        assert math.isclose(r.pool("reqs", idx).holders * r.result.end, held, rel_tol=1e-9), j
        assert math.isclose(r.stage("engine", idx).present, r.pool("reqs", idx).holders, rel_tol=1e-12), j


@pytest.mark.parametrize("policy", [0, 1], ids=["kv_use", "queue_length"])
def test_replicas_behind_a_router_conserve_requests_and_keep_little(policy):
    prog, r = drained("replicas.sq", 300, {"policy": policy})
    assert r.result.arrivals == r.result.ended == 300
    rows = check_metrics(r)
    assert len(rows["sent"]) == 300
    # each engine's request count (the engine table) is the records it served; every engine took some
    served = [int((rows["engine"] == j).sum()) for j in range(3)]
    assert served == [r.pool("reqs", j).admissions for j in range(3)]
    assert min(served) > 0 and sum(served) == 300
    check_little(r, rows, 3)
    assert target(prog)["config"] == {"block_size": 16, "enable_prefix_caching": True,
                                      "long_prefill_token_threshold": 64, "max_num_batched_tokens": 256,
                                      "max_num_seqs": 8, "num_gpu_blocks": 201}


def test_replicas_in_flight_at_the_horizon_are_the_arrivals_not_ended():
    # a finite horizon: every session is one request, so the sessions in flight at the end are the requests
    # running or waiting on some engine then (the gauge's last value), and the records are the ended ones
    _, r = run("replicas.sq", {"Lambda": 30}, horizon=20.0, warmup=0.0)
    rows = r.records("request", kind="numpy")
    in_flight = r.gauge("in_flight").values[-1]
    assert in_flight > 0
    assert r.result.arrivals == r.result.ended + in_flight == len(rows["sent"]) + in_flight
