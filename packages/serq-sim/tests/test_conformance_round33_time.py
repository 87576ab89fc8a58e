"""Conformance of language.txt's rules about time, by hand, in the small forms a port of the reference's tests
brings:

* §3, Ties: "Events at one instant: the order they were scheduled; sessions run in the order they became
  ready; jobs of a ps stage with equal finish tags finish in the order they started", with docs/language.md's
  "`arrive renewal(g)` reads `g` at 0 and at every arrival, for the gap that follows it, before that
  arrival's session runs" (so the next arrival is scheduled before the events the arriving session makes);
* §3, Stages: "A run of zero work completes at once": think times of 0 (`run think (0)`, `tool 0;`) between
  turns, and a zero run at a busy fifo, which does not queue;
* §2: "poisson(rate) starts with an arrival at time zero", `arrive batch(n)` and `arrive closed(n)` at 0, and
  a closed session that ends at the instant it starts (the guard that names the workload);
* §2, the run forms: "run { arrivals N; } requires exactly N open-workload arrivals and drains their
  sessions. horizon bounds both arrival generation and draining; failure to generate N arrivals or drain
  every session by that deadline is an error. Draining before or at warmup is also an error … Time averages
  and rates use end - warmup";
* §3, Statistics and Gauges at the warm-up's and the horizon's instants, for every kind of figure: an
  observe's sample, a record's row, a gauge ("its time average over [warmup, end] … the least and greatest
  value held for a positive time … read at the end of every instant"), a stage's completions, a pool's
  admissions and evictions, `ended` (docs/language.md, where the spec is silent: the warm-up's own instant is
  measured, and events at the horizon itself happen).

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value) and
the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
import serq_frontend
from conform import figure, refused, report_json, run, run_error, subset
from tiers import same_json

CASES = [
    # "Events at one instant: the order they were scheduled". renewal(1): session 0 arrives at 1; the arrival
    # at 2 is scheduled then, before 0 runs and starts d (1), whose end at 2 is scheduled after it. At 2 the
    # arrival comes first: session 1 goes straight to f, [2, 3]; then 0's d ends and it queues at f: [3, 4].
    # At 3 and 4 sessions 2 and 3 go to f too: 2 behind 0, [4, 5]; 3 at 4 behind it, never started by the
    # horizon 5 (horizon 5: arrivals at 1 … 5, the one at the horizon counted).
    ("arrival_before_a_job_end_scheduled_after_it", """
stage d : delay;
stage f : fifo;
workload { arrive renewal(1); }
session {
  branch (serial == 0) { run d (1); }
  run f (1);
  observe t = now + 0 * serial;
}
run { horizon 5; }
""", {"t": [(1, 3.0, 3.0), (0, 4.0, 4.0), (2, 5.0, 5.0)]},
     {"arrivals": 5, "ended": 3, ("f", None): {"completions": 3}}),
    # "jobs of a ps stage with equal finish tags finish in the order they started": session 1 starts 1.5 at
    # ps(1) at 0; session 0 starts 0.5 there at 1 (after d (1)). Over [0, 1] 1 is alone (0.5 left); then both
    # at 1/2 end together at 2. 1 started first, so it reaches the fifo first: 1 [2, 3], 0 [3, 4].
    ("ps_equal_finish_in_start_order", """
stage d : delay;
stage p : ps(1);
stage f : fifo;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); run p (0.5); } else { run p (1.5); }
  run f (1);
  observe t = now + 0 * serial;
}
run { horizon 10; }
""", {"t": [(1, 3.0, 3.0), (0, 4.0, 4.0)]},
     {("p", None): {"completions": 2, "present": 0.3, "service": 1.5}}),
    # Think times of 0 between turns: each session's three turns run s (1) on one fifo, then `run think (0)`
    # and `tool 0;`, which complete at once, and the next turn. 0 [0, 1], 1 (waiting since 0) [1, 2], 0 again
    # [2, 3] (back at 1, behind 1), … 1's last [5, 6]. Waits 0, 1, 1 (0) and 1, 1, 1 (1): 5 / 6; present 6 of
    # service + 5 of waiting: 11 / 10; the zero runs are no jobs: think and tool complete nothing; turns 6,
    # live 5 + 6.
    ("zero_think_times", """
stage s : fifo;
stage think : delay;
stage tool : delay;
workload { arrive batch(2); }
session {
  turn;
  loop {
    run s (1);
    observe t = now + 0 * serial;
    branch (turn_no < 3) { run think (0); tool 0; turn; } else { end; }
  }
}
run { horizon 10; }
""", {"t": [(0, 1.0, 1.0), (1, 2.0, 2.0), (0, 3.0, 3.0), (1, 4.0, 4.0), (0, 5.0, 5.0), (1, 6.0, 6.0)]},
     {"turns": 6, "mean_live": 1.1, ("s", None): {"completions": 6, "wait": 5 / 6, "present": 1.1},
      ("think", None): {"completions": 0, "present": 0.0}, ("tool", None): {"completions": 0}}),
    # A run of zero work at a busy fifo does not wait: session 0 holds f over [0, 2]; session 1's run f (0)
    # completes at 0 (no job: f completes 1 run, waits 0).
    ("zero_run_at_a_busy_fifo", """
stage f : fifo;
workload { arrive batch(2); }
session {
  run f (serial == 0 ? 2 : 0);
  observe t = now + 0 * serial;
}
run { horizon 10; }
""", {"t": [(1, 0.0, 0.0), (0, 2.0, 2.0)]}, {("f", None): {"completions": 1, "wait": 0.0, "present": 0.2}}),
    # "poisson(rate) starts with an arrival at time zero": session 0's arrival time is 0 under any seed.
    ("poisson_first_arrival_at_zero", """
workload { arrive poisson(1e-9); }
session { observe a = now + serial; }
run { horizon 10; seed 7; }
""", {"a": [(0, 0.0, 0.0)]}, {"arrivals": 1, "ended": 1}),
    # run { arrivals N; }: renewal(1) sends 3 sessions at 1, 2, 3, each 2 s at d: the last ends at 5, the
    # run's end. Over end - warmup = 5: d present 2 · 3 / 5, busy [1, 5]: 4 / 5, throughput 3 / 5; live 6 / 5.
    ("arrivals_drain_end", """
stage d : delay;
workload { arrive renewal(1); }
session { run d (2); }
run { arrivals 3; }
""", {}, {"end": 5.0, "arrivals": 3, "ended": 3, "mean_live": 1.2,
          ("d", None): {"present": 1.2, "utilisation": 0.8, "throughput": 0.6, "completions": 3}}),
    # … with warmup 4, the window is [4, 5]: session 1's run ends at 4, the warm-up's instant (counted), 2's at
    # 5: completions 2, throughput 2 / 1; present over [4, 5] 1; ended 2.
    ("arrivals_warmup_just_before_end", """
stage d : delay;
workload { arrive renewal(1); }
session { run d (2); }
run { horizon 100; warmup 4; arrivals 3; }
""", {}, {"end": 5.0, "horizon": 100.0, "ended": 2,
          ("d", None): {"present": 1.0, "throughput": 2.0, "completions": 2}}),
    # poisson with arrivals 1: the one session arrives at 0 and runs 2: end 2.
    ("arrivals_poisson_one", """
stage d : delay;
workload { arrive poisson(0.5); }
session { run d (2); }
run { horizon 10; arrivals 1; }
""", {}, {"end": 2.0, "arrivals": 1, ("d", None): {"present": 1.0, "completions": 1}}),
    # "Reports keep horizon as the configured deadline and expose the actual termination time as end …
    # Without an arrival limit, end equals horizon."
    ("no_arrival_limit_end_is_horizon", """
stage d : delay;
workload { arrive renewal(1); }
session { run d (2); }
run { horizon 3.5; }
""", {}, {"end": 3.5, "horizon": 3.5, "arrivals": 3, "ended": 1}),
    # The warm-up's instant, every kind of figure (warmup 2): session 0 holds all 4 of P over [0, 2] and caches
    # them; session 1 runs d [0, 2], then holds 2 of P at 2 (the admission evicts 0's entry whole: 2 + 4 > 4),
    # observes a = 2, writes a row sent at 2 and runs d [2, 3]. Counted at 2: 0's and 1's first runs at d, the
    # admission, the eviction, the sample, the row, 0's end: d completions 3 (service 5 / 3), P admissions 1,
    # evicted 1 entry of 4, ended 2. Over [2, 10]: P used 2 over [2, 3]: 2 / 8; gauge used(P) the same mean,
    # least 0 (after 3), greatest 2 (the 4 before 2 is not in the window); d present 1 / 8; live 1 / 8.
    ("warmup_instant_every_figure", """
pool P { cap 4; }
stage d : delay;
gauge g = used(P);
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (4) { run d (2); } cache (4);
  } else {
    run d (2);
    hold P (2) { observe a = now; record r { sent = now; x = serial; } run d (1); }
  }
}
run { horizon 10; warmup 2; }
""", {"a": [(1, 2.0, 2.0)]},
     {"ended": 2, "mean_live": 0.125, "records": {"r": 1},
      ("gauge", "g"): {"mean": 0.25, "min": 0.0, "max": 2.0},
      ("d", None): {"completions": 3, "service": 5 / 3, "present": 0.125},
      ("P", None): {"admissions": 1, "evicted_entries": 1, "evicted_units": 4.0, "used": 0.25, "cached": 0.0}}),
    # The horizon's instant: renewal(5), horizon 10: sessions arrive at 5 and 10 (the arrival at the horizon
    # counts and its session runs its first statements: its sample and its row are kept, its hold admitted).
    # Session 0 holds 1 of P over [5, 10], its run at d ends at 10 (a completion). At 10 the arrival comes
    # first (scheduled at 5): 1 holds 2 (used 3), then 0 releases (2): the instant ends at 2, held for no
    # time, so the gauge's greatest is 1 and its least 0; its mean 5 / 10. ended 1, records 2, admissions 2.
    ("horizon_instant_every_figure", """
pool P { cap 4; }
stage d : delay;
gauge g = used(P);
workload { arrive renewal(5); }
session {
  observe a = serial;
  record r { sent = now; x = serial; }
  hold P (1 + serial) { run d (5); }
}
run { horizon 10; }
""", {"a": [(0, 5.0, 0.0), (1, 10.0, 1.0)]},
     {"arrivals": 2, "ended": 1, "records": {"r": 2}, ("gauge", "g"): {"mean": 0.5, "min": 0.0, "max": 1.0},
      ("d", None): {"completions": 1, "present": 0.5}, ("P", None): {"admissions": 2, "used": 0.5}}),
    # "read at the end of every instant … what the instant passes through on the way is not read": at 1
    # session 0 holds all 3 of P for no time (an empty body) and then 1; the gauge reads 1 from 1 on, never 3:
    # mean (9 · 1) / 10, greatest 1.
    ("gauge_not_what_the_instant_passes_through", """
pool P { cap 3; }
stage d : delay;
gauge g = used(P);
workload { arrive batch(1); }
session {
  run d (1);
  hold P (3) { }
  hold P (1) { run d (100); }
}
run { horizon 10; }
""", {}, {("gauge", "g"): {"mean": 0.9, "min": 0.0, "max": 1.0}, ("P", None): {"admissions": 2}}),
    # A gauge under run { arrivals N; }: "its time average over [warmup, end]", end the drain (4), not the
    # horizon (100). renewal(1), 2 arrivals, each holds 1 of P for 2: used 0 over [0, 1], 1, 2, 1 over [1, 2],
    # [2, 3], [3, 4]: mean 4 / 4; least 0 (held [0, 1]), greatest 2; the pool's used the same.
    ("gauge_over_warmup_to_end", """
pool P { cap 4; }
stage d : delay;
gauge g = used(P);
workload { arrive renewal(1); }
session { hold P (1) { run d (2); } }
run { horizon 100; arrivals 2; }
""", {}, {"end": 4.0, ("gauge", "g"): {"mean": 1.0, "min": 0.0, "max": 2.0}, ("P", None): {"used": 1.0}}),
]




@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_time_rules_by_hand(monkeypatch, src, obs, figures):
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert got.get(name, []) == want, name
    js = report_json(r)
    for key, want in figures.items():
        assert subset(figure(js, key), want) == pytest.approx(want, rel=1e-12), key




ERRORS = [
    # "Draining before or at warmup is also an error": the last of 3 sessions (renewal(1), 2 s each) ends at 5.
    ("drain_at_warmup", "horizon 100; warmup 5; arrivals 3;",
     "at t=5: run { arrivals 3; }: drained at t=5, at or before the warmup 5 (nothing to measure)"),
    # "failure to … drain every session by that deadline is an error": at 4 session 2 (arrived at 3) runs.
    ("not_drained_by_the_horizon", "horizon 4; arrivals 3;",
     "at t=4: run { arrivals 3; }: 1 session still live at the horizon (not drained)"),
    # "failure to generate N arrivals … by that deadline": by 1.5 one arrival (at 1).
    ("too_few_arrivals_by_the_horizon", "horizon 1.5; arrivals 2;",
     "at t=1.5: run { arrivals 2; }: only 1 arrival by the horizon"),
]


@pytest.mark.parametrize("run_block, first_line", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_arrivals_errors(monkeypatch, run_block, first_line):
    src = f"stage d : delay;\nworkload {{ arrive renewal(1); }}\nsession {{ run d (2); }}\nrun {{ {run_block} }}\n"
    assert run_error(src, monkeypatch).endswith(first_line)


def test_closed_sessions_of_no_time_are_stopped(monkeypatch):
    # arrive closed(1) replaces a session that ends at once at the same instant; one that ends at the instant
    # it starts, forever, would never let time pass: the run stops with one error naming the workload.
    msg = run_error("workload { arrive closed(1); }\nsession { end; }\nrun { horizon 4; }\n", monkeypatch)
    assert msg.startswith("<source>:1:12: error: at t=0, session ") and "no progress: the closed workload" in msg


def test_arrivals_only_with_an_open_workload():
    # "arrivals … Only with an open workload (poisson or renewal)" (program-reference.txt), and "a positive
    # integer".
    assert "`arrivals` needs an open workload" in refused(
        "stage d : delay;\nworkload { arrive batch(2); }\nsession { run d (2); }\nrun { arrivals 2; }\n")
    for n in ("0", "2.5"):
        assert refused("stage d : delay;\nworkload { arrive renewal(1); }\nsession { run d (2); }\n"
                       f"run {{ horizon 10; arrivals {n}; }}\n").startswith("arrivals is a whole number from 1")


def test_arrivals_overridden(monkeypatch):
    # "The CLI accepts --arrivals N for run and ir, overriding the source value" (serq_sim.run's arrivals=):
    # the source says 3, the run 2: renewal(1) sends at 1 and 2, each runs 2, the run ends at 4.
    prog = serq_frontend.compile(source="stage d : delay;\nworkload { arrive renewal(1); }\nsession { run d (2); }\n"
                                        "run { horizon 100; arrivals 3; }\n", sets={}, defs={})
    js = same_json(prog, monkeypatch, arrivals=2)
    assert (js["end"], js["arrivals"], js["ended"], js["horizon"]) == (4.0, 2, 2, 100.0)


GAPS = [
    # "Gaps must be positive and finite": a constant gap that is not is refused at link time, and poisson's
    # rate likewise (its gaps have mean 1 / rate); a NaN constant does not link (§2: "one that evaluates to
    # NaN … does not link").
    ("renewal(0)", "arrive renewal: the gap is 0; gaps must be positive and finite"),
    ("renewal(-1)", "arrive renewal: the gap is -1; gaps must be positive and finite"),
    ("renewal(inf)", "arrive renewal: the gap is inf; gaps must be positive and finite"),
    ("renewal(0 / 0)", "this expression evaluates to NaN"),
    ("poisson(0)", "the arrival rate must be a positive, finite number of arrivals per second, not 0"),
    ("poisson(inf)", "the arrival rate must be a positive, finite number of arrivals per second, not inf"),
]


@pytest.mark.parametrize("arrive, words", GAPS, ids=[g[0] for g in GAPS])
def test_a_constant_gap_outside_its_domain(arrive, words):
    src = f"stage d : delay;\nworkload {{ arrive {arrive}; }}\nsession {{ run d (1); }}\nrun {{ horizon 10; }}\n"
    assert refused(src) == words


def test_a_drawn_gap_of_zero_is_the_runs_error(monkeypatch):
    # … and a gap drawn as 0 is an error of the run, at the instant it is drawn: the first gap, at 0.
    src = "stage d : delay;\nworkload { arrive renewal(~det(0)); }\nsession { run d (1); }\nrun { horizon 10; }\n"
    assert run_error(src, monkeypatch).endswith("at t=0: arrive renewal: the gap is 0; gaps must be positive and finite")


RUN_BLOCKS = [
    # program-reference.txt's run: "horizon const required End of the simulation", "warmup const 0 … Must be
    # below horizon", "seed const 1 Seed of the random streams"; one run block, each field once. (A block
    # without a horizon compiles: `serq run` refuses it unless --horizon gives one, docs/simulator.md.)
    ("horizon_twice", "run { horizon 5; horizon 6; }", "`horizon` is given twice in the run block"),
    ("two_blocks", "run { horizon 5; }\nrun { horizon 6; }", "a second `run { … }` block"),
    ("horizon_not_above_0", "run { horizon -1; }", "the horizon must be above 0, not -1"),
    ("warmup_negative", "run { horizon 5; warmup -1; }", "the warmup must be a finite number of at least 0, not -1"),
    ("warmup_at_the_horizon", "run { horizon 10; warmup 10; }", "warmup 10 is not below the horizon 10"),
    ("seed_not_whole", "run { seed 2.5; horizon 5; }", "the seed must be an integer of at least 0, not 2.5"),
]


@pytest.mark.parametrize("block, words", [c[1:] for c in RUN_BLOCKS], ids=[c[0] for c in RUN_BLOCKS])
def test_run_block_refusals(block, words):
    src = f"stage d : delay;\nworkload {{ arrive renewal(1); }}\nsession {{ run d (2); }}\n{block}\n"
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src, sets={}, defs={})
    assert str(e.value).splitlines()[0].endswith("error: " + words)
