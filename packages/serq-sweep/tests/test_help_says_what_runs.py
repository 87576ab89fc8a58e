"""What `serq compare --help` and `serq sweep --help` say of a default or a bound is what the command does
(docs/sweep.md): compare runs the seeds 1..10 when none are given, and --find stops once the bracket is at
most --tol wide."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
SERQ = str(Path(sys.executable).parent / "serq")
ENV = dict(os.environ)


def _serq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=120, env=ENV)


def _help(command: str) -> str:
    p = _serq(command, "--help")
    assert p.returncode == 0, p.stderr
    return " ".join(p.stdout.split())


@pytest.mark.timeout(120)
def test_compare_runs_the_seeds_its_help_names():
    # docs/sweep.md: "run under the same seeds (default `1..10`)"; the help said "[default: 1]"
    assert re.search(r"--seeds SEEDS .*\[default: 1\.\.10\]", _help("compare"))
    p = _serq("compare", MG1, "--set", "lambda=0.5,0.6", "--arrivals", "20", "--horizon", "inf", "--warmup", "0",
              "--workers", "0", "--no-progress", "--figure", "observes.response.mean")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("lambda=0.6 - lambda=0.5, paired over 10 seeds"), p.stdout
    # a sweep's default is one seed, and its help says so
    assert re.search(r"--seeds SEEDS .*\[default: 1\]", _help("sweep"))


@pytest.mark.timeout(120)
def test_find_stops_at_a_bracket_as_wide_as_tol():
    # the help said "narrower than X"; the search stops once the bracket is at most X wide: over 0.25:0.75
    # with --tol 0.125, two halvings leave a bracket of exactly 0.125 (no third halving to undercut it)
    assert "--find stops when the bracket is at most X wide" in _help("sweep")
    p = _serq("sweep", MG1, "--find", "response.mean <= 2", "--over", "lambda", "0.25:0.75", "--tol", "0.125",
              "--arrivals", "2000", "--horizon", "inf", "--warmup", "0", "--workers", "0", "--no-progress")
    assert p.returncode == 0, p.stderr
    head, row = p.stdout.splitlines()[:2]
    cols = dict(zip(head.split(), row.split()))
    assert cols["outcome"] == "found" and cols["evaluations"] == "4"  # the two ends and two halvings
    assert abs(float(cols["fails"]) - float(cols["holds"])) == 0.125


@pytest.mark.timeout(120)
def test_records_is_said_to_need_out_as_it_does():
    # the help said "...; with --out, resumed too", as if --records wrote its table without --out; it is
    # a usage error there (docs/sweep.md: "`--records FILE` (`.parquet` or `.csv`, with `--out`)")
    p = _serq("sweep", MG1, "--records", "r.csv", "--arrivals", "20", "--workers", "0", "--no-progress")
    assert p.returncode == 2 and "--records goes with --out" in p.stderr, p.stderr
    said = re.search(r"--records FILE (.*?) --fresh", _help("sweep")).group(1)
    assert "only with --out" in said, said
