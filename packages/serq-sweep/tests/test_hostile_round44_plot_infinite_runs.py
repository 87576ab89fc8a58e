"""``serq plot`` of a runs table in which a run's figure is inf or -inf: the point's mean is over its finite
values, as before, and its warning said only "some points' runs had no value of it (no sample of it: …)",
of runs that had one, infinite (``observe big = 1e308 * 10``). The point's entry now says how many of its
runs had an infinite value."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 1;

stage s : delay;

workload {
  arrive poisson(lam);
}

session {
  run s (1);
  observe big = lam > 1 ? 1e308 * 10 : now;
}

run { horizon 50; warmup 0; seed 1; }
"""

HEAD = ("warning: --y observes.big.mean: some points' runs had no value of it (no sample of it: an observe that "
        "took none, a request metric of a run that completed no request after the warm-up), and each such mean "
        "is drawn over the others': ")


def _serq(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=150,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def table(tmp_path_factory, once_per_run) -> Path:
    # the sweep made once for the test run (the suite's once_per_run, not once in each worker that runs a test
    # here), its table copied into this module's folder, where the pictures are written
    d = tmp_path_factory.mktemp("t")
    shutil.copyfile(once_per_run("infinite-runs-sweep", _sweep) / "t.csv", d / "t.csv")
    return d / "t.csv"


def _sweep(d: Path) -> None:
    (d / "p.sq").write_text(PROGRAM)
    r = _serq(["sweep", "p.sq", "--set", "lam=1,2,3", "--seeds", "1,2", "--out", "t.csv", "--workers", "0"], d)
    assert r.returncode == 0, r.stderr


def _plot(table: Path, x: str, out: str) -> str:
    r = _serq(["plot", table.name, "--x", x, "--y", "observes.big.mean", "-o", out], table.parent)
    assert r.returncode == 0, r.stderr
    assert (table.parent / out).stat().st_size > 0
    return r.stderr


def test_points_whose_runs_are_all_infinite(table):
    # lam = 2 and 3: every run's mean is inf (1e308 * 10 overflows); lam = 1 is finite
    with open(table, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["lam"], r["observes.big.mean"]) for r in rows][2:] == [("2", "inf")] * 2 + [("3", "inf")] * 2
    assert _plot(table, "lam", "a.png") == (
        HEAD + "lam=2 no value in its 2 runs (left out of its line), infinite in 2; lam=3 no value in its 2 runs "
        "(left out of its line), infinite in 2\n")


@pytest.mark.parametrize("x", ["lam", "observes.big.count"])
def test_a_point_with_one_infinite_run_of_two(table, tmp_path, x):
    with open(table, newline="") as f:
        reader = csv.reader(f)
        rows = list(reader)
    head = rows[0]
    lam, mean = head.index("lam"), head.index("observes.big.mean")
    kept = [rows[0]] + [r for r in rows[1:] if r[lam] == "1"]
    assert len(kept) == 3
    kept[1][mean] = "-inf"  # seed 1's; seed 2's stays finite
    edited = tmp_path / "e.csv"
    with open(edited, "w", newline="") as f:
        csv.writer(f).writerows(kept)
    err = _plot(edited, x, "b.png")
    assert err.startswith(HEAD)
    assert err.endswith(" over 1 of 2 runs, infinite in 1\n")
