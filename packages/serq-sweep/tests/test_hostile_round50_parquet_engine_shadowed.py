"""A sweep into a .parquet table (or records) when pyarrow is there but does not import: a module named pyarrow
on PYTHONPATH that raises ImportError as it loads (shadowing the installed package), or one raising some other
exception (a broken install). The table was refused only at its write, after every run, leaving the runs'
journals (OUT.journal, RECORDS.journal) the user never named; the broken one was a ZeroDivisionError traceback
at the same point. Now it is refused before anything runs, naming the output and why pyarrow did not import,
and nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { run s (0.5); record req { x = now; } end; }
run { horizon 100; seed 1; }
"""

NEEDS = "needs pyarrow: pip install 'serq-sweep[pandas]' (or write .csv)"
CLI = "from serq.cli import entry; sys.argv = ['serq'] + sys.argv[1:]; entry()"
# fastparquet (the other engine pandas writes Parquet with) kept out, whatever this machine has
KEEP_OUT = "import sys; sys.modules['fastparquet'] = None; "
SHADOWS = [
    ("raise ImportError('not this one')\n", "pyarrow does not import (ImportError: not this one)"),
    ("x = 1 / 0\n", "pyarrow does not import (ZeroDivisionError: division by zero)"),
]


def _setup(tmp_path: Path, body: str) -> tuple[Path, dict]:
    shadow = tmp_path / "shadow"
    (shadow / "pyarrow").mkdir(parents=True)
    (shadow / "pyarrow" / "__init__.py").write_text(body)
    work = tmp_path / "w"
    work.mkdir()
    (work / "p.sq").write_text(PROGRAM)
    return work, dict(os.environ, PYTHONPATH=str(shadow))


def _serq(work: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", KEEP_OUT + CLI, *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=90)


@pytest.mark.timeout(200)
@pytest.mark.parametrize("body, why", SHADOWS)
def test_a_parquet_table_without_an_engine_is_refused_before_the_runs(tmp_path: Path, body: str, why: str):
    work, env = _setup(tmp_path, body)
    r = _serq(work, env, "sweep", "p.sq", "--workers", "0", "-o", "t.parquet")
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == f"error: --out t.parquet: a .parquet table {NEEDS}; {why}", r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["p.sq"]  # no table, no journal
    r = _serq(work, env, "sweep", "p.sq", "--workers", "0", "-o", "t.csv", "--records", "r.parquet")
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == f"error: --records r.parquet: a .parquet records table {NEEDS}; {why}", r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["p.sq"]
    # the same sweep into .csv files needs no engine, and writes its table and records
    r = _serq(work, env, "sweep", "p.sq", "--workers", "0", "-o", "t.csv", "--records", "r.csv")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["p.sq", "r.csv", "t.csv", "t.points.csv"]


@pytest.mark.timeout(120)
def test_the_python_api_names_its_keyword(tmp_path: Path):
    work, env = _setup(tmp_path, SHADOWS[0][0])
    code = (KEEP_OUT + "import serq_sweep.api as a\n"
            "try:\n    a.sweep('p.sq', workers=0, out='t.parquet')\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=90)
    assert r.stdout.strip() == f"UserError error: out=t.parquet: a .parquet table {NEEDS}; {SHADOWS[0][1]}", (
        r.stdout + r.stderr)
    assert sorted(p.name for p in work.iterdir()) == ["p.sq"]
