"""serq sweep refuses a --show figure given twice, and two names that resolve to one figure, as serq compare
refuses its --figure (pairing.figures_once): `--show x --show x` and `--show mean --show response.mean` printed
one column, silently. Status 2, before any run, naming both spellings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (a); observe response = now - t0; }
run { horizon 5; seed 1; }
"""


def _sweep(tmp_path: Path, *show: str) -> subprocess.CompletedProcess:
    (tmp_path / "p.sq").write_text(PROGRAM)
    args = [a for s in show for a in ("--show", s)]
    return subprocess.run([SERQ, "sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("show, said", [
    (("response.mean", "response.mean"), "error: --show response.mean: given twice (give it once)\n"),
    (("mean", "response.mean"), "error: --show mean and --show response.mean: both name the figure "
                                "observes.response.mean (give it once)\n"),
])
def test_a_figure_shown_twice_is_refused_before_any_run(tmp_path, show, said):
    r = _sweep(tmp_path, *show)
    assert r.returncode == 2 and r.stdout == "" and r.stderr == said, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # no table, no journal


def test_a_figure_shown_once_is_its_column(tmp_path):
    # the delay of a (1, then 2) is each run's response time: a point's mean is a
    r = _sweep(tmp_path, "response.mean")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()]
    assert rows[0] == ["a", "runs", "response.mean"]
    assert [row[0] for row in rows[1:]] == ["1", "2"] and [float(row[2]) for row in rows[1:]] == [1.0, 2.0]
