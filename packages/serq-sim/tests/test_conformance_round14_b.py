"""Conformance cases on amounts at their edges and on the report's definitions, each a small program whose
outcome follows by hand from language.txt §2-§3, pool-reference.txt and program-reference.txt (and
docs/language.md or docs/simulator.md where the spec leaves the rule open):

(a) jobs of infinite work: what the stages, the pool and the run count at a horizon, and the sessions left
    with them (or queued behind them) wait for ever under a horizon as without one;
(b) a pool of `cap 0`: a hold of 0 units fits, a positive one can never fit;
(c) a hold of a pool's whole capacity evicts every cached entry, and a hold of 0 units fits beside it;
(d) holds of 0 units on a pool a step stage admits, admitted by a scheduler step that schedules no token;
(e) the two percentile estimators (an observe's nearest rank, a record table's linear interpolation), the
    population `std` and the batch-means CI in the records' order, on one set of 40 values;
(f) sessions that arrive and end at one instant, at the warm-up's end and before it;
(g) a run without a horizon that drains at or before its warm-up's end: nothing to measure, an error.

Every program runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and samples must be
the same bytes (conform.run). Conventions: `stage d : delay;` runs every job at rate 1 without waiting.

Power: each test was run with a mutated expectation (the value named in its comment) or program and
failed; the comment says which.
"""

from __future__ import annotations

import math
import statistics

import pytest
from conform import at, close, pool, run, run_error, stage, vals

# --- (a) jobs of infinite work ------------------------------------------------------------------------------

ENDLESS = """
pool m { cap 1; }
stage f : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (1) { run f (inf); } }
  else { branch (serial == 1) { hold m (1) { run d (1); } }
  else { branch (serial == 2) { run f (1); } else { run d (inf); } } }
  observe out = now;
}
run { horizon H; warmup W; }
"""

FOREVER = ("warning: 3 sessions wait for ever at the end of the run (no event is left that could wake them): "
           "1 at stage f, which will never complete them (session 0, in the run at <source>:7:39); 1 queued at m "
           "(session 1); 1 at stage d, which will never complete them (session 3, in the run at <source>:9:53)")


def test_jobs_of_infinite_work_and_the_sessions_they_leave_waiting_for_ever(monkeypatch):
    """docs/language.md, "Amounts are not negative": a run's work may be inf, "the job never ends";
    docs/simulator.md: "An event at inf never happens", and the report's warning names the live sessions
    "when no event is left". §3: the settle "runs every ready session, then retries … admissions", so at 0
    s0 and s1 join m's queue, s2's run f (1) takes the fifo's server, s3 runs d (inf); then s0 is admitted
    (s1 waits: cap 1) and its run f (inf) waits behind s2's, which ends at 1 (s2's observe, its session's
    end). From 1 on s0's job holds the server for ever, s1 waits for m, s3 is at d: nothing is left to
    happen.
      Horizon 10, warm-up 2, over [2, 10]: f holds s0's job (present 1, busy), no run completes after the
      warm-up (wait and service NaN); d present 1; m used 1, holders 1, queue 1, no admission after the
      warm-up; live 3, none ended after it; s2's sample at 1 left out.
      Horizon inf, no warm-up: the run ends at its last event, 1. f: s2's job and s0's waiting one over
      [0, 1] (present 2), one completion (wait 0, service 1); live 4 over [0, 1], s2 ended.
    The same three sessions wait for ever in both, and both reports say so. Mutation: before the warning
    read an event at inf as none under a finite horizon, horizon 10 had no warning and this test failed;
    so does expecting f's present 2 at horizon 10 (s2 served after s0)."""
    r, o = run(ENDLESS.replace("H;", "10;").replace("W;", "2;"), monkeypatch)
    f, d, m = stage(r, "f"), stage(r, "d"), pool(r, "m")
    assert (f.present, f.utilisation, f.completions, f.throughput, d.present, d.utilisation) == (1, 1, 0, 0, 1, 1)
    assert math.isnan(f.wait) and math.isnan(f.service) and math.isnan(m.wait)
    assert (m.used, m.holders, m.queue, m.admissions) == (1.0, 1.0, 1.0, 0)
    assert (r.result.end, r.result.arrivals, r.result.ended, r.result.mean_live, o["out"]) == (10, 4, 0, 3, [])
    assert FOREVER in r.result.notes
    r, o = run(ENDLESS.replace("H;", "inf;").replace("W;", "0;"), monkeypatch)
    f, m = stage(r, "f"), pool(r, "m")
    assert (f.present, f.utilisation, f.completions, f.wait, f.service) == (2, 1, 1, 0, 1)
    assert (m.used, m.queue, m.admissions, m.wait) == (1.0, 1.0, 1, 0.0)
    assert (r.result.end, r.result.ended, r.result.mean_live, o["out"]) == (1, 1, 4, [(2, 1.0, 1.0)])
    assert FOREVER in r.result.notes


# --- (b) a pool of cap 0 ------------------------------------------------------------------------------------


def test_a_pool_of_cap_0_admits_a_hold_of_0_and_rejects_any_other(monkeypatch):
    """§3 Pools: the head is admitted "when every pool of its hold has room for its reserve units next to
    the allocated units (used + r ≤ cap …)", and "A request that can never fit — its units … above the cap,
    as they evaluate when the session joins the queue — is rejected: the session ends"; pool-reference:
    "exceeds capacity after block rounding". cap 0, block 4: s0 and s1 hold 0 units (0 + 0 ≤ 0: both
    admitted at 0, used 0, free 0) for 1 s, and cache min(5, their allocation 0) = 0: their own prefix
    reads 0 after. s2's 1 unit rounds up to 4 > 0: rejected at its join, its session ends. Holders 2 on
    [0, 1) over 10; three sessions ended; the report notes the rejection. Mutation: expecting s2 admitted
    (admissions 3) fails; so does `cap 0` → `cap 4` (s2 then fits)."""
    r, o = run("""
pool m { cap 0; block 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  hold m (serial == 2 ? 1 : 0) { observe u = used(m); observe f = free(m); run d (1); } cache (5);
  observe c = cachedin(m);
}
run { horizon 10; }
""", monkeypatch)
    assert o["u"] == o["f"] == [(0, 0.0, 0.0), (1, 0.0, 0.0)]
    assert o["c"] == [(0, 1.0, 0.0), (1, 1.0, 0.0)]
    m = pool(r, "m")
    assert (m.admissions, m.rejections, m.used, m.cached, close(m.holders, 0.2), r.result.ended) == (2, 1, 0, 0,
                                                                                                   True, 3)
    assert any(n.startswith("warning: pool m rejected 1 hold(s) that can never fit its capacity 0")
               for n in r.result.notes)


# --- (c) a hold of the whole capacity ------------------------------------------------------------------------


def test_a_hold_of_the_whole_capacity_evicts_every_entry_and_a_hold_of_0_fits_beside_it(monkeypatch):
    """§3 Pools: "cached prefixes never block"; "Other entries are evicted in the pool's order until
    allocations and cache fit"; evict lru orders "by release time and then release order"; a hold whose
    body ends releases and "min(ℓ, computed) units stay cached, rounded down to blocks". cap 8, block 4:
    s0 (3 → 4) and s1 (4) hold [0, 1] and cache 4 each: 8 cached, the whole pool. At 2 s2's 7 rounds to 8,
    the whole capacity: both entries are evicted (8 units), s2 reads used 8, free 0. s3's 0 units fit
    beside it (8 + 0 ≤ 8); s4's 1 (→ 4) waits until s2's release at 3 (s2's end is scheduled before s3's;
    s2 caches nothing), and reads used 4, free 4. used 8 on [0, 1), 8 on [2, 3), 4 on [3, 4): 20 / 10;
    cached 8 on [1, 2); holders 2, 2, 1 on those spans; queue 1 on [2, 3); one wait of 1 over five
    admissions. Mutation: expecting s3 to wait with s4 (its admission at 3) fails; so does `cap 8` → `cap 7`
    (s2 is then rejected)."""
    r, o = run("""
pool m { cap 8; block 4; }
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial < 2) {
    hold m (3 + serial) { run d (1); } cache (4);
  } else {
    run d (2);
    hold m (serial == 2 ? 7 : serial == 3 ? 0 : 1) { observe u = used(m); observe f = free(m); run d (1); }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert o["u"] == [(2, 2.0, 8.0), (3, 2.0, 8.0), (4, 3.0, 4.0)]
    assert vals(o["f"]) == [0.0, 0.0, 4.0]
    m = pool(r, "m")
    assert (m.evicted_entries, m.evicted_units, m.admissions, m.rejections) == (2, 8.0, 5, 0)
    assert (m.used, m.cached, m.holders, m.queue, m.wait) == (2.0, 0.8, 0.5, 0.1, 0.2)


# --- (d) holds of 0 units on a pool an engine admits ----------------------------------------------------------


def test_holds_an_engine_admits_without_scheduling_a_token_take_no_iteration(monkeypatch):
    """§3: "A pool marked admit via S is not admitted at settle time: its queue is served by step stage S,
    at the start of an iteration … while the iteration has budget left"; the settle "starts an iteration on
    every idle step stage that has residents or a waiting queue it serves"; "An iteration that schedules no
    token is not an iteration, unless it preempted". cap 1: at 0 the scheduler step admits s0 (0 units)
    and s1 (1), whose runs are on the delay stage, not on E; s2's 1 does not fit and blocks. Nothing is
    scheduled on E, so no iteration is counted and no time passes. At 1 s0 and s1 release, and the next
    scheduler step admits s2 (waited 1). Mutation: expecting s2 at 0 (units 0 for s2 too) fails; so does
    expecting one iteration."""
    r, o = run("""
pool reqs { cap 1; admit via E; }
stage E : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session { hold reqs (serial == 0 ? 0 : 1) { observe a = now; run d (1); } observe b = now; }
run { horizon 10; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 1.0)] and at(o["b"]) == [(0, 1.0), (1, 1.0), (2, 2.0)]
    e, reqs = stage(r, "E"), pool(r, "reqs")
    assert (e.iterations, e.utilisation, reqs.admissions, close(reqs.wait, 1 / 3)) == (0, 0.0, 3, True)


# --- (e) the estimators of the report ---------------------------------------------------------------------------

ESTIMATORS = """
stage d : delay;
workload { arrive batch(40); }
session {
  set w = pow((7 * serial) % 40, 2) / 10;
  run d (1);
  observe x = w;
  record req { sent = 0; first_token = w; last_token = w + 1; output = 1; }
}
run { horizon 10; }
"""


def nearest_rank(xs, q):
    """docs/simulator.md: an observe's quantile is "the ⌈q n⌉-th smallest, nearest rank"."""
    return sorted(xs)[math.ceil(q * len(xs)) - 1]


def linear(xs, q):
    """docs/language.md: a record metric's percentile is numpy's (vLLM's), "the virtual index (n - 1) * (q /
    100)" and linear interpolation between its neighbours."""
    s = sorted(xs)
    h = (len(s) - 1) * q / 100
    lo = math.floor(h)
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (h - lo)


def batch_half_width(xs):
    """docs/simulator.md: 20 batches of ⌊n / 20⌋ values in the order taken, t = 2.093."""
    k = len(xs) // 20
    means = [statistics.fmean(xs[i * k:(i + 1) * k]) for i in range(20)]
    return 2.093 * statistics.stdev(means) / math.sqrt(20)


def test_an_observes_nearest_rank_and_a_records_linear_percentiles_on_one_set(monkeypatch):
    """The same 40 values w = k²/10, k = 7·serial mod 40 (a permutation of 0 … 39), as an observe and as
    the TTFT of a table of requests, all taken at 1 in serial order. docs/simulator.md (observes): the
    quantiles are the ⌈q n⌉-th smallest: p50 the 20th (k = 19: 36.1), p90 the 36th (122.5), p95 the 38th
    (136.9), p99 the 40th (152.1). docs/language.md (records): median and percentiles are np.median and
    np.percentile: median (19² + 20²) / 20 = 38.05, p90 at rank 35.1: 122.5 + 0.1 · 7.1 = 123.21, p95 at
    37.05: 137.275, p99 at 38.61: 144.4 + 0.61 · 7.7 = 149.097; `std` is np.std (population), and E2EL
    (w + 1) has median 39.05 and the same std. Both CIs are the batch means over 20 batches of 2 in the
    order the values were taken. Mutation: the observe's p90 by interpolation (123.21) fails, the records'
    p99 by nearest rank (152.1) fails, and so do sample std (n - 1) and the CI of the sorted values."""
    r, _ = run(ESTIMATORS, monkeypatch)
    ws = [((7 * s) % 40) ** 2 / 10 for s in range(40)]
    x, m = r.result.observes["x"], r.result.requests
    assert (x.count, x.p50, x.p90, x.p95, x.p99) == (40, 36.1, 122.5, 136.9, 152.1)
    assert [x.p50, x.p90, x.p95, x.p99] == [nearest_rank(ws, q) for q in (0.5, 0.9, 0.95, 0.99)]
    assert close(x.mean, 51.35) and close(x.cv2, statistics.variance(ws) / 51.35 ** 2)
    ttft = m.ttft
    assert (ttft.count, ttft.median) == (40, 38.05)
    assert [ttft.p90, ttft.p95, ttft.p99] == pytest.approx([123.21, 137.275, 149.097], rel=1e-12)
    assert [ttft.p90, ttft.p95, ttft.p99] == pytest.approx([linear(ws, q) for q in (90, 95, 99)], rel=1e-12)
    assert close(ttft.std, statistics.pstdev(ws)) and close(m.e2el.std, statistics.pstdev(ws))
    assert m.e2el.median == 39.05 and m.tpot.count == 0
    assert close(x.ci, batch_half_width(ws)) and close(ttft.ci, batch_half_width(ws))


# --- (f) sessions of no time ----------------------------------------------------------------------------------

INSTANT = """
stage d : delay;
workload { arrive renewal(1); }
session { branch (serial % 2 == 1) { run d (0.5); } observe t = now; }
run { horizon 10; warmup WU; arrivals 4; }
"""


@pytest.mark.parametrize("warmup, samples, ended, live, runs", [
    (2.0, [(1, 2.5), (2, 3.0), (3, 4.5)], 3, 1.0 / 2.5, 2),
    (3.0, [(2, 3.0), (3, 4.5)], 2, 0.5 / 1.5, 1),  # s2 arrives and ends at the warm-up's end: it counts
])
def test_sessions_that_arrive_and_end_at_one_instant(monkeypatch, warmup, samples, ended, live, runs):
    """program-reference `run`: with `arrivals N` the run ends when every session has ended, its time
    averages over end − warmup; §3: a run of zero time takes no event; docs/simulator.md: "`arrivals` counts
    every arrival; `ended` and `turns` count after warm-up. A sample taken at the warm-up instant counts".
    renewal(1): arrivals at 1, 2, 3, 4; even serials end at the instant they arrive, odd ones after 0.5:
    end 4.5. A session of no time adds nothing to the live count's integral, and counts as ended at its
    instant; d's runs end at 2.5 and 4.5. Mutation: expecting s2 left out at warm-up 3 (ended 1, no
    sample at 3) fails, and so does a live mean counting s2 for any time."""
    r, o = run(INSTANT.replace("WU", str(warmup)), monkeypatch)
    assert at(o["t"]) == samples
    res = r.result
    assert (res.end, res.arrivals, res.ended, close(res.mean_live, live)) == (4.5, 4, ended, True)
    assert (stage(r, "d").completions, close(stage(r, "d").throughput, runs / (4.5 - warmup))) == (runs, True)


# --- (g) a run without a horizon that drains by its warm-up ------------------------------------------------------

DRAINED = """
stage d : delay;
workload { arrive batch(2); }
session { run d (0.5); }
run { horizon inf; warmup W; }
"""


@pytest.mark.parametrize("warmup", [3.0, 0.5])
def test_a_run_without_a_horizon_that_drains_by_its_warm_up_is_an_error(monkeypatch, warmup):
    """language.txt §2: "Draining before or at warmup is also an error because the measurement interval would
    be empty" (said of `arrivals N`; program-reference: "which would leave nothing to measure");
    docs/simulator.md: `inf` is a horizon and the run "runs until no event is left". batch(2) of 0.5 s
    drains at 0.5: a warm-up of 3 or of 0.5 leaves [warmup, end] empty. (The run used to end at the
    warm-up's own event and report every time average as 0/0, NaN.) Mutation: warm-up 0.49 is no error
    (the next test), and this one then fails."""
    msg = run_error(DRAINED.replace("W;", f"{warmup};"), monkeypatch)
    assert msg == (f"<source>:5:20: error: at t={warmup:g}: run {{ warmup {warmup:g}; }}: no event is left after "
                   f"the warmup {warmup:g}, so there is nothing to measure (without a horizon a run ends when no "
                   "event is left)")


def test_a_run_without_a_horizon_measures_from_its_warm_up_to_its_last_event(monkeypatch):
    """The same run with a warm-up of 0.25: it ends at its last event, 0.5, and its figures are over [0.25,
    0.5]: d holds both jobs (present 2, busy), its two runs end after the warm-up (throughput 2 / 0.25)."""
    r, _ = run(DRAINED.replace("W;", "0.25;"), monkeypatch)
    d = stage(r, "d")
    assert (r.result.end, d.present, d.utilisation, d.completions, d.throughput, r.result.mean_live) == (
        0.5, 2.0, 1.0, 2, 8.0, 2.0)


def test_a_run_without_a_horizon_that_starts_no_session_is_a_warning_whatever_its_warm_up(monkeypatch):
    """docs/language.md, "A workload that starts no session is a warning": such a run "reports zeros and NaN"
    and "It is not an error", so `arrive none` under `horizon inf` with a warm-up of 2 is the warning, not
    the error above, though nothing happens after the warm-up's own event (end 2). Mutation: the error of
    the previous test for any workload (the exemption taken out of Simulation.limit_drained_early) fails."""
    r, _ = run(DRAINED.replace("batch(2)", "none").replace("W;", "2;"), monkeypatch)
    assert r.result.end == 2.0 and math.isnan(stage(r, "d").present)
    assert [n.split(":")[1] for n in r.result.notes] == [" nothing starts a session"]


UNDRAINED = """
stage d : delay;
workload { arrive renewal(1); }
session { run d (serial == 1 ? inf : 1); }
run { horizon H; arrivals 3; }
"""


@pytest.mark.parametrize("horizon, when, where", [("50", 50, "at the horizon"), ("inf", 4, "when no event is left")])
def test_a_finite_run_with_a_session_of_infinite_work_never_drains(monkeypatch, horizon, when, where):
    """language.txt §2: `run { arrivals N; }` "requires exactly N open-workload arrivals and drains their
    sessions … failure to … drain every session by that deadline is an error". Arrivals at 1, 2, 3; s1's
    run of infinite work never ends (its end, an event at inf, never happens). Under horizon 50 the error
    is at the horizon; under horizon inf the run stops at its last event, s2's end at 4, and the message
    says so rather than naming a horizon the run never reached (it said "still live at the horizon" at
    t=4). Mutation: "at the horizon" for horizon inf fails."""
    msg = run_error(UNDRAINED.replace("H;", f"{horizon};"), monkeypatch)
    col = len(f"run {{ horizon {horizon}; ") + 1  # where `arrivals 3` starts
    # and says why (engine.Simulation.forever, the report's warning): s1's run never completes
    assert msg == (f"<source>:5:{col}: error: at t={when}: run {{ arrivals 3; }}: 1 session still live {where} "
                   "(not drained): it waits for ever (no event is left that could wake them): 1 at stage d, which will "
                   "never complete them (session 1, in the run at <source>:4:11)")
