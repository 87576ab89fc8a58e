"""A Parquet table whose schema names a column twice (pyarrow writes one; pandas does not) is one error naming
the column, as a CSV header that names one twice is: pyarrow reads no such table, and its error, passed on as
the reason, listed the whole schema, a line a column (`No match for FieldRef.Nested(…) in point: int64` and
some forty lines more). So for a sweep resuming from it, ``serq plot`` of it and ``--cdf`` of records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let lam = 1;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
           "session {\n  set t0 = now;\n  run s (0.5);\n  observe w = now - t0;\n  record req { wait = now - t0; }\n"
           "  end;\n}\nrun { horizon 10; seed 1; }\n")


def _serq(folder: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``folder``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is written and said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(folder)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=50,
                          stdin=subprocess.DEVNULL)


def _twice(path: Path, column: str) -> int:
    """The file rewritten with ``column`` again at its end; the place (from 1) of the first."""
    t = pq.read_table(path)
    names = t.column_names
    pq.write_table(pa.Table.from_arrays([*t.columns, t.column(column)], names=[*names, column]), path)
    return names.index(column) + 1, len(names) + 1


@pytest.fixture
def folder(tmp_path, serq_in_process):
    pytest.importorskip("pandas")
    (tmp_path / "p.sq").write_text(PROGRAM)
    # (the sweep that makes the tables in this process; the resume and the table's plot as child processes)
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "lam=0.5,1", "--seeds", "1..2", "--workers", "0", "--no-progress",
              "-o", "t.parquet", "--records", "r.parquet", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    return tmp_path


def test_a_resume_and_a_plot_of_the_table(folder):
    first, second = _twice(folder / "t.parquet", "observes.w.mean")
    said = (f"the schema names the column observes.w.mean twice, as columns {first} and {second}: no column of a "
            "table is named twice")
    kept = (folder / "t.parquet").read_bytes()
    r = _serq(folder, "sweep", "p.sq", "--set", "lam=0.5,1", "--seeds", "1..2", "--workers", "0", "--no-progress",
              "-o", "t.parquet")
    assert r.returncode == 1
    assert r.stderr == f"error: t.parquet: cannot read the table to resume from ({said}); remove it or give --fresh\n"
    assert (folder / "t.parquet").read_bytes() == kept
    r = _serq(folder, "plot", "t.parquet", "--x", "lam", "--y", "w.mean", "-o", "p.svg")
    assert r.returncode == 1
    assert r.stderr == f"error: t.parquet: cannot read the table: {said}\n"


def test_records(folder, serq_in_process):
    pytest.importorskip("matplotlib")
    first, second = _twice(folder / "r.parquet", "wait")
    r = _serq(folder, "plot", "r.parquet", "--cdf", "wait", "-o", "p.svg", here=serq_in_process)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"error: r.parquet: cannot read the records: the schema names the column wait "
                                     f"twice, as columns {first} and {second}: no column of a table is named twice"]
