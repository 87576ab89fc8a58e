"""Conformance of language.txt §3's Statistics and Gauges and §2's run forms, by hand, at the warm-up's and
the end's edges, with the settle order of §3's Configuration in play:

* "Commands take no time; they run whenever a session is ready, in the order sessions became ready …
  After every event the interpreter settles: it runs every ready session, then retries growers and
  admissions at every pool": a session that joins a pool's queue is admitted after the other ready
  sessions have run, so they may take a stage before it;
* "the report gives per stage the time-average number present, utilisation, throughput, mean wait and
  service, and per pool the time-average used, cached, queue and holders, the mean queue wait, admissions …";
  "gauge x = e; … its time average over [warmup, end] … and the least and greatest value held for a
  positive time";
* "run { arrivals N; } requires exactly N open-workload arrivals and drains their sessions … Time averages
  and rates use end - warmup";
* a closed population with think times (a `loop`, a `tool` stage for the think), and a step stage's
  iterations and tokens counted from the warm-up (docs/simulator.md: an iteration counts when it is planned
  after the warm-up, a run when it completes after it).

Each program runs on the tier serQ picks and on the general engine (conform.run); the report is asserted as
its JSON reads (conform.report_json). Every number is derived in the case's comment.
"""

from __future__ import annotations

import pytest
from conform import report_json, run

CASES = [
    # Settle order and the warm-up. At 0 s0 joins m's queue (a hold is admitted when the settle retries the
    # pools, after the ready sessions ran), so s1, ready next, takes the fifo first: f [0, 0.5]. s0 is then
    # admitted (2 of m) and waits at f until 0.5: [0.5, 3.5]. s1 holds 4 of m at 0.5 and waits at f: [3.5,
    # 4.5]. Warm-up 2, horizon 6: over [2, 6] used is 6 on [2, 3.5] and 4 on [3.5, 4.5]: 13 / 4 = 3.25 (the
    # gauge's mean too, least 0, greatest 6); both holds admitted before 2: admissions 0, no wait; holders
    # 2 · 1.5 + 1 = 4: 1; s1's observe at 0.5 is before the warm-up. f: completions at 3.5 and 4.5 (both
    # counted, though s0's started before 2): throughput 2 / 4, waits 0.5 and 3 (1.75), service 3 and 1;
    # present 2 on [2, 3.5], 1 on [3.5, 4.5]: 4 / 4; busy [2, 4.5]: 0.625.
    ("settle_order_and_warmup", """
pool m { cap 10; }
stage f : fifo;
gauge u = used(m);
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (2) { run f (3); } }
  else { run f (0.5); hold m (4) { observe t = now; run f (1); } }
}
run { horizon 6; warmup 2; }
""", {"end": 6.0, "arrivals": 2, "ended": 2, "instants": {"t": 0}},
     {"f": {"completions": 2, "throughput": 0.5, "wait": 1.75, "service": 2.0, "present": 1.0,
            "utilisation": 0.625}},
     {"m": {"used": 3.25, "holders": 1.0, "admissions": 0, "queue": 0.0}},
     {"u": {"mean": 3.25, "min": 0.0, "max": 6.0}}),
    # arrivals 3 of renewal(1): sessions at 1, 2, 3, each 2 s on a delay: they end at 3, 4, 5, and the run
    # ends at 5 (end 5, horizon 100 kept). Warm-up 1.5: the measured time is 3.5. d: present 1 on [1.5, 2],
    # 2 on [2, 4], 1 on [4, 5]: 5.5 / 3.5 (the gauge of busy(d) the same, least 1, greatest 2); completions
    # 3: throughput 3 / 3.5, service 2. The observe at arrival: s0's at 1 is before the warm-up.
    ("arrivals_end_the_run", """
stage d : delay;
gauge b = busy(d);
workload { arrive renewal(1); }
session { observe a = now; run d (2); }
run { horizon 100; warmup 1.5; arrivals 3; }
""", {"end": 5.0, "horizon": 100.0, "arrivals": 3, "ended": 3, "instants": {"a": 2}},
     {"d": {"completions": 3, "throughput": 3 / 3.5, "service": 2.0, "present": 5.5 / 3.5}},
     {}, {"b": {"mean": 5.5 / 3.5, "min": 1.0, "max": 2.0}}),
    # A closed population of one with a think time: service 1 on f, think 2 on tool, in a loop: f [0, 1],
    # tool [1, 3], f [3, 4], tool [4, 6], f [6, 7], tool [7, 9] cut by the horizon 8.5. f: 3 completions
    # (throughput 3 / 8.5 = 1 / (S + Z) over whole cycles), busy 3 / 8.5; tool: 2 completions, present
    # 2 + 2 + 1.5 = 5.5 / 8.5. turns: one `turn;` a pass, 3.
    ("closed_with_think_time", """
stage f : fifo;
stage tool : delay;
workload { arrive closed(1); }
session { loop { turn; run f (1); tool 2; } }
run { horizon 8.5; }
""", {"end": 8.5, "arrivals": 1, "ended": 0, "turns": 3},
     {"f": {"completions": 3, "throughput": 3 / 8.5, "utilisation": 3 / 8.5, "wait": 0.0},
      "tool": {"completions": 2, "present": 5.5 / 8.5, "service": 2.0}}, {}, {}),
    # ps(2), three jobs of work 1, 2, 3 from 0: each at 2/3 until the first ends at 1.5 (each served 1),
    # then 1 each until the second ends at 2.5, then the third alone at 2: ends at 3. present 3 · 1.5 + 2 +
    # 0.5 = 7 over 10; service 1.5, 2.5, 3 (7/3); the sessions observe their ends.
    ("ps_stage_figures", """
stage p : ps(2);
workload { arrive batch(3); }
session { run p (serial + 1); observe t = now; }
run { horizon 10; }
""", {"instants": {"t": 3}},
     {"p": {"completions": 3, "throughput": 0.3, "present": 0.7, "service": 7 / 3, "wait": 0.0}}, {}, {}),
    # A step engine from the warm-up: budget 4, prefill 10 (4, 4, 2 over [0, 3]) then decode 2 ([3, 5]).
    # Warm-up 1.5, horizon 10: the iterations planned at 2, 3, 4 count (3: one prefill only, two decode
    # only; tokens 2, 1, 1: 4/3 a step, 1/3 of the budget), the two runs complete after it (service 3 and
    # 2: 2.5), one request; the resident present [1.5, 5]: 3.5 / 8.5.
    ("step_stage_from_the_warmup", """
stage E : step { budget 4; cost 1; }
workload { arrive batch(1); }
session { run E prefill (10); run E decode (2); }
run { horizon 10; warmup 1.5; }
""", {"end": 10.0},
     {"E": {"iterations": 3, "prefill_only": 1, "decode_only": 2, "mixed": 0, "tokens": 4 / 3,
            "token_utilisation": 1 / 3, "completions": 2, "service": 2.5, "requests": 1,
            "present": 3.5 / 8.5, "utilisation": 3.5 / 8.5, "batch": 1.0}}, {}, {}),
    # A gauge across the warm-up's edge, with its CI by hand. s0 holds 5 of m over [0, 2], s1 1 over [2, 4]:
    # at the end of the instant 2 used is 1 (the 5 never held after the warm-up 2: not the greatest), 0 from
    # 4. Over [2, 6]: mean 0.5, least 0, greatest 1; the 20 windows of 0.2 are ten 1s and ten 0s: standard
    # deviation sqrt(0.25 · 20 / 19), CI 2.093 · that / sqrt(20) = 0.240084. q = queued + 10 · holders the
    # same scaled by 10 (nobody queued).
    ("gauge_across_the_warmup", """
pool m { cap 10; }
stage d : delay;
gauge u = used(m);
gauge q = queued(m) + 10 * holders(m);
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (5) { run d (2); } }
  else { run d (2); hold m (1) { run d (2); } }
}
run { horizon 6; warmup 2; }
""", {"end": 6.0},
     {}, {"m": {"used": 0.5, "holders": 0.5, "admissions": 1}},
     {"u": {"mean": 0.5, "min": 0.0, "max": 1.0, "ci": 2.093 * (0.25 * 20 / 19) ** 0.5 / 20 ** 0.5},
      "q": {"mean": 5.0, "min": 0.0, "max": 10.0, "ci": 10 * 2.093 * (0.25 * 20 / 19) ** 0.5 / 20 ** 0.5}}),
    # fifo(c): "c servers, one job each at rate 1" in arrival order. fifo(2), three jobs of 1 at 0: s0 and s1
    # [0, 1], s2 [1, 2]. Utilisation busy servers / c: (2/2 · 1 + 1/2 · 1) / 10; present 3 + 1 over 10;
    # waits 0, 0, 1.
    ("fifo_of_two_servers", """
stage s : fifo(2);
workload { arrive batch(3); }
session { run s (1); observe t = now; }
run { horizon 10; }
""", {"instants": {"t": 3}},
     {"s": {"completions": 3, "utilisation": 0.15, "present": 0.4, "wait": 1 / 3, "service": 1.0}}, {}, {}),
    # fifo(inf): every job served at once; its utilisation is 0 (busy servers / inf, docs/language.md).
    ("fifo_of_infinitely_many", """
stage s : fifo(inf);
workload { arrive batch(3); }
session { run s (1); observe t = now; }
run { horizon 10; }
""", {"instants": {"t": 3}},
     {"s": {"completions": 3, "utilisation": 0.0, "present": 0.3, "wait": 0.0, "service": 1.0}}, {}, {}),
    # The horizon's instant (docs/language.md: events at the horizon itself happen; a gauge's value there
    # is held for no time). The hold of 2 ends at the horizon 5: the observe, the record's row and the next
    # hold's admission (3 units) all happen at 5 and count (admissions 2, one completion), and the gauge's
    # 3 at 5 is in neither its mean nor its greatest: mean 2 over [0, 5], least and greatest 2, CI 0.
    ("the_horizons_instant", """
pool m { cap 10; }
stage d : delay;
gauge u = used(m);
workload { arrive batch(1); }
session {
  hold m (2) { run d (5); }
  observe t = now;
  record row { x = now; }
  hold m (3) { run d (1); }
}
run { horizon 5; }
""", {"end": 5.0, "instants": {"t": 1}, "records": {"row": 1}},
     {"d": {"completions": 1}}, {"m": {"used": 2.0, "admissions": 2}},
     {"u": {"mean": 2.0, "min": 2.0, "max": 2.0, "ci": 0.0}}),
    # "A stage array held by some run with another is shared for the whole run: every job on it, a
    # single-stage run included, is a flow of the policy, and its utilisation is the capacity its flows
    # carry, Σ rate / φ". a is ps(3), b ps(1); F0 = run a, b (1), F1 = run a (1). maxmin: both rise to 1,
    # where b is full: F0 stays at 1, F1 rises to the 2 a has left: F1 ends at 0.5, then F0 alone at 1
    # ends at 1. a carries 3/3 on [0, 0.5] and 1/3 on [0.5, 1]: (0.5 + 1/6) / 10; present 2 · 0.5 + 0.5.
    ("share_maxmin_fills_what_the_bottleneck_leaves", """
stage a : ps(3);
stage b : ps(1);
share maxmin;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run a, b (1); } else { run a (1); }
  observe t = now;
}
run { horizon 10; }
""", {"instants": {"t": 2}},
     {"a": {"utilisation": (0.5 + 1 / 6) / 10, "present": 0.15, "completions": 2},
      "b": {"utilisation": 0.1, "present": 0.1}}, {}, {}),
    # bottleneck: "each flow its equal share at the tightest of its stages, min over s of φ_s / n_s":
    # F0 min(3/2, 1/1) = 1, F1 3/2: F1 ends at 2/3, then F0 min(3, 1) = 1 ends at 1. a carries 2.5/3 on
    # [0, 2/3] and 1/3 on [2/3, 1]: (5/9 + 1/9) / 10; present 2 · 2/3 + 1/3.
    ("share_bottleneck_leaves_it_unused", """
stage a : ps(3);
stage b : ps(1);
share bottleneck;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run a, b (1); } else { run a (1); }
  observe t = now;
}
run { horizon 10; }
""", {"instants": {"t": 2}},
     {"a": {"utilisation": (6 / 9) / 10, "present": (5 / 3) / 10, "completions": 2},
      "b": {"utilisation": 0.1, "present": 0.1}}, {}, {}),
    # §3's two gauges written in the text: "the time fraction some decoder is full is gauge full = max j in N
    # (free(reqs[j]) == 0);, the spread max j in N (used(kv[j])) - min j in N (used(kv[j]))". s0 holds
    # reqs[0] and 4 of kv[0] over [0, 2], s1 reqs[1] and 1 of kv[1] over [1, 4]; horizon 5. full: 1 on [0, 4]:
    # 0.8 (its 20 windows of 0.25: sixteen 1s, four 0s: CI 2.093 · sqrt(0.16 · 20 / 19) / sqrt(20)); spread:
    # 4 on [0, 1], 3 on [1, 2], 1 on [2, 4], 0 on [4, 5]: 9 / 5, least 0, greatest 4.
    ("the_texts_gauges", """
let N = 2;
pool reqs[N] { cap 1; }
pool kv[N] { cap 10; }
stage d : delay;
gauge full = max j in N (free(reqs[j]) == 0);
gauge spread = max j in N (used(kv[j])) - min j in N (used(kv[j]));
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs[0] (1), kv[0] (4) { run d (2); } }
  else { run d (1); hold reqs[1] (1), kv[1] (1) { run d (3); } }
}
run { horizon 5; }
""", {"end": 5.0}, {}, {},
     {"full": {"mean": 0.8, "min": 0.0, "max": 1.0, "ci": 2.093 * (0.16 * 20 / 19) ** 0.5 / 20 ** 0.5},
      "spread": {"mean": 1.8, "min": 0.0, "max": 4.0}}),
]


@pytest.mark.parametrize("src, run_fields, stages, pools, gauges", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_report_by_hand(monkeypatch, src, run_fields, stages, pools, gauges):
    r, _obs = run(src, monkeypatch)
    js = report_json(r)
    assert {k: js[k] for k in run_fields} == run_fields
    for group, want_all in (("stages", stages), ("pools", pools)):
        for name, want in want_all.items():
            entry = next(e for e in js[group] if e["name"] == name)
            assert {k: entry[k] for k in want} == pytest.approx(want, rel=1e-12), name
    for name, want in gauges.items():
        assert {k: js["gauges"][name][k] for k in want} == pytest.approx(want, rel=1e-12), name
