"""An audit of a sweep's statistics and of the curves ``serq plot`` draws from them: the points table's
``FIGURE:mean`` and ``FIGURE:ci`` against the runs table by hand (Student t from the printed table),
``aggregate()`` the same, the 95 % CI of an M/M/1 queue's mean response over 20 seeds against
1/(mu - lambda), and the lines and bands a plot draws against the tables' means and CIs."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import serq_sweep
from serq.errors import UserError
from serq_sweep.plots import curve, curve_data

SERQ = str(Path(sys.executable).parent / "serq")

MM1 = """let lam = 0.5;
let mu = 1;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1 / mu)); observe response = now - t0; end; }
run { horizon 1000; warmup 100; seed 1; }
"""
FIG = "observes.response.mean"
#: Student t, 0.975 quantile, 3 and 19 degrees of freedom (scipy.stats.t.ppf(0.975, df) written out)
T3, T19 = 3.1824463052837078, 2.0930240544083087


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """A sweep of lam x mu over 4 seeds: its runs table and its points table, both as written (CSV)."""
    d = tmp_path_factory.mktemp("sweep")
    (d / "mm1.sq").write_text(MM1)
    out = d / "s.csv"
    serq_sweep.sweep(str(d / "mm1.sq"), sets={"lam": "0.5,0.8", "mu": "1,2"}, seeds="1..4", workers=0,
                     progress=False, out=str(out))
    return out, d / "s.points.csv"


@pytest.mark.timeout(60)
def test_the_points_table_and_aggregate_are_the_runs_by_hand(tables):
    runs_path, points_path = tables
    runs, points = pd.read_csv(runs_path), pd.read_csv(points_path)
    assert len(runs) == 16 and set(runs["status"]) == {"ok"} and len(points) == 4
    by_hand = {}
    for (lam, mu), g in runs.groupby(["lam", "mu"]):
        v = g[FIG].tolist()
        by_hand[lam, mu] = (len(v), statistics.fmean(v), T3 * statistics.stdev(v) / 2)
    for frame in (points, serq_sweep.aggregate(runs)):
        for _, r in frame.iterrows():
            n, m, ci = by_hand[r["lam"], r["mu"]]
            assert r["runs"] == n == 4
            assert r[f"{FIG}:mean"] == pytest.approx(m, rel=1e-12)
            assert r[f"{FIG}:ci"] == pytest.approx(ci, rel=1e-12)


@pytest.mark.timeout(60)
def test_aggregate_groups_by_every_swept_name(tables):
    # a frame read back, its `point` column dropped (or its `key`): the points are still lam x mu, 4 runs
    # each (the first column after the first was taken for the swept names: mu alone, 8 runs of two points)
    runs_path, _ = tables
    runs = pd.read_csv(runs_path)
    for frame in (runs.drop(columns="point"), runs.drop(columns=["point", "key"]), runs.drop(columns="key")):
        out = serq_sweep.aggregate(frame)
        # (a frame with its `point` column keeps it first, as the points file has it)
        head = ["point"] * ("point" in frame.columns) + ["lam", "mu", "runs"]
        assert list(out.columns[:len(head)]) == head and out["runs"].tolist() == [4] * 4
        assert not any(c.startswith(("point:", "seed:")) for c in out.columns)
        for _, r in out.iterrows():
            v = runs[(runs["lam"] == r["lam"]) & (runs["mu"] == r["mu"])][FIG]
            assert r[f"{FIG}:mean"] == pytest.approx(statistics.fmean(v), rel=1e-12)


@pytest.mark.timeout(60)
def test_the_ci_of_an_mm1_mean_over_20_seeds_covers_the_theory(tmp_path):
    # lam 0.5, mu 1: E[T] = 1 / (mu - lam) = 2; 20 seeds of 1 000 time units after a warm-up of 100
    (tmp_path / "mm1.sq").write_text(MM1)
    frame = serq_sweep.sweep(str(tmp_path / "mm1.sq"), seeds="1..20", workers=0, progress=False)
    v = frame[FIG].tolist()
    m, ci = statistics.fmean(v), T19 * statistics.stdev(v) / math.sqrt(20)
    (row,) = serq_sweep.aggregate(frame).to_dict("records")
    assert row["runs"] == 20
    assert row[f"{FIG}:mean"] == pytest.approx(m, rel=1e-12) and row[f"{FIG}:ci"] == pytest.approx(ci, rel=1e-12)
    assert abs(m - 2) <= ci and ci < 0.1 * 2, (m, ci)


@pytest.mark.timeout(60)
def test_a_curve_draws_the_tables_means_and_cis(tables):
    runs_path, points_path = tables
    points = pd.read_csv(points_path)
    for source in (runs_path, points_path):
        fig, data = curve_data(source, "lam", "response.mean", hue="mu")
        assert fig == FIG and sorted(data) == [1, 2]
        for mu, (xs, ms, cis) in data.items():
            p = points[points["mu"] == mu].sort_values("lam")
            assert xs == p["lam"].tolist() == [0.5, 0.8]
            assert ms == pytest.approx(p[f"{FIG}:mean"].tolist(), rel=1e-12)
            assert cis == pytest.approx(p[f"{FIG}:ci"].tolist(), rel=1e-12)
    # the figure's lines are the means, its bands mean -/+ CI
    figure = curve(points_path, "lam", "response.mean", hue="mu")
    (ax,) = figure.axes
    for line, band, mu in zip(ax.get_lines(), ax.collections, (1, 2)):
        p = points[points["mu"] == mu].sort_values("lam")
        m, ci = p[f"{FIG}:mean"].to_numpy(), p[f"{FIG}:ci"].to_numpy()
        assert line.get_xdata().tolist() == [0.5, 0.8]
        assert line.get_ydata() == pytest.approx(m, rel=1e-12)
        ys = band.get_paths()[0].vertices[:, 1]
        assert min(ys) == pytest.approx(min(m - ci), rel=1e-12) and max(ys) == pytest.approx(max(m + ci), rel=1e-12)


@pytest.mark.timeout(60)
def test_a_line_of_several_points_at_one_x_is_refused(tables):
    # --x lam without mu as --hue: each x has two points (mu 1 and 2). The runs table averaged their eight
    # runs as if they were eight seeds of one point, the points table drew mu = 1's row and left mu = 2's
    # out: two different curves of one sweep, neither of a point
    runs_path, points_path = tables
    said = ("error: --x lam: the table has 2 points at lam = 0.5 (they differ in mu): a line draws one point "
            "per x; give mu as --hue, or keep the rows of one value of it (--where mu=1)")
    for source in (runs_path, points_path, serq_sweep.aggregate(pd.read_csv(runs_path)),
                   pd.read_csv(runs_path).drop(columns="point")):
        with pytest.raises(UserError) as info:
            curve_data(source, "lam", "response.mean")
        assert str(info.value) == said
    # within a hue's line too (a table edited so that two points have one mu)
    with pytest.raises(UserError, match=r"2 points at mu = 1 and lam = 0.5 \(they differ in point\)"):
        curve_data(pd.read_csv(runs_path).assign(mu=1), "lam", "response.mean", hue="mu")
    # one value of mu: one point per x, drawn
    runs = pd.read_csv(runs_path)
    _, data = curve_data(runs[runs["mu"] == 2], "lam", "response.mean")
    assert data[None][0] == [0.5, 0.8]
    r = subprocess.run([SERQ, "plot", str(runs_path), "--x", "lam", "--y", "response.mean", "-o",
                        str(runs_path.parent / "f.svg")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.strip() == said and "Traceback" not in r.stderr
    assert not (runs_path.parent / "f.svg").exists()
