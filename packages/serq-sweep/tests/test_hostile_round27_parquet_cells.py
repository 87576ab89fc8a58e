"""A Parquet table read back (a sweep's resume, its records' resume, ``serq plot``) holds each cell to what a
table serQ writes holds: a number, a flag, a word or nothing, as a CSV cell is held to its writer's syntax.

Parquet keeps any Arrow type, and a cell was taken as it came: a list in a figure's column of the table a
sweep resumed from was a traceback (``ValueError: can only convert an array of size 1 to a Python
scalar``), a list in ``key`` another (``unhashable type``), a list in ``status`` was taken for ``ok``, and a
date, bytes or a map in a figure's column was written back into the resumed table as that run's figure. A
dict in ``point`` was a traceback of ``serq plot``. A records table's columns are numbers (its CSV reader
refuses a cell that is not one); a column of words in Parquet was resumed and written back. Each is now one
message naming the file, the column and the row, status 1, the file as it was.
"""

from __future__ import annotations

import decimal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from delay_programs import delay_program
from serq.errors import UserError
from serq_sweep import sweep

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = delay_program()


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL)


def _sweep(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """The sweep in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and of the files left as they were)."""
    sweep_args = ("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", *args)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*sweep_args)
    return _serq(tmp_path, *sweep_args)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A sweep's table (two runs) and its records, in Parquet, as bytes (made once)."""
    tmp = tmp_path_factory.mktemp("made")
    (tmp / "p.sq").write_text(PROGRAM)
    sweep(str(tmp / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp / "t.parquet"), records=str(tmp / "r.parquet"),
          progress=False)
    return (tmp / "t.parquet").read_bytes(), (tmp / "r.parquet").read_bytes()


@pytest.fixture
def table(tmp_path, made):
    """The frames of the table and its records; the files in ``tmp_path`` with the program."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.parquet").write_bytes(made[0])
    (tmp_path / "r.parquet").write_bytes(made[1])
    return pd.read_parquet(tmp_path / "t.parquet"), pd.read_parquet(tmp_path / "r.parquet")


def _resume(tmp_path: Path, records: bool = False) -> None:
    sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp_path / "t.parquet"),
          records=str(tmp_path / "r.parquet") if records else False, progress=False)


BAD = {"list": lambda n: [[1, 2]] * n, "map": lambda n: [{"x": 1}] * n, "bytes": lambda n: [b"xx"] * n,
       "decimal": lambda n: [decimal.Decimal("1.5")] * n, "date": lambda n: pd.to_datetime(["2020-01-01"] * n),
       "duration": lambda n: [pd.Timedelta(1)] * n}


@pytest.mark.parametrize("column", ["w.mean", "key", "status", "message"])
def test_a_list_in_a_resumed_table_is_one_message(tmp_path, table, serq_in_process, column):
    frame, _ = table
    frame[column] = BAD["list"](len(frame))
    frame.to_parquet(tmp_path / "t.parquet")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    # (the first column's as a child process; the others call serq.cli.main in the test's process)
    r = _sweep(tmp_path, "-o", "t.parquet", "--records", "r.parquet",
               here=None if column == "w.mean" else serq_in_process)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr == (f"error: {(tmp_path / 't.parquet').name}: cannot read the table to resume from (column "
                        f"{column}, row 1: array([1, 2]) is no number, flag or word); remove it or give --fresh\n")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written


@pytest.mark.parametrize("column", ["w.mean", "key", "status", "message"])
@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_resumed_table_of_a_cell_no_sweep_writes_is_refused(tmp_path, table, column, kind):
    frame, _ = table
    frame[column] = BAD[kind](len(frame))
    frame.to_parquet(tmp_path / "t.parquet")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(UserError) as e:
        _resume(tmp_path, records=True)
    text = str(e.value)
    assert text.startswith(f"error: {tmp_path / 't.parquet'}: cannot read the table to resume from (column {column}")
    assert text.endswith("; remove it or give fresh=True") and "\n" not in text
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written


def test_the_row_of_the_cell_is_named(tmp_path, table):
    frame, _ = table
    frame["w.mean"] = [None, [7]]  # the second row's (the first is missing, as a sweep may write)
    frame.to_parquet(tmp_path / "t.parquet")
    with pytest.raises(UserError, match=r"\(column w\.mean, row 2: array\(\[7\]\) is no number, flag or word\)"):
        _resume(tmp_path)


def test_the_cells_a_sweep_writes_still_resume(tmp_path, table):
    frame, _ = table
    frame["observes.w.mean"] = [2.5, float("nan")]  # hand-edited, but numbers (a figure's column: one a run
    frame["message"] = [None, "x"]  # reports no figure of is left out of the table a resume writes)
    frame.to_parquet(tmp_path / "t.parquet")
    _resume(tmp_path)
    assert pd.read_parquet(tmp_path / "t.parquet")["observes.w.mean"].tolist()[0] == 2.5


def test_plot_of_a_table_of_a_map_in_point_is_one_message(tmp_path, table):
    frame, _ = table
    frame["point"] = [{"x": 1}] * len(frame)
    frame.to_parquet(tmp_path / "t.parquet")
    r = _serq(tmp_path, "plot", "t.parquet", "--x", "a", "--y", "w.mean", "-o", "o.svg")
    assert r.returncode == 1
    assert r.stderr == "error: t.parquet: cannot read the table: column point, row 1: {'x': 1} is no number, flag " \
                       "or word\n"
    assert not (tmp_path / "o.svg").exists()


@pytest.mark.parametrize("values", [lambda n: ["x"] * n, lambda n: [None] * n, lambda n: [[1]] * n])
def test_resumed_records_of_a_column_that_is_no_numbers_are_refused(tmp_path, table, values):
    _, records = table
    records["wait"] = values(len(records))
    records.to_parquet(tmp_path / "r.parquet")
    before = (tmp_path / "r.parquet").read_bytes()
    with pytest.raises(UserError) as e:
        _resume(tmp_path, records=True)
    assert str(e.value).startswith(f"error: {tmp_path / 'r.parquet'}: cannot read the records to resume from (column "
                                   "wait")
    assert str(e.value).endswith("; remove it or give fresh=True") and "\n" not in str(e.value)
    assert (tmp_path / "r.parquet").read_bytes() == before
