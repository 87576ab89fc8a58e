"""``serq sweep -o``, ``serq compare -o`` and ``sweep(out=…)`` refuse a table of no table's suffix (``r.txt``: a
usage error), in a folder that does not exist or that its write would refuse (a path under ``/dev`` that does not
exist) by its name, before any point is compiled
(serq_sweep.core.check_out_name): the refusal came after every point was compiled, 23 s for a sweep of 10 000
points, and after a program's compile error, said first (status 1) where the command line was the mistake."""

from __future__ import annotations

import subprocess
import sys

import pytest
from serq.errors import UsageError, UserError
from serq_sweep import api, core

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session { run s (1); }
run { horizon 5; seed 1; }
"""

#: a program every point of which fails to compile: a compile before the refusal is said first
BROKEN = PROGRAM.replace("run s (1);", "run s (nosuch);")


def _serq(tmp_path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(BROKEN)
    return subprocess.run([sys.executable, "-m", "serq", *args, "--workers", "0", "--no-progress"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("command", [["sweep", "p.sq", "--set", "a=1,2"],
                                     ["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2"]])
@pytest.mark.parametrize("out, status, said", [
    ("r.txt", 2, "error: --out r.txt: a table is .parquet or .csv"),
    ("nodir/t.csv", 1, "error: nodir/t.csv: no folder nodir to write it in"),
    ("/dev/serq-no-such.csv", 1, "error: /dev/serq-no-such.csv: no such file (a path under /dev is written through to "
                                 "what is there, never created)"),
])
def test_the_out_name_is_refused_before_any_compile(tmp_path, command, out, status, said):
    r = _serq(tmp_path, *command, "-o", out)
    assert r.returncode == status and r.stderr == said + "\n", r.stderr
    assert r.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_a_good_out_still_meets_the_compile_error(tmp_path):
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "a=1,2", "-o", "t.csv")
    assert r.returncode == 1 and "p.sq:4:18: error: unknown name `nosuch`" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_the_api_compiles_nothing_for_a_bad_out(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    compiled = []
    monkeypatch.setattr(core, "compile_point", lambda *a, **k: compiled.append(a))
    with pytest.raises(UsageError, match=r"^error: out=.*/r\.txt: a table is \.parquet or \.csv$"):
        api.sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, out=str(tmp_path / "r.txt"), workers=0)
    with pytest.raises(UserError, match=r"no folder .*nodir to write it in"):
        api.sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, out=str(tmp_path / "nodir" / "t.csv"), workers=0)
    assert compiled == [] and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
