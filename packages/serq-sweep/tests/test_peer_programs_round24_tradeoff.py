"""``serq plot --x FIGURE --y FIGURE``: a trade-off (Sarathi-Serve's mean TTFT against the ITL tail over a
sweep of the token budget) drawn from a sweep's table, a point per point of the sweep.

An --x that is no swept name was read as one: from the runs table each run was a point of its own (its x its
own TTFT, its y "the mean across seeds" of that run alone, the seeds of one budget scattered along the line
between other budgets' runs), and from the points table it was "no column requests.ttft.mean". Now each point
of the sweep gives the mean of x across its seeds and the mean and 95 % CI of y, ordered by x, from either
table alike.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.plots import _curve_data
from serq_sweep.stats import t975

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

HEADER = "point,B,blocks,seed,status,message,warnings,key,events,requests.ttft.mean,requests.itl.p99\n"
# two budgets x two KV sizes x two seeds; the seeds of B=256 straddle B=2048's TTFT at blocks 100
RUNS = [(0, 256, 100, 1, 0.50, 0.030), (0, 256, 100, 2, 0.10, 0.040),
        (1, 2048, 100, 1, 0.20, 0.140), (1, 2048, 100, 2, 0.20, 0.160),
        (2, 256, 900, 1, 0.40, 0.020), (2, 256, 900, 2, 0.60, 0.030),
        (3, 2048, 900, 1, 0.10, 0.100), (3, 2048, 900, 2, 0.30, 0.120)]


def table(folder: Path) -> Path:
    p = folder / "s.csv"
    p.write_text(HEADER + "".join(f"{pt},{b},{k},{s},ok,,,{pt}{s}{'a' * 22},10,{x},{y}\n"
                                  for pt, b, k, s, x, y in RUNS))
    return p


def by_hand(blocks: int) -> tuple[list, list, list]:
    pts = []
    for b in (256, 2048):
        xs = [x for _, bb, k, _, x, _ in RUNS if bb == b and k == blocks]
        ys = [y for _, bb, k, _, _, y in RUNS if bb == b and k == blocks]
        my = sum(ys) / 2
        sd = math.sqrt(sum((y - my) ** 2 for y in ys))
        pts.append((sum(xs) / 2, my, t975(1) * sd / math.sqrt(2)))
    pts.sort()
    return [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts]


def test_a_point_per_budget_from_the_runs_table(tmp_path):
    fig, data, title, _ = _curve_data(str(table(tmp_path)), "requests.ttft.mean", "requests.itl.p99", "blocks")
    assert fig == "requests.itl.p99"
    assert title == "requests.itl.p99 against requests.ttft.mean (means, 95 % CI)"
    for blocks in (100, 900):
        xs, ms, cis = data[blocks]
        want = by_hand(blocks)
        assert xs == pytest.approx(want[0], rel=1e-12) and ms == pytest.approx(want[1], rel=1e-12)
        assert cis == pytest.approx(want[2], rel=1e-12)
    # blocks 100: B=2048 (TTFT 0.2) before B=256 (0.3); blocks 900: B=2048 (0.2) before B=256 (0.5)
    assert data[100][0] == pytest.approx([0.2, 0.3]) and data[900][0] == pytest.approx([0.2, 0.5])


def test_the_points_table_draws_the_same(tmp_path):
    pytest.importorskip("pandas")
    import serq_sweep

    runs = table(tmp_path)
    import pandas as pd

    points = serq_sweep.aggregate(pd.read_csv(runs))
    points.to_csv(tmp_path / "s.points.csv", index=False)
    a = _curve_data(str(runs), "requests.ttft.mean", "requests.itl.p99", "blocks")
    b = _curve_data(str(tmp_path / "s.points.csv"), "requests.ttft.mean", "requests.itl.p99", "blocks")
    for blocks in (100, 900):
        for u, v in zip(a[1][blocks], b[1][blocks]):
            assert u == pytest.approx(v, rel=1e-12)


def test_serq_plot_draws_it(tmp_path):
    pytest.importorskip("matplotlib")
    table(tmp_path)
    r = subprocess.run([SERQ, "plot", "s.csv", "--x", "requests.ttft.mean", "--y", "requests.itl.p99", "--hue",
                        "blocks", "-o", "t.svg"], capture_output=True, text=True, cwd=tmp_path, timeout=50,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.svg").stat().st_size > 0


def test_a_swept_name_as_x_is_drawn_as_before(tmp_path):
    fig, data, title, _ = _curve_data(str(table(tmp_path)), "B", "requests.itl.p99", "blocks")
    assert title == "requests.itl.p99 (mean, 95 % CI across seeds)"
    assert data[100][0] == [256, 2048] and data[100][1] == pytest.approx([0.035, 0.15])
