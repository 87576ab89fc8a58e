"""Two more of serq sweep's messages name a file as the others do: a records table it cannot resume from, of a
long name, is cut by serq.errors.shown_path (printed whole before: a first line of 700 characters for a file in
a folder of 600), and a --dask scheduler file whose name holds a line break is told on one line (the break
escaped; it split the message's line in two)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; record r { x = now; } end; }
run { horizon 100; seed 1; }
"""


def _sweep(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "sweep", "p.sq", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_records_it_cannot_resume_from_of_a_long_name(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    records = folder / "r.parquet"
    records.write_bytes(b"PAR1xxxxPAR1")  # a Parquet file's magic at both ends, and no table between
    r = _sweep(tmp_path, "--seeds", "1..2", "--records", str(records), "-o", str(folder / "t.csv"), "--workers", "0")
    assert r.returncode == 1 and r.stdout == ""
    shown = shown_path(records)
    assert len(shown) == 240 and "…" in shown
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"error: {shown}: cannot read the records to resume from ("), first[:600]
    assert first.endswith("); remove it or give --fresh"), first[-200:]
    assert str(records) not in r.stderr
    assert records.read_bytes() == b"PAR1xxxxPAR1"
    assert sorted(os.listdir(folder)) == ["r.parquet"]


def test_a_scheduler_file_with_a_line_break_in_its_name_is_one_line(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep(tmp_path, "--seeds", "1", "--dask", "a\nb.json", "-o", "t.csv")
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr == "error: --dask a\\nb.json: cannot read the scheduler file: No such file or directory\n", r.stderr
    assert sorted(os.listdir(tmp_path)) == ["p.sq"]
