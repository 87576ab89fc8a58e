"""Conformance of language.txt §2 and §3 (and pool-reference.txt) by hand, round 41: the pools' rules one at a
time in small programs (a spill landing in its tier, `evict by` keys that tie and their release order,
`reserve held` against a growth that passes its reservation, the cap after block rounding, a hold over two
pools whose queues both wait for one of them), sessions and workloads (a closed population whose sessions
think between turns, a trace replayed in order with its rows out of order, the warm-up's cut of a closed
run), §2's expressions at their edges computed by the simulator (division, the functions, comparisons
with infinities, nested conditionals, definitions whose parameter shadows a `let`, `--set` of a `let` a
later `let` reads), and the end of a run of no horizon: "`run { horizon inf; }` … ends a run when it
drains" (docs/simulator.md), not at the timer of a lease that ended before its time nor at the completion
of a job a preemption took off its stage (both were events left, and the run's end).

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
import serq_frontend
from conform import both_tiers, check_by_hand, report_json, run

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
    # the same into a tier of one block (cap 2): the first block written takes the tier's room from 1
    # (pending); the second evicts it there (docs/language.md: units the tier evicts before their write
    # completes are evicted, nothing lands for them; the write still runs on the link) and takes the room
    # itself. s0 finds 2 in cpu at 6. cpu cached 2 on [1,20]: 38 / 20; one entry of 2 evicted there; two
    # spills and two writes on the link as before.
    ("spill_into_a_full_tier_evicts_a_write_under_way", """
pool cpu { cap 2; block 2; }
pool kv { cap 4; block 2; spill cpu via link (size) when (size >= 2); }
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
""", {"c1": [(0, 6.0, 2.0), (1, 7.0, 0.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 4.0, "spills": 2},
      ("cpu", None): {"cached": 1.9, "evicted_entries": 1, "evicted_units": 2.0},
      ("link", None): {"completions": 2, "wait": 1.0}}),
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


POOLS += [
    # reserve held and a lease: "Reservations end with the hold's scope …; leases retain none". s0 holds 1
    # reserving 3 (u0 = 2) and leases kv for 5 s; s1 at 0.5 wants 2: 1 + 2 + 2 > 4, it waits until s0's
    # scope ends at 1 (the lease keeps 1, the reservation goes: free 4 - 1 = 3) and is admitted then. s1's
    # free at 2: 4 - 1 - 2. Leases end at 6 and 7 (their time), caching 1 each. used 1 on [0,6], 2 on
    # [1,7]: 18 / 20; cached [6,20] and [7,20]: 27 / 20; holders count a leased allocation: 12 / 20; the
    # gauge free: 1 on [0,7] less [6,7] at 2, then 4 on [7,20]: (1 + 5 + 2 + 52) / 20, least 1, most 4.
    ("reserve_held_a_lease_retains_no_reservation", """
pool kv { cap 4; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial / 2);
  hold kv (serial == 0 ? 1 : 2) reserve (serial == 0 ? 3 : 0) { observe a = now; run d (1); } cache (1) lease kv (5);
  observe f = free(kv);
  run d (10);
}
gauge fr = free(kv);
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0), (1, 1.0, 1.0)], "f": [(0, 1.0, 3.0), (1, 2.0, 1.0)]},
     {("kv", None): {"used": 0.9, "cached": 1.35, "holders": 0.6, "queue": 0.025, "wait": 0.25},
      ("gauge", "fr"): {"mean": 3.0, "min": 1.0, "max": 4.0}}),
    # §3: "Cache entries are per session" (§9): s1 finds none of s0's prefix (cached 0 under reuse (inf)).
    # "the session consumes at most ρ units of its own cached prefix …; the rest of that entry stays in the
    # cache as a dead entry": the second hold, reuse (2), consumes 2 of the 4 (cached 2), and cachedin
    # reads 0 in its body (the dead 2 are no one's prefix), 6 after it. cached: s0 2 dead on [1,2], 2 + 6
    # on [2,10]; s1 2 on [3,4], 8 on [4,10]: (2 + 64 + 2 + 48) / 10; used 4 + 6 + 4 + 6 over 1 s each.
    ("prefixes_are_per_session_and_a_reuse_bound_leaves_a_dead_remainder", """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 2);
  hold kv (4) reuse (inf) { observe c1 = cached; run d (1); } cache (4);
  observe k1 = cachedin(kv);
  hold kv (6) reuse (2) { observe c2 = cached; observe k2 = cachedin(kv); run d (1); } cache (6);
  observe k3 = cachedin(kv);
}
run { horizon 10; }
""", {"c1": [(0, 0.0, 0.0), (1, 2.0, 0.0)], "k1": [(0, 1.0, 4.0), (1, 3.0, 4.0)],
      "c2": [(0, 1.0, 2.0), (1, 3.0, 2.0)], "k2": [(0, 1.0, 0.0), (1, 3.0, 0.0)],
      "k3": [(0, 2.0, 6.0), (1, 4.0, 6.0)]},
     {("kv", None): {"used": 2.0, "cached": 11.6, "admissions": 4, "evicted_entries": 0}}),
]


POOLS += [
    # one hold over pools of blocks 2 and 4: a takes 5 → 6, b 5 → 8; cache (7) leaves min(7, 6) = 6 on a
    # (whole blocks of 2) and min(7, 8) = 7 → 4 on b. The next hold, a (1), b (1) cache (1), consumes at
    # most its allocation on each (docs/language.md): 2 of a's 6 (4 stay, dead) and b's 4 (its allocation
    # is a block of 4); `cached` is the most consumed on one pool, 4. `release a;` gives a back, caching
    # min(1, 2) = 1 → 0 whole blocks; so does b at the end. a used 6 on [0,1]: 6 / 5 (its second
    # allocation is given back at once); cached 4 dead on [1,5]: 16 / 5; b used 8 + 4: 12 / 5, no cache.
    ("two_pools_of_two_blocks_and_a_release_inside", """
pool a { cap 10; block 2; }
pool b { cap 10; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold a (5), b (5) { observe ua = used(a); observe ub = used(b); run d (1); } cache (7);
  observe ca = cachedin(a);
  observe cb = cachedin(b);
  hold a (1), b (1) { observe c = cached; release a; observe ca2 = cachedin(a); observe ua2 = used(a); run d (1); } cache (1);
  observe ca3 = cachedin(a);
  observe cb3 = cachedin(b);
}
run { horizon 5; }
""", {"ua": [(0, 0.0, 6.0)], "ub": [(0, 0.0, 8.0)], "ca": [(0, 1.0, 6.0)], "cb": [(0, 1.0, 4.0)],
      "c": [(0, 1.0, 4.0)], "ca2": [(0, 1.0, 0.0)], "ua2": [(0, 1.0, 0.0)], "ca3": [(0, 2.0, 0.0)],
      "cb3": [(0, 2.0, 0.0)]},
     {("a", None): {"used": 1.2, "cached": 3.2, "admissions": 2}, ("b", None): {"used": 2.4, "cached": 0.0}}),
]


WAITING = """
pool kv { cap 4; evict by (KEY); }
pool gate { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  branch (serial < 2) {
    hold kv (2) { run d (0.5); } cache (2);
    branch (serial == 0) { hold gate (1) { run d (10); } } else { hold gate (1) { run d (1); } }
  } else {
    hold kv (2) { observe k0 = now; run d (1); }
  }
  observe c = cachedin(kv);
}
run { horizon 30; }
"""

POOLS += [
    # docs/language.md: `waiting` in an eviction key is 1 when the entry's session is alive and waiting in
    # some pool's queue. s0 caches 2 at 0.5 and holds gate on [0.5,10.5]; s1 caches 2 at 1.5 and waits
    # for gate from 1.5 (waiting 1). At 2 s2 needs 2 beside the 4 cached: one entry goes. evict by
    # (waiting): s0's (0, holding gate); s0 finds 0 at 10.5, s1 its 2 at 11.5 (gate [10.5,11.5]).
    ("evict_by_waiting_keeps_the_waiting_sessions_prefix", WAITING.replace("KEY", "waiting"),
     {"c": [(2, 3.0, 0.0), (0, 10.5, 0.0), (1, 11.5, 2.0)], "k0": [(2, 2.0, 2.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 2.0, "cached": 2.0},
      ("gate", None): {"wait": 4.5, "queue": 0.3}}),
    # and evict by (-waiting): s1's entry, the waiting session's, goes first.
    ("evict_by_minus_waiting_takes_the_waiting_sessions_prefix", WAITING.replace("KEY", "-waiting"),
     {"c": [(2, 3.0, 0.0), (0, 10.5, 2.0), (1, 11.5, 0.0)]}, {("kv", None): {"evicted_entries": 1}}),
]


POOLS += [
    # a pool family routed by `choose j in 3 by (-free(p[j]), -j)` (the most free, ties to the largest
    # index: the second key), a session every 0.1 s holding 1 (s0 2) for 10: s0 j = 2 (all free 2); s1 1
    # (p2 has 0); s2 0 (p1 has 1); s3 1 (p0 and p1 1: -1 < 0); s4 0. Each member holds 2 for 10 s: used 1.
    # Gauges over the family: the sum 60 / 20; max - min: 2 on [0,0.2] and [10,10.2], 1 on [0.2,0.4] and
    # [10.2,10.4]: 1.2 / 20, held between 0 and 2.
    ("choose_over_a_pool_family_and_gauges_over_it", """
pool p[3] { cap 2; }
stage d : delay;
workload { arrive batch(5); }
session {
  run d (serial / 10);
  choose j in 3 by (-free(p[j]), -j);
  observe c = j;
  hold p[j] (1 + (serial == 0)) { run d (10); }
}
gauge g = sum k in 3 (used(p[k]));
gauge m = max k in 3 (used(p[k])) - min k in 3 (used(p[k]));
run { horizon 20; }
""", {"c": [(0, 0.0, 2.0), (1, 0.1, 1.0), (2, 0.2, 0.0), (3, 0.3, 1.0), (4, 0.4, 0.0)]},
     {("p", 0): {"used": 1.0, "admissions": 2}, ("p", 1): {"used": 1.0, "admissions": 2},
      ("p", 2): {"used": 1.0, "admissions": 1}, ("gauge", "g"): {"mean": 3.0, "min": 0.0, "max": 6.0},
      ("gauge", "m"): {"mean": 0.06, "min": 0.0, "max": 2.0}}),
]


POOLS += [
    # §3, Gauges: "the least and greatest value held for a positive time". s0 holds 1 on [2,3]; s1 is
    # admitted with 3 at the horizon 10 (its event happens, its admission counts), a value held for no time:
    # the gauge's greatest is 1, its mean 1 / 10, as the pool's used.
    ("gauge_value_at_the_horizon_instant_is_held_for_no_time", """
pool p { cap 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial == 0 ? 2 : 10);
  hold p (serial == 0 ? 1 : 3) { run d (serial == 0 ? 0 : 1); run d (1); }
}
gauge u = used(p);
run { horizon 10; }
""", {}, {("p", None): {"used": 0.1, "admissions": 2}, ("gauge", "u"): {"mean": 0.1, "min": 0.0, "max": 1.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in POOLS], ids=[c[0] for c in POOLS])
def test_pools_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# One memory pool counted by two step engines
# ---------------------------------------------------------------------------------------------------------

SHARED = [
    # docs/language.md, "The preemption candidates of a pool several engines count": the residents of every
    # engine that counts kv, by their sessions' latest admission. kv cap 5, lifo; s0 decodes 4 on A, s1 4
    # on B, each in a hold of 2 growing kv (a token's position past the allocation grows it by 1). Both
    # are admitted at 0 (kv is admitted at the settle); [0,1], [1,2]: positions 2. At 2 A plans first
    # (declared first): s0 grows to 3 (used 5); B's s1 grows: 6 > 5, lifo takes the latest admitted, s1
    # itself: B's iteration only preempted and lasts its cost 1, [2,3]. At 3 (A's end, the first event)
    # s1 is admitted again (3 + 2 = 5) and joins B; once B's event is done A plans: s0 grows to 4, 6 > 5,
    # the latest admitted is s1 (at 3): preempted again, B has no resident and stays idle. s0 ends at 4,
    # s1 is admitted and decodes [4,8]. stuck: s1's second preemption at position 0 did not pass its first
    # (2). used 4, 4, 3, 4 on [0,4], then 2, 2, 3, 4 on [4,8]: 26 / 20; queue [2,4]: 2 / 20; waits 0, 0,
    # 1, 1; B's iterations: [0,3] and [4,8], one of them empty (7, decode_only 6); present [0,2] and [4,8].
    ("two_engines_one_memory_pool_preempt_across", """
pool kv { cap 5; preempt lifo; }
stage A : step { budget 8; cost 1; memory kv; }
stage B : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (2) {
    observe a = now;
    branch (serial == 0) { run A decode (4) growing kv; } else { run B decode (4) growing kv; }
  }
  observe e = now;
}
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 3.0, 3.0), (1, 4.0, 4.0)], "e": [(0, 4.0, 4.0), (1, 8.0, 8.0)]},
     {("kv", None): {"used": 1.3, "queue": 0.1, "holders": 0.5, "wait": 0.5, "admissions": 4, "preemptions": 2,
                     "stuck": 1},
      ("A", None): {"iterations": 4, "decode_only": 4, "present": 0.2, "utilisation": 0.2},
      ("B", None): {"iterations": 7, "decode_only": 6, "present": 0.3, "utilisation": 0.35}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in SHARED], ids=[c[0] for c in SHARED])
def test_shared_memory_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Sessions and workloads
# ---------------------------------------------------------------------------------------------------------

CLOSED = """
stage s : fifo;
stage think : delay;
workload {
  arrive closed(2);
  init { set k = 0; }
  turn { set k = k + 1; set z = serial + k; }
}
session {
  turn;
  loop {
    run s (1);
    observe f = z;
    branch (k < 2) { run think (3); turn; } else { end; }
  }
}
run { horizon 10; WARMUP }
"""

MULTI_TURN = """
pool kv { cap 100; }
stage s : delay;
stage think : delay;
workload {
  arrive closed(1);
  init { set K = 0; }
  turn { set n = 10; }
}
session {
  turn;
  loop {
    set prompt = K + n;
    set t0 = now;
    hold kv (prompt) reuse (K) { set c = cached; run s ((prompt - c) / 10); } cache (prompt);
    record request { sent = t0; first_token = now; last_token = now; prompt = prompt; output = 1; cached = c; }
    set K = prompt;
    branch (turn_no < 3) { run think (2); turn; } else { end; }
  }
}
run { horizon 13.5; WARMUP }
"""

SESSIONS = [
    # arrive closed(2), two turns each of a run of 1 on a fifo and a think of 3: s0 s [0,1], think [1,4];
    # s1 s [1,2], think [2,5]; s0 s [4,5], ends: s2 arrives at 5 (z = serial + k = 2 + 1); s1's think ends
    # at 5 before s0's completion (scheduled at 2, before 4), so s1 runs [5,6] and s2 [6,7]; s1 ends at 6,
    # s3 arrives, runs [7,8]; s2 thinks [7,10], s3 [8,11]; turns at 0 (two), 4, 5 (two), 6 and s2's second
    # at 10 (the horizon's events happen): 7. s present 2, 1, 1, 2, 2, 1 on [0,2], [4,8]:
    # 9 / 10, busy 6 / 10, waits 0, 1, 0, 0, 1, 1; think present 3 + 3 + 3 + 2, busy [1,5], [7,10].
    ("closed_population_two_turns_with_think", CLOSED.replace("WARMUP", ""),
     {"f": [(0, 1.0, 1.0), (1, 2.0, 2.0), (0, 5.0, 2.0), (1, 6.0, 3.0), (2, 7.0, 3.0), (3, 8.0, 4.0)]},
     {"arrivals": 4, "ended": 2, "turns": 7, "mean_live": 2.0,
      ("s", None): {"present": 0.9, "utilisation": 0.6, "completions": 6, "wait": 0.5, "service": 1.0},
      ("think", None): {"present": 1.1, "utilisation": 0.7, "completions": 3, "service": 3.0}}),
    # the same under warmup 4.5 (5.5 s measured): turns at or after it s1's and s2's at 5, s3's at 6, s2's
    # second at 10 (the horizon's events happen): 4; ended s0 at 5, s1 at 6; arrivals count all 4. s
    # present 0.5 + 2 + 2 + 1 on [4.5,8]: 5.5 / 5.5, busy 3.5 / 5.5, completions at 5, 6, 7, 8 with waits
    # 0, 0, 1, 1; think: s1 on [4.5,5], s2 [7,10], s3 [8,10]: 5.5 / 5.5, busy 3.5 / 5.5, completions s1's
    # at 5 and s2's at 10. Samples from 4.5 only.
    ("closed_population_under_a_warmup", CLOSED.replace("WARMUP", "warmup 4.5;"),
     {"f": [(0, 5.0, 2.0), (1, 6.0, 3.0), (2, 7.0, 3.0), (3, 8.0, 4.0)]},
     {"arrivals": 4, "ended": 2, "turns": 4, "mean_live": 2.0,
      ("s", None): {"present": 1.0, "utilisation": 3.5 / 5.5, "completions": 4, "wait": 0.5},
      ("think", None): {"present": 1.0, "utilisation": 3.5 / 5.5, "completions": 2}}),
    # a closed(1) session of three turns, each prompt K + 10 with its own prefix reused: s0's turns at 0,
    # 3, 6 (prompts 10, 20, 30, cached 0, 10, 20, each a run of 1), then s1 from 7 (7, 10, 13; its third
    # is running at the horizon 13.5). Hit rate Σ cached / Σ prompt = (0 + 10 + 20 + 0 + 10) / (10 + 20 +
    # 30 + 10 + 20) = 40 / 90. kv used 10 + 20 + 30 + 10 + 20 + 30 · 0.5 = 105 / 13.5; cached s0 10 on
    # [1,3], 20 on [4,6], 30 on [7,13.5] (an ended session's prefix stays), s1 10 on [8,10], 20 on [11,13]:
    # 315 / 13.5. 6 admissions, 6 turns, 1 session ended.
    ("multi_turn_prefix_hits_and_the_hit_rate", MULTI_TURN.replace("WARMUP", ""), {},
     {"arrivals": 2, "ended": 1, "turns": 6,
      ("kv", None): {"used": 105 / 13.5, "cached": 315 / 13.5, "admissions": 6},
      "requests": {"completed": 5, "total_input_tokens": 90.0, "prefix_cache_hit_rate": 40 / 90}}),
    # the same under warmup 3.5 (10 s measured): the rows sent at or after it (6, 7, 10): prompts 30 + 10 +
    # 20, cached 20 + 0 + 10: 0.5; used 20 on [3.5,4], 30 on [6,7], 10 on [7,8], 20 on [10,11], 30 on
    # [13,13.5]: (10 + 30 + 10 + 20 + 15) / 10; cached 20 on [4,6], 30 on [7,13.5], 10 on
    # [8,10], 20 on [11,13]: 295 / 10; admissions at 6, 7, 10, 13; turns at 6, 7, 10, 13.
    ("multi_turn_hit_rate_under_a_warmup", MULTI_TURN.replace("WARMUP", "warmup 3.5;"), {},
     {"arrivals": 2, "ended": 1, "turns": 4,
      ("kv", None): {"used": 8.5, "cached": 29.5, "admissions": 4},
      "requests": {"completed": 3, "duration": 10.0, "total_input_tokens": 60.0, "prefix_cache_hit_rate": 0.5}}),
]


SESSIONS += [
    # the two sides (§3): the workload's session turns, requests and thinks; the server holds one slot
    # around a run of o = 1 + serial. init observes at arrival, turn at every turn (turn_no 1, then 2).
    # s0: [0,1] (r 1, K 0 at the request: it is set after), thinks [1,2], asks at 2 and waits for s1's
    # slot ([1,3]) until 3: [3,4], r 2, K 3 = 2 + 1. s1: waits [0,1], runs [1,3] (r 3), thinks [3,4], runs
    # [4,6] (r 2, K 4 = 2 + 2). Slot busy [0,6]: 6 / 20; queue s1 [0,1], s0 [2,3]; waits 0, 1, 1, 0.
    ("two_sides_turns_requests_and_think", """
pool slots { cap 1; }
stage svc : fifo;
stage user : delay;
workload {
  arrive batch(2);
  hidden o;
  init { set K = 0; observe i0 = serial; }
  turn { set n = 2; set o = 1 + serial; observe tv = turn_no; }
  session {
    turn;
    loop {
      request;
      set K = K + n + o;
      branch (turn_no < 2) { run user (1); turn; } else { end; }
    }
  }
}
server {
  set t0 = now;
  hold slots (1) { run svc (o); }
  observe r = now - t0;
  observe k = K;
}
run { horizon 20; }
""", {"i0": [(0, 0.0, 0.0), (1, 0.0, 1.0)], "tv": [(0, 0.0, 1.0), (1, 0.0, 1.0), (0, 2.0, 2.0), (1, 4.0, 2.0)],
      "r": [(0, 1.0, 1.0), (1, 3.0, 3.0), (0, 4.0, 2.0), (1, 6.0, 2.0)],
      "k": [(0, 1.0, 0.0), (1, 3.0, 0.0), (0, 4.0, 3.0), (1, 6.0, 4.0)]},
     {"turns": 4, "ended": 2, ("slots", None): {"used": 0.3, "queue": 0.1, "wait": 0.5, "admissions": 4},
      ("user", None): {"completions": 2, "present": 0.1}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in SESSIONS], ids=[c[0] for c in SESSIONS])
def test_sessions_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


TRACE_CSV = "session,turn,new,out,think,forced\n5,2,30,3,0,1\n7,1,100,1,2,0\n5,1,10,2,4,0\n"


def test_trace_replayed_in_order_rows_out_of_order(tmp_path, monkeypatch):
    """docs/language.md, A trace file: "Sessions are numbered in the order they first appear; a session's rows
    need not be together or in order: its turns are sorted by `turn`"; `ordered`: session i replays trace
    session i. The file's session 5 (first seen) is session 0: turn 1 (new 10, out 2, think 4, forced 0),
    then turn 2 (30, 3, 0, 1); its 7 is session 1: one turn (100, 1). `more` is 1 while a row follows.
    s0 at 0: k = new + out = 12, more 1, turn_no 1; pauses 4; at 4: 33, forced 1, more 0, turn_no 2, ends.
    s1 at 0: 101, more 0. turns 3; the pause one job of 4 (present 4 / 10)."""
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    path = tmp_path / "p.sq"
    path.write_text("""
stage pause : delay;
workload {
  arrive batch(2);
  trace "t.csv" ordered;
  turn { set k = new + out; }
}
session {
  turn;
  loop {
    observe n = k;
    observe fo = forced;
    observe m = more;
    observe tn = turn_no;
    branch (more) { run pause (think); turn; } else { end; }
  }
}
run { horizon 10; }
""")
    r, obs = run(None, monkeypatch, path=path)
    assert obs["n"] == [(0, 0.0, 12.0), (1, 0.0, 101.0), (0, 4.0, 33.0)]
    assert obs["fo"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 4.0, 1.0)]
    assert obs["m"] == [(0, 0.0, 1.0), (1, 0.0, 0.0), (0, 4.0, 0.0)]
    assert obs["tn"] == [(0, 0.0, 1.0), (1, 0.0, 1.0), (0, 4.0, 2.0)]
    js = report_json(r)
    assert (js["arrivals"], js["ended"], js["turns"]) == (2, 2, 3)
    assert pool_or_stage(js, "pause")["present"] == pytest.approx(0.4, rel=1e-12)


def pool_or_stage(js: dict, name: str) -> dict:
    return next(e for e in js["stages"] + js["pools"] if e["name"] == name)


# ---------------------------------------------------------------------------------------------------------
# Expressions, computed by the simulator: z = serial = 0, i = 1 / z = inf
# ---------------------------------------------------------------------------------------------------------

EXPRESSIONS = [
    ("7 / 2 + z", 3.5),                       # division of whole numbers is a double's
    ("max(1 + z, 2.5, 2)", 2.5),              # three operands, whole and fractional
    ("min(i, -i, 7)", -inf),
    ("i > i", 0.0),                           # inf is not above itself
    ("i >= i", 1.0),
    ("-i < i", 1.0),
    ("i == i", 1.0),
    ("i - i == i - i", 0.0),                  # NaN equals nothing, itself included
    ("i != -i", 1.0),
    ("z ? 3 : z + 1 ? 4 : 5", 4.0),           # c ? a : (c2 ? b : d): to the right
    ("1 < 2 < 3 + z", 1.0),                   # (1 < 2) < 3: 1 < 3
    ("3 > 2 > 1 + z", 0.0),                   # (3 > 2) > 1: 1 > 1
    ("10 - 4 - 3 + z", 3.0),                  # to the left: (10 - 4) - 3
    ("2 * 3 % 4 + z", 2.0),                   # (2 * 3) % 4
    ("-2 * -3 + z", 6.0),
    ("!z + 1", 2.0),                          # (!z) + 1: the unary binds tighter
    ("-pow(2, 2) + z", -4.0),
    ("floor(7 / 2 + z) + ceil(-7 / 2 + z)", 0.0),   # 3 + (-3)
    ("exp(-i) + ln(i)", inf),                 # 0 + inf
    ("pow(z, z) + pow(i, z) + pow(2, -i)", 2.0),    # 1 + 1 + 0
    ("abs(z - 5) * sqrt(4 + z * 12)", 10.0),
    ("1 && i", 1.0),
    ("z || !i", 0.0),
    ("(z + 3) / 2 * 2", 3.0),                 # (3 / 2) * 2, not 3 / 4
    ("sum j in 3 (j * (z + 2))", 6.0),        # 0 + 2 + 4
    ("max j in 3 (z - j) + min j in 3 (z - j)", -2.0),   # 0 + (-2)
    ("(i - i) ? 1 : 2", 1.0),                 # NaN is true (docs/language.md)
    ("z * i", nan),
    ("max(i - i, 1)", 1.0),                   # max passes over NaN (docs/language.md)
    ("ln(z)", -inf),
    ("7 % -3 + z", 1.0),                      # fmod: the sign of the dividend
    ("2 + 3 * 4 == 14 && 1 || z", 1.0),       # ((2 + 3·4) == 14 && 1) || z
]


@pytest.mark.parametrize("expr, value", EXPRESSIONS, ids=[e for e, _ in EXPRESSIONS])
def test_expression_computed_by_the_simulator(monkeypatch, expr, value):
    src = f"""
stage d : delay;
workload {{ arrive batch(1); }}
session {{
  set z = serial;
  set i = 1 / z;
  observe x = {expr};
}}
run {{ horizon 1; }}
"""
    check_by_hand(monkeypatch, src, {"x": [(0, 0.0, value)]}, {})


def test_definitions_parameters_shadow_lets_and_a_set_let_reaches_later_lets(tmp_path, monkeypatch):
    """program-reference.txt, def: "Only the parameters are the definition's own. Every other name in the body
    is the program's"; let: "May read earlier constants", "overridable from the command line". x = 1, y =
    x + 1 = 2: f(5) = 5·10 + 2 = 52; g(2, x) = f(2) - 1 = 21; h(y) = 2·(0 + 1 + 2) = 6; f(f(1)) = f(12) =
    122; k(7) observes 7 + 2 = 9; g(v, v) at v = 3: f(3) - 3 = 29. With x = 4 (y = 5): 55, f(2) - 4 = 21,
    h(5) = 15, f(45) = 455, 12, f(3) - 3 = 32."""
    path = tmp_path / "p.sq"
    path.write_text("""
let x = 1;
let y = x + 1;
def f(x) = x * 10 + y;
def g(a, b) = f(a) - b;
def h(n) = sum j in 3 (n * j);
def k(x) { observe kk = x + y; }
stage d : delay;
workload { arrive batch(1); }
session {
  observe a = f(5);
  observe b = g(2, x);
  observe c = h(y);
  observe e = f(f(x));
  k(7);
  set v = 3;
  observe w = g(v, v);
}
run { horizon 1; }
""")
    for sets, want in (({}, (52, 21, 6, 122, 9, 29)), ({"x": 4}, (55, 21, 15, 455, 12, 32))):
        r = both_tiers(path, monkeypatch, sets=sets)
        got = tuple(float(r.observes[n].values[0]) for n in ("a", "b", "c", "e", "kk", "w"))
        assert got == want, sets


# ---------------------------------------------------------------------------------------------------------
# A run of no horizon drains when what is left are the timers of leases that ended before their time
# ---------------------------------------------------------------------------------------------------------

LEASES = [
    # §3: a lease keeps the allocation "until the session's release m, t seconds, or the session's end";
    # docs/simulator.md: a run of `horizon inf` ends when it drains. s0 holds q on [0,1] and leases it for
    # 5 s, but ends at 1, which ends the lease (1 cached from 1); s1 the same, then `release q;` at 2 ends
    # its lease (1 cached from 2) and it ends at 3. Nothing happens after 3: end 3 (it was 6, the time of
    # the dead timers, every figure over 6 s). used 1 on [0,1] and [0,2]: 3 / 3; cached [1,3] and [2,3]:
    # 3 / 3; live [0,1], [0,3]: 4 / 3; d's four runs of 1.
    ("horizon_inf_ends_at_the_drain_not_at_dead_lease_timers", """
pool q { cap 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold q (1) { run d (1); } cache (1) lease q (5);
  branch (serial == 1) { run d (1); release q; run d (1); }
  observe x = now;
}
run { horizon inf; }
""", {"x": [(0, 1.0, 1.0), (1, 3.0, 3.0)]},
     {"end": 3.0, "mean_live": 4 / 3, ("q", None): {"used": 1.0, "cached": 1.0, "admissions": 2},
      ("d", None): {"present": 4 / 3, "utilisation": 1.0, "completions": 4}}),
    # the same for the completion of a job a preemption took off its stage (§3: "its job leaves its stage"):
    # kv (cap 4, lifo) is no engine's memory, so its candidates are its holders. s0 holds 1 from 0; s1
    # holds 2 from 0.5 and runs f for 10 (k = 1). At 1 s0 grows by 3: 3 + 3 > 4, the latest admitted, s1,
    # is preempted off f and queued again; s0's growth fits (4), it runs d [1,2] and releases at 2. s1 is
    # admitted again at 2 (k = 2) and runs f [2,3]. end 3 (it was 10.5, the time of the completion taken
    # off f). kv used 1, 3, 4, 2 on [0,0.5], [0.5,1], [1,2], [2,3]: 8 / 3; queue s1 on [1,2]; live [0,2]
    # and [0,3]; f present [0.5,1] and [2,3], one completion; d: s1 [0,0.5], s0 [0,1], [1,2].
    ("horizon_inf_ends_at_the_drain_not_at_a_preempted_job", """
pool kv { cap 4; preempt lifo; }
stage d : delay;
stage f : fifo;
workload { arrive batch(2); }
session {
  set k = 0;
  branch (serial == 1) {
    run d (0.5);
    hold kv (2) { set k = k + 1; observe a = now; run f (k == 1 ? 10 : 1); }
  } else {
    hold kv (1) { run d (1); grow kv (3); observe g = now; run d (1); }
  }
  observe e = now;
}
run { horizon inf; }
""", {"a": [(1, 0.5, 0.5), (1, 2.0, 2.0)], "g": [(0, 1.0, 1.0)], "e": [(0, 2.0, 2.0), (1, 3.0, 3.0)]},
     {"end": 3.0, "mean_live": 5 / 3,
      ("kv", None): {"used": 8 / 3, "queue": 1 / 3, "wait": 1 / 3, "admissions": 3, "preemptions": 1},
      ("f", None): {"present": 0.5, "completions": 1}, ("d", None): {"present": 2.5 / 3, "completions": 3}}),
    # the same victim on a delay stage instead of the fifo: the same figures there.
    ("horizon_inf_ends_at_the_drain_not_at_a_preempted_delay_job", """
pool kv { cap 4; preempt lifo; }
stage d : delay;
stage f : delay;
workload { arrive batch(2); }
session {
  set k = 0;
  branch (serial == 1) {
    run d (0.5);
    hold kv (2) { set k = k + 1; observe a = now; run f (k == 1 ? 10 : 1); }
  } else {
    hold kv (1) { run d (1); grow kv (3); observe g = now; run d (1); }
  }
  observe e = now;
}
run { horizon inf; }
""", {"a": [(1, 0.5, 0.5), (1, 2.0, 2.0)], "e": [(0, 2.0, 2.0), (1, 3.0, 3.0)]},
     {"end": 3.0, "mean_live": 5 / 3, ("f", None): {"present": 0.5, "completions": 1}}),
    # and on a ps(1) stage: s1 alone there from 0.5 (its completion due at 10.5), taken off at 1; the
    # completion rescheduled with nothing left there leaves that one dead. The same figures.
    ("horizon_inf_ends_at_the_drain_not_at_a_preempted_ps_job", """
pool kv { cap 4; preempt lifo; }
stage d : delay;
stage f : ps(1);
workload { arrive batch(2); }
session {
  set k = 0;
  branch (serial == 1) {
    run d (0.5);
    hold kv (2) { set k = k + 1; observe a = now; run f (k == 1 ? 10 : 1); }
  } else {
    hold kv (1) { run d (1); grow kv (3); observe g = now; run d (1); }
  }
  observe e = now;
}
run { horizon inf; }
""", {"a": [(1, 0.5, 0.5), (1, 2.0, 2.0)], "e": [(0, 2.0, 2.0), (1, 3.0, 3.0)]},
     {"end": 3.0, "mean_live": 5 / 3, ("f", None): {"present": 0.5, "completions": 1}}),
    # and on a run over two ps(1) stages (a flow of `share maxmin`): the same figures.
    ("horizon_inf_ends_at_the_drain_not_at_a_preempted_flow", """
pool kv { cap 4; preempt lifo; }
stage d : delay;
stage f : ps(1);
stage h : ps(1);
workload { arrive batch(2); }
session {
  set k = 0;
  branch (serial == 1) {
    run d (0.5);
    hold kv (2) { set k = k + 1; observe a = now; run f, h (k == 1 ? 10 : 1); }
  } else {
    hold kv (1) { run d (1); grow kv (3); observe g = now; run d (1); }
  }
  observe e = now;
}
share maxmin;
run { horizon inf; }
""", {"a": [(1, 0.5, 0.5), (1, 2.0, 2.0)], "e": [(0, 2.0, 2.0), (1, 3.0, 3.0)]},
     {"end": 3.0, "mean_live": 5 / 3, ("f", None): {"present": 0.5, "completions": 1, "utilisation": 0.5},
      ("h", None): {"present": 0.5, "utilisation": 0.5}}),
    # §2's KV transfer: the prefiller's hold leases kvP for 30 s; the transfer (run link; load kvD; release
    # kvP) at [1,2] ends the lease, caching 4; the decode hold runs D [2,3]. The run ends at 3 (it was 31,
    # the lease's timer). kvP used 4 on [0,2] (held, then leased): 8 / 3, cached [2,3]: 4 / 3; kvD used 4
    # on [1,3]: 8 / 3.
    ("horizon_inf_a_transfer_ends_the_prefillers_lease", """
pool kvP { cap 8; }
pool kvD { cap 8; }
stage link : delay;
stage P : delay;
stage D : delay;
workload { arrive batch(1); }
session {
  hold kvP (4) { run P (1); } cache (4) lease kvP (30);
  hold kvD (4) { transfer on link (1) from kvP to kvD (4); run D (1); } cache (4);
  observe e = now;
}
run { horizon inf; }
""", {"e": [(0, 3.0, 3.0)]},
     {"end": 3.0, ("kvP", None): {"used": 8 / 3, "cached": 4 / 3, "holders": 2 / 3},
      ("kvD", None): {"used": 8 / 3}, ("link", None): {"completions": 1, "present": 1 / 3}}),
    # a lease whose time comes while its session lives still ends the run when it is due: s0 leases q for
    # 2 s from 1 and runs d until 5; the lease ends at 3 (cached from 3), the run at 5. used 1 on [0,3]:
    # 3 / 5; cached [3,5]: 2 / 5.
    ("horizon_inf_a_lease_that_runs_its_time", """
pool q { cap 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold q (1) { run d (1); } cache (1) lease q (2);
  run d (4);
  observe x = now;
}
run { horizon inf; }
""", {"x": [(0, 5.0, 5.0)]}, {"end": 5.0, ("q", None): {"used": 0.6, "cached": 0.4}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in LEASES], ids=[c[0] for c in LEASES])
def test_leases_and_the_drain_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_a_finite_horizon_past_a_dead_lease_timer_notes_the_drain(monkeypatch):
    """The same drain under `horizon 3` with a lease of 5 s ended at 1 by the session's end: the run drained at
    1 (nothing left but the dead timer at 6), and the report's note says so; the timer had counted as an event
    left, and there was no note."""
    r, _ = check_by_hand(monkeypatch, """
pool q { cap 4; }
stage d : delay;
workload { arrive batch(1); }
session { hold q (1) { run d (1); } cache (1) lease q (5); }
run { horizon 3; }
""", {}, {"end": 3.0})
    notes = report_json(r)["notes"]
    assert any("every session ended by t=1 and none was left to arrive" in n for n in notes), notes


SEND_TIMES_CSV = "session,turn,new,out,think,forced\n0,1,5,1,2.5,0\n1,1,7,1,1,0\n1,2,3,1,0.5,0\n"


def test_trace_send_times_replayed_under_no_horizon(tmp_path, monkeypatch):
    """docs/language.md, Workload: a log of send times is `arrive batch(N)` beside `trace … ordered`, each
    session waiting its row's think first (`turn; run until (think);`), the run drained at `horizon inf`.
    s1 sends at 1 (svc 7 / 10: [1,1.7]), waits its next think 0.5 and sends at 2.2 ([2.2,2.5]); s0 sends at
    2.5 and, its event scheduled before s1's completion at 2.5, waits for the slot until s1 releases at the
    same instant: [2.5,3]. end 3; until present 2.5 + 1 + 0.5 over 3; svc busy 1.5 / 3; the request
    rows sent at 1, 2.2, 2.5, each e2el its service (0.7, 0.3, 0.5)."""
    (tmp_path / "t.csv").write_text(SEND_TIMES_CSV)
    path = tmp_path / "p.sq"
    path.write_text("""
pool slots { cap 1; }
stage until : delay;
stage svc : fifo;
workload { arrive batch(2); trace "t.csv" ordered; }
session {
  turn;
  run until (think);
  loop {
    set t0 = now;
    hold slots (1) { run svc (new / 10); }
    record request { sent = t0; first_token = now; last_token = now; prompt = new; output = out; cached = 0; }
    branch (more) { turn; run until (think); } else { end; }
  }
}
run { horizon inf; }
""")
    r, _ = run(None, monkeypatch, path=path)
    js = report_json(r)
    assert (js["end"], js["arrivals"], js["ended"], js["turns"]) == (3.0, 2, 2, 3)
    assert pool_or_stage(js, "until")["present"] == pytest.approx(4 / 3, rel=1e-12)
    assert pool_or_stage(js, "svc")["utilisation"] == pytest.approx(0.5, rel=1e-12)
    t = r.records("request")
    assert list(t["sent"]) == pytest.approx([1.0, 2.2, 2.5], rel=1e-12)
    assert [b - a for a, b in zip(t["sent"], t["last_token"])] == pytest.approx([0.7, 0.3, 0.5], rel=1e-12)
    assert js["requests"]["total_input_tokens"] == 15.0


def test_a_count_of_dead_timers_that_is_off_ends_no_run_early(monkeypatch):
    """Simulation.dead_timers is a trigger, not the rule: the loop stops early only when every event left is
    one that will do nothing (engine.dead_event), so a count that is too high (a plugin's kind derived from
    a built-in one, counting at its detach and completing by a method of its own) ends no run before its
    last event. The program of a delay run of 1 and one of 4 under horizon inf ends at 4 with the count set
    to 1 before the run (once the first event is done, one event is left: counted dead, it is not), as
    without it."""
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    prog = serq_frontend.compile(source="""
stage d : delay;
workload { arrive batch(2); }
session { run d (1 + 3 * serial); observe f = now; }
run { horizon inf; }
""", sets={}, defs={})
    sim = Simulation(prog, registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                     check_invariants=False, progress=False, trace_path=None, max_events=None)
    sim.dead_timers = 1
    r = sim.run()
    js = report_json(r)
    assert js["end"] == 4.0
    assert list(r.observes["f"].values) == [1.0, 4.0]
