"""Which of vLLM's two TPOT formulas the report computes, and how far apart they are.

vLLM's benchmark (vllm/benchmarks/serve.py, ``calculate_metrics``) takes a request's TPOT as
``(latency - ttft) / (output_len - 1)``, both times measured from the request's send; vLLM v1's histogram
``vllm:request_time_per_output_token_seconds`` as ``decode_time / (num_generation_tokens - 1)``, ``decode_time =
last_token_ts - first_token_ts``. The two are one number rounded differently. The report takes the second,
``(last_token - first_token) / (output - 1)`` (docs/language.md), and its goodput compares that with the SLO.
examples/multi-turn/vllm_single_turn.sq over [10, 60] s (seed 1) records 182 requests; the two formulas give
different doubles for one of them (session 66: 0.025696209379710955 against vLLM's benchmark's
0.025696209379710958), a relative difference of about one rounding. The run is on the step engine, the same on
every tier (``conform.run`` compares the two reports byte for byte).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conform import run

pytestmark = pytest.mark.timeout(120)

PROGRAM = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_single_turn.sq"


def _report(monkeypatch):
    src = PROGRAM.read_text().replace("run { horizon 1800; warmup 180; seed 1; }",
                                      "run { horizon 60; warmup 10; seed 1; }")
    assert src != PROGRAM.read_text()
    monkeypatch.chdir(PROGRAM.parent)
    report, _ = run(src, monkeypatch)
    return report


def test_tpot_is_the_decode_time_over_the_later_tokens_and_within_a_rounding_of_the_benchmark_s(monkeypatch):
    report = _report(monkeypatch)
    rec = report.records(kind="numpy")
    sent, first, last, out = (rec[c].tolist() for c in ("sent", "first_token", "last_token", "output"))
    ours = [(la - f) / (o - 1) for s, f, la, o in zip(sent, first, last, out) if o > 1]
    bench = [((la - s) - (f - s)) / (o - 1) for s, f, la, o in zip(sent, first, last, out) if o > 1]
    req = report.result.requests
    assert (req.completed, req.tpot.count) == (182, 181)
    assert req.tpot.median == float(np.median(ours))
    assert (req.tpot.p90, req.tpot.p99) == (float(np.percentile(ours, 90)), float(np.percentile(ours, 99)))
    assert req.tpot.mean == math.fsum(ours) / len(ours)
    # the benchmark's formula gives another double for one request, one rounding away
    apart = [(a, b) for a, b in zip(ours, bench) if a != b]
    assert apart == [(0.025696209379710955, 0.025696209379710958)]
    assert all(abs(a - b) <= 2 * math.ulp(a) for a, b in zip(ours, bench))
    # goodput at that request's TPOT compares the report's value: good under both formulas here
    a = apart[0][0]
    report.set_slo({"tpot": a})
    good = report.result.requests.good
    assert good == sum(v <= a for v in ours) + sum(o == 1 for o in out)
