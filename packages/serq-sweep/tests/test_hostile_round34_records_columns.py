"""A resumed sweep keeps a run's records only when they hold every column its program's record declares (and
``session``, ``turn``, ``time``): a records table whose column was deleted or renamed by hand was resumed with
that column NaN for its runs, written so into the records table (and the renamed one kept beside it), the
values lost without a word. Such a run runs again, as records cut down to fewer rows do, and the records
table is then the one a sweep run whole writes; a journal entry without a declared column is no entry a run
journals, the one error naming it. Records of a table two programs declare with other columns (each run's
row NaN under the other's) still resume whole."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from delay_programs import delay_program

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = delay_program(horizon=6, observe=False, record="wait = now - t0; at = now;")


def _sweep(folder: Path, *args: str, files: tuple[str, ...] = ("p.sq",), here=None) -> str:
    """The sweep in ``folder`` as a child process; or, given ``here`` (serq_in_process), in this process: for the
    sweeps that make the files a test then edits and resumes (what is checked is the resumed sweep)."""
    argv = ["sweep", *files, "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress", *args]
    if here is None:
        r = subprocess.run([SERQ, *argv], capture_output=True, text=True, cwd=folder, timeout=50,
                           stdin=subprocess.DEVNULL)
    else:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(folder)
            r = here(*argv)
    assert r.returncode == 0, r.stderr
    return r.stderr


def _edit(path: Path, edit) -> None:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(edit(rows))
    path.write_text(out.getvalue())


@pytest.fixture
def whole(tmp_path, serq_in_process):
    """A finished sweep into t.csv and r.csv (made in this process), and the bytes of its records."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    _sweep(tmp_path, "-o", "t.csv", "--records", "r.csv", here=serq_in_process)
    data = (tmp_path / "r.csv").read_bytes()
    assert data.startswith(b"point,a,seed,key,session,turn,time,wait,at\n") and data.count(b"\n") > 8
    return data


def _without(column: str):
    def edit(rows):
        i = rows[0].index(column)
        return [r[:i] + r[i + 1:] for r in rows]
    return edit


def _renamed(column: str, to: str):
    def edit(rows):
        rows[0][rows[0].index(column)] = to
        return rows
    return edit


@pytest.mark.parametrize("edit", [_without("wait"), _without("at"), _renamed("wait", "w")],
                         ids=["wait deleted", "at deleted", "wait renamed"])
def test_records_without_a_declared_column_run_again(tmp_path, whole, edit):
    _edit(tmp_path / "r.csv", edit)
    said = _sweep(tmp_path, "-o", "t.csv", "--records", "r.csv")
    assert "(4 run now, 0 resumed)" in said  # every run's records lacked it: each ran again
    assert (tmp_path / "r.csv").read_bytes() == whole  # the records a sweep run whole writes, no NaN, no w


def test_an_added_column_keeps_the_runs(tmp_path, whole):
    _edit(tmp_path / "r.csv", lambda rows: [rows[0] + ["note"]] + [r + ["1"] for r in rows[1:]])
    said = _sweep(tmp_path, "-o", "t.csv", "--records", "r.csv")
    assert "(0 run now, 4 resumed)" in said


def test_parquet_records_without_a_declared_column_run_again(tmp_path, serq_in_process):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    (tmp_path / "p.sq").write_text(PROGRAM)
    _sweep(tmp_path, "-o", "t.csv", "--records", "r.parquet", here=serq_in_process)
    whole = pd.read_parquet(tmp_path / "r.parquet")
    whole.drop(columns=["wait"]).to_parquet(tmp_path / "r.parquet", index=False)
    said = _sweep(tmp_path, "-o", "t.csv", "--records", "r.parquet")
    assert "(4 run now, 0 resumed)" in said
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "r.parquet"), whole)


def test_a_journal_entry_without_a_declared_column_is_refused(tmp_path, whole):
    key = next(csv.DictReader(io.StringIO(whole.decode())))["key"]
    (tmp_path / "r.csv").unlink()
    entry = {"key": key, "tables": {"req": {"session": [0], "turn": [0], "time": [1.5], "wait": [1.0]}}}
    (tmp_path / "r.csv.journal").write_text(json.dumps(entry) + "\n")
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0",
                        "--no-progress", "-o", "t.csv", "--records", "r.csv"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=50, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: r.csv.journal: the records of run {key} are not a sweep's (no column at of the "
                        "table req); remove the file or give --fresh\n")


def test_two_programs_of_other_columns_resume_whole(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "q.sq").write_text(PROGRAM.replace("wait = now - t0; at = now;", "gap = now - t0;"))
    _sweep(tmp_path, "-o", "t.csv", "--records", "r.csv", files=("p.sq", "q.sq"), here=serq_in_process)
    data = (tmp_path / "r.csv").read_bytes()
    assert data.startswith(b"point,program,a,seed,key,session,turn,time,wait,at,gap\n")
    said = _sweep(tmp_path, "-o", "t.csv", "--records", "r.csv", files=("p.sq", "q.sq"))
    assert "(0 run now, 8 resumed)" in said  # each run's NaN under the other program's columns is no loss
    assert (tmp_path / "r.csv").read_bytes() == data
