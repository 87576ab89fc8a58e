"""A sweep's table that gives one run (one key) in two rows that differ: a row copied by hand and edited, the
tables of two sweeps joined. The resume took the row that came last in silence, the other's figures lost, and
wrote the table back so; ``serq plot`` and ``aggregate`` refuse such a table. It is refused now, at the
second row's cell where the two differ (a CSV table) and before any run, the table left as it was; rows
alike are one run's and resume as before (a program and its copy share their runs and keys)."""

from __future__ import annotations

import csv
import io
import shutil

import pytest

pytestmark = pytest.mark.timeout(120)

PROG = ("let lam = 1;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
        "session { set t0 = now; run s (~exp(1)); observe w = now - t0; end; }\nrun { horizon 5; seed 1; }\n")


def _sweep(*args: str) -> list[str]:
    return ["sweep", "p.sq", "--set", "lam=1,2", "--seeds", "1,2", "--workers", "0", "--no-progress", *args]


@pytest.fixture
def table(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    got = serq_in_process(*_sweep("-o", "t.csv"))
    assert got.returncode == 0, got.stderr
    return tmp_path / "t.csv"


def _rows(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(), newline="")))


def _write(path, rows) -> None:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())


def test_a_run_in_two_rows_that_differ_is_refused_at_the_cell(table, serq_in_process):
    rows = _rows(table)
    head = rows[0]
    col = head.index("observes.w.mean")
    copy = list(rows[2])  # point 0, seed 2
    was = copy[col]
    copy[col] = "123.5"
    _write(table, [*rows, copy])
    edited = table.read_bytes()
    got = serq_in_process(*_sweep("-o", "t.csv"))
    assert got.returncode == 1, got.stderr
    # the copy is the 5th row, on line 6; its cell under observes.w.mean starts after the cells before it
    column = len(",".join(copy[:col])) + 2
    first = got.stderr.splitlines()[0]
    assert first == (f"t.csv:6:{column}: error: the run {copy[head.index('key')]} is in rows 2 and 5, which "
                     f"differ under observes.w.mean ({was} and 123.5): a run has one row; remove the one that "
                     "is not its run's, or give --fresh")
    assert "Traceback" not in got.stderr and "run now" not in got.stderr
    assert table.read_bytes() == edited and not (table.parent / "t.csv.journal").exists()


def test_a_run_in_two_rows_alike_resumes_and_is_written_once(table, serq_in_process):
    alone = table.read_bytes()
    rows = _rows(table)
    _write(table, [*rows, rows[3]])
    got = serq_in_process(*_sweep("-o", "t.csv"))
    assert got.returncode == 0, got.stderr
    assert "(0 run now, 4 resumed)" in got.stderr
    assert table.read_bytes() == alone


def test_a_run_in_two_rows_of_a_parquet_table_that_differ_is_refused(table, serq_in_process):
    import pandas as pd

    got = serq_in_process(*_sweep("-o", "t.parquet"))
    assert got.returncode == 0, got.stderr
    path = table.parent / "t.parquet"
    frame = pd.read_parquet(path)
    copy = frame.iloc[[0]].copy()
    copy["status"] = "partial"
    pd.concat([frame, copy], ignore_index=True).to_parquet(path, index=False)
    edited = path.read_bytes()
    got = serq_in_process(*_sweep("-o", "t.parquet"))
    assert got.returncode == 1
    assert got.stderr == (f"error: t.parquet: the run {frame['key'][0]} is in rows 1 and 5, which differ under "
                          "status (ok and partial): a run has one row; remove the one that is not its run's, or "
                          "give --fresh\n")
    assert path.read_bytes() == edited


def test_a_program_and_its_copy_share_their_runs_and_resume(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    shutil.copy(tmp_path / "p.sq", tmp_path / "q.sq")
    args = ["sweep", "p.sq", "q.sq", "--seeds", "1,2", "--workers", "0", "--no-progress", "-o", "t.csv"]
    assert serq_in_process(*args).returncode == 0
    written = (tmp_path / "t.csv").read_bytes()
    rows = _rows(tmp_path / "t.csv")
    keys = [r[rows[0].index("key")] for r in rows[1:]]
    assert keys[:2] == keys[2:]  # (one IR: each seed's run is both points')
    again = serq_in_process(*args)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "t.csv").read_bytes() == written
