"""serq plot TABLE --cdf NAME of a sweep's runs or points table (figures, not records): the message listed
every column of the table, 168 of a small sweep's runs table and 324 of its points table, a wall of text,
and did not say that --cdf reads records. It lists the first 20 and how many more, and says what the file
is and what reads it."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = Path(sys.executable).parent / "serq"


def write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def plot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SERQ), "plot", *args], cwd=cwd, capture_output=True, text=True, timeout=50)


def test_a_runs_table_is_named_and_its_columns_bounded(tmp_path):
    figures = [f"observes.t{i}.mean" for i in range(100)]
    header = ["point", "rate", "seed", "status", "message", "key", *figures]
    write(tmp_path / "runs.csv", header, [[0, 2, 1, "ok", "", "abc", *range(100)]])
    p = plot("runs.csv", "--cdf", "ttft", "-o", "x.svg", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    (line,) = p.stderr.splitlines()
    shown = ", ".join(header[:20])
    assert f"(it has {shown}, … ({len(header) - 20} more))" in line
    assert "observes.t99.mean" not in line
    assert line.endswith("; it is a sweep's table, one row per run or point: --cdf reads the records, the file of "
                         "serq run --records or serq sweep --records, and a table's figures are drawn with --x and --y")
    assert not (tmp_path / "x.svg").exists()


def test_a_points_table_is_named_too(tmp_path):
    header = ["point", "rate", "runs", "events:mean", "events:ci"]
    write(tmp_path / "points.csv", header, [[0, 2, 3, 10.0, 1.0]])
    p = plot("points.csv", "--cdf", "prompt", "-o", "x.svg", cwd=tmp_path)
    assert p.returncode == 1
    assert "columns: point, rate, runs, events:mean, events:ci)" in p.stderr  # five: all of them
    assert "it is a sweep's table" in p.stderr


def test_records_get_no_such_hint_and_twenty_columns_are_listed_whole(tmp_path):
    header = ["session", "turn", "time", "sent", "first_token", *[f"c{i}" for i in range(15)]]
    assert len(header) == 20
    write(tmp_path / "r.csv", header, [[0, 0, 1.0, 0.0, 0.5, *range(15)]])
    p = plot("r.csv", "--cdf", "promt", "-o", "x.svg", cwd=tmp_path)
    assert p.returncode == 1
    assert f"columns: {', '.join(header)})" in p.stderr and "more)" not in p.stderr
    assert "sweep's table" not in p.stderr
