"""Programs of a twelfth round of users (peer_programs12/*.sq), as a capacity planner or an llm-d engineer writes
them, each checked against a truth of its own: prefill/decode disaggregation whose prefill GPU is an M/G/1
queue (Pollaczek-Khinchine, through a step engine and a KV transfer to the decoder); a GPU KV cache with a
CPU offload tier under a chat, traced by hand on two sessions and swept over the tier's size; a closed loop
of N users with a fixed think time swept over N (exact mean value analysis); request slots with a bounded
waiting room (M/M/c/K, Erlang's loss formula at K = c); a sweep over the GPU's speed under five seeds whose
CIs cover Pollaczek-Khinchine and whose common random numbers make a difference of neighbouring points far
less variable than independent runs would; and non-preemptive priority between classes of different
service laws (Cobham). Statistical checks fix their seeds and assert a 95 % CI that covers the theory and is
narrow; programs that run on the fast tier run on the general engine too, which must agree byte for byte."""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
import serq_sweep
from conform import both_tiers, covers, pool, stage

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve().parent / "peer_programs12"
ROOT = Path(__file__).resolve().parents[3]


def one(name: str, sets=None, **kw):
    return serq_sim.run(serq_frontend.compile(path=str(HERE / name), sets=sets or {}), **kw)


def geometric_prompt(E_n: float) -> tuple[float, float]:
    """E[prompt] and E[prompt^2] of prompt = 1 + floor(X), X ~ exp(E_n): floor(X) is geometric on 0, 1, …
    with P(k) = (1 - q) q^k, q = exp(-1 / E_n), E[K] = q / (1 - q), E[K^2] = q (1 + q) / (1 - q)^2."""
    q = math.exp(-1 / E_n)
    EK, EK2 = q / (1 - q), q * (1 + q) / (1 - q) ** 2
    return 1 + EK, EK2 + 2 * EK + 1


def pk_wait(lam: float, ES: float, ES2: float) -> float:
    """Pollaczek-Khinchine's mean wait in the queue of M/G/1."""
    return lam * ES2 / (2 * (1 - lam * ES))


# ---------------------------------------------------------------------------------------------------------
# pd_mg1.sq: a prefill GPU that is an M/G/1 queue, feeding a decoder over a KV transfer


def test_the_prefill_queue_of_a_disaggregated_deployment_is_pollaczek_khinchine():
    # lam 4, prompts 1 + floor(exp(1000)) at 8000 tokens/s: E[S] = 0.12506, rho = 0.50025, Wq = 0.12513
    r = one("pd_mg1.sq")
    Ep, Ep2 = geometric_prompt(1000)
    ES, ES2 = Ep / 8000, Ep2 / 8000**2
    rho = 4 * ES
    covers(r.stats("wait_p"), pk_wait(4, ES, ES2), 0.2)
    P = stage(r, "P")
    assert abs(P.utilisation - rho) <= 0.02, (P.utilisation, rho)
    assert abs(P.service - ES) <= 0.02 * ES, (P.service, ES)
    # one prompt an iteration, every iteration a prefill alone, of the prompt's tokens: the prefill GPU is
    # a server of one job at a time, not a batch
    assert P.batch == 1 and P.decode_only == 0 and P.mixed == 0
    assert P.prefill_only == P.iterations
    # the slot's own wait is the wait the program observes: the slot counts every admission after the
    # warm-up, the observe the requests that also ended by the horizon (all but the last few)
    slots, w = pool(r, "P.reqs"), r.stats("wait_p")
    assert 0 <= slots.admissions - w.count <= 3
    assert math.isclose(slots.wait, w.mean, rel_tol=1e-3)
    # every request the prefill GPU finished is read by the decoder once (one handshake, one read on each
    # NIC), and nothing is preempted or rejected anywhere
    assert stage(r, "D.nic.latency").completions == P.completions
    for name in ("P.reqs", "P.kv", "D.reqs", "D.kv"):
        p = pool(r, name)
        assert p.preemptions == 0 and p.rejections == 0 and p.stuck == 0, name
    # Little at P's KV: a request holds it from its prefill's start through its lease, until the decoder
    # has read it: the prefill, the wait for the decoder's KV, the handshake and the read
    held = P.service + pool(r, "D.kv").wait + 0.002 + stage(r, "D.nic").service
    assert math.isclose(pool(r, "P.kv").holders, P.throughput * held, rel_tol=0.02)
    # the decoder admits each request twice: parked for its read without a slot, then with one
    assert pool(r, "D.reqs").admissions == 2 * pool(r, "D.kv").admissions
    # the decoder's prefill is one token, after the read: TTFT exceeds the prefill wait by at least the
    # prefill and the handshake
    assert r.stats("ttft").mean > r.stats("wait_p").mean + ES + 0.002


# ---------------------------------------------------------------------------------------------------------
# offload_tiny.sq: a GPU KV cache with a CPU tier, two chat sessions traced by hand


def test_hits_from_the_gpu_and_from_the_cpu_tier_traced_by_hand():
    r = one("offload_tiny.sq")
    rows = r.records("hits")
    got = list(zip(rows["session"].tolist(), rows["sent"].tolist(), rows["time"].tolist(), rows["prompt"].tolist(),
                   rows["gpu_hit"].tolist(), rows["cpu_hit"].tolist()))
    # (session, sent, done, prompt, from the GPU, from the tier): the trace in the program's header
    want = [(0, 0.5, 1.5, 4, 0, 0), (1, 1.0, 2.0, 4, 0, 0), (0, 3.5, 4.5, 12, 8, 0), (1, 4.0, 5.5, 12, 8, 0),
            (0, 6.5, 6.524 + 1, 20, 8, 8), (1, 7.5, 7.564 + 1, 20, 0, 16)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[0] == w[0] and g[3:] == w[3:], (g, w)
        assert math.isclose(g[1], w[1], abs_tol=1e-12) and math.isclose(g[2], w[2], abs_tol=1e-12), (g, w)
    prompts = sum(w[3] for w in want)
    assert prompts == 72
    assert sum(rows["gpu_hit"]) / prompts == 1 / 3
    assert sum(rows["cpu_hit"]) / prompts == 1 / 3
    kv, pcie = pool(r, "kv"), stage(r, "pcie")
    # every eviction is a write of one block: 8 tokens at 4.5, 16 at 6.5, 24 at 7.524
    assert kv.evicted_units == 48 and kv.spills == 12
    assert pcie.completions == 12 + 2  # the writes and the two reads
    assert pool(r, "cpu").evicted_units == 0


@pytest.mark.parametrize("capC, cpu_hits, reads, cpu_evicted", [
    (0, 0, 0, None),   # no tier: nothing written, nothing read
    (16, 0, 0, 32),    # S1's writes at 6.5 evict S0's 8 from the tier; S0's 6 at 7.524 S1's 16, then 2 of
                       # their own on the way (units evicted before they land: 8 + 16 + 8)
    (24, 8, 1, 16),    # S0 reads its 8 at 6.5; S0's writes at 7.524 evict S1's 16 before S1 reads
    (64, 24, 2, 0),    # the trace above
])
def test_the_cpu_tiers_hits_traced_by_hand_by_its_size(capC, cpu_hits, reads, cpu_evicted):
    r = one("offload_tiny.sq", sets={"capC": capC})
    rows = r.records("hits")
    assert rows["gpu_hit"].tolist() == [0, 0, 8, 8, 8, 0]  # the GPU does not depend on the tier
    assert sum(rows["cpu_hit"]) == cpu_hits
    kv = pool(r, "kv")
    assert kv.evicted_units == 48
    assert kv.spills == (0 if capC == 0 else 12)
    assert stage(r, "pcie").completions == kv.spills + reads
    if cpu_evicted is not None:
        assert pool(r, "cpu").evicted_units == cpu_evicted


# ---------------------------------------------------------------------------------------------------------
# offload_chat.sq: the same GPU and tier under a prefix-heavy chat, swept over the tier's size


def test_the_cpu_tiers_hit_rate_rises_with_its_size():
    sizes = [0, 2048, 8192, 32768]
    frame = serq_sweep.sweep(str(HERE / "offload_chat.sq"), sets={"capC": sizes}, seeds="1..2", workers=0,
                             progress=False)
    assert (frame["status"] == "ok").all()
    assert sorted(frame["capC"].unique().tolist()) == sizes
    rate = {}
    for seed in (1, 2):
        runs = frame[frame["seed"] == seed].set_index("capC").loc[sizes]
        prompts = runs["observes.prompt_tokens.mean"]
        # one seed, one workload: every tier size sees the same turns and prompts (common random numbers)
        assert prompts.nunique() == 1 and runs["observes.gpu_hit.count"].nunique() == 1
        cpu = (runs["observes.cpu_hit.mean"] / prompts).tolist()
        gpu = (runs["observes.gpu_hit.mean"] / prompts).tolist()
        assert cpu[0] == 0  # no tier, no hit from it
        assert all(a < b for a, b in zip(cpu, cpu[1:])), (seed, cpu)
        # the GPU's own hits barely move (a read from the tier shortens a turn, and so the GPU's order)
        assert max(gpu) - min(gpu) <= 0.05 * max(gpu), (seed, gpu)
        # a tier of 32768 tokens never evicts: every follow-up finds its whole history between the two
        last = runs.loc[32768]
        assert last["pools.cpu.evicted_units"] == 0 and last["observes.lost.mean"] == 0
        rate[seed] = cpu
    # the largest tier turns most of what the GPU alone would lose into hits
    for seed in (1, 2):
        r0 = frame[(frame["seed"] == seed) & (frame["capC"] == 0)].iloc[0]
        assert rate[seed][-1] * r0["observes.prompt_tokens.mean"] == pytest.approx(
            r0["observes.lost.mean"], rel=0.05)


# ---------------------------------------------------------------------------------------------------------
# closed_mva.sq: N users with a fixed think time on one FIFO GPU, swept over N


def mva(N: int, S: float, Z: float) -> list[tuple[float, float]]:
    """Exact MVA of one FIFO exp(S) station and a delay of mean Z: [(R(n), X(n)) for n = 1 .. N]."""
    out, Q = [], 0.0
    for n in range(1, N + 1):
        R = S * (1 + Q)
        X = n / (R + Z)
        Q = X * R
        out.append((R, X))
    return out


def test_a_closed_loop_swept_over_its_users_is_mean_value_analysis():
    frame = serq_sweep.sweep(str(HERE / "closed_mva.sq"), sets={"N": "1:8:1"}, seeds="1..5", workers=0,
                             progress=False, horizon=5000, warmup=200)
    assert (frame["status"] == "ok").all()
    points = serq_sweep.aggregate(frame)
    theory = mva(8, 1.0, 3.0)
    assert theory[0] == (1.0, 0.25) and math.isclose(theory[-1][1], 0.9918675606, rel_tol=1e-9)
    assert sorted(points["N"].tolist()) == list(range(1, 9))
    for _, row in points.iterrows():
        R, X = theory[int(row["N"]) - 1]
        for fig, want, rel in (("observes.response.mean", R, 0.06), ("stages.gpu.throughput", X, 0.03)):
            mean, ci = row[f"{fig}:mean"], row[f"{fig}:ci"]
            assert abs(mean - want) <= ci <= rel * want, (row["N"], fig, mean, ci, want)
        # the users live for ever: the population is N throughout
        assert row["mean_live:mean"] == row["N"]
    # the response time law, run by run: N / X - Z is the mean response (Little over the whole loop)
    for _, run in frame.iterrows():
        assert math.isclose(run["N"] / run["stages.gpu.throughput"] - 3,
                            run["observes.response.mean"], rel_tol=0.02), run["N"]


def test_the_most_users_the_gpu_serves_within_a_response_target_is_mvas(tmp_path, serq):
    # R(3) = 1.588 and R(4) = 2.038: the largest population whose mean response stays within 1.8 s is 3
    want = max(n for n, (R, _X) in enumerate(mva(8, 1.0, 3.0), start=1) if R <= 1.8)
    assert want == 3
    out = tmp_path / "found.csv"
    p = serq("sweep", str(HERE / "closed_mva.sq"), "--find", "observes.response.mean <= 1.8", "--over", "N", "1:8:1",
             "--seeds", "1..5", "--horizon", "5000", "--warmup", "200", "--workers", "0", "--no-progress",
             "--out", str(out))
    assert p.returncode == 0, p.stderr
    (row,) = list(csv.DictReader(out.read_text().splitlines()))
    assert (row["N"], row["outcome"], row["holds"], row["fails"]) == (str(want), "found", "3", "4")
    assert float(row["observes.response.mean:mean"]) <= 1.8


def test_the_closed_loop_runs_alike_on_both_tiers(monkeypatch):
    r = both_tiers(HERE / "closed_mva.sq", monkeypatch, sets={"N": 5}, horizon=3000)
    assert r.result.arrivals == 5 and r.result.ended == 0


# ---------------------------------------------------------------------------------------------------------
# mmck.sq: c request slots and a bounded waiting room


def mmck(c: int, K: int, a: float) -> list[float]:
    """The M/M/c/K queue's stationary law p_0 … p_K, a = lam / mu."""
    w = [a**n / math.factorial(n) if n <= c else a**n / (math.factorial(c) * c ** (n - c)) for n in range(K + 1)]
    s = sum(w)
    return [x / s for x in w]


def erlang_b(c: int, a: float) -> float:
    """Erlang's loss formula by its recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1))."""
    B = 1.0
    for k in range(1, c + 1):
        B = a * B / (k + a * B)
    return B


def test_a_bounded_waiting_room_is_mmck():
    # c 3, K 6, a 3: p_K = 0.16981, Wq = L_q / (lam (1 - p_K)) = 0.40909, L = 3.50943
    r = one("mmck.sq")
    p = mmck(3, 6, 3.0)
    Lq = sum((n - 3) * p[n] for n in range(4, 7))
    L = sum(n * p[n] for n in range(7))
    covers(r.stats("shed"), p[6], 0.05)
    covers(r.stats("wait"), Lq / (3 * (1 - p[6])), 0.05)
    # the sessions present are the requests in the system (a shed one leaves at once)
    assert abs(r.result.mean_live - L) <= 0.02 * L, (r.result.mean_live, L)
    slots = pool(r, "slots")
    assert abs(slots.queue - Lq) <= 0.03 * Lq, (slots.queue, Lq)
    assert slots.rejections == 0


def test_no_waiting_room_is_erlangs_loss_formula(monkeypatch):
    # K = c = 3, a = 3: B(3, 3) = 9 / 26; nobody waits; the slots carry a (1 - B)
    B = erlang_b(3, 3.0)
    assert math.isclose(B, mmck(3, 3, 3.0)[3], rel_tol=1e-12) and math.isclose(B, 9 / 26, rel_tol=1e-12)
    r = one("mmck.sq", sets={"K": 3}, seed=5, horizon=30000)  # before both_tiers, which leaves the general tier set
    both_tiers(HERE / "mmck.sq", monkeypatch, sets={"K": 3}, horizon=2000)
    covers(r.stats("shed"), B, 0.05)
    assert r.stats("wait").mean == 0 and r.stats("wait").p99 == 0
    used = pool(r, "slots").used
    assert abs(used - 3 * (1 - B)) <= 0.02 * 3 * (1 - B), used


# ---------------------------------------------------------------------------------------------------------
# speed_sweep.sq: serq sweep over the GPU's speed, five seeds, common random numbers


def test_a_sweep_under_five_seeds_covers_pk_and_its_common_random_numbers_pay(tmp_path, serq):
    out = tmp_path / "speed.csv"
    p = serq("sweep", str(HERE / "speed_sweep.sq"), "--set", "mu=9000,10000", "--seeds", "1..5", "--workers", "0",
             "--no-progress", "--out", str(out), "--show", "observes.response.mean")
    assert p.returncode == 0, p.stderr
    Ep, Ep2 = geometric_prompt(1000)
    theory = {}
    for mu in (9000, 10000):
        ES, ES2 = Ep / mu, Ep2 / mu**2
        theory[mu] = ES + pk_wait(4, ES, ES2)
    points = list(csv.DictReader((tmp_path / "speed.points.csv").read_text().splitlines()))
    assert [(row["mu"], row["runs"]) for row in points] == [("9000", "5"), ("10000", "5")]
    for row in points:
        mean, ci = float(row["observes.response.mean:mean"]), float(row["observes.response.mean:ci"])
        want = theory[int(row["mu"])]
        assert abs(mean - want) <= ci <= 0.03 * want, (row["mu"], mean, ci, want)
    runs = list(csv.DictReader(out.read_text().splitlines()))
    by = {(int(row["mu"]), int(row["seed"])): float(row["observes.response.mean"]) for row in runs}
    assert len(by) == 10
    slow = [by[9000, s] for s in range(1, 6)]
    fast = [by[10000, s] for s in range(1, 6)]
    # the same seed gives both speeds the same requests: the difference's variance over the seeds, against
    # the variance of a difference of two independent runs, var(slow) + var(fast)
    crn = statistics.variance([a - b for a, b in zip(slow, fast)])
    independent = statistics.variance(slow) + statistics.variance(fast)
    assert crn < independent / 10, (crn, independent)
    # the paired difference's 95 % CI covers the theory's difference, and is narrower than each point's
    diffs = [a - b for a, b in zip(slow, fast)]
    half = 2.7764451051977987 * math.sqrt(crn / 5)  # t(0.975, 4)
    assert abs(statistics.fmean(diffs) - (theory[9000] - theory[10000])) <= half
    assert half < min(float(row["observes.response.mean:ci"]) for row in points) / 3
    # the table printed by --show is the points table's
    shown = [line.split() for line in p.stdout.splitlines()[1:]]
    assert [s[0] for s in shown] == ["9000", "10000"]
    for s, row in zip(shown, points):
        assert float(s[2].split("±")[0]) == pytest.approx(float(row["observes.response.mean:mean"]), rel=1e-5)


# ---------------------------------------------------------------------------------------------------------
# prio_laws.sq: non-preemptive priority between two classes of different service laws


def test_priority_between_classes_of_different_service_laws_is_cobhams(monkeypatch):
    # W0 = (1 * 0.04 + 0.3 * 11.25) / 2 = 1.7075; W_hi = W0 / 0.8 = 2.1344, W_lo = W0 / (0.8 * 0.35) = 6.0982
    r = one("prio_laws.sq")  # on the tier serQ picks; both_tiers after it leaves the general tier set
    both_tiers(HERE / "prio_laws.sq", monkeypatch, horizon=3000)
    lam_hi, lam_lo = 1.0, 0.3
    ES2_hi, ES2_lo = 0.2**2, 1.5**2 * (1 + 4)
    rho_hi, rho_lo = lam_hi * 0.2, lam_lo * 1.5
    W0 = (lam_hi * ES2_hi + lam_lo * ES2_lo) / 2
    W_hi, W_lo = W0 / (1 - rho_hi), W0 / ((1 - rho_hi) * (1 - rho_hi - rho_lo))
    covers(r.stats("w_hi"), W_hi, 0.1)
    covers(r.stats("w_lo"), W_lo, 0.15)
    # the interactive requests wait ten times their service: behind a batch request in service
    assert W_hi > 10 * 0.2
    gpu = stage(r, "gpu")
    assert abs(gpu.utilisation - (rho_hi + rho_lo)) <= 0.01, gpu.utilisation
    # Kleinrock's conservation law: rho_hi W_hi + rho_lo W_lo is the FIFO queue's rho W0 / (1 - rho), whatever
    # the order; its CI from the two classes' (independent batches of different sessions, so the variances add)
    rho = rho_hi + rho_lo
    s_hi, s_lo = r.stats("w_hi"), r.stats("w_lo")
    mix = rho_hi * s_hi.mean + rho_lo * s_lo.mean
    ci = math.hypot(rho_hi * s_hi.ci, rho_lo * s_lo.ci)
    assert abs(mix - rho * W0 / (1 - rho)) <= ci, (mix, ci, rho * W0 / (1 - rho))


# ---------------------------------------------------------------------------------------------------------
# what a hold computed: its allocation until a growing run or a load moves its position, then the position
# (a load of nothing, an offload program's read of an empty tier, `load kv (cc)` with cc = 0, included)

LOAD = """
pool kv { cap 100; block 4; evict lru; admit via E; }
stage E : step { budget 64; cost 1; memory kv; }

workload { arrive renewal(~det(10)); }

session {
  hold kv (12) {
    BODY
  } cache (12);
  hold kv (12) reuse (12) {
    set c = cached;
  } cache (12);
  observe hit = c;
  end;
}

run { horizon 100; arrivals 1; seed 1; }
"""


@pytest.mark.parametrize("body, cached", [
    ("set x = 1;", 12),                       # no position advanced: the hold computed its allocation
    ("run E prefill (0) growing kv;", 12),    # a growing run of no work advances none
    ("load kv (0);", 0),                      # a load, of nothing too, makes the hold's position count: 0
    ("load kv (0); load kv (0);", 0),
    ("load kv (4);", 4),                      # a load of 4 reaches position 4: 4 computed
    ("load kv (0); load kv (5);", 4),         # 5 computed, rounded down to the block
    ("run E prefill (8) growing kv; load kv (0);", 8),
])
def test_what_a_hold_computed_is_its_position_once_a_load_ran(body, cached):
    # language.txt §3: at the body's end min(l, computed) stays cached, "computed is the allocation, or the
    # position a growing run or a load reached": a load of 0 tokens reached the position the hold had (0
    # here: it consumed nothing), as test_conformance_round12.py's re-executed hold that loads the 0 it
    # lacks caches its position; a growing run of no work completes at once (§3 Stages) and reaches none
    prog = serq_frontend.compile(source=LOAD.replace("BODY", body), sets={}, defs={})
    r = serq_sim.run(prog)
    assert r.observes["hit"].values.tolist() == [cached]


TWO_POOLS = """
pool kv { cap 100; block 4; evict lru; }
pool tier { cap 100; block 4; evict lru; }
stage gpu : delay;

workload { arrive renewal(~det(10)); }

session {
  hold kv (12), tier (12) {
    BODY
    run gpu (1);
  } cache (12);
  hold tier (12) reuse (12) {
    set c = cached;
  } cache (12);
  observe on_tier = c;
  hold kv (12) reuse (12) {
    set d = cached;
  } cache (12);
  observe on_kv = d;
  end;
}

run { horizon 100; arrivals 1; seed 1; }
"""


@pytest.mark.parametrize("body, kv, tier", [
    ("set x = 1;", 12, 12),        # nothing advanced: each pool computed its allocation
    ("load kv (0);", 0, 0),        # a load (of nothing too): each pool its position, 0
    ("load kv (4);", 4, 0),        # the hold advanced: each pool its position, tier's 0
    ("load tier (8);", 0, 8),
    ("load kv (4); load tier (8);", 4, 8),
])
def test_a_holds_advance_is_over_all_its_pools(body, kv, tier):
    # docs/language.md ("Only a growing run and a load advance a hold's position"): lib/vllm.sq's request
    # slots, held beside the KV whose prefill grows, cache nothing by this rule
    prog = serq_frontend.compile(source=TWO_POOLS.replace("BODY", body), sets={}, defs={})
    r = serq_sim.run(prog)
    assert (r.observes["on_kv"].values.tolist(), r.observes["on_tier"].values.tolist()) == ([kv], [tier])


def test_the_vllm_librarys_request_slots_cache_nothing():
    # lib/vllm.sq's hold of reqs (1) beside the KV: its release caches no unit on reqs, ever
    r = serq_sim.run(serq_frontend.compile(path=str(ROOT / "examples/multi-turn/vllm_chat.sq")), horizon=120, warmup=0)
    reqs = pool(r, "reqs")
    assert reqs.cached == 0 and reqs.evicted_units == 0 and reqs.admissions > 30
