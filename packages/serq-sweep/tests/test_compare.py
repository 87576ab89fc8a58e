"""serq compare: paired differences against hand computations, paired CIs narrower than unpaired ones when
the arms share a workload, and users' mistakes."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import core
from serq_sweep.api import run_plan
from serq_sweep.pairing import arms_plan, comparisons
from serq_sweep.stats import paired

ROOT = Path(__file__).resolve().parents[3]
VLLM = str(ROOT / "examples/multi-turn/vllm.sq")
MG1 = str(ROOT / "examples/single-turn/mg1.sq")
SERQ = str(Path(sys.executable).parent / "serq")


def test_paired_by_hand():
    a = [1.0, 2.0, 3.0, 4.0]
    b = [1.5, 2.4, 3.7, 4.4]
    d = [y - x for x, y in zip(a, b)]
    r = paired(a, b)
    assert r["n"] == 4 and r["diff"] == pytest.approx(statistics.mean(d))
    # Student's t quantiles 0.975 (scipy.stats.t.ppf): 3.1824463 at 3 degrees of freedom
    assert r["ci_paired"] == pytest.approx(3.1824463052837078 * statistics.stdev(d) / 2, rel=1e-12)
    va, vb = statistics.variance(a) / 4, statistics.variance(b) / 4
    df = (va + vb) ** 2 / ((va * va + vb * vb) / 3)  # Welch: 5.9998, taken as it is (not rounded down to 5)
    assert df == pytest.approx(5.999786576449106, rel=1e-12)
    assert r["ci_unpaired"] == pytest.approx(2.446932950313136 * math.sqrt(va + vb), rel=1e-12)
    assert r["variance_reduction"] == pytest.approx(
        1 - statistics.variance(d) / (statistics.variance(a) + statistics.variance(b)))
    # a pair with a NaN is left out
    assert paired([1.0, math.nan, 3.0], [2.0, 5.0, 4.0])["n"] == 2


@pytest.mark.timeout(200)
def test_budget_arms_paired_cis_narrower_than_unpaired():
    plan = arms_plan([VLLM], sets={"B": [8192, 512]}, seeds="1..6", horizon=200, warmup=20)
    columns, table, complete, _ = run_plan(plan, workers=2, progress=False)
    assert complete
    rows, _ = comparisons(plan, columns, table)
    by = {r["figure"]: r for r in rows}
    for fig in ("observes.response.mean", "stages.engine.utilisation"):
        r = by[fig]
        # by hand from the table
        a = [x[fig] for x in table if x["point"] == 0]
        b = [x[fig] for x in table if x["point"] == 1]
        d = [y - x for x, y in zip(a, b)]
        assert r["diff"] == pytest.approx(statistics.mean(d))
        # t 0.975 of 5 degrees of freedom: 2.5705818 (scipy.stats.t.ppf)
        assert r["ci_paired"] == pytest.approx(2.5705818356363146 * statistics.stdev(d) / math.sqrt(6), rel=1e-12)
        assert r["ci_paired"] < r["ci_unpaired"], fig
        assert r["variance_reduction"] > 0.5, fig
    assert by["observes.ttft.mean"]["arm"] == "B=512" and by["observes.ttft.mean"]["base"] == "B=8192"


def test_cli_output_and_table(tmp_path):
    out = tmp_path / "c.csv"
    r = subprocess.run([SERQ, "compare", MG1, "--def", "service=~exp(1)", "--def", "service=~exp(0.8)", "--seeds", "1..3", "--horizon", "3000",
                        "--figure", "response.mean", "--figure", "events", "--out", str(out), "--workers", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "service=~exp(0.8) - service=~exp(1), paired over 3 seeds (95 % CIs):"
    assert lines[2].split()[0] == "observes.response.mean" and lines[3].split()[0] == "events"
    rows = core.read_table(str(out))
    assert [x["figure"] for x in rows] == ["observes.response.mean", "events"]
    assert rows[0]["b"] < rows[0]["a"]  # a faster server answers sooner


def test_mistakes(tmp_path):
    for args, msg in [((MG1,), "two or more programs"),
                      ((MG1, "--set", "lambda=0.1,0.2", "--def", "service=~exp(1)", "--def", "service=~det(1)"),
                       "(--set lambda, --def service), a grid of arms"),
                      ((MG1, "--set", "lambda=0.1,0.2", "--seeds", "1"), "two or more seeds"),
                      ((MG1, MG1), "given twice")]:
        r = subprocess.run([SERQ, "compare", *args, "--horizon", "3000"], capture_output=True, text=True)
        # each a usage error (status 2): the arms the command line gives do not make a comparison
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_a_name_given_one_value_is_a_setting_of_every_arm():
    # --set lambda=0.5 beside the swept service: every arm runs at lambda 0.5 (it was refused as a second
    # swept name, "swept here: lambda, service", so a constant could not be fixed without editing the file)
    r = subprocess.run([SERQ, "compare", MG1, "--set", "lambda=0.5", "--def", "service=~exp(1)",
                        "--def", "service=~det(1)", "--seeds", "1..3", "--horizon", "20000", "--figure",
                        "svc.utilisation", "--figure", "response.mean", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "service=~det(1) - service=~exp(1), paired over 3 seeds (95 % CIs):"
    util = lines[2].split()
    assert util[0] == "stages.svc.utilisation"
    assert abs(float(util[1]) - 0.5) < 0.05 and abs(float(util[2]) - 0.5) < 0.05  # rho = lambda E[S] = 0.5
    # M/D/1 against M/M/1 at rho 0.5: E[T] = 1.5 against 2
    assert lines[3].split()[0] == "observes.response.mean" and float(lines[3].split()[3]) < 0


def test_each_arm_s_mean_is_over_its_own_values():
    """A figure only one arm has (a stage or pool the other program does not declare) shows that arm's mean
    and NaN beside it; both were NaN, as if neither arm had it. The difference and its CIs stay over the
    seeds where both arms have a value."""
    r = paired([1.0, 2.0, 6.0], [math.nan, math.nan, math.nan])
    assert r["n"] == 0 and r["a"] == 3.0 and math.isnan(r["b"]) and math.isnan(r["diff"])
    r = paired([math.nan, math.nan], [4.0, 5.0])
    assert math.isnan(r["a"]) and r["b"] == 4.5
    # a missing pair: each mean over its arm's values, the difference over the whole pairs (2 - 1, 5 - 3)
    r = paired([1.0, 3.0, 8.0], [2.0, 5.0, math.nan])
    assert (r["n"], r["a"], r["b"], r["diff"]) == (2, 4.0, 3.5, 1.5)


@pytest.mark.timeout(60)
def test_two_programs_one_with_a_stage_the_other_has_not(tmp_path):
    """serq compare of two programs: the figures of a stage only B declares show B's means."""
    a = tmp_path / "a.sq"
    b = tmp_path / "b.sq"
    a.write_text("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n")
    b.write_text("stage s : delay;\nstage t : delay;\nworkload { arrive poisson(1); }\n"
                 "session { run s (1); run t (2); }\n")
    plan = arms_plan([str(a), str(b)], seeds="1..3", horizon=50)
    columns, table, complete, _ = run_plan(plan, workers=0, progress=False)
    assert complete
    rows, _ = comparisons(plan, columns, table)
    by = {r["figure"]: r for r in rows}
    t = by["stages.t.service"]
    # service of a delay stage of work 2: exactly 2 in every run of B
    assert math.isnan(t["a"]) and t["b"] == 2.0 and t["n"] == 0
