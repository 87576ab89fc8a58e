"""Conformance of language.txt §3, Pools and Ties, by hand, in the cases a port of the reference's tests brings:

* "hold m₁(u₁) reserve(r₁), m₂(u₂) … joins the queue of m₁ … The head of a queue is admitted when every pool
  of its hold has room for its reserve units next to the allocated units (used + r ≤ cap, r = max(u,
  reserve); cached prefixes never block) … the first that does not fit blocks the rest (head-of-line
  blocking)", and Ties: "Each pool has one queue, and a hold on several pools waits in its first pool's;
  where the heads of two queues both wait for room in one pool … the pool declared first is served first";
* "Other entries are evicted in the pool's order until allocations and cache fit … Eviction is per entry, or
  per block from the tail of the entry when the pool has block b; evict lru orders by release time and then
  release order";
* "A hold's lease m (t) keeps its allocation on m past the scope's end";
* "on admission the session consumes at most ρ units of its own cached prefix (cached := what it
  consumed); the rest of that entry stays in the cache as a dead entry", "release m inside the body does the
  same for m alone, at that point";
* "A request that can never fit — its units, or its reserve when that is larger, above the cap, as they
  evaluate when the session joins the queue — is rejected: the session ends";
* "with preempt lifo the holder … was admitted last … (a pool that is no engine's memory preempts its most
  recently admitted holder): its job leaves its stage, its hold is released … and it re-enters the head of
  the pool's queue with the hold statement to execute again";
* Waiting selection: "queue by (k1, …) reevaluates pure keys for every waiting hold before each admission
  attempt. waited is elapsed simulation seconds since that hold entered the queue".

Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples); the observes are asserted as (session, time, value) and the pools' figures as the JSON report
reads them (time averages over the horizon 10). Every number is derived in the case's comment.
"""

from __future__ import annotations

import pytest
from conform import pool_json, run

CASES = [
    # A hold on a and b waits in a's queue. s0 holds b over [0, 2]. s1 at 0.5 holds a (1), b (1): a has room,
    # b not, so it waits at the head of a's queue; s2 at 1 holds a (1) alone and waits behind it (head of
    # line), though a is empty. At 2 s1 is admitted (t1 = 2), [2, 3]; s2 at 3 (t2 = 3). a: used 2 over 10,
    # queued [0.5, 2] and [1, 3]: 3.5 / 10, waits 1.5 and 2 (mean 1.75); b: nobody queued there.
    ("waits_in_its_first_pools_queue", """
pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold b (1) { run d (2); } }
  branch (serial == 1) { run d (0.5); hold a (1), b (1) { observe t1 = now; run d (1); } }
  branch (serial == 2) { run d (1); hold a (1) { observe t2 = now; run d (1); } }
}
run { horizon 10; }
""", {"t1": [(1, 2.0, 2.0)], "t2": [(2, 3.0, 3.0)]},
     {"a": {"used": 0.2, "queue": 0.35, "wait": 1.75, "admissions": 2},
      "b": {"used": 0.3, "queue": 0.0, "admissions": 2}}),
    # The same with s1's pools the other way round: it waits in b's queue, and s2's hold of a finds a's queue
    # empty and a free: admitted at 1, [1, 2]. At 2 both b and a are free: s1 in at 2. a: used 1 + 1 over
    # 10, no queue; b: s1 queued [0.5, 2]: 0.15.
    ("first_pool_decides_the_queue", """
pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold b (1) { run d (2); } }
  branch (serial == 1) { run d (0.5); hold b (1), a (1) { observe t1 = now; run d (1); } }
  branch (serial == 2) { run d (1); hold a (1) { observe t2 = now; run d (1); } }
}
run { horizon 10; }
""", {"t1": [(1, 2.0, 2.0)], "t2": [(2, 1.0, 1.0)]},
     {"a": {"used": 0.2, "queue": 0.0, "admissions": 2}, "b": {"used": 0.3, "queue": 0.15, "wait": 0.75}}),
    # Two queues' heads wait for room in m: s1 (joined a's queue at 0.5) and s2 (b's, at 1). b is declared
    # first, so at 2, when s0 gives m back, s2 is served first though it joined later: s2 [2, 3], s1 [3, 4].
    ("the_pool_declared_first_is_served_first", """
pool b { cap 10; }
pool a { cap 10; }
pool m { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (2); } }
  branch (serial == 1) { run d (0.5); hold a (1), m (1) { observe t = now; run d (1); } }
  branch (serial == 2) { run d (1); hold b (1), m (1) { observe t = now; run d (1); } }
}
run { horizon 10; }
""", {"t": [(2, 2.0, 2.0), (1, 3.0, 3.0)]},
     {"a": {"queue": 0.25, "wait": 2.5}, "b": {"queue": 0.1, "wait": 1.0}, "m": {"used": 0.4, "admissions": 3}}),
    # Cached prefixes never block: s0 caches 4 (the whole cap) at 1; s1 at 2 takes 3 at once, evicting the
    # entry whole (no block: eviction is per entry). s0 reads 0 at 3. used 4 + 3 over 10; cached 4 on [1, 2].
    ("cache_never_blocks_an_entry_goes_whole", """
pool m { cap 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (4) { run d (1); } cache (4); run d (2); observe c = cachedin(m); }
  else { run d (2); hold m (3) { observe t = now; run d (1); } }
}
run { horizon 10; }
""", {"c": [(0, 3.0, 0.0)], "t": [(1, 2.0, 2.0)]},
     {"m": {"used": 0.7, "cached": 0.4, "evicted_entries": 1, "evicted_units": 4.0, "admissions": 2}}),
    # The same with block 1: eviction per block from the entry's tail, 3 blocks, and s0 keeps its first 1.
    # cached 4 on [1, 2], 1 on [2, 10]: 12 / 10; no entry gone whole.
    ("a_block_pool_evicts_from_the_tail", """
pool m { cap 4; block 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (4) { run d (1); } cache (4); run d (2); observe c = cachedin(m); }
  else { run d (2); hold m (3) { observe t = now; run d (1); } }
}
run { horizon 10; }
""", {"c": [(0, 3.0, 1.0)], "t": [(1, 2.0, 2.0)]},
     {"m": {"used": 0.7, "cached": 1.2, "evicted_entries": 0, "evicted_units": 3.0}}),
    # reserve: s0 holds 6 of 10 over [0, 3]. s1 at 1 asks 2 reserving 5: 6 + 5 > 10, it waits; s2 at 1.5
    # asks 1, which would fit, and waits behind s1. At 3 both are admitted (2 + 1 allocated, not 5), in one
    # settling before either body runs (the sessions one event makes ready read the pool together: used 3
    # for both, docs/language.md). used 6
    # · 3 + 2 · 2 + 1 · 1 = 23 / 10; queued 2 + 1.5 = 3.5 / 10; waits 0, 2, 1.5 (mean 7/6).
    ("reserve_blocks_the_head_and_those_behind", """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (6) { run d (3); } }
  branch (serial == 1) { run d (1); hold m (2) reserve (5) { observe t = now * 100 + used(m); run d (2); } }
  branch (serial == 2) { run d (1.5); hold m (1) { observe t = now * 100 + used(m); run d (1); } }
}
run { horizon 10; }
""", {"t": [(1, 3.0, 303.0), (2, 3.0, 303.0)]},
     {"m": {"used": 2.3, "queue": 0.35, "wait": 7 / 6, "admissions": 3}}),
    # release m in the body gives the hold's allocation back at once, caching per the hold's clause (4); the
    # session goes on (its observes at 1 read used 0, cached 4) and the scope's end has nothing left. s1,
    # waiting since 0.5 for all 8, is admitted at 1 after s0's commands, evicting s0's 4: s0 reads 0 at 2.
    ("release_in_the_body", """
pool m { cap 8; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (4) { run d (1); release m; observe u = used(m); observe c = cachedin(m); run d (1); } cache (4);
    observe c2 = cachedin(m);
  } else { run d (0.5); hold m (8) { observe t = now; run d (1); } }
}
run { horizon 10; }
""", {"u": [(0, 1.0, 0.0)], "c": [(0, 1.0, 4.0)], "c2": [(0, 2.0, 0.0)], "t": [(1, 1.0, 1.0)]},
     {"m": {"used": 1.2, "evicted_entries": 1, "evicted_units": 4.0, "admissions": 2}}),
    # queue by (waited): the least waited, the last to join, goes first: s0 [0, 1]; s1, s2, s3 join at 0.1,
    # 0.2, 0.3; at 1 s3 (waited 0.7), at 2 s2, at 3 s1.
    ("queue_by_waited_serves_the_last_joined", """
pool m { cap 1; queue by (waited); }
stage d : delay;
workload { arrive batch(4); }
session { run d (serial * 0.1); hold m (1) { observe t = now; run d (1); } }
run { horizon 10; }
""", {"t": [(0, 0.0, 0.0), (3, 1.0, 1.0), (2, 2.0, 2.0), (1, 3.0, 3.0)]},
     {"m": {"used": 0.4, "admissions": 4}}),
    # A hold that can never fit is rejected when it joins, its units and reserve read then: s0 asks 5 of 4,
    # s1 1 reserving 6: both rejected at 0, their sessions end (no `after`). s2 holds 4 over [0, 1]; s3 joins
    # at 0.5 asking 2 + used(m) = 6, a demand that reads the state: not one that can never fit (docs/
    # language.md, "A hold whose demand reads the state is not rejected at its join"), it waits and is
    # admitted at 1 with 2 + 0. Two rejections; used 4 + 2 over 10.
    ("rejected_when_joining_a_state_demand_waits", """
pool m { cap 4; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (5) { run d (1); } }
  branch (serial == 1) { hold m (1) reserve (6) { run d (1); } }
  branch (serial == 2) { hold m (4) { run d (1); } }
  branch (serial == 3) { run d (0.5); hold m (2 + used(m)) { run d (1); } }
  observe after = now;
}
run { horizon 10; }
""", {"after": [(2, 1.0, 1.0), (3, 2.0, 2.0)]}, {"m": {"rejections": 2, "admissions": 2, "used": 0.6}}),
    # evict lru: release time, then release order. s2 caches 2 at 0.5; s0 and s1 2 each at 1 (s0 released
    # first, its run scheduled first). At 2 s3 needs 4 of the full 6: s2's entry (0.5) goes, then s0's (1,
    # released before s1's). At 3: s0 0, s1 2, s2 0. cached 2 [0.5, 1], 6 [1, 2], 2 from 2: 1 + 6 + 16.
    ("lru_then_release_order", """
pool m { cap 6; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 2) { hold m (2) { run d (1); } cache (2); }
  branch (serial == 2) { hold m (2) { run d (0.5); } cache (2); }
  branch (serial == 3) { run d (2); hold m (4) { run d (1); } }
  branch (serial < 3) { run d (3 - now); observe c = cachedin(m); }
}
run { horizon 10; }
""", {"c": [(0, 3.0, 0.0), (1, 3.0, 2.0), (2, 3.0, 0.0)]},
     {"m": {"cached": 2.3, "evicted_entries": 2, "evicted_units": 4.0}}),
    # reuse (2) consumes 2 of the session's 6 cached: cached = 2; the other 4 stay, dead (cachedin, the own
    # prefix, reads 0 in the body); the release at 2 caches min(4, 4). cached 6 on [1, 1], 4 dead on [1, 2],
    # 4 + 4 from 2: 4 + 64 = 68 / 10; used 6 + 4 over 10.
    ("reuse_leaves_a_dead_remainder", """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (6) { run d (1); } cache (6);
  hold m (4) reuse (2) { observe k = cached; observe c = cachedin(m); run d (1); } cache (4);
  observe c2 = cachedin(m);
}
run { horizon 10; }
""", {"k": [(0, 1.0, 2.0)], "c": [(0, 1.0, 0.0)], "c2": [(0, 2.0, 4.0)]},
     {"m": {"cached": 6.8, "used": 1.0, "evicted_units": 0.0}}),
    # preempt lifo on a pool no engine's memory: the most recently admitted holder is the victim. s0 and s1
    # hold 2 each of 4 from 0; at 1 s0's grow by 1 finds no room: s1 (admitted after s0) is preempted, its
    # delay job leaves, its hold goes back to the head of m's queue (nothing cached: no cache clause). s0
    # grows to 3, and gives it back at 2; s1 re-executes the hold at 2 (computed 0: it computed nothing) and
    # runs its 5 anew: [2, 7]. used 4 [0, 1], 3 [1, 2], 2 [2, 7]: 17 / 10; three admissions, one preemption.
    ("preempt_lifo_on_a_plain_pool", """
pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (1); observe g = now; run d (1); } }
  else { hold m (2) { observe t = now * 10 + computed; run d (5); } observe e = now; }
}
run { horizon 10; }
""", {"g": [(0, 1.0, 1.0)], "t": [(1, 0.0, 0.0), (1, 2.0, 20.0)], "e": [(1, 7.0, 7.0)]},
     {"m": {"used": 1.7, "admissions": 3, "preemptions": 1}}),
    # Nested holds on one pool, `release` and `grow` act on the innermost; a run of zero work completes at
    # once, on a busy fifo too. s0 keeps f busy over [0, 2]; s1's `run f (0)` at 0.5 ends at 0.5. Block 2:
    # the outer hold of 3 takes 4, the inner of 1 takes 2 (used 6); `release m` gives the inner's back (4),
    # its scope's end has nothing left (4); `grow m (1)` adds a whole block to the outer (6); the outer's
    # `cache (10)` keeps min(10, its allocation 6) = 6 (docs/language.md: a grow adds whole blocks, and
    # the allocation is what a hold without a growing run computed). All at 0.5: used 0; cached 6 over
    # [0.5, 10]: 5.7.
    ("nested_holds_release_grow_and_zero_work", """
pool m { cap 10; block 2; }
stage f : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run f (2); }
  else {
    run d (0.5);
    run f (0);
    observe z = now;
    hold m (3) {
      observe a = used(m);
      hold m (1) { observe b = used(m); release m; observe c = used(m); }
      observe e = used(m);
      grow m (1);
      observe g = used(m);
    } cache (10);
    observe k = cachedin(m);
  }
}
run { horizon 10; }
""", {"z": [(1, 0.5, 0.5)], "a": [(1, 0.5, 4.0)], "b": [(1, 0.5, 6.0)], "c": [(1, 0.5, 4.0)],
      "e": [(1, 0.5, 4.0)], "g": [(1, 0.5, 6.0)], "k": [(1, 0.5, 6.0)]},
     {"m": {"used": 0.0, "cached": 5.7, "admissions": 2}}),
    # "lease m (t) … until the session's release m, t seconds, or the session's end, and cache applies then
    # … A session that holds and leases nothing on m releases nothing". s0 and s1 hold 4 of P over [0, 1]
    # and lease them for ever: s0 releases at 2 (caching 4; its second release finds nothing), s1's lease
    # ends with its session at 3. used (leases included) 4 · 2 + 4 · 3 = 20, holders 2 + 3; cached 4 from 2
    # and 4 from 3: 32 + 28 = 60 over 10.
    ("lease_until_release_or_the_sessions_end", """
pool P { cap 8; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (4) { run d (1); } cache (4) lease P (inf);
    run d (1);
    release P;
    release P;
    observe c = cachedin(P);
    run d (1);
    end;
  } else { hold P (4) { run d (1); } cache (4) lease P (inf); run d (2); }
}
run { horizon 10; }
""", {"c": [(0, 2.0, 4.0)]}, {"P": {"used": 2.0, "holders": 0.5, "cached": 6.0, "admissions": 2}}),
    # "Preempted holds retain prepend priority" (a preempted session re-enters at the head, ahead of the key).
    # queue by (prio): s0 and s1 (prio 5) hold 2 each of 4 from 0; s2 (prio 0) joins at 0.5 asking 3. At 1
    # s0's grow preempts s1 (the last admitted), which goes back ahead of s2's smaller key: at 2, when s0
    # gives its 3 back, s1 is admitted (2 of 4; s2's 3 do not fit beside it), [2, 5]; s2 at 5. used 4 + 3 +
    # 2 · 3 + 3 = 16; queued s2 [0.5, 5], s1 [1, 2]: 5.5; waits 0, 0, 1, 4.5 over four admissions.
    ("a_preempted_hold_goes_back_ahead_of_the_keys", """
pool m { cap 4; queue by (prio); preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 2 ? 0 : 5;
  branch (serial == 0) { hold m (2) { run d (1); grow m (1); run d (1); } }
  branch (serial == 1) { hold m (2) { observe a = now; run d (3); } }
  branch (serial == 2) { run d (0.5); hold m (3) { observe a = now; run d (1); } }
}
run { horizon 10; }
""", {"a": [(1, 0.0, 0.0), (1, 2.0, 2.0), (2, 5.0, 5.0)]},
     {"m": {"used": 1.6, "queue": 0.55, "wait": 1.375, "holders": 0.7, "admissions": 4, "preemptions": 1}}),
    # pool-reference.txt, evict: keys read "the entry's session's attributes: current while the session
    # lives, as they were at its last release after it has ended". s0 caches 4 with x = 3, sets x = 100 and
    # ends: its key is 3. s1 caches 4 with x = 2 and sets x = 9, alive: its key is 9. At 2 s2 needs 4 of the
    # full 8: s0's entry goes (3 < 9); read the other way on either side (100, or 2) s1's would. s1 keeps 4.
    ("eviction_keys_read_the_attributes_live_or_at_release", """
pool m { cap 8; evict by (x); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { set x = 3; hold m (4) { run d (1); } cache (4); set x = 100; end; }
  branch (serial == 1) { set x = 2; hold m (4) { run d (1); } cache (4); set x = 9; run d (2); observe c = cachedin(m); }
  branch (serial == 2) { set x = 0; run d (2); hold m (4) { run d (0.5); } }
}
run { horizon 10; }
""", {"c": [(1, 3.0, 4.0)]}, {"m": {"evicted_entries": 1, "evicted_units": 4.0}}),
    # "A hold's lease … neither evictable nor a preemption victim", and Statistics' stuck: "sessions
    # preempted a second time without having advanced past the position of their previous preemption". Cap
    # 3. s0 holds 1 from 0; s1 holds 2 over [0.5, 0.9] and leases them for ever. At 1 s0's grow of 1 finds no
    # room and the only candidate is s0 (the lease is none): it preempts itself, goes back to the queue and
    # is admitted again at once (1 fits beside the lease), runs its 1 and grows into the same preemption,
    # at 1, 2, 3, 4, 5 (horizon 5.5): never past its grow (no g, no e), stuck once. used 1 · 5.5 + 2 · 5 =
    # 15.5, holders 5.5 + 5 (the lease a holder); 7 admissions, none waiting.
    ("a_lease_is_no_victim_and_the_grower_is_stuck", """
pool P { cap 3; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold P (1) { observe a = now; run d (1); observe b = now; grow P (1); observe g = now; run d (1); } observe e = now; }
  else { run d (0.5); hold P (2) { run d (0.4); } cache (2) lease P (inf); observe l = now; run d (100); }
}
run { horizon 5.5; }
""", {"a": [(0, float(t), float(t)) for t in range(6)], "g": [], "e": [], "l": [(1, 0.9, 0.9)]},
     {"P": {"used": 15.5 / 5.5, "holders": 10.5 / 5.5, "admissions": 7, "preemptions": 5, "stuck": 1,
            "wait": 0.0}}),
    # The same with s1's hold ending at 1, the instant of s0's grow: the grow's event (s0's run, scheduled at
    # 0) comes before the end of s1's run (scheduled at 0.5), so s1 still holds and, the last admitted, is
    # the victim: its run leaves the stage, its hold goes back to the queue, s0 grows (g = 1) and ends at 2;
    # s1 waits [1, 2] (2 + 2 > 3), runs its hold again [2, 2.5] and leases then. One preemption; waits 0, 0,
    # 1 over three admissions.
    ("one_instant_decides_the_victim", """
pool P { cap 3; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold P (1) { observe a = now; run d (1); observe b = now; grow P (1); observe g = now; run d (1); } observe e = now; }
  else { run d (0.5); hold P (2) { run d (0.5); } cache (2) lease P (inf); observe l = now; run d (100); }
}
run { horizon 5.5; }
""", {"a": [(0, 0.0, 0.0)], "g": [(0, 1.0, 1.0)], "e": [(0, 2.0, 2.0)], "l": [(1, 2.5, 2.5)]},
     {"P": {"admissions": 3, "preemptions": 1, "stuck": 0, "wait": 1 / 3, "queue": 1 / 5.5}}),
    # Ties: "A pool's growers: the order they stalled, the head blocking the rest" (docs/language.md: the
    # stalled growers are retried before the pool's admissions, the head that does not fit stops the others,
    # and an admission that fits never waits for a grower). Cap 10 full from 0 (2 + 2 + 4 + 2). s0 stalls
    # at 1 wanting 5 more, s1 at 1.5 wanting 1. At 2 s2 gives 4 back: s0's 5 do not fit and s1, behind it,
    # waits though 1 would; s4 joins at 2.5 asking 1 and is admitted at once. At 3 s3 gives 2 back: s0 grows
    # (free 0); s1 grows when s4 leaves, at 3.5. used 2 · 3 + 7 + 2 · 3.5 + 3 + 4 · 2 + 2 · 3 + 1 = 38;
    # holders 4 + 4.5 + 2 + 3 + 1.
    ("stalled_growers_in_order_behind_their_head", """
pool m { cap 10; preempt none; }
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (5); observe g = now; run d (1); } }
  branch (serial == 1) { hold m (2) { run d (1.5); grow m (1); observe g = now; run d (1); } }
  branch (serial == 2) { hold m (4) { run d (2); } }
  branch (serial == 3) { hold m (2) { run d (3); } }
  branch (serial == 4) { run d (2.5); hold m (1) { observe a = now; run d (1); } }
}
run { horizon 10; }
""", {"g": [(0, 3.0, 3.0), (1, 3.5, 3.5)], "a": [(4, 2.5, 2.5)]},
     {"m": {"used": 3.8, "holders": 1.45, "admissions": 5, "wait": 0.0}}),
    # reuse on a pool in blocks: "consumes at most ρ units of its own cached prefix" in whole blocks (block 4:
    # reuse (5) of the 8 cached consumes 4, the other block stays, dead); the release caches min(6, 8) = 6
    # rounded down, 4; reuse (inf) consumes that 4, and cache (3) keeps floor(3 / 4) · 4 = 0. used 8 + 8 +
    # 12; cached 8 on [1, 1], the dead 4 on [1, 2], 4 + 4 on [2, 2], the dead 4 from 2: 4 + 4 + 28 = 36.
    ("reuse_in_whole_blocks", """
pool m { cap 40; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (8) { run d (1); } cache (8);
  hold m (6) reuse (5) { observe k = cached; observe u = used(m); run d (1); } cache (6);
  observe c = cachedin(m);
  hold m (10) reuse (inf) { observe k2 = cached; run d (1); } cache (3);
  observe c2 = cachedin(m);
}
run { horizon 10; }
""", {"k": [(0, 1.0, 4.0)], "u": [(0, 1.0, 8.0)], "c": [(0, 2.0, 4.0)], "k2": [(0, 2.0, 4.0)],
                          "c2": [(0, 3.0, 0.0)]},
     {"m": {"used": 2.8, "cached": 3.6, "evicted_units": 0.0, "admissions": 3}}),
    # A preemption on m releases the victim's holds "down to the one on the preempted pool" (docs/language.md)
    # and the victim "re-enters the head of the pool's queue with the hold statement to execute again". s1
    # holds 3 of A around 2 of m; at 1 s0's grow on m preempts s1 (the last admitted there): its hold of m
    # goes, the outer hold of A stays (used(A) 3 when s1 is admitted to m again at 2, a = 23); [2, 7], then
    # A caches 3. A: used 3 · 7, one admission, cached 3 from 7; m: s1 queued [1, 2], waits 0, 0, 1.
    ("preemption_keeps_the_holds_around_the_preempted_one", """
pool A { cap 10; }
pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (2); run d (1); } }
  else { hold A (3) { hold m (2) { observe a = now * 10 + used(A); run d (5); } observe x = used(A); } cache (3); observe c = cachedin(A); }
}
run { horizon 10; }
""", {"a": [(1, 0.0, 3.0), (1, 2.0, 23.0)], "x": [(1, 7.0, 3.0)], "c": [(1, 7.0, 3.0)]},
     {"A": {"used": 2.1, "cached": 0.9, "admissions": 1}, "m": {"queue": 0.1, "wait": 1 / 3, "preemptions": 1}}),
    # The hold of A inside the hold of m: both released at 1, A's caching nothing (a hold preempted before it
    # computed anything caches nothing, docs/language.md), and both executed again from the m hold at 2: A
    # used 3 on [0, 1] and [2, 7], two admissions; the inner hold's release at 7 caches 3 (x = 0 after it).
    ("preemption_releases_the_holds_inside_it", """
pool A { cap 10; }
pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (2); run d (1); } }
  else { hold m (2) { hold A (3) { observe a = now * 10 + used(A); run d (5); } cache (3); observe x = used(A); } observe c = cachedin(A); }
}
run { horizon 10; }
""", {"a": [(1, 0.0, 3.0), (1, 2.0, 23.0)], "x": [(1, 7.0, 0.0)], "c": [(1, 7.0, 3.0)]},
     {"A": {"used": 1.8, "cached": 0.9, "admissions": 2}, "m": {"preemptions": 1}}),
]


@pytest.mark.parametrize("src, obs, pools", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_pool_by_hand(monkeypatch, src, obs, pools):
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert got[name] == want, name
    for name, want in pools.items():
        entry = pool_json(r, name)
        assert {k: entry[k] for k in want} == pytest.approx(want, rel=1e-12), name


ORDERS = """
pool m { cap 12; EVICT }
pool w { cap 1; }
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial < 3) {
    hold m (serial == 0 ? 4 : serial == 1 ? 6 : 2) { run d (serial + 1); } cache (12);
    branch (serial == 1) { hold w (1) { run d (0); } }
    run d (5 - now);
    observe c = cachedin(m);
  }
  branch (serial == 3) { run d (4); hold m (4) { run d (1); } }
  branch (serial == 4) { hold w (1) { run d (4.5); } }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("order, left", [
    # s0, s1, s2 cache 4, 6 and 2 (the whole cap 12), released at 1, 2 and 3; s1 waits in w's queue from 2
    # to 4.5 (s4 holds it), s0 and s2 are idle. At 4 s3 needs 4: entries are evicted whole (no block) in the
    # order's keys, ascending, then release order, until 4 are free. Left at 5 (s0, s1, s2):
    ("evict lru;", [0.0, 6.0, 2.0]),                 # release time: s0's 4 suffice
    ("", [0.0, 6.0, 2.0]),                           # no order given: lru (pool-reference.txt's default)
    ("evict by (-age);", [0.0, 6.0, 2.0]),           # the oldest first: lru again
    ("evict by (age);", [4.0, 0.0, 0.0]),            # the youngest: s2's 2, then s1's 6
    ("evict by (now - last);", [4.0, 0.0, 0.0]),     # age written out
    ("evict by (-last);", [4.0, 0.0, 0.0]),          # the latest released first: as by (age)
    ("evict by (size);", [0.0, 6.0, 0.0]),           # the smallest: s2's 2, then s0's 4
    ("evict by (-size);", [4.0, 0.0, 2.0]),          # the largest: s1's 6
    ("evict by (waiting);", [0.0, 6.0, 2.0]),        # the idle (0) before the waiting s1, release order: s0
    ("evict by (1 - waiting);", [4.0, 0.0, 2.0]),    # the waiting s1 first
    ("evict by (waiting, size);", [0.0, 6.0, 0.0]),  # among the idle the smallest: s2's 2, then s0's 4
])
def test_an_eviction_orders_context_variables(monkeypatch, order, left):
    """§2's context variables of an eviction key, "size, age, last, waiting (eviction keys and spill
    predicates)", and §3: "evict lru orders by release time and then release order, evict by (k₁, …) by the
    keys and then release order" (docs/language.md: `age` is now − `last`, `waiting` 1 when the entry's
    session is alive and waiting in some pool's queue)."""
    _r, obs = run(ORDERS.replace("EVICT", order), monkeypatch)
    assert obs["c"] == [(k, 5.0, v) for k, v in enumerate(left)]
