"""Capacity search: the knee of the single-turn vLLM workload lies in the bracket a dense sweep shows, a
grid search finds the dense sweep's answer exactly, and the ends of a range are reported as such."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq_sweep.search import parse_condition

ROOT = Path(__file__).resolve().parents[3]
SINGLE = str(ROOT / "examples/multi-turn/vllm_single_turn.sq")
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
SERQ = str(Path(sys.executable).parent / "serq")
RUN = dict(seeds="1..2", horizon=40, warmup=5)


@pytest.mark.timeout(300)
def test_the_knee_of_single_turn_vllm():
    dense = serq_sweep.sweep(SINGLE, sets={"Lambda": "5:8.5:0.25"}, workers=2, **RUN)
    means = dense.groupby("Lambda")["observes.ttft.p99"].mean()
    grid = list(means.index)
    ok = [means[x] <= 1 for x in grid]
    first_fail = ok.index(False)
    assert 0 < first_fail and not any(ok[first_fail:]), means  # one knee inside the range
    dense_pass, dense_fail = grid[first_fail - 1], grid[first_fail]

    _, rows = serq_sweep.find(SINGLE, "observes.ttft.p99 <= 1", ("Lambda", "2:12"), tol=0.05, workers=2, **RUN)
    (r,) = rows
    assert r["outcome"] == "found"
    # the crossing the bisection brackets meets the dense sweep's bracket (at a resolution finer than the
    # dense grid, the mean over two seeds is not monotone: it may cross back and forth within 0.05)
    assert r["holds"] <= dense_fail and r["fails"] >= dense_pass
    assert dense_pass - 0.25 < r["holds"] < dense_fail
    assert r["fails"] - r["holds"] <= 0.05 and r["observes.ttft.p99:mean"] <= 1

    # on the dense sweep's grid the search lands on the dense sweep's own bracket, in a few evaluations
    _, rows = serq_sweep.find(SINGLE, ["observes.ttft.p99 <= 1"], ("Lambda", "5:8.5:0.25"), workers=2, **RUN)
    (g,) = rows
    assert (g["holds"], g["fails"]) == (dense_pass, dense_fail)
    assert g["evaluations"] <= 2 + math.ceil(math.log2(len(grid)))
    assert g["observes.ttft.p99:mean"] == means[dense_pass]


def test_ends_of_the_range_and_other_points(tmp_path):
    out = tmp_path / "f.csv"
    r = subprocess.run([SERQ, "sweep", MG1, "--find", "response.mean <= 2", "--over", "lambda", "0.1:0.7",
                        "--set", "lambda_unused=1", "--horizon", "3000", "--workers", "0", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no `let lambda_unused`" in r.stderr
    r = subprocess.run([SERQ, "sweep", MG1, "--find", "response.mean <= 2", "--over", "lambda", "0.1:0.7",
                        "--def", "service=~exp(1)", "--def", "service=~exp(0.1)", "--def", "service=~exp(5)",
                        "--horizon", "5000", "--workers", "0", "--tol", "0.02", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [line.split() for line in r.stdout.splitlines()]
    # the condition's figure at the value found is printed beside it (its mean over the seeds)
    assert lines[0] == ["service", "lambda", "outcome", "holds", "fails", "evaluations", "observes.response.mean:mean"]
    assert float(lines[1][6]) <= 2
    assert lines[2][:3] == ["~exp(0.1)", "0.7", "holds_everywhere"] and lines[3][1:3] == ["nan", "fails_everywhere"]
    # M/M/1 with mean service 1: response time 1 / (1 - lambda) <= 2 up to lambda 0.5
    found = float(lines[1][1])
    assert lines[1][2] == "found" and 0.4 < found <= 0.56, lines[1]
    assert out.read_text().startswith("service,lambda,outcome,holds,fails,evaluations,observes.response.mean:mean\n")


def test_conditions():
    assert parse_condition("ttft.p99 <= 1") == ("ttft.p99", "<=", 1.0)
    assert parse_condition(" pools.kv[1].used>2e3") == ("pools.kv[1].used", ">", 2000.0)
    for bad in ("ttft.p99 =< 1", "<= 1", "ttft.p99 <= x"):
        with pytest.raises(Exception, match="expected FIGURE OP NUMBER"):
            parse_condition(bad)
    r = subprocess.run([SERQ, "sweep", MG1, "--find", "tpot.p99 <= 1", "--over", "lambda", "0.1:0.5",
                        "--horizon", "3000", "--workers", "0"], capture_output=True, text=True)
    assert r.returncode == 1 and "no figure 'tpot.p99'" in r.stderr and "Traceback" not in r.stderr
