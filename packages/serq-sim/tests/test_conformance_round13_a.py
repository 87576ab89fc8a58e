"""Conformance cases whose outcome follows from language.txt §2-§3, pool-reference.txt and
program-reference.txt by hand, on the pool and workload constructs travelled least and where they meet:
a grower that is its own victim under `preempt by … requeue tail` in a queue keyed by an attribute less
`waited`, a hold under `reserve held` that takes a lease's KV by `transfer` and grows within (or past) its
own reservation, rejection after block rounding, releases in nested holds after a `load`, an offload tier
written by spills (one evicted on its way) and read back through a transfer, a victim preempted inside a
transfer, expression definitions given from outside, the prefix-cache hit rate of a record table, a
closed population's turns with a `choose` over a family and gauges beside observes, an ordered trace
under `arrivals` and a warm-up, what the workload's `turn` block reads, and the figures the report
derives from each (a stage's present, utilisation and service; a pool's time averages, wait, admissions,
evictions, spills, preemptions and stuck).

Every case runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and every observe's
samples must be the same bytes (conform.run).

Conventions: `stage d : delay;` runs every job at rate 1 without waiting, so `run d (w)` lasts w; a
`ps(1)` stage with one job runs it at rate 1. The engines' cases are in test_conformance_round13_b.py,
the independent models of pools in test_conformance_round13_c.py.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import close, pool, run, stage
from serq_report.json import encode_json


def by_session(obs, name):
    """{session: [values]} of an observe's samples, in time order."""
    out: dict = {}
    for s, _t, v in obs[name]:
        out.setdefault(s, []).append(v)
    return out


# --- preempt by … requeue tail, queue by an attribute less waited -----------------------------------------

GROWER_VICTIM = """
pool m { cap 4; preempt by (prio) requeue tail; queue by (prio - waited, serial); }
stage d : delay;
workload { arrive batch(4); init { set prio = serial == 0 ? 1 : serial == 1 ? 5 : serial == 2 ? 3 : 4; } }
session {
  branch (serial == 0) { hold m (2) { observe a = now; run d (1); grow m (2); run d (3); } }
  else { branch (serial == 1) { hold m (2) { observe a = now; run d (10); } }
  else { run d (0.5); hold m (2) { observe a = now; run d (3); } } }
  end;
}
run { horizon 100; }
"""


def test_a_grower_that_is_its_own_victim_re_enters_at_the_tail_with_waited_reset(monkeypatch):
    """pool-reference `preempt`: "Preempt the candidate with the least keys … the grower can be its own
    victim"; "requeue tail treats it as a newcomer: … queue by places it by its keys, with waited reset
    to 0"; `queue by` "reevaluates keys for every waiting hold before each admission attempt".

    cap 4; prio s0 1, s1 5, s2 3, s3 4. At 0 s0 and s1 hold 2 each; s2 and s3 join at 0.5 (keys
    3 - waited, 4 - waited). s0 grows by 2 at each second after its admission, and with the least prio it
    is its own victim every time: its 2 go back and it re-joins with waited 0, key 1.
      at 1: keys s2 2.5, s3 3.5, s0 1: s0 again (a = 1); at 2: s2 1.5, s3 2.5, s0 1: s0 (a = 2);
      at 3: s2 0.5, s3 1.5, s0 1: s2 (a = 3), which holds to 6;
      at 6: s3 4 - 5.5 = -1.5, s0 1 - 3 = -2: s0 (a = 6); at 7 it is the victim again (s1's prio 5):
      s3 -2.5, s0 1: s3 (a = 7) to 10; at 10 s1 and s3 leave, s0 (a = 10) grows at 11 and ends at 14.
    Preemptions at 1, 2, 3, 7; admissions 8; queue waits 0, 0, 0, 0, 2.5, 3, 6.5, 3 (mean 15 / 8);
    s0 preempted at 2 at the position of its preemption at 1 is stuck (one session)."""
    rep, obs = run(GROWER_VICTIM, monkeypatch)
    assert by_session(obs, "a") == {0: [0.0, 1.0, 2.0, 6.0, 10.0], 1: [0.0], 2: [3.0], 3: [7.0]}
    m = pool(rep, "m")
    assert (m.admissions, m.preemptions, m.stuck, m.rejections) == (8, 4, 1, 0)
    assert close(m.wait, 15 / 8)
    # over [0, 100]: queue 2 on [0.5, 3) and [3, 6), 1 on [6, 7) and [7, 10): 15; used 4 on [0, 10), 2 on
    # [10, 11), 4 on [11, 14): 54; holders 2 on [0, 10), 1 on [10, 14): 24
    assert (close(m.queue, 0.15), close(m.used, 0.54), close(m.holders, 0.24)) == (True, True, True)
    # under requeue head the victim goes back ahead of the keys and is admitted again at once, every
    # second from 0 to 9. At 10 s1's end (scheduled at 0) comes before s0's growth (scheduled at 9): s2
    # (key 3 - 9.5) is admitted, then s0 is the victim of its growth again (prio 1 < 3) until s2 leaves at
    # 13, where s3 comes in the same way, and s0 grows at 16 when s3 has left: preempted at 1 … 15
    rep, obs = run(GROWER_VICTIM.replace("requeue tail", "requeue head"), monkeypatch)
    a = by_session(obs, "a")
    assert (a[0], a[1], a[2], a[3]) == ([float(t) for t in range(16)], [0.0], [10.0], [13.0])
    m = pool(rep, "m")
    assert (m.admissions, m.preemptions, m.stuck) == (19, 15, 1)


def test_a_pools_counts_after_a_warm_up_and_stuck_over_the_whole_run(monkeypatch):
    """§3 Statistics: a pool's time averages over [warmup, end], the mean queue wait, admissions and
    preemptions after the warm-up; docs/simulator.md: stuck counts a session over the whole run.

    GROWER_VICTIM (above) after a warm-up of 2.5: preemptions at 3 and 7 (not 1, 2); admissions s2 at 3
    (waited 2.5), s0 at 6 (3), s3 at 7 (6.5), s0 at 10 (3); s0, stuck at 2, still counts. Over [2.5, 100]
    (97.5): queue 2 on [2.5, 6), 1 on [6, 10): 11; used 4 on [2.5, 10), 2 on [10, 11), 4 on [11, 14): 44;
    holders 2 on [2.5, 10), 1 on [10, 14): 19."""
    rep, _obs = run(GROWER_VICTIM.replace("run { horizon 100; }", "run { horizon 100; warmup 2.5; }"),
                    monkeypatch)
    m = pool(rep, "m")
    assert (m.admissions, m.preemptions, m.stuck, close(m.wait, 15 / 4)) == (4, 2, 1, True)
    assert (close(m.queue, 11 / 97.5), close(m.used, 44 / 97.5), close(m.holders, 19 / 97.5)) == (True,) * 3


# --- reserve held, a lease taken by a transfer, a growth within the reservation ---------------------------

RESERVED_TRANSFER = """
pool p { cap 8; }
pool q { cap 10; reserve held; }
stage d : delay;
stage link : ps(1);
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold p (4) { run d (1); } cache (4) lease p (inf);
    hold q (2) reserve (6) {
      observe u0 = used(q);
      transfer (2) from p to q (2);
      observe u1 = used(q) * 100 + cachedin(p) * 10 + used(p);
      grow q (3);
      observe u2 = used(q);
      run d (4);
    } cache (5);
    observe c = cachedin(q);
  } else {
    run d (serial == 1 ? 1.5 : 2.5);
    hold q (serial == 1 ? 4 : 2) { observe a = now; run d (2); }
  }
  end;
}
run { horizon 100; }
"""


def test_a_reserved_hold_takes_a_leases_kv_and_grows_within_its_own_reservation(monkeypatch):
    """pool-reference `reserve held`: u_i = max(0, r_i - a_i); "A new reservation r requires
    used + Σ u_i + r <= cap. Growth by d requires used + Σ_{i≠grower} u_i + d <= cap"; §2: transfer (X)
    from P to Q (n) is `run link (X); load Q (n); release P;`, and a lease ends at the session's release,
    "and then cache applies"; §3: "min(ℓ, computed) units stay cached … (computed is the allocation, or
    the position a growing run or a load reached)".

    s0 holds p (4) over [0, 1) and leases it. At 1 it holds q (2) reserve (6): used 2, u = 4. The link
    takes 2 s. s1 asks q (4) at 1.5: 2 + 4 + 4 = 10 <= 10, admitted. At 3 the load makes s0's position 2
    and the release ends the lease: p caches 4 (u1 = 6·100 + 4·10 + 0). s0 grows by 3: 6 + 0 (s1 has
    all it reserved) + 3 <= 10 (u2 = 9), leaving u = 1. s2 asks 2 at 2.5: 6 + 4 + 2 and then 9 + 1 + 2
    are above 10; at 3.5 s1 leaves 4: 5 + 1 + 2 <= 10, admitted. s0's scope ends at 7 and caches
    min(5, 2): the position its load reached, not the allocation of 5 the grow made."""
    rep, obs = run(RESERVED_TRANSFER, monkeypatch)
    got = {k: [v for _s, _t, v in obs[k]] for k in ("u0", "u1", "u2", "c")}
    assert got == {"u0": [2.0], "u1": [640.0], "u2": [9.0], "c": [2.0]}
    assert by_session(obs, "a") == {1: [1.5], 2: [3.5]}
    p, q = pool(rep, "p"), pool(rep, "q")
    # p: 4 used (held, then leased) on [0, 3), cached from 3; a lease is a holder
    assert (close(p.used, 0.12), close(p.cached, 3.88), close(p.holders, 0.03)) == (True, True, True)
    # q: used 2 on [1, 1.5), 6 to 3, 9 to 3.5, 7 to 5.5, 5 to 7: 36; cached 2 from 7; s2 waited 1
    assert (close(q.used, 0.36), close(q.cached, 1.86), close(q.queue, 0.01), close(q.wait, 1 / 3)) == (
        True, True, True, True)
    assert close(stage(rep, "link").utilisation, 0.02)
    # without the transfer the hold computed no position: it caches its allocation, 5
    _rep, obs = run(RESERVED_TRANSFER.replace("transfer (2) from p to q (2);", "run d (2); release p;"),
                    monkeypatch)
    assert [v for _s, _t, v in obs["c"]] == [5.0]


# --- an offload tier written by a spill and read back ------------------------------------------------------

OFFLOAD = """
pool tier { cap 20; }
pool kv { cap 6; evict lru; spill tier via pcie (size / 2) when (size >= 3); }
stage d : delay;
stage pcie : ps(1);
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    run d (serial);
    hold kv (4) { run d (1); } cache (serial == 0 ? 4 : 2);
    run d (10 - serial);
    observe t = cachedin(tier) * 10 + cachedin(kv);
    hold tier (x) reuse (4) at admission (x = min(cachedin(tier), 4)) {
      set c = cached;
      hold kv (c) reuse (0) { transfer on pcie (c / 4) from tier to kv (c); observe p = now; } cache (c);
    } cache (0);
    observe back = cachedin(kv) * 10 + cachedin(tier);
  } else {
    run d (3);
    hold kv (6) { run d (1); }
  }
  end;
}
run { horizon 100; }
"""


def test_an_offload_tier_written_by_a_spill_is_read_back_through_a_transfer(monkeypatch):
    """pool-reference `spill`: the evicted prefix is written to TIER with `work` on LINK when `pred` is
    non-zero, both reading `size`; §3: "Other entries are evicted in the pool's order until allocations
    and cache fit"; a hold with cache consumes at most ρ of its own prefix (cached := what it consumed);
    transfer … from P to Q (n) loads Q and releases P, caching per P's hold (cache (0) keeps nothing).

    kv cap 6. s0 caches 4 at 1; s1 asks 4 at 1: 4 + 4 > 6, so s0's entry goes (lru, the only one),
    4 >= 3: spilled, 2 s on pcie, landing at 3. s1 caches 2 at 2; s2 asks 6 at 3: s1's 2 go, 2 < 3, not
    spilled. At 11 s0 finds 4 in the tier and none in kv, s1 nothing. s0 holds the tier's 4 (cached 4),
    holds kv (4) without reading its prefix, reads the 4 back over pcie in 1 s (p = 12) and caches them
    in kv; the tier's hold, released by the transfer with cache (0), keeps nothing there. s1 reads back
    nothing: every amount 0, its transfer of no work done at once."""
    rep, obs = run(OFFLOAD, monkeypatch)
    assert by_session(obs, "t") == {0: [40.0], 1: [0.0]}
    assert obs["p"] == [(1, 11.0, 11.0), (0, 12.0, 12.0)]
    assert by_session(obs, "back") == {0: [40.0], 1: [0.0]}
    kv, tier = pool(rep, "kv"), pool(rep, "tier")
    assert (kv.admissions, kv.evicted_entries, kv.evicted_units, kv.spills) == (5, 2, 6.0, 1)
    assert (tier.admissions, tier.evicted_entries, tier.spills) == (2, 0, 0)
    # kv: used 4 on [0, 2), 6 on [3, 4), 4 on [11, 12): 18; cached s1's 2 on [2, 3), s0's 4 from 12: 354
    assert (close(kv.used, 0.18), close(kv.cached, 3.54)) == (True, True)
    # tier: the spilled 4 count from the eviction at 1 (unusable until 3) to the read at 11: 40; held [11, 12)
    assert (close(tier.cached, 0.4), close(tier.used, 0.04)) == (True, True)
    pcie = stage(rep, "pcie")
    assert (pcie.completions, close(pcie.utilisation, 0.03), close(pcie.service, 1.5)) == (2, True, True)


# --- reserve held: a growth beyond the own reservation; rejection after block rounding --------------------

def test_a_growth_beyond_its_reservation_follows_the_pools_preempt_rule(monkeypatch):
    """pool-reference `reserve held`: "A hold that grows beyond its reservation follows the pool's preempt
    rule"; "Reservations end with the hold's scope, release or preemption"; `lifo` preempts the last
    admitted; the victim re-enters at the head.

    cap 10. s0 holds 2 reserve 4 at 0 (u0 = 2). s1 asks 2 reserve 6 at 0.5: 2 + 2 + 6 = 10, admitted
    (u1 = 4). s2 asks 1 at 0.7: 4 + 2 + 4 + 1 = 11, waits. At 1 s0 grows by 4, past its reservation:
    4 + u1 4 + 4 = 12 > 10, so s1 (admitted last) is preempted, its reservation gone: 2 + 4 = 6 fits
    (g = 1), and s0 now holds 6 of its 4 reserved (u0 = 0). s1, back at the head, needs 6 + 6 > 10 and
    blocks s2 until s0 leaves at 2: then s1 (2 + 6) and s2 (2 + 4 + 1 = 7) are admitted."""
    rep, obs = run("""
pool m { cap 10; reserve held; preempt lifo; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (2) reserve (4) { observe a = now; run d (1); grow m (4); observe g = now; run d (1); }
  } else { branch (serial == 1) { run d (0.5); hold m (2) reserve (6) { observe a = now; run d (3); } }
  else { run d (0.7); hold m (1) { observe a = now; run d (1); } } }
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {0: [0.0], 1: [0.5, 2.0], 2: [2.0]}
    assert obs["g"] == [(0, 1.0, 1.0)]
    m = pool(rep, "m")
    assert (m.admissions, m.preemptions, m.stuck) == (4, 1, 0)
    # waits: 0, 0, s1 1 (from 1 to 2), s2 1.3 (from 0.7 to 2)
    assert close(m.wait, 2.3 / 4)


def test_a_hold_is_rejected_when_its_units_or_reserve_exceed_the_cap_after_block_rounding(monkeypatch):
    """pool-reference: "If either units or reserve is independent of deployment state and exceeds capacity
    after block rounding, the hold is rejected and its session ends."

    cap 10, block 4: 9 units and a reserve of 9 round to 12 > 10 (s0, s1 rejected, their sessions end at
    once without reaching the observe); 8 units and a reserve of 8 round to 8 and wait for room as any
    hold: s2 from 0 to 1, s3 from 1 to 2."""
    rep, obs = run("""
pool m { cap 10; block 4; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (9) { run d (1); } }
  else { branch (serial == 1) { hold m (1) reserve (9) { run d (1); } }
  else { branch (serial == 2) { hold m (8) { observe a = now; run d (1); } }
  else { hold m (1) reserve (8) { observe a = now; run d (1); } } } }
  observe e = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert obs["a"] == [(2, 0.0, 0.0), (3, 1.0, 1.0)]
    assert obs["e"] == [(2, 1.0, 1.0), (3, 2.0, 2.0)]
    m = pool(rep, "m")
    assert (m.rejections, m.admissions, m.over_cap) == (2, 2, 0)
    assert (rep.result.arrivals, rep.result.ended) == (4, 4)
    # used 8 on [0, 1) (s2's 8) and 4 on [1, 2) (s3's 1 unit, a block): 12
    assert close(m.used, 0.12)


# --- a victim preempted inside a transfer keeps the lease it reads from ------------------------------------

def test_a_victim_preempted_inside_a_transfer_keeps_its_lease_and_reads_it_again(monkeypatch):
    """§2: transfer (X) from P to Q (n) is `run link (X); load Q (n); release P;`; §3: the victim's "job
    leaves its stage, its hold is released with its computed prefix cached, and it re-enters the head of
    the pool's queue with the hold statement to execute again"; a lease is neither evictable nor a
    preemption victim, and lasts until the session's release; pool-reference: without an engine, the
    candidates are holders with an active hold scope, lifo the last admitted.

    q cap 6. s1 holds 3 from 0.5; s0, having leased p's 4 at 1, holds q (3) at 1 and reads them over the
    link (4 s from 1). At 2 s1 grows q by 2: the last admitted, s0, is preempted inside its read: its flow
    leaves the link, nothing was loaded (computed 0, nothing cached), p's lease stays. s1 grows to 5 and
    leaves at 4; s0 is admitted again, reads the lease from 4 to 8, which releases p (4 cached there), and
    caches 3 in q at 13."""
    rep, obs = run("""
pool p { cap 10; }
pool q { cap 6; preempt lifo; }
stage d : delay;
stage link : ps(1);
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (4) { run d (1); } cache (4) lease p (inf);
    hold q (3) {
      observe a = now * 10 + computed;
      observe l = used(p) * 10 + cachedin(p);
      transfer (4) from p to q (3);
      observe t = now * 100 + used(p) * 10 + cachedin(p);
      run d (5);
    } cache (3);
  } else {
    run d (0.5);
    hold q (3) { observe a = now * 10 + computed; run d (1.5); grow q (2); observe g = now; run d (2); }
  }
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {0: [10.0, 40.0], 1: [5.0]}
    assert (by_session(obs, "l"), obs["t"], obs["g"]) == ({0: [40.0, 40.0]}, [(0, 8.0, 804.0)], [(1, 2.0, 2.0)])
    assert by_session(obs, "done") == {0: [13.0], 1: [4.0]}
    p, q, link = pool(rep, "p"), pool(rep, "q"), stage(rep, "link")
    assert (q.preemptions, q.admissions, close(q.wait, 2 / 3), p.preemptions) == (1, 3, True, 0)
    # the aborted read is no completion: the link had a job on [1, 2) and [4, 8)
    assert (link.completions, close(link.present, 0.05), close(link.service, 4.0)) == (1, True, True)
    # p: 4 leased on [0, 8), cached from 8; q: 3 + 3 on [1, 2), 1.5 s of s1's 3 before, its 5 on [2, 4),
    # s0's 3 on [4, 13); cached 3 from 13
    assert (close(p.used, 0.32), close(p.cached, 3.68), close(q.used, 0.445), close(q.cached, 2.61)) == (
        True,) * 4


# --- release in nested holds on one pool, after a load ----------------------------------------------------

def test_each_release_gives_back_the_innermost_hold_left_and_caches_its_computed_position(monkeypatch):
    """§3: "release m inside the body …: the innermost enclosing hold on m gives its allocation there back,
    caching per its clause, and holds m no longer"; "load m (n) advances the innermost enclosing hold's
    position on m by n tokens"; min(ℓ, computed) stays cached, rounded down to blocks; docs/language.md:
    a session has one prefix per pool, the one its latest release left.

    block 2. The first hold caches 4. The second, hold m (8) reuse (4), consumes them (cached 4, position
    4) and loads 3 (position 7). Inside it hold m (2): the first release gives back that inner hold, which
    caches its allocation, 2 (used 8, cached 2); the second release reaches the outer hold, which caches
    min(8, 7) rounded down to blocks, 6, replacing the 2 (used 0). The two scopes' ends then have nothing
    left to give back."""
    _rep, obs = run("""
pool m { cap 20; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (4) { run d (1); } cache (4);
  hold m (8) reuse (4) {
    observe c0 = cached;
    load m (3);
    hold m (2) {
      release m;
      observe u1 = used(m) * 100 + cachedin(m);
      release m;
      observe u2 = used(m) * 100 + cachedin(m);
      run d (1);
    } cache (2);
    observe u3 = used(m) * 100 + cachedin(m);
  } cache (8);
  observe u4 = used(m) * 100 + cachedin(m);
  end;
}
run { horizon 100; }
""", monkeypatch)
    got = {k: [v for _s, _t, v in obs[k]] for k in ("c0", "u1", "u2", "u3", "u4")}
    assert got == {"c0": [4.0], "u1": [802.0], "u2": [6.0], "u3": [6.0], "u4": [6.0]}


# --- a tier that evicts a spill still on its way ----------------------------------------------------------

def test_a_tier_evicting_a_write_on_its_way_lands_nothing_for_it_and_its_link_still_runs(monkeypatch):
    """pool-reference `spill`: the evicted prefix is written to TIER, `work` on LINK; docs/language.md:
    written units take their room in the tier at the eviction, unusable until the write completes; units
    the tier evicts before then are evicted (counted), nothing lands for them, and the write still runs
    on the link; §3: ps(1) serves each of n jobs at 1/n.

    kv and tier cap 4, every eviction spilled with work 10 a unit. s0 caches 4 at 1, evicted at 1 by s1's
    hold: a write of 40 from 1. s1 caches 4 at 2, evicted at 2 by s2's: the tier makes room by evicting
    s0's units on their way; both writes share pcie from 2 (s0's 39 left, s1's 40): s0's ends at 80,
    s1's last unit alone at 81, when s1's 4 land. At 50 the tier has nothing usable and pcie two jobs; at
    86 s1 finds its 4 there, s0 none, s2 none (its 4 are still in kv)."""
    rep, obs = run("""
pool tier { cap 4; }
pool kv { cap 4; spill tier via pcie (size * 10) when (1); }
stage d : delay;
stage pcie : ps(1);
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    run d (serial);
    hold kv (4) { run d (1); } cache (4);
    run d (85 - serial);
    observe t = cachedin(tier);
  } else {
    run d (50); observe t1 = cachedin(tier) * 10 + used(tier); observe c = queue(pcie);
  }
  end;
}
run { horizon 200; }
""", monkeypatch)
    assert by_session(obs, "t") == {0: [0.0], 1: [4.0], 2: [0.0]}
    assert (obs["t1"], obs["c"]) == ([(3, 50.0, 0.0)], [(3, 50.0, 2.0)])
    kv, tier, pcie = pool(rep, "kv"), pool(rep, "tier"), stage(rep, "pcie")
    assert (kv.evicted_entries, kv.evicted_units, kv.spills) == (2, 8.0, 2)
    assert (tier.evicted_entries, tier.evicted_units, tier.admissions) == (1, 4.0, 0)
    # tier: s0's 4 on [1, 2), s1's from 2 (counted while on their way): 4 + 792; kv: s2's 4 from 3
    assert (close(tier.cached, 796 / 200), close(kv.cached, 788 / 200)) == (True, True)
    # pcie: 1 job on [1, 2), 2 on [2, 80), 1 on [80, 81); both writes took 79
    assert (pcie.completions, close(pcie.present, 158 / 200), close(pcie.utilisation, 0.4),
            close(pcie.service, 79.0)) == (2, True, True, True)


# --- an expression definition given from outside ----------------------------------------------------------

DEFS = """
stage d : delay;
def svc(k) = k * 2;
def gap() = 3;
workload { arrive renewal(gap()); }
session { set t0 = now; run d (svc(serial + 1)); observe r = now - t0; observe s = t0; end; }
run { horizon 20; }
"""


@pytest.mark.parametrize("defs, sent, response", [
    ({}, [3, 6, 9, 12], [2, 4, 6, 8]),
    ({"svc": "k + 10"}, [3, 6], [11, 12]),
    ({"gap": "~det(4)"}, [4, 8, 12], [2, 4, 6]),
    ({"svc": "~det(1) + k"}, [3, 6, 9, 12], [2, 3, 4, 5]),
])
def test_an_expression_definitions_body_given_from_outside_is_the_program_written_with_it(
        monkeypatch, defs, sent, response):
    """program-reference `def`: "An expression definition's body can be given from outside, as a let's
    value can: --def NAME=expr …, defs={"NAME": "expr"} in pyserq. The program is then the one written
    with that body"; §2: "The first renewal arrival occurs after one gap"; a run ends at its horizon, an
    event at the horizon included.

    Arrivals every gap from the first gap; session k (serial k - 1) runs svc(k) on a delay stage and
    samples at its end, up to 20: svc 2k ends at 5, 10, 15, 20; svc k + 10 at 14, 18 (then 22); a gap of
    4 gives arrivals 4, 8, 12, 16 (ends 6, 12, 18, 24); ~det(1) + k draws 1 for each use."""
    reports = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        reports.append(serq_sim.run(serq_frontend.compile(source=DEFS, sets={}, defs=defs)))
    assert encode_json(reports[0]) == encode_json(reports[1])
    r = reports[1]
    assert (r.observe("s").values.tolist(), r.observe("r").values.tolist()) == (
        [float(t) for t in sent], [float(t) for t in response])


# --- the prefix-cache hit rate of a record table -----------------------------------------------------------

HIT_RATE = """
pool kv { cap 100; block 4; }
stage d : delay;
workload { arrive renewal(10); }
session {
  set p = 8;
  loop {
    set t0 = now;
    hold kv (p) reuse (p - 1) { run d (1); set f = now; run d (1); } cache (p);
    record req { sent = t0; first_token = f; last_token = now; output = 2; prompt = p; cached = cached; }
    branch (p < 12) { set p = 12; } else { end; }
  }
}
run { horizon 100; arrivals 2; WARMUP }
"""


@pytest.mark.parametrize("warmup, rows, rate, used, cached", [(0, 4, 16 / 40, 80 / 24, 120 / 24),
                                                              (12, 3, 16 / 32, 64 / 12, 120 / 12)])
def test_the_prefix_cache_hit_rate_is_the_kept_rows_cached_over_their_prompts(monkeypatch, warmup, rows, rate,
                                                                              used, cached):
    """docs/language.md: a record table with sent, first_token, last_token and output gets vLLM's serving
    metrics, and with cached and prompt the prefix-cache hit rate sum(cached) / sum(prompt) (serq_sim.metrics);
    the report keeps the rows sent at or after the warm-up's end; §3: a hold with cache consumes at most ρ
    of its own prefix, in whole blocks (reuse 11 takes 8), cached := what it consumed; a finite run's
    averages are over end - warmup.

    Sessions arrive at 10 and 20; each sends 8 tokens (nothing cached: cached 0) and, at once after 2 s,
    12 (its 8 cached at the first request's end, 11 of them allowed, 8 in whole blocks: cached 8). Rows
    sent at 10, 12, 20, 22; the run ends at 24. From 0: 16 / 40; from 12 (the row sent at 12 is kept):
    16 / 32. kv used 8 on [10, 12), 12 on [12, 14), 8 on [20, 22), 12 on [22, 24); cached: s0's 8 on
    [12, 12] (consumed at once), its 12 from 14; s1's 8 on [22, 22], its 12 from 24."""
    rep, _ = run(HIT_RATE.replace("WARMUP", f"warmup {warmup};"), monkeypatch)
    req = rep.result.requests
    assert (req.completed, close(req.prefix_cache_hit_rate, rate)) == (rows, True)
    assert (req.total_input_tokens, close(req.duration, 24.0 - warmup)) == (40.0 - 8 * (warmup > 0), True)
    assert (close(req.ttft.mean, 1.0), close(req.tpot.mean, 1.0), close(req.e2el.mean, 2.0)) == (True,) * 3
    kv = pool(rep, "kv")
    assert (kv.admissions, close(kv.used, used), close(kv.cached, cached)) == (rows, True, True)


# --- a closed population's turns, a choose over a family, an observe beside a gauge -----------------------

def test_turn_numbers_a_choose_by_family_load_and_an_observe_beside_a_gauge(monkeypatch):
    """§2: turn_no is the number of `turn;` statements run, init at arrival and turn at every turn;
    arrive closed(n) replaces a session when it ends; choose NAME := argmin over 0..n, keys in order, then
    the smallest index; §3 Statistics: observe records a sample after warm-up with the time, session and
    turn; Gauges: read at the end of every instant ("what the instant passes through on the way is not
    read"); docs/simulator.md: `ended` and `turns` count after the warm-up, `arrivals` every arrival.

    closed(2); each turn chooses the member of kv[2] with the fewest holders and waiting, holds it and runs
    serial + 1 s; two turns, then end. s0: kv[0] at 0 and 1 (s1 took kv[1] at 0), ends at 2. At 2 s1's
    event (scheduled at 0) comes before s0's: its second turn takes kv[1] again (kv[0] still s0's) to 4;
    s2 replaces s0 at 2 and takes kv[0] to 5. At 4 s3 replaces s1 and takes kv[1] (pick 1·100 + 1·10 + 1,
    kv[0] held by s2); at 5 s2's second turn reads kv[0] with 0 holders, its own hold given back at that
    instant, and takes it again (pick 22). Over [2.5, 7.5] both members always have one holder: the
    gauges never read the 0 the observe took at 5."""
    rep, obs = run("""
pool kv[2] { cap 10; }
stage d : delay;
workload { arrive closed(2); init { set k = 0; } turn { set k = k + 1; } }
session {
  turn;
  loop {
    observe h = holders(kv[0]);
    choose j in 2 by (holders(kv[j]) + queued(kv[j]));
    hold kv[j] (1) { observe pick = j * 100 + turn_no * 10 + k; run d (serial + 1); }
    branch (turn_no < 2) { turn; } else { end; }
  }
}
gauge g0 = holders(kv[0]);
gauge g1 = holders(kv[1]) + queued(kv[1]);
run { horizon 7.5; warmup 2.5; }
""", monkeypatch)
    assert obs["pick"] == [(3, 4.0, 111.0), (2, 5.0, 22.0)]
    assert obs["h"] == [(3, 4.0, 1.0), (2, 5.0, 0.0)]
    assert rep.observe("pick").turns.tolist() == [1, 2]
    res = rep.result
    assert (res.arrivals, res.ended, res.turns, close(res.mean_live, 2.0)) == (4, 1, 2, True)
    for g in ("g0", "g1"):
        gs = rep.result.gauges[g]
        assert (gs.mean, gs.min, gs.max) == (1.0, 1.0, 1.0), g
    # each member admitted once after the warm-up (kv[1] s3 at 4, kv[0] s2 at 5)
    assert [p.admissions for p in res.pools] == [1, 1]


# --- an ordered trace replayed under arrivals and a warm-up -----------------------------------------------

TRACE = "forced,think,extra,turn,session,new,out\n0,2,x,1,7,5,1\n0,0,y,0,7,3,1\n0,0,z,0,3,4,2\n1,1,w,1,3,2,1\n"

TRACE_PROGRAM = """
pool kv { cap 100; }
stage d : delay;
workload { arrive renewal(10); trace "t.csv" ordered; init { set K = 0; } }
session {
  loop {
    turn;
    set p = K + new;
    hold kv (p) reuse (forced ? 0 : K) { run d (out); } cache (p + out);
    observe hit = cached;
    observe own = cachedin(kv);
    set K = p + out;
    branch (more) { run d (think); } else { end; }
  }
}
run { horizon 100; arrivals 3; warmup 15; }
"""


def test_an_ordered_trace_under_arrivals_and_a_warm_up_with_a_forced_miss(tmp_path, monkeypatch):
    """§3 Workload: turn loads the next turn's new, out, think, forced and sets more; ordered: session i
    replays trace session i (past the last, serial mod their number); docs/language.md: the header names
    the six columns in any order, other columns are ignored, sessions are numbered in the order they first
    appear and a session's rows are sorted by turn; §3 Pools: a hold with cache consumes at most ρ of its
    prefix, the rest stays dead; a released prefix is capped at the allocation (docs/simulator.md);
    §2 run { arrivals N }: N arrivals, drained, averages over end - warmup.

    Trace session 0 (id 7): (3, 1, think 0), (5, 1, think 2); trace session 1 (id 3): (4, 2, 0),
    then (2, 1, forced). Arrivals at 10, 20, 30 replay 7, 3, 7. A turn holds p = K + new for out seconds
    and caches min(p + out, p) = p. s0: p 3 then 9 (hit 3) by 12. s1: p 4 on [20, 22) (hit 0), then p 8
    on [22, 23), forced: reuse 0, hit 0, its 4 left dead. s2: p 3 on [30, 31), p 9 on [31, 32) (hit 3).
    After the warm-up of 15: s1's and s2's samples; the run ends at 32."""
    (tmp_path / "t.csv").write_text(TRACE)
    path = tmp_path / "p.sq"
    path.write_text(TRACE_PROGRAM)
    rep, obs = run(None, monkeypatch, path=path)
    assert obs["hit"] == [(1, 22.0, 0.0), (1, 23.0, 0.0), (2, 31.0, 0.0), (2, 32.0, 3.0)]
    assert obs["own"] == [(1, 22.0, 4.0), (1, 23.0, 8.0), (2, 31.0, 3.0), (2, 32.0, 9.0)]
    assert rep.observe("hit").turns.tolist() == [1, 2, 1, 2]
    res = rep.result
    assert (res.end, res.arrivals, res.ended, res.turns) == (32.0, 3, 2, 4)
    assert close(res.mean_live, 5 / 17)
    kv = pool(rep, "kv")
    # over [15, 32]: used 4 on [20, 22), 8 on [22, 23), 3 on [30, 31), 9 on [31, 32): 28; cached s0's 9
    # throughout (153), s1's dead 4 from 22 (40) and its 8 from 23 (72)
    assert (kv.admissions, close(kv.used, 28 / 17), close(kv.cached, 265 / 17)) == (4, True, True)


# --- what the workload's turn block reads ------------------------------------------------------------------

def test_the_turn_block_reads_the_turn_it_describes_and_init_the_turn_before_any(tmp_path, monkeypatch):
    """§3 Workload: "init runs at arrival, turn at every turn statement; with a trace, turn loads the next
    turn's new, out, think, forced and sets more"; §2: turn_no is the number of turn statements run;
    docs/language.md: a `turn;` loads the row, counts the turn, then runs the block.

    Without a trace: init reads turn_no 0; the block at the first turn reads 1 and k as init left it (0),
    the session after it 1 and the block's k (1); the second turn 2 and 1, then 2 and 2. With the trace of
    the ordered-trace case (session 7: new 3, then 5): init reads new 0, the block and the session the
    row's new at each turn. Each sample carries the turn_no it read."""
    _rep, obs = run("""
stage d : delay;
workload { arrive batch(1); init { observe i = turn_no; set k = 0; } turn { observe t = turn_no * 10 + k; set k = k + 1; } }
session { turn; observe s = turn_no * 10 + k; run d (1); turn; observe s = turn_no * 10 + k; end; }
run { horizon 10; }
""", monkeypatch)
    assert (obs["i"], obs["t"], obs["s"]) == ([(0, 0.0, 0.0)], [(0, 0.0, 10.0), (0, 1.0, 21.0)],
                                              [(0, 0.0, 11.0), (0, 1.0, 22.0)])
    (tmp_path / "t.csv").write_text(TRACE)
    path = tmp_path / "p.sq"
    path.write_text("""
stage d : delay;
workload { arrive batch(1); trace "t.csv" ordered; init { observe i = turn_no * 100 + new; }
           turn { observe t = turn_no * 100 + new; } }
session { loop { turn; observe s = turn_no * 100 + new; branch (more) { run d (1); } else { end; } } }
run { horizon 10; }
""")
    rep, obs = run(None, monkeypatch, path=path)
    assert (obs["i"], obs["t"], obs["s"]) == ([(0, 0.0, 0.0)], [(0, 0.0, 103.0), (0, 1.0, 205.0)],
                                              [(0, 0.0, 103.0), (0, 1.0, 205.0)])
    assert (rep.observe("i").turns.tolist(), rep.observe("t").turns.tolist()) == ([0], [1, 2])


# --- a victim whose reservation blocked a head, re-queued at the head or the tail --------------------------

RESERVED_VICTIM = """
pool m { cap 6; reserve held; preempt by (prio) requeue REQUEUE; }
stage d : delay;
workload { arrive batch(3); init { set prio = serial == 0 ? 0 : serial == 1 ? 5 : 9; } }
session {
  branch (serial == 0) { hold m (2) reserve (4) { observe a = now; run d (5); } }
  else { branch (serial == 1) { hold m (2) { observe a = now; run d (1); grow m (1); run d (2); } }
  else { run d (0.5); hold m (1) { observe a = now; run d (1); } } }
  observe done = now;
  end;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("requeue, a, done", [
    ("tail", {0: [0.0, 3.0], 1: [0.0], 2: [1.0]}, {0: [8.0], 1: [3.0], 2: [2.0]}),
    ("head", {0: [0.0, 3.0], 1: [0.0], 2: [3.0]}, {0: [8.0], 1: [3.0], 2: [4.0]}),
])
def test_a_victim_whose_reservation_blocked_a_head_re_queued_at_the_head_or_the_tail(monkeypatch, requeue, a,
                                                                                      done):
    """pool-reference `preempt by (k, …) [requeue head | tail]`: "Preempt the candidate with the least
    keys" (not necessarily the grower); "requeue head (the default) places it first … requeue tail treats
    it as a newcomer: FIFO places it last"; `reserve held`: reservations end with preemption, a growth needs
    used + Σ_{i≠grower} u_i + d <= cap; "Only the selected hold is tried: failure to fit blocks the rest".

    cap 6. s0 (prio 0) holds 2 reserving 4 (u = 2), s1 (prio 5) holds 2 at 0; s2 asks 1 at 0.5:
    4 + 2 + 1 > 6. At 1 s1 grows by 1: 4 + 2 + 1 > 6, and the least prio, s0, is preempted, its
    reservation gone; s1 grows to 3. At the tail s0 waits behind s2, which fits (3 + 1) and is admitted at
    1; s0's 4 fit when s1 leaves at 3. At the head s0 (3 + 4 > 6) blocks s2 until 3, when both fit
    (2 + u 2 + 1 <= 6)."""
    rep, obs = run(RESERVED_VICTIM.replace("REQUEUE", requeue), monkeypatch)
    assert (by_session(obs, "a"), by_session(obs, "done")) == (a, done)
    m = pool(rep, "m")
    assert (m.preemptions, m.admissions, m.stuck) == (1, 4, 0)
