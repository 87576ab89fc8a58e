"""Conformance of language.txt §3, Statistics and Gauges, at the warm-up's and the horizon's edges, by hand:

* "gauge x = e; declares a function of the deployment's state and the report gives its time average over
  [warmup, end], with a batch-means 95% CI over 20 windows, and the least and greatest value held for a
  positive time … read at the end of every instant (the state the instant's last event leaves …; what the
  instant passes through on the way is not read)";
* "The expression has no session …: it reads pool and stage observables and constants, and an attribute, a
  draw, cachedin (the session's own prefix), now or work(…) (both move between events), or budget_left(…)
  (it plans an iteration, which may draw) is a link error";
* "observe x = e records a sample after warm-up" (docs/language.md: a sample at the warm-up's instant
  counts), and a `record`'s rows: "The report keeps the rows whose column `sent` (without one: whose `time`)
  is at or after the warm-up's end, so the warm-up applies to a request as a whole, by its send time".

Each program runs on the tier serQ picks and on the general engine (conform.run); the report is asserted as
its JSON reads, and the record rows as report.records gives them.
"""

from __future__ import annotations

import pytest
from conform import refused, report_json, run

# s0 at 1 takes one unit of m and gives it back, then takes 2 and holds them for 1: all at the instant 1.
# s1 holds 1 unit over [3, 4] (a gauge value held for a positive time) and 2 at the horizon 5 (held for none).
INSTANT = """
pool m { cap 2; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run d (1);
    hold m (1) { }
    hold m (2) { run d (1); }
  } else {
    run d (3);
    hold m (1) { run d (1); }
    run d (1);
    hold m (2) { run d (1); }
  }
}
gauge u = used(m);
gauge h = holders(m);
gauge f = free(m) == 0;
run { horizon 5; warmup WARMUP; }
"""


@pytest.mark.parametrize("warmup, u, h, f, least, most", [
    # used(m): 0 on [0, 1], 2 on [1, 2] (the 1 held and given back within the instant 1 is never read), 0
    # on [2, 3], 1 on [3, 4], 0 on [4, 5], 2 at 5 for no time: 3 over 5; least 0, greatest 2. holders: 1
    # on [1, 2] and [3, 4]: 2/5. full: [1, 2]: 1/5.
    (0, 0.6, 0.4, 0.2, 0.0, 2.0),
    # over [1.5, 5]: used 2 · 0.5 + 1 = 2 over 3.5; holders 1.5/3.5; full 0.5/3.5. Least 0, greatest 2
    # (held over [1.5, 2])
    (1.5, 2 / 3.5, 1.5 / 3.5, 0.5 / 3.5, 0.0, 2.0),
    # over [2.5, 5]: used 1 over 2.5; the 2 held at 5 for no time is not the greatest: 1
    (2.5, 0.4, 0.4, 0.0, 0.0, 1.0),
])
def test_a_gauge_reads_the_end_of_each_instant(monkeypatch, warmup, u, h, f, least, most):
    r, _obs = run(INSTANT.replace("WARMUP", str(warmup)), monkeypatch)
    g = report_json(r)["gauges"]
    assert (g["u"]["mean"], g["h"]["mean"], g["f"]["mean"]) == pytest.approx((u, h, f), rel=1e-12)
    assert (g["u"]["min"], g["u"]["max"]) == (least, most)


DRAIN = """
pool m { }
stage d : delay;
workload { arrive renewal(2); }
session { set t0 = now; hold m (1) { run d (1.5); } observe x = serial; record row { sent = t0; s = serial; } record done { s = serial; } }
gauge h = holders(m);
run { horizon 100; warmup WARMUP; arrivals 3; }
"""


@pytest.mark.parametrize("warmup, mean, xs, sent_rows, done_rows", [
    # arrivals at 2, 4, 6, each holding m for 1.5: holders 1 on [2, 3.5], [4, 5.5], [6, 7.5]; drained at
    # 7.5, the end: 4.5 over 7.5. Samples at 3.5, 5.5, 7.5; every row kept.
    (0, 0.6, [0, 1, 2], [0, 1, 2], [0, 1, 2]),
    # warm-up 4: over [4, 7.5], 3 over 3.5. The sample at 3.5 is before it; s1's row, sent at 4 = the
    # warm-up, is kept; the rows without `sent` go by their time: 5.5 and 7.5
    (4, 3 / 3.5, [1, 2], [1, 2], [1, 2]),
    # warm-up 5: over [5, 7.5], 0.5 + 1.5 = 2 over 2.5. s1's sample at 5.5 counts, but its request was
    # sent at 4: its row is left out of `row` as a whole, and kept in `done` (written at 5.5)
    (5, 0.8, [1, 2], [2], [1, 2]),
])
def test_the_warm_up_cuts_samples_rows_and_gauges(monkeypatch, warmup, mean, xs, sent_rows, done_rows):
    r, obs = run(DRAIN.replace("WARMUP", str(warmup)), monkeypatch)
    j = report_json(r)
    assert (j["end"], j["gauges"]["h"]["mean"]) == (7.5, pytest.approx(mean, rel=1e-12))
    assert [v for _s, _t, v in obs["x"]] == [float(x) for x in xs]
    assert j["observes"]["x"]["count"] == len(xs)
    assert list(r.records("row")["s"]) == sent_rows
    assert list(r.records("done")["s"]) == done_rows
    assert j["records"] == {"row": len(sent_rows), "done": len(done_rows)}


@pytest.mark.parametrize("expr, message", [
    ("serial", "a gauge may not read an attribute: `serial` is a session attribute"),
    ("now", "a gauge may not read `now`: it moves between events"),
    ("~exp(1)", "a gauge may not draw (`~exp`)"),
    ("cachedin(m)", "a gauge may not read `cachedin(…)` (the session's own prefix)"),
    ("budget_left(E)", "a gauge may not read `budget_left(…)` (it plans an iteration)"),
    ("work(d)", "a gauge may not read `work(…)` (it moves between events)"),
])
def test_what_a_gauge_may_not_read(expr, message):
    src = ("pool m { cap 2; }\nstage d : delay;\nstage E : step { budget 4; cost 1; }\n"
           f"workload {{ arrive batch(1); }}\nsession {{ run d (1); }}\ngauge g = {expr};\nrun {{ horizon 3; }}\n")
    assert refused(src) == message


def test_a_gauge_of_constants_and_observables(monkeypatch):
    """A gauge may read lets and the stages' observables: `2 * K + queue(s) + busy(s)` with K = 1 and two
    jobs of 1 s at a fifo server at 0 (docs/language.md: `queue(s)` is the jobs at the stage, served or
    waiting, `busy(s)` those in service): 2 + 2 + 1 on [0, 1], 2 + 1 + 1 on [1, 2], 2 on [2, 4]: 13 over
    4; least 2, greatest 5."""
    src = ("let K = 1;\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); }\n"
           "gauge g = 2 * K + queue(s) + busy(s);\nrun { horizon 4; }\n")
    r, _obs = run(src, monkeypatch)
    g = report_json(r)["gauges"]["g"]
    assert (g["mean"], g["min"], g["max"]) == (3.25, 2.0, 5.0)


def test_a_gauge_reads_after_the_instants_iteration_is_planned(monkeypatch):
    """A gauge reads "the state the instant's last event leaves", the step stage's planning (and its
    admissions) included. s0 is admitted by E's iteration at 0 (prefill 6, budget 4: [0, 1], then 2); s1
    queues at 0.5 and is admitted by the iteration at 1 with the 2 tokens left, and prefills its last 4 over
    [2, 3]. holders(reqs): 1 on [0, 1] (read after the planning at 0, not 0), 2 on [1, 2], 1 on [2, 3]: 4
    over 10; queued(reqs): 1 on [0.5, 1]: 0.05."""
    src = ("pool reqs { cap 4; admit via E; }\nstage E : step { budget 4; cost 1; }\nstage d : delay;\n"
           "workload { arrive batch(2); }\nsession { run d (serial * 0.5); hold reqs (1) { run E prefill (6); } }\n"
           "gauge h = holders(reqs);\ngauge q = queued(reqs);\nrun { horizon 10; }\n")
    r, _obs = run(src, monkeypatch)
    g = report_json(r)["gauges"]
    assert (g["h"]["mean"], g["h"]["min"], g["h"]["max"]) == (0.4, 0.0, 2.0)
    assert (g["q"]["mean"], g["q"]["max"]) == (0.05, 1.0)
