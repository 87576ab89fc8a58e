"""Conformance of language.txt §3, Pools, on caches, offload tiers and `drop`, by hand, in cases no earlier
test held together:

* "At the end of the body the units are released and min(ℓ, computed) units stay cached, rounded down to
  blocks (computed is the allocation …)", with ℓ above, between and below the blocks of an allocation that
  the pool's block rounded up;
* "on admission the session consumes at most ρ units of its own cached prefix (cached := what it
  consumed); the rest of that entry stays in the cache as a dead entry with the same age, unusable, until
  evicted", and `drop POOL; -- discard the own cached prefix` (§2), which leaves the dead entry;
* pool-reference.txt's `spill TIER via LINK (work) when (pred)`: "Where the evicted prefix is written",
  "The stage the write takes time on", "The prefix is spilled when this is non-zero. May read size"; §3:
  "Eviction is per entry, or per block from the tail of the entry when the pool has block b"; and the
  reload: a hold of the tier that consumes the spilled prefix, a read over the link, and "load m (n)
  advances the innermost enclosing hold's position on m by n tokens".

docs/language.md's rules where the spec is silent, which the figures below follow: "A spilled prefix is
usable when its write completes" (its units take their room in the tier's cache from the eviction), a
block-wise eviction is a spill per block, and "A `load`, of 0 tokens too, makes the hold's position what it
computed".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the pools are asserted as the JSON report reads them,
and every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, run


def _fields(got: dict, want: dict) -> dict:
    return {k: got[k] for k in want}


def _values(samples) -> list:
    return [v for _s, _t, v in samples]


# One session, two holds on kv (block 2) and a drop: the first hold's 5 units are 6 allocated.
BOUNDS = """
pool kv { cap 10; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (5) { observe u = used(kv); run d (1); } cache (L);
  observe c1 = cachedin(kv);
  hold kv (3) reuse (R) { observe k = cached; run d (1); } cache (3);
  observe c2 = cachedin(kv);
  run d (1);
  drop kv;
  observe c3 = cachedin(kv);
  run d (2);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("ell, rho, c1, k, cached", [
    # ℓ 100: min(100, 6) = 6 cached at 1. The second hold (3, 4 allocated) consumes min(ρ 2, 4, 6) = 2:
    # cached 2, a dead 4. At 2 it caches min(3, 4) = 3, rounded down: 2, its own entry beside the dead 4;
    # the drop at 3 discards the 2, not the dead 4. cached: 4 on [1, 2], 6 on [2, 3], 4 on [3, 10]: 38.
    (100, 2, 6.0, 2.0, 3.8),
    # ρ 0: nothing consumed, the 6 all dead: 6, 8, then 6 over seven seconds: 56.
    (100, 0, 6.0, 0.0, 5.6),
    # ℓ 5: min(5, 6) = 5, rounded down to 4. ρ 2: a dead 2: 2, 4, then 2 · 7: 20.
    (5, 2, 4.0, 2.0, 2.0),
    # ρ 100: at most the allocation, 4, so all of it is consumed: nothing dead; the own 2 on [2, 3].
    (5, 100, 4.0, 4.0, 0.2),
    # ℓ 1 rounds down to no block: nothing cached at 1, nothing to consume; the own 2 on [2, 3].
    (1, 2, 0.0, 0.0, 0.2),
])
def test_cache_bounds_a_reuse_bound_and_drop(monkeypatch, ell, rho, c1, k, cached):
    r, o = run(BOUNDS.replace("(L)", f"({ell})").replace("(R)", f"({rho})"), monkeypatch)
    assert _values(o["u"]) == [6.0]  # 5 units in blocks of 2
    assert (_values(o["c1"]), _values(o["k"]), _values(o["c2"]), _values(o["c3"])) == ([c1], [k], [2.0], [0.0])
    # used: 6 on [0, 1], 4 on [1, 2]; two admissions, no eviction
    want = {"used": 1.0, "cached": cached, "holders": 0.2, "admissions": 2, "evicted_entries": 0,
            "evicted_units": 0.0}
    assert _fields(pool_json(r, "kv"), want) == want


# s0 caches 6 on kv at 1 and is away until 11; s1 takes 8 of kv over [2, 3], evicting s0's prefix, which
# kv spills to cpu over link when LIM allows. At 11 s0 holds kv (6) again, reads back what cpu has of
# its prefix over link and loads it into the kv hold.
SPILL = """
pool kv { cap 10; BLOCK evict lru; spill cpu via link (size) when (PRED); }
pool cpu { cap 100; BLOCK evict lru; }
stage link : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (10);
    hold kv (6) {
      observe g = cached;
      hold cpu (hc) reuse (hc) at admission (hc = cachedin(cpu)) {
        observe c = cached;
        run link (cached);
        load kv (cached);
      } cache (0);
    } cache (6);
    observe k = cachedin(kv);
  } else {
    run d (2);
    hold kv (8) { run d (1); } cache (0);
  }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("block, pred, seen, done, kv, cpu, link", [
    # Entries whole: at 2 kv evicts s0's 6 (6 + 8 > 10); size 6 >= 3, so it spills: a write of 6 over
    # [2, 8], its units cpu's cached from 2, usable from 8. At 11 kv has nothing of s0 (g 0); cpu has 6:
    # hc 6, consumed (c 6), read back over [11, 17], loaded: kv's position 6, cached 6 at 17.
    # kv: used 6 + 8 + 6 · 6 = 50, cached 6 on [1, 2] and [17, 20]: 24; cpu: cached 6 on [2, 11]: 54,
    # used 6 on [11, 17]: 36; link: two runs of 6.
    ("", "size >= 3", (0.0, 6.0, 6.0), 17.0,
     {"used": 2.5, "cached": 1.2, "holders": 0.4, "admissions": 3, "evicted_entries": 1,
      "evicted_units": 6.0, "spills": 1},
     {"used": 1.8, "cached": 2.7, "holders": 0.3, "admissions": 1},
     {"completions": 2, "present": 0.6, "service": 6.0}),
    # size 6 < 7: evicted, not spilled. cpu has nothing: hc 0, a read of no work (done at once) and a
    # load of 0, which makes the kv hold's position 0: it caches min(6, 0) = 0 at 11.
    ("", "size >= 7", (0.0, 0.0, 0.0), 11.0,
     {"used": 0.7, "cached": 0.3, "holders": 0.1, "admissions": 3, "evicted_entries": 1,
      "evicted_units": 6.0, "spills": 0},
     {"used": 0.0, "cached": 0.0, "holders": 0.0, "admissions": 1},
     {"completions": 0, "present": 0.0}),
    # Blocks of 2: kv evicts from the tail of s0's entry the 4 units s1 needs beyond the 6 free, two
    # blocks, each a spill of its own (two writes of 2 over [2, 4]); the entry keeps 2, no entry evicted
    # whole. At 11 s0 consumes its 2 on kv (g 2) and its 4 on cpu (c 4), read over [11, 15] and loaded:
    # position 2 + 4 = 6. kv: used 6 + 8 + 6 · 4 = 38, cached 6 on [1, 2], 2 on [2, 11], 6 on [15, 20]:
    # 54; cpu: cached 4 on [2, 11]: 36, used 4 on [11, 15]: 16; link: runs of 2, 2 and 4.
    ("block 2;", "1", (2.0, 4.0, 6.0), 15.0,
     {"used": 1.9, "cached": 2.7, "holders": 0.3, "admissions": 3, "evicted_entries": 0,
      "evicted_units": 4.0, "spills": 2},
     {"used": 0.8, "cached": 1.8, "holders": 0.2, "admissions": 1},
     {"completions": 3, "present": 0.4, "utilisation": 0.3}),
])
def test_an_evicted_prefix_spills_to_a_tier_and_is_read_back(monkeypatch, block, pred, seen, done, kv, cpu,
                                                             link):
    r, o = run(SPILL.replace("BLOCK", block).replace("PRED", pred), monkeypatch)
    assert (_values(o["g"]), _values(o["c"]), _values(o["k"])) == tuple([x] for x in seen)
    assert {s: t for s, t, _v in o["done"]} == {1: 3.0, 0: done}
    assert _fields(pool_json(r, "kv"), kv) == kv
    assert _fields(pool_json(r, "cpu"), cpu) == cpu
    stage = next(s for s in report_json(r)["stages"] if s["name"] == "link")
    assert _fields(stage, link) == link


# Three sessions at 0, 1.5 and 3 each hold 4 of kv (cap 6) for 1 s and cache 4, so each admission evicts
# the entry before it, which kv spills to cpu over link (a write of 4 s); a DROP after the hold; then at 8
# each reads back what cpu has of its prefix.
SPILLS_IN_FLIGHT = """
pool kv { cap 6; evict lru; spill cpu via link (size) when (1); }
pool cpu { cap CPU; evict lru; }
stage link : delay;
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial * 1.5);
  hold kv (4) { run d (1); } cache (4);
  run d (0.5);
  DROP
  run d (8 - serial * 1.5 - 1.5);
  hold cpu (hc) reuse (hc) at admission (hc = cachedin(cpu)) { observe c = cached; } cache (0);
}
run { horizon 20; }
"""


@pytest.mark.parametrize("cap, drop, back, cpu", [
    # cpu of 5: s0's 4 take their room in cpu at 1.5 (its write over [1.5, 5.5]); at 3 s1's 4 need room
    # beside them (4 + 4 > 5): cpu evicts s0's, still on its way (least recently released), and nothing
    # lands for it at 5.5; s1's land at 7. At 8 s0 finds 0, s1 4, s2 0 (its entry is still on kv). cpu
    # cached: s0's 4 on [1.5, 3], s1's on [3, 8] (consumed at 8): 26 over 20; one eviction of 4.
    (5, "", [0.0, 4.0, 0.0], {"cached": 1.3, "evicted_entries": 1, "evicted_units": 4.0, "admissions": 3}),
    # cpu of 10 and a drop of cpu after each hold: s0 drops at 1.5, after s1's admission (its delay,
    # scheduled at 0, ends first) began the write of s0's prefix; s1 drops at 3, after s2's began its
    # own. Each drop finds nothing landed and drops nothing: the units land at 5.5 and 7 and are found at
    # 8. cpu cached: 4 on [1.5, 8], 4 on [3, 8]: 46 over 20.
    (10, "drop cpu;", [4.0, 4.0, 0.0], {"cached": 2.3, "evicted_entries": 0, "evicted_units": 0.0,
                                         "admissions": 3}),
])
def test_units_on_their_way_to_a_tier(monkeypatch, cap, drop, back, cpu):
    r, o = run(SPILLS_IN_FLIGHT.replace("CPU", str(cap)).replace("DROP", drop), monkeypatch)
    assert o["c"] == [(s, 8.0, v) for s, v in enumerate(back)]
    # kv: 4 each for 1 s: 12 over 20; cached s0's on [1, 1.5], s1's on [2.5, 3], s2's on [4, 20]: 68
    kv = {"used": 0.6, "cached": 3.4, "admissions": 3, "evicted_entries": 2, "evicted_units": 8.0, "spills": 2}
    assert _fields(pool_json(r, "kv"), kv) == kv
    assert _fields(pool_json(r, "cpu"), cpu) == cpu
    # the writes over [1.5, 5.5] and [3, 7]: present 8 over 20, busy 5.5 over 20
    link = next(s for s in report_json(r)["stages"] if s["name"] == "link")
    assert _fields(link, {"completions": 2, "present": 0.4, "utilisation": 0.275}) == \
        {"completions": 2, "present": 0.4, "utilisation": 0.275}
