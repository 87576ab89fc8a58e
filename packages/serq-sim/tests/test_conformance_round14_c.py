"""Conformance cases on what the orders of the semantics read at one instant, each a small program whose
outcome follows by hand from language.txt §3 and pool-reference.txt (and docs/language.md where the spec
leaves the rule open):

(a) an eviction at the instant an entry is released: the entry's `age` is 0 and `last` the instant, and
    `waiting` reads a session that released and queued again at that instant;
(b) a preemption victim re-queued at the instant another session joined the queue: behind it under
    `requeue tail`, ahead of it under `requeue head`; the pool's counts on either side of a warm-up that
    falls between the two preemptions, and its time averages;
(c) a step stage of infinite budget: every head that fits is admitted into one iteration, each header
    reading `budget_left` inf;
(d) a reservation of a pool's whole capacity under `reserve held`: a hold of 0 units fits beside it.

Every program runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and samples must be
the same bytes (conform.run). Conventions: `stage d : delay;` runs every job at rate 1 without waiting; a
step stage of `cost 1` runs iteration k over [k, k + 1] from its start.

Power: each test was run with a mutated expectation (the value named in its comment) or program and
failed; the comment says which.
"""

from __future__ import annotations

import math

import pytest
from conform import at, pool, run, stage

# --- (a) an eviction at a release's instant ------------------------------------------------------------------

AGED = """
pool m { cap 8; ORDER }
pool g { cap 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) {
    hold m (4) { run d (1); } cache (4);
    hold g (1) { run d (0); }
    observe c0 = cachedin(m);
  }
  branch (serial == 1) { hold m (4) { run d (2); } cache (4); AFTER observe c1 = cachedin(m); }
  branch (serial == 2) { hold g (1) { run d (5); } }
  branch (serial == 3) { run d (1); run d (1); hold m (4) { observe a = now; run d (10); } }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("order, after, c0, c1", [
    ("evict lru;", "run d (4);", 0.0, 4.0),  # s0's entry, released at 1, goes first
    ("evict by (age);", "run d (4);", 4.0, 0.0),  # s1's, of age 0, is the youngest
    ("evict by (-age);", "run d (4);", 0.0, 4.0),
    ("evict by (-last);", "run d (4);", 4.0, 0.0),  # its last is 2, the latest
    ("evict by (waiting);", "run d (4);", 4.0, 0.0),  # s0 waits at g, s1 runs: s1's goes
    ("evict by (-waiting);", "run d (4);", 0.0, 4.0),
    ("evict by (waiting);", "hold g (1) { run d (0); }", 0.0, 4.0),  # both wait: the release order decides
    ("evict by (age);", "hold g (1) { run d (0); }", 4.0, 0.0),
])
def test_an_eviction_at_the_instant_an_entry_is_released(monkeypatch, order, after, c0, c1):
    """pool-reference `evict`: "ascending keys, then release order", keys "evaluated per cache entry at the
    Evict moment" that "may read size, age, last and waiting"; docs/language.md: `age` is now − `last`,
    the entry's release time, and `waiting` "is 1 when the entry's session … is alive and waiting in some
    pool's queue"; §3 Ties: events at one instant go in the order they were scheduled.
    s0 caches 4 at 1 and then waits at g (s2 holds it until 5). s1's run ends at 2 (scheduled at 0 in
    the settle), s3's second run ends at 2 too (scheduled at 1): s1's end comes first, so s1 caches 4 at 2
    and goes on (a run, or a hold of g, in whose queue it then waits), and then s3 joins m asking 4 with
    8 cached: one entry goes, by the order's keys as they read at 2 (s0's: age 1, last 1, waiting 1; s1's:
    age 0, last 2, waiting 0 or 1). s0 reads its own prefix at 5, s1 at 6 (or 5, admitted at g after
    s0). Mutation: expecting the lru outcome under `evict by (age)` fails; so does the second run of s3
    moved before s1's release (`run d (2);` in place of the two: s3 is then admitted by evicting s0's
    entry, the only one, whatever the order)."""
    _, o = run(AGED.replace("ORDER", order).replace("AFTER", after), monkeypatch)
    assert at(o["a"]) == [(3, 2.0)]
    t1 = 5.0 if after.startswith("hold") else 6.0
    assert (o["c0"], o["c1"]) == ([(0, 5.0, c0)], [(1, t1, c1)])


# --- (b) a victim re-queued at the instant another session joined --------------------------------------------

REQUEUED = """
pool reqs { cap 10; admit via E; }
pool kv { cap 7; block 1; preempt by (-admission) RQ }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (2); }
  hold reqs (1), kv (2) {
    observe a = now;
    run E prefill (2) growing kv;
    run E decode (serial == 2 ? 1 : 4) growing kv;
  }
  observe done = now;
}
run { horizon 30; warmup WU; }
"""


@pytest.mark.parametrize("requeue, first, stuck", [("requeue tail;", 2, 0), ("requeue head;", 1, 1)])
@pytest.mark.parametrize("warmup", [0.0, 3.5])
def test_a_victim_requeued_at_the_instant_another_session_joined(monkeypatch, requeue, first, stuck, warmup):
    """pool-reference `preempt`: the victim "re-enters the hold's first pool's queue … requeue head (the
    default) places it first, ahead of policy keys. requeue tail treats it as a newcomer: FIFO places it
    last"; `by (k, …)`: "ties go to the last admitted", and the grower can be its own victim; §3: no
    admission "in an iteration that preempted"; the settle starts an iteration only when no other event is
    pending at the instant. kv 7, budget 10, cost 1:
      0: s0 and s1 are admitted (kv 2 each) and prefill 2 [0, 1].
      1: both decode, growing to 3 (used 6).
      2: s2 joins reqs (its run's end, scheduled at 0, before the iteration's end). The planning grows s0
         to 4 (7); s1's growth to 4 does not fit and s1, the last admitted, is its own victim (its 3
         released): re-queued behind s2 (tail) or ahead of it (head). Nothing is admitted.
      3: s0 grows to 5; the head (s2 under tail, s1 under head) takes 2 (7); the other waits.
      4: s0's growth to 6 preempts the last admitted, the one admitted at 3 (re-queued as its policy
         says); s0's last token at 5.
      5: s0 has released its 6: s1 and s2 are admitted, s2 done at 7, s1 at 10.
    Under head s1 is preempted at 2 at position 3 and at 4 at position 2 (its recompute's prefill): stuck
    (docs/simulator.md: "preempted again at no greater position"), counted over the whole run. Waits 0, 0,
    then 1 and 3 for the two admitted at 3 and 5 after waiting since 2, and 1 for the one preempted at 4.
    After a warm-up of 3.5 the pool counts the preemption at 4 and the admissions at 5 (waits 3 and 1, or 1
    and 3). Mutation: expecting s1 first under tail (the victim ahead of the session that joined before
    its re-entry) fails; so does stuck 1 under tail."""
    r, o = run(REQUEUED.replace("RQ", requeue).replace("WU", str(warmup)), monkeypatch)
    a = [(0, 0.0), (1, 0.0), (first, 3.0), (1, 5.0), (2, 5.0)]
    assert at(o["a"]) == [x for x in a if x[1] >= warmup]
    assert at(o["done"]) == [(0, 5.0), (2, 7.0), (1, 10.0)]
    kv, reqs = pool(r, "kv"), pool(r, "reqs")
    assert kv.stuck == stuck
    if warmup == 0:
        assert (kv.preemptions, reqs.admissions, reqs.wait) == (2, 5, 1.0)
    else:
        assert (kv.preemptions, reqs.admissions, reqs.wait) == (1, 2, 2.0)
    assert stage(r, "E").iterations == 10 - math.ceil(warmup)
    # over [warmup, 30]: the queue held 2 on [2, 3), 1 on [3, 4), 2 on [4, 5); the holders 2, 1, 2, 1, 2, 1
    # on [0, 2), [2, 3), [3, 4), [4, 5), [5, 7), [7, 10); kv used 4, 6, 4, 7, 6, 4, 6, 4, 5, 6 a second
    # from 0 to 10 (the growths at 1, 3, 4, 6 … 9, the releases at 2, 4, 5, 7)
    span = 30 - warmup
    want = (5.0, 15.0, 52.0) if warmup == 0 else (2.5, 9.0, 34.5)
    assert [reqs.queue * span, reqs.holders * span, kv.used * span] == pytest.approx(want, rel=1e-12)


# --- (c) an infinite budget ----------------------------------------------------------------------------------


def test_an_infinite_budget_admits_every_head_that_fits_into_one_iteration(monkeypatch):
    """docs/language.md: "A step stage without budget has an infinite budget", and `chunk` inf "is no cap";
    §3: the queue is served "while the iteration has budget left", `budget_left(S)` "evaluates to the
    budget left". Three sessions at 0, prefills of 50, 100 and 150 tokens: each header reads budget_left
    inf (min(100, inf) = 100 units of its own bl member), all three are admitted into the iteration at 0,
    which gives each its whole prefill: 300 tokens, done at 1. The token utilisation is NaN (docs/
    simulator.md: "NaN for an infinite budget"). Mutation: `budget 200;` fails (s2 is then admitted with 50
    left and takes 50 units)."""
    r, o = run("""
pool reqs { cap 10; admit via E; }
pool bl[3] { }
stage E : step { cost 1; chunk inf; }
workload { arrive batch(3); }
session {
  hold reqs (1), bl[serial] (min(100, budget_left(E))) {
    observe b = used(bl[serial]);
    run E prefill (50 * (serial + 1));
  }
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert o["b"] == [(0, 0.0, 100.0), (1, 0.0, 100.0), (2, 0.0, 100.0)]
    assert at(o["done"]) == [(0, 1.0), (1, 1.0), (2, 1.0)]
    e = stage(r, "E")
    assert (e.iterations, e.tokens, e.batch, e.utilisation) == (1, 300.0, 3.0, 0.1)
    assert math.isnan(e.token_utilisation)


# --- (d) a reservation of the whole capacity ---------------------------------------------------------------


def test_a_reservation_of_the_whole_capacity_leaves_room_only_for_a_hold_of_0(monkeypatch):
    """pool-reference `reserve held`: "each live hold's unallocated reservation also counts against later
    admissions and growth by other holds: u_i = max(0, r_i − a_i) … A new reservation r requires used +
    Σ u_i + r ≤ cap. Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap: the growing hold can use its
    own reservation"; docs/language.md: `free(p)` is cap − used − Σ u_i. cap 8: s0 holds 2 reserving 8
    (u 6): free 0. s1's hold of 0 fits (2 + 6 + 0 ≤ 8) at 0; s2's 1 does not (9 > 8) and waits. At 1 s0
    grows by 6 within its own reservation (used 8, u 0, free 0); at 2 its scope ends and s2 is admitted.
    used 2, 8, 1 on [0, 1), [1, 2), [2, 3): 11 / 10; queue 1 on [0, 2); waits 0, 0, 2. Mutation: `hold m
    (0)` → `hold m (1)` for s1 (it then waits with s2) fails; so does expecting free 6 at 0 (cap − used)."""
    r, o = run("""
pool m { cap 8; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (2) reserve (8) {
      observe f0 = free(m);
      run d (1);
      grow m (6);
      observe u0 = used(m);
      observe f1 = free(m);
      run d (1);
    }
  }
  branch (serial == 1) { hold m (0) { observe a1 = now; observe f = free(m); run d (0.5); } }
  branch (serial == 2) { hold m (1) { observe a2 = now; run d (1); } }
}
run { horizon 10; }
""", monkeypatch)
    assert (o["f0"], o["f"], o["u0"], o["f1"]) == ([(0, 0.0, 0.0)], [(1, 0.0, 0.0)], [(0, 1.0, 8.0)],
                                                   [(0, 1.0, 0.0)])
    assert (at(o["a1"]), at(o["a2"])) == ([(1, 0.0)], [(2, 2.0)])
    m = pool(r, "m")
    assert (m.admissions, m.used, m.queue, m.wait) == (3, 1.1, 0.2, pytest.approx(2 / 3, rel=1e-12))
