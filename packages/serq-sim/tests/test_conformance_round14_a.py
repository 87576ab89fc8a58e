"""Conformance cases on time and order at a single instant, and on what the report counts at the warm-up's
end and at the horizon, each a small program whose outcome follows by hand from language.txt §2-§3 (and
program-reference.txt, and docs/language.md or docs/simulator.md where the spec leaves the rule open):

(a) events at one instant go in the order they were scheduled: an arrival and a release at one instant,
    in either order, and what the arriving session reads (`holders`, `queued`); a closed population's
    replacement, which is no event, runs before the events still due at its instant;
(b) a run of zero work keeps its session's place; a ps stage whose jobs join and leave at one instant
    reads `present` at each change;
(c) a step stage at an instant where an iteration ends, a session arrives and a resident's run ends and
    its session holds again: who the next iteration admits, and the `budget_left` each header reads;
(d) an iteration planned before the warm-up's end and running across it: left out of the engine's
    counts, its part after the warm-up in the utilisation, its runs counted whole;
(e) requests in flight at the horizon: the iterations planned up to it, the gaps of the inter-token
    latency, the records (none), the engine's requests;
(f) a decode of infinite work across the warm-up: its gaps count by its request's send time;
(g) a gauge's and a pool's figures where a value is held only before the warm-up or only at the end.

Every program runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and samples must be
the same bytes (conform.run). Conventions: `stage d : delay;` runs every job at rate 1 without waiting, so
`run d (w)` lasts w; a step stage of `cost 1` runs iteration k over [k, k + 1] from its start.

Power: each test was run with a mutated expectation (the value named in its comment) or program and
failed; the comment says which.
"""

from __future__ import annotations

import math

import pytest
from conform import at, close, pool, run, stage, vals

# --- (a) an arrival and a release at one instant ----------------------------------------------------------

TIE = """
pool m { cap 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  observe h = holders(m);
  observe q = queued(m);
  hold m (1) { observe a = now; run d (W); }
}
run { horizon 10; arrivals 3; }
"""


def test_an_arrival_at_a_releases_instant_comes_first_when_it_was_scheduled_first(monkeypatch):
    """§3 Ties: "Events at one instant: the order they were scheduled"; docs/language.md: a renewal gap is
    read "at every arrival, for the gap that follows it, before that arrival's session runs". Arrivals at
    1, 2, 3. s0 holds m [1, 2]: at 1 the arrival at 2 is scheduled (before s0 runs), then s0's run's end
    at 2. At 2 the arrival comes first: s1 reads holders 1 and queued 0, joins the queue, and is admitted
    at 2 when s0's end releases m (wait 0). s1 holds [2, 2.5]; s2 arrives at 3 to an empty pool. End 3.5.
    Mutation: expecting s1 to read holders 0 (the release first) fails."""
    r, o = run(TIE.replace("W", "serial == 0 ? 1 : 0.5"), monkeypatch)
    assert vals(o["h"]) == [0.0, 1.0, 0.0] and vals(o["q"]) == [0.0, 0.0, 0.0]
    assert at(o["a"]) == [(0, 1.0), (1, 2.0), (2, 3.0)]
    m = pool(r, "m")
    assert (m.admissions, m.wait, m.queue, r.result.end) == (3, 0.0, 0.0, 3.5)


def test_a_release_at_an_arrivals_instant_comes_first_when_it_was_scheduled_first(monkeypatch):
    """The same rule the other way round. s0 holds m [1, 3]: its end at 3 is scheduled at 1; the arrival
    at 3 is scheduled at 2 (s1's arrival). s1 arrives at 2 (holders 1, queued 0) and waits. At 3 s0's end
    comes first: it releases m and the settle after that event admits s1; then s2 arrives and reads
    holders 1 (s1) and queued 0 (had the arrival come first it would read queued 1: s1 still waiting).
    s1 holds [3, 4], s2 is admitted at 4 and holds [4, 5]. Waits 0, 1, 1; the queue held 1 on [2, 4):
    2 over the run's 5. Mutation: expecting s2's queued to be 1 (the arrival first) fails."""
    r, o = run(TIE.replace("W", "serial == 0 ? 2 : 1"), monkeypatch)
    assert vals(o["h"]) == [0.0, 1.0, 1.0] and vals(o["q"]) == [0.0, 0.0, 0.0]
    assert at(o["a"]) == [(0, 1.0), (1, 3.0), (2, 4.0)]
    m = pool(r, "m")
    assert (m.admissions, close(m.wait, 2 / 3), close(m.queue, 2 / 5), r.result.end) == (3, True, True, 5.0)


def test_a_closed_populations_replacement_runs_before_the_events_still_due_at_its_instant(monkeypatch):
    """§2 `arrive closed(n)`: a new session whenever one ends; §3: "Commands take no time; they run whenever a
    session is ready, in the order sessions became ready", and events at one instant go in the order they
    were scheduled. closed(2): s0 runs 1 s, s1 holds m for 1 s (its run's end scheduled after s0's, in the
    settle). At 1 s0's end comes first and its replacement s2 becomes ready then and runs at once: it reads
    holders 1 (s1 still holds m); then s1's end releases m, and its replacement s3 reads 0. Mutation:
    expecting s2 to read 0 (the replacement run after the instant's other events) fails."""
    _, o = run("""
pool m { cap 5; }
stage d : delay;
workload { arrive closed(2); }
session {
  observe h = holders(m);
  branch (serial == 0) { run d (1); }
  branch (serial == 1) { hold m (1) { run d (1); } }
  branch (serial >= 2) { run d (100); }
}
run { horizon 10; }
""", monkeypatch)
    assert o["h"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0), (3, 1.0, 0.0)]


# --- (b) a run of zero work, a ps stage at one instant ---------------------------------------------------


def test_a_zero_think_keeps_the_place_and_a_ps_stage_reads_present_at_each_change(monkeypatch):
    """§3: "A run of zero work completes at once" and "Commands … run whenever a session is ready, in the
    order sessions became ready"; Ties: "Events at one instant: the order they were scheduled";
    docs/language.md: a ps stage reads its capacity when the jobs present change. batch(3): s0 and s1
    think 1 (events at 1, scheduled at 0 in that order), s2 thinks 0 and goes on at once: it reads
    queue(p) 0 and runs p (1) alone at capacity 1, its end at 1 scheduled after the other two's. At 1:
    s0's think ends first and reads queue(p) 1 (s2's job, its work done but its end not yet come), then
    s1's reads 2; s2's end then leaves s0 and s1, at capacity 2 (present 2): rate 1 each, done at 2.
    Stage p: present 1 on [0, 1), 2 on [1, 2) (3 for no time): 3/10; busy [0, 2]: 2/10; three runs of
    service 1. Mutation: expecting s0 to read 0 at 1 (s2's end first) fails; so does capacity
    `present >= 2 ? 1 : 1` (done at 3)."""
    r, o = run("""
stage p : ps(present >= 2 ? 2 : 1);
stage t : delay;
workload { arrive batch(3); }
session {
  run t (serial == 2 ? 0 : 1);
  observe pr = queue(p);
  run p (1);
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert o["pr"] == [(2, 0.0, 0.0), (0, 1.0, 1.0), (1, 1.0, 2.0)]
    assert at(o["done"]) == [(2, 1.0), (0, 2.0), (1, 2.0)]
    p = stage(r, "p")
    assert (close(p.present, 0.3), close(p.utilisation, 0.2), p.completions, p.service) == (True, True, 3, 1.0)


# --- (c) a step stage where an iteration ends, a session arrives and another holds again -----------------

REJOIN = """
pool reqs { cap 10; admit via E; }
pool bl[2] { }
stage E : step { budget 5; cost 1; }
workload { arrive renewal(1); }
session {
  hold reqs (1), bl[serial] (budget_left(E)) { observe b = used(bl[serial]); run E prefill (6); }
  observe p = now;
  hold reqs (1), bl[serial] (budget_left(E)) { observe b2 = used(bl[serial]); run E decode (2); }
  observe done = now;
}
run { horizon 100; arrivals 2; }
"""


def test_an_iterations_end_admits_an_arrival_and_a_rejoining_session_with_the_budget_left(monkeypatch):
    """§3: the settle starts an iteration on an idle step stage "provided no other event is pending at the
    same instant (a scheduler step sees every arrival up to it)"; the queue is served "after the residents
    have taken their tokens, while the iteration has budget left", and "budget_left(S) then evaluates to
    the budget left" (pool-reference: meaningful in the hold's header). Budget 5, cost 1, arrivals at 1
    and 2; each header takes budget_left(E) units of its own bl member, which the body reads back.
      1: s0 is admitted with the whole budget (b 5) and prefills 5 of 6: [1, 2].
      2: s1's arrival (scheduled at 1 before the iteration's end) and the end; s0 takes its last token,
         s1 is admitted with 5 - 1 = 4 (b 4) and prefills 4: [2, 3].
      3: s0's prefill completes at the iteration's end: it releases and holds again at 3, and the
         iteration planned at 3 sees it: s1 takes its last 2, s0 is admitted with 3 (b2 3) and decodes 1.
      4: s1's prefill completes, it holds again: s0 decodes 1, s1 is admitted with 4 (b2 4), decodes 1.
      5: s0 done; s1's last decode [5, 6].
    Iterations at 1 … 5 with 5, 5, 3, 2, 1 tokens. Mutation: expecting b2 of s0 to be 5 (admitted only at
    the next iteration, with the whole budget) fails; so does budget 4 (s0 then waits until 4)."""
    r, o = run(REJOIN, monkeypatch)
    assert o["b"] == [(0, 1.0, 5.0), (1, 2.0, 4.0)]
    assert at(o["p"]) == [(0, 3.0), (1, 4.0)]
    assert o["b2"] == [(0, 3.0, 3.0), (1, 4.0, 4.0)]
    assert at(o["done"]) == [(0, 5.0), (1, 6.0)]
    e, reqs = stage(r, "E"), pool(r, "reqs")
    assert (e.iterations, e.tokens, reqs.admissions, reqs.wait, r.result.end) == (5, 16 / 5, 4, 0.0, 6.0)


# --- (d) an iteration across the warm-up's end --------------------------------------------------------------

ACROSS = """
pool reqs { cap 10; admit via E; }
stage E : step { budget 4; cost 1.5; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (2); }
  hold reqs (1) { run E prefill (6); run E decode (3); }
}
run { horizon 20; warmup WU; }
"""


@pytest.mark.parametrize("warmup, iterations, kinds, tokens, batch, busy, present", [
    # every iteration: [0, 1.5] 4 prefill tokens, [1.5, 3] 2, [3, 4.5] s0's decode 1 + s1's prefill 3
    # (admitted at 3 with the 3 left), [4.5, 6] 1 + 3, [6, 7.5] 1 + 1 (s0 done), [7.5, 9] and [9, 10.5]
    # s1 alone; s0 on E [0, 7.5], s1 [3, 10.5]
    (0.0, 7, (2, 3, 2), 18, 10, 10.5, 15.0),
    # warm-up 2.5: the iterations planned at 0 and 1.5 are left out, [2.5, 3] of the second is busy time
    (2.5, 5, (0, 3, 2), 12, 8, 8.0, 12.5),
])
def test_an_iteration_planned_before_the_warm_up_counts_only_its_time_after_it(monkeypatch, warmup, iterations,
                                                                               kinds, tokens, batch, busy,
                                                                               present):
    """docs/simulator.md, Engine statistics: "over the iterations planned after the warm-up"; its
    utilisation is "the share of time an iteration runs" and a time average "over [warmup, end]"; a
    stage's completions, wait and service are "the runs completed at or after the warm-up (a run started
    in the warm-up and done after it counts whole)" (docs/language.md). Budget 4, cost 1.5; s0 at 0
    (prefill 6, decode 3), s1 joins at 2 and waits for the iteration planned at 3. The four runs end at
    3, 6, 7.5 and 10.5, all after either warm-up: service (3 + 3 + 4.5 + 4.5) / 4; two requests (one a
    session). Mutation: counting the iteration planned at 1.5 (6 iterations at warm-up 2.5) fails, and so
    does a busy time of 7.5 (leaving out [2.5, 3])."""
    r, _ = run(ACROSS.replace("WU", str(warmup)), monkeypatch)
    e = stage(r, "E")
    span = 20 - warmup
    assert (e.iterations, (e.prefill_only, e.decode_only, e.mixed)) == (iterations, kinds)
    assert (close(e.tokens, tokens / iterations), close(e.batch, batch / iterations)) == (True, True)
    assert close(e.token_utilisation, tokens / (4 * iterations))
    assert (close(e.utilisation, busy / span), close(e.present, present / span)) == (True, True)
    assert (e.completions, e.service, e.wait, e.requests) == (4, 3.75, 0.0, 2)


# --- (e) requests in flight at the horizon ----------------------------------------------------------------

FLIGHT = """
pool reqs { cap 10; admit via E; }
stage E : step { budget 4; cost 1; }
workload { arrive batch(2); }
session {
  set t0 = now;
  hold reqs (1) { run E prefill (3); set f = now; run E decode (3 + 3 * serial); }
  record req { sent = t0; first_token = f; last_token = now; output = 4 + 3 * serial; prompt = 3; }
}
run { horizon H; }
"""


@pytest.mark.parametrize("horizon, iterations, tokens, gaps, done", [
    # [0, 1] s0 prefills 3, s1 1; [1, 2] s0's first decode, s1's last 2 prefill tokens; [2, 3], [3, 4]
    # one decode each (s0's last token at 4); from 4 s1 alone, its last token at 8
    (3.0, 4, 4 + 3 + 2 + 2, 3, 0),
    (4.0, 5, 4 + 3 + 2 + 2 + 1, 5, 1),
    (5.5, 6, 4 + 3 + 2 + 2 + 1 + 1, 6, 1),
])
def test_requests_in_flight_at_the_horizon(monkeypatch, horizon, iterations, tokens, gaps, done):
    """program-reference `run`: without arrivals the run ends at the horizon; docs/language.md: events at
    the horizon itself happen; ITL: "A request still in flight at the run's end … has no record, and so
    no TTFT, TPOT or E2E, but the gaps it had so far are in itl"; docs/simulator.md: a step stage's
    figures are over the iterations planned (the one planned at the horizon included) and its `requests`
    the requests it completed. s0's tokens come at 1 (first), 2, 3, 4; s1's at 2 (first), 3, 4, …, 8.
    Gaps by the horizon: 3 → s0's 2 and s1's 1; 4 → 3 and 2; 5.5 → 3 and 3. s0's row (sent 0, first 1,
    last 4, output 4) is written at 4: TTFT 1, E2EL 4, TPOT 1, every gap 1. Mutation: expecting 4 gaps at
    horizon 4 (leaving out the iteration ending at the horizon) fails; so does horizon 3.9 with the
    horizon-4 expectations."""
    r, _ = run(FLIGHT.replace("H;", f"{horizon};"), monkeypatch)
    e, m = stage(r, "E"), r.result.requests
    assert (e.iterations, close(e.tokens, tokens / iterations), e.utilisation, e.requests) == (iterations, True,
                                                                                             1.0, done)
    assert (m.completed, m.duration, m.ttft.count, m.e2el.count, m.tpot.count) == (done, horizon, done, done, done)
    assert (m.itl.count, m.itl.mean, m.itl.std) == (gaps, 1.0, 0.0)
    if done:
        assert (m.ttft.mean, m.e2el.mean, m.tpot.mean, m.total_output_tokens) == (1.0, 4.0, 1.0, 4.0)
        assert close(m.output_throughput, 4 / horizon)
    else:
        assert all(math.isnan(x) for x in (m.ttft.mean, m.e2el.median, m.tpot.p99))
    # s0 holds its slot until 4, s1 to the end
    assert close(pool(r, "reqs").holders, (2 * min(horizon, 4) + max(horizon - 4, 0)) / horizon)
    assert r.result.ended == done


# --- (f) a decode of infinite work across the warm-up -----------------------------------------------------

UNENDING = """
stage E : step { budget 3; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 3);
  set t0 = now;
  run E prefill (2);
  run E decode (inf);
  record req { sent = t0; first_token = 0; last_token = now; output = 1; }
}
run { horizon 8; warmup WU; }
"""


@pytest.mark.parametrize("warmup, iterations, tokens, gaps, present", [
    # s0: prefill [0, 1], first token 1, decodes one token an iteration from [1, 2] on; s1 joins at 3 (its
    # think's end, scheduled at 0, before the iteration's end at 3): [3, 4] s0 1 + s1 2 (first token 4),
    # then two tokens an iteration; iterations planned at 0 … 8
    (0.0, 9, 2 + 1 + 1 + 3 + 2 * 5, 7 + 4, 8 + 5),
    (2.0, 7, 1 + 3 + 2 * 5, 4, 6 + 5),  # s0 was sent at 0: none of its gaps; s1's 4 (tokens 5 … 8)
    (3.0, 6, 3 + 2 * 5, 4, 5 + 5),  # s1 sent at the warm-up's end counts
    (4.0, 5, 2 * 5, 0, 4 + 4),  # both sent before it
])
def test_an_unending_decode_across_the_warm_up(monkeypatch, warmup, iterations, tokens, gaps, present):
    """docs/language.md: a run's work may be inf ("the job never ends"); ITL: "The report's itl covers every
    gap of the requests sent at or after the warm-up's end and none of those sent before it … a request's
    send time is its record's sent, read when its first output token opens it (from the attribute every
    record … takes sent from)". Neither request ends, so there is no row, and the figures are those of the
    iterations planned after the warm-up, the time averages over [warmup, 8]. Mutation: expecting s1's
    gaps at warm-up 4 (sent at 3) fails, and so does warm-up 3 counting 0 gaps."""
    r, _ = run(UNENDING.replace("WU", str(warmup)), monkeypatch)
    e, m = stage(r, "E"), r.result.requests
    assert (e.iterations, close(e.tokens, tokens / iterations), e.utilisation) == (iterations, True, 1.0)
    assert close(e.present, present / (8 - warmup))
    assert (m.completed, m.itl.count) == (0, gaps)
    assert m.itl.mean == 1.0 if gaps else math.isnan(m.itl.mean)


# --- (g) what is held for no time -------------------------------------------------------------------------

HELD = """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(3); }
gauge g = used(m);
session {
  run d (serial * 2);
  hold m (serial + 1) { run d (serial == 2 ? 100 : 1); }
}
run { horizon H; warmup WU; }
"""


@pytest.mark.parametrize("horizon, warmup, mean, lo, hi, admissions", [
    (4.0, 0.0, 3 / 4, 0.0, 2.0, 3),  # 3 from 4 on is held for no time before the end
    (4.0, 2.0, 2 / 2, 0.0, 2.0, 2),  # 1 on [0, 1) is before the warm-up
    (5.0, 2.0, 5 / 3, 0.0, 3.0, 2),
    (4.0, 3.0, 0.0, 0.0, 0.0, 1),  # only 0 over [3, 4]; s2's admission at the end counts
    (3.0, 2.0, 2.0, 2.0, 2.0, 1),  # 0 from 3 on is held for no time
])
def test_a_value_held_only_before_the_warm_up_or_only_at_the_end(monkeypatch, horizon, warmup, mean, lo, hi,
                                                                 admissions):
    """§3 Gauges: the time average over [warmup, end] and "the least and greatest value held for a positive
    time"; docs/language.md: a pool's admissions are those at or after the warm-up, and events at the
    horizon happen. s0 holds 1 on [0, 1], s1 2 on [2, 3], s2 3 from 4: used is 1, 0, 2, 0, 3 on [0, 1),
    [1, 2), [2, 3), [3, 4), [4, …). The pool's time-average used is the gauge's mean. Mutation: a max of 3
    at horizon 4 (the end instant's value) fails, and so does a min of 0 at horizon 3."""
    r, _ = run(HELD.replace("H;", f"{horizon};").replace("WU", str(warmup)), monkeypatch)
    g, m = r.result.gauges["g"], pool(r, "m")
    assert (close(g.mean, mean), g.min, g.max) == (True, lo, hi)
    assert (close(m.used, mean), m.admissions) == (True, admissions)
