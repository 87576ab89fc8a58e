"""Common random numbers through sweeps of a vLLM engine: the arms of a comparison see the same requests
(arrivals, prompt and output lengths) under one seed, two identical arms differ by exactly 0, the paired
statistics are those computed by hand from the per-run table, and the table and records are the same
bytes whatever the worker count, and after a resume."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import serq_sweep
from serq_sweep.api import run_plan
from serq_sweep.pairing import arms_plan, comparisons
from serq_sweep.stats import t975
from tquantile import t975 as t_quantile

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[3]
VLLM = str(ROOT / "examples/multi-turn/vllm_single_turn.sq")
RUN = {"horizon": 40, "warmup": 5}

# Student t, 0.975 quantiles (scipy.stats.t.ppf(0.975, df))
T = {2: 4.302652729749462, 3: 3.1824463052837078, 4: 2.7764451051977934, 5: 2.5705818356363146,
     6: 2.4469118511449786}


def _arms(values, seeds="1..4"):
    plan = arms_plan([VLLM], sets={"B": values}, seeds=seeds, **RUN)
    columns, table, complete, _ = run_plan(plan, workers=0, progress=False)
    assert complete
    return plan, columns, table


def test_two_identical_vllm_arms_differ_by_exactly_zero():
    plan, columns, table = _arms([512, 512])
    figures = ["requests.ttft.mean", "requests.itl.p99", "requests.completed", "stages.engine.iterations"]
    rows, same = comparisons(plan, columns, table)
    assert rows == [] and same > 20  # every figure equal in every run: all left out
    rows, _ = comparisons(plan, columns, table, figures)
    assert [r["figure"] for r in rows] == figures
    for r in rows:
        a = [x[r["figure"]] for x in table if x["point"] == 0]
        assert (r["n"], r["diff"], r["ci_paired"], r["variance_reduction"]) == (4, 0.0, 0.0, 1.0)
        # Welch over two equal samples: var a = var b, df = 2 (n - 1) = 6
        assert r["ci_unpaired"] == pytest.approx(T[6] * math.sqrt(2 * np.var(a, ddof=1) / 4), rel=1e-12)


def test_budget_arms_see_the_same_requests_and_the_paired_statistics_are_the_hand_ones():
    frame, recs = serq_sweep.sweep(VLLM, sets={"B": [512, 2048]}, seeds="1..4", workers=0, progress=False,
                                   records=True, **RUN)
    # the same requests under one seed: every session both arms recorded was sent at the same time with
    # the same prompt and output (the deployment changes only when they are served)
    common = 0
    for seed in (1, 2, 3, 4):
        a = recs[(recs.B == 512) & (recs.seed == seed)].set_index("session")
        b = recs[(recs.B == 2048) & (recs.seed == seed)].set_index("session")
        both = a.index.intersection(b.index)
        assert len(both) >= 0.9 * max(len(a), len(b))
        for c in ("sent", "prompt", "output"):
            assert (a.loc[both, c] == b.loc[both, c]).all(), (seed, c)
        assert (a.loc[both, "first_token"] != b.loc[both, "first_token"]).any()  # served differently
        common += len(both)
    assert common > 300

    plan = arms_plan([VLLM], sets={"B": [512, 2048]}, seeds="1..4", **RUN)
    columns = list(frame.columns)
    table = frame.to_dict("records")
    rows, _ = comparisons(plan, columns, table, ["requests.ttft.mean", "requests.e2el.p90", "requests.tpot.mean"])
    for r in rows:
        f = r["figure"]
        a = np.array([x[f] for x in table if x["B"] == 512])
        b = np.array([x[f] for x in table if x["B"] == 2048])
        d = b - a
        n = 4
        assert (r["arm"], r["base"], r["n"]) == ("B=2048", "B=512", n)
        assert r["a"] == pytest.approx(a.mean(), rel=1e-14) and r["b"] == pytest.approx(b.mean(), rel=1e-14)
        assert r["diff"] == pytest.approx(d.mean(), rel=1e-12, abs=1e-15)
        assert r["ci_paired"] == pytest.approx(T[3] * d.std(ddof=1) / math.sqrt(n), rel=1e-12)
        va, vb = a.var(ddof=1) / n, b.var(ddof=1) / n
        df = (va + vb) ** 2 / ((va**2 + vb**2) / (n - 1))  # Welch-Satterthwaite, between 3 and 6, as it is
        assert r["ci_unpaired"] == pytest.approx(t_quantile(df) * math.sqrt(va + vb), rel=1e-11)
        assert r["variance_reduction"] == pytest.approx(
            1 - d.var(ddof=1) / (a.var(ddof=1) + b.var(ddof=1)), rel=1e-12)
        if f != "requests.ttft.mean":  # (over 4 seeds the budget's effect on TTFT varies as much as TTFT)
            assert r["ci_paired"] < 0.2 * r["ci_unpaired"] and r["variance_reduction"] > 0.9, r


def test_welch_degrees_of_freedom_are_taken_as_they_are():
    # docs/sweep.md: a comparison's unpaired CI is Welch's, its degrees of freedom fractional as they come
    # (scipy.stats.t.ppf(0.975, df) and Welch's t-test take them so); they were rounded down
    exact = {5.21: 2.5397279101901957, 30.5: 2.04086944518632, 31.5: 2.0382021367118837,
             40.0: 2.021075390306273, 40.99: 2.0195559332039514, 45.9: 2.0130139478879756,
             120.5: 1.9798467346393642, 1000.25: 1.9623384864941926, 5000.5: 1.9604385042432446}
    for df, t in exact.items():
        assert t975(df) == pytest.approx(t, rel=1e-12), df
    qs = [t975(df) for df in sorted(exact)]
    assert qs == sorted(qs, reverse=True) and t975(math.inf) == pytest.approx(1.959963984540054, rel=1e-15)


def test_the_table_and_records_are_the_same_bytes_for_any_worker_count_and_after_a_resume(tmp_path):
    def run(name, seeds, workers):
        out, recs = tmp_path / f"{name}.csv", tmp_path / f"{name}.records.csv"
        serq_sweep.sweep(VLLM, sets={"B": [512, 2048]}, seeds=seeds, workers=workers, progress=False,
                         out=str(out), records=str(recs), horizon=20, warmup=5)
        return [p.read_bytes() for p in (out, recs, tmp_path / f"{name}.points.csv")]

    one = run("w0", "1..3", 0)
    assert one == run("w2", "1..3", 2)
    run("resumed", "1..2", 2)          # a sweep of fewer seeds, then the whole one into the same files
    assert one == run("resumed", "1..3", 1)
    assert one == run("resumed", "1..3", 2)  # a rerun of a finished sweep: nothing changes
    assert one[0].count(b"\n") == 1 + 6 and one[1].count(b"\n") > 100  # 2 points x 3 seeds; the requests


@pytest.mark.parametrize("k", [1e-120, 1e-100, 1e-90, 1e78, 1e100, 1e120])
def test_the_welch_ci_of_figures_far_from_one_is_theirs_in_units_of_one(k):
    # the Welch degrees of freedom took fourth powers of the sds: figures of 1e+-78 or beyond, within the
    # range the variances are taken in without scaling (2**+-450), overflowed (OverflowError) or
    # underflowed to a division by zero, and serq compare ended in a traceback
    from serq_sweep.stats import paired

    a, b = [0.0, 1.0, 0.0, 1.0, 0.5], [1.0, 0.0, 0.0, 3.0, 0.25]
    one = paired(a, b)
    far = paired([k * x for x in a], [k * y for y in b])
    for key in ("a", "b", "diff", "ci_paired", "ci_unpaired"):
        assert far[key] == pytest.approx(k * one[key], rel=1e-12), key
    assert far["variance_reduction"] == pytest.approx(one["variance_reduction"], rel=1e-12)
    va, vb = np.var(a, ddof=1) / 5, np.var(b, ddof=1) / 5
    df = (va + vb) ** 2 / ((va**2 + vb**2) / 4)  # 5.2112, as it is: t 2.5395609 (scipy.stats.t.ppf)
    assert df == pytest.approx(5.211196526025468, rel=1e-12)
    assert one["ci_unpaired"] == pytest.approx(2.539560931293001 * math.sqrt(va + vb), rel=1e-12)
