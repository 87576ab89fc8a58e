"""Conformance of language.txt §2 and §3 (and pool-reference.txt, program-reference.txt) by hand, round 35:
the stages other than step (fifo with several servers, ps with a capacity of `present`, delay and runs of
zero work), the workload (closed populations, turns and `init`, traces, renewal arrivals with
`run { arrivals }`), expressions and built-ins, `let` and `--set`, holds nested and released in every order,
`queue by` with `waited`, `reserve held` with nested holds, `preempt by … requeue head | tail` on a pool no
engine counts, and the report's figures (time averages over [warmup, end], per-observation means, records
kept by their `sent`).

§3, Stages: "fifo(c): c servers, jobs in arrival order at rate 1. ps(φ): every job at once, each at
φ(present)/present. delay: every job on its own at rate 1 … A run of zero work completes at once."
docs/language.md (What a stage's observables and figures count): utilisation is busy servers / c for fifo,
"some job present" for ps and delay; `wait` a run's mean time before its service starts, `service` from then
to its end; `present` the time average of the jobs at the stage.

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value) and
the report's figures as its JSON reads them (samples at one instant in session order, whatever order
they were taken in: the comments say that order). Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
from conform import both_tiers, check_by_hand, report_json, run, run_error

# ---------------------------------------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------------------------------------

FIFO3 = """
stage s : fifo(3);
workload { arrive batch(5); }
session {
  set t0 = now;
  run s (serial + 1);
  observe r = now - t0;
}
run { horizon 10; }
"""

PS3 = """
stage s : ps(CAP);
workload { arrive batch(3); }
session {
  set t0 = now;
  run s (serial + 1);
  observe r = now - t0;
}
run { horizon HORIZON; }
"""

FLOWS = """
stage a : ps(2);
stage b : ps(0.5);
stage c : ps(2);
share SHARE;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run a, b (1); }
  branch (serial == 1) { run a (3); }
  branch (serial == 2) { run c (1); }
  observe t = now;
}
run { horizon 10; }
"""

STAGES = [
    # fifo(3), five jobs of 1 … 5 at 0 in serial order: three servers take 1, 2, 3 at once ([0, 1], [0, 2],
    # [0, 3]); the 4th starts when the first server frees, at 1, ends 5; the 5th at 2, ends 7. Waits 0, 0, 0,
    # 1, 2: 0.6; service (1 + … + 5) / 5 = 3; present Σ responses 18 / 10; utilisation busy servers / 3:
    # 15 / 30 = 0.5.
    ("fifo_of_three_servers", FIFO3,
     {"r": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0), (3, 5.0, 5.0), (4, 7.0, 7.0)]},
     {("s", None): {"present": 1.8, "utilisation": 0.5, "completions": 5, "wait": 0.6, "service": 3.0},
      "mean_live": 1.8}),
    # A gauge is the time average of its expression over [warmup, end], with a batch-means CI over 20 equal
    # windows (t = 2.093) and the least and greatest value held (§3, Gauges). FIFO3's busy servers: 3 on
    # [0, 3], 2 on [3, 5], 1 on [5, 7], 0 after: mean 15 / 10 = the utilisation × 3; the windows of 0.5 read
    # six 3s, four 2s, four 1s, six 0s: sample variance 29 / 19, half-width 2.093 · √(29 / 19 / 20). queue(s)
    # averages present (1.8); waiting (queue − busy) 3 / 10.
    ("gauges_of_a_fifo_of_three", FIFO3.replace("run {", "gauge b = busy(s);\ngauge q = queue(s);\n"
                                                "gauge w = queue(s) - busy(s);\nrun {"),
     {}, {("gauge", "b"): {"mean": 1.5, "min": 0.0, "max": 3.0, "ci": 2.093 * math.sqrt(29 / 19 / 20)},
          ("gauge", "q"): {"mean": 1.8, "min": 0.0, "max": 5.0}, ("gauge", "w"): {"mean": 0.3, "max": 2.0}}),
    # ps(2), works 1, 2, 3 at 0: three at 2/3 each: the first done at 1.5 (the others have 1 and 2 left);
    # two at 1 each: the second at 2.5; the last alone at 2: its 1 left in 0.5, at 3. Wait 0 (a ps run is
    # served from its start), service (1.5 + 2.5 + 3) / 3; present 7 / 10; "some job present" [0, 3].
    ("ps_constant_capacity", PS3.replace("CAP", "2").replace("HORIZON", "10"),
     {"r": [(0, 1.5, 1.5), (1, 2.5, 2.5), (2, 3.0, 3.0)]},
     {("s", None): {"present": 0.7, "utilisation": 0.3, "wait": 0.0, "service": 7 / 3}}),
    # ps(min(present, 2)): the same until one job is left, which then runs at min(1, 2) = 1: its 1 left
    # takes 1, done at 3.5.
    ("ps_capacity_min_present", PS3.replace("CAP", "min(present, 2)").replace("HORIZON", "10"),
     {"r": [(0, 1.5, 1.5), (1, 2.5, 2.5), (2, 3.5, 3.5)]},
     {("s", None): {"present": 0.75, "utilisation": 0.35, "service": 2.5}}),
    # ps(present): every job at rate 1 whatever the others, a delay stage: done at 1, 2, 3.
    ("ps_capacity_present_is_a_delay", PS3.replace("CAP", "present").replace("HORIZON", "10"),
     {"r": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0)]},
     {("s", None): {"present": 0.6, "utilisation": 0.3, "service": 2.0}}),
    # ps(2 * present): each job at 2: done at 0.5, 1, 1.5.
    ("ps_capacity_twice_present", PS3.replace("CAP", "2 * present").replace("HORIZON", "10"),
     {"r": [(0, 0.5, 0.5), (1, 1.0, 1.0), (2, 1.5, 1.5)]},
     {("s", None): {"present": 0.3, "utilisation": 0.15, "service": 1.0}}),
    # ps(1 / present): three at (1/3) / 3 = 1/9: the first's 1 at 9; two at (1/2) / 2 = 1/4: the second has
    # 2 - 1 = 1 left, at 13; the last alone at 1 has 3 - 1 - 1 = 1 left, at 14.
    ("ps_capacity_falls_with_present", PS3.replace("CAP", "1 / present").replace("HORIZON", "20"),
     {"r": [(0, 9.0, 9.0), (1, 13.0, 13.0), (2, 14.0, 14.0)]},
     {("s", None): {"present": 36 / 20, "utilisation": 14 / 20, "service": 12.0}}),
    # ps(present > 2 ? 6 : 1): three at 6 / 3 = 2 each: the first at 0.5; then φ = 1 for two, 0.5 each: the
    # second's 2 - 1 = 1 left in 2, at 2.5; the last alone at 1, its 1 left at 3.5.
    ("ps_capacity_a_conditional_of_present", PS3.replace("CAP", "present > 2 ? 6 : 1").replace("HORIZON", "20"),
     {"r": [(0, 0.5, 0.5), (1, 2.5, 2.5), (2, 3.5, 3.5)]},
     {("s", None): {"present": 6.5 / 20, "utilisation": 3.5 / 20}}),
    # ps(present - 3): five jobs (1 … 5) at φ 2, 0.4 each: the first's 1 done at 2.5; four at φ 1, 0.25
    # each: the second's 2 - 1 = 1 left in 4, at 6.5; three at φ 0 never move: two samples, present 5 on
    # [0, 2.5], 4 on [2.5, 6.5], 3 after: (12.5 + 16 + 10.5) / 10; busy throughout.
    ("ps_capacity_that_reaches_zero", PS3.replace("batch(3)", "batch(5)").replace("CAP", "present - 3")
     .replace("HORIZON", "10"),
     {"r": [(0, 2.5, 2.5), (1, 6.5, 6.5)]},
     {("s", None): {"present": 3.9, "utilisation": 1.0, "completions": 2, "service": 4.5}, "ended": 2}),
    # ps(1), renewal(1), three arrivals of 2: A alone on [1, 2] (1 left); A, B at 1/2 on [2, 3] (0.5, 1.5
    # left); three at 1/3: A's 0.5 in 1.5, at 4.5 (B 1, C 1.5 left); two at 1/2: B at 6.5 (C 0.5 left); C
    # alone at 7. The run drains at 7: present 12 / 7, busy on [1, 7].
    ("ps_staggered_arrivals", """
stage s : ps(1);
workload { arrive renewal(1); }
session {
  set t0 = now;
  run s (2);
  observe r = now - t0;
}
run { horizon 20; arrivals 3; }
""", {"r": [(0, 4.5, 3.5), (1, 6.5, 4.5), (2, 7.0, 4.0)]},
     {"end": 7.0, ("s", None): {"present": 12 / 7, "utilisation": 6 / 7, "service": 4.0}}),
    # fifo(inf) is a delay stage whose utilisation, busy servers / inf, is 0; fifo(1e20) the same jobs, the
    # utilisation (1 + … + 5) / (1e20 · 10).
    ("fifo_of_infinitely_many_servers", FIFO3.replace("fifo(3)", "fifo(inf)"),
     {"r": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0), (3, 4.0, 4.0), (4, 5.0, 5.0)]},
     {("s", None): {"present": 1.5, "utilisation": 0.0, "wait": 0.0, "service": 3.0}}),
    ("fifo_of_very_many_servers", FIFO3.replace("fifo(3)", "fifo(1e20)"),
     {"r": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0), (3, 4.0, 4.0), (4, 5.0, 5.0)]},
     {("s", None): {"present": 1.5, "utilisation": 15 / 1e21, "wait": 0.0}}),
    # fifo(2) and a delay. s3's run of 0 on f completes at once (no server, no completion): it starts d (3)
    # at 0. s0, s1 hold f's two servers [0, 2], s2 waits for one, [2, 4]. At 2 s0's end is the first event:
    # s2 starts (busy 2: s1, s2), and s0's run d (0) completes at once: b = 20 + queue(d) 1 (s3) + 100 · 2.
    # s1's end follows: d (1) to 3. At 3 s3's end was scheduled first: queue(d) 1 (s1), busy(f) 1: 131;
    # then s1: 130. s2 at 4, d (2) to 6: 60. f: three completions (not the zero run), waits 0, 0, 2; present
    # (2 + 2 + 4) / 10, utilisation (2 · 2 + 1 · 2) / (2 · 10); d: jobs [0, 3], [2, 3], [4, 6] (s0's
    # zero run none): present 6 / 10, utilisation 5 / 10.
    ("fifo_two_servers_and_zero_runs", """
stage d : delay;
stage f : fifo(2);
workload { arrive batch(4); }
session {
  run f (serial == 3 ? 0 : 2);
  observe a = now;
  run d (serial);
  observe b = now * 10 + queue(d) + busy(f) * 100;
}
run { horizon 10; }
""", {"a": [(3, 0.0, 0.0), (0, 2.0, 2.0), (1, 2.0, 2.0), (2, 4.0, 4.0)],
      "b": [(0, 2.0, 221.0), (1, 3.0, 130.0), (3, 3.0, 131.0), (2, 6.0, 60.0)]},
     {("f", None): {"completions": 3, "wait": 2 / 3, "present": 0.8, "utilisation": 0.3},
      ("d", None): {"completions": 3, "present": 0.6, "utilisation": 0.5, "service": 2.0}}),
    # A ps stage some run holds with another is a flow stage (§3, Stages: "every job on it, a single-stage
    # run included, is a flow of the policy"; utilisation Σ rate / φ). a ps(2), b ps(0.5); f0 over a and b
    # (1), f1 on a alone (3); c ps(2), no flow, one job of 1 at 2: done at 0.5. bottleneck: f0 min(2/2,
    # 0.5/1) = 0.5, f1 2/2 = 1 (a's other 0.5 unused): f0 done at 2, f1 has 1 left, alone at 2: done at 2.5.
    # a carries (0.5 + 1) / 2 on [0, 2] and 1 on [2, 2.5]: 2 / 10; present 2 · 2 + 0.5; b full on [0, 2].
    ("flows_share_bottleneck", FLOWS.replace("SHARE", "bottleneck"),
     {"t": [(2, 0.5, 0.5), (0, 2.0, 2.0), (1, 2.5, 2.5)]},
     {("a", None): {"utilisation": 0.2, "present": 0.45, "service": 2.25},
      ("b", None): {"utilisation": 0.2, "present": 0.2}, ("c", None): {"utilisation": 0.05, "service": 0.5}}),
    # maxmin: the rates rise together; b fills at 0.5 (f0 stops there), f1 goes on until a fills: 1.5. f0's 1
    # and f1's 3 both done at 2; a full on [0, 2].
    ("flows_share_maxmin", FLOWS.replace("SHARE", "maxmin"),
     {"t": [(2, 0.5, 0.5), (0, 2.0, 2.0), (1, 2.0, 2.0)]},
     {("a", None): {"utilisation": 0.2, "present": 0.4, "service": 2.0},
      ("b", None): {"utilisation": 0.2, "present": 0.2}}),
]



@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in STAGES], ids=[c[0] for c in STAGES])
def test_stages_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# The workload, and the report's figures over [warmup, end]
# ---------------------------------------------------------------------------------------------------------

WORKLOAD = [
    # arrive closed(2): a session that ends is replaced at once by the next serial. `init` runs at arrival
    # (turn_no 0), `turn` at every `turn;` (turn_no counted first). s0, s1 at 0: k 1 and 11; s [0, 1] and
    # [1, 2]; s0 thinks 1 (to 2), turns (k 2, turn_no 2), s [2, 3], done 0 + 20 + 2 = 22 at 3 and ends: s2
    # arrives at 3 (k 21), s [3, 4], thinks 3 (to 7). s1 thinks 2 ([2, 4]), turns (12), s [4, 5], done 132,
    # ends: s3 at 5 (k 31), s [5, 6], thinks 4 (to 10). s2 turns at 7 (22), s [7, 8], done 242, ends at 8:
    # s4 arrives at the horizon (its `init` and first turn happen; its run does not end). s: 7 runs done
    # (s4's under way), one wait of 1 (s1's first): 1 / 7; busy [0, 6] and [7, 8]. think: jobs [1, 2], [2, 4],
    # [4, 7], [6, 8+]: present 8 / 8, busy [1, 8], three done of 1, 2, 3. Two live throughout.
    ("closed_population_with_turns", """
stage s : fifo;
stage think : delay;
workload {
  arrive closed(2);
  init { set k = 10 * serial; observe i = turn_no; }
  turn { set k = k + 1; observe tn = turn_no * 100 + k; }
}
session {
  turn;
  run s (1);
  run think (serial + 1);
  turn;
  run s (1);
  observe done = serial * 100 + turn_no * 10 + k;
  end;
}
run { horizon 8; }
""", {"i": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 3.0, 0.0), (3, 5.0, 0.0), (4, 8.0, 0.0)],
      "tn": [(0, 0.0, 101.0), (1, 0.0, 111.0), (0, 2.0, 202.0), (2, 3.0, 121.0), (1, 4.0, 212.0),
             (3, 5.0, 131.0), (2, 7.0, 222.0), (4, 8.0, 141.0)],
      "done": [(0, 3.0, 22.0), (1, 5.0, 132.0), (2, 8.0, 242.0)]},
     {"arrivals": 5, "ended": 3, "turns": 8, "mean_live": 2.0,
      ("s", None): {"completions": 7, "wait": 1 / 7, "utilisation": 7 / 8, "present": 1.0},
      ("think", None): {"completions": 3, "present": 1.0, "utilisation": 7 / 8, "service": 2.0}}),
    # A run's figures over [warmup, end] (docs/simulator.md: every arrival counts, `turns` and `ended` from the
    # warm-up; a record is kept by its `sent`). renewal(1): arrivals at 1 … 8, each `turn;`, s (1.5), a row
    # with its send time, `turn;`, s (0.5), a row sent then. s: s0 [1, 2.5], s1 [2.5, 4] (waiting since 2),
    # s0's second [4, 4.5] (since 2.5), s2 [4.5, 6], s1's second [6, 6.5], s3 [6.5, 8]; s2's second (6) and
    # s4 … s7 still wait at 8. From 3: completions at 4, 4.5, 6, 6.5, 8: waits 0.5, 1.5, 1.5, 2, 2.5 (8 / 5),
    # services 1.5, 0.5, 1.5, 0.5, 1.5 (5.5 / 5); jobs at s over [3, 8]: 3 on [3, 4), 4 to 4.5, 3 to 5, 4 to
    # 6, 5 to 6.5, 4 to 7, 5 to 8: 20 / 5. Turns from 3: the first turns of s2 … s7 and the second of s1, s2,
    # s3: 9; ended s0 (4.5), s1 (6.5). Rows: s0's first (sent 1) is cut; kept s0's second (4.5), s2's (sent
    # 3, at the warm-up's instant), s1's second (6.5), s3's (sent 4).
    ("a_warm_up_cuts_turns_rows_and_time_averages", """
stage s : fifo;
workload { arrive renewal(1); }
session {
  turn;
  set sent = now;
  run s (1.5);
  record req { sent = sent; w = now - sent; }
  turn;
  run s (0.5);
  record req { sent = now; w = 0; }
}
run { horizon 8; warmup 3; }
""", {}, {"arrivals": 8, "turns": 9, "ended": 2, "records": {"req": 4},
          ("s", None): {"completions": 5, "wait": 1.6, "service": 1.1, "present": 4.0, "throughput": 1.0}}),
    # An observe's figures: count, mean, cv² (sample variance / mean²), the batch-means half-width (20
    # batches, t = 2.093, docs/simulator.md) and nearest-rank quantiles (the ⌈q n⌉-th smallest). k = 1 … 41 at
    # t = 1 … 41; the warm-up 1.5 keeps 2 … 41 (40 samples): mean 21.5 (the sample variance, over 39, and the
    # 20 batch means of consecutive pairs are worked out in the test), p50 the 20th (21), p90 the 36th (37),
    # p95 the 38th (39), p99 the 40th (41). One session live over [0, 41]: mean live 39.5 / 98.5; d completes
    # 40 runs from the warm-up.
    ("an_observes_statistics", """
stage d : delay;
workload { arrive batch(1); }
session {
  set k = 0;
  loop {
    run d (1);
    set k = k + 1;
    observe x = k;
    branch (k >= 41) { end; }
  }
}
run { horizon 100; warmup 1.5; }
""", {}, {"mean_live": 39.5 / 98.5, ("d", None): {"completions": 40, "throughput": 40 / 98.5}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in WORKLOAD], ids=[c[0] for c in WORKLOAD])
def test_the_workload_and_the_figures_by_hand(monkeypatch, src, obs, figures):
    r, js = check_by_hand(monkeypatch, src, obs, figures)
    if "x" in js["observes"]:
        xs = list(range(2, 42))
        mean = sum(xs) / 40
        var = sum((x - mean) ** 2 for x in xs) / 39
        batches = [(xs[2 * i] + xs[2 * i + 1]) / 2 for i in range(20)]
        bvar = sum((b - mean) ** 2 for b in batches) / 19
        want = {"count": 40, "mean": 21.5, "cv2": var / mean ** 2, "ci": 2.093 * math.sqrt(bvar / 20),
                "p50": 21.0, "p90": 37.0, "p95": 39.0, "p99": 41.0}
        assert js["observes"]["x"] == pytest.approx(want, rel=1e-12)
    if "req" in js["records"]:
        t = r.records("req")
        rows = sorted(zip(*(list(t[k]) for k in ("session", "turn", "time", "sent", "w"))))
        assert rows == [(0, 2, 4.5, 4.5, 0.0), (1, 2, 6.5, 6.5, 0.0), (2, 1, 6.0, 3.0, 3.0), (3, 1, 8.0, 4.0, 4.0)]


# A trace replayed in order (§3, Workload: "turn loads the next turn's new, out, think, forced and sets more
# (ordered: session i replays trace session i)"; docs/language.md: sessions numbered in the order they first
# appear, a session's turns sorted by `turn`, and `ordered` replays session `serial mod` the trace's
# sessions). Trace session 0 is the file's "7" (turns 1, 2 after sorting), session 1 its "5". Serial 0 at 0:
# turn 1 of "7": 1000 + 20 · 10 + 2 + 0.25 (more); thinks 1; at 1 turn 2: 2000 + 300 + 3 + 0.5 (forced), no
# more: ends. Serial 1 replays "5": 1101.25 at 0, 2114 at 2 after a think of 2. Serial 2 (2 mod 2 = 0)
# replays "7" again. Before the first `turn;` every column reads 0.
TRACE_CSV = """session,turn,new,out,think,forced
7,2,30,3,0,1
5,0,10,1,2,0
7,1,20,2,1,0
5,1,11,4,0,0
"""

TRACE_PROGRAM = """stage pause : delay;
workload { arrive batch(3); trace "t.csv" ordered; }
session {
  set pre = out + more + think;
  turn;
  loop {
    observe row = turn_no * 1000 + new * 10 + out + forced * 0.5 + more * 0.25 + pre;
    branch (more) { run pause (think); turn; } else { end; }
  }
}
run { horizon 10; }
"""


def test_a_trace_in_order_sorted_by_turn(tmp_path, monkeypatch):
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    path = tmp_path / "p.sq"
    path.write_text(TRACE_PROGRAM)
    r = both_tiers(path, monkeypatch)
    o = r.observes["row"]
    got = sorted(zip(o.times.tolist(), o.sessions.tolist(), o.values.tolist()))
    assert got == [(0.0, 0, 1202.25), (0.0, 1, 1101.25), (0.0, 2, 1202.25), (1.0, 0, 2303.5), (1.0, 2, 2303.5),
                   (2.0, 1, 2114.0)]
    js = report_json(r)
    # turns 2 + 2 + 2; live [0, 1], [0, 2], [0, 1] over 10
    assert (js["turns"], js["ended"], js["mean_live"]) == (6, 3, 0.4)


# `let` constants fold in order and `--set` (sets=) overrides one before the later ones read it
# (program-reference.txt: "A named constant, folded at link time and overridable from the command line …
# May read earlier constants").
LETS = """let a = 2;
let b = a * 3;
let c = b > 5 ? inf : 1;
stage d : delay;
workload { arrive batch(1); }
session {
  set a2 = b;
  observe x = b + min(c, 100);
  observe y = a2;
}
run { horizon 1; }
"""


@pytest.mark.parametrize("sets, x, y", [
    ({}, 106.0, 6.0),          # b = 6, c = inf: 6 + 100
    ({"a": 1}, 4.0, 3.0),    # b = 3, c = 1: 3 + 1
    ({"b": 1}, 2.0, 1.0),    # b set outright, a unread: 1 + 1
    ({"c": 7}, 13.0, 6.0),   # 6 + min(7, 100)
])
def test_lets_fold_in_order_and_a_set_overrides_one(tmp_path, monkeypatch, sets, x, y):
    path = tmp_path / "p.sq"
    path.write_text(LETS)
    r = both_tiers(path, monkeypatch, sets=sets)
    assert (r.observes["x"].values.tolist(), r.observes["y"].values.tolist()) == ([x], [y])


# ---------------------------------------------------------------------------------------------------------
# Holds nested and released in every order, leases, queues, `reserve held`, `preempt by … requeue`
# ---------------------------------------------------------------------------------------------------------

POOLS = [
    # §3: "release m inside the body does the same for m alone, at that point: the innermost enclosing hold on
    # m gives its allocation there back, caching per its clause". a (3) holds b (4); at 1 `release a` gives a's
    # 3 back and caches min(2, 3) = 2 (cache read at the release); at 2 `release b` inside b's own scope caches
    # 4; the scope's end at 3 has nothing left on b; a's scope ends at 4 with nothing left on a. used a 3 on
    # [0, 1], b 4 on [0, 2]; cached a 2 on [1, 10], b 4 on [2, 10]; holders a 1 on [0, 1], b on [0, 2].
    ("release_the_outer_pool_inside_the_inner_hold", """
pool a { cap 10; }
pool b { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold a (3) {
    hold b (4) {
      run d (1);
      release a;
      observe u1 = used(a) * 100 + used(b);
      run d (1);
      release b;
      observe u2 = used(a) * 100 + used(b);
      run d (1);
    } cache (4);
    observe u3 = used(a) * 100 + used(b) + 1000 * cachedin(b);
    run d (1);
  } cache (2);
  observe u4 = used(a) * 100 + used(b) + 1000 * cachedin(b) + 10000 * cachedin(a);
}
run { horizon 10; }
""", {"u1": [(0, 1.0, 4.0)], "u2": [(0, 2.0, 0.0)], "u3": [(0, 3.0, 4000.0)], "u4": [(0, 4.0, 24000.0)]},
     {("a", None): {"used": 0.3, "cached": 1.8, "holders": 0.1}, ("b", None): {"used": 0.8, "cached": 3.2,
                                                                             "holders": 0.2}}),
    # Two holds of a nested (a (3) outside b (4) outside a (2)): the first `release a` gives back the innermost
    # (a 3 left, holders(a) 1: 341), the second the outer one (40); `end;` inside the three scopes releases b
    # (caching 4 at 2). A session's one prefix per pool is its latest release's (docs/language.md): a's inner
    # release cached 2, the outer's 3 replaced it: cached a 3 over [1, 10]; s1 reads only its own prefix (0).
    ("two_holds_of_one_pool_released_innermost_first_then_end", """
pool a { cap 10; }
pool b { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold a (3) {
      hold b (4) {
        hold a (2) {
          run d (1);
          release a;
          observe x1 = used(a) * 100 + used(b) * 10 + holders(a);
          release a;
          observe x2 = used(a) * 100 + used(b) * 10 + holders(a);
          run d (1);
          end;
        } cache (2);
      } cache (4);
    } cache (3);
  } else {
    run d (3);
    observe y = cachedin(a) * 10 + cachedin(b);
  }
}
run { horizon 10; }
""", {"x1": [(0, 1.0, 341.0)], "x2": [(0, 1.0, 40.0)], "y": [(1, 3.0, 0.0)]},
     {("a", None): {"used": 0.5, "cached": 2.7, "holders": 0.2, "admissions": 2},
      ("b", None): {"used": 0.8, "cached": 3.2, "admissions": 1}}),
    # Leases (§3: "A hold's lease m (t) keeps its allocation on m past the scope's end … until the session's
    # release m, t seconds, or the session's end, and cache applies then; a release m outside any hold on m
    # ends the lease. A session that holds and leases nothing on m releases nothing"). m (3), n (2) [0, 1]: n
    # caches 2 at 1, m is leased to 3 and then caches min(2, 3) = 2 (a: 1300 at 1: m 3 held, one holder; b:
    # 2 cached at 3.5); the `release m` at 3.5 finds nothing. A hold without cache leased for ever from 3.5
    # (c: 1 held, the 2 still cached, 1102); `release m` at 5.5 ends it and caches nothing (e: 2). m (4) with
    # cache consumes the 2 at 5.5, is leased from 6.5, and `end;` at 7.5 ends the lease: it caches its
    # allocation, 4. used m 3 · 3 + 1 · 2 + 4 · 2 = 19 over 10; cached 2 · 2.5 + 4 · 2.5 = 15; holders 7.
    ("leases_end_by_time_by_release_and_by_end", """
pool m { cap 10; }
pool n { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (3), n (2) {
    run d (1);
  } cache (2) lease m (2);
  observe a = used(m) * 100 + used(n) * 10 + cachedin(m) + holders(m) * 1000;
  run d (2.5);
  observe b = used(m) * 100 + used(n) * 10 + cachedin(m) + holders(m) * 1000;
  release m;
  hold m (1) { run d (1); } lease m (inf);
  observe c = used(m) * 100 + cachedin(m) + holders(m) * 1000;
  run d (1);
  release m;
  observe e = used(m) * 100 + cachedin(m) + holders(m) * 1000;
  hold m (4) { run d (1); } cache (4) lease m (inf);
  run d (1);
  end;
}
run { horizon 10; }
""", {"a": [(0, 1.0, 1300.0)], "b": [(0, 3.5, 2.0)], "c": [(0, 4.5, 1102.0)], "e": [(0, 5.5, 2.0)]},
     {("m", None): {"used": 1.9, "cached": 1.5, "holders": 0.7, "admissions": 3},
      ("n", None): {"used": 0.2, "cached": 1.8}}),
    # A pool's queue figures: cap 1, three holds of 2 at 0: admitted at 0, 2, 4 (queued(a) 2 then 1 then 0, one
    # holder). Waits 0, 2, 4: mean 2; queue 2 on [0, 2], 1 on [2, 4]: 6 / 10; used and holders 6 / 10.
    ("a_pools_queue_figures", """
pool a { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  hold a (1) {
    observe q = queued(a) * 10 + holders(a);
    run d (2);
  }
}
run { horizon 10; }
""", {"q": [(0, 0.0, 21.0), (1, 2.0, 11.0), (2, 4.0, 1.0)]},
     {("a", None): {"used": 0.6, "queue": 0.6, "holders": 0.6, "wait": 2.0, "admissions": 3}}),
    # A hold of two pools waits in its first pool's queue (§3, Ties) and is admitted when every pool has room:
    # s0 holds b [0, 3]; s1 queues at a at 0.5, s2 at 1, though a has room for both: b has none. At 3 s1 gets
    # a and b; s2, behind it, has room on a but not on b until 4. The waits are a's (2.5, 3), none b's.
    ("a_hold_of_two_pools_waits_in_the_first", """
pool a { cap 2; }
pool b { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold b (1) { run d (3); }
  } else {
    run d (serial * 0.5);
    hold a (1), b (1) { observe adm = now; run d (1); }
  }
}
run { horizon 10; }
""", {"adm": [(1, 3.0, 3.0), (2, 4.0, 4.0)]},
     {("a", None): {"wait": 2.75, "queue": 0.55, "admissions": 2, "used": 0.2},
      ("b", None): {"wait": 0.0, "queue": 0.0, "admissions": 3, "used": 0.5}}),
    # `queue by` with `waited` (pool-reference.txt's priority lanes, aged at 3 s; §3: keys reevaluated before
    # each admission attempt, "waited is elapsed simulation seconds since that hold entered the queue"):
    # (waited >= 3 ? 0 : 1, -serial) is last come first served until a hold has waited 3. renewal(1), five
    # arrivals, 2.5 s each on a pool of one: s0 at 1; at 3.5 s1 (waited 1.5) and s2 (0.5) are both young: s2
    # (-2 < -1); at 6 s1 has waited 4: aged, first (s3 waited 2, s4 1); at 8.5 s3 (4.5) and s4 (3.5) are both
    # aged: s4 by -serial; s3 at 11, done 13.5. Waits 0, 0.5, 4, 3.5, 7: 3; queue Σ 15 over 13.5.
    ("queue_by_waited_ages_the_last_come_first_served", """
pool a { cap 1; queue by (waited >= 3 ? 0 : 1, -serial); }
stage d : delay;
workload { arrive renewal(1); }
session {
  set t0 = now;
  hold a (1) {
    observe w = now - t0;
    run d (2.5);
  }
}
run { horizon 20; arrivals 5; }
""", {"w": [(0, 1.0, 0.0), (2, 3.5, 0.5), (1, 6.0, 4.0), (4, 8.5, 3.5), (3, 11.0, 7.0)]},
     {"end": 13.5, ("a", None): {"wait": 3.0, "queue": 15 / 13.5, "used": 12.5 / 13.5, "admissions": 5}}),
]

POOLS += [
    # §3: "grow m (d) enlarges the innermost hold on m"; once the inner hold on m is released it holds m no
    # longer, so the growth is the outer hold's: 3 + 1 = 4 (the inner's 2 cached at 0). At 1 (inner scope's end,
    # nothing left on m) 4 held, 2 cached: 42; a growth of 2: 6; at 2 the outer caches min(10, 6) = 6, which
    # replaces the session's entry of 2. used 4 on [0, 1], 6 on [1, 2]: 1.0; cached 2 on [0, 2], 6 after: 5.2.
    ("a_growth_after_the_inner_release_grows_the_outer_hold", """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (3) {
    hold m (2) {
      release m;
      grow m (1);
      observe a = used(m);
      run d (1);
    } cache (2);
    observe b = used(m) * 10 + cachedin(m);
    grow m (2);
    observe c = used(m);
    run d (1);
  } cache (10);
  observe e = used(m) * 10 + cachedin(m);
}
run { horizon 10; }
""", {"a": [(0, 0.0, 4.0)], "b": [(0, 1.0, 42.0)], "c": [(0, 1.0, 6.0)], "e": [(0, 2.0, 6.0)]},
     {("m", None): {"used": 1.0, "cached": 5.2, "holders": 0.2, "admissions": 2}}),
    # §3, Configuration: the settle "retries growers and admissions" in that order. s0 (2) grows by 2 at 1:
    # no room beside s1's 2, it waits; s2 queues for 1 at 0.5. s1 ends at 2: the grower takes the room
    # first (4 of 4), and s2 is admitted when s0 ends at 3.
    ("a_waiting_grower_before_a_waiting_admission", """
pool m { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (2) { run d (1); grow m (2); observe g = now; run d (1); }
  }
  branch (serial == 1) {
    hold m (2) { run d (2); }
  }
  branch (serial == 2) {
    run d (0.5);
    hold m (1) { observe a = now; run d (1); }
  }
}
run { horizon 10; }
""", {"g": [(0, 2.0, 2.0)], "a": [(2, 3.0, 3.0)]}, {("m", None): {"admissions": 3, "wait": 2.5 / 3}}),
    # §3, Ties: "A pool's growers: the order they stalled, the head blocking the rest"; docs/language.md: a
    # growth that fits grows at once, whether growers wait or not. cap 7, all 7 held at 0. s0 stalls at 1
    # (5 more), s1 at 1.5 (1 more). s2 ends at 2: 3 held; s0's 5 does not fit and blocks s1's 1, which would.
    # s3's own growth by 1 at 2.5 fits (4): at once. s3 ends at 3 (2 back): s0 grows (7), s1 waits until s0
    # ends at 4.
    ("growers_in_the_order_they_stalled", """
pool m { cap 7; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) {
    hold m (1) { run d (1); grow m (5); observe g = now; run d (1); }
  }
  branch (serial == 1) {
    hold m (1) { run d (1.5); grow m (1); observe g = now; run d (1); }
  }
  branch (serial == 2) {
    hold m (4) { run d (2); }
  }
  branch (serial == 3) {
    hold m (1) { run d (2.5); grow m (1); observe g = now; run d (0.5); }
  }
}
run { horizon 10; }
""", {"g": [(3, 2.5, 2.5), (0, 3.0, 3.0), (1, 4.0, 4.0)]}, {("m", None): {"admissions": 4}}),
]

POOLS += [
    # pool-reference.txt, block: "Allocations round up, and cache entries are kept and evicted, in blocks";
    # §3: a growth "by d (rounded to blocks)", min(ℓ, computed) cached "rounded down to blocks", `cached` "the
    # units found, block-rounded". Blocks of 4: a hold of 5 takes 8 (free 12: 812); a growth of 3 takes a
    # block more, 12; cache (7) keeps min(7, 12) = 7, down to 4. A hold of 6 (8) consumes the 4 (408) and
    # caches min(13, 8) = 8. A hold of 13 (16) with reuse (5) consumes 5 down to a block, 4; the other 4 stay
    # cached, dead: the session's own prefix is then 0 (416), and cache (0) keeps nothing. used 8, 12, 8, 16
    # on [0, 4]: 4.4; cached 4 at 2 (consumed then), the dead 4 over [3, 10]: 2.8.
    ("blocks_round_allocations_growth_cache_and_reuse", """
pool m { cap 20; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (5) {
    observe u = used(m) * 100 + free(m);
    run d (1);
    grow m (3);
    observe g = used(m);
    run d (1);
  } cache (7);
  observe c = cachedin(m);
  hold m (6) {
    observe k = cached * 100 + used(m);
    run d (1);
  } cache (13);
  observe c2 = cachedin(m);
  hold m (13) reuse (5) {
    observe k2 = cached * 100 + used(m) + 1000 * cachedin(m);
    run d (1);
  } cache (0);
  observe c3 = cachedin(m);
}
run { horizon 10; }
""", {"u": [(0, 0.0, 812.0)], "g": [(0, 1.0, 12.0)], "c": [(0, 2.0, 4.0)], "k": [(0, 2.0, 408.0)],
      "c2": [(0, 3.0, 8.0)], "k2": [(0, 3.0, 416.0)], "c3": [(0, 4.0, 0.0)]},
     {("m", None): {"used": 4.4, "cached": 2.8, "admissions": 3, "evicted_entries": 0}}),
]

RESERVE_HELD = """
pool m { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) reserve (6) {
      run d (1);
      hold m (1) reserve (3) {
        observe in = used(m) * 100 + free(m);
        run d (5);
      }
      observe out = used(m) * 100 + free(m);
      run d (1);
    }
  } else {
    run d (DELAY);
    hold m (UNITS) {
      observe s1 = now;
    }
  }
}
run { horizon 20; }
"""

# pool-reference.txt, reserve held: "each live hold's unallocated reservation also counts against later
# admissions … u_i = max(0, r_i − a_i) … A new reservation r requires used + Σ u_i + r ≤ cap … Each hold counts
# separately, including nested holds." s0's outer hold: r 6, a 2, u 4. Its nested hold at 1: 2 + 4 + 3 ≤ 10,
# admitted (u 2): `in` reads used 3, free 10 − 3 − 4 − 2 = 1; after it (6) used 2, free 4. s1 after DELAY asks
# UNITS: at 0.5, 2 + 4 + 3 and 2 + 4 + 4 fit (admitted then); 2 + 4 + 5 does not, and s1 heads the queue, so
# s0's nested hold, which would fit, waits behind it (head-of-line blocking): both wait for ever. At 1.5
# (after the nested admission), 3 + 6 + 5 > 10, at 6 2 + 4 + 5 > 10: s1 is admitted when s0 ends at 7.
RESERVE_CASES = [
    ("fits_beside_the_reservation", "0.5", "3", [(1, 0.5, 0.5)], 0),
    ("fits_exactly", "0.5", "4", [(1, 0.5, 0.5)], 0),
    ("blocks_the_nested_hold_behind_it", "0.5", "5", [], 2),
    ("waits_for_both_reservations_to_end", "1.5", "5", [(1, 7.0, 7.0)], 0),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in POOLS], ids=[c[0] for c in POOLS])
def test_pools_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


@pytest.mark.parametrize("delay, units, s1, waiting", [c[1:] for c in RESERVE_CASES],
                         ids=[c[0] for c in RESERVE_CASES])
def test_reserve_held_counts_each_nested_hold(monkeypatch, delay, units, s1, waiting):
    src = RESERVE_HELD.replace("DELAY", delay).replace("UNITS", units)
    r, got = run(src, monkeypatch)
    assert got["s1"] == s1
    if waiting:
        assert got["in"] == [] and got["out"] == []
        js = report_json(r)
        assert js["ended"] == 0
        assert "2 sessions wait for ever" in js["notes"][0]
    else:
        assert got["in"] == [(0, 1.0, 301.0)] and got["out"] == [(0, 6.0, 204.0)]


RESERVE_GROWTH = """
pool m { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) reserve (6) {
      run d (1);
      grow m (GROW);
      observe g = used(m) * 100 + free(m);
      run d (1);
    }
  } else {
    hold m (2) reserve (4) {
      observe h = used(m) * 100 + free(m);
      run d (3);
    }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("grow, g", [
    # used 2 + 2, u 4 and 2: h reads free 10 − 4 − 6 = 0. A growth by d needs used + Σ_{i≠grower} u_i + d ≤ cap
    # ("the growing hold can use its own reservation"): 4 + 2 + 3 fits, a 5, u max(0, 6 − 5) = 1: used 7,
    # free 10 − 7 − 1 − 2 = 0.
    ("3", [(0, 1.0, 700.0)]),
    # 4 + 2 + 4 = 10 fits: a 6, u 0: used 8, free 0.
    ("4", [(0, 1.0, 800.0)]),
    # 4 + 2 + 5 > 10: the growth waits (preempt none) until s1 ends at 3: used 7, s0's u 0, free 3.
    ("5", [(0, 3.0, 703.0)]),
])
def test_reserve_held_a_growth_uses_its_own_reservation(monkeypatch, grow, g):
    _r, got = run(RESERVE_GROWTH.replace("GROW", grow), monkeypatch)
    assert got["h"] == [(1, 0.0, 400.0)]
    assert got["g"] == g


PREEMPT_BY = """
pool m { cap 4; preempt by (KEY) requeue WHERE; queue by (QKEY); }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial * 0.1);
  hold m (2) {
    observe adm = now * 10 + computed;
    run d (1);
    grow m (1);
    run d (2);
  }
  observe done = now;
}
run { horizon 30; }
"""


@pytest.mark.parametrize("key, where, qkey, adm, done, preemptions, stuck", [
    # pool-reference.txt, preempt: "Candidates are holders resident in the stage whose memory is this pool. If
    # no stage names it as memory, candidates are holders with an active hold scope … the grower can be its own
    # victim. … requeue head (the default) places it first, ahead of policy keys." The holds admit at 0 and
    # 0.1 (used 4); s2 queues at 0.2. By (-admission) at 1 s0's growth preempts s1 (admitted last), which goes
    # to the head; s0 grows to 3 and ends at 3, when s1 and s2 are admitted (computed 0: a hold that advanced
    # no position, docs/language.md); at 4 s1's growth preempts s2 (admitted after it at 3), which comes back
    # at 6 and ends at 9.
    ("-admission", "head", "serial", [(0, 0.0, 0.0), (1, 0.1, 1.0), (1, 3.0, 30.0), (2, 3.0, 30.0),
                                       (2, 6.0, 60.0)],
     [(0, 3.0, 3.0), (1, 6.0, 6.0), (2, 9.0, 9.0)], 2, 0),
    # requeue tail with queue by (serial): the victims are the same, and each is again the least key in the
    # queue, so nothing moves.
    ("-admission", "tail", "serial", [(0, 0.0, 0.0), (1, 0.1, 1.0), (1, 3.0, 30.0), (2, 3.0, 30.0),
                                       (2, 6.0, 60.0)],
     [(0, 3.0, 3.0), (1, 6.0, 6.0), (2, 9.0, 9.0)], 2, 0),
    # by (0): every candidate ties, and "ties go to the last admitted": the victims of by (-admission)
    ("0", "tail", "serial", [(0, 0.0, 0.0), (1, 0.1, 1.0), (1, 3.0, 30.0), (2, 3.0, 30.0), (2, 6.0, 60.0)],
     [(0, 3.0, 3.0), (1, 6.0, 6.0), (2, 9.0, 9.0)], 2, 0),
    # by (serial), requeue head, queue by a constant (fifo): at 1 s0's growth preempts s0 itself (the least
    # key), which heads the queue and is admitted at once (2 + 2 ≤ 4, computed 0); at 1.1 s1's growth preempts
    # s0 again (stuck: preempted a second time at the same position), s1 grows and ends at 3.1, when s0 and s2
    # are admitted; at 4.1 s0's growth preempts s0 (admitted again at once), then s2's growth preempts s0; s2
    # ends at 6.1, s0 is admitted then and ends at 9.1. Four preemptions, one session stuck.
    ("serial", "head", "0", [(0, 0.0, 0.0), (1, 0.1, 1.0), (0, 1.0, 10.0), (0, 3.1, 31.0), (2, 3.1, 31.0),
                             (0, 4.1, 41.0), (0, 6.1, 61.0)],
     [(1, 3.1, 3.1), (2, 6.1, 6.1), (0, 9.1, 9.1)], 4, 1),
])
def test_preempt_by_on_a_pool_no_engine_counts(monkeypatch, key, where, qkey, adm, done, preemptions, stuck):
    src = PREEMPT_BY.replace("QKEY", qkey).replace("KEY", key).replace("WHERE", where)
    r, got = run(src, monkeypatch)
    assert got["adm"] == adm
    assert got["done"] == done
    p = report_json(r)["pools"][0]
    assert (p["preemptions"], p["stuck"], p["rejections"]) == (preemptions, stuck, 0)


def test_preempt_by_requeue_tail_livelock_is_stuck(monkeypatch):
    """By (admission) the earliest admitted holder is the victim; requeue tail with queue by (-serial) puts the
    highest serial first. At 1 s0's growth preempts s0 itself (admitted first); requeued behind s2, which is
    admitted (used 4). At 1.1 s1's growth preempts s1 (now the earliest admitted), which heads the queue again
    (-1 < 0) and is admitted at once; at 2 s2 likewise, and so on every 0.9 and 0.1 s: s1 and s2 take turns
    preempting themselves, s0 never comes back, nobody finishes by 30; both are stuck (preempted again at
    the position of their previous preemption). Admissions: 0, 0.1, then s2 at k and s1 at k + 0.1 for k = 1
    … 29, and s2 at 30: 61, of which 58 follow a preemption; with s0's, 59 preemptions."""
    src = PREEMPT_BY.replace("QKEY", "-serial").replace("KEY", "admission").replace("WHERE", "tail")
    r, got = run(src, monkeypatch)
    assert got["done"] == []
    assert got["adm"][:6] == [(0, 0.0, 0.0), (1, 0.1, 1.0), (2, 1.0, 10.0), (1, 1.1, 11.0), (2, 2.0, 20.0),
                              (1, 2.1, 21.0)]
    # one admission at 0, 0.1, then two per second from 1 to 29 (at k and k + 0.1) and s2's at 30
    assert len(got["adm"]) == 2 + 2 * 29 + 1
    p = report_json(r)["pools"][0]
    assert (p["preemptions"], p["stuck"]) == (59, 2)


OVER_CAP = """
pool m { cap 10; BLOCK }
pool n { cap 100; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold n (50) { run d (3); }
  } else {
    run d (1);
    hold m (UNITS) { observe adm = now; run d (1); }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("block, units, adm, rejections, over_cap, ended", [
    # pool-reference.txt: "If either units or reserve is independent of deployment state and exceeds capacity
    # after block rounding, the hold is rejected and its session ends. State-dependent demand waits for
    # admission and is reported as over_cap if it still exceeds capacity at the end of the run." s0 holds 50
    # of n over [0, 3]; s1 asks at 1.
    ("", "9", [(1, 1.0, 1.0)], 0, 0, 2),                              # 9 ≤ 10
    ("block 4;", "9", [], 1, 0, 2),                                   # 9 is 12 in blocks of 4: rejected
    ("block 4;", "8", [(1, 1.0, 1.0)], 0, 0, 2),                      # 8 is two blocks
    ("", "used(n) / 5", [(1, 1.0, 1.0)], 0, 0, 2),                    # 50 / 5 = 10 fits
    ("", "used(n) / 5 + 1", [(1, 3.0, 3.0)], 0, 0, 2),                # 11 waits; at 3, 0 / 5 + 1 fits
    ("", "11 + 0 * used(n)", [], 0, 1, 1),                            # state-dependent: waits, over cap
    ("block 4;", "9 + 0 * used(n)", [], 0, 1, 1),                     # 12 in blocks, waits for ever
])
def test_demand_beyond_the_cap(monkeypatch, block, units, adm, rejections, over_cap, ended):
    r, got = run(OVER_CAP.replace("BLOCK", block).replace("UNITS", units), monkeypatch)
    assert got["adm"] == adm
    js = report_json(r)
    m = next(p for p in js["pools"] if p["name"] == "m")
    assert (m["rejections"], m["over_cap"], js["ended"]) == (rejections, over_cap, ended)


REQUEUE = """
pool m { cap 4; preempt by (-admission) requeue WHERE; queue by (KEY); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (2) { run d (1); grow m (1); run d (5); }
  } else {
    run d (serial == 2 ? 0.5 : 0);
    hold m (3 - serial) { observe adm = now * 10 + computed; run d (serial == 1 ? 3 : 1); }
  }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("where, key, adm", [
    # pool-reference.txt: "requeue head (the default) places it first, ahead of policy keys. requeue tail treats
    # it as a newcomer: … queue by places it by its keys, with waited reset to 0." s0 and s1 queue at 0 (s1
    # after a run of 0) and are admitted in the queue's order; s2 queues for 1 at 0.5. At 1 s0 grows by 1 and
    # the last admitted is the victim.
    # by (-serial) s1 is admitted first, so s0 is its own victim; at the head it is admitted again at once (2 +
    # 2), and again at 2; s1 ends at 3 and s2 is admitted then.
    ("head", "-serial", [(1, 0.0, 0.0), (2, 3.0, 30.0)]),
    # requeue tail: s0 goes behind s2 (-2 < 0); s2 fits beside s1 (3 of 4): admitted at 1; s0 at 2.
    ("tail", "-serial", [(1, 0.0, 0.0), (2, 1.0, 10.0)]),
    # by (serial) s0 is admitted first and s1 is the victim; back at the tail it still leads s2 by its key, and
    # its 2 do not fit beside s0's 3: it blocks s2 until s0 ends at 6.
    ("tail", "serial", [(1, 0.0, 0.0), (1, 6.0, 60.0), (2, 6.0, 60.0)]),
    # by (waited): s1's waited restarts at 0 at 1, s2's is 0.5: s1 leads and blocks.
    ("tail", "waited", [(1, 0.0, 0.0), (1, 6.0, 60.0), (2, 6.0, 60.0)]),
    # by (-waited): s2 (-0.5) leads s1 (0) and fits: admitted at 1; s1 at 6.
    ("tail", "-waited", [(1, 0.0, 0.0), (2, 1.0, 10.0), (1, 6.0, 60.0)]),
    # the same keys with requeue head: s1 goes ahead of them and blocks s2 until 6.
    ("head", "-waited", [(1, 0.0, 0.0), (1, 6.0, 60.0), (2, 6.0, 60.0)]),
])
def test_requeue_head_or_tail_under_queue_keys(monkeypatch, where, key, adm):
    _r, got = run(REQUEUE.replace("WHERE", where).replace("KEY", key), monkeypatch)
    assert got["adm"] == adm


VICTIM_ON_A_STAGE = """
pool m { cap 4; preempt lifo; }
stage d : delay;
stage f : KIND;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (2); run d (1); } }
  branch (serial == 1) { hold m (2) { observe adm = now; run f (3); } }
  branch (serial == 2) { run f (1.5); }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("kind, done, figures", [
    # pool-reference.txt: "The victim leaves its stage, releases its hold …" on a pool no engine counts, the
    # victim's stage is any kind. s2 reaches f at 0 before s1 is admitted (admissions follow the ready
    # sessions). fifo: s2 [0, 1.5]; s1 waits on f and is preempted at 1 by s0's growth (lifo: admitted last),
    # leaving f's queue; admitted again at 2 (s0's end), f [2, 5]. f: two completions (the preempted run is
    # none), present 1.5 + 1 + 3 = 5.5 over 20, busy 4.5.
    ("fifo", [(2, 1.5, 1.5), (0, 2.0, 2.0), (1, 5.0, 5.0)],
     {"completions": 2, "present": 0.275, "utilisation": 0.225, "wait": 0.0, "service": 2.25}),
    # fifo(2): s1 served beside s2 from 0, taken off its server at 1: busy servers 2 on [0, 1], 1 on [1, 1.5]
    # and [2, 5]: 5.5 / 40.
    ("fifo(2)", [(2, 1.5, 1.5), (0, 2.0, 2.0), (1, 5.0, 5.0)],
     {"completions": 2, "present": 0.275, "utilisation": 0.1375}),
    # ps(1): s1 and s2 at 1/2 each; at 1 s1 leaves and s2, 1 left, runs alone: done at 2.
    ("ps(1)", [(0, 2.0, 2.0), (2, 2.0, 2.0), (1, 5.0, 5.0)],
     {"completions": 2, "present": 0.3, "utilisation": 0.25, "service": 2.5}),
    ("delay", [(2, 1.5, 1.5), (0, 2.0, 2.0), (1, 5.0, 5.0)], {"completions": 2, "present": 0.275}),
])
def test_a_victim_leaves_a_fifo_ps_or_delay_stage(monkeypatch, kind, done, figures):
    r, got = run(VICTIM_ON_A_STAGE.replace("KIND", kind), monkeypatch)
    assert got["adm"] == [(1, 0.0, 0.0), (1, 2.0, 2.0)]
    assert got["done"] == done
    f = next(s for s in report_json(r)["stages"] if s["name"] == "f")
    assert {k: f[k] for k in figures} == pytest.approx(figures, rel=1e-12)
    assert next(p for p in report_json(r)["pools"] if p["name"] == "m")["preemptions"] == 1


DRAINED_AT_ZERO = """
stage d : delay;
workload { arrive ARRIVE; }
session { observe t = now + 0 * serial; }
run { RUN }
"""


@pytest.mark.parametrize("arrive, block", [
    ("poisson(2)", "horizon 20; arrivals 1;"),      # poisson's first arrival at 0, its session ends then
    ("poisson(2)", "horizon inf; arrivals 1;"),
])
def test_arrivals_drained_at_a_warm_up_of_0_is_an_error(monkeypatch, arrive, block):
    """language.txt §2: "run { arrivals N; } requires exactly N open-workload arrivals and drains their sessions
    … Draining before or at warmup is also an error because the measurement interval would be empty." A warm-up
    of 0 is no exception: one arrival at 0 whose session ends at 0 drains at t=0, at the warm-up, and
    [0, 0] is empty. serQ reported it with every time average NaN (mean live, the stage's present and
    utilisation) and no word (Simulation.limit_drained_early exempted a warm-up of 0)."""
    src = DRAINED_AT_ZERO.replace("ARRIVE", arrive).replace("RUN", block)
    msg = run_error(src, monkeypatch)
    assert msg == ("<source>:5:{}: error: at t=0: run {{ arrivals 1; }}: drained at t=0, at or before the warmup 0 "
                   "(nothing to measure)").format(src.splitlines()[4].index("arrivals") + 1)


def test_a_run_of_no_horizon_ending_at_0_reports(monkeypatch):
    """Without `arrivals` the rule is not the spec's: `horizon inf` and no warm-up, a batch whose sessions end
    at 0 (docs/simulator.md: serQ's choice) reports its samples, with NaN time averages."""
    r, got = run(DRAINED_AT_ZERO.replace("ARRIVE", "batch(2)").replace("RUN", "horizon inf;"), monkeypatch)
    assert got["t"] == [(0, 0.0, 0.0), (1, 0.0, 0.0)]
    js = report_json(r)
    assert (js["end"], js["ended"], js["mean_live"]) == (0.0, 2, None)


def test_two_victims_requeued_at_the_head_latest_first(monkeypatch):
    """§3: the victim "re-enters the head of the pool's queue"; pool-reference.txt: "Preempted holds retain
    prepend priority" (vLLM's waiting.prepend_request). cap 6: s0 (2), s1 (3), s2 (1) admitted at 0. At 1 s0
    grows by 1: lifo preempts s2 (admitted last), s0 holds 3; at 1.5 it grows by 3: s1 goes, s0 holds 6. The
    queue is s1, s2 (the later victim ahead). s0 ends at 2.5: s1 is admitted first, then s2, and the samples
    of one instant are taken in the order the sessions became ready."""
    src = """
pool m { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (1); run d (0.5); grow m (3); run d (1); } }
  branch (serial == 1) { hold m (3) { observe adm = now; run d (5); } }
  branch (serial == 2) { hold m (1) { observe adm = now; run d (5); } }
}
run { horizon 20; }
"""
    r, got = run(src, monkeypatch)
    o = r.observes["adm"]
    assert list(zip(o.sessions.tolist(), o.times.tolist())) == [(1, 0.0), (2, 0.0), (1, 2.5), (2, 2.5)]
    assert report_json(r)["pools"][0]["preemptions"] == 2


NOTED = """
stage d : delay;
workload { arrive batch(1); }
session {
  set k = 0;
  loop {
    run d (1);
    set k = k + 1;
    observe hit = k > 100;
    observe ok = k > 0;
    observe neg = !(k > 0);
    observe zero = k * 0;
    branch (k >= N) { end; }
  }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("n, noted", [(40, ["hit", "neg"]), (39, [])])
def test_a_test_valued_observe_constant_0_is_noted(monkeypatch, n, noted):
    """§3, Statistics: "An observe whose expression is a test (its outermost operator a comparison, &&, || or !)
    and that was 0 over 40 or more samples gets a line under the table … A test that always held is not noted."
    `hit` (k > 100) and `neg` (!(k > 0)) are 0 at every sample; `ok` always held; `zero` is 0 but no test. At
    40 samples the two are noted, at 39 none."""
    r, _ = run(NOTED.replace("N)", f"{n})"), monkeypatch)
    notes = [x for x in report_json(r)["notes"] if x.startswith("note: observe")]
    assert notes == [f"note: observe {name} is constant 0 over {n} samples" for name in noted]


# Expressions by hand, each computed at run time (z = 1, y = 2 are attributes, so nothing folds) and as a
# constant (a let, folded when the program links: docs/language.md, "Constant subexpressions fold, to the value
# the simulator computes"). `a % b` is the remainder of truncated division (docs/language.md), comparisons are
# 0 or 1, a non-zero operand is true (§2), `min` and `max` take any number of arguments.
EXPRESSIONS = [
    ("y * 3 + 1 / y", 6.5),                 # 6 + 0.5
    ("7 / y", 3.5),                         # division is of reals
    ("7 % y", 1.0),
    ("(0 - 7) % y", -1.0),                  # the sign of the dividend
    ("7 % (0 - y)", 1.0),
    ("7.5 % y", 1.5),
    ("y - z - 3", -2.0),                    # (2 − 1) − 3
    ("16 / y / 4", 2.0),                    # (16 / 2) / 4
    ("y > z > 0", 1.0),                     # (2 > 1) > 0
    ("y < z == 0", 1.0),                    # (2 < 1) == 0
    ("!z + y", 2.0),                        # (!1) + 2
    ("-y * -y", 4.0),
    ("z - -y", 3.0),
    ("z || 0 && 0", 1.0),                   # 1 || (0 && 0)
    ("(z || 0) && 0", 0.0),
    ("y && 3", 1.0),                        # non-zero operands are true; the result is 0 or 1
    ("(z - 2) || 0", 1.0),                  # -1 is true
    ("!(z - 1)", 1.0),
    ("z ? 10 : 20", 10.0),
    ("(z - 1) ? 10 : 20", 20.0),
    ("(0 - y) ? 10 : 20", 10.0),            # a negative condition is true
    ("z ? 0 ? 5 : 6 : 7", 6.0),             # z ? (0 ? 5 : 6) : 7
    ("z - 1 ? 5 : y ? 6 : 7", 6.0),         # (z − 1) ? 5 : (y ? 6 : 7)
    ("min(3, y, 2.5)", 2.0),
    ("max(z, 0 - y, 0.5)", 1.0),
    ("floor(0 - 2.5) + 10 * ceil(0 - 2.5)", -23.0),   # −3 + 10 · (−2)
    ("floor(y + 0.7) * ceil(y + 0.1)", 6.0),          # 2 · 3
    ("abs(z - 4)", 3.0),
    ("pow(y, 10)", 1024.0),
    ("pow(4 * z, 0.5)", 2.0),
    ("sqrt(16 * z)", 4.0),
    ("exp(z - 1) + ln(z)", 1.0),            # e⁰ + ln 1
    ("pow(0 * z, 0)", 1.0),
    ("1e3 * z + 2.5e-1", 1000.25),
]


@pytest.mark.parametrize("expr, value", EXPRESSIONS, ids=[e for e, _ in EXPRESSIONS])
def test_an_expression_by_hand_computed_and_folded(monkeypatch, expr, value):
    folded = expr.replace("z", "1").replace("y", "2")
    src = (f"let c = {folded};\nstage d : delay;\nworkload {{ arrive batch(1); }}\n"
           f"session {{\n  set z = 1;\n  set y = 2;\n  observe v = {expr};\n  observe f = c;\n}}\n"
           "run { horizon 1; }\n")
    _r, got = run(src, monkeypatch)
    assert got["v"] == [(0, 0.0, value)]
    assert got["f"] == [(0, 0.0, value)]


def test_a_trace_of_one_session_without_ordered(tmp_path, monkeypatch):
    """Without `ordered` a session replays a trace session drawn from the trace's stream (docs/simulator.md);
    with one trace session ("9": turns 0 and 1) every serial replays it: at 0 turn 1, 1000 + 5 · 10 + 1 + 0.25
    (more); after a think of 0.5, turn 2: 2000 + 60 + 2 + 0.5 (forced), the last."""
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n9,0,5,1,0.5,0\n9,1,6,2,0,1\n")
    path = tmp_path / "p.sq"
    path.write_text(TRACE_PROGRAM.replace('"t.csv" ordered', '"t.csv"'))
    r = both_tiers(path, monkeypatch)
    o = r.observes["row"]
    got = sorted(zip(o.times.tolist(), o.sessions.tolist(), o.values.tolist()))
    assert got == [(0.0, s, 1051.25) for s in range(3)] + [(0.5, s, 2062.5) for s in range(3)]


def test_gauges_of_aggregates_over_a_pool_family(monkeypatch):
    """§2: "aggregates over an index, max j in n (e), min j in n (e), sum j in n (e) (… the linker writes the terms
    out with j = 0 … n-1)"; §3, Gauges: the time average over [warmup, end]. m[i] holds i + 1 over [0, 2 (i + 1)]:
    the greatest 3 on [0, 6] (18 / 10), the least 1 on [0, 2] (2 / 10), the sum 6, 5, 3 on [0, 2], [2, 4], [4, 6]
    (28 / 10), the members with free below 4 (m[1], m[2] while held) 2 then 1 (10 / 10)."""
    src = """
let N = 3;
pool m[N] { cap 5; }
stage d : delay;
workload { arrive batch(3); }
session {
  hold m[serial] (serial + 1) { run d (2 * (serial + 1)); }
}
gauge top = max k in N (used(m[k]));
gauge low = min k in N (used(m[k]));
gauge tot = sum k in N (used(m[k]));
gauge full = sum k in N (free(m[k]) < 4);
run { horizon 10; }
"""
    r, _ = run(src, monkeypatch)
    js = report_json(r)
    got = [(k, g["mean"], g["min"], g["max"]) for k, g in sorted(js["gauges"].items())]
    assert got == [("full", 1.0, 0.0, 2.0), ("low", 0.2, 0.0, 1.0), ("top", 1.8, 0.0, 3.0), ("tot", 2.8, 0.0, 6.0)]
    assert [(p["index"], p["used"]) for p in js["pools"]] == [(0, 0.2), (1, 0.8), (2, 1.8)]


def test_reserve_held_ends_with_release_and_a_lease_keeps_none(monkeypatch):
    """pool-reference.txt, reserve held: "Reservations end with the hold's scope, release or preemption; leases
    retain none" (free(m) = cap − used − Σ uᵢ, docs/language.md). 1 reserving 5: free 10 − 1 − 4 (105); leased
    past its scope it keeps its unit and no reservation (109); a nested 2 reserving 6 beside it: 10 − 3 − 4
    (303); `release m` gives the 2 and their reservation back (109); after the scope the lease alone (109); a
    `release m` outside every hold ends the lease (10)."""
    src = """
pool m { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (1) reserve (5) {
    observe a = used(m) * 100 + free(m);
    run d (1);
  } lease m (inf);
  observe b = used(m) * 100 + free(m);
  hold m (2) reserve (6) {
    observe c = used(m) * 100 + free(m);
    release m;
    observe e = used(m) * 100 + free(m);
    run d (1);
  }
  observe f = used(m) * 100 + free(m);
  release m;
  observe g = used(m) * 100 + free(m);
}
run { horizon 10; }
"""
    _r, got = run(src, monkeypatch)
    assert {k: v for k, ((_s, _t, v),) in got.items()} == {"a": 105.0, "b": 109.0, "c": 303.0, "e": 109.0,
                                                            "f": 109.0, "g": 10.0}


def test_serving_forms_on_fifo_ps_and_delay_stages(monkeypatch):
    """§2, The serving vocabulary: "prefill W; run prefill (W)", "decode W; run decode (W)", "tool Z; run tool
    (Z)"; W "is the time the job takes alone on a fifo, ps or delay stage … a ps stage serves it at
    φ(present)/present". Two sessions at 0: prefill (a fifo) [0, 1] and [1, 2]; decode (ps(2)) alone each time:
    2 at rate 2, [1, 2] and [2, 3]; tool (a delay) 0.5 and 1: done at 2.5 and 4. prefill's wait 0.5 (0 and 1)."""
    src = """
stage prefill : fifo;
stage decode : ps(2);
stage tool : delay;
workload { arrive batch(2); }
session {
  prefill 1;
  observe p = now;
  decode 2;
  observe d = now;
  tool 0.5 * (serial + 1);
  observe t = now;
}
run { horizon 10; }
"""
    r, got = run(src, monkeypatch)
    assert got == {"p": [(0, 1.0, 1.0), (1, 2.0, 2.0)], "d": [(0, 2.0, 2.0), (1, 3.0, 3.0)],
                   "t": [(0, 2.5, 2.5), (1, 4.0, 4.0)]}
    st = {s["name"]: (s["completions"], s["wait"], s["service"]) for s in report_json(r)["stages"]}
    assert st == {"prefill": (2, 0.5, 1.0), "decode": (2, 0.0, 1.0), "tool": (2, 0.0, 0.75)}
