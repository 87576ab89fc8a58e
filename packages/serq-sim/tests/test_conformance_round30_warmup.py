"""Conformance of the warm-up and the horizon, by hand, for every figure of the report:

* language.txt §2: "Time averages and rates use end - warmup"; §3 Statistics: "observe x = e records a
  sample after warm-up"; Gauges: "the report gives its time average over [warmup, end], with a
  batch-means 95% CI over 20 windows, and the least and greatest value held for a positive time";
* docs/language.md (where the spec is silent): a stage's completions, throughput, wait and service and a
  pool's admissions, wait and evictions count "the runs completed at or after the warm-up" and "the events
  at or after it"; a record table keeps "the rows whose column `sent` (without one: whose `time`) is at or
  after the warm-up's end"; "Events at the horizon itself happen …: an arrival at exactly the horizon is
  counted and its session runs its first statements, and their samples are kept";
* docs/simulator.md: "`arrivals` counts every arrival; `ended` and `turns` count after warm-up. A sample
  taken at the warm-up instant counts"; "An iteration is counted when it is planned after the warm-up";
  a gauge's CI "uses 20 equal windows" (t = 2.093).

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the report is asserted as its JSON reads, and every
number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
from conform import pool_json, report_json, run


def _fields(got: dict, want: dict) -> dict:
    return {k: got[k] for k in want}


def _stage(j: dict, name: str) -> dict:
    return next(s for s in j["stages"] if s["name"] == name)


# Three sessions at 0 on a pool of 2 and one fifo: s0 holds over [0, 2] and runs over [0, 2]; s1 holds
# from 0, waits at the fifo until 2 and runs over [2, 4]; s2 waits for the pool until s0's release at 2,
# then for the fifo until 4, and runs over [4, 6]. Warm-up 3: the window [3, 10], 7 s.
THREE_AT_A_POOL = """
pool m { cap 2; }
stage f : fifo;
gauge g = used(m);
workload { arrive batch(3); }
session {
  set t0 = now;
  hold m (1) { run f (2); }
  observe resp = now - t0;
  record req { sent = t0; x = now; }
  record fin { x = now - t0; }
}
run { horizon 10; warmup 3; }
"""


def test_every_figure_counts_from_the_warm_up(monkeypatch):
    """The samples: s1's response 4 at 4 and s2's 6 at 6 (s0's at 2 is before it). The tables: `req`'s
    rows were all sent at 0, so none is kept; `fin`'s rows, by their time 2, 4 and 6, keep 2. ended 2
    (s0 ended at 2), arrivals 3. The fifo: the runs done at 4 and 6 (waits 2 and 2, services 2), 2 in 7 s;
    present s1 and s2 on [3, 4], s2 on [4, 6]: 4 over 7; busy [3, 6]: 3 over 7. The pool: s2 was admitted
    at 2, so no admission and no wait in the window; used 2 on [3, 4], 1 on [4, 6]: 4 over 7, as the gauge,
    whose least value held is 0 and greatest 2; mean live the same 4 over 7."""
    r, o = run(THREE_AT_A_POOL, monkeypatch)
    assert o["resp"] == [(1, 4.0, 4.0), (2, 6.0, 6.0)]
    j = report_json(r)
    assert (j["arrivals"], j["ended"], j["mean_live"]) == (3, 2, 4 / 7)
    assert j["records"] == {"req": 0, "fin": 2}
    assert _fields(j["observes"]["resp"], {"count": 2, "mean": 5.0}) == {"count": 2, "mean": 5.0}
    assert _fields(_stage(j, "f"), {"completions": 2, "throughput": 2 / 7, "wait": 2.0, "service": 2.0,
                                   "present": 4 / 7, "utilisation": 3 / 7}) == \
        {"completions": 2, "throughput": 2 / 7, "wait": 2.0, "service": 2.0, "present": 4 / 7,
         "utilisation": 3 / 7}
    want = {"used": 4 / 7, "holders": 4 / 7, "queue": 0.0, "admissions": 0, "wait": None}
    assert _fields(pool_json(r, "m"), want) == want
    assert _fields(j["gauges"]["g"], {"mean": 4 / 7, "min": 0.0, "max": 2.0}) == \
        {"mean": 4 / 7, "min": 0.0, "max": 2.0}


# s0 at 0, s1 at 2 and s2 at 4 each hold 3 of kv for 1 s and cache 3; each admission after the first
# evicts the entry before it (3 + 3 > 4): at 2 s0's, at 4 s1's. A delay of 2 · serial comes first.
EVICTIONS = """
pool kv { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (2 * serial);
  hold kv (3) { observe a = now; run d (1); } cache (3);
}
run { horizon 10; warmup W; }
"""


@pytest.mark.parametrize("w, a, kv, d, live", [
    # No warm-up: 3 admissions, 2 evictions of 3; used 3 · 3 = 9 over 10; cached 3 on [1, 2], [3, 4],
    # [5, 10]: 21 over 10. d: the runs of 1 (three) and the delays of 2 and 4 done at 2 and 4.
    (0, [0.0, 2.0, 4.0], {"admissions": 3, "evicted_entries": 2, "evicted_units": 6.0, "used": 0.9,
                          "cached": 2.1},
     {"completions": 5, "service": 9 / 5}, 0.9),
    # Warm-up 3: s2's admission and its eviction at 4; used 3 on [4, 5]: 3 over 7; cached 3 on [3, 4]
    # and [5, 10]: 18 over 7. d: s1's run of 1 done at 3 (at the warm-up: counted), s2's delay of 4 at 4
    # and its run at 5; live: s2 over [3, 5] (s1 ended at 3): 2 over 7.
    (3, [4.0], {"admissions": 1, "evicted_entries": 1, "evicted_units": 3.0, "used": 3 / 7, "cached": 18 / 7},
     {"completions": 3, "service": 2.0}, 2 / 7),
    # Warm-up 4: the admission and eviction at 4 are at it, so they count, and so does the sample taken
    # then; used 3 over 6, cached 15 over 6.
    (4, [4.0], {"admissions": 1, "evicted_entries": 1, "evicted_units": 3.0, "used": 0.5, "cached": 2.5},
     {"completions": 2, "service": 2.5}, 1 / 6),
    # Warm-up 4.5: none of them; used 3 · 0.5 over 5.5, cached 15 over 5.5.
    (4.5, [], {"admissions": 0, "evicted_entries": 0, "evicted_units": 0.0, "used": 1.5 / 5.5,
               "cached": 15 / 5.5},
     {"completions": 1, "service": 1.0}, 0.5 / 5.5),
])
def test_pool_events_count_at_or_after_the_warm_up(monkeypatch, w, a, kv, d, live):
    r, o = run(EVICTIONS.replace("W;", f"{w};"), monkeypatch)
    assert [t for _s, t, _v in o["a"]] == a
    j = report_json(r)
    assert j["instants"] == {"a": len(a)}
    assert j["mean_live"] == pytest.approx(live, rel=1e-12)
    assert _fields(pool_json(r, "kv"), kv) == pytest.approx(kv, rel=1e-12)
    assert _fields(_stage(j, "d"), d) == pytest.approx(d, rel=1e-12)


# One decode of 5 tokens, one an iteration of 1 s: iterations planned at 0, 1, 2, 3 and 4.
WARM_ENGINE = """
stage E : step { budget 1; cost 1; }
workload { arrive batch(1); }
session { run E decode (5); observe done = now; }
run { horizon 10; warmup W; }
"""


@pytest.mark.parametrize("w, want", [
    (0, {"iterations": 5, "utilisation": 0.5, "throughput": 0.1, "requests": 1}),
    # planned at 3 and 4 (the one planned at 2 is counted nowhere); busy [2.5, 5]: 2.5 over 7.5; the run
    # done at 5 counts
    (2.5, {"iterations": 2, "utilisation": 1 / 3, "throughput": 1 / 7.5, "requests": 1}),
    # the iteration planned at the warm-up's instant counts
    (3, {"iterations": 2, "utilisation": 2 / 7, "throughput": 1 / 7, "requests": 1}),
])
def test_iterations_count_when_planned_from_the_warm_up(monkeypatch, w, want):
    r, o = run(WARM_ENGINE.replace("W;", f"{w};"), monkeypatch)
    assert o["done"] == [(0, 5.0, 5.0)]
    e = _stage(report_json(r), "E")
    assert _fields(e, want) == pytest.approx(want, rel=1e-12)
    assert (e["tokens"], e["token_utilisation"], e["completions"]) == (1.0, 1.0, 1)


# used(m): 5 on [0, 2] (s0), 1 on [2, 10] (s0 again), and 2 more on [3, 4] (s1): 5, 1, 3, 1.
GAUGED = """
pool m { cap 10; }
stage d : delay;
gauge g = used(m);
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (5) { run d (2); } hold m (1) { run d (8); } }
  else { run d (3); hold m (2) { run d (1); } }
}
run { horizon 10; warmup W; }
"""


@pytest.mark.parametrize("w, mean, least, most, ci", [
    # 20 windows of 0.5: four of 5, two of 1, two of 3, twelve of 1; mean 2, squares 4 · 9 + 14 · 1 + 2 · 1
    # = 52: half-width 2.093 sqrt(52 / 19 / 20)
    (0, 2.0, 1.0, 5.0, 2.093 * math.sqrt(52 / 19 / 20)),
    # [2, 10]: 1 + 3 + 6 = 10 over 8; the 5 ends at the warm-up's instant, held for no time in the window
    (2, 1.25, 1.0, 3.0, None),
    # [4.5, 10]: 1 throughout
    (4.5, 1.0, 1.0, 1.0, 0.0),
])
def test_a_gauge_over_the_window(monkeypatch, w, mean, least, most, ci):
    r, _o = run(GAUGED.replace("W;", f"{w};"), monkeypatch)
    g = report_json(r)["gauges"]["g"]
    assert (g["mean"], g["min"], g["max"]) == (mean, least, most)
    if ci is not None:
        assert g["ci"] == pytest.approx(ci, rel=1e-12)


# Arrivals at 5 and 10 (renewal(5): the first after one gap); each takes 1 of m for 5 s on a delay.
AT_THE_HORIZON = """
pool m { cap 5; }
stage d : delay;
gauge g = holders(m);
workload { arrive renewal(5); }
session {
  observe a = now;
  record r { x = serial; }
  hold m (1) { run d (5); }
  observe b = now;
  record r { x = serial; }
}
run { horizon 10; }
"""


def test_events_at_the_horizon_happen_and_their_samples_are_kept(monkeypatch):
    """At 10 two events are due, both scheduled at 5: s1's arrival (the renewal schedules the next gap
    before the arriving session runs) and then s0's run's end. So s1 arrives (arrivals 2), samples `a`,
    writes its row and is admitted (admissions 2); s0 samples `b`, writes its row and ends (ended 1). The
    delay's run done at 10 counts; holders 1 on [5, 10], and the value at 10 is held for no time."""
    r, o = run(AT_THE_HORIZON, monkeypatch)
    assert o["a"] == [(0, 5.0, 5.0), (1, 10.0, 10.0)]
    assert o["b"] == [(0, 10.0, 10.0)]
    rows = r.records()
    assert list(zip(rows["session"], rows["time"])) == [(0, 5.0), (1, 10.0), (0, 10.0)]
    j = report_json(r)
    assert (j["arrivals"], j["ended"], j["end"], j["records"]) == (2, 1, 10.0, {"r": 3})
    assert _fields(pool_json(r, "m"), {"admissions": 2, "holders": 0.5}) == {"admissions": 2, "holders": 0.5}
    assert _fields(_stage(j, "d"), {"completions": 1, "service": 5.0}) == {"completions": 1, "service": 5.0}
    assert _fields(j["gauges"]["g"], {"mean": 0.5, "min": 0.0, "max": 1.0}) == {"mean": 0.5, "min": 0.0,
                                                                                "max": 1.0}


# s0 holds 1 of m over [0, 10]; s1 takes 7 more at 10, the horizon.
NEW_EXTREME_AT_THE_HORIZON = """
pool m { cap 10; }
stage d : delay;
gauge g = used(m);
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) { run d (10); } } else { run d (10); hold m (7) { run d (1); } }
  observe x = now;
}
run { horizon 10; }
"""


def test_a_value_a_gauge_takes_at_the_horizon_is_held_for_no_time(monkeypatch):
    """used is 1 over [0, 10]; at 10 s0 releases and s1 takes 7: the instant's last state, 7, is held
    for no time, so the greatest value held is 1, the mean 1; s1's admission at 10 counts."""
    r, o = run(NEW_EXTREME_AT_THE_HORIZON, monkeypatch)
    assert o["x"] == [(0, 10.0, 10.0)]
    j = report_json(r)
    assert j["gauges"]["g"] == {"mean": 1.0, "ci": 0.0, "min": 1.0, "max": 1.0}
    assert _fields(pool_json(r, "m"), {"admissions": 2, "used": 1.0}) == {"admissions": 2, "used": 1.0}


# Two decodes of 10 and 20 tokens on a budget of 2: iterations at 0, 1, …, 9 serve both; s0 is done at
# 10, the horizon, and the iteration planned then for s1 alone is planned within the run.
PLANNED_AT_THE_HORIZON = """
stage E : step { budget 2; cost 1; }
workload { arrive batch(2); }
session { run E decode (serial == 0 ? 10 : 20); observe done = now; }
run { horizon 10; }
"""


def test_an_iteration_planned_at_the_horizon_is_counted(monkeypatch):
    """"An iteration is counted when it is planned after the warm-up", and the horizon's instant happens:
    11 iterations, 10 of two tokens and the one planned at 10 of one: tokens 21 over 11, over budgets of
    22; busy [0, 10]: utilisation 1; one run done (s0's, at 10)."""
    r, o = run(PLANNED_AT_THE_HORIZON, monkeypatch)
    assert o["done"] == [(0, 10.0, 10.0)]
    e = _stage(report_json(r), "E")
    want = {"iterations": 11, "decode_only": 11, "tokens": 21 / 11, "token_utilisation": 21 / 22,
            "utilisation": 1.0, "completions": 1, "requests": 1, "present": 2.0}
    assert _fields(e, want) == want


TURNS = """
stage s : fifo;
stage think : delay;
workload { arrive batch(2); init { set K = 0; } turn { set K = K + 10; } }
session {
  turn;
  loop {
    run s (K / 10);
    observe k = K;
    branch (turn_no < 3) { run think (2); turn; } else { end; }
  }
}
run { horizon 20; warmup W; }
"""


@pytest.mark.parametrize("w, turns, think, s", [
    # The turns are s0's at 0, 3, 7 and s1's at 0, 4, 9 (test_conformance_round30_flow's hand
    # timeline); the fifo runs s0 [3, 5], s1 [4, 7] (joined at 4, started at 5), s0 [7, 10], s1 [9, 13]
    # (joined at 9, started at 10). From 4: turns at 4, 7, 9; thinks done at 4, 7, 9; the four runs
    # (waits 0, 1, 0, 1; services 2, 2, 3, 3); present 1 + 3 + 3 + 4 over 16, busy [4, 13]; live s0
    # to 10 and s1 to 13: 15 over 16.
    (4, 3, {"completions": 3}, {"completions": 4, "wait": 0.5, "service": 2.5, "present": 11 / 16,
                                "utilisation": 9 / 16}),
    # From 5: turns at 7 and 9; thinks done at 7, 9; the same four runs (s0's first done at 5); present
    # 0 + 2 + 3 + 4 over 15, busy [5, 13]
    (5, 2, {"completions": 2}, {"completions": 4, "wait": 0.5, "service": 2.5, "present": 9 / 15,
                                "utilisation": 8 / 15}),
])
def test_turns_and_ended_count_from_the_warm_up(monkeypatch, w, turns, think, s):
    r, o = run(TURNS.replace("W;", f"{w};"), monkeypatch)
    assert [t for _s, t, _v in o["k"]] == [5.0, 7.0, 10.0, 13.0]
    j = report_json(r)
    assert (j["turns"], j["ended"], j["arrivals"]) == (turns, 2, 2)
    assert _fields(_stage(j, "think"), think) == think
    assert _fields(_stage(j, "s"), s) == pytest.approx(s, rel=1e-12)


# Sessions every 2 s from 2 (renewal(2)), each a prefill of 1 token and a decode of 2 on an engine of one
# token an iteration (1 s). s0: prefill [2, 3], decode [3, 5]. s1 (at 4): prefill [5, 6], decode [6, 8].
# s2 (at 6) waits behind s1's decode (admission order, one token a step): prefill [8, 9], decode from 9.
# s3 (at 8) and s4 (at 10) get nothing before the horizon.
RECORDED_REQUESTS = """
stage E : step { budget 1; cost 1; }
workload { arrive renewal(2); }
session {
  set t0 = now;
  run E prefill (1);
  set ft = now;
  run E decode (2);
  record req { sent = t0; first_token = ft; last_token = now; output = 3; }
}
run { horizon 10; warmup 3; }
"""


def test_the_request_metrics_take_the_requests_sent_from_the_warm_up(monkeypatch):
    """The records keep s1's row alone (s0 was sent at 2, before the warm-up's end): TTFT 6 - 4 = 2, E2E
    latency 8 - 4 = 4, TPOT (8 - 6) / 2 = 1, 1 request over 7 s, 3 output tokens. The inter-token gaps are
    the requests' sent from the warm-up: s1's 7 - 6 and 8 - 7 and s2's 10 - 9, three of 1. The engine counts
    the requests that end from the warm-up whatever their send time, s0's at 5 and s1's at 8: 2 over 7 s;
    its runs done from 3: s0's prefill at 3 (at the warm-up) and decode at 5, s1's two, s2's prefill: 5,
    their times there 1, 2, 2, 2 (s1's prefill joined at 4, served at 5) and 3 (s2's, 6 to 9); its
    iterations planned from 3, at 3, 4, …, 10 (the horizon's included): 8 of one token, two of them
    prefills only (at 5 and 8). Live: s0 on [3, 5], s1 on [4, 8], s2 on [6, 10], s3 on [8, 10]: 12 over 7;
    ended 2."""
    r, _o = run(RECORDED_REQUESTS, monkeypatch)
    j = report_json(r)
    assert (j["arrivals"], j["ended"], j["mean_live"], j["records"]) == (5, 2, 12 / 7, {"req": 1})
    q = j["requests"]
    assert _fields(q, {"completed": 1, "duration": 7.0, "total_output_tokens": 3.0,
                       "request_throughput": 1 / 7, "output_throughput": 3 / 7}) == \
        {"completed": 1, "duration": 7.0, "total_output_tokens": 3.0, "request_throughput": 1 / 7,
         "output_throughput": 3 / 7}
    assert {k: (q[k]["count"], q[k]["mean"]) for k in ("ttft", "tpot", "itl", "e2el")} == \
        {"ttft": (1, 2.0), "tpot": (1, 1.0), "itl": (3, 1.0), "e2el": (1, 4.0)}
    want = {"requests": 2, "request_throughput": 2 / 7, "completions": 5, "service": 2.0, "iterations": 8,
            "prefill_only": 2, "decode_only": 6, "utilisation": 1.0, "present": 12 / 7}
    assert _fields(_stage(j, "E"), want) == want


# cap 2: s0 holds 2 over [0, 4]; s1 waits for 1 from 0 and holds it over [4, 5]; s2 asks 3 at 0 and s3
# 5 at 5: both can never fit and are rejected, their sessions ended. Warm-up 3.
REJECTED = """
pool m { cap 2; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (2) { run d (4); } }
  branch (serial == 1) { hold m (1) { run d (1); } }
  branch (serial == 2) { hold m (3) { run d (1); } }
  branch (serial == 3) { run d (5); hold m (5) { run d (1); } }
  observe done = now;
}
run { horizon 10; warmup 3; }
"""


def test_a_wait_begun_before_the_warm_up_counts_whole_and_rejections_from_it(monkeypatch):
    """s1's admission at 4 is in the window and its wait counts whole, 4 (from 0); s3's rejection at 5
    counts, s2's at 0 does not. used 2 on [3, 4], 1 on [4, 5]: 3 over 7; queue s1 on [3, 4]: 1 over 7;
    holders s0 then s1 over [3, 5]: 2 over 7; ended s0 at 4, s1 and s3 at 5 (s2 at 0 is before it)."""
    r, o = run(REJECTED, monkeypatch)
    # a rejected session ends at its hold: s2 and s3 take no sample
    assert o["done"] == [(0, 4.0, 4.0), (1, 5.0, 5.0)]
    want = {"admissions": 1, "wait": 4.0, "rejections": 1, "used": 3 / 7, "queue": 1 / 7, "holders": 2 / 7,
            "over_cap": 0}
    assert _fields(pool_json(r, "m"), want) == want
    j = report_json(r)
    assert (j["ended"], j["arrivals"]) == (3, 4)
    assert [c for c in j["codes"] if c is not None] == ["rejected"]
    # the batch drained at 5 and the run stood idle to its horizon: 5 of the 7 s measured (notes.idle_tail)
    assert [n for n, c in zip(j["notes"], j["codes"]) if c is None] == [
        "note: every session ended by t=5 and none was left to arrive, so the run stood idle until its horizon 10: "
        "its rates and time averages are over the 7 s after the warm-up, 71.4 % of them idle (a horizon of inf, "
        "`--horizon inf`, ends a run when it drains)"]


# Two decodes of 2 on an engine of one token a step, then each session runs 1 + serial on a fifo(2) and 1
# on a ps(1); s2 goes to the fifo at once.
GAUGED_STAGES = """
stage E : step { budget 1; cost 1; }
stage f : fifo(2);
stage p : ps(1);
gauge b = busy(E);
gauge q = queue(E);
gauge bf = busy(f) + 10 * queue(f);
gauge bp = busy(p);
workload { arrive batch(3); }
session {
  branch (serial < 2) { run E decode (2); }
  run f (1 + serial);
  run p (1);
}
run { horizon 10; }
"""


def test_gauges_of_stage_observables(monkeypatch):
    """docs/language.md: `queue(s)` the jobs at the stage (a step stage's residents), `busy(s)` those in
    service (the jobs the running iteration serves). E: s0's two tokens over [0, 2], s1's over [2, 4]:
    busy 1 on [0, 4] (4 over 10), residents 2 on [0, 2], 1 on [2, 4] (6 over 10). f: s2 runs 3 over [0,
    3], s0 1 over [2, 3], s1 2 over [4, 6], none waiting: busy + 10 · queue is 11 a job: 11 · 2 + 22 + 11 ·
    2 = 66 over 10. p: s2 and s0 from 3 at 1/2 each (done at 5), s1 over [6, 7]: 2 · 2 + 1 over 10."""
    r, _o = run(GAUGED_STAGES, monkeypatch)
    g = report_json(r)["gauges"]
    assert {k: (v["mean"], v["min"], v["max"]) for k, v in g.items()} == \
        {"b": (0.4, 0.0, 1.0), "q": (0.6, 0.0, 2.0), "bf": (6.6, 0.0, 22.0), "bp": (0.5, 0.0, 2.0)}


# Decodes of 400 (s0 at 0), 100 (s1 at 10.1) and 50 (s2 at 20.2) tokens, steps of 0.25 s, a budget of 2
# before 30 and 1 from it; each records its request (the first token is a run of its own).
QUIET_ROUNDS = """
stage E : step { budget now < 30 ? 2 : 1; cost 0.25; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial * 10.1);
  set t0 = now;
  set n = serial == 0 ? 400 : serial == 1 ? 100 : 50;
  run E decode (1);
  set ft = now;
  run E decode (n - 1);
  record req { sent = t0; first_token = ft; last_token = now; output = n; }
}
run { horizon 200; warmup 5; }
"""


def test_inter_token_gaps_across_quiet_rounds_and_a_budget_that_falls(monkeypatch):
    """s0 takes a token every 0.25 from 0: 120 by 30, then alone in the budget of 1 its other 280, done
    at 100. s1 (sent 10.1) takes tokens at 10.5, 10.75, …, 30 (79), then none until s0 is done: its 80th at
    100.25 and its last at 105.25. s2 (sent 20.2) gets its first at 105.5 and its last at 117.75.

    The records of the requests sent from 5, s1 and s2: TTFT 0.4 and 85.3, E2E 95.15 and 97.55, TPOT
    94.75/99 and 12.25/49. Their gaps: s1's 78 + 20 of 0.25 and one of 70.25, s2's 49 of 0.25: 148 with
    a sum of 107. The steps planned from 5, at 5, 5.25, …, 117.5: 451; tokens 21 + 2 · 79 + 280 + 21 + 50
    = 530 over budgets of 2 · 100 + 351."""
    r, _o = run(QUIET_ROUNDS, monkeypatch)
    j = report_json(r)
    q = j["requests"]
    got = {k: (q[k]["count"], q[k]["mean"]) for k in ("ttft", "tpot", "itl", "e2el")}
    want = {"ttft": (2, 42.85), "tpot": (2, (94.75 / 99 + 0.25) / 2), "itl": (148, 107 / 148),
            "e2el": (2, 96.35)}
    assert got.keys() == want.keys()
    for k, (n, mean) in want.items():
        assert got[k][0] == n and math.isclose(got[k][1], mean, rel_tol=1e-12), (k, got[k], want[k])
    e = _stage(j, "E")
    assert (e["iterations"], e["requests"], e["decode_only"]) == (451, 3, 451)
    assert math.isclose(e["tokens"], 530 / 451, rel_tol=1e-12)
    assert math.isclose(e["token_utilisation"], 530 / 551, rel_tol=1e-12)
