"""An audit of serq sweep and serq compare against hand-computable cases: an M/M/1 queue swept over its
arrival rate against 1/(mu - lambda), arms that differ by a known amount or not at all under common random
numbers, the same table from every engine and every rerun, and the text they print."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from serq_sweep.pairing import render

SERQ = str(Path(sys.executable).parent / "serq")


def test_compare_lines_up_a_figure_named_in_wide_characters():
    # an IR file's observe named 延迟 (two wide characters: four columns on a terminal); each cell padded
    # to the columns it takes (written out by hand)
    row = {"a": 1.0, "b": 2.0, "diff": 1.0, "ci_paired": 0.5, "ci_unpaired": 0.75, "variance_reduction": 0.5}
    rows = [{"arm": "2", "base": "1", "figure": "observes.延迟.mean", **row},
            {"arm": "2", "base": "1", "figure": "events", **row}]
    assert render(rows, 0, 3).split("\n") == [
        "2 - 1, paired over 3 seeds (95 % CIs):",
        "  figure" + " " * 14 + "a  b  diff  ci_paired  ci_unpaired  variance_reduction",
        "  observes.延迟.mean  1  2" + "     1" + "        0.5" + "         0.75" + " " * 15 + "50.0%",
        "  events" + " " * 14 + "1  2" + "     1" + "        0.5" + "         0.75" + " " * 15 + "50.0%",
        "",
    ]


MM1 = """
let lambda = 0.5;
let extra = 0;
let B = 0;
stage svc : fifo;
workload { arrive poisson(lambda); }
session {
  set t0 = now;
  run svc (~exp(1) + extra);
  observe response = now - t0;
  observe b = B;
  end;
}
run { horizon 20000; warmup 500; seed 1; }
"""


def _mm1(tmp_path) -> str:
    path = tmp_path / "mm1.sq"
    path.write_text(MM1)
    return str(path)


def _compare(path, seeds="1..3", figures=(), **sets):
    from serq_sweep.api import run_plan
    from serq_sweep.pairing import arms_plan, comparisons

    plan = arms_plan([path], sets=sets, seeds=seeds, horizon=2000, warmup=100)
    columns, table, complete, _ = run_plan(plan, workers=0, progress=False)
    assert complete
    return plan, columns, table, comparisons(plan, columns, table, figures)


def test_arms_whose_values_agree_to_six_digits_keep_labels_of_their_own(tmp_path):
    # three values of extra that six significant digits write alike (0.1, 0.1, 0.1), and two whole ones
    # (1.23457e+06 twice): each arm is labelled by its own value, and each is a block of its own
    path = _mm1(tmp_path)
    _, _, _, (rows, _) = _compare(path, figures=["response.mean"], extra="0.1000001,0.1000002,0.1000003")
    assert [(r["base"], r["arm"]) for r in rows] == [("extra=0.1000001", "extra=0.1000002"),
                                                ("extra=0.1000001", "extra=0.1000003")]
    text = render(rows, 0, 3)
    assert "extra=0.1000002 - extra=0.1000001, paired over 3 seeds" in text
    assert "extra=0.1000003 - extra=0.1000001, paired over 3 seeds" in text
    _, _, _, (rows, _) = _compare(path, figures=["b.mean"], B="1234567,1234568")
    assert [(r["base"], r["arm"], r["diff"], r["ci_paired"]) for r in rows] == [("B=1234567", "B=1234568", 1.0, 0.0)]


def test_show_labels_each_point_by_its_own_value(tmp_path):
    from serq_sweep import core
    from serq_sweep.api import run_plan
    from serq_sweep.cli import show_table

    plan = core.plan([_mm1(tmp_path)], sets={"lambda": "0.1000001,0.1000002"}, seeds=[1], horizon=500,
                     warmup=10)
    columns, table, complete, _ = run_plan(plan, workers=0, progress=False)
    assert complete
    lines = show_table(plan, columns, table, ["response.count"]).splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["0.1000001", "0.1000002"]


@pytest.mark.parametrize("c", [1.0, 1e-300, 1e-200, 1e300, 2.0 ** -1000, 2.0 ** 1000])
def test_means_cis_and_paired_differences_of_tiny_or_huge_figures(c):
    # by hand: 1, 2, 3 (times c) have mean 2 and sd 1, so the 95 % half-width is t(2) / sqrt(3), where t(2)
    # = 0.95 / sqrt(2 * 0.975 * 0.025) = 4.3026527 (Student's t of 2 degrees of freedom in closed form); b - a
    # of a = 1, 2, 3 and b = 2, 2.5, 5 is 1, 0.5, 2: mean 7/6, sd sqrt(7/12) (squares 1/36, 4/9, 25/36 over 2),
    # paired half-width t(2) sqrt(7/36); b's deviations from 19/6 are -7/6, -4/6, 11/6, var(b) = (186/36) / 2
    # = 31/12, so the reduction is 1 - (7/12) / (1 + 31/12) = 36/43, and Welch's se is sqrt(1/3 + 31/36) =
    # sqrt(43) / 6 over df = (43/36)**2 / ((1/9 + (31/36)**2) / 2) = 3698/1105 = 3.3466, as it is: t(3698/1105)
    # = 3.00386935632253 (scipy.stats.t.ppf(0.975, 3698 / 1105)), half-width t sqrt(43) / 6
    t2 = 0.95 / math.sqrt(2 * 0.975 * 0.025)
    t_welch = 3.00386935632253
    from serq_sweep.stats import mean_ci, paired

    n, m, ci, sd = mean_ci([1.0 * c, 2.0 * c, 3.0 * c])
    assert (n, m) == (3, pytest.approx(2 * c, rel=1e-15, abs=0))
    assert sd == pytest.approx(c, rel=1e-15, abs=0)
    assert ci == pytest.approx(t2 / math.sqrt(3) * c, rel=1e-12, abs=0)
    r = paired([1.0 * c, 2.0 * c, 3.0 * c], [2.0 * c, 2.5 * c, 5.0 * c])
    assert r["n"] == 3 and r["diff"] == pytest.approx(7 / 6 * c, rel=1e-12, abs=0)
    assert r["ci_paired"] == pytest.approx(t2 * math.sqrt(7 / 36) * c, rel=1e-12, abs=0)
    assert r["ci_unpaired"] == pytest.approx(t_welch * math.sqrt(43) / 6 * c, rel=1e-12, abs=0)
    assert r["variance_reduction"] == pytest.approx(36 / 43, rel=1e-12, abs=0)


def _mm1_plan(path, seeds="1..10", **sets):
    from serq_sweep import core

    return core.plan([path], sets=sets, seeds=seeds)


@pytest.mark.timeout(300)
def test_an_mm1_sweep_over_the_arrival_rate_covers_one_over_mu_minus_lambda(tmp_path):
    # M/M/1 FIFO, mu = 1: E[T] = 1 / (1 - lambda). Each point's 95 % CI over 10 seeds (runs of 20 000 mean
    # service times after a warm-up of 500) covers it and is under 10 % of it
    from serq_sweep import core
    from serq_sweep.api import run_plan

    plan = _mm1_plan(_mm1(tmp_path), **{"lambda": "0.25,0.5,0.75"})
    columns, table, complete, _ = run_plan(plan, workers=2, progress=False)
    assert complete and [r["status"] for r in table] == ["ok"] * 30
    acols, arows = core.aggregate_rows(plan, columns, table)
    for r in arows:
        theory = 1 / (1 - r["lambda"])
        m, ci = r["observes.response.mean:mean"], r["observes.response.mean:ci"]
        assert abs(m - theory) <= ci and ci < 0.1 * theory, (r["lambda"], m, ci, theory)
    # the same sweep again, in this process and on two workers: the same bytes
    again = run_plan(plan, workers=0, progress=False)
    assert core.encode_table(again[0], again[1], "csv") == core.encode_table(columns, table, "csv")
    assert core.encode_table(*core.aggregate_rows(plan, *again[:2]), "csv") == \
        core.encode_table(acols, arows, "csv")


@pytest.mark.timeout(300)
def test_a_sweep_on_dask_gives_the_table_of_the_local_pool(tmp_path):
    pytest.importorskip("distributed")
    from serq_sweep import core
    from serq_sweep.api import run_plan

    plan = _mm1_plan(_mm1(tmp_path), seeds="1..3", **{"lambda": "0.25,0.5"})
    local = run_plan(plan, workers=0, progress=False)
    dask = run_plan(plan, workers=2, dask="local", progress=False)
    assert dask[2] and core.encode_table(dask[0], dask[1], "csv") == core.encode_table(local[0], local[1], "csv")


@pytest.mark.timeout(300)
def test_identical_arms_differ_by_exactly_zero_under_common_random_numbers(tmp_path):
    # two arms of one program under the same seeds draw the same workload and services: every figure is
    # equal in every run (all left out), and a figure asked for has difference 0 with a paired CI of width 0
    path = _mm1(tmp_path)
    _, _, _, (rows, same) = _compare(path, seeds="1..5", extra="0,0")
    assert rows == [] and same > 10
    _, _, _, (rows, _) = _compare(path, seeds="1..5", figures=["response.mean", "response.p99"], extra="0,0")
    for r in rows:
        assert (r["n"], r["diff"], r["ci_paired"], r["variance_reduction"]) == (5, 0.0, 0.0, 1.0)
        assert r["ci_unpaired"] > 0  # what independent seeds would have given
    # two files of the same program: the same
    other = tmp_path / "copy.sq"
    other.write_text(MM1)
    from serq_sweep.api import run_plan
    from serq_sweep.pairing import arms_plan, comparisons

    plan = arms_plan([path, str(other)], seeds="1..3", horizon=2000, warmup=100)
    columns, table, complete, _ = run_plan(plan, workers=0, progress=False)
    rows, same = comparisons(plan, columns, table)
    assert complete and rows == [] and same > 10


@pytest.mark.timeout(300)
def test_a_longer_service_answers_later_in_every_seed(tmp_path):
    # arm B serves every job 0.1 longer (exp(1) + 0.1): with the arrivals and the exp draws common, every
    # job's response is at least as long, so B - A of the mean response is positive seed by seed; by
    # Pollaczek-Khinchine, E[S] = 1.1, E[S^2] = 1 + 1.21, rho = 0.55: E[T] = 1.1 + 0.5 * 2.21 / 0.9 =
    # 2.32778 against 2 for M/M/1: B - A = 0.32778, which the paired CI covers, at a small part of the
    # unpaired one
    path = _mm1(tmp_path)
    from serq_sweep.api import run_plan
    from serq_sweep.pairing import arms_plan, comparisons

    plan = arms_plan([path], sets={"extra": "0,0.1"}, seeds="1..20")
    columns, table, complete, _ = run_plan(plan, workers=2, progress=False)
    assert complete
    a = [r["observes.response.mean"] for r in table if r["point"] == 0]
    b = [r["observes.response.mean"] for r in table if r["point"] == 1]
    assert all(y > x for x, y in zip(a, b))
    rows, _ = comparisons(plan, columns, table, ["response.mean"])
    (r,) = rows
    theory = 1.1 + 0.5 * 2.21 / (2 * 0.45) - 2
    assert abs(r["diff"] - theory) <= r["ci_paired"] and r["ci_paired"] < 0.3 * r["ci_unpaired"], r
    assert r["variance_reduction"] > 0.9


def test_a_figure_asked_for_without_a_value_in_either_arm_has_its_row(tmp_path):
    # extra = 5000 and 6000 beyond the horizon (2000): no job ends, response has no samples
    # (NaN in every run); serq compare --figure response.mean printed nothing at all
    _, _, _, (rows, _) = _compare(_mm1(tmp_path), figures=["response.mean", "events"], extra="5000,6000")
    assert [(r["figure"], r["n"]) for r in rows] == [("observes.response.mean", 0), ("events", 3)]
    assert all(math.isnan(rows[0][k]) for k in ("a", "b", "diff", "ci_paired", "ci_unpaired"))
    text = render(rows, 0, 3)
    assert text.split("\n")[2].split() == ["observes.response.mean", "nan", "nan", "nan", "nan", "nan", "nan"]
