"""Known defects, round 38, in serq-sweep.

13. The points table had no count of the runs behind each mean, so a mean over fewer runs than its point ran
    (some runs without a finite value of the figure) could be seen from the runs table alone (``--show``'s
    ``(n=1)``, ``serq plot``'s warning from a runs table). Each figure's ``FIGURE:n`` is now a column, after every
    mean and CI (the columns before keep their places), in the file and in ``aggregate(frame)``, and ``serq plot``
    of a points table says such a mean as of the runs table, word for word; on both tiers.
14. docs/sweep.md says that ``serq compare``'s means ``a`` and ``b`` are each over that arm's own seeds while the
    difference, its CIs and the variance reduction are over the seeds both arms share, and what a negative
    variance reduction means; checked here on hand-computed cases.
"""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.stats import paired, t975

pytestmark = pytest.mark.timeout(300)

SERQ = str(Path(sys.executable).parent / "serq")

# half the sessions observe x: with one arrival a run, some runs have no sample of it
PROGRAM = """let lam = 1;
stage s : delay;
workload { arrive poisson(lam); }
session {
  branch (~uniform(0, 1) < 0.5) {
    observe x = ~uniform(0, 1);
  }
  run s (1);
}
run { horizon 100; arrivals 1; }
"""


def _sweep(tmp_path: Path, tier: str) -> Path:
    where = tmp_path / (tier or "fast")
    where.mkdir()
    (where / "p.sq").write_text(PROGRAM)
    env = {**os.environ, "SERQ_SIM_TIER": tier}
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", "lam=1,2", "--seeds", "1..6", "--out", "r.csv"], cwd=where,
                       capture_output=True, text=True, timeout=240, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return where


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("round38")
    return {tier: _sweep(tmp, tier) for tier in ("", "general")}


def test_each_figures_count_is_appended_after_every_mean_and_ci(swept):
    head, *points = _rows(swept[""] / "r.points.csv")
    runs_head, *runs = _rows(swept[""] / "r.csv")
    k = head.index("runs")
    assert head[:k + 1] == ["point", "lam", "runs"]
    pairs = head[k + 1:]
    figures = [c[:-5] for c in pairs if c.endswith(":mean")]
    # the columns before the counts are the means and CIs, figure by figure, as they were; then each count
    assert pairs[:2 * len(figures)] == [c for f in figures for c in (f"{f}:mean", f"{f}:ci")]
    assert pairs[2 * len(figures):] == [f"{f}:n" for f in figures]
    # each count: the runs of its point with a finite value of the figure, counted from the runs table
    for row in points:
        mine = [r for r in runs if r[runs_head.index("lam")] == row[1] and r[runs_head.index("status")] != "error"]
        assert int(row[k]) == len(mine) == 6
        for f in figures:
            cells = [r[runs_head.index(f)] for r in mine]
            # (a flag, interrupted, is written True or False, and counts as 1 and 0)
            finite = sum(1 for c in cells if c in ("True", "False") or (c not in ("", "nan") and math.isfinite(float(c))))
            assert int(row[head.index(f"{f}:n")]) == finite, f
    # the figure this program leaves out of some runs: fewer than runs at some point (the case the count is for)
    n = [int(row[head.index("observes.x.mean:n")]) for row in points]
    assert any(0 < v < 6 for v in n), n


def test_the_tables_are_the_same_on_both_tiers(swept):
    for name in ("r.csv", "r.points.csv"):
        assert (swept[""] / name).read_bytes() == (swept["general"] / name).read_bytes()


def test_aggregate_gives_the_points_table(swept):
    import pandas as pd
    from serq_sweep import aggregate

    frame = pd.read_csv(swept[""] / "r.csv")
    frame.attrs["axes"] = ["lam"]
    points = pd.read_csv(swept[""] / "r.points.csv")
    mine = aggregate(frame)
    assert list(mine.columns) == [c for c in points.columns if c != "point"] or list(mine.columns) == list(points.columns)
    for c in mine.columns:
        if c.endswith(":n") or c == "runs":
            assert mine[c].tolist() == points[c].tolist(), c
    empty = aggregate(frame.iloc[0:0])
    assert [c for c in empty.columns if c.endswith(":n")] == [c for c in points.columns if c.endswith(":n")]


def _plot(where: Path, table: str) -> str:
    r = subprocess.run([SERQ, "plot", table, "--x", "lam", "--y", "x.mean", "-o", f"{table}.svg"], cwd=where,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_a_plot_of_the_points_table_says_the_thin_means_as_of_the_runs_table(swept):
    where = swept[""]
    from_points, from_runs = _plot(where, "r.points.csv"), _plot(where, "r.csv")
    assert from_points == from_runs
    assert from_points.startswith("warning: --y x.mean: some points' runs had no value of it")
    head, *points = _rows(where / "r.points.csv")
    for row in points:
        n = int(row[head.index("observes.x.mean:n")])
        if n < 6:
            assert f"lam={row[1]} over {n} of 6 runs" in from_points


def test_a_points_table_without_the_counts_draws_as_before(swept, tmp_path):
    # a table written before the column (its counts cut off) draws the same curve, and says nothing
    head, *points = _rows(swept[""] / "r.points.csv")
    keep = [i for i, c in enumerate(head) if not c.endswith(":n")]
    with open(tmp_path / "old.points.csv", "w", newline="") as f:
        csv.writer(f).writerows([[row[i] for i in keep] for row in [head, *points]])
    assert _plot(tmp_path, "old.points.csv") == ""


# ---------------------------------------------------------------- 14. serq compare's means and reduction


def test_the_means_are_over_each_arms_seeds_and_the_difference_over_the_shared_ones():
    # seed 3 has no value of the figure in arm a: a is over seeds 1, 2; b over 1, 2, 3; diff over 1, 2
    r = paired([1.0, 2.0, math.nan], [2.0, 4.0, 10.0])
    assert (r["n"], r["n_a"], r["n_b"]) == (2, 2, 3)
    assert r["a"] == 1.5 and r["b"] == pytest.approx(16 / 3)
    assert r["diff"] == 1.5  # (2 - 1 + 4 - 2) / 2, not b - a = 3.83
    assert r["diff"] != pytest.approx(r["b"] - r["a"])


def test_a_negative_variance_reduction_is_arms_that_move_against_each_other():
    # b goes down where a goes up: var(a) = var(b) = 1, cov = -1, var(b - a) = 4 = twice var(a) + var(b)
    r = paired([1.0, 2.0, 3.0], [3.0, 2.0, 1.0])
    assert r["diff"] == 0.0
    assert r["variance_reduction"] == pytest.approx(-1.0)  # 1 - 4 / 2, 2 cov / (var a + var b)
    # the paired CI is then wider than the unpaired one: t(2) * 2 / sqrt(3) against t(4) * sqrt(2 / 3)
    assert r["ci_paired"] == pytest.approx(t975(2) * 2 / math.sqrt(3))
    assert r["ci_unpaired"] == pytest.approx(t975(4) * math.sqrt(2 / 3))
    assert r["ci_paired"] > r["ci_unpaired"]
    # arms that move together: a positive one, and the paired CI the narrower
    s = paired([1.0, 2.0, 3.0], [1.5, 2.5, 3.7])
    assert 0 < s["variance_reduction"] <= 1 and s["ci_paired"] < s["ci_unpaired"]


def test_the_docs_say_both():
    text = (Path(__file__).resolve().parents[3] / "docs" / "sweep.md").read_text()
    section = text[text.index("## `serq compare A.sq B.sq`"):text.index("## Capacity search")]
    flat = " ".join(section.split())
    assert "each over that arm's own seeds" in flat
    assert "over the seeds both arms have a value at" in flat
    assert "A negative variance reduction" in flat
