"""Conformance of language.txt §3, Pools, on pools with blocks and caches, sentences no earlier test held in
these combinations:

* "release m inside the body does the same for m alone, at that point: the innermost enclosing hold on m
  gives its allocation there back, caching per its clause, and holds m no longer", with two holds on one
  pool, released one after the other from inside the inner one, and "A session that holds and leases
  nothing on m releases nothing" after both;
* "min(ℓ, computed) units stay cached, rounded down to blocks (computed is the allocation, or the position
  a growing run or a load reached)", with "load m (n) advances the innermost enclosing hold's position on m
  by n tokens, which its allocation must cover", and "on admission the session consumes at most ρ units of
  its own cached prefix (cached := what it consumed); the rest of that entry stays in the cache as a dead
  entry with the same age, unusable, until evicted";
* "end releases every hold but keeps the session's cached prefixes … A program that models dropping them
  writes drop POOL; before end;", beside a lease, which keeps its allocation "until the session's release
  m, t seconds, or the session's end, and cache applies then";
* "Eviction is per entry, or per block from the tail of the entry when the pool has block b; evict lru
  orders by release time and then release order": a dead remainder goes at its entry's release time.

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte); every figure is computed by hand in the docstring.
"""

from __future__ import annotations

import pytest
from conform import pool, run, run_error

NESTED_RELEASES = """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (2) {
    hold kv (3) {
      run d (1);
      release kv;
      observe u = used(kv);
      run d (1);
      release kv;
      observe u = used(kv);
      run d (1);
      release kv;
      observe u = used(kv);
    } cache (3);
    observe u = used(kv);
  } cache (2);
  observe c = cachedin(kv);
}
run { horizon 10; }
"""


def test_release_gives_back_the_inner_hold_then_the_outer_then_nothing(monkeypatch):
    """§3: "release m inside the body … the innermost enclosing hold on m gives its allocation there back,
    caching per its clause, and holds m no longer"; "A session that holds and leases nothing on m releases
    nothing."

    At 1 the first `release kv` is the inner hold's (3 units): used 2, and 3 cached. At 2 the inner hold
    holds kv no longer, so the innermost enclosing hold on kv is the outer one: used 0, and its clause
    caches 2, which replaces the session's entry of 3 (docs/language.md: a session has one prefix of its
    own per pool, the one its latest release left). At 3 nothing is held: the release releases nothing, and
    nor do the two scopes' ends. used: 5 on [0, 1], 2 on [1, 2]: 7 over 10; cached: 3 on [1, 2], 2 on
    [2, 10]: 19 over 10."""
    r, o = run(NESTED_RELEASES, monkeypatch)
    assert o["u"] == [(0, 1.0, 2.0), (0, 2.0, 0.0), (0, 3.0, 0.0), (0, 3.0, 0.0)]
    assert o["c"] == [(0, 3.0, 2.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.used, kv.cached, kv.evicted_units) == (2, 0.7, 1.9, 0.0)


LOADS = """
pool kv { cap 10; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (6) { load kv (3); run d (1); } cache (10);
  observe c = cachedin(kv);
  hold kv (6) { observe k = cached; run d (1); } cache (10);
  observe c = cachedin(kv);
  hold kv (4) { observe k = cached; load kv (LOAD); run d (1); } cache (10);
  observe c = cachedin(kv);
}
run { horizon 10; }
"""


def test_a_release_caches_the_loaded_position_or_else_the_allocation(monkeypatch):
    """§3: "min(ℓ, computed) units stay cached, rounded down to blocks (computed is the allocation, or the
    position a growing run or a load reached)"; "on admission the session consumes at most ρ units of its
    own cached prefix (cached := what it consumed); the rest of that entry stays in the cache as a dead
    entry"; docs/simulator.md, Pools: at most its allocation too.

    First hold: no prefix, `load kv (3)` takes the position to 3 within 6; at 1 it caches min(10, 3) = 3,
    rounded down to blocks of 2: 2. Second hold: consumes its 2 (cached 2), loads nothing, so computed is
    its allocation, 6: at 2 it caches 6. Third hold, of 4: consumes 4 of the 6 (its allocation bounds
    it), the other 2 stay as a dead entry; `load kv (0)` leaves it at 4, so it caches 4 at 3, beside the
    dead 2.

    used: 6, 6, 4 over one second each: 16 over 10. cached: none on [1, 2] (the second hold, admitted at
    1, consumed the 2), 2 dead on [2, 3], 2 dead and 4 on [3, 10]: 2 + 42 = 44 over 10."""
    r, o = run(LOADS.replace("LOAD", "0"), monkeypatch)
    assert o["c"] == [(0, 1.0, 2.0), (0, 2.0, 6.0), (0, 3.0, 4.0)]
    assert o["k"] == [(0, 1.0, 2.0), (0, 2.0, 4.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.used, kv.cached, kv.evicted_units) == (3, 1.6, 4.4, 0.0)


def test_a_load_past_the_allocation_is_the_statements_error(monkeypatch):
    """§3: load advances the position "by n tokens, which its allocation must cover": the third hold
    starts at the 4 it consumed, and 4 + 1 passes its allocation of 4. The run-time error names the
    statement's place (line 10, the `load`), the time and the session, the same on both tiers."""
    first = run_error(LOADS.replace("LOAD", "1"), monkeypatch)
    assert first.startswith("<source>:10:37: error: at t=2, session 0: load kv (1): the hold has 4 allocated "
                            "and 4 computed, the session's own prefix it found cached when it was admitted")


LEASE_THEN_DROP = """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4) lease kv (100);
    DROP
    observe c = cachedin(kv);
    run d (1);
    end;
  }
  run d (3);
  observe c = cachedin(kv);
  observe u = used(kv);
}
run { horizon 10; }
"""


def test_drop_before_end_does_not_drop_what_a_lease_caches_at_the_end(monkeypatch):
    """§3: "end releases every hold but keeps the session's cached prefixes … A program that models
    dropping them writes drop POOL; before end;"; a lease keeps its allocation "until the session's release
    m, t seconds, or the session's end, and cache applies then".

    s0's hold ends at 1 and its lease keeps the 4 units: nothing is cached yet, so `drop kv;` at 1 finds
    nothing to drop. At 2 s0 ends, which ends the lease, and its clause caches 4: the prefix is in the cache
    though the program dropped before its end (docs/language.md: a program that drops everything releases
    the lease first, `release kv; drop kv;`). s1 reads at 3: used 0; s1's own prefix is none (cachedin
    reads the session's own), and the pool caches 4 from 2 on. used: 4 on [0, 2]: 0.8; cached 4 on [2, 10]:
    3.2. With `release kv; drop kv;` the lease ends at 1 and its 4 are dropped: used 4 on [0, 1], nothing
    cached."""
    r, o = run(LEASE_THEN_DROP.replace("DROP", "drop kv;"), monkeypatch)
    assert o["c"] == [(0, 1.0, 0.0), (1, 3.0, 0.0)] and o["u"] == [(1, 3.0, 0.0)]
    kv = pool(r, "kv")
    assert (kv.used, kv.cached, kv.evicted_units) == (0.8, 3.2, 0.0)
    r, o = run(LEASE_THEN_DROP.replace("DROP", "release kv; drop kv;"), monkeypatch)
    assert o["c"] == [(0, 1.0, 0.0), (1, 3.0, 0.0)] and o["u"] == [(1, 3.0, 0.0)]
    kv = pool(r, "kv")
    assert (kv.used, kv.cached, kv.evicted_units) == (0.4, 0.0, 0.0)


DEAD_FIRST = """
pool kv { cap 10; block 2; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (1);
    hold kv (2) reuse (2) { observe k = cached; run d (2); } cache (0);
  }
  branch (serial == 1) { hold kv (2) { run d (1.5); } cache (2); run d (2); observe c = cachedin(kv); }
  branch (serial == 2) { run d (2.5); hold kv (5) { observe a = now; run d (1); } }
}
run { horizon 10; }
"""


def test_a_dead_remainder_is_evicted_at_its_entrys_release_time(monkeypatch):
    """§3: "the rest of that entry stays in the cache as a dead entry with the same age, unusable, until
    evicted"; "Eviction is … per block from the tail of the entry when the pool has block b; evict lru
    orders by release time and then release order"; allocations round up to blocks.

    s0 caches 6 at 1; s1 caches 2 at 1.5. At 2 s0's hold consumes 2 of its 6 (`reuse (2)`): cached 2, and
    the other 4 stay dead with the release time 1. At 2.5 s2's hold of 5 takes 6 (three blocks): used 2 + 6,
    so the cache must come down from 6 to 2: the dead 4, released at 1, go first, both blocks, and s1's 2
    (released at 1.5) stay: s1 reads 2 at 3.5. (The dead entry aged as of its consumption, at 2, would have
    gone after s1's, and s1 would read 0.)

    used: 6 on [0, 1], 2 on [0, 1.5], 2 on [2, 4], 6 on [2.5, 3.5]: 19 over 10. cached: 6 on [1, 1.5], 8
    on [1.5, 2], 6 on [2, 2.5], 2 on [2.5, 10]: 25 over 10; 4 units evicted, as one entry."""
    r, o = run(DEAD_FIRST, monkeypatch)
    assert o["k"] == [(0, 2.0, 2.0)] and o["a"] == [(2, 2.5, 2.5)] and o["c"] == [(1, 3.5, 2.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.used, kv.cached, kv.evicted_units, kv.evicted_entries) == (4, 1.9, 2.5, 4.0, 1)


OWN_INNER_VICTIM = """
pool kv { cap 10; block 2; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) {
      run d (1);
      hold kv (3) {
        observe a = now; observe k = cached; observe p = computed;
        run d (1); grow kv (2); observe g = now; run d (1);
      } cache (10);
      observe u = used(kv);
    }
  }
  else { hold kv (4) { run d (4); } }
}
run { horizon 10; }
"""


def test_lifo_without_an_engine_preempts_the_sessions_own_inner_hold(monkeypatch):
    """§3 grow: "with preempt lifo the holder that is … admitted last … is preempted (… a pool that is no
    engine's memory preempts its most recently admitted holder): … its hold is released with its computed
    prefix cached, and it re-enters the head of the pool's queue with the hold statement to execute again.
    The grower itself can be the victim."; Statistics: stuck counts "sessions preempted a second time
    without having advanced past the position of their previous preemption".

    At 0 s0's outer hold takes 2 and s1's 4 (blocks of 2). At 1 s0's inner hold of 3 takes 4: the pool is
    full. At 2 its grow of 2 does not fit; the holder admitted last is s0's inner hold (at 1), later than
    s1 and s0's own outer hold: the inner hold alone is preempted. It has computed nothing (no growing run
    and no load: position 0), so it caches nothing and `computed` is 0; it re-enters the queue and is
    admitted at once (6 + 4 = 10). At 3 the same again, at position 0 again: stuck 1. At 4 s1's run ends
    first (scheduled at 0) and frees 4; s0's grow then fits (2 + 6 = 8), and at 5 the inner hold ends,
    caching its allocation of 6 (computed is the allocation); the outer hold still holds its 2.

    used: s1 4 on [0, 4]; s0's outer 2 on [0, 5]; the inner 4 on [1, 4] and 6 on [4, 5]: 44 over 10.
    cached: 6 on [5, 10]: 3."""
    r, o = run(OWN_INNER_VICTIM, monkeypatch)
    assert o["a"] == [(0, 1.0, 1.0), (0, 2.0, 2.0), (0, 3.0, 3.0)]
    assert [v for _s, _t, v in o["k"] + o["p"]] == [0.0] * 6
    assert o["g"] == [(0, 4.0, 4.0)] and o["u"] == [(0, 5.0, 2.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.stuck, kv.used, kv.cached) == (5, 2, 1, 4.4, 3.0)


RESUMING_VICTIM = """
pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) { run d (10); } }
  else {
    hold kv (min(4, 2 + computed)) {
      observe p = computed;
      observe k = cached;
      load kv (min(4, 2 + computed) - cached);
      run d (1);
      grow kv (5 - min(4, 2 + computed));
    } cache (100);
  }
}
run { horizon HORIZON; }
"""


@pytest.mark.parametrize("horizon, preemptions, stuck", [(2.5, 2, 0), (3.5, 3, 1)])
def test_stuck_counts_a_second_preemption_only_at_no_greater_position(monkeypatch, horizon, preemptions, stuck):
    """Statistics: stuck counts "sessions preempted a second time without having advanced past the
    position of their previous preemption"; grow: the victim's "hold is released with its computed prefix
    cached", and "The re-executed hold finds computed set to the position the hold had computed"; Pools:
    the hold consumes its own cached prefix (cached := what it consumed), and load advances the position.

    s0 holds 2 for the whole run. s1's hold takes 2, loads 2 (position 2) and at 1 grows to 5: 2 + 5 > 6,
    and s1, the last admitted, is its own victim at position 2 (its units after the growth, 5, are within
    the cap: not rejected). It caches 2 and is admitted again at once with 4, consumes the 2 (`cached`,
    `computed` 2), loads 2 more (position 4) and at 2 is preempted at 4: advanced, not stuck. Admitted
    again with 4, it consumes its 4 and loads none; at 3 it is preempted at 4 again: stuck (once).

    used: s0 2 all along; s1 2 on [0, 1], then 4. At 2.5: 5 + 2 + 4 + 2 = 13 over 2.5; at 3.5: 19 over
    3.5. Nothing stays cached: each prefix is consumed at the instant it is cached."""
    r, o = run(RESUMING_VICTIM.replace("HORIZON", str(horizon)), monkeypatch)
    times = [0.0, 1.0, 2.0, 3.0][:preemptions + 1]
    assert o["p"] == o["k"] == list(zip([1] * len(times), times, [0.0, 2.0, 4.0, 4.0]))
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.stuck, kv.rejections) == (preemptions + 2, preemptions, stuck, 0)
    assert (kv.used, kv.cached) == ((13 / 2.5, 0.0) if horizon == 2.5 else (19 / 3.5, 0.0))
