"""A sweep's ``--out`` that holds a file some other program wrote is refused, not replaced.

A sweep resumes from the table at ``--out``: one whose header has no column ``key`` is no sweep's table and
was refused only when it had rows; a header alone (``name,score``, a spreadsheet's empty sheet, one word)
was read as a table of no runs and replaced by the sweep's, without a word. Now any file of columns
without ``key`` is the one error "not a sweep's table (no column key)", status 1, the file as it was; an
empty file holds nothing to lose and is written. A Parquet file of no rows is read by its columns alike.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from serq.errors import UserError
from serq_sweep import sweep

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 5; seed 1; }
"""

REFUSED = "not a sweep's table (no column key); remove it or give --fresh"


def _cli(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """The sweep in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and of the files left as they were)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", *args)
    return subprocess.run([SERQ, "sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("text", ["name,score\n", "hello\n", "name,score\r\n", "\ufeffname,score\n",
                                  "name,score\nalice,3\n"])
def test_a_file_of_other_columns_is_refused_and_kept(tmp_path, serq_in_process, text):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    out.write_bytes(text.encode())
    # (the first as a child process; the others call serq.cli.main in the test's process)
    r = _cli(tmp_path, "-o", "t.csv", here=None if text == "name,score\n" else serq_in_process)
    assert r.returncode == 1
    assert r.stderr == f"error: t.csv: {REFUSED}\n"
    assert out.read_bytes() == text.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.csv"]  # no points table, no journal


def test_the_api_refuses_it_too(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    out.write_text("name,score\n")
    with pytest.raises(UserError, match=r"t\.csv: not a sweep's table \(no column key\)"):
        sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(out), progress=False)
    assert out.read_text() == "name,score\n"


def test_a_parquet_file_of_no_rows_and_other_columns_is_refused(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.parquet"
    pd.DataFrame({"name": pd.Series([], dtype=str)}).to_parquet(out)
    before = out.read_bytes()
    r = _cli(tmp_path, "-o", "t.parquet", here=serq_in_process)
    assert r.returncode == 1
    assert r.stderr == f"error: t.parquet: {REFUSED}\n"
    assert out.read_bytes() == before


def test_an_empty_file_and_fresh_are_written(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    out.write_text("")
    r = _cli(tmp_path, "-o", "t.csv")
    assert r.returncode == 0, r.stderr
    rows = out.read_text().splitlines()
    assert rows[0].startswith("point,a,seed,status,message,warnings,key,")
    assert len(rows) == 3  # two points, one seed
    out.write_text("name,score\n")
    r = _cli(tmp_path, "-o", "t.csv", "--fresh")  # --fresh asks for the file to be replaced
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("point,a,seed,")


def test_a_sweeps_own_header_without_rows_resumes(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _cli(tmp_path, "-o", "t.csv")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "t.csv"
    header = out.read_text().splitlines()[0]
    out.write_text(header + "\n")  # its rows removed: the runs are run again
    r = _cli(tmp_path, "-o", "t.csv")
    assert r.returncode == 0, r.stderr
    assert "(2 run now, 0 resumed)" in r.stderr
    assert len(out.read_text().splitlines()) == 3
