"""Conformance of language.txt §2, §3 and pool-reference.txt, program-reference.txt by hand, round 39: every
sentence of the pool reference once more (the `evict` orders and their ties, an ended session's keys, the
Evict moment's `waiting`, `spill`'s predicate, `reuse` and `cache (0)`, `preempt by` on a pool no stage
counts, `queue by` with `waited`, `reserve held` with blocks and growth, rejection after block rounding and
the state-dependent hold that waits), `let` and `def` with `--set` and `--def`, the run block against the
command line, and the workload's arrival processes, turns and `init`.

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
from conform import check_by_hand, report_json, run, run_error
from tiers import same_json

inf = math.inf
nan = math.nan

# ---------------------------------------------------------------------------------------------------------
# Eviction: the orders, their ties, the keys of a live and of an ended session, `waiting`, spills
# ---------------------------------------------------------------------------------------------------------

EVICT_SIZES = """
pool kv { cap 10; evict by (KEY); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    hold kv (serial == 2 ? 2 : 3) { run d (serial + 1); } cache (4);
    run d (5 - serial);
    observe c = cachedin(kv);
  } else {
    run d (4);
    hold kv (6) { observe a = now; }
  }
}
run { horizon 10; }
"""

# s0, s1 and s2 cache 3, 3 and 2 at 1, 2 and 3 (cache (4) keeps min(4, 3) of a hold of 3). At 4 s3's 6
# beside the 8 cached is 14 > 10: entries go (whole: no block) until 6 + cached <= 10.
EVICT = [
    # by (size): s2's 2 first (8 → 6, still 12 > 10), then s0 and s1 tie at 3 and the release order takes
    # s0 (→ 3): s1 keeps 3. evicted 5 units, 2 entries; cached 3·1 + 6·1 + 8·1 + 3·6 = 35 / 10.
    ("evict_by_size_ties_in_release_order", EVICT_SIZES.replace("KEY", "size"),
     {"c": [(0, 6.0, 0.0), (1, 6.0, 3.0), (2, 6.0, 0.0)], "a": [(3, 4.0, 4.0)]},
     {("kv", None): {"evicted_entries": 2, "evicted_units": 5.0, "cached": 3.5, "used": 1.5}}),
    # by (-size): s0 and s1 tie at -3, s0 released first goes (→ 5, 11 > 10), then s1 (-3) before s2
    # (-2): s2 keeps 2. evicted 6; cached 3 + 6 + 8 + 2·6 = 29 / 10.
    ("evict_by_minus_size_ties_in_release_order", EVICT_SIZES.replace("KEY", "-size"),
     {"c": [(0, 6.0, 0.0), (1, 6.0, 0.0), (2, 6.0, 2.0)], "a": [(3, 4.0, 4.0)]},
     {("kv", None): {"evicted_entries": 2, "evicted_units": 6.0, "cached": 2.9}}),
    # by (serial): the entry of the least serial first whatever its release time: s1 caches 3 at 1, s0 3 at
    # 2 (lru would take s1's). At 3 s2's 4 beside 6 cached is 10 > 8: s0's (serial 0) goes, 4 + 3 <= 8, and
    # s1's stays, where lru would have kept s0's. Both read at 5.
    ("evict_by_an_attribute_not_the_release_time", """
pool kv { cap 8; evict by (serial); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (3) { run d (2 - serial); } cache (3);
    run d (3 + serial);
    observe c = cachedin(kv);
  } else {
    run d (3);
    hold kv (4) { run d (1); }
  }
}
run { horizon 10; }
""", {"c": [(0, 5.0, 0.0), (1, 5.0, 3.0)]}, {("kv", None): {"evicted_entries": 1, "evicted_units": 3.0}}),
    # by (age) with block 2: the youngest first (a most-recently-used order), a block at a time from the
    # tail. s0 caches 4 at 1, s1 4 at 2; at 3 s2's 2 beside 8 is 10 > 8: one block of s1's (age 1 < 2)
    # goes, s1 keeps 2. No entry evicted whole; 2 units. cached 4·1 + 8·1 + 6·7 = 54 / 10.
    ("evict_by_age_a_block_from_the_youngest", """
pool kv { cap 8; block 2; evict by (age); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (4) { run d (serial + 1); } cache (4);
    run d (3 - serial);
    observe c = cachedin(kv);
  } else {
    run d (3);
    hold kv (2) { observe a = now; run d (1); }
  }
}
run { horizon 10; }
""", {"c": [(0, 4.0, 4.0), (1, 4.0, 2.0)], "a": [(2, 3.0, 3.0)]},
     {("kv", None): {"evicted_entries": 0, "evicted_units": 2.0, "cached": 5.4, "used": 1.4}}),
]

# pool-reference.txt, evict: keys read "the entry's session's attributes: current while the session lives,
# as they were at its last release after it has ended". s0 caches 4 with k = 1 at 1 and then sets k = 9;
# s1 caches 3 with k = 5 at 1.5 and ends. At 3 s2's 4 beside 7 cached is 11 > 8: one entry goes.
EVICT_KEYS = """
pool kv { cap 8; evict by (k); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    set k = 1;
    hold kv (4) { run d (1); } cache (4);
    set k = 9;
    branch (LIVE) { run d (5); observe c = cachedin(kv); }
  } else { branch (serial == 1) {
    set k = 5;
    hold kv (3) { run d (1.5); } cache (3);
  } else {
    run d (3);
    hold kv (4) { observe a = now; }
  } }
}
run { horizon 10; }
"""

EVICT += [
    # s0 alive: its key is its current k, 9 > 5: s1's 3 go. cached 4·0.5 + 7·1.5 + 4·7 = 40.5 / 10.
    ("evict_key_of_a_live_session_is_its_current_attribute", EVICT_KEYS.replace("LIVE", "1"),
     {"c": [(0, 6.0, 4.0)], "a": [(2, 3.0, 3.0)]},
     {("kv", None): {"evicted_units": 3.0, "cached": 4.05}}),
    # s0 ended at 1: its key is k at its last release, 1 < 5: s0's 4 go. cached 2 + 10.5 + 3·7 = 33.5 / 10.
    ("evict_key_of_an_ended_session_is_its_attribute_at_release", EVICT_KEYS.replace("LIVE", "0"),
     {"a": [(2, 3.0, 3.0)]},
     {("kv", None): {"evicted_units": 4.0, "cached": 3.35}}),
    # docs/language.md, `waiting`: 1 while the entry's session waits in a pool's queue. s0 caches 2 at 1 and
    # waits for g (held by s2 over [0,5]); s1 caches 2 at 2 and ends. At 3 s3's 4 beside 4 cached is 8 > 6:
    # by (waiting) takes s1's (0) before s0's (1), the older: s0 finds its 2 when g admits it at 5. g's
    # waits 4 and 0; kv cached 2 + 4 + 2·7 = 20 / 10.
    ("evict_by_waiting_keeps_a_waiting_sessions_prefix", """
pool kv { cap 6; evict by (waiting); }
pool g { cap 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) {
    hold kv (2) { run d (1); } cache (2);
    hold g (1) { observe c = cachedin(kv); }
  } else { branch (serial == 1) {
    hold kv (2) { run d (2); } cache (2);
  } else { branch (serial == 2) {
    hold g (1) { run d (5); }
  } else {
    run d (3);
    hold kv (4) { observe a = now; }
  } } }
}
run { horizon 10; }
""", {"c": [(0, 5.0, 2.0)], "a": [(3, 3.0, 3.0)]},
     {("kv", None): {"evicted_units": 2.0, "cached": 2.0, "used": 0.6},
      ("g", None): {"wait": 2.0, "queue": 0.4}}),
    # spill's `when (size >= 3)`: s0's 2 (cached at 1) and s1's 4 (at 2) are both evicted at 3 for s2's 6
    # (lru: s0's first); only s1's is written, over pcie at [3,7], and lands in cpu at 7. At 8 s0 reads 0
    # and 0, s1 4 in cpu and 0 in kv. cpu's cached: the 4 take their room from 3: 4·7 / 10.
    ("spill_predicate_reads_the_entrys_size", """
pool kv { cap 6; spill cpu via pcie (size) when (size >= 3); }
pool cpu { cap 100; }
stage pcie : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (2 + 2 * serial) { run d (serial + 1); } cache (6);
    run d (7 - serial);
    observe c = cachedin(cpu) * 10 + cachedin(kv);
  } else {
    run d (3);
    hold kv (6) { run d (1); }
  }
}
run { horizon 10; }
""", {"c": [(0, 8.0, 0.0), (1, 8.0, 40.0)]},
     {("kv", None): {"spills": 1, "evicted_entries": 2, "evicted_units": 6.0},
      ("cpu", None): {"cached": 2.8}, ("pcie", None): {"completions": 1, "service": 4.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in EVICT], ids=[c[0] for c in EVICT])
def test_eviction_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# `cache` and `reuse`: the dead remainder, `cache (0)`, a hold without `cache`; blocks in every allocation
# ---------------------------------------------------------------------------------------------------------

CACHE = [
    # §3: "consumes at most ρ units of its own cached prefix (cached := what it consumed); the rest of that
    # entry stays in the cache as a dead entry … unusable, until evicted". 6 cached at 1; `reuse (4)`
    # consumes 4 (c 4), 2 stay dead: cachedin 0 in the body, and 8 + 2 fit 10. At 2 the hold caches 8 (j);
    # the hold of 9 consumes the 8 (k) and 9 + 2 > 10 evicts the dead 2. At 3 it caches 9. cached: 2 over
    # [1,2] (the 6 consumed at 1), 0 over [2,3], 9 over [3,10]: 65 / 10; used 6 + 8 + 9 = 23 / 10.
    ("reuse_leaves_a_dead_remainder_evicted_later", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (6) { run d (1); } cache (6);
  hold kv (8) reuse (4) { observe c = cached; observe i = cachedin(kv); run d (1); } cache (8);
  observe j = cachedin(kv);
  hold kv (9) { observe k = cached; run d (1); } cache (9);
  observe l = cachedin(kv);
}
run { horizon 10; }
""", {"c": [(0, 1.0, 4.0)], "i": [(0, 1.0, 0.0)], "j": [(0, 2.0, 8.0)], "k": [(0, 2.0, 8.0)],
      "l": [(0, 3.0, 9.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 2.0, "cached": 6.5, "used": 2.3}}),
    # a hold without `cache` leaves the session's prefix where it is (5 read inside and after it); `cache
    # (0)` consumes (within its allocation: 2 of the 5, c 2; 3 stay dead) and keeps nothing: 0 after it.
    # cached 5 over [1,2], the dead 3 over [2,10]: 29 / 10; used 5 + 3 + 2 = 10 / 10.
    ("a_hold_without_cache_and_cache_zero", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (5) { run d (1); } cache (5);
  hold kv (3) { observe i = cachedin(kv); run d (1); }
  observe j = cachedin(kv);
  hold kv (2) { observe c = cached; run d (1); } cache (0);
  observe k = cachedin(kv);
}
run { horizon 10; }
""", {"i": [(0, 1.0, 5.0)], "j": [(0, 2.0, 5.0)], "c": [(0, 2.0, 2.0)], "k": [(0, 3.0, 0.0)]},
     {("kv", None): {"cached": 2.9, "used": 1.0, "evicted_units": 0.0}}),
    # pool-reference.txt, block: "Allocations round up, and cache entries are kept … in blocks". A hold of
    # 5 on blocks of 4 takes 8; its `cache (7)` keeps min(7, 8) = 7 rounded down to blocks: 4. A grow of 3
    # adds a whole block to a hold of 1 (4): 8 (docs/language.md, "A grow adds whole blocks").
    ("blocks_round_holds_up_and_caches_down", """
pool kv { cap 16; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (5) { observe u = used(kv); run d (1); } cache (7);
  observe c = cachedin(kv);
  hold kv (1) { grow kv (3); observe g = used(kv); run d (1); }
}
run { horizon 10; }
""", {"u": [(0, 0.0, 8.0)], "c": [(0, 1.0, 4.0)], "g": [(0, 1.0, 8.0)]},
     {("kv", None): {"used": 1.6, "cached": 3.6}}),
    # pool-reference.txt: a hold whose units, independent of the deployment's state, exceed the capacity
    # after block rounding is rejected and its session ends. cap 10, block 4: 10 rounds to 12 > 10, so s0
    # is rejected (no `f`), though 10 <= 10; s1's 8 fits.
    ("a_hold_rejected_after_block_rounding", """
pool kv { cap 10; block 4; }
stage d : delay;
workload { arrive batch(2); }
session { hold kv (serial == 0 ? 10 : 8) { observe a = now; run d (1); } observe f = now; }
run { horizon 10; }
""", {"a": [(1, 0.0, 0.0)], "f": [(1, 1.0, 1.0)]},
     {("kv", None): {"rejections": 1, "admissions": 1, "over_cap": 0}}),
    # the same for a reserve: 1 reserving 9 rounds to 12 > 10 (rejected); 1 reserving 7 to 8 (fits).
    ("a_reserve_rejected_after_block_rounding", """
pool kv { cap 10; block 4; }
stage d : delay;
workload { arrive batch(2); }
session { hold kv (1) reserve (serial == 0 ? 9 : 7) { observe a = now; run d (1); } observe f = now; }
run { horizon 10; }
""", {"a": [(1, 0.0, 0.0)], "f": [(1, 1.0, 1.0)]},
     {("kv", None): {"rejections": 1, "admissions": 1, "used": 0.4}}),
    # pool-reference.txt: "State-dependent demand waits for admission and is reported as over_cap if it
    # still exceeds capacity at the end of the run": units of used(kv) + 11 wait (never admitted), and the
    # report counts the hold over_cap, no rejection; its session is live to the end (queue 1 throughout).
    ("a_state_dependent_hold_above_the_cap_waits", """
pool kv { cap 10; }
workload { arrive batch(1); }
session { hold kv (used(kv) + 11) { observe a = now; } }
run { horizon 5; }
""", {"a": []}, {("kv", None): {"rejections": 0, "admissions": 0, "over_cap": 1, "queue": 1.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CACHE], ids=[c[0] for c in CACHE])
def test_cache_reuse_and_blocks_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# `preempt by` on a pool no stage counts, `queue by` with `waited`, `reserve held`
# ---------------------------------------------------------------------------------------------------------

PREEMPT_BY = """
pool kv { cap 6; preempt by (prio); }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = PRIO;
  branch (serial < 2) {
    hold kv (2) { observe a = now; run d (2 + serial); }
  } else {
    hold kv (2) { observe a = now; run d (1); grow kv (1); observe g = now; run d (1); }
  }
  observe f = now;
}
run { horizon 10; }
"""

POOLS = [
    # pool-reference.txt, preempt: "Candidates are holders resident in the stage whose memory is this pool.
    # If no stage names it as memory, candidates are holders with an active hold scope"; the least key
    # goes. prio 3, 1, 2: s2's grow at 1 (6 + 1 > 6) preempts s1 (prio 1): its run is cut, its 2 given
    # back, and it re-enters the queue's head; s2 grows (5). s1's 2 fit when s0 ends at 2: d over [2,5].
    # waits 0, 0, 0, 1 over 4 admissions; used 2·2 + 2·1 + 2·3 + 2·1 + 3·1 = 17 / 10.
    ("preempt_by_least_key_on_a_pool_no_stage_counts",
     PREEMPT_BY.replace("PRIO", "serial == 0 ? 3 : serial == 1 ? 1 : 2"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (1, 2.0, 2.0)], "g": [(2, 1.0, 1.0)],
      "f": [(0, 2.0, 2.0), (2, 2.0, 2.0), (1, 5.0, 5.0)]},
     {("kv", None): {"preemptions": 1, "admissions": 4, "wait": 0.25, "used": 1.7}}),
    # "ties go to the last admitted": prio 1, 1, 2: s0 and s1 tie and s1, admitted after s0, goes; the
    # same timeline as above (s0 the victim would have been re-admitted at 2 and ended at 4).
    ("preempt_by_ties_go_to_the_last_admitted", PREEMPT_BY.replace("PRIO", "serial < 2 ? 1 : 2"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (1, 2.0, 2.0)],
      "f": [(0, 2.0, 2.0), (2, 2.0, 2.0), (1, 5.0, 5.0)]},
     {("kv", None): {"preemptions": 1, "admissions": 4}}),
    # "the grower can be its own victim": prio 5, 5, 0. s2 preempts itself at 1, re-enters the head and its
    # 2 fit at once (4 + 2 <= 6): admitted again at 1, it runs d (1) and grows at 2, after s0's end at 2
    # (scheduled first) left room: 2 + 2 + 1 <= 6. g 2, f 3.
    ("preempt_by_the_grower_its_own_victim", PREEMPT_BY.replace("PRIO", "serial == 2 ? 0 : 5"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (2, 1.0, 1.0)], "g": [(2, 2.0, 2.0)],
      "f": [(0, 2.0, 2.0), (1, 3.0, 3.0), (2, 3.0, 3.0)]},
     {("kv", None): {"preemptions": 1, "admissions": 4, "wait": 0.0, "stuck": 0}}),
]

AGING = """
pool kv { cap 1; queue by (prio - waited); }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 1 ? P1 : 4;
  run d (serial == 0 ? 0 : serial == 1 ? 0.1 : 1.5);
  hold kv (1) { observe a = now; run d (2); }
}
run { horizon 10; }
"""

POOLS += [
    # pool-reference.txt, queue: "waited supplies seconds since the current hold entered the queue", the keys
    # read again before each admission attempt. s0 holds [0,2]; s1 (prio 5) queues at 0.1, s2 (prio 4) at
    # 1.5. At 2: s1 5 - 1.9 = 3.1 < s2 4 - 0.5 = 3.5: s1 at 2, s2 at 4. waits 0, 1.9, 2.5.
    ("queue_by_prio_minus_waited_the_aged_first", AGING.replace("P1", "5"),
     {"a": [(0, 0.0, 0.0), (1, 2.0, 2.0), (2, 4.0, 4.0)]},
     {("kv", None): {"wait": 4.4 / 3, "queue": 0.44}}),
    # s1's prio 5.5: 5.5 - 1.9 = 3.6 > 3.5: s2 at 2, s1 at 4. waits 0, 3.9, 0.5.
    ("queue_by_prio_minus_waited_the_urgent_first", AGING.replace("P1", "5.5"),
     {"a": [(0, 0.0, 0.0), (2, 2.0, 2.0), (1, 4.0, 4.0)]},
     {("kv", None): {"wait": 4.4 / 3, "queue": 0.44}}),
    # pool-reference.txt, reserve held: u = max(0, r - a); a new reservation needs used + Σu + r <= cap,
    # growth by d used + Σ_{others} u + d <= cap. s0 holds 2 reserving 8 (u 6). At 0.5 s1 reads free(kv)
    # = 10 - 2 - 6 = 2, and its 3 wait (2 + 6 + 3 > 10). At 1 s0 grows 4 into its own reservation (2 + 4
    # <= 10; u 2): s1 still waits (6 + 2 + 3 > 10) until s0's end at 2. waits 0, 1.5; used 2 + 6 + 3 = 11
    # / 10.
    ("reserve_held_counts_against_admission_not_the_own_growth", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) reserve (8) { run d (1); grow kv (4); observe g = now; run d (1); }
  } else {
    run d (0.5);
    observe fr = free(kv);
    hold kv (3) { observe a = now; run d (1); }
  }
}
run { horizon 10; }
""", {"g": [(0, 1.0, 1.0)], "fr": [(1, 0.5, 2.0)], "a": [(1, 2.0, 2.0)]},
     {("kv", None): {"wait": 0.75, "used": 1.1, "admissions": 2}}),
    # "r_i is the larger of units and reserve, evaluated at admission and rounded up to blocks": cap 13,
    # block 4. s0 holds 4 reserving 5 → 8: u 4. s1's 4 at 0.1: 4 + 4 + 4 = 12 <= 13. s2's 1 (→ 4) at 0.2:
    # 8 + 4 + 4 = 16 > 13 (with r unrounded, 8 + 1 + 4 = 13 would fit) waits for s1's end at 1.1: 8 + 4 + 4
    # - 4 = 12.
    ("reserve_held_rounds_the_reservation_to_blocks", """
pool kv { cap 13; block 4; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (0.1 * serial);
  branch (serial == 0) { hold kv (4) reserve (5) { run d (2); } }
  else { hold kv (serial == 1 ? 4 : 1) { observe a = now; run d (1); } }
}
run { horizon 10; }
""", {"a": [(1, 0.1, 0.1), (2, 1.1, 1.1)]}, {("kv", None): {"admissions": 3}}),
    # "Growth by d requires used + Σ_{i≠grower} u_i + d <= cap": s0 holds 2 reserving 6 (u 4). s1's 2 fit
    # (2 + 4 + 2 <= 10); at 1 its grow of 3 (4 + 4 + 3 > 10) waits (preempt none) until s0's end at 3.
    ("reserve_held_counts_against_another_holds_growth", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (6) { run d (3); } }
  else { hold kv (2) { run d (1); grow kv (3); observe g = now; run d (1); } observe f = now; }
}
run { horizon 10; }
""", {"g": [(1, 3.0, 3.0)], "f": [(1, 4.0, 4.0)]}, {("kv", None): {"preemptions": 0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in POOLS], ids=[c[0] for c in POOLS])
def test_preemption_queue_order_and_reservations_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# `preempt by` keys at the Victim moment on a step stage's memory; `requeue tail` resets `waited`
# ---------------------------------------------------------------------------------------------------------

VICTIMS = [
    # pool-reference.txt, preempt: keys may read `position` ("the position its hold has computed on the
    # pool"), and the candidates are the residents of the stage whose memory the pool is: s2 holds 1 at a
    # delay stage (position 0, the least) and is no candidate. cap 6, block 1. s0 (1 unit) decodes 5 from
    # 0, s1 (2 units) from 1: positions after [2,3] are s0 3 (grown to 3), s1 2. At 3 s0's growth to 4 (6 +
    # 1 > 6... 1 + 3 + 2 = 6, +1 > 6) preempts s1 (position 2 < 3); s1's 2 come back at 5, when s0 is done
    # (4 + 1 + 2 > 6 until then), and it decodes its 5 again over [5,10]. tokens 1 + 2 + 2 + 1 + 1 + 5 over
    # 10 iterations; used s2 10, s0 1 + 2 + 3 + 4 + 5, s1 2·2 + 2 + 2 + 3 + 4 + 5: 45 / 20.
    ("preempt_by_position_among_the_engines_residents", """
pool kv { cap 6; block 1; preempt by (position); }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { hold kv (1) { run d (10); } }
  else {
    run d (serial);
    hold kv (serial + 1) { observe a = now; run e decode (5) growing kv; }
    observe f = now;
  }
}
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0), (1, 1.0, 1.0), (1, 5.0, 5.0)], "f": [(0, 5.0, 5.0), (1, 10.0, 10.0)]},
     {("e", None): {"iterations": 10, "tokens": 1.2},
      ("kv", None): {"preemptions": 1, "admissions": 4, "used": 2.25, "wait": 0.5}}),
    # pool-reference.txt: "requeue tail treats it as a newcomer: … queue by places it by its keys, with
    # waited reset to 0". queue by (-waited): the longest wait first. s2 holds 2 over [0,0.5], s0 2 over
    # [0,3]; s1 waits from 0.1 and is admitted at 0.5 (its wait 0.4); s3 queues at 0.8. At 1.5 s1's grow
    # (4 + 1 > 4) preempts s1 itself (the last admitted): back in the queue its waited is 0 against s3's
    # 0.7, so s3 goes first (2 + 2 <= 4; counted from s1's first entry at 0.1, 1.4 would have put s1
    # first). s3 ends at 2.5 and s1 is admitted; its grow at 3.5 fits (s0 ended at 3). Waits 0, 0, 0.4,
    # 0.7, 1: 2.1 / 5; queue 2.1 / 10.
    ("requeue_tail_resets_waited_for_queue_by", """
pool kv { cap 4; preempt by (-admission) requeue tail; queue by (-waited); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (2) { run d (3); } }
  else { branch (serial == 1) {
    run d (0.1);
    hold kv (2) { observe a = now; run d (1); grow kv (1); observe g = now; run d (1); }
  } else { branch (serial == 2) {
    hold kv (2) { run d (0.5); }
  } else {
    run d (0.8);
    hold kv (2) { observe a = now; run d (1); }
  } } }
}
run { horizon 10; }
""", {"a": [(1, 0.5, 0.5), (3, 1.5, 1.5), (1, 2.5, 2.5)], "g": [(1, 3.5, 3.5)]},
     {("kv", None): {"preemptions": 1, "admissions": 5, "wait": 0.42, "queue": 0.21, "stuck": 0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in VICTIMS], ids=[c[0] for c in VICTIMS])
def test_victims_and_requeues_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Workloads: turns and `init`, the run block's `arrivals` with a warm-up
# ---------------------------------------------------------------------------------------------------------

WORKLOADS = [
    # §3, Workload: "init runs at arrival, turn at every turn statement"; docs/language.md: a `turn;`
    # counts the turn, then runs the `turn` block. s0: K 10 at arrival; turn 1 K 11 (sample at 1, before
    # the warm-up 2: dropped), turn 2 at 1.5 K 13, sampled at 2.5, then 2 < 2 fails: end. s1: K 20, 21,
    # 23 (at 2.5), and turn 3 at 3 K 26 (at 4). `turns` after the warm-up: s1's third only. d over [2,10]:
    # 0.5 + 0.5 + 0.5 + 1 present, completions at 2.5, 2.5, 3, 4 of 1, 1, 0.5, 1.
    ("turns_init_and_the_turn_block_under_a_warmup", """
stage d : delay;
workload { arrive batch(2); init { set K = 10 * (serial + 1); } turn { set K = K + turn_no; } }
session {
  loop {
    turn;
    run d (1);
    observe k = K * 100 + turn_no;
    branch (turn_no < 2 + serial) { run d (0.5); } else { end; }
  }
}
run { horizon 10; warmup 2; }
""", {"k": [(0, 2.5, 1302.0), (1, 2.5, 2302.0), (1, 4.0, 2603.0)]},
     {"turns": 1, "ended": 2, "arrivals": 2, ("d", None): {"present": 0.3125, "completions": 4,
                                                        "service": 0.875}}),
    # program-reference.txt, run: "the run ends when the N-th session has arrived and every session has
    # ended … its rates and time averages are over end − warmup". renewal(1): arrivals at 1, 2, 3 (the
    # first after one gap) into fifo of 1.5: [1,2.5], [2.5,4], [4,5.5]: end 5.5, horizon kept at 100.
    # Over [1,5.5]: throughput 3 / 4.5, present (1 + 1 + 0.5 + 2 + 1.5) / 4.5, waits 0, 0.5, 1.
    ("arrivals_end_the_run_when_it_drains", """
stage d : fifo;
workload { arrive renewal(1); }
session { run d (1.5); observe f = now; }
run { horizon 100; arrivals 3; warmup 1; }
""", {"f": [(0, 2.5, 2.5), (1, 4.0, 4.0), (2, 5.5, 5.5)]},
     {"end": 5.5, "horizon": 100.0, "warmup": 1.0, "arrivals": 3,
      ("d", None): {"throughput": 3 / 4.5, "present": 6 / 4.5, "wait": 0.5, "utilisation": 1.0}}),
    # §2: "poisson(rate) starts with an arrival at time zero": with `arrivals 1` the one arrival is at 0
    # whatever the draws, and the run ends with its session at 2.
    ("poisson_first_arrival_at_zero", """
stage d : fifo;
workload { arrive poisson(0.001); }
session { run d (2); observe f = now; }
run { horizon 100; arrivals 1; }
""", {"f": [(0, 2.0, 2.0)]}, {"end": 2.0, "arrivals": 1, ("d", None): {"utilisation": 1.0}}),
    # a closed population of 2 replaces each session as it ends: d (1) from 0, 1, 2, 3; at the horizon 3.5
    # 8 have arrived and 6 ended; 2 present throughout.
    ("closed_replaces_each_ended_session", """
stage d : delay;
workload { arrive closed(2); }
session { run d (1); observe f = now; }
run { horizon 3.5; }
""", {"f": [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 2.0, 2.0), (3, 2.0, 2.0), (4, 3.0, 3.0), (5, 3.0, 3.0)]},
     {"arrivals": 8, "ended": 6, ("d", None): {"present": 2.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in WORKLOADS], ids=[c[0] for c in WORKLOADS])
def test_workloads_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# `let` and `def` with `--set` and `--def` (program-reference.txt)
# ---------------------------------------------------------------------------------------------------------

LETS = """
let a = 2;
let b = a * 3 + 1;
def f(x) = x * x + b;
def svc() = 1;
stage d : delay;
workload { arrive batch(1); }
session { observe o1 = b; observe o2 = f(1 + 1); run d (svc()); observe t = now - 0; }
run { horizon 10; }
"""


@pytest.mark.parametrize("sets, defs, want", [
    # b = 2·3 + 1 = 7; f(1 + 1) = (1 + 1)·(1 + 1) + 7 = 11 (the argument put in inside parentheses, not
    # 1 + 1·1 + 1 + 7 = 10); svc() 1.
    ({}, {}, (7.0, 11.0, 1.0)),
    # --set a=5: the program "written with that value": b = 16 (a later let reads the value set), f(2) 20.
    ({"a": 5}, {}, (16.0, 20.0, 1.0)),
    # --set b=0 sets b itself: f(2) = 4.
    ({"b": 0}, {}, (0.0, 4.0, 1.0)),
    # --def svc=3: the body given from outside, the run of d 3.
    ({}, {"svc": "3"}, (7.0, 11.0, 3.0)),
    # --def f='x + b': its parameters stay the written ones: 2 + 7.
    ({}, {"f": "x + b"}, (7.0, 9.0, 1.0)),
])
def test_set_and_def_override_the_program(monkeypatch, sets, defs, want):
    js = same_json(serq_frontend.compile(source=LETS, sets=sets, defs=defs), monkeypatch)
    assert tuple(js["observes"][k]["mean"] for k in ("o1", "o2", "t")) == want


# ---------------------------------------------------------------------------------------------------------
# Reservations ending, leases and victims, spills a block at a time, the warm-up over pools and gauges
# ---------------------------------------------------------------------------------------------------------

MORE = [
    # pool-reference.txt, reserve held: "Reservations end with the hold's scope, release or preemption;
    # leases retain none"; "Each hold counts separately, including nested holds". cap 10. s0 holds 2
    # reserving 8; s1's 2 reserving 8 and s2's outer 1 reserving 4 wait (2 + 6 + 8 > 10). At 0.2 s0's
    # release ends its reservation: free 10; s1 is admitted (8 <= 10), s2 still waits (2 + 6 + 4 > 10), and
    # s3's 3 (queued at 0.1) behind it. At 3.2 s1's scope ends: its lease keeps 2, no reservation; s2's
    # outer hold (2 + 4 <= 10: used 3, u 3) and then s3's 3 (3 + 3 + 3 <= 10), ahead of s2's inner hold,
    # which joined the queue after it; the inner (6 + 3 + 4 > 10) waits for s3's end at 4.2, and there
    # free is 10 - (2 + 1 + 1) - (3 + 3) = 0.
    ("reservations_end_with_release_and_scope_and_nest", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (2) reserve (8) { run d (0.2); release kv; observe r = free(kv); run d (2); } }
  else { branch (serial == 1) { hold kv (2) reserve (8) { run d (3); } lease kv (inf); run d (5); }
  else { branch (serial == 2) {
    hold kv (1) reserve (4) { hold kv (1) reserve (4) { observe n = free(kv); run d (10); } }
  } else {
    run d (0.1); hold kv (3) { observe a = now; run d (1); }
  } } }
}
run { horizon 20; }
""", {"r": [(0, 0.2, 10.0)], "n": [(2, 4.2, 0.0)], "a": [(3, 3.2, 3.2)]},
     {("kv", None): {"admissions": 5, "wait": 1.5}}),
    # pool-reference.txt: "Cached prefixes are evicted when units are allocated, not when reserved". s0's
    # 6 cached at 1; s1's 2 reserving 8 at 1.5 fit (0 + 8 <= 10) and allocate 2 beside the 6 (8 <= 10): no
    # eviction, s0 reads 6 at 2; s1's grow of 4 at 2.5 (6 + 6 > 10) evicts the entry: 0 at 3. cached 6 over
    # [1,2.5]; used 6 + 2 + 6 = 14 / 10.
    ("a_reservation_evicts_nothing_until_allocated", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (1); observe a = cachedin(kv);
    run d (1); observe b = cachedin(kv);
  } else {
    run d (1.5);
    hold kv (2) reserve (8) { run d (1); grow kv (4); run d (1); }
  }
}
run { horizon 10; }
""", {"a": [(0, 2.0, 6.0)], "b": [(0, 3.0, 0.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 6.0, "cached": 0.9, "used": 1.4}}),
    # pool-reference.txt, preempt: the victim "releases its hold and caches its computed prefix. It re-enters
    # the hold's first pool's queue to execute the hold again with computed set to the position reached".
    # s0 holds a (1) and kv (3), loads 2 (position 2). s1's grow at 1 (4 + 2 > 5) preempts s0 (prio 0): kv
    # caches min(3, 2) = 2, and s0 waits in a's queue (queued(a) 1, queued(kv) 0) until s1's end at 2; then
    # it consumes its 2 (cached 2, computed 2: c 22). kv caches 2 over [1,2] and [7,10]; a's wait 1 over 2
    # admissions, kv's 0 (the wait is its first pool's).
    ("a_victim_waits_in_its_holds_first_pool_with_computed", """
pool a { cap 1; }
pool kv { cap 5; preempt by (prio); }
stage d : delay;
workload { arrive batch(2); }
session {
  set prio = serial;
  branch (serial == 0) {
    hold a (1), kv (3) { observe c = cached * 10 + computed; load kv (2 - cached); run d (5); } cache (3);
    observe f = now;
    observe k = cachedin(kv);
  } else {
    run d (0.5);
    hold kv (1) { run d (0.5); grow kv (2); observe g = now; observe q = queued(a) * 10 + queued(kv); run d (1); }
  }
}
run { horizon 10; }
""", {"c": [(0, 0.0, 0.0), (0, 2.0, 22.0)], "f": [(0, 7.0, 7.0)], "k": [(0, 7.0, 2.0)], "g": [(1, 1.0, 1.0)],
      "q": [(1, 1.0, 10.0)]},
     {("a", None): {"wait": 0.5, "queue": 0.1, "admissions": 2},
      ("kv", None): {"wait": 0.0, "admissions": 3, "preemptions": 1, "cached": 0.8, "used": 2.15}}),
    # "Leases are not candidates": s0 leases 2 and holds 1 more; s1's grow at 1 (4 + 2 > 5) preempts s0
    # (prio 0) by its hold alone: the lease keeps its 2 (used 2 + 3 = 5 after the growth), and s0's hold
    # waits for s1's end at 2. At 7 the lease still holds its 2 (inf, until the session ends).
    ("a_preemption_takes_the_hold_not_the_lease", """
pool kv { cap 5; preempt by (prio); }
stage d : delay;
workload { arrive batch(2); }
session {
  set prio = serial;
  branch (serial == 0) {
    hold kv (2) { run d (0.1); } lease kv (inf);
    hold kv (1) { observe a = now; run d (5); }
    observe u = used(kv);
  } else {
    run d (0.5);
    hold kv (1) { run d (0.5); grow kv (2); observe u = used(kv); run d (1); }
  }
}
run { horizon 10; }
""", {"a": [(0, 0.1, 0.1), (0, 2.0, 2.0)], "u": [(1, 1.0, 5.0), (0, 7.0, 2.0)]},
     {("kv", None): {"preemptions": 1, "admissions": 4, "used": 2.34, "wait": 0.25}}),
    # docs/language.md, "each block is a spill of its own": s1's 6 at 2 beside s0's 6 cached (block 2, cap
    # 8) evict two blocks from s0's tail, two writes of 2 on the fifo link: [2,4] and [4,6]. s0 reads cpu and
    # kv as 0 and 2 at 2, 2 and 2 at 4.5, 4 and 2 at 6.5. No entry evicted whole; the second write waited 2.
    ("spill_a_block_at_a_time_over_a_fifo_link", """
pool kv { cap 8; block 2; spill cpu via pcie (size) when (1); }
pool cpu { cap 100; block 2; }
stage pcie : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (1);
    observe a = cachedin(cpu) * 10 + cachedin(kv);
    run d (2.5);
    observe b = cachedin(cpu) * 10 + cachedin(kv);
    run d (2);
    observe c = cachedin(cpu) * 10 + cachedin(kv);
  } else { run d (2); hold kv (6) { run d (1); } }
}
run { horizon 10; }
""", {"a": [(0, 2.0, 2.0)], "b": [(0, 4.5, 22.0)], "c": [(0, 6.5, 42.0)]},
     {("kv", None): {"spills": 2, "evicted_entries": 0, "evicted_units": 4.0, "cached": 2.2},
      ("cpu", None): {"cached": 3.2}, ("pcie", None): {"wait": 1.0, "completions": 2}}),
    # a warm-up of 2 over the pool figures: s0's 3 (cached at 0.5) is evicted at 1 for s1 and spilled
    # ([1,2]), s1's at 2 for s2 ([2,3]), s3's 5 > 4 is rejected at 3. From 2: admissions 1 (s2, at the
    # warm-up instant), evictions 1, spills 1, rejections 1; used 3·0.5 / 8, cached 3·7.5 / 8; cpu holds 6
    # from 2; pcie completes 2 (at 2 and 3); `ended` 2 (s2 at 2.5, s3 at 3).
    ("the_warmup_cuts_the_pool_figures", """
pool kv { cap 4; spill cpu via pcie (1) when (1); }
pool cpu { cap 100; }
stage pcie : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial);
  hold kv (serial == 3 ? 5 : 3) { run d (0.5); } cache (3);
}
run { horizon 10; warmup 2; }
""", {}, {"ended": 2, "arrivals": 4,
          ("kv", None): {"admissions": 1, "evicted_entries": 1, "spills": 1, "rejections": 1, "used": 0.1875,
                         "cached": 2.8125},
          ("cpu", None): {"cached": 6.0}, ("pcie", None): {"completions": 2, "throughput": 0.25},
          ("d", None): {"completions": 3, "service": 5.5 / 3, "present": 0.1875}}),
    # §3, Gauges: the time average over [warmup, end] and "the least and greatest value held for a positive
    # time" there: used 5 over [0,1], 2 over [1,2], 0 after; from 1.5 to 4: 2·0.5 / 2.5, min 0, max 2 (the
    # 5 before the warm-up not among them).
    ("a_gauge_after_the_warmup", """
pool kv { cap 10; }
stage d : delay;
gauge u = used(kv);
workload { arrive batch(2); }
session { hold kv (serial == 0 ? 3 : 2) { run d (serial + 1); } }
run { horizon 4; warmup 1.5; }
""", {}, {("gauge", "u"): {"mean": 0.4, "min": 0.0, "max": 2.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in MORE], ids=[c[0] for c in MORE])
def test_reservations_victims_spills_and_warmup_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# program-reference.txt, run: "It is an error if the deadline passes with fewer than N arrivals or with a
# session still live"; docs/language.md: "an arrival at exactly the horizon is counted". renewal(5) with
# arrivals 3: the arrivals are at 5, 10 and 15.
@pytest.mark.parametrize("horizon, work, outcome", [
    (12, 0, "only 2 arrivals by the horizon"),
    (15, 0, 15.0),                                   # the third at the horizon itself, done at once
    (15, 1, "1 session still live at the horizon (not drained)"),
    (16, 1, 16.0),                                   # drained at 15 + 1
])
def test_arrivals_against_the_horizon(monkeypatch, horizon, work, outcome):
    src = (f"stage d : delay;\nworkload {{ arrive renewal(5); }}\nsession {{ run d ({work}); }}\n"
           f"run {{ horizon {horizon}; arrivals 3; }}\n")
    if isinstance(outcome, str):
        want = f"<source>:4:19: error: at t={horizon}: run {{ arrivals 3; }}: {outcome}"
        assert run_error(src, monkeypatch) == want
    else:
        r, _ = run(src, monkeypatch)
        js = report_json(r)
        assert (js["end"], js["arrivals"], js["ended"]) == (outcome, 3, 3)


# ---------------------------------------------------------------------------------------------------------
# A step engine's victim by `decoding`, a spilled prefix the tier evicts on the way, blocks in every
# allocation path, `end;` inside holds, a hold around the request's, pool-reference.txt's lanes
# ---------------------------------------------------------------------------------------------------------

DECODING = """
pool kv { cap 6; block 1; preempt by (KEY); }
stage e : step { budget 10; cost 1; chunk 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (1) { observe a = now; run e decode (5) growing kv; } }
  else { hold kv (1) { observe a = now; run e prefill (4) growing kv; } }
  observe f = now;
}
run { horizon 40; }
"""

LAST = [
    # pool-reference.txt, preempt: keys read `decoding` (1 for a decoding resident). s0 decodes 5, s1
    # prefills 4 a token an iteration (chunk 1), both growing from 1 unit: positions 1, 2, 3 each by 3 (used
    # 6). At 3 s0's growth to 4 needs a unit: by (decoding) takes s1 (0 < 1), whose 3 come back; s0 grows
    # (4). s1 is admitted again at the next event, 4 (docs/language.md, "An iteration's victim on a pool no
    # stage admits is admitted again at the next event"), and prefills its 4 again: [4,5] beside s0's last
    # token, then [5,8] alone. 8 iterations; s1's wait 1 over 3 admissions.
    ("preempt_by_decoding_takes_the_prefill", DECODING.replace("KEY", "decoding"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 4.0, 4.0)], "f": [(0, 5.0, 5.0), (1, 8.0, 8.0)]},
     {("e", None): {"iterations": 8}, ("kv", None): {"preemptions": 1, "admissions": 3, "wait": 1 / 3}}),
    # by (-decoding): s0, the decoder and the grower, is its own victim at 3; s1 grows to 4 and is done at
    # 4; s0, admitted again at 4, decodes its 5 again over [4,9]. 9 iterations.
    ("preempt_by_minus_decoding_takes_the_decoder", DECODING.replace("KEY", "-decoding"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 4.0, 4.0)], "f": [(1, 4.0, 4.0), (0, 9.0, 9.0)]},
     {("e", None): {"iterations": 9}, ("kv", None): {"preemptions": 1, "admissions": 3}}),
    # docs/language.md, "A spilled prefix is usable when its write completes … units the tier evicts before
    # their write completes … are evicted …, nothing lands for them". s0's 4, evicted at 2 for s1, go to cpu
    # over ps(1) ([2,6]); at 3 s2's hold of cpu's 4 evicts them there (cached, unusable). The write still
    # ends at 6, and s0 finds nothing at 7. cpu cached 4 over [2,3]; one eviction in each pool.
    ("a_spill_the_tier_evicts_on_the_way_lands_nothing", """
pool kv { cap 4; spill cpu via pcie (size) when (1); }
pool cpu { cap 4; }
stage pcie : ps(1);
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4);
    run d (6);
    observe c = cachedin(cpu) * 10 + cachedin(kv);
  } else { branch (serial == 1) {
    run d (2); hold kv (4) { run d (1); }
  } else {
    run d (3); hold cpu (4) { observe u = used(cpu); run d (1); }
  } }
}
run { horizon 10; }
""", {"c": [(0, 7.0, 0.0)], "u": [(2, 3.0, 4.0)]},
     {("kv", None): {"spills": 1, "evicted_units": 4.0}, ("cpu", None): {"cached": 0.4, "evicted_units": 4.0},
      ("pcie", None): {"completions": 1, "service": 4.0}}),
    # pool-reference.txt, block, in every allocation path: a hold of 0 on blocks of 4 takes 0, one of 4.5 on
    # blocks of 1 takes 5 (a: 0·10 + 5); a hold of 1 takes 4 and a load of 3 stays in it (b 4), whose `cache
    # (3)` keeps min(3, 3) rounded down: 0 (c); a growing prefill of 5 from 4 grows to 8 (g) and `cache (5)`
    # keeps 4 (h); the next hold of 2 with `cache (inf)` consumes the 4 (its allocation rounded to 4) and,
    # its body advancing nothing, caches its allocation: 4 (i).
    ("blocks_in_every_allocation_path", """
pool kv { cap 16; block 4; }
pool s { cap 5; block 1; }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (0), s (4.5) { observe a = used(kv) * 10 + used(s); run d (1); }
  hold kv (1) { load kv (3); observe b = used(kv); run d (1); } cache (3);
  observe c = cachedin(kv);
  hold kv (1) { run e prefill (5) growing kv; observe g = used(kv); } cache (5);
  observe h = cachedin(kv);
  hold kv (2) reserve (6) { observe r = cached; } cache (inf);
  observe i = cachedin(kv);
}
run { horizon 10; }
""", {"a": [(0, 0.0, 5.0)], "b": [(0, 1.0, 4.0)], "c": [(0, 2.0, 0.0)], "g": [(0, 3.0, 8.0)],
      "h": [(0, 3.0, 4.0)], "r": [(0, 3.0, 4.0)], "i": [(0, 3.0, 4.0)]},
     {("kv", None): {"used": 1.2, "cached": 2.8, "admissions": 4}, ("s", None): {"used": 0.5}}),
    # docs/language.md, "`end` inside a hold": `end;` releases every hold as the scope's end would, each
    # caching per its clause: p keeps 2 and kv 3 from 2 (1.6 and 2.4 over 10); s1, another session, reads
    # none of them at 3.
    ("end_inside_holds_releases_them_with_their_cache", """
pool kv { cap 10; }
pool p { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (3) { run d (1); hold p (2) { run d (1); end; } cache (2); } cache (3);
  } else {
    run d (3);
    observe c = used(kv) * 1000 + cachedin(kv) * 100 + used(p) * 10 + cachedin(p);
  }
}
run { horizon 10; }
""", {"c": [(1, 3.0, 0.0)]}, {"ended": 2, ("kv", None): {"cached": 2.4, "used": 0.6},
                             ("p", None): {"cached": 1.6, "used": 0.2}}),
    # §3: "Without it the hold is memory alone: it leaves the session's cached blocks where they are … So a
    # hold around the request's on the same pool, a reservation given back with release before the
    # request's admission, say, does not touch what the request will find". 3 cached at 1; the hold of 0
    # reserving 5 (no cache) consumes nothing, gives back nothing by its release; the request's hold
    # consumes the 3 (c 3) and caches 4 at 2.
    ("a_hold_around_the_requests_leaves_its_prefix", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3) { run d (1); } cache (3);
  hold kv (0) reserve (5) {
    observe i = cachedin(kv);
    release kv;
    hold kv (4) { observe c = cached; run d (1); } cache (4);
  }
  observe k = cachedin(kv);
}
run { horizon 10; }
""", {"i": [(0, 1.0, 3.0)], "c": [(0, 1.0, 3.0)], "k": [(0, 2.0, 4.0)]},
     {("kv", None): {"admissions": 3, "evicted_units": 0.0}}),
    # pool-reference.txt, queue, its priority lanes: `immediate ? 0 : prompt > 128 && waited >= 3 ? 1 :
    # prompt <= 128 ? 2 : 3`, then serial. s0 holds the one slot over [0,4]; s1 (200) queues at 0, s2 (100)
    # at 1, s3 (immediate) at 2.5, s4 (400) at 3.5. At 4: s3 0, s1 1 (waited 4), s2 2, s4 3: s3. At 5 s1.
    # At 6 s4 has waited 2.5 (lane 3): s2 (lane 2). At 7 s4. waits 0, 1.5, 5, 5, 3.5.
    ("queue_by_the_references_priority_lanes", """
pool kv { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,
                           serial); }
stage d : delay;
workload { arrive batch(5); }
session {
  set immediate = serial == 3;
  set prompt = serial == 2 ? 100 : 100 * serial + (serial == 1 ? 100 : 0);
  run d (serial == 0 ? 0 : serial == 1 ? 0 : serial == 2 ? 1 : serial == 3 ? 2.5 : 3.5);
  hold kv (1) { observe a = now; run d (serial == 0 ? 4 : 1); }
}
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0), (3, 4.0, 4.0), (1, 5.0, 5.0), (2, 6.0, 6.0), (4, 7.0, 7.0)]},
     {("kv", None): {"wait": 3.0, "admissions": 5}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in LAST], ids=[c[0] for c in LAST])
def test_victims_spills_blocks_and_lanes_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# §2, Expressions: operator pairs the earlier rounds left out, and the functions at inf, -0 and NaN
# ---------------------------------------------------------------------------------------------------------

# docs/language.md: "Precedence from low to high: `c ? a : b`, `||`, `&&`, comparisons (`< <= > >= == !=`, 0
# or 1), `+ -`, `* / %`, unary `- !`"; binary operators of one level go left to right, the conditional to the
# right. z is session 0's serial, 0: computed at run time, and folded with (0) written for it.
EXPRESSIONS = [
    ("!z < 1", 0.0),                      # (!0) < 1 is 1 < 1
    ("!z == 1", 1.0),
    ("-7 % 3 + z", -1.0),                 # (-7) % 3: unary minus binds tighter than %
    ("2 % 3 * 4 + z", 8.0),               # (2 % 3) * 4
    ("7 - 2 % 4 + z", 5.0),               # 7 - (2 % 4)
    ("8 / 2 % 3 + z", 1.0),               # (8 / 2) % 3
    ("1 - 2 - 3 * 2 % 4 + z", -3.0),      # 1 - 2 - ((3 * 2) % 4)
    ("z + 1 == 1 && 2 > 1", 1.0),         # ((0 + 1) == 1) && (2 > 1)
    ("3 > 2 == 2 > 1 + z", 0.0),          # comparisons are one level: ((3 > 2) == 2) > 1, 0 > 1
    ("2 * 3 > 5 == 1 + z", 1.0),          # ((6 > 5) == 1)
    ("z || 0 ? 4 : 5", 5.0),              # (0 || 0) ? 4 : 5
    ("1 ? z || 1 : 5", 1.0),
    ("1 ? 2 : 3 + 10 + z", 2.0),          # the else arm is 3 + 10 + z
    ("z ? 2 : 3 + 10", 13.0),
    ("min(z ? 5 : 6, 3)", 3.0),
    ("!z && z", 0.0),                     # (!0) && 0
    ("!(z && 1) || z", 1.0),
    ("z ? 1 : z ? 2 : 3", 3.0),           # z ? 1 : (z ? 2 : 3)
    ("(z ? 1 : z) ? 2 : 3", 3.0),
    # the functions at inf, -0 and NaN (IEEE 754, the reference's f64)
    ("floor(z + inf)", inf),
    ("ceil(z - inf)", -inf),
    ("1 / abs(-z)", inf),                 # abs(-0) is +0
    ("floor(z / z)", nan),
    ("max(z / z, z / z)", nan),           # NaN passed over only beside a number
    ("abs(z / z)", nan),
    ("sqrt(z + inf)", inf),
    ("pow(z + inf, 0)", 1.0),
    ("pow(1 + z, z + inf)", 1.0),
    ("pow(z - 1, z + inf)", 1.0),         # IEEE pow(-1, ±inf) = 1
    ("pow(z - 0.5, z + inf)", 0.0),
    ("pow(z + inf, -1)", 0.0),
    ("pow(z, z - inf)", inf),
    ("ln(z + inf)", inf),
    ("z % inf", 0.0),                     # a % inf is a
    ("(z + inf) % 2", nan),
    ("5 % (z - 0)", nan),
    ("(z + 7) % -3", 1.0),                # the sign of the dividend
    ("exp(z - 745.2)", 0.0),              # below the least subnormal
]

EXPRESSION_PROGRAM = """
workload { arrive batch(1); }
session { set z = serial; observe x = EXPR; }
run { horizon 1; }
"""


@pytest.mark.parametrize("expr, value", EXPRESSIONS, ids=[e for e, _ in EXPRESSIONS])
def test_operator_pairs_and_functions_computed_and_folded(monkeypatch, expr, value):
    _, computed = run(EXPRESSION_PROGRAM.replace("EXPR", expr), monkeypatch)
    _, folded = run(EXPRESSION_PROGRAM.replace("EXPR", expr.replace("z", "(0)")), monkeypatch)
    for got in (computed["x"], folded["x"]):
        assert len(got) == 1 and got[0][:2] == (0, 0.0)
        v = got[0][2]
        assert (math.isnan(v) and math.isnan(value)) or v == value, (expr, got)


# ---------------------------------------------------------------------------------------------------------
# The two sides with a hidden attribute; a trace's think times; the warm-up over instants and live sessions
# ---------------------------------------------------------------------------------------------------------

def test_two_sides_with_a_hidden_output_across_turns(monkeypatch):
    """§2, The two sides: `request;` runs the server once, the workload's `turn` block sets the turn's `n` and
    the hidden `o` (read by the server's run and cache, where §3 allows it). s0: turn 1 n 2, o 2: holds 2 over
    [0,2] and caches min(4, 2) = 2; K = 4; the tool to 3; turn 2 n 2, o 3: prompt 6 consumes its 2 (h 206).
    s1: prompt 3 over [0,2], caches 3, K 5; at 3 its prompt 8 waits beside s0's 6 until 6, when s0 caches 6
    (min(9, 6)); s1 consumes its 3, and 8 + 6 > 10 evicts s0's 6 (h 308). 4 turns; kv's waits 0, 0, 0, 3."""
    src = """
pool kv { cap 10; }
stage d : delay;
stage tool : delay;
workload {
  arrive batch(2);
  hidden o;
  init { set K = 0; }
  turn { set n = 2 + serial; set o = 1 + turn_no; }
  session {
    turn;
    loop {
      request;
      set K = prompt + o;
      branch (turn_no < 2) { tool (1); turn; } else { end; }
    }
  }
}
server {
  set prompt = K + n;
  hold kv (prompt) { observe h = cached * 100 + prompt; run d (o); } cache (prompt + o);
}
run { horizon 20; }
"""
    check_by_hand(monkeypatch, src, {"h": [(0, 0.0, 2.0), (1, 0.0, 3.0), (0, 3.0, 206.0), (1, 6.0, 308.0)]},
                  {"turns": 4, ("kv", None): {"wait": 0.75, "evicted_units": 6.0, "admissions": 4}})


def test_a_trace_session_replayed_by_every_arrival_with_its_think_time(tmp_path, monkeypatch):
    """§3, Workload: "with a trace, turn loads the next turn's new, out, think, forced and sets more". A trace
    of one session (two rows) is the one every session replays, in any draw: s0 arrives at 1 (renewal(1):
    after one gap), runs 100 / 100 + 10 / 10 = 2 to 3 (n 100·100 + more 1·10 + forced 0), thinks 2 to 5,
    runs 0.5 + 0.5 to 6 (5000 + 0 + 1); s1 the same from 2. The hidden `out` is read by the run."""
    (tmp_path / "t1.csv").write_text("session,turn,new,out,think,forced\n3,0,100,10,2,0\n3,1,50,5,0,1\n")
    prog = tmp_path / "p.sq"
    prog.write_text("""stage d : delay;
stage pause : delay;
workload { arrive renewal(1); trace "t1.csv"; hidden out; }
session {
  turn;
  loop {
    run d (new / 100 + out / 10);
    observe n = new * 100 + more * 10 + forced;
    branch (more) { run pause (think); turn; } else { end; }
  }
}
run { horizon 100; arrivals 2; }
""")
    r, obs = run("", monkeypatch, path=prog)
    assert obs["n"] == [(0, 3.0, 10010.0), (1, 4.0, 10010.0), (0, 6.0, 5001.0), (1, 7.0, 5001.0)]
    assert sorted(r.observes["n"].turns.tolist()) == [1, 1, 2, 2]
    js = report_json(r)
    assert (js["turns"], js["ended"], js["end"]) == (4, 2, 7.0)


def test_the_warmup_cuts_instants_and_the_live_sessions(monkeypatch):
    """program-reference.txt, run: "Samples before this time are discarded"; time averages over end − warmup.
    Sessions of d (1) and d (3): `observe t = now` (an instant) at 1 and 3 keeps 3 only, v = 2·now keeps 6;
    one session live over [2,3] of [2,4]: mean live 0.5."""
    src = ("stage d : delay;\nworkload { arrive batch(2); }\n"
           "session { run d (1 + 2 * serial); observe t = now; observe v = now * 2; }\nrun { horizon 4; warmup 2; }\n")
    r, _ = run(src, monkeypatch)
    js = report_json(r)
    assert js["instants"] == {"t": 1}
    assert (js["observes"]["v"]["count"], js["observes"]["v"]["mean"]) == (1, 6.0)
    assert js["mean_live"] == 0.5


# pool-reference.txt, reserve held: "A hold that grows beyond its reservation follows the pool's preempt
# rule", growth by d needing used + Σ_{others} u + d <= cap. cap 8, block 1. s0 holds 1 reserving 3 (u 2) and
# decodes 5 growing; s1 holds 1 reserving 4 (u 3) at a delay stage over [0,6]. s0 grows within its
# reservation to 3 ([2,3]) and past it to 4 (4 + 3 + 1 = 8), but its growth to 5 at 4 (5 + 3 + 1 > 8)
# preempts it (lifo: the engine's only resident is itself). That step only preempts ([4,5]); s0 is admitted
# again at 5 (1 + 3 + 3 <= 8) and decodes its 5 over [5,10], s1's reservation gone from 6. 10 iterations,
# 9 tokens; used 6 + (1 + 2 + 3 + 4) + (1 + 2 + 3 + 4 + 5) = 31 / 20. Without `reserve held`: 5 + 1 <= 8,
# no preemption, done at 5.
RESERVED_GROWTH = """
pool kv { cap 8; block 1; preempt lifo; HELD }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (1) reserve (3) { observe a = now; run e decode (5) growing kv; } observe f = now; }
  else { hold kv (1) reserve (4) { run d (6); } }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("held, obs, figures", [
    ("reserve held;", {"a": [(0, 0.0, 0.0), (0, 5.0, 5.0)], "f": [(0, 10.0, 10.0)]},
     {("e", None): {"iterations": 10, "tokens": 0.9, "present": 0.45},
      ("kv", None): {"preemptions": 1, "admissions": 3, "used": 1.55, "wait": 1 / 3, "queue": 0.05}}),
    ("", {"a": [(0, 0.0, 0.0)], "f": [(0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5}, ("kv", None): {"preemptions": 0, "admissions": 2, "used": 1.05}}),
])
def test_growth_past_a_held_reservation_preempts(monkeypatch, held, obs, figures):
    check_by_hand(monkeypatch, RESERVED_GROWTH.replace("HELD", held), obs, figures)


# pool-reference.txt, queue: "For a stage-bound pool, budget_left(stage) reads the budget remaining for that
# admission, and the policy is evaluated again after every admission". Prompts 3, 2, 1 into an engine of
# budget 4. By (p > budget_left(e) ? 1 : 0, serial): at 0 all fit 4, s0 first (3 tokens: 1 left); again:
# s1's 2 > 1, s2's 1 does not: s2 (0 left, admissions stop). s1 at the next iteration, [1,2]. FIFO instead
# admits s1 with the 1 left (a token at [0,1], its last at [1,2]) and s2 at 1, done at 2.
QUEUE_BUDGET = """
pool reqs { cap 10; admit via e; QUEUE }
stage e : step { budget 4; cost 1; }
workload { arrive batch(3); }
session {
  set p = 3 - serial;
  hold reqs (1) { observe a = now; run e prefill (p); }
  observe f = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("queue, obs, figures", [
    ("queue by (p > budget_left(e) ? 1 : 0, serial);",
     {"a": [(0, 0.0, 0.0), (2, 0.0, 0.0), (1, 1.0, 1.0)], "f": [(0, 1.0, 1.0), (2, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("e", None): {"iterations": 2, "batch": 1.5}, ("reqs", None): {"wait": 1 / 3}}),
    ("", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0)], "f": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {("e", None): {"iterations": 2, "batch": 2.0}, ("reqs", None): {"wait": 1 / 3}}),
])
def test_queue_keys_read_the_budget_left_at_each_admission(monkeypatch, queue, obs, figures):
    check_by_hand(monkeypatch, QUEUE_BUDGET.replace("QUEUE", queue), obs, figures)


def test_a_dead_remainder_keeps_its_entrys_release_time(monkeypatch):
    """§3: "the rest of that entry stays in the cache as a dead entry with the same age". s0 caches 6 at 1,
    s1 2 at 2; at 3 s0's `reuse (1)` consumes 1 (c 1) and leaves 5 dead, released (for lru) at 1. At 4 s2's
    4 beside 2 held and 7 cached (13 > 10): lru takes the dead 5 (released at 1) before s1's 2 (at 2), and
    s1 still finds its 2 at 5 (were the remainder released at 3, s1's would go first, and both). cached 6 +
    8 + 7 + 2·4 + 4·2 = 37 / 10."""
    src = """
pool kv { cap 10; evict lru; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (2);
    hold kv (2) reuse (1) { observe c = cached; run d (5); } cache (2);
  } else { branch (serial == 1) {
    hold kv (2) { run d (2); } cache (2);
    run d (3);
    observe k = cachedin(kv);
  } else {
    run d (4);
    hold kv (4) { observe a = now; run d (1); }
  } }
}
run { horizon 10; }
"""
    check_by_hand(monkeypatch, src, {"c": [(0, 3.0, 1.0)], "k": [(1, 5.0, 2.0)], "a": [(2, 4.0, 4.0)]},
                  {("kv", None): {"evicted_entries": 1, "evicted_units": 5.0, "cached": 3.7, "used": 2.4}})


def test_the_command_line_wins_over_the_run_block_and_the_report_says_so(tmp_path):
    """program-reference.txt, run: "--horizon, --warmup, --seed and --arrivals override them". The block's seed
    7 under `--seed 3` gives the report of the block's seed 3, byte for byte but the program's own hash, and
    says seed 3; `--horizon 20 --warmup 4` are the report's horizon and warm-up, in the JSON and in the text
    report's first line."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    serq = str(Path(sys.executable).parent / "serq")
    body = "stage d : fifo;\nworkload { arrive poisson(1); }\nsession { run d (~exp(0.5)); }\n"
    seven, three = tmp_path / "seven.sq", tmp_path / "three.sq"
    seven.write_text(body + "run { horizon 50; warmup 5; seed 7; }\n")
    three.write_text(body + "run { horizon 50; warmup 5; seed 3; }\n")

    def js(path, *args):
        out = subprocess.run([serq, "run", str(path), "--json", *args], capture_output=True, text=True, timeout=120,
                             check=True)
        return json.loads(out.stdout)

    a, b = js(seven, "--seed", "3"), js(three)
    assert a["seed"] == b["seed"] == 3
    for k in ("end", "arrivals", "stages", "observes"):
        assert a[k] == b[k]
    assert js(seven)["arrivals"] != b["arrivals"]          # the block's seed 7 is another run
    c = js(seven, "--horizon", "20", "--warmup", "4")
    assert (c["horizon"], c["end"], c["warmup"], c["seed"]) == (20.0, 20.0, 4.0, 7)
    text = subprocess.run([serq, "run", str(seven), "--horizon", "20", "--warmup", "4"], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    assert text.splitlines()[0].startswith("run: horizon 20  end 20  warmup 4  seed 7  ")


TIES = [
    # §3: "After every event the interpreter settles: it runs every ready session, then retries growers and
    # admissions at every pool". cap 4: s2 holds 3 over [0,2]; s0's 1 grows by 2 at 1 (5 > 4: waits, preempt
    # none); s1's 2 queue at 0.5. At 2 s2's 3 come back (used 1): the grower first (3), and s1's 2 no longer
    # fit (5 > 4) until s0's end at 3. waits 0, 0, 2.5; used 3·2 + 1·2 + 2 + 2 = 13 / 10.
    ("the_growers_before_the_admissions", """
pool kv { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (1) { run d (1); grow kv (2); observe g = now; run d (1); } }
  else { branch (serial == 1) { run d (0.5); hold kv (2) { observe a = now; run d (1); } }
  else { hold kv (3) { run d (2); } } }
}
run { horizon 10; }
""", {"g": [(0, 2.0, 2.0)], "a": [(1, 3.0, 3.0)]}, {("kv", None): {"wait": 2.5 / 3, "used": 1.3}}),
    # docs/language.md, "A lease's time runs out as an event": s0's lease of 2 from 1 ends at 3, an event
    # scheduled at 1, after s1's run's end at 3 (scheduled at 0), so s1's entry is released first. At 2.5 s0
    # still holds its 3 (used 6, nothing cached of its own). At 4 s2's 6 beside 6 cached (12 > 9): lru takes
    # s1's, released first at 3; s0 keeps its 3. cached 6·1 + 3·6; used 3·3 + 3·3 + 6·1 = 24 / 10.
    ("a_lease_ending_at_an_instant_releases_after_that_instants_runs", """
pool kv { cap 9; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (3) { run d (1); } cache (3) lease kv (2);
    run d (1.5); observe u = used(kv) * 10 + cachedin(kv);
    run d (2.5); observe c = cachedin(kv);
  } else { branch (serial == 1) {
    hold kv (3) { run d (3); } cache (3);
    run d (2); observe c = cachedin(kv);
  } else {
    run d (4); hold kv (6) { run d (1); }
  } }
}
run { horizon 10; }
""", {"u": [(0, 2.5, 60.0)], "c": [(0, 5.0, 3.0), (1, 5.0, 0.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 3.0, "cached": 2.4, "used": 2.4, "holders": 0.7}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in TIES], ids=[c[0] for c in TIES])
def test_growers_and_lease_ends_in_order_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_poisson_is_renewal_of_exponential_gaps_with_an_arrival_at_zero(monkeypatch):
    """§2: "poisson(rate) starts with an arrival at time zero, then uses exponential gaps of mean 1 / rate.
    Thus renewal(~exp(1 / rate)) has the same subsequent arrival schedule for the same seed, without the
    initial arrival at zero." The sessions' start times under seed 11 over [0,3]: poisson's are 0 and then
    renewal's, one for one."""
    def starts(arrive):
        src = f"workload {{ arrive {arrive}; }}\nsession {{ observe t = now * 1; }}\nrun {{ horizon 3; seed 11; }}\n"
        _, obs = run(src, monkeypatch)
        return [t for _, t, _ in obs["t"]]

    poisson, renewal = starts("poisson(2)"), starts("renewal(~exp(1 / 2))")
    assert len(renewal) >= 2
    assert poisson == [0.0] + renewal


def test_the_warmup_keeps_a_record_by_its_send_time_else_its_time(monkeypatch):
    """docs/language.md, record: "The report keeps the rows whose column `sent` (without one: whose `time`) is
    at or after the warm-up's end". Warm-up 2. Table a (no `sent`): rows at 1 (s0) and 3 (s1): s1's alone.
    Table b: s0 sent 0, written at 1, and s1 sent 2.5, written at 3: s1's alone; with s1 sent at 1.5 it
    would go, though written after the warm-up."""
    src = ("stage d : delay;\nworkload { arrive batch(2); }\n"
           "session { set t0 = serial * SENT; run d (1 + 2 * serial); record a { x = now; } "
           "record b { sent = t0; y = now; } }\nrun { horizon 4; warmup 2; }\n")
    r, _ = run(src.replace("SENT", "2.5"), monkeypatch)
    a, b = r.records("a"), r.records("b")
    assert (list(a["session"]), list(a["x"])) == ([1], [3.0])
    assert (list(b["session"]), list(b["sent"]), list(b["y"])) == ([1], [2.5], [3.0])
    r, _ = run(src.replace("SENT", "1.5"), monkeypatch)
    assert list(r.records("b")["session"]) == []
