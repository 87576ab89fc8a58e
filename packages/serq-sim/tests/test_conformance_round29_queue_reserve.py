"""Conformance of pool-reference.txt's `queue` and `reserve held`, by hand, in cases no earlier test held
together:

* `queue`: "by reevaluates keys for every waiting hold before each admission attempt, compares them
  lexicographically, and breaks ties by enqueue order. … waited supplies seconds since the current hold
  entered the queue … Only the selected hold is tried: failure to fit blocks the rest. FIFO keeps enqueue
  order. Selection occurs at admission attempts; there is no implicit aging timer", with the page's lanes,
  `queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial)`;
* `reserve held`: "u_i = max(0, r_i − a_i), where a_i is allocated units and r_i is the larger of units
  and reserve, evaluated at admission and rounded up to blocks. A new reservation r requires used + Σ u_i
  + r ≤ cap. … Each hold counts separately, including nested holds. Reservations end with the hold's
  scope, release or preemption; leases retain none. Cached prefixes are evicted when units are
  allocated, not when reserved. A hold that grows beyond its reservation follows the pool's preempt
  rule."

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the report's pool is asserted as its JSON reads, and
every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import pool_json, run


def _fields(report, name, want: dict) -> dict:
    got = pool_json(report, name)
    return {k: got[k] for k in want}


def _at(samples) -> list:
    return [(s, t) for s, t, _v in samples]


# The page's lanes on a pool of one slot: s0 holds it over [0, 2]; s1 (prompt 200, long) joins at 0, s2
# and s3 (100, short) at 0.5 and 0.6, s4 (immediate) at 1.5; each runs 1. Admission attempts are at 2, 3, 4
# and 5, when a holder ends; waited is read at each. s4 (lane 0) is first at 2 whatever the age.
LANES = """
pool reqs { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= AGE ? 1 : prompt <= 128 ? 2 : 3, serial); }
stage d : delay;
workload { arrive batch(5); }
session {
  set immediate = serial == 4;
  set prompt = serial == 1 ? 200 : 100;
  branch (serial == 0) { hold reqs (1) { run d (2); } }
  else {
    run d (serial == 1 ? 0 : serial == 2 ? 0.5 : serial == 3 ? 0.6 : 1.5);
    hold reqs (1) { observe a = now; run d (1); }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("age, a", [
    # at 3 s1 has waited 3 >= 3: lane 1, ahead of the short ones (lane 2), which go in serial order
    (3, [(4, 2.0), (1, 3.0), (2, 4.0), (3, 5.0)]),
    # at 3 s1 has waited 3 < 3.5 (lane 3): s2 goes; at 4 it has waited 4: lane 1, ahead of s3
    (3.5, [(4, 2.0), (2, 3.0), (1, 4.0), (3, 5.0)]),
    # never aged: the long request last
    (100, [(4, 2.0), (2, 3.0), (3, 4.0), (1, 5.0)]),
])
def test_the_pages_lanes_age_at_admission_attempts(monkeypatch, age, a):
    """used 1 on [0, 6]: 0.6. The waits are each admission's time less its join (s0 0, s4 0.5, s1 3, 4 or
    5, …), their mean over the 5 admissions the pool's wait and their sum over 10 its mean queue."""
    r, o = run(LANES.replace("AGE", str(age)), monkeypatch)
    assert _at(o["a"]) == a
    joined = {1: 0.0, 2: 0.5, 3: 0.6, 4: 1.5}
    total = sum(t - joined[s] for s, t in a)
    kv = {"used": 0.6, "wait": total / 5, "queue": total / 10, "admissions": 5}
    assert _fields(r, "reqs", kv) == pytest.approx(kv, rel=1e-12)


# cap 4: s0 holds 3 over [0, 1]. s1 joins at 0.5 for 3; s2 joins at SLEEP for UNITS.
HEAD_OF_LINE = """
pool kv { cap 4; QUEUE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (3) { run d (1); } }
  branch (serial == 1) { run d (0.5); hold kv (3) { observe a = now; run d (1); } }
  branch (serial == 2) { run d (SLEEP); hold kv (UNITS) { observe a = now; run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("queue, sleep, units, a, wait", [
    # s1 is the head (key 0) and does not fit (3 + 3); s2 (1) would, and waits behind it until 1, when
    # both fit. Waits 0.5, 0.5: 1 over 3.
    ("queue by (serial == 1 ? 0 : 1)", 0.5, 1, [(1, 1.0), (2, 1.0)], 1 / 3),
    # s2 is the head and fits at once (3 + 1); s1 at 1. Waits 0, 0.5.
    ("queue by (serial == 2 ? 0 : 1)", 0.5, 1, [(2, 0.5), (1, 1.0)], 0.5 / 3),
    # fifo: both join at 0.5, s1's run ended first (scheduled first): s1 is the head and blocks s2
    ("queue fifo", 0.5, 1, [(1, 1.0), (2, 1.0)], 1 / 3),
    # keys that tie: enqueue order, as fifo
    ("queue by (0)", 0.5, 1, [(1, 1.0), (2, 1.0)], 1 / 3),
    # s2 (2) joined first at 0.25: the tie goes to it at 1; s1 (2 + 3 > 4) waits until 2. Waits 0.75, 1.5
    # over 3: 0.75.
    ("queue by (0)", 0.25, 2, [(2, 1.0), (1, 2.0)], 0.75),
    # by serial s1 first at 1, s2 (3 + 2 > 4) at 2. Waits 0.5, 1.75 over 3: 0.75.
    ("queue by (serial)", 0.25, 2, [(1, 1.0), (2, 2.0)], 0.75),
])
def test_only_the_selected_hold_is_tried(monkeypatch, queue, sleep, units, a, wait):
    src = HEAD_OF_LINE.replace("QUEUE", queue).replace("SLEEP", str(sleep)).replace("UNITS", str(units))
    r, o = run(src, monkeypatch)
    assert _at(o["a"]) == a
    kv = {"wait": wait, "admissions": 3, "used": (3 + 3 + units) / 10}
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# block 4: s0 holds 2 reserving 5 (a0 = 4, r0 = 8 rounded up: u0 = 4), s1 wants 4 (r1 = 4) beside it.
ROUNDED = """
pool kv { cap CAP; block 4; HELD }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (5) { observe a = now; run d (3); } }
  else { hold kv (4) { observe a = now; run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("cap, held, a1, kv", [
    # used 4 + u0 4 + 4 = 12 > 11: s1 waits until s0's scope ends at 3 (with r0 unrounded, 4 + 1 + 4 = 9
    # would fit). used 4 on [0, 3], 4 on [3, 4]: 16 over 10; wait 3 over 2; queue 3 over 10.
    (11, "reserve held;", 3.0, {"used": 1.6, "wait": 1.5, "queue": 0.3}),
    # 12 <= 12: at once
    (12, "reserve held;", 0.0, {"used": 1.6, "wait": 0.0, "queue": 0.0}),
    # without reserve held the reservation counts at s0's admission alone: 4 + 4 <= 11
    (11, "", 0.0, {"used": 1.6, "wait": 0.0, "queue": 0.0}),
])
def test_a_reservation_is_rounded_up_to_blocks(monkeypatch, cap, held, a1, kv):
    r, o = run(ROUNDED.replace("CAP", str(cap)).replace("HELD", held), monkeypatch)
    assert _at(o["a"]) == [(0, 0.0), (1, a1)]
    assert _fields(r, "kv", kv) == kv


# s0's outer hold of 1 reserves 4 (u 3); its inner hold of 1 reserves INNER. s1 wants 3 at 0.5.
NESTED = """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (1) reserve (4) { hold kv (1) reserve (INNER) { run d (2); } run d (1); } }
  else { run d (0.5); hold kv (3) { observe a = now; run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("inner, a, kv", [
    # u 3 + 3, used 2: 2 + 6 + 3 = 11 > 10 until the inner scope ends at 2 (1 + 3 + 3 = 7). used s0 2 on
    # [0, 2], 1 on [2, 3]; s1 3 on [2, 3]: 8 over 10; wait 1.5 over 3 admissions; queue 1.5 over 10.
    (4, 2.0, {"used": 0.8, "wait": 0.5, "queue": 0.15, "admissions": 3}),
    # inner u 0: 2 + 3 + 3 = 8 at once; used s0 5, s1 3 on [0.5, 1.5]: 8 over 10
    (1, 0.5, {"used": 0.8, "wait": 0.0, "queue": 0.0, "admissions": 3}),
])
def test_nested_holds_count_separately(monkeypatch, inner, a, kv):
    r, o = run(NESTED.replace("INNER", str(inner)), monkeypatch)
    assert o["a"] == [(1, a, a)]
    assert _fields(r, "kv", kv) == kv


# s0 holds 1 reserving 6 (u 5) and leases it at its scope's end; s1 wants 8 at 1.5.
LEASED = """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (1) reserve (6) { run d (SCOPE); } cache (1) lease kv (inf); run d (5); }
  else { run d (1.5); hold kv (8) { observe a = now; run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("scope, a, kv", [
    # the scope ends at 1: the lease keeps the 1 unit and no reservation: 1 + 8 <= 10 at 1.5 (with u 5
    # kept, 14 > 10 until 6). The lease ends with s0 at 6 and caches 1: 4 over 10. used 6 + 8 over 10.
    (1, 1.5, {"used": 1.4, "cached": 0.4, "wait": 0.0}),
    # the scope lasts until 2: 1 + 5 + 8 > 10 until then; s0 ends at 7: cached 1 on [7, 10]; used 7 + 8.
    (2, 2.0, {"used": 1.5, "cached": 0.3, "wait": 0.25}),
])
def test_a_lease_keeps_no_reservation(monkeypatch, scope, a, kv):
    r, o = run(LEASED.replace("SCOPE", str(scope)), monkeypatch)
    assert o["a"] == [(1, a, a)]
    assert _fields(r, "kv", kv) == kv


# s1 caches 4 at 0.5 (cap 10). s0 holds 1 reserving 8 at 1 (1 + 8 <= 10; the cache never blocks), and
# grows by GROW at 2 (within its reservation: 1 + GROW <= 10). s1 reads its cachedin at 1.5 and 2.5.
RESERVED_NOT_EVICTED = """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { run d (0.5); } cache (4); run d (1); observe c = cachedin(kv); run d (1); observe c = cachedin(kv); }
  else { run d (1); hold kv (1) reserve (8) { run d (1); grow kv (GROW); run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("grow, c, kv", [
    # the reservation evicts nothing (1 + 4 <= 10 allocated and cached), nor does a growth to 6 (6 + 4).
    # used 4 on [0, 0.5], 1 on [1, 2], 6 on [2, 3]: 9 over 10; cached 4 on [0.5, 10]: 3.8.
    (5, [4.0, 4.0], {"used": 0.9, "cached": 3.8, "evicted_entries": 0}),
    # a growth to 7 (7 + 4 > 10) evicts the entry at 2. used 2 + 1 + 7: 1; cached 4 on [0.5, 2]: 0.6.
    (6, [4.0, 0.0], {"used": 1.0, "cached": 0.6, "evicted_entries": 1}),
])
def test_the_cache_makes_room_for_units_not_reservations(monkeypatch, grow, c, kv):
    r, o = run(RESERVED_NOT_EVICTED.replace("GROW", str(grow)), monkeypatch)
    assert o["c"] == [(0, 1.5, c[0]), (0, 2.5, c[1])]
    assert _fields(r, "kv", kv) == kv


# s0 holds 2 reserving 4 (u0 2); s1 holds 5 (2 + 2 + 5 <= 10). At 1 s0 grows by GROW.
BEYOND = """
pool kv { cap 10; reserve held; PREEMPT; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (4) { run d (1); grow kv (GROW); observe g = now; run d (1); } }
  else { hold kv (5) { observe a = now; run d (3); } }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("preempt, grow, g, a, done, kv", [
    # to 6, beyond the reservation: 7 + 4 > 10: lifo preempts s1, which runs again at 2 (when s0 ends).
    # used s0 2 + 6; s1 5 + 15: 28 over 10; wait 1 over 3.
    ("preempt lifo", 4, 1.0, [(1, 0.0), (1, 2.0)], {0: 2.0, 1: 5.0},
     {"used": 2.8, "preemptions": 1, "admissions": 3}),
    # none: s0 waits for s1's end at 3. used s0 2 on [0, 3], 6 on [3, 4]; s1 15: 27 over 10.
    ("preempt none", 4, 3.0, [(1, 0.0)], {1: 3.0, 0: 4.0}, {"used": 2.7, "preemptions": 0, "admissions": 2}),
    # to 5, beyond the reservation but within the cap (7 + 3 = 10): no preemption. used 2 + 5 + 15: 2.2.
    ("preempt lifo", 3, 1.0, [(1, 0.0)], {0: 2.0, 1: 3.0}, {"used": 2.2, "preemptions": 0, "admissions": 2}),
    # to 4, within it (7 + 2 <= 10): 2 + 4 + 15: 2.1
    ("preempt lifo", 2, 1.0, [(1, 0.0)], {0: 2.0, 1: 3.0}, {"used": 2.1, "preemptions": 0, "admissions": 2}),
])
def test_a_growth_beyond_the_reservation_follows_the_preempt_rule(monkeypatch, preempt, grow, g, a, done, kv):
    r, o = run(BEYOND.replace("PREEMPT", preempt).replace("GROW", str(grow)), monkeypatch)
    assert o["g"] == [(0, g, g)]
    assert _at(o["a"]) == a
    assert {s: t for s, t, _v in o["done"]} == done
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# cap 10: s0's outer hold of 1 reserves OUTER; its inner hold of 1 grows by 3 at 1; s1 holds 1 over [0, 2].
# "Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap": the grower is the inner hold, so its own
# session's outer reservation counts against it.
OWN_OUTER = """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (1) reserve (OUTER) { hold kv (1) { run d (1); grow kv (3); observe g = now; observe f = free(kv); run d (1); } } }
  else { hold kv (1) { run d (2); } }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("outer, g, f, done, kv", [
    # u_outer 5: 3 + 5 + 3 > 10 at 1; at 2 (s1 ends) 2 + 5 + 3 = 10: the growth, and free 10 - 5 - 5 = 0.
    # used: outer 1 on [0, 3], inner 1 on [0, 2], 4 on [2, 3], s1 2: 11 over 10; holders 3 + 3 + 2: 0.8.
    (6, 2.0, 0.0, {1: 2.0, 0: 3.0}, {"used": 1.1, "holders": 0.8, "admissions": 3}),
    # no reservation left: 3 + 3 <= 10 at 1; free 10 - 6 = 4. used 2 + 1 + 4 + 2: 0.9; holders 0.6.
    (1, 1.0, 4.0, {0: 2.0, 1: 2.0}, {"used": 0.9, "holders": 0.6, "admissions": 3}),
])
def test_a_nested_growth_counts_its_sessions_outer_reservation(monkeypatch, outer, g, f, done, kv):
    r, o = run(OWN_OUTER.replace("OUTER", str(outer)), monkeypatch)
    assert (o["g"], o["f"]) == ([(0, g, g)], [(0, g, f)])
    assert {s: t for s, t, _v in o["done"]} == done
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# s0 holds b (cap 1) over [0, 2]. s1 joins at 0.1 with a hold of a (1), b (1): it waits in its first pool's
# queue, a's, where a has room and b has none. s2 joins a's queue at 0.5 for a (1) alone.
FIRST_POOL = """
pool a { cap 4; QUEUE; }
pool b { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold b (1) { run d (2); } }
  branch (serial == 1) { run d (0.1); hold a (1), b (1) { observe x = now; run d (1); } }
  branch (serial == 2) { run d (0.5); hold a (1) { observe x = now; run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("queue, x, wait", [
    # s1 is a's head and does not fit (b): s2, which fits a, waits behind it until 2. Waits 1.9 and 1.5.
    ("queue fifo", [(1, 2.0), (2, 2.0)], 1.7),
    # the longest waited is s1: the same
    ("queue by (-waited)", [(1, 2.0), (2, 2.0)], 1.7),
    # the least waited is s2's 0 at 0.5: it is the head and fits. Waits 0 and 1.9.
    ("queue by (waited)", [(2, 0.5), (1, 2.0)], 0.95),
    ("queue by (serial == 2 ? 0 : 1)", [(2, 0.5), (1, 2.0)], 0.95),
])
def test_a_hold_on_two_pools_waits_in_its_first_pools_queue(monkeypatch, queue, x, wait):
    """a: used 1 + 1 over 10; queue the waits' sum over 10; b: s0 2 and s1 1 over 10, nobody in b's queue
    (both admitted there with no wait)."""
    r, o = run(FIRST_POOL.replace("QUEUE", queue), monkeypatch)
    assert _at(o["x"]) == x
    a = {"used": 0.2, "wait": wait, "queue": wait * 2 / 10, "admissions": 2}
    assert _fields(r, "a", a) == pytest.approx(a, rel=1e-12)
    b = {"used": 0.3, "queue": 0.0, "wait": 0.0, "admissions": 2}
    assert _fields(r, "b", b) == b


# s0 holds kv (1) reserving 8 (u 7) and g (1) over [0, 4]; at 1 it does STATEMENT. s1 wants 8 of kv at 0.5:
# 1 + 7 + 8 > 10 while s0's reservation lives.
RELEASED = """
pool kv { cap 10; reserve held; }
pool g { cap 5; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (1) reserve (8), g (1) { run d (1); STATEMENT; run d (3); } }
  else { run d (0.5); hold kv (8) { observe a = now; run d (1); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("statement, a, kv, g_used", [
    # "Reservations end with the hold's scope, release or preemption": the release of kv gives back the
    # unit and ends the reservation at 1. used 1 + 8 over 10; wait 0.5 over 2; g held until 4: 0.4.
    ("release kv", 1.0, {"used": 0.9, "wait": 0.25, "queue": 0.05}, 0.4),
    # the release of g alone leaves kv's hold and its reservation: s1 waits for the scope's end at 4.
    # used 4 + 8 over 10; wait 3.5 over 2; g held on [0, 1]: 0.1.
    ("release g", 4.0, {"used": 1.2, "wait": 1.75, "queue": 0.35}, 0.1),
    # a growth within the reservation (to 3 of 8) leaves u 5: 3 + 5 + 8 > 10 until 4. used 1 + 9 + 8.
    ("grow kv (2)", 4.0, {"used": 1.8, "wait": 1.75, "queue": 0.35}, 0.4),
])
def test_a_release_ends_the_reservation(monkeypatch, statement, a, kv, g_used):
    r, o = run(RELEASED.replace("STATEMENT", statement), monkeypatch)
    assert o["a"] == [(1, a, a)]
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)
    assert _fields(r, "g", {"used": g_used}) == {"used": g_used}
