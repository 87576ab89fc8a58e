"""A second conformance audit of language.txt §3 (and the in-scope additions of pool-reference.txt and
program-reference.txt) against the simulator, on the areas test_conformance_audit.py left out: offload tiers
and `spill`, eviction orders, the cache across turns and its rounding to blocks, reservations, `grow`,
leases, engines serving several queues, `requeue`, `stuck`, `queue by` with `waited`, finite runs, warm-up
and horizon cut-offs, closed workloads, processor sharing, `fifo(c)`, families with `choose`, observables
and gauges at an instant, the report's aggregates, and run-time errors. Each program is small and its outcome
worked out by hand from the spec (the comment above each assertion). `run` runs it on the tier serQ picks
and on the general engine (SERQ_SIM_TIER=general) and requires the two reports to be byte-identical. The
defects the audit found were strict xfails and are fixed (pools/: a spill into a tier with blocks, the member
a spill names, a spill that comes back to a pool making room, `stuck` at the warm-up); their cases say what
was observed before. A case the implementation gets wrong is marked xfail (strict) with the defect in its
reason, checking the hand-computed outcome on each tier separately (test_conformance_audit.py's `each_tier`),
so that it flips when the defect is fixed."""

from __future__ import annotations

import pytest
import serq_sim
from conform import _run, close, pool, run
from serq.cli import main


def times(samples):
    return [t for _, t, _ in samples]


def values(samples):
    return [v for _, _, v in samples]


def stage(report, name, index=None):
    return next(s for s in report.result.stages if s.name == name and s.index == index)


def pool_at(report, name, index):
    return next(p for p in report.result.pools if p.name == name and p.index == index)


# --- offload tiers: spill ------------------------------------------------------------------------------------


def test_a_spill_writes_each_evicted_block_and_the_tier_entry_is_read_back(monkeypatch):
    # §2 spill TIER via LINK (work) when (pred); §3 Pools: eviction "per block from the tail of the entry when
    # the pool has block b"; docs/language.md: `size` is a spill's block. cap 8, block 2: s0 caches 6 at 1.
    # At 2 s1 holds 6 (6 + 6 > 8): two blocks of s0's entry go, each spilled as it is evicted (two spills,
    # two writes of work size = 2 on the fifo link: [2, 4] and [4, 6], the second waiting 2); the tier
    # keeps them as s0's prefix (4), kv keeps its head (2). At 6.5 s0 reads 2 and 4; its hold of 6 on the
    # tier with `cache` consumes its 4 there (cached 4, cachedin 0 inside) and caches 6 at 7.5.
    # Averages over 10: kv used 6 on [0,1) and [2,3): 1.2; kv cached 6 on [1,2), 2 after: 2.2; the tier
    # cached 4 on [2, 6.5), 6 on [7.5, 10]: 3.3, used 6 on [6.5, 7.5): 0.6; the link busy [2, 6]: 0.4.
    r, o = run("""
pool kv { cap 8; block 2; spill tier via link (size) when (1); }
pool tier { cap 100; block 2; }
stage d : delay;
stage link : fifo;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (5.5); observe k = cachedin(kv); observe t = cachedin(tier);
    hold tier (6) { observe c = cached; observe t = cachedin(tier); run d (1); } cache (6);
    observe t = cachedin(tier);
  } else {
    run d (2);
    hold kv (6) { observe a = now; run d (1); }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert o["a"] == [(1, 2.0, 2.0)]
    assert (o["k"], o["c"]) == ([(0, 6.5, 2.0)], [(0, 6.5, 4.0)])
    assert o["t"] == [(0, 6.5, 4.0), (0, 6.5, 0.0), (0, 7.5, 6.0)]
    kv, tier, link = pool(r, "kv"), pool(r, "tier"), stage(r, "link")
    assert (kv.spills, kv.evicted_entries, kv.evicted_units) == (2, 0, 4.0)
    assert (kv.used, kv.cached, tier.used, tier.cached) == (1.2, 2.2, 0.6, 3.3)
    assert (link.completions, link.service, link.wait, link.utilisation) == (2, 2.0, 1.0, 0.4)


SPILL_SIZE = """
pool kv { cap 10; ORDER spill tier via link (size / 2 + age) when (size > 3); }
pool tier { cap 100; }
stage d : delay;
stage link : fifo;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); } cache (2); run d (5); }
  branch (serial == 1) { hold kv (6) { run d (1.5); } cache (6); run d (4.5); }
  branch (serial == 2) { run d (2); hold kv (8) { observe a = now; run d (1); } }
  branch (serial < 2) { observe k = cachedin(kv); observe t = cachedin(tier); }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("order, k0, evicted", [
    # pool-reference `spill`: work and pred are read at the Evict moment and may read size (a pool without
    # block evicts whole entries: size is the entry). s0 caches 2 at 1, s1 6 at 1.5; s2's 8 at 2 needs 8 + 8
    # <= 10. lru: s0's (released first) then s1's go; s0's (size 2) is not spilled, s1's is, with work
    # 6 / 2 + age 0.5 = 3.5 on the link.
    ("evict lru;", 0.0, (2, 8.0)),
    # evict by (-size): s1's 6 first, which is enough; s0 keeps 2. The same spill.
    ("evict by (-size);", 2.0, (1, 6.0)),
])
def test_spill_predicate_and_work_are_read_at_the_evict_moment(monkeypatch, order, k0, evicted):
    r, o = run(SPILL_SIZE.replace("ORDER", order), monkeypatch)
    assert o["a"] == [(2, 2.0, 2.0)]
    assert o["k"] == [(0, 6.0, k0), (1, 6.0, 0.0)]
    assert o["t"] == [(0, 6.0, 0.0), (1, 6.0, 6.0)]
    kv, link = pool(r, "kv"), stage(r, "link")
    assert (kv.spills, kv.evicted_entries, kv.evicted_units) == (1, *evicted)
    assert (link.completions, link.service) == (1, 3.5)


def test_a_spills_work_reads_a_live_sessions_attributes_and_an_ended_ones_at_its_release(monkeypatch):
    # pool-reference `evict`: keys (and so the spill's clauses, the same moment) read "the entry's session's
    # attributes: current while the session lives, as they were at its last release after it has ended".
    # s0 caches 2 at 1 (x = 1), then sets x = 3 and lives on; s1 caches 2 at 1.1 (x = 1), sets x = 4 and
    # ends. At 2 s2's 4 evicts both (lru: s0's first): s0's write has work 3, s1's work 1, queued behind
    # it on the fifo link: [2, 5], [5, 6].
    r, _ = run("""
pool kv { cap 4; spill tier via link (x) when (1); }
pool tier { cap 100; }
stage d : delay;
stage link : fifo;
workload { arrive batch(3); }
session {
  set x = 1;
  branch (serial < 2) {
    run d (serial * 0.1);
    hold kv (2) { run d (1); } cache (2);
    set x = 3 + serial;
    branch (serial == 0) { run d (10); }
  } else { run d (2); hold kv (4) { run d (1); } }
}
run { horizon 20; }
""", monkeypatch)
    link = stage(r, "link")
    assert (link.completions, link.service, link.wait, link.present) == (2, 2.0, 1.5, 0.35)


def test_a_spill_when_the_entrys_session_is_waiting(monkeypatch):
    # docs/language.md: `waiting` in a spill clause is 1 when the entry's session is alive and waiting in a
    # pool's queue. s0 and s1 cache 4 each at 1; s0 then waits for n (held by s2 until 3), s1 runs on d.
    # At 2 s3's 8 evicts both: only s0's is written to the tier (one write of work 1).
    r, o = run("""
pool kv { cap 8; spill tier via link (1) when (waiting); }
pool tier { cap 100; }
pool n { cap 1; }
stage d : delay;
stage link : fifo;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); hold n (1) { run d (1); } }
  branch (serial == 1) { hold kv (4) { run d (1); } cache (4); run d (3); }
  branch (serial == 2) { hold n (1) { run d (3); } }
  branch (serial == 3) { run d (2); hold kv (8) { run d (1); } }
  branch (serial < 2) { observe t = cachedin(tier); }
}
run { horizon 20; }
""", monkeypatch)
    assert o["t"] == [(0, 4.0, 4.0), (1, 4.0, 0.0)]
    assert (pool(r, "kv").spills, pool(r, "kv").evicted_entries, stage(r, "link").completions) == (1, 2, 1)


def test_a_spilled_prefix_goes_down_a_chain_of_tiers(monkeypatch):
    # §1: offload tiers are pools; a tier may spill in turn. kv, t1: cap 4 each. s0 caches 4 in kv at 0.5; at
    # 1 s1's 4 evicts it into t1 (l1: work 4 / 8, [1, 1.5], when it lands); s1 caches 4 at 1.5; at 2 s2's 4
    # evicts it into t1 (l1: [2, 2.5]), which evicts s0's entry there to make room: into t2 (l2: work 4 / 2,
    # [2, 4]). At 10: s0's prefix is in t2, s1's in t1, s2's in kv. Cached over 20 (a write's units from
    # the eviction: they hold their room, test_spill_semantics.py): kv 4 on [0.5, 1), [1.5, 2), [2.5, 20]:
    # 3.7; t1 4 on [1, 20]: 3.8; t2 4 on [2, 20]: 3.6. (l1's write took 4 when the written prefix was usable
    # at once: s0's, still under way at 2, is now not spilled on; test_spill_semantics.py has that case.)
    r, o = run("""
pool kv { cap 4; spill t1 via l1 (size / 8) when (1); }
pool t1 { cap 4; spill t2 via l2 (size / 2) when (1); }
pool t2 { cap 100; }
stage d : delay;
stage l1 : fifo;
stage l2 : fifo;
workload { arrive batch(3); }
session {
  run d (serial);
  hold kv (4) { run d (0.5); } cache (4);
  run d (10 - serial - 0.5);
  observe k = cachedin(kv); observe a = cachedin(t1); observe b = cachedin(t2);
}
run { horizon 20; }
""", monkeypatch)
    assert values(o["k"]) == [0.0, 0.0, 4.0]
    assert values(o["a"]) == [0.0, 4.0, 0.0]
    assert values(o["b"]) == [4.0, 0.0, 0.0]
    kv, t1, t2 = pool(r, "kv"), pool(r, "t1"), pool(r, "t2")
    assert (kv.spills, t1.spills, t1.evicted_entries) == (2, 1, 1)
    assert (kv.cached, t1.cached, t2.cached) == (3.7, 3.8, 3.6)
    l1, l2 = stage(r, "l1"), stage(r, "l2")
    assert (l1.completions, l1.wait, l1.present, l2.completions, l2.service) == (2, 0.0, 0.05, 1, 2.0)


SPILL_ROOM = """
pool kv { cap 8; spill tier via link (1) when (1); }
pool tier { TIER }
stage d : delay;
stage link : fifo;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); run d (5); observe t = cachedin(tier); }
  branch (serial == 1) { hold tier (3) { run d (10); } }
  branch (serial == 2) { hold tier (2) { run d (0.5); } cache (2); run d (5.5); observe t = cachedin(tier); }
  branch (serial == 3) { run d (2); hold kv (8) { run d (1); } }
}
run { horizon 20; }
"""


def test_a_spill_into_a_full_tier_evicts_the_tiers_entries_and_writes_what_fits(monkeypatch):
    # docs/simulator.md: "A spill writes at most what the tier has room for after evicting its own entries".
    # The tier (cap 6) has 3 allocated to s1 all along and s2's own entry of 2 from 0.5. At 2 s3's 8 evicts
    # s0's 4 from kv: the tier has room for 6 - 3 = 3 of them once s2's entry is evicted (3 + 2 + 3 > 6).
    r, o = run(SPILL_ROOM.replace("TIER", "cap 6;"), monkeypatch)
    assert o["t"] == [(0, 6.0, 3.0), (2, 6.0, 0.0)]
    tier = pool(r, "tier")
    assert (tier.evicted_entries, tier.evicted_units, pool(r, "kv").spills) == (1, 2.0, 1)


def test_a_spill_into_a_tier_with_blocks_writes_whole_blocks(monkeypatch):
    # The same with the tier in blocks of 2 and a cap of 7: s1's 3 take 4, so the room is again 3, of which
    # one block (2) is written (s2's entry of one block is evicted for it: 4 + 2 + 2 > 7). The tier's cached
    # units: 2 on [0.5, 2) (s2's), then 2 (s0's) on [2, 20]: (3 + 36) / 20. (The 3 units of room were
    # written, an entry of a block and a half: pools/cache.py:spill did not round to the tier's blocks.)
    r, o = run(SPILL_ROOM.replace("TIER", "cap 7; block 2;"), monkeypatch)
    assert o["t"] == [(0, 6.0, 2.0), (2, 6.0, 0.0)]
    assert close(pool(r, "tier").cached, 39 / 20)


SPILL_MEMBER = """
pool kv { cap 4; spill tier[TIER] via link[LINK] (1) when (1); }
pool tier[2] { cap 100; }
stage d : delay;
stage link[2] : fifo;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (4) { run d (0.5); } cache (4);
  run d (5);
  observe t0 = cachedin(tier[0]); observe t1 = cachedin(tier[1]);
}
run { horizon 20; }
"""


@pytest.mark.parametrize("tier, link", [("1", "1"), ("1 - serial", "(serial + 1) % 2")])
def test_a_spill_writes_to_the_member_it_names(monkeypatch, tier, link):
    # §2 a pool reference names a member (`kv[j]`), its index read where the expression stands (a spill's
    # clause: the Evict moment, the entry's session's attributes). s0 caches 4 at 0.5; s1's 4 at 1 evicts
    # it into tier[1] over link[1] (1 - serial and (serial + 1) % 2 are 1 for s0's entry): at 5.5 s0 reads
    # 0 in tier[0] and 4 in tier[1]. (The index was ignored, build.py:spill_pool and spill_stage: the
    # prefix went to tier[0] over link[0].)
    r, o = run(SPILL_MEMBER.replace("TIER", tier).replace("LINK", link), monkeypatch)
    assert (o["t0"], o["t1"]) == ([(0, 5.5, 0.0), (1, 6.5, 0.0)], [(0, 5.5, 4.0), (1, 6.5, 0.0)])
    assert (stage(r, "link", 0).completions, stage(r, "link", 1).completions) == (0, 1)
    assert (pool_at(r, "tier", 0).cached, pool_at(r, "tier", 1).cached) == (0.0, 3.8)


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_spills_computed_member_index_that_names_no_member_is_an_error_at_it(monkeypatch, tier):
    # docs/language.md: a computed member index that is not a whole number is a run-time error at the
    # reference, naming the time and the session of the entry it was read for (errors.of_entry), and the
    # pool, as the spill's work does.
    src = SPILL_MEMBER.replace("TIER", "serial + 0.5").replace("LINK", "0")
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    assert str(e.value).splitlines()[0] == ("<source>:2:29: error: at t=1, session 0: pool kv: the spill's pool tier: index 0.5 is "
                                            "not a whole number (the family has 2)")


def test_a_spill_that_comes_back_to_a_pool_making_room_writes_nothing(monkeypatch):
    # The spec is silent on a spill that goes round; docs/simulator.md: a spill writes at most what the
    # tier has room for, and a pool that is making room has none for a spill that comes back to it (such a
    # run hung: the write gave the eviction loop the entry to evict again, at one instant, for ever).
    # A pool spilling into itself could never write (it evicts only while it makes room): it does not link
    # (serq_ir.rules.spills_to_itself; packages/serq-frontend/tests/test_known_defects_round6.py).
    with pytest.raises(Exception, match="pool `kv` spills to itself"):
        run("""
pool kv { cap 4; spill kv via link (1) when (1); }
stage d : delay;
stage link : fifo;
workload { arrive batch(2); }
session { run d (serial); hold kv (4) { run d (0.5); } cache (4); }
run { horizon 20; }
""", monkeypatch)
    # Two tiers spilling into each other: s0's 4 goes to the tier at 1 (s1's hold; a write on [1, 1.5], when
    # it lands there); s1 caches 4 at 1.5; at 2 s2's hold of the tier evicts s0's entry there into kv, which
    # evicts s1's to make room: that one would go back to the tier, which is making room: it is lost. s0's
    # 4 is in kv (a write on [2, 3]). kv cached 4 on [0.5, 1), [1.5, 2), [2, 20]; the tier 4 on [1, 2).
    r, _ = run("""
pool kv { cap 4; spill tier via link (0.5) when (1); }
pool tier { cap 4; spill kv via link (1) when (1); }
stage d : delay;
stage link : fifo;
workload { arrive batch(3); }
session {
  run d (serial);
  branch (serial < 2) { hold kv (4) { run d (0.5); } cache (4); } else { hold tier (4) { run d (1); } }
}
run { horizon 20; }
""", monkeypatch)
    kv, tier = pool(r, "kv"), pool(r, "tier")
    assert (kv.spills, kv.evicted_entries, tier.spills, tier.evicted_entries) == (1, 2, 1, 1)
    assert (kv.cached, tier.cached, stage(r, "link").completions) == (3.8, 0.2, 2)


def test_drop_and_a_replaced_prefix_spill_nothing(monkeypatch):
    # docs/language.md: `drop` forgets the own prefix, and a session's newer release replaces its older entry
    # "without an eviction (no count, no spill)". s0 caches 4 and drops it; s1's inner hold caches 3 at 1,
    # replaced by its outer hold's 1 at 2. Nothing is spilled or evicted; kv cached 3 on [1, 2), 1 on
    # [2, 20]: 21 / 20.
    r, o = run("""
pool kv { cap 100; block 1; spill tier via link (size) when (1); }
pool tier { cap 100; }
stage d : delay;
stage link : fifo;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); observe k = cachedin(kv); drop kv; observe k = cachedin(kv); }
  else { hold kv (1) { hold kv (3) { run d (1); } cache (3); observe k = cachedin(kv); run d (1); } cache (1); observe k = cachedin(kv); }
  observe t = cachedin(tier);
}
run { horizon 20; }
""", monkeypatch)
    assert o["k"] == [(0, 1.0, 4.0), (0, 1.0, 0.0), (1, 1.0, 3.0), (1, 2.0, 1.0)]
    assert values(o["t"]) == [0.0, 0.0]
    kv = pool(r, "kv")
    assert (kv.spills, kv.evicted_entries, kv.evicted_units, kv.cached) == (0, 0, 0.0, 1.05)
    assert stage(r, "link").completions == 0


def test_an_engines_growth_spills_the_block_it_evicts(monkeypatch):
    # §3 step: "a growing job first grows its hold to the position it will reach (block by block …)", and a
    # growth allocates, so it evicts (and spills). cap 8, block 2. s0 prefills 4 on [0, 1] and caches 4.
    # s1 (from 1.5) prefills 2 on [1.5, 2.5] and decodes 4: positions 3 (grows to 4: 4 + 4 cached fit),
    # 4, 5 (grows to 6: one block of s0's entry is evicted and spilled, a write of 2 on [4.5, 6.5]), 6:
    # done at 6.5, caching 6. At 7 s0 has 2 in kv and 2 in the tier.
    r, o = run("""
pool kv { cap 8; block 2; spill tier via link (size) when (1); }
pool tier { cap 100; }
stage E : step { budget 10; cost 1; memory kv; }
stage link : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run E prefill (4) growing kv; } cache (4);
    run d (6); observe k = cachedin(kv); observe t = cachedin(tier);
  } else {
    run d (1.5);
    hold kv (2) { run E prefill (2) growing kv; run E decode (4) growing kv; } cache (6);
    observe done = now;
  }
}
run { horizon 20; }
""", monkeypatch)
    assert (o["k"], o["t"], o["done"]) == ([(0, 7.0, 2.0)], [(0, 7.0, 2.0)], [(1, 6.5, 6.5)])
    kv, link = pool(r, "kv"), stage(r, "link")
    assert (kv.spills, kv.evicted_units, link.completions, link.service) == (1, 2.0, 1, 2.0)
    # kv cached: 4 on [1, 4.5), 2 on [4.5, 6.5), 8 on [6.5, 20]; the tier 2 on [4.5, 20]
    assert (kv.cached, pool(r, "tier").cached) == (6.3, 1.55)


# --- the cache: hits across turns, rounding, eviction orders ------------------------------------------------


def test_prefix_hits_across_turns_and_the_evictions_between_them(monkeypatch):
    # §3 Pools: a hold with cache consumes its own prefix on admission (cached), the rest of the pool's
    # entries are evicted "until allocations and cache fit", per block from the tail. cap 16, block 4;
    # two sessions of three turns, prompt 4, 8, 12 (each caches its prompt).
    #   turn 1 at 0: no hits; at 1 both cache 4 (8 cached).
    #   turn 2 at 2: each consumes its 4 (hit 4) and allocates 8: 16 used; at 3 both cache 8.
    #   turn 3 at 4: s0 consumes 8 (hit 8), allocates 12: 12 + s1's 8 > 16: one block of s1's goes (4 left);
    #     s1 needs 12 (12 + 12 > 16): it waits. At 5 s0 caches 12; s1 is admitted: consumes its 4 (hit 4),
    #     allocates 12: 12 + 12 > 16, two blocks of s0's go.
    # used: 8 on [0,1), 16 on [2,3), 12 on [4,6): 48 / 20; cached 8, 16, 4, 4 on [1,2), [3,4), [4,5),
    # [5,6), then 16: 256 / 20. queue 1 on [4, 5); wait 1 / 6.
    r, o = run("""
pool kv { cap 16; block 4; }
stage d : delay;
workload { arrive batch(2); init { set K = 0; } turn { set n = 4; } }
session {
  loop {
    turn;
    set prompt = K + n;
    hold kv (prompt) { observe hit = cached; run d (1); } cache (prompt);
    set K = prompt;
    branch (turn_no >= 3) { end; }
    run d (1);
  }
}
run { horizon 20; }
""", monkeypatch)
    assert o["hit"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 2.0, 4.0), (1, 2.0, 4.0), (0, 4.0, 8.0), (1, 5.0, 4.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.evicted_entries, kv.evicted_units) == (6, 0, 12.0)
    assert (kv.used, kv.cached, kv.queue, kv.wait) == (2.4, 12.8, 0.05, 1 / 6)
    assert r.result.turns == 6


def test_prefix_hits_across_turns_on_an_engine(monkeypatch):
    # §3 admit via and step: the hit is consumed when the engine admits. reqs cap 2 (admit via E), kv cap 16
    # block 4, budget 8. Turn 1 at 0: both admitted (4 + 4 tokens), decode 2 ([1,2] grows each to 8,
    # [2,3]); done at 3, each caching min(6, position 6) rounded down: 4. Turn 2 at 4 (prompt 10): s0
    # consumes 4 (hit 4), allocates 12 (12 + 4 cached fit), prefills 6 ([4,5]), decodes 2: done at 7; s1
    # does not fit (12 + 12 > 16) until s0 releases at 7 (caching 12): it consumes its 4, allocates 12,
    # evicting two blocks of s0's entry, and is done at 10. reqs' mean wait (0, 0, 0, 3) / 4.
    r, o = run("""
pool reqs { cap 2; admit via E; }
pool kv { cap 16; block 4; }
stage E : step { budget 8; cost 1; memory kv; }
stage think : delay;
workload { arrive batch(2); init { set K = 0; } }
session {
  loop {
    turn;
    set prompt = K + 4;
    hold reqs (1), kv (prompt) {
      set c = cached; observe hit = c;
      run E prefill (prompt - c) growing kv; run E decode (2) growing kv;
    } cache (prompt + 2);
    observe done = now;
    set K = prompt + 2;
    branch (turn_no == 2) { end; }
    run think (1);
  }
}
run { horizon 30; }
""", monkeypatch)
    assert o["hit"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 4.0, 4.0), (1, 7.0, 4.0)]
    assert o["done"] == [(0, 3.0, 3.0), (1, 3.0, 3.0), (0, 7.0, 7.0), (1, 10.0, 10.0)]
    assert (pool(r, "reqs").wait, pool(r, "kv").evicted_units, stage(r, "E").iterations) == (0.75, 8.0, 9)


def test_what_a_release_caches_is_rounded_down_to_blocks(monkeypatch):
    # §3 Pools: "min(ℓ, computed) units stay cached, rounded down to blocks (computed is the allocation, or
    # the position a growing run or a load reached)"; "cache is read when the session releases". block 4:
    # s0 loads 6 of 8: min(inf, 6) -> 4; s1 holds 5 (allocated 8, computed 8): 8; s2 caches min(7, 8) -> 4;
    # s3's cache length is set to 9 inside its body (2 before): min(9, 12) -> 8.
    _, o = run("""
pool kv { cap 100; block 4; }
stage d : delay;
workload { arrive batch(4); }
session {
  set L = inf;
  branch (serial == 0) { hold kv (8) { load kv (6); run d (1); } cache (inf); }
  branch (serial == 1) { hold kv (5) { run d (1); } cache (inf); }
  branch (serial == 2) { hold kv (8) { run d (1); } cache (7); }
  branch (serial == 3) { set L = 2; hold kv (12) { run d (0.5); set L = 9; run d (0.5); } cache (L); }
  observe c = cachedin(kv);
}
run { horizon 20; }
""", monkeypatch)
    assert o["c"] == [(0, 1.0, 4.0), (1, 1.0, 8.0), (2, 1.0, 4.0), (3, 1.0, 8.0)]


def test_a_reuse_bound_is_consumed_in_whole_blocks(monkeypatch):
    # §3 Pools: "the session consumes at most ρ units of its own cached prefix … the rest of that entry stays
    # in the cache as a dead entry"; pool-reference `block`: entries are kept in blocks. block 4: s0 caches
    # 8; its hold with reuse (6) consumes one block (cached 4) and leaves a dead block of 4, which is no
    # longer its own prefix (cachedin 0). cached: 8 at 1 for no time, then the dead 4 on [1, 20]: 76 / 20.
    r, o = run("""
pool kv { cap 100; block 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (8) { run d (1); } cache (8);
  hold kv (8) reuse (6) { observe c = cached; observe k = cachedin(kv); run d (1); } cache (0);
  observe k2 = cachedin(kv);
}
run { horizon 20; }
""", monkeypatch)
    assert (o["c"], o["k"], o["k2"]) == ([(0, 1.0, 4.0)], [(0, 1.0, 0.0)], [(0, 2.0, 0.0)])
    assert pool(r, "kv").cached == 3.8


EVICT_ORDERS = """
pool kv { cap 12; ORDER }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    hold kv (2 + 2 * serial) { run d (1 + serial); } cache (inf);
    branch (serial == 0) { run d (2.5); hold kv (2) { run d (0.5); } cache (inf); run d (1); }
    else { run d (5 - serial); }
    observe c = cachedin(kv);
  } else {
    run d (4.5); hold kv (8) { observe a = now; run d (1); }
  }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("order, kept", [
    # §3 Pools: "evict lru orders by release time and then release order, evict by (k₁, …) by the keys".
    # Entries (whole: no block): s0 2 (released at 1, consumed at 3.5 and released again at 4: its
    # recency is refreshed), s1 4 (at 2), s2 6 (at 3). At 4.5 s3's 8 needs 8 of the 12 cached to go.
    # lru: s1, then s2 (s0, released last, stays).
    ("evict lru;", [2.0, 0.0, 0.0]),
    # by (age), age = now - last: the youngest first: s0 (0.5), then s2 (1.5); s1 stays.
    ("evict by (age);", [0.0, 4.0, 0.0]),
    # by (-age) and by (last) are lru.
    ("evict by (-age);", [2.0, 0.0, 0.0]),
    ("evict by (last);", [2.0, 0.0, 0.0]),
    # by (-size): the largest first: s2 (6), then s1 (4).
    ("evict by (-size);", [2.0, 0.0, 0.0]),
    # by (size): s0 (2), s1 (4), then s2 (6): all three.
    ("evict by (size);", [0.0, 0.0, 0.0]),
])
def test_eviction_orders(monkeypatch, order, kept):
    _, o = run(EVICT_ORDERS.replace("ORDER", order), monkeypatch)
    assert o["a"] == [(3, 4.5, 4.5)]
    assert [(s, t) for s, t, _ in o["c"]] == [(0, 5.0), (1, 6.0), (2, 6.0)]
    assert values(o["c"]) == kept


# --- reservations, grow, load, leases ------------------------------------------------------------------------


@pytest.mark.parametrize("held, g", [
    # pool-reference `reserve held`: "Growth by d requires used + Σ_{i≠grower} u_i + d <= cap". cap 6: s0
    # holds 1 reserving 4 (3 unallocated) until 3; s1 (admitted at 0.5: 1 + 3 + 1 <= 6) grows 2: 2 + 3 + 2
    # > 6, it waits (preempt none) until s0's reservation ends with its scope at 3.
    ("reserve held;", 3.0),
    # Without `reserve held` the reservation is checked at admission only: s1 grows at once.
    ("", 0.5),
])
def test_reserve_held_counts_other_holds_reservations_against_a_growth(monkeypatch, held, g):
    _, o = run(f"""
pool m {{ cap 6; {held} }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{ hold m (1) reserve (4) {{ run d (3); }} }}
  else {{ run d (0.5); hold m (1) {{ observe a = now; grow m (2); observe g = now; observe u = used(m); run d (1); }} }}
}}
run {{ horizon 20; }}
""", monkeypatch)
    assert (o["a"], o["g"], o["u"]) == ([(1, 0.5, 0.5)], [(1, g, g)], [(1, g, 3.0 if g == 3.0 else 4.0)])


def test_a_grow_is_rounded_to_blocks_and_evicts_for_its_allocation(monkeypatch):
    # §3 grow m (d): "enlarges the innermost hold on m by d (rounded to blocks)"; entries are evicted for
    # allocations. cap 8, block 4: s0 caches 4 at 1. s1 at 2 holds 4 (4 + 4 cached fit), grows 1: a block
    # (8 used), which evicts s0's entry. At 3 s0 reads 0.
    r, o = run("""
pool kv { cap 8; block 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); run d (2); observe c = cachedin(kv); }
  else { run d (2); hold kv (4) { observe u = used(kv); grow kv (1); observe u = used(kv); run d (1); } }
}
run { horizon 20; }
""", monkeypatch)
    assert o["u"] == [(1, 2.0, 4.0), (1, 2.0, 8.0)] and o["c"] == [(0, 3.0, 0.0)]
    kv = pool(r, "kv")
    assert (kv.evicted_entries, kv.evicted_units) == (1, 4.0)


def test_a_lease_holds_its_units_until_its_time_then_its_cache_applies(monkeypatch):
    # §3 Pools: lease m (t) keeps the allocation past the scope, "until the session's release m, t seconds,
    # or the session's end, and cache applies then"; docs/language.md: `holders` counts a lease. cap 5,
    # block 1. s0's scope ends at 1 and its lease of 3 lasts until 3: s1 (3 units, from 0.5) waits until 3;
    # at 2 the observer reads holders 1, used 3, queued 1. At 3 the lease caches 3 and s1's admission
    # (3 + 3 > 5) evicts one block of it: s0 reads 2 at 3.5 and at 6.
    # used 3 on [0, 4): 12 / 20; cached 2 on [3, 20]: 34 / 20; queue 1 on [0.5, 3); wait (0 + 2.5) / 2.
    r, o = run("""
pool kv { cap 5; block 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (3) { run d (1); } cache (3) lease kv (2);
    observe h = holders(kv); observe c = cachedin(kv);
    run d (2.5); observe c = cachedin(kv);
    run d (2.5); observe c = cachedin(kv);
  }
  branch (serial == 1) { run d (0.5); hold kv (3) { observe a = now; run d (1); } }
  branch (serial == 2) { run d (2); observe q = queued(kv); observe h = holders(kv); observe u = used(kv); }
}
run { horizon 20; }
""", monkeypatch)
    assert o["h"] == [(0, 1.0, 1.0), (2, 2.0, 1.0)] and (o["q"], o["u"]) == ([(2, 2.0, 1.0)], [(2, 2.0, 3.0)])
    assert o["a"] == [(1, 3.0, 3.0)]
    assert o["c"] == [(0, 1.0, 0.0), (0, 3.5, 2.0), (0, 6.0, 2.0)]
    kv = pool(r, "kv")
    assert (kv.used, kv.cached, kv.queue, kv.holders, kv.wait) == (0.6, 1.7, 0.125, 0.2, 1.25)
    assert (kv.evicted_entries, kv.evicted_units) == (0, 1.0)


# --- engines serving queues, requeue, stuck ------------------------------------------------------------------


def test_an_engine_serving_two_queues_tries_them_in_declaration_order(monkeypatch):
    # §3 admit via: "A stage that serves several queues tries them in the order their pools are declared",
    # while the iteration has budget left. hi is declared first. s0, s1 join lo, s2 joins hi (all at 0).
    # At 0: s2 first (budget_left 2, prefills 1), then s0 (budget_left 1: 1 of its 2 tokens); no budget
    # for s1. At 1: s0's last token, then s1 is admitted with 1 left and prefills its 1: both done at 2.
    r, o = run("""
pool hi { cap 10; admit via E; }
pool lo { cap 10; admit via E; }
stage E : step { budget 2; cost 1; }
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold lo (1) { observe a = now; observe b = budget_left(E); run E prefill (2 - serial); } }
  else { hold hi (1) { observe a = now; observe b = budget_left(E); run E prefill (1); } }
  observe done = now;
}
run { horizon 20; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (2, 0.0, 0.0), (1, 1.0, 1.0)]
    assert o["b"] == [(0, 0.0, 1.0), (2, 0.0, 2.0), (1, 1.0, 1.0)]
    assert o["done"] == [(2, 1.0, 1.0), (0, 2.0, 2.0), (1, 2.0, 2.0)]
    assert (pool(r, "lo").wait, pool(r, "hi").wait, stage(r, "E").iterations) == (0.5, 0.0, 2)


REQUEUE_FIFO = """
pool m { cap 2; preempt by (-admission) REQUEUE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (1); run d (3); } }
  branch (serial == 1) { hold m (1) { observe a1 = now; run d (2); } }
  branch (serial == 2) { run d (0.5); hold m (2) { observe a2 = now; run d (1); } }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("requeue, a1, a2", [
    # pool-reference `preempt`: "requeue tail treats it as a newcomer: FIFO places it last". cap 2: s0, s1
    # hold 1 each; s2 (2 units) waits from 0.5. At 1 s0's grow preempts s1 (the last admitted). At 4 s0
    # ends: s2 (ahead of s1 in the queue) at 4, s1 at its end at 5.
    ("requeue tail", [0.0, 5.0], [4.0]),
    # requeue head (and the default): s1 at 4, s2 (2 + 1 > 2) at s1's end at 6.
    ("requeue head", [0.0, 4.0], [6.0]),
    ("", [0.0, 4.0], [6.0]),
])
def test_requeue_tail_places_the_victim_behind_a_waiting_hold(monkeypatch, requeue, a1, a2):
    r, o = run(REQUEUE_FIFO.replace("REQUEUE", requeue), monkeypatch)
    assert (times(o["a1"]), times(o["a2"])) == (a1, a2)
    assert pool(r, "m").preemptions == 1


ENGINE_REQUEUE = """
pool reqs { cap 3; admit via E; }
pool kv { cap 8; block 2; preempt by (-admission) REQUEUE; }
stage E : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 2 ? 0.5 : 0);
  hold reqs (1), kv (2) {
    observe a = now; observe p = computed;
    run E prefill (2) growing kv; run E decode (serial == 2 ? 1 : 6) growing kv;
  }
  observe done = now;
}
run { horizon 30; }
"""


@pytest.mark.parametrize("requeue, a, p, stuck", [
    # §3 grow/preempt on an engine, pool-reference `preempt … requeue`, §3 Statistics `stuck`. kv cap 8,
    # block 2, budget 4. At 0 s0 and s1 are admitted and prefill 2 each; at 1 both grow to 4 (8 used) and s2
    # (from 0.5) does not fit. At 3 s0's growth to 6 preempts s1 (the last admitted) at position 4, and
    # the iteration admits nothing.
    # requeue head: s1 heads the queue (of reqs, its hold's first pool) and is admitted at 4 (6 + 2 <= 8),
    # prefills 2 again; at 5 s0's growth to 8 preempts it at position 2, not past 4: stuck. s0 ends at 7;
    # s1 and s2 are admitted then.
    ("requeue head", [(0, 0.0), (1, 0.0), (1, 4.0), (1, 7.0), (2, 7.0)], [0.0, 0.0, 4.0, 2.0, 0.0], 1),
    # requeue tail: s2 (ahead now) is admitted at 4 and is the victim at 5 (position 2, its first
    # preemption); no session is preempted twice.
    ("requeue tail", [(0, 0.0), (1, 0.0), (2, 4.0), (1, 7.0), (2, 7.0)], [0.0, 0.0, 0.0, 4.0, 2.0], 0),
])
def test_requeue_on_an_engine_and_a_session_stuck(monkeypatch, requeue, a, p, stuck):
    # Either way: s0 is done at 7; s2 (decode 1) at 9; s1 decodes 6 from 8: 14.
    r, o = run(ENGINE_REQUEUE.replace("REQUEUE", requeue), monkeypatch)
    assert [(s, t) for s, t, _ in o["a"]] == a
    assert values(o["p"]) == p
    assert o["done"] == [(0, 7.0, 7.0), (2, 9.0, 9.0), (1, 14.0, 14.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, pool(r, "reqs").wait) == (2, stuck, 1.9)


STUCK = """
pool kv { cap 4; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (2) { observe a = now; observe p = computed; run E prefill (2) growing kv; run E decode (4) growing kv; }
}
run { horizon 20; }
"""
# §3 step: cap 4 and a hold that must reach position 6: s0 prefills 2 ([0,1]) and decodes positions 3, 4
# ([1,3]); at 3 its growth to 5 preempts itself at position 4, its hold alone beyond the cap (an iteration
# that only preempted, [3,4]); §3 re-executes it: it is admitted again at 4 (kv is admitted at settle time,
# after that iteration's end) and fails the same way at 7, 11, 15, 19: 5 preemptions, the second and later
# at no greater position: stuck (one session), for as long as the run goes on; 6 admissions (0, 4, ..., 20),
# observing computed 0 and then 4 five times; no rejection, and the stuck warning names the livelock.


def test_a_session_that_outgrows_its_pool_is_stuck_for_as_long_as_the_run_goes_on(monkeypatch):
    r, o = run(STUCK, monkeypatch)
    assert times(o["a"]) == [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]
    assert values(o["p"]) == [0.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.admissions, kv.rejections) == (5, 1, 6, 0)
    [w] = [n for n in r.result.notes if n.startswith("warning: 1 session stuck")]
    assert ("on kv 1 session preempted itself again and again at the same position, its hold needing more than "
            "the pool's capacity (5 units for the first, capacity 4)") in w, w


def test_stuck_counts_a_session_over_the_whole_run(monkeypatch):
    # ENGINE_REQUEUE under requeue head with warm-up 6: s1 is stuck at 5 (preempted at position 2, not past
    # the 4 of its preemption at 3), before the warm-up; neither preemption counts (events at or after the
    # warm-up), the admissions at 7 of s1 and s2 do, and the session is stuck all the same: docs/language.md,
    # `stuck` counts sessions over the whole run. (It was reset at the warm-up, pools/model.py:Pool.reset_stats,
    # while the session kept its flag: 0 here.)
    src = ENGINE_REQUEUE.replace("REQUEUE", "requeue head").replace("run { horizon 30; }", "run { horizon 30; warmup 6; }")
    r, _ = run(src, monkeypatch)
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.admissions) == (0, 1, 2)
    assert r.result.notes[-1].startswith("warning: 1 session stuck in the run, preempted again without progress")


# --- queue by: waited, re-evaluation, ties --------------------------------------------------------------------


@pytest.mark.parametrize("key, a", [
    # §3 Waiting selection: keys are re-evaluated "before each admission attempt"; waited is the time since
    # the hold entered the queue. cap 1, s0 holds until 4; s1 joins at 0.5, s2 at 3, s3 at 3.5. At 4 s1
    # has waited 3.5 (lane 0), s2 1 and s3 0.5 (lane 1): s1; at 5 s2 and s3 are both in lane 1 and
    # -serial picks s3; s2 at 6.
    ("waited >= 3 ? 0 : 1, -serial", [(1, 4.0), (3, 5.0), (2, 6.0)]),
    # -serial alone: s3, s2, s1.
    ("-serial", [(3, 4.0), (2, 5.0), (1, 6.0)]),
])
def test_queue_by_waited_ages_a_hold_past_the_others(monkeypatch, key, a):
    _, o = run(f"""
pool m {{ cap 1; queue by ({key}); }}
stage d : delay;
workload {{ arrive batch(4); }}
session {{
  branch (serial == 0) {{ hold m (1) {{ run d (4); }} }}
  else {{
    run d (serial == 1 ? 0.5 : serial == 2 ? 3 : 3.5);
    hold m (1) {{ observe a = now; run d (1); }}
  }}
}}
run {{ horizon 20; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["a"]] == a


def test_queue_by_keys_are_read_again_after_each_admission(monkeypatch):
    # pool-reference `queue`: keys reevaluated "before each admission attempt". cap 4; s0 holds 4 until 1;
    # s1, s2 (2 units each) and s3 (3) join at 0.1, 0.2, 0.3. Key: serial while free >= 3, else -serial.
    # At 1 (free 4): s1; then free 2: -serial selects s3, which does not fit and blocks s2. At 2 (free 4):
    # s2; then s3 again selected, blocked until 3. (Keys read once at 1 would admit s1 and s2 at 1.)
    _, o = run("""
pool m { cap 4; queue by (free(m) >= 3 ? serial : -serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (4) { run d (1); } }
  else { run d (serial * 0.1); hold m (serial == 3 ? 3 : 2) { observe a = now; run d (1); } }
}
run { horizon 20; }
""", monkeypatch)
    assert o["a"] == [(1, 1.0, 1.0), (2, 2.0, 2.0), (3, 3.0, 3.0)]


@pytest.mark.parametrize("key, order", [
    # §3 Ties: "the keys (queue by) … then the order the sessions joined the queue". s0 holds the one unit
    # until 1; s2 joins at 0.2, s1 at 0.4, s3 and s4 at 0.5 (their runs were scheduled in serial order).
    # Keys 0 for s3, s4 and 1 for s1, s2: s3, s4, then s2, s1 (join order, not serial).
    ("serial >= 3 ? 0 : 1", [3, 4, 2, 1]),
    # the same keys reading waited (evaluated at every attempt, not kept sorted from the join)
    ("serial >= 3 ? waited * 0 : 1 + waited * 0", [3, 4, 2, 1]),
    # all tie: join order
    ("0", [2, 1, 3, 4]),
])
def test_queue_by_ties_go_to_the_join_order(monkeypatch, key, order):
    _, o = run(f"""
pool m {{ cap 1; queue by ({key}); }}
stage d : delay;
workload {{ arrive batch(5); }}
session {{
  branch (serial == 0) {{ hold m (1) {{ run d (1); }} }}
  else {{
    run d (serial == 1 ? 0.4 : serial == 2 ? 0.2 : 0.5);
    hold m (1) {{ observe a = now; run d (1); }}
  }}
}}
run {{ horizon 20; }}
""", monkeypatch)
    assert o["a"] == [(s, float(t), float(t)) for t, s in enumerate(order, 1)]


# --- the run: finite runs, warm-up, horizon, closed workloads -------------------------------------------------

FINITE = """
stage f : fifo;
workload { arrive renewal(2); }
session { set t0 = now; run f (3); observe resp = now - t0; observe done = now; }
run { RUN }
"""


@pytest.mark.parametrize("warmup, live, present, throughput", [
    # program-reference `run`: arrivals N ends the run "when the N-th session has arrived and every session
    # has ended"; rates and time averages over end - warmup; docs/language.md: completions are the runs
    # completed at or after the warm-up (one started before counts whole); docs/simulator.md: a sample at
    # the warm-up instant counts. renewal(2): arrivals at 2, 4, 6; fifo service 3: s0 [2,5], s1 [5,8]
    # (waits 1), s2 [8,11] (waits 2): end 11. Warm-up 3: live s0 [3,5], s1 [4,8], s2 [6,11]: 11 / 8, and
    # the fifo's present the same; 3 completions over 8.
    (3.0, 11 / 8, 11 / 8, 3 / 8),
    # warm-up 5: s0's sample and end at 5 count; live s1 [5,8], s2 [6,11]: 8 / 6.
    (5.0, 8 / 6, 8 / 6, 3 / 6),
])
def test_a_finite_run_ends_when_its_last_session_ends(monkeypatch, warmup, live, present, throughput):
    r, o = run(FINITE.replace("RUN", f"horizon 100; warmup {warmup}; arrivals 3;"), monkeypatch)
    assert o["resp"] == [(0, 5.0, 3.0), (1, 8.0, 4.0), (2, 11.0, 5.0)]
    res = r.result
    assert (res.end, res.arrivals, res.ended) == (11.0, 3, 3)
    assert close(res.mean_live, live)
    # an observe that is `now` at every site is an instant: counted, not summarised
    assert res.instants == {"done": 3} and "done" not in res.observes and res.observes["resp"].count == 3
    f = stage(r, "f")
    assert (f.completions, f.wait, f.service, f.utilisation) == (3, 1.0, 3.0, 1.0)
    assert close(f.present, present) and close(f.throughput, throughput)


def test_a_horizon_cuts_off_the_sessions_live_at_the_end(monkeypatch):
    # program-reference `run`: without arrivals the run ends at the horizon. The program above to 9 with
    # warm-up 3: arrivals at 2, 4, 6, 8 (all counted); s0 ends at 5, s1 at 8; s2 is in service [8, 11]
    # and s3 waits at 9. Live over [3, 9]: s0 2, s1 4, s2 3, s3 1: 10 / 6; completions 2 (waits 0, 1).
    r, o = run(FINITE.replace("RUN", "horizon 9; warmup 3;"), monkeypatch)
    assert o["resp"] == [(0, 5.0, 3.0), (1, 8.0, 4.0)]
    res = r.result
    assert (res.end, res.arrivals, res.ended) == (9.0, 4, 2) and close(res.mean_live, 10 / 6)
    f = stage(r, "f")
    assert (f.completions, f.wait, f.utilisation) == (2, 0.5, 1.0)
    assert close(f.present, 10 / 6) and close(f.throughput, 2 / 6)


def test_a_finite_runs_pool_and_gauge_averages_are_over_end_minus_warmup(monkeypatch):
    # program-reference `run`, §3 Gauges: time averages over [warmup, end]. renewal(1), 3 arrivals: s0 holds
    # m (cap 1) [1, 2.5], s1 waits [2, 2.5] and holds [2.5, 4], s2 waits [3, 4] and holds [4, 5.5]: end 5.5.
    # Over [2, 5.5]: holders 1; queue 0.5 + 1; admissions at or after 2: s1 and s2 (waits 0.5 and 1); the
    # gauge holders + 10 queued: 11, 1, 11, 1 on [2, 2.5), [2.5, 3), [3, 4), [4, 5.5]: 18.5 / 3.5.
    r, _ = run("""
pool m { cap 1; }
stage d : delay;
workload { arrive renewal(1); }
gauge h = holders(m) + 10 * queued(m);
session { hold m (1) { run d (1.5); } }
run { horizon 100; warmup 2; arrivals 3; }
""", monkeypatch)
    assert r.result.end == 5.5
    m = pool(r, "m")
    assert (m.holders, m.admissions, m.wait) == (1.0, 2, 0.75) and close(m.queue, 1.5 / 3.5)
    g = r.result.gauges["h"]
    assert close(g.mean, 18.5 / 3.5) and (g.min, g.max) == (1.0, 11.0)
    assert close(r.result.mean_live, 5 / 3.5) and close(stage(r, "d").throughput, 3 / 3.5)


def test_a_closed_population_replaces_a_session_when_it_ends(monkeypatch):
    # §2 arrive closed(n): n sessions, a new one whenever one ends; §3 Workload: init runs at arrival.
    # closed(2) on one fifo server of 1: s0 [0,1]; s1 waits 1, [1,2]; s2 arrives at 1 (k = 20), served
    # [2,3]; s3 at 2, [3,4]; s4 at 3, in service at the horizon 4.5; s5 at 4. Warm-up 1: samples from 1
    # (s0's response at 1 counts), ended 4, throughput 4 / 3.5, mean wait (0 + 1 + 1 + 1) / 4, live 2.
    r, o = run("""
stage f : fifo;
workload { arrive closed(2); init { set k = serial * 10; set t0 = now; } }
session { observe kk = k; run f (1); observe resp = now - t0; }
run { horizon 4.5; warmup 1; }
""", monkeypatch)
    assert o["kk"] == [(2, 1.0, 20.0), (3, 2.0, 30.0), (4, 3.0, 40.0), (5, 4.0, 50.0)]
    assert o["resp"] == [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 2.0), (3, 4.0, 2.0)]
    res = r.result
    assert (res.arrivals, res.ended, res.mean_live) == (6, 4, 2.0)
    f = stage(r, "f")
    assert (f.completions, f.wait, f.utilisation) == (4, 0.75, 1.0) and close(f.throughput, 4 / 3.5)


# --- stages -----------------------------------------------------------------------------------------------


def test_a_ps_capacity_reading_present(monkeypatch):
    # §3 Stages: ps(φ): "every job at once, each at φ(present)/present". φ = min(present, 2). Works 1, 1, 3,
    # 3 at 0: 4 present, 0.5 each: s0, s1 done at 2; s2, s3 (2 left) at 1 each; s4 (work 1) joins at 3,
    # when they have 1 left: 3 present at 2/3: all three done at 4.5. present: 4 on [0,2), 2 on [2,3), 3 on
    # [3, 4.5): 14.5 / 10; utilisation ("some job present") 0.45; service (2 + 2 + 4.5 + 4.5 + 1.5) / 5.
    r, o = run("""
stage p : ps(min(present, 2));
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial == 4) { run d (3); }
  run p (serial < 2 ? 1 : serial < 4 ? 3 : 1);
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["done"]] == [(0, 2.0), (1, 2.0), (2, 4.5), (3, 4.5), (4, 4.5)]
    p = stage(r, "p")
    assert (p.completions, p.wait, p.utilisation) == (5, 0.0, 0.45)
    assert close(p.present, 1.45) and close(p.service, 2.9)


def test_a_ps_capacity_of_zero_serves_nothing(monkeypatch):
    # docs/language.md: a ps capacity of 0 serves nothing. φ = 2 from two jobs, else 0. s0 (work 1) is alone
    # on [0, 1): no progress; with s1 (0.5) from 1 both go at 1: s1 done at 1.5; s0 (0.5 left) stops until
    # s2 comes at 5: done at 5.5; s2 (0.5 left) is alone again and is live at the horizon, in service.
    # present: 1, 2, 1, 2, 1 on [0,1), [1,1.5), [1.5,5), [5,5.5), [5.5,10]: 11 / 10.
    r, o = run("""
stage p : ps(present >= 2 ? 2 : 0);
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 0 ? 0 : serial == 1 ? 1 : 5);
  run p (serial == 1 ? 0.5 : 1);
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["done"]] == [(1, 1.5), (0, 5.5)]
    p = stage(r, "p")
    assert (p.completions, p.present, p.service) == (2, 1.1, 3.0)
    assert (r.result.ended, r.result.mean_live) == (2, 1.7)


def test_fifo_with_two_servers_its_figures_and_observables(monkeypatch):
    # §3 Stages: fifo(c): c servers, jobs in arrival order; docs/language.md: queue(s) the jobs present, busy
    # the busy servers, work what is left; utilisation busy / c. Works 2, 3, 1: s0 [0,2], s1 [0,3], s2
    # waits until 2, [2,3]. At 1: queue 3, busy 2, work 1 + 2 + 1; at 2.5: 2, 2, 0.5 + 0.5. Over 4:
    # present (6 + 2) / 4, utilisation 6 / 2 / 4, wait 2 / 3, service 2.
    r, o = run("""
stage f : fifo(2);
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) { run f (serial == 0 ? 2 : serial == 1 ? 3 : 1); observe done = now; }
  else {
    run d (1); observe q = queue(f); observe b = busy(f); observe w = work(f);
    run d (1.5); observe q = queue(f); observe b = busy(f); observe w = work(f);
  }
}
run { horizon 4; }
""", monkeypatch)
    assert times(o["done"]) == [2.0, 3.0, 3.0]
    assert (values(o["q"]), values(o["b"]), values(o["w"])) == ([3.0, 2.0], [2.0, 2.0], [4.0, 1.0])
    f = stage(r, "f")
    assert (f.present, f.utilisation, f.completions, f.throughput, f.service) == (2.0, 0.75, 3, 0.75, 2.0)
    assert close(f.wait, 2 / 3)


def test_work_busy_and_queue_of_ps_fifo_and_delay_stages(monkeypatch):
    # docs/language.md, "What a stage's observables count". At 1: ps(1) with two jobs of 2 has done 0.5 of
    # each (work 3, busy 2); the fifo's one job of 3 has 2 left; the delay holds s3's job (1.5 left; the
    # observer's own has ended): queue 1.
    _, o = run("""
stage p : ps(1);
stage f : fifo(2);
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial < 2) { run p (2); }
  branch (serial == 2) { run f (3); }
  branch (serial == 3) { run d (2.5); }
  branch (serial == 4) {
    run d (1);
    observe wp = work(p); observe bp = busy(p); observe wf = work(f); observe wd = work(d); observe qd = queue(d);
  }
}
run { horizon 10; }
""", monkeypatch)
    got = [values(o[k]) for k in ("wp", "bp", "wf", "wd", "qd")]
    assert got == [[3.0], [2.0], [2.0], [1.5], [1.0]]


@pytest.mark.parametrize("share, done2, present", [
    # §3 Stages: a run over several stages is a flow at the program's share; "a stage array held by some run
    # with another is shared for the whole run: every job on it … is a flow", member by member. a[2]: ps(2),
    # b: ps(1). f0 = run a[0], b (1); f1 = run a[1] (2) (the other member: its own 2); f2 = run a[0] (3);
    # f3 = run b (0.5). maxmin: b fills at 0.5 (f0, f3), f2 takes a[0]'s 1.5 left; f1 2. At 1 f3 and f1 are
    # done (f2 has 1.5 left, f0 0.5): f0 1 (b), f2 1: f0 done at 1.5; f2 alone at 2: done at 2.
    ("maxmin", 2.0, 3.5),
    # bottleneck: f0 min(2/2, 1/2) = 0.5, f2 2/2 = 1 (a[0]'s other 0.5 unused), f3 0.5, f1 2. At 1: f0 1,
    # f2 1 until 1.5 (f2 has 1.5 left), then f2 alone at 2: 2.25.
    ("bottleneck", 2.25, 3.75),
])
def test_flows_over_a_stage_family_member_by_member(monkeypatch, share, done2, present):
    r, o = run(f"""
stage a[2] : ps(2);
stage b : ps(1);
share {share};
workload {{ arrive batch(4); }}
session {{
  branch (serial == 0) {{ run a[0], b (1); }}
  branch (serial == 1) {{ run a[serial] (2); }}
  branch (serial == 2) {{ run a[0] (3); }}
  branch (serial == 3) {{ run b (0.5); }}
  observe done = now;
}}
run {{ horizon 10; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["done"]] == [(1, 1.0), (3, 1.0), (0, 1.5), (2, done2)]
    # utilisation, the capacity carried (Σ rate / φ): a[0] full on [0, 2] either way (maxmin) or 0.75,
    # then full (bottleneck): 2 / 10; a[1] full on [0, 1]; b full on [0, 1.5]
    a0, a1, b = stage(r, "a", 0), stage(r, "a", 1), stage(r, "b")
    assert (a0.utilisation, a1.utilisation, b.utilisation) == (0.2, 0.1, 0.15)
    assert close(a0.present, present / 10) and (a0.completions, a1.completions, b.completions) == (2, 1, 2)


def test_choose_joins_the_shortest_queue_of_a_stage_family(monkeypatch):
    # §2 choose NAME in n by (keys): the least keys, ties to the least index; stage families s[i]. Arrivals
    # at 0, 0.25, 0.5, 0.75 choose by queue(s[j]): 0 (tie), 1, 0 (tie 1, 1), 1 (2 against 1). s[0] serves
    # s0 [0,1], s2 [1,2]; s[1] s1 [0.25,1.25], s3 [1.25,2.25]: per member 2 completions, waits 0 and 0.5.
    r, o = run("""
stage s[2] : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial * 0.25);
  choose j in 2 by (queue(s[j]));
  observe jj = j;
  run s[j] (1);
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert values(o["jj"]) == [0.0, 1.0, 0.0, 1.0]
    assert times(o["done"]) == [1.0, 1.25, 2.0, 2.25]
    for i in (0, 1):
        s = stage(r, "s", i)
        assert (s.completions, s.wait, s.service) == (2, 0.25, 1.0)


def test_choose_over_a_pool_family_by_its_load(monkeypatch):
    # §2 choose over members, holds on the chosen member m[j]: keys holders + queued of m[j] (cap 1 each).
    # s0 -> 0 at 0, s1 -> 1 at 0.25, s2 -> 0 at 0.5 (1 against 1: the least index; it waits until 1), s3
    # -> 1 at 0.75 (2 against 1; waits until 1.25). Each member: 2 admissions, mean wait 0.25.
    r, o = run("""
pool m[2] { cap 1; }
stage s[2] : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial * 0.25);
  choose j in 2 by (holders(m[j]) + queued(m[j]));
  hold m[j] (1) { observe a = now; run s[j] (1); }
}
run { horizon 10; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.25, 0.25), (2, 1.0, 1.0), (3, 1.25, 1.25)]
    for i in (0, 1):
        m = pool_at(r, "m", i)
        assert (m.admissions, m.wait, m.holders) == (2, 0.25, 0.2)


# --- observables and gauges at an instant ----------------------------------------------------------------


def test_a_releasing_session_reads_the_pool_before_the_settle_admits(monkeypatch):
    # §3 Configuration: after an event the interpreter runs the ready sessions, then retries admissions
    # (docs/simulator.md: "A release … admits no one itself: the releasing session goes on"). cap 1: s1
    # waits from 0. At 1 s0 releases and reads queued 1, holders 0, used 0; then s1 is admitted and reads
    # queued 0, holders 1, used 1.
    _, o = run("""
pool m { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (1) { run d (1); } observe q = queued(m); observe h = holders(m); observe u = used(m);
  } else {
    hold m (1) { observe q = queued(m); observe h = holders(m); observe u = used(m); run d (1); }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert (o["q"], o["h"], o["u"]) == ([(0, 1.0, 1.0), (1, 1.0, 0.0)], [(0, 1.0, 0.0), (1, 1.0, 1.0)],
                                        [(0, 1.0, 0.0), (1, 1.0, 1.0)])


GAUGES = """
pool m { cap 2; }
pool n { cap 1; }
stage d : delay;
stage f : fifo;
workload { arrive batch(4); }
gauge u = used(m);
gauge hm = holders(m);
gauge fr = free(m);
gauge q = queued(n);
gauge hn = holders(n);
gauge b = busy(f) + 10 * queue(f);
session {
  branch (serial == 0) { hold m (1) { run d (3); } }
  branch (serial == 1) { run d (1); hold m (1) { } observe um = used(m); }
  branch (serial == 2) { hold n (1) { run f (2); } }
  branch (serial == 3) { hold n (1) { run f (1); } }
}
run { horizon 5; }
"""


def test_gauges_read_the_end_of_each_instant_not_what_it_passes_through(monkeypatch):
    # §3 Gauges: "read at the end of every instant (the state the instant's last event leaves …; what the
    # instant passes through on the way is not read)"; the least and greatest value held for a positive
    # time. m: s0 holds 1 on [0, 3); s1's hold of no time at 1 makes used 2 within the instant only (its
    # own read there is 1 after it). n: s2 holds [0, 2), s3 waits and holds [2, 3) (at 2 queued goes to 0
    # and holders 1 -> 0 -> 1); the fifo is busy with a job present on [0, 3) (11 = 1 + 10 * 1).
    r, o = run(GAUGES, monkeypatch)
    assert o["um"] == [(1, 1.0, 1.0)]
    want = {"u": [(0.0, 1.0), (3.0, 0.0)], "hm": [(0.0, 1.0), (3.0, 0.0)], "fr": [(0.0, 1.0), (3.0, 2.0)],
            "q": [(0.0, 1.0), (2.0, 0.0)], "hn": [(0.0, 1.0), (3.0, 0.0)], "b": [(0.0, 11.0), (3.0, 0.0)]}
    got = {n: list(zip(g.times.tolist(), g.values.tolist())) for n, g in r.gauges.items()}
    assert got == want
    g = r.result.gauges
    assert [(g[n].mean, g[n].min, g[n].max) for n in want] == [
        (0.6, 0.0, 1.0), (0.6, 0.0, 1.0), (1.4, 1.0, 2.0), (0.4, 0.0, 1.0), (0.6, 0.0, 1.0), (6.6, 0.0, 11.0)]
    m = pool(r, "m")
    assert (m.admissions, m.used, m.holders) == (2, 0.6, 0.6)


def test_gauges_of_a_step_stages_busy_and_queue(monkeypatch):
    # docs/language.md: busy(s) of a step stage is the jobs the running iteration serves, queue(s) its
    # residents. Budget 2: s0 decodes 3 ([0,1] alone), s1 prefills 4 from 0.5: [1,2], [2,3] one token each
    # beside s0's; [3,4] its last 2 alone. busy 1, 2, 1 on [0,1), [1,3), [3,4); queue 1, 2, 1 on [0,0.5),
    # [0.5,3), [3,4). Over 5: 6 / 5 and 6.5 / 5; utilisation (an iteration runs) 0.8.
    r, o = run("""
stage E : step { budget 2; cost 1; }
stage d : delay;
workload { arrive batch(2); }
gauge be = busy(E);
gauge qe = queue(E);
session {
  branch (serial == 0) { run E decode (3); } else { run d (0.5); run E prefill (4); }
  observe done = now;
}
run { horizon 5; }
""", monkeypatch)
    assert o["done"] == [(0, 3.0, 3.0), (1, 4.0, 4.0)]
    got = {n: list(zip(g.times.tolist(), g.values.tolist())) for n, g in r.gauges.items()}
    assert got == {"be": [(0.0, 1.0), (1.0, 2.0), (3.0, 1.0), (4.0, 0.0)],
                   "qe": [(0.0, 1.0), (0.5, 2.0), (3.0, 1.0), (4.0, 0.0)]}
    assert (r.result.gauges["be"].mean, r.result.gauges["qe"].mean) == (1.2, 1.3)
    e = stage(r, "E")
    assert (e.utilisation, e.present, e.iterations, e.mixed) == (0.8, 1.3, 4, 2)


# --- run-time errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("decls, stmt, first", [
    # §3 grow/load act on "the innermost enclosing hold" on the pool: outside one is an error at the statement
    # (at the link where the written forms tell: test_unheld_statements.py; here a computed member no hold holds).
    ("pool m[2] { cap 10; }", "hold m[0] (1) { grow m[serial + 1] (1); }",
     "<source>:4:38: error: at t=1, session 0: grow m[1]: outside a hold of m[1]"),
    ("pool m[2] { cap 10; }", "hold m[0] (1) { load m[serial + 1] (1); }",
     "<source>:4:38: error: at t=1, session 0: load m[1]: outside a hold of m[1]"),
    # docs/language.md "Amounts are not negative": a computed amount below 0 is an error at its statement.
    ("pool m { cap 10; }", "hold m (1) { grow m (serial - 1); }",
     "<source>:4:35: error: at t=1, session 0: grow m: the amount is negative (-1)"),
    ("pool m { cap 10; }", "hold m (serial - 1) { run d (1); }",
     "<source>:4:30: error: at t=1, session 0: the units of m are negative (-1)"),
    ("pool m { cap 10; }", "hold m (1) reserve (serial - 1) { run d (1); }",
     "<source>:4:42: error: at t=1, session 0: the reserve of m is negative (-1)"),
    # NaN in a hold's cache, lease time or reuse is an error at the clause's expression (when each is
    # read), as a computed amount of units or reserve is.
    ("pool m { cap 10; }", "hold m (1) { run d (1); } cache (0 / (serial * 0));",
     "<source>:4:55: error: at t=2, session 0: the cache length is NaN"),
    ("pool m { cap 10; }", "hold m (1) { run d (1); } lease m (0 / (serial * 0));",
     "<source>:4:57: error: at t=2, session 0: the lease time is NaN"),
    ("pool m { cap 10; }", "hold m (1) reuse (0 / (serial * 0)) { run d (1); } cache (1);",
     "<source>:4:40: error: at t=1, session 0: the reuse bound is NaN"),
    # docs/language.md: members chosen by computed indices that turn out the same are an error at the hold.
    ("pool m[2] { cap 10; }", "hold m[0] (1), m[serial] (1) { run d (1); }",
     "<source>:4:22: error: at t=1, session 0: the hold names pool m[0] twice; a hold takes one amount of each "
     "pool (write one amount, the sum)"),
    # a spill's computed negative work names the pool, the time and the session of the entry it reads, at
    # the work: s0 caches 10 at 1 and its next hold evicts it.
    ("pool m { cap 10; spill t via d (serial - 1) when (1); } pool t { cap 10; }",
     "hold m (10) { run d (serial); } cache (10); hold m (10) { run d (1); }",
     "<source>:1:33: error: at t=1, session 0: pool m: the spill's work is negative (-1)"),
    # a ps stage's computed negative capacity names the stage, the time and the present, at the capacity.
    ("stage p : ps(1 - present);", "run p (1);",
     "<source>:1:14: error: at t=1: stage p: the capacity is negative (-1) at present = 2; a ps stage's "
     "capacity is at least 0"),
])
def test_run_time_errors_name_the_place_the_time_and_the_session(monkeypatch, tier, decls, stmt, first):
    src = f"{decls}\nstage d : delay;\nworkload {{ arrive batch(2); }}\nsession {{ run d (1); {stmt} }}\nrun {{ horizon 10; }}\n"
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    assert str(e.value).splitlines()[0] == first
    assert "Traceback" not in str(e.value)


def test_a_run_time_error_on_the_command_line_quotes_the_statement(tmp_path, capsys):
    # docs/language.md: the error is one message (file:line:col, time, session, the line and a caret), exit
    # status 1, no traceback.
    path = tmp_path / "p.sq"
    path.write_text("pool kv { cap 4; }\nstage d : delay;\nworkload { arrive batch(2); }\n"
                    "session {\n  hold kv (2) {\n    run d (1);\n    grow kv (serial - 1);\n  }\n}\n"
                    "run { horizon 10; }\n")
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--no-progress"])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines()[:3] == [f"{path}:7:5: error: at t=1, session 0: grow kv: the amount is negative (-1)",
                                    "      grow kv (serial - 1);", "      ^"]
    assert "Traceback" not in err
