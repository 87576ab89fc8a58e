"""Conformance cases on the pool options pool-reference.txt adds and on the step engine's corners, each a
small program whose outcome follows by hand from language.txt §2-§3 and §7, pool-reference.txt and
program-reference.txt (and docs/language.md where the spec leaves the rule open):

(a) `preempt by (KEYS) requeue head | tail`: the victim the keys choose where `preempt lifo` would choose
    another, where it goes back in a `queue by` queue (at the head, or as a newcomer whose `waited` starts
    again), what it keeps (`computed`, the prefix it cached, cut block by block by the growth that
    preempted it); a hold that computed nothing reads `position` 0, so a tie goes to the last admitted;
(b) `reserve held`: a growth draws on its own reservation and waits for another's, and a head waits
    for both;
(c) the step stage: a prefill longer than the budget chunked over several iterations beside a decoder,
    the headers' `budget_left`, growth at block boundaries, a cost reading `attention`, `kv_prefill`,
    `kv_decode` and `decoders` per iteration; `serve by` with ties; an iteration that only preempted
    (it lasts the cost at no token); a victim that keeps its prefix against one that recomputes;
    `attention`'s K for a run that grows its hold and for one that grows none; the order in which runs
    that end with one iteration resume;
(d) pool blocks: allocations rounded up, cached prefixes rounded down, an LRU eviction that takes the
    tail block of the entry released first among entries released at one instant;
(e) `run { arrivals N; }`: where the run ends, the CLI's `--arrivals`, the deadline, and what the report
    counts after a warm-up that falls on an iteration's boundary;
(f) a step stage's chunk as an amount: 0 gives a prefill no token (a prefill paused by a computed chunk,
    under `serve exclusive prefill` too), a negative or NaN one is an error.

Every program runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and samples must be
the same bytes (conform.run). Conventions: `stage d : delay;` runs every job at rate 1 without waiting,
so `run d (w)` lasts w; `arrive renewal(1)` arrives at 1, 2, 3, …; `arrive batch(n)` n sessions at 0,
numbered 0 … n-1 (`serial`).

Power: each test names in a comment the mutation it was run with (a rule of the program changed, or the
expectation the other reading of the spec gives) and that it then failed.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir
import serq_sim
from conform import at, pool, refused, run, run_error, stage, vals

pytestmark = pytest.mark.timeout(60)


def kinds(report, name="E"):
    e = stage(report, name)
    return e.iterations, e.prefill_only, e.decode_only, e.mixed


# --- (a) preempt by keys, requeue head | tail ------------------------------------------------------------

BY_POSITION = """
pool kv { cap 12; block 1; preempt by (position) requeue REQUEUE; queue by (-serial); }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold kv (4) { load kv (4); run d (4); grow kv (4); observe g = now; run d (20); }
  } else { branch (serial == 1) {
    hold kv (3) reuse (3) { observe c = computed * 10 + cached; load kv (2); run d (10); } cache (3);
  } else { branch (serial == 2) {
    hold kv (3) { load kv (3); run d (7); } cache (3);
    run d (20);
    observe k2 = cachedin(kv);
  } else {
    hold kv (3) { observe a3 = now; run d (1); }
  } } }
}
run { horizon 100; arrivals 4; }
"""


@pytest.mark.parametrize("requeue", ["tail", "head"])
def test_a_victim_by_position_goes_back_by_its_rule_with_its_computed_and_what_eviction_left(monkeypatch,
                                                                                             requeue):
    """pool-reference `preempt`: "`by (k, …)` Preempt the candidate with the least keys"; "If no stage names
    it as memory, candidates are holders with an active hold scope"; keys read "position (the position its
    hold has computed on the pool)"; "The victim … releases its hold and caches its computed prefix. It
    re-enters … with computed set to the position reached. requeue head … places it first, ahead of policy
    keys. requeue tail treats it as a newcomer: … queue by places it by its keys"; `block`: "An entry is
    evicted from its tail, block by block"; `evict lru`: "release time, then release order".

    s0..s3 arrive at 1..4 (cap 12, blocks of 1). s0 holds 4 (position 4), s1 3 (position 2 by its load),
    s2 3 (position 3): used 10; s3 (3) waits. At 5 s0 grows by 4: the least position is s1's (2), not the
    last admitted (s2, which `lifo` would take): s1 caches min(3, 2) = 2, and the growth (7 + 4 = 11
    allocated) evicts one block of it: 1 left. Queue by (-serial): s3 (-3) before s1 (-1) when s1 is a
    newcomer (tail), s1 first when it goes back at the head.
    tail: at 10 s2 ends (caches 3: used 8, free 4): s3 is admitted; 11 allocated + 4 cached evicts 3, s1's
    block (released at 5) then two of s2's tail (at 10): s2 keeps 1; s1 does not fit (free 1). At 11 s3
    ends: s1 is admitted with computed 2 and its prefix gone (cached 0): c = 20; it ends at 21. At 30 s2
    reads its 1. evicted units 1 + 3 = 4.
    head: at 10 s1 is admitted first, consuming the 1 it kept: c = 21; 11 allocated + s2's 3 evicts 2 of
    s2's; s3 (free 1) waits until s1 ends at 20 (s1 caches 3, and the 1 left of s2's and 2 of s1's go):
    a3 = 20, k2 = 0. evicted units 1 + 2 + 3 = 6.
    Power: `preempt lifo` (victim s2) fails both (c has no second sample at 11 / 10); head's expectations
    fail the tail case and the other way round."""
    r, o = run(BY_POSITION.replace("REQUEUE", requeue), monkeypatch)
    assert at(o["g"]) == [(0, 5.0)]
    kv = pool(r, "kv")
    assert kv.preemptions == 1
    if requeue == "tail":
        assert o["c"] == [(1, 2.0, 0.0), (1, 11.0, 20.0)]
        assert at(o["a3"]) == [(3, 10.0)]
        assert o["k2"] == [(2, 30.0, 1.0)]
        assert kv.evicted_units == 4.0
    else:
        assert o["c"] == [(1, 2.0, 0.0), (1, 10.0, 21.0)]
        assert at(o["a3"]) == [(3, 20.0)]
        assert o["k2"] == [(2, 30.0, 0.0)]
        assert kv.evicted_units == 6.0
    # s0 ends at 25, s2 observes at 30: the run ends when its 4 arrivals have drained
    assert r.result.end == 30.0


ENGINE_VICTIM = """
pool reqs { cap 3; admit via E; queue by (-waited); }
pool kv { cap 12; preempt by (decoding, -position) requeue REQUEUE; }
stage E : step { budget 4; chunk 2; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 3) {
    run d (0.5);
    hold reqs (1) { observe a = now; run E prefill (1); }
  } else {
    hold reqs (1), kv (2) {
      observe a = now;
      observe c = computed;
      branch (serial == 0) { run E decode (5) growing kv; } else { run E prefill (8) growing kv; }
    }
  }
  observe t = now;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("requeue", ["tail", "head"])
def test_an_engine_victim_by_decoding_and_position_and_waited_starting_again(monkeypatch, requeue):
    """pool-reference `preempt by`: candidates are "holders resident in the stage whose memory is this
    pool"; keys read "decoding (1 for a decoding resident) and position"; requeue tail "treats it as a
    newcomer: … queue by places it by its keys, with waited reset to 0"; a victim "re-enters the hold's
    first pool's queue"; §3: no admission in an iteration that preempted; `queue`: "Only the selected hold
    is tried: failure to fit blocks the rest".

    budget 4, chunk 2, cost 1, kv cap 12 (no block). [0,1]: s0 admitted (kv 2) decodes (position 1), s1
    (kv 2) takes 2 tokens, s2 1 (the budget spent). [1,2]: positions s0 2, s1 4 (grown to 4), s2 2.
    [2,3]: s0 3, s1 6, s2 3, each grown to its position: used 12. At the planning at 3 s0's growth to 4
    fails: keys s0 (1, -3), s1 (0, -6), s2 (0, -3): the victim is s1 (`lifo` would take s2). It re-enters
    reqs' queue (the hold's first pool) with computed 6, where s3 has waited since 0.5 (reqs full).
    [3,4]: s0 1, s2 2 (no admission). At 4, tail: keys -waited: s3 -3.5, s1 -1 (its
    waited started again at 3): s3 is admitted with the 1 token left ([4,5], done at 5). head: s1 is
    selected, its kv (2) does not fit (10 + 2 > 12 after s0's and s2's growth) and blocks s3.
    At 5 s0 is done (5 tokens), then s1 is admitted (computed 6 when it runs its hold again) and prefills
    its 8 from 0 in chunks of 2, after s2's last token: [5,6] … [8,9], done at 9; head: s3 at 5 in the
    same iteration with the token left, done at 6.
    Power: `preempt lifo` (victim s2) and a `waited` kept from s1's first entry (s1 -4 before s3 -3.5, so
    tail would be as head) give other times; the head expectations fail the tail case."""
    r, o = run(ENGINE_VICTIM.replace("REQUEUE", requeue), monkeypatch)
    assert o["c"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (1, 5.0, 6.0)]
    if requeue == "tail":
        assert at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 0.0), (3, 4.0), (1, 5.0)]
        assert at(o["t"]) == [(0, 5.0), (3, 5.0), (2, 6.0), (1, 9.0)]
        assert pool(r, "reqs").wait == (3.5 + 2) / 5
    else:
        assert at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 0.0), (1, 5.0), (3, 5.0)]
        assert at(o["t"]) == [(0, 5.0), (2, 6.0), (3, 6.0), (1, 9.0)]
        assert pool(r, "reqs").wait == (4.5 + 2) / 5
    assert pool(r, "kv").preemptions == 1
    # [0,1]..[4,5] serve s0's decode beside prefills; [5,6]..[8,9] prefills only; 4+4+4+3+4+3+2+2+2 tokens
    assert kinds(r) == (9, 4, 0, 5)
    assert stage(r, "E").tokens == 28 / 9


def test_a_hold_that_computed_nothing_reads_position_0_and_the_tie_goes_to_the_last_admitted(monkeypatch):
    """pool-reference `preempt by`: "ties go to the last admitted"; docs/language.md ("A preemption caches
    computed prefixes …"): a hold whose body no growing run or `load` advanced has computed nothing, so its
    `position` is 0 (not its allocation).

    The program of the test above, s1 and s2 prefilling 6 without `growing` on kv 5 and 4 (budget 3,
    chunk 1): s0's decode grows to 3 at the planning at 2 (used 3 + 5 + 4 = 12) and past 12 at 3: s1 and
    s2 both read (0, 0), and the victim is s2, the last admitted (by allocations, -position would pick
    s1). s2 (6
    tokens, 3 done) goes back and prefills again from 5: it ends at 11; s1 ends at 6, s3 (a token, admitted
    at 4 under tail) at 5.
    Power: position read as the allocation (s1 the victim) gives s1 11 and s2 6."""
    src = """
pool reqs { cap 3; admit via E; queue by (-waited); }
pool kv { cap 12; preempt by (decoding, -position) requeue tail; }
stage E : step { budget 3; chunk 1; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 3) { run d (0.5); }
  hold reqs (1), kv (serial == 0 ? 2 : serial == 1 ? 5 : serial == 2 ? 4 : 1) {
    observe a = now;
    branch (serial == 0) { run E decode (5) growing kv; } else { run E prefill (serial == 3 ? 1 : 6); }
  }
  observe t = now;
}
run { horizon 100; }
"""
    r, o = run(src, monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 0.0), (3, 4.0), (2, 5.0)]
    assert at(o["t"]) == [(0, 5.0), (3, 5.0), (1, 6.0), (2, 11.0)]
    assert pool(r, "kv").preemptions == 1


# --- (b) reserve held -------------------------------------------------------------------------------------

def test_reserve_held_a_growth_draws_on_its_own_reservation_and_waits_for_another(monkeypatch):
    """pool-reference `reserve held`: u_i = max(0, r_i - a_i); "A new reservation r requires used + Σ u_i + r
    ≤ cap. Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap: the growing hold can use its own
    reservation"; `preempt none`: "Wait for room, then resume"; docs/language.md: waiting growers are
    retried before the pool's admissions.

    cap 12. s0 holds 2 reserving 8 at 0 (u0 6). s1 at 0.5: 2 + 6 + 3 = 11, admitted. s2 at 0.6 wants 2:
    5 + 6 + 2 = 13, it waits. At 1 s0 grows by 4 inside its reservation: 5 + 0 + 4 ≤ 12 (u0 now 2). At 2 s1
    grows by 2: 9 + 2 (s0's u) + 2 = 13 > 12, it waits; s2 still does not fit (9 + 2 + 2). At 6 s0 ends:
    s1 grows (3 + 2), then s2 is admitted (5 + 2). Used: 2·0.5 + 5·0.5 + 9·5 + 7·1 = 55.5 over 100; s2
    waited 5.4 (the admissions' mean wait (0 + 0 + 5.4) / 3).
    Power: without `reserve held` s2 is admitted at 0.6 and s1 grows at 2 (g1 = 2, a2 = 0.6)."""
    r, o = run("""
pool kv { cap 12; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (2) reserve (8) { run d (1); grow kv (4); observe g0 = now; run d (5); }
  } else { branch (serial == 1) {
    run d (0.5);
    hold kv (3) { run d (1.5); grow kv (2); observe g1 = now; run d (1); }
  } else {
    run d (0.6);
    hold kv (2) { observe a2 = now; run d (1); }
  } }
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["g0"]) == [(0, 1.0)]
    assert at(o["g1"]) == [(1, 6.0)]
    assert at(o["a2"]) == [(2, 6.0)]
    kv = pool(r, "kv")
    assert kv.used == pytest.approx(55.5 / 100, rel=1e-12)
    assert kv.wait == pytest.approx(5.4 / 3, rel=1e-12)


def test_reserve_held_in_blocks(monkeypatch):
    """pool-reference `reserve held`: "r_i is the larger of units and reserve, evaluated at admission and
    rounded up to blocks", u_i = max(0, r_i - a_i); docs/language.md: `free(p)` is cap - used - Σ u_i, and
    a `grow` adds whole blocks.

    cap 12, blocks of 4. s0 holds 1 (4) reserving 5 (8): u0 4, free 12 - 4 - 4 = 4. s1 at 0.5 takes 4:
    4 + 4 + 4 = 12, admitted. s2 at 1 wants 1 (4): 8 + 4 + 4 > 12, it waits. At 2 s0 grows by 1, a
    whole block inside its reservation: used 12, free 0. At 3.5 s1 leaves: s2 is admitted (8 + 0 + 4).
    Power: the reservation not rounded (r 5, u0 1) gives free 7."""
    _, o = run("""
pool kv { cap 12; block 4; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (1) reserve (5) { observe f = free(kv); run d (2); grow kv (1); observe g = used(kv) * 100 + free(kv);
                              run d (5); }
  } else {
    run d (serial * 0.5);
    hold kv (serial == 1 ? 4 : 1) { observe a = now; run d (3); }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["f"] == [(0, 0.0, 4.0)] and o["g"] == [(0, 2.0, 1200.0)]
    assert at(o["a"]) == [(1, 0.5), (2, 3.5)]


# --- (c) the step stage -----------------------------------------------------------------------------------

CHUNKED = """
pool reqs { cap 4; admit via E; }
pool kv { cap 64; block 4; preempt lifo; }
stage E : step { budget 6; chunk 4; cost COST; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (min(10, budget_left(E))) {
    observe a = used(kv);
    run E prefill (10) growing kv;
    observe f = now;
    run E decode (3) growing kv;
    observe t = now;
  } cache (13);
  observe k = cachedin(kv);
}
run { horizon 100; WARMUP }
"""
COMPOSITION = "1 + attention / 16 + kv_prefill / 64 + kv_decode / 128 + decoders / 4"


def chunked(cost=COMPOSITION, warmup=""):
    return CHUNKED.replace("COST", cost).replace("WARMUP", warmup)


def test_a_chunked_prefill_beside_another_and_a_cost_of_the_iteration_s_composition(monkeypatch):
    """§3 step: "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent; a
    growing job first grows its hold to the position it will reach (block by block …); then the stage admits
    from the queues it serves"; "The iteration advances the clock by C, an expression in tokens, decoders,
    prefilled, residents, kv_decode, kv_prefill, attention"; §2 attention = Σ n (K + n/2), K the position
    before the chunk; §7 the header reads budget_left(engine); docs/language.md: in `cost`, kv_prefill and
    kv_decode are the served jobs' allocations after the iteration's growth.

    budget 6, chunk 4, block 4. [it1 at 0] s0 admitted with min(10, 6) = 6 → 8 units, 4 tokens; s1 with
    budget_left 2 → 2 → 4 units, 2 tokens. attention 4·2 + 2·1 = 10, kv_prefill 12: 1 + 10/16 + 12/64 =
    1.8125. [it2 at 1.8125] s0 4 (K 4: 24), s1 2 (K 2: 6): 1 + 30/16 + 12/64 = 3.0625 → 4.875.
    [it3] s0's last 2 (K 8: 18; grows to 12), s1 4 (K 4: 24; grows to 8): 1 + 42/16 + 20/64 = 3.9375 →
    8.8125, s0's prefill done. [it4] s0 decodes (position 11 of 12), s1's last 2 (K 8: 18; grows to 12):
    1 + 18/16 + 12/64 + 12/128 + 1/4 = 2.65625 → 11.46875. [it5] two decoders, kv_decode 24: 1.6875 →
    13.15625. [it6] s0's third token grows it to 16: kv_decode 28, 1.71875 → 14.875, s0 done, caching
    13 rounded down to 12. [it7] s1 alone (grows to 16): 1.375 → 16.25.
    Power: chunk ignored (s0 takes 6 at first: f 5.5625 …), K counted from the run's chunk only (it2
    1 + 10/16 …), kv_prefill before the growth (it3 3.8125) — each moves f and t."""
    r, o = run(chunked(), monkeypatch)
    assert o["a"] == [(0, 0.0, 8.0), (1, 0.0, 12.0)]
    assert at(o["f"]) == [(0, 8.8125), (1, 11.46875)]
    assert at(o["t"]) == [(0, 14.875), (1, 16.25)]
    assert vals(o["k"]) == [12.0, 12.0]
    assert kinds(r) == (7, 3, 3, 1)
    e = stage(r, "E")
    assert (e.tokens, e.batch) == (26 / 7, 13 / 7)


def test_a_cost_of_the_tokens_the_prefill_tokens_and_the_residents(monkeypatch):
    """§3: C is "an expression in tokens, decoders, prefilled, residents, …"; docs/language.md: in `cost`,
    `residents` counts the jobs on the stage once the iteration is planned (newcomers in).

    The program above with cost 1 + tokens / 8 + prefilled / 16 + residents / 32: it1, it2, it3 serve 6
    prefill tokens to 2 residents (the newcomers of it1 counted): 2.1875 each, s0's prefill done at
    6.5625; it4 s0's token and s1's last 2: 1 + 3/8 + 2/16 + 2/32 = 1.5625 → 8.125; it5, it6 two decode
    tokens: 1.3125 each → 10.75 (s0 done); it7 one: 1.15625 → 11.90625.
    Power: residents read before the admissions (0 at it1: 2.125) moves every time; tokens read as the
    prefill tokens only (it4 1.4375) moves f of s1 and both t."""
    r, o = run(chunked("1 + tokens / 8 + prefilled / 16 + residents / 32"), monkeypatch)
    assert at(o["f"]) == [(0, 6.5625), (1, 8.125)]
    assert at(o["t"]) == [(0, 10.75), (1, 11.90625)]
    assert kinds(r) == (7, 3, 3, 1)


def test_a_warm_up_on_an_iteration_s_boundary(monkeypatch):
    """program-reference `run`: "Samples before this time are discarded"; docs/simulator.md: a sample at
    the warm-up instant counts, and the engine's figures are over the iterations planned after it; a
    stage's and a pool's time averages are over [warmup, end].

    The program above with warmup 8.8125, it4's start: the admissions' samples (at 0) are cut, s0's end of
    prefill at 8.8125 counts; it4 … it7 count: 1 mixed, 3 decode-only, 3 + 2 + 2 + 1 tokens, 2 + 2 + 2 + 1
    jobs. E's runs completing in the window: 4, over service 8.8125 + 6.0625 + 11.46875 + 4.78125 = 31.125;
    busy 16.25 - 8.8125 = 7.4375 of 91.1875; present (2 · 6.0625 + 1.375) / 91.1875. kv: used 24 until
    13.15625, 28 until 14.875, 16 until 16.25; cached 12 from 14.875, 24 from 16.25; no admission counted.
    Power: a sample at the warm-up instant cut (f without s0) fails, and so does it3 counted (5
    iterations)."""
    r, o = run(chunked(warmup="warmup 8.8125;"), monkeypatch)
    w = 100 - 8.8125
    assert o["a"] == []
    assert at(o["f"]) == [(0, 8.8125), (1, 11.46875)]
    assert kinds(r) == (4, 0, 3, 1)
    e = stage(r, "E")
    assert (e.tokens, e.batch, e.completions) == (2.0, 1.75, 4)
    assert e.service == 31.125 / 4
    assert e.utilisation == pytest.approx(7.4375 / w, rel=1e-12)
    assert e.present == pytest.approx((2 * 6.0625 + 1.375) / w, rel=1e-12)
    kv = pool(r, "kv")
    assert kv.used == pytest.approx((24 * 4.34375 + 28 * 1.71875 + 16 * 1.375) / w, rel=1e-12)
    assert kv.cached == pytest.approx((12 * 1.375 + 24 * 83.75) / w, rel=1e-12)
    assert kv.admissions == 0


def test_serve_by_ties_go_in_admission_order_where_the_budget_runs_out(monkeypatch):
    """§3: "by (k₁, …) (ascending keys evaluated for each resident with decoding …; ties in admission
    order)"; "up to chunk to a prefilling one, until the budget is spent".

    serve by (decoding), budget 4, chunk 3: s0 decodes 2, s1 prefills 3, s2 decodes 2, s3 prefills 6, all
    at 0. [0,1]: the prefills first in admission order: s1 3 (done at 1), s3 1. [1,2]: s3 3, s0 1 (the
    decoders tie: s0 before s2, which gets nothing). [2,3]: s3 2 (done at 3), s0 1 (done at 3), s2 1.
    [3,4]: s2 1 (done at 4). 1 prefill-only, 2 mixed, 1 decode-only; 13 tokens.
    Power: ties broken by the last admitted gives s3 3 first (s1 done at 3, s3 at 2)."""
    r, o = run("""
stage E : step { budget 4; chunk 3; cost 1; serve by (decoding); }
workload { arrive batch(4); }
session {
  branch (serial == 0 || serial == 2) { run E decode (2); } else { run E prefill (serial == 1 ? 3 : 6); }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["t"]) == [(1, 1.0), (0, 3.0), (3, 3.0), (2, 4.0)]
    assert kinds(r) == (4, 1, 1, 2)
    assert stage(r, "E").tokens == 13 / 4


def test_runs_that_end_with_one_iteration_resume_in_the_order_it_served_them(monkeypatch):
    """§3 Ties: "sessions run in the order they became ready"; "A step stage's residents: the serve by keys,
    then admission order"; the stage admits "then", after the residents' tokens. docs/language.md ("Runs
    that end at one iteration's end …"): the runs an iteration completes end with it, and their sessions
    become ready in the order it served them, residents first, then the sessions it admitted.

    serve by (-serial), budget 10: s0 and s1 admitted at 0 decode 2; s2 joins reqs' queue at 0.5 and
    decodes 1. [1,2] serves s1, s0 (the keys), then admits s2: all three end at 2 and queue for a slot of
    one in that order: s1 holds it at 2, s0 at 3, s2 at 4. In admission order (no serve keys) s0, s1, s2.
    Power: the newcomer ordered by the keys with the residents (s2 first) and the residents resuming in
    admission order (s0 first) each fail."""
    src = """
pool reqs { cap 3; admit via E; }
pool slot { cap 1; }
stage E : step { budget 10; cost 1; SERVE }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (0.5); }
  hold reqs (1) { run E decode (serial == 2 ? 1 : 2); }
  hold slot (1) { observe a = now; run d (1); }
}
run { horizon 100; }
"""
    _, o = run(src.replace("SERVE", "serve by (-serial);"), monkeypatch)
    assert at(o["a"]) == [(1, 2.0), (0, 3.0), (2, 4.0)]
    _, o = run(src.replace("SERVE", ""), monkeypatch)
    assert at(o["a"]) == [(0, 2.0), (1, 3.0), (2, 4.0)]


def test_an_iteration_that_only_preempted_lasts_the_cost_at_no_token(monkeypatch):
    """§3: "An iteration that schedules no token is not an iteration, unless it preempted: then it is the
    scheduler step that only preempted …, and the next iteration re-admits the victim. It lasts C at zero
    tokens"; docs/language.md: `residents` in the cost counts the jobs once the iteration is planned
    (victims out); pool-reference: "the grower can be its own victim"; §3 Statistics: stuck counts sessions
    preempted again without having advanced past their previous preemption's position.

    kv cap 6: s0 holds 4 away from the engine until 20. s1 holds reqs and kv 2 and decodes 4 growing, cost
    2 + tokens: [0,3] position 1, [3,6] 2; at 6 its growth to 3 fails, it is the only candidate: [6,8]
    preempted only (2 at no token). Re-admitted at 8 (computed 2), it decodes from 0 again: [8,11], [11,14],
    [14,16] preempted only (position 2 again: stuck), [16,19], [19,22]; at 22 s0 has left: [22,25],
    [25,28]. 10 iterations, 8 decode-only, 2 that only preempted.
    Power: the empty step dropped (s1 re-admitted at 6) gives admissions at 6 and 12 and the end at 24."""
    src = """
pool reqs { cap 2; admit via E; }
pool kv { cap 6; preempt lifo; }
stage E : step { budget 8; cost COST; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (20); }
  } else {
    hold reqs (1), kv (2) { observe a = now * 10 + computed; run E decode (4) growing kv; }
    observe t = now;
  }
}
run { horizon 100; }
"""
    for cost in ("2 + tokens", "2 + residents"):
        r, o = run(src.replace("COST", cost), monkeypatch)
        assert vals(o["a"]) == [0.0, 82.0, 162.0]
        assert at(o["t"]) == [(1, 28.0)]
        assert kinds(r) == (10, 0, 8, 0)
        assert stage(r, "E").utilisation == 28 / 100
        kv = pool(r, "kv")
        assert (kv.preemptions, kv.stuck) == (2, 1)


KEEP_OR_RECOMPUTE = """
pool kv { cap 16; block 4; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (4) reuse (REUSE) {
    observe o = cached * 100 + computed;
    run E decode (12 - cached) growing kv;
  } cache (12);
  observe t = now;
}
run { horizon 100; }
"""


def test_a_victim_that_keeps_its_prefix_and_one_that_recomputes(monkeypatch):
    """§3: the victim's "hold is released with its computed prefix cached", "The re-executed hold finds
    computed set to the position the hold had computed … so a program can resume rather than restart";
    "A program that recomputes from the prompt alone says so by not reading computed"; `reuse (0) cache (ℓ)`
    skips the lookup and leaves the entry dead; docs/language.md: an iteration's victim on a pool no stage
    admits is admitted again at the next event.

    cap 16, blocks of 4; s0 and s1 hold 4 and decode 12 growing, one token an iteration. Both grow to 8 at
    the planning at 4; at 8 s0's growth to 12 fails: s1 (last admitted, position 8) caches 8 and the growth
    evicts its tail block: 4 left. keep (reuse (computed)): s1 is admitted at 9 consuming its 4 (o = 408),
    and its first token needs a fifth unit: it preempts itself at 9, 10 and 11 (o = 404 each time, stuck
    once); at 12 s0 is done (caching 12) and s1 decodes its 8 tokens from 4: [12,20], evicting s0's tail
    at 12 and 16. recompute (reuse (0)): s1 is admitted at 9 with cached 0 (o = 8; its 4 left dead), 4
    tokens fit its allocation, and it decodes 12: done at 21; the dead entry is the first evicted (when s0
    caches 12 at 12), then s0's tail at 13 and 17.
    Power: a victim caching nothing (keep's o = 8 at 9, no self-preemption) and the eviction taking the
    newer entry first fail."""
    r, o = run(KEEP_OR_RECOMPUTE.replace("REUSE", "computed"), monkeypatch)
    assert o["o"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 9.0, 408.0), (1, 10.0, 404.0), (1, 11.0, 404.0),
                      (1, 12.0, 404.0)]
    assert at(o["t"]) == [(0, 12.0), (1, 20.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.evicted_units, kv.admissions) == (4, 1, 12.0, 6)
    assert kinds(r) == (20, 0, 20, 0)
    r, o = run(KEEP_OR_RECOMPUTE.replace("REUSE", "0"), monkeypatch)
    assert o["o"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 9.0, 8.0)]
    assert at(o["t"]) == [(0, 12.0), (1, 21.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.evicted_units, kv.evicted_entries) == (1, 0, 16.0, 1)
    assert kinds(r) == (21, 0, 21, 0)


def test_attention_s_k_for_a_run_that_grows_its_hold_and_for_one_that_grows_none(monkeypatch):
    """§2: attention = Σ n (K + n/2) over the prefill chunks, K the position before the chunk;
    docs/step-costs.md ("Which tokens a chunk's K counts"): a growing run's K is its hold's position on the
    pool it grows (the prefix the hold consumed included), and a run that grows nothing counts its own
    tokens.

    budget 4, cost 1 + attention / 16. Hold 1: prefill 8 growing: chunks at K 0 and 4: 1.5 + 2.5 → 4;
    cached 8. Hold 2 consumes those 8 (cached 8): a prefill of 4 growing nothing: K 0, 1.5 → 5.5; then 4
    growing: K 8 (the consumed prefix; the run before advanced nothing): 1 + 40/16 = 3.5 → 9. Outside any
    hold, a prefill of 8: K 0 and 4 again, 4 → 13.
    Power: K read as the hold's position for the run that grows nothing (1 + 40/16 at 4) gives t2 = 7.5."""
    _, o = run("""
pool kv { cap 64; block 4; }
stage E : step { budget 4; cost 1 + attention / 16; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (8) { run E prefill (8) growing kv; } cache (10);
  observe t1 = now;
  hold kv (12) reuse (8) { observe c = cached; run E prefill (4); observe t2 = now;
                           run E prefill (4) growing kv; } cache (12);
  observe t3 = now;
  run E prefill (8);
  observe t4 = now;
}
run { horizon 100; }
""", monkeypatch)
    assert vals(o["t1"]) == [4.0] and vals(o["c"]) == [8.0]
    assert vals(o["t2"]) == [5.5] and vals(o["t3"]) == [9.0] and vals(o["t4"]) == [13.0]


# --- (d) blocks and LRU ------------------------------------------------------------------------------------

def test_blocks_round_allocations_up_and_prefixes_down_and_lru_takes_the_first_released_tail(monkeypatch):
    """pool-reference `block`: "Allocations round up, and cache entries are kept and evicted, in blocks …
    An entry is evicted from its tail, block by block"; §3: "min(ℓ, computed) units stay cached, rounded
    down to blocks"; `evict lru`: "release time, then release order"; §3 Ties: "the release time (lru),
    then the order the entries were released"; cachedin reads the session's own prefix.

    cap 24, blocks of 4. At 0: s0 holds 10 (12), s1 7 (8), s3 4: 24. At 0.5 s3 caches 4; at 1 s0 caches
    10 → 8 and then s1 7 → 4 (s0's run ends first: released first). At 2 s2 holds 13 → 16 (used 16, free
    8): 16 + 16 cached evicts 2 blocks: s3's (released at 0.5), then the tail block of s0's (released at 1
    before s1's): s0 4, s1 4, s3 0. At 3 s0 reads 4 and holds 6 (8) reusing up to 8: cached 4; at 4 it
    caches min(6, 8) = 6 → 4. Cached: 4·0.5 + 16·1 + 8·1 + 4·1 + 8·96 = 798 over 100.
    Power: ties in release time taken in the other order (s1's evicted) gives h0 8, c0 8, h1 0."""
    r, o = run("""
pool kv { cap 24; block 4; evict lru; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) {
    hold kv (10) { run d (1); } cache (10);
    run d (2);
    observe h0 = cachedin(kv);
    hold kv (6) reuse (8) { observe c0 = cached; run d (1); } cache (6);
    observe e0 = cachedin(kv);
  } else { branch (serial == 1) {
    hold kv (7) { run d (1); } cache (7);
    run d (2.5);
    observe h1 = cachedin(kv);
  } else { branch (serial == 2) {
    run d (2);
    hold kv (13) { observe u2 = used(kv) * 100 + free(kv); run d (0.5); }
  } else {
    hold kv (4) { run d (0.5); } cache (4);
    run d (3.5);
    observe h3 = cachedin(kv);
  } } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["h0"] == [(0, 3.0, 4.0)] and o["c0"] == [(0, 3.0, 4.0)] and o["e0"] == [(0, 4.0, 4.0)]
    assert o["h1"] == [(1, 3.5, 4.0)] and o["h3"] == [(3, 4.0, 0.0)]
    assert o["u2"] == [(2, 2.0, 1608.0)]
    kv = pool(r, "kv")
    assert (kv.evicted_units, kv.evicted_entries) == (8.0, 1)
    assert kv.cached == pytest.approx(798 / 100, rel=1e-12)


# --- (e) run { arrivals N; } --------------------------------------------------------------------------------

ARRIVALS = """
stage d : delay;
workload { arrive renewal(2); }
session { run d (3); observe x = now - 0; }
run { horizon HORIZON; warmup 4; arrivals 3; }
"""


def test_arrivals_end_the_run_when_the_last_session_drains(monkeypatch):
    """language.txt §2: "run { arrivals N; } requires exactly N open-workload arrivals and drains their
    sessions. horizon bounds both …; failure to generate N arrivals or drain every session by that deadline
    is an error"; "Time averages and rates use end - warmup"; renewal's first arrival after one gap.

    renewal(2), 3 arrivals: at 2, 4, 6, each ends 3 later: end 9. Over [4, 9]: d has 2 jobs on [4,5), 1 on
    [5,6), 2 on [6,7), 1 on [7,9]: present 7/5; 3 completions, throughput 3/5; 3 samples. --arrivals 2
    (serq_sim.run(arrivals=2)): end 7, mean live (2 + 1 + 1) / 3. A horizon of 9 is met (drained at 9);
    8.5 is not (a session still live), 5.5 has 2 arrivals only.
    Power: a first arrival at 0 (poisson's rule) ends at 7; a deadline read as strict fails horizon 9."""
    r, o = run(ARRIVALS.replace("HORIZON", "100"), monkeypatch)
    res = r.result
    assert (res.end, res.arrivals, res.ended) == (9.0, 3, 3)
    assert at(o["x"]) == [(0, 5.0), (1, 7.0), (2, 9.0)]
    d = stage(r, "d")
    assert (d.present, d.completions, d.throughput) == (7 / 5, 3, 3 / 5)
    r, _ = run(ARRIVALS.replace("HORIZON", "9"), monkeypatch)
    assert r.result.end == 9.0
    prog = serq_frontend.compile(source=ARRIVALS.replace("HORIZON", "100"), sets={}, defs={})
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier) if tier else monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        two = serq_sim.run(prog, arrivals=2).result
        assert (two.end, two.arrivals, two.mean_live) == (7.0, 2, 4 / 3)
    assert "1 session still live at the horizon" in run_error(ARRIVALS.replace("HORIZON", "8.5"), monkeypatch)
    assert "only 2 arrivals by the horizon" in run_error(ARRIVALS.replace("HORIZON", "5.5"), monkeypatch)


# --- (f) the chunk is an amount ------------------------------------------------------------------------------

PAUSED = """
pool reqs { cap 2; admit via E; }
stage E : step { budget 4; chunk decoders > 0 ? 0 : CHUNK; cost 1; SERVE }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (WAIT); }
  hold reqs (1) { observe a = now; branch (serial == 0) { run E decode (2); } else { run E prefill (3); } }
  observe t = now;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("serve", ["", "serve exclusive prefill;"])
def test_a_chunk_of_0_gives_a_prefill_no_token(monkeypatch, serve):
    """§3: "One token to a decoding job, up to chunk to a prefilling one"; docs/language.md ("Amounts are
    not negative"): a chunk is an amount of tokens, as the budget is, and 0 gives a prefill none;
    `serve exclusive prefill`: "A resident prefill takes precedence", "a waiting prefill that fits can
    replace them and use the full budget" — a prefill a chunk of 0 gives no token is not selected and
    displaces nothing (docs/language.md, as for a prefill whose growth waits).

    chunk `decoders > 0 ? 0 : 2` (the decoders before the iteration), budget 4, reqs admitted by E: s0
    decodes 2, s1 prefills 3, both admitted at 0, when no decoder is resident: [0,1] s0 1, s1 2. [1,2]: s0's
    last token (chunk 0: s1 none), done at 2; [2,3] s1's last, done at 3. Under exclusive prefill s1,
    admitted after s0, displaces s0's tentative token at 0 ([0,1] s1 2); then s1 is passed over while s0
    decodes (chunk 0): [1,2], [2,3], s0 done at 3; [3,4] s1, done at 4.
    s1 waiting in reqs' queue from 0.5 instead, chunk 4: at 1 it is admitted beside s0's decode (its chunk
    0) and takes nothing, without displacing s0's token; [2,3] s1's 3: done at 3; under either order.
    Power: chunk 0 read as no cap (as the simulator did, vLLM's threshold 0) ends both at 2 (exclusive: s1
    at 2, s0 at 4), and in the second program both at 2 (exclusive: s1 at 2, s0 at 3); a resident prefill
    selected with no token stalls the engine (s0 never ends); a newcomer displacing s0 with no token puts
    s0's end at 3."""
    _, o = run(PAUSED.replace("CHUNK", "2").replace("SERVE", serve).replace("WAIT", "0"), monkeypatch)
    assert at(o["t"]) == ([(0, 3.0), (1, 4.0)] if serve else [(0, 2.0), (1, 3.0)])
    r, o = run(PAUSED.replace("CHUNK", "4").replace("SERVE", serve).replace("WAIT", "0.5"), monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 1.0)]
    assert at(o["t"]) == [(0, 2.0), (1, 3.0)]
    assert kinds(r) == (3, 1, 2, 0)


def test_a_chunk_that_is_no_amount_is_an_error(monkeypatch):
    """docs/language.md ("Amounts are not negative"): a constant chunk that is negative does not link (nor
    loads as IR), a computed one that is negative or NaN is a run-time error naming the stage and the time,
    the same on both tiers (it was taken as no cap).

    chunk 2 - now: 2 at 0, 1 at 1, 0 at 2, -1 at 3, where s1's prefill of 8 still waits: the error at t=3.
    Power: the former rule (no cap) runs the program to its end."""
    src = """
stage E : step { budget 4; chunk CHUNK; cost 1; }
workload { arrive batch(2); }
session { branch (serial == 0) { run E decode (5); } else { run E prefill (8); } observe t = now; }
run { horizon 100; }
"""
    assert refused(src.replace("CHUNK", "-1")) == "stage `E`: the chunk is negative (-1); a prefill's chunk is at least 0"
    assert run_error(src.replace("CHUNK", "2 - now"), monkeypatch).endswith(
        "error: at t=3: stage E: the chunk is negative (-1)")
    assert run_error(src.replace("CHUNK", "(now - 1) / (now - 1)"), monkeypatch).endswith(
        "error: at t=1: stage E: the chunk is NaN")
    ir = json.loads(serq_ir.encode(serq_frontend.compile(source=src.replace("CHUNK", "2"), sets={}, defs={})))
    ir["stages"][0]["kind"]["chunk"]["value"] = -1.0
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(json.dumps(ir), name="x")
    assert str(e.value) == ("error: x: the chunk is negative (-1); a prefill's chunk is at least 0 - at "
                            "'$.stages[0].kind.chunk'")
