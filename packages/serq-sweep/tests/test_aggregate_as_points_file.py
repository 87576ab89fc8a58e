"""``serq_sweep.aggregate(frame)`` gives the table of the ``OUT.points.EXT`` file a sweep writes: its
``point`` column first, and a row for a point whose every run failed (``runs`` 0, its figures NaN). It had
neither (docs/sweep.md, Python)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import serq_sweep

pytestmark = pytest.mark.timeout(60)

# d = -1: every run fails at its first session (a negative work); d = 1 runs to the horizon
PROGRAM = """let d = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (d * ~exp(1)); observe x = now; end; }
run { horizon 5; warmup 0; }
"""


def test_aggregate_gives_the_points_file(tmp_path):
    (tmp_path / "e.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    frame = serq_sweep.sweep(str(tmp_path / "e.sq"), sets={"d": [1, -1]}, seeds=[1, 2], workers=0, progress=False,
                             out=str(out))
    assert list(frame["status"]) == ["ok", "ok", "error", "error"]
    points = serq_sweep.aggregate(frame)
    assert list(points.columns[:3]) == ["point", "d", "runs"]
    assert points["point"].tolist() == [0, 1] and points["d"].tolist() == [1, -1] and points["runs"].tolist() == [2, 0]
    events = frame["events"].tolist()[:2]  # the two runs of d = 1
    assert points["events:mean"][0] == (events[0] + events[1]) / 2 and math.isnan(points["events:mean"][1])
    written = pd.read_csv(tmp_path / "t.points.csv")
    assert list(points.columns) == list(written.columns)
    pd.testing.assert_frame_equal(points, written, check_dtype=False)
