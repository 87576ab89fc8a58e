"""A request metric's median and p90/p95/p99 beside an infinite value. numpy's linear interpolation (which
serq_sim.metrics.quantile follows bit for bit) takes ``inf - inf`` there and gave NaN: TTFT 1, 2, 3, 4, inf
had p90, p95 and p99 NaN. The one rule now (serq_sim.metrics.quantile and median, which the report's
``requests`` section, the ITL gaps of step/tokens.py and ``serq metrics`` all call): a quantile whose index
falls on a value is that value, one between a value and an infinity, or between two equal infinities, is the
infinity, one between -inf and inf NaN; between finite values it is numpy's as before. An observe's quantiles
are nearest rank (serq_sim.stats.rank), never interpolated: an infinite sample is the quantile when its rank
is the infinity's, checked here too. The infinity is written as the report writes one elsewhere: ``inf`` in
the text and the CSV, null in JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conform import report_json, run
from serq_sim.metrics import beyond, quantile, stats_of
from serq_sim.stats import observe_summary

INF = math.inf


def q(values, p):
    s = sorted(values)
    return quantile(len(s), p, s.__getitem__)


@pytest.mark.parametrize("values, p, want", [
    # n = 5, index (n - 1) p / 100: p90 3.6 between 4 and inf; p95 3.8, p99 3.96 the same
    ([1.0, 2.0, 3.0, 4.0, INF], 90, INF),
    ([1.0, 2.0, 3.0, 4.0, INF], 95, INF),
    ([1.0, 2.0, 3.0, 4.0, INF], 99, INF),
    # p90 3.6 between inf and inf
    ([1.0, 2.0, 3.0, INF, INF], 90, INF),
    # p50 index 2.0, on the 3
    ([1.0, 2.0, 3.0, INF, INF], 50, 3.0),
    # n = 11: p90 at index 9.0 exactly, on the 10 (numpy: 10 + (inf - 10) * 0 = NaN); p95 9.5 past it
    ([float(i) for i in range(1, 11)] + [INF], 90, 10.0),
    ([float(i) for i in range(1, 11)] + [INF], 95, INF),
    # n = 100, 98 ones and two infs: p95 index 94.05 between ones, p99 98.01 between the infs
    ([1.0] * 98 + [INF, INF], 95, 1.0),
    ([1.0] * 98 + [INF, INF], 99, INF),
    # -inf below: p10 of -inf, 1, 2, 3, 4 at index 0.4, between -inf and 1
    ([-INF, 1.0, 2.0, 3.0, 4.0], 10, -INF),
    ([-INF, -INF, 2.0], 25, -INF),
    # between -inf and inf no value is nearer
    ([-INF, INF], 50, math.nan),
])
def test_quantile_by_hand(values, p, want):
    got = q(values, p)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == want


def test_the_old_figure_was_nan():
    """What numpy gives (and this rule replaces) for the first case: NaN."""
    with np.errstate(invalid="ignore"):
        assert math.isnan(np.percentile([1.0, 2.0, 3.0, 4.0, INF], 90))


def test_finite_values_are_numpy_bit_for_bit():
    rng = np.random.default_rng(50)
    for n in (1, 2, 3, 7, 40, 101):
        x = rng.exponential(size=n).tolist()
        for p in (50, 90, 95, 99):
            assert q(x, p) == float(np.percentile(x, p)), (n, p)


def test_beyond_rule():
    assert beyond(4.0, INF, 0.0) == 4.0
    assert beyond(4.0, INF, 0.5) == INF
    assert beyond(-INF, 4.0, 0.5) == -INF
    assert beyond(INF, INF, 0.3) == INF
    assert math.isnan(beyond(-INF, INF, 0.5))
    assert math.isnan(beyond(math.nan, INF, 0.5))


def test_stats_of_by_hand():
    """TTFT 1, 2, 3, 4, inf: mean inf, std NaN (inf - inf), median 3, p90 p95 p99 inf; four ones and two infs:
    median (1 + 1) / 2 = 1, p90 at 4.5 between inf and inf; 1, inf: median (1 + inf) / 2 = inf."""
    s = stats_of([1.0, 2.0, 3.0, 4.0, INF])
    assert (s.count, s.mean, s.median, s.p90, s.p95, s.p99) == (5, INF, 3.0, INF, INF, INF)
    assert math.isnan(s.std)
    s = stats_of([1.0, INF, 1.0, INF, 1.0, 1.0])
    assert (s.median, s.p90, s.p99) == (1.0, INF, INF)
    assert stats_of([1.0, INF]).median == INF


def test_observe_quantiles_nearest_rank_with_inf():
    """40 samples 0 … 38 and inf: p50 the 20th smallest 19, p90 the 36th 35, p95 the 38th 37, p99 the 40th
    (⌈39.6⌉), inf."""
    n, mean, ci, cv2, qs = observe_summary([float(i) for i in range(39)] + [INF])
    assert (n, mean) == (40, INF)
    assert qs == [19.0, 35.0, 37.0, INF]


PROGRAM = """
stage d : delay;
workload { arrive batch(5); }
session {
  set t0 = now;
  run d (serial + 1);
  set f = serial == 4 ? now + 1 / 0 : now;
  record request { sent = t0; first_token = f; last_token = f; output = 1; prompt = 10; }
}
run { horizon 100; }
"""


def test_report_requests_on_both_tiers(monkeypatch):
    """TTFT and E2EL 1, 2, 3, 4, inf (the last request's first token at 5 + 1/0): median 3, p90 p95 p99 inf
    (NaN before), on both tiers (conform.run asserts the two reports the same bytes); in JSON null, as the
    mean's inf is, and in the text and the CSV ``inf``."""
    from serq_report.summary_csv import render_csv
    from serq_report.text import render_text

    r, _ = run(PROGRAM, monkeypatch)
    t = r.result.requests.ttft
    assert (t.count, t.mean, t.median, t.p90, t.p95, t.p99) == (5, INF, 3.0, INF, INF, INF)
    e = r.result.requests.e2el
    assert (e.median, e.p90, e.p95, e.p99) == (3.0, INF, INF, INF)
    js = report_json(r)["requests"]["ttft"]
    assert (js["mean"], js["median"], js["p90"], js["p95"], js["p99"]) == (None, 3.0, None, None, None)
    text = render_text(r)
    (row,) = [line.split() for line in text.splitlines() if line.startswith("ttft ")]
    assert row == ["ttft", "5", "inf", "nan", "nan", "3", "inf", "inf", "inf"]
    csv = {tuple(line.split(",")[:3]): line.split(",")[3] for line in render_csv(r).splitlines()[1:]}
    got = [csv["requests", "ttft", k] for k in ("mean", "median", "p90", "p95", "p99")]
    assert got == ["inf", "3.0", "inf", "inf", "inf"]


def test_serq_metrics(tmp_path, serq_in_process):
    """``serq metrics`` of the same rows from a records file: the same figures (text and JSON)."""
    p = tmp_path / "req.csv"
    rows = [(0, i + 1, i + 1) for i in range(4)] + [(0, "inf", "inf")]
    p.write_text("sent,first_token,last_token,output\n" + "".join(f"{s},{f},{la},1\n" for s, f, la in rows))
    r = serq_in_process("metrics", str(p), "--duration", "100", "--json")
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["rows"]
    t = row["requests"]["ttft"]
    assert (t["median"], t["p90"], t["p95"], t["p99"]) == (3.0, None, None, None)
    r = serq_in_process("metrics", str(p), "--duration", "100")
    assert r.returncode == 0, r.stderr
    (line,) = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("ttft ")]
    assert line == ["ttft", "5", "inf", "nan", "nan", "3", "inf", "inf", "inf"]
