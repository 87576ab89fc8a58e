"""``serq sweep --find`` prints its table as ``--out`` writes it: the knob's columns (the knob, ``holds``,
``fails``) of a search on a grid of whole numbers are integer columns, as a ``--set`` name of whole numbers
is (``3``, not ``3.0``), and a float column's value is its ``repr`` on the screen too (``1.0``, not ``1``).
The written table said ``3.0`` where the printed one showed ``3`` (docs/sweep.md, capacity search)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

# M/M/c at lambda = 1, mu = 1: c = 1 is unstable; the mean response falls below 1.5 from c = 2 or 3 on
PROGRAM = """let lambda = 1;
let c = 1;
stage svc : fifo(c);
workload { arrive poisson(lambda); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon inf; warmup 0; }
"""
COLUMNS = ["outcome", "holds", "fails", "evaluations"]


def _find(tmp_path: Path, condition: str, over: list[str]) -> tuple[list[list[str]], list[dict[str, str]]]:
    """The printed table's cells and the rows of the ``--out`` CSV."""
    (tmp_path / "c.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "c.sq", "--find", condition, "--over", *over, "--arrivals", "100",
                        "--workers", "0", "--no-progress", "--out", "f.csv"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr
    printed = [line.split() for line in r.stdout.splitlines()]
    with open(tmp_path / "f.csv", newline="") as f:
        written = list(csv.DictReader(io.StringIO(f.read())))
    return printed, written


def test_a_knob_on_a_grid_of_whole_numbers_is_an_integer_column(tmp_path):
    printed, written = _find(tmp_path, "response.mean <= 1.5", ["c", "1:6:1"])
    assert printed[0] == ["c", *COLUMNS, "observes.response.mean:mean"]
    (row,) = written
    assert row["outcome"] == "found_smallest"
    c = row["c"]
    assert c.isdigit() and 2 <= int(c) <= 6 and row["holds"] == c and row["fails"] == str(int(c) - 1)
    assert printed[1][0] == c and printed[1][2:4] == [row["holds"], row["fails"]]
    # the condition's mean at the value found, six digits of --out's
    assert float(printed[1][5]) == pytest.approx(float(row["observes.response.mean:mean"]), rel=1e-5)
    assert float(printed[1][5]) <= 1.5


def test_a_bisected_knob_is_a_float_printed_as_written(tmp_path):
    # no c meets it: fails at both ends, `fails` the low end, 1.0 (a float: the bisection takes fractions)
    printed, written = _find(tmp_path, "response.mean <= 0", ["c", "1:6"])
    (row,) = written
    assert row["outcome"] == "fails_everywhere" and row["c"] == "" and row["fails"] == "1.0"
    assert printed[1][:3] == ["nan", "fails_everywhere", "nan"] and printed[1][3] == "1.0"


def test_the_parquet_knob_of_whole_numbers_is_an_integer_column_with_missing_values(tmp_path):
    import pandas as pd
    import serq_sweep

    (tmp_path / "c.sq").write_text(PROGRAM)
    out = str(tmp_path / "f.parquet")
    # c >= 1 always holds: holds_everywhere, the value HI, and no value fails
    serq_sweep.find(str(tmp_path / "c.sq"), "response.mean >= 0", ("c", "1:4:1"), arrivals=50, workers=0,
                    progress=False, out=out)
    f = pd.read_parquet(out)
    assert str(f["c"].dtype) == "Int64" and f["c"].tolist() == [4] and f["fails"].isna().all()


def test_show_prints_a_points_values_as_the_points_file_writes_them(tmp_path):
    # the screen as the points file: lam's 1 is 1 in both, whatever its other value (test_known_defects_round36;
    # it was 1.0 in the file beside 0.5, and 1 on the screen)
    (tmp_path / "c.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "c.sq", "--set", "lambda=0.5,1", "--set", "c=2", "--arrivals", "20",
                        "--workers", "0", "--no-progress", "--out", "t.csv", "--show", "events"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "t.points.csv", newline="") as f:
        written = [(row["lambda"], row["c"]) for row in csv.DictReader(f)]
    assert written == [("0.5", "2"), ("1", "2")]
    assert [tuple(line.split()[:2]) for line in r.stdout.splitlines()[1:]] == written
