"""Programs of a seventh round of users (peer_programs7/*.sq), of kinds the earlier rounds lack: priority
classes on several GPUs behind one queue (the multi-server Cobham formula, and the time all are busy is
Erlang C), an M/G/1 queue of heavy-tailed output lengths (Pollaczek-Khinchine, and the chance of not
waiting is 1 - rho), the tool calls in flight of agents (M/G/inf: the whole Poisson law through gauges of
indicators), a least-loaded router without product form (its Markov chain solved here), SLO goodput of
request records against the M/M/1 response-time law, `serq compare` of two deployments under common
random numbers, a step engine of fixed step time as a bulk-service queue, P/D sketched as a tandem network
and the capacity search for its prefill GPUs, trunk-reservation admission control (a birth-death chain),
LCFS against FCFS (the second moment of the wait), multi-turn chat with think times as a BCMP network;
traced by hand, a KV lease nobody reads and a spill of old blocks only, and KV transfers sharing NICs
max-min and by bottleneck; and the messages such users met. Each runs on the tier serQ picks and on the
general engine, which must agree byte for byte. Statistical checks fix their seeds and assert a 95 % CI
that covers the theory and is narrow."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from conform import both_tiers, covers, run

HERE = Path(__file__).resolve().parent / "peer_programs7"


def both(name: str, monkeypatch, **kw):
    return both_tiers(HERE / name, monkeypatch, **kw)


def erlang_c(c: int, a: float) -> float:
    """M/M/c's probability of waiting at offered load ``a``."""
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def mmc_p0(c: int, a: float) -> float:
    """M/M/c's probability of an empty system."""
    return 1 / (sum(a ** k / math.factorial(k) for k in range(c)) + a ** c / math.factorial(c) * c / (c - a))


def gauge_covers(g, theory: float, rel: float) -> None:
    assert abs(g.mean - theory) <= g.ci, (g.mean, g.ci, theory)
    assert g.ci <= rel * abs(theory), (g.ci, theory)


def test_priority_classes_on_three_gpus_are_the_multi_server_cobham_formula(monkeypatch):
    # mmc_prio.sq: c = 3, lam 0.6 + 1.2, mu 1: a = 1.8, C(3, 1.8) = 0.354745, W0 = C / 3; interactive
    # W0 / 0.8 = 0.147810, batch W0 / (0.8 * 0.4) = 0.369526. PASTA: all three busy a fraction C of the time;
    # Little at the pool: a GPUs held on average, lam Wq = C a / (c - a) waiting.
    r = both("mmc_prio.sq", monkeypatch, horizon=20000)
    C = erlang_c(3, 1.8)
    assert abs(C - 0.3547445255) < 1e-9
    covers(r.stats("w_hi"), C / 3 / 0.8, 0.1)  # FIFO would be C / 1.2 = 0.295624 for both
    covers(r.stats("w_lo"), C / 3 / (0.8 * 0.4), 0.15)
    g = r.result.gauges
    gauge_covers(g["all_busy"], C, 0.04)
    gauge_covers(g["in_service"], 1.8, 0.02)
    gpus = r.pool("gpus")
    assert abs(gpus.queue - C * 1.8 / 1.2) < 0.06 and math.isclose(gpus.holders, g["in_service"].mean, rel_tol=1e-12)


def test_heavy_tailed_output_lengths_are_pollaczek_khinchine(monkeypatch):
    # mg1_h2.sq: E[S] = 1, E[S^2] = 5, lam 0.5: Wq = 0.5 * 5 / (2 * 0.5) = 2.5 (twice the M/M/1's 1, by
    # the (1 + cv2) / 2 factor); P(wait > 0) = rho = 0.5; the GPU idle 1 - rho of the time.
    r = both("mg1_h2.sq", monkeypatch, horizon=120000)
    covers(r.stats("wait"), 2.5, 0.1)
    covers(r.stats("waited"), 0.5, 0.03)
    gauge_covers(r.result.gauges["idle"], 0.5, 0.03)
    gpu = r.stage("gpu")
    assert abs(gpu.service - 1) < 0.02 and abs(gpu.utilisation - 0.5) < 0.01


def test_tool_calls_in_flight_are_poisson_whatever_their_duration(monkeypatch):
    # mginf_tools.sq: M/G/inf with a = 1.5 * 2 = 3: N ~ Poisson(3) in time average: mean 3, P(N = 0)
    # = e^-3, E[N^2] = 12, P(N >= 6) = 1 - sum_{k<6} e^-3 3^k / k!; a delay stage is busy 1 - e^-3.
    r = both("mginf_tools.sq", monkeypatch, horizon=60000)
    g = r.result.gauges
    tail = 1 - sum(math.exp(-3) * 3 ** k / math.factorial(k) for k in range(6))
    gauge_covers(g["in_flight"], 3, 0.02)
    gauge_covers(g["none"], math.exp(-3), 0.1)
    gauge_covers(g["squared"], 12, 0.03)
    gauge_covers(g["at_least_6"], tail, 0.06)
    s = r.stage("sandbox")
    assert math.isclose(s.present, g["in_flight"].mean, rel_tol=1e-12) and abs(s.utilisation - (1 - math.exp(-3))) < 0.003
    assert s.wait == 0


def jsq_chain(lam: float, k: int = 40) -> np.ndarray:
    """The stationary law of two exp(1) servers behind join-the-shortest-queue (ties to server 0), each
    queue truncated at k: p[n0, n1]."""
    n = (k + 1) ** 2
    q = np.zeros((n, n))
    for a in range(k + 1):
        for b in range(k + 1):
            i = a * (k + 1) + b
            if a <= b and a < k:
                q[i, i + k + 1] += lam
            elif a > b and b < k:
                q[i, i + 1] += lam
            if a:
                q[i, i - k - 1] += 1
            if b:
                q[i, i - 1] += 1
    np.fill_diagonal(q, -q.sum(axis=1))
    lhs = q.T.copy()
    lhs[-1] = 1  # p Q = 0 has one redundant equation: normalise instead
    rhs = np.zeros(n)
    rhs[-1] = 1
    return np.linalg.solve(lhs, rhs).reshape(k + 1, k + 1)


def test_a_least_loaded_router_is_its_markov_chain(monkeypatch):
    # jsq.sq: JSQ over two replicas at 1.6 requests/s. The chain (truncated at 40 a queue, where the mass is < 1e-7) gives
    # L0 = 2.5811, L1 = 2.1480, W = (L0 + L1) / lam = 2.9557 (M/M/2 with one queue: 2.7778; two M/M/1 at 0.8
    # by a coin: 5), P(both idle) = 0.0942, and 0.5314 of the requests sent to replica 0 (ties go there).
    p = jsq_chain(1.6)
    assert p[-1].sum() + p[:, -1].sum() < 1e-7
    n = np.arange(p.shape[0])
    l0, l1 = float(p.sum(axis=1) @ n), float(p.sum(axis=0) @ n)
    to0 = float(p[n[:, None] <= n[None, :]].sum())
    r = both("jsq.sq", monkeypatch, horizon=20000)
    assert 2.7 < (l0 + l1) / 1.6 < 3
    covers(r.stats("response"), (l0 + l1) / 1.6, 0.11)
    covers(r.stats("to0"), to0, 0.02)
    g = r.result.gauges
    gauge_covers(g["n0"], l0, 0.11)
    gauge_covers(g["n1"], l1, 0.12)
    gauge_covers(g["both_idle"], float(p[0, 0]), 0.08)  # M/M/2: 1 / 9
    # the pools' own time averages are the gauges' figures: holders plus queue is the replica's count
    for j, name in enumerate(("n0", "n1")):
        pool = r.pool("slot", j)
        assert math.isclose(pool.holders + pool.queue, g[name].mean, rel_tol=1e-9)


def test_goodput_under_a_ttft_slo_is_the_mm1_response_law(monkeypatch):
    # slo_goodput.sq: TTFT ~ exp(rate 0.5): mean 2, median 2 ln 2, p90 2 ln 10, p99 2 ln 100; a fraction
    # 1 - e^-0.5 = 0.393469 meets ttft <= 1, and as many meet e2el <= 1.225 (the decode is exactly 0.225).
    r = both("slo_goodput.sq", monkeypatch, horizon=60000)
    m = r.result.requests
    covers(m.ttft, 2.0, 0.05)
    for got, q in ((m.ttft.median, 0.5), (m.ttft.p90, 0.9), (m.ttft.p99, 0.99)):
        assert abs(got - 2 * -math.log(1 - q)) < 0.05 * 2 * -math.log(1 - q), (q, got)
    assert abs(m.tpot.mean - 0.025) < 1e-12 and abs(m.e2el.mean - m.ttft.mean - 0.225) < 1e-9
    r.set_slo({"ttft": 1.0})
    good = r.result.requests
    share = 1 - math.exp(-0.5)
    assert abs(good.good / m.completed - share) < 0.01
    assert math.isclose(good.goodput, good.good / m.duration, rel_tol=1e-12)
    r.set_slo({"e2el": 1.225})
    assert r.result.requests.good == good.good


@pytest.mark.timeout(120)
def test_compare_two_deployments_under_common_random_numbers():
    # mmc_compare.sq, c = 2 against c = 3 at a = 1.5, ten seeds: the paired difference of the mean wait
    # covers C(3, 1.5) / 1.5 - C(2, 1.5) / 0.5, and of the delay stage's utilisation (the chance a GPU is
    # busy, 1 - p0) p0(2) - p0(3); both arms see the same arrivals and services, so the pairing takes
    # out most of the second's variance.
    import serq_sweep

    t = serq_sweep.compare(str(HERE / "mmc_compare.sq"), sets={"c": [2, 3]}, seeds="1..10", workers=0,
                           progress=False, figures=["observes.wait.mean", "stages.gpu.utilisation"])
    rows = {row["figure"]: row for row in t.to_dict("records")}
    wait, util = rows["observes.wait.mean"], rows["stages.gpu.utilisation"]
    dw = erlang_c(3, 1.5) / 1.5 - erlang_c(2, 1.5) / 0.5
    assert abs(wait["diff"] - dw) <= wait["ci_paired"] < 0.1 * abs(dw)
    du = mmc_p0(2, 1.5) - mmc_p0(3, 1.5)
    assert abs(util["diff"] - du) <= util["ci_paired"] < 0.05 * abs(du)
    assert util["ci_paired"] < util["ci_unpaired"] / 2 and util["variance_reduction"] > 0.8


def test_a_lease_nobody_reads_holds_the_blocks_until_it_runs_out_and_old_blocks_spill(monkeypatch):
    # lease_spill.sq, by hand (kv cap 64 in blocks of 16, lease 3, spill when age >= 1, a write of a block
    # takes 1 on the fifo link):
    #   s0 holds 48 on [0, 1], then its lease keeps them allocated until 4 (s0 itself lives on until 21).
    #   s1 at 2 wants 32: 48 + 32 > 64 and a lease is not evictable: it waits until 4. Then s0's 48 are
    #   cached, and s1's 32 evict one block of them (from the tail), of age 0: not written. s1 [4, 5].
    #   s2 at 10 wants all 64: it evicts s0's 32 (cached since 4, age 6) and s1's 32 (since 5, age 5):
    #   four blocks written, one after another on the link [10, 14]. s2 [10, 11].
    r = both("lease_spill.sq", monkeypatch)
    at = {n: [(s, v) for s, v in zip(o.sessions.tolist(), o.values.tolist())] for n, o in r.observes.items()}
    assert at["admitted"] == [(0, 0.0), (1, 4.0), (2, 10.0)] and at["done"] == [(0, 1.0), (1, 5.0), (2, 11.0)]
    kv, cpu, link = r.pool("kv"), r.pool("cpu"), r.stage("pcie")
    assert (kv.spills, kv.evicted_units, kv.admissions) == (4, 80, 3)
    # over [0, 30]: used 48 on [0, 4] (the hold, then the lease), 32 on [4, 5], 64 on [10, 11]; cached 32 on
    # [4, 10], 32 more on [5, 10], 64 from 11; s1 waited [2, 4]; the holders count the lease
    assert math.isclose(kv.used, 288 / 30) and math.isclose(kv.cached, (32 * 6 + 32 * 5 + 64 * 19) / 30)
    assert math.isclose(kv.queue, 2 / 30) and math.isclose(kv.wait, 2 / 3) and math.isclose(kv.holders, 6 / 30)
    # the tier holds the room of the four blocks from their eviction at 10 (usable when each write lands)
    assert math.isclose(cpu.cached, 64 * 20 / 30) and cpu.used == 0
    assert link.completions == 4 and math.isclose(link.utilisation, 4 / 30) and math.isclose(link.wait, 1.5)
    assert math.isclose(r.result.gauges["kv_used"].mean, kv.used)


def test_a_step_engine_of_fixed_step_time_and_ample_budget_is_a_bulk_queue(monkeypatch):
    # step_bulk.sq: lam 5, a 0.2: p = e^-1, U = (a / p) / (a / p + 1 / lam) = 0.731059, E[R] = a + U a / 2
    # = 0.273106; the engine answers at once (in a) w.p. 1 - U; it steps U / a times a second; the queue
    # in front of it holds lam U a / 2 on average (Little, the wait of a request that finds it busy)
    p = math.exp(-1)
    u = (0.2 / p) / (0.2 / p + 0.2)
    r = both("step_bulk.sq", monkeypatch, horizon=7000)
    covers(r.stats("response"), 0.2 + u * 0.1, 0.005)
    covers(r.stats("at_once"), 1 - u, 0.05)
    e = r.stage("engine")
    assert abs(e.utilisation - u) < 0.006 and math.isclose(e.service, 0.2) and e.mixed == 0
    assert abs(e.iterations / (7000 - 50) - u / 0.2) < 0.03
    assert abs(r.pool("reqs").queue - 5 * u * 0.1) < 0.01


def test_pd_disaggregation_sketched_as_a_tandem_network(monkeypatch):
    # pd_tandem.sq at lam 1.2: prefill M/M/2 (a 1.2): C = 0.45, Wq = 0.5625, TTFT = 0.5625 + 1 + 0.2 =
    # 1.7625; the decoder M/M/1 at rho 0.6: 1.25 (Burke); E2E 3.0125; Little: 1.2 x 3.0125 = 3.615 requests
    # in the system, which are every live session (each waits at or holds the pool, or is on the link or
    # at D)
    assert math.isclose(erlang_c(2, 1.2), 0.45)
    r = both("pd_tandem.sq", monkeypatch)
    covers(r.stats("ttft"), 1.7625, 0.04)
    covers(r.stats("decode"), 1.25, 0.08)
    covers(r.stats("e2e"), 3.0125, 0.05)
    g = r.result.gauges["in_system"]
    gauge_covers(g, 1.2 * 3.0125, 0.06)
    assert math.isclose(g.mean, r.result.mean_live, rel_tol=1e-9)
    assert abs(r.stage("D").utilisation - 0.6) < 0.015


@pytest.mark.timeout(120)
def test_the_fewest_prefill_gpus_for_a_ttft_are_erlang_cs():
    # pd_tandem.sq: the fewest prefill GPUs for a mean TTFT of 1.5 s: 1 is unstable (a = 1.2), 2 gives 1.7625, 3 gives
    # C(3, 1.2) / 1.8 + 1.2 = 1.278431
    import serq_sweep

    assert math.isclose(erlang_c(3, 1.2) / 1.8 + 1.2, 1.2784313725, rel_tol=1e-9)
    _, rows = serq_sweep.find(str(HERE / "pd_tandem.sq"), "ttft.mean <= 1.5", ("cP", "1:5:1"), seeds="1..2",
                              horizon=4000, workers=0, progress=False)
    (row,) = rows
    assert (row["cP"], row["outcome"], row["fails"]) == (3, "found_smallest", 2)
    assert abs(row["observes.ttft.mean:mean"] - 1.2784) < 0.06


def test_a_comparison_of_a_program_with_itself_says_how_to_write_an_a_a_test(tmp_path):
    # a planner gauging the noise of a comparison runs the program against itself: the arms would bear one
    # label, so it is refused, and the message is serq compare's (it named "the programs of a sweep") and
    # says how to write the A/A test: one program under one value given twice
    import serq_sweep
    from serq import UserError

    path = str(HERE / "mmc_compare.sq")
    with pytest.raises(UserError) as e:
        serq_sweep.compare([path, path], seeds="1", workers=0, progress=False)
    msg = str(e.value)
    assert msg.startswith("error: the arms of the comparison are one program given twice: ") and "sweep" not in msg
    assert "--set NAME=V,V" in msg
    (row,) = serq_sweep.compare(path, sets={"c": [2, 2]}, seeds="1,2", horizon=300, workers=0, progress=False,
                                figures=["observes.wait.mean"]).to_dict("records")
    assert row["diff"] == 0  # the A/A test it points to: the same runs, a difference of 0


def test_trunk_reservation_sheds_each_class_as_its_birth_death_chain(monkeypatch):
    # trunk.sq: c 6, r 2, premium 2/s, batch 3/s, mean hold 1: p_n ∝ prod of births / (n!) with births 5
    # below 4 busy and 2 from there: premium shed p_6 = 0.043806, batch shed p_4 + p_5 + p_6 = 0.503767,
    # 3.401086 slots busy (without the reservation every class would see Erlang B(6, 5) = 0.191800)
    p = [1.0]
    for n in range(6):
        p.append(p[-1] * (5 if n < 4 else 2) / (n + 1))
    p = [x / sum(p) for x in p]
    assert abs(p[6] - 0.0438059) < 1e-6 and abs(sum(p[4:]) - 0.5037673) < 1e-6
    r = both("trunk.sq", monkeypatch, horizon=8000)
    covers(r.stats("shed_p"), p[6], 0.15)
    covers(r.stats("shed_b"), sum(p[4:]), 0.03)
    gauge_covers(r.result.gauges["busy"], sum(n * x for n, x in enumerate(p)), 0.015)
    # every admitted request is served: the throughput is what each class did not shed
    s = r.stage("gpu")
    assert abs(s.throughput - (2 * (1 - p[6]) + 3 * (1 - sum(p[4:])))) < 0.05


def test_a_fleet_spilling_to_tier_n_is_told_to_pair_the_families():
    # a fleet of N engines, each spilling to its own CPU tier over its own link, written as the families
    # are declared (`spill cpu[N] via pcie[N]`): the message said only that cpu has members 0 … 1; it says
    # how kv[i] is paired with cpu[i] (as `admit via` and `memory` say for a declaration), at the index
    src = ("let N = 2;\npool kv[N] { cap 64; block 16; evict lru; spill cpu[N] via pcie[N] (1) when (1); }\n"
           "pool cpu[N] { cap 640; }\nstage pcie[N] : fifo;\nstage d : delay;\nworkload { arrive batch(1); }\n"
           "session { hold kv[0] (40) { run d (1); } cache (40); end; }\nrun { horizon 10; }\n")
    for bad, name in (("spill cpu[N] via pcie[N]", "cpu"), ("spill cpu via pcie[N]", "pcie")):
        text = src.replace("spill cpu[N] via pcie[N]", bad)
        line = text.splitlines()[1]
        col = line.index(f"{name}[N]") + len(name) + 2  # the caret under the index
        with pytest.raises(serq_frontend.CompileError) as e:
            serq_frontend.compile(source=text, sets={}, defs={})
        first = str(e.value).splitlines()[0]
        assert first == (f"<source>:2:{col}: error: `{name}[2]`: `{name}` has members 0 … 1; kv[i] is paired with "
                         f"{name}[i] when the family is named without an index, `{name}`"), first
    serq_frontend.compile(source=src.replace("spill cpu[N] via pcie[N]", "spill cpu via pcie"), sets={}, defs={})
    serq_frontend.compile(source=src.replace("spill cpu[N] via pcie[N]", "spill cpu[1] via pcie[0]"), sets={},
                          defs={})


def test_serving_the_newest_request_first_keeps_the_mean_wait_and_doubles_its_second_moment(monkeypatch):
    # lcfs.sq: M/M/1 at rho 0.5, `queue by (-t0)`: E[W] = 1 as FCFS, E[W^2] = 2 rho / ((mu - lam)^2 (1 - rho))
    # = 8 against FCFS's 4; Little at the queue of each: lam E[W] waiting.
    lifo = both("lcfs.sq", monkeypatch)
    fifo = serq_sim.run(serq_frontend.compile(path=str(HERE / "lcfs.sq"), sets={"lifo": 0}))
    covers(lifo.stats("wait"), 1.0, 0.06)
    covers(fifo.stats("wait"), 1.0, 0.06)
    covers(lifo.stats("wait2"), 8.0, 0.15)
    covers(fifo.stats("wait2"), 4.0, 0.12)
    for r in (lifo, fifo):
        assert abs(r.pool("gpu").queue - r.stage("svc").throughput * r.stats("wait").mean) < 0.005


@pytest.mark.parametrize("share, c_done, c_service", [("maxmin", 8 / 7, (8 / 7 + 4) / 2), ("bottleneck", 1.6, 2.8)])
def test_three_kv_transfers_share_the_nics_by_hand(monkeypatch, share, c_done, c_service):
    # nic_share.sq's header: C done at 8/7 (max-min) or 1.6 (bottleneck), A and B at 4 either way; each
    # NIC's utilisation is the work it carried over its capacity and the run: pod 0's (12 + 8) / 100, pod
    # 1's 12 / 100, the decode pod's 24 / 60
    src = (HERE / "nic_share.sq").read_text().replace("share maxmin;", f"share {share};")
    r, o = run(src, monkeypatch)
    assert [(s, round(t, 12)) for s, t, _ in o["done"]] == [(2, round(c_done, 12)), (0, 4.0), (1, 4.0)]
    e0, e1, ing = r.stage("egress", 0), r.stage("egress", 1), r.stage("ingress")
    assert (round(e0.utilisation, 12), round(e1.utilisation, 12), round(ing.utilisation, 12)) == (0.2, 0.12, 0.4)
    assert math.isclose(e0.service, c_service) and ing.service == 4


def test_multi_turn_chat_with_think_times_is_a_bcmp_network(monkeypatch):
    # chat_ps.sq: turns 1 / (1 - 0.75) = 4 a conversation (geometric, cv2 0.75), 2 turns/s at the endpoint
    # (rho 0.5): a turn 0.5 s, turns in flight geometric (P(none) 0.5, mean 1), 7.5 users thinking, a
    # conversation 17 s, 8.5 live (the live sessions are exactly those at the endpoint or thinking)
    r = both("chat_ps.sq", monkeypatch, horizon=30000)
    covers(r.stats("turn_time"), 0.5, 0.05)
    covers(r.stats("conversation"), 17, 0.04)
    covers(r.stats("turns_made"), 4, 0.025)
    g = r.result.gauges
    gauge_covers(g["in_flight"], 1, 0.07)
    gauge_covers(g["llm_idle"], 0.5, 0.04)
    gauge_covers(g["thinking"], 7.5, 0.04)
    assert math.isclose(g["in_flight"].mean + g["thinking"].mean, r.result.mean_live, rel_tol=1e-9)
    assert abs(r.stage("llm").throughput - 2) < 0.04


def test_a_value_refused_that_the_source_does_not_show_says_it_was_given_in_place_of_its_let():
    # `serq run jsq.sq --set lam=0` (or R=2.5): the source reads `let lam = 1.6;` and the refusal said
    # "not 0" at `lam` with no word of where the 0 came from; it names the override and the `let` it
    # replaced, directly or through the lets that read it
    def first(sets, src=None):
        with pytest.raises(serq_frontend.CompileError) as e:
            if src is None:
                serq_frontend.compile(path=str(HERE / "jsq.sq"), sets=sets)
            else:
                serq_frontend.compile(source=src, sets=sets, defs={})
        return str(e.value).splitlines()[0]

    assert first({"lam": 0}).endswith("error: the arrival rate must be a positive, finite number of arrivals per "
                                      "second, not 0 (`lam` is 0, given in place of its `let` at 7:1)")
    assert first({"R": 2.5}).endswith("error: the size of pool `slot` must be an integer of at least 1, not 2.5 "
                                      "(`R` is 2.5, given in place of its `let` at 6:1)")
    src = "let rate = 2;\nlet half = rate / 2;\nstage d : delay;\nworkload { arrive poisson(half - 1); }\n" \
          "session { run d (1); end; }\nrun { horizon 1; }\n"
    assert first({"rate": 2}, src).endswith("not 0 (`rate` is 2, given in place of its `let` at 1:1)")
    # a value the source shows says nothing more
    assert first({}, src).endswith("not 0")
    # the linker's own checks of a pool's cap, a fifo's servers and the run's window say it alike (each with the
    # value it refuses, 5b72dc0a, then where that value came from)
    src = "let c = 2;\nlet H = 100;\npool p { cap c; }\nstage s : fifo(c);\nworkload { arrive poisson(1); }\n" \
          "session { hold p (1) { run s (1); } end; }\nrun { horizon H; warmup H / 10; }\n"
    for sets, msg in (({"c": -1}, "the cap of pool `p` is negative (-1) (`c` is -1, given in place of its `let` at 1:1)"),
                      ({"c": 1.5}, "stage `s`: a fifo has a whole number of servers, at least 1, not 1.5 (`c` is 1.5, given "
                                   "in place of its `let` at 1:1)"),
                      ({"H": -5}, "the horizon must be above 0, not -5 (`H` is -5, given in place of its `let` at 2:1)")):
        assert first(sets, src).split(": error: ")[1] == msg
