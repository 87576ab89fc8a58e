"""Conformance cases computed by hand: one small deterministic program per rule of language.txt §2-§3 and
pool-reference.txt, with the exact times, orders and counts the rule gives. Each program runs on the tier
serQ picks and on the general engine (SERQ_SIM_TIER=general), which must agree."""

from __future__ import annotations

import json

import pytest
import serq_sim
from conform import _run, pool, run
from serq_report.json import encode_json

# --- pools -----------------------------------------------------------------------------------------------


def test_head_of_line_blocking(monkeypatch):
    # §3 Pools: the first that does not fit blocks the rest. cap 3; s0 takes 2 for 5 s, s1 wants 2 (1 free:
    # waits), s2 wants 1 (would fit) but waits behind s1: both admitted at 5.
    _, o = run("""
pool m { cap 3; }
stage svc : delay;
workload { arrive batch(3); }
session {
  set u = serial == 2 ? 1 : 2;
  set w = serial == 0 ? 5 : 1;
  hold m (u) { observe adm = now; run svc (w); }
}
run { horizon 100; }
""", monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 5.0, 5.0), (2, 5.0, 5.0)]


RESERVE = """
pool m { cap 3; HELD }
stage svc : delay;
workload { arrive batch(3); }
session {
  set r = serial == 0 ? 3 : 1;
  hold m (1) reserve (r) { observe adm = now; run svc (2); }
}
run { horizon 100; }
"""


def test_reserve_is_checked_at_admission_only(monkeypatch):
    # §3 Pools: admitted when used + max(u, reserve) <= cap. s0: 0 + 3 <= 3, takes 1; s1: 1 + 1 <= 3;
    # s2: 2 + 1 <= 3: all at 0 (s0's unallocated 2 count for nobody without reserve held).
    _, o = run(RESERVE.replace("HELD", ""), monkeypatch)
    assert [t for _, t, _ in o["adm"]] == [0.0, 0.0, 0.0]


def test_reserve_held_counts_against_later_admissions(monkeypatch):
    # pool-reference `reserve held`: s0's u = 3 - 1 = 2 counts; s1 needs 1 + 2 + 1 = 4 > 3, waits for s0's
    # end at 2; then s1 and s2 (1 + 1 <= 3) at 2.
    _, o = run(RESERVE.replace("HELD", "reserve held;"), monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]


def test_reserve_held_growth_uses_own_reservation(monkeypatch):
    # pool-reference `reserve held`: cap 4. s0 holds 1 reserve 3 (u0 = 2); s1 admitted: 1 + 2 + 1 <= 4.
    # At 1 s0 grows 2: used 2 + (others' u: 0) + 2 = 4 <= 4, fits at once. At 1 s1 grows 1:
    # used 4 + 0 + 1 > 4, waits for s0's end at 6.
    _, o = run("""
pool m { cap 4; reserve held; }
stage svc : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (1) reserve (3) { run svc (1); grow m (2); observe g = now; run svc (5); }
  } else {
    hold m (1) { observe adm = now; run svc (1); grow m (1); observe g2 = now; run svc (1); }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["g"] == [(0, 1.0, 1.0)]
    assert o["adm"] == [(1, 0.0, 0.0)]
    assert o["g2"] == [(1, 6.0, 6.0)]


def test_a_lease_retains_no_reservation(monkeypatch):
    # pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption; leases
    # retain none." cap 10: s0 holds 2 reserve 8 (u = 6) and leases its 2 past the scope (t = 1) until its
    # end at 11. s1 asks for 7 at 2: used 2 + reserved 0 + 7 = 9 <= 10, admitted at 2 (the lease kept its 6
    # reserved, and s1 waited for s0's end at 11).
    r, o = run("""
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) reserve (8) { run d (1); } lease kv (inf);
    run d (10);
  } else {
    run d (2);
    hold kv (7) { observe t = now; run d (1); }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["t"] == [(1, 2.0, 2.0)]


def test_queue_by_reads_waited_at_each_admission(monkeypatch):
    # pool-reference `queue`: keys re-evaluated before each admission, `waited` = seconds since the hold
    # joined; ties by join order. Arrivals at 1..5, each holds the one slot 10 s. At 11 the waits are
    # s1 9, s2 8, s3 7, s4 6: keys (0,-1) (0,-2) (1,-3) (1,-4) -> s2. At 21 all have waited >= 8:
    # (0,-1) (0,-3) (0,-4) -> s4; then s3 at 31, s1 at 41.
    _, o = run("""
pool m { cap 1; queue by (waited >= 8 ? 0 : 1, -serial); }
stage svc : delay;
workload { arrive renewal(1); }
session { hold m (1) { observe adm = now; run svc (10); } }
run { horizon 1000; arrivals 5; }
""", monkeypatch)
    assert o["adm"] == [(0, 1.0, 1.0), (2, 11.0, 11.0), (4, 21.0, 21.0), (3, 31.0, 31.0), (1, 41.0, 41.0)]


GROWER = """
pool m { cap 4; PREEMPT }
stage svc : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) { run svc (1); grow m (1); observe g = now; run svc (5); }
  } else {
    hold m (2) { observe adm = now; observe comp = computed; run svc (3); }
    observe done = now;
  }
}
run { horizon 100; }
"""


def test_preempt_lifo_without_a_stage_preempts_the_last_admitted_holder(monkeypatch):
    # §3 grow / pool-reference `preempt`: no stage names m as memory, so the candidates are the holders.
    # At 1 s0's grow (4 + 1 > 4) preempts s1 (admitted last); s1 caches nothing (no cache clause), is
    # re-queued at the head, and waits for s0's end at 6 (3 used + 2 > 4): admitted at 0 and 6, done at 9;
    # computed 0 (the hold had no growing run or load).
    r, o = run(GROWER.replace("PREEMPT", "preempt lifo;"), monkeypatch)
    assert o["g"] == [(0, 1.0, 1.0)]
    assert o["adm"] == [(1, 0.0, 0.0), (1, 6.0, 6.0)]
    assert o["comp"] == [(1, 0.0, 0.0), (1, 6.0, 0.0)]
    assert o["done"] == [(1, 9.0, 9.0)]
    assert pool(r, "m").preemptions == 1


def test_preempt_by_keys_can_pick_the_grower(monkeypatch):
    # pool-reference `preempt by`: the least key loses; serial 0 is the grower itself. At 1 and 2 s0
    # preempts itself, is re-admitted at once (2 free) and grows again; at 3 s1's end (scheduled at 0)
    # comes before s0's run (scheduled at 2), so the grow fits at 3. 2 preemptions, 4 admissions.
    r, o = run(GROWER.replace("PREEMPT", "preempt by (serial);"), monkeypatch)
    assert o["g"] == [(0, 3.0, 3.0)]
    assert o["done"] == [(1, 3.0, 3.0)]
    assert (pool(r, "m").preemptions, pool(r, "m").admissions) == (2, 4)


REQUEUE = """
pool m { cap 3; preempt by (-admission) requeue WHERE; }
stage svc : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (1) { run svc (1); grow m (1); run svc (4); }
  } else {
    hold m (2) { observe adm = now; run svc (3); }
  }
}
run { horizon 100; }
"""


def test_requeue_head_and_tail(monkeypatch):
    # pool-reference `preempt ... requeue`: s0 (1) and s1 (2) fill cap 3, s2 (2) waits. At 1 s0's grow
    # preempts s1. At 5 s0 frees 2 and one of s1, s2 fits: head -> s1 first (s2 at 8); tail -> s1 is a
    # newcomer behind s2 (s2 at 5, s1 at 8).
    _, head = run(REQUEUE.replace("WHERE", "head"), monkeypatch)
    assert head["adm"] == [(1, 0.0, 0.0), (1, 5.0, 5.0), (2, 8.0, 8.0)]
    _, tail = run(REQUEUE.replace("WHERE", "tail"), monkeypatch)
    assert tail["adm"] == [(1, 0.0, 0.0), (2, 5.0, 5.0), (1, 8.0, 8.0)]


def test_rejection_of_a_hold_that_can_never_fit(monkeypatch):
    # §3 Pools / pool-reference: units or reserve above the cap after block rounding (block 4, cap 10):
    # s0 9 -> 12 rejected; s2 reserve 11 -> 12 rejected (on the hold's second pool); s1 8, s3 2 -> 4 waits
    # for s1 (8 + 4 > 10) until 1.
    r, o = run("""
pool a { cap 100; }
pool kv { cap 10; block 4; }
stage d : delay;
workload { arrive batch(4); }
session {
  set u = serial == 0 ? 9 : serial == 1 ? 8 : serial == 2 ? 3 : 2;
  set r = serial == 2 ? 11 : 0;
  hold a (1), kv (u) reserve (r) { observe t = now; run d (1); }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["t"] == [(1, 0.0, 0.0), (3, 1.0, 1.0)]
    assert pool(r, "kv").rejections == 2


def test_cache_reuse_and_dead_entries(monkeypatch):
    # §3 Pools, cache: block 2. hold 5 (allocates 6) cache (5): min(5, 6) rounded down = 4 cached. A hold
    # without cache leaves it (4). reuse (3): consumes round_down(3) = 2 (cached = 2), the other 2 stay as
    # a dead entry, so cachedin reads 0; cache (1) rounds down to 0: nothing cached. cache (0) consumes.
    _, o = run("""
pool kv { cap 10; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (5) { run d (1); } cache (5);
  observe a = cachedin(kv);
  hold kv (2) { observe b = cachedin(kv); }
  hold kv (6) reuse (3) { observe k = cached; observe ci = cachedin(kv); observe cu = used(kv); run d (1); }
    cache (1);
  observe e = cachedin(kv);
  hold kv (2) { observe k2 = cached; } cache (0);
}
run { horizon 100; }
""", monkeypatch)
    assert [o[n][0][2] for n in ("a", "b", "k", "ci", "cu", "e", "k2")] == [4.0, 4.0, 2.0, 0.0, 6.0, 0.0, 0.0]


def test_load_grow_and_the_computed_position(monkeypatch):
    # §3: load advances the position within the allocation; grow rounds to blocks; cache keeps
    # min(cache, computed), computed the position a load reached, else the allocation. block 2:
    # hold 3 -> 4, load 3, grow 1 -> 6 used, load 1 -> position 4: cache (10) keeps 4. drop discards it.
    # hold 1 -> 2, grow 2.5 -> 6, no load: computed = allocation 6, cache (3) keeps round_down(3) = 2.
    _, o = run("""
pool kv { cap 10; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3) { run d (1); load kv (3); grow kv (1); observe u = used(kv); load kv (1); } cache (10);
  observe c = cachedin(kv);
  drop kv;
  observe c2 = cachedin(kv);
  hold kv (1) { run d (1); grow kv (2.5); observe u2 = used(kv); } cache (3);
  observe c3 = cachedin(kv);
}
run { horizon 100; }
""", monkeypatch)
    assert [o[n][0][2] for n in ("u", "c", "c2", "u2", "c3")] == [6.0, 4.0, 0.0, 6.0, 2.0]


EVICT = """
pool kv { cap 10; block 2; ORDER }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (4) { run d (serial + 1); } cache (4);
    run d (4 - serial);
    observe c = cachedin(kv);
  } else {
    run d (3);
    hold kv (4) { run d (1); }
  }
}
run { horizon 100; }
"""


def test_eviction_orders_per_block_from_the_tail(monkeypatch):
    # pool-reference `evict`: s0 caches 4 at 1, s1 4 at 2; at 3 s2 needs 4: 4 + 8 > 10, one block of 2 goes
    # from the tail of the first entry in the order. lru and by (-age): s0's (released first); by
    # (-serial), by (age): s1's.
    for order, c0, c1 in (("evict lru;", 2.0, 4.0), ("evict by (-age);", 2.0, 4.0),
                          ("evict by (-serial);", 4.0, 2.0), ("evict by (age);", 4.0, 2.0)):
        _, o = run(EVICT.replace("ORDER", order), monkeypatch)
        assert o["c"] == [(0, 5.0, c0), (1, 5.0, c1)], order


def test_eviction_keys_read_an_ended_sessions_attributes_at_its_last_release(monkeypatch):
    # pool-reference `evict`: attributes are current while the session lives, as at its last release after
    # it ended. s0 caches with x = 5, sets x = 0 and ends at 2 (key 5); s1 caches with x = 3 and is alive
    # (key X). At 3 s2's hold of 4 evicts one whole entry (no block): X = 3 < 5 evicts s1's; X = 7, s0's.
    src = """
pool kv { cap 10; evict by (x); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    set x = 5; hold kv (4) { run d (1); } cache (4); set x = 0; run d (1);
  } else { branch (serial == 1) {
    set x = 3; hold kv (4) { run d (1); } cache (4); run d (1.5); set x = X; run d (10);
    observe c1 = cachedin(kv);
  } else {
    set x = 100; run d (3); hold kv (4) { run d (1); }
  } }
}
run { horizon 100; }
"""
    _, o = run(src.replace("X;", "3;"), monkeypatch)
    assert o["c1"] == [(1, 12.5, 0.0)]
    _, o = run(src.replace("X;", "7;"), monkeypatch)
    assert o["c1"] == [(1, 12.5, 4.0)]


def test_lease_outlives_the_scope_until_its_time_or_a_release(monkeypatch):
    # §2 lease / §3: s0 leases 4 for 3 s after its scope ends at 1: used 4, nothing cached at 1; at 4 the
    # cache applies (4 cached, 0 used at 5). s1 leases 3 for ever at 7 with cache (2): release ends the
    # lease (2 cached); a second release has nothing to give back.
    _, o = run("""
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4) lease kv (3);
    observe u1 = used(kv); observe c1 = cachedin(kv);
    run d (4);
    observe u2 = used(kv); observe c2 = cachedin(kv);
  } else {
    run d (6);
    hold kv (3) { run d (1); } cache (2) lease kv (inf);
    run d (1);
    observe u3 = used(kv); observe c3 = cachedin(kv);
    release kv;
    observe u4 = used(kv); observe c4 = cachedin(kv);
    release kv;
    observe u5 = used(kv);
  }
}
run { horizon 100; }
""", monkeypatch)
    got = {n: (v[0][1], v[0][2]) for n, v in o.items()}
    assert got == {"u1": (1.0, 4.0), "c1": (1.0, 0.0), "u2": (5.0, 0.0), "c2": (5.0, 4.0), "u3": (8.0, 3.0),
                   "c3": (8.0, 0.0), "u4": (8.0, 0.0), "c4": (8.0, 2.0), "u5": (8.0, 0.0)}


def test_transfer_takes_the_lease_and_loads_the_target(monkeypatch):
    # §2 transfer: run link (2) on ps(1) (2 s), load kvD (4), release kvP (the lease ends: its cache (4)
    # applies, min(4, allocation 4)). kvD's hold of 6 computed 4 (the load), cache (5) keeps 4.
    _, o = run("""
pool kvP { cap 10; }
pool kvD { cap 10; }
stage d : delay;
stage link : ps(1);
workload { arrive batch(1); }
session {
  hold kvP (4) { run d (1); } cache (4) lease kvP (inf);
  hold kvD (6) {
    transfer (2) from kvP to kvD (4);
    observe t = now; observe u = used(kvP); observe ci = cachedin(kvP);
    run d (1);
  } cache (5);
  observe cd = cachedin(kvD);
}
run { horizon 100; }
""", monkeypatch)
    assert [o[n][0][1:] for n in ("t", "u", "ci", "cd")] == [(3.0, 3.0), (3.0, 0.0), (3.0, 4.0), (4.0, 4.0)]


def test_choose_ties_go_to_the_least_index_and_admission_waits_for_the_settle(monkeypatch):
    # §2 choose / §3 settle: the ready sessions run before any admission, so s0..s2 all see holders 0
    # everywhere and tie on (0, 0): index 0. s3's second key -j prefers index 2.
    _, o = run("""
pool m[3] { cap 10; }
stage d : delay;
workload { arrive batch(4); }
session {
  choose j in 3 by (holders(m[j]) > 0 ? 1 : 0, 0 - j * (serial == 3));
  observe jj = j;
  hold m[j] (1) { run d (10); }
}
run { horizon 100; }
""", monkeypatch)
    assert [v for _, _, v in o["jj"]] == [0.0, 0.0, 0.0, 2.0]


# --- stages ----------------------------------------------------------------------------------------------


def test_ps_fifo_and_delay_rates(monkeypatch):
    # §3 Stages: works 1, 2, 3 at 0. ps(2): 2/3 each until 1.5, then 1 each until 2.5, then 2 alone: 3.0.
    # ps(min(present, 2)): the last alone at rate 1: 3.5. fifo(2): 1, 2, 1 + 3 = 4. fifo: 1, 3, 6.
    src = """
stage s : KIND;
workload { arrive batch(3); }
session { run s (serial + 1); observe t = now + 0; }
run { horizon 100; }
"""
    for kind, ts in (("ps(2)", [1.5, 2.5, 3.0]), ("ps(min(present, 2))", [1.5, 2.5, 3.5]),
                     ("fifo(2)", [1.0, 2.0, 4.0]), ("fifo", [1.0, 3.0, 6.0]), ("delay", [1.0, 2.0, 3.0])):
        _, o = run(src.replace("KIND", kind), monkeypatch)
        assert [t for _, t, _ in o["t"]] == ts, kind


def test_flows_maxmin_and_bottleneck(monkeypatch):
    # §3 Stages: a: ps(4), b: ps(1); f1 = run a, b (1), f2 and f3 = run a (3). maxmin: f1 stops at 1 (b is
    # full), f2 and f3 get 1.5 each; f1 ends at 1, then 2 each: 1.5 left / 2 -> 1.75. bottleneck: f1 =
    # min(4/3, 1) = 1, f2 = f3 = 4/3; at 1 they have 5/3 left at 2 each: 1 + 5/6.
    src = """
stage a : ps(4);
stage b : ps(1);
share SHARE;
workload { arrive batch(3); }
session { branch (serial == 0) { run a, b (1); } else { run a (3); } observe t = now + 0; }
run { horizon 100; }
"""
    _, o = run(src.replace("SHARE", "maxmin"), monkeypatch)
    assert [t for _, t, _ in o["t"]] == [1.0, 1.75, 1.75]
    _, o = run(src.replace("SHARE", "bottleneck"), monkeypatch)
    assert o["t"][0][1] == 1.0 and abs(o["t"][1][1] - 11 / 6) < 1e-12 and abs(o["t"][2][1] - 11 / 6) < 1e-12


def test_step_decode_takes_one_token_per_iteration(monkeypatch):
    # §3 step: budget 4, cost 1, two sessions prefill 5 then decode 3. it1: s0 4. it2: s0 1, s1 3 (s0's
    # prefill ends at 2). it3: s0 decode 1, s1 2 (ends at 3). it4, it5: one decode token each: s0 done at
    # 5, s1 at 6.
    _, o = run("""
stage E : step { budget 4; cost 1; }
workload { arrive batch(2); }
session { run E prefill (5); observe pf = now; run E decode (3); observe done = now; }
run { horizon 100; }
""", monkeypatch)
    assert o["pf"] == [(0, 2.0, 2.0), (1, 3.0, 3.0)]
    assert o["done"] == [(0, 5.0, 5.0), (1, 6.0, 6.0)]


def test_step_attention_counts_from_the_holds_position(monkeypatch):
    # §2 attention = sum n (K + n/2): chunk 3, cost 1 + 0.001 attention. After load 4: chunks 3 (K 4) and 2
    # (K 7): 16.5 + 16 -> 2.0325. A plain run: 3 (K 0) and 2 (K 3): 4.5 + 8 -> 2.0125 more.
    _, o = run("""
pool kv { cap 100; }
stage E : step { budget 10; chunk 3; cost 1 + 0.001 * attention; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (4) { load kv (4); run E prefill (5) growing kv; observe pf = now; }
  run E prefill (5);
  observe pf2 = now;
}
run { horizon 100; }
""", monkeypatch)
    assert abs(o["pf"][0][1] - 2.0325) < 1e-12 and abs(o["pf2"][0][1] - 4.045) < 1e-12


def test_step_serve_orders_and_chunk(monkeypatch):
    # §3 step serve: budget 4, prefills 5, 2, 3 (s0, s1, s2).
    # by (remaining): it1 s1 2, s2 2; it2 s2 1, s0 3; it3 s0 2: 1, 2, 3 for s1, s2, s0.
    # by (-remaining): it1 s0 4; it2 s2 3, s1 1; it3 s0 1, s1 1 (ties: admission order): s2 2, s0 3, s1 3.
    # by (-remaining), chunk 2: it1 s0 2, s2 2; it2 s0 2, s1 2; it3 s0 1, s2 1: s1 2, s0 3, s2 3.
    # decode first (all prefill: admission order), chunk 3: it1 s0 3, s1 1; it2 s0 2, s1 1, s2 1; it3 s2 2.
    src = """
stage E : step { budget 4; cost 1; SERVE }
workload { arrive batch(3); }
session { set w = serial == 0 ? 5 : serial == 1 ? 2 : 3; run E prefill (w); observe t = now + 0; }
run { horizon 100; }
"""
    for serve, want in (("serve by (remaining);", [(1, 1.0), (2, 2.0), (0, 3.0)]),
                        ("serve by (-remaining);", [(2, 2.0), (0, 3.0), (1, 3.0)]),
                        ("serve by (-remaining); chunk 2;", [(1, 2.0), (0, 3.0), (2, 3.0)]),
                        ("serve decode first; chunk 3;", [(0, 2.0), (1, 2.0), (2, 3.0)])):
        _, o = run(src.replace("SERVE", serve), monkeypatch)
        assert [(s, t) for s, t, _ in o["t"]] == want, serve


def test_step_zero_work_completes_at_once(monkeypatch):
    # §3 step: a run of zero work completes at once (no iteration); the prefill of 1 then takes one: 1.5.
    _, o = run("""
stage E : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(1); }
session { run d (0.5); run E prefill (0); observe a = now; run E decode (0); observe b = now;
          run E prefill (1); observe e = now; }
run { horizon 100; }
""", monkeypatch)
    assert [o[n][0][1] for n in ("a", "b", "e")] == [0.5, 0.5, 1.5]


def test_step_growth_preempts_the_last_admitted_resident(monkeypatch):
    # §3 step + preempt lifo: cap 8, block 2; s0, s1 hold 4, prefill 4 (it1, to 1). it2: s0's decode
    # grows 4 -> 6: 8 + 2 > 8, victim s1 (last admitted); s0 decodes at 1..5 (grows to 8 at 3), ends at 5;
    # s1 is admitted again at 5, prefills 4 (to 6) and decodes 4: 10.
    r, o = run("""
pool kv { cap 8; block 2; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (4) { observe adm = now; run E prefill (4) growing kv; run E decode (4) growing kv; }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 5.0, 5.0)]
    assert o["done"] == [(0, 5.0, 5.0), (1, 10.0, 10.0)]
    assert pool(r, "kv").preemptions == 1


def test_step_victim_keys_position(monkeypatch):
    # pool-reference Victim keys: cap 9; s0 holds 2 (prefill 2), s1 6 (prefill 6), both decode 1 at 1.
    # s0 grows to 3 (9 used), s1's growth to 7 does not fit. by (position): s0 (2 < 6) is the victim
    # (lifo and by (-position) take s1). The victim is re-admitted at the next event (2), re-runs its hold:
    # prefill at 2..3, decode 3..4.
    src = """
pool kv { cap 9; PREEMPT }
stage E : step { budget 100; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  set p = serial == 0 ? 2 : 6;
  hold kv (p) { observe t = now; run E prefill (p) growing kv; run E decode (1) growing kv; }
  observe done = now;
}
run { horizon 100; }
"""
    for pre, victim in (("preempt by (position);", 0), ("preempt lifo;", 1), ("preempt by (-position);", 1)):
        _, o = run(src.replace("PREEMPT", pre), monkeypatch)
        assert o["t"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (victim, 2.0, 2.0)], pre
        assert o["done"] == [(1 - victim, 2.0, 2.0), (victim, 4.0, 4.0)], pre


def test_step_admission_budget_left_and_no_admission_after_preemption(monkeypatch):
    # §3 admit via: cap 5 kv, s0 and s1 admitted at 0 (2 each), prefill 2. it2 (at 1): s0 grows to 3 (5
    # used); s1's growth preempts s1 itself (last admitted), computed 2. No admission in that iteration;
    # at 2 and 3 s1's 2 do not fit beside s0's 3 and 4; s0 ends at 4, s1 is admitted at 4 reading
    # computed 2, prefills (5) and decodes 3: 8.
    r, o = run("""
pool reqs { cap 10; admit via E; }
pool kv { cap 5; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (2) { observe t = now; observe c = computed; run E prefill (2) growing kv;
                          run E decode (3) growing kv; }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["t"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 4.0, 4.0)]
    assert o["c"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 4.0, 2.0)]
    assert o["done"] == [(0, 4.0, 4.0), (1, 8.0, 8.0)]


def test_step_a_preempting_step_with_no_token_lasts_its_cost(monkeypatch):
    # §3 step: s1 holds 2 of kv (cap 4) on a delay stage (no resident: no candidate) until 5. s0 (admitted
    # by E) prefills 2 (0..1); its decode growth preempts s0 itself: an iteration of no token lasts 1
    # (1..2), s0 is re-admitted at 2, again at 4; at 5 s1's end comes first, the growth fits, decodes at
    # 5..7. The second preemption at the same position counts as stuck.
    r, o = run("""
pool reqs { cap 10; admit via E; }
pool kv { cap 4; preempt lifo; }
stage d : delay;
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 1) {
    hold kv (2) { run d (5); }
  } else {
    hold reqs (1), kv (2) { observe t = now; run E prefill (2) growing kv; run E decode (2) growing kv; }
  }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["t"] == [(0, 0.0, 0.0), (0, 2.0, 2.0), (0, 4.0, 4.0)]
    assert o["done"] == [(1, 5.0, 5.0), (0, 7.0, 7.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck) == (2, 1)


def test_step_admits_with_the_budget_left(monkeypatch):
    # §3 admit via: budget 6, cap 2 requests; kv units = budget_left(E). it1: s0 sees 6, prefills 4; s1
    # sees 2, prefills 2; s2 waits for a slot. it2: s0 decodes, s1 prefills 2. it3: both decode; s0 ends at
    # 3. it4 at 3: s1 1 token, s2 sees 5 (used 2 + 5 = 7), prefills 4; decodes 4..6.
    _, o = run("""
pool reqs { cap 2; admit via E; }
pool kv { cap 100; }
stage E : step { budget 6; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  hold reqs (1), kv (budget_left(E)) { observe u = used(kv); run E prefill (4); run E decode (2); }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["u"] == [(0, 0.0, 6.0), (1, 0.0, 8.0), (2, 3.0, 7.0)]
    assert o["done"] == [(0, 3.0, 3.0), (1, 4.0, 4.0), (2, 6.0, 6.0)]


def test_step_queue_by_keys_are_evaluated_again_after_each_admission(monkeypatch):
    # pool-reference `queue`: prompts 8, 3, 5, 2; the largest that fits the budget left first. At 0: s0
    # (8 <= 10), then budget 2: s3. At 1: s2 (5), then budget 5: s1. used(reqs) shows the order at 1.
    _, o = run("""
pool reqs { cap 10; admit via E; queue by (p <= budget_left(E) ? 0 : 1, -p); }
stage E : step { budget 10; cost 1; }
workload { arrive batch(4); }
session {
  set p = serial == 0 ? 8 : serial == 1 ? 3 : serial == 2 ? 5 : 2;
  hold reqs (1) { observe u = used(reqs); run E prefill (p); }
}
run { horizon 100; }
""", monkeypatch)
    assert o["u"] == [(0, 0.0, 1.0), (3, 0.0, 2.0), (1, 1.0, 2.0), (2, 1.0, 1.0)]


def test_step_first_head_that_does_not_fit_stops_all_queues(monkeypatch):
    # §3: a stage serving several queues tries them in declaration order; the first head that does not fit
    # stops the iteration's admissions. qa (cap 1): s0 at 0, s1 waits; qb's s2, s3 wait too, until 1.
    _, o = run("""
pool qa { cap 1; admit via E; }
pool qb { cap 5; admit via E; }
stage E : step { budget 100; cost 1; }
workload { arrive batch(4); }
session {
  branch (serial < 2) { hold qa (1) { observe ta = now; run E prefill (serial * 2 + 1); } }
  else { hold qb (1) { observe tb = now; run E prefill (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["ta"] == [(0, 0.0, 0.0), (1, 1.0, 1.0)]
    assert o["tb"] == [(2, 1.0, 1.0), (3, 1.0, 1.0)]


def test_step_iteration_waits_for_the_instants_other_events(monkeypatch):
    # §3 settle: an iteration starts when no other event is pending at that instant. s1 joins at 1 by an
    # event scheduled after the iteration's end at 1, and is still admitted at 1: budget 2 -> s0's last
    # token and s1's one token, both done at 2 (not 3).
    _, o = run("""
pool reqs { cap 10; admit via E; }
stage d : delay;
stage E : step { budget 2; cost 1; }
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (0.5); run d (0.5); }
  hold reqs (1) { observe t = now; run E prefill (3 - 2 * serial); }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["t"] == [(0, 0.0, 0.0), (1, 1.0, 1.0)]
    assert o["done"] == [(0, 2.0, 2.0), (1, 2.0, 2.0)]


def test_step_exclusive_prefill_displaces_tentative_decodes(monkeypatch):
    # §3 serve exclusive prefill: s0 prefills 2 (0..1). At 1 its decode is tentative and grows 2 -> 4 (block
    # 2); s1 (waiting since 0.5) fits and displaces it: s1's header sees the full budget, used = 4 + 2 = 6
    # (s0 keeps the block), s1 prefills alone 1..2; s0 decodes 2..5.
    _, o = run("""
pool reqs { cap 4; admit via E; }
pool kv { cap 100; block 2; }
stage d : delay;
stage E : step { budget 8; cost 1; memory kv; serve exclusive prefill; }
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (0.5); }
  hold reqs (1), kv (2) { observe u = used(kv); run E prefill (2) growing kv;
                          branch (serial == 0) { run E decode (3) growing kv; } }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["u"] == [(0, 0.0, 2.0), (1, 1.0, 6.0)]
    assert o["done"] == [(1, 2.0, 2.0), (0, 5.0, 5.0)]


# --- workload and run ------------------------------------------------------------------------------------


def test_run_arrivals_deadline_and_warmup(monkeypatch):
    # §2 run { arrivals N }: renewal(1) arrives at 1..5, each session 1 s: the 5th ends at 6. Horizon 4:
    # only 4 arrivals; horizon 5: the 5th is still live; horizon 6 drains; warmup 6: drained at or before
    # the warmup.
    src = """
stage d : delay;
workload { arrive renewal(1); }
session { run d (1); observe t = now; }
run { horizon H; warmup W; arrivals 5; }
"""
    for h, w, msg in (("4", "0", "only 4 arrivals"), ("5", "0", "still live"), ("100", "6", "at or before")):
        with pytest.raises(serq_sim.SimError, match=msg):
            _run(src.replace("H;", h + ";").replace("W;", w + ";"), monkeypatch, "general")
    r, o = run(src.replace("H;", "6;").replace("W;", "0;"), monkeypatch)
    assert [t for _, t, _ in o["t"]] == [2.0, 3.0, 4.0, 5.0, 6.0] and r.result.end == 6.0



def test_poisson_starts_at_zero_then_renewal_schedule(monkeypatch):
    # §2 arrive: poisson(rate) arrives at 0, then at the times renewal(~exp(1 / rate)) gives for the same
    # seed (which has no arrival at 0).
    src = """
stage d : delay;
workload { arrive ARRIVE; }
session { observe t = now; run d (1); }
run { horizon 3; seed 7; }
"""
    _, p = run(src.replace("ARRIVE", "poisson(2)"), monkeypatch)
    _, r = run(src.replace("ARRIVE", "renewal(~exp(0.5))"), monkeypatch)
    tp = [t for _, t, _ in p["t"]]
    tr = [t for _, t, _ in r["t"]]
    assert tp[0] == 0.0 and tp[1:] == tr and len(tr) > 3


def test_gauge_reads_the_end_of_each_instant(monkeypatch):
    # §3 Gauges: the state an instant's last event leaves. cap 1, two sessions of 2 s: used is 1 over
    # [0, 4) (the release and the admission at 2 are one instant) and 0 over [4, 5]; after warmup 1:
    # mean 3/4. queued: 1 over [1, 2), 0 after: 1/4.
    r, _ = run("""
pool m { cap 1; }
stage d : delay;
gauge g = used(m);
gauge q = queued(m);
workload { arrive batch(2); }
session { hold m (1) { run d (2); } }
run { horizon 5; warmup 1; }
""", monkeypatch)
    g = json.loads(encode_json(r))["gauges"]
    assert (g["g"]["mean"], g["g"]["min"], g["g"]["max"]) == (0.75, 0.0, 1.0)
    assert g["q"]["mean"] == 0.25


def test_step_exclusive_prefill_resident_prefill_goes_alone(monkeypatch):
    # §3 serve exclusive prefill, chunk 3, budget 8: s0 prefill 1 at 0 (admission stops there); at 1 s0's
    # decode is tentative and s1 displaces it (3 tokens); at 2 s1's resident prefill (2 left) goes alone;
    # at 3 s2 displaces the decodes (3), at 4 its prefill goes alone; 5..7 the three decode 2 tokens.
    _, o = run("""
pool reqs { cap 4; admit via E; }
stage E : step { budget 8; cost 1; chunk 3; serve exclusive prefill; }
workload { arrive batch(3); }
session {
  hold reqs (1) { observe t = now; run E prefill (serial == 0 ? 1 : 5); observe p = now; run E decode (2); }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert [t for _, t, _ in o["t"]] == [0.0, 1.0, 3.0]
    assert [t for _, t, _ in o["p"]] == [1.0, 3.0, 5.0]
    assert [t for _, t, _ in o["done"]] == [7.0, 7.0, 7.0]


def test_step_grower_waits_under_preempt_none(monkeypatch):
    # pool-reference `preempt none`: cap 6; s1 holds 4 on a delay stage until 3. s0 (2) prefills 2 at 0..1;
    # its decode's growth to 3 (7 > 6) waits: no iteration until 3, then tokens at 3..4, 4..5, 5..6.
    _, o = run("""
pool kv { cap 6; preempt none; }
stage d : delay;
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 1) { hold kv (4) { run d (3); } }
  else { hold kv (2) { run E prefill (2) growing kv; observe p = now; run E decode (3) growing kv; } }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["p"] == [(0, 1.0, 1.0)]
    assert o["done"] == [(1, 3.0, 3.0), (0, 6.0, 6.0)]


def test_growers_in_the_order_they_stalled_the_head_blocking(monkeypatch):
    # §3 Ties: a pool's growers in the order they stalled, the head blocking the rest. cap 4: s0 1, s1 1,
    # s2 2 (until 3). At 1 s0 asks 2 more (waits), at 2 s1 asks 1 (waits behind s0). At 3 s2's 2 go to
    # s0; s1 waits for s0's end at 4.
    _, o = run("""
pool m { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { hold m (2) { run d (3); } }
  else { hold m (1) { run d (serial + 1); grow m (2 - serial); observe g = now; run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["g"] == [(0, 3.0, 3.0), (1, 4.0, 4.0)]
