"""A waiting session whose demand reads state is not said to wait for ever while what it reads can still change
(found by conformance round 45).

pool-reference.txt: "State-dependent demand waits for admission and is reported as over_cap if it still exceeds
capacity at the end of the run." The report's warning `waits-for-ever` (docs/simulator.md, Waiting for ever)
named a session queued at a pool with no holder, whose demand `used(other) / 2` the holder of `other` would
bring within the capacity at its release, as waiting "for ever", and the session behind it in the queue too;
so was one whose demand `20 - now` the clock brings down, and one with room behind a head that waits for ever
in a queue whose `queue by` keys read `waited`. Run longer, each is admitted. A demand that reads a pool held
only by a session that itself waits for ever still is told (a deadlock).

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report bytes).
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, run

OTHER = """
pool kv { cap 10; }
pool other { cap 100; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold other (50) { run d (20); } }
  else { branch (serial == 1) { run d (1); hold kv (used(other) / 2) { observe ok = now; run d (1); } }
  else { run d (2); hold kv (1) { observe ok = now; run d (1); } } }
}
run { horizon H; }
"""

CLOCK = """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); hold kv (20 - now) { observe ok = now; run d (1); } }
  else { run d (12); }
}
run { horizon H; }
"""

DEADLOCK = """
pool b { cap 1; }
pool c { cap 10; }
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold b (1) { hold c (1 + used(b) * 20) { run d (1); } } }
  else { branch (serial == 1) { run d (1); hold kv (used(b) * 20) { run d (1); } }
  else { run d (100); } }
}
run { horizon 10; }
"""


def _for_ever(js) -> list[str]:
    return [n for n in js["notes"] if "for ever" in n]


def test_a_demand_that_a_release_brings_within_the_capacity_waits_for_it(monkeypatch):
    """s0 holds 50 of `other` on [0,20]; s1 asks kv for used(other) / 2 = 25 > 10 from 1, s2 for 1 from 2,
    behind s1. At the horizon 10 both wait, s1 over the capacity (over_cap 1), and neither for ever: at 20
    s0's release makes s1's demand 0, and both are admitted then."""
    r, obs = run(OTHER.replace("H", "10"), monkeypatch)
    js = report_json(r)
    assert _for_ever(js) == [], js["notes"]
    assert pool_json(r, "kv")["over_cap"] == 1 and obs.get("ok", []) == []
    r, obs = run(OTHER.replace("H", "30"), monkeypatch)
    assert obs["ok"] == [(1, 20.0, 20.0), (2, 20.0, 20.0)]


def test_a_demand_that_the_clock_brings_down_waits_for_a_later_attempt(monkeypatch):
    """s0 asks kv for 20 - now from 1 (19 > 10); the attempt at the next event, s1's end at 12, admits it
    (8). At the horizon 10 it waits, and not for ever."""
    r, _obs = run(CLOCK.replace("H", "10"), monkeypatch)
    assert _for_ever(report_json(r)) == []
    r, obs = run(CLOCK.replace("H", "30"), monkeypatch)
    assert obs["ok"] == [(0, 12.0, 12.0)]


def test_a_demand_that_reads_a_pool_only_a_waiting_session_holds_waits_for_ever(monkeypatch):
    """s0 holds b and waits at c for 1 + used(b) · 20 = 21 > 10: for ever (b is its own). s1's demand
    used(b) · 20 reads b, which only s0 holds: it waits for ever too, though s2's run leaves events."""
    r, _obs = run(DEADLOCK, monkeypatch)
    (warning,) = _for_ever(report_json(r))
    assert "2 sessions wait for ever" in warning, warning
    assert "1 queued at c (session 0)" in warning and "1 queued at kv (session 1)" in warning, warning


@pytest.mark.parametrize("demand", ["used(other) / 2", "used(other) / 2 + 0 * busy(d)"])
def test_the_reads_of_a_demand_decide_not_its_form(monkeypatch, demand):
    """The same wait whether the demand also reads a stage (which changes while events are left)."""
    r, _obs = run(OTHER.replace("H", "10").replace("used(other) / 2", demand), monkeypatch)
    assert _for_ever(report_json(r)) == []


AGING = """
pool kv { cap 10; queue by (serial == 1 ? 0 : 10 - waited); }
pool g { cap 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (5) { hold g (2 * used(kv)) { run d (1); } } }
  else { branch (serial == 3) { run d (50); }
  else { run d (1); hold kv (serial == 1 ? 8 : 2) { observe ok = now; run d (1); } } }
}
run { horizon H; }
"""


def test_a_session_with_room_behind_a_stuck_head_of_moving_keys_may_yet_be_chosen(monkeypatch):
    """s0 holds 5 of kv and waits at g for 2 · used(kv) >= 10 > 1: for ever. s1 (key 0) heads kv's queue
    for 8, which never fits beside s0's 5: for ever. s2 (key 10 - waited) has room for its 2; once waited
    passes 10 its key is below s1's, and the attempt at the next event, s3's end at 50, admits it. At the
    horizon 5 the warning names s0 and s1, not s2; run to 60, s2 is admitted at 50 and the drained run
    names the same two."""
    r, obs = run(AGING.replace("H", "5"), monkeypatch)
    (warning,) = _for_ever(report_json(r))
    assert "2 sessions wait for ever" in warning and "1 queued at g (session 0)" in warning, warning
    assert "1 queued at kv (session 1)" in warning, warning
    r, obs = run(AGING.replace("H", "60"), monkeypatch)
    assert obs["ok"] == [(2, 50.0, 50.0)]
    (warning,) = _for_ever(report_json(r))
    assert "no event is left" in warning and "1 queued at kv (session 1)" in warning, warning


ENDLESS = """
pool kv { cap 10; queue by (-waited); }
pool other { cap 10; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (6) { run d (inf); } }
  else { branch (serial == 3) { run d (50); } else { run d (serial); hold kv (5 + 0 * used(other)) { run d (1); } } }
}
run { horizon 10; }
"""


def test_moving_keys_do_not_wake_a_demand_whose_pools_never_free(monkeypatch):
    """s0 holds 6 of kv in a run of infinite work; s1 and s2 ask 5 each (a demand that reads `other`, which
    nothing holds) and the 4 left never hold it: though kv's keys read `waited` and s3's run leaves events,
    both wait for ever, and s0 in its run."""
    r, _obs = run(ENDLESS, monkeypatch)
    (warning,) = _for_ever(report_json(r))
    assert "3 sessions wait for ever" in warning and "2 queued at kv (sessions 1, 2)" in warning, warning
