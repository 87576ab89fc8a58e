"""A table at ``--out`` that has a column ``key`` and none ``status`` is no sweep's table, refused before any
run as one without ``key`` is, the file as it was: each of its rows was refused as a run of "the status
'None', none a sweep writes", which named no column the file lacked."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 5; seed 1; }
"""


def _sweep(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv"],
                          capture_output=True, text=True, cwd=folder, timeout=50, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("rows", [True, False], ids=["rows", "header alone"])
def test_a_table_of_keys_without_statuses_is_refused(tmp_path, rows):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _sweep(tmp_path).returncode == 0
    table = list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text())))
    i = table[0].index("status")
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(r[:i] + r[i + 1:] for r in (table if rows else table[:1]))
    (tmp_path / "t.csv").write_text(out.getvalue())
    (tmp_path / "t.points.csv").unlink()
    r = _sweep(tmp_path)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: t.csv: not a sweep's table (no column status, which every row of one has); remove it "
                        "or give --fresh\n")
    assert (tmp_path / "t.csv").read_text() == out.getvalue()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.csv"]
