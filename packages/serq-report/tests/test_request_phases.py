"""vLLM v1's per-request phases in the request metrics, against schedules worked out by hand and numpy.

vLLM (vllm/v1/metrics/stats.py, ``IterationStats.update_from_finished_request``) observes per finished
request ``vllm:request_queue_time_seconds`` = scheduled_ts - queued_ts, ``..._prefill_time_seconds`` =
first_token_ts - scheduled_ts, ``..._decode_time_seconds`` = last_token_ts - first_token_ts and
``..._inference_time_seconds`` = last_token_ts - scheduled_ts, where scheduled_ts is the request's FIRST
scheduling (a rescheduling after a preemption leaves it) and first_token_ts its first output. With
lib/vllm.sq's columns: queue = admitted - sent, prefill = first_token - admitted, decode = last_token -
first_token, infer = last_token - admitted; a row whose admitted is negative (never admitted) has none.

The programs run lib/vllm.sq on the step clock (cost 1: times are iteration numbers), block 4.
"""

from __future__ import annotations

import csv
import json
import math
import random

import msgspec
import numpy as np
import pytest
import serq_frontend
import serq_report
import serq_sim
from serq_ir.report import REQUEST_PHASES, REQUEST_STATS, MetricStats, RequestMetrics, Result
from serq_sim.metrics import request_metrics
from serq_sim.stats import batch_means_ci

pytestmark = pytest.mark.timeout(60)

# A request preempted before its first token. KV 3 blocks of 4 tokens, budget 3 tokens an iteration:
#   A (session 0): sent 0, prompt 3, output 6;  B (session 1): sent 0, prompt 6, output 2.
#   t=0  admit A, A prefills 3 (1 block); the budget is spent, B waits
#   t=1  end: A's first token. A decodes (3 -> 4); admit B (reserve 6: 1 + 2 blocks fit), B prefills 2
#        (1 block)                                                                    B's first scheduling: 1
#   t=2  end: A token 2. A decodes (4 -> 5, grows to 2 blocks: 3 used); B prefills 2 (2 -> 4)
#   t=3  end: A token 3. A decodes (5 -> 6); B's next chunk (4 -> 6) needs a 4th block: preempt lifo = B,
#        before its first token (it caches its 4 computed tokens)
#   t=4, 5, 6  end: A tokens 4, 5, 6: row A (0, 0, 1, 6), frees its blocks. B is admitted again at 6 (its
#        reserve did not fit beside A's 2 blocks): hit 4, prefills 2
#   t=7  end: B's first token, decodes 1;  t=8  end: B's last token: row B (0, 1, 7, 8), one preemption
# Phases (queue, prefill, decode, infer): A (0, 1, 5, 6); B (1, 6, 1, 7): B's prefill holds the wait after
# the preemption and the recompute, as vLLM's scheduled_ts is the first scheduling (were it the latest
# admission, B's queue would be 6 and its prefill 1).
PREEMPTED_IN_PREFILL = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 3 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 3; cost 1; memory kv; }
workload { arrive batch(2); hidden o; }
session {
  set prompt = serial == 0 ? 3 : 6;
  set o = serial == 0 ? 6 : 2;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 20; warmup 0; }
"""
COLS = ("session", "sent", "admitted", "first_token", "last_token", "preemptions")


def _run():
    return serq_sim.run(serq_frontend.compile(source=PREEMPTED_IN_PREFILL))


def _got(m: MetricStats):
    return (m.count, m.mean, m.median, m.p90, m.p95, m.p99)


def _numpy_stats(x):
    a = np.asarray(x, dtype=float)
    return (len(x), float(np.mean(a)), float(np.median(a)), float(np.percentile(a, 90)),
            float(np.percentile(a, 95)), float(np.percentile(a, 99)))


def test_a_request_preempted_before_its_first_token_keeps_its_first_scheduling():
    report = _run()
    rows = report.records(kind="numpy")
    assert list(zip(*(rows[c].tolist() for c in COLS))) == [(0, 0.0, 0.0, 1.0, 6.0, 0), (1, 0.0, 1.0, 7.0, 8.0, 1)]
    assert next(p for p in report.result.pools if p.name == "kv").preemptions == 1
    req = report.result.requests
    # vLLM's "Total input tokens" and "Total generated tokens": A's prompt 3 and output 6, B's 6 and 2
    assert (req.total_input_tokens, req.total_output_tokens) == (9.0, 8.0)
    # by hand (A, B): queue 0 1, prefill 1 6, decode 5 1, infer 6 7; two values: p_q = a + (b - a) * q / 100
    assert _got(req.queue) == pytest.approx((2, 0.5, 0.5, 0.9, 0.95, 0.99), rel=1e-14)
    assert _got(req.prefill) == pytest.approx((2, 3.5, 3.5, 5.5, 5.75, 5.95), rel=1e-14)
    assert _got(req.decode) == pytest.approx((2, 3.0, 3.0, 4.6, 4.8, 4.96), rel=1e-14)
    assert _got(req.infer) == pytest.approx((2, 6.5, 6.5, 6.9, 6.95, 6.99), rel=1e-14)
    for m, x in ((req.queue, [0, 1]), (req.prefill, [1, 6]), (req.decode, [5, 1]), (req.infer, [6, 7])):
        assert _got(m) == _numpy_stats(x)
    # TTFT = queue + prefill (A 1, B 7) and E2E latency = queue + infer (A 6, B 8), request by request
    assert _got(req.ttft) == _numpy_stats([1, 7]) and _got(req.e2el) == _numpy_stats([6, 8])


def test_the_text_json_and_a_sweep_s_table_show_the_phases(tmp_path):
    report = _run()
    text = serq_report.render(report, "text").splitlines()
    table = text[text.index(next(line for line in text if line.startswith("metric "))):]
    table = table[: table.index("")]
    cells = {line.split()[0]: line.split()[1:] for line in table}
    assert list(cells) == ["metric", *REQUEST_STATS]
    # count, mean, std (of two values: half their distance), ci (nan below 40 values), median, p90, p95,
    # p99 as .6g writes the hand values
    assert cells["queue"] == ["2", "0.5", "0.5", "nan", "0.5", "0.9", "0.95", "0.99"]
    assert cells["prefill"] == ["2", "3.5", "2.5", "nan", "3.5", "5.5", "5.75", "5.95"]
    assert cells["decode"] == ["2", "3", "2", "nan", "3", "4.6", "4.8", "4.96"]
    assert cells["infer"] == ["2", "6.5", "0.5", "nan", "6.5", "6.9", "6.95", "6.99"]

    doc = json.loads(serq_report.render(report, "json"))["requests"]
    assert [k for k in doc if k in REQUEST_STATS] == list(REQUEST_STATS)
    assert doc["prefill"] == {"count": 2, "mean": 3.5, "std": 2.5, "ci": None, "median": 3.5, "p90": 5.5, "p95": 5.75,
                              "p99": pytest.approx(5.95, rel=1e-14)}
    assert (doc["queue"]["mean"], doc["decode"]["mean"], doc["infer"]["mean"]) == (0.5, 3.0, 6.5)

    path = tmp_path / "p.sq"
    path.write_text(PREEMPTED_IN_PREFILL)
    out = tmp_path / "t.csv"
    serq_sim.sweep(str(path), seeds=[1], workers=0, out=str(out), progress=False)
    with open(out, newline="") as f:
        (row,) = list(csv.DictReader(f))
    for name, mean in (("queue", 0.5), ("prefill", 3.5), ("decode", 3.0), ("infer", 6.5)):
        assert float(row[f"requests.{name}.mean"]) == mean
        assert row[f"requests.{name}.count"] == "2"
    assert float(row["requests.prefill.p99"]) == pytest.approx(5.95, rel=1e-14)


class _Table:
    """A record table as the metric set reads one (serq_sim.records.Records: name, columns, column())."""

    def __init__(self, **cols):
        self.name = "request"
        self.columns = list(cols)
        self._cols = cols

    def column(self, name):
        return list(self._cols[name])


def test_the_totals_of_tokens_are_the_columns_sums_and_nan_without_a_prompt_column():
    t = _Table(sent=[0.0, 1.0], first_token=[1.0, 2.0], last_token=[2.0, 4.0], output=[3.0, 4.5])
    m = request_metrics(t, 10.0)
    assert m.total_output_tokens == 7.5 and math.isnan(m.total_input_tokens)
    t = _Table(sent=[0.0, 1.0], first_token=[1.0, 2.0], last_token=[2.0, 4.0], output=[3.0, 4.5], prompt=[10.0, 0.5])
    m = request_metrics(t, 10.0)
    assert (m.total_input_tokens, m.total_output_tokens) == (10.5, 7.5)
    assert m.total_token_throughput == (10.5 + 7.5) / 10.0


def test_a_row_never_admitted_is_left_out_of_the_phases_only():
    # (sent, admitted, first, last, output): row 1 was never admitted (-1): in TTFT, TPOT and E2EL, not in
    # the phases; row 2 was preempted before its first token (first scheduling 2, first token 6)
    t = _Table(sent=[0.0, 1.0, 2.0, 2.5], admitted=[0.5, -1.0, 2.0, 4.0], first_token=[1.0, 2.0, 6.0, 4.5],
               last_token=[3.0, 4.0, 6.0, 7.5], output=[5, 3, 1, 4])
    m = request_metrics(t, 10.0)
    assert (m.completed, m.ttft.count, m.e2el.count, m.tpot.count) == (4, 4, 4, 3)
    # queue 0.5 0 1.5; prefill 0.5 4 0.5; decode 2 0 3; infer 2.5 4 3.5 (three values: index 1.8 at p90)
    assert _got(m.queue) == pytest.approx((3, 2 / 3, 0.5, 1.3, 1.4, 1.48), rel=1e-14)
    assert _got(m.prefill) == pytest.approx((3, 5 / 3, 0.5, 3.3, 3.65, 3.93), rel=1e-14)
    assert _got(m.decode) == pytest.approx((3, 5 / 3, 2.0, 2.8, 2.9, 2.98), rel=1e-14)
    assert _got(m.infer) == pytest.approx((3, 10 / 3, 3.5, 3.9, 3.95, 3.99), rel=1e-14)
    # every row never admitted: the phases have no values (count 0, NaN), the rest is there
    none = request_metrics(_Table(sent=[0.0], admitted=[-1.0], first_token=[1.0], last_token=[2.0], output=[2]), 1.0)
    assert none.ttft.count == 1
    for name in REQUEST_PHASES:
        st = getattr(none, name)
        assert st.count == 0 and math.isnan(st.mean) and math.isnan(st.p99)


def test_without_an_admitted_column_there_are_no_phases():
    t = _Table(sent=[0.0, 1.0], first_token=[1.0, 3.0], last_token=[2.0, 5.0], output=[2, 3])
    m = request_metrics(t, 10.0)
    assert m.ttft.count == 2
    assert all(getattr(m, name) is None for name in REQUEST_PHASES)
    result = Result(horizon=10.0, end=10.0, warmup=0.0, seed=1, events=1, arrivals=2, ended=2, turns=0,
                    mean_live=0.5, requests=m)
    text = serq_report.render(result, "text")
    assert "\nttft " in text and "\ne2el " in text
    assert not any(line.split()[:1] == [name] for line in text.splitlines() for name in REQUEST_PHASES)
    doc = json.loads(serq_report.render(result, "json"))["requests"]
    assert all(doc[name] is None for name in REQUEST_PHASES)


def test_a_request_metrics_object_written_before_the_phases_still_loads():
    stats = {"count": 1, "mean": 1.0, "ci": 0.0, "median": 1.0, "p90": 1.0, "p95": 1.0, "p99": 1.0}
    old = {"table": "request", "completed": 1, "duration": 1.0, "request_throughput": 1.0, "output_throughput": 2.0,
           "total_token_throughput": 3.0, "ttft": stats, "tpot": stats, "itl": None, "e2el": stats, "slo": {},
           "good": None, "goodput": None, "prefix_cache_hit_rate": None}
    m = msgspec.json.decode(json.dumps(old), type=RequestMetrics)
    assert m.e2el.mean == 1.0 and all(getattr(m, name) is None for name in REQUEST_PHASES)


def test_the_phases_of_a_random_table_are_numpys():
    rng = random.Random(11)
    for _ in range(40):
        n = rng.randrange(1, 120)
        sent = [rng.random() * 100 for _ in range(n)]
        admitted = [s + rng.expovariate(2.0) if rng.random() > 0.1 else -1.0 for s in sent]
        first = [max(s, a) + rng.expovariate(5.0) for s, a in zip(sent, admitted)]
        last = [f + rng.expovariate(0.5) * rng.choice([0, 1, 1]) for f in first]
        t = _Table(sent=sent, admitted=admitted, first_token=first, last_token=last,
                   output=[rng.randrange(1, 50) for _ in range(n)])
        m = request_metrics(t, 100.0)
        s, a, f, la = (np.asarray(c) for c in (sent, admitted, first, last))
        kept = a >= 0
        want = {"queue": (a - s)[kept], "prefill": (f - a)[kept], "decode": (la - f)[kept], "infer": (la - a)[kept]}
        for name, x in want.items():
            st = getattr(m, name)
            if len(x) == 0:
                assert st.count == 0 and math.isnan(st.median)
                continue
            assert (st.count, st.median, st.p90, st.p95, st.p99) == (len(x),) + _numpy_stats(x)[2:], name
            assert st.mean == math.fsum(x.tolist()) / len(x)  # correctly rounded sum over n
            assert st.mean == pytest.approx(float(np.mean(x)), rel=1e-12)
            assert st.std == pytest.approx(float(np.std(x)), rel=1e-12, abs=1e-12), name  # vLLM's np.std
            ci = batch_means_ci(x.tolist()) if len(x) >= 40 else math.nan
            assert st.ci == ci or (math.isnan(st.ci) and math.isnan(ci)), name
