"""A capacity planner's questions of a vLLM fleet (tests/peer_programs17/fleet.sq: N engines behind a least-loaded
router, single-turn Poisson requests), each answer checked against a truth of its own: the common random numbers of
a sweep (every point of one seed sees the same requests, a doubled rate the same ones at half the times), the
table's figures recomputed from its --records with vLLM's definitions (docs/language.md: TTFT, TPOT, ITL, E2E,
goodput and attainment), the points table's CIs recomputed with Student t, the fleet's knee found by `--find`
against the grid and each seed alone, the KV pool's size found on a grid and by bisection, the shipped A100 trace
replayed at two KV sizes against its records and against `serq run --json`, and a sweep interrupted by SIGINT."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent / "peer_programs17"
ROOT = Path(__file__).resolve().parents[3]
SERQ = str(Path(sys.executable).parent / "serq")
FLEET = str(HERE / "fleet.sq")
REPLAY = str(ROOT / "examples" / "replay" / "vllm_replay.sq")
SLO_TTFT, SLO_TPOT = 0.5, 0.05
SLO = f"ttft={SLO_TTFT},tpot={SLO_TPOT}"
pytestmark = pytest.mark.timeout(120)


def serq(*args: str, code: int = 0) -> subprocess.CompletedProcess:
    p = subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=110)
    assert p.returncode == code, p.stderr
    return p


@pytest.fixture
def serq_here(serq_in_process):
    """``serq_here(*args, code=0)``: :func:`serq` in this process (serq.cli.main), for the tests of what a command
    reports and writes (the sweep's tables, the JSON report), not of the process that runs it."""

    def call(*args: str, code: int = 0):
        p = serq_in_process(*args)
        assert p.returncode == code, p.stderr
        return p

    return call


def sweep(serq, tmp_path: Path, name: str, *args: str, records: bool = True
          ) -> tuple[list[dict], list[dict], list[dict]]:
    """The rows of ``serq sweep FLEET ARGS`` run by ``serq`` (its table, points table and records)."""
    out, recs = tmp_path / f"{name}.csv", tmp_path / f"{name}.r.csv"
    serq("sweep", *args, "--workers", "0", "--no-progress", "-o", str(out), *(["--records", str(recs)] * records))
    return read(out), read(tmp_path / f"{name}.points.csv"), read(recs) if records else []


def read(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def by_key(recs: list[dict]) -> dict[str, list[dict]]:
    runs = defaultdict(list)
    for r in recs:
        runs[r["key"]].append(r)
    return runs


def t975(df: int) -> float:
    """Student t's 0.975 quantile in closed form for 2 degrees of freedom (the only one these tests need):
    t = (2p - 1) * sqrt(2 / (4p(1 - p)))."""
    assert df == 2
    p = 0.975
    return (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p)))


def metrics(rs: list[dict]) -> dict[str, list[float]]:
    """vLLM's per-request metrics of records (docs/language.md): TTFT first_token - sent; TPOT (last_token -
    first_token) / (output - 1) of the requests of more than one token; E2E last_token - sent."""
    f = [(float(r["sent"]), float(r["first_token"]), float(r["last_token"]), int(r["output"])) for r in rs]
    return {"ttft": [b - a for a, b, _, _ in f],
            "tpot": [(c - b) / (o - 1) for _, b, c, o in f if o > 1],
            "e2el": [c - a for a, _, c, _ in f],
            "queue": [float(r["admitted"]) - float(r["sent"]) for r in rs],
            "prefill": [float(r["first_token"]) - float(r["admitted"]) for r in rs],
            "decode": [c - b for _, b, c, _ in f],
            "infer": [float(r["last_token"]) - float(r["admitted"]) for r in rs]}


def good(rs: list[dict]) -> int:
    """The requests meeting both SLOs (vLLM's `slo >= value`; a request of one token has TPOT 0 there)."""
    n = 0
    for r in rs:
        sent, first, last, o = float(r["sent"]), float(r["first_token"]), float(r["last_token"]), int(r["output"])
        tpot = (last - first) / (o - 1) if o > 1 else 0.0
        n += first - sent <= SLO_TTFT and tpot <= SLO_TPOT
    return n


def flat(report: dict) -> dict[str, object]:
    """The JSON report's figures named as docs/sweep.md names them: a path with dots, an entry of stages or pools
    by its name and a member of a family as name[index]; what says what was run is none."""
    out: dict[str, object] = {}

    def walk(x: object, path: str) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}.{k}")
        elif isinstance(x, list):
            for e in x:
                name = e["name"] if e.get("index") is None else f"{e['name']}[{e['index']}]"
                walk({k: v for k, v in e.items() if k not in ("name", "index")}, f"{path}.{name}")
        else:
            out[path[1:]] = x

    for k, v in report.items():
        if k not in ("report_version", "serq_version", "program", "seed", "notes", "codes"):
            walk(v, f".{k}")
    return out


def same_figures(row: dict, report: dict) -> None:
    """Every figure of a table's row is the JSON report's (an empty cell its null)."""
    figures = flat(report)
    cols = [c for c in row if c not in ("point", "seed", "status", "message", "key")]
    cols = [c for c in cols if "." in c or c in figures]  # (the swept names are no figure)
    assert len(cols) > 150
    for c in cols:
        v = figures[c]
        if v is None:
            assert row[c] == "", c
        elif isinstance(v, (bool, str)):  # (interrupted, a record table's name)
            assert row[c] == str(v), c
        else:
            assert float(row[c]) == v, (c, row[c], v)


# --- common random numbers ---------------------------------------------------------------------------------------


def test_every_point_of_a_seed_sees_the_same_requests(tmp_path, serq_here):
    # drained runs (400 arrivals, no horizon): every request sent after the warm-up completes, at every point
    rows, _, recs = sweep(serq_here, tmp_path, "crn", FLEET, "--set", "Lambda=6,12", "--set", "N=1,2", "--set", "blocks=300,2000",
                          "--seeds", "1..2", "--arrivals", "400", "--horizon", "inf", "--warmup", "10")
    runs = by_key(recs)
    seen: dict[tuple[str, str], set] = {}
    for row in rows:
        assert row["status"] == "ok"
        rs = runs[row["key"]]
        assert int(row["requests.completed"]) == len(rs) > 200
        # the requests of a seed at a rate: their sessions, send times and lengths, whatever the fleet
        sessions = {(r["session"], r["sent"], r["prompt"], r["output"]) for r in rs}
        assert seen.setdefault((row["Lambda"], row["seed"]), sessions) == sessions
        # a run that drains has exactly each request's output - 1 gaps, adding up to last_token - first_token
        gaps = sum(int(r["output"]) - 1 for r in rs)
        assert int(row["requests.itl.count"]) == gaps
        span = math.fsum(float(r["last_token"]) - float(r["first_token"]) for r in rs)
        assert float(row["requests.itl.mean"]) == pytest.approx(span / gaps, rel=1e-12)
    # the 8 fleets saw 2 seeds' requests, and the two seeds' differ
    assert len(seen) == 4 and seen["6", "1"] != seen["6", "2"]
    # a doubled rate draws the same uniforms: session k is sent at half the time, with the same lengths. The
    # warm-up (10 s) keeps at rate 12 the sessions sent from 10 s on, which rate 6 sends from 20 s on: all kept
    for seed in ("1", "2"):
        slow = {int(s): (float(t), p, o) for s, t, p, o in seen["6", seed]}
        fast = {(int(s), float(t), p, o) for s, t, p, o in seen["12", seed]}
        assert {s for s, *_ in fast} <= set(slow) and len(fast) > 100
        for s, t, p, o in fast:
            assert t == pytest.approx(slow[s][0] / 2, rel=1e-12) and (p, o) == slow[s][1:]


# --- the table against its records and its own statistics ---------------------------------------------------------


def test_the_tables_slo_figures_are_the_records_recomputed(tmp_path, serq_here):
    rows, points, recs = sweep(serq_here, tmp_path, "slo", FLEET, "--set", "Lambda=6,12", "--set", "N=1,2", "--set",
                               "blocks=300,2000", "--seeds", "1..3", "--horizon", "60", "--warmup", "10",
                               "--slo", SLO)
    runs = by_key(recs)
    attained = set()
    for row in rows:
        rs = runs[row["key"]]
        assert int(row["requests.completed"]) == len(rs) > 0
        n = good(rs)
        duration = float(row["end"]) - float(row["warmup"])
        assert int(row["requests.good"]) == n
        assert float(row["requests.attainment"]) == n / len(rs)
        assert float(row["requests.goodput"]) == n / duration
        assert (float(row["requests.slo.ttft"]), float(row["requests.slo.tpot"])) == (SLO_TTFT, SLO_TPOT)
        attained.add(n == len(rs) or n == 0)
        m = metrics(rs)
        for name, values in m.items():
            # np.percentile and np.median bit for bit; the mean and vLLM's population std to rounding
            assert int(row[f"requests.{name}.count"]) == len(values)
            for q in (90, 95, 99):
                assert float(row[f"requests.{name}.p{q}"]) == float(np.percentile(values, q)), (name, q)
            assert float(row[f"requests.{name}.median"]) == float(np.median(values)), name
            assert float(row[f"requests.{name}.mean"]) == pytest.approx(statistics.fmean(values), rel=1e-12)
            assert float(row[f"requests.{name}.std"]) == pytest.approx(statistics.pstdev(values), rel=1e-9)
            # the run's own CI: 95 % batch means, 20 batches of n // 20 values in the records' order, t = 2.093
            # (docs/simulator.md, Statistics), NaN below 40 values
            if len(values) < 40:
                assert row[f"requests.{name}.ci"] == ""
                continue
            b = len(values) // 20
            batches = [statistics.fmean(values[i * b:(i + 1) * b]) for i in range(20)]
            ci = 2.093 * statistics.stdev(batches) / math.sqrt(20)
            assert float(row[f"requests.{name}.ci"]) == pytest.approx(ci, rel=1e-9, abs=1e-15), name
    assert attained == {True, False}  # (some fleets meet the SLO in part: the columns are not all 0 or all 1)
    # the points table: the mean and the 95 % half-width across the 3 seeds, Student t at 2 degrees of freedom
    # (the closed form, 4.30265)
    t = t975(2)
    for p in points:
        assert int(p["runs"]) == 3
        for fig in ("requests.ttft.p99", "requests.attainment", "requests.goodput"):
            vals = [float(r[fig]) for r in rows if r["point"] == p["point"]]
            assert float(p[f"{fig}:mean"]) == pytest.approx(statistics.fmean(vals), rel=1e-12, abs=1e-15)
            assert float(p[f"{fig}:ci"]) == pytest.approx(t * statistics.stdev(vals) / math.sqrt(3),
                                                          rel=1e-9, abs=1e-15)
    # the CDF of a sweep's records by --hue N pools the other swept names' points too (docs/sweep.md): each line
    # is every request of its engine count, whatever the load and the KV size
    from serq_sweep.plots import records_cdf_data

    lines = records_cdf_data(str(tmp_path / "slo.r.csv"), ["ttft"], hue="N")
    assert set(lines) == {("ttft", 1), ("ttft", 2)}
    for n in (1, 2):
        mine = [r for r in recs if r["N"] == str(n)]
        assert {(r["Lambda"], r["blocks"]) for r in mine} == {("6", "300"), ("6", "2000"), ("12", "300"), ("12", "2000")}
        assert lines["ttft", n] == sorted(float(r["first_token"]) - float(r["sent"]) for r in mine)
    # a run's row is its JSON report: serq run of one point and seed gives the same figures
    row = next(r for r in rows if (r["Lambda"], r["N"], r["blocks"], r["seed"]) == ("6", "2", "300", "2"))
    one = serq_here("run", FLEET, "--set", "Lambda=6", "--set", "N=2", "--set", "blocks=300", "--seed", "2",
               "--horizon", "60", "--warmup", "10", "--slo", SLO, "--json")
    same_figures(row, json.loads(one.stdout))


# --- the knee: the fewest engines that meet the SLO ---------------------------------------------------------------


def test_the_fewest_engines_found_is_the_grids_and_every_seeds(tmp_path, serq_here):
    conds = ("requests.ttft.p99", SLO_TTFT), ("requests.tpot.p99", SLO_TPOT)
    common = ("--set", "Lambda=16,24", "--seeds", "1..3", "--horizon", "60", "--warmup", "10")
    rows, points, _ = sweep(serq_here, tmp_path, "grid", FLEET, "--set", "N=1:4:1", *common, "--slo", SLO, records=False)

    def meets(row: dict, suffix: str = "") -> bool:
        return all(float(row[f + suffix]) <= bound for f, bound in conds)

    knee = {}
    for lam in ("16", "24"):
        at = sorted((p for p in points if p["Lambda"] == lam), key=lambda p: int(p["N"]))
        # plausibly monotone: more engines never make the TTFT p99 worse (beyond a seed's noise: 2 %) nor the
        # attainment. (Not so TPOT's p99: a fleet far beyond its load completes few requests, and at 24/s one
        # engine's is below two's, 0.052 s against 0.058 s, both failing.)
        ttft = [float(p["requests.ttft.p99:mean"]) for p in at]
        assert all(b <= a * 1.02 for a, b in zip(ttft, ttft[1:])), (lam, ttft)
        att = [float(p["requests.attainment:mean"]) for p in at]
        assert all(b >= a - 0.002 for a, b in zip(att, att[1:])), (lam, att)
        ok = [int(p["N"]) for p in at if meets(p, ":mean")]
        knee[lam] = min(ok)
        assert ok == list(range(knee[lam], 5))  # holding from the knee on, as --find assumes
        # each seed alone puts the knee at the same count, and holds from it on
        for seed in ("1", "2", "3"):
            mine = sorted(int(r["N"]) for r in rows if (r["Lambda"], r["seed"]) == (lam, seed) and meets(r))
            assert mine == ok, (lam, seed)
    assert 1 < knee["16"] <= knee["24"] < 4  # (a knee inside the range; more load, no fewer engines)
    # a fleet past its load completes fewer requests a second than arrive: at 16/s one engine 9.8, two 15.2
    # (docs/sweep.md: a bound that follows the load is one search per load)
    rate = {p["N"]: float(p["requests.request_throughput:mean"]) for p in points if p["Lambda"] == "16"}
    assert rate["1"] < 10 < 15 < rate["2"] < 16 and all(15 < rate[n] < 16 for n in ("3", "4"))
    found = tmp_path / "found.csv"
    serq_here("sweep", FLEET, *common, *(a for f, b in conds for a in ("--find", f"{f} <= {b}")), "--over", "N", "1:4:1",
         "--workers", "0", "--no-progress", "-o", str(found))
    for r in read(found):
        k = knee[r["Lambda"]]
        assert (r["N"], r["outcome"], r["holds"], r["fails"]) == (str(k), "found_smallest", str(k), str(k - 1))
        p = next(p for p in points if (p["Lambda"], p["N"]) == (r["Lambda"], str(k)))
        for f, _ in conds:  # the same runs: the same means
            assert r[f"{f}:mean"] == p[f"{f}:mean"]
    # a range whose LO already holds has no direction: its value is HI, the largest count that holds, not the
    # fewest needed (docs/sweep.md says so)
    low = tmp_path / "low.csv"
    serq_here("sweep", FLEET, *common[:1], "Lambda=16", *common[2:], "--find", f"requests.ttft.p99 <= {SLO_TTFT}",
         "--find", f"requests.tpot.p99 <= {SLO_TPOT}", "--over", "N", f"{knee['16']}:4:1", "--workers", "0",
         "--no-progress", "-o", str(low))
    (r,) = read(low)
    assert (r["N"], r["outcome"], r["fails"], r["evaluations"]) == ("4", "holds_everywhere", "", "2")


def test_the_kv_blocks_a_fleet_needs_on_a_grid_and_by_bisection(tmp_path, serq_here):
    args = (FLEET, "--set", "Lambda=8", "--set", "N=2", "--seeds", "1..3", "--horizon", "60", "--warmup", "10",
            "--find", f"requests.ttft.p99 <= {SLO_TTFT}", "--find", f"requests.tpot.p99 <= {SLO_TPOT}",
            "--workers", "0", "--no-progress")
    bisect = serq_here("sweep", *args, "--over", "blocks", "100:2000", "-o", str(tmp_path / "b.csv"))
    (b,) = read(tmp_path / "b.csv")
    assert b["outcome"] == "found_smallest"
    holds, fails = float(b["holds"]), float(b["fails"])
    assert not holds.is_integer() and not fails.is_integer()  # the bisection's answer is a fraction of a block ...
    assert bisect.stderr.startswith("warning: --over blocks: at blocks=812.5 the cap of pool kv[…] is 13000, "
                                    "812.5 blocks of 16, and it allocates whole blocks, so it admits what a cap of "
                                    "812 blocks (12992) does")  # ... and said so
    # the planner searches the whole blocks of the bracket on a grid: the fraction that fails admits what its
    # whole blocks do (they fail), and the whole blocks below the one that holds admit what it does (they hold)
    lo, hi = math.floor(fails), math.floor(holds)
    grid = serq_here("sweep", *args, "--over", "blocks", f"{lo}:{hi}:1", "-o", str(tmp_path / "g.csv"))
    (g,) = read(tmp_path / "g.csv")
    assert "warning" not in grid.stderr
    assert g["outcome"] == "found_smallest"  # (failing at LO and holding at HI, as the bracket says)
    assert (int(g["holds"]), int(g["fails"])) == (int(g["blocks"]), int(g["blocks"]) - 1)
    assert lo < int(g["blocks"]) <= hi
    # docs/sweep.md gives these numbers
    assert (b["blocks"], b["fails"], g["blocks"]) == ("782.8125", "753.125", "773")


# --- the shipped trace replayed at two KV sizes -------------------------------------------------------------------


def test_the_a100_trace_replayed_at_two_kv_sizes_is_its_records(tmp_path, serq_here):
    rows, _, recs = sweep(serq_here, tmp_path, "replay", REPLAY, "--set", "blocks=2000,8010", "--seeds", "1,2",
                          "--arrivals", "60")
    runs = by_key(recs)
    trace = read(ROOT / "examples" / "replay" / "short_base.csv")
    requests = sum(int(r["session"]) < 60 for r in trace)  # the first 60 sessions' turns
    assert requests == 598
    for row in rows:
        rs = runs[row["key"]]
        # every turn of the 60 sessions, drained (no warm-up): each row is a request of the trace, in full
        assert int(row["requests.completed"]) == len(rs) == requests
        assert {(int(r["session"]), int(r["turn"]), int(r["prompt"]), int(r["output"])) for r in rs} == {
            (int(t["session"]), int(t["turn"]), int(t["new"]), int(t["out"])) for t in trace if int(t["session"]) < 60}
        for name, values in metrics(rs).items():
            for q in (90, 99):
                assert float(row[f"requests.{name}.p{q}"]) == float(np.percentile(values, q)), (name, q)
            assert float(row[f"requests.{name}.median"]) == float(np.median(values))
            assert float(row[f"requests.{name}.mean"]) == pytest.approx(statistics.fmean(values), rel=1e-12)
        assert int(row["requests.itl.count"]) == sum(int(r["output"]) - 1 for r in rs)
        hit = sum(int(r["cached"]) for r in rs) / sum(int(r["prompt"]) for r in rs)
        assert float(row["requests.prefix_cache_hit_rate"]) == pytest.approx(hit, rel=1e-12)
    # the program draws nothing (constant spacing, the trace's sessions in order): both seeds give one run
    figures = [c for c in rows[0] if c not in ("seed", "key")]
    for blocks in ("2000", "8010"):
        a, b = (r for r in rows if r["blocks"] == blocks)
        assert a["key"] != b["key"] and all(a[c] == b[c] for c in figures)
    # the two sizes differ (the smaller pool evicts prefixes the larger keeps)
    small, large = rows[0], rows[2]
    assert float(small["requests.prefix_cache_hit_rate"]) < float(large["requests.prefix_cache_hit_rate"])
    one = serq_here("run", REPLAY, "--set", "blocks=2000", "--arrivals", "60", "--json")
    same_figures(small, json.loads(one.stdout))


def test_a_kv_pool_too_small_rejects_requests_and_a_latency_bound_holds_there_unless_rejections_are_a_condition(
        tmp_path, serq_here):
    # the replay's pool of 150 blocks (2 400 tokens) rejects every prompt longer than that: the report's warning
    # says so, and its TTFT covers the short prompts it admitted
    args = (REPLAY, "--arrivals", "60", "--seeds", "1", "--workers", "0", "--no-progress")
    small = json.loads(serq_here("run", REPLAY, "--arrivals", "60", "--set", "blocks=150", "--json").stdout)
    (kv,) = (p for p in small["pools"] if p["name"] == "kv")
    trace = [t for t in read(ROOT / "examples" / "replay" / "short_base.csv") if int(t["session"]) < 60]
    assert kv["rejections"] > 0 and small["requests"]["completed"] < len(trace) == 598
    assert any(n.startswith("warning: pool kv rejected") for n in small["notes"])
    assert small["requests"]["ttft"]["mean"] <= 1
    serq_here("sweep", *args, "--find", "requests.ttft.mean <= 1", "--over", "blocks", "150:8010:1",
         "-o", str(tmp_path / "a.csv"))
    (a,) = read(tmp_path / "a.csv")
    assert (a["outcome"], a["evaluations"]) == ("holds_everywhere", "2")
    serq_here("sweep", *args, "--find", "requests.ttft.mean <= 1", "--find", "pools.kv.rejections == 0", "--over", "blocks",
         "150:8010:1", "-o", str(tmp_path / "b.csv"))
    (b,) = read(tmp_path / "b.csv")
    assert b["outcome"] == "found_smallest" and int(b["fails"]) == int(b["holds"]) - 1
    assert float(b["requests.ttft.mean:mean"]) <= 1 and float(b["pools.kv.rejections:mean"]) == 0
    # the two neighbours the search ended on, run alone: the one below fails the bound, the one found meets it
    for blocks, meets in ((b["fails"], False), (b["holds"], True)):
        one = json.loads(serq_here("run", REPLAY, "--arrivals", "60", "--set", f"blocks={blocks}", "--json").stdout)
        assert (one["requests"]["ttft"]["mean"] <= 1) is meets and one["requests"]["completed"] == 598
    assert b["blocks"] == "6004"  # (docs/sweep.md gives it)


# --- an interrupted sweep -----------------------------------------------------------------------------------------


def test_a_sweep_interrupted_by_sigint_leaves_whole_tables_and_resumes_to_the_same_bytes(tmp_path):
    args = ["sweep", FLEET, "--set", "Lambda=12", "--set", "N=1,2", "--set", "blocks=300,2000", "--seeds", "1..2",
            "--horizon", "40", "--warmup", "10", "--slo", SLO, "--workers", "0", "--no-progress"]
    out, recs = tmp_path / "i.csv", tmp_path / "i.r.csv"
    journal = Path(f"{out}.journal")
    # the sweep stops itself right after journaling its third run (SERQ_SWEEP_STOP_AFTER, docs/sweep.md): SIGINT
    # there, as a user's Ctrl-C midway
    proc = subprocess.Popen([SERQ, *args, "-o", str(out), "--records", str(recs)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "SERQ_SWEEP_STOP_AFTER": "3"})
    stat = Path(f"/proc/{proc.pid}/stat")
    deadline = time.monotonic() + 60
    while proc.poll() is None and stat.read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert len(journal.read_text().splitlines()) == 3
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    part = {p: p.read_text() for p in (out, recs, tmp_path / "i.points.csv")}
    # the same sweep uninterrupted, into other files
    fresh = tmp_path / "f.csv"
    serq(*args, "-o", str(fresh), "--records", str(tmp_path / "f.r.csv"))
    # what the interrupted sweep wrote is whole rows: the first 3 runs' rows and records of the full tables, cell
    # for cell (its table lacks the columns of the runs it did not run: engine[1]'s and its pools')
    for path, full in ((out, fresh), (recs, tmp_path / "f.r.csv")):
        assert part[path].endswith("\n")
        mine, theirs = list(csv.DictReader(io.StringIO(part[path]))), read(full)
        assert mine and [dict(r) for r in mine] == [{c: r[c] for c in mine[0]} for r in theirs[:len(mine)]]
    assert len(read(out)) == 3 and {r["key"] for r in read(recs)} <= {r["key"] for r in read(out)}
    points = list(csv.DictReader(io.StringIO(part[tmp_path / "i.points.csv"])))
    assert [p["runs"] for p in points] == ["2", "1", "0", "0"]
    # the rerun resumes: it runs the 5 runs left and writes the uninterrupted sweep's bytes
    again = serq(*args, "-o", str(out), "--records", str(recs))
    assert "(5 run now, 3 resumed)" in again.stderr
    assert out.read_text() == fresh.read_text() and recs.read_text() == (tmp_path / "f.r.csv").read_text()
    assert (tmp_path / "i.points.csv").read_text() == (tmp_path / "f.points.csv").read_text()
    assert not journal.exists() and not Path(f"{recs}.journal").exists()


# --- a fleet past its load: the runs a search judges -----------------------------------------------------------


def test_a_search_says_the_means_it_took_over_fewer_seeds_and_its_runs_are_not_steady(tmp_path, serq_here):
    # one engine of 300 blocks at 12/s for 40 s: a seed may complete no request after the warm-up (no TTFT), and
    # --find judged the others' mean without a word (docs/sweep.md gives this search)
    point = ("--set", "Lambda=12", "--set", "blocks=300", "--warmup", "10")
    ttft = {}
    for seed in ("1", "2", "3"):
        one = json.loads(serq_here("run", FLEET, *point, "--set", "N=1", "--seed", seed, "--horizon", "40",
                                   "--json").stdout)
        ttft[seed] = one["requests"]["ttft"]["p99"]
        # the report's own test: the backlog climbs, so the figures depend on the horizon
        assert any(n.startswith("warning: the run is not steady") for n in one["notes"])
    finite = [v for v in ttft.values() if v is not None]
    assert 0 < len(finite) < 3
    found = serq_here("sweep", FLEET, *point, "--seeds", "1..3", "--horizon", "40", "--find", "requests.ttft.p99 <= 40",
                      "--over", "N", "1:2:1", "--workers", "0", "--no-progress", "-o", str(tmp_path / "f.csv"))
    (row,) = read(tmp_path / "f.csv")
    assert row["outcome"] == "holds_everywhere"  # (the mean at N=1 is the finite seeds', below 40)
    assert statistics.fmean(finite) <= 40
    warning, note = found.stderr.splitlines()
    assert warning.endswith(f"requests.ttft.p99 at Lambda=12, blocks=300, N=1 over {len(finite)} of 3 runs")
    # (and, last, that the value reported is the top of the range: docs/sweep.md)
    assert note.startswith("note: holds_everywhere at Lambda=12, blocks=300: the conditions hold at both ends, N=1 "
                           "and N=2: the value reported is the top, N=2")
    assert found.stderr.startswith("warning: --find: a condition's figure had no value in some runs")
    # the same point over three times the time: the backlog's TTFT has grown past the bound
    longer, _, _ = sweep(serq_here, tmp_path, "long", FLEET, *point, "--set", "N=1", "--seeds", "1..3", "--horizon", "120",
                         records=False)
    assert min(float(r["requests.ttft.p99"]) for r in longer) > 40
