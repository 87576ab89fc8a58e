"""``--max-wall`` stops a run inside one event that runs long, on both tiers, and the note says where.

The ticks read the clock every 1 000 events, but one event (or a few, each doing much) can run for
minutes: a ``queue by`` key that reads ``waited`` read for every waiting session at every admission of a
chain of admissions at one instant, a loop of no time in each of many sessions, a batch of ``choose``s,
a closed workload's replacements at one instant, a step iteration of thousands of jobs, the shares of
thousands of flows, an eviction or a preemption scanning thousands of entries or holders, blocks taken one
by one, ``work(S)`` adding up a million jobs. Each program below holds one such event for many seconds
(before the countdown of the event's work, Simulation.pulse_out, they ran to its end, deaf to the bound);
with ``max_wall=0.5`` the run must stop within it, the note naming what it was doing and where."""

from __future__ import annotations

import time

import pytest
import serq_frontend
import serq_sim

WALL = 0.5
#: the bounds a case tries in turn (the next when the run stopped before its long event: see the test)
WALLS = (WALL, 1.0, 2.0)

# 20 000 sessions wait at t=0 for a pool of one whose holds take no time: each admission reads the key of
# every waiting session (it reads `waited`, not as (K…, waited) does: pools.model.WaitedQueue, nor linearly:
# pools.linear.LinearQueue), 2·10⁸ keys at t=0 (10 s on the general engine)
QUEUE = """pool p { cap 1; queue by (prio, waited * waited); }
stage d : delay;
workload { arrive batch(20000); }
session { set prio = ~uniform(0, 1); hold p (1) { branch (serial == 0) { run d (1); } observe x = now; } }
run { horizon 100; }
"""
# 200 sessions, each 900 000 passes of a loop at t=0 (below the spin guard's 1 000 000)
LOOP = """workload { arrive batch(200); }
session {
  set i = 0;
  loop { set i = i + 1; branch (i >= 900000) { end; } }
}
run { horizon 10; }
"""
# 1 000 chooses of 100 000 candidates at t=0
CHOOSE = """workload { arrive batch(1000); }
session { choose c in 100000 by (c * 7 % 13, c); observe x = c; }
run { horizon 10; }
"""
# 30 000 sessions that end at once, each replaced at once: 3 100 000 replacements at t=0 before the guard
CLOSED = """workload { arrive closed(30000); }
session { set x = 1; }
run { horizon 100; }
"""
# a step stage of 10 000 decoders that never end: 10 000 jobs an iteration, 1 000 iterations a tick
STEP = """stage e : step { budget 1e9; cost 1e-3; }
workload { arrive batch(10000); }
session { run e decode (inf); }
run { horizon 1e9; }
"""
# 20 000 sessions admitted by a step stage at t=0: each admission looks at every resident
# a planning admitting 40 000 sessions at t=0, each admission reading budget_left and a sum of 1 000 terms in
# its header (an admission's own work: its look at the residents is the newcomers' alone); the sessions
# left waiting when the bound stops the run have their demand read at the end (over_cap): budget_left over
# every resident, which must neither stop the run again (a traceback out of the report) nor take seconds
STEP_ADMIT = """pool reqs { cap 100000; admit via e; }
stage e : step { budget 1e9; cost 1e-3; }
workload { arrive batch(40000); }
session { hold reqs (budget_left(e) > 0 ? 1 + 0 * (sum j in 1000 (serial * j)) : 1) { run e decode (inf); } }
run { horizon 1e9; }
"""
# 5 000 flows over two stages: every settle shares the stages among all of them
FLOWS = """share maxmin;
stage a : ps(1e9);
stage b : ps(1e9);
workload { arrive batch(5000); }
session { loop { run a, b (~exp(1)); } }
run { horizon 1e9; }
"""
# 5 000 entries cached at t=0 under a key that draws (each pick scans them all, a draw a key: a key that
# reads the clock but no draw or observable is ranked once an eviction, pools.cache.evict_for); at t=1
# one hold takes the whole pool: 5 000 evictions of 5 000 keys each
EVICT_SCAN = """pool kv { cap 5000; evict by (now - last + ~uniform(0, 1)); }
stage d : delay;
workload { arrive batch(5000); }
session {
  branch (serial == 0) { run d (1); hold kv (5000) { set x = 1; } }
  else { hold kv (1) { set x = 1; } cache (1); }
}
run { horizon 10; }
"""
# an entry of 4·10⁷ blocks of 0.1 under a fixed key: its blocks go one by one (no power of two makes the
# amounts whole numbers: blocks of 0.5 are taken at once, pools.cache._whole_blocks)
EVICT_BLOCKS = """pool kv { cap 4e6; block 0.1; evict by (last); }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4e6) { set x = 1; } cache (4e6); }
  else { run d (1); hold kv (4e6) { set x = 1; } }
}
run { horizon 10; }
"""
# an entry of 2**59 blocks of 1 under a key that reads its size: picked again for every block (the order ranks it
# anew as it shrinks), 2**59 picks in the admission at t=2 (before the countdown counted the picks, --max-wall
# left it to run for ever)
EVICT_SIZE = """pool kv { cap 1152921504606846976; evict by (size); block 1; }
stage d : delay;
workload { arrive renewal(1); }
session { hold kv (576460752303423488) { run d (1.5); } cache (inf); }
run { horizon 6; }
"""
# 4 000 holders; at t=1 one grows by 3 999: 3 999 victims, each chosen among all the holders by key
PREEMPT = """pool kv { cap 4000; preempt by (prio) requeue tail; }
stage d : delay;
workload { arrive batch(4000); }
session {
  set prio = -serial;
  hold kv (1) { branch (serial == 0) { run d (1); grow kv (3999); } else { run d (100); } }
}
run { horizon 10; }
"""

# 30 000 sessions at a delay; at t=1 session 0 loops reading work(d), which adds up all their events
WORK = """stage d : delay;
stage e : delay;
workload { arrive batch(30000); }
session {
  branch (serial == 0) { run e (1); set i = 0; loop { set i = i + work(d); branch (i < 0) { end; } } }
  else { run d (1e9); }
}
run { horizon 10; }
"""

CASES = [
    ("queue", QUEUE, "", "within one event, reading the queue by keys of pool p for ", "at <source>:1:1 at t=0"),
    ("queue", QUEUE, "general", "within one event, reading the queue by keys of pool p for ",
     "at <source>:1:1 at t=0"),
    ("loop", LOOP, "", "within one event, running a loop whose passes take no time at <source>:4:3, session ",
     " at t=0"),
    ("loop", LOOP, "general", "within one event, running a loop whose passes take no time at <source>:4:3, "
     "session ", " at t=0"),
    ("choose", CHOOSE, "", "within one event, running a choose of 100000 candidates at <source>:2:11, session ",
     " at t=0"),
    ("choose", CHOOSE, "general", "within one event, running a choose of 100000 candidates at <source>:2:11, "
     "session ", " at t=0"),
    ("closed", CLOSED, "", "within one event, running the sessions ready at this instant, session ", " at t=0"),
    ("closed", CLOSED, "general", "within one event, running the sessions ready at this instant, session ",
     " at t=0"),
    ("step", STEP, "general", "within one event, ending an iteration of stage e (10000 jobs) at <source>:1:1",
     ""),
    ("step-admit", STEP_ADMIT, "general", "within one event, admitting to stage e (", " at t=0"),
    ("flows", FLOWS, "general", "within one event, sharing the capacity of the stages among 5000 flows", ""),
    ("evict-scan", EVICT_SCAN, "general", "within one event, evicting from pool kv at <source>:1:1", " at t=1"),
    ("evict-blocks", EVICT_BLOCKS, "general", "within one event, evicting from pool kv at <source>:1:1",
     " at t=1"),
    ("evict-size", EVICT_SIZE, "general", "within one event, evicting from pool kv at <source>:1:1", " at t=3"),
    ("preempt", PREEMPT, "general", "within one event, choosing whom pool kv preempts at <source>:1:1",
     " at t=1"),
    ("work", WORK, "general", "within one event, reading work(d) over 29999 jobs at <source>:1:1", " at t=1"),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name, src, tier, words, when", CASES, ids=[f"{c[0]}-{c[2] or 'fast'}" for c in CASES])
def test_max_wall_stops_a_run_inside_a_long_event(monkeypatch, name, src, tier, words, when):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile(source=src)
    # on a loaded machine (other processes on the cores) the wall time before the long event (the
    # sessions' spawns at t=0, the events before t=1) can pass the bound by itself: the run then stops
    # there, rightly, and names that; the bound is raised (twice at most) until the run reaches the event
    # within it. The event alone runs for seconds of CPU, more of wall time under load, past every bound.
    for wall in WALLS:
        t0 = time.process_time()
        r = serq_sim.run(program, max_wall=wall)
        # the CPU the run took: the bound is wall time, so under load the run's wall time past the bound
        # grows with the load, and its CPU time does not
        took = time.process_time() - t0
        assert r.partial == "max-wall" and r.interrupted and r.exit_status == 3, (name, r.partial)
        note = next(n for n in r.result.notes if "wall time" in n)
        if words in note:
            break
    assert f"(--max-wall {wall:g}) {words}" in note, note
    assert when in note, note
    assert note.endswith("; the figures cover what was simulated"), note
    # the event alone runs for seconds of CPU (without the countdown: 2 to 10 s here, past the bound)
    assert took < wall + 3.0, (took, note)


@pytest.mark.timeout(30)
def test_entries_evicted_one_after_another_count_as_the_events_work(monkeypatch):
    # every entry evicted is a unit of the event's work: at t=0 the 1 000 sessions join the queue (1 000
    # sessions resumed, units of the countdown's 2 048), 999 of them are admitted and resumed (1 999), cache
    # an entry each, then the last takes the whole pool and evicts them one after another (lru: no scan); a
    # wall bound already past stops it at the 50th entry, before any tick (the
    # bound is past at once)
    # the countdown held at its full length (it adapts to the cost of a unit, Simulation.pulse_out: from 1 unit
    # up, so under a bound already past it would stop at the first session resumed)
    from serq_sim import engine

    monkeypatch.setattr(engine, "PULSE_FIRST", engine.PULSE)
    monkeypatch.setattr(engine, "PULSE_SECONDS", float("inf"))
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    src = """pool kv { cap 1000; }
workload { arrive batch(1000); }
session {
  branch (serial == 999) { hold kv (1000) { set x = 1; } }
  else { hold kv (1) { set x = 1; } cache (1); }
}
run { horizon 10; }
"""
    r = serq_sim.run(serq_frontend.compile(source=src), max_wall=1e-9)
    assert r.partial == "max-wall"
    note = next(n for n in r.result.notes if "wall time" in n)
    assert "within one event, evicting from pool kv at <source>:1:1 at t=0;" in note, note
    (kv,) = r.result.pools
    # 2 048 − 1 999 = 49 units left: the 50th entry evicted runs the countdown out
    assert (kv.evicted_entries, kv.evicted_units) == (50, 50.0), kv


# a closed workload of one member whose sessions end at the instant they start, each drawing the sum of 100 000
# exponentials (some 60 ms): a countdown of a fixed 2 048 units read the clock once in two minutes of them
SLOW_UNITS = """workload { arrive closed(1); }
session { set x = ~erlang(100000, 1); }
run { horizon 10; }
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", ["", "general"], ids=["fast", "general"])
def test_max_wall_stops_a_run_whose_units_of_work_are_slow(monkeypatch, tier):
    # the countdown adapts to what a unit costs (Simulation.pulse_out: halved after a countdown longer than
    # compile.PULSE_SECONDS): the run stops within a few units of the bound, on both tiers
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile(source=SLOW_UNITS)
    t0 = time.process_time()
    r = serq_sim.run(program, max_wall=1.0)
    took = time.process_time() - t0
    assert r.partial == "max-wall" and r.exit_status == 3, r.partial
    note = next(n for n in r.result.notes if "wall time" in n)
    assert "(--max-wall 1) within one event, running the sessions ready at this instant, session " in note, note
    assert " at t=0;" in note, note
    # before: 2 048 sessions of some 60 ms each (two minutes) between two readings of the clock
    assert took < 1.0 + 3.0, (took, note)
