"""`serq run --records FILE.parquet` when pyarrow is there but does not import: a module named pyarrow on
PYTHONPATH that raises ImportError as it loads (shadowing the installed package), or one that raises some other
exception (a broken install). The check before the run found pyarrow (importlib.util.find_spec) and let the
run go; at its end the write fell back to polars (not installed) and the records were lost to a traceback
(ModuleNotFoundError: No module named 'polars'); the broken one was a ZeroDivisionError traceback before the
run. Now the writer is tried by importing it: refused before the run, one message saying why pyarrow did not
import, nothing written."""

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

NEEDS = ("error: --records req.parquet: writing Parquet needs pyarrow or polars (pip install 'serq-sim[frames]'); "
         "a .csv file needs neither")

# polars kept out (None in sys.modules: not installed), whatever this machine has
RUN = ("import sys; sys.modules['polars'] = None; "
       "from serq.cli import entry; sys.argv = ['serq'] + sys.argv[1:]; entry()")


def _serq(tmp_path: Path, shadow: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(shadow))
    return subprocess.run([sys.executable, "-c", RUN, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("body, why", [
    ("raise ImportError('not this one')\n", "pyarrow does not import (ImportError: not this one)"),
    ("x = 1 / 0\n", "pyarrow does not import (ZeroDivisionError: division by zero)"),
    ("import no_such_module_r50\n", "pyarrow does not import (ModuleNotFoundError: No module named "
                                     "'no_such_module_r50')"),
])
def test_a_pyarrow_that_does_not_import_is_refused_before_the_run(tmp_path: Path, body: str, why: str):
    shadow = tmp_path / "shadow"
    (shadow / "pyarrow").mkdir(parents=True)
    (shadow / "pyarrow" / "__init__.py").write_text(body)
    work = tmp_path / "w"
    work.mkdir()
    (work / "p.sq").write_text(PROGRAM)
    r = _serq(work, shadow, "run", "p.sq", "--no-progress", "-o", "r.txt", "--records", "req.parquet")
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == f"{NEEDS}; {why}", r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["p.sq"]  # nothing ran: no report, no records
    # the same run with a .csv records file needs neither, and writes both
    r = _serq(work, shadow, "run", "p.sq", "--no-progress", "-o", "r.txt", "--records", "req.csv")
    assert r.returncode == 0, r.stderr
    assert (work / "req.csv").read_text().startswith("session,turn,time,x")


def test_writers_not_installed_at_all_keep_the_short_message(monkeypatch):
    from serq.errors import UserError
    from serq_sim.records import parquet_writer

    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # None in sys.modules: not installed
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(UserError) as e:
        parquet_writer("t.parquet")
    assert str(e.value) == NEEDS.replace("req.parquet", "t.parquet")  # nothing more to say: neither is there
