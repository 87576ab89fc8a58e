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
from serq_report.json import encode_json


def _run(src: str, monkeypatch, tier: str):
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return serq_sim.run(prog)


def run(src: str, monkeypatch):
    """``(report, {observe: [(session, time, value), …] in time then session order})``, the same on both
    tiers."""
    picked = _run(src, monkeypatch, "")
    general = _run(src, monkeypatch, "general")
    assert encode_json(picked) == encode_json(general)
    obs = {}
    for name, o in general.observes.items():
        rows = zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist())
        obs[name] = sorted(((s, t, v) for s, t, v in rows), key=lambda r: (r[1], r[0]))
    return general, obs


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


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


@pytest.mark.parametrize("warmup", [0.0, 2.0])
def test_pool_figures_and_their_warm_up(monkeypatch, warmup):
    # §3 Statistics, per pool: time-average used, cached, queue and holders over [warmup, end], the mean
    # queue wait, admissions and evictions. The program above: used 8 on [0,4), 4 on [4,8) (s2's run);
    # cached 4 on [4,10] (s1's entry; s0's lived for no time); queue 1 on [0,4); holders 2 on [0,4), 1 on
    # [4,8). Waits: s0 0, s1 0 (admitted at 0), s2 4 (admitted at 4). One entry of 4 units evicted at 4.
    # Warm-up 2: the averages over [2,10]; the admissions (and their waits) and the eviction at or after
    # it: s2's alone.
    r, _ = run(POOLS.replace("WARMUP", f"warmup {warmup};"), monkeypatch)
    m = r.pool("m")
    T = 10 - warmup
    w = warmup
    used = 8 * (4 - w) + 4 * 4
    cached = 4 * 6
    queue = 1 * (4 - w)
    holders = 2 * (4 - w) + 1 * 4
    adm, wait = ((3, 4 / 3) if warmup == 0 else (1, 4.0))
    got = (m.used, m.cached, m.queue, m.holders, m.wait)
    assert all(close(a, b) for a, b in zip(got, (used / T, cached / T, queue / T, holders / T, wait))), got
    assert (m.admissions, m.evicted_entries, m.evicted_units, m.preemptions, m.rejections) == (adm, 1, 4.0, 0, 0)
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
