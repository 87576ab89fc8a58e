"""A figure name no run has (``serq sweep --show``, ``serq compare --figure``, a ``--find`` condition's: a typo)
is refused before the runs (serq_sweep.core.check_figures, a run of one event of each point until every name
resolves; for --find, of each program with the knob at LO).

It was found after every run: a sweep of hours ended in ``no figure 'ttf.p99' in the results``, its table
lost when no ``--out`` kept it (``--show`` prints the means instead of the table), and serq compare's runs
lost whatever was given. The program here would run for ever: the refusal comes without a run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
FOREVER = """let lam = 1000000;
stage s : fifo(1000000);
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; observe later = now - t0 + 1; }
run { horizon 1e9; }
"""
SHORT = FOREVER.replace("1e9", "20").replace("1000000", "2")


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args, "--workers", "0", "--no-progress"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("args, said", [
    (["sweep", "p.sq", "--set", "lam=1000000,2000000", "--show", "respons.mean", "--out", "t.csv"],
     "error: --show: no figure 'respons.mean' in the results"),
    (["compare", "p.sq", "--set", "lam=1000000,2000000", "--seeds", "1,2", "--figure", "respons.mean"],
     "error: --figure: no figure 'respons.mean' in the results"),
    (["sweep", "p.sq", "--find", "respons.mean <= 3", "--over", "lam", "1000000:2000000"],
     "error: --find: no figure 'respons.mean' in the results"),
    (["sweep", "p.sq", "--show", "mean"],
     "error: --show: figure 'mean' is ambiguous: observes.response.mean, observes.later.mean"),
    # a points table's column where a figure goes: the figure it is of (it was offered another one)
    (["sweep", "p.sq", "--show", "response.p99:mean"],
     "error: --show: no figure 'response.p99:mean' in the results: a figure is named by its path, "
     "`observes.response.p99` (FIGURE:mean and FIGURE:ci are a points table's columns"),
    (["sweep", "p.sq", "--show", "p99:ci"],
     "error: --show: no figure 'p99:ci' in the results: a figure is named by its path, `observes.response.p99` or "
     "`observes.later.p99` ("),
    (["sweep", "p.sq", "--show", "respons.p99:mean"],
     "error: --show: no figure 'respons.p99:mean' in the results (did you mean `response.p99`?)"),
])
def test_a_figure_no_run_has_is_refused_before_the_runs(tmp_path, serq_in_process, monkeypatch, args, said):
    # (serq.cli.main in the test's process, in its folder as the child process ran: what is said; the sweeps
    # and comparisons below run as child processes)
    (tmp_path / "p.sq").write_text(FOREVER)
    monkeypatch.chdir(tmp_path)
    r = serq_in_process(*args, "--workers", "0", "--no-progress")
    assert r.returncode == 1
    assert r.stderr.strip().startswith(said), r.stderr
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "t.csv.journal").exists()


@pytest.mark.timeout(90)
def test_names_that_resolve_still_show_and_compare(tmp_path):
    (tmp_path / "p.sq").write_text(SHORT)
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "lam=0.5,1", "--show", "response.mean", "--show", "events")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split() == ["lam", "runs", "response.mean", "events"]
    r = _serq(tmp_path, "compare", "p.sq", "--set", "lam=0.5,1", "--seeds", "1,2", "--figure", "response.mean")
    assert r.returncode == 0, r.stderr
    assert "observes.response.mean" in r.stdout
    r = _serq(tmp_path, "sweep", "p.sq", "--find", "response.mean <= 100", "--over", "lam", "0.5:1")
    assert r.returncode == 0, r.stderr
    assert "holds_everywhere" in r.stdout


@pytest.mark.timeout(90)
def test_a_figure_named_twice_is_one_column_and_one_row(tmp_path):
    """``--show x --show x`` (or by two tails, ``mean`` and ``response.mean``) printed the column twice, and
    ``--figure`` twice compared the figure twice (both now refused, as a --set name given twice is:
    docs/sweep.md)."""
    (tmp_path / "p.sq").write_text(SHORT)
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "lam=0.5,1", "--show", "response.mean", "--show", "events",
              "--show", "observes.response.mean")
    assert r.returncode == 2 and r.stderr == ("error: --show response.mean and --show observes.response.mean: both "
                                              "name the figure observes.response.mean (give it once)\n"), r.stderr
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "lam=0.5,1", "--show", "response.mean", "--show", "events")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split() == ["lam", "runs", "response.mean", "events"]
    # serq compare refuses two names of one figure, as it refuses one name given twice (status 2)
    r = _serq(tmp_path, "compare", "p.sq", "--set", "lam=0.5,1", "--seeds", "1,2", "--figure", "response.mean",
              "--figure", "observes.response.mean", "--figure", "events")
    assert r.returncode == 2 and "both name the figure observes.response.mean" in r.stderr, r.stderr
    r = _serq(tmp_path, "compare", "p.sq", "--set", "lam=0.5,1", "--seeds", "1,2", "--figure", "response.mean",
              "--figure", "events")
    assert r.returncode == 0, r.stderr
    rows = [line.split()[0] for line in r.stdout.splitlines()[2:] if line.strip()]
    assert rows == ["observes.response.mean", "events"]
