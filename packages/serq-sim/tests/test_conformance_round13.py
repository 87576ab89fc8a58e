"""Conformance cases whose outcome follows from language.txt §2-§3, pool-reference.txt and
program-reference.txt by hand, on the constructs travelled least and where they meet: a grower that is
its own victim under `preempt by … requeue tail` in a queue keyed by an attribute less `waited`, a hold
under `reserve held` that takes a lease's KV by `transfer` and grows within its own reservation, an
offload tier written by a spill and read back through a transfer, a statement definition on a step
engine whose budget reads `decoders`, whose chunk reads `residents` and whose serving order is
`remaining`, and the figures the report derives from each (a stage's present, utilisation, service and
engine statistics; a pool's time averages, wait, admissions, evictions, spills, preemptions and stuck).

Every case runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and every observe's
samples must be the same bytes (conform.run).

Conventions: `stage d : delay;` runs every job at rate 1 without waiting, so `run d (w)` lasts w; a
`ps(1)` stage with one job runs it at rate 1.
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


# --- a statement definition on an engine whose budget, chunk and order read its residents -----------------

def test_a_definitions_runs_on_an_engine_whose_budget_reads_decoders_and_chunk_reads_residents(monkeypatch):
    """program-reference `def`: a use is replaced by the body with each parameter replaced by its
    argument; §3 Stages: budget and chunk read "the residents before the iteration", `serve by
    (remaining)` serves the least remaining first, "ties in admission order", one token a decode, up to
    chunk a prefill, until the budget is spent; docs/simulator.md, Engine statistics.

    Prefills 6, 3, 1 then decodes 2, 2, 4 (s0, s1, s2, admitted in that order at 0).
      it 1 [0,1): decoders 0, budget 5; residents 3, chunk 2: s2 1, s1 2, s0 2 (s2 prefilled at 1).
      it 2 [1,2): decoders 1, budget 5: s1 1 (prefilled at 2), then s0 and s2 tie at 4 remaining:
                  s0 (admitted first) 2, s2 1.
      it 3 [2,3): decoders 2, budget 3: s0 2 and s1 2 tie: s0 2 (prefilled at 3), s1 1; s2 nothing.
      it 4 [3,4): decoders 3, budget 3: one each (s1 done at 4); it 5: s0 (done at 5), s2; it 6: s2 (6).
    Tokens 5, 4, 3, 3, 2, 1 over budgets 5, 5, 3, 3, 3, 5; batches 3, 3, 2, 3, 2, 1."""
    rep, obs = run("""
pool kv { cap 100; }
stage e : step { budget decoders >= 2 ? 3 : 5; cost 1; chunk residents > 1 ? 2 : 4; serve by (remaining); }
workload { arrive batch(3); }
def serve_one(n, o) {
  hold kv (n + o) {
    run e prefill (n);
    observe f = now;
    run e decode (o);
    observe l = now;
  }
}
session {
  serve_one(serial == 0 ? 6 : serial == 1 ? 3 : 1, serial == 2 ? 4 : 2);
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert obs["f"] == [(2, 1.0, 1.0), (1, 2.0, 2.0), (0, 3.0, 3.0)]
    assert obs["l"] == [(1, 4.0, 4.0), (0, 5.0, 5.0), (2, 6.0, 6.0)]
    e = stage(rep, "e")
    assert (e.iterations, e.prefill_only, e.decode_only, e.mixed, e.requests) == (6, 1, 3, 2, 3)
    assert (close(e.batch, 14 / 6), close(e.tokens, 3.0), close(e.token_utilisation, 18 / 24)) == (True,) * 3
    # present: s0 on [0, 5), s1 [0, 4), s2 [0, 6); busy [0, 6); six runs of 3, 2, 1, 2, 2, 5
    assert (close(e.present, 0.15), close(e.utilisation, 0.06), e.completions, close(e.service, 2.5)) == (
        True, True, 6, True)
    assert close(pool(rep, "kv").used, 0.9)


# --- queue by waited mixed with an attribute on an engine, a victim at the tail ---------------------------

def test_an_engines_queue_by_aged_lanes_and_a_victim_requeued_at_the_tail(monkeypatch):
    """pool-reference `queue`: keys re-evaluated for every waiting hold before each admission attempt,
    waited reset on re-entry; `preempt by (prio) requeue tail` on the engine's memory: candidates are its
    residents, the least key loses; §3: a growing run grows its hold to the position it will reach first,
    a victim already served gives its tokens back, and no admission in an iteration that preempted.

    reqs cap 3 (admitted by e, budget 4), kv cap 8; prio s0 2, s1 1, s2 4, s3 3; each holds kv (2) and
    decodes 4 growing kv. At 0 all wait 0, keys (1, prio): s1, s0, s3 admitted (reqs full), one token
    each. At 2 the third tokens need a third unit each: s1 and s0 grow to 3 (used 8), s3 cannot: the
    least prio, s1, is preempted (its token given back), re-joins behind s2 with waited 0, and s3 grows.
    At 3 s0 and s3 grow to 4 (used 8); s2 (waited 3, key (0, 4)) is the head and kv has no room. At 4 s0
    and s3 end; s1 has waited 2 (key (0, 1)) and goes before s2 (0, 4): both admitted at 4, done at 8."""
    rep, obs = run("""
pool reqs { cap 3; admit via e; queue by (waited >= 2 ? 0 : 1, prio); }
pool kv { cap 8; preempt by (prio) requeue tail; }
stage e : step { budget 4; cost 1; memory kv; }
workload { arrive batch(4); init { set prio = serial == 0 ? 2 : serial == 1 ? 1 : serial == 2 ? 4 : 3; } }
session {
  hold reqs (1), kv (2) {
    observe a = now;
    run e decode (4) growing kv;
  } cache (0);
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {0: [0.0], 1: [0.0, 4.0], 2: [4.0], 3: [0.0]}
    assert by_session(obs, "done") == {0: [4.0], 1: [8.0], 2: [8.0], 3: [4.0]}
    reqs, kv = pool(rep, "reqs"), pool(rep, "kv")
    assert (reqs.admissions, kv.admissions, kv.preemptions, kv.stuck) == (5, 5, 1, 0)
    # waits 0, 0, 0, 4 (s2) and 2 (s1 from 2 to 4); queue s2 on [0, 4), s1 on [2, 4)
    assert (close(reqs.wait, 6 / 5), close(reqs.queue, 0.06)) == (True, True)
    # kv used 6 on [0, 3) (s1's third unit given back at 2), 8 on [3, 4), then s1 and s2: 4 on [4, 6),
    # 6 on [6, 7), 8 on [7, 8): 18 + 8 + 22
    assert close(kv.used, 0.48)
    e = stage(rep, "e")
    assert (e.iterations, close(e.tokens, 18 / 8), e.decode_only) == (8, True, 8)


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


# --- a growth outside the engine whose pool is the engine's memory ----------------------------------------

ENGINE_MEMORY_GROWER = """
pool kv { cap 10; preempt lifo; }
stage e : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { observe a = now; AWAY run e decode (5); } }
  else { run d (0.5); hold kv (4) { observe a = now; run d (1); grow kv (4); observe g = now; run d (1); } }
  observe done = now;
  end;
}
run { horizon 100; }
"""


def test_a_grower_away_from_the_engine_preempts_its_resident_or_waits(monkeypatch):
    """pool-reference `preempt`: "Candidates are holders resident in the stage whose memory is this pool";
    §3: the victim's "job leaves its stage", and a holder away from the engine "is in no running list";
    docs/simulator.md, Pools: with no candidate the grower waits; docs/simulator.md, Engine statistics: a
    job taken from a running iteration gives its tokens back, and an iteration left with none is one that
    only preempted.

    kv cap 10. s0 holds 4 and decodes 5 on e (one token a second); s1 holds 4 at 0.5 on a delay stage and
    grows by 4 at 1.5: 8 + 4 > 10. s0, decoding, is the one candidate (s1 is no resident): preempted in
    the iteration [1, 2), its token given back; s1 grows (g = 1.5) and leaves at 2.5, when s0 is admitted
    again and decodes its 5 tokens in [2.5, 7.5). Iterations: [0, 1) one token, [1, 2) none, five more.
    When s0 is away too (on d until 2.5, then decoding), nobody is a candidate: s1 waits until s0 leaves
    the pool at 7.5."""
    rep, obs = run(ENGINE_MEMORY_GROWER.replace("AWAY ", ""), monkeypatch)
    assert by_session(obs, "a") == {0: [0.0, 2.5], 1: [0.5]}
    assert obs["g"] == [(1, 1.5, 1.5)]
    assert by_session(obs, "done") == {0: [7.5], 1: [2.5]}
    kv, e = pool(rep, "kv"), stage(rep, "e")
    assert (kv.preemptions, kv.admissions) == (1, 3)
    assert (e.iterations, e.decode_only, e.completions, close(e.tokens, 6 / 7)) == (7, 6, 1, True)
    # busy [0, 2) and [2.5, 7.5); s0 resident on [0, 1.5) and [2.5, 7.5)
    assert (close(e.utilisation, 0.07), close(e.present, 0.065)) == (True, True)
    rep, obs = run(ENGINE_MEMORY_GROWER.replace("AWAY", "run d (2.5);"), monkeypatch)
    assert by_session(obs, "a") == {0: [0.0], 1: [0.5]}
    assert obs["g"] == [(1, 7.5, 7.5)]
    assert by_session(obs, "done") == {0: [7.5], 1: [8.5]}
    assert pool(rep, "kv").preemptions == 0


# --- a budget that reads another engine's budget_left -----------------------------------------------------

def test_a_budget_reading_another_engines_budget_left_reads_its_estimate(monkeypatch):
    """§2: budget_left(step) is read at a step stage's budget; docs/language.md, Moments: read anywhere but
    the engine's waiting loop it is "S's budget and chunk evaluated now, less what every resident would
    take at S's next iteration (one token a decode, min(work, chunk) a prefill), at least 0", a run's work
    going down when its iteration ends.

    e1 (budget 6, chunk 4): s0 prefills 10, s1 decodes 3; e2's budget is budget_left(e1), s2 prefills 8
    there; both cost 1. At 0 and 1 e1's residents would take 4 + 1: e2's budget 1, one token each time. At
    2 s0 has 2 left: 2 + 1, e2's budget 3. At 3 e1 is empty (s0 and s1 done): budget 6, s2's last 3 (done
    at 4). e1's tokens 5, 5, 3 of 6 each; e2's 1, 1, 3, 3 of 1, 1, 3, 6."""
    rep, obs = run("""
stage e1 : step { budget 6; cost 1; chunk 4; }
stage e2 : step { budget budget_left(e1); cost 1; }
workload { arrive batch(3); }
session {
  branch (serial == 0) { run e1 prefill (10); }
  else { branch (serial == 1) { run e1 decode (3); }
  else { run e2 prefill (8); } }
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert obs["done"] == [(0, 3.0, 3.0), (1, 3.0, 3.0), (2, 4.0, 4.0)]
    e1, e2 = stage(rep, "e1"), stage(rep, "e2")
    assert (e1.iterations, e1.mixed, close(e1.tokens, 13 / 3), close(e1.token_utilisation, 13 / 18)) == (
        3, 3, True, True)
    assert (e2.iterations, e2.prefill_only, close(e2.tokens, 2.0), close(e2.token_utilisation, 8 / 11)) == (
        4, 4, True, True)


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


# --- lifo under a serving order that is not the admission order -------------------------------------------

def test_lifo_preempts_the_last_admitted_resident_not_the_last_served(monkeypatch):
    """pool-reference `preempt`: `lifo` is "Shorthand for by (-admission) requeue head: preempt the last
    admitted"; §3: "the holder that is a resident of the step stage … and was admitted last — by the
    session's latest admission"; a victim already served gives its token back; an iteration that only
    preempted lasts its cost, and a victim at a pool no stage admits is admitted again at the next event
    (docs/language.md). Under `serve by (remaining)` the last admitted is not the last served.

    kv cap 6; s0 (admitted 0) decodes 6 and s1 (admitted 0.5) decodes 3, both from 2 units, growing kv; s2
    holds 2 from 1.5 to 6.5 elsewhere. At 2 s1 (2 left) is served first and s0 (4 left) needs a third
    unit: the last admitted, s1, is the victim, though s0 comes last in the serving order; s0 grows (5),
    and at 3 to 4 units (6). At 4 its fifth unit has no room and s0, the only resident, preempts itself:
    that iteration lasts to 5, when both are admitted again (2 + 2 + 2 = 6) and decode afresh: s1 first
    (3 tokens, done at 8), s0 growing again to 5 at 8 and 6 at 10 (done at 11)."""
    rep, obs = run("""
pool kv { cap 6; preempt lifo; }
stage e : step { budget 4; cost 1; memory kv; serve by (remaining); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 1) { run d (0.5); }
  branch (serial == 2) { run d (1.5); hold kv (2) { observe a = now; run d (5); } }
  else {
    hold kv (2) {
      observe a = now;
      observe c = computed;
      run e decode (serial == 0 ? 6 : 3) growing kv;
    }
  }
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {0: [0.0, 5.0], 1: [0.5, 5.0], 2: [1.5]}
    # the positions at the preemptions: s1 1 (its token at 2 given back), s0 4
    assert by_session(obs, "c") == {0: [0.0, 4.0], 1: [0.0, 1.0]}
    assert by_session(obs, "done") == {0: [11.0], 1: [8.0], 2: [6.5]}
    kv, e = pool(rep, "kv"), stage(rep, "e")
    assert (kv.preemptions, kv.admissions, kv.stuck) == (2, 5, 0)
    assert (e.iterations, e.decode_only, e.completions) == (11, 10, 2)


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


# --- exclusive prefill: a displaced decode keeps its block, the prefill its chunk cap ----------------------

def test_a_displaced_decode_keeps_its_block_and_its_position_and_the_prefill_its_chunk(monkeypatch):
    """§3 Stages: under serve exclusive prefill "a waiting prefill that fits can replace them and use the
    full budget, including in budget_left at admission … Displaced decodes keep any newly acquired
    allocation but neither execute nor advance computed KV"; "A resident prefill takes precedence"; up to
    chunk to a prefilling job; a growing job first grows its hold to the position it will reach.

    budget 4, chunk 3, kv in blocks of 2. s0 decodes 5 from 1 unit (2 allocated): tokens at [0, 1) and
    [1, 2) (position 2). At 2 its tentative third token grows it to 4; s1 (waiting since 1.5) fits and
    displaces it: its header reads the whole budget, kv (4) (used 8), and it prefills min(5, 3) = 3 alone,
    then its last 2 alone at [3, 4) (growing to 6 at 3: used 10; first token at 4). At 4 both decode (s1
    its one token, done at 5, caching 6); s0, still at position 2, takes its tokens 3, 4, 5 at [4, 7),
    growing to 6 only at 6 for its fifth (used 4 on [5, 6), 6 on [6, 7))."""
    rep, obs = run("""
pool reqs { cap 4; admit via e; }
pool kv { cap 20; block 2; preempt lifo; }
stage e : step { budget 4; cost 1; chunk 3; memory kv; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (1) { observe a = now; run e decode (5) growing kv; } cache (5);
  } else {
    branch (serial == 2) {
      loop { run d (0.5); observe w = used(kv); branch (now >= 7) { end; } }
    }
    run d (1.5);
    hold reqs (1), kv (x) at admission (x = budget_left(e)) {
      observe a = now; observe x0 = used(kv);
      run e prefill (5) growing kv;
      observe f = now;
      run e decode (1) growing kv;
    } cache (6);
  }
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {0: [0.0], 1: [2.0]}
    assert (obs["x0"], obs["f"]) == ([(1, 2.0, 8.0)], [(1, 4.0, 4.0)])
    assert by_session(obs, "done") == {0: [7.0], 1: [5.0]}
    # used(kv) every half second from 0.5 to 7
    assert [v for _s, _t, v in obs["w"]] == [2, 2, 2, 2, 8, 8, 10, 10, 10, 4, 4, 4, 6, 0]
    e = stage(rep, "e")
    assert (e.iterations, e.prefill_only, e.decode_only, e.mixed) == (7, 2, 5, 0)
    # tokens 1, 1, 3, 2, 2, 1, 1 of 4 each
    assert (close(e.tokens, 11 / 7), close(e.token_utilisation, 11 / 28)) == (True, True)
    # cached: s1's 6 from 5; s0's min(5, 5) in blocks, 4, from 7
    assert close(pool(rep, "kv").cached, (6 * 95 + 4 * 93) / 100)


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


# --- reserve held on an engine's memory: a reservation keeps a newcomer out instead of preempting it -------

RESERVED_ENGINE = """
pool reqs { cap 4; admit via e; }
pool kv { cap 8; block 2; preempt lifo; reserve held; }
stage e : step { budget 6; cost 1; chunk 4; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (2) reserve (6) {
      observe a = now; run e prefill (6) growing kv; observe f = now; run e decode (2) growing kv;
    } cache (0);
  } else {
    hold reqs (1), kv (2) reserve (4) { observe a = now; run e decode (3) growing kv; } cache (0);
  }
  observe done = now;
  end;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("held", [True, False])
def test_a_growing_holds_reservation_on_an_engines_memory_keeps_a_newcomer_out(monkeypatch, held):
    """pool-reference `reserve held`: u_i = max(0, r_i - a_i), a new reservation r needs
    used + Σ u_i + r <= cap, a growth by d used + Σ_{i≠grower} u_i + d <= cap (the grower uses its own
    reservation); without it, "reserve is checked only at admission"; §3: the stage admits after the
    residents have taken their tokens, while budget is left, and not in an iteration that preempted.

    budget 6, chunk 4, kv cap 8 in blocks of 2. s0 holds 2 reserving 6, prefills 6 (4 at [0, 1), growing
    to 4; 2 at [1, 2), growing to 6) and decodes 2 (growing to 8 at 2).
      held: at 0 (budget 2 left) s1's 4 need 4 + u0 2 + 4 > 8; at 1 and 2, 6 + 0 + 4 and 8 + 4: s1 waits
            until s0 leaves at 4 and decodes its 3 in [4, 7), growing within its own reservation at 6.
      not held: s1 fits at 0 (4 + 4 <= 8) and takes a token at [0, 1) and [1, 2); at 2 s0's decode needs
            a fourth block and s1, the last admitted, is preempted; it is admitted again at 4 (done at 7)."""
    src = RESERVED_ENGINE if held else RESERVED_ENGINE.replace(" reserve held;", "")
    rep, obs = run(src, monkeypatch)
    assert by_session(obs, "a") == ({0: [0.0], 1: [4.0]} if held else {0: [0.0], 1: [0.0, 4.0]})
    assert (obs["f"], by_session(obs, "done")) == ([(0, 2.0, 2.0)], {0: [4.0], 1: [7.0]})
    kv, reqs, e = pool(rep, "kv"), pool(rep, "reqs"), stage(rep, "e")
    if held:
        # s0: 4 on [0, 1), 6 on [1, 2), 8 on [2, 4); s1: 2 on [4, 6), 4 on [6, 7); tokens 4, 2, 1, 1, 1, 1, 1
        assert (kv.preemptions, reqs.admissions, close(reqs.wait, 2.0), close(kv.used, 0.34)) == (0, 2, True, True)
        assert (e.prefill_only, e.mixed, close(e.tokens, 11 / 7)) == (2, 0, True)
    else:
        # s1 waits 2 (from 2 to 4) once; tokens 5, 3, 1, 1, 1, 1, 1
        assert (kv.preemptions, reqs.admissions, close(reqs.wait, 2 / 3), close(kv.used, 0.38)) == (
            1, 3, True, True)
        assert (e.prefill_only, e.mixed, close(e.tokens, 13 / 7)) == (0, 2, True)


# --- a waiting head chosen by waited, and a lease ending, while the engine only decodes -------------------

AGED_HEAD = """
pool reqs { cap 10; admit via e; queue by (prio - waited * w, serial); }
pool kv { cap CAP; }
stage e : step { budget 4; cost 1; CHUNK memory kv; }
stage d : delay;
workload { arrive batch(4); init { set prio = serial == 2 ? 3 : 0; set w = serial == 2 ? 1 : 0; } }
session {
  branch (serial == 1 || serial == 2) { run d (0.5); }
  branch (serial < 3 || PREFILL) {
    hold reqs (1), kv (serial == 0 ? 5 : serial == 1 ? BIG : serial == 2 ? 1 : 5) {
      observe a = now;
      branch (serial == 3) { run e prefill (30); } else { run e decode (serial == 0 ? 20 : 2); }
    }
    observe done = now;
  }
  end;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("prefill", [False, True])
def test_a_head_that_waited_long_enough_is_admitted_while_the_engine_only_decodes(monkeypatch, prefill):
    """pool-reference `queue`: keys are re-evaluated before each admission attempt, "there is no implicit
    aging timer": the attempt is the engine's (§3: at the start of an iteration, after the residents'
    tokens, while budget is left); "Only the selected hold is tried: failure to fit blocks the rest".

    s0 decodes 20 from 5 units of kv; s1 (key 0) asks more than kv has left, s2 (key 3 - waited, joined at
    0.5) asks 1. s1 is the head and blocks s2 until s2's key falls below 0 (equal at 3.5, where serial
    decides for s1): s2 is admitted at the iteration at 4 and decodes 2 (done at 6). With a prefill of 30
    beside the decoder (s3, 5 units, chunk 2: 1 + 2 tokens an iteration, one left) the same; s3 ends at
    15, when s1's 15 units fit (5 + 15 = 20)."""
    src = AGED_HEAD.replace("PREFILL", "1" if prefill else "0")
    src = src.replace("CAP", "20" if prefill else "10").replace("BIG", "15" if prefill else "8")
    src = src.replace("CHUNK", "chunk 2;" if prefill else "")
    _rep, obs = run(src, monkeypatch)
    if prefill:
        assert by_session(obs, "a") == {0: [0.0], 1: [15.0], 2: [4.0], 3: [0.0]}
        assert by_session(obs, "done") == {0: [20.0], 1: [17.0], 2: [6.0], 3: [15.0]}
    else:
        assert by_session(obs, "a") == {0: [0.0], 1: [20.0], 2: [4.0]}
        assert by_session(obs, "done") == {0: [20.0], 1: [22.0], 2: [6.0]}


def test_a_lease_ending_while_the_engine_only_decodes_lets_the_head_in_at_the_next_iteration(monkeypatch):
    """§3: a lease keeps its allocation "until … t seconds … and cache applies then"; cached prefixes never
    block an admission; the engine admits at the start of an iteration.

    kv cap 10. s0 holds 6 on [0, 0.2) and leases them 3.3 s (to 3.5); s1 holds 4 and decodes 10 from 0.
    s2 asks 3 at 0.5: 10 used. At 3.5 the lease ends and its 6 are cached; the iteration at 4 admits s2,
    evicting them (4 + 6 + 3 > 10), and s2 decodes 2 (done at 6)."""
    rep, obs = run("""
pool reqs { cap 10; admit via e; }
pool kv { cap 10; }
stage e : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (6) { run d (0.2); } cache (6) lease kv (3.3); run d (50); }
  else {
    branch (serial == 2) { run d (0.5); }
    hold reqs (1), kv (serial == 1 ? 4 : 3) {
      observe a = now;
      run e decode (serial == 1 ? 10 : 2);
    }
  }
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {1: [0.0], 2: [4.0]}
    assert by_session(obs, "done") == {0: [50.2], 1: [10.0], 2: [6.0]}
    kv = pool(rep, "kv")
    assert (kv.evicted_entries, kv.evicted_units, close(kv.cached, 0.03)) == (1, 6.0, True)


# --- §7: vLLM's free queue, tail blocks first, and the longest run of cached full blocks -------------------

VLLM_CHAT = """
use "vllm.sq";
let bs = 4;
pool reqs { cap 4; admit via engine; }
pool kv { cap 5 * bs; block bs; evict lru; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
stage tool : delay;
workload {
  arrive batch(2);
  hidden o;
  init { set K = 0; set n = serial == 0 ? 9 : 14; set o = serial == 0 ? 2 : 1; }
}
session {
  branch (serial == 1) { tool (3); }
  loop {
    set prompt = K + n;
    set t0 = now;
    vllm_request(reqs, kv, engine, prompt, o, t0);
    set K = prompt + o;
    branch (serial == 0 && K < 12) { tool (5); set n = 2; set o = 1; } else { end; }
  }
}
run { horizon 100; }
"""


def test_vllms_free_queue_loses_tail_blocks_first_and_a_hit_is_the_cached_full_blocks_left(tmp_path, monkeypatch):
    """§7: "the prefix cache holds every computed full block, generated tokens included; a hit is the
    longest run of cached full blocks, at most num_tokens − 1"; "the free queue: freed blocks appended
    tail first (LRU), in the order requests finish" — evict lru per block from the tail; admission needs
    blocks for the whole prompt; a finished session's blocks stay.

    5 blocks of 4. A sends 9 tokens at 0 (3 blocks, no hit), prefills them at [0, 1) and decodes its
    second token at [1, 2): 10 tokens computed, 2 full blocks (8) cached at 2. B sends 14 at 3: 4 blocks
    beside A's 2 need one of them: A's tail block goes (A keeps 4); B prefills at [3, 4), its only token
    sampled at 4, and caches 3 full blocks (12). A's second turn at 7 sends 11 + 2 = 13 tokens: the hit
    is A's one block left (4, at most reusable(13) = 12); 4 blocks need 2 of B's: B's tail blocks go
    (B keeps 4). A prefills 9 at [7, 8), first and last token at 8. vLLM frees A's blocks tail first to
    the free queue and B's allocation takes A's second block first; A's second turn takes B's third
    and second blocks: the same 4 and 8 tokens lost."""
    prog = tmp_path / "chat.sq"
    prog.write_text(VLLM_CHAT)
    rep, obs = run(None, monkeypatch, path=prog)
    assert obs["hit"] == [(0, 0.0, 0.0), (1, 3.0, 0.0), (0, 7.0, 4.0)]
    assert obs["first_token"] == [(0, 1.0, 1.0), (1, 4.0, 4.0), (0, 8.0, 8.0)]
    assert obs["done"] == [(0, 2.0, 2.0), (1, 4.0, 4.0), (0, 8.0, 8.0)]
    kv = pool(rep, "kv")
    # no entry goes whole: 4 + 8 units; used 12 on [0, 2), 16 on [3, 4) and [7, 8); cached: A's 8 on
    # [2, 3), its 4 on [3, 7), B's 12 on [4, 7), its 4 from 7, A's 12 (min(14, 13) in blocks) from 8
    assert (kv.evicted_entries, kv.evicted_units, kv.preemptions) == (0, 12.0, 0)
    assert (close(kv.used, 0.56), close(kv.cached, (8 + 16 + 36 + 372 + 1104) / 100)) == (True, True)
    req = rep.result.requests
    assert (req.completed, close(req.prefix_cache_hit_rate, 4 / 36)) == (3, True)


# --- a run of zero work ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo(1)", "ps(1)", "delay", "step { budget 4; cost 1; }"])
def test_a_run_of_zero_work_completes_at_once_and_is_no_job_of_its_stage(monkeypatch, kind):
    """§3: "A run of zero work completes at once"; sessions run in the order they became ready
    (docs/simulator.md: it does not wait, a busy fifo included, and counts in none of the stage's
    figures, nor in its online estimates).

    s0 runs 2 on the stage from 0; s1 runs 0 on it at 1 and goes on at once (a = 1), before s2, ready at
    the same instant, takes the pool's one unit: s1 holds it on [1, 2), s2 on [2, 3). The stage has one
    job: present and utilisation 2 / 10 (1 / 10 on the engine, whose iteration serves 2 tokens in 1 s),
    one completion of service 2 (1), wait 0, and its service starts are 0 alone."""
    step = kind.startswith("step")
    rep, obs = run(f"""
pool m {{ cap 1; }}
stage s : {kind};
stage d : delay;
workload {{ arrive batch(4); }}
session {{
  branch (serial == 0) {{ run s {"prefill " if step else ""}(2); }}
  else {{ branch (serial == 3) {{ run d (5); observe l = est_lambda(s) * 10 + est_wait(s); }}
  else {{
    run d (1);
    branch (serial == 1) {{ run s {"prefill " if step else ""}(0); }}
    hold m (1) {{ observe a = now * 10 + serial; run d (1); }}
  }} }}
  end;
}}
run {{ horizon 10; }}
""", monkeypatch)
    assert obs["a"] == [(1, 1.0, 11.0), (2, 2.0, 22.0)]
    assert obs["l"] == [(3, 5.0, 0.0)]
    st = stage(rep, "s")
    busy = 1.0 if step else 2.0
    assert (st.completions, st.wait, st.service) == (1, 0.0, busy)
    assert (close(st.present, busy / 10), close(st.utilisation, busy / 10)) == (True, True)
    if step:
        assert (st.iterations, st.requests) == (1, 1)


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


def test_under_exclusive_prefill_a_waiting_prefill_fits_beside_the_blocks_tentative_decodes_grew(monkeypatch):
    """§3 Stages: "a growing job first grows its hold to the position it will reach (block by block,
    preempting if needed); then the stage admits"; under serve exclusive prefill "a waiting prefill that
    fits can replace them", and displaced decodes keep what they acquired: the fit is judged beside the
    tentative decodes' new blocks.

    kv cap 6 in blocks of 2. s0 decodes 4 from 2 units; s1 (from 1.5) asks 4. At 2 s0's tentative third
    token grows it to 4 first: 4 + 4 > 6, so s1 does not fit and s0 decodes; likewise at 3. s0 ends at 4,
    s1 is admitted then and prefills 3 alone (done at 5)."""
    rep, obs = run("""
pool reqs { cap 4; admit via e; }
pool kv { cap 6; block 2; preempt lifo; }
stage e : step { budget 4; cost 1; memory kv; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (1) { observe a = now; run e decode (4) growing kv; } cache (0);
  } else {
    run d (1.5);
    hold reqs (1), kv (4) { observe a = now; run e prefill (3) growing kv; } cache (0);
  }
  observe done = now;
  end;
}
run { horizon 100; }
""", monkeypatch)
    assert by_session(obs, "a") == {0: [0.0], 1: [4.0]}
    assert by_session(obs, "done") == {0: [4.0], 1: [5.0]}
    e, kv = stage(rep, "e"), pool(rep, "kv")
    assert (e.iterations, e.decode_only, e.prefill_only, kv.preemptions) == (5, 4, 1, 0)
    # kv: s0's 2 on [0, 2), 4 on [2, 4); s1's 4 on [4, 5)
    assert close(kv.used, 0.16)


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
