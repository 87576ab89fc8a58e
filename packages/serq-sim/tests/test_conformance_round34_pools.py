"""Conformance of language.txt §3's pool rules, by hand, on both tiers (conform.run): offload tiers (a
spill's write, when it lands, per block from an entry's tail, its predicate over blocks; a family's tiers
paired member for member or all one), the eviction orders and their ties, `reserve` and `reserve held`,
the preemption victim and where it goes back, and `choose` over a pool family at one instant.

§3, Pools: "Other entries are evicted in the pool's order until allocations and cache fit … Eviction is per
entry, or per block from the tail of the entry when the pool has block b; evict lru orders by release time
and then release order, evict by (k₁, …) by the keys and then release order." Ties: "Events at one instant:
the order they were scheduled". docs/language.md: "A spilled prefix is usable when its write completes"
(from the eviction its units take their room in the tier, cached and unusable), "A spill's work is what it
writes", a block evicted is a spill of its own.
"""

from __future__ import annotations

import math

import pytest
from conform import report_json, run


def pool_entry(js, name, index=None):
    p = next(p for p in js["pools"] if p["name"] == name and p["index"] == index)
    return {k: v for k, v in p.items() if k not in ("name", "index")}


def near(got, want):
    for k, v in want.items():
        assert math.isclose(got[k], v, rel_tol=1e-12, abs_tol=1e-12) if isinstance(v, float) else got[k] == v, (
            k, got[k], v)


# A session caches 4 on kv at 3; another, arriving at 4 (renewal 2: the first arrival after one gap, at 2),
# takes all of kv and evicts it: the spill writes 4 units, a job of 4 on pcie [4, 8], so cpu's entry lands
# at 8. s0 (hold [2, 3], then 4 s) reads at 7: nothing on cpu yet, nothing on kv (a = 0); at 8 (its run's
# end was scheduled at 7, the landing at 4: the landing first) 4 on cpu (b = 4), and a hold of cpu reusing
# it consumes 4 (c = 4). Over [0, 14] (the run drains at s1's end, 4 + 10): kv used 4 on [2, 3] and
# [4, 14]: 44/14; kv cached 4 on [3, 4]: 4/14; cpu cached 4 on [4, 8] (the write's room, taken at the
# eviction), consumed at 8 by a hold that keeps nothing (cache (0)): 16/14; pcie one job of 4.
SPILL_LANDS = """
pool kv { cap 4; spill cpu via pcie (size) when (1); }
pool cpu { cap 10; }
stage pcie : delay;
stage d : delay;
workload { arrive renewal(2); }
session {
  branch (serial == 0) {
    hold kv (4) {
      run d (1);
    } cache (4);
    run d (4);
    observe a = cachedin(cpu) + 10 * cachedin(kv);
    run d (1);
    observe b = cachedin(cpu) + 10 * cachedin(kv);
    hold cpu (h) reuse (h) at admission (h = cachedin(cpu)) {
      observe c = cached;
    } cache (0);
  } else {
    hold kv (4) {
      run d (10);
    }
  }
}
run { arrivals 2; horizon 20; }
"""


def test_a_spilled_prefix_lands_when_its_write_ends(monkeypatch):
    r, obs = run(SPILL_LANDS, monkeypatch)
    assert obs == {"a": [(0, 7.0, 0.0)], "b": [(0, 8.0, 4.0)], "c": [(0, 8.0, 4.0)]}
    js = report_json(r)
    assert js["end"] == 14.0
    near(pool_entry(js, "kv"), {"used": 44 / 14, "cached": 4 / 14, "evicted_entries": 1, "evicted_units": 4.0,
                                "spills": 1})
    near(pool_entry(js, "cpu"), {"cached": 16 / 14, "admissions": 1, "evicted_units": 0.0})
    pcie = next(s for s in js["stages"] if s["name"] == "pcie")
    near(pcie, {"completions": 1, "service": 4.0, "present": 4 / 14})


# kv has blocks of 2: s0 caches 6 (three blocks) at 1; s1 at 2 needs 6 beside the 6 cached in 8, so two
# blocks (4 units) go from the tail of s0's entry, each an Evict moment and a spill of its own (`size` 2):
# two writes of 2 on pcie [2, 4]. With `when (1)` both land at 4, so at 5 s0 finds 4 on cpu and the 2 left
# on kv: c = 4 + 10 · 2 = 24; `spills` 2, the entry not evicted whole (`evicted_entries` 0, 4 units); cpu
# cached 4 over [2, 10]: 3.2. With `when (size >= 4)` no block qualifies: nothing written, c = 20.
SPILL_BLOCKS = """
pool kv { cap 8; block 2; spill cpu via pcie (size) when (WHEN); }
pool cpu { cap 10; block 2; }
stage pcie : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) {
      run d (1);
    } cache (6);
    run d (4);
    observe c = cachedin(cpu) + 10 * cachedin(kv);
  } else {
    run d (2);
    hold kv (6) {
      run d (1);
    }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("when, c, spills, cpu_cached, pcie_jobs", [
    ("1", 24.0, 2, 3.2, 2),
    ("size >= 4", 20.0, 0, 0.0, 0),
])
def test_a_block_pool_spills_block_by_block_from_the_tail(monkeypatch, when, c, spills, cpu_cached, pcie_jobs):
    r, obs = run(SPILL_BLOCKS.replace("WHEN", when), monkeypatch)
    assert obs == {"c": [(0, 5.0, c)]}
    js = report_json(r)
    near(pool_entry(js, "kv"), {"evicted_entries": 0, "evicted_units": 4.0, "spills": spills, "cached": 2.2})
    near(pool_entry(js, "cpu"), {"cached": cpu_cached})
    assert next(s for s in js["stages"] if s["name"] == "pcie")["completions"] == pcie_jobs


# A family's tier pairs member for member (`pool kv[2] { spill cpu via pcie … }` beside cpu[2] and pcie[2]),
# or, beside a family of one, every member writes to that one (docs/language.md, Pools). s0 and s1 cache 4
# on kv[0] and kv[1] at 1; s2 and s3 at 2 take those members whole: each entry is written over its pcie
# member [2, 6] and lands at 6. At 7 s0 and s1 read the tiers (c = Σ cachedin(cpu[i]) · 10^i): paired, s0's
# on cpu[0] (4), s1's on cpu[1] (40); with one tier both on cpu[0] (4 each). s2, s3 have none (0). Each
# tier's cached: 4 per entry over [2, 10].
FAMILY = """
let N = 2;
pool kv[N] { cap 4; spill cpu via pcie (size) when (1); }
pool cpu[NC] { cap 10; }
stage pcie[NC] : delay;
stage d : delay;
workload { arrive batch(4); }
session {
  set j = serial % 2;
  run d (serial < 2 ? 0 : 2);
  hold kv[j] (4) {
    run d (1);
  } cache (4);
  run d (serial < 2 ? 6 : 4);
  observe c = sum i in NC (cachedin(cpu[i]) * pow(10, i));
}
run { horizon 10; }
"""


@pytest.mark.parametrize("nc, s1, cached", [("2", 40.0, {0: 3.2, 1: 3.2}), ("1", 4.0, {0: 6.4})])
def test_a_familys_tiers_pair_member_for_member(monkeypatch, nc, s1, cached):
    r, obs = run(FAMILY.replace("NC", nc), monkeypatch)
    assert obs == {"c": [(0, 7.0, 4.0), (1, 7.0, s1), (2, 7.0, 0.0), (3, 7.0, 0.0)]}
    js = report_json(r)
    for i in (0, 1):
        near(pool_entry(js, "kv", i), {"spills": 1, "evicted_entries": 1, "evicted_units": 4.0})
    for i, v in cached.items():
        near(pool_entry(js, "cpu", i), {"cached": v})


# Four sessions cache 6, 2, 4 and 3 on m (cap 12), each after `run d (serial)`: s0 [0, 1], s1 [1, 2], s2
# [2, 3], s3 from 3. At 3 two events: s3's run's end (scheduled at 0) and s2's hold's (scheduled at 2),
# in that order, so s3's hold of 3 comes while s2 still holds 4 beside s0's 6 and s1's 2 cached (4 + 8 + 3
# = 15 > 12): 3 units must go. Then s2 caches 4, s3 at 4 its 3. Each reads its own at 6.
#   lru: the first released, s0's 6: one entry; cached 6 [1, 2], 8 [2, 3], 6 [3, 4], 9 [4, 10]: 7.4
#   by (size): s1's 2 (not enough: 13), then s0's 6: two entries, 8 units; 6, 8, 4, 7: 6.0
#   by (-size): s0's 6
#   by (-last): the last released first, s1's (2), then s0's
#   by (0): all tie, so the release order: s0's
#   by (age): now − last, the youngest first: s1's (1) before s0's (2)
EVICT = """
pool m { cap 12; EVICT }
stage d : delay;
workload { arrive batch(4); }
session {
  set u = serial == 0 ? 6 : serial == 1 ? 2 : serial == 2 ? 4 : 3;
  run d (serial);
  hold m (u) {
    run d (1);
  } cache (u);
  run d (5 - serial);
  observe k = cachedin(m);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("order, kept0, kept1, entries", [
    ("evict lru;", 0.0, 2.0, 1),
    ("evict by (size);", 0.0, 0.0, 2),
    ("evict by (-size);", 0.0, 2.0, 1),
    ("evict by (-last);", 0.0, 0.0, 2),
    ("evict by (0);", 0.0, 2.0, 1),
    ("evict by (age);", 0.0, 0.0, 2),
])
def test_the_eviction_order_and_its_ties(monkeypatch, order, kept0, kept1, entries):
    r, obs = run(EVICT.replace("EVICT", order), monkeypatch)
    assert obs == {"k": [(0, 6.0, kept0), (1, 6.0, kept1), (2, 6.0, 4.0), (3, 6.0, 3.0)]}
    units = 6.0 if entries == 1 else 8.0
    near(pool_entry(report_json(r), "m"), {"evicted_entries": entries, "evicted_units": units,
                                            "cached": 7.4 if entries == 1 else 6.0, "used": 1.5})


# `reserve` is checked at the admission only; under `reserve held` what a live hold reserved and has not
# allocated counts against later admissions too. s0 holds 2 reserving 8 for [0, 2]; s1 wants 3. Plain:
# 2 + 3 ≤ 10, admitted at 0. Held: 2 + (8 − 2) + 3 = 11 > 10, admitted at 2 when s0's hold ends.
RESERVE = """
pool m { cap 10; HELD }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) reserve (8) {
      run d (2);
    }
  } else {
    hold m (3) {
      observe t = now;
      run d (1);
    }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("held, t", [("", 0.0), ("reserve held;", 2.0)])
def test_reserve_at_admission_and_reserve_held(monkeypatch, held, t):
    _r, obs = run(RESERVE.replace("HELD", held), monkeypatch)
    assert obs == {"t": [(1, t, t)]}


def test_a_hold_whose_reserve_is_above_the_cap_is_rejected(monkeypatch):
    """§3: "A request that can never fit — its units, or its reserve when that is larger, above the cap …
    is rejected: the session ends." s0 reserves 11 of 10: it ends at 0 and never observes; s1 holds 2."""
    src = RESERVE.replace("HELD", "").replace("reserve (8)", "reserve (11)")
    r, obs = run(src, monkeypatch)
    assert obs == {"t": [(1, 0.0, 0.0)]}
    js = report_json(r)
    near(pool_entry(js, "m"), {"rejections": 1, "admissions": 1})
    assert js["ended"] == 2


# A pool that is no engine's memory preempts its most recently admitted holder (§3, grow). m has 4: s0
# and s1 hold 2 each at 0 (s1's body 5 s), s2 waits for 3. At 1 s0 grows by 2:
#   lifo: the victim is s1 (admitted last): its job leaves d, its hold goes (no cache clause: nothing
#     cached; `computed` 0, no position advanced), and it re-enters the queue's head, ahead of s2. s0 grows
#     at 1 (g = 1), ends at 2; s1 is admitted again at 2, then s2 does not fit (2 + 3) until s1 ends at 7:
#     s2 runs [7, 8]. Four admissions, waits 0 (s0), 0 (s1), 1 (s1 again, from its preemption at 1), 7
#     (s2): mean 2.
#   none: s0 waits to grow until s1's end at 5 (g = 5), ends at 6; s2 then fits: [6, 7]. Waits 0, 0, 6.
#   by (-admission) requeue tail: s1 goes behind s2; at 2 s2 (3) is admitted, s1 (2) waits till s2's end
#     at 3, then runs 5: [3, 8]. Waits 0, 0, 2 (s2), 2 (s1, from 1): mean 1.
PREEMPT = """
pool m { cap 4; PRE }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (2) {
      run d (1);
      grow m (2);
      observe g = now;
      run d (1);
    }
  } else {
    hold m (serial + 1) {
      observe adm = now;
      observe cp = computed;
      run d (5 - 4 * (serial - 1));
    }
    observe t = now;
  }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("pre, g, adm, t, preemptions, wait", [
    ("preempt lifo;", 1.0, [(1, 0.0), (1, 2.0), (2, 7.0)], [(1, 7.0), (2, 8.0)], 1, 2.0),
    ("preempt none;", 5.0, [(1, 0.0), (2, 6.0)], [(1, 5.0), (2, 7.0)], 0, 2.0),
    ("preempt by (-admission) requeue tail;", 1.0, [(1, 0.0), (2, 2.0), (1, 3.0)], [(2, 3.0), (1, 8.0)], 1, 1.0),
])
def test_the_victim_of_a_pool_no_engine_counts(monkeypatch, pre, g, adm, t, preemptions, wait):
    r, obs = run(PREEMPT.replace("PRE", pre), monkeypatch)
    assert obs["g"] == [(0, g, g)]
    assert [(s, tt) for s, tt, _v in obs["adm"]] == adm
    assert [v for _s, _t, v in obs["cp"]] == [0.0] * len(adm)
    assert [(s, tt) for s, tt, _v in obs["t"]] == t
    near(pool_entry(report_json(r), "m"), {"preemptions": preemptions, "wait": wait, "admissions": len(adm) + 1})


# choose at one instant (§3: commands take no time, sessions run in the order they became ready, and the
# admissions are retried after every ready session ran): four sessions at 0 choose among m[0..2] by
# (holders + queued, −free), then hold m[j] (serial + 1). Nobody is admitted while they choose, so the
# first key counts the holds queued before: s0 all 0 → the smallest index, 0; s1 m[0] has one → 1; s2 →
# 2; s3 all one, −free all −4: 0. Admissions then: m[0] takes s0 (1), s3's 4 does not fit beside it until
# s0's end at 1; s1, s2 at 0. A NaN key orders nothing (docs/language.md, "A choose key that is NaN"): by
# (a == 1 ? NaN : 5) the first met stays, 0; by (b == 0 ? NaN : 5 − b) also 0.
CHOOSE = """
pool m[3] { cap 4; }
stage d : delay;
workload { arrive batch(4); }
session {
  set n = 0 / 0;
  choose j in 3 by (holders(m[j]) + queued(m[j]), -free(m[j]));
  choose a in 3 by (a == 1 ? n : 5);
  choose b in 3 by (b == 0 ? n : 5 - b);
  observe cj = j;
  observe ca = a + 10 * b;
  hold m[j] (serial + 1) {
    observe adm = now;
    run d (1);
  }
}
run { horizon 10; }
"""


def test_choose_at_one_instant_and_its_ties(monkeypatch):
    _r, obs = run(CHOOSE, monkeypatch)
    assert obs["cj"] == [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 0.0, 2.0), (3, 0.0, 0.0)]
    assert [v for _s, _t, v in obs["ca"]] == [0.0] * 4
    assert obs["adm"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (3, 1.0, 1.0)]


# A growth that fits grows at once, whether growers wait or not (docs/language.md; §3 Ties: "A pool's
# growers: the order they stalled, the head blocking the rest", among those that wait). m has 6: s0 and s1
# hold 2, s2 holds 1 for 3 s. s0 at 1 grows 2 (1 left: it stalls); s1 at 1.5 grows 1, which fits: it
# grows then (g = 1.5), and ends at 2.5, giving back 3: s0 grows at 2.5.
GROWERS = """
pool m { cap 6; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) {
    hold m (1) {
      run d (3);
    }
  } else {
    hold m (2) {
      run d (1 + serial / 2);
      grow m (2 - serial);
      observe g = now;
      run d (1);
    }
  }
}
run { horizon 10; }
"""


def test_a_growth_that_fits_passes_a_stalled_grower(monkeypatch):
    _r, obs = run(GROWERS, monkeypatch)
    assert obs == {"g": [(1, 1.5, 1.5), (0, 2.5, 2.5)]}


# `reserve held` counts what a live hold reserved and has not allocated against the other holds' growth
# too (docs/language.md, Pools). m has 10: s0 holds 2 reserving 6 for [0, 2]; s1 holds 2 and at 1 grows 3.
# Plain: 4 + 3 ≤ 10, it grows at 1. Held: 4 + (6 − 2) + 3 = 11 > 10: it waits (preempt none) until s0's
# hold ends at 2.
RESERVE_GROWTH = """
pool m { cap 10; HELD }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) reserve (6) {
      run d (2);
    }
  } else {
    hold m (2) {
      run d (1);
      grow m (3);
      observe g = now;
    }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("held, g", [("", 1.0), ("reserve held;", 2.0)])
def test_reserve_held_against_growth(monkeypatch, held, g):
    _r, obs = run(RESERVE_GROWTH.replace("HELD", held), monkeypatch)
    assert obs == {"g": [(1, g, g)]}


# A lease is no preemption victim (§3: "neither evictable nor a preemption victim"). m has 6, preempt lifo,
# no engine: s0, s1, s2 hold 2 each at 0, admitted in that order; s2's body is empty and its allocation is
# leased for 5 s (its session lives on: a session's end would end the lease); s1's body runs 3 s. At 1 s0
# grows 2: the most recently admitted holder with a hold in scope is s1 (s2 only leases), preempted: it
# caches nothing (no position advanced), goes to the head of the queue; s0 grows (used 6: s0 4, s2's 2;
# holders s0 and s2). s0 ends at 2; s1 is admitted again then, runs 3 s; at 5 s2's lease has ended (its
# expiry was scheduled at 0, before s1's run's end at 5) and s1's lease of 0 is still to end: used 2, one
# holder (ut = 2 + 100 · 1). Over [0, 10]: used s0 2 + 4, s1 2 + 6, s2 10: 2.4; holders 2 + 4 + 5: 1.1;
# cached s2's 2 and s1's 2 from 5: 2.0; one preemption; waits 0, 0, 0, 1: 0.25.
LEASE = """
pool m { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (2) {
      run d (1);
      grow m (2);
      observe g = now;
      observe u = used(m) + 100 * holders(m);
      run d (1);
    }
  } else {
    hold m (2) {
      observe adm = now;
      run d (serial == 1 ? 3 : 0);
    } cache (2) lease m (serial == 2 ? 5 : 0);
    observe ut = used(m) + 100 * holders(m);
    run d (6);
  }
}
run { horizon 10; }
"""


def test_a_lease_is_no_preemption_victim(monkeypatch):
    r, obs = run(LEASE, monkeypatch)
    assert obs["g"] == [(0, 1.0, 1.0)]
    assert obs["u"] == [(0, 1.0, 206.0)]
    assert obs["adm"] == [(1, 0.0, 0.0), (2, 0.0, 0.0), (1, 2.0, 2.0)]
    assert obs["ut"] == [(2, 0.0, 306.0), (1, 5.0, 102.0)]
    near(pool_entry(report_json(r), "m"), {"preemptions": 1, "used": 2.4, "holders": 1.1, "cached": 2.0,
                                           "wait": 0.25, "queue": 0.1, "evicted_units": 0.0})


# Families joined member for member (§3: "pool q[N] { admit via S; } next to stage S[N] serves q[i] by
# S[i], and stage E[N] : step { memory kv; } next to pool kv[N] counts kv[i] for E[i]; next to a family of
# one, every member gets that one"). Four sessions at 0, j = serial % 2, each a hold of reqs[j] (1) and 4
# on its KV (cap 4), prefilling 4 on E[j] (budget 4, cost 1: one iteration).
#   kv[2]: E[0] serves s0 [0, 1] then s2 [1, 2] (kv[0] holds one at a time), E[1] s1 and s3 likewise.
#   kv[1]: one pool for both engines: E[0] admits s0 at 0 and E[1]'s head s1 does not fit; at 1 both are
#     idle and the queues both wait for room in kv[0]: reqs[0], declared (as member) first, is served
#     first (§3 Ties), so s2 [1, 2]; then reqs[0] is empty and E[1] admits s1 [2, 3], s3 [3, 4].
FAMILY_ENGINES = """
pool reqs[2] { cap 4; admit via E; }
pool kv[NK] { cap 4; block 4; }
stage E[2] : step { budget 4; cost 1; memory kv; }
workload { arrive batch(4); }
session {
  set j = serial % 2;
  hold reqs[j] (1), kv[KI] (4) {
    run E[j] prefill (4) growing kv[KI];
  }
  observe t = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("nk, ki, t", [
    ("2", "j", [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 2.0, 2.0), (3, 2.0, 2.0)]),
    ("1", "0", [(0, 1.0, 1.0), (2, 2.0, 2.0), (1, 3.0, 3.0), (3, 4.0, 4.0)]),
])
def test_engine_families_and_their_memory_member_for_member(monkeypatch, nk, ki, t):
    r, obs = run(FAMILY_ENGINES.replace("NK", nk).replace("KI", ki), monkeypatch)
    assert obs == {"t": t}
    js = report_json(r)
    for i in (0, 1):
        e = next(s for s in js["stages"] if s["name"] == "E" and s["index"] == i)
        assert (e["iterations"], e["requests"], e["tokens"]) == (2, 2, 4.0)


# The Evict moment's `waiting` (docs/language.md: 1 when the entry's session is alive and waiting in some
# pool's queue). s2 holds q (cap 1) over [0, 5]. s0 caches 4 on m (cap 8) at 1 and then waits for q; s1
# caches 4 at 1.5 and runs on (not waiting). At 2 s2, inside its hold of q, holds 4 on m: one entry must
# go. lru: s0's (released first); by (waiting): s1's (0) before s0's (1); by (-waiting): s0's. s0 gets q at
# 5 and reads its own at 6; s1 at 6.5.
WAITING = """
pool m { cap 8; EVICT }
pool q { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold m (4) {
      run d (1 + serial / 2);
    } cache (4);
    branch (serial == 0) {
      hold q (1) {
        run d (1);
      }
    } else {
      run d (5);
    }
    observe k = cachedin(m);
  } else {
    hold q (1) {
      run d (2);
      hold m (4) {
        run d (1);
      } cache (4);
      run d (2);
    }
  }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("order, k0, k1", [
    ("evict lru;", 0.0, 4.0),
    ("evict by (waiting);", 4.0, 0.0),
    ("evict by (-waiting);", 0.0, 4.0),
])
def test_an_eviction_key_reads_whether_the_session_waits(monkeypatch, order, k0, k1):
    _r, obs = run(WAITING.replace("EVICT", order), monkeypatch)
    assert obs == {"k": [(0, 6.0, k0), (1, 6.5, k1)]}
