"""More conformance cases computed by hand, where test_conformance_hand.py leaves the rules thin: the
report's figures (a stage's present, utilisation, throughput, wait and service; a pool's time averages,
wait and counts; the run's arrivals, ended, turns and mean live) under a warm-up, the observables of
language.txt §2 read at a known instant, the serving metrics of a record table against vLLM's benchmark
definitions, closed workloads with think times and turns, the stages' online estimates, spills, gauges
over families, and the command line's outputs and overrides. Each program runs on the tier serQ picks
and on the general engine (SERQ_SIM_TIER=general), which must agree; every expected value is worked out
in the comment above it."""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from conform import close, run
from serq_report.json import encode_json

# --- the report's stage figures ---------------------------------------------------------------------------


def test_stage_figures_of_fifo_ps_and_delay_after_a_warm_up(monkeypatch):
    # §3 Statistics, per stage: time-average present, utilisation, throughput, mean wait and service.
    # Works 1, 2, 3 on fifo(2) at 0: s0 [0,1], s1 [0,2], s2 waits until 1, [1,4]. Then ps(1) with work 2
    # each, arriving at 1, 2, 4: s0 alone to 2 (1 left), s0 and s1 at 1/2: s0 done at 4 (s1 has 1
    # left), s1 and s2 at 1/2: s1 done at 6 (s2 has 1 left), s2 alone: 7. Then delay (1): s0 [4,5],
    # s1 [6,7], s2 [7,8]. Over [1.5, 20] (18.5 s):
    #   f: present 3 on [0,1), 2 on [1,2), 1 on [2,4): 0.5*2 + 2*1 = 3; utilisation (busy servers / 2)
    #      1 on [0,2), 1/2 on [2,4): 0.5 + 1 = 1.5; completions at or after 1.5: s1 (2), s2 (4); wait of
    #      those (0, 1), service (2, 3).
    #   p: present 1 on [1,2), 2 on [2,6), 1 on [6,7): 0.5 + 8 + 1 = 9.5; utilisation (non-empty)
    #      [1.5, 7): 5.5; 3 completions; wait 0; service 3, 4, 3.
    #   d: present = utilisation = 3; 3 completions; wait 0; service 1.
    #   live sessions: 3 on [0,5), 2 on [5,7), 1 on [7,8): 3*3.5 + 2*2 + 1 = 15.5.
    r, _ = run("""
stage f : fifo(2);
stage p : ps(1);
stage d : delay;
workload { arrive batch(3); }
session { run f (serial + 1); run p (2); run d (1); }
run { horizon 20; warmup 1.5; }
""", monkeypatch)
    T = 18.5
    want = {"f": (3 / T, 1.5 / T, 2, 2 / T, 0.5, 2.5),
            "p": (9.5 / T, 5.5 / T, 3, 3 / T, 0.0, 10 / 3),
            "d": (3 / T, 3 / T, 3, 3 / T, 0.0, 1.0)}
    for name, (present, util, n, thr, wait, service) in want.items():
        st = r.stage(name)
        got = (st.present, st.utilisation, st.completions, st.throughput, st.wait, st.service)
        assert all(close(a, b) for a, b in zip(got, (present, util, n, thr, wait, service))), (name, got)
    res = r.result
    assert (res.arrivals, res.ended, res.turns, res.end) == (3, 3, 0, 20.0)
    assert close(res.mean_live, 15.5 / T)


# --- observables at a known instant, and the pool's figures -----------------------------------------------

POOLS = """
pool m { cap 10; block 4; }
pool n { cap 5; }
stage f : fifo(2);
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    hold m (3) { run f (4); } cache (serial < 2 ? 4 : 0);
    observe own = cachedin(m);
    run d (0.5);
    observe own_later = cachedin(m);
  } else {
    run d (1);
    observe used = used(m);
    observe free = free(m);
    observe holders = holders(m);
    observe queued = queued(m);
    observe queue = queue(f);
    observe busy = busy(f);
    observe work = work(f);
    observe bs = blocksize(m);
    observe bs1 = blocksize(n);
    observe mine = cachedin(m);
  }
}
run { horizon 10; WARMUP }
"""


def test_observables_of_pools_and_stages_at_an_instant(monkeypatch):
    # §2 observables. block 4: s0, s1 hold 3 -> 4 each (8 used); s2's 4 more would be 12 > 10, it waits.
    # At 1 the observer s3 reads used 8, free 2, holders 2, queued 1; fifo(2) f: queue (present) 2, busy
    # (servers at work) 2, work (what is left) 3 + 3; blocksize 4, and 1 for a pool without block; its own
    # cached prefix 0. At 4 s0's run ends first (scheduled first): its hold caches min(4, allocation 4) = 4
    # and it reads cachedin 4; the settle then admits s2 (4 used + 4 + 4 cached > 10: s0's entry, the only
    # one, is evicted). s1 then releases and caches 4 (4 + 4 <= 10) and reads 4. At 4.5 s0's is gone (0),
    # s1's still there (4). s2 caches nothing (cache (0)).
    _, o = run(POOLS.replace("WARMUP", ""), monkeypatch)
    one = {k: o[k] for k in ("used", "free", "holders", "queued", "queue", "busy", "work", "bs", "bs1", "mine")}
    assert one == {"used": [(3, 1.0, 8.0)], "free": [(3, 1.0, 2.0)], "holders": [(3, 1.0, 2.0)],
                   "queued": [(3, 1.0, 1.0)], "queue": [(3, 1.0, 2.0)], "busy": [(3, 1.0, 2.0)],
                   "work": [(3, 1.0, 6.0)], "bs": [(3, 1.0, 4.0)], "bs1": [(3, 1.0, 1.0)],
                   "mine": [(3, 1.0, 0.0)]}
    assert o["own"] == [(0, 4.0, 4.0), (1, 4.0, 4.0), (2, 8.0, 0.0)]
    assert o["own_later"] == [(0, 4.5, 0.0), (1, 4.5, 4.0), (2, 8.5, 0.0)]


@pytest.mark.parametrize("warmup", [0.0, 2.0, 5.0])
def test_pool_figures_and_their_warm_up(monkeypatch, warmup):
    # §3 Statistics, per pool: time-average used, cached, queue and holders over [warmup, end], the mean
    # queue wait, admissions and evictions. The program above: used 8 on [0,4), 4 on [4,8) (s2's run);
    # cached 4 on [4,10] (s1's entry; s0's lived for no time); queue 1 on [0,4); holders 2 on [0,4), 1 on
    # [4,8). Waits: s0 0, s1 0 (admitted at 0), s2 4 (admitted at 4). One entry of 4 units evicted at 4.
    # Warm-up 2: the averages over [2,10]; the admissions (and their waits) and the eviction at or after
    # it: s2's alone. Warm-up 5: no admission (the mean wait of none is NaN) and no eviction counts; the
    # averages over [5, 10]: used 4 on [5, 8), cached 4, holders 1 on [5, 8).
    r, _ = run(POOLS.replace("WARMUP", f"warmup {warmup};"), monkeypatch)
    m = r.pool("m")
    T = 10 - warmup
    w = min(warmup, 4)
    used = 8 * (4 - w) + 4 * (8 - max(warmup, 4))
    cached = 4 * (10 - max(warmup, 4))
    queue = 1 * (4 - w)
    holders = 2 * (4 - w) + 1 * (8 - max(warmup, 4))
    adm, wait, evicted = {0.0: (3, 4 / 3, 1), 2.0: (1, 4.0, 1), 5.0: (0, math.nan, 0)}[warmup]
    got = (m.used, m.cached, m.queue, m.holders)
    assert all(close(a, b) for a, b in zip(got, (used / T, cached / T, queue / T, holders / T))), got
    assert close(m.wait, wait) or math.isnan(wait) and math.isnan(m.wait)
    assert (m.admissions, m.evicted_entries, m.evicted_units) == (adm, evicted, 4.0 * evicted)
    assert (m.preemptions, m.rejections) == (0, 0)
    assert r.pool("n").admissions == 0 and r.pool("n").used == 0.0


# --- the serving metrics of a record table -----------------------------------------------------------------

REQUESTS = """
stage d : delay;
workload { arrive renewal(1); }
session {
  set t0 = now;
  set o = serial + 1;
  run d (0.5 * serial + 0.5);
  set f = now;
  run d ((o - 1) * (serial + 1) * 0.25);
  record req { sent = t0; first_token = f; last_token = now; output = o; prompt = 10 * o; }
}
run { horizon 100; arrivals 4; WARMUP }
"""


def pct(xs: list[float], q: float) -> float:
    """numpy's percentile with linear interpolation (vLLM's benchmark), written out: the value at rank
    h = (n - 1) q / 100 between the neighbours."""
    s = sorted(xs)
    h = (len(s) - 1) * q / 100
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (h - lo)


def test_serving_metrics_follow_vllms_benchmark_definitions(monkeypatch):
    # Records (docs/language.md, vLLM's benchmarks/serve.py calculate_metrics): TTFT = first_token - sent,
    # E2EL = last_token - sent, TPOT = (last_token - first_token) / (output - 1) for output > 1 only;
    # throughputs over end - warmup. renewal(1): sent at 1, 2, 3, 4; outputs 1..4; the first token after
    # 0.5, 1, 1.5, 2; the rest after 0, 0.5, 1.5, 3 (last tokens 1.5, 3.5, 6, 9): the run ends at 9.
    #   TTFT 0.5, 1, 1.5, 2; E2EL 0.5, 1.5, 3, 5; TPOT (none), 0.5/1, 1.5/2, 3/3.
    #   request throughput 4/9, output 10/9, total (prompts 10+20+30+40 = 100, + 10) 110/9.
    #   median of TTFT (rank 1.5): 1.25; p90 (rank 2.7): 1.5 + 0.7 * 0.5 = 1.85; p99: 1.5 + 0.97 * 0.5.
    r, _ = run(REQUESTS.replace("WARMUP", ""), monkeypatch)
    m = r.result.requests
    assert (m.table, m.completed, m.duration, r.result.end) == ("req", 4, 9.0, 9.0)
    assert (m.request_throughput, m.output_throughput, m.total_token_throughput) == (4 / 9, 10 / 9, 110 / 9)
    ttft, e2el, tpot = [0.5, 1.0, 1.5, 2.0], [0.5, 1.5, 3.0, 5.0], [0.5, 0.75, 1.0]
    for got, xs in ((m.ttft, ttft), (m.e2el, e2el), (m.tpot, tpot)):
        assert got.count == len(xs) and close(got.mean, sum(xs) / len(xs))
        assert [got.median, got.p90, got.p95, got.p99] == pytest.approx([pct(xs, q) for q in (50, 90, 95, 99)],
                                                                         rel=1e-12)
        assert math.isnan(got.ci)  # fewer than 40
    assert (m.ttft.median, m.ttft.p90) == pytest.approx((1.25, 1.85), rel=1e-12)
    assert m.itl is None  # no step stage
    # goodput (vLLM: every metric named at or below its SLO; a one-token request's TPOT counts as 0):
    # ttft <= 1.5 and tpot <= 0.8 hold for the first three, not the fourth (TTFT 2): 3 / 9.
    r.set_slo({"ttft": 1.5, "tpot": 0.8})
    assert (r.result.requests.good, r.result.requests.goodput) == (3, 3 / 9)
    r.set_slo({"e2el": 1.5})
    assert r.result.requests.good == 2
    r.set_slo({"tpot": 0.0})  # only the one-token request
    assert r.result.requests.good == 1


def test_serving_metrics_keep_the_requests_sent_after_the_warm_up(monkeypatch):
    # Warm-up 2.5: the rows sent at 3 and 4 remain (a request counts whole, by its send time); the window
    # is 9 - 2.5 = 6.5. TTFT 1.5, 2; TPOT 0.75, 1; outputs 3 + 4, prompts 30 + 40.
    r, _ = run(REQUESTS.replace("WARMUP", "warmup 2.5;"), monkeypatch)
    m = r.result.requests
    assert (m.completed, m.duration) == (2, 6.5)
    assert (m.request_throughput, m.output_throughput, m.total_token_throughput) == (2 / 6.5, 7 / 6.5, 77 / 6.5)
    assert (m.ttft.mean, m.tpot.mean, m.e2el.mean) == (1.75, 0.875, 4.0)
    assert r.records(kind="numpy")["sent"].tolist() == [3.0, 4.0]


# --- closed workloads, think times and turns ---------------------------------------------------------------

CLOSED = """
stage svc : delay;
stage think : delay;
workload {
  arrive closed(2);
  init { set k = 0; }
  turn { set k = k + 10; }
}
session {
  loop {
    turn;
    observe tn = turn_no;
    observe kk = k;
    run svc (1);
    branch (turn_no == 2) { end; }
    run think (2);
  }
}
run { horizon 10; WARMUP }
"""


@pytest.mark.parametrize("warmup", [0.0, 3.5])
def test_closed_population_with_think_times_and_turns(monkeypatch, warmup):
    # §2 arrive closed(n): n sessions at 0, a new one whenever one ends. Each session: turn 1 (turn_no 1,
    # the turn block sets k = 10) at its start, service [s, s+1], think 2, turn 2 (k = 20) at s+3,
    # service, end at s+4. s0, s1 at 0 end at 4; s2, s3 start at 4, end at 8; s4, s5 start at 8 and are
    # in their first think at the horizon 10. Live: 2 throughout.
    #   arrivals (all): 6. ended: 4 (at 4 and 8, both after 3.5). turns: 2 + 2 + 2 + 2 + 1 + 1 = 10; after
    #   warm-up 3.5 those at 4, 7 (s2, s3) and 8 (s4, s5): 6.
    r, o = run(CLOSED.replace("WARMUP", f"warmup {warmup};"), monkeypatch)
    res = r.result
    assert (res.arrivals, res.ended, res.turns) == (6, 4, 10 if warmup == 0 else 6)
    assert close(res.mean_live, 2.0)
    want = [(0, 0.0, 1.0), (1, 0.0, 1.0), (0, 3.0, 2.0), (1, 3.0, 2.0), (2, 4.0, 1.0), (3, 4.0, 1.0),
            (2, 7.0, 2.0), (3, 7.0, 2.0), (4, 8.0, 1.0), (5, 8.0, 1.0)]
    want = sorted((s, t, v) for s, t, v in want if t >= warmup)
    assert sorted(o["tn"]) == want
    assert sorted(o["kk"]) == [(s, t, 10 * v) for s, t, v in want]
    # the samples carry the turn they were taken in
    tk = r.observe("tn")
    assert tk.turns.tolist() == [int(v) for v in tk.values.tolist()]


# --- online estimates --------------------------------------------------------------------------------------


def test_online_estimates_of_a_stage(monkeypatch):
    # §2 est_lambda, est_rho, est_wait and price (docs/language.md, "Rules chosen where the spec is
    # silent"): updated at each completion with the job's start, wait and service; exponentially weighted
    # with a = 0.01, the first completion setting service and wait outright; the gap between consecutive
    # service starts (from the second completion) gives lambda = 1 / gap, rho = min(lambda * service,
    # 0.99); before a gap is known lambda and rho read 0. price(s, s_h, ds) = ds + lambda (s_m^2 - s_h^2)
    # / (2 (1 - rho)) + lambda W ds / (1 - rho), s_m = s_h + ds.
    # renewal(4): arrivals at 4, 8, 12; works 1, 6, 1 on a fifo. s0 [4,5]; s1 [8,14]; s2 waits 2, [14,15].
    # Each session reads the estimates right after its own completion (the estimate is updated first).
    _, o = run("""
stage f : fifo;
workload { arrive renewal(4); }
session {
  run f (serial == 1 ? 6 : 1);
  observe lam = est_lambda(f);
  observe rho = est_rho(f);
  observe w = est_wait(f);
  observe price = price(f, 1, 2);
}
run { horizon 100; arrivals 3; }
""", monkeypatch)
    a = 0.01
    # at 5: service 1, wait 0, no gap yet
    s, w, lam, rho = 1.0, 0.0, 0.0, 0.0
    est = [(5.0, lam, rho, w)]
    # at 14: start 8 (gap 8 - 4 = 4), wait 0, service 6
    s, w, gap = (1 - a) * s + a * 6, (1 - a) * w + a * 0, 4.0
    est.append((14.0, 1 / gap, min(s / gap, 0.99), w))
    # at 15: start 14 (gap 6), wait 2, service 1
    s, w, gap = (1 - a) * s + a * 1, (1 - a) * w + a * 2, (1 - a) * gap + a * 6
    est.append((15.0, 1 / gap, min(s / gap, 0.99), w))
    for k, (t, lam, rho, w) in enumerate(est):
        assert o["lam"][k] == (k, t, pytest.approx(lam, rel=1e-12))
        assert o["rho"][k] == (k, t, pytest.approx(rho, rel=1e-12))
        assert o["w"][k] == (k, t, pytest.approx(w, rel=1e-12, abs=1e-15))
        price = 2 + lam * (3 ** 2 - 1 ** 2) / (2 * (1 - rho)) + lam * w * 2 / (1 - rho)
        assert o["price"][k] == (k, t, pytest.approx(price, rel=1e-12))
    assert o["price"][0][2] == 2.0  # lambda 0: the price of a miss is its own extra service


def test_the_estimated_load_is_capped_below_one(monkeypatch):
    # batch(3) of work 2 on a fifo: starts 0, 2, 4 (gap 2), service 2: lambda s = 1, capped at 0.99.
    _, o = run("""
stage f : fifo;
workload { arrive batch(3); }
session { run f (2); observe rho = est_rho(f); }
run { horizon 100; }
""", monkeypatch)
    assert [v for _, _, v in o["rho"]] == [0.0, 0.99, 0.99]


# --- spill ---------------------------------------------------------------------------------------------------


def test_spill_writes_the_evicted_prefix_to_the_tier_when_its_predicate_holds(monkeypatch):
    # §2 spill TIER via LINK (work) when (pred), pool-reference `spill` (Evict moment: size, the session's
    # attributes). s0 and s1 cache 4 each at 1 (block 4, cap 8). At 2 s2 holds 8: both entries are
    # evicted (lru: released at 1, s0 first). s0's (x = 1) is spilled: the tier keeps it as s0's own
    # prefix (cachedin(tier) reads 4 once the write has landed), the link runs work size = 4 on a fifo
    # [2, 6]; s1's (x = 0) is only evicted. At 6.5 s0 reads 4 in the tier and 0 in kv, s1 0 and 0. (At 6
    # itself s0's read comes first, the event scheduled first, and finds none: test_spill_semantics.py.)
    r, o = run("""
pool kv { cap 8; block 4; spill tier via link (size) when (x); }
pool tier { cap 100; }
stage d : delay;
stage link : fifo;
workload { arrive batch(3); }
session {
  set x = serial == 0 ? 1 : 0;
  branch (serial < 2) {
    hold kv (4) { run d (1); } cache (4);
    run d (5.5);
    observe t = cachedin(tier);
    observe k = cachedin(kv);
  } else {
    run d (2);
    hold kv (8) { observe adm = now; run d (1); }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert o["adm"] == [(2, 2.0, 2.0)]
    assert o["t"] == [(0, 6.5, 4.0), (1, 6.5, 0.0)]
    assert o["k"] == [(0, 6.5, 0.0), (1, 6.5, 0.0)]
    kv, tier, link = r.pool("kv"), r.pool("tier"), r.stage("link")
    assert (kv.spills, kv.evicted_entries, kv.evicted_units) == (1, 2, 8.0)
    assert (link.completions, link.service, link.wait) == (1, 4.0, 0.0)
    # kv cached 8 on [1, 2); the tier 4 on [2, 10]
    assert close(kv.cached, 8 / 10) and close(tier.cached, 4 * 8 / 10)
    assert tier.used == 0.0 and tier.admissions == 0


# --- gauges over a family, choose over its members -----------------------------------------------------------


def test_gauges_over_a_family_and_choose_by_its_state(monkeypatch):
    # §3 Gauges with aggregates (max k in 2 (…) written out over kv[0], kv[1]; the index may not be
    # the attribute j the program sets); choose takes the least
    # key, ties to the least index. s0 chooses at 0.25 (both 0: kv[0]), holds 2 until 1.25; s1 at 0.5
    # (2 vs 0: kv[1]), holds 3 until 2.5; s2 at 0.75 (2 vs 3: kv[0]), holds 4: 2 + 4 > 4, waits until
    # 1.25, holds until 4.25. kv[0]: 2 on [0.25, 1.25), 4 on [1.25, 4.25); kv[1]: 3 on [0.5, 2.5).
    #   spread (max - min): 2 on [0.25, 0.5), 1 on [0.5, 2.5), 4 on [2.5, 4.25): 0.5 + 2 + 7 = 9.5 over 10.
    #   full (some member has nothing free): [1.25, 4.25): 3 over 10.
    r, o = run("""
pool kv[2] { cap 4; }
stage d : delay;
gauge spread = max k in 2 (used(kv[k])) - min k in 2 (used(kv[k]));
gauge full = max k in 2 (free(kv[k]) == 0);
workload { arrive batch(3); }
session {
  run d (0.25 * serial + 0.25);
  choose j in 2 by (used(kv[j]));
  observe jj = j;
  hold kv[j] (serial + 2) { run d (serial + 1); }
}
run { horizon 10; }
""", monkeypatch)
    assert [v for _, _, v in o["jj"]] == [0.0, 1.0, 0.0]
    g = r.result.gauges
    assert (g["spread"].min, g["spread"].max) == (0.0, 4.0) and close(g["spread"].mean, 0.95)
    assert (g["full"].min, g["full"].max) == (0.0, 1.0) and close(g["full"].mean, 0.3)
    pools = {(p.name, p.index): p for p in r.result.pools}
    assert close(pools[("kv", 0)].used, (2 * 1 + 4 * 3) / 10) and close(pools[("kv", 1)].used, 3 * 2 / 10)
    assert (pools[("kv", 0)].admissions, pools[("kv", 1)].admissions) == (2, 1)
    assert close(pools[("kv", 0)].wait, 0.5 / 2)


# --- the command line: the run block against the flags, and same-seed outputs ------------------------------

STOCHASTIC = """
pool kv { cap 64; block 4; }
stage E : step { budget 16; cost 0.01 + 0.001 * tokens; memory kv; }
gauge u = used(kv);
workload { arrive poisson(2); }
session {
  set t0 = now;
  set p = 1 + floor(~uniform(0, 12));
  set o = 1 + floor(~exp(4));
  hold kv (p) {
    prefill (p) growing kv;
    set f = now;
    decode (o - 1) growing kv;
  } cache (p + o);
  observe resp = now - t0;
  record req { sent = t0; first_token = f; last_token = now; output = o; prompt = p; }
}
RUN
"""


def serq_cli(*args: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "serq")
    r = subprocess.run([exe, *args], capture_output=True, timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def test_the_flags_override_the_run_block_field_by_field(tmp_path, capsys):
    # §2 run { … } and program-reference `run`: --horizon, --warmup, --seed and --arrivals override the
    # block's fields; a field no flag names keeps the block's value, and a flag equal to the block's value
    # changes nothing. The reports compared differ in nothing but the program's file record. (serq run in
    # this process, serq.cli.main in the environment as it is: what is compared is the reports' figures.)
    import json

    from serq.cli import main

    def serq(*args: str):
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main(list(args))
        out = capsys.readouterr()
        assert (info.value.code or 0) == 0, out.err
        return out

    full = tmp_path / "full.sq"
    full.write_text(STOCHASTIC.replace("RUN", "run { horizon 30; warmup 5; seed 3; }"))
    bare = tmp_path / "bare.sq"
    bare.write_text(STOCHASTIC.replace("RUN", "run { horizon 30; }"))

    def report(*args):
        out = json.loads(serq("run", *args, "--json", "--no-progress").out)
        out.pop("program")
        return out

    base = report(str(full))
    assert (base["horizon"], base["warmup"], base["seed"], base["end"]) == (30.0, 5.0, 3, 30.0)
    assert report(str(full), "--seed", "3") == base
    assert report(str(bare), "--seed", "3", "--warmup", "5") == base
    over = report(str(full), "--horizon", "20", "--warmup", "2")
    assert (over["horizon"], over["warmup"], over["seed"], over["end"]) == (20.0, 2.0, 3, 20.0)
    # the first 20 s of the same seed: the arrivals are a prefix of the longer run's
    assert over["arrivals"] <= base["arrivals"] and over != base
    n = report(str(full), "--arrivals", "20")
    assert (n["arrivals"], n["horizon"], n["seed"], n["warmup"]) == (20, 30.0, 3, 5.0) and n["end"] < 30.0
    assert report(str(full), "--seed", "4")["seed"] == 4


def test_same_seed_outputs_are_byte_identical_in_every_format(tmp_path):
    # The same program and seed: the text and JSON reports, the dumps and the records (CSV) are the same
    # bytes run after run; another seed changes them.
    prog = tmp_path / "p.sq"
    prog.write_text(STOCHASTIC.replace("RUN", "run { horizon 30; warmup 5; seed 3; }"))

    def outputs(tag: str, *extra: str) -> dict[str, bytes]:
        d = tmp_path / tag
        d.mkdir()
        got = {"text": serq_cli("run", str(prog), "--no-progress", *extra),
               "json": serq_cli("run", str(prog), "--no-progress", "--json", "--dump", str(d / "dump"),
                                "--records", str(d / "req.csv"), "--slo", "ttft=0.5", *extra)}
        for f in sorted(d.rglob("*.csv")):
            got[str(f.relative_to(d))] = f.read_bytes()
        return got

    a, b = outputs("a"), outputs("b")
    assert set(a) == {"text", "json", "dump/resp.csv", "dump/gauge/u.csv", "req.csv"}
    assert a == b
    assert b"ttft" in a["text"] and a["req.csv"].startswith(b"session,turn,time,sent,first_token")
    c = outputs("c", "--seed", "4")
    assert all(a[k] != c[k] for k in a)


# --- a step stage's context variables ------------------------------------------------------------------------

CONTEXT = """
pool kv { cap 100; block 2; }
stage E : step { budget BUDGET; cost COST; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (serial == 0 ? 3 : 5) {
    run E prefill (serial == 0 ? 3 : 5);
    run E decode (serial == 0 ? 2 : 1);
  }
  observe done = now;
}
run { horizon 100; }
"""

# Budget 4, both admitted at 0 (kv is no stage's queue): s0 holds 4 (3 rounded to blocks of 2), s1 6.
#   it1: s0 prefills 3 (done), s1 1.            tokens 4, prefilled 4, decoders 0, residents 2,
#        kv_prefill 4 + 6, kv_decode 0, attention 3 (0 + 3/2) + 1 (0 + 1/2) = 5.
#   it2: s0 decodes 1, s1 prefills 3.           tokens 4, prefilled 3, decoders 1, residents 2,
#        kv_prefill 6, kv_decode 4, attention 3 (1 + 3/2) = 7.5.
#   it3: s0 decodes 1 (done), s1 prefills 1.    tokens 2, prefilled 1, decoders 1, residents 2,
#        kv_prefill 6, kv_decode 4, attention 1 (4 + 1/2) = 4.5.
#   it4: s1 decodes 1 (done).                   tokens 1, prefilled 0, decoders 1, residents 1,
#        kv_prefill 0, kv_decode 6, attention 0.
# With cost 1 + 0.01 X each iteration lasts 1 + 0.01 X_k: s0 is done after it3, s1 after it4.
COST_VALUES = {"tokens": (4, 4, 2, 1), "prefilled": (4, 3, 1, 0), "decoders": (0, 1, 1, 1),
               "residents": (2, 2, 2, 1), "kv_prefill": (10, 6, 6, 0), "kv_decode": (0, 4, 4, 6),
               "attention": (5, 7.5, 4.5, 0)}


@pytest.mark.parametrize("var", sorted(COST_VALUES))
def test_the_cost_reads_the_iterations_composition(monkeypatch, var):
    # §2 context variables of a step stage's cost; docs/language.md "What kv_decode and kv_prefill count"
    _, o = run(CONTEXT.replace("BUDGET", "4").replace("COST", f"1 + 0.01 * {var}"), monkeypatch)
    d = [1 + 0.01 * x for x in COST_VALUES[var]]
    assert [s for s, _, _ in o["done"]] == [0, 1]
    assert [t for _, t, _ in o["done"]] == pytest.approx([d[0] + d[1] + d[2], d[0] + d[1] + d[2] + d[3]],
                                                         rel=1e-12)


def test_the_budget_reads_the_residents_before_the_iteration(monkeypatch):
    # Budget 1 + residents + kv_decode, read before each iteration; cost 1 + 0.01 tokens.
    #   it1: 2 residents, no decoder: budget 3: s0 prefills 3 (done), s1 nothing. 3 tokens: 1.03.
    #   it2: s0 decoding (4 units), s1 prefilling: budget 1 + 2 + 4 = 7: s0 1, s1 5 (done). 6: 1.06.
    #   it3: both decoding (4 + 6): budget 13: s0 1 (done), s1 1 (done). 2 tokens: 1.02.
    _, o = run(CONTEXT.replace("BUDGET", "1 + residents + kv_decode").replace("COST", "1 + 0.01 * tokens"),
               monkeypatch)
    assert [(s, t) for s, t, _ in o["done"]] == [(0, pytest.approx(3.11, rel=1e-12)),
                                                  (1, pytest.approx(3.11, rel=1e-12))]


# --- settle order across pools, growers before admissions ----------------------------------------------------

TWO_POOLS = """
DECLS
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold A (2) { run d (1); } }
  else {
    branch (serial == 1) { hold B (1), A (2) { observe t1 = now; run d (1); } }
    else { hold A (2) { observe t2 = now; run d (1); } }
  }
}
run { horizon 10; }
"""


def test_heads_of_two_queues_waiting_for_one_pool_go_in_declaration_order(monkeypatch):
    # §3 Ties: "a hold on several pools waits in its first pool's [queue]; where the heads of two queues
    # both wait for room in one pool … the pool declared first is served first". At 0 every session runs
    # before any admission: s0 and s2 queue at A, s1 (B first) at B.
    # A declared first: A's head s0 is admitted at 0, s1 (B's head) needs 2 of A and waits; at 1 A's head
    # s2 goes first (1), s1 at 2.
    _, o = run(TWO_POOLS.replace("DECLS", "pool A { cap 2; }\npool B { cap 5; }"), monkeypatch)
    assert (o["t1"], o["t2"]) == ([(1, 2.0, 2.0)], [(2, 1.0, 1.0)])
    # B declared first: its head s1 is admitted at 0 (A is still empty), A's s0 at 1, s2 at 2.
    _, o = run(TWO_POOLS.replace("DECLS", "pool B { cap 5; }\npool A { cap 2; }"), monkeypatch)
    assert (o["t1"], o["t2"]) == ([(1, 0.0, 0.0)], [(2, 2.0, 2.0)])


def test_a_waiting_grower_goes_before_the_queues_head(monkeypatch):
    # §3 settle: "retries growers and admissions". cap 4: s0 holds 1, s1 3 until 2. At 0.5 s2 queues for
    # 2; at 1 s0 grows 2 (waits, preempt none). At 2 s1's 3 come back: the grower and the head each fit
    # alone (1 + 2 <= 4), not both; the grower goes first (2), s2 waits for s0's end at 3.
    _, o = run("""
pool m { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (2); observe g = now; run d (1); } }
  else {
    branch (serial == 1) { hold m (3) { run d (2); } }
    else { run d (0.5); hold m (2) { observe a = now; run d (1); } }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert (o["g"], o["a"]) == ([(0, 2.0, 2.0)], [(2, 3.0, 3.0)])


def test_end_inside_a_hold_caches_per_its_clause_and_ends_a_lease(monkeypatch):
    # §3: end releases every hold (each caching min(cache, computed), rounded down to blocks, as at the
    # scope's end) and every lease (its cache then applies), and keeps the cached prefixes.
    # s0: hold m (4) [0, 1), end inside it with cache (3): 2 cached (block 2) on [1, 10]: used 4/10,
    # cached 18/10. s1: hold n (5) on [0.5, 1.5), leased past the scope until the session ends at 2.5;
    # during the lease holders(n) is 1 (a lease is a holder, never a preemption candidate), used 5, and
    # cachedin(n) 0; at 2.5 its cache (5) applies: cached 5 on [2.5, 10].
    r, o = run("""
pool m { cap 10; block 2; }
pool n { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (4) { run d (1); end; } cache (3);
  } else {
    run d (0.5);
    hold n (5) { run d (1); } cache (5) lease n (inf);
    observe h = holders(n);
    observe u = used(n);
    observe c = cachedin(n);
    run d (1);
    end;
  }
}
run { horizon 10; }
""", monkeypatch)
    assert (o["h"], o["u"], o["c"]) == ([(1, 1.5, 1.0)], [(1, 1.5, 5.0)], [(1, 1.5, 0.0)])
    m, n = r.pool("m"), r.pool("n")
    assert (m.used, m.cached, m.holders) == pytest.approx((0.4, 1.8, 0.1), rel=1e-12)
    assert (n.used, n.cached, n.holders) == pytest.approx((1.0, 3.75, 0.2), rel=1e-12)
    assert r.result.ended == 2


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
def test_a_flow_stages_utilisation_is_the_capacity_it_carries(monkeypatch, share):
    # §3 Stages: a stage array held by a run with another is shared for the whole run, "its utilisation
    # is the capacity its flows carry, Σ rate / φ". a: ps(4), b: ps(1); f1 = run a, b (1), f2, f3 =
    # run a (3). maxmin: f1 at 1 (b full), f2, f3 at 1.5: a carries 4/4 on [0, 1); then f2, f3 at 2 with
    # 1.5 left each: 4/4 on [1, 1.75). bottleneck: f1 min(4/3, 1/1) = 1, f2, f3 4/3: a carries 11/12
    # on [0, 1); then 5/3 left at 2 each: 4/4 on [1, 11/6). b carries 1 on [0, 1) either way.
    # present at a: 3 on [0, 1), 2 until the end of f2 and f3.
    r, _ = run(f"""
stage a : ps(4);
stage b : ps(1);
share {share};
workload {{ arrive batch(3); }}
session {{ branch (serial == 0) {{ run a, b (1); }} else {{ run a (3); }} }}
run {{ horizon 10; }}
""", monkeypatch)
    end = 1.75 if share == "maxmin" else 11 / 6
    carried = 1.0 if share == "maxmin" else 11 / 12
    a, b = r.stage("a"), r.stage("b")
    assert a.utilisation == pytest.approx((carried + (end - 1)) / 10, rel=1e-12)
    assert b.utilisation == pytest.approx(1 / 10, rel=1e-12)
    assert a.present == pytest.approx((3 + 2 * (end - 1)) / 10, rel=1e-12)
    assert (a.completions, b.completions) == (3, 1)
    assert a.service == pytest.approx((1 + 2 * end) / 3, rel=1e-12)


def test_serving_metrics_of_one_token_requests_have_no_tpot(monkeypatch):
    # vLLM's calculate_metrics leaves a one-token request out of the TPOTs and counts it as 0 in goodput.
    # With no TPOT at all vLLM prints np.mean(tpots or 0) = 0; serQ gives count 0 and NaN statistics
    # (null in JSON), which no value could be mistaken for (docs/language.md). Every request meets any
    # TPOT SLO.
    r, _ = run(REQUESTS.replace("set o = serial + 1;", "set o = 1;").replace("WARMUP", ""), monkeypatch)
    m = r.result.requests
    assert m.tpot.count == 0 and all(math.isnan(x) for x in (m.tpot.mean, m.tpot.median, m.tpot.p99))
    assert (m.completed, m.output_throughput) == (4, 4 / r.result.end)
    r.set_slo({"tpot": 0.0})
    assert r.result.requests.good == 4


def test_drop_discards_the_own_prefix_without_an_eviction(monkeypatch):
    # §2 drop POOL: the session's cached prefix is discarded; it is not an eviction (no count), and the
    # cache no longer holds it: cached 4 on [1, 2) only; cachedin 4 before the drop, 0 after.
    r, o = run("""
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (4) { run d (1); } cache (4);
  observe before = cachedin(kv);
  run d (1);
  drop kv;
  observe after = cachedin(kv);
}
run { horizon 10; }
""", monkeypatch)
    assert (o["before"], o["after"]) == ([(0, 1.0, 4.0)], [(0, 2.0, 0.0)])
    kv = r.pool("kv")
    assert (kv.cached, kv.evicted_entries, kv.evicted_units) == (pytest.approx(0.4, rel=1e-12), 0, 0.0)


def test_branch_with_is_a_bernoulli_draw(monkeypatch):
    # §3 Branching: branch with (p) is branch (~bernoulli(p)): the same draws, so the same run; p = 0 and
    # p = 1 take one arm always.
    src = """
stage d : delay;
workload { arrive poisson(1); }
session { GUARD { run d (1); observe a = 1; } else { run d (2); observe a = 0; } }
run { horizon 200; seed 5; }
"""
    r1, o1 = run(src.replace("GUARD", "branch with (0.3)"), monkeypatch)
    r2, o2 = run(src.replace("GUARD", "branch (~bernoulli(0.3))"), monkeypatch)
    assert encode_json(r1) == encode_json(r2) and o1 == o2
    assert 0 < sum(v for _, _, v in o1["a"]) < len(o1["a"])
    for p, arm in (("0", 0.0), ("1", 1.0)):
        _, o = run(src.replace("GUARD", f"branch with ({p})"), monkeypatch)
        assert {v for _, _, v in o["a"]} == {arm}


# --- a trace's turns -----------------------------------------------------------------------------------------

TRACE = "session,turn,new,out,think,forced\n0,1,20,3,0,1\n0,0,10,2,1.5,0\n1,0,7,1,0,0\n"


def test_an_ordered_trace_replays_its_sessions_turn_by_turn(tmp_path, monkeypatch):
    # §3 Workload: turn loads the next turn's new, out, think, forced and sets more (1 while the trace
    # session has another turn); ordered: arrival i replays trace session i mod 2 (docs/simulator.md),
    # its rows in turn order whatever the file's order. s0 and s2: (10, 2, 1.5, 0), more 1, think 1.5,
    # then (20, 3, 0, 1), more 0, end; s1: (7, 1, 0, 0), more 0, end. s1 then says turn once more: past
    # its trace session's last turn the attributes stay and more is 0 (docs/language.md).
    (tmp_path / "t.csv").write_text(TRACE)
    prog = tmp_path / "p.sq"
    prog.write_text("""
stage d : delay;
workload { arrive batch(3); trace "t.csv" ordered; }
session {
  loop {
    turn;
    observe row = new * 1000 + out * 100 + think * 10 + forced;
    observe mm = more;
    observe tn = turn_no;
    branch (more) { run d (think); } else { branch (serial == 1 && turn_no == 1) { run d (1); } else { end; } }
  }
}
run { horizon 10; }
""")
    reports = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        reports.append(serq_sim.run(serq_frontend.compile(path=str(prog))))
    assert encode_json(reports[0]) == encode_json(reports[1])
    r = reports[1]

    def rows(name):
        o = r.observe(name)
        return sorted(zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist(), o.turns.tolist()))

    assert rows("row") == [(0, 0.0, 10215.0, 1), (0, 1.5, 20301.0, 2), (1, 0.0, 7100.0, 1),
                           (1, 1.0, 7100.0, 2), (2, 0.0, 10215.0, 1), (2, 1.5, 20301.0, 2)]
    assert [v for _, _, v, _ in rows("mm")] == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (3, 3, 6)


def test_a_step_stages_queue_busy_and_work(monkeypatch):
    # §2 queue(s), busy(s), work(s) on a step stage (docs/language.md): the residents, the jobs the running
    # iteration serves, and the tokens the residents have left (a run's work goes down when its iteration
    # ends). Budget 4, cost 1: it1 [0, 1] gives s0 4 of its 6 prefill tokens and s1 none. At 0.5 the
    # observer reads 2, 1, 6 + 2; at 1.5 (it2: s0 2, s1 2) 2, 2, 2 + 2.
    _, o = run("""
stage E : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) { run E prefill (serial == 0 ? 6 : 2); }
  else {
    loop {
      run d (0.5);
      observe q = queue(E); observe b = busy(E); observe w = work(E);
      branch (now > 1) { end; }
      run d (0.5);
    }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert [(t, v) for _, t, v in o["q"]] == [(0.5, 2.0), (1.5, 2.0)]
    assert [(t, v) for _, t, v in o["b"]] == [(0.5, 1.0), (1.5, 2.0)]
    assert [(t, v) for _, t, v in o["w"]] == [(0.5, 8.0), (1.5, 4.0)]
