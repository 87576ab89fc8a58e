"""``serq compare`` (and ``compare()``) refuse arms that are no comparison, a grid of two swept names or one
value, and a single seed, before any point is compiled (serq_sweep.core.plan's ``shape``): the refusal came
after every point of the grid was compiled, 20 s for ``--set a=0.01:1:0.01 --set b=0.01:1:0.01`` (10 000
points) and some 40 minutes for a grid of 1000 x 1000, only to say it was no comparison; and a program that
did not compile was said first, status 1, where the command line itself was the mistake (status 2)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from serq.errors import UsageError
from serq_sweep import core, pairing

PROGRAM = """let a = 1;
let b = 1;
stage s : delay;
workload { arrive poisson(a * b); }
session { run s (1); }
run { horizon 5; seed 1; }
"""

#: a program every point of which fails to compile: a compile before the refusal is said first
BROKEN = PROGRAM.replace("run s (1);", "run s (nosuch);")


def _compare(tmp_path, source: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(source)
    return subprocess.run([sys.executable, "-m", "serq", "compare", "p.sq", "--workers", "0", "--no-progress", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("args, said", [
    (("--set", "a=1,2", "--set", "b=1,2"), "a grid of arms"),
    (("--set", "a=1,2", "--seeds", "1"), "serq compare needs two or more seeds (--seeds 1..10) for its CIs"),
    (("--set", "a=1",), "--set a=1 gives one value"),
])
def test_the_shape_is_refused_before_any_compile(tmp_path, args, said):
    r = _compare(tmp_path, BROKEN, *args)
    assert r.returncode == 2, r.stderr
    assert said in r.stderr and "nosuch" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_a_program_that_does_not_compile_is_still_said_for_a_comparison(tmp_path):
    r = _compare(tmp_path, BROKEN, "--set", "a=1,2", "--seeds", "1..2")
    assert r.returncode == 1 and "p.sq:5:18: error: unknown name `nosuch`" in r.stderr, r.stderr


def test_the_api_compiles_no_point_of_a_grid_of_arms(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    compiled = []
    real = core.compile_point

    def counted(*a, **k):
        compiled.append(a)
        return real(*a, **k)

    monkeypatch.setattr(core, "compile_point", counted)
    grid = {"a": [0.01 * i for i in range(1, 101)], "b": [0.01 * i for i in range(1, 101)]}
    with pytest.raises(UsageError, match="a grid of arms"):
        pairing.compare(str(tmp_path / "p.sq"), sets=grid, workers=0)
    with pytest.raises(UsageError, match=r"compare\(\) needs two or more seeds \(seeds=1\.\.10\)"):
        pairing.compare(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, seeds=[1], workers=0)
    assert compiled == []
    # a comparison that is one compiles its two arms, once each
    plan = pairing.arms_plan([str(tmp_path / "p.sq")], sets={"a": [1, 2]}, seeds="1..2")
    assert len(compiled) == 2 and [p.params["a"] for p in plan.points] == [1, 2]
