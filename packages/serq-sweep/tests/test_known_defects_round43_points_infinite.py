"""The points table's mean of a figure that is infinite in every run of a point is a blank cell (NaN): a mean
leaves out inf and -inf as it does a run without a value, and ``--show`` says so on stderr
(test_known_defects_round41_show_infinite). The points file holds no notes; what a reader of the file sees is
documented (docs/sweep.md, "Values that are not finite"): ``FIGURE:n`` 0 beside ``runs`` above 0 marks the mean
over no finite value, and the runs table holds each run's ``inf``/``-inf`` (a blank where a run had none).
This pins that contract in both formats of the file, and ``aggregate(frame)`` alike."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SERQ = str(Path(sys.executable).parent / "serq")

# every session observes K / 0: inf for K > 0, -inf for K < 0; v is 1 throughout
PROGRAM = """let K = 1;

stage s : delay;

workload {
  arrive poisson(1);
}

session {
  run s (1);
  observe w = K / 0;
  observe v = 1;
}

run { horizon 20; seed 1; }
"""


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_mean_over_no_finite_value_is_told_by_its_cells(tmp_path, ext):
    import pandas as pd
    import serq_sweep

    (tmp_path / "p.sq").write_text(PROGRAM)
    assert subprocess.run([SERQ, "fmt", "--check", "p.sq"], cwd=tmp_path, capture_output=True,
                          timeout=60).returncode == 0
    r = subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--out", f"t.{ext}", "--set", "K=1,-1", "--seeds",
                        "1,2"], cwd=tmp_path, capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    read = pd.read_csv if ext == "csv" else pd.read_parquet
    points = read(tmp_path / f"t.points.{ext}")
    assert points["K"].tolist() == [1, -1] and points["runs"].tolist() == [2, 2]
    assert all(math.isnan(v) for v in points["observes.w.mean:mean"])
    assert all(math.isnan(v) for v in points["observes.w.mean:ci"])
    assert points["observes.w.mean:n"].tolist() == [0, 0]
    # a finite figure beside it: its mean over both runs
    assert points["observes.v.mean:mean"].tolist() == [1.0, 1.0] and points["observes.v.mean:n"].tolist() == [2, 2]
    table = read(tmp_path / f"t.{ext}")
    assert table["observes.w.mean"].tolist() == [math.inf, math.inf, -math.inf, -math.inf]
    if ext == "csv":  # the cells as written: blank in the points file, inf in the runs table
        rows = list(csv.reader((tmp_path / "t.points.csv").read_text().splitlines()))
        i = rows[0].index("observes.w.mean:mean")
        assert [row[i] for row in rows[1:]] == ["", ""]
        rows = list(csv.reader((tmp_path / "t.csv").read_text().splitlines()))
        i = rows[0].index("observes.w.mean")
        assert [row[i] for row in rows[1:]] == ["inf", "inf", "-inf", "-inf"]
    # no column of notes: the file is the aggregate of its table, as aggregate(frame) makes it
    agg = serq_sweep.aggregate(table)
    assert list(agg.columns) == list(points.columns)
    assert agg["observes.w.mean:n"].tolist() == [0, 0]
