"""Pool semantics audited against the spec (language.txt §3 Pools, pool-reference.txt `reserve held` and
`spill`): what a hold consumes of a cached prefix larger than its allocation, what `free(p)` counts under
`reserve held`, what a spill limited by its tier's room puts on its link, and when the spilled prefix can
be used. Each program is small and its outcome worked out by hand (the docstring quotes the spec and
does the arithmetic); `conform.run` runs it on the tier serQ picks and on the general engine
(SERQ_SIM_TIER=general), requires the two reports to be byte-identical, and the assertions hold for both.
Where the spec is silent the rule chosen is docs/language.md's ("Rules chosen where the spec is silent")."""

from __future__ import annotations

from conform import close, pool, run


def stage(report, name):
    return next(s for s in report.result.stages if s.name == name)


# --- a hold consumes at most its allocation of its cached prefix ---------------------------------------------

CONSUME = """
pool kv { cap 40; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (30) { run d (1); } cache (30);
  hold kv (10) REUSE { observe c = cached; observe k = cachedin(kv); run d (1); } cache (10);
  observe k = cachedin(kv);
}
run { horizon 4; }
"""


def test_a_hold_consumes_at_most_its_allocation_of_its_cached_prefix(monkeypatch):
    """language.txt §3 Pools: "With it, on admission the session consumes at most ρ units of its own cached
    prefix (cached := what it consumed); the rest of that entry stays in the cache as a dead entry with the
    same age, unusable, until evicted." and "u units are allocated and the body runs"; "The invariant
    allocated + cached ≤ cap holds". The spec does not say what a hold consumes of a prefix larger than its
    allocation; docs/language.md: the consumed prefix is part of the allocation, so the allocation bounds
    it as ρ does, and the rest stays cached as a dead remainder.

    The session caches 30 at 1 and is admitted at once with 10 units: it consumes 10 (cached = 10), the
    other 20 stay cached, dead (cachedin 0: the session's own entry is gone); at 2 it caches 10 again.
    Over [0, 4]: used 30 on [0, 1), 10 on [1, 2): 10; cached 20 on [1, 2), 20 + 10 on [2, 4]: 20. (Before,
    cached read 30 and the 20 units past the allocation left the pool's books: cached 0 on [1, 2), 10 after.)
    """
    r, o = run(CONSUME.replace("REUSE", ""), monkeypatch)
    assert o["c"] == [(0, 1.0, 10.0)]
    assert o["k"] == [(0, 1.0, 0.0), (0, 2.0, 10.0)]
    kv = pool(r, "kv")
    assert (kv.used, kv.cached, kv.evicted_entries) == (10.0, 20.0, 0)


def test_a_reuse_bound_above_the_allocation_consumes_the_allocation(monkeypatch):
    """language.txt §3 Pools: "the session consumes at most ρ units of its own cached prefix"; with ρ = 20
    and an allocation of 10 the allocation is the tighter bound (docs/language.md): cached = 10, 20 dead."""
    r, o = run(CONSUME.replace("REUSE", "reuse (20)"), monkeypatch)
    assert o["c"] == [(0, 1.0, 10.0)]
    assert (pool(r, "kv").used, pool(r, "kv").cached) == (10.0, 20.0)


def test_an_engines_admission_consumes_at_most_the_allocation(monkeypatch):
    """The same rule on the admission a step stage makes (pools/prepared.py's path, compared with the
    general one by `run`). block 2, cap 40: the session prefills 30 on [0, 1] (budget 30, cost 1) and caches
    30; it is admitted again at 1 with units 10 (admit via E: the iteration at 1 admits it, with the 20
    tokens of budget left it prefills 10 on [1, 2]). It consumes 10 of its 30 (cached 10), 20 stay dead;
    at 2 it caches 10 (its position): kv cached 20 on [1, 2), 30 on [2, 4]: (20 + 60) / 4 = 20."""
    r, o = run("""
pool reqs { cap 4; admit via E; }
pool kv { cap 40; block 2; }
stage E : step { budget 30; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (30) { run E prefill (30) growing kv; } cache (30);
  hold reqs (1), kv (10) { observe c = cached; run E prefill (10) growing kv; } cache (10);
  observe k = cachedin(kv);
}
run { horizon 4; }
""", monkeypatch)
    assert o["c"] == [(0, 1.0, 10.0)]
    assert o["k"] == [(0, 2.0, 10.0)]
    assert pool(r, "kv").cached == 20.0


# --- free(p) is the room an admission has: reservations under `reserve held` count -------------------------

FREE = """
pool p { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (2) reserve (6) { observe f = free(p); run d (1); grow p (3); observe g = free(p); run d (1); }
    observe h = free(p);
  } else {
    run d (0.5); observe f = free(p);
    hold p (free(p)) { observe a = now; observe u = used(p); run d (1); }
  }
}
run { horizon 4; }
"""


def test_free_counts_the_unallocated_reservations_of_reserve_held(monkeypatch):
    """pool-reference.txt `reserve held`: "each live hold's unallocated reservation also counts against
    later admissions and growth by other holds: u_i = max(0, r_i - a_i) … A new reservation r requires
    used + Σ_i u_i + r ≤ cap." language.txt §2 lists free(p) among the observables without defining it;
    docs/language.md: free(p) is the room a new admission has, cap - used - Σ u_i (the admission's own
    test, pools.admission.fits; cached units are not subtracted: they never block).

    s0 holds 2 with a reservation of 6 at 0: free 10 - 2 - 4 = 4. At 0.5 s1 reads 4 and holds that much:
    2 + 4 + 4 ≤ 10, admitted at 0.5 (used 6). At 1 s0 grows by 3 within its reservation: used 9, its
    unallocated reservation 1, free 0. s1 leaves at 1.5, s0 at 2: free 10. (Before, free read cap - used:
    8, and s1's hold of 8 waited until s0 left at 2.)"""
    _r, o = run(FREE, monkeypatch)
    assert o["f"] == [(0, 0.0, 4.0), (1, 0.5, 4.0)]
    assert (o["a"], o["u"]) == ([(1, 0.5, 0.5)], [(1, 0.5, 6.0)])
    assert (o["g"], o["h"]) == ([(0, 1.0, 0.0)], [(0, 2.0, 10.0)])


def test_an_engines_admission_reads_free_as_the_room_it_has(monkeypatch):
    """The same observable in a header an engine's admission reads (pools/prepared.py computes it once,
    compared with the general path by `run`). The iteration at 0 admits s0 (1 slot, a reservation of 3:
    2 unallocated) and s1, whose header reads free(reqs) = 4 - 1 - 2 = 1: used(kv) 1 + 1 = 2; s2 does not
    fit (2 + 2 + 1 > 4). s0 leaves when its prefill ends at 1; the iteration at 1 admits s2, which reads
    4 - 1 = 3 (s1 decodes on [0, 3] on its slot): used(kv) 1 + 3 = 4. (Before, s1 read 3 and s2 3: 4, 6.)"""
    _r, o = run("""
pool reqs { cap 4; reserve held; admit via E; }
pool kv { cap 100; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold reqs (1) reserve (3), kv (1) { run E prefill (1) growing kv; }
  } else {
    hold reqs (1), kv (free(reqs)) { observe k = used(kv); run E decode (3); }
  }
}
run { horizon 4; }
""", monkeypatch)
    assert o["k"] == [(1, 0.0, 2.0), (2, 1.0, 4.0)]


# --- a spill writes what fits in its tier, and its work is what it writes ----------------------------------

SPILL_PART = """
pool kv { cap 4; spill tier via link (size) when (size == 4); }
pool tier { TIER }
stage d : delay;
stage link : fifo;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); run d (9); observe t = cachedin(tier); }
  else { run d (2); hold kv (4) { run d (1); } }
}
run { horizon 20; }
"""


def test_a_spill_limited_by_its_tiers_room_puts_what_it_writes_on_the_link(monkeypatch):
    """pool-reference.txt `spill`: "`TIER` Where the evicted prefix is written. `LINK` The stage the write
    takes time on. `work` … Work the write puts on `LINK`. `pred` … The prefix is spilled when this is
    non-zero. May read `size`." The write is what reaches the tier, so its work reads `size` = the units
    written; the predicate decides on the units evicted (docs/language.md).

    At 1 s0 caches 4 in kv; at 2 s1's hold evicts them (the predicate reads size 4: spilled). The tier
    (cap 3) has room for 3: 3 are written, work 3 on the fifo link, [2, 5]. At 10 s0 has 3 in the tier.
    Link: one completion, service 3, utilisation 3 / 20; the tier caches 3 on [2, 20]: 2.7. (Before, the
    work read the 4 evicted units: service 4.)"""
    r, o = run(SPILL_PART.replace("TIER", "cap 3;"), monkeypatch)
    assert o["t"] == [(0, 10.0, 3.0)]
    link = stage(r, "link")
    assert (link.completions, link.service, link.utilisation) == (1, 3.0, 0.15)
    assert (pool(r, "kv").spills, pool(r, "tier").cached) == (1, 2.7)


def test_a_spill_into_a_tier_with_blocks_puts_the_whole_blocks_it_writes_on_the_link(monkeypatch):
    """The same into a tier of cap 3 in blocks of 2 ("Allocations round up, and cache entries are kept and
    evicted, in blocks of this many units", pool-reference.txt `block`): one block, 2 units, is written,
    and the write's work is 2: [2, 4]. The tier caches 2 on [2, 20]: 1.8."""
    r, o = run(SPILL_PART.replace("TIER", "cap 3; block 2;"), monkeypatch)
    assert o["t"] == [(0, 10.0, 2.0)]
    link = stage(r, "link")
    assert (link.completions, link.service, link.utilisation) == (1, 2.0, 0.1)
    assert close(pool(r, "tier").cached, 1.8)


# --- a spilled prefix is usable in its tier once its write completes ---------------------------------------


def test_a_spilled_prefix_is_usable_when_its_write_completes(monkeypatch):
    """pool-reference.txt `spill`: "`LINK` The stage the write takes time on", "`work` … Work the write
    puts on `LINK`"; language.txt §2 transfer: "the link takes the time, the tokens count as computed at Q"
    after the link run (run link; load Q; release P). The written prefix arrives when the write ends, so
    it is found (cachedin, a hold's `cached`) from then on; docs/language.md: from the eviction it holds
    its room in the tier (cached, evictable), unusable until then.

    s0 caches 2 in the tier at 0.5 and 4 in kv at 1; at 2 s1's hold evicts the 4, written over the link on
    [2, 6]. At 3 s0 reads 2 in the tier (its earlier entry; the 4 are under way) and a hold of the tier
    with cache consumes those 2 (cached 2) and caches 2 again; at 7 it reads 2 + 4 = 6, and a hold
    consumes 6. The tier's cached: 2 on [0.5, 2), 6 on [2, 7) (the 4 under way hold their room), 0 while
    s0 holds 6 on [7, 8), 6 on [8, 10]: (3 + 30 + 12) / 10 = 4.5. (Before, the 4 were usable at 2: s0
    read 6 at 3 and consumed 6 there.)"""
    r, o = run("""
pool kv { cap 4; spill tier via link (size) when (1); }
pool tier { cap 100; }
stage d : delay;
stage link : fifo;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold tier (2) { run d (0.5); } cache (2);
    hold kv (4) { run d (0.5); } cache (4);
    run d (2); observe a = cachedin(tier);
    hold tier (2) { observe c = cached; } cache (2);
    run d (4); observe a = cachedin(tier);
    hold tier (6) { observe c = cached; run d (1); } cache (6);
  } else {
    run d (2); hold kv (4) { run d (1); }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert o["a"] == [(0, 3.0, 2.0), (0, 7.0, 6.0)]
    assert o["c"] == [(0, 3.0, 2.0), (0, 7.0, 6.0)]
    tier, link = pool(r, "tier"), stage(r, "link")
    assert (tier.cached, tier.used) == (4.5, 0.7)
    assert (link.completions, link.service) == (1, 4.0)


def test_a_spilled_prefix_evicted_before_its_write_completes_is_not_there(monkeypatch):
    """The spec is silent on a write whose units its tier evicts before the write completes;
    docs/language.md: they are evicted as any cached entry (cached prefixes "are evicted to make room",
    pool-reference.txt `cap`), nothing lands for them, and they are not spilled on (they never reached the
    tier); the write still takes its time on the link.

    At 2 s1 evicts s0's 4 from kv into the tier (write [2, 6]); at 3 s2's hold of 4 on the tier (cap 4)
    evicts them: one entry evicted, 4 units, no spill to t2. At 10 s0 has nothing in the tier nor in t2;
    the link ran the write ([2, 6]) and l2 nothing. (Before, the 4 were s0's prefix in the tier at 2, and
    at 3 they went on to t2.)"""
    r, o = run("""
pool kv { cap 4; spill tier via link (size) when (1); }
pool tier { cap 4; spill t2 via l2 (size) when (1); }
pool t2 { cap 100; }
stage d : delay;
stage link : fifo;
stage l2 : fifo;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4);
    run d (9); observe t = cachedin(tier); observe u = cachedin(t2);
  }
  branch (serial == 1) { run d (2); hold kv (4) { run d (1); } }
  branch (serial == 2) { run d (3); hold tier (4) { run d (1); } }
}
run { horizon 20; }
""", monkeypatch)
    assert (o["t"], o["u"]) == ([(0, 10.0, 0.0)], [(0, 10.0, 0.0)])
    tier = pool(r, "tier")
    assert (tier.evicted_entries, tier.evicted_units, tier.spills, pool(r, "kv").spills) == (1, 4.0, 0, 1)
    assert (stage(r, "link").completions, stage(r, "l2").completions) == (1, 0)
