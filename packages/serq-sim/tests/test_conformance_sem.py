"""Conformance cases computed by hand for the semantics (language.txt §3, pool-reference.txt,
program-reference.txt) that test_conformance_hand.py, test_conformance_more.py and test_conformance_pd.py
leave out: the interplay of `queue by`, `waited` and `preempt by … requeue`, what `reserve held` counts
when a hold releases, grows past its reservation or nests, eviction keys read per block, dead remainders,
the victim's other holds and queues, rejection and `over_cap`, records and the warm-up of a finite run,
and the run-time errors of computed member indices. Each program runs on the tier serQ picks and on the
general engine (SERQ_SIM_TIER=general), which must agree (conform.run)."""

from __future__ import annotations

import json

import pytest
import serq_sim
from conform import _run, pool, run
from serq_report.json import encode_json


def times(samples):
    return [t for _, t, _ in samples]


# --- queue by, waited and requeue ------------------------------------------------------------------------

REQUEUE = """
pool m { cap 2; preempt by (-admission) REQUEUE; queue by (KEY); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (1); run d (3); } }
  else { branch (serial == 1) { hold m (1) { observe a1 = now; run d (10); } }
  else { run d (0.5); hold m (2) { observe a2 = now; run d (1); } } }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("requeue, key, a1, a2", [
    # pool-reference `preempt`: "requeue tail treats it as a newcomer: … queue by places it by its keys,
    # with waited reset to 0". s0, s1 hold 1 each at 0 (s0 admitted first); s2 joins at 0.5 wanting 2. At
    # 1 s0's grow (2 + 1 > 2) preempts s1 (least -admission). At 4 s0 ends (2 free): keys -waited: s2
    # -3.5, s1 -3 (joined again at 1, not -4 from 0): s2 at 4, s1 after s2's end at 5.
    ("requeue tail", "-waited", [0.0, 5.0], [4.0]),
    # requeue tail under queue by (serial): placed by its key 1 < 2, s1 goes first at 4 (1 of 2 left
    # for s2's 2: s2 waits for s1's end at 14).
    ("requeue tail", "serial", [0.0, 4.0], [14.0]),
    # requeue head (pool-reference `queue`: "A preempted hold re-enters at the head, ahead of policy
    # keys"): s1 first at 4 whatever the key says (-waited would pick s2).
    ("requeue head", "-waited", [0.0, 4.0], [14.0]),
    # pool-reference `preempt` keys: `admission` is "the order the pool admitted its holders". With
    # queue by (-serial) s1 is admitted before s0 at 0, so s0 (the grower) is the last admitted and its
    # own victim: re-queued at the tail behind s2 (key -2 < 0); s2 (2) waits for s1's end at 10, and s1
    # is never preempted.
    ("requeue tail", "-serial", [0.0], [10.0]),
])
def test_requeue_places_the_victim_and_resets_waited(monkeypatch, requeue, key, a1, a2):
    _, o = run(REQUEUE.replace("REQUEUE", requeue).replace("KEY", key), monkeypatch)
    assert times(o["a1"]) == a1
    assert times(o["a2"]) == a2


def test_requeue_on_an_engine_goes_to_the_holds_first_pool(monkeypatch):
    # §3 grow / pool-reference `preempt`: the victim "re-enters the hold's first pool's queue", here reqs
    # (admitted by E), placed by kv's requeue. Budget 10, cost 1. it1 [0,1]: s0, s1 prefill 2 (kv 4 of 5);
    # s2 joins reqs at 0.5 (cap 2: waits). it2 at 1: s0 grows to 3 (5); s1's growth to 3 preempts s1 itself
    # (last admitted); no admission in that iteration. it3 at 2: s0 grows to 4. head: s1 heads reqs, 2 of
    # kv do not fit beside 4 and block s2 until s0 ends at 4. tail: s2 heads (1 of kv fits: 5), admitted
    # at 2, done at 3; s1 at 4: prefill 4..5, decode 5..8.
    src = """
pool reqs { cap 2; admit via E; }
pool kv { cap 5; preempt by (-admission) REQUEUE; }
stage d : delay;
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold reqs (1), kv (2) { observe a = now; run E prefill (2) growing kv; run E decode (3) growing kv; }
  } else { run d (0.5); hold reqs (1), kv (1) { observe a2 = now; run E prefill (1) growing kv; } }
  observe done = now;
}
run { horizon 100; }
"""
    _, o = run(src.replace("REQUEUE", "requeue head"), monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 4.0, 4.0)]
    assert o["a2"] == [(2, 4.0, 4.0)]
    assert o["done"] == [(0, 4.0, 4.0), (2, 5.0, 5.0), (1, 8.0, 8.0)]
    _, o = run(src.replace("REQUEUE", "requeue tail"), monkeypatch)
    assert o["a2"] == [(2, 2.0, 2.0)]
    assert o["done"] == [(2, 3.0, 3.0), (0, 4.0, 4.0), (1, 8.0, 8.0)]


def test_a_release_then_a_hold_joins_before_the_settle_admits(monkeypatch):
    # §3 Commands / settle: a release admits no one itself; the releasing session's next hold joins the
    # queue before the settle's admissions. cap 1, queue by (serial): s1 waits from 0.5; at 1 s0 releases
    # and holds again at once with key 0 < 1: s0 at 1, s1 at 2.
    _, o = run("""
pool m { cap 1; queue by (serial); }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) { run d (1); } hold m (1) { observe a0 = now; run d (1); } }
  else { run d (0.5); hold m (1) { observe a1 = now; run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a0"] == [(0, 1.0, 1.0)] and o["a1"] == [(1, 2.0, 2.0)]


@pytest.mark.parametrize("key, order", [
    # §3 Waiting selection on a pool a step stage admits: keys are read at the engine's admission. Budget
    # 1, cost 1: s0 prefills 3 on [0, 3]; s1 joins at 0.5, s2 at 2.5. At 3: waited 2.5 and 0.5: (0, -1)
    # before (1, -2): s1 at 3, s2 at 6. By (-serial) alone: s2 at 3, s1 at 6.
    ("waited >= 2 ? 0 : 1, -serial", [(1, 3.0), (2, 6.0)]),
    ("-serial", [(2, 3.0), (1, 6.0)]),
])
def test_queue_by_waited_on_a_pool_an_engine_admits(monkeypatch, key, order):
    _, o = run(f"""
pool reqs {{ cap 1; admit via E; queue by ({key}); }}
stage d : delay;
stage E : step {{ budget 1; cost 1; }}
workload {{ arrive batch(3); }}
session {{
  run d (serial == 0 ? 0 : serial == 1 ? 0.5 : 2.5);
  hold reqs (1) {{ observe a = now; observe b = budget_left(E); run E prefill (3); }}
}}
run {{ horizon 100; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["a"]] == [(0, 0.0)] + order
    assert [v for _, _, v in o["b"]] == [1.0, 1.0, 1.0]


# --- admission, rejection, several pools ----------------------------------------------------------------


def test_a_hold_on_several_pools_waits_in_its_first_pools_queue(monkeypatch):
    # §3 Ties: "a hold on several pools waits in its first pool's [queue]"; the head blocks the rest. s0
    # holds B until 3; s1 (A 1, B 1) joins A's queue at 1 and waits for B; s2 wants only A (1 of 2 is free)
    # but joins behind s1 at 2: both admitted at 3.
    _, o = run("""
pool A { cap 2; }
pool B { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold B (1) { run d (3); } }
  else { branch (serial == 1) { run d (1); hold A (1), B (1) { observe a1 = now; run d (1); } }
  else { run d (2); hold A (1) { observe a2 = now; run d (1); } } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a1"] == [(1, 3.0, 3.0)] and o["a2"] == [(2, 3.0, 3.0)]


def test_rejection_is_judged_when_the_hold_joins_and_state_dependent_demand_waits(monkeypatch):
    # §3 Pools: a demand that can never fit "as they evaluate when the session joins the queue" is
    # rejected: the session ends. cap 10; s0 holds 4 on [0, 2). s1 asks used(m) + 7 at 1 (11: waits, as
    # state-dependent demand does), at 2 it is 7 and fits. s2 asks x = 11 at 1.5 (behind s1 in the
    # queue): rejected at once, its statements after the hold never run.
    r, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (4) { run d (2); } }
  else { branch (serial == 1) { run d (1); hold m (used(m) + 7) { observe a1 = now; run d (1); } }
  else { run d (1.5); set x = 11; hold m (x) { observe a2 = now; run d (1); } observe e2 = now; } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a1"] == [(1, 2.0, 2.0)] and o["a2"] == [] and o["e2"] == []
    p = pool(r, "m")
    assert (p.rejections, p.admissions, p.over_cap) == (1, 2, 0)
    assert r.result.ended == 3


def test_state_dependent_demand_above_the_cap_is_over_cap_at_the_end(monkeypatch):
    # pool-reference: "State-dependent demand waits for admission and is reported as over_cap if it still
    # exceeds capacity at the end of the run." s1's used(m) + 11 > 10 whatever is used: it waits from 1 to
    # the horizon 100 (queue 99/100), never rejected; s0 alone ends.
    r, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (4) { run d (2); } }
  else { run d (1); hold m (used(m) + 11) { observe a1 = now; run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    p = pool(r, "m")
    assert o["a1"] == []
    assert (p.rejections, p.over_cap, p.admissions, p.queue) == (0, 1, 1, 0.99)
    assert r.result.ended == 1


def test_a_reservation_of_what_the_hold_has_computed_is_rejected_after_a_preemption(monkeypatch):
    # §3 step: "A hold that reserves what it will need (reserve (known) after a preemption) is rejected
    # instead, once the reservation is above the cap." cap 6, budget 10, cost 1: it1 [0,1] prefill 4;
    # it2, it3 decode (grow to 5, 6); at 3 the growth to 7 preempts s0 itself at position 6 (computed 6,
    # an iteration of no token [3, 4]); the hold is executed again with reserve 10 > 6: rejected, the
    # session ends at 3. used: 4, 5, 6 on [0,1), [1,2), [2,3): 15 / 10.
    r, o = run("""
pool kv { cap 6; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (4) reserve (computed + 4) {
    observe a = now; run E prefill (4) growing kv; run E decode (4) growing kv;
  }
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0)] and o["done"] == []
    p = pool(r, "kv")
    assert (p.preemptions, p.rejections, p.admissions, p.used) == (1, 1, 1, 1.5)
    assert r.result.ended == 1 and r.result.mean_live == 0.3
    assert r.result.stages[0].iterations == 4


# --- reserve held -----------------------------------------------------------------------------------------


def test_reserve_held_ends_with_release(monkeypatch):
    # pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption." cap
    # 4: s0 holds 1 reserve 3 (u = 2); s1 asks 3 at 0.5: 1 + 2 + 3 > 4, waits. At 1 s0's `release m` gives
    # back its 1 and ends its reservation: s1 admitted at 1 (not at s0's scope end, 6).
    _, o = run("""
pool m { cap 4; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) reserve (3) { run d (1); release m; run d (5); } }
  else { run d (0.5); hold m (3) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(1, 1.0, 1.0)]


def test_reserve_held_counts_nothing_once_the_hold_grew_past_it(monkeypatch):
    # pool-reference `reserve held`: u = max(0, r - a). cap 5: s0 holds 1 reserve 3 and grows 3 at 1
    # (1 + 0 + 3 <= 5): a = 4 > r = 3, u = 0 (not -1). s1 asks 2 at 2: 4 + 0 + 2 > 5, waits for s0's end
    # at 6 (with u = -1 it would fit at 2).
    _, o = run("""
pool m { cap 5; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) reserve (3) { run d (1); grow m (3); observe g = now; run d (5); } }
  else { run d (2); hold m (2) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["g"] == [(0, 1.0, 1.0)] and o["a"] == [(1, 6.0, 6.0)]


def test_reserve_held_counts_nested_holds_separately(monkeypatch):
    # pool-reference `reserve held`: "Each hold counts separately, including nested holds." cap 5: s0's
    # outer and inner holds take 1 reserve 2 each (used 2, reserved 1 + 1). s1 asks 2 at 1: 2 + 2 + 2 > 5;
    # at 2 the inner scope ends (used 1, reserved 1): 1 + 1 + 2 <= 5, admitted at 2.
    _, o = run("""
pool m { cap 5; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) reserve (2) { hold m (1) reserve (2) { run d (2); } run d (2); } }
  else { run d (1); hold m (2) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(1, 2.0, 2.0)]


@pytest.mark.parametrize("units, adm", [(3, 1.0), (4, 1.0), (5, 2.0)])
def test_reserve_held_rounds_the_reservation_to_blocks(monkeypatch, units, adm):
    # pool-reference `reserve held`: r is "the larger of units and reserve, evaluated at admission and
    # rounded up to blocks". block 2, cap 8: s0 holds 1 (allocates 2) reserve 3 (r = 4): u = 2, used 2.
    # s1 at 1 asks 3 or 4 (4): 2 + 2 + 4 <= 8, at 1; 5 (6): 10 > 8, waits for s0's end at 2.
    _, o = run(f"""
pool m {{ cap 8; block 2; reserve held; }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{ hold m (1) reserve (3) {{ observe u = used(m); run d (2); }} }}
  else {{ run d (1); hold m ({units}) {{ observe a = now; run d (1); }} }}
}}
run {{ horizon 100; }}
""", monkeypatch)
    assert o["u"] == [(0, 0.0, 2.0)]
    assert times(o["a"]) == [adm]


# --- the cache: eviction, dead remainders, drop ------------------------------------------------------------


def test_evict_by_keys_are_read_again_for_every_block(monkeypatch):
    # pool-reference `evict`: keys are evaluated per entry at the Evict moment; §3: per block from the tail.
    # block 2, cap 12, evict by (-size): s1 caches 4 at 1, s0 6 at 2. At 3 s2 holds 6: 6 + 10 > 12, 4 to
    # evict. s0's (6) loses a block (4 left); now 4 and 4 tie, release order: s1's (released first) loses
    # one (2 left). s0 keeps 4, s1 2 (read once per entry, s0's would lose both: 2 and 4).
    _, o = run("""
pool m { cap 12; block 2; evict by (-size); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run d (1); hold m (6) { run d (1); } cache (6); run d (2); observe c0 = cachedin(m); }
  else { branch (serial == 1) { hold m (4) { run d (1); } cache (4); run d (3); observe c1 = cachedin(m); }
  else { run d (3); hold m (6) { observe a = now; run d (1); } } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(2, 3.0, 3.0)]
    assert o["c0"] == [(0, 4.0, 4.0)] and o["c1"] == [(1, 4.0, 2.0)]


DEAD = """
pool m { cap CAP; evict lru; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (4) { run d (1); } cache (4); run d (2);
    hold m (4) reuse (2) { observe k = cached; run d (1); } cache (0);
    run d (5); observe c0 = cachedin(m);
  } else { branch (serial == 1) { run d (1); hold m (4) { run d (1); } cache (4); run d (4); observe c1 = cachedin(m); }
  else { run d (4.5); hold m (6) { observe a = now; run d (1); } } }
}
run { horizon 100; }
"""


def test_a_dead_remainder_keeps_its_release_time(monkeypatch):
    # §3 Pools: the rest of a consumed entry "stays in the cache as a dead entry with the same age". cap 10:
    # s0 caches 4 at 1, s1 4 at 2. At 3 s0 is admitted with reuse (2): consumes 2 (cached = 2), 2 stay dead
    # with release time 1 (4 + 2 + 4 <= 10); its scope caches nothing (cache (0)). At 4.5 s2 holds 6:
    # 6 + 6 > 10: lru takes the dead 2 (released at 1) before s1's (at 2): s1 keeps 4.
    r, o = run(DEAD.replace("CAP", "10"), monkeypatch)
    assert o["k"] == [(0, 3.0, 2.0)]
    assert o["c1"] == [(1, 6.0, 4.0)] and o["c0"] == [(0, 9.0, 0.0)]
    p = pool(r, "m")
    assert (p.evicted_entries, p.evicted_units) == (1, 2.0)


def test_an_admission_evicts_for_its_own_allocation_the_dead_remainder_first(monkeypatch):
    # The same with cap 8: s0's admission at 3 itself needs room (4 + 2 dead + 4 > 8): the dead 2 go then
    # (oldest). At 4.5 s2's 6: 6 + 4 > 8, and without `block` eviction is per entry: s1's whole 4 go.
    r, o = run(DEAD.replace("CAP", "8"), monkeypatch)
    assert o["k"] == [(0, 3.0, 2.0)] and o["c1"] == [(1, 6.0, 0.0)]
    p = pool(r, "m")
    assert (p.evicted_entries, p.evicted_units) == (2, 6.0)


def test_drop_discards_the_own_entry_and_keeps_the_dead_remainders(monkeypatch):
    # §2 drop POOL: "discard the own cached prefix". s0 caches 4 at 1; reuse (1) consumes 1 at 1, 3 stay
    # dead; it caches 2 at 2 and drops them. cached: 3 on [1, 2) (the dead 3), 5 at 2 for no time, 3 on
    # [2, 4]: 9 / 4. used: 4 on [0, 1), 2 on [1, 2): 6 / 4.
    r, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (4) { run d (1); } cache (4);
  hold m (2) reuse (1) { run d (1); } cache (2);
  observe c1 = cachedin(m);
  drop m;
  observe c2 = cachedin(m);
  run d (1);
}
run { horizon 4; }
""", monkeypatch)
    assert o["c1"] == [(0, 2.0, 2.0)] and o["c2"] == [(0, 2.0, 0.0)]
    p = pool(r, "m")
    assert (p.cached, p.used, p.evicted_entries) == (2.25, 1.5, 0)


@pytest.mark.parametrize("key, c0, c1", [("waiting", 4.0, 0.0), ("-waiting", 0.0, 4.0)])
def test_evict_by_waiting(monkeypatch, key, c0, c1):
    # docs/language.md `waiting`: 1 when the entry's session is alive and waiting in some pool's queue.
    # s0 caches 4 at 1 and queues at g (held by s2 until 2); s1 caches 4 at 0.5 and is on a stage. At 1.5
    # s3's 4 need one entry to go (4 + 8 > 8): by (waiting) s1's (0 < 1), by (-waiting) s0's.
    _, o = run(f"""
pool m {{ cap 8; evict by ({key}); }}
pool g {{ cap 1; }}
stage d : delay;
workload {{ arrive batch(4); }}
session {{
  branch (serial == 0) {{ hold m (4) {{ run d (1); }} cache (4); hold g (1) {{ run d (1); }} observe c0 = cachedin(m); }}
  else {{ branch (serial == 1) {{ hold m (4) {{ run d (0.5); }} cache (4); run d (2); observe c1 = cachedin(m); }}
  else {{ branch (serial == 2) {{ hold g (1) {{ run d (2); }} }}
  else {{ run d (1.5); hold m (4) {{ observe a = now; run d (1); }} }} }} }}
}}
run {{ horizon 100; }}
""", monkeypatch)
    assert o["a"] == [(3, 1.5, 1.5)]
    assert o["c0"] == [(0, 3.0, c0)] and o["c1"] == [(1, 2.5, c1)]


def test_an_engines_growth_evicts_cached_blocks_one_by_one(monkeypatch):
    # §3 Pools: cached prefixes never block; entries are evicted "until allocations and cache fit", per
    # block. cap 6 (block 1): s1 caches 4 at 0.5 beside s0's 2. s0 prefills 2 [0,1], then each decode
    # iteration grows it by 1 at 1, 2, 3, 4 (3 .. 6 used), evicting one unit of s1's entry each time:
    # cachedin 3, 2, 1 at 1.5, 2.5, 3.5.
    r, o = run("""
pool kv { cap 6; block 1; }
stage d : delay;
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 1) {
    hold kv (4) { run d (0.5); } cache (4);
    run d (1); observe c = cachedin(kv); run d (1); observe c = cachedin(kv); run d (1); observe c = cachedin(kv);
  } else { hold kv (2) { run E prefill (2) growing kv; run E decode (4) growing kv; } observe done = now; }
}
run { horizon 100; }
""", monkeypatch)
    assert o["c"] == [(1, 1.5, 3.0), (1, 2.5, 2.0), (1, 3.5, 1.0)]
    assert o["done"] == [(0, 5.0, 5.0)]
    p = pool(r, "kv")
    assert (p.evicted_entries, p.evicted_units) == (1, 4.0)


def test_a_consumed_prefix_sets_the_position_and_cached_is_0_after_a_hold_without_cache(monkeypatch):
    # §2 cached: "the prefix consumed at the last admission; 0 after a hold without cache"; computed is 0
    # after a hold completes; docs/simulator.md: the admitted hold "starts at position cached". s0 caches
    # 6 at 1; hold m (2) with cache allocates 2 and consumes 2 of the 6 (docs/language.md: a hold consumes
    # at most its allocation; the other 4 stay cached, dead; cachedin 0); its prefill of 4 grows the hold
    # to the position 2 + 4 = 6 (used 6, beside the 4 dead: 10, no eviction); cache (8) keeps 6. A hold
    # without cache then sets cached to 0 and leaves the entry (6). (This case read cached 6, position 10,
    # when a hold consumed all of its prefix whatever its allocation: test_spill_semantics.py.)
    _, o = run("""
pool m { cap 10; }
stage d : delay;
stage E : step { budget 10; cost 1; memory m; }
workload { arrive batch(1); }
session {
  hold m (6) { run d (1); } cache (6);
  hold m (2) {
    observe k = cached; observe u = used(m); observe c = cachedin(m);
    run E prefill (4) growing m; observe u2 = used(m);
  } cache (8);
  observe c2 = cachedin(m); observe k2 = cached; observe p2 = computed;
  hold m (1) { run d (1); }
  observe k4 = cached; observe c4 = cachedin(m);
}
run { horizon 100; }
""", monkeypatch)
    assert (o["k"], o["u"], o["c"]) == ([(0, 1.0, 2.0)], [(0, 1.0, 2.0)], [(0, 1.0, 0.0)])
    assert o["u2"] == [(0, 2.0, 6.0)]
    assert (o["c2"], o["k2"], o["p2"]) == ([(0, 2.0, 6.0)], [(0, 2.0, 2.0)], [(0, 2.0, 0.0)])
    assert (o["k4"], o["c4"]) == ([(0, 3.0, 0.0)], [(0, 3.0, 6.0)])


def test_a_leases_cache_is_read_when_the_lease_ends(monkeypatch):
    # §3 Pools: a lease keeps the allocation "until … t seconds …, and cache applies then" (cache is read
    # when the session releases). The scope ends at 1 with x = 3; x = 1 from then on; the lease ends at 3
    # and caches min(1, 4) = 1. used 4 on [0, 3): 12 / 10; cached 1 on [3, 10]: 7 / 10.
    r, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  set x = 3;
  hold m (4) { run d (1); } cache (x) lease m (2);
  set x = 1;
  observe u = used(m); observe c = cachedin(m);
  run d (3);
  observe u = used(m); observe c = cachedin(m);
}
run { horizon 10; }
""", monkeypatch)
    assert o["u"] == [(0, 1.0, 4.0), (0, 4.0, 0.0)] and o["c"] == [(0, 1.0, 0.0), (0, 4.0, 1.0)]
    p = pool(r, "m")
    assert (p.used, p.cached, p.holders) == (1.2, 0.7, 0.3)


def test_release_gives_back_the_innermost_hold_and_the_latest_release_is_the_sessions_prefix(monkeypatch):
    # §3 Pools: `release m` gives back the innermost enclosing hold's allocation, caching per its clause;
    # the scope's end then has nothing left there; a session that holds and leases nothing on m releases
    # nothing. docs/language.md: one own prefix per pool, the latest release's. Outer hold 1, inner 2: the
    # inner's release at 1 caches 2 (used 1); its scope's end at 2 releases nothing; the outer's release at
    # 2 caches 1, which replaces the 2 (no eviction); a second release and the outer scope's end at 3 do
    # nothing. used 3 on [0, 1), 1 on [1, 2): 4 / 10; cached 2 on [1, 2), 1 on [2, 10]: 10 / 10.
    r, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  release m;
  hold m (1) {
    hold m (2) { run d (1); release m; observe u = used(m); observe c = cachedin(m); run d (1); } cache (2);
    observe u = used(m); observe c = cachedin(m);
    release m; observe u = used(m); observe c = cachedin(m);
    release m; run d (1);
  } cache (1);
  observe u = used(m); observe c = cachedin(m);
}
run { horizon 10; }
""", monkeypatch)
    assert [v for _, _, v in o["u"]] == [1.0, 1.0, 0.0, 0.0]
    assert [v for _, _, v in o["c"]] == [2.0, 2.0, 1.0, 1.0]
    p = pool(r, "m")
    assert (p.used, p.cached, p.evicted_entries, p.admissions) == (0.4, 1.0, 0, 2)


# --- preemption: the victim and its other holds -----------------------------------------------------------


def test_preempt_by_ties_go_to_the_last_admitted(monkeypatch):
    # pool-reference `preempt by`: "ties go to the last admitted". Every key is 1: at 1 s0's grow (3 + 1 >
    # 3) preempts s2 (admitted at 0.2, after s1 at 0.1); s2 waits at the head for s0's end at 3.
    r, o = run("""
pool m { cap 3; preempt by (1); }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial * 0.1);
  hold m (1) { observe a = now; run d (1); branch (serial == 0) { grow m (1); } run d (2); }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.1, 0.1), (2, 0.2, 0.2), (2, 3.0, 3.0)]
    assert pool(r, "m").preemptions == 1


def test_a_lease_is_no_victim(monkeypatch):
    # pool-reference `preempt`: "Leases are not candidates". cap 3: s0 and s2 hold 1 at 0, s1 leases 1 from
    # 0.1 (its scope ends at 0.6) for ever. At 2 s0 grows 1: the last admitted with a scope is s2 (s1 was
    # admitted later but leases): s2 is re-queued and waits for s0's end at 3.
    _, o = run("""
pool m { cap 3; preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (2); grow m (1); observe g = now; run d (1); } }
  else { branch (serial == 1) { run d (0.1); hold m (1) { run d (0.5); } lease m (inf); run d (10); }
  else { hold m (1) { observe a2 = now; run d (5); } } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["g"] == [(0, 2.0, 2.0)]
    assert o["a2"] == [(2, 0.0, 0.0), (2, 3.0, 3.0)]


def test_a_preemption_releases_the_holds_down_to_the_preempted_one(monkeypatch):
    # §3 grow: the victim's "hold is released"; docs/language.md: its holds down to the one on the
    # preempted pool. cap 2 on m: at 1 s0's grow preempts s1 (last admitted). Outer hold on A: kept (used(A)
    # 1 throughout; s1 is re-admitted to m at s0's end, 4). Hold on (m, A) with an inner hold on A: all
    # three allocations go back; re-admitted at 4 to both.
    src = """
pool A { cap 10; }
pool m { cap 2; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (1); run d (3); } }
  else { run d (0.5); BODY }
}
run { horizon 100; }
"""
    r, o = run(src.replace("BODY", "hold A (1) { hold m (1) { observe a = now; observe uA = used(A); run d (10); } }"),
               monkeypatch)
    assert o["a"] == [(1, 0.5, 0.5), (1, 4.0, 4.0)] and o["uA"] == [(1, 0.5, 1.0), (1, 4.0, 1.0)]
    assert pool(r, "A").used == 0.135  # 1 on [0.5, 14)
    r, o = run(src.replace("BODY", "hold m (1), A (1) { observe a = now; observe uA = used(A); hold A (2) { run d (10); } }"),
               monkeypatch)
    assert o["a"] == [(1, 0.5, 0.5), (1, 4.0, 4.0)] and o["uA"] == [(1, 0.5, 1.0), (1, 4.0, 1.0)]
    p = pool(r, "A")
    assert (p.used, p.admissions) == (0.315, 4)  # 3 on [0.5, 1) and on [4, 14)


def test_a_victim_leaves_the_queue_or_the_growth_it_waits_in(monkeypatch):
    # §3 Configuration: a session has one status. s1 holds m and waits inside it for B: at 1 s0's grow
    # preempts it, so it leaves B's queue (B admits it only after its hold on m is admitted again at 6,
    # s0's end). Waiting to grow on B instead: it leaves B's growers (B: 2 of s2 on [0, 3), s1's 1 on
    # [0, 1), then 1 on [6, 6.5) and 2 on [6.5, 7.5): 9.5 / 100).
    src = """
pool m { cap 2; preempt lifo; }
pool B { cap CAP; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (1); run d (5); } }
  else { branch (serial == 1) { hold m (1) { observe a1 = now; hold B (1) { BODY observe b1 = now; run d (1); } } }
  else { hold B (UNITS) { run d (3); } } }
}
run { horizon 100; }
"""
    r, o = run(src.replace("CAP", "1").replace("UNITS", "1").replace("BODY", ""), monkeypatch)
    assert times(o["a1"]) == [0.0, 6.0] and o["b1"] == [(1, 6.0, 6.0)]
    p = pool(r, "B")
    assert (p.admissions, p.queue) == (2, 0.01)
    r, o = run(src.replace("CAP", "3").replace("UNITS", "2").replace("BODY", "run d (0.5); grow B (1);"),
               monkeypatch)
    assert times(o["a1"]) == [0.0, 6.0] and o["b1"] == [(1, 6.5, 6.5)]
    assert pool(r, "B").used == 0.095


# --- stages -------------------------------------------------------------------------------------------------


def test_ps_jobs_with_equal_finish_tags_finish_in_start_order(monkeypatch):
    # §3 Ties: "jobs of a ps stage with equal finish tags finish in the order they started". ps(1): s1
    # starts 3 at 0, s0 starts 2 at 1 (s1 has 2 left): both finish at 1 + 4 = 5, s1 first, so s1 takes the
    # one slot of m at 5 and s0 at 6 (by serial it would be the other way).
    _, o = run("""
pool m { cap 1; }
stage p : ps(1);
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); run p (2); } else { run p (3); }
  hold m (1) { observe a = now; run d (1); }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(1, 5.0, 5.0), (0, 6.0, 6.0)]


def test_fifo_with_infinite_servers_and_two(monkeypatch):
    # §3 Stages: fifo(c), c servers; docs/language.md: utilisation busy / c, 0 for fifo(inf). Works 1, 2, 3
    # at 0 on fifo(inf): done at 1, 2, 3; then 1 each on fifo(2), which they reach one by one: 2, 3, 4.
    # g: busy 1 on [1, 4) over 10 with 2 servers: 0.15.
    r, o = run("""
stage f : fifo(inf);
stage g : fifo(2);
workload { arrive batch(3); }
session { run f (serial + 1); observe t = now; run g (1); observe t2 = now; }
run { horizon 10; }
""", monkeypatch)
    assert times(o["t"]) == [1.0, 2.0, 3.0] and times(o["t2"]) == [2.0, 3.0, 4.0]
    f, g = r.result.stages
    assert (f.utilisation, f.present, f.service) == (0.0, 0.6, 2.0)
    assert (g.utilisation, g.present, g.wait) == (0.15, 0.3, 0.0)


@pytest.mark.parametrize("share, ends", [
    # §3 Stages: a: ps(2), b: ps(6); f1 = run a, b (1), f2 = run a (1), f3, f4 = run b (1).
    # maxmin: all rise to 1, where a is full (f1 + f2 = 2); f3, f4 share b's 5 left: 2.5 each, done at 0.4;
    # f1, f2 stay at 1 (a's share): done at 1.
    ("maxmin", [1.0, 1.0, 0.4, 0.4]),
    # bottleneck: f1 min(2/2, 6/3) = 1, f2 1, f3 = f4 = 6/3 = 2: done at 0.5; then f1 min(2/2, 6/1) = 1.
    ("bottleneck", [1.0, 1.0, 0.5, 0.5]),
])
def test_flow_rates_where_the_policies_differ(monkeypatch, share, ends):
    _, o = run(f"""
stage a : ps(2);
stage b : ps(6);
share {share};
workload {{ arrive batch(4); }}
session {{
  branch (serial == 0) {{ run a, b (1); }}
  else {{ branch (serial == 1) {{ run a (1); }} else {{ run b (1); }} }}
  observe t = now;
}}
run {{ horizon 10; }}
""", monkeypatch)
    got = sorted(o["t"])
    assert [t for _, t, _ in got] == ends


# --- records, warm-up and a finite run --------------------------------------------------------------------


def test_records_after_the_warm_up_of_a_finite_run(monkeypatch):
    # program-reference `run`: with arrivals the run ends when every session has ended, and rates and time
    # averages are over end - warmup; docs/language.md: a record is kept by its `sent` (else its time)
    # at or after the warm-up. renewal(1): s0..s3 arrive at 1..4 and end at 1.5, 3.5, 5.5, 7.5: end 7.5.
    # warm-up 2.5: req keeps sent 3, 4; ev keeps times 3.5, 5.5, 7.5; ended 3; live over [2.5, 7.5]:
    # s1 1, s2 2.5, s3 3.5: 7 / 5.
    r, _ = run("""
stage d : delay;
workload { arrive renewal(1); }
session {
  set t0 = now; run d (serial + 0.5);
  record req { sent = t0; x = serial * 2; }
  record ev { y = now - t0; }
}
run { horizon 10; warmup 2.5; arrivals 4; }
""", monkeypatch)
    j = json.loads(encode_json(r))
    assert (j["end"], j["arrivals"], j["ended"], j["mean_live"]) == (7.5, 4, 3, 1.4)
    assert j["records"] == {"req": 2, "ev": 3}
    req, ev = r.records("req"), r.records("ev")
    assert list(req["sent"]) == [3.0, 4.0] and list(req["x"]) == [4, 6] and list(req["session"]) == [2, 3]
    assert list(ev["time"]) == [3.5, 5.5, 7.5] and list(ev["y"]) == [1.5, 2.5, 3.5]


# --- run-time errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("stmt, at, serial, msg", [
    # §2: a member is named by its index; the linker refuses a constant index that names no member
    # (`m[0.5]`: `m` has members 0 … 1), so a computed one that is not a whole number is the run-time error
    # at the reference, naming the time and the session (it was taken as m[0], and m[1.5] as m[1]).
    ("hold m[serial + 0.5] (2) { run d[0] (1); }", "m[", 0,
     "pool m: index 0.5 is not a whole number (the family has 2)"),
    ("run d[serial * 0.5 + 0.5] (1);", "d[serial", 0, "stage d: index 0.5 is not a whole number (the family has 2)"),
    ("set k = used(m[serial / 2]);", "m[serial", 1, "pool m: index 0.5 is not a whole number (the family has 2)"),
    ("hold m[2 * serial] (2) { run d[0] (1); }", "m[", 1, "pool m: index 2 out of range (the family has 2)"),
    # §3 load: the innermost hold's position advances by n, "which its allocation must cover".
    ("hold m[0] (2) { load m[0] (serial * 3); }", "load", 1,
     "load m[0] (3): the hold has 2 allocated and 0 computed; a load must fit the allocation (grow first)"),
])
def test_run_time_errors_name_the_place_the_time_and_the_session(monkeypatch, tier, stmt, at, serial, msg):
    line = f"session {{ run d[0] (1); {stmt} }}"
    src = ("pool m[2] { cap 10; }\nstage d[2] : delay;\nworkload { arrive batch(2); }\n" + line
           + "\nrun { horizon 10; }\n")
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    first = str(e.value).splitlines()[0]
    assert first == f"<source>:4:{line.index(at) + 1}: error: at t=1, session {serial}: {msg}", first
    assert "Traceback" not in str(e.value)
