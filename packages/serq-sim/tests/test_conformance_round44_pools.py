"""Conformance of language.txt §3 (Pools, Ties) and pool-reference.txt by hand, round 44: the pools' rules in
the combinations the earlier rounds held least, each in a small program on constant times whose figures are
worked out event by event.

* pool-reference.txt, `evict`: "Keys are evaluated per cache entry at the Evict moment and may read … the
  entry's session's attributes: current while the session lives, as they were at its last release after it
  has ended."
* pool-reference.txt, `queue`: "by reevaluates keys for every waiting hold before each admission attempt …
  Keys may read visible session attributes, now and pool/stage queries": a key reading `cachedin`, which an
  eviction changes while the session waits.
* §3, Pools: "the rest of that entry stays in the cache as a dead entry with the same age, unusable, until
  evicted"; "Eviction is per entry, or per block from the tail of the entry when the pool has block b".
* pool-reference.txt, `reserve held`: "Each hold counts separately, including nested holds. Reservations end
  with the hold's scope, release or preemption; leases retain none."
* §3, Pools: "A hold's lease m (t) keeps its allocation on m past the scope's end … until the session's
  release m, t seconds, or the session's end, and cache applies then"; a session holding two leases of one
  pool (the spec speaks of one; docs/language.md says which a `release` ends).
* pool-reference.txt, `preempt`: "requeue head (the default) places it first, ahead of policy keys. requeue
  tail treats it as a newcomer: FIFO places it last"; "If no stage names it as memory, candidates are holders
  with an active hold scope."
* §3, Ties: "A pool's growers: the order they stalled, the head blocking the rest", retried before the
  pool's admissions (docs/language.md, "A growth that fits grows at once").
* pool-reference.txt, `reserve held`: "Cached prefixes are evicted when units are allocated, not when
  reserved"; §3, Pools: "A session that holds and leases nothing on m releases nothing (a hold re-executed
  after a preemption reaches the statement again)".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value) and
the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand

POOLS = [
    # s0 (prio 1) and s1 (prio 2) cache 4 each at t=1 (cap 10: 8 cached). s0 lives on and sets prio 5; s1
    # sets prio 10 and ends at 1. At t=2 s2 holds 6: 6 + 8 > 10, one entry goes. s0's key is its current 5
    # (alive), s1's its prio at its release, 2 (ended): s1's entry is evicted, so s0 reads cachedin 4 at 3.
    # (Reading s1's latest 10, or s0's 1 at its release, would evict s0's and read 0.) Cached: 8 on [1,2],
    # 4 on [2,20]: 80/20 = 4. Used: 8 on [0,1], 6 on [2,3]: 14/20 = 0.7.
    ("an_eviction_key_reads_a_living_session_now_and_an_ended_one_at_its_release", """
pool p { cap 10; evict by (prio); }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 0 ? 1 : serial == 1 ? 2 : 0;
  branch (serial < 2) {
    hold p (4) { run d (1); } cache (4);
    set prio = serial == 0 ? 5 : 10;
    branch (serial == 0) { run d (2); observe c = cachedin(p); }
  } else {
    run d (2);
    hold p (6) { run d (1); }
  }
}
run { horizon 20; }
""", {"c": [(0, 3.0, 4.0)]},
     {("p", None): {"cached": 4.0, "used": 0.7, "evicted_entries": 1, "evicted_units": 4.0, "admissions": 3}}),
    # s1, s2, s3 cache 2, 4, 6 at t=1 (cap 20, 12 cached) and join g's queue (s0 holds g on [0,5]) with keys
    # (-cachedin(p), serial): -2, -4, -6. At t=2 s4 holds 14: 14 + 12 > 20, evict by (-size) takes s3's 6
    # (14 + 6 = 20). At t=5 the keys are read again: s1 -2, s2 -4, s3 0: s2 at 5, s1 at 6, s3 at 7 (the
    # order of the keys at joining would have been s3, s2, s1). g: s1 waits 5, s2 4, s3 6 (joined at 1):
    # queue 15/20 = 0.75, mean wait (0 + 4 + 5 + 6)/4 = 3.75. p: cached 12 on [1,2], 6 on [2,20]: 120/20 = 6.
    ("a_queue_key_that_reads_cachedin_follows_an_eviction_while_the_session_waits", """
pool p { cap 20; evict by (-size); }
pool g { cap 1; queue by (-cachedin(p), serial); }
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial == 0) {
    hold g (1) { run d (5); }
  } else { branch (serial == 4) {
    run d (2);
    hold p (14) { run d (1); }
  } else {
    hold p (serial * 2) { run d (1); } cache (serial * 2);
    hold g (1) { observe t = now; observe c = cachedin(p); run d (1); }
  } }
}
run { horizon 20; }
""", {"t": [(2, 5.0, 5.0), (1, 6.0, 6.0), (3, 7.0, 7.0)], "c": [(2, 5.0, 4.0), (1, 6.0, 2.0), (3, 7.0, 0.0)]},
     {("g", None): {"queue": 0.75, "wait": 3.75, "admissions": 4},
      ("p", None): {"cached": 6.0, "evicted_entries": 1, "evicted_units": 6.0}}),
    # cap 16, block 2, lru. s0 caches 8 at t=1, s1 4 at t=2. At t=3 s0's hold p (2) reuse (2) consumes 2
    # (cached 2) and leaves 6 dead with s0's release time 1; it caches 2 again at t=4. At t=5 s2 holds 8:
    # 8 + 6 + 4 + 2 = 20 > 16, 4 units go, least recently released first, block by block from the tail:
    # the dead entry (released at 1) loses 2 blocks, s1's (2) and s0's new one (4) stay: at 6 s0 reads 2,
    # s1 4. No entry leaves whole: evicted_entries 0, evicted_units 4. Cached 8 on [1,2], 12 on [2,3], 10
    # on [3,4], 12 on [4,5], 8 on [5,10]: 82/10 = 8.2; used s0's 8 on [0,1], s1's 4 on [1,2], s0's 2 on
    # [3,4], s2's 8 on [5,6]: 22/10 = 2.2.
    ("a_dead_remainder_keeps_its_release_time_and_loses_blocks_from_its_tail", """
pool p { cap 16; block 2; evict lru; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold p (8) { run d (1); } cache (8);
    run d (2);
    hold p (2) reuse (2) { observe c0 = cached; run d (1); } cache (2);
    run d (2);
    observe k0 = cachedin(p);
  } else { branch (serial == 1) {
    run d (1);
    hold p (4) { run d (1); } cache (4);
    run d (4);
    observe k1 = cachedin(p);
  } else {
    run d (5);
    hold p (8) { observe u = used(p); run d (1); }
  } }
}
run { horizon 10; }
""", {"c0": [(0, 3.0, 2.0)], "k0": [(0, 6.0, 2.0)], "k1": [(1, 6.0, 4.0)], "u": [(2, 5.0, 8.0)]},
     {("p", None): {"cached": 8.2, "used": 2.2, "evicted_entries": 0, "evicted_units": 4.0, "admissions": 4}}),
    # reserve held, cap 10. s0: hold p (2) reserve (6) (u = 6 - 2 = 4) around hold p (1) reserve (3) (u = 2):
    # 3 used + 6 unallocated = 9. At 1 s1's hold of 1 fits (9 + 1 = 10), s2's does not (11): it waits
    # until the nested hold ends at 2 (4 used + 4 reserved + 1 = 9). At 3 s3 asks 6: 4 + 4 + 6 > 10, it
    # waits; at 4 the outer scope ends into a lease of 2, which keeps no reservation: 4 + 6 = 10, admitted
    # at 4. s0 releases at 6. Used: 3, 4, 4, 4, 10, 10, then 8 to 11, 7 to 12, 6 to 14: (3 + 4 + 8 + 20 +
    # 40 + 7 + 12)/20 = 4.7. Queue: s2 on [1,2], s3 on [3,4]: 2/20 = 0.1; wait (1 + 1)/5 = 0.4.
    ("reserve_held_counts_nested_holds_apart_and_a_lease_keeps_none", """
pool p { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) {
    hold p (2) reserve (6) {
      hold p (1) reserve (3) { run d (2); }
      run d (2);
    } lease p (inf);
    run d (2);
    release p;
  } else {
    run d (serial == 3 ? 3 : 1);
    hold p (serial == 3 ? 6 : 1) { observe t = now; run d (10); }
  }
}
run { horizon 20; }
""", {"t": [(1, 1.0, 1.0), (2, 2.0, 2.0), (3, 4.0, 4.0)]},
     {("p", None): {"used": 4.7, "queue": 0.1, "wait": 0.4, "admissions": 5}}),
    # Two leases of one pool: 2 units (scope ends at 1) and 3 (scope ends at 2). The first release ends the
    # earlier lease: 3 used, its 2 cached; the second ends the other: 0 used, and the session's one prefix
    # becomes the 3 it cached last (docs/language.md, "A session has one prefix of its own per pool").
    # Used 2 on [0,1], 5 on [1,2]: 7/10; cached 3 on [2,10]: 24/10 = 2.4; holders 1 + 2 = 3/10.
    ("a_release_ends_the_earlier_of_two_leases", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold p (2) { run d (1); } cache (2) lease p (inf);
  hold p (3) { run d (1); } cache (3) lease p (inf);
  observe u1 = used(p);
  release p;
  observe u2 = used(p);
  observe c2 = cachedin(p);
  release p;
  observe u3 = used(p);
  observe c3 = cachedin(p);
  run d (1);
}
run { horizon 10; }
""", {"u1": [(0, 2.0, 5.0)], "u2": [(0, 2.0, 3.0)], "c2": [(0, 2.0, 2.0)], "u3": [(0, 2.0, 0.0)],
      "c3": [(0, 2.0, 3.0)]},
     {("p", None): {"used": 0.7, "cached": 2.4, "holders": 0.3, "evicted_entries": 0}}),
    # A lease of 3 s from the scope's end at 1 ends at 4 while its session waits for g (s1 holds g on
    # [0,6]); its cache (x) is read then, x = 2 (set after the scope): 2 cached from 4. s0 reads cachedin 2
    # and holders 0 at 6. p: used 4 on [0,4] = 1.6, cached 2 on [4,10] = 1.2, holders 0.4; g: s0 waits 5:
    # queue 0.5, wait 2.5. The gauges hold the same: used 1.6 (max 4), holders 0.4 (max 1).
    ("a_lease_runs_out_while_its_session_waits_and_caches_what_its_clause_reads_then", """
pool p { cap 10; }
pool g { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    set x = 4;
    hold p (4) { run d (1); } cache (x) lease p (3);
    set x = 2;
    hold g (1) { observe c = cachedin(p); observe h = holders(p); }
  } else {
    hold g (1) { run d (6); }
  }
}
gauge u = used(p);
gauge k = holders(p);
run { horizon 10; }
""", {"c": [(0, 6.0, 2.0)], "h": [(0, 6.0, 0.0)]},
     {("p", None): {"used": 1.6, "cached": 1.2, "holders": 0.4},
      ("g", None): {"queue": 0.5, "wait": 2.5},
      ("gauge", "u"): {"mean": 1.6, "min": 0.0, "max": 4.0}, ("gauge", "k"): {"mean": 0.4, "max": 1.0}}),
    # No stage counts p: the candidates are its holders. s0 (prio 2) and s1 (prio 1) hold 4 each; s2 joins
    # at 0.5 for 3 (11 > 10). At 1 s0 grows 3 (11): the least key, s1, is preempted (4 back) and goes to the
    # tail, behind s2: s0 grows to 7, s2 fits (10) at 1, s1 does not (14) until s0 ends at 2. Used 8, 10,
    # then s1's 4 on [2,7]: 38/10; queue s2 0.5 + s1 1 = 0.15; wait (0 + 0 + 0.5 + 1)/4.
    ("preempt_by_requeue_tail_puts_the_victim_behind_the_queue", """
pool p { cap 10; preempt by (prio) requeue tail; }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 0 ? 2 : serial == 1 ? 1 : 3;
  branch (serial == 0) {
    hold p (4) { run d (1); grow p (3); observe g0 = now; run d (1); }
  } else { branch (serial == 1) {
    hold p (4) { observe a1 = now; run d (5); }
  } else {
    run d (0.5);
    hold p (3) { observe a2 = now; run d (1); }
  } }
}
run { horizon 10; }
""", {"g0": [(0, 1.0, 1.0)], "a1": [(1, 0.0, 0.0), (1, 2.0, 2.0)], "a2": [(2, 1.0, 1.0)]},
     {("p", None): {"used": 3.8, "queue": 0.15, "wait": 0.375, "admissions": 4, "preemptions": 1,
                    "holders": 0.9}}),
    # The same with requeue head: s1 re-enters ahead of s2 and blocks it (7 + 4 > 10) until s0 ends at 2,
    # where both fit (4 + 3): s2 at 2. Used 8, 7, then 7 on [2,3] and 4 on [3,7]: 8 + 7 + 7 + 16 = 38/10;
    # queue s2 1.5 + s1 1 = 0.25; wait (0 + 0 + 1.5 + 1)/4 = 0.625.
    ("preempt_by_requeue_head_puts_the_victim_ahead_of_the_queue", """
pool p { cap 10; preempt by (prio) requeue head; }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 0 ? 2 : serial == 1 ? 1 : 3;
  branch (serial == 0) {
    hold p (4) { run d (1); grow p (3); observe g0 = now; run d (1); }
  } else { branch (serial == 1) {
    hold p (4) { observe a1 = now; run d (5); }
  } else {
    run d (0.5);
    hold p (3) { observe a2 = now; run d (1); }
  } }
}
run { horizon 10; }
""", {"g0": [(0, 1.0, 1.0)], "a1": [(1, 0.0, 0.0), (1, 2.0, 2.0)], "a2": [(2, 2.0, 2.0)]},
     {("p", None): {"used": 3.8, "queue": 0.25, "wait": 0.625, "admissions": 4, "preemptions": 1}}),
    # preempt none. s0 and s1 hold 4 each; s2 queues at 0.5 for 4; s0's growth by 4 at 1 waits (12). At 2 s1
    # gives 4 back: the grower is retried first and grows (8), and s2 (12) waits until s0 ends at 3.
    # Used 8 on [0,3], 4 on [3,4]: 2.8; queue 2.5/10; wait 2.5/3; holders (3 + 2 + 1)/10.
    ("a_stalled_grower_is_served_before_the_queue", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold p (4) { run d (1); grow p (4); observe g = now; run d (1); }
  } else { branch (serial == 1) {
    hold p (4) { run d (2); }
  } else {
    run d (0.5);
    hold p (4) { observe a = now; run d (1); }
  } }
}
run { horizon 10; }
""", {"g": [(0, 2.0, 2.0)], "a": [(2, 3.0, 3.0)]},
     {("p", None): {"used": 2.8, "queue": 0.25, "wait": 2.5 / 3, "holders": 0.6, "preemptions": 0}}),
    # reserve held, cap 10. s0 caches 6 at 1. At 2 s1 holds 2 reserving 8 (0 + 0 + 8 ≤ 10): 2 allocated,
    # nothing evicted (2 + 6 = 8), since "Cached prefixes are evicted when units are allocated, not when
    # reserved". At 2.5 s2's 1 fits (2 + 6 + 1 = 9) and is allocated beside the cache (3 + 6). At 3 s1 grows
    # 4 within its own reservation (3 + 0 + 4 ≤ 10): 7 allocated + 6 cached > 10, the entry (no block) goes
    # whole. s0 reads its 6 at 2.5 and 0 at 3.5. Used 6 on [0,1], 2 on [2,2.5], 3 on [2.5,3], 7 on [3,4], 1
    # on [4,4.5]: 16/10; cached 6 on [1,3]: 1.2.
    ("reserve_held_evicts_the_cache_when_units_are_allocated_not_when_reserved", """
pool p { cap 10; reserve held; evict lru; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold p (6) { run d (1); } cache (6);
    run d (1.5);
    observe c1 = cachedin(p);
    run d (1);
    observe c2 = cachedin(p);
  } else { branch (serial == 1) {
    run d (2);
    hold p (2) reserve (8) { observe u1 = used(p); run d (1); grow p (4); observe u2 = used(p); run d (1); }
  } else {
    run d (2.5);
    hold p (1) { observe a = now; run d (2); }
  } }
}
run { horizon 10; }
""", {"c1": [(0, 2.5, 6.0)], "c2": [(0, 3.5, 0.0)], "u1": [(1, 2.0, 2.0)], "u2": [(1, 3.0, 7.0)],
      "a": [(2, 2.5, 2.5)]},
     {("p", None): {"used": 1.6, "cached": 1.2, "evicted_entries": 1, "evicted_units": 6.0, "admissions": 3}}),
    # s0 leases 3 of p, then in hold kv (2) ends the lease with release p (3 cached) and grows kv by 3 at 2:
    # 2 + 2 + 3 > 6, and preempt by (prio) takes the least key, s0 itself (prio 0 beside s1's 1). Its hold
    # runs again at once (4 ≤ 6) and reaches release p again: "A session that holds and leases nothing on m
    # releases nothing" — p keeps its 3 cached and 0 used. The second try grows 1 (5) at 3 and ends at 4.
    # p: used 3/12, cached 3 · 11/12; kv: s1's 2 on [0,10], s0's 2, 2, 3 on [1,4]: 27/12.
    ("a_hold_run_again_after_its_preemption_releases_no_lease_twice", """
pool p { cap 10; }
pool kv { cap 6; preempt by (prio); }
stage d : delay;
workload { arrive batch(2); }
session {
  set prio = serial;
  set tries = 0;
  branch (serial == 0) {
    hold p (3) { run d (1); } cache (3) lease p (inf);
    hold kv (2) {
      set tries = tries + 1;
      release p;
      observe up = used(p);
      observe cp = cachedin(p);
      run d (1);
      grow kv (tries == 1 ? 3 : 1);
      observe g = now;
      run d (1);
    }
  } else {
    hold kv (2) { run d (10); }
  }
}
run { horizon 12; }
""", {"up": [(0, 1.0, 0.0), (0, 2.0, 0.0)], "cp": [(0, 1.0, 3.0), (0, 2.0, 3.0)], "g": [(0, 3.0, 3.0)]},
     {("p", None): {"used": 0.25, "cached": 2.75, "evicted_entries": 0},
      ("kv", None): {"used": 2.25, "preemptions": 1, "admissions": 3, "wait": 0.0}}),
    # The inner hold caches 2 at 1; the outer's cache (0) at 2 caches nothing, and a release that caches
    # nothing leaves the session's prefix as it was (docs/language.md, "A session has one prefix of its own
    # per pool"): 2 read at 2, and consumed by the next hold (cached 2). Cached 2 on [1,2], 0 on [2,3] (the 2
    # are allocated), 3 on [3,10]: 23/10; used 3, 1, 3: 0.7.
    ("a_release_that_caches_nothing_leaves_the_sessions_prefix", """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (1) { hold m (2) { run d (1); } cache (2); run d (1); } cache (0);
  observe c = cachedin(m);
  hold m (3) { observe k = cached; run d (1); } cache (3);
}
run { horizon 10; }
""", {"c": [(0, 2.0, 2.0)], "k": [(0, 2.0, 2.0)]},
     {("m", None): {"used": 0.7, "cached": 2.3, "evicted_entries": 0, "admissions": 3}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in POOLS], ids=[c[0] for c in POOLS])
def test_pools_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


STUCK = """
pool p { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run d (0.1);
    set turn = 0;
    loop {
      set tries = 0;
      hold p (2) {
        set tries = tries + 1;
        run d (1);
        grow p (tries == 1 ? 4 : 1);
        observe g = now;
        run d (1);
      } LEASE;
      set turn = turn + 1;
      branch (turn == 2) { end; }
    }
  } else {
    hold p (3) { run d (10); }
  }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("lease, g, figures", [
    # s1 holds 3 on [0,10]. s0's hold of 2 (admitted at 0.1, after s1) grows 4 at 1.1: 9 > 6, lifo takes
    # the last admitted, s0 itself (position 0). Admitted again at once, it grows 1 at 2.1 (6) and ends at
    # 3.1. Its second hold does the same: preempted at 4.1, again at position 0, grown at 5.1. Each execution
    # of the hold was preempted once, so no session is stuck ("preempted a second time without having
    # advanced past the position of their previous preemption": the first hold completed). Used 3 on
    # [0,0.1], 5, 5, 6, 5, 5, 6 on the unit steps to 6.1, 3 to 10: 44/20.
    ("", [(0, 2.1, 2.1), (0, 5.1, 5.1)], {"used": 2.2, "preemptions": 2, "stuck": 0}),
    # The same with a lease of 0 s, which ends at the scope's instant: the same run, and no session stuck
    # (it counted s0 stuck: a hold that ended into a lease kept its preemption's position for the next).
    ("lease p (0)", [(0, 2.1, 2.1), (0, 5.1, 5.1)], {"used": 2.2, "preemptions": 2, "stuck": 0}),
    # A lease kept to the end: s0's 3 units stay leased from 3.1, so its second hold (2) waits for s1 to
    # leave at 10 (3 + 3 + 2 > 6); at 11 its growth by 4 takes itself (the lease is no candidate), and it
    # grows 1 at 12. Still one preemption of each execution: no session stuck. Used 3, 5 on [0.1,2.1], 6 on
    # [2.1,10], 5 on [10,12], 6 on [12,13]: 73.7/20; the queue 6.9/20.
    ("lease p (inf)", [(0, 2.1, 2.1), (0, 12.0, 12.0)],
     {"used": 3.685, "preemptions": 2, "stuck": 0, "queue": 0.345}),
])
def test_a_hold_that_ends_into_a_lease_starts_stuck_again(monkeypatch, lease, g, figures):
    """§3, Statistics: `stuck` counts "sessions preempted a second time without having advanced past the
    position of their previous preemption"; a session whose hold completed has advanced past it, whether the
    scope's end released its allocation or leased it."""
    _r, js = check_by_hand(monkeypatch, STUCK.replace("LEASE", lease), {"g": g}, {("p", None): figures})
    assert not any("stuck" in note for note in js["notes"]), js["notes"]
