"""Conformance of pool-reference.txt's `preempt`, by hand, in cases no earlier test held together:

* "`none`: Wait for room, then resume. `by (k, …)`: Preempt the candidate with the least keys, compared in
  order; ties go to the last admitted. `lifo`: Shorthand for `by (-admission) requeue head`";
* "If no stage names it as memory, candidates are holders with an active hold scope. Leases are not
  candidates; the grower can be its own victim.";
* "It re-enters the hold's first pool's queue to execute the hold again with computed set to the position
  reached. requeue head (the default) places it first, ahead of policy keys. requeue tail treats it as a
  newcomer: FIFO places it last, while queue by places it by its keys, with waited reset to 0.";
* "Keys are read at the Victim moment, for each candidate: … admission (its place in the candidates'
  admission order: … the order the pool admitted its holders) … and position (the position its hold has
  computed on the pool)";
* the page's priority queue, `queue by (priority, t0); preempt by (-priority, -t0) requeue tail;`.

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


# cap 6, three holds of 2 at 0 (admitted s0, s1, s2), prio 2, 1, 3. At 1 s0 grows by 2: no room.
# A victim releases its 2, s0 grows to 4 (used 6), the victim waits at the head until s0 ends at 2 (used
# 2) and runs its 3 again: done at 5. used: s0 2 on [0, 1], 4 on [1, 2]; the victim 2 on [0, 1] and
# [2, 5]; the other 2 on [0, 3]: 6 + 8 + 6 = 20 over 10 = 2; queue 1 on [1, 2]: 0.1; waits 0, 0, 0, 1:
# 0.25 over 4 admissions; holders 2 + 4 + 3 = 9 over 10.
PRIORITIES = """
pool kv { cap 6; PREEMPT; }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 0 ? 2 : serial == 1 ? 1 : 3;
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); observe g = now; run d (1); } }
  else { hold kv (2) { observe a = now; run d (3); } }
  observe done = now;
}
run { horizon 10; }
"""
ONE_VICTIM = {"used": 2.0, "queue": 0.1, "holders": 0.9, "wait": 0.25, "admissions": 4, "preemptions": 1}


@pytest.mark.parametrize("preempt, g, a, done, kv", [
    # none: s0 waits for room from 1 until s1 and s2 end at 3, grows then and ends at 4. used s0 2 on
    # [0, 3], 4 on [3, 4]; s1, s2 6 each: 22 over 10; holders s0 4 (a grower holds), s1 3, s2 3: 1.
    ("preempt none", 3.0, [(1, 0.0), (2, 0.0)], {1: 3.0, 2: 3.0, 0: 4.0},
     {"used": 2.2, "holders": 1.0, "admissions": 3, "preemptions": 0}),
    # the least prio is s1's 1
    ("preempt by (prio)", 1.0, [(1, 0.0), (2, 0.0), (1, 2.0)], {0: 2.0, 2: 3.0, 1: 5.0}, ONE_VICTIM),
    # the least -prio is s2's -3
    ("preempt by (-prio)", 1.0, [(1, 0.0), (2, 0.0), (2, 2.0)], {0: 2.0, 1: 3.0, 2: 5.0}, ONE_VICTIM),
    # every key ties: the last admitted, s2
    ("preempt by (0)", 1.0, [(1, 0.0), (2, 0.0), (2, 2.0)], {0: 2.0, 1: 3.0, 2: 5.0}, ONE_VICTIM),
    # by (-admission): the last admitted, s2
    ("preempt lifo", 1.0, [(1, 0.0), (2, 0.0), (2, 2.0)], {0: 2.0, 1: 3.0, 2: 5.0}, ONE_VICTIM),
    # by (admission): the first admitted, s0, the grower itself: it releases its 2 and is admitted again
    # at once (2 + 2 + 2 <= 6), the last of the pool's admissions now. At 2 it grows again: the first
    # admitted is s1 now, the victim; s0 grows (g = 2) and ends at 3, as s2 does: s1 runs again over
    # [3, 6]. used s0 2 on [0, 2], 4 on [2, 3]; s1 2 on [0, 2], [3, 6]; s2 2 on [0, 3]: 8 + 10 + 6 = 24
    # over 10; waits 0, 0, 0, 0 (s0 again), 1 (s1 from 2 to 3): 0.2 over 5; queue 1 on [2, 3]: 0.1;
    # holders 3 + 5 + 3 = 11 over 10.
    ("preempt by (admission)", 2.0, [(1, 0.0), (2, 0.0), (1, 3.0)], {0: 3.0, 2: 3.0, 1: 6.0},
     {"used": 2.4, "queue": 0.1, "holders": 1.1, "wait": 0.2, "admissions": 5, "preemptions": 2}),
])
def test_the_least_keys_go_ties_to_the_last_admitted(monkeypatch, preempt, g, a, done, kv):
    r, o = run(PRIORITIES.replace("PREEMPT", preempt), monkeypatch)
    assert o["g"] == [(0, g, g)]
    assert _at(o["a"]) == a
    assert {s: t for s, t, _v in o["done"]} == done
    assert _fields(r, "kv", kv) == kv


# cap 4, by (-admission): at 1 s0 grows by 2 beside s1 (2): s1, the last admitted, is the victim. s2 has
# waited for 3 units since 0.5. At 2 s0 ends: used 0, s1 (2) and s2 (3) wait and only one fits.
# used: s0 2 on [0, 1], 4 on [1, 2]; s1 2 on [0, 1] and 5 s; s2 3 for 1 s: 6 + 12 + 3 = 21 over 10.
REQUEUE = """
pool kv { cap 4; preempt by (-admission) REQUEUE; QUEUE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); run d (1); } }
  branch (serial == 1) { hold kv (2) { observe a = now; run d (5); } }
  branch (serial == 2) { run d (0.5); hold kv (3) { observe a = now; run d (1); } }
  observe done = now;
}
run { horizon 10; }
"""
# s2 first at 2 (waited 1.5), s1 at 3 when s2 ends, done at 8: waits 0, 0, 1.5, 2 over 4 = 0.875;
# queue s2 on [0.5, 2], s1 on [1, 3]: 3.5 over 10
S2_FIRST = ([(1, 0.0), (2, 2.0), (1, 3.0)], {0: 2.0, 2: 3.0, 1: 8.0}, 0.875, 0.35)
# s1 first at 2, done at 7; s2 (3 + 2 > 4) at 7, done at 8: waits 0, 0, 1, 6.5 over 4 = 1.875; queue s2
# on [0.5, 7], s1 on [1, 2]: 7.5 over 10
S1_FIRST = ([(1, 0.0), (1, 2.0), (2, 7.0)], {0: 2.0, 1: 7.0, 2: 8.0}, 1.875, 0.75)


@pytest.mark.parametrize("requeue, queue, want", [
    # tail under by (-waited): s1's waited starts again at 1 (1 at 2), s2's is 1.5: s2 is the head. Had
    # s1 kept its first join (waited 2) it would be first.
    ("requeue tail", "queue by (-waited)", S2_FIRST),
    # head: ahead of the keys, whatever they say
    ("requeue head", "queue by (-waited)", S1_FIRST),
    ("requeue head", "queue by (serial == 1)", S1_FIRST),
    # tail under by (waited): the least waited, s1's 1
    ("requeue tail", "queue by (waited)", S1_FIRST),
    # tail under fifo: last, behind s2
    ("requeue tail", "queue fifo", S2_FIRST),
])
def test_a_victim_requeued_at_the_tail_is_a_newcomer(monkeypatch, requeue, queue, want):
    a, done, wait, mean_queue = want
    r, o = run(REQUEUE.replace("REQUEUE", requeue).replace("QUEUE", queue), monkeypatch)
    assert _at(o["a"]) == a
    assert {s: t for s, t, _v in o["done"]} == done
    kv = {"used": 2.1, "queue": mean_queue, "wait": wait, "admissions": 4, "preemptions": 1}
    assert _fields(r, "kv", kv) == kv


# cap 9, three holds of 3: s0 loads 1.5, s1 1, s2 2 (position on kv). At 1 s0 grows by 1: no room. The
# victim releases 3, s0 grows to 4 (used 7); the victim (3: 10 > 9) waits until s0 ends at 2 and runs its
# hold again, with computed the position it had reached, so it loads nothing more. used s0 3 + 4; the
# victim 3 on [0, 1] and [2, 5]; the other 3 on [0, 3]: 7 + 12 + 9 = 28 over 10; waits 1 of 4: 0.25.
POSITIONS = """
pool kv { cap 9; PREEMPT; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (3) { load kv (1.5); run d (1); grow kv (1); run d (1); } }
  else {
    hold kv (3) {
      observe k = computed;
      branch (computed == 0) { load kv (serial); }
      run d (3);
    }
  }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("preempt, victim, position", [
    # the least position: s1's 1 (s0 1.5, s2 2)
    ("preempt by (position)", 1, 1.0),
    # the greatest: s2's 2
    ("preempt by (-position)", 2, 2.0),
    # the last admitted: s2
    ("preempt lifo", 2, 2.0),
    # position > 1.2 is 1 for s0 and s2, 0 for s1: s1
    ("preempt by (position > 1.2, -admission)", 1, 1.0),
])
def test_a_key_reads_the_position_and_the_victim_resumes_there(monkeypatch, preempt, victim, position):
    r, o = run(POSITIONS.replace("PREEMPT", preempt), monkeypatch)
    assert o["k"] == [(1, 0.0, 0.0), (2, 0.0, 0.0), (victim, 2.0, position)]
    other = 3 - victim
    assert {s: t for s, t, _v in o["done"]} == {0: 2.0, other: 3.0, victim: 5.0}
    kv = {"used": 2.8, "queue": 0.1, "wait": 0.25, "admissions": 4, "preemptions": 1}
    assert _fields(r, "kv", kv) == kv


# lifo, cap 6: s0 and s1 hold 2 at 0; s2 holds 2 at 0.1, the last admitted, and its scope ends at 0.5.
# At 1 s0 grows by 2.
LEASED = """
pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); run d (1); } }
  branch (serial == 1) { hold kv (2) { observe a = now; run d (3); } }
  branch (serial == 2) { run d (0.1); hold kv (2) { observe a = now; run d (0.4); } cache (2) LEASE; run d (4); observe c = cachedin(kv); }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("lease, a, done, kv", [
    # s2's lease keeps its 2 (no candidate): the candidates are s0 and s1, and s1 goes; it runs again from
    # 2 (s0 ends), done at 5. The lease ends with s2 at 4.5 and caches 2 then (cachedin 0 before).
    # used s0 2 + 4; s1 2 + 6; s2 2 on [0.1, 4.5]: 6 + 8 + 8.8 = 22.8 over 10; cached 2 on [4.5, 10]: 1.1;
    # holders (a lease holds) 2 + 4 + 4.4: 1.04.
    ("lease kv (inf)", [(1, 0.0), (2, 0.1), (1, 2.0)], {0: 2.0, 2: 4.5, 1: 5.0},
     {"used": 2.28, "cached": 1.1, "holders": 1.04, "admissions": 4, "preemptions": 1, "evicted_entries": 0}),
    # without it s2's 2 are cached from 0.5, and at 1 they are evicted to make room: nobody is preempted.
    # used 6 + 6 + 0.8 = 12.8; cached 2 on [0.5, 1]: 0.1; holders 2 + 3 + 0.4: 0.54.
    ("", [(1, 0.0), (2, 0.1)], {0: 2.0, 1: 3.0, 2: 4.5},
     {"used": 1.28, "cached": 0.1, "holders": 0.54, "admissions": 3, "preemptions": 0, "evicted_entries": 1}),
])
def test_a_lease_is_no_candidate(monkeypatch, lease, a, done, kv):
    r, o = run(LEASED.replace("LEASE", lease), monkeypatch)
    assert _at(o["a"]) == a
    assert {s: t for s, t, _v in o["done"]} == done
    assert o["c"] == [(2, 4.5, 0.0)]
    got = _fields(r, "kv", kv)
    assert got == pytest.approx(kv, rel=1e-12)


# The page's priority queue. cap 4: s0 (priority 1) and s1 (2) hold 2 at 0; s2 (0, the most urgent)
# joins at 0.5 for 1 unit and waits. At 1 s0 grows by 1: the keys (-priority, -t0) are (-1, 0) for s0 and
# (-2, 0) for s1: s1 goes. s0 grows to 3.
PRIORITY_QUEUE = """
pool kv { cap 4; queue by (priority, t0); preempt by (-priority, -t0) REQUEUE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (0.5); }
  set t0 = now;
  set priority = serial == 0 ? 1 : serial == 1 ? 2 : 0;
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (1); run d (1); } }
  branch (serial == 1) { hold kv (2) { observe a = now; run d (3); } }
  branch (serial == 2) { hold kv (1) { observe a = now; run d (1); } }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("requeue, a, done, wait, queue", [
    # tail: by its keys, (2, 0) behind s2's (0, 0.5): s2 fits (3 + 1) at 1; s1 (2) waits until s0 ends at
    # 2. Waits 0, 0, 0.5, 1 over 4; queue s2 on [0.5, 1], s1 on [1, 2]: 1.5 over 10.
    ("requeue tail", [(1, 0.0), (2, 1.0), (1, 2.0)], {0: 2.0, 2: 2.0, 1: 5.0}, 0.375, 0.15),
    # head: s1 first, and 3 + 2 > 4 blocks s2 behind it until 2, when both fit. Waits 0, 0, 1, 1.5; queue
    # s2 on [0.5, 2], s1 on [1, 2]: 2.5 over 10.
    ("requeue head", [(1, 0.0), (1, 2.0), (2, 2.0)], {0: 2.0, 2: 3.0, 1: 5.0}, 0.625, 0.25),
])
def test_the_pages_priority_queue(monkeypatch, requeue, a, done, wait, queue):
    """used: s0 2 on [0, 1], 3 on [1, 2]; s1 2 on [0, 1] and [2, 5]; s2 1 for 1 s: 5 + 8 + 1 = 14 over 10."""
    r, o = run(PRIORITY_QUEUE.replace("REQUEUE", requeue), monkeypatch)
    assert _at(o["a"]) == a
    assert {s: t for s, t, _v in o["done"]} == done
    kv = {"used": 1.4, "queue": queue, "wait": wait, "admissions": 4, "preemptions": 1}
    assert _fields(r, "kv", kv) == kv


# kv is E's memory, cap 8. s0 holds 2 and decodes 3 tokens growing kv; s1 holds 4 and decodes 4 (its run
# does not grow: its position stays 0); s2 holds 2 from 0.1 and runs on d, not on E. One token an
# iteration of 1 each (budget 8, cost 1) to s0 and s1: at the planning at 2 s0's third token needs a third
# unit: 2 + 4 + 2 + 1 > 8. The candidates are E's residents, s0 and s1 (in serving order); s2, the pool's
# last admission, is none.
RESIDENTS = """
pool kv { cap 8; PREEMPT; }
stage E : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { observe a = now; run E decode (3) growing kv; } }
  branch (serial == 1) { hold kv (4) { observe a = now; run E decode (4); } }
  branch (serial == 2) { run d (0.1); hold kv (2) { observe a = now; run d (10); } }
  observe done = now;
}
run { horizon 20; }
"""
# s1 goes: s0 grows to 3 and takes its third token over [2, 3]; s1 (4 + 3 + 2 > 8) is admitted again at
# 3, when s0 ends, and decodes its 4 tokens again over [3, 7]. used s0 2 on [0, 2], 3 on [2, 3]; s1 4 on
# [0, 2] and [3, 7]; s2 2 on [0.1, 10.1]: 7 + 24 + 20 = 51 over 20.
S1_GOES = ({1: 3.0}, {0: 3.0, 1: 7.0, 2: 10.1}, 2.55)
# s0 goes, its own victim: s1 decodes its last two tokens over [2, 4]; s0 is admitted again at 3 (the
# iteration's end: 4 + 2 + 2 <= 8) and decodes 3 over [3, 6], growing to 3 at 5. used s0 2 on [0, 2],
# [3, 5], 3 on [5, 6]; s1 4 on [0, 4]; s2 20: 11 + 16 + 20 = 47 over 20.
S0_GOES = ({0: 3.0}, {1: 4.0, 0: 6.0, 2: 10.1}, 2.35)


@pytest.mark.parametrize("preempt, want", [
    # the last in serving order: s1 (by the pool's admissions it would be s2)
    ("preempt lifo", S1_GOES),
    # the first: s0
    ("preempt by (admission)", S0_GOES),
    # position: s0's 2 (its growing run's), s1's 0 (a run that does not grow advances no position)
    ("preempt by (position)", S1_GOES),
    ("preempt by (-position)", S0_GOES),
])
def test_the_candidates_are_the_memory_stages_residents(monkeypatch, preempt, want):
    again, done, used = want
    r, o = run(RESIDENTS.replace("PREEMPT", preempt), monkeypatch)
    assert _at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 0.1)] + list(again.items())
    assert {s: t for s, t, _v in o["done"]} == done
    kv = {"used": used, "queue": 0.05, "wait": 0.25, "admissions": 4, "preemptions": 1}
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# cap 9. s0 holds 3 and loads 1.5; s1 caches 2 at 0.5 and holds 3 again, consuming them (cached 2): its
# position starts there, and its body advances nothing; s2 holds 3 from 1 and advances nothing: position
# 0. At 2 s0 grows by 1: 9 + 1 > 9.
CONSUMED = """
pool kv { cap 9; preempt by (KEY); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (3) { load kv (1.5); run d (2); grow kv (1); run d (1); } }
  branch (serial == 1) { hold kv (2) { run d (0.5); } cache (2); hold kv (3) { observe k = computed; observe c = cached; run d (3); } cache (3); }
  branch (serial == 2) { run d (1); hold kv (3) { observe k = computed; run d (3); } }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("key, k, c, done, kv", [
    # position: s2's 0 (its allocation does not count), s0's 1.5, s1's 2. s2 is admitted again at 3 (s0
    # ends: 3 + 3 <= 9) with computed 0 and ends at 6. used: s0 3 on [0, 2], 4 on [2, 3]; s1 2 on [0, 0.5],
    # 3 on [0.5, 3.5]; s2 3 on [1, 2] and [3, 6]: 10 + 10 + 12 = 32 over 10. cached: s1's 2 are consumed
    # at the instant they are cached; at 3.5 its hold, which advanced nothing, caches its allocation, 3,
    # on [3.5, 10]: 19.5 over 10.
    ("position", [(1, 0.5, 0.0), (2, 1.0, 0.0), (2, 3.0, 0.0)], [(1, 0.5, 2.0)],
     {0: 3.0, 1: 3.5, 2: 6.0}, {"used": 3.2, "cached": 1.95, "preemptions": 1}),
    # -position: s1's 2 is the greatest: it goes, caching its position, 2 (not its allocation), waits
    # (4 + 3 + 3 > 9) until s0 ends at 3 and consumes them (cached 2, computed 2: where it was); it ends
    # at 6 and caches 3. s2 ends at 4. used: s0 10; s1 1 + 3 on [0.5, 2] and [3, 6]: 14.5; s2 3 on [1, 4]:
    # 9: 33.5 over 10. cached: 2 on [2, 3], 3 on [6, 10]: 14 over 10.
    ("-position", [(1, 0.5, 0.0), (2, 1.0, 0.0), (1, 3.0, 2.0)], [(1, 0.5, 2.0), (1, 3.0, 2.0)],
     {0: 3.0, 2: 4.0, 1: 6.0}, {"used": 3.35, "cached": 1.4, "preemptions": 1}),
])
def test_a_position_starts_at_the_prefix_consumed(monkeypatch, key, k, c, done, kv):
    r, o = run(CONSUMED.replace("KEY", key), monkeypatch)
    assert o["k"] == k
    assert o["c"] == c
    assert {s: t for s, t, _v in o["done"]} == done
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# kv is E's memory, cap 6 (budget 8, chunk 2, cost 1). s0 prefills 8 (2 an iteration: [0, 4]), s1 decodes
# 6, s2 decodes 3 growing kv; each holds 2. At the planning at 2 s2's third token needs a third unit
# (6 + 1 > 6). decoding is 0 for s0 (prefilling), 1 for s1 and s2. The victim caches nothing (no cache
# clause) and, its pool admitted at the settle, is admitted again at the iteration's end, 3, once there
# is room; its run starts again.
DECODING = """
pool kv { cap 6; PREEMPT; }
stage E : step { budget 8; chunk 2; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { observe a = now; run E prefill (8); } }
  branch (serial == 1) { hold kv (2) { observe a = now; run E decode (6); } }
  branch (serial == 2) { hold kv (2) { observe a = now; run E decode (3) growing kv; } }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("preempt, again, done", [
    # the prefill, s0: s2 grows to 3 and ends at 3; s0 (2 + 3 + 2 > 6 until then) prefills again over
    # [3, 7]; s1 ends at 6. used s0 2 on [0, 2], [3, 7]; s1 12; s2 2 on [0, 2], 3 on [2, 3]: 31 over 20.
    ("preempt by (decoding)", 0, {2: 3.0, 1: 6.0, 0: 7.0}),
    # the decoders tie: the last admitted, s2, its own victim; it decodes again over [3, 6], growing to 3
    # at 5. used s0 8; s1 12; s2 2 on [0, 2], [3, 5], 3 on [5, 6]: 31.
    ("preempt by (-decoding)", 2, {0: 4.0, 1: 6.0, 2: 6.0}),
    # the tie broken by admission: s1, which decodes its 6 again over [3, 9]. used s0 8; s1 2 on [0, 2],
    # [3, 9]: 16; s2 7: 31.
    ("preempt by (-decoding, admission)", 1, {2: 3.0, 0: 4.0, 1: 9.0}),
])
def test_a_key_reads_whether_the_candidate_decodes(monkeypatch, preempt, again, done):
    r, o = run(DECODING.replace("PREEMPT", preempt), monkeypatch)
    assert _at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 0.0), (again, 3.0)]
    assert {s: t for s, t, _v in o["done"]} == done
    kv = {"used": 1.55, "queue": 0.05, "wait": 0.25, "admissions": 4, "preemptions": 1}
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# cap 6: s0 holds 1 over [0, 2]; s1 holds 1 and grows by 2 at 1; s2 holds 3, s3 1 (the last admitted),
# each for 10. One growth takes two victims: s3 (5 + 2 > 6 still), then s2 (2 + 2 <= 6): s1 holds 3 over
# [1, 5], and 2 units are free at 1, 3 at 2 (s0 ends), 6 at 5.
TWO_VICTIMS = """
pool kv { cap 6; PREEMPT; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (1) { run d (2); } }
  branch (serial == 1) { hold kv (1) { run d (1); grow kv (2); run d (4); } }
  branch (serial == 2) { hold kv (3) { observe a = now; run d (10); } }
  branch (serial == 3) { hold kv (1) { observe a = now; run d (10); } }
  observe done = now;
}
run { horizon 30; }
"""


@pytest.mark.parametrize("preempt, again, done, wait", [
    # head: each victim is placed first, so the later one, s2, is ahead of s3: s2 (3 > 2) blocks s3 (1,
    # which would fit) until s0 ends at 2; s3 (3 + 3 + 1 > 6) waits until s1 ends at 5. Waits 1 and 4:
    # 5 over 6 admissions; queue 5 over 30.
    ("preempt lifo", [(2, 2.0), (3, 5.0)], {0: 2.0, 1: 5.0, 2: 12.0, 3: 15.0}, 5 / 6),
    # tail: newcomers in the order they were preempted: s3 fits at once (3 + 1 + 1); s2 waits until 5.
    # Waits 0 and 4: 4 over 6; queue 4 over 30.
    ("preempt by (-admission) requeue tail", [(3, 1.0), (2, 5.0)], {0: 2.0, 1: 5.0, 3: 11.0, 2: 15.0}, 4 / 6),
])
def test_two_victims_of_one_growth(monkeypatch, preempt, again, done, wait):
    """used (both rows): s0 2; s1 1 + 3 * 4 = 13; s2 3 + 30 = 33; s3 1 + 10 = 11: 59 over 30."""
    r, o = run(TWO_VICTIMS.replace("PREEMPT", preempt), monkeypatch)
    assert _at(o["a"]) == [(2, 0.0), (3, 0.0)] + again
    assert {s: t for s, t, _v in o["done"]} == done
    kv = {"used": 59 / 30, "queue": wait * 6 / 30, "wait": wait, "admissions": 6, "preemptions": 2}
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# cap 4, lifo: s1 holds 2 over [0, 2.5]; s0 holds 2 from 0.1, loads a token while it has consumed fewer
# than 2 cached, and grows by 2 a second later: 2 + 2 + 2 > 4, and s0 is the last admitted, its own victim,
# admitted again at once (2 + 2 <= 4). It is preempted at 1.1 and 2.1, and grows at 3.1 (s1 has ended).
# language.txt §3's stuck: "sessions preempted a second time without having advanced past the position
# of their previous preemption".
STUCK = """
pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (0.1); hold kv (2) { observe k = computed; observe c = cached; load kv (cached < 2 ? 1 : 0); run d (1); grow kv (2); observe g = now; run d (1); } CACHE; }
  else { hold kv (2) { run d (2.5); } }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("cache, k, c, stuck, cached", [
    # with cache (2) the victim caches its position and consumes it when admitted again: position 1 at the
    # first preemption, 1 + 1 = 2 at the second, past it: not stuck. The hold ends at 4.1 at position 2
    # (its load of 0 makes the position what it computed) and caches 2 over [4.1, 10]: 1.18.
    ("cache (2)", [0.0, 1.0, 2.0], [0.0, 1.0, 2.0], 0, 1.18),
    # cache (0) keeps nothing: each execution starts at 0 and loads 1, position 1 twice: stuck.
    ("cache (0)", [0.0, 1.0, 1.0], [0.0, 0.0, 0.0], 1, 0.0),
])
def test_stuck_counts_a_victim_that_did_not_advance(monkeypatch, cache, k, c, stuck, cached):
    """used: s1 2 on [0, 2.5]; s0 2 on [0.1, 3.1], 4 on [3.1, 4.1]: 15 over 10; holders 2.5 + 4: 0.65."""
    r, o = run(STUCK.replace("CACHE", cache), monkeypatch)
    assert [v for _s, _t, v in o["k"]] == k
    assert [t for _s, t, _v in o["k"]] == [0.1, 1.1, 2.1]
    assert [v for _s, _t, v in o["c"]] == c
    assert o["g"] == [(0, 3.1, 3.1)]
    kv = {"used": 1.5, "cached": cached, "holders": 0.65, "admissions": 4, "preemptions": 2, "stuck": stuck}
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)


# kv (cap 4) is admitted by E, its memory (budget 8, cost 1): s0 (2, decoding 3 growing kv) and s1 (2,
# decoding 5) at the iteration at 0; s2 (3) joins at 0.5 and waits. At the planning at 2 s0's third token
# needs a third unit: by (-admission) s1 goes. No admission in an iteration that preempted; s0 ends at 3.
# queue by (-waited): at 3 s2 has waited 2.5.
STAGE_REQUEUE = """
pool kv { cap 4; admit via E; preempt by (-admission) REQUEUE; queue by (-waited); }
stage E : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { observe a = now; run E decode (3) growing kv; } }
  branch (serial == 1) { hold kv (2) { observe a = now; run E decode (5); } }
  branch (serial == 2) { run d (0.5); hold kv (3) { observe a = now; run E decode (1); } }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("requeue, again, done, waits", [
    # tail: s1 has waited 1 (from 2), s2 2.5: s2 is admitted at 3 and decodes over [3, 4]; s1 (3 + 2 > 4)
    # at 4, decoding 5 again over [4, 9]. Waits 0, 0, 2.5, 2.
    ("requeue tail", [(2, 3.0), (1, 4.0)], {0: 3.0, 2: 4.0, 1: 9.0}, 4.5),
    # head: s1 at 3 ([3, 8]), and s2 (2 + 3 > 4) at 8. Waits 0, 0, 1, 7.5.
    ("requeue head", [(1, 3.0), (2, 8.0)], {0: 3.0, 1: 8.0, 2: 9.0}, 8.5),
])
def test_a_stage_admitted_pools_victim_requeued(monkeypatch, requeue, again, done, waits):
    """used: s0 2 on [0, 2], 3 on [2, 3]; s1 2 on [0, 2] and for its 5 again; s2 3 for 1: 24 over 20."""
    r, o = run(STAGE_REQUEUE.replace("REQUEUE", requeue), monkeypatch)
    assert _at(o["a"]) == [(0, 0.0), (1, 0.0)] + again
    assert {s: t for s, t, _v in o["done"]} == done
    kv = {"used": 1.2, "wait": waits / 4, "queue": waits / 20, "admissions": 4, "preemptions": 1}
    assert _fields(r, "kv", kv) == pytest.approx(kv, rel=1e-12)
