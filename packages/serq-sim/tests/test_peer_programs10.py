"""Programs of a tenth round of users (peer_programs10/*.sq), of kinds the earlier rounds lack: a scale-to-zero
endpoint whose first request after an idle spell loads the model (M/G/1 with setup times, Welch's formula),
swept over the setup time and the rate with `serq sweep`; clients that retry after a 429 with a random
backoff (the M/M/1 retrial queue's orbit); users who balk at a crowded endpoint (discouraged arrivals,
whose number present is Poisson); interactive requests that preempt batch requests through a growth
(preemptive-resume priority, Cobham, on one GPU and on two), traced by hand and with its admissions
accounted for on a drained run; agents sharing an API key of c concurrent slots (Engset's loss system)
and the capacity search for c; a prefill GPU blocked by a full decode side (the two-station line with
blocking, its Markov chain solved here); M/G/1 written with a request slot, swept over the service law
(Pollaczek-Khinchine); an SLO study under `serq sweep --slo` (M/M/1's response law); a GPU lent to a
fine-tuning job whenever no request waits (M/G/1 with multiple vacations); resident LoRA adapters as an LRU
cache of slots (L / A under uniform demand, an LRU replayed over the requests' order under fixed thinks).
Programs that run on the fast tier run on the general engine too, which must agree byte for byte;
statistical checks fix their seeds and assert a 95 % CI that covers the theory and is narrow."""

from __future__ import annotations

import csv
import hashlib
import json
import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
import serq_sim.fast
from conform import both_tiers, covers, run
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve().parent / "peer_programs10"


def one(name: str, **kw):
    """A program that reads a gauge or grows a hold runs on the general engine only."""
    return serq_sim.run(serq_frontend.compile(str(HERE / name)), **kw)


def stage(r, name):
    return next(s for s in r.result.stages if s.name == name)


def pool(r, name):
    return next(p for p in r.result.pools if p.name == name)


def gauge_covers(g, theory: float, rel: float) -> None:
    assert abs(g.mean - theory) <= g.ci, (g.mean, g.ci, theory)
    assert g.ci <= rel * abs(theory), (g.ci, theory)


def welch(lam: float, S: float, d: float) -> tuple[float, float]:
    """M/M/1 with a fixed setup d when a request finds the system empty: (mean response, share of cold
    starts). Welch (1964): E[W] = lam E[S^2] / (2 (1 - rho)) + (2 E[U] + lam E[U^2]) / (2 (1 + lam E[U]))."""
    rho = lam * S
    wait = lam * 2 * S * S / (2 * (1 - rho)) + (2 * d + lam * d * d) / (2 * (1 + lam * d))
    return wait + S, (1 - rho) / (1 + lam * d)


# ---------------------------------------------------------------------------------------------------------
# coldstart.sq: scale to zero


def test_a_scale_to_zero_endpoint_is_mg1_with_setup_times(monkeypatch):
    # lam 0.5, S 1, d 4: E[W] = 1 + 4 * 4 / 6 = 3.6667, E[T] = 4.6667; cold starts (1 - 0.5) / 3 = 1/6.
    assert serq_sim.fast.tier(serq_frontend.compile(str(HERE / "coldstart.sq"))) == "fast"
    r = both_tiers(HERE / "coldstart.sq", monkeypatch, horizon=60000)
    T, cold = welch(0.5, 1, 4)
    assert abs(T - 14 / 3) < 1e-12 and abs(cold - 1 / 6) < 1e-12
    covers(r.stats("response"), T, 0.02)
    covers(r.stats("cold"), cold, 0.03)
    res = r.result
    setup, svc, gpu = stage(r, "setup"), stage(r, "svc"), pool(r, "gpu")
    # every cold request ran the setup once, of exactly d; every request was served once
    assert setup.service == 4.0
    assert abs(setup.completions - round(r.stats("cold").mean * r.stats("cold").count)) <= 1  # the warm-up's edge
    assert svc.completions == r.stats("response").count
    assert 0 <= svc.completions - gpu.admissions <= 1  # one in service at the warm-up's end
    # the GPU is held while setting up or serving: rho + (1 - rho) lam d / (1 + lam d) = 5/6, as the two
    # stages' utilisations add up to; the wait the pool reports is the observe's
    assert math.isclose(gpu.holders, setup.utilisation + svc.utilisation, rel_tol=1e-9)
    assert abs(gpu.holders - 5 / 6) < 0.01
    assert math.isclose(gpu.wait, r.stats("wait").mean, rel_tol=1e-9)
    # the model's wait counts the setup before the first service: wait at the pool + d per cold start
    assert math.isclose(r.stats("wait").mean + 4 * r.stats("cold").mean + svc.service,
                        r.stats("response").mean, rel_tol=2e-3)
    # Little's law on the report's own figures: the sessions present, and those waiting for the GPU
    assert math.isclose(res.mean_live, svc.throughput * r.stats("response").mean, rel_tol=5e-3)
    assert math.isclose(gpu.queue, svc.throughput * gpu.wait, rel_tol=5e-3)


def test_a_sweep_over_the_setup_time_and_the_rate_covers_welch_at_every_point(tmp_path, serq):
    # d = 0 is plain M/M/1 (a run of zero work completes at once): E[T] = 1 / (1 - lam), cold = 1 - lam.
    out = tmp_path / "sw.csv"
    p = serq("sweep", str(HERE / "coldstart.sq"), "--set", "d=0,2,8", "--set", "lam=0.3,0.6", "--seeds", "1..4",
             "--horizon", "20000", "--warmup", "200", "--workers", "0", "--no-progress", "--out", str(out),
             "--show", "observes.response.mean")
    assert p.returncode == 0, p.stderr
    points = list(csv.DictReader((tmp_path / "sw.points.csv").read_text().splitlines()))
    assert sorted((float(r["d"]), float(r["lam"])) for r in points) == [
        (d, lam) for d in (0.0, 2.0, 8.0) for lam in (0.3, 0.6)]
    for row in points:
        T, cold = welch(float(row["lam"]), 1, float(row["d"]))
        assert row["runs"] == "4"
        for fig, theory, rel in (("observes.response.mean", T, 0.06), ("observes.cold.mean", cold, 0.06)):
            mean, ci = float(row[f"{fig}:mean"]), float(row[f"{fig}:ci"])
            assert abs(mean - theory) <= ci <= rel * theory, (row["d"], row["lam"], fig, mean, ci, theory)
    runs = list(csv.DictReader(out.read_text().splitlines()))
    assert len(runs) == 24
    # each run's figures obey Little's law at the pool on their own
    for row in runs:
        assert math.isclose(float(row["pools.gpu.queue"]),
                            float(row["stages.svc.throughput"]) * float(row["pools.gpu.wait"]), rel_tol=0.03)


# ---------------------------------------------------------------------------------------------------------
# retrial.sq: retries after a 429


def test_retries_after_a_429_are_the_mm1_retrial_queue():
    # lam 0.6, mu 1, theta 0.5: E[N] = 0.6 (0.6 + 1.2) / 0.4 = 2.7 in the orbit, 4.5 s there per client,
    # 2.25 retries each; the GPU busy 0.6 of the time.
    r = one("retrial.sq", horizon=50000, warmup=500)
    lam, theta, rho = 0.6, 0.5, 0.6
    N = rho * (rho + lam / theta) / (1 - rho)
    assert abs(N - 2.7) < 1e-12
    gauge_covers(r.result.gauges["orbit"], N, 0.08)
    covers(r.stats("orbit_time"), N / lam, 0.08)
    covers(r.stats("retries"), theta * N / lam, 0.08)
    covers(r.stats("response"), N / lam + 1, 0.08)
    svc, backoff, gpu = stage(r, "svc"), stage(r, "backoff"), pool(r, "gpu")
    assert abs(svc.utilisation - rho) < 0.01
    assert gpu.wait == 0 and gpu.queue == 0 and gpu.rejections == 0  # nobody ever waits for the GPU
    # the orbit the gauge watches is the backoff stage's population, and Little's law holds there
    assert math.isclose(r.result.gauges["orbit"].mean, backoff.present, rel_tol=1e-9)
    assert math.isclose(backoff.present, backoff.throughput * backoff.service, rel_tol=0.01)
    # every retry is one backoff: the backoffs are the retries the clients counted (up to the runs in flight)
    retries = r.stats("retries")
    assert abs(backoff.completions - retries.mean * retries.count) <= 40


# ---------------------------------------------------------------------------------------------------------
# discouraged.sq: balking


def test_discouraged_arrivals_make_the_number_present_poisson():
    # lam 3, mu 2: rho 1.5 (beyond 1, yet stable); idle e^-1.5 = 0.2231, throughput 2 (1 - e^-1.5) = 1.5537.
    r = one("discouraged.sq", horizon=30000, warmup=300)
    lam, mu = 3, 2
    rho = lam / mu
    busy = 1 - math.exp(-rho)
    gauge_covers(r.result.gauges["present"], rho, 0.02)
    covers(r.stats("stayed"), mu * busy / lam, 0.02)
    covers(r.stats("response"), rho / (mu * busy), 0.02)
    svc, gpu = stage(r, "svc"), pool(r, "gpu")
    assert abs(svc.utilisation - busy) < 0.01
    assert abs(svc.throughput - mu * busy) < 0.02
    # the gauge is the pool's holders and queue; the mean live sessions are those present (the balkers end
    # at once), and Little's law ties them to the served requests' response
    g = r.result.gauges["present"]
    assert math.isclose(g.mean, gpu.holders + gpu.queue, rel_tol=1e-9)
    assert math.isclose(r.result.mean_live, g.mean, rel_tol=1e-9)
    assert math.isclose(g.mean, svc.throughput * r.stats("response").mean, rel_tol=0.01)
    # (a request admitted in the warm-up and done after it is a completion, not an admission)
    assert svc.completions == r.stats("response").count
    assert 0 <= svc.completions - gpu.admissions <= 1


# ---------------------------------------------------------------------------------------------------------
# preempt_prio.sq: preemptive priority through a growth


def test_interactive_requests_preempting_batch_ones_are_cobhams_preemptive_priority():
    # lam1 0.3, lam2 0.4, mu 1: E[T1] = 1 / 0.7 = 1.4286, E[T2] = 1 / (0.7 * 0.3) = 4.7619 (FIFO: 3.3333)
    r = one("preempt_prio.sq", horizon=60000, warmup=600)
    covers(r.stats("t_hi"), 1 / 0.7, 0.03)
    covers(r.stats("t_lo"), 1 / (0.7 * 0.3), 0.1)
    gpu = pool(r, "gpu")
    # a batch request is preempted at least by every interactive arrival that finds it in service (PASTA:
    # lam1 rho2 a second), more by those admitted at the instant an interactive one leaves
    assert gpu.preemptions / 59400 > 0.3 * 0.4 * 0.9
    assert 0 < gpu.stuck <= gpu.preemptions
    # the restarted batch requests are the model, not a cycle: the stuck column counts them, the stuck warning
    # (kept for a sign of no progress, docs/simulator.md) does not fire
    assert not any("stuck" in n for n in r.result.notes)


def test_a_drained_run_of_the_priority_classes_accounts_for_every_admission():
    # 3 000 requests, no warm-up, to the last: each is served once; each interactive request is admitted
    # once on each pool (it is never a victim: its key is the greater); a batch request once and again at
    # each preemption
    r = one("preempt_prio.sq", arrivals=3000, warmup=0, horizon=math.inf)
    res = r.result
    assert res.arrivals == res.ended == 3000
    svc, hi, gpu = stage(r, "svc"), pool(r, "hi_slot"), pool(r, "gpu")
    n_hi, n_lo = r.stats("t_hi").count, r.stats("t_lo").count
    assert n_hi + n_lo == svc.completions == 3000
    assert hi.admissions == n_hi and hi.preemptions == 0
    assert gpu.admissions == 3000 + gpu.preemptions
    assert gpu.preemptions > 0 and gpu.over_cap == 0
    assert abs(n_hi / 3000 - 0.3 / 0.7) < 0.03


# ---------------------------------------------------------------------------------------------------------
# engset.sq: a finite population of agents on c concurrent slots


def engset(N: int, c: int, beta: float) -> tuple[float, float, float]:
    """(call congestion, time congestion, mean busy slots) of Engset's loss system."""
    p = [math.comb(N, k) * beta ** k for k in range(c + 1)]
    q = [math.comb(N - 1, k) * beta ** k for k in range(c + 1)]
    return q[c] / sum(q), p[c] / sum(p), sum(k * x for k, x in enumerate(p)) / sum(p)


def test_agents_sharing_c_concurrent_slots_are_engsets_loss_system():
    # N 12, c 4, beta 2 / 10: B = 0.528 / 7.248 = 0.072848, mean busy 16.128 / 8.592 = 1.877095, whatever
    # the service law (hyperexponential here)
    r = one("engset.sq", horizon=40000, warmup=400)
    B, E, busy = engset(12, 4, 0.2)
    assert abs(B - 0.528 / 7.248) < 1e-12 and abs(busy - 16.128 / 8.592) < 1e-12
    covers(r.stats("refused"), B, 0.07)
    gauge_covers(r.result.gauges["busy_slots"], busy, 0.02)
    think, llm, api = stage(r, "think"), stage(r, "llm"), pool(r, "api")
    # every think ends in a call, refused or served: the calls are the thinks, the admissions the calls
    # not refused
    refused = r.stats("refused")
    assert refused.count == think.completions
    assert abs(api.admissions - round((1 - refused.mean) * refused.count)) <= 1
    assert api.rejections == 0 and api.queue == 0  # a refused call never joins the queue
    # the agents are thinking or on a slot: N = present at think + present at llm (Little at each stage)
    assert math.isclose(think.present + llm.present, 12, rel_tol=1e-9)
    assert math.isclose(llm.present, llm.throughput * llm.service, rel_tol=0.01)
    # an idle agent calls at 1 / Z: the calls come at (N - busy) / Z, a share 1 - B of them served
    assert math.isclose(think.throughput, (12 - busy) / 10, rel_tol=0.01)


# ---------------------------------------------------------------------------------------------------------
# blocking.sq: prefill blocked by a full decode side


def blocking_line(mu1: float, mu2: float, B: int) -> tuple[float, float]:
    """The saturated two-station line with room for B + 1 requests after the first station, blocking after
    service: (throughput, share of time the first station is blocked), from its Markov chain. States
    (k, blocked): k requests past the first station, 0 … B + 1; blocked only at k = B + 1."""
    import numpy as np

    states = [(k, 0) for k in range(B + 2)] + [(B + 1, 1)]
    index = {s: i for i, s in enumerate(states)}
    Q = np.zeros((len(states), len(states)))
    for (k, b), i in index.items():
        if not b:  # the first station works
            Q[i, index[(k + 1, 0)] if k < B + 1 else index[(B + 1, 1)]] += mu1
        if k > 0:  # the second station serves; a blocked request moves in behind it
            Q[i, index[(k - 1, 0)] if not b else index[(B + 1, 0)]] += mu2
    Q -= np.diag(Q.sum(axis=1))
    A = np.vstack([Q.T, np.ones(len(states))])
    pi = np.linalg.lstsq(A, np.r_[np.zeros(len(states)), 1.0], rcond=None)[0]
    X = mu2 * sum(p for (k, _), p in zip(states, pi) if k > 0)
    return X, pi[index[(B + 1, 1)]]


def test_a_prefill_gpu_blocked_by_a_full_decode_side_is_the_two_station_line():
    # the chain's known case first: equal rates give mu (B + 2) / (B + 3)
    for B in range(4):
        assert math.isclose(blocking_line(1, 1, B)[0], (B + 2) / (B + 3), rel_tol=1e-9)
    r = one("blocking.sq", horizon=40000, warmup=400)
    X, blocked = blocking_line(1, 1.25, 1)
    prefill, decode, pre, post = stage(r, "prefill"), stage(r, "decode"), pool(r, "pre"), pool(r, "post")
    assert abs(decode.throughput - X) < 0.01 * X
    # the prefill GPU is never idle: it works or is blocked, and the blocked request is the one waiting at
    # the decode side's door
    assert pre.holders == 1.0
    assert abs(1 - prefill.utilisation - blocked) < 0.01
    assert math.isclose(post.queue, 1 - prefill.utilisation, rel_tol=1e-6)
    # Little: the blocked time a request waits at the door, and the N clients' cycle
    assert math.isclose(post.queue, decode.throughput * r.stats("blocked").mean, rel_tol=0.01)
    assert math.isclose(8, decode.throughput * r.stats("response").mean, rel_tol=0.01)
    assert prefill.completions == decode.completions == post.admissions == r.stats("response").count


def test_the_fewest_slots_keeping_refusals_under_one_percent_is_engsets(tmp_path, serq):
    # Engset's call congestion at N 12, beta 0.2: c = 5 refuses 0.0200, c = 6 0.0040: the search over whole
    # slots lands on 6
    assert engset(12, 5, 0.2)[0] > 0.01 > engset(12, 6, 0.2)[0]
    p = serq("sweep", str(HERE / "engset.sq"), "--find", "observes.refused.mean <= 0.01", "--over", "c", "1:12:1",
             "--seeds", "1..2", "--horizon", "5000", "--warmup", "100", "--workers", "0", "--no-progress")
    assert p.returncode == 0, p.stderr
    head, row = p.stdout.splitlines()[:2]
    assert head.split() == ["c", "outcome", "holds", "fails", "evaluations", "observes.refused.mean:mean"]
    assert row.split()[:3] == ["6", "found_smallest", "6"] and row.split()[3] == "5", p.stdout
    # the condition's figure at the value found (its mean over the seeds): under 0.01, as Engset's 0.0040 is
    assert float(row.split()[5]) <= 0.01


# ---------------------------------------------------------------------------------------------------------
# pk_pool.sq: M/G/1 written with a pool, swept over the service law


def test_a_sweep_over_the_service_law_covers_pollaczek_khinchine(tmp_path, serq):
    # lam 0.7, E[S] 1: E[W] = 0.7 (1 + cv2) / 0.6 for cv2 = 0 (det), 1/4 (Erlang 4), 1 (exp), 4 (h2)
    out = tmp_path / "pk.csv"
    laws = {"~det(1)": 0.0, "~erlang(4, 1)": 0.25, "~exp(1)": 1.0, "~h2(1, 4)": 4.0}
    defs = [a for law in laws for a in ("--def", f"service={law}")]
    p = serq("sweep", str(HERE / "pk_pool.sq"), *defs, "--seeds", "1..4", "--horizon", "20000", "--warmup", "200",
             "--workers", "0", "--no-progress", "--out", str(out))
    assert p.returncode == 0, p.stderr
    points = list(csv.DictReader((tmp_path / "pk.points.csv").read_text().splitlines()))
    assert sorted(row["service"] for row in points) == sorted(laws)
    for row in points:
        wait = 0.7 * (1 + laws[row["service"]]) / (2 * 0.3)
        mean, ci = float(row["observes.wait.mean:mean"]), float(row["observes.wait.mean:ci"])
        assert abs(mean - wait) <= ci <= 0.1 * wait, (row["service"], mean, ci, wait)
        used, ci = float(row["pools.slot.used:mean"]), float(row["pools.slot.used:ci"])
        assert abs(used - 0.7) <= ci <= 0.03, (row["service"], used, ci)
    # Little at the slot's queue, run by run
    for row in csv.DictReader(out.read_text().splitlines()):
        assert math.isclose(float(row["pools.slot.queue"]),
                            float(row["stages.gpu.throughput"]) * float(row["pools.slot.wait"]), rel_tol=0.03)


HAND_PRIO = """
pool hi_slot { cap 1; }
pool gpu { cap 1; queue by (1 - hi); preempt by (hi) requeue head; }
stage svc : fifo;

workload {
  arrive renewal(1);
  init {
    set hi = serial % 2;
    set w = serial == 0 ? 5 : serial == 2 ? 1 : 2;
  }
}

session {
  set t0 = now;
  branch (hi) {
    hold hi_slot (1) {
      hold gpu (0) {
        grow gpu (1);
        run svc (w);
      }
    }
  } else {
    hold gpu (1) {
      run svc (w);
    }
  }
  observe response = now - t0;
  end;
}

run { arrivals 4; horizon inf; seed 1; }
"""


def test_preemptive_priority_traced_by_hand(monkeypatch):
    # Arrivals at 1, 2, 3, 4: batch 0 (work 5), interactive 1 (2), batch 2 (1), interactive 3 (2).
    # 1: batch 0 starts. 2: interactive 1 joins at 0 units, grows, preempts batch 0 (back to the head).
    # 3: batch 2 queues behind it. 4: interactive 1 ends (its end was scheduled before the arrival of 3),
    # batch 0 is admitted again and starts over; interactive 3 arrives, goes ahead of batch 2 in the queue
    # and preempts batch 0 a second time (at position 0 again: stuck). 6: interactive 3 ends, batch 0 starts
    # over and ends at 11; batch 2 at 12.
    r, obs = run(HAND_PRIO, monkeypatch)
    assert obs["response"] == [(1, 4, 2), (3, 6, 2), (0, 11, 10), (2, 12, 9)]
    gpu = next(p for p in r.result.pools if p.name == "gpu")
    assert (gpu.admissions, gpu.preemptions, gpu.stuck) == (6, 2, 1)


# ---------------------------------------------------------------------------------------------------------
# slo_mm1.sq: an SLO study over a sweep (serq sweep --slo)

SLO = HERE / "slo_mm1.sq"


def test_a_sweep_under_an_slo_gives_every_run_its_goodput(tmp_path, serq):
    # M/M/1, mu 1: the response is exp(1 - lam), so the goodput under ttft <= 2 is lam (1 - e^(-2 (1 - lam))):
    # 0.22602 at 0.3, 0.33040 at 0.6, 0.26374 at 0.8 (it rises, then falls as the queue grows)
    out = tmp_path / "slo.csv"
    args = ["sweep", str(SLO), "--set", "lam=0.3,0.6,0.8", "--seeds", "1..4", "--horizon", "10000", "--warmup",
            "100", "--workers", "0", "--no-progress", "--out", str(out)]
    p = serq(*args, "--slo", "ttft=2", "--show", "requests.goodput")
    assert p.returncode == 0, p.stderr
    points = list(csv.DictReader((tmp_path / "slo.points.csv").read_text().splitlines()))
    for row in points:
        lam = float(row["lam"])
        theory = lam * (1 - math.exp(-2 * (1 - lam)))
        mean, ci = float(row["requests.goodput:mean"]), float(row["requests.goodput:ci"])
        assert abs(mean - theory) <= ci <= 0.06 * theory, (lam, mean, ci, theory)
    for row in csv.DictReader(out.read_text().splitlines()):  # a run's goodput: its good requests a second
        assert row["requests.slo.ttft"] == "2.0"
        assert math.isclose(float(row["requests.goodput"]), float(row["requests.good"]) / 9900, rel_tol=1e-12)
        assert 0 < float(row["requests.good"]) <= float(row["requests.completed"])


def test_the_slo_is_part_of_a_runs_key(tmp_path, serq):
    # the same SLO (in any order) resumes every run; another runs them all again, and no SLO is the key of
    # before
    out = tmp_path / "k.csv"
    args = ["sweep", str(SLO), "--set", "lam=0.6", "--seeds", "1..2", "--horizon", "500", "--warmup", "10",
            "--workers", "0", "--no-progress", "--out", str(out)]

    def keys():
        return [r["key"] for r in csv.DictReader(out.read_text().splitlines())]

    for slo, now in (("ttft=2,tpot=1", 2), ("tpot=1,ttft=2", 0), ("ttft=1,tpot=1", 2)):
        p = serq(*args, "--slo", slo)
        assert p.returncode == 0 and f"({now} run now, {2 - now} resumed)" in p.stderr, (slo, p.stderr)
        if slo == "ttft=2,tpot=1":
            first = keys()
    assert not set(first) & set(keys())
    import serq_sweep.core as core

    plan = core.plan([str(SLO)], sets={"lam": 0.6}, seeds=[1], horizon=500, warmup=10)
    assert plan.limits == {} and core.plan([str(SLO)], sets={"lam": 0.6}, seeds=[1], horizon=500, warmup=10,
                                           slo={"ttft": 2}).limits == {"slo": {"ttft": 2.0}}
    text = json.dumps([plan.points[0].ir_hash, 1, []])
    assert plan.key(plan.points[0], 1) == hashlib.sha256(text.encode()).hexdigest()[:24]


def test_serq_run_and_serq_sweep_give_one_goodput(tmp_path, serq):
    # the sweep's run of a point and seed is serq run's of that program and seed under the same SLO
    p = serq("sweep", str(SLO), "--set", "lam=0.6", "--seeds", "3", "--horizon", "4000", "--warmup", "100",
             "--workers", "0", "--no-progress", "--slo", "tpot=0.1,ttft=1.5")
    assert p.returncode == 0, p.stderr
    row = next(csv.DictReader(p.stdout.splitlines()))
    r = serq("run", str(SLO), "--set", "lam=0.6", "--seed", "3", "--horizon", "4000", "--warmup", "100",
             "--no-progress", "--slo", "ttft=1.5,tpot=0.1", "--json")
    assert r.returncode == 0, r.stderr
    req = json.loads(r.stdout)["requests"]
    assert int(row["requests.good"]) == req["good"] > 0
    assert float(row["requests.goodput"]) == req["goodput"]


def test_goodput_without_an_slo_or_an_slo_without_requests_is_refused_before_any_run(serq):
    base = ["--seeds", "1..2", "--horizon", "1000", "--warmup", "10", "--workers", "0", "--no-progress"]
    for args in (["sweep", str(SLO), "--set", "lam=0.3,0.6", "--show", "requests.goodput"],
                 ["sweep", str(SLO), "--find", "requests.goodput >= 0.2", "--over", "lam", "0.1:0.9"],
                 ["compare", str(SLO), "--set", "lam=0.3,0.6", "--figure", "good"]):
        p = serq(*args, *base)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "counts the requests that meet an SLO, which the runs are given with --slo" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
    # a program that records no requests has no goodput to give
    for args in (["sweep", str(HERE / "pk_pool.sq"), "--set", "lam=0.3,0.6"],
                 ["sweep", str(HERE / "pk_pool.sq"), "--find", "observes.wait.mean <= 1", "--over", "lam", "0.1:0.9"],
                 ["compare", str(HERE / "pk_pool.sq"), "--set", "lam=0.3,0.6"]):
        p = serq(*args, *base, "--slo", "ttft=1")
        assert p.returncode == 1, (args, p.stderr)
        assert p.stderr.startswith(f"error: {HERE / 'pk_pool.sq'}: --slo: the program records no requests"), p.stderr
    # the figures the SLO itself adds are known before the runs, as the runs have them
    p = serq("sweep", str(SLO), *base, "--slo", "ttft=1.5", "--show", "requests.slo.ttft")
    assert p.returncode == 0, p.stderr
    assert [line.split() for line in p.stdout.splitlines()] == [["runs", "requests.slo.ttft"], ["2", "1.5±0"]]
    # an SLO of no metric is a usage error naming the option, as serq run's
    p = serq("sweep", str(SLO), *base, "--slo", "ttf=1")
    assert p.returncode == 2 and "invalid value for '--slo': 'ttf=1'" in p.stderr and "did you mean `ttft`" in p.stderr


# ---------------------------------------------------------------------------------------------------------
# preempt_mmc.sq: preemptive priority on c GPUs


def erlang_c(c: int, a: float) -> float:
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def mmc_present(c: int, a: float) -> float:
    """M/M/c's mean number present at offered load a."""
    return a + erlang_c(c, a) * a / (c - a)


def test_preemptive_priority_on_two_gpus_is_mmc_for_each_class_and_for_both():
    # c 2, lam1 0.6, lam2 0.8, mu 1: L(1.4) = 2.745098, L(0.6) = 0.659341; E[T1] = 1.098901,
    # E[T2] = (2.745098 - 0.659341) / 0.8 = 2.607197
    r = one("preempt_mmc.sq", horizon=40000, warmup=400)
    L, L1 = mmc_present(2, 1.4), mmc_present(2, 0.6)
    assert abs(L - 2.745098039) < 1e-8 and abs(L1 / 0.6 - 1.098901099) < 1e-8
    covers(r.stats("t_hi"), L1 / 0.6, 0.03)
    covers(r.stats("t_lo"), (L - L1) / 0.8, 0.08)
    assert abs(r.result.mean_live - L) < 0.05 * L  # the requests present, both classes: M/M/c's
    svc, gpu = stage(r, "svc"), pool(r, "gpu")
    assert math.isclose(gpu.used, svc.present, rel_tol=1e-9)  # a request on the GPUs holds one unit
    assert abs(svc.present - 1.4) < 0.03  # the GPUs busy: the offered load
    assert gpu.preemptions > 0


# ---------------------------------------------------------------------------------------------------------
# vacation.sq: a GPU lent to a fine-tuning job whenever no request waits


@pytest.mark.parametrize(("slice_", "residual"), [("V", 1.0), ("~exp(2)", 2.0)])
def test_a_gpu_lent_to_a_background_job_is_mg1_with_multiple_vacations(monkeypatch, slice_, residual):
    # lam 0.5, S 1: E[W] = 1 + E[V^2] / (2 E[V]): 2 for slices of 2, 3 for exponential slices of mean 2
    prog = serq_frontend.compile(str(HERE / "vacation.sq"), defs={"slice": slice_})
    assert serq_sim.fast.tier(prog) == "fast"
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    r = serq_sim.run(prog, horizon=40000, warmup=400)
    if slice_ == "V":  # the general engine gives the same bytes (once: the tiers' agreement is not the law's)
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
        assert encode_json(serq_sim.run(prog, horizon=40000, warmup=400)) == encode_json(r)
    wait = r.stats("wait")
    covers(wait, 1 + residual, 0.05)
    svc, gpu = stage(r, "svc"), pool(r, "gpu")
    assert svc.utilisation == 1.0 and gpu.holders == 1.0  # the GPU never idles: a request or the job
    # the job's slices (of mean 2) take what the requests leave, 1 - rho; the requests are served at lam
    slices = svc.completions - wait.count
    assert abs(slices * 2 / 39600 - 0.5) < 0.02
    assert abs(wait.count / 39600 - 0.5) < 0.01
    # the pool's queue: the requests waiting (Little: lam E[W]) and the job waiting while one is served (rho)
    assert abs(gpu.queue - (0.5 * wait.mean + 0.5)) < 0.02


# ---------------------------------------------------------------------------------------------------------
# lora.sq: resident LoRA adapters, an LRU cache of adapter slots


def test_resident_lora_adapters_under_uniform_demand_hit_l_over_a():
    # A 5 adapters, L 2 slots: each request's adapter is uniform and independent of the past, so it is among
    # the 2 most recent with probability 2 / 5; every miss with the slots full evicts exactly one adapter
    r = one("lora.sq", horizon=10000)
    hit = r.stats("hit")
    covers(hit, 2 / 5, 0.02)
    lora = pool(r, "lora")
    misses = round(hit.count * (1 - hit.mean))
    assert lora.evicted_entries == lora.evicted_units == misses
    assert lora.admissions == hit.count and lora.cached == 2 and lora.used == 0


def test_resident_lora_adapters_under_fixed_thinks_are_the_lrus_of_the_request_order(monkeypatch):
    # tenant i asks every 1 + 0.37 i seconds (no two requests at one instant before 50): the hits are an LRU
    # of 2 slots replayed over the requests in time order, computed here from the times alone
    think = [1 + 0.37 * i for i in range(5)]
    reqs = []
    for i, d in enumerate(think):
        t = 0.0
        while True:
            t += d  # (as the run adds each think to the clock)
            if t > 50:
                break
            reqs.append((t, i))
    reqs.sort()
    assert min(b[0] - a[0] for a, b in zip(reqs, reqs[1:])) > 1e-6  # no ties: the order is the times'
    lru: list[int] = []
    expected = []
    for t, i in reqs:
        expected.append((i, t, 1.0 if i in lru else 0.0))
        if i in lru:
            lru.remove(i)
        lru.append(i)
        del lru[:-2]
    path = HERE / "lora.sq"
    prog = serq_frontend.compile(str(path), defs={"think": "1 + 0.37 * serial"})
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        rep = serq_sim.run(prog, horizon=50, warmup=0)
        o = rep.observe("hit")
        out.append([(int(s), float(t), float(v)) for s, t, v in zip(o.sessions, o.times, o.values)])
    assert out[0] == out[1]
    got = out[1]
    assert [(s, v) for s, _, v in got] == [(i, v) for i, _, v in expected]
    assert all(math.isclose(a[1], b[1], rel_tol=1e-12) for a, b in zip(got, expected))
    assert 0 < sum(v for *_, v in expected) < len(expected)  # some hits, some misses


def test_when_every_run_fails_show_and_compare_say_why(serq, tmp_path):
    # 1 000 arrivals asked for by a horizon of 50 at 0.5 a second: every run is the program's error; --show
    # and --figure said "no figure 'requests.ttft.mean' in the results" (status 1) in place of it
    base = ["--set", "lam=0.3,0.5", "--seeds", "1..2", "--arrivals", "1000", "--horizon", "50", "--warmup", "0",
            "--workers", "0", "--no-progress"]
    for args in (["sweep", str(SLO), *base, "--show", "requests.ttft.mean", "--out", str(tmp_path / "t.csv")],
                 ["compare", str(SLO), *base, "--figure", "requests.ttft.mean"],
                 ["compare", str(SLO), *base]):
        p = serq(*args)
        assert p.returncode == 1, (args, p.stderr)
        lines = p.stderr.splitlines()
        i = lines.index("error: 4 run(s) failed; the first:")
        assert "error: at t=50: --arrivals 1000: only " in lines[i + 1], p.stderr
        assert "no figure" not in p.stderr
    assert len((tmp_path / "t.csv").read_text().splitlines()) == 5  # the table is written all the same
    # and serq plot of its tables says that every run failed, not that the figure is none of theirs
    for table in ("t.csv", "t.points.csv"):
        p = serq("plot", str(tmp_path / table), "--x", "lam", "--y", "requests.ttft.mean", "-o",
                 str(tmp_path / "t.svg"))
        assert p.returncode == 1
        assert p.stderr == "error: no rows to plot: the table is empty or every run in it failed\n", p.stderr
