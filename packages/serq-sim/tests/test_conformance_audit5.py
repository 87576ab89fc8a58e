"""A fifth conformance audit of language.txt §3 and the in-scope items of pool-reference.txt and
program-reference.txt, on edges the earlier rounds (test_conformance_hand.py, _more, _sem, _pd, _audit …
_audit4) leave out:

(a) preemption: two victims of one growth and where each re-enters the queue (`requeue head`, `tail`, on a
    pool admitted at settle time and on an engine's), a session holding the pool twice (nested holds) as
    a victim, a lease of the victim's untouched, and a victim's prefix that the growth evicts at once and
    spills to a tier;
(b) holds at their edges: a hold of zero units behind a blocked head, `end;` inside nested holds on one
    pool, a nested hold rejected as never fitting;
(c) `queue by` with `waited`: selection happens at admission attempts only (no timer), on a pool admitted
    at settle time and on an idle engine's; LCFS written as `queue by (waited)` against the M/M/1 closed
    forms (its mean wait is FCFS's, its second moment FCFS's over 1 - rho);
(d) `reserve held` on an engine's memory, where growing runs draw on their own reservation;
(e) `run { arrivals N; }` whose last arrival and drain are at the horizon itself.

Each program is small and deterministic (but the closed-form one) and its outcome is worked out by hand in
the docstring; `run` runs it on the tier serQ picks and on the general engine (SERQ_SIM_TIER=general) and
requires byte-identical reports. The spec sentence a test checks is quoted; where the spec is silent the
rule is docs/language.md's and the docstring says so."""

from __future__ import annotations

import math
import statistics

import pytest
import serq_sim
from conform import _run, at, pool, run, stage
from serq_report.json import encode_json


def times(samples):
    return [t for _, t, _ in samples]


# --- (a) preemption ------------------------------------------------------------------------------------------

TWO_VICTIMS = """
pool m { cap 4; POLICY }
pool n { cap 1; }
stage s : delay;
workload { arrive batch(3); }
session {
  hold m (1) {
    branch (serial == 0) { run s (1); grow m (3); observe g = now; run s (1); }
    else { hold n (1) { observe a = now; run s (1); } run s (5); }
  }
}
run { horizon 30; }
"""


@pytest.mark.parametrize("policy, again", [
    # requeue head: s2 is preempted first and put at the head, then s1 is put ahead of it: s1 first.
    ("preempt lifo;", [(1, 2.0), (2, 3.0)]),
    ("preempt by (-admission) requeue head;", [(1, 2.0), (2, 3.0)]),
    # requeue tail: each joins the tail as a newcomer, in the order preempted: s2, then s1.
    ("preempt by (-admission) requeue tail;", [(2, 2.0), (1, 3.0)]),
])
def test_two_victims_of_one_growth_re_enter_the_queue_in_turn(monkeypatch, policy, again):
    """§3 grow: the victim "re-enters the head of the pool's queue"; pool-reference `preempt`: "requeue head
    (the default) places it first …; requeue tail treats it as a newcomer". One growth that needs two victims
    puts each where its rule says when it is preempted, so at the head the later victim goes first — vLLM's
    running loop preempts running[-1] again and again and prepends each to waiting (scheduler.py:742-813),
    which leaves them in their admission order.

    m cap 4: s0, s1, s2 hold 1 each at 0. s1 takes n at 0 and s2 waits for it, holding m. At 1 s0 grows by 3
    (free 1): the last admitted, s2, is preempted (it leaves n's queue; free 2), then s1 (it releases n;
    free 3): s0 grows at 1. At 2 s0's hold ends: the two re-executions of `hold m (1)` are admitted in their
    queue's order, and the first to run takes n at 2, the other at 3."""
    _, o = run(TWO_VICTIMS.replace("POLICY", policy), monkeypatch)
    assert times(o["g"]) == [1.0]
    assert at(o["a"]) == [(1, 0.0)] + again


ENGINE_VICTIMS = """
pool reqs { cap 5; admit via e; }
pool kv { cap 6; POLICY }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (1) { run d (0.5); grow kv (4); observe g = now; run d (2); }
  } else {
    hold reqs (1), kv (2) { observe a = now; observe u = used(kv); run e decode (4); }
    observe done = now;
  }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("policy, order", [
    ("preempt lifo;", [1, 2]),
    ("preempt by (-admission) requeue head;", [1, 2]),
    ("preempt by (-admission) requeue tail;", [2, 1]),
])
def test_two_victims_on_an_engine_re_enter_their_first_pools_queue_in_turn(monkeypatch, policy, order):
    """The same on a step engine's memory: candidates are "holders resident in the stage whose memory is
    this pool" (pool-reference `preempt`), and a victim "re-enters the hold's first pool's queue" (reqs, which
    the engine admits). kv cap 6: s0 holds 1 at 0 (kv is admitted at settle time); the engine admits s1 and
    s2 at 0 (kv 3, then 5) and starts their decodes. At 0.5 s0 grows by 4 (free 1): s2 is preempted (free 3),
    then s1 (free 5): s0 grows at 0.5; the iteration in flight gives their tokens back. Both wait at reqs
    (kv is full: 1 + 4 = 5, and 5 + 2 > 6) until s0's hold ends at 2.5; the engine's iteration at 2.5 admits
    them in their queue's order: the first reads used(kv) 2, the second 4; both decode 4 tokens, [2.5, 6.5].
    reqs: four admissions, the first two waited 0, the re-admissions 2 each (from 0.5): mean 1."""
    r, o = run(ENGINE_VICTIMS.replace("POLICY", policy), monkeypatch)
    assert times(o["g"]) == [0.5]
    assert at(o["a"]) == [(1, 0.0), (2, 0.0), (1, 2.5), (2, 2.5)]
    assert {s: u for s, t, u in o["u"] if t == 2.5} == {order[0]: 2.0, order[1]: 4.0}
    assert at(o["done"]) == [(1, 6.5), (2, 6.5)]
    assert (pool(r, "kv").preemptions, pool(r, "reqs").admissions, pool(r, "reqs").wait) == (2, 4, 1.0)


def test_a_session_holding_the_pool_twice_is_one_candidate_whose_innermost_hold_is_preempted(monkeypatch):
    """pool-reference `preempt`: "If no stage names it as memory, candidates are holders with an active hold
    scope" and lifo preempts "the last admitted"; §3: "its hold is released … and it re-enters the head of the
    pool's queue with the hold statement to execute again". The spec does not say what a session holding
    the pool in two nested holds is (docs/language.md, "A session holding a pool twice is one preemption
    candidate"): one candidate, placed by its latest admission there, whose innermost hold is preempted
    alone; its outer hold keeps its allocation.

    m cap 4: s0 holds 1 at 0; s1 holds 1 (outer) and 1 (inner) at 0. At 1 s0 grows by 2 (free 1): s1's inner
    hold is preempted (free 2) and s0 grows: used 4 (s0 3, s1's outer 1). s1 re-executes the inner hold,
    at the head; it fits when s0's hold ends at 2."""
    r, o = run("""
pool m { cap 4; preempt lifo; }
stage s : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) { run s (1); grow m (2); observe g = now; observe u = used(m); run s (1); } }
  else { hold m (1) { observe outer = now; hold m (1) { observe inner = now; run s (3); } } }
}
run { horizon 20; }
""", monkeypatch)
    assert times(o["g"]) == [1.0] and [u for _, _, u in o["u"]] == [4.0]
    assert times(o["outer"]) == [0.0] and times(o["inner"]) == [0.0, 2.0]
    m = pool(r, "m")
    # used: 3 on [0,1], 4 on [1,2], 2 on [2,5]: 13 / 20; admissions s0, s1 twice, s1's inner again
    assert (m.preemptions, m.admissions, m.used) == (1, 4, 0.65)


def test_a_session_holding_the_pool_twice_is_placed_by_its_latest_admission(monkeypatch):
    """The same rule under `preempt by (admission)`, whose key is "its place in the candidates' admission
    order: … the order the pool admitted its holders" (pool-reference `preempt`): s0 holds 1 at 0, s1 holds 1
    at 0, s0 holds 1 more (nested) at 1 and grows by 1 there (m cap 3, full). Placed by its latest
    admission, s0 comes after s1: s1's place is 0, s0's 1, and the least key is s1's, which is preempted
    (placed by its first admission s0 would have been, and would have preempted itself). s0 grows at 1;
    s1 waits at the head until s0's holds end at 2, then holds m for 2.5."""
    r, o = run("""
pool m { cap 3; preempt by (admission); }
stage s : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) { run s (1); hold m (1) { grow m (1); observe g = now; run s (1); } } }
  else { hold m (1) { observe b = now; run s (2.5); } }
}
run { horizon 5; }
""", monkeypatch)
    assert times(o["g"]) == [1.0] and times(o["b"]) == [0.0, 2.0]
    assert (pool(r, "m").preemptions, pool(r, "m").admissions) == (1, 4)


def test_a_victims_lease_on_the_pool_stays(monkeypatch):
    """§3: a lease keeps its allocation "neither evictable nor a preemption victim", and a preemption releases
    the victim's holds down to the preempted one. s0 leases 2 of m (cap 6) from 1 and holds 1 more; s1 holds
    3 from 1.5 (used 6). At 2 s0 grows by 3: its lease is no candidate, s1 is preempted and s0 grows (used
    2 + 4). At 3 s0's hold ends caching 4 (its allocation; its own prefix is now that entry, c = 4), and s1
    is admitted again, evicting it (2 + 3 + 4 > 6). At 4 `release m;` (no hold of m) ends the lease, whose
    `cache (2)` applies: c2 = 2."""
    r, o = run("""
pool m { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) { run d (1); } cache (2) lease m (inf);
    hold m (1) { observe u = used(m); run d (1); grow m (3); observe g = now; run d (1); } cache (4);
    observe c = cachedin(m);
    run d (1);
    release m;
    observe c2 = cachedin(m);
  } else { run d (1.5); hold m (3) { observe b = now; run d (3); } }
}
run { horizon 20; }
""", monkeypatch)
    assert o["u"] == [(0, 1.0, 3.0)] and times(o["g"]) == [2.0] and times(o["b"]) == [1.5, 3.0]
    assert o["c"] == [(0, 3.0, 4.0)] and o["c2"] == [(0, 4.0, 2.0)]
    m = pool(r, "m")
    assert (m.preemptions, m.evicted_entries, m.evicted_units) == (1, 1, 4.0)


def test_a_victims_prefix_that_the_growth_evicts_spills_and_lands_after_the_write(monkeypatch):
    """§3: the victim's "hold is released with its computed prefix cached"; the grower's units are then
    allocated, and "Other entries are evicted in the pool's order until allocations and cache fit"; a spill
    writes the evicted prefix to the tier, usable there when the write completes (docs/language.md, "A
    spilled prefix is usable when its write completes").

    kv cap 4: s0 holds 1, s1 holds 2 and loads 2 (position 2) at 0. At 1 s0 grows by 3: s1 is preempted
    and caches 2 (used 1, cached 2); s0's 3 units do not fit beside that entry, which is evicted and
    spilled (a write of 2 on the link, [1, 3]). s1 waits at the head with computed 2; at 2 s0's hold ends
    caching 4, and s1's admission evicts that entry (2 + 4 > 4), spilled as well ([2, 6]). s1 reads
    cachedin(tier) 0 at 2 (its write has not landed) and 2 at 7."""
    r, o = run("""
pool kv { cap 4; preempt lifo; spill tier via link (size) when (1); }
pool tier { cap 10; }
stage link : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (1) { run d (1); grow kv (3); observe g = now; run d (1); } cache (4);
  } else {
    hold kv (2) {
      observe k = computed; observe ct = cachedin(tier);
      load kv (2); run d (5);
      observe ct2 = cachedin(tier);
    } cache (2);
  }
}
run { horizon 20; }
""", monkeypatch)
    assert times(o["g"]) == [1.0]
    assert o["k"] == [(1, 0.0, 0.0), (1, 2.0, 2.0)]
    assert o["ct"] == [(1, 0.0, 0.0), (1, 2.0, 0.0)] and o["ct2"] == [(1, 7.0, 2.0)]
    kv, tier = pool(r, "kv"), pool(r, "tier")
    assert (kv.preemptions, kv.evicted_entries, kv.evicted_units, kv.spills) == (1, 2, 6.0, 2)
    # kv: used 3 on [0,1], 4 on [1,2], 2 on [2,7]; cached 2 from 7 (the two entries lived no time); tier:
    # 2 pending from 1, 6 from 2 (the written units take their room at the eviction)
    assert (kv.used, kv.cached, tier.cached) == (0.85, 1.3, 5.5)
    assert stage(r, "link").completions == 2


# --- (b) holds at their edges ----------------------------------------------------------------------------------


def test_a_hold_of_zero_units_waits_behind_a_blocked_head_and_is_a_holder(monkeypatch):
    """§3: "the first that does not fit blocks the rest (head-of-line blocking)", whatever the rest needs: a
    hold of 0 units, which fits a full pool (used + 0 <= cap), waits behind a head that does not fit. And
    "holders" counts the allocations held (docs/language.md): a hold of 0 is one. m cap 2: s0 holds 2 over
    [0, 2]; s1 (1 unit) and s2 (0 units) join at 0 in that order; both are admitted at 2, when s0's hold
    ends. holders: 1 over [0,2], 2 over [2,3]: 4 / 20; used 2·2 + 1·1 = 5 / 20."""
    r, o = run("""
pool m { cap 2; }
stage s : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (2) { run s (2); } }
  else { branch (serial == 1) { hold m (1) { observe a1 = now; run s (1); } }
  else { hold m (0) { observe a2 = now; observe h = holders(m); run s (1); } } }
}
run { horizon 20; }
""", monkeypatch)
    assert times(o["a1"]) == [2.0] and times(o["a2"]) == [2.0] and [h for _, _, h in o["h"]] == [2.0]
    m = pool(r, "m")
    assert (m.holders, m.used, m.admissions) == (0.2, 0.25, 3)


def test_end_inside_nested_holds_on_one_pool_leaves_the_outer_holds_prefix(monkeypatch):
    """§3: "end releases every hold"; docs/language.md: `end;` releases them "as the scope's end would", and
    a session has one prefix of its own per pool, the one its latest release left. The scopes end innermost
    first, so the outer hold's `cache (1)` is the prefix that stays, not the inner hold's `cache (3)`: after
    s0 ends at 1, m has 1 unit cached for the rest of the run (19 / 20)."""
    r, _ = run("""
pool m { cap 10; }
stage s : delay;
workload { arrive batch(1); }
session { hold m (1) { hold m (3) { run s (1); end; } cache (3); } cache (1); }
run { horizon 20; }
""", monkeypatch)
    m = pool(r, "m")
    assert (m.cached, m.used) == (0.95, 0.2)


def test_a_rejected_inner_hold_ends_the_session_and_its_outer_hold_caches(monkeypatch):
    """§3: "A request that can never fit … is rejected: the session ends", and a session's end "releases every
    hold" caching per its clause. s0 holds 3 of n at 0 and, at 1, a hold of 3 on m (cap 2) that can never
    fit: it is rejected, s0 ends (nothing after the hold runs), and its hold of n caches min(2, 3) = 2 at 1.
    s1 at 2 holds all of n (4): the entry is evicted."""
    r, o = run("""
pool n { cap 4; }
pool m { cap 2; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold n (3) { run d (1); hold m (3) { observe never = now; } observe never2 = now; } cache (2);
    observe never3 = now;
  } else { run d (2); hold n (4) { observe a = now; } cache (0); }
}
run { horizon 20; }
""", monkeypatch)
    assert o["never"] == o["never2"] == o["never3"] == [] and times(o["a"]) == [2.0]
    n, m = pool(r, "n"), pool(r, "m")
    assert (m.rejections, m.admissions, r.result.ended) == (1, 0, 2)
    assert (n.cached, n.evicted_entries, n.evicted_units) == (0.1, 1, 2.0)


# --- (c) queue by and waited ------------------------------------------------------------------------------------

NO_TIMER = """
POOL
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold P (2) { run d (10); } }
  else { branch (serial == 3) { run d (T3); }
  else { run d (serial == 1 ? 0.5 : 2); hold P (3 - serial) { observe a = now; BODY } } }
}
run { horizon 20; }
"""

KEYS = "queue by (waited < 3 ? 0 : 1, serial);"


@pytest.mark.parametrize("where", ["settle", "engine"])
@pytest.mark.parametrize("t3, admitted", [
    # s3's run ends at 4: that event's admission attempt finds s2 at the head
    ("4", [(2, 4.0), (1, 10.0)]),
    # no event in [3.5, 5): at 10 both are in lane 1 and serial picks s1; s2 fits beside it (2 + 1 <= 3)
    ("11", [(1, 10.0), (2, 10.0)]),
])
def test_a_waited_key_changes_the_head_only_at_an_admission_attempt(monkeypatch, where, t3, admitted):
    """pool-reference `queue`: "Selection occurs at admission attempts; there is no implicit aging timer"; §3
    Waiting selection: "Selection creates no timer events; it runs when the scheduler attempts admission".
    Keys (waited < 3 ? 0 : 1, serial), cap 3: s0 holds 2 over [0, 10]; s1 joins at 0.5 wanting 2 (does not
    fit), s2 at 2 wanting 1 (fits, but s1 is the head and blocks it). At 3.5 s1's lane becomes 1 and s2, in
    lane 0 until 5, is the head — but nothing attempts an admission then. s3's run ending at 4 is an event;
    ending at 11, none comes before s0's release at 10. On an engine (admit via e, s0 off the engine) the
    engine is idle, and an iteration that would schedule nothing is none, so the same holds there."""
    if where == "settle":
        src = NO_TIMER.replace("POOL", f"pool m {{ cap 3; {KEYS} }}").replace("P (", "m (")
        src = src.replace("BODY", "run d (1);")
    else:
        src = NO_TIMER.replace("POOL", f"pool reqs {{ cap 3; admit via e; {KEYS} }}\nstage e : step {{ budget 8; "
                                       "cost 1; }").replace("P (", "reqs (")
        src = src.replace("BODY", "run e decode (1);")
    _, o = run(src.replace("T3", t3), monkeypatch)
    assert sorted(at(o["a"]), key=lambda x: (x[1], x[0])) == admitted


LCFS = """
pool m { cap 1; QUEUE }
stage d : delay;
workload { arrive poisson(0.4); }
session { set t0 = now; hold m (1) { observe w = now - t0; run d (~exp(1)); } }
run { horizon HORIZON; warmup 100; seed 1; }
"""


def _batch_means(xs: list[float]) -> tuple[float, float]:
    """The mean of 20 batch means and its 95 % half-width (Student t, 19 degrees of freedom)."""
    b = len(xs) // 20
    means = [math.fsum(xs[i * b:(i + 1) * b]) / b for i in range(20)]
    return statistics.fmean(means), 2.093 * statistics.stdev(means) / math.sqrt(20)


@pytest.mark.timeout(120)
def test_queue_by_waited_alone_is_lcfs_and_meets_the_m_m_1_closed_forms(monkeypatch):
    """`queue by (waited)` admits the hold that has waited least: last come, first served (non-preemptive),
    since "waited supplies seconds since the current hold entered the queue" and the least key goes first.
    On an M/M/1 queue (Poisson 0.4, exponential service of mean 1, one unit of m) LCFS is work-conserving and
    blind to sizes, so its mean wait is FCFS's, rho / (1 - rho) = 2/3, and P(no wait) = 1 - rho = 0.6; but a
    waiting customer's wait is a busy period started by the residual service, so E[W²] = rho · 2 / (1 -
    rho)³ = 3.704, FCFS's 2 rho / (1 - rho)² = 2.222 over 1 - rho. The batch-means CIs (20 batches, seed
    1, ~100 000 waits) must cover each and be narrow, and the second moment's must exclude FCFS's.
    `queue by (-waited)` is FCFS: the same waits as `queue fifo`, sample for sample."""
    rho = 0.4
    src = LCFS.replace("QUEUE", "queue by (waited);")
    r = _run(src.replace("HORIZON", "250000"), monkeypatch, "")
    w = r.observe("w").values.tolist()
    assert len(w) > 95_000
    m1, h1 = _batch_means(w)
    m2, h2 = _batch_means([x * x for x in w])
    p0, h0 = _batch_means([1.0 if x == 0 else 0.0 for x in w])
    ew, ew2, ew2_fcfs = rho / (1 - rho), 2 * rho / (1 - rho) ** 3, 2 * rho / (1 - rho) ** 2
    assert abs(m1 - ew) <= h1 < 0.05 * ew, (m1, h1)
    assert abs(m2 - ew2) <= h2 < 0.1 * ew2, (m2, h2)
    assert m2 - h2 > ew2_fcfs
    assert abs(p0 - (1 - rho)) <= h0 < 0.02, (p0, h0)
    # the reported mean is the samples'
    assert math.isclose(r.result.observes["w"].mean, statistics.fmean(w), rel_tol=1e-12)
    # the two tiers agree, and -waited is FIFO's order
    short = src.replace("HORIZON", "3000")
    assert encode_json(_run(short, monkeypatch, "")) == encode_json(_run(short, monkeypatch, "general"))
    fifo = _run(LCFS.replace("QUEUE", "").replace("HORIZON", "3000"), monkeypatch, "")
    oldest = _run(LCFS.replace("QUEUE", "queue by (-waited);").replace("HORIZON", "3000"), monkeypatch, "")
    assert oldest.observe("w").values.tolist() == fifo.observe("w").values.tolist()


# --- (d) reserve held on an engine ----------------------------------------------------------------------------

ENGINE_RESERVE = """
pool reqs { cap 10; admit via e; }
pool kv { cap 12; HELD }
stage e : step { budget 4; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (min(3, budget_left(e))) reserve (8) {
    observe a = now;
    run e prefill (3) growing kv;
    run e decode (5) growing kv;
  }
  observe done = now;
}
run { horizon 40; }
"""


def test_reserve_held_on_an_engines_memory_keeps_growing_runs_from_deadlock(monkeypatch):
    """pool-reference `reserve held`: "each live hold's unallocated reservation also counts against later
    admissions and growth by other holds … the growing hold can use its own reservation". Two requests of
    3 prompt and 5 output tokens reserve 8 each on kv (cap 12); the engine's budget is 4, cost 1.

    With `reserve held`: at 0 s0 is admitted (3 allocated, 5 unallocated); s1 would need 3 + 5 + 8 = 16 > 12
    and waits. s0 prefills [0, 1] and decodes [1, 6], growing into its own reservation a block of 1 per
    token (3 → 8); at 6 its hold ends and s1 runs the same, [6, 12]. kv used: 3, 4, …, 8 over six seconds
    each time: 66 / 40.

    Without it the reservation is checked at admission only: s1 is admitted at 0 with the budget s0 left
    (1 unit: 3 + 8 <= 12), and the two grow until kv is full (12 at 4, s1 stalled there, s0 at 5):
    preempt none leaves both growers waiting for ever. kv used 4, 7, 9, 11 over [0, 4], then 12: 463 / 40."""
    r, o = run(ENGINE_RESERVE.replace("HELD", "reserve held;"), monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 6.0)] and at(o["done"]) == [(0, 6.0), (1, 12.0)]
    assert pool(r, "kv").used == 66 / 40 and pool(r, "reqs").wait == 3.0
    r, o = run(ENGINE_RESERVE.replace("HELD", ""), monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 0.0)] and o["done"] == []
    assert pool(r, "kv").used == 463 / 40 and r.result.ended == 0
    assert any("wait for ever" in n and "2 growing at kv" in n for n in r.result.notes)


# --- (e) run { arrivals } at the horizon --------------------------------------------------------------------

@pytest.mark.parametrize("work, ok", [("0", True), ("0.5", False)])
def test_the_last_arrival_and_the_drain_at_the_horizon_itself(monkeypatch, work, ok):
    """§2: "horizon bounds both arrival generation and draining; failure to generate N arrivals or drain every
    session by that deadline is an error"; docs/language.md: "Events at the horizon itself happen". renewal(5)
    with arrivals 2 and horizon 10: the second arrival is at 10 exactly. With sessions of no duration the
    run has its 2 arrivals and drains at 10, by the deadline: end 10. With sessions of 0.5 the second is live
    at the deadline: the error."""
    src = f"""
stage s : delay;
workload {{ arrive renewal(5); }}
session {{ observe t = now; run s ({work}); }}
run {{ horizon 10; arrivals 2; }}
"""
    if ok:
        r, o = run(src, monkeypatch)
        assert times(o["t"]) == [5.0, 10.0] and (r.result.end, r.result.arrivals, r.result.ended) == (10.0, 2, 2)
    else:
        for tier in ("", "general"):
            with pytest.raises(serq_sim.SimError, match="still live at the horizon"):
                _run(src, monkeypatch, tier)



# --- exclusive prefill and the gate after a preemption -----------------------------------------------------------


def test_exclusive_prefill_admits_nothing_in_an_iteration_whose_tentative_decode_preempted(monkeypatch):
    """§3 serve exclusive prefill: "resident decodes are tentative: while budget is left, a waiting prefill
    that fits can replace them … Displaced decodes keep any newly acquired allocation but neither execute nor
    advance computed KV. Ordinary fit and no-admission-after-preemption gates remain." kv cap 6, block 2,
    preempt lifo; each request prefills 2 and decodes 3, growing (a block at positions 2 and 4).

    0: s0 admitted, its prefill alone. 1: s0's tentative decode grows to 4; s1 fits (4 + 2) and displaces it
    (u = 6 at s1's admission), prefill alone. 2: both decode; s1's growth to 4 (8 > 6) preempts s1 itself:
    s0 alone decodes and the iteration admits nothing, though s2 (waiting since 1.5) would have displaced
    the decodes. 3: s1 is admitted again at the head (computed 2; 4 + 2 = 6) and displaces s0's decode. 4:
    s1 preempts itself again (s0 decodes). 5: s0 grows to 6, s1 does not fit; s0 ends at 6. 6: s1
    prefills alone; 7: s2 displaces s1's decode; 8 and 10 s2 preempts itself, 9 it is admitted again; s1
    ends at 12, s2 prefills at 12 and ends at 16. Four preemptions, two sessions stuck (preempted twice at
    position 2); every execution of the hold observes its admission."""
    r, o = run("""
pool reqs { cap 4; admit via E; }
pool kv { cap 6; block 2; preempt lifo; }
stage d : delay;
stage E : step { budget 8; cost 1; memory kv; serve exclusive prefill; }
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (1.5); }
  hold reqs (1), kv (2) {
    observe a = now; observe u = used(kv);
    run E prefill (2) growing kv; run E decode (3) growing kv;
  }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 1.0), (1, 3.0), (1, 6.0), (2, 7.0), (2, 9.0), (2, 12.0)]
    assert [u for _, _, u in o["u"]] == [2.0, 6.0, 6.0, 2.0, 6.0, 6.0, 2.0]
    assert at(o["done"]) == [(0, 6.0), (1, 12.0), (2, 16.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.admissions) == (4, 2, 7)


# --- a closed workload that never lets time pass ---------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n, session, first, where", [
    # a session that takes no time: it ends at 0 and its replacement too, for ever
    (1, "run d (0);", 100_100, "4:12"),
    # a hold that can never fit (3 > cap 2) is rejected and its session ends: the same at every replacement;
    # the error is at the hold (line 5, column 11: test_known_defects_round49_closed_rejected.py)
    (3, "hold m (3) { run d (1); }", 100_300, "5:11"),
])
def test_a_closed_workload_replacing_sessions_at_one_instant_for_ever_is_an_error(monkeypatch, n, session, first,
                                                                                  where):
    """§2 `arrive closed (n)`: a session that ends is replaced at once (serq_ir: "each that ends is replaced at
    once"). A session that ends at the instant it started is replaced by one that does the same: the run
    never leaves its instant, and since a spawn is no event, no other guard saw it (the run spun at t=0 for
    ever, on both tiers, with --max-events as well). docs/simulator.md: more than 100 000 + 100·n
    replacements at one instant is a run-time error naming the time and the session whose end crossed the
    limit (sessions 0 … n-1 are the population, each replacement the next serial)."""
    src = f"""
pool m {{ cap 2; }}
stage d : delay;
workload {{ arrive closed({n}); }}
session {{ {session} }}
run {{ horizon 10; }}
"""
    limit = 100_000 + 100 * n
    for tier in ("", "general"):
        with pytest.raises(serq_sim.SimError) as e:
            _run(src, monkeypatch, tier)
        # at the workload's `arrive` (line 4, column 12 of the source), or at the hold that rejects
        if where == "4:12":
            said = ("the closed workload replaced more than {limit} ended sessions at one instant without simulated "
                    "time passing (sessions ended at the instant they started, having reached no run, hold or grow "
                    "that took time or met a hold rejected as never fitting, and each was replaced at once)")
        else:
            said = ("the hold asks 3 units of pool m, above its capacity 2, so it is rejected as never fitting and "
                    "its session ends at the instant it started; the closed workload replaced more than {limit} "
                    "ended sessions at one instant without simulated time passing, the last of them ended by this "
                    "rejection (give the pool a larger capacity, or the hold an amount within it)")
        assert str(e.value).splitlines()[0] == (
            f"<source>:{where}: error: at t=0, session {first}: no progress: " + said.format(limit=limit))


def test_a_closed_population_ending_together_is_replaced_once_each(monkeypatch):
    """The guard does not touch a closed population whose members end at one instant: closed(3) with runs of
    1 replaces the three at 1, 2, … 10 (the horizon): 3 + 30 arrivals, the 30 ended counted, and the
    replacements at 10 run their first statement there."""
    r, o = run("""
stage d : delay;
workload { arrive closed(3); }
session { observe t = now; run d (1); }
run { horizon 10; }
""", monkeypatch)
    assert (r.result.arrivals, r.result.ended) == (33, 30)
    assert times(o["t"]) == [float(t) for t in range(11) for _ in range(3)]


# --- the settle follows every event ------------------------------------------------------------------------------


def test_the_settle_follows_each_event_not_each_instant(monkeypatch):
    """§3 Configuration: "After every event the interpreter settles: it runs every ready session, then retries
    growers and admissions …, until nothing changes", and "Events at one instant: the order they were
    scheduled". Two events end at 2: s0's run (scheduled at 0) and s2's second run (scheduled at 1). s0's
    comes first; its settle releases m, admits s1 (waiting since 0.5), and s1, ready, runs on to take n at
    2, before s2's event is taken: s2 finds n held and waits until 3. (Were the instant's events all taken
    before one settle, s2 would have joined n's queue first.)"""
    _, o = run("""
pool m { cap 1; }
pool n { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (2); } }
  else { branch (serial == 1) { run d (0.5); hold m (1) { hold n (1) { observe b = now; run d (1); } } }
  else { run d (1); run d (1); hold n (1) { observe c = now; run d (1); } } }
}
run { horizon 10; }
""", monkeypatch)
    assert o["b"] == [(1, 2.0, 2.0)] and o["c"] == [(2, 3.0, 3.0)]


# --- a step engine whose iterations take no time ------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_iterations_of_no_time_are_events_the_no_progress_guard_counts(monkeypatch):
    """§3 step: "The iteration advances the clock by C"; docs/simulator.md, "No progress": a run whose time
    does not advance over more than STALL_EVENTS (+ STALL_PER_SESSION per live session) events is a run-time
    error. With cost 0 a decoder of 10^15 tokens makes iterations at t=0 for as long. The per-job planning
    (SERQ_SIM_TIER=general) met the guard; the lazy planning (a decoder with a whole number of tokens is
    lazy) took them as quiet rounds inside one planning (no event, no guard): 10^15 rounds at t=0. Rounds of no time now go through the event loop on both (the
    guard lowered here to 1000 events + 1000 per live session, met at the tick of 20 000 events)."""
    import serq_sim.engine as engine

    monkeypatch.setattr(engine, "STALL_EVENTS", 1000)
    monkeypatch.setattr(engine, "STALL_PER_SESSION", 1000)
    src = """
stage e : step { budget 1; cost 0; }
workload { arrive batch(1); }
session { run e decode (1e15); }
run { horizon 10; }
"""
    for tier in ("", "general"):
        with pytest.raises(serq_sim.SimError) as e:
            _run(src, monkeypatch, tier)
        # the step stage's own guard (StepStage._no_time): 1000 + 1000 for the one live session, in jobs
        # served by iterations of no time (one an iteration), before the event guard's tick of 20 000 events
        assert str(e.value).splitlines()[0] == (
            "<source>:4:11: error: at t=0, session 0: no progress: the iterations of stage e take no time (its "
            "cost is 0, or below the clock's precision at this time) and served more than 2000 jobs at one "
            "instant without simulated time passing: its residents are the run at <source>:4:11 of session 0")
    # finite work at cost 0: 50 iterations at t=0 (then the decoder's session ends), the same on both
    r, o = run(src.replace("decode (1e15);", "decode (50); observe t = now;"), monkeypatch)
    assert o["t"] == [(0, 0.0, 0.0)] and stage(r, "e").iterations == 50
