"""A Parquet table (a sweep's table or points table at ``--out``, ``serq plot``'s SOURCE) is held to what a
sweep writes before its rows are read (core.table_size): at most a million rows, a sweep's most runs, and
``core.MAX_TABLE_CELLS`` cells. Parquet compresses a column of one value to almost nothing: a file of 0.9 MB
holding 30 million rows of one run was read whole by a sweep resuming from it, 16 GB and 160 s. Such a file
is now one error at once, the file as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import core, sweep

pytestmark = pytest.mark.timeout(120)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
np = pytest.importorskip("numpy")

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 1;
stage s : delay;
workload { arrive poisson(lam); }
session { run s (1); }
run { horizon 5; seed 1; }
"""


def _one_run_many_times(path: Path, n: int) -> None:
    """A table of ``n`` rows, each the same run: a few kilobytes however many."""
    def words(w):
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([w]))

    pq.write_table(pa.table({"point": np.zeros(n, dtype=np.int64), "lam": np.ones(n), "seed": np.ones(n, dtype=np.int64),
                             "status": words("ok"), "message": words(""), "warnings": words(""),
                             "key": words("0123456789abcdef01234567"), "events": np.full(n, 10, dtype=np.int64)}),
                   path, compression="zstd")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    _one_run_many_times(tmp_path / "t.parquet", 1_000_001)
    assert (tmp_path / "t.parquet").stat().st_size < 200_000
    return tmp_path


def _serq(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=100,
                          stdin=subprocess.DEVNULL)


def test_a_sweep_does_not_resume_from_more_rows_than_runs(folder):
    before = (folder / "t.parquet").read_bytes()
    r = _serq(folder, "sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.parquet")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: t.parquet: cannot read the table to resume from (it holds 1000001 rows, more than the "
                        "1000000 runs a sweep has at most); remove it or give --fresh\n")
    assert (folder / "t.parquet").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.parquet"]


def test_plot_does_not_read_them_either(folder):
    pytest.importorskip("matplotlib")
    r = _serq(folder, "plot", "t.parquet", "--x", "lam", "--y", "events", "-o", "a.svg")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: t.parquet: cannot read the table: it holds 1000001 rows, more than the 1000000 runs "
                        "a sweep has at most\n")


def test_the_cells_are_bounded_too(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    _one_run_many_times(tmp_path / "t.parquet", 30)  # 30 rows of 8 columns: 240 cells
    monkeypatch.setattr(core, "MAX_TABLE_CELLS", 239)
    with pytest.raises(UserError) as info:
        sweep(str(tmp_path / "p.sq"), workers=0, out=str(tmp_path / "t.parquet"), progress=False)
    assert "(it holds 30 rows of 8 columns, more than the 239 cells a sweep's table has at most)" in str(info.value)
    monkeypatch.setattr(core, "MAX_TABLE_CELLS", 240)  # at the bound: read, and left out as no run of this sweep
    frame = sweep(str(tmp_path / "p.sq"), workers=0, out=str(tmp_path / "t.parquet"), progress=False)
    assert len(frame) == 1
