"""``serq plot TABLE --y FIGURE`` without ``--x`` of a sweep's table that sweeps exactly one name draws FIGURE
against that name (serq_sweep.plots.swept_x; --help and docs/sweep.md say so). It was a usage error, "serq plot
TABLE needs --x NAME and --y FIGURE", though the table has one name the curve could be drawn against. A table of
two swept names still needs --x, and the error says which names it sweeps."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import plots

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let L = 1;
let S = 0.5;

pool slot { cap 1; }
stage gpu : delay;

workload {
  arrive poisson(L);
}

session {
  set t0 = now;
  hold slot (1) {
    run gpu (~exp(S));
  }
  observe response = now - t0;
}

run { horizon 40; warmup 0; seed 1; }
"""


def serq(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=150,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory, once_per_run):
    # the sweeps made once for the test run (the suite's once_per_run, not once in each worker that runs a test
    # here), copied into this module's folder, where its pictures are written
    d = tmp_path_factory.mktemp("one_swept")
    shutil.copytree(once_per_run("one-swept-sweeps", _sweeps), d, dirs_exist_ok=True)
    return d


def _sweeps(d: Path) -> None:
    (d / "k.sq").write_text(PROGRAM)
    r = serq(["fmt", "--check", "k.sq"], d)
    assert r.returncode == 0, r.stdout + r.stderr
    r = serq(["sweep", "k.sq", "--set", "L=0.5,1", "--seeds", "1,2", "--out", "one.csv", "--workers", "0"], d)
    assert r.returncode == 0, r.stderr
    r = serq(["sweep", "k.sq", "--set", "L=0.5,1", "--set", "S=0.5,0.25", "--seeds", "1", "--out", "two.csv",
              "--workers", "0"], d)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("table", ["one.points.csv", "one.csv"])
def test_the_one_swept_name_is_the_x(sweeps, table):
    fig = plots.plot(str(sweeps / table), y="response.mean")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "L"
    # the same curve as with --x L written
    given = plots.plot(str(sweeps / table), x="L", y="response.mean").axes[0]
    assert [line.get_xdata().tolist() for line in ax.lines] == [[0.5, 1.0]]
    assert ([line.get_ydata().tolist() for line in ax.lines] == [line.get_ydata().tolist() for line in given.lines])


def test_the_command_draws_it(sweeps):
    r = serq(["plot", "one.points.csv", "--y", "response.mean", "-o", "a.svg"], sweeps)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert (sweeps / "a.svg").stat().st_size > 0
    r = serq(["plot", "--help"], sweeps)
    assert "without it, the table's one swept name, when it sweeps one" in " ".join(r.stdout.split())


def test_two_swept_names_still_need_x(sweeps):
    r = serq(["plot", "two.points.csv", "--y", "response.mean", "-o", "b.svg"], sweeps)
    assert r.returncode == 2
    assert r.stderr == ("error: serq plot TABLE --y response.mean needs --x NAME: the table sweeps L, S (--x is the "
                        "one swept name of a table that sweeps one)\n")
    assert not (sweeps / "b.svg").exists()
    # no --y: the figure is what is missing
    r = serq(["plot", "one.points.csv", "--x", "L", "-o", "b.svg"], sweeps)
    assert r.returncode == 2 and r.stderr == "error: serq plot TABLE --x L needs --y FIGURE: the figure to draw against L\n", r.stderr
