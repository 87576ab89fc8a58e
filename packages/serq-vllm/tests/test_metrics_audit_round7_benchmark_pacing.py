"""examples/single-turn/vllm_benchmark_paced.sq: `vllm bench serve --request-rate R`'s own pacing of the sends.

vLLM's benchmark (vllm/benchmarks/serve.py, ``get_request``) draws a gap for every request, the first included,
takes their running sums and scales them so that the last request is sent at exactly ``N / R`` after the
benchmark's clock starts (``target_total_delay_s = total_requests / request_rate``); ``benchmark_duration`` runs
from that clock's start, before the first send, to the last response. With ``--burstiness 1`` the scaled sums of
N exponential gaps are N - 1 uniform order statistics of ``[0, N / R]`` and then ``N / R``, which the example
writes as N sessions started at 0, each waiting a uniform send time (the last, ``N / R``). Checked here from
its records: the sends by that definition (the largest exactly ``N / R``, the others inside the interval and
spread as uniforms are), and the requests section as ``calculate_metrics`` computes it from the requests'
outputs over the duration from 0 to the last token. The run is the same on the tier serQ picks and on the
general engine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(300)

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "vllm_benchmark_paced.sq"
N, RATE = 200, 4


def _run(monkeypatch, **sets):
    prog = serq_frontend.compile(path=str(EXAMPLE), sets={"N": N, "rate": RATE, **sets})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(serq_sim.run(prog))
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


def test_the_sends_are_the_benchmarks_scaled_gaps(monkeypatch):
    report = _run(monkeypatch)
    rec = report.records(kind="numpy")
    sent = np.sort(rec["sent"])
    assert len(sent) == N
    # the last send at N / R exactly; every other one inside [0, N / R)
    assert sent[-1] == N / RATE and sent[-2] < N / RATE and sent[0] >= 0
    # the others are N - 1 uniforms of the interval: a Kolmogorov-Smirnov distance within the 5 % bound
    u = sent[:-1] / (N / RATE)
    k = np.arange(1, N)
    ks = max(np.max(k / (N - 1) - u), np.max(u - (k - 1) / (N - 1)))
    assert ks < 1.36 / math.sqrt(N - 1)
    # no session is sent before its time: a slot is always free (max_concurrency inf), so t0 is the send
    assert report.result.arrivals == N and report.result.ended == N


def test_the_requests_section_is_calculate_metrics_over_the_duration_from_the_clock_start(monkeypatch):
    report = _run(monkeypatch)
    rec = report.records(kind="numpy")
    req = report.result.requests
    sent, first, last, out = rec["sent"], rec["first_token"], rec["last_token"], rec["output"]
    duration = float(last.max())  # the benchmark's clock starts at 0, before the first send
    assert req.duration == duration == report.result.end
    assert req.completed == N and req.request_throughput == N / duration
    assert req.output_throughput == float(out.sum()) / duration == N * 128 / duration
    assert req.total_token_throughput == N * (1024 + 128) / duration
    ttft, e2el = first - sent, last - sent
    tpot = (e2el - ttft) / (out - 1)  # the benchmark's (latency - ttft) / (output_len - 1)
    for name, x in (("ttft", ttft), ("e2el", e2el), ("tpot", tpot)):
        m = getattr(req, name)
        assert m.count == N
        assert (m.mean, m.std, m.median, m.p99) == pytest.approx(
            (np.mean(x), np.std(x), np.median(x), np.percentile(x, 99)), rel=1e-12), name
    # and the window is the benchmark's: the Poisson example's first send at 0 would leave its first gap out
    assert float(sent.min()) > 0
    report.set_slo({"ttft": float(np.median(ttft))})
    doc = json.loads(encode_json(report))["requests"]
    assert doc["good"] == int(np.sum(ttft <= np.median(ttft))) and doc["goodput"] == doc["good"] / duration
