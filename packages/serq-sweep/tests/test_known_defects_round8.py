"""Every cell of a table serq sweep --show, serq compare and serq sweep --find print holds no blank, so the
table splits at whitespace into its header's columns (docs/sweep.md): the search's outcome ``found
smallest`` was two cells of one, as were --show's ``MEAN ± CI (n=K)`` and compare's ``B - A``, ``paired ±``,
``var. reduction`` and ``45.5 %``. The outcomes are one vocabulary, the printed table's and --out's.

The SLO attainment, ``requests.attainment`` (good / completed), is a figure of --find, --show and compare
(docs/sweep.md, Goodput); ``--find 'requests.attainment >= 0.9'`` named no figure."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.pairing import COLUMNS, render
from serq_sweep.search import OUTCOMES
from serq_sweep.stats import paired

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

#: y = k (lam^2 - 2): y <= 0 below sqrt 2 for k = 1 (found), above it for k = -1 (found_smallest), everywhere
#: for k = 0 (holds_everywhere); y <= -100 nowhere (fails_everywhere)
EXACT = """let lam = 1;
let k = 1;
stage s : delay;
workload { arrive renewal(1); }
session { observe y = k * (lam * lam - 2); end; }
run { horizon 5; seed 1; }
"""

#: z observed on about half the sessions: some seeds of a point have no value of it (a mean over fewer runs)
SOME = """let lam = 1;
stage s : delay;
workload { arrive renewal(1); }
session {
  branch (~uniform(0, 1) < 0.5) { observe z = lam + ~uniform(0, 1); }
  observe y = lam;
  end;
}
run { horizon 2.5; seed 1; }
"""


def _serq(*args, here=None):
    """What ``serq ARGS --workers 0 --no-progress`` printed, status 0, as a child process; given ``here``
    (serq_in_process), on serq.cli.main in the test's process (a test of the table printed, not of the
    process)."""
    if here is not None:
        r = here(*args, "--workers", "0", "--no-progress")
    else:
        r = subprocess.run([SERQ, *args, "--workers", "0", "--no-progress"], capture_output=True, text=True,
                           timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _split(text):
    """The printed table split at whitespace, each line checked to have the header's number of cells."""
    lines = [line.split() for line in text.splitlines()]
    for line in lines:
        assert len(line) == len(lines[0]), (lines[0], line)
    return lines


def test_the_outcomes_of_a_search_are_one_cell_each_printed_and_written(tmp_path, serq_in_process):
    prog = tmp_path / "exact.sq"
    prog.write_text(EXACT)
    out = tmp_path / "f.csv"
    lines = _split(_serq("sweep", str(prog), "--find", "y.mean <= 0", "--over", "lam", "0:4", "--set", "k=1,-1,0",
                         "--out", str(out)))
    assert lines[0] == ["k", "lam", "outcome", "holds", "fails", "evaluations", "observes.y.mean:mean"]
    assert [line[2] for line in lines[1:]] == ["found", "found_smallest", "holds_everywhere"]
    with open(out, newline="") as f:
        assert [r["outcome"] for r in csv.DictReader(f)] == ["found", "found_smallest", "holds_everywhere"]
    # (the first search as a child process; the module's other commands in this process)
    lines = _split(_serq("sweep", str(prog), "--find", "y.mean <= -100", "--over", "lam", "0:4",
                         here=serq_in_process))
    assert [line[lines[0].index("outcome")] for line in lines[1:]] == ["fails_everywhere"]
    assert all(" " not in o for o in OUTCOMES)


def test_show_prints_mean_ci_and_its_count_as_one_cell(tmp_path, serq_in_process):
    prog = tmp_path / "some.sq"
    prog.write_text(SOME)
    out = tmp_path / "t.csv"
    lines = _split(_serq("sweep", str(prog), "--set", "lam=1,2", "--seeds", "1..6", "--show", "z.mean",
                         "--show", "y.mean", "--out", str(out), here=serq_in_process))
    assert lines[0] == ["lam", "runs", "z.mean", "y.mean"]
    with open(out, newline="") as f:
        runs = list(csv.DictReader(f))
    with open(tmp_path / "t.points.csv", newline="") as f:
        points = list(csv.DictReader(f))
    for line, point in zip(lines[1:], points, strict=True):
        lam = point["lam"]
        # the mean of the seeds that have a value of z, how many they are, and the CI over them, each
        # from the runs table and the points table (their own figures, not the printed text)
        zs = [float(r["observes.z.mean"]) for r in runs if r["lam"] == lam and r["observes.z.mean"] != ""]
        assert 1 < len(zs) < 6  # (the case: some seeds without a value)
        assert math.isclose(float(point["observes.z.mean:mean"]), sum(zs) / len(zs), rel_tol=1e-12)
        mean, ci = (float(point[f"observes.z.mean:{s}"]) for s in ("mean", "ci"))
        assert line[2] == f"{mean:.6g}±{ci:.6g}(n={len(zs)})"
        assert line[3] == f"{float(lam):.6g}±0"  # y = lam in every run: a CI of 0 over all six


def test_compare_names_its_columns_as_its_table_does():
    # arm b fails on seed 3 of x: pairs over 2 seeds, so the n columns are printed too
    rows = [{"arm": "2", "base": "1", "figure": "x", **paired([1.0, 3.0, 8.0], [2.0, 5.0, math.nan])},
            {"arm": "2", "base": "1", "figure": "y", **paired([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])}]
    text = render(rows, 0, 3).splitlines()
    lines = _split("\n".join(text[1:3]))
    # the printed columns are --out's (COLUMNS, less the arm and base that head the block)
    assert lines[0] == ["figure", "a", "b", "diff", "ci_paired", "ci_unpaired", "variance_reduction", "n", "n_a",
                        "n_b"]
    assert set(lines[0]) <= set(COLUMNS)
    # x: a = (1 + 3 + 8) / 3 = 4, b = (2 + 5) / 2 = 3.5, diff over the pairs (1, 2), (3, 5): 1.5
    assert lines[1][:4] == ["x", "4", "3.5", "1.5"] and lines[1][-3:] == ["2", "3", "2"]
    # y: b - a = 1, 2, 3 against a = 1, 2, 3: var(b - a) = var(a) = 1, var(b) = 4: reduction 1 - 1 / 5 = 80 %
    assert _split(text[3])[0][6] == "80.0%"


def test_compare_printed_block_splits_into_its_columns(tmp_path, serq_in_process):
    prog = tmp_path / "exact.sq"
    prog.write_text(EXACT.replace("renewal(1)", "poisson(1)"))
    text = _serq("compare", str(prog), "--set", "lam=1,2", "--seeds", "1..3", here=serq_in_process).splitlines()
    assert text[0] == "lam=2 - lam=1, paired over 3 seeds (95 % CIs):"
    lines = _split("\n".join(line for line in text[1:] if not line.startswith("(")))
    assert lines[0] == ["figure", "a", "b", "diff", "ci_paired", "ci_unpaired", "variance_reduction"]
    (y,) = [line for line in lines if line[0] == "observes.y.mean"]
    # y = lam^2 - 2 in every session: -1 and 2, a difference of 3 on every seed (no spread: CI 0)
    assert y[1:6] == ["-1", "2", "3", "0", "0"]


#: sessions at 1, 2, …, 6, the k-th (from 0) of TTFT k * d; the warm-up leaves out the first: TTFT d … 5d
STEPS = """let d = 1;
stage a : delay;
workload { arrive renewal(1); }
session {
  set t0 = now; run a (serial * d); set f = now; run a (1);
  record req { sent = t0; first_token = f; last_token = now; output = 2; }
}
run { horizon 100; warmup 1.5; seed 1; arrivals 6; }
"""


def test_the_slo_attainment_is_a_figure_of_find_show_and_compare(tmp_path, serq_in_process):
    prog = tmp_path / "steps.sq"
    prog.write_text(STEPS)
    # under ttft=2.5, 3 of the 5 requests meet it while 3d <= 2.5: on the grid, d = 0.75 holds (3 * 0.75
    # = 2.25) and 1 fails (TTFT 1, 2 only: 0.4)
    lines = _split(_serq("sweep", str(prog), "--slo", "ttft=2.5", "--find", "requests.attainment >= 0.6",
                         "--over", "d", "0.5:1.5:0.25", here=serq_in_process))
    # (then the condition's mean at the value found: 3 of the 5 requests, 0.6)
    assert lines[1:] == [["0.75", "found", "0.75", "1.0", "4", "0.6"]]
    lines = _split(_serq("sweep", str(prog), "--slo", "ttft=2.5", "--set", "d=0.5,1", "--show", "attainment",
                         "--show", "requests.good", here=serq_in_process))
    # d = 0.5: TTFT 0.5 … 2.5, all five; d = 1: two of five (one seed: no CI)
    assert lines == [["d", "runs", "attainment", "requests.good"], ["0.5", "1", "1", "5"], ["1", "1", "0.4", "2"]]
    text = _serq("compare", str(prog), "--slo", "ttft=2.5", "--set", "d=0.5,1", "--seeds", "1..2",
                 "--figure", "attainment", here=serq_in_process).splitlines()
    assert _split(text[2])[0][:4] == ["requests.attainment", "1", "0.4", "-0.6"]
    r = subprocess.run([SERQ, "sweep", str(prog), "--set", "d=0.5,1", "--show", "attainment", "--workers", "0",
                        "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith(
        "error: --show: attainment: requests.attainment is the fraction of the completed requests that meet an SLO, "
        "which the runs are given with --slo"), r.stderr
