"""Conformance of language.txt §3, Pools, by hand:

* "A hold's lease m (t) keeps its allocation on m past the scope's end, neither evictable nor a preemption
  victim, until the session's release m, t seconds, or the session's end, and cache applies then … A session
  that holds and leases nothing on m releases nothing", and §2's "transfer (X) from P to Q (n); run link
  (X); load Q (n); release P;": "load m (n) advances the innermost enclosing hold's position on m by n";
* "Eviction is per entry, or per block from the tail of the entry when the pool has block b; … evict by (k₁,
  …) by the keys and then release order", with a key (`-size`) that changes block by block;
* "Without [cache] the hold is memory alone: it leaves the session's cached blocks where they are …; cache
  (0) is the hold that consumes the prefix and keeps nothing"; "At the end of the body … min(ℓ, computed)
  units stay cached, rounded down to blocks";
* "end releases every hold but keeps the session's cached prefixes … A program that models dropping them
  writes drop POOL; before end;"; "grow m (d) enlarges the innermost hold on m by d (rounded to blocks). If it
  does not fit: with preempt none the session waits and resumes where it was".

Each program runs on the tier serQ picks and on the general engine (conform.run); the pool's figures are
asserted as the JSON report reads them.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, run

LEASE = """
pool P { cap 8; }
pool Q { cap 8; }
stage d : delay;
stage link : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (4) { run d (1); } cache (4) lease P (2);
    observe u1 = used(P);
    run d (3);
    observe c1 = cachedin(P);
    hold Q (6) { transfer (2) from P to Q (3); observe uq = used(Q); run d (1); } cache (6);
    observe cq = cachedin(Q);
  } else {
    run d (1.5);
    hold P (6) { observe w = now; run d (1); }
  }
}
run { horizon 20; }
"""


def test_a_lease_outlives_its_scope_and_a_transfer_loads_the_tokens(monkeypatch):
    """s0 holds 4 of P over [0, 1] and leases them 2 s more: used(P) is still 4 at 1. s1 asks for 6 at 1.5:
    the leased 4 are neither evictable nor given back, so it waits until 3, when the lease ends and the 4
    are cached; it is admitted then, evicting them (c1 = 0 at 4). At 4 s0 holds 6 of Q and transfers: the
    link runs 2 s, then 3 tokens load into Q, then `release P` releases nothing (s0 holds and leases
    nothing on P). The hold caches min(6, computed 3) = 3 at 7. P: used 4 on [0, 3], 6 on [3, 4]: 18
    over 20; s1 queued [1.5, 3]: 0.075, its wait 1.5 of two admissions: 0.75; one entry of 4 evicted.
    Q: used 6 on [4, 7]: 0.9; cached 3 from 7: 39 over 20."""
    r, obs = run(LEASE, monkeypatch)
    assert (obs["u1"], obs["w"], obs["c1"], obs["uq"], obs["cq"]) == \
        ([(0, 1.0, 4.0)], [(1, 3.0, 3.0)], [(0, 4.0, 0.0)], [(0, 6.0, 6.0)], [(0, 7.0, 3.0)])
    p, q = pool_json(r, "P"), pool_json(r, "Q")
    assert {k: p[k] for k in ("used", "queue", "wait", "admissions", "evicted_entries", "evicted_units")} == \
        {"used": 0.9, "queue": 0.075, "wait": 0.75, "admissions": 2, "evicted_entries": 1, "evicted_units": 4.0}
    assert {k: q[k] for k in ("used", "cached", "admissions")} == {"used": 0.9, "cached": 1.95, "admissions": 1}


EVICT_BY = """
pool m { cap 12; block 2; evict by (-size); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    run d (serial * 0.5);
    hold m (2 * serial + 2) { run d (1); } cache (2 * serial + 2);
    run d (4 - now);
    observe c = cachedin(m);
    hold m (1) { run d (1); }
    observe c2 = cachedin(m);
    hold m (4) { observe k = cached; run d (1); } cache (0);
    observe c3 = cachedin(m);
  } else {
    run d (3);
    hold m (7) { run d (0.5); }
  }
}
run { horizon 20; }
"""


def test_evict_by_a_key_block_by_block(monkeypatch):
    """s0, s1, s2 cache 2, 4, 6 (released at 1, 1.5, 2): the pool's 12 all cached. At 3 s3 needs 7 (8 in
    blocks of 2): blocks are evicted from the tail of the entry of least key, -size, read again after each
    block: s2's (6 → 4); then s1's and s2's tie at 4, release order: s1's (4 → 2); s2's (4 → 2); then all
    three tie at 2: s0's, released first (2 → 0, the one whole entry). 8 units evicted; left 0, 2, 2.
    A hold without `cache` (at 4) leaves them where they are (c2 as c); `cache (0)` (at 5) consumes them
    (k = 0, 2, 2) and keeps nothing (c3 = 0). used: 2 + 4 + 6 over 1 s each, s3's 8 for 0.5, three holds of
    2 (1 rounded) and three of 4 for 1 s: 12 + 4 + 6 + 12 = 34 over 20; cached 2 on [1, 1.5], 6 on [1.5,
    2], 12 on [2, 3], 4 on [3, 5]: 1 + 3 + 12 + 8 = 24 over 20; ten admissions."""
    r, obs = run(EVICT_BY, monkeypatch)
    for name, want in (("c", [0.0, 2.0, 2.0]), ("c2", [0.0, 2.0, 2.0]), ("k", [0.0, 2.0, 2.0]),
                       ("c3", [0.0, 0.0, 0.0])):
        assert [v for _s, _t, v in obs[name]] == want, name
    m = pool_json(r, "m")
    assert {k: m[k] for k in ("used", "cached", "admissions", "evicted_entries", "evicted_units")} == \
        {"used": 1.7, "cached": 1.2, "admissions": 10, "evicted_entries": 1, "evicted_units": 8.0}


END_DROP_GROW = """
pool m { cap 10; block 2; preempt none; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (3) { run d (1); } cache (3); end; }
  branch (serial == 1) { hold m (3) { run d (1); } cache (3); drop m; end; }
  branch (serial == 3) { run d (2); hold m (4) { run d (3); } end; }
  run d (2);
  hold m (4) { run d (1); grow m (3); observe g = now; run d (1); }
  observe c = cachedin(m);
}
run { horizon 20; }
"""


def test_end_keeps_a_prefix_drop_does_not_and_a_growth_waits(monkeypatch):
    """s0 and s1 hold 3 (4 in blocks) over [0, 1] and cache min(3, 4) = 3, rounded down to blocks: 2. s0
    ends and its 2 stay cached; s1 drops its own first. At 2 s2 and s3 hold 4 each; at 3 s2 grows by 3
    (4 in blocks): 4 + 4 + 4 = 12 > 10 (s0's 2 cached do not block), so under preempt none it waits, until s3
    releases at 5; then 8 + 2 cached fit without evicting. s2 resumes at 5 (g), done at 6. used 4 + 4 over
    [0, 1], 8 on [2, 3], 8 on [3, 5], 8 on [5, 6]: 8 + 8 + 16 + 8 = 40 over 20; cached s0's 2 from 1: 38
    over 20."""
    r, obs = run(END_DROP_GROW, monkeypatch)
    assert obs["g"] == [(2, 5.0, 5.0)] and obs["c"] == [(2, 6.0, 0.0)]
    m = pool_json(r, "m")
    assert {k: m[k] for k in ("used", "cached", "admissions", "evicted_units", "preemptions")} == \
        {"used": 2.0, "cached": 1.9, "admissions": 4, "evicted_units": 0.0, "preemptions": 0}


NESTED = """
pool m { cap 20; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) {
      hold m (3) { grow m (4); observe u1 = used(m); release m; observe u2 = used(m); run d (1); } cache (7);
      observe u3 = used(m);
      observe c1 = cachedin(m);
      run d (1);
    } cache (2);
    observe c2 = cachedin(m);
    hold m (5) { run d (1); } cache (5) lease m (inf);
    observe u4 = used(m);
    run d (1);
    release m;
    observe u5 = used(m);
    observe c3 = cachedin(m);
    hold m (6) { run d (1); } cache (6) lease m (inf);
    run d (1);
  } else {
    run d (10);
    observe u6 = used(m);
  }
}
run { horizon HORIZON; }
"""


def test_nested_holds_grow_and_release_the_innermost_and_a_lease_ends(monkeypatch):
    """At 0 s0 holds 2, then 3 inside: `grow m (4)` enlarges the innermost (7): used 9; `release m` gives
    the innermost's 7 back, cached per its clause (min(7, 7)): used 2, and its scope's end at 1 has
    nothing left there. The outer hold ends at 2 caching min(2, 2) = 2, which replaces the session's own
    7 (docs/language.md: one prefix of its own per pool, no eviction). At 2 a hold of 5 consumes the 2 and
    is leased past its end at 3 (used 5 at 3); `release m` outside any hold at 4 ends the lease: used 0,
    5 cached. A hold of 6 consumes them at 4, leased for ever from 5; the session ends at 6, which ends the
    lease (s1 reads used 0 at 10) and caches 6. used: 9 on [0, 0], 2 on [0, 2], 5 on [2, 4], 6 on [4, 6]:
    4 + 10 + 12 = 26; cached: 7 on [0, 2], 6 from 6: 14 + 6 (horizon - 6)."""
    for horizon in (3, 20):
        r, obs = run(NESTED.replace("HORIZON", str(horizon)), monkeypatch)
        m = pool_json(r, "m")
        if horizon == 3:
            # over [0, 3]: used 4 + 5 = 9, cached 14
            assert (m["used"], m["cached"]) == (3.0, 14 / 3)
            continue
        want = {"u1": 9.0, "u2": 2.0, "u3": 2.0, "c1": 7.0, "c2": 2.0, "u4": 5.0, "u5": 0.0, "c3": 5.0, "u6": 0.0}
        assert {k: obs[k][0][2] for k in want} == want
        assert [obs[k][0][1] for k in ("u2", "c1", "c2", "u4", "u5")] == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert {k: m[k] for k in ("used", "cached", "admissions", "evicted_units")} == \
            {"used": 1.3, "cached": 4.9, "admissions": 4, "evicted_units": 0.0}


LEASE_NOT_VICTIM = """
pool kv { cap 16; block 4; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (4) { observe a = now; run E decode (8) growing kv; }
  } else {
    hold kv (8) { run d (0.1); } cache (8) lease kv (inf);
    observe l = used(kv);
    run d (100);
  }
  observe t = now;
}
run { horizon 30; }
"""


def test_the_victim_is_the_engines_last_admitted_resident_not_a_lease(monkeypatch):
    """§3: preempt lifo preempts "the holder that is a resident of the step stage the pool is the memory of
    and was admitted last … (a prefiller's finished request keeping its blocks leased … is in no running
    list)", and a lease is "neither evictable nor a preemption victim". s0 and s1 hold one block each and
    decode 8 on E; s2, admitted last, holds 8 and leases them from 0.1: the pool's 16 full. At 4 s0's fifth
    token wants a second block: the victim is s1, the last admitted resident, not s2; s0 grows and decodes
    to 8. s1 waits (the pool full) until s0's release at 8, then decodes its 8 again (a second block at
    its fifth, beside s2's 8): done at 16. used 16 on [0, 8], 12 on [8, 12], 16 on [12, 16], 8 from 16:
    352 over 30; s1 queued [4, 8]: wait 4 of four admissions; holders 3, 2, 2, 1: 50 over 30."""
    r, obs = run(LEASE_NOT_VICTIM, monkeypatch)
    assert obs["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 8.0, 8.0)]
    assert obs["l"] == [(2, 0.1, 16.0)] and obs["t"] == [(0, 8.0, 8.0), (1, 16.0, 16.0)]
    kv = pool_json(r, "kv")
    assert {k: kv[k] for k in ("preemptions", "admissions", "wait", "stuck")} == \
        {"preemptions": 1, "admissions": 4, "wait": 1.0, "stuck": 0}
    assert (kv["used"], kv["queue"], kv["holders"]) == pytest.approx((352 / 30, 4 / 30, 50 / 30), rel=1e-12)


AWAY = """
pool kv { cap 16; block 4; preempt lifo; }
stage E : step { budget 8; cost 1; MEMORY }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (4) { observe a = now; run E decode (8) growing kv; }
  } else {
    hold kv (8) { observe a = now; run d (10); }
  }
  observe t = now;
}
run { horizon 30; }
"""


@pytest.mark.parametrize("memory, again, done, used", [
    # kv is E's memory: the victim is E's last admitted resident, s1, not s2 (admitted later, away at d);
    # s1 admitted again when s0 ends at 8, done at 16; s2 undisturbed, done at 10. used 16 on [0, 8], 12 on
    # [8, 10], 4 on [10, 12], 8 on [12, 16]: 192 over 30
    ("memory kv;", (1, 8.0), {0: 8.0, 2: 10.0, 1: 16.0}, 192 / 30),
    # a pool that is no engine's memory preempts its most recently admitted holder: s2, whose job leaves
    # d; s0 and s1 both grow into its 8 and end at 8; s2 runs its 10 again from 8: 18. used 16 on [0, 8], 8
    # on [8, 18]: 208 over 30
    ("", (2, 8.0), {0: 8.0, 1: 8.0, 2: 18.0}, 208 / 30),
])
def test_which_holder_a_growth_preempts(monkeypatch, memory, again, done, used):
    """§3: "preempt lifo the holder that is a resident of the step stage the pool is the memory of and was
    admitted last …; a pool that is no engine's memory preempts its most recently admitted holder". s0 and
    s1 (one block each) decode 8 on E, s2 holds 8 at a delay stage, admitted last: 16 of 16. At 4 s0's and
    s1's fifth tokens want a block each."""
    r, obs = run(AWAY.replace("MEMORY", memory), monkeypatch)
    assert [(s, t) for s, t, _v in obs["a"]] == [(0, 0.0), (1, 0.0), (2, 0.0), again]
    assert {s: t for s, t, _v in obs["t"]} == done
    kv = pool_json(r, "kv")
    assert (kv["preemptions"], kv["admissions"], kv["wait"]) == (1, 4, 1.0)
    assert kv["used"] == pytest.approx(used, rel=1e-12)


QUEUE_BY = """
pool m { cap 1; queue by (KEYS); }
stage d : delay;
workload { arrive renewal(0.5); }
session { set prio = (serial * 7) % 5; hold m (1) { observe a = now; run d (1); } }
run { horizon 100; arrivals 6; }
"""


@pytest.mark.parametrize("keys, order", [
    # Arrivals at 0.5, 1, …, 3 (s0 … s5); one slot, 1 s each. At every release (1.5, 2.5, …) the completion
    # comes before the arrival due at that instant (scheduled earlier: §3, Ties), so that arrival is not yet
    # a candidate. By `waited` (least first: the newest): at 1.5 s1 alone; at 2.5 s2 (1) or s3 (0.5): s3; at
    # 3.5 s2 (2), s4 (1), s5 (0.5): s5; at 4.5 s4; at 5.5 s2.
    ("waited", [0, 1, 3, 5, 4, 2]),
    # -waited: the longest waiting first, first come first served
    ("-waited", [0, 1, 2, 3, 4, 5]),
    # prio = 7 serial mod 5: 0, 2, 4, 1, 3, 0. At 2.5 s2 (4), s3 (1): s3; at 3.5 s2, s4 (3), s5 (0): s5;
    # then s4, s2 (the same order as by waited here)
    ("prio", [0, 1, 3, 5, 4, 2]),
    # a second key decides ties of the first: serial mod 2 is 0 for s0, s2, s4. At 2.5 s2 (0) before s3;
    # at 3.5 s4 (0); at 4.5 s3 and s5 tie at 1 and the least waited, s5 (1.5 against 2.5), goes first
    ("serial % 2, waited", [0, 1, 2, 4, 5, 3]),
])
def test_queue_by_keys_read_again_at_every_admission(monkeypatch, keys, order):
    """§3, Waiting selection: "queue by (k1, …) reevaluates pure keys for every waiting hold before each
    admission attempt. waited is elapsed simulation seconds since that hold entered the queue"; a
    cap-only pool of the fast tier."""
    r, obs = run(QUEUE_BY.replace("KEYS", keys), monkeypatch)
    assert sorted((t, s) for s, t, _v in obs["a"]) == [(0.5 + k, s) for k, s in enumerate(order)]
    assert report_json(r)["end"] == 6.5
