"""Conformance of language.txt §2 and §3 (and pool-reference.txt) by hand, round 41: the pools' rules one at a
time in small programs (a spill landing in its tier, `evict by` keys that tie and their release order,
`reserve held` against a growth that passes its reservation, the cap after block rounding, a hold over two
pools whose queues both wait for one of them), sessions and workloads (a closed population whose sessions
think between turns, a trace replayed in order with its rows out of order, the warm-up's cut of a closed
run), and §2's expressions at their edges computed by the simulator (division, the functions, comparisons
with infinities, nested conditionals, definitions whose parameter shadows a `let`, `--set` of a `let` a
later `let` reads).

§3, Pools: "Other entries are evicted in the pool's order until allocations and cache fit"; "Eviction: the
keys (evict by) or the release time (lru), then the order the entries were released"; "A request that can
never fit — its units, or its reserve when that is larger, above the cap … — is rejected: the session
ends"; pool-reference.txt, `reserve held`: "A new reservation r requires used + Σ u_i + r ≤ cap. Growth by d
requires used + Σ_{i≠grower} u_i + d ≤ cap … A hold that grows beyond its reservation follows the pool's
preempt rule"; §3, Ties: "where the heads of two queues both wait for room in one pool … the pool declared
first is served first".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
from conform import check_by_hand

inf = math.inf
nan = math.nan

# ---------------------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------------------

POOLS = [
    # kv cap 4, block 2, spilling every block to cpu over a fifo link (work = the block's size). s0 holds 4
    # on [0,1] and caches them; s1 (after its run of 1; the same instant, scheduled after s0's) holds 3,
    # rounded up to 4: the two blocks of s0's entry are evicted (one entry, 4 units) and each is a spill
    # of 2 on the link: [1,3] and [3,5] (waits 0 and 2: 1; service 2). s1 caches min(4, its allocation 4).
    # c0 = cachedin(kv) after each release: 4, 4. At 6 s0 finds its 4 in cpu (both writes landed by 5),
    # none in kv; s1 at 7 finds none in cpu, its 4 in kv. kv used 4 on [0,2]: 8 / 20; cached 4 on [2,20]:
    # 72 / 20. cpu's cached counts the units from the eviction (docs/language.md: "From the eviction they
    # take their room in the tier"): 4 on [1,20] = 76 / 20.
    ("spill_each_block_lands_in_the_tier", """
pool cpu { cap 10; block 2; }
pool kv { cap 4; block 2; spill cpu via link (size) when (size >= 2); }
stage link : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (serial == 0 ? 4 : 3) { run d (1); } cache (4);
  observe c0 = cachedin(kv);
  run d (5);
  observe c1 = cachedin(cpu);
  observe k1 = cachedin(kv);
}
run { horizon 20; }
""", {"c0": [(0, 1.0, 4.0), (1, 2.0, 4.0)], "c1": [(0, 6.0, 4.0), (1, 7.0, 0.0)],
      "k1": [(0, 6.0, 0.0), (1, 7.0, 4.0)]},
     {("kv", None): {"used": 0.4, "cached": 3.6, "admissions": 2, "evicted_entries": 1, "evicted_units": 4.0,
                     "spills": 2},
      ("cpu", None): {"cached": 3.8, "admissions": 0},
      ("link", None): {"completions": 2, "wait": 1.0, "service": 2.0}}),
    # the same with the predicate `size > 2`: a block of 2 is never written (no spill, no job on the link),
    # and cpu stays empty.
    ("spill_predicate_reads_the_block", """
pool cpu { cap 10; block 2; }
pool kv { cap 4; block 2; spill cpu via link (size) when (size > 2); }
stage link : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (serial == 0 ? 4 : 3) { run d (1); } cache (4);
  run d (5);
  observe c1 = cachedin(cpu);
}
run { horizon 20; }
""", {"c1": [(0, 6.0, 0.0), (1, 7.0, 0.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 4.0, "spills": 0},
      ("cpu", None): {"cached": 0.0}, ("link", None): {"completions": 0}}),
    # evict by (x), x = 1 for s0 and 0 for the others. s0 caches 2 at 0.5, s2 at 2.5, s1 at 2.75 (its run
    # of 1.75 from 1). At 3 s3 holds 2 beside 6 cached in a pool of 6: 2 units go. s1 and s2 tie on x = 0;
    # the release order takes s2 (released at 2.5) first. At 10: s0 2, s1 2, s2 0; s3's hold has cache (0).
    # cached: s0 on [0.5,20] 39, s1 on [2.75,20] 34.5, s2 on [2.5,3] 1: 74.5 / 20; used 2 on [0,0.5],
    # [1,2.75], [2,2.5], [3,3.5]: 2·(0.5 + 1.75 + 0.5 + 0.5) = 6.5 / 20.
    ("evict_by_key_ties_go_by_release_order", """
pool p { cap 6; evict by (x); }
stage d : delay;
workload { arrive batch(4); }
session {
  set x = serial == 0 ? 1 : 0;
  run d (serial);
  hold p (2) { run d (serial == 1 ? 1.75 : 0.5); } cache (serial == 3 ? 0 : 2);
  run d (10 - now);
  observe c = cachedin(p);
}
run { horizon 20; }
""", {"c": [(0, 10.0, 2.0), (1, 10.0, 2.0), (2, 10.0, 0.0), (3, 10.0, 0.0)]},
     {("p", None): {"cached": 3.725, "used": 0.325, "evicted_entries": 1, "evicted_units": 2.0,
                    "admissions": 4}}),
    # the same under `evict by (x, -last)`: among the ties on x the later release goes first (-2.75 <
    # -2.5): s1's entry.
    ("evict_by_second_key_breaks_the_tie", """
pool p { cap 6; evict by (x, -last); }
stage d : delay;
workload { arrive batch(4); }
session {
  set x = serial == 0 ? 1 : 0;
  run d (serial);
  hold p (2) { run d (serial == 1 ? 1.75 : 0.5); } cache (serial == 3 ? 0 : 2);
  run d (10 - now);
  observe c = cachedin(p);
}
run { horizon 20; }
""", {"c": [(0, 10.0, 2.0), (1, 10.0, 0.0), (2, 10.0, 2.0), (3, 10.0, 0.0)]},
     {("p", None): {"evicted_entries": 1, "evicted_units": 2.0}}),
    # the same under `evict by (age)`: the smallest age (now - last) is the latest release, s1 (0.25 at 3).
    ("evict_by_age_takes_the_latest_release", """
pool p { cap 6; evict by (age); }
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial);
  hold p (2) { run d (serial == 1 ? 1.75 : 0.5); } cache (serial == 3 ? 0 : 2);
  run d (10 - now);
  observe c = cachedin(p);
}
run { horizon 20; }
""", {"c": [(0, 10.0, 2.0), (1, 10.0, 0.0), (2, 10.0, 2.0), (3, 10.0, 0.0)]}, {}),
    # and under `evict lru`: the earliest release, s0's (0.5).
    ("evict_lru_takes_the_earliest_release", """
pool p { cap 6; evict lru; }
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial);
  hold p (2) { run d (serial == 1 ? 1.75 : 0.5); } cache (serial == 3 ? 0 : 2);
  run d (10 - now);
  observe c = cachedin(p);
}
run { horizon 20; }
""", {"c": [(0, 10.0, 0.0), (1, 10.0, 2.0), (2, 10.0, 2.0), (3, 10.0, 0.0)]}, {}),
    # reserve held, preempt lifo, cap 4: s0 holds 1 reserving 2 (u0 = 1), s1 then 1 reserving 2: used 1 + 1
    # + 2 = 4 ≤ 4, admitted (u1 = 1). At 1 s0 grows by 2, beyond its reservation: used 2 + u1 1 + 2 = 5 >
    # 4, so the pool's rule: lifo preempts s1 (the last admitted; it has no cache, computed 0). Then 1 + 2
    # ≤ 4: s0 holds 3 (g = 3). s0 releases at 2 and s1 is admitted again (computed 0: it advanced
    # nothing), runs to 8. used 2 on [0,1], 3 on [1,2], 1 on [2,8]: 11 / 20; holders (2 + 1 + 6) / 20;
    # queue s1 on [1,2]; waits 0, 0, 1.
    ("reserve_held_growth_beyond_the_reservation_preempts", """
pool kv { cap 4; reserve held; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (1) reserve (2) {
    observe a = now;
    observe cp = computed;
    run d (1);
    branch (serial == 0) { grow kv (2); observe g = used(kv); run d (1); }
    run d (serial == 1 ? 5 : 0);
  }
  observe e = now;
}
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 2.0)], "cp": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 0.0)],
      "e": [(0, 2.0, 2.0), (1, 8.0, 8.0)], "g": [(0, 1.0, 3.0)]},
     {("kv", None): {"used": 0.55, "holders": 0.45, "queue": 0.05, "wait": 1 / 3, "admissions": 3,
                     "preemptions": 1}}),
    # the same without reserve held: the growth needs used 2 + 2 ≤ 4 and fits; nobody is preempted, s1
    # runs [0,6].
    ("without_reserve_held_the_same_growth_fits", """
pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (1) reserve (2) {
    observe a = now;
    run d (1);
    branch (serial == 0) { grow kv (2); observe g = used(kv); run d (1); }
    run d (serial == 1 ? 5 : 0);
  }
  observe e = now;
}
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0)], "e": [(0, 2.0, 2.0), (1, 6.0, 6.0)], "g": [(0, 1.0, 4.0)]},
     {("kv", None): {"used": 0.5, "admissions": 2, "preemptions": 0}}),
    # reserve held, a growth within the reservation: s0 holds 1 reserving 3 (u0 = 2); s1 (at 0.25) wants 2:
    # 1 + u0 2 + 2 = 5 > 4, it waits (without reserve held 1 + 2 ≤ 4 would admit it). At 0.5 s0 grows by 2
    # (its own reservation counts for it: 3 + 0 ≤ 4), u0 = 0, and s1 still finds 3 + 2 > 4. It is admitted
    # at s0's release, 1.5: waits 0 and 1.25; queue 1.25 / 10.
    ("reserve_held_keeps_a_newcomer_out_until_the_release", """
pool kv { cap 4; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial / 4);
  hold kv (serial == 0 ? 1 : 2) reserve (serial == 0 ? 3 : 0) {
    observe a = now;
    branch (serial == 0) { run d (0.5); grow kv (2); observe g = used(kv); }
    run d (1);
  }
}
run { horizon 10; }
""", {"a": [(0, 0.0, 0.0), (1, 1.5, 1.5)], "g": [(0, 0.5, 3.0)]},
     {("kv", None): {"wait": 0.625, "admissions": 2, "queue": 0.125}}),
    # cap 5, block 2: holds of 1 take 2 each, so two fit (4) and a third (4 + 2 > 5) waits; a hold of 5
    # rounds up to 6 > 5 and is rejected (its session ends). s2 is admitted at 1, when s0 and s1 release;
    # each observes used 4 (the settle admits s0 and s1 before either runs on; at 1 s2 is admitted after
    # s0's release, before s1's). used 4 on [0,1], 4 then 2 on [1,2]: 6 / 10.
    ("cap_after_block_rounding", """
pool p { cap 5; block 2; }
stage d : delay;
workload { arrive batch(4); }
session {
  hold p (serial == 3 ? 5 : 1) { observe a = now; observe u = used(p); run d (1); }
  observe e = now;
}
run { horizon 10; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0)], "u": [(0, 0.0, 4.0), (1, 0.0, 4.0), (2, 1.0, 4.0)],
      "e": [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 2.0, 2.0)]},
     {("p", None): {"used": 0.6, "queue": 0.1, "wait": 1 / 3, "admissions": 3, "rejections": 1}}),
    # §3, Ties: s0 holds a on [0,2]; at 1 s1 waits in b's queue for `hold b (1), a (1)` (b is free, a is
    # not) and s2 in a's queue. At 2 both heads wait for room in a; a is declared first, so s2 goes first
    # ([2,4]) and s1 at 4. b's wait: s1 on [1,4].
    ("two_queues_for_one_pool_first_declared_first", """
pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 0 ? 0 : 1);
  branch (serial == 1) {
    hold b (1), a (1) { observe g = now; run d (2); }
  } else {
    hold a (1) { observe g = now; run d (2); }
  }
}
run { horizon 20; }
""", {"g": [(0, 0.0, 0.0), (2, 2.0, 2.0), (1, 4.0, 4.0)]},
     {("a", None): {"admissions": 3, "queue": 0.05}, ("b", None): {"wait": 3.0, "queue": 0.15, "admissions": 1}}),
    # the same with b declared first: s1 (b's head) goes first at 2, s2 at 4.
    ("two_queues_for_one_pool_other_declaration", """
pool b { cap 1; }
pool a { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 0 ? 0 : 1);
  branch (serial == 1) {
    hold b (1), a (1) { observe g = now; run d (2); }
  } else {
    hold a (1) { observe g = now; run d (2); }
  }
}
run { horizon 20; }
""", {"g": [(0, 0.0, 0.0), (1, 2.0, 2.0), (2, 4.0, 4.0)]},
     {("a", None): {"admissions": 3, "queue": 0.15}, ("b", None): {"wait": 1.0, "queue": 0.05}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in POOLS], ids=[c[0] for c in POOLS])
def test_pools_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)
