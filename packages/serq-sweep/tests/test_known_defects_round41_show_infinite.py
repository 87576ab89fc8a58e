"""``serq sweep --show FIG`` of a figure whose every run at a point is infinite (``K / 0``) printed ``nan``
without a word: a mean leaves out inf and -inf as it does a run without a value. It now warns on stderr,
naming the points and how many of their runs were infinite; the table is as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SERQ = str(Path(sys.executable).parent / "serq")

# every session observes K / 0: inf for K > 0, -inf for K < 0; v is 1 throughout
EVERY = """let K = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (1); observe w = K / 0; observe v = 1; }
run { horizon 20; seed 1; }
"""
# a session arrives rarely and is observed only if its exp(1) run ends by 0.5: some seeds observe w (inf),
# the others take no sample of it
SOME = """let K = 1;
stage s : delay;
workload { arrive poisson(0.1); }
session { run s (~exp(1)); observe w = K / 0; }
run { horizon 0.5; seed 1; }
"""
HEAD = ("warning: --show {f}: nan where no run had a finite value of it, an infinite value (inf, -inf) being left "
        "out of a mean as a run without one is: ")


def _sweep(tmp_path: Path, program: str, *args: str, here=None) -> subprocess.CompletedProcess:
    """serq fmt --check of the program, then its sweep, as child processes; given ``here`` (serq_in_process),
    on serq.cli.main in the test's process, in ``tmp_path`` (a test of what is said and shown)."""
    (tmp_path / "p.sq").write_text(program)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            assert here("fmt", "--check", "p.sq").returncode == 0
            return here("sweep", "p.sq", "--workers", "0", "--out", "t.csv", *args)
    assert subprocess.run([SERQ, "fmt", "--check", "p.sq"], cwd=tmp_path, capture_output=True,
                          timeout=60).returncode == 0
    return subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--out", "t.csv", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL)


def test_every_run_infinite_is_said(tmp_path):
    # (as child processes; the module's other sweeps in this process)
    r = _sweep(tmp_path, EVERY, "--set", "K=1,-1", "--seeds", "1,2", "--show", "w.mean", "--show", "v.mean")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[1:] == [HEAD.format(f="w.mean") + "K=1: infinite in all 2 runs; K=-1: infinite "
                                         "in all 2 runs"]
    assert r.stdout.splitlines() == [" K  runs  w.mean  v.mean", " 1     2     nan     1±0", "-1     2     nan     1±0"]


def test_one_run_infinite(tmp_path, serq_in_process):
    r = _sweep(tmp_path, EVERY, "--set", "K=3", "--seeds", "1", "--show", "observes.w.mean", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[1:] == [HEAD.format(f="observes.w.mean") + "K=3: infinite in its one run"]


def test_infinite_runs_beside_runs_without_a_value(tmp_path, serq_in_process):
    r = _sweep(tmp_path, SOME, "--set", "K=1", "--seeds", "1..6", "--show", "w.mean", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    values = [line.split(",") for line in (tmp_path / "t.csv").read_text().splitlines()]
    column = values[0].index("observes.w.mean")
    cells = [row[column] for row in values[1:]]
    infinite = cells.count("inf")
    assert 0 < infinite < 6 and cells.count("") == 6 - infinite  # (the seeds differ: some observed, some not)
    assert r.stderr.splitlines()[1:] == [HEAD.format(f="w.mean") + f"K=1: infinite in {infinite} of 6 runs, no value "
                                         "in the others"]


def test_a_finite_mean_or_no_value_at_all_says_nothing_of_inf(tmp_path, serq_in_process):
    r = _sweep(tmp_path, EVERY, "--set", "K=1", "--seeds", "1,2", "--show", "v.mean", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert "infinite" not in r.stderr
    r = _sweep(tmp_path, SOME.replace("K / 0", "K"), "--set", "K=1", "--seeds", "2,3", "--show", "w.mean",
               here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert "infinite" not in r.stderr
