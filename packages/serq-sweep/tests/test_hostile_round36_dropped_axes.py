"""A swept name of the table a sweep resumes from that this sweep does not sweep is no figure and no record's
column. A sweep over ``--set lam=… --set b=1,2`` resumed as one over ``--set lam=…`` alone finds the runs of
b's default (1) by their keys (the same IR), and it wrote the old column ``b`` back after ``key`` as a figure:
``b`` in the table among the figures, ``b:mean`` and ``b:ci`` in the points table, a curve of ``serq plot --y
b``; the records table got ``b`` as a column of the record. So with a ``--def`` dropped (the text ``~exp(1)``
as a figure) and with a swept column renamed by hand (``lam`` to ``Lam``). The tables a resume writes are the
ones the sweep run whole writes (the truth each test compares with, byte for byte)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """def gap() = 0.5;
let lam = 1;
let b = 1;
stage s : delay;
workload { arrive poisson(lam); }
session {
  set t0 = now;
  run s (gap() * b);
  observe w = now - t0;
  record req { wait = now - t0; }
  end;
}
run { horizon 10; seed 1; }
"""


def _sweep(folder: Path, out: str, records: str, *args: str, dropped: str | None = None, here=None) -> str:
    """The sweep in ``folder`` as a child process; or, given ``here`` (serq_in_process), in this process: for the
    sweeps that make the tables a test then resumes (what is checked is the resumed sweep, a child process)."""
    argv = ["sweep", "p.sq", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", out, "--records", records,
            *args]
    if here is None:
        r = subprocess.run([SERQ, *argv], capture_output=True, text=True, cwd=folder, timeout=50,
                           stdin=subprocess.DEVNULL)
    else:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(folder)
            r = here(*argv)
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "are no figure a run reports" in line]
    if dropped is None:
        assert not said
    else:
        assert said == [f"warning: {out}: the column(s) {dropped} of the table there are no figure a run reports "
                        "and no name this sweep sweeps (a name swept before and not now, a column added or renamed "
                        "by hand): the table this sweep writes leaves them out; copy it aside now to keep them, or "
                        "give another --out"]
    return r.stderr.splitlines()[-1]


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return tmp_path


def _same(folder: Path, ext: str) -> None:
    for name, whole in ((f"t.{ext}", f"whole.{ext}"), (f"t.points.{ext}", f"whole.points.{ext}"),
                        (f"r.{ext}", f"wr.{ext}")):
        if ext == "csv":
            assert (folder / name).read_text() == (folder / whole).read_text(), name
        else:
            import pandas as pd

            pd.testing.assert_frame_equal(pd.read_parquet(folder / name), pd.read_parquet(folder / whole))


@pytest.mark.parametrize(("before", "now", "name"), [
    (("--set", "b=1,2"), (), "b"),
    (("--def", "gap=0.5", "--def", "gap=0.25"), (), "gap"),  # (a definition's body is text: a figure of words)
])
def test_a_name_no_longer_swept_is_left_out(folder, serq_in_process, before, now, name):
    _sweep(folder, "whole.csv", "wr.csv", "--set", "lam=0.5,1", *now, here=serq_in_process)
    _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", *before, here=serq_in_process)
    said = _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", *now, dropped=name)
    assert "(0 run now, 4 resumed)" in said
    header = (folder / "t.csv").read_text().splitlines()[0].split(",")
    assert header[:7] == ["point", "lam", "seed", "status", "message", "warnings", "key"]
    assert not {"b", "gap"} & set(header)
    _same(folder, "csv")


def test_a_swept_column_renamed_by_hand(folder, serq_in_process):
    _sweep(folder, "whole.csv", "wr.csv", "--set", "lam=0.5,1", here=serq_in_process)
    _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", here=serq_in_process)
    for name in ("t.csv", "r.csv"):
        rows = list(csv.reader(io.StringIO((folder / name).read_text())))
        rows[0][rows[0].index("lam")] = "Lam"
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        (folder / name).write_text(out.getvalue())
    assert "(0 run now, 4 resumed)" in _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", dropped="Lam")
    _same(folder, "csv")


def test_columns_added_by_hand(folder, serq_in_process):
    # among the figures (after seed), they are refused since round 30 (a figure's column renamed by hand is one
    # too, and left out it was lost with its figure: test_known_defects_round30.py); before seed, where the swept
    # names stand, they are left out, said so
    _sweep(folder, "whole.csv", "wr.csv", "--set", "lam=0.5,1", here=serq_in_process)
    _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", here=serq_in_process)
    lines = (folder / "t.csv").read_text().splitlines()
    (folder / "t.csv").write_text("".join(f"{line},{'note,' if i == 0 else 'x,'}{'' if i == 0 else '1'}\n"
                                          for i, line in enumerate(lines)))
    r = subprocess.run([SERQ, "sweep", "p.sq", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", "t.csv",
                        "--records", "r.csv", "--set", "lam=0.5,1"], capture_output=True, text=True, cwd=folder,
                       timeout=50, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stderr.startswith("error: t.csv: the column(s) note, '' of the table there stand "
                                                     "among its figures"), r.stderr
    (folder / "t.csv").write_text("".join(f"{line.replace(',lam,', ',note,lam,', 1) if i == 0 else line.replace(',', ',x,', 1)}\n"
                                          for i, line in enumerate(lines)))
    assert "(0 run now, 4 resumed)" in _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", dropped="note")
    _same(folder, "csv")


def test_parquet_tables_too(folder, serq_in_process):
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    _sweep(folder, "whole.parquet", "wr.parquet", "--set", "lam=0.5,1", here=serq_in_process)
    _sweep(folder, "t.parquet", "r.parquet", "--set", "lam=0.5,1", "--set", "b=1,2", here=serq_in_process)
    assert "(0 run now, 4 resumed)" in _sweep(folder, "t.parquet", "r.parquet", "--set", "lam=0.5,1", dropped="b")
    _same(folder, "parquet")


def test_the_names_swept_now_still_resume(folder, serq_in_process):
    # (the runs of b=2 are left out, said so; those of b=1 resume with b a swept name as before)
    _sweep(folder, "whole.csv", "wr.csv", "--set", "lam=0.5,1", "--set", "b=1", here=serq_in_process)
    _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", "--set", "b=1,2", here=serq_in_process)
    assert "(0 run now, 4 resumed)" in _sweep(folder, "t.csv", "r.csv", "--set", "lam=0.5,1", "--set", "b=1")
    _same(folder, "csv")
