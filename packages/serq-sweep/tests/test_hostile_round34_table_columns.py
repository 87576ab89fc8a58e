"""A resumed run whose row lacks a figure that a run of its point run now has runs again (core.cut_down): a
run's figures are its program's (the IR's stages, pools, observes, gauges; the bounds and the SLO its key
holds), so such a row was read back from a table whose column was deleted by hand. It resumed without the
figure, and the points table's mean of it (and ``--show``'s) was over the runs run now alone, with no word
but ``(n=1)``. The table written is then the one a sweep run whole writes. Rows of several programs, or of
points whose families differ in size, each lacking the others' figures, still resume."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 1;
let n = 1;
stage s[n] : fifo;
workload { arrive poisson(lam); }
session {
  set t0 = now;
  run s[0] (0.5);
  observe response = now - t0;
}
run { horizon 20; seed 1; }
"""


def _sweep(folder: Path, out: str, seeds: str, *args: str, files: tuple[str, ...] = ("p.sq",), here=None) -> str:
    """The sweep in ``folder`` as a child process; or, given ``here`` (serq_in_process), in this process: for the
    sweeps that make the tables a test then edits and resumes (what is checked is the resumed sweep)."""
    argv = ["sweep", *files, "--seeds", seeds, "--workers", "0", "--no-progress", "-o", out, *args]
    if here is None:
        r = subprocess.run([SERQ, *argv], capture_output=True, text=True, cwd=folder, timeout=50,
                           stdin=subprocess.DEVNULL)
    else:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(folder)
            r = here(*argv)
    assert r.returncode == 0, r.stderr
    return r.stderr.splitlines()[-1]


def _drop(path: Path, column: str) -> None:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    i = rows[0].index(column)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(r[:i] + r[i + 1:] for r in rows)
    path.write_text(out.getvalue())


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return tmp_path


@pytest.mark.parametrize("column", ["observes.response.mean", "stages.s[0].utilisation"])
def test_a_deleted_figure_column_runs_its_runs_again(folder, serq_in_process, column):
    _sweep(folder, "whole.csv", "1..3", "--set", "lam=0.5,1", here=serq_in_process)  # the truth: a sweep run whole
    _sweep(folder, "t.csv", "1..2", "--set", "lam=0.5,1", here=serq_in_process)
    _drop(folder / "t.csv", column)
    said = _sweep(folder, "t.csv", "1..3", "--set", "lam=0.5,1")
    assert "(6 run now, 0 resumed)" in said
    for name in ("t.csv", "t.points.csv"):
        assert (folder / name).read_bytes() == (folder / name.replace("t.", "whole.", 1)).read_bytes()


def test_a_parquet_table_without_a_column_too(folder, serq_in_process):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    _sweep(folder, "whole.parquet", "1..3", "--set", "lam=0.5,1", here=serq_in_process)
    _sweep(folder, "t.parquet", "1..2", "--set", "lam=0.5,1", here=serq_in_process)
    pd.read_parquet(folder / "t.parquet").drop(columns=["observes.response.p50"]).to_parquet(
        folder / "t.parquet", index=False)
    assert "(6 run now, 0 resumed)" in _sweep(folder, "t.parquet", "1..3", "--set", "lam=0.5,1")
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "t.parquet"), pd.read_parquet(folder / "whole.parquet"))


def test_a_whole_table_resumes(folder, serq_in_process):
    _sweep(folder, "t.csv", "1..2", "--set", "lam=0.5,1", here=serq_in_process)
    assert "(2 run now, 4 resumed)" in _sweep(folder, "t.csv", "1..3", "--set", "lam=0.5,1")


def test_points_of_other_figures_resume(folder, serq_in_process):
    # a family of one member and one of three (stages.s[1], s[2] are the second point's alone), two programs
    # of other stages: each row lacks the others' figures, NaN in the table, and is a whole run
    (folder / "q.sq").write_text(PROGRAM.replace("stage s[n] : fifo;", "stage s[n] : ps(1);\nstage u : delay;"))
    _sweep(folder, "t.csv", "1..2", "--set", "n=1,3", files=("p.sq", "q.sq"), here=serq_in_process)
    head = (folder / "t.csv").read_text().splitlines()[0].split(",")
    assert "stages.s[2].utilisation" in head and "stages.u.utilisation" in head
    assert "(4 run now, 8 resumed)" in _sweep(folder, "t.csv", "1..3", "--set", "n=1,3", files=("p.sq", "q.sq"))
