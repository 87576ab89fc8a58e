"""A capacity planner's sweeps of a fleet (packages/serq-sim/tests/peer_programs19/fleet.sq: N vLLM-style engines
behind a router), each checked against a truth of its own.

Common random numbers make every point of a seed see the same requests (docs/sweep.md: the arrival times of
`arrive poisson` scaled with the rate, the sizes and the router's draw the session's own). With engines of one
slot (max_seqs 1) and an iteration cost in proportion to the tokens, an engine is a FIFO single server, and
Lindley's recursion (a request starts at the later of its arrival and its predecessor's end) is monotone in the
arrival times: under a random router each request's TTFT and E2E latency can only grow with the rate, seed by
seed, and so do every mean and quantile of them, while the SLO attainment can only fall. `--find` then has one
answer, which the sweep's rows bracket; and the difference of two fleet sizes under common random numbers has a
CI far narrower than the same seeds' count of independent runs gives. The tables are the same bytes on the
general engine (SERQ_SIM_TIER=general) and on a pool of workers."""

from __future__ import annotations

import csv
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FLEET = str(ROOT / "packages/serq-sim/tests/peer_programs19/fleet.sq")
SERQ = str(Path(sys.executable).parent / "serq")
pytestmark = pytest.mark.timeout(120)

# one slot an engine, a random router, 8 output tokens on average, every run drained from an empty fleet: the
# same 300 requests at every rate
FIFO = ["--set", "N=2", "--set", "max_seqs=1", "--set", "policy=2", "--set", "E_o=8",
        "--arrivals", "300", "--warmup", "0", "--horizon", "inf", "--slo", "ttft=0.1", "--no-progress"]
RATES = [8, 16, 24, 32, 40]
# Student t's 97.5 % quantile at 5 and 10 degrees of freedom as the sweep's table has them (docs/sweep.md)
T5, T10 = 2.571, 2.228


def serq(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **(env or {})})
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture
def serq_here(serq_in_process):
    """``serq_here(*args)``: :func:`serq` in this process (serq.cli.main), for the sweeps whose tables are checked
    (the runs' figures, not the process that makes them)."""

    def call(*args: str):
        p = serq_in_process(*args)
        assert p.returncode == 0, p.stderr
        return p

    return call


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _rate_sweep(d: Path) -> None:
    serq("sweep", FLEET, "--set", "Lambda=" + ",".join(map(str, RATES)), *FIFO, "--seeds", "1..3",
         "--workers", "0", "-o", str(d / "t.csv"), "--records", str(d / "r.csv"))


@pytest.fixture(scope="module")
def rate_sweep(once_per_run):
    # made once for the test run, not once for each worker that runs a test here
    return once_per_run("peer-programs19-rates", _rate_sweep)


def test_every_request_is_slower_at_a_higher_rate_seed_by_seed(rate_sweep):
    recs = read_csv(rate_sweep / "r.csv")
    by = {}
    for r in recs:
        by.setdefault((int(r["seed"]), int(r["session"])), {})[int(r["Lambda"])] = r
    assert len(by) == 3 * 300 and all(len(v) == len(RATES) for v in by.values())
    for rows in by.values():
        # the premise: the same request at every rate (its sizes and its engine), sent earlier at a higher one
        assert len({(r["prompt"], r["output"], r["engine"]) for r in rows.values()}) == 1
        sent = [float(rows[lam]["sent"]) for lam in RATES]
        assert sent == sorted(sent, reverse=True)
        # Lindley: its TTFT and its E2E latency never fall as the rate rises
        for a, b in zip(RATES, RATES[1:]):
            for end in ("first_token", "last_token"):
                assert (float(rows[b][end]) - float(rows[b]["sent"])
                        >= float(rows[a][end]) - float(rows[a]["sent"]) - 1e-9), (rows[a], rows[b])


def test_the_sweep_rows_are_monotone_in_the_rate_seed_by_seed(rate_sweep):
    table = read_csv(rate_sweep / "t.csv")
    assert {r["status"] for r in table} == {"ok"}
    for seed in ("1", "2", "3"):
        rows = sorted((r for r in table if r["seed"] == seed), key=lambda r: int(r["Lambda"]))
        assert [int(r["Lambda"]) for r in rows] == RATES
        for fig in ("requests.ttft.mean", "requests.ttft.p99", "requests.e2el.mean", "requests.e2el.median",
                    "requests.e2el.p90"):
            v = [float(r[fig]) for r in rows]
            assert v == sorted(v), (seed, fig, v)
        att = [float(r["requests.attainment"]) for r in rows]
        assert att == sorted(att, reverse=True), (seed, att)
        assert all(int(r["requests.completed"]) == 300 for r in rows)
    # each row obeys Little's law and the utilisation law exactly (drained runs from an empty fleet): the
    # time-average requests in the fleet over the run is their total time in it over its length, and the
    # engines' busy time is c1 = 0.0002 s a token iterated (every prompt token, every output token but the
    # first, which the prefill's last iteration gives)
    for r in table:
        end, done = float(r["end"]), int(r["requests.completed"])
        assert float(r["gauges.inflight.mean"]) * end == pytest.approx(float(r["requests.e2el.mean"]) * done,
                                                                      rel=1e-9)
        busy = sum(float(r[f"stages.engine[{j}].utilisation"]) for j in range(2)) * end
        tokens = float(r["requests.total_input_tokens"]) + float(r["requests.total_output_tokens"]) - done
        assert busy == pytest.approx(0.0002 * tokens, rel=1e-9)
    # and strictly so over the range, in the points table's means
    pts = read_csv(rate_sweep / "t.points.csv")
    means = [float(p["requests.e2el.mean:mean"]) for p in sorted(pts, key=lambda p: int(p["Lambda"]))]
    assert means[-1] > 2 * means[0]


def test_the_table_is_the_same_bytes_on_the_general_engine_and_on_workers(rate_sweep, tmp_path):
    out = tmp_path / "g.csv"
    serq("sweep", FLEET, "--set", "Lambda=" + ",".join(map(str, RATES)), *FIFO, "--seeds", "1..3",
         "--workers", "2", "-o", str(out), env={"SERQ_SIM_TIER": "general"})
    assert out.read_bytes() == (rate_sweep / "t.csv").read_bytes()


def test_find_on_the_grid_is_the_sweep_rows_answer(rate_sweep, tmp_path, serq_here):
    # the largest rate of the grid at which 70 % of the requests meet a TTFT of 0.1 s, on the means over the
    # seeds: the means are monotone (each seed's is), so it is the last grid value whose mean holds
    pts = sorted(read_csv(rate_sweep / "t.points.csv"), key=lambda p: int(p["Lambda"]))
    att = {int(p["Lambda"]): float(p["requests.attainment:mean"]) for p in pts}
    holds = [lam for lam in RATES if att[lam] >= 0.7]
    assert holds == RATES[:len(holds)] and 0 < len(holds) < len(RATES)
    answer = holds[-1]
    out = tmp_path / "f.csv"
    serq_here("sweep", FLEET, "--find", "requests.attainment >= 0.7", "--over", "Lambda", "8:40:8", *FIFO,
         "--seeds", "1..3", "--workers", "0", "--out", str(out))
    (row,) = read_csv(out)
    assert (row["outcome"], row["Lambda"], row["holds"], row["fails"]) == (
        "found", str(answer), str(answer), str(answer + 8))
    # the figure's mean at the value found is the sweep's, the same runs (their keys)
    assert float(row["requests.attainment:mean"]) == att[answer]


def test_find_by_bisection_is_bracketed_by_the_rows_either_side(rate_sweep, tmp_path, serq_here):
    out = tmp_path / "f.csv"
    serq_here("sweep", FLEET, "--find", "requests.attainment >= 0.7", "--over", "Lambda", "8:40", "--tol", "0.5",
         *FIFO, "--seeds", "1..3", "--workers", "0", "--out", str(out))
    (row,) = read_csv(out)
    h, f = float(row["holds"]), float(row["fails"])
    assert row["outcome"] == "found" and float(row["Lambda"]) == h and 0 < f - h <= 0.5
    # between the grid's last value that holds and the next, which fails (the sweep's rows)
    pts = {int(p["Lambda"]): float(p["requests.attainment:mean"]) for p in read_csv(rate_sweep / "t.points.csv")}
    grid = max(lam for lam in RATES if pts[lam] >= 0.7)
    assert grid <= h < f <= grid + 8
    # and a sweep of the two ends of the bracket: the condition holds at one and fails at the other
    t2 = tmp_path / "b.csv"
    serq_here("sweep", FLEET, "--set", f"Lambda={row['holds']},{row['fails']}", *FIFO, "--seeds", "1..3",
         "--workers", "0", "-o", str(t2))
    got = {float(p["Lambda"]): float(p["requests.attainment:mean"]) for p in read_csv(tmp_path / "b.points.csv")}
    assert got[h] >= 0.7 > got[f]
    assert float(row["requests.attainment:mean"]) == got[h]


def paired_and_independent(path: Path, name: str, a: str, b: str) -> tuple[float, float, float, float]:
    """The mean E2E latency's difference b - a of the arms ``name`` = a and b: paired over seeds 1..6 (the same
    requests in both arms), its mean and half-width, against the same count of independent runs (arm b under
    seeds 101..106), their difference and Welch's half-width, whose degrees of freedom lie between 5 and 10:
    taken at 10, the narrowest it can be, so that the comparison does not flatter the pairing."""
    e2e = {(r[name], int(r["seed"])): float(r["requests.e2el.mean"]) for r in read_csv(path)}
    paired = [e2e[b, s] - e2e[a, s] for s in range(1, 7)]
    xa, xb = [e2e[a, s] for s in range(1, 7)], [e2e[b, s] for s in range(101, 107)]
    return (statistics.fmean(paired), T5 * statistics.stdev(paired) / math.sqrt(6),
            statistics.fmean(xb) - statistics.fmean(xa),
            T10 * math.sqrt(statistics.variance(xa) / 6 + statistics.variance(xb) / 6))


def crn_sweep(serq, tmp_path, *sets: str) -> Path:
    """The table of the sweep of ``sets`` over seeds 1..6 and 101..106, run by ``serq``."""
    out = tmp_path / "t.csv"
    serq("sweep", FLEET, *sets, "--set", "N=3", "--set", "Lambda=30", "--set", "E_o=8", "--seeds", "1..6,101..106",
         "--arrivals", "400", "--warmup", "0", "--horizon", "inf", "--workers", "0", "--no-progress", "-o", str(out))
    return out


def test_common_random_numbers_narrow_the_ci_of_a_router_comparison(tmp_path, serq_here):
    # three engines of 8 slots at 30 requests/s (utilisation 0.42): the least-loaded router against the random
    # one. Least loaded shortens the latency, and pairing tells it within a CI about half the independent runs'
    out = crn_sweep(serq_here, tmp_path, "--set", "policy=2,0")
    diff, ci_paired, diff_indep, ci_indep = paired_and_independent(out, "policy", "2", "0")
    assert diff < 0 and abs(diff) > 3 * ci_paired
    assert ci_paired < 0.6 * ci_indep, (ci_paired, ci_indep)
    assert abs(diff_indep - diff) <= ci_indep


def test_common_random_numbers_tell_a_change_that_does_nothing(tmp_path, serq_here):
    # 4 slots an engine against 8 on the same fleet: with an iteration's cost in proportion to its tokens a
    # larger batch buys no speed, and a request seldom finds 4 others on its engine. Pairing says so within a
    # twentieth of the independent runs' CI (the same requests meet nearly the same fleet)
    out = crn_sweep(serq_here, tmp_path, "--set", "max_seqs=4,8")
    diff, ci_paired, diff_indep, ci_indep = paired_and_independent(out, "max_seqs", "4", "8")
    assert abs(diff) <= ci_paired
    assert ci_paired < 0.1 * ci_indep, (ci_paired, ci_indep)
    assert abs(diff_indep - diff) <= ci_indep
