"""Programs of a third round of users (peer_programs3/*.sq), of kinds the first two rounds and the
theory tests lack: a retry loop (a Jackson network with Bernoulli feedback), a round-robin router (each
replica an E_n/M/1 queue), the closed central-server model against exact multi-station mean value
analysis, a step engine that is an M/D/1 queue (Pollaczek-Khinchine), a multiclass processor-sharing
link whose second class crosses a wide link as one flow, and an LRU prefix cache traced by hand; then the
capacity planner's tools on them: a sweep with common random numbers, the capacity search, and the
report's formats and determinism. Each program runs on the tier serQ picks and on the general engine,
which must agree byte for byte. Statistical checks fix their seeds and assert a 95 % CI that covers the
theory and is narrow."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conform import both_tiers, covers, gim1_sigma

HERE = Path(__file__).resolve().parent / "peer_programs3"
SERQ = [sys.executable, "-m", "serq"]


def both(name: str, monkeypatch, *, sets=None, **kw):
    """``peer_programs3/NAME`` on both tiers (conform.both_tiers). Returns the report."""
    return both_tiers(HERE / name, monkeypatch, sets=sets, **kw)


def serq(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SERQ_SIM_TIER"}
    return subprocess.run([*SERQ, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


# --- closed forms ------------------------------------------------------------------------------------------------

def mva(demands: list[float], z: float, n: int) -> tuple[float, float, list[float]]:
    """Exact MVA of a closed product-form network of single-server FIFO stations (exponential service)
    with a think time z: (R, X, the mean number at each station) at population n."""
    q = [0.0] * len(demands)
    for k in range(1, n + 1):
        r = [d * (1 + qi) for d, qi in zip(demands, q)]
        x = k / (z + sum(r))
        q = [x * ri for ri in r]
    return sum(r), x, q


def en_m1_sigma(n: int, lam: float, mu: float) -> float:
    """E_n/M/1 with Erlang-n gaps of phase rate lam (every n-th arrival of a Poisson stream of rate lam):
    sigma = (lam / (lam + mu (1 - sigma)))^n."""
    return gim1_sigma(lambda s: (lam / (lam + s)) ** n, mu)


@pytest.mark.timeout(60)
def test_a_retry_loop_is_a_jackson_network_with_feedback(monkeypatch):
    # feedback.sq: lambda 0.3, mu 1, p 0.4. The server sees 0.3 / 0.6 = 0.5 (utilisation 0.5), a visit
    # takes 1 / (1 - 0.5) = 2, a request makes 1 / 0.6 visits, its response 1 / (0.6 - 0.3) = 10 / 3.
    # Little: the mean present at the server is 0.5 x 2 = 1 = the live sessions.
    r = both("feedback.sq", monkeypatch)
    covers(r.stats("response"), 10 / 3, 0.04)
    covers(r.stats("visit"), 2.0, 0.04)
    covers(r.stats("visits_made"), 1 / 0.6, 0.01)
    gpu = r.stage("gpu")
    assert abs(gpu.utilisation - 0.5) < 0.01 and abs(gpu.throughput - 0.5) < 0.01
    assert math.isclose(gpu.present, r.result.mean_live, rel_tol=1e-9)
    assert abs(gpu.present - 1.0) < 0.05


@pytest.mark.timeout(60)
def test_round_robin_makes_each_replica_an_erlang_gap_queue(monkeypatch):
    # round_robin.sq: lambda 1.6 over 2 exp(1) replicas. Round robin gives each Erlang-2 gaps (phase rate
    # 1.6): sigma = 0.739887..., response 1 / (1 - sigma) = 3.8445; a uniform random split is two M/M/1 at
    # 0.8: response 5. Same load on every replica either way (utilisation 0.8).
    sigma = en_m1_sigma(2, 1.6, 1.0)
    assert math.isclose(sigma * (2.6 - sigma) ** 2, 2.56, rel_tol=1e-9)
    rr = both("round_robin.sq", monkeypatch)
    covers(rr.stats("response"), 1 / (1 - sigma), 0.04)
    rnd = both("round_robin.sq", monkeypatch, sets={"policy": 1})
    covers(rnd.stats("response"), 5.0, 0.05)
    for rep in (rr, rnd):
        for j in range(2):
            assert abs(rep.stage("r", j).utilisation - 0.8) < 0.01
    # round robin alternates: the two replicas' completions differ by at most their backlogs at the end
    assert abs(rr.stage("r", 0).completions - rr.stage("r", 1).completions) < 0.001 * rr.stage("r", 0).completions


@pytest.mark.timeout(60)
def test_the_central_server_model_is_exact_mva(monkeypatch):
    # central_server.sq: 6 users, Z 5; CPU visits 1 / (1 - 0.5) = 2 of 0.2, disk 1 0.3 x 2 of 0.5, disk 2
    # 0.2 x 2 of 0.8: demands 0.4, 0.3, 0.32. MVA gives R, X and the mean number at each station; the
    # stations' utilisations are X D_k (the utilisation law) and the interactive law N = X (R + Z) holds.
    demands = [0.4, 0.3, 0.32]
    big_r, x, q = mva(demands, 5.0, 6)
    r = both("central_server.sq", monkeypatch)
    covers(r.stats("response"), big_r, 0.02)
    assert abs(r.stage("users").throughput - x) < 0.01 * x
    for name, d, qk in zip(("cpu", "disk1", "disk2"), demands, q):
        st = r.stage(name)
        assert abs(st.utilisation - x * d) < 0.01, name
        assert abs(st.present - qk) < 0.03 * qk + 0.01, name
    assert abs(r.stage("cpu").throughput - 2 * x) < 0.02 * x
    assert math.isclose(r.result.mean_live, 6, rel_tol=1e-12)


@pytest.mark.timeout(60)
def test_a_step_engine_of_one_request_an_iteration_is_md1(monkeypatch):
    # step_md1.sq: lambda 1.2, every request one budget of prefill, cost 0.5: rho 0.6,
    # T = 0.5 + 1.2 x 0.25 / (2 x 0.4) = 0.875; one iteration a request, busy 0.6 of the time, and the
    # slot pool's queue is the M/D/1's waiting line: Lq = lambda Wq = 0.45.
    # 60 000 s of the program's 100 000 (about 72 000 requests): the response's CI half-width is 0.0125 (1.4 %,
    # 0.0087 over 100 000 s) of the 0.0175 allowed, around 0.8727, so a mean response 1.7 % above the truth or
    # 1.2 % below it fails, as 1.1 % and 0.8 % did; a 5 % error fails by far
    r = both("step_md1.sq", monkeypatch, horizon=60000)
    covers(r.stats("response"), 0.875, 0.02)
    e = r.stage("E")
    assert e.iterations == e.completions and abs(e.utilisation - 0.6) < 0.01
    assert math.isclose(e.service, 0.5, rel_tol=1e-12)
    reqs = r.pool("reqs")
    assert abs(reqs.queue - 0.45) < 0.03 and abs(reqs.wait - 0.375) < 0.02


def test_a_multiclass_ps_link_with_a_second_hop_is_insensitive(monkeypatch, tmp_path):
    # flows_ps.sq: lambda 0.5, 60 % h2(1, 4) on L alone, 40 % exp(1.5) over L and W as one flow: rho =
    # 0.5 x (0.6 + 0.6) = 0.6 on L; W (capacity 10) never binds, so both classes see PS on L:
    # E[T0] = 1 / 0.4 = 2.5, E[T1] = 1.5 / 0.4 = 3.75. W carries 0.2 x 1.5 / 10 = 0.03 of its capacity.
    # Under share bottleneck W does not bind either: the same answer.
    for share in ("maxmin", "bottleneck"):
        if share == "maxmin":
            r = both("flows_ps.sq", monkeypatch)
        else:
            src = (HERE / "flows_ps.sq").read_text().replace("share maxmin;", "share bottleneck;")
            (tmp_path / "flows_ps_bottleneck.sq").write_text(src)
            r = both_tiers(tmp_path / "flows_ps_bottleneck.sq", monkeypatch)
        covers(r.stats("r0"), 2.5, 0.05)
        covers(r.stats("r1"), 3.75, 0.05)
        assert abs(r.stage("L").utilisation - 0.6) < 0.01
        assert abs(r.stage("W").utilisation - 0.03) < 0.001


# --- by hand -----------------------------------------------------------------------------------------------------

@pytest.mark.timeout(30)
def test_an_lru_prefix_cache_by_hand(monkeypatch):
    # lru_chat.sq (the trace is in the program's header): hits 32, 16, 0 at 11.5, 12.5, 13.5; the cache
    # gave up 1 + 2 + 3 blocks (96 units), two entries whole (session 2's first turn, session 0's second).
    r = both("lru_chat.sq", monkeypatch)
    o = r.observe("hit")
    assert o.values.tolist() == [32.0, 16.0, 0.0] and o.times.tolist() == [11.5, 12.5, 13.5]
    kv = r.pool("kv")
    assert (kv.evicted_units, kv.evicted_entries, kv.admissions) == (96.0, 2, 6)
    assert r.result.end == 14.0


# --- the capacity planner's tools: sweep, find, the report's formats, determinism ----------------------------

MD1 = str(HERE / "step_md1.sq")
FIXED = ["--arrivals", "10000", "--warmup", "0", "--horizon", "1e6", "--no-progress"]


def md1_response(lam: float, d: float = 0.5) -> float:
    return d + lam * d * d / (2 * (1 - lam * d))


def test_a_sweep_over_the_rate_is_monotone_per_seed_and_crn_pairs_the_points(tmp_path):
    # step_md1.sq over lambda 0.6 .. 1.6 under seeds 1..6, each run exactly 20 000 requests, no warm-up.
    # Under one seed the arrivals are the same draws scaled by 1 / lambda and the services are fixed, so
    # every request waits at least as long at a higher rate (Lindley's recursion): the mean response is
    # increasing in lambda on every seed, not just on average. Each point's mean is PK's within its CI
    # (6 seeds, Student t); the paired differences of adjacent rates vary far less across seeds than the
    # points themselves.
    import pandas as pd

    out = tmp_path / "t.csv"
    p = serq("sweep", MD1, "--set", "lam=0.6:1.6:0.2", "--seeds", "1..6", *FIXED[2:], "--arrivals", "20000",
             "--workers", "2", "--out", str(out), "--show", "observes.response.mean")
    assert p.returncode == 0, p.stderr
    t = pd.read_csv(out)
    assert (t.status == "ok").all() and len(t) == 36
    wide = t.pivot_table(index="seed", columns="lam", values="observes.response.mean")
    assert (wide.diff(axis=1).iloc[:, 1:] > 0).all().all()
    pts = pd.read_csv(tmp_path / "t.points.csv")
    for lam, m, ci in zip(pts.lam, pts["observes.response.mean:mean"], pts["observes.response.mean:ci"]):
        assert abs(m - md1_response(lam)) <= max(ci, 0.002), (lam, m, ci)
        assert ci < 0.05 * m
    hi, lo = wide[1.4], wide[1.2]
    assert (hi - lo).std() < 0.6 * math.sqrt(hi.var() + lo.var())
    # the utilisation is lambda D on the 10 000 requests, the same on every seed within a percent
    util = t.pivot_table(index="seed", columns="lam", values="stages.E.utilisation")
    for lam in util.columns:
        assert (abs(util[lam] - 0.5 * lam) < 0.012).all()


@pytest.mark.timeout(120)
def test_the_capacity_search_finds_the_rate_of_a_response_slo(tmp_path):
    # The largest lambda at which the mean response is at most 1 s: 0.5 + 0.125 lambda / (1 - 0.5 lambda) = 1
    # at lambda = 4/3. The bisection's bracket (tol 0.02) must hold it, within the seeds' noise (the CI of
    # the mean at 4/3 is about 0.015 s, the slope 1.125 s a request/s: 0.015 of lambda).
    p = serq("sweep", MD1, "--find", "observes.response.mean <= 1", "--over", "lam", "0.5:1.9",
             "--seeds", "1..4", *FIXED, "--tol", "0.02", "--workers", "2")
    assert p.returncode == 0, p.stderr
    head, row = p.stdout.strip().splitlines()[-2:]
    cells = dict(zip(head.split(), row.split()))
    assert cells["outcome"] == "found"
    holds, fails = float(cells["holds"]), float(cells["fails"])
    assert 0 < fails - holds <= 0.02 + 1e-9
    assert holds - 0.03 <= 4 / 3 <= fails + 0.03


def text_table(text: str, title: str) -> dict[str, dict[str, str]]:
    """The rows of the text report's table whose header starts with ``title``: {row name: {column: cell}}."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.split()[:1] == [title])
    cols = lines[i].split()[1:]
    rows = {}
    for line in lines[i + 1:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = dict(zip(cols, (c.lstrip("±") for c in cells[1:])))
    return rows


@pytest.mark.timeout(120)
def test_text_json_records_and_dumps_tell_one_story_and_a_rerun_is_the_same_bytes(tmp_path):
    # One run of step_md1.sq (5 000 requests, no warm-up) written as text, as JSON (twice: byte-identical),
    # with its records and its dumps. Every request is one output token sampled when its iteration ends, so
    # TTFT = E2E = the observe response, request by request; the observe's quantiles are the nearest rank,
    # the request metrics' numpy's linear interpolation (docs/simulator.md, docs/language.md); goodput
    # counts the TTFTs at most 1 s over end - warmup; and the text report prints what the JSON holds.
    import numpy as np
    import pandas as pd

    run = ["run", MD1, "--arrivals", "5000", "--warmup", "0", "--horizon", "1e6", "--no-progress",
           "--slo", "ttft=1"]
    a = serq(*run, "--json", "-o", str(tmp_path / "a.json"))
    b = serq(*run, "--json", "-o", str(tmp_path / "b.json"), "--records", str(tmp_path / "r.csv"),
             "--dump", str(tmp_path / "d"))
    t = serq(*run)
    assert a.returncode == b.returncode == t.returncode == 0, (a.stderr, b.stderr, t.stderr)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    j = json.loads((tmp_path / "a.json").read_text())
    rec = pd.read_csv(tmp_path / "r.csv")
    dump = pd.read_csv(tmp_path / "d" / "response.csv")
    assert len(rec) == len(dump) == j["records"]["request"] == j["requests"]["completed"] == 5000
    ttft = (rec.first_token - rec.sent).to_numpy()
    # the dump's samples are the records' TTFTs, session for session
    by_session = dict(zip(dump.session, dump.value))
    assert np.allclose([by_session[s] for s in rec.session], ttft, rtol=0, atol=1e-9)
    m = j["requests"]
    assert math.isclose(m["ttft"]["mean"], ttft.mean(), rel_tol=1e-12)
    assert math.isclose(m["e2el"]["mean"], (rec.last_token - rec.sent).mean(), rel_tol=1e-12)
    for q, key in ((50, "median"), (90, "p90"), (99, "p99")):
        assert math.isclose(m["ttft"][key], np.percentile(ttft, q), rel_tol=1e-12)
        nearest = np.sort(dump.value.to_numpy())[math.ceil(q / 100 * len(dump)) - 1]
        assert math.isclose(j["observes"]["response"][f"p{q}"], nearest, rel_tol=1e-12)
    assert m["good"] == int((ttft <= 1).sum())
    assert math.isclose(m["goodput"], m["good"] / (j["end"] - j["warmup"]), rel_tol=1e-12)
    assert math.isclose(m["request_throughput"], 5000 / (j["end"] - j["warmup"]), rel_tol=1e-12)
    assert m["tpot"]["count"] == 0 and m["tpot"]["mean"] is None
    # the text report: the same figures at its precision
    obs = text_table(t.stdout, "observe")["response"]
    for col in ("count", "mean", "ci", "cv2", "p50", "p90", "p95", "p99"):
        assert math.isclose(float(obs[col]), j["observes"]["response"][col], rel_tol=1e-5), col
    met = text_table(t.stdout, "metric")["ttft"]
    for col in ("count", "mean", "ci", "median", "p90", "p95", "p99"):
        assert math.isclose(float(met[col]), m["ttft"][col], rel_tol=1e-5), col
    pool = text_table(t.stdout, "pool")["reqs"]
    jp = j["pools"][0]
    for col, key in (("used", "used"), ("queue", "queue"), ("wait", "wait"), ("admissions", "admissions")):
        assert math.isclose(float(pool[col]), jp[key], rel_tol=1e-5), col
    # Little at the slot pool's queue, exactly over the run: Lq = (admissions / (end - warmup)) Wq
    assert math.isclose(jp["queue"], jp["admissions"] / (j["end"] - j["warmup"]) * jp["wait"], rel_tol=1e-9)


@pytest.mark.timeout(120)
def test_a_sweep_row_is_the_run_of_its_point_and_seed(tmp_path, serq):
    # The sweep's table holds, per point and seed, every figure of the JSON report of `serq run` at that
    # point and seed, flattened by its path. (The commands run in this process, the conftest's serq fixture:
    # what is compared is the figures.)
    p = serq("sweep", MD1, "--set", "lam=0.9,1.3", "--seeds", "2,7", *FIXED, "--workers", "0",
             "--out", str(tmp_path / "t.csv"))
    assert p.returncode == 0, p.stderr
    import pandas as pd

    t = pd.read_csv(tmp_path / "t.csv")
    for lam, seed in ((0.9, 7), (1.3, 2)):
        r = serq("run", MD1, "--set", f"lam={lam}", "--seed", str(seed), *FIXED, "--json")
        assert r.returncode == 0, r.stderr
        j = json.loads(r.stdout)
        row = t[(t.lam == lam) & (t.seed == seed)].iloc[0]
        flat = {"end": j["end"], "events": j["events"], "mean_live": j["mean_live"],
                "observes.response.mean": j["observes"]["response"]["mean"],
                "observes.response.p99": j["observes"]["response"]["p99"],
                "stages.E.utilisation": j["stages"][0]["utilisation"],
                "pools.reqs.wait": j["pools"][0]["wait"],
                "requests.ttft.p99": j["requests"]["ttft"]["p99"]}
        for k, v in flat.items():
            assert row[k] == v, (k, row[k], v)


@pytest.mark.timeout(30)
def test_pd_disaggregation_in_pull_mode_by_hand(monkeypatch):
    # pd_pull.sq (the trace is in the program's header): B's TTFT 1.2901 and response 1.3305, A's 1.7325
    # and 1.7729; P ran 3 iterations, D 2 one-token prefills and 8 decodes; each NIC carried both reads
    # (1500 tokens: P's busy 1.5 s of its 1000/s, D's 0.75 s of its 2000/s, over a horizon of 100).
    r = both("pd_pull.sq", monkeypatch)
    got = {k: sorted(zip(r.observe(k).sessions.tolist(), r.observe(k).values.tolist())) for k in ("ttft", "response")}
    assert [s for s, _ in got["ttft"]] == [0, 1]
    for (s, v), want in zip(got["ttft"], (1.7325, 1.2901)):
        assert math.isclose(v, want, rel_tol=1e-12), (s, v, want)
    for (s, v), want in zip(got["response"], (1.7729, 1.3305)):
        assert math.isclose(v, want, rel_tol=1e-12), (s, v, want)
    p, d = r.stage("P"), r.stage("D")
    assert (p.iterations, d.iterations, d.prefill_only, d.decode_only) == (3, 10, 2, 8)
    assert math.isclose(r.stage("P.nic").utilisation, 1.5 / 100, rel_tol=1e-9)
    assert math.isclose(r.stage("D.nic").utilisation, 0.75 / 100, rel_tol=1e-9)
    assert r.stage("D.nic.latency").completions == 2
    # one request waited at P's slots for one iteration (the budget was spent): mean wait 0.0612 / 2
    assert math.isclose(r.pool("P.reqs").wait, 0.0306, rel_tol=1e-9)
    # P's leased blocks went back at each read's end, and nothing was preempted
    assert all(r.pool(n).preemptions == 0 for n in ("P.kv", "D.kv"))


def test_limited_processor_sharing_is_insensitive_and_fifo_is_not(monkeypatch):
    # lps.sq: lambda 2, 3 servers shared (ps(min(present, 3))), work h2(1, 4). Insensitivity: M/M/3's
    # P0 = 1/9, Erlang C 4/9, response 1 + (4/9) / (3 - 2) = 13/9, and the time the stage is empty 1/9.
    # fifo(3) with the same work is longer (M/G/c waits grow with cv2).
    r = both("lps.sq", monkeypatch)
    covers(r.stats("response"), 13 / 9, 0.04)
    idle = r.result.gauges["idle"]
    assert abs(idle.mean - 1 / 9) <= idle.ci and idle.ci < 0.05 / 9
    st = r.stage("lps")
    assert abs(st.utilisation - 8 / 9) < 0.005
    assert math.isclose(st.present, st.throughput * st.service, rel_tol=0.01)  # Little
    # fifo(3) over 25 000 s of the 100 000: its response's CI, 2.0322 +- 0.1666, lies as far above limited PS's
    # (about 1.44 +- 0.05) as over the whole run (1.9678 +- 0.1031: both lower ends 1.865)
    f = both("lps.sq", monkeypatch, sets={"fifo": 1}, horizon=25000).stats("response")
    assert f.mean - f.ci > r.stats("response").mean + r.stats("response").ci


def step_reference(budget: int, bs: int, n: int = 5) -> tuple[dict[int, float], dict[int, float], int]:
    """decode_batch.sq's engine written out as a loop of iterations (the rules in the program's header):
    each request's first-token and last-token times, and the number of iterations."""
    prompts = [100 + 37 * s for s in range(n)]
    outs = [50 + 61 * s for s in range(n)]
    t, its = 0.0, 0
    pre_left, pos, rem = list(prompts), [0] * n, [o - 1 for o in outs]
    first: dict[int, float] = {}
    done: dict[int, float] = {}
    while len(done) < n:
        left, prefilled, attention, decoders, chunks = budget, 0, 0.0, [], []
        for i in range(n):
            if i in done or left <= 0:
                continue
            if pre_left[i] > 0:
                c = min(pre_left[i], left)
                left -= c
                chunks.append((i, c))
                prefilled += c
                attention += c * (pos[i] + c / 2)
            elif rem[i] > 0:
                left -= 1
                decoders.append(i)
        kv_decode = sum(math.ceil((pos[i] + 1) / bs) * bs for i in decoders)
        t += 0.01 + 0.001 * len(decoders) + 0.000001 * kv_decode + 0.00002 * prefilled + 0.0000001 * attention
        its += 1
        for i, c in chunks:
            pre_left[i] -= c
            pos[i] += c
            if pre_left[i] == 0:
                first[i] = t
        for i in decoders:
            pos[i] += 1
            rem[i] -= 1
            if rem[i] == 0:
                done[i] = t
    return first, done, its


@pytest.mark.timeout(60)
@pytest.mark.parametrize("budget", [4096, 128, 37])
@pytest.mark.parametrize("bs", [1, 16])
def test_a_batch_on_a_step_engine_is_the_reference_loop(monkeypatch, budget, bs):
    # decode_batch.sq: a budget that prefills every prompt at once (4096), one that chunks them over several
    # iterations with decodes mixed in (128), and one smaller than every prompt (37); blocks of 1 and 16.
    r = both("decode_batch.sq", monkeypatch, sets={"B": budget, "bs": bs})
    first, done, its = step_reference(budget, bs)
    for name, want in (("first", first), ("done", done)):
        o = r.observe(name)
        got = dict(zip(o.sessions.tolist(), o.values.tolist()))
        assert got.keys() == want.keys()
        for s in want:
            assert math.isclose(got[s], want[s], rel_tol=1e-12), (name, s, got[s], want[s])
    assert r.stage("E").iterations == its


def sjf_waits(lam: float) -> dict[str, float]:
    """Non-preemptive SJF with exp(1) work: W(x) = W0 / (1 - rho(x))^2, W0 = lam E[S^2] / 2 = lam,
    rho(x) = lam (1 - e^-x (1 + x)); the mean over all jobs, over jobs of work > 2 and < 0.25 (numerically)."""
    import numpy as np

    x = np.linspace(0, 60, 600001)
    w = lam / (1 - lam * (1 - np.exp(-x) * (1 + x))) ** 2
    f = np.exp(-x)

    def area(y, t):  # the trapezoid rule (numpy's np.trapezoid is 2.0's; serq-sim takes numpy 1.26)
        return float(np.sum((y[1:] + y[:-1]) * np.diff(t)) / 2)

    def mean(m):
        return area((w * f)[m], x[m]) / area(f[m], x[m])

    return {"wait": mean(x >= 0), "wait_long": mean(x > 2), "wait_short": mean(x < 0.25)}


def test_shortest_job_first_is_phipps_formula(monkeypatch):
    # sjf.sq: lambda 0.7, exp(1) work, the slot's queue ordered by the work: mean wait 1.3122, 3.5500 for
    # the jobs of work above 2, 0.7086 below 0.25; FIFO (sjf 0) waits W0 / (1 - rho) = 7/3 whatever the work.
    want = sjf_waits(0.7)
    assert abs(want["wait"] - 1.3122) < 1e-3 and abs(want["wait_long"] - 3.5500) < 1e-3
    r = both("sjf.sq", monkeypatch)
    covers(r.stats("wait"), want["wait"], 0.03)
    covers(r.stats("wait_long"), want["wait_long"], 0.05)
    covers(r.stats("wait_short"), want["wait_short"], 0.03)
    fifo = both("sjf.sq", monkeypatch, sets={"sjf": 0})
    for name in ("wait", "wait_long", "wait_short"):
        covers(fifo.stats(name), 7 / 3, 0.06)
