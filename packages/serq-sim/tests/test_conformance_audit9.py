"""A ninth conformance audit: rules of pool-reference.txt and §3 that the earlier rounds
(test_conformance_hand.py … _audit8.py) ran only in simpler settings, each the smallest program whose
outcome follows from the spec's words by hand, run on the tier serQ picks and on the general engine
(byte-identical reports):

(a) `preempt`: the candidates of a pool that two step engines count as their memory (the residents of
    either, the last admitted losing), a victim taken out of the other engine's running iteration;
(b) `preempt by` reading `decoding` for holders of a pool that is no engine's memory;
(c) `reserve held`: a preemption on one pool ends the victim's reservation on another pool of its hold;
(d) a lease that ends while an engine decodes lets the engine admit at its next iteration;
(e) `evict by` keys read a living session's current attributes, for its dead remainder too;
(f) units that read the clock are state-dependent: they wait, they are not rejected at the join;
(g) `cached` after a hold with `cache` on several pools: the most it consumed on one of them;
(h) a grower holds its pool and is not in its queue (`queued`, the report's `queue`).
"""

from __future__ import annotations

import pytest
from conform import at, close, pool, run, run_error, stage


def test_a_pool_two_engines_count_loses_the_last_admitted_resident_of_either(monkeypatch):
    """pool-reference `preempt`: "Candidates are holders resident in the stage whose memory is this pool";
    §3: "stage E[N] : step { memory kv; } … next to a family of one, every member gets that one", so A and
    B both count kv, and the residents of both are candidates (docs/simulator.md). kv cap 4, lifo.

    t=0: A admits s0, B admits s1 (kv 2 each: used 4). A's iterations last 1, B's 1.5. s0's token 3 (A's
    iteration at 2) needs a third unit: no room, the last admitted resident is s1 (B's), preempted out of
    B's running iteration [1.5, 3) (its planned token given back: computed reads 1 when it is admitted again); s0 grows to 3, then to 4 at
    3, done at 4. B's emptied iteration still ends at 3; s1 (needing 2 beside s0's 3) waits until s0's
    release at 4, then decodes 3 again: [4, 5.5), [5.5, 7), [7, 8.5): done 8.5. (Were the candidates A's
    residents alone, s0 would preempt itself.)

    kv used: s0 2·2 + 3·1 + 4·1 = 11; s1 2·2 + 2·3 + 3·1.5 = 14.5: 25.5 / 30. qb: s1 queued [2, 4): 2 / 30,
    waits 0 and 2. B runs an iteration on [0, 3) and [4, 8.5): 7.5 / 30, one completion."""
    r, o = run("""
pool kv { cap 4; preempt lifo; }
pool qa { cap 5; admit via A; }
pool qb { cap 5; admit via B; }
stage A : step { budget 4; cost 1; memory kv; }
stage B : step { budget 4; cost 1.5; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold qa (1), kv (2) { run A decode (4) growing kv; } }
  else { hold qb (1), kv (2) { observe c = computed; run B decode (3) growing kv; } }
  observe done = now;
}
run { horizon 30; }
""", monkeypatch)
    assert at(o["done"]) == [(0, 4.0), (1, 8.5)]
    assert o["c"] == [(1, 0.0, 0.0), (1, 4.0, 1.0)]  # the position before the token given back
    kv, qb = pool(r, "kv"), pool(r, "qb")
    assert (kv.preemptions, kv.admissions, kv.stuck) == (1, 3, 0)
    assert close(kv.used, 25.5 / 30)
    assert close(qb.queue, 2 / 30) and close(qb.wait, 1.0) and qb.admissions == 2
    b = stage(r, "B")
    assert close(b.utilisation, 7.5 / 30) and b.completions == 1


@pytest.mark.parametrize("key, done", [
    # s0 decodes at E (key 0) and loses: it goes back to the head of m, is admitted again when s1 ends at 2
    # and decodes its 5 tokens anew: done 7.
    ("decoding ? 0 : 1", [(1, 2.0), (0, 7.0)]),
    # s1 (key 0: it runs no decode) preempts itself: it waits at the head until s0 ends at 5, then
    # runs 1, grows (room now) and runs 1: done 7.
    ("decoding ? 1 : 0", [(0, 5.0), (1, 7.0)]),
])
def test_preempt_by_decoding_on_a_pool_no_engine_counts(monkeypatch, key, done):
    """pool-reference `preempt`: the keys read "decoding (1 for a decoding resident)"; on a pool that no
    stage names as memory the candidates are its holders with an active hold scope, and a holder whose job
    decodes at a step stage reads 1 (docs/language.md). m cap 4: s0 holds 2 and decodes 5 at E (one token
    an iteration of 1), s1 holds 2, runs 1 and grows by 1 at t=1 (no room)."""
    _, o = run(f"""
pool m {{ cap 4; preempt by ({key}); }}
stage E : step {{ budget 4; cost 1; }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{ hold m (2) {{ run E decode (5); }} }}
  else {{ hold m (2) {{ run d (1); grow m (1); run d (1); }} }}
  observe done = now;
}}
run {{ horizon 30; }}
""", monkeypatch)
    assert at(o["done"]) == done


def test_a_preemption_on_one_pool_ends_the_victims_reservation_on_another(monkeypatch):
    """pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption", and
    the victim "releases its hold": every pool of it. a cap 4 (lifo), b cap 10 with `reserve held`.

    t=0: s0 holds a 2, b 1; s1 holds a 2, b 1 reserving 8 (1 + 0 + 8 <= 10; u = 7); s2 wants b 3: 2 + 7 + 3
    > 10, it waits. At 1 s0 grows a by 2: the last admitted holder of a, s1, is preempted, and its
    reservation on b goes with it: s2 fits (1 + 3) and runs [1, 2). s0 runs [1, 2) after its growth; s1
    waits at a's head until s0's release at 2, then runs 5: done 7. a: waits 0, 0, 1; b: s2 waited 1 of
    the four admissions (s0, s1, s2, s1 again)."""
    r, o = run("""
pool a { cap 4; preempt lifo; }
pool b { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold a (2), b (1) { run d (1); grow a (2); run d (1); } }
  else { branch (serial == 1) { hold a (2), b (1) reserve (8) { run d (5); } }
  else { hold b (3) { observe in = now; run d (1); } } }
  observe done = now;
}
run { horizon 20; }
""", monkeypatch)
    assert at(o["in"]) == [(2, 1.0)]
    assert at(o["done"]) == [(0, 2.0), (2, 2.0), (1, 7.0)]
    a, b = pool(r, "a"), pool(r, "b")
    assert (a.preemptions, a.admissions, b.admissions, b.preemptions) == (1, 3, 4, 0)
    assert close(a.wait, 1 / 3) and close(b.wait, 1 / 4)


def test_a_lease_that_ends_while_an_engine_decodes_lets_it_admit_at_its_next_iteration(monkeypatch):
    """§3: a lease keeps its allocation "until the session's release m, t seconds, or the session's end",
    and "cache applies then"; a pool admitted via S is served at the start of S's iterations. kv cap 10 is
    E's memory; s0 holds 6 of it (a hold admitted at settle time) and leases it for 3.5 s, staying alive;
    s1 decodes 20 at E (iterations of 1) holding 4; s2 wants 4 and waits (6 + 4 + 4 > 10).

    The lease ends at 3.5 (its 6 units cached); E's next iteration, at 4, admits s2, evicting them, and
    serves it its token with the budget left: done 5. kv used 6·3.5 + 4·20 + 4·1 = 105: 105 / 30; cached 6
    on [3.5, 4): 0.1. reqs: s2 queued [0, 4): 4 / 30, waits 0 and 4."""
    r, o = run("""
pool kv { cap 10; }
pool reqs { cap 10; admit via E; }
stage E : step { budget 2; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (0); } cache (6) lease kv (3.5);
    run d (10);
  } else {
    hold reqs (1), kv (4) { run E decode (serial == 1 ? 20 : 1); }
    observe done = now;
  }
}
run { horizon 30; }
""", monkeypatch)
    assert at(o["done"]) == [(2, 5.0), (1, 20.0)]
    kv, reqs = pool(r, "kv"), pool(r, "reqs")
    assert close(kv.used, 3.5) and close(kv.cached, 0.1)
    assert (kv.evicted_entries, kv.evicted_units) == (1, 6.0)
    assert close(reqs.queue, 4 / 30) and close(reqs.wait, 2.0)


def test_an_eviction_key_reads_a_living_sessions_current_attributes_for_its_dead_remainder_too(monkeypatch):
    """pool-reference `evict`: keys read "the entry's session's attributes: current while the session
    lives, as they were at its last release after it has ended". m cap 10, evict by (x), no block (whole
    entries).

    s0 caches 4 at 1 with x = 1, is admitted again at 1 with reuse (2): it consumes 2, the other 2 stay as
    a dead remainder; that hold caches nothing (cache (0)); s0 then sets x = 5 and lives on. s1 caches 4
    at 1 with x = 3 and lives on. At 5 s2 needs 5 beside 6 cached: one entry goes, the least key: s1's (3)
    before s0's remainder (5 now; it would be 1 as at its release): 4 units evicted, not 2."""
    r, _ = run("""
pool m { cap 10; evict by (x); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    set x = 1;
    hold m (4) { run d (1); } cache (4);
    hold m (4) reuse (2) { run d (1); } cache (0);
    set x = 5;
    run d (10);
  } else { branch (serial == 1) {
    set x = 3;
    hold m (4) { run d (1); } cache (4);
    run d (10);
  } else {
    run d (5);
    hold m (5) { run d (1); }
  } }
}
run { horizon 20; }
""", monkeypatch)
    m = pool(r, "m")
    assert (m.evicted_entries, m.evicted_units) == (1, 4.0)


def test_units_that_read_the_clock_wait_and_are_not_rejected_at_the_join(monkeypatch):
    """pool-reference: "If either units or reserve is independent of deployment state and exceeds capacity
    after block rounding, the hold is rejected … State-dependent demand waits for admission"; §3: the units
    are evaluated when the session is admitted. `10 - now` is 10 at the join (above cap 5) and 4 at 6, when
    s0 releases: s1 is admitted then with 4 units. used 5·6 + 4·1 = 34 over 30; no rejection."""
    r, o = run("""
pool m { cap 5; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (5) { run d (6); } }
  else { hold m (10 - now) { observe a = now; observe u = used(m); run d (1); } }
}
run { horizon 30; }
""", monkeypatch)
    assert o["a"] == [(1, 6.0, 6.0)] and o["u"] == [(1, 6.0, 4.0)]
    m = pool(r, "m")
    assert m.rejections == 0 and close(m.used, 34 / 30)


def test_cached_after_a_hold_with_cache_on_several_pools_is_the_most_it_consumed_on_one(monkeypatch):
    """§3: "With it, on admission the session consumes at most ρ units of its own cached prefix (cached :=
    what it consumed)", one attribute for a hold that may name several pools, each with an entry of the
    session's. It consumes its own entry on every pool of the hold, and `cached` is the most it consumed on
    one of them (docs/language.md). s0 leaves 2 on a and 4 on b; `hold a (4), b (4) … cache (0)` consumes
    both: cached 4 (b's), whichever pool comes first. Then 3 on a and 1 on b: `hold b (4), a (4)` reads 3
    (a's, the second pool). Each of those holds caches nothing (cache (0)), so nothing is left to consume
    but what the next two holds leave."""
    _, o = run("""
pool a { cap 10; }
pool b { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold a (2) { run d (1); } cache (2);
  hold b (4) { run d (1); } cache (4);
  hold a (4), b (4) { observe c = cached; observe left = cachedin(a) + cachedin(b); run d (1); } cache (0);
  hold a (4) { run d (1); } cache (3);
  hold b (1) { run d (1); } cache (1);
  hold b (4), a (4) { observe c2 = cached; run d (1); } cache (0);
}
run { horizon 20; }
""", monkeypatch)
    assert o["c"] == [(0, 2.0, 4.0)] and o["left"] == [(0, 2.0, 0.0)]
    assert o["c2"] == [(0, 5.0, 3.0)]


def test_a_grower_is_a_holder_and_not_in_the_pools_queue(monkeypatch):
    """§3's configuration keeps, for each pool, "its admission queue and its growers" apart; `queued(p)` and
    the report's pool `queue` count the admission queue, and a session waiting to grow holds the pool
    (docs/language.md). b cap 2: s0 holds 1 until 2; s1 holds 1 and grows by 1 at 0.5 (no room, preempt
    none: it waits until 2). At 1 s2 reads queued(b) 0 and holders(b) 2; b's time-average queue is 0,
    holders 2 on [0, 2) and 1 (s1, grown) on [2, 3): 5 / 10."""
    r, o = run("""
pool b { cap 2; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold b (1) { run d (2); } }
  else { branch (serial == 1) { hold b (1) { run d (0.5); grow b (1); observe g = now; run d (1); } }
  else { run d (1); observe q = queued(b); observe h = holders(b); } }
}
run { horizon 10; }
""", monkeypatch)
    assert o["q"] == [(2, 1.0, 0.0)] and o["h"] == [(2, 1.0, 2.0)] and o["g"] == [(1, 2.0, 2.0)]
    b = pool(r, "b")
    assert b.queue == 0.0 and close(b.holders, 0.5)


@pytest.mark.parametrize("statement, message", [
    ("hold kv[serial] (1) { run d (1); }", "pool kv: index 1 out of range (the family has 1)"),
    ("run E[serial] (1);", "stage E: index 1 out of range (the family has 1)"),
    ("observe m = member(kv[serial]);", "pool kv: index 1 out of range (the family has 1)"),
])
def test_a_computed_index_into_a_family_of_one_is_checked(monkeypatch, statement, message):
    """§2 Queues: "a family of one is still a family"; docs/language.md: a computed member index "at least
    the family's size … is a run-time error at the reference, naming the time and the session", as at any
    size. The linker dropped every index into a family of one, so `kv[serial]` at serial 1 named kv[0] and
    `member(kv[serial])` read 0. Session 0 (index 0) runs; session 1's index names no member."""
    msg = run_error(f"""
pool kv[1] {{ cap 10; }}
stage E[1] : delay;
stage d : delay;
workload {{ arrive batch(2); }}
session {{ {statement} }}
run {{ horizon 3; }}
""", monkeypatch)
    assert msg.endswith(f"error: at t=0, session 1: {message}"), msg
