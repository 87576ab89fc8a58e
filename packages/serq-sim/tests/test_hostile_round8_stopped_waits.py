"""A run stopped early says that sessions wait for ever only of a deadlock, never "no event is left".

``waiting_forever`` took an empty event list as a run that ran out of events: every live session then
waits for ever, and those queued at no pool are "at a stage that will never complete them". A run stopped
inside an instant (the fast tier's ``--max-samples`` inside a batch's sessions, a signal inside a settle)
has an empty event list too, with sessions ready to run: ``arrive batch(100000)`` of sessions that observe
and end, stopped at 1 000 samples, warned that 98 976 sessions "wait for ever at the end of the run (no
event is left that could wake them): 98976 at a stage that will never complete them" (they were at no
stage, and ran on as soon as the run would). A stopped run now reports only a deadlock (sessions waiting
for pools only such sessions hold), which no later event could undo.
"""

from __future__ import annotations

import serq_frontend
import serq_sim

BATCH = """stage s : delay;
workload { arrive batch(20000); }
session { observe x = 1; end; }
run { horizon 10; seed 1; }
"""

# sessions 0 and 1 take a and b in opposite orders and deadlock at t=1; the Poisson sessions after them
# keep events coming (each is a run of the delay stage), so the run stops at --max-events, not by itself
DEADLOCK = """pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive poisson(1); }
session {
  branch (serial == 0) { hold a (1) { run d (1); hold b (1) { observe x = 1; } } }
  branch (serial == 1) { hold b (1) { run d (1); hold a (1) { observe x = 1; } } }
  run d (1);
}
run { horizon 1e9; seed 1; }
"""


def _waits(report) -> list[str]:
    return [n for n in report.result.notes if "wait for ever" in n]


def test_sessions_ready_when_a_bound_stops_the_run_do_not_wait_for_ever():
    r = serq_sim.run(serq_frontend.compile(source=BATCH), max_samples=1000)
    assert r.tier == "fast" and r.partial == "max-samples"
    # the stop came inside the batch: fewer samples than sessions, the rest ready, none waiting anywhere
    assert 1000 <= len(r.observe("x")) < 20000
    assert _waits(r) == []


def test_a_deadlock_is_still_reported_when_a_bound_stops_the_run():
    r = serq_sim.run(serq_frontend.compile(source=DEADLOCK), max_events=400)
    assert r.partial == "max-events"
    (w,) = _waits(r)
    assert "a deadlock" in w and "queued at a (session 1)" in w and "queued at b (session 0)" in w, w


def test_a_run_out_of_events_still_says_so():
    # the batch run to its end: nothing waits
    r = serq_sim.run(serq_frontend.compile(source=BATCH.replace("20000", "3")))
    assert _waits(r) == []
    # a job at a ps stage of capacity 0 waits with no event left
    src = "stage s : ps(0);\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; seed 1; }\n"
    (w,) = _waits(serq_sim.run(serq_frontend.compile(source=src)))
    assert "2 sessions wait for ever" in w and "no event is left" in w, w
