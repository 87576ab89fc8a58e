"""``--workers N`` beside ``--dask ADDRESS`` (a scheduler's address or file: its workers run the runs) is refused
before any point is compiled, by ``serq sweep`` (its ``--find`` too), ``serq compare`` and ``sweep()``,
``compare()``, ``find()`` (serq_sweep.engines.check_engine, the checks engines.engine makes first): it was said
after every point was compiled, 26 s for a sweep of 10 000 points, and after a program's compile error, said first
(status 1) where the command line was the mistake (status 2)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_sweep
from serq.errors import UsageError
from serq_sweep import core

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session { run s (1); observe w = 1; }
run { horizon 5; seed 1; }
"""

#: a program every point of which fails to compile: a compile before the refusal is said first
BROKEN = PROGRAM.replace("run s (1);", "run s (nosuch);")

SAID = ("error: --workers 0 and --dask tcp://127.0.0.1:9: the scheduler's workers run the runs, and --workers N "
        "counts the processes of a local pool (or of --dask local's cluster); give one of them\n")


@pytest.mark.parametrize("command", [
    ["sweep", "p.sq", "--set", "a=1,2"],
    ["sweep", "p.sq", "--find", "w.mean <= 1", "--over", "a", "1:2"],
    ["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2"],
])
def test_workers_beside_a_scheduler_are_refused_before_any_compile(tmp_path, command):
    (tmp_path / "p.sq").write_text(BROKEN)
    r = subprocess.run([sys.executable, "-m", "serq", *command, "--workers", "0", "--dask", "tcp://127.0.0.1:9",
                        "--no-progress"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 2 and r.stderr == SAID, r.stderr
    assert r.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_the_api_compiles_nothing_first(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    p = str(tmp_path / "p.sq")
    compiled = []
    monkeypatch.setattr(core, "compile_point", lambda *a, **k: compiled.append(a))
    said = r"^error: workers=0 and dask=tcp://127\.0\.0\.1:9: the scheduler's workers run the runs"
    with pytest.raises(UsageError, match=said):
        serq_sweep.sweep(p, sets={"a": [1, 2]}, workers=0, dask="tcp://127.0.0.1:9")
    with pytest.raises(UsageError, match=said):
        serq_sweep.compare(p, sets={"a": [1, 2]}, seeds="1..2", workers=0, dask="tcp://127.0.0.1:9")
    with pytest.raises(UsageError, match=said):
        serq_sweep.find(p, "w.mean <= 1", ("a", "1:2"), workers=0, dask="tcp://127.0.0.1:9")
    # a count that is no whole number, likewise
    with pytest.raises(TypeError, match=r"workers must be a whole number of processes \(0: in this process\), not 1\.5"):
        serq_sweep.sweep(p, sets={"a": [1, 2]}, workers=1.5)
    assert compiled == []
