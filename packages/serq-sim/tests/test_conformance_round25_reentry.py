"""Conformance of what a hold re-executed after a preemption meets again (language.txt §3, Pools and grow),
rules no earlier test held directly:

* "A session that holds and leases nothing on m releases nothing (a hold re-executed after a preemption
  reaches the statement again)": a transfer's `release P` of a lease the first execution ended, and a
  `release` of one of the hold's own pools, which the re-executed hold holds again;
* "load m (n) advances the innermost enclosing hold's position on m by n tokens … the KV of a transfer
  counts as computed from then on": the re-executed hold finds `computed` at the loaded position;
* "[the victim] re-enters the head of the pool's queue with the hold statement to execute again": the
  hold's first pool, where it blocks a hold behind it while the hold's other pool has no room;
* "cache is read when the session releases" (at admission): at a preemption, whose victim caches
  min(ℓ, computed) with ℓ read then, and the prefix the re-executed hold then consumes ("cached := what it
  consumed").

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte); every figure is computed by hand in the docstring.
"""

from __future__ import annotations

from conform import pool, run

TRANSFER = """
pool kvP { cap 10; }
pool kvD { cap 4; preempt lifo; }
stage link : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kvP (2) { run d (1); } cache (2) lease kvP (inf);
    hold kvD (2) {
      observe c = computed;
      transfer (1) from kvP to kvD (2);
      observe tr = now;
      observe up = used(kvP);
      observe cp = cachedin(kvP);
      run d (5);
    }
    observe done = now;
  }
  branch (serial == 1) { hold kvD (2) { run d (3); grow kvD (2); run d (1); } }
}
run { horizon 30; }
"""


def test_a_transfer_run_again_after_a_preemption_releases_nothing_at_its_source(monkeypatch):
    """kvD (cap 4, preempt lifo, no stage's memory: the candidates are its holders in admission order).

    s1 holds kvD (2) at 0. s0 holds kvP (2) over [0, 1] and leases it (inf); at 1 its hold of kvD (2) is
    admitted (2 + 2 <= 4), `computed` 0. Its transfer runs the link over [1, 2], loads kvD (2), and
    releases kvP: the lease ends and `cache (2)` applies, so at 2 kvP has 0 used and 2 cached. At 3 s1
    grows kvD by 2: 4 + 2 > 4, and the last admitted holder, s0, is preempted: its run leaves d, its hold
    (no cache clause) caches nothing, `computed` is the loaded 2, and it re-enters kvD's queue at the head;
    s1 grows to 4. s1 ends at 4 and s0 is admitted again (wait 1): `computed` reads 2, the transfer runs
    the link over [4, 5], loads 2 again, and its `release kvP` finds neither a hold nor a lease there:
    nothing is released, the entry of 2 stays as it was (used 0, cached 2 at 5). d over [5, 10]: done at 10.

    kvP: used 2 on [0, 2] (the hold, then the lease): 4 / 30; cached 2 on [2, 30]: 56 / 30; one admission.
    kvD: used s1 2 on [0, 3] and 4 on [3, 4], s0 2 on [1, 3] and on [4, 10]: 6 + 4 + 4 + 12 = 26 over 30;
    three admissions waiting 0, 0 and 1; one preemption, no rejection."""
    r, o = run(TRANSFER, monkeypatch)
    assert o["c"] == [(0, 1.0, 0.0), (0, 4.0, 2.0)]
    assert o["tr"] == [(0, 2.0, 2.0), (0, 5.0, 5.0)]
    assert o["up"] == [(0, 2.0, 0.0), (0, 5.0, 0.0)]
    assert o["cp"] == [(0, 2.0, 2.0), (0, 5.0, 2.0)]
    assert o["done"] == [(0, 10.0, 10.0)]
    p, d = pool(r, "kvP"), pool(r, "kvD")
    assert (p.admissions, p.used, p.cached, p.evicted_units) == (1, 4 / 30, 56 / 30, 0.0)
    assert (d.admissions, d.preemptions, d.rejections, d.wait, d.used) == (3, 1, 0, 1 / 3, 26 / 30)


RELEASED = """
pool reqs { cap 1; }
pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { run d (2); grow kv (1); run d (1); } }
  branch (serial == 1) {
    run d (0.5);
    hold reqs (1), kv (2) { observe a = now; release reqs; observe r = used(reqs); run d (3); }
    observe e = now;
  }
  branch (serial == 2) { run d (2.5); hold reqs (1) { observe b = now; run d (1); } }
}
run { horizon 10; }
"""


def test_a_release_of_the_holds_own_pool_acts_again_in_the_re_executed_hold(monkeypatch):
    """"release m inside the body … the innermost enclosing hold on m gives its allocation there back … and
    holds m no longer"; a preemption "releases its hold" (what it still holds); the victim re-enters "the
    hold's first pool's queue" (pool-reference.txt, preempt).

    s0 holds kv (2) at 0. s1 at 0.5 holds reqs (1), kv (2) (kv 4 of 4), releases reqs at once (used 0)
    and runs d. At 2 s0 grows kv by 1: no room, the last admitted, s1, is preempted; its hold holds only
    kv now, which is released (reqs is not released twice: used(reqs) never goes below 0), and it
    re-enters reqs' queue, the hold's first pool, at its head. s0 grows to 3; s1's kv (2) does not fit
    (3 + 2 > 4), so s1 waits at the head of reqs' queue, and s2's hold of reqs, joining at 2.5 with reqs
    free, waits behind it (head-of-line). At 3 s0 ends: s1 is admitted (a = 3), takes reqs and releases
    it again at once (r = 0), and s2 is admitted in the same instant (b = 3), holding reqs over [3, 4].
    s1 runs d over [3, 6].

    reqs: used 1 on [3, 4] (s1's instants hold it for no time): 0.1; three admissions, waits 0, 1 and
    0.5: mean 0.5; queue 1 on [2, 3] and 1 on [2.5, 3]: 0.15. kv: s0 2 on [0, 2] and 3 on [2, 3], s1 2 on
    [0.5, 2] and [3, 6]: 16 / 10; one preemption."""
    r, o = run(RELEASED, monkeypatch)
    assert o["a"] == [(1, 0.5, 0.5), (1, 3.0, 3.0)]
    assert o["r"] == [(1, 0.5, 0.0), (1, 3.0, 0.0)]
    assert o["b"] == [(2, 3.0, 3.0)]
    assert o["e"] == [(1, 6.0, 6.0)]
    q, k = pool(r, "reqs"), pool(r, "kv")
    assert (q.admissions, q.used, q.wait, q.queue) == (3, 0.1, 0.5, 0.15)
    assert (k.admissions, k.preemptions, k.used) == (3, 1, 1.6)


CACHED = """
pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) { run d (2); grow kv (1); run d (1); } }
  branch (serial == 1) {
    run d (0.5);
    set x = 1;
    hold kv (4) { observe k = cached; load kv (4 - cached); set x = 3; run d (3); set x = 2; } cache (x);
    observe c = cachedin(kv);
  }
}
run { horizon 10; }
"""


def test_a_victims_cache_clause_is_read_at_the_preemption_and_its_prefix_consumed_again(monkeypatch):
    """"cache is read when the session releases"; the victim's "hold is released with its computed prefix
    cached"; on admission "the session consumes at most ρ units of its own cached prefix (cached := what it
    consumed)"; "load m (n) advances the innermost enclosing hold's position on m by n tokens, which its
    allocation must cover".

    kv cap 6. s0 holds 2 at 0; s1 at 0.5 holds 4 (cached 0), loads 4 (position 4) and sets x = 3. At 2 s0
    grows by 1: 6 + 1 > 6, s1 (the last admitted) is preempted and caches min(x, 4) = 3 with x read then
    (3, not the 1 of the hold's start); s0 grows to 3 beside that entry (3 + 3 <= 6). s1's 4 does not fit
    beside s0's 3 until s0 ends at 3; admitted then, it consumes its entry: cached = 3, load 1 (position
    4), and at 6 it releases with x = 2: 2 stays cached.

    kv: used s0 2 on [0, 2], 3 on [2, 3]; s1 4 on [0.5, 2] and [3, 6]: 25 / 10; cached 3 on [2, 3] and 2
    on [6, 10]: 11 / 10; waits 0, 0, 1; queue 1 on [2, 3]."""
    r, o = run(CACHED, monkeypatch)
    assert o["k"] == [(1, 0.5, 0.0), (1, 3.0, 3.0)]
    assert o["c"] == [(1, 6.0, 2.0)]
    k = pool(r, "kv")
    assert (k.admissions, k.preemptions, k.used, k.cached, k.queue) == (3, 1, 2.5, 1.1, 0.1)
    assert abs(k.wait - 1 / 3) < 1e-15
    assert (k.evicted_units, k.rejections, k.stuck) == (0.0, 0, 0)
