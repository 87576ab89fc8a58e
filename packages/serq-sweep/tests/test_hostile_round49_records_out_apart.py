"""``serq sweep -o t.csv --records t.csv`` (and ``sweep(out=…, records=…)`` of one file) is refused before any
point is compiled, naming both (``t.csv: named by both --out and --records``, status 2): their journals are one
file whatever tables the program records (and with one table the two tables too), and it was said after every
point was compiled, of the journals for a program of several record tables. A records file of another name beside
the table (``t.points.csv``, whose tables are ``t.points.NAME.csv`` for a program of several) is as before."""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_sweep
from serq.files import SameOutputError
from serq_sweep import core

#: two record tables: the records files are STEM.cls.csv and STEM.other.csv
PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session { run s (1); record cls { x = 1; } record other { y = 2; } }
run { horizon 5; seed 1; }
"""

#: a program every point of which fails to compile: a compile before the refusal is said first
BROKEN = PROGRAM.replace("run s (1);", "run s (nosuch);")


def _sweep(tmp_path, source: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(source)
    return subprocess.run([sys.executable, "-m", "serq", "sweep", "p.sq", "--set", "a=1,2", "--workers", "0",
                           "--no-progress", *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("records, said", [("t.csv", "t.csv"), ("./t.csv", "./t.csv (it is t.csv)")])
def test_one_file_for_both_is_refused_before_any_compile(tmp_path, records, said):
    r = _sweep(tmp_path, BROKEN, "-o", "t.csv", "--records", records)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"error: {said}: named by both --out and --records; each output of a sweep needs a file of its own\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_records_beside_the_points_table_are_as_before(tmp_path):
    r = _sweep(tmp_path, PROGRAM, "-o", "t.csv", "--records", "t.points.csv")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.csv", "t.points.cls.csv", "t.points.csv",
                                                          "t.points.other.csv"]


def test_the_api_compiles_nothing_first(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    compiled = []
    monkeypatch.setattr(core, "compile_point", lambda *a, **k: compiled.append(a))
    t = str(tmp_path / "t.csv")
    with pytest.raises(SameOutputError, match=r"t\.csv: named by both out= and records=; each output of a sweep"):
        serq_sweep.sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, out=t, records=t, workers=0)
    assert compiled == [] and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
