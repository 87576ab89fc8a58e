"""``serq sweep --fresh`` without ``--out`` is a usage error, as ``--records`` without ``--out`` and ``--tol``
without ``--find`` are: a sweep without a table resumes nothing, and the flag was ignored without a word (the
sweep ran and wrote its table to stdout, status 0)."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session { run s (1); }
run { horizon 5; seed 1; }
"""


def _sweep(tmp_path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    return subprocess.run([sys.executable, "-m", "serq", "sweep", "p.sq", "--set", "a=1,2", "--workers", "0",
                           "--no-progress", *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_fresh_without_out_is_refused(tmp_path):
    r = _sweep(tmp_path, "--fresh")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr == ("error: --fresh goes with --out (it runs the sweep again instead of resuming from the table "
                        "there) (see 'serq sweep --help')\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_fresh_with_out_runs_again(tmp_path):
    first = _sweep(tmp_path, "-o", "t.csv")
    assert first.returncode == 0, first.stderr
    again = _sweep(tmp_path, "-o", "t.csv", "--fresh")
    assert again.returncode == 0 and "(2 run now, 0 resumed)" in again.stderr, again.stderr
