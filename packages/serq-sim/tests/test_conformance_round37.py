"""Conformance of language.txt §2 and §3 (and pool-reference.txt, program-reference.txt) by hand, round 37:
pools with blocks and caches (partial blocks kept and consumed, `reuse` in whole blocks and its dead
remainder, the tail of an entry evicted block by block, `evict lru` against `evict by` keys and their ties
in release order, a `reserve` rounded to blocks, spills along a chain of tiers and what lands where),
families of stages and pools (`[N]`, `member()`, `choose by` keys and their ties, a family of one),
sessions and turns (the turn counter in `init`, `turn` and after, attributes carried from turn to turn,
think times of 0, a `set` inside a hold run again after a preemption, a closed population replaced at
once), and the report's per-stage and per-pool figures over [warmup, end] (utilisation of fifo(c) and ps,
queue lengths as time averages, what a warm-up cuts of a session in flight), a gateway and queue families
with a pull, and the run-time errors §2 and §3 name (in a definition's body and a queue entry with notes
at their uses).

§3, Pools: "At the end of the body the units are released and min(ℓ, computed) units stay cached, rounded
down to blocks"; "on admission the session consumes at most ρ units of its own cached prefix (cached :=
what it consumed); the rest of that entry stays in the cache as a dead entry"; "Eviction is per entry, or
per block from the tail of the entry when the pool has block b; evict lru orders by release time and then
release order, evict by (k₁, …) by the keys and then release order". §3, Configuration: "After every event
the interpreter settles: it runs every ready session, then retries growers and admissions" (a hold joins
the queue when its session runs it and is admitted in that settle: docs/simulator.md, The settle loop).

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
from conform import check_by_hand, run, run_error

# ---------------------------------------------------------------------------------------------------------
# Pools with blocks and caches
# ---------------------------------------------------------------------------------------------------------

# two sessions cache 4 each, released at 1 in serial order; a third needs 6 of the 8 at 2
EVICT = """
pool kv { cap 8; block 2; ORDER; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (4) { run d (1); } cache (4);
    run d (2);
    hold kv (4) { observe c = cached; } cache (0);
  } else {
    run d (2);
    hold kv (6) { run d (0.5); } cache (0);
  }
}
run { horizon 10; }
"""

# s0 caches 12 (three blocks of 4); s1's 4 at 2 takes the entry's tail block; s0 holds 12 again at 3
REUSE = """
pool kv { cap 12; block 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (12) { run d (1); } cache (12);
    run d (2);
    hold kv (12) reuse (RHO) { observe c = cached * 100 + cachedin(kv); run d (1); } cache (0);
    observe after = cachedin(kv);
  } else {
    run d (2);
    hold kv (4) { run d (0.5); } cache (0);
  }
}
run { horizon 10; }
"""

# three tiers: kv spills everything it evicts to cpu over pcie (work = size); cpu spills what it evicts to
# disk over nvme (work size / 2) when the entry has at least 2. Each session caches 4 in kv at [T, T + 1]
# and looks at its three tiers at 21 or later.
TIERS = """
pool kv { cap 4; spill cpu via pcie (size) when (1); }
pool cpu { cap 4; spill disk via nvme (size / 2) when (size >= 2); }
pool disk { cap 100; }
stage pcie : fifo;
stage nvme : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  run d (START);
  hold kv (4) { run d (1); } cache (4);
  run d (20 - serial * 2);
  observe k = cachedin(kv) * 100 + cachedin(cpu) * 10 + cachedin(disk);
}
run { horizon 30; }
"""

POOLS = [
    # block 4, cap 100. cache (10) of an allocation of 12 (10 rounded up) keeps min(10, 12) = 10 rounded
    # down to blocks: 8; `cached` after the hold reads the last admission's, 0. The next hold (20) consumes
    # the 8 (c2), so cachedin(kv) is 0 in its body; used 20 (the 8 are part of the allocation). cache (7)
    # keeps 4; the hold (3) consumes those 4 and its cache (0) keeps none. used: 12 on [0, 1], 20 on [1, 2],
    # 4 at the instant 2: 32 / 10; nothing is cached for a positive time.
    ("a_partial_block_is_not_cached", """
pool kv { cap 100; block 4; }
stage s : fifo;
workload { arrive batch(1); }
session {
  hold kv (10) { run s (1); } cache (10);
  observe c1 = cached;
  hold kv (20) { observe c2 = cached; observe u = used(kv); observe ci = cachedin(kv); run s (1); } cache (7);
  observe c3 = cachedin(kv);
  hold kv (3) { observe c4 = cached; } cache (0);
  observe c5 = cachedin(kv);
}
run { horizon 10; }
""", {"c1": [(0, 1.0, 0.0)], "c2": [(0, 1.0, 8.0)], "u": [(0, 1.0, 20.0)], "ci": [(0, 1.0, 0.0)],
      "c3": [(0, 2.0, 4.0)], "c4": [(0, 2.0, 4.0)], "c5": [(0, 2.0, 0.0)]},
     {("kv", None): {"used": 3.2, "cached": 0.0, "admissions": 3, "evicted_units": 0.0}}),
    # lru: both entries released at 1, s0's first (its run's end was scheduled first): the 6 units come
    # from s0's 4 (whole) then s1's tail block of 2. At 3 s0 finds 0, s1 its 2. used 8 on [0, 1], 6 on
    # [2, 2.5]: 11 / 10; cached 8 on [1, 2], 2 on [2, 3]: 10 / 10; one entry evicted whole, 6 units.
    ("evict_lru_ties_in_release_order", EVICT.replace("ORDER", "evict lru"),
     {"c": [(0, 3.0, 0.0), (1, 3.0, 2.0)]},
     {("kv", None): {"used": 1.1, "cached": 1.0, "evicted_entries": 1, "evicted_units": 6.0}}),
    # evict by (-serial): s1's entry first (key -1 < 0): its 4, then s0's tail 2.
    ("evict_by_keys_first", EVICT.replace("ORDER", "evict by (-serial)"),
     {"c": [(0, 3.0, 2.0), (1, 3.0, 0.0)]},
     {("kv", None): {"cached": 1.0, "evicted_entries": 1, "evicted_units": 6.0}}),
    # evict by (0): every key ties, so release order decides, as lru's.
    ("evict_by_tied_keys_in_release_order", EVICT.replace("ORDER", "evict by (0)"),
     {"c": [(0, 3.0, 0.0), (1, 3.0, 2.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 6.0}}),
    # evict by (size): at 2 both entries have 4: a tie, release order: s0's 4, then s1's tail 2.
    ("evict_by_size_ties_in_release_order", EVICT.replace("ORDER", "evict by (size)"),
     {"c": [(0, 3.0, 0.0), (1, 3.0, 2.0)]},
     {("kv", None): {"evicted_entries": 1, "evicted_units": 6.0}}),
    # reuse (10) of s0's entry, 8 after s1 took its tail block at 2: it consumes the 8 (at most 10), all of
    # it, and cachedin reads 0 in the body. used 12 [0, 1] + 4 [2, 2.5] + 12 [3, 4]: 26 / 10; cached 12 on
    # [1, 2], 8 on [2, 3]: 20 / 10; 4 units evicted, no entry whole.
    ("reuse_takes_the_whole_entry_within_its_bound", REUSE.replace("RHO", "10"),
     {"c": [(0, 3.0, 800.0)], "after": [(0, 4.0, 0.0)]},
     {("kv", None): {"used": 2.6, "cached": 2.0, "evicted_entries": 0, "evicted_units": 4.0}}),
    # reuse (6): whole blocks, 4 of the 8; the other 4 stay as a dead entry (cachedin 0: unusable). The
    # hold of 12 needs them: the dead entry is evicted whole: 4 + 4 units, one entry.
    ("reuse_in_blocks_leaves_a_dead_remainder", REUSE.replace("RHO", "6"),
     {"c": [(0, 3.0, 400.0)], "after": [(0, 4.0, 0.0)]},
     {("kv", None): {"used": 2.6, "cached": 2.0, "evicted_entries": 1, "evicted_units": 8.0}}),
    # reserve rounds to blocks (pool-reference.txt: r the larger of units and reserve "rounded up to
    # blocks"). s0: units 1 → 4, reserve 5 → 8: 0 + 8 <= 8, admitted at 0, allocated 4. s1: reserve 3 → 4:
    # 4 + 4 <= 8, admitted, used 8. s2's 4 waits for 1. At 1 s0's end is the first event: it releases, the
    # settle admits s2 (4 + 4 <= 8) and s2's body reads used 8 before s1's end, the next event, releases.
    # waits 0, 0, 1: 1 / 3; the queue holds s2 on [0, 1]: 1 / 10.
    ("reserve_rounds_up_to_blocks", """
pool kv { cap 8; block 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  set t0 = now;
  hold kv (1) reserve (serial == 0 ? 5 : 3) {
    observe a = (now - t0) * 100 + used(kv);
    run d (1);
  }
}
run { horizon 10; }
""", {"a": [(0, 0.0, 8.0), (1, 0.0, 8.0), (2, 1.0, 108.0)]},
     {("kv", None): {"used": 1.2, "queue": 0.1, "wait": 1 / 3, "admissions": 3}}),
    # START = 2·serial: s0 caches 4 in kv at 1; s1's hold at 2 evicts it: spilled to cpu, pcie [2, 6]
    # (work 4), its room taken in cpu at once (a pending entry). s1 caches at 3; s2's hold at 4 evicts it:
    # its write waits for pcie, [6, 10]; cpu makes room for it by evicting s0's pending entry, which never
    # reached cpu and so goes on to no tier (nvme runs nothing). At 21+: s0 has nothing, s1 4 in cpu, s2 4
    # in kv. pcie waits 0, 2 (mean 1), service 4; cpu cached 4 on [2, 30]: 112 / 30; kv cached 4 on
    # [1, 2], [3, 4], [5, 30]: 27 · 4 / 30.
    ("a_pending_spill_evicted_goes_no_further", TIERS.replace("START", "serial * 2"),
     {"k": [(0, 21.0, 0.0), (1, 21.0, 40.0), (2, 21.0, 400.0)]},
     {("pcie", None): {"completions": 2, "wait": 1.0, "service": 4.0},
      ("nvme", None): {"completions": 0},
      ("kv", None): {"cached": 3.6, "spills": 2, "evicted_units": 8.0},
      ("cpu", None): {"cached": 112 / 30, "spills": 0, "evicted_entries": 1, "evicted_units": 4.0}}),
    # s2 starts at 7 instead: s0's write landed in cpu at 6. s2's hold at 7 evicts s1's entry (spill over
    # pcie [7, 11]); cpu evicts s0's landed 4 for it, which spills on to disk over nvme (4 / 2 = 2: [7,
    # 9]). At 21+: s0's 4 in disk, s1's in cpu, s2's (observed at 7 + 1 + 16 = 24) in kv. disk's cached
    # counts from the eviction, 4 on [7, 30]: 92 / 30.
    ("a_landed_spill_goes_on_to_the_next_tier", TIERS.replace("START", "serial == 2 ? 7 : serial * 2"),
     {"k": [(0, 21.0, 4.0), (1, 21.0, 40.0), (2, 24.0, 400.0)]},
     {("pcie", None): {"completions": 2, "wait": 0.0}, ("nvme", None): {"completions": 1, "service": 2.0},
      ("cpu", None): {"cached": 112 / 30, "spills": 1, "evicted_entries": 1},
      ("disk", None): {"cached": 92 / 30}}),
]


POOLS += [
    # block 4: cache (20) of an allocation of 8 keeps 8 (a released prefix is capped at the allocation:
    # allocated + cached <= cap). A hold of 5 (8 allocated) consumes all 8: cached 8, used 8, none left;
    # its cache (3) rounds down to 0 blocks, as the hold of 2 (4 allocated) with cache (2) does.
    ("cache_capped_at_the_allocation_and_below_a_block", """
pool kv { cap 20; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (8) { run d (1); } cache (20);
  observe a = cachedin(kv);
  hold kv (5) { observe b = cached * 100 + used(kv) * 10 + cachedin(kv); run d (1); } cache (3);
  observe c = cachedin(kv);
  hold kv (2) { observe e = cached; run d (1); } cache (2);
  observe f = cachedin(kv);
}
run { horizon 10; }
""", {"a": [(0, 1.0, 8.0)], "b": [(0, 1.0, 880.0)], "c": [(0, 2.0, 0.0)], "e": [(0, 2.0, 0.0)],
      "f": [(0, 3.0, 0.0)]},
     {("kv", None): {"used": 2.0, "cached": 0.0, "admissions": 3}}),
    # A hold consumes at most its allocation of its cached prefix: 3 units (4 allocated) of the 8 cached
    # take 4, and the other 4 stay as a dead entry beside the 4 its cache (4) keeps at 2: cached 4 on [1,
    # 2], 8 on [2, 10]: 68 / 10; cachedin reads only the session's own 4.
    ("a_hold_consumes_at_most_its_allocation", """
pool kv { cap 20; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (8) { run d (1); } cache (8);
  hold kv (3) { observe b = cached * 100 + used(kv) * 10 + cachedin(kv); run d (1); } cache (4);
  observe c = cachedin(kv);
}
run { horizon 10; }
""", {"b": [(0, 1.0, 440.0)], "c": [(0, 2.0, 4.0)]}, {("kv", None): {"used": 1.2, "cached": 6.8}}),
]


POOLS += [
    # EVICT under lru with a warm-up of 2.5: the eviction at 2 and the admissions before 2.5 are cut (the
    # report's pool figures count "the events at or after it"); over [2.5, 10] 2 units are cached on [2.5,
    # 3]: 1 / 7.5, nothing is held for a positive time, and s0's and s1's holds at 3 are the 2 admissions.
    ("a_warm_up_cuts_a_pools_events", EVICT.replace("ORDER", "evict lru").replace("horizon 10;",
                                                                                  "horizon 10; warmup 2.5;"),
     {"c": [(0, 3.0, 0.0), (1, 3.0, 2.0)]},
     {("kv", None): {"used": 0.0, "cached": 1 / 7.5, "admissions": 2, "evicted_entries": 0,
                     "evicted_units": 0.0}}),
]


POOLS += [
    # A hold on two pools caches and consumes on each (docs/language.md: `cached` the most it consumed on
    # one). The first caches min(5, 4) = 4 on a, min(5, 6) = 5 rounded down to 4 on b (blocks of 2). reuse
    # (3): a gives 3 of its 4 (1 left dead), b 2 (whole blocks; 2 dead): cached max(3, 2) = 3, neither has
    # a usable entry left. cache (6) keeps 6 on each. a cached 1 on [1, 2], 7 after: 57 / 10; b 2, then 8:
    # 66 / 10.
    ("a_hold_on_two_pools_caches_on_each", """
pool a { cap 10; }
pool b { cap 10; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold a (4), b (5) { run d (1); } cache (5);
  observe x = cachedin(a) * 10 + cachedin(b);
  hold a (6), b (6) reuse (3) { observe y = cached * 100 + cachedin(a) * 10 + cachedin(b); run d (1); } cache (6);
  observe z = cachedin(a) * 10 + cachedin(b);
}
run { horizon 10; }
""", {"x": [(0, 1.0, 44.0)], "y": [(0, 1.0, 300.0)], "z": [(0, 2.0, 66.0)]},
     {("a", None): {"used": 1.0, "cached": 5.7}, ("b", None): {"used": 1.2, "cached": 6.6}}),
]


POOLS += [
    # evict by (age), age = now - last: the most recently released first. s0 and s1 cache 2 at 1, s2 at 2;
    # s3's 4 at 3 (cap 6, all 6 cached): s2's (age 1) goes, then of s0's and s1's (age 2, a tie) the
    # first released, s0's. s1 alone finds its 2 at 6.
    ("evict_by_age_most_recent_first_ties_in_release_order", """
pool kv { cap 6; evict by (age); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    hold kv (2) { run d (serial == 2 ? 2 : 1); } cache (2);
    run d (5);
    hold kv (2) { observe c = cached; } cache (0);
  } else {
    run d (3);
    hold kv (4) { run d (0.5); } cache (0);
  }
}
run { horizon 10; }
""", {"c": [(0, 6.0, 0.0), (1, 6.0, 2.0), (2, 7.0, 0.0)]},
     {("kv", None): {"evicted_entries": 2, "evicted_units": 4.0, "admissions": 7}}),
]


POOLS += [
    # A spill's tier and link by a computed member index, read at the Evict moment with the entry's
    # session's attributes (docs/language.md, Pools): s0's entry, evicted by s1's hold at 1, goes to cpu[0]
    # over pcie[0] ([1, 5]); s1's, evicted by s2's at 2, to cpu[1] over pcie[1] ([2, 6]). cpu[0] holds 4 from
    # 1: 116 / 30; cpu[1] from 2: 112 / 30.
    ("a_spill_to_the_member_its_entrys_session_names", """
pool kv { cap 4; spill cpu[serial % 2] via pcie[serial % 2] (size) when (1); }
pool cpu[2] { cap 10; }
stage pcie[2] : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  hold kv (4) { run d (0.5); } cache (4);
  run d (10);
  observe k = cachedin(kv) * 100 + cachedin(cpu[0]) * 10 + cachedin(cpu[1]);
}
run { horizon 30; }
""", {"k": [(0, 10.5, 40.0), (1, 11.5, 4.0), (2, 12.5, 400.0)]},
     {("pcie", 0): {"completions": 1, "service": 4.0}, ("pcie", 1): {"completions": 1, "service": 4.0},
      ("kv", None): {"spills": 2, "evicted_entries": 2}, ("cpu", 0): {"cached": 116 / 30},
      ("cpu", 1): {"cached": 112 / 30}}),
]


POOLS += [
    # §3: "min(ℓ, computed) units stay cached … (computed is the allocation, or the position a growing run or
    # a load reached)". A hold of 8 that loads 3 caches 3; the next consumes them (its position starts at
    # 3), loads 2 and caches 5; a hold that neither loads nor grows caches its allocation, 8, and its reuse
    # (0) leaves the 5 dead beside it: cached 5 on [2, 3], 13 after: 96 / 10.
    ("a_load_is_the_position_a_cache_keeps", """
pool kv { cap 20; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (8) { load kv (3); run d (1); } cache (8);
  observe a = cachedin(kv);
  hold kv (8) { observe b = cached; load kv (2); run d (1); } cache (8);
  observe c = cachedin(kv);
  hold kv (8) reuse (0) { run d (1); } cache (8);
  observe e = cachedin(kv);
}
run { horizon 10; }
""", {"a": [(0, 1.0, 3.0)], "b": [(0, 1.0, 3.0)], "c": [(0, 2.0, 5.0)], "e": [(0, 3.0, 8.0)]},
     {("kv", None): {"used": 2.4, "cached": 9.6, "admissions": 3}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in POOLS], ids=[c[0] for c in POOLS])
def test_pools_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Families of stages and pools
# ---------------------------------------------------------------------------------------------------------

FAMILIES = [
    # Four sessions at 0 each run `choose` before the settle admits any hold, so every key reads used 0:
    # all tie and take the smallest index, kv[0] (units 1 + 2 + 3 + 4 = 10 fit its cap). member() of a
    # member is its index. s[0] serves them in serial order: done at 1, 2, 3, 4. s[0]: present 10 / 10,
    # waits (0 + 1 + 2 + 3) / 4; s[1] runs nothing; kv[0]: used 1·1 + 2·2 + 3·3 + 4·4 = 30 / 10, holders
    # 10 / 10.
    ("choose_reads_the_state_before_the_settle", """
pool kv[2] { cap 10; }
stage s[2] : fifo;
workload { arrive batch(4); }
session {
  choose j in 2 by (used(kv[j]));
  hold kv[j] (serial + 1) {
    observe m = member(kv[j]) * 10 + member(s[j]);
    run s[j] (1);
  }
  observe t = now * 10 + j;
}
run { horizon 10; }
""", {"m": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (3, 0.0, 0.0)],
      "t": [(0, 1.0, 10.0), (1, 2.0, 20.0), (2, 3.0, 30.0), (3, 4.0, 40.0)]},
     {("s", 0): {"present": 1.0, "wait": 1.5, "completions": 4}, ("s", 1): {"completions": 0},
      ("kv", 0): {"used": 3.0, "holders": 1.0, "admissions": 4}, ("kv", 1): {"admissions": 0}}),
    # A family of one is a family: `kv` and `s` unindexed are its member 0 (member(s) 0). cap 4: s0 and s1
    # admitted at 0 (holders 2, s2 queued: 21); at 1 s0 releases and s2 is admitted beside s1 (holders 2,
    # none queued: 20). s[0] serves 1 each: done at 1, 2, 3, waits (0 + 1 + 1) / 3 (s2 joins it at 1).
    ("a_family_of_one", """
pool kv[1] { cap 4; }
stage s[1] : fifo;
workload { arrive batch(3); }
session {
  choose j in 1 by (holders(kv));
  hold kv (2) { observe h = holders(kv[j]) * 10 + queued(kv) + member(s) * 100; run s (1); }
  observe t = now;
}
run { horizon 10; }
""", {"h": [(0, 0.0, 21.0), (1, 0.0, 21.0), (2, 1.0, 20.0)], "t": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0)]},
     {("s", 0): {"wait": 2 / 3, "completions": 3}, ("kv", 0): {"used": 1.0, "queue": 0.1, "wait": 1 / 3}}),
    # choose by (queue > 0 ? 1 : 0, -j): a run starts when its session runs it, so queue(s[j]) counts the
    # sessions before. s0: all (0, -j): j = 2; s1: s[2] has 1: (1, -2) against (0, 0), (0, -1): j = 1; s2:
    # j = 0; then every member has one: the least -j, 2, for s3, s4, s5. s[2]: four jobs of 1: present
    # (1 + 2 + 3 + 4) / 10, waits 1.5.
    ("choose_by_two_keys", """
stage s[3] : fifo;
workload { arrive batch(6); }
session {
  choose j in 3 by (queue(s[j]) > 0 ? 1 : 0, -j);
  observe pick = j;
  run s[j] (1);
}
run { horizon 10; }
""", {"pick": [(0, 0.0, 2.0), (1, 0.0, 1.0), (2, 0.0, 0.0), (3, 0.0, 2.0), (4, 0.0, 2.0), (5, 0.0, 2.0)]},
     {("s", 0): {"completions": 1}, ("s", 1): {"completions": 1},
      ("s", 2): {"present": 1.0, "wait": 1.5, "completions": 4}}),
    # choose by (floor(queue / 2)): ties go to the smallest index. s0, s1: s[0] (0, then floor(1/2) = 0);
    # s2: s[0] reads 1: s[1]; s3: s[1] floor(1/2) = 0: s[1]; s4, s5: s[2]. Each member two jobs of 2: waits
    # (0 + 2) / 2, present (2 + 4) / 10.
    ("choose_ties_take_the_smallest_index", """
stage s[3] : fifo;
workload { arrive batch(6); }
session {
  choose j in 3 by (floor(queue(s[j]) / 2));
  observe pick = j;
  run s[j] (2);
}
run { horizon 10; }
""", {"pick": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 1.0), (3, 0.0, 1.0), (4, 0.0, 2.0), (5, 0.0, 2.0)]},
     {("s", 0): {"wait": 1.0, "present": 0.6}, ("s", 1): {"wait": 1.0, "present": 0.6},
      ("s", 2): {"wait": 1.0, "present": 0.6}}),
    # choose by (-free, j % 2) over three pools at 0: free 10 everywhere, j % 2 ties kv[0] and kv[2]: the
    # smallest index, kv[0], for all five. Units 1 … 4 fit (10), s4's 5 waits: at 1 the releases come in
    # serial order; after s0's (used 9) and s1's (7) it does not fit, after s2's (4) it does: used 9,
    # holders s3, s4. The aggregates write the terms out: sum of used over kv[0..2], max of holders.
    ("choose_and_aggregates_over_a_family", """
pool kv[3] { cap 10; }
stage d : delay;
workload { arrive batch(5); }
session {
  choose j in 3 by (-free(kv[j]), j % 2);
  hold kv[j] (serial + 1) {
    observe at = j * 100 + sum k in 3 (used(kv[k])) + max k in 3 (holders(kv[k])) * 1000;
    run d (1);
  }
}
run { horizon 10; }
""", {"at": [(0, 0.0, 4010.0), (1, 0.0, 4010.0), (2, 0.0, 4010.0), (3, 0.0, 4010.0), (4, 1.0, 2009.0)]},
     {("kv", 0): {"used": 1.5, "queue": 0.1, "wait": 0.2, "admissions": 5}, ("kv", 1): {"admissions": 0}}),
    # One engine serving a family of queues tries q[0] then q[1], and the first head that does not fit
    # stops the iteration's admissions (§3). At 0: q[0] admits s0, its next head s2 finds q[0] full: s1 in
    # q[1] is not tried. [0, 1] prefills s0's 2. At 1 s0 released q[0]: s2, then s1: [1, 2] 4 tokens. At 2:
    # s3: [2, 3]. Iterations 3, tokens (2 + 4 + 2) / 3, batch 4 / 3; q[0] waits (0 + 1) / 2, q[1] (1 +
    # 2) / 2, queue (s2 [0, 1]) 1 / 10 and (s1 [0, 1], s3 [0, 2]) 3 / 10.
    ("one_engine_serves_a_family_of_queues_in_index_order", """
pool q[2] { cap 1; admit via E; }
stage E : step { budget 4; cost 1; }
workload { arrive batch(4); }
session {
  hold q[serial % 2] (1) { run E prefill (2); }
  observe t = now * 10 + serial;
}
run { horizon 10; }
""", {"t": [(0, 1.0, 10.0), (1, 2.0, 21.0), (2, 2.0, 22.0), (3, 3.0, 33.0)]},
     {("E", None): {"iterations": 3, "tokens": 8 / 3, "batch": 4 / 3, "utilisation": 0.3},
      ("q", 0): {"wait": 0.5, "queue": 0.1}, ("q", 1): {"wait": 1.5, "queue": 0.3}}),
    # A step family's cost reads member(E): E[0] costs 1 an iteration, E[1] 2. Each session prefills 6 on
    # its own member at budget 4: two iterations (4, then 2 tokens), done at 2 and 4 (after the hold, used
    # 0). Its kv grows from 4 to 6 at the second iteration's start: kv[0] 4·1 + 6·1, kv[1] 4·2 + 6·2.
    ("a_step_familys_cost_reads_its_member", """
pool kv[2] { cap 100; }
stage E[2] : step { budget 4; cost 1 + member(E); memory kv; }
workload { arrive batch(2); }
session {
  hold kv[serial] (4) { run E[serial] prefill (6) growing kv[serial]; }
  observe t = now * 10 + used(kv[serial]);
}
run { horizon 10; }
""", {"t": [(0, 2.0, 20.0), (1, 4.0, 40.0)]},
     {("E", 0): {"iterations": 2, "tokens": 3.0, "utilisation": 0.2, "token_utilisation": 0.75},
      ("E", 1): {"iterations": 2, "utilisation": 0.4, "service": 4.0},
      ("kv", 0): {"used": 1.0}, ("kv", 1): {"used": 2.0}}),
]


FAMILIES += [
    # Queue families (§2, Queues): "a family of one is still a family: its entries are called D[j].decode
    # (…)"; `mark` is read afterwards as P.done, without an index; `D pull P latency 0.5 share maxmin` makes
    # a transfer without `on` the read: the latency, then one flow over P.nic[i] (ps 2) and D.nic[0] (ps 4),
    # at 2 (P.nic fills), then the load and the release of the lease. The three sessions choose at 0, before
    # any admission: holders 0 everywhere, the least -i: P[1] for all. P[1].kv (10) admits s0 and s1 (4
    # each), s2 waits. P[1] serves s0 [0, 2], s1 [2, 4]. s0: latency [2, 2.5], read 4 / 2 [2.5, 4.5] (its
    # lease ends, 4 cached in P[1].kv), D [4.5, 5.5]. At 4.5 s2 is admitted to P[1].kv (s1's lease 4, the 4
    # cached evicted: 4 + 4 <= 10 only without them), P[1] [4.5, 6.5]. s1: latency [4, 4.5], read [4.5, 6.5],
    # D [6.5, 7.5]. s2: latency [6.5, 7], read [7, 9], D [9, 10], its D.kv hold evicting s0's 4 cached there.
    ("a_gateway_and_queue_families_with_a_pull", """
queue gw : gateway { route { choose i in 2 by (holders(P[i].kv), -i); P[i].prefill (prompt); D[0].decode (prompt) from P[i]; } }
queue P[2] : prefill {
  pool kv { cap 10; }
  serve fifo;
  nic ps(2);
  prefill (p) {
    hold kv (p) { run (p / 2); mark done; } cache (p) lease kv (inf);
  }
}
queue D[1] : decode {
  pool kv { cap 10; }
  serve fifo;
  nic ps(4);
  decode (p) from src {
    hold kv (p) {
      transfer (p) from src to kv (p);
      run (o);
    } cache (p + o);
  }
}
D pull P latency 0.5 share maxmin;
workload { arrive batch(3); hidden o; session { set prompt = 4; set o = 1; set t0 = now; request gw; observe f = P.done; observe t = now - t0; } }
run { horizon 100; }
""", {"f": [(0, 5.5, 2.0), (1, 7.5, 4.0), (2, 10.0, 6.5)], "t": [(0, 5.5, 5.5), (1, 7.5, 7.5), (2, 10.0, 10.0)]},
     {("P", 0): {"completions": 0}, ("P", 1): {"completions": 3, "wait": 2 / 3, "service": 2.0},
      ("P.nic", 1): {"completions": 3, "service": 2.0, "utilisation": 0.06},
      ("D.nic", 0): {"utilisation": 0.03}, ("D.nic.latency", 0): {"completions": 3, "service": 0.5},
      ("D", 0): {"completions": 3, "wait": 0.0},
      ("P.kv", 1): {"wait": 1.5, "admissions": 3, "evicted_entries": 1, "evicted_units": 4.0},
      ("D.kv", 0): {"admissions": 3, "evicted_entries": 1}}),
]


FAMILIES += [
    # choose by work(s[j]), the work a member's jobs have left: s0 (0, 0): s[0], 3 there; s1 (3, 0): s[1],
    # 1; s2 (3, 1): s[1], 2 behind it; s3 at 1, after s1's end started s2: (2, 2), the smallest index.
    ("choose_by_the_work_left", """
stage s[2] : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial == 3 ? 1 : 0);
  choose j in 2 by (work(s[j]));
  observe pick = j * 100 + work(s[0]) * 10 + work(s[1]);
  run s[j] (serial == 0 ? 3 : serial);
}
run { horizon 10; }
""", {"pick": [(0, 0.0, 0.0), (1, 0.0, 130.0), (2, 0.0, 131.0), (3, 1.0, 22.0)]},
     {("s", 0): {"completions": 2}, ("s", 1): {"completions": 2, "wait": 0.5}}),
    # §3: "stage E[N] : step { memory kv; } next to … a family of one, every member gets that one": E[0]
    # and E[1] count kv[0] (cap 5), each admitting its own q[i]. Each decodes 3 growing from a hold of 2:
    # at the third token (t = 2) E[0] plans first and grows s0 to 3 (used 5); E[1]'s growth of s1 finds no
    # room: the candidates are both engines' residents, the last admitted is s1 (E[1] admitted it after E[0]
    # admitted s0): s1 is its own victim, caching its position 2; E[1]'s step only preempted [2, 3]. At 3
    # s0 ends (caching 3), E[1] admits s1 again: it consumes its 2, its growth to 3 evicts s0's 3, and it
    # decodes 3 tokens to 6, caching 5. kv used 4, 4, 3, 3, 4, 5 on [0, 1] … [5, 6]: 23 / 20; cached 2 on
    # [2, 3] and 5 from 6: 72 / 20. E[1]: 6 iterations, 5 of one token, utilisation 6 / 20.
    ("engines_of_a_family_share_a_pool_family_of_one", """
pool kv[1] { cap 5; preempt lifo; }
pool q[2] { cap 1; admit via E; }
stage E[2] : step { budget 4; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold q[serial] (1), kv (2) {
    run E[serial] decode (3) growing kv;
  } cache (5);
  observe t = now * 10 + serial;
}
run { horizon 20; }
""", {"t": [(0, 3.0, 30.0), (1, 6.0, 61.0)]},
     {("E", 0): {"iterations": 3, "utilisation": 0.15}, ("E", 1): {"iterations": 6, "decode_only": 5,
                                                                  "tokens": 5 / 6, "utilisation": 0.3,
                                                                  "present": 0.25},
      ("kv", 0): {"used": 1.15, "cached": 3.6, "preemptions": 1, "evicted_units": 3.0, "admissions": 3},
      ("q", 1): {"wait": 0.5, "admissions": 2}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in FAMILIES], ids=[c[0] for c in FAMILIES])
def test_families_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Sessions and turns; the report's figures over [warmup, end]
# ---------------------------------------------------------------------------------------------------------

SESSIONS = [
    # init reads turn_no 0; each `turn;` counts first, then runs the turn block (k + 1, th). s0 thinks 0
    # (its runs of 0 complete at once, no completion), s1 1. f serves: s0 [0, 1], s1 [1, 2]; at 1 s0 turns
    # at once and waits behind s1: [2, 3]; at 3 s0's end was scheduled before s1's think end: s0 [3, 4],
    # s1 waits, [4, 5]; s1 thinks [5, 6], [6, 7]. Waits s0 0, 1, 0 and s1 1, 1, 0: 3 / 6; present (4 + 5)
    # / 20; think: two runs of 1.
    ("turns_carry_attributes_and_think_zero", """
stage d : delay;
stage f : fifo;
workload {
  arrive batch(2);
  init { set k = serial * 100; observe i = turn_no + k; }
  turn { set k = k + 1; set th = serial == 0 ? 0 : 1; }
}
session {
  turn;
  loop {
    run f (1);
    observe o = turn_no * 1000 + k;
    branch (turn_no < 3) { run d (th); turn; } else { end; }
  }
}
run { horizon 20; }
""", {"i": [(0, 0.0, 0.0), (1, 0.0, 100.0)],
      "o": [(0, 1.0, 1001.0), (1, 2.0, 1101.0), (0, 3.0, 2002.0), (0, 4.0, 3003.0), (1, 5.0, 2102.0),
            (1, 7.0, 3103.0)]},
     {("f", None): {"wait": 0.5, "present": 0.45, "completions": 6}, ("d", None): {"completions": 2},
      "turns": 6, "ended": 2}),
    # A `set` inside a hold runs again when the hold does after a preemption. cap 6, preempt lifo, no
    # engine: s0 (2) and s1 (2) admitted at 0; s0's grow (4) at 1 finds 2 free: the victim is the last
    # admitted holder, s1 (its run leaves d, nothing computed: no cache, computed 0). s0 runs to 2 and
    # caches min(2, 6) = 2; s1, first in the queue, is admitted at 2, sets n again (2) and runs d (3) to 5,
    # caching 2. kv: used 4 [0, 1], 6 [1, 2], 2 [2, 5]: 16 / 20; cached 2 [2, 5] and 4 after: 66 / 20;
    # waits (0 + 0 + 1) / 3 (the re-admission is an admission, its wait from 1); d: s1's first run taken
    # back is no completion: s0's 1 and 1, s1's 3.
    ("a_set_in_a_hold_runs_again_after_a_preemption", """
pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  set n = 0;
  hold kv (2) {
    set n = n + 1;
    observe enter = n * 10 + computed;
    run d (serial == 0 ? 1 : 3);
    branch (serial == 0) { grow kv (4); run d (1); }
  } cache (2);
  observe done = n * 10 + cached;
}
run { horizon 20; }
""", {"enter": [(0, 0.0, 10.0), (1, 0.0, 10.0), (1, 2.0, 20.0)], "done": [(0, 2.0, 10.0), (1, 5.0, 20.0)]},
     {("kv", None): {"used": 0.8, "cached": 3.3, "preemptions": 1, "admissions": 3, "wait": 1 / 3,
                     "queue": 0.05},
      ("d", None): {"completions": 3, "service": 5 / 3}}),
    # A closed population of 1, think 0 after the first turn and 2 after the second, warm-up 1.5: s0 runs f
    # [0, 1] (its sample at 1 is cut), [1, 2], thinks [2, 4], [4, 5] and ends; s1 arrives at 5 at once:
    # [5, 6], [6, 7], thinks [7, 9], [9, 10] and ends at the horizon, where s2 arrives and turns. `v` is
    # carried from turn to turn. turns after the warm-up: s0's third, s1's three, s2's first; arrivals
    # count all three. Over [1.5, 10]: f present 0.5 + 4 of 8.5, think 4 / 8.5.
    ("a_closed_population_and_its_turns_after_a_warm_up", """
stage f : fifo;
stage think : delay;
workload { arrive closed(1); turn { set th = turn_no == 1 ? 0 : 2; } }
session {
  set v = serial * 10;
  turn;
  loop {
    run f (1);
    set v = v + 1;
    observe o = turn_no * 100 + v;
    branch (turn_no == 3) { end; }
    run think (th);
    turn;
  }
}
run { horizon 10; warmup 1.5; }
""", {"o": [(0, 2.0, 202.0), (0, 5.0, 303.0), (1, 6.0, 111.0), (1, 7.0, 212.0), (1, 10.0, 313.0)]},
     {("f", None): {"present": 4.5 / 8.5, "utilisation": 4.5 / 8.5, "completions": 5},
      ("think", None): {"present": 4 / 8.5, "completions": 2, "service": 2.0},
      "turns": 5, "arrivals": 3, "ended": 2, "mean_live": 1.0}),
    # One slot, three sessions of 2: [0, 2], [2, 4], [4, 6]; warm-up 3, the run to 10: the slot's wait is
    # that of the holds admitted after the warm-up (s2's, 4, its whole wait); queue s2 on [3, 4]: 1 / 7.
    # The samples before the warm-up are cut (s1's wait at 2); f over [3, 10]: busy [3, 6], completions s1
    # (4) and s2 (6).
    ("a_warm_up_cuts_a_session_in_flight", """
pool slots { cap 1; }
stage f : fifo;
workload { arrive batch(3); }
session {
  set t0 = now;
  hold slots (1) {
    observe w = now - t0;
    run f (2);
  }
  observe r = now - t0;
}
run { horizon 10; warmup 3; }
""", {"w": [(2, 4.0, 4.0)], "r": [(1, 4.0, 4.0), (2, 6.0, 6.0)]},
     {("f", None): {"present": 3 / 7, "utilisation": 3 / 7, "completions": 2, "wait": 0.0, "service": 2.0},
      ("slots", None): {"used": 3 / 7, "queue": 1 / 7, "wait": 4.0, "admissions": 1}}),
    # fifo(2) and ps(2), warm-up 2: f serves s0 [0, 1], s1 [0, 3], s2 [1, 6]; p (a job alone at 2) s0 [1,
    # 2], s1 [3, 4], s2 [6, 7]. Over [2, 10]: f holds 2 jobs on [2, 3], 1 on [3, 6]: present 5 / 8,
    # utilisation busy servers / 2: 5 / 16; completions at or after 2: s1, s2, waits 0 and 1, service 3 and
    # 5. p: all three complete at or after 2 (s0 at 2), busy 2 of 8.
    ("fifo_and_ps_utilisation_after_a_warm_up", """
stage f : fifo(2);
stage p : ps(2);
workload { arrive batch(3); }
session {
  run f (2 * serial + 1);
  run p (2);
  observe r = now;
}
run { horizon 10; warmup 2; }
""", {"r": [(0, 2.0, 2.0), (1, 4.0, 4.0), (2, 7.0, 7.0)]},
     {("f", None): {"present": 0.625, "utilisation": 0.3125, "completions": 2, "wait": 0.5, "service": 4.0},
      ("p", None): {"present": 0.25, "utilisation": 0.25, "completions": 3, "throughput": 0.375,
                    "service": 1.0}}),
    # Gauges of a pool's queue and holders over [1, 8]: one slot, three holds of 2: queued 2 on [1, 2], 1
    # on [2, 4]: 4 / 7 (the pool's `queue`), max 2; holders 1 on [1, 6]: 5 / 7, min 0 (held on [6, 8]).
    ("gauges_of_a_pools_queue", """
pool slots { cap 1; }
stage f : fifo;
gauge q = queued(slots);
gauge h = holders(slots);
workload { arrive batch(3); }
session {
  hold slots (1) { run f (2); }
}
run { horizon 8; warmup 1; }
""", {}, {("gauge", "q"): {"mean": 4 / 7, "min": 0.0, "max": 2.0}, ("gauge", "h"): {"mean": 5 / 7, "min": 0.0,
                                                                                  "max": 1.0},
          ("slots", None): {"queue": 4 / 7, "holders": 5 / 7, "wait": 3.0, "admissions": 2}}),
    # `end` inside a hold releases it, caching per its clause: the first hold caches 3; the second (5)
    # consumes them and ends the session at 2 with cache (4): min(4, 5) = 4 cached from 2 on.
    ("end_inside_a_hold_caches_per_its_clause", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3) { run d (1); } cache (3);
  hold kv (5) { run d (1); end; } cache (4);
}
run { horizon 10; }
""", {}, {("kv", None): {"used": 0.8, "cached": 3.2, "admissions": 2}}),
    # reuse (0) consumes nothing: the 3 cached become a dead entry (cachedin 0), which `drop` (the own
    # prefix) does not touch; the hold's cache (4) at 3 adds 4: cached 3 on [1, 3], 7 after: 55 / 10.
    ("drop_leaves_a_dead_entry", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3) { run d (1); } cache (3);
  hold kv (5) reuse (0) { run d (1); drop kv; observe c = cachedin(kv) * 10 + used(kv); run d (1); } cache (4);
  observe after = cachedin(kv);
}
run { horizon 10; }
""", {"c": [(0, 2.0, 5.0)], "after": [(0, 3.0, 4.0)]}, {("kv", None): {"used": 1.3, "cached": 5.5}}),
    # `release kv` in a hold of kv and b gives kv back now, caching min(2, 3) = 2; b caches its 2 at the
    # end.
    ("release_one_pool_of_a_hold", """
pool kv { cap 10; }
pool b { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3), b (2) { run d (1); release kv; observe u = used(kv) * 10 + used(b) + cachedin(kv) * 100; run d (1); } cache (2);
  observe after = cachedin(kv) * 10 + cachedin(b);
}
run { horizon 10; }
""", {"u": [(0, 1.0, 202.0)], "after": [(0, 2.0, 22.0)]},
     {("kv", None): {"used": 0.3, "cached": 1.8}, ("b", None): {"used": 0.4, "cached": 1.6}}),
]


SESSIONS += [
    # §2: "Time averages and rates use end - warmup": renewal(2) arrives at 2, 4, 6 (the first after one
    # gap), `arrivals 3` drains at 7; warm-up 2.5 cuts s0's run [2, 3] in flight: over [2.5, 7] f is busy
    # 0.5 + 1 + 1 of 4.5, three completions (3, 5, 7) at a rate of 3 / 4.5, one session live as long.
    ("a_finite_run_cut_by_a_warm_up_in_flight", """
stage f : fifo;
workload { arrive renewal(2); }
session { run f (1); observe t = now; }
run { horizon 100; warmup 2.5; arrivals 3; }
""", {"t": [(0, 3.0, 3.0), (1, 5.0, 5.0), (2, 7.0, 7.0)]},
     {"end": 7.0, "horizon": 100.0, "mean_live": 2.5 / 4.5, "arrivals": 3, "ended": 3,
      ("f", None): {"utilisation": 2.5 / 4.5, "present": 2.5 / 4.5, "throughput": 3 / 4.5, "completions": 3}}),
]


SESSIONS += [
    # A batch arrives as one spawn (docs/language.md): the three `init`s run before any session's
    # statements (queue(d) 0 in each), then the sessions, in serial order.
    ("a_batch_arrives_as_one_spawn", """
stage d : delay;
workload { arrive batch(3); init { observe q = queue(d) * 10 + serial; } }
session { observe r = queue(d) * 10 + serial; run d (1); }
run { horizon 10; }
""", {"q": [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 0.0, 2.0)], "r": [(0, 0.0, 0.0), (1, 0.0, 11.0), (2, 0.0, 22.0)]},
     {("d", None): {"present": 0.3, "completions": 3}}),
    # closed(2), runs of 1: s0 and s1 arrive together (inits read 0); at 1 s0's end comes first and its
    # replacement s2 arrives while s1's job is still there (queue 1); then s1 ends and s3 arrives beside s2.
    ("a_closed_populations_replacements_arrive_one_at_a_time", """
stage d : delay;
workload { arrive closed(2); init { observe q = queue(d) * 10 + serial; } }
session { run d (1); }
run { horizon 1.5; }
""", {"q": [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 1.0, 12.0), (3, 1.0, 13.0)]}, {"arrivals": 4, "ended": 2}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in SESSIONS], ids=[c[0] for c in SESSIONS])
def test_sessions_and_figures_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Run-time errors §2 and §3 name: the statement's place, the time and the session, the same on both tiers
# ---------------------------------------------------------------------------------------------------------

RUN_ERRORS = [
    # §2: "stage arrays and choose"; a computed index that names no member (serial 2 of a family of 2)
    ("stage s[2] : fifo;\nworkload { arrive batch(3); }\nsession { run s[serial] (1); }\nrun { horizon 10; }\n",
     "<source>:3:15: error: at t=0, session 2: stage s: index 2 out of range (the family has 2)"),
    # §2: "Gaps must be positive and finite": a gap of 0 drawn
    ("stage s : fifo;\nworkload { arrive renewal(~uniform(0, 0)); }\nsession { run s (1); }\n"
     "run { horizon 10; }\n",
     "<source>:2:27: error: at t=0: arrive renewal: the gap is 0; gaps must be positive and finite"),
    # §2: "failure to … drain every session by that deadline is an error": three arrivals at 1, 2, 3 of 5
    # each on one server: two still live at 10
    ("stage s : fifo;\nworkload { arrive renewal(1); }\nsession { run s (5); }\n"
     "run { horizon 10; arrivals 3; }\n",
     "<source>:4:19: error: at t=10: run { arrivals 3; }: 2 sessions still live at the horizon (not drained)"),
    # §2: "Draining before or at warmup is also an error": arrivals at 1, 2, 3, done at 4
    ("stage s : fifo;\nworkload { arrive renewal(1); }\nsession { run s (1); }\n"
     "run { horizon 100; warmup 50; arrivals 3; }\n",
     "<source>:4:31: error: at t=4: run { arrivals 3; }: drained at t=4, at or before the warmup 50 (nothing to "
     "measure)"),
    # §3, Branching: "a computed one is refused when it is evaluated"
    ("stage d : delay;\nworkload { arrive batch(1); }\nsession { set g = 2; branch (g) { run d (1); } }\n"
     "run { horizon 1; }\n",
     "<source>:3:22: error: at t=0, session 0: branch guard is 2, not 0 or 1: a guard is a test; write the "
     "comparison meant (`n > 0`, `x != 0`)"),
    # a run's work is time: a negative one computed
    ("stage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (serial - 1); }\nrun { horizon 10; }\n",
     "<source>:3:11: error: at t=0, session 0: the run's work is negative (-1)"),
    # §3, load: "which its allocation must cover"
    ("pool kv { cap 30; }\nstage s : fifo;\nworkload { arrive batch(1); }\n"
     "session { hold kv (2) { set n = 3; load kv (n); run s (1); } cache (3); }\nrun { horizon 10; }\n",
     "<source>:4:36: error: at t=0, session 0: load kv (3): the hold has 2 allocated and 0 computed; a load "
     "must fit the allocation (grow first)"),
    # a hold's units are a count: negative ones computed
    ("pool kv { cap 30; }\nstage s : fifo;\nworkload { arrive batch(2); }\n"
     "session { set u = serial - 1; hold kv (u) { run s (1); } }\nrun { horizon 10; }\n",
     "<source>:4:40: error: at t=0, session 0: the units of kv are negative (-1)"),
    # choose among 0 candidates, computed
    ("stage s : fifo;\nworkload { arrive batch(2); }\nsession { set n = serial; choose j in n by (j); run s (1); }\n"
     "run { horizon 10; }\n",
     "<source>:3:39: error: at t=0, session 0: choose j: the count of candidates is 0, not a whole number from 1 "
     "to 100000"),
    # member() of a computed reference that names no member
    ("pool kv[2] { cap 3; }\nstage s : fifo;\nworkload { arrive batch(3); }\n"
     "session { observe m = member(kv[serial]); run s (1); }\nrun { horizon 10; }\n",
     "<source>:4:30: error: at t=0, session 2: pool kv: index 2 out of range (the family has 2)"),
]


@pytest.mark.parametrize("src, message", RUN_ERRORS, ids=[f"e{i}" for i in range(len(RUN_ERRORS))])
def test_run_time_errors_name_the_place_time_and_session(monkeypatch, src, message):
    assert run_error(src, monkeypatch) == message


# ---------------------------------------------------------------------------------------------------------
# More by hand: ps ties, flows over families, leases of a time, a tier of less room, step observables,
# pool-reference.txt's priority lanes
# ---------------------------------------------------------------------------------------------------------

MORE = [
    # §3, Ties: "jobs of a ps stage with equal finish tags finish in the order they started". ps(1): s1
    # starts 2 at 0, s0 1 at 1, s2 0.5 at 1.5. [0, 1] s1 alone: 1 left; [1, 1.5] two at 1/2: s1 and s0 0.75
    # left; three at 1/3: s2's 0.5 done at 3 (queue 2 after it), s1 and s0 0.25 left; two at 1/2: both done
    # at 3.5, s1 first (started first): it sees s0 still there (1), s0 none (samples listed by session at
    # one instant). Jobs [0, 3.5], [1, 3.5], [1.5, 3]: present 7.5 / 10, service 7.5 / 3; busy [0, 3.5].
    ("ps_equal_finish_tags_in_start_order", """
stage p : ps(1);
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 1 ? 0 : 1 + (serial == 2) * 0.5);
  run p (serial == 1 ? 2 : (serial == 0 ? 1 : 0.5));
  observe q = queue(p) * 10 + serial;
}
run { horizon 10; }
""", {"q": [(2, 3.0, 22.0), (0, 3.5, 0.0), (1, 3.5, 11.0)]},
     {("p", None): {"present": 0.75, "utilisation": 0.35, "completions": 3, "service": 2.5}}),
    # Flows over stage families (§3, Stages: "a run names each stage array once"; "every job on it, a
    # single-stage run included, is a flow"): f0 over eg[0] (φ 1) and ing[1] (φ 2), f1 on ing[1], f2 on
    # eg[0] (2). maxmin: eg[0] fills at 0.5 (f0, f2 stop), f1 rises to 2 - 0.5 = 1.5: done at 2/3; then f0
    # and f2 share eg[0] at 0.5: f0's 2/3 left done at 2; f2's 1 left alone at 1: done at 3. eg[0] full on
    # [0, 3]: 3 / 10; ing[1] carries 2/2 on [0, 2/3] and 0.5/2 on [2/3, 2]: 1 / 10. p[·] ps(min(present,
    # 2)) is no flow stage: s3 and s4 alone at rate 1 to 1, then both on p[0], φ 2: done at 2.
    ("flows_over_stage_families", """
stage eg[2] : ps(1);
stage ing[2] : ps(2);
stage p[2] : ps(min(present, 2));
share maxmin;
workload { arrive batch(5); }
session {
  branch (serial == 0) { run eg[0], ing[1] (1); }
  branch (serial == 1) { run ing[1] (1); }
  branch (serial == 2) { run eg[0] (2); }
  branch (serial >= 3) { run p[serial - 3] (1); run p[0] (1); }
  observe t = now * 10 + serial;
}
run { horizon 10; }
""", {"t": [(1, 2 / 3, 20 / 3 + 1), (0, 2.0, 20.0), (3, 2.0, 23.0), (4, 2.0, 24.0), (2, 3.0, 32.0)]},
     {("eg", 0): {"utilisation": 0.3, "completions": 2, "service": 2.5}, ("eg", 1): {"completions": 0},
      ("ing", 1): {"utilisation": 0.1, "present": (2 * 2 / 3 + 4 / 3) / 10},
      ("p", 0): {"completions": 3, "utilisation": 0.2}, ("p", 1): {"completions": 1}}),
    # §3: a lease "until the session's release m, t seconds, or the session's end, and cache applies then".
    # Both hold 4 on [0, 1]; s0 leases 2 s (to 3), s1 10 s but releases at 2: caches 3 then, s0 at 3.
    # At 1: used 8, holders 2; s1 at 2 before its release the same, after 4 (s0's lease), its 3 cached, 1
    # holder; s0 at 4: nothing held, its 3 cached. used 8 · 2 + 4 · 1; cached 3 · 18 + 3 · 17.
    ("a_lease_of_a_time_and_one_released", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (4) { run d (1); } cache (3) lease kv (serial == 0 ? 2 : 10);
  observe a = used(kv) * 100 + cachedin(kv) * 10 + holders(kv);
  run d (serial == 0 ? 3 : 1);
  observe b = used(kv) * 100 + cachedin(kv) * 10 + holders(kv);
  branch (serial == 1) { release kv; observe c = used(kv) * 100 + cachedin(kv) * 10 + holders(kv); }
}
run { horizon 20; }
""", {"a": [(0, 1.0, 802.0), (1, 1.0, 802.0)], "b": [(1, 2.0, 802.0), (0, 4.0, 30.0)], "c": [(1, 2.0, 431.0)]},
     {("kv", None): {"used": 1.0, "cached": 5.25, "holders": 0.25}}),
    # A spill writes what the tier has room for, rounded down to its blocks, and its work reads `size` as
    # the units written, its predicate as the units evicted: s1's 8 at 2 evicts s0's 5 (5 >= 3: spilled);
    # cpu (cap 3, block 2) takes 2, over the link for 2: [2, 4]. s0 finds 2 in cpu at 11.
    ("a_spill_to_a_tier_of_less_room", """
pool kv { cap 8; spill cpu via link (size) when (size >= 3); }
pool cpu { cap 3; block 2; }
stage link : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (5) { run d (1); } cache (5);
    run d (10);
    observe k = cachedin(kv) * 10 + cachedin(cpu);
  } else {
    run d (2);
    hold kv (8) { run d (1); } cache (0);
  }
}
run { horizon 20; }
""", {"k": [(0, 11.0, 2.0)]},
     {("link", None): {"completions": 1, "service": 2.0},
      ("kv", None): {"spills": 1, "evicted_entries": 1, "evicted_units": 5.0, "cached": 0.25},
      ("cpu", None): {"cached": 1.8}}),
    # A step stage's observables (docs/language.md: `queue(s)` its residents, `busy(s)` the jobs the running
    # iteration serves) as gauges. budget 3, cap 2, three prefills of 4: [0, 1] s0 3 (budget spent: no
    # admission); [1, 2] s0 1, s1 admitted 2; [2, 3] s1 2, s2 admitted 1; [3, 4] s2 3. Residents 1, 2, 2,
    # 1: 6 / 10; holders·10 + queued: 12, 21, 20, 10: 63 / 10. reqs waits 0, 1, 2.
    ("a_step_stages_residents_as_gauges", """
pool reqs { cap 2; admit via E; }
stage E : step { budget 3; cost 1; }
workload { arrive batch(3); }
gauge q = queue(E);
gauge b = busy(E);
gauge h = holders(reqs) * 10 + queued(reqs);
session {
  hold reqs (1) { run E prefill (4); }
  observe t = now;
}
run { horizon 10; }
""", {"t": [(0, 2.0, 2.0), (1, 3.0, 3.0), (2, 4.0, 4.0)]},
     {("gauge", "q"): {"mean": 0.6, "max": 2.0}, ("gauge", "b"): {"mean": 0.6, "max": 2.0},
      ("gauge", "h"): {"mean": 6.3, "max": 21.0, "min": 0.0},
      ("E", None): {"iterations": 4, "tokens": 3.0, "batch": 1.5, "present": 0.6, "service": 2.0},
      ("reqs", None): {"wait": 1.0, "queue": 0.3}}),
    # A warm-up inside an iteration: budget 2, cost 2, two prefills of 3: [0, 2] s0 2; [2, 4] s0 1, s1 1;
    # [4, 6] s1 2. Over [3, 10]: an iteration runs on [3, 6] (3 / 7); the iterations planned after the
    # warm-up: one (2 tokens); residents 2 on [3, 4], 1 on [4, 6]: 4 / 7; both runs complete after it.
    ("a_warm_up_inside_an_iteration", """
pool reqs { cap 2; admit via E; }
stage E : step { budget 2; cost 2; }
workload { arrive batch(2); }
session {
  hold reqs (1) { run E prefill (3); }
  observe t = now;
}
run { horizon 10; warmup 3; }
""", {"t": [(0, 4.0, 4.0), (1, 6.0, 6.0)]},
     {("E", None): {"utilisation": 3 / 7, "iterations": 1, "tokens": 2.0, "present": 4 / 7, "completions": 2,
                    "service": 4.0}}),
    # §3, Stages: "A run of zero work completes at once": s0's prefill (0) and decode (0) take no
    # iteration; s1's decode (1) one, [0, 1].
    ("zero_runs_on_a_step_stage", """
pool reqs { cap 4; admit via E; }
stage E : step { budget 4; cost 1; }
workload { arrive batch(2); }
session {
  hold reqs (1) { run E prefill (serial * 0); run E decode (serial); }
  observe t = now * 10 + serial;
}
run { horizon 10; }
""", {"t": [(0, 0.0, 0.0), (1, 1.0, 11.0)]},
     {("E", None): {"iterations": 1, "completions": 1, "decode_only": 1, "tokens": 1.0},
      ("reqs", None): {"admissions": 2}}),
    # pool-reference.txt, queue: the priority lanes with a three-second aging threshold, "immediate
    # requests, then aged long requests, then short requests, then other long requests". One hold at a
    # time (cap 4, each 4), each 2 s. At 0: s4 immediate (0); at 2: waited 2 < 3, s0 and s2 short (2),
    # s1 and s3 long (3): s0; at 4: waited 4 >= 3: s1 and s3 aged (1): s1; at 6: s3; at 8: s2.
    ("priority_lanes_with_aging", """
pool kv { cap 4; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); }
stage d : delay;
workload { arrive batch(5); }
session {
  set immediate = serial == 4;
  set prompt = serial == 1 || serial == 3 ? 200 : 100;
  hold kv (4) { run d (2); }
  observe t = now * 10 + serial;
}
run { horizon 20; }
""", {"t": [(4, 2.0, 24.0), (0, 4.0, 40.0), (1, 6.0, 61.0), (3, 8.0, 83.0), (2, 10.0, 102.0)]},
     {("kv", None): {"wait": (0 + 2 + 4 + 6 + 8) / 5, "queue": (4 + 3 + 2 + 1) * 2 / 20}}),
]


# s0 and s1 hold reqs and kv, s2 waits for reqs; s0's growth at 1 preempts the last admitted (s1), which
# goes back to the queue of its hold's FIRST pool, reqs, whichever pool preempted it
REQUEUE = """
pool reqs { cap 2; }
pool kv { cap 6; preempt by (-admission) requeue WHERE; }
stage d : delay;
workload { arrive batch(3); }
session {
  set t0 = now;
  hold reqs (1), kv (serial == 0 ? 2 : 4) {
    observe enter = (now - t0) * 10 + serial;
    run d (serial == 0 ? 1 : 3);
    branch (serial == 0) { grow kv (4); run d (1); }
  }
}
run { horizon 20; }
"""

MORE += [
    # pool-reference.txt, preempt: the victim "re-enters the hold's first pool's queue"; "requeue head (the
    # default) places it first". At 0 s0 (kv 2) and s1 (kv 4) fill kv; s2 waits in reqs. At 1 s0's grow
    # (4) preempts s1 (admission 1, key -1 the least): s1 back at the head of reqs's queue, ahead of s2;
    # s0 grows to 6. At 2 s0 releases: the head s1 takes 4 of kv, s2's 4 do not fit beside it: s2 waits to
    # 5. reqs waits 0, 0, 1 (s1 from 1), 5 (s2): 6 / 4; queue s1 [1, 2] + s2 [0, 5]: 6 / 20; kv used 6 on
    # [0, 2], 4 on [2, 8]: 36 / 20.
    ("a_victim_requeued_at_the_head_of_its_first_pool", REQUEUE.replace("WHERE", "head"),
     {"enter": [(0, 0.0, 0.0), (1, 0.0, 1.0), (1, 2.0, 21.0), (2, 5.0, 52.0)]},
     {("reqs", None): {"wait": 1.5, "queue": 0.3, "admissions": 4},
      ("kv", None): {"used": 1.8, "preemptions": 1, "wait": 0.0, "queue": 0.0}}),
    # "requeue tail treats it as a newcomer: FIFO places it last": behind s2, which takes kv at 2; s1 at 5.
    ("a_victim_requeued_at_the_tail_of_its_first_pool", REQUEUE.replace("WHERE", "tail"),
     {"enter": [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 2.0, 22.0), (1, 5.0, 51.0)]},
     {("reqs", None): {"wait": 1.5, "queue": 0.3, "admissions": 4}, ("kv", None): {"used": 1.8}}),
    # pool-reference.txt, reserve held: "A new reservation r requires used + Σ u_i + r <= cap. Growth by d
    # requires used + Σ_{i != grower} u_i + d <= cap"; "Cached prefixes are evicted when units are
    # allocated, not when reserved". s0 caches 2 at 1 (its later hold has no cache: it leaves them). At 2
    # s1 (2, reserve 6: u 4) and s2 (2, reserve 3: u 1) are admitted (0 + 0 + 6, 2 + 4 + 3 <= 10); s0's
    # (reserve 3) is not: 4 + 5 + 3 = 12. At 3 s1 grows 3 into its own reservation: 4 + 1 + 3 = 8 (used 7,
    # u 1); s2's grow: 7 + 1 + 3 = 11, it waits (preempt none). At 4 s1 releases: s0 is admitted (used 4)
    # and s2 grows (4 + 1 + 3 = 8): used 7 for both; s0 keeps its 2 cached. At 5 s2 releases, s0 grows to
    # 5. used 2, 0, 4, 7, 7, 5 on [0, 1] … [5, 6]: 25 / 20; cached 2 on [1, 20]: 38 / 20.
    ("reserve_held_and_growth_into_its_own_reservation", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  set t0 = now;
  branch (serial == 0) { hold kv (2) { run d (1); } cache (2); }
  run d (serial == 0 ? 1 : 2);
  hold kv (2) reserve (serial == 1 ? 6 : 3) {
    observe a = (now - t0) * 1000 + used(kv) * 10 + cachedin(kv);
    run d (1);
    grow kv (3);
    observe b = (now - t0) * 1000 + used(kv) * 10 + cachedin(kv);
    run d (1);
  }
}
run { horizon 20; }
""", {"a": [(1, 2.0, 2020.0), (2, 2.0, 2040.0), (0, 4.0, 4072.0)],
      "b": [(1, 3.0, 3070.0), (2, 4.0, 4070.0), (0, 5.0, 5052.0)]},
     {("kv", None): {"used": 1.25, "cached": 1.9, "queue": 0.1, "wait": 0.5, "admissions": 4,
                     "evicted_units": 0.0}}),
]


MORE += [
    # §3, Gauges: "the least and greatest value held for a positive time", read "at the end of every
    # instant". used(slots) over [1, 10]: 1 on [4, 6] (s0), 3 from 10, the end, held for no time: the mean
    # 2 / 9, the greatest 1. The CI: 20 windows of 0.45 hold 1/3, 1, 1, 1, 1, 1/9 and fourteen 0s: sample
    # variance 3.135802… / 19, half-width 2.093 · √(that / 20).
    ("a_gauge_value_held_for_no_time_is_no_extreme", """
pool slots { cap 5; }
stage d : delay;
gauge h = used(slots);
workload { arrive batch(2); }
session {
  run d (serial == 0 ? 4 : 10);
  hold slots (serial == 0 ? 1 : 3) { run d (serial == 0 ? 2 : 5); }
}
run { horizon 10; warmup 1; }
""", {}, {("gauge", "h"): {"mean": 2 / 9, "min": 0.0, "max": 1.0,
                          "ci": 2.093 * math.sqrt((1 / 81 + 4 * 49 / 81 + 1 / 81 + 14 * 4 / 81) / 19 / 20)}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in MORE], ids=[c[0] for c in MORE])
def test_more_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_a_sample_carries_the_turn_it_was_taken_in(monkeypatch):
    """§3, Statistics: "observe x = e records a sample after warm-up with the time, session and turn": the
    samples of turns_carry_attributes_and_think_zero carry turn_no at the moment they were taken (0 in
    `init`, then 1, 2, 3 as each `turn;` counts), the same bytes on both tiers."""
    src = next(c[1] for c in SESSIONS if c[0] == "turns_carry_attributes_and_think_zero")
    r, _ = run(src, monkeypatch)
    got = {n: sorted(zip(o.times.tolist(), o.sessions.tolist(), o.turns.tolist())) for n, o in r.observes.items()}
    assert got["i"] == [(0.0, 0, 0), (0.0, 1, 0)]
    assert got["o"] == [(1.0, 0, 1), (2.0, 1, 1), (3.0, 0, 2), (4.0, 0, 3), (5.0, 1, 2), (7.0, 1, 3)]



def _run_error_text(tmp_path, src: str, monkeypatch) -> str:
    """The whole run-time error of the program ``src`` written to ``p.sq`` (the place, the source line and its
    caret, the notes), the same on both tiers, with the file's name as ``p.sq``."""
    import serq_frontend
    import serq_sim

    path = tmp_path / "p.sq"
    path.write_text(src)
    monkeypatch.chdir(tmp_path)
    texts = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(serq_frontend.compile("p.sq"))
        texts.append(str(e.value))
    assert texts[0] == texts[1]
    return texts[0]


def test_a_run_time_error_in_a_definition_names_the_body_and_the_use(tmp_path, monkeypatch):
    """program-reference.txt, def: "An error in an expansion is reported in the body, with a note naming the
    use": session 0's run of (0 + 1) - 2 in the body, the use at 5:3, each line quoted with its caret."""
    src = ("stage d : delay;\ndef wk(x) { run d (x - 2); }\nworkload { arrive batch(2); }\nsession {\n"
           "  wk(serial + 1);\n}\nrun { horizon 10; }\n")
    assert _run_error_text(tmp_path, src, monkeypatch).splitlines() == [
        "p.sq:2:13: error: at t=0, session 0: the run's work is negative (-1)",
        "  def wk(x) { run d (x - 2); }",
        "              ^",
        "p.sq:5:3: note: in the expansion of `wk`, used here",
        "    wk(serial + 1);",
        "    ^",
    ]


def test_a_run_time_error_in_a_queue_entry_names_the_entry_and_its_calls(tmp_path, monkeypatch):
    """§2, Queues: an entry call is its body in place; a run-time error in it is at the body's hold, with a
    note at the call in the route and one at the `request gw;` that expanded the route (session 0: units
    2 - 3)."""
    src = ("queue gw : gateway { route { P[0].prefill (prompt); } }\nqueue P[1] : prefill {\n"
           "  pool kv { cap 10; }\n  serve fifo;\n  prefill (p) {\n    hold kv (p - 3) { run (p / 2); }\n  }\n}\n"
           "workload { arrive batch(2); session { set prompt = 2 + serial; request gw; } }\nrun { horizon 100; }\n")
    lines = _run_error_text(tmp_path, src, monkeypatch).splitlines()
    assert lines[0] == "p.sq:6:14: error: at t=0, session 0: the units of P.kv[0] are negative (-1)"
    assert lines[1] == "      hold kv (p - 3) { run (p / 2); }"
    assert lines[2] == " " * 15 + "^"
    assert lines[3] == "p.sq:1:30: note: in the expansion of `P.prefill`, used here"
    assert lines[6] == "p.sq:9:64: note: in the expansion of `gw.route`, used here"
    assert len(lines) == 9


def test_renewal_of_exponential_gaps_is_poisson_without_its_first_arrival(monkeypatch):
    """§2: "poisson(rate) starts with an arrival at time zero, then uses exponential gaps of mean 1 / rate.
    Thus renewal(~exp(1 / rate)) has the same subsequent arrival schedule for the same seed, without the
    initial arrival at zero": the sessions' arrival times of the two, seed 7, rate 2, to 5."""
    body = "stage d : delay;\nworkload { arrive ARRIVE; }\nsession { observe t = now; run d (1); }\n" \
           "run { horizon 5; seed 7; }\n"
    _, poisson = run(body.replace("ARRIVE", "poisson(2)"), monkeypatch)
    _, renewal = run(body.replace("ARRIVE", "renewal(~exp(1 / 2))"), monkeypatch)
    p = [t for _, t, _ in poisson["t"]]
    r = [t for _, t, _ in renewal["t"]]
    assert p[0] == 0.0 and r[0] > 0.0
    assert p[1:] == r[:len(p) - 1]
    assert len(r) == len(p) - 1  # the next gap of each ends past 5 alike
