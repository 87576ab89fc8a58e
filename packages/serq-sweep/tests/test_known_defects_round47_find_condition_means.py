"""``serq sweep --find`` prints, per point, each condition's figure mean at the value found (``FIGURE:mean``, the
columns ``--out`` and ``find()`` have), six digits as ``--show`` prints a mean: the printed table stopped at
``evaluations``, saying where the conditions held and not how close they came there.

The program observes ``y = x * k / 3`` and ``z = 10 - x`` in every session, so each mean is that value exactly
(whatever the seed): over the grid ``x`` 0..4 with ``y.mean <= 2`` and ``z.mean >= 6``, k=1 holds at every x
(``holds_everywhere``, the value HI, 4: y = 4/3, z = 6; two evaluations) and k=2 holds up to x=3 (2x/3 <= 2) and
fails at 4 (``found`` 3: y = 2, z = 7; the ends, then 2 and 3)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
ENV = dict(os.environ)

PROGRAM = """let x = 1;
let k = 1;
stage s : delay;
workload { arrive poisson(1); }
session {
  run s (1);
  observe y = x * k / 3;
  observe z = 10 - x;
}
run { horizon 10; seed 1; }
"""

HEAD = ["k", "x", "outcome", "holds", "fails", "evaluations", "observes.y.mean:mean", "observes.z.mean:mean"]


def _search(tmp_path, *more):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([SERQ, "sweep", "p.sq", "--set", "k=1,2", "--find", "y.mean <= 2", "--find", "z.mean >= 6",
                           "--over", "x", "0:4:1", "--seeds", "1..2", "--workers", "0", "--no-progress", *more],
                          cwd=tmp_path, capture_output=True, text=True, timeout=200, env=ENV)


@pytest.mark.timeout(300)
def test_the_printed_table_has_each_conditions_mean_at_the_value_found(tmp_path):
    r = _search(tmp_path, "-o", "f.csv")
    assert r.returncode == 0, r.stderr
    lines = [line.split() for line in r.stdout.splitlines()]
    assert lines == [HEAD,
                     ["1", "4", "holds_everywhere", "4", "nan", "2", "1.33333", "6"],
                     ["2", "3", "found", "3", "4", "4", "2", "7"]]
    # --out has the same columns, its means exact
    with open(tmp_path / "f.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == HEAD
    assert [float(v) for v in rows[1][6:]] == pytest.approx([4 / 3, 6.0], rel=1e-12)
    assert [float(v) for v in rows[2][6:]] == pytest.approx([2.0, 7.0], rel=1e-12)


@pytest.mark.timeout(300)
def test_a_search_that_fails_everywhere_prints_nan_means(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "z.mean >= 20", "--over", "x", "0:4:1", "--workers", "0",
                        "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=200, env=ENV)
    assert r.returncode == 0, r.stderr
    lines = [line.split() for line in r.stdout.splitlines()]
    assert lines == [["x", "outcome", "holds", "fails", "evaluations", "observes.z.mean:mean"],
                     ["nan", "fails_everywhere", "nan", "0", "2", "nan"]]
