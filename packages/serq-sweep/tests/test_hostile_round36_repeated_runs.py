"""A table of runs that holds one run in two rows (a row copied by hand, two tables of one sweep joined: one
point and seed twice, under one key or two) is refused by ``serq plot`` and ``aggregate``: each counted the copy as a second
seed of its point, so its mean leaned to that run and its CI was narrower than the seeds give (the mean of
1, 1, 4 with a band of 4.3 where the seeds 1, 4 give 2.5 ± 19.1). Rows of one key at two points (a program and
its copy, whose IR is one) are two runs of the table, drawn as before. A points table that holds one point in
two rows (of two means) was drawn from whichever came first: it is refused too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

HEADER = "point,lam,seed,status,message,warnings,key,events,observes.w.mean\n"
ROWS = ["0,0.5,1,ok,,,aaaaaaaaaaaaaaaaaaaaaaaa,10,1.0\n",
        "0,0.5,2,ok,,,bbbbbbbbbbbbbbbbbbbbbbbb,10,4.0\n",
        "1,1,1,ok,,,cccccccccccccccccccccccc,10,2.0\n",
        "1,1,2,ok,,,dddddddddddddddddddddddd,10,3.0\n"]


def _plot(folder: Path, table: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "plot", table, "--x", "lam", "--y", "w.mean", "-o", "p.svg"], capture_output=True,
                          text=True, cwd=folder, timeout=50, stdin=subprocess.DEVNULL)


def test_plot_refuses_a_copied_row_at_it(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "t.csv").write_text(HEADER + ROWS[0] + ROWS[1] + ROWS[0] + ROWS[2] + ROWS[3])
    r = _plot(tmp_path, "t.csv")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        # (a run is its point and seed, whatever its key, and a CSV file's rows are named by their lines since
        # test_known_defects_round49_plot_seeds)
        "t.csv:4:7: error: the table holds the run of point 0, lam 0.5, seed 1 twice (lines 2 and 4): a run is one "
        "row, and each seed of a point is counted once in its mean and CI; remove the copy",
        "  " + ROWS[0].rstrip("\n"),
        "        ^"]
    assert not (tmp_path / "p.svg").exists()


def test_a_parquet_table_too(tmp_path):
    pytest.importorskip("matplotlib")
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    (tmp_path / "t.csv").write_text(HEADER + "".join(ROWS) + ROWS[3])
    pd.read_csv(tmp_path / "t.csv", dtype={"key": str}).to_parquet(tmp_path / "t.parquet", index=False)
    r = _plot(tmp_path, "t.parquet")
    assert r.returncode == 1
    assert r.stderr == ("error: the table holds the run of point 1, lam 1, seed 2 twice (rows 4 and 5): a run is "
                        "one row, and each seed of a point is counted once in its mean and CI; remove the copy\n")


def test_aggregate_refuses_it_and_takes_the_table_whole():
    pd = pytest.importorskip("pandas")
    import io

    from serq_sweep import aggregate

    whole = pd.read_csv(io.StringIO(HEADER + "".join(ROWS)), dtype={"key": str})
    points = aggregate(whole)
    # by hand: seeds 1 and 4 at lam 0.5, mean 2.5, half-width t(0.975, 1) * sd / sqrt(2) = 12.7062 * 1.5
    assert points["observes.w.mean:mean"].tolist() == [2.5, 2.5]
    assert points["observes.w.mean:ci"].iloc[0] == pytest.approx(12.706 * 1.5, rel=1e-4)  # (t to 5 digits)
    with pytest.raises(ValueError, match=r"holds the run of point 0, lam 0\.5, seed 1 twice \(rows 1 and 3\)"):
        aggregate(pd.concat([whole.iloc[:2], whole.iloc[:1], whole.iloc[2:]], ignore_index=True))


def test_one_key_at_two_points_is_two_runs(tmp_path):
    pytest.importorskip("matplotlib")
    shared = [ROWS[0], ROWS[1], ROWS[0].replace("0,0.5", "1,1", 1), ROWS[1].replace("0,0.5", "1,1", 1)]
    (tmp_path / "t.csv").write_text(HEADER + "".join(shared))
    r = _plot(tmp_path, "t.csv")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.svg").stat().st_size > 0


POINTS = "point,lam,runs,observes.w.mean:mean,observes.w.mean:ci\n"


def test_a_point_given_twice_in_a_points_table(tmp_path):
    pytest.importorskip("matplotlib")
    rows = ["0,0.5,2,2.5,19.059\n", "1,1,2,2.5,6.353\n"]
    (tmp_path / "t.points.csv").write_text(POINTS + rows[0] + rows[0].replace("2.5,", "9.0,", 1) + rows[1])
    r = _plot(tmp_path, "t.points.csv")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "t.points.csv:3:7: error: the table holds the point at point 0, lam 0.5 twice (lines 2 and 3): a point is "
        "one row, and a line draws it once; remove the copy",
        "  0,0.5,2,9.0,19.059",
        "        ^"]
    (tmp_path / "t.points.csv").write_text(POINTS + "".join(rows))
    assert _plot(tmp_path, "t.points.csv").returncode == 0
