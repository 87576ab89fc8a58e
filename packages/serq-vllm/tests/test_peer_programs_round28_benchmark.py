"""examples/single-turn/vllm_benchmark.sq, vLLM's serving benchmark as a finite run, checked.

A vLLM engineer wrote `vllm bench serve --num-prompts N --request-rate R --max-concurrency M` with the
random dataset's constant lengths: `run { arrivals N; }`, `arrive poisson(R)` and a pool of M slots that a
request holds from its send to its last token. The report's requests section is checked against the
benchmark's summary computed from the records as the benchmark computes it from its outputs (numpy's
mean, std, median and percentiles; the duration from the first send to the last token), and the first
requests and the semaphore are traced by hand with lib/step_costs.sq's a100_qwen3_8b constants.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "vllm_benchmark.sq"
# a100_qwen3_8b: c + d decoders + e kv_decode + a prefilled + b attention
C, D, E, A, B = 0.013939, 0.00004105, 0.00000013786, 0.000051527, 0.0000000040196


def _run(**sets):
    report = serq_sim.run(serq_frontend.compile(path=str(EXAMPLE), sets=sets))
    return report, report.records()


def test_the_requests_section_is_the_benchmarks_summary_of_the_records():
    report, df = _run(N=60)
    req = report.result.requests
    assert len(df) == req.completed == 60 and report.result.arrivals == 60
    # the benchmark's clock starts at the first send and stops at the last response
    assert df.sent.min() == 0 and report.result.end == df.last_token.max()
    duration = df.last_token.max() - df.sent.min()
    assert req.duration == duration
    assert (req.total_input_tokens, req.total_output_tokens) == (60 * 1024, 60 * 128)
    assert req.request_throughput == pytest.approx(60 / duration, rel=1e-12)
    assert req.output_throughput == pytest.approx(60 * 128 / duration, rel=1e-12)
    assert req.total_token_throughput == pytest.approx(60 * 1152 / duration, rel=1e-12)
    per_request = {"ttft": df.first_token - df.sent, "e2el": df.last_token - df.sent,
                   "tpot": (df.last_token - df.first_token) / (df.output - 1)}
    for name, values in per_request.items():
        x = values.to_numpy()
        got = getattr(req, name)
        want = (x.mean(), np.std(x), np.median(x), np.percentile(x, 99))
        assert (got.mean, got.std, got.median, got.p99) == pytest.approx(want, rel=1e-9), name


def test_the_first_requests_and_the_semaphore_by_hand():
    # rate 1000: all ten generated within some 0.01 s, two slots. Request 0 alone: one prefill step of 1024
    # tokens, c + a 1024 + b 1024 (0 + 512) = 0.0688101 s. Request 1 (sent at its arrival, the second slot
    # free) is admitted at that step's end and prefills beside request 0's first decode, whose KV is 1025
    # tokens in blocks of 16 (1040): c + d + e 1040 + a 1024 + b 524288 later. Every later request is sent
    # when one in flight ends: request k + 2 at request k's last token.
    _, df = _run(N=10, rate=1000, max_concurrency=2)
    df = df.sort_values("session").reset_index(drop=True)
    first = C + A * 1024 + B * 1024 * 512
    assert df.first_token[0] == pytest.approx(first, rel=1e-12) and df.admitted[1] == df.first_token[0]
    second = C + D + E * 1040 + A * 1024 + B * 1024 * 512
    assert df.first_token[1] == pytest.approx(first + second, rel=1e-12)
    assert df.sent[1] < 0.01
    assert df.sent[2:].tolist() == df.last_token[:8].tolist()
    # never more than two in flight: at each send, fewer than two earlier requests are still running
    for k in range(10):
        running = ((df.sent < df.sent[k]) & (df.last_token > df.sent[k])).sum()
        assert running <= 1, k


def test_no_concurrency_cap_sends_each_request_at_its_arrival():
    # max_concurrency inf (the benchmark's default): the slots never hold a request back
    report, df = _run(N=40, rate=8)
    clients = report.pool("clients")
    assert clients.wait == 0 and clients.queue == 0 and clients.admissions == 40
    sent = df.sort_values("session").sent
    assert sent.iloc[0] == 0 and sent.is_monotonic_increasing
