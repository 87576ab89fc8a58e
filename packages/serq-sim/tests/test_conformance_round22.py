"""Conformance of what pool-reference.txt and program-reference.txt add to language.txt, sentence by
sentence: every pool option (cap, block, evict, preempt and its requeue, queue and `waited`, reserve held,
admit via, spill) and the run block with `arrivals`, in the dialect docs/language.md describes (`admit via
STAGE` is a pool option; the pages' `fn main()`, `pool NAME on ENGINE` and `cost(…)` are another dialect's).
Each sentence that states behaviour is a rule; the checklist gives the line it is read from and the test
that holds the simulator to a hand-computed outcome (an earlier test, by its file and name, or a test
"here"). Files are serq-sim's tests unless named with their package.

Checklist (P = pool-reference.txt, R = program-reference.txt; line numbers of those pages):

  id   line  rule                                                    test
  -- the pool and its defaults --
  c01  P3    `pool NAME [N] { option* }`, the options' grammar       serq-frontend test_conformance_syntax:
                                                                     test_every_production_compiles_and_formats_to_a_fixed_point
  c02  P13   every option is optional (`pool p { }`)                 serq-frontend test_conformance_round21 (G7);
                                                                     here: test_an_empty_pool_has_no_cap_and_no_block
  c03  P16   cap defaults to inf                                     here: test_an_empty_pool_has_no_cap_and_no_block
  c04  P17   block defaults to none: an allocation is the units      here: test_an_empty_pool_has_no_cap_and_no_block
  c05  P18   evict defaults to lru                                   here: test_a_pool_with_only_a_cap_takes_every_default
  c06  P19   preempt defaults to none: a grow waits                  here: test_a_pool_with_only_a_cap_takes_every_default
  c07  P20   queue defaults to fifo                                  here: test_a_pool_with_only_a_cap_takes_every_default
  c08  P21   reserve held is off: reserve checked at admission only  hand: test_reserve_is_checked_at_admission_only;
                                                                     here: test_a_pool_with_only_a_cap_takes_every_default
  c09  P22   spill defaults to none: an evicted prefix is gone       here: test_a_pool_with_only_a_cap_takes_every_default
  c10  P24   units or reserve independent of the state above the     round13_a: test_a_hold_is_rejected_when_its_units_or_
             cap after block rounding: rejected, the session ends    reserve_exceed_the_cap_after_block_rounding; hand:
                                                                     test_rejection_of_a_hold_that_can_never_fit
  c11  P24   state-dependent demand waits; over_cap at the end       sem: test_state_dependent_demand_above_the_cap_is_
                                                                     over_cap_at_the_end
  c12  P24   (silent) whether `now` and a draw are the state         here: test_demand_that_reads_the_clock_or_draws_waits_
             (docs/simulator.md, Pools: they are)                    and_demand_of_attributes_is_rejected
  -- cap, block, evict --
  c13  P30   cached prefixes never block an admission: evicted       round20: test_a_hold_without_cache_evicts_the_sessions_
                                                                     own_prefix_for_its_allocation
  c14  P36   allocations round up to blocks                          audit2: test_a_grow_is_rounded_to_blocks_and_evicts_
                                                                     for_its_allocation; test_block_rounding
  c15  P36   cache entries are kept in blocks (rounded down)         audit2: test_what_a_release_caches_is_rounded_down_to_
                                                                     blocks
  c16  P36   an entry is evicted from its tail, block by block       hand: test_eviction_orders_per_block_from_the_tail
  c17  P44   lru: release time, then release order                   audit: test_eviction_ties_go_to_the_release_order_
                                                                     within_an_instant
  c18  P45   by: ascending keys, then release order                  audit6: test_an_eviction_key_that_draws_is_drawn_per_
                                                                     entry_and_ties_go_to_the_release_order
  c19  P47   keys per entry at the Evict moment: size, age, last,    round12: test_eviction_orders_that_read_age_by_hand;
             waiting; the smallest goes first                        audit2: test_eviction_orders; sem: test_evict_by_waiting
  c20  P47   the entry's session's attributes: current while it      hand: test_eviction_keys_read_an_ended_sessions_
             lives, as at its last release after it has ended        attributes_at_its_last_release
  -- preempt --
  c21  P58   none: the grower waits for room, then resumes           hand: test_step_grower_waits_under_preempt_none;
                                                                     here (the default)
  c22  P59   by: the least keys, compared in order                   round11: test_a_burst_of_victims_under_kept_keys
  c23  P59   by: ties go to the last admitted                        sem: test_preempt_by_ties_go_to_the_last_admitted
  c24  P60   lifo is by (-admission) requeue head                    serq-frontend test_conformance_syntax: test_every_sugar_
                                                                     has_the_ir_of_its_kernel_program (preempt_lifo_is_by_
                                                                     minus_admission_requeue_head)
  c25  P62   candidates: the residents of the stage whose memory     hand: test_step_growth_preempts_the_last_admitted_
             the pool is                                             resident; round13_b: test_lifo_preempts_the_last_
                                                                     admitted_resident_not_the_last_served
  c26  P62   no such stage: the holders with an active hold scope    hand: test_preempt_lifo_without_a_stage_preempts_the_
                                                                     last_admitted_holder
  c27  P62   leases are no candidates                                sem: test_a_lease_is_no_victim
  c28  P62   the grower can be its own victim                        hand: test_preempt_by_keys_can_pick_the_grower
  c29  P64   the victim leaves its stage, releases its hold and      sem: test_a_preemption_releases_the_holds_down_to_the_
             caches its computed prefix                              preempted_one; audit7: test_a_victim_leaves_a_fifo_
                                                                     stage_and_the_next_job_starts
  c29b P64   (silent) a victim's hold without cache caches nothing   audit10: test_growing_decoders_evict_the_oldest_prefix_
             (docs/language.md: the clause decides, as at release)   first_and_the_last_admitted_preempts_itself; here:
                                                                     test_a_victim_caches_its_computed_prefix_per_its_cache_
                                                                     clause
  c30  P64   it re-enters the hold's first pool's queue              sem: test_requeue_on_an_engine_goes_to_the_holds_first_
                                                                     pool; audit5: test_two_victims_on_an_engine_re_enter_
                                                                     their_first_pools_queue_in_turn
  c31  P64   computed is set to the position reached                 round20: test_computed_is_the_position_in_the_re_
                                                                     executed_hold_and_0_after_it_completes
  c32  P64   requeue head (the default) places it first, ahead of    hand: test_requeue_head_and_tail; serq-frontend
             the policy keys                                         test_conformance_syntax (requeue_head_is_the_default)
  c33  P64   requeue tail in a fifo queue: last                      hand: test_requeue_head_and_tail; audit2: test_
                                                                     requeue_tail_places_the_victim_behind_a_waiting_hold
  c34  P64   requeue tail under queue by: by its keys, waited 0      round13_a: test_a_grower_that_is_its_own_victim_re_
                                                                     enters_at_the_tail_with_waited_reset; round20: test_
                                                                     the_priority_queue_example_of_the_pool_reference
  c35  P66   keys read at the Victim moment, for each candidate:     round20: test_the_priority_queue_example_of_the_pool_
             its visible attributes                                  reference
  c36  P66   admission: the engine's serving order, or the order     round13_b: test_lifo_preempts_the_last_admitted_
             the pool admitted its holders                           resident_not_the_last_served; hand: test_preempt_lifo_
                                                                     without_a_stage_preempts_the_last_admitted_holder
  c37  P66   decoding: 1 for a decoding resident                     audit: test_preempt_by_decoding
  c38  P66   position: what its hold has computed on the pool        audit: test_a_victim_keyed_by_position_on_the_engines_
                                                                     memory
  c39  P66   constants, now, pool and stage queries                  here: test_victim_keys_read_pool_and_stage_queries_
                                                                     of_each_candidate, test_victim_keys_read_now_at_each_
                                                                     preemption
  c40  P66   a key may not draw, read budget_left or computed        serq-frontend test_conformance_round19 (r41, r42)
  c41  P70   the priority-queue example                              round20: test_the_priority_queue_example_of_the_pool_
                                                                     reference
  -- queue --
  c42  P80   by: keys read for every waiting hold before each        hand: test_queue_by_reads_waited_at_each_admission;
             attempt, compared in order, ties by enqueue order       audit2: test_queue_by_ties_go_to_the_join_order
  c43  P80   one key is a list of one                                audit2: test_queue_by_keys_are_read_again_after_each_
                                                                     admission (one key; the grammar: c01)
  c44  P80   waited: seconds since the hold entered the queue,       round13_a: test_a_grower_that_is_its_own_victim_re_
             reset on re-entry                                       enters_at_the_tail_with_waited_reset; test_waited_
                                                                     queue: test_the_head_is_the_scans
  c45  P80   keys read attributes, now, pool and stage queries       audit2: test_queue_by_keys_are_read_again_after_each_
                                                                     admission (a pool query); here: test_queue_keys_read_
                                                                     now_and_a_stage_query_at_each_attempt
  c46  P80   keys may not draw                                       serq-frontend test_conformance_round19 (r40)
  c47  P82   a preempted hold re-enters at the head unless its       hand: test_requeue_head_and_tail
             pool says requeue tail
  c48  P82   only the selected hold is tried: it blocks the rest     audit: test_queue_by_tries_only_the_selected_hold
  c49  P82   fifo keeps enqueue order                                hand: test_head_of_line_blocking; here: test_a_pool_
                                                                     with_only_a_cap_takes_every_default
  c50  P82   selection at admission attempts; no aging timer         audit5: test_a_waited_key_changes_the_head_only_at_an_
                                                                     admission_attempt
  c51  P82   a stage-bound pool: budget_left that admission's, the   hand: test_step_queue_by_keys_are_evaluated_again_
             policy read again after every admission                 after_each_admission
  c52  P86   the priority lanes with a three-second aging threshold  audit7: test_the_priority_lanes_of_queue_by_with_
                                                                     waited; test_threshold_queue: test_the_head_is_the_
                                                                     scans, test_random_threshold_keys_give_the_scans_head
  -- reserve held --
  c53  P95   without it, reserve is checked at admission only        hand: test_reserve_is_checked_at_admission_only
  c54  P95   with it, unallocated reservations count against later   hand: test_reserve_held_counts_against_later_admissions
             admissions (used + sum u_i + r <= cap)
  c55  P99   and against growth by other holds; the grower uses its  hand: test_reserve_held_growth_uses_own_reservation;
             own reservation                                         audit2: test_reserve_held_counts_other_holds_
                                                                     reservations_against_a_growth
  c56  P99   r_i: the larger of units and reserve, at admission,     sem: test_reserve_held_rounds_the_reservation_to_blocks
             rounded up to blocks
  c57  P101  each hold counts separately, nested holds included      sem: test_reserve_held_counts_nested_holds_separately
  c58  P101  reservations end with the scope, release, preemption;   sem: test_reserve_held_ends_with_release; hand: test_
             leases retain none                                      a_lease_retains_no_reservation; audit: test_a_
                                                                     preemption_ends_the_victims_reservation
  c59  P101  cached prefixes evicted when allocated, not reserved    audit: test_cached_prefixes_are_evicted_for_
                                                                     allocations_not_for_reservations
  c60  P101  growth beyond the reservation follows preempt           round13_a: test_a_growth_beyond_its_reservation_
                                                                     follows_the_pools_preempt_rule
  -- admit via --
  c61  P105  `admit via ENGINE` refused, `pool NAME on ENGINE`       serq-frontend test_conformance_round19 (r75);
             (another dialect: admit via is this one's option)       docs/language.md, "differs"
  c62  P105  served in each iteration's admit waiting, after the     hand: test_step_admission_budget_left_and_no_admission_
             running requests' tokens, while budget is left          after_preemption
  c63  P105  without one, admission whenever an event settles        audit5: test_the_settle_follows_each_event_not_each_
                                                                     instant
  c64  P105  budget_left(ENGINE) in the hold's header                audit: test_admission_happens_only_while_the_
                                                                     iteration_has_budget_left
  c65  P105  an engine serving several pools: declaration order      audit2: test_an_engine_serving_two_queues_tries_them_
                                                                     in_declaration_order
  c66  P107  exclusive prefill: a selected prefill stops admission,  hand: test_step_exclusive_prefill_displaces_tentative_
             displaces tentative decodes, sees the full budget;      decodes; audit5: test_exclusive_prefill_admits_
             the usual gates apply                                   nothing_in_an_iteration_whose_tentative_decode_preempted
  -- spill --
  c67  P114  the evicted prefix written to TIER, taking time on LINK more: test_spill_writes_the_evicted_prefix_to_the_
                                                                     tier_when_its_predicate_holds; spill_semantics: test_a_
                                                                     spilled_prefix_is_usable_when_its_write_completes
  c68  P116  work and pred at the Evict moment; work put on LINK     audit2: test_spill_predicate_and_work_are_read_at_the_
                                                                     evict_moment; spill_semantics: test_a_spill_limited_
                                                                     by_its_tiers_room_puts_what_it_writes_on_the_link
  c69  P117  spilled when pred is non-zero (any such value); it may  here: test_a_spill_predicate_is_any_non_zero_value
             read size
  -- program-reference: pool and run --
  c70  R64   `pool NAME[N]`: N whole and >= 1 (a let accepted here)  serq-frontend test_conformance_round19 (r54);
                                                                     docs/language.md, "differs"
  c71  R121  the run block's fields in any order                     audit3: test_the_run_blocks_defaults_and_any_order
  c72  R124  horizon is required                                     test_run_horizon
  c73  R125  warmup 0 by default, below horizon                      audit3: test_the_run_blocks_defaults_and_any_order;
                                                                     serq-frontend test_conformance_round19 (r07)
  c74  R126  seed 1 by default; each of the streams its own          audit3: test_the_run_blocks_defaults_and_any_order;
                                                                     audit7: test_arrivals_the_workload_the_session_and_
                                                                     trace_sampling_draw_from_their_own_streams
  c75  R127  arrivals N: exactly N arrivals, then until all ended    round16: test_arrivals_end_the_run_when_the_last_
                                                                     session_drains; hand: test_run_arrivals_deadline_and_
                                                                     warmup
  c76  R127  arrivals only with an open workload, a whole N >= 1     serq-frontend test_conformance_round19 (r05, r06)
  c77  R129  --horizon, --warmup, --seed, --arrivals override        more: test_the_flags_override_the_run_block_field_by_
                                                                     field
  c78  R133  the deadline passed with fewer than N arrivals or a     hand: test_run_arrivals_deadline_and_warmup;
             session live, or a drain at or before the warmup: error serq-frontend test_conformance_round19 (r03, r04)
  c79  R133  end is the time the run ended; rates and averages over  audit2: test_a_finite_runs_pool_and_gauge_averages_
             end - warmup                                            are_over_end_minus_warmup

Counts: 80 rules; 69 checked by earlier tests with hand-computed outcomes, 11 newly here (c02 in part:
round21 compiled the empty pool but ran nothing on it; c03-c07, c09, c39, c45 in part: the earlier test's
key read a pool query, not the clock or a stage; c69; c12 and c29b, where the pages are silent; c29b's
earlier test held the no-clause case only inside a step engine's run). No disagreement: every program
below gives the outcome its derivation says, on the tier serQ picks and on the general engine (the empty
pool's program takes the fast tier, the others the general engine). Two readings the pages leave open
are now written down: docs/simulator.md (Pools), `now` and a draw in a hold's units are the deployment's
state for P24's rule, so such a demand waits rather than being rejected at the join (c12); and
docs/language.md ("A preemption caches computed prefixes …"), a victim's hold without `cache` caches
nothing, as at its release (c29b).
"""

from __future__ import annotations

import pytest
from conform import _run, pool, run, stage

pytestmark = pytest.mark.timeout(60)


# --- c02-c09: the defaults of the pool's options --------------------------------------------------------

EMPTY = """
pool p { }
stage d : delay;
workload { arrive batch(3); }
session { hold p (2.5 + 1e9 * serial) { observe a = now; run d (1); observe u = used(p); observe f = free(p); } }
run { horizon 5; }
"""


def test_an_empty_pool_has_no_cap_and_no_block(monkeypatch):
    """P13 "Every option is optional"; P16 `cap` defaults to `inf`; P17 `block` to none (no rounding).

    Three holds of 2.5, 1e9 + 2.5 and 2e9 + 2.5 units: no cap, so all three are admitted at 0 (with any
    cap the last could not be). At 1 each reads used before its hold ends, in serial order: 3e9 + 7.5 (no
    block: the units as written, not rounded), then 3e9 + 5 (s0's 2.5 gone), then 2e9 + 2.5; free is inf.
    used's time average over [0, 5] is (3e9 + 7.5) / 5. The program takes the fast tier."""
    r, o = run(EMPTY, monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0)]
    assert o["u"] == [(0, 1.0, 3e9 + 7.5), (1, 1.0, 3e9 + 5.0), (2, 1.0, 2e9 + 2.5)]
    assert [v for _, _, v in o["f"]] == [float("inf")] * 3
    p = pool(r, "p")
    assert (p.admissions, p.queue, p.wait, p.used) == (3, 0.0, 0.0, (3e9 + 7.5) / 5)
    assert _run(EMPTY, monkeypatch, "").tier == "fast"


DEFAULTS = """
pool q { cap 4; OPTIONS }
pool c { cap 4; OPTIONS }
stage d : delay;
workload { arrive batch(7); }
session {
  branch (serial == 0) { hold q (1) reserve (4) { observe a = now; run d (1); grow q (2); observe g = now; run d (1); } }
  branch (serial == 1) { hold q (3) { observe a = now; run d (2); } }
  branch (serial == 2) { hold c (1) { run d (1); } cache (1); run d (3); observe k = cachedin(c); }
  branch (serial == 3) { hold c (1) { run d (2); } cache (1); run d (2); observe k = cachedin(c); }
  branch (serial == 4) { run d (3); hold c (3) { observe a = now; run d (2); } }
  branch (serial == 5) { run d (3.5); hold c (2) { observe a = now; run d (1); } }
  branch (serial == 6) { run d (3.6); hold c (1) { observe a = now; run d (1); } }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("options", ["", "evict lru; preempt none; queue fifo;"])
def test_a_pool_with_only_a_cap_takes_every_default(options, monkeypatch):
    """P18-P22, P82: a pool that says only its cap evicts lru, preempts none, queues fifo, does not hold
    reservations and spills nothing; written out, the same outcome.

    q (cap 4): s0 holds 1 reserve 4 (1 + max(1, 4) <= 4: admitted at 0); s1's 3 fits beside s0's 1 at 0,
    since s0's unallocated reservation of 3 does not count (with reserve held: 1 + 3 + 3 > 4, s1 waits
    until 2). At 1 s0 grows 2: 4 + 2 > 4, and with preempt none it waits (no victim: lifo would preempt
    s1) until s1 ends at 2: g = 2.
    c (cap 4): s2 caches 1 at 1, s3 caches 1 at 2. At 3 s4's 3 needs 3 + 2 > 4: one entry goes, the least
    recently released, s2's (lru; evict by (-last) would take s3's). At 4 s2 reads 0 and s3 reads 1 in c.
    s5 (2) joins at 3.5, s6 (1) at 3.6: s6 would fit beside s4's 3 (evicting s3's entry), but fifo tries
    the head, s5 (3 + 2 > 4), alone: both are admitted at 5, when s4 ends (2 + 1 used beside s3's entry of
    1: no eviction; with queue by (-serial) s6 would go at 3.6). One entry evicted, of 1 unit; no
    preemption, no spill (a tier would be written nothing: there is none)."""
    r, o = run(DEFAULTS.replace("OPTIONS", options), monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (4, 3.0, 3.0), (5, 5.0, 5.0), (6, 5.0, 5.0)]
    assert o["g"] == [(0, 2.0, 2.0)]
    assert o["k"] == [(2, 4.0, 0.0), (3, 4.0, 1.0)]
    q, c = pool(r, "q"), pool(r, "c")
    assert (q.preemptions, q.admissions, c.preemptions, c.spills) == (0, 2, 0, 0)
    assert (c.admissions, c.evicted_entries, c.evicted_units) == (5, 1, 1.0)


# --- c12: what P24 counts as the deployment's state -------------------------------------------------------

STATE = """
pool a { cap 10; }
pool b { cap 10; }
pool c { cap 10; }
stage d : delay;
workload { arrive batch(6); }
session {
  set u = 20;
  branch (serial == 0) { hold a (now + 20) { run d (1); } }
  branch (serial == 1) { hold b (~uniform(20, 30)) { run d (1); } }
  branch (serial == 2) { hold c (u) { run d (1); } observe never = now; }
  branch (serial == 3) { hold a (1) { observe adm = now; run d (1); } }
  branch (serial == 4) { hold b (1) { observe adm = now; run d (1); } }
  branch (serial == 5) { hold c (1) { observe adm = now; run d (1); } }
}
run { horizon 5; }
"""


def test_demand_that_reads_the_clock_or_draws_waits_and_demand_of_attributes_is_rejected(monkeypatch):
    """P24: "If either units or reserve is independent of deployment state and exceeds capacity after block
    rounding, the hold is rejected and its session ends. State-dependent demand waits for admission and is
    reported as over_cap if it still exceeds capacity at the end of the run." The page does not say
    whether the clock and a draw are the state; docs/simulator.md (Pools) says they are: a hold's units
    are evaluated at every attempt, a draw drawn again there, so their value at the join is not the one
    the hold would be admitted with.

    Every cap 10. s0's now + 20 at a and s1's draw from [20, 30] at b wait and block the holds behind
    them (s3 at a, s4 at b) to the horizon: over_cap 1 each, no rejection. s2's 20
    read from an attribute is rejected when it joins c: its session ends (`never` is not observed), and
    s5 behind it is admitted at 0."""
    r, o = run(STATE, monkeypatch)
    assert (o["adm"], o["never"]) == ([(5, 0.0, 0.0)], [])
    a, b, c = pool(r, "a"), pool(r, "b"), pool(r, "c")
    assert (a.rejections, a.over_cap, a.admissions, a.queue) == (0, 1, 0, 2.0)
    assert (b.rejections, b.over_cap, b.admissions, b.queue) == (0, 1, 0, 2.0)
    assert (c.rejections, c.over_cap, c.admissions) == (1, 0, 1)
    assert (r.result.ended, r.result.arrivals) == (2, 6)


# --- c39: a victim's keys read constants, now, pool and stage queries --------------------------------------


def test_victim_keys_read_pool_and_stage_queries_of_each_candidate(monkeypatch):
    """P66: the keys "are read at the Victim moment, for each candidate: its visible attributes, … constants,
    now and pool and stage queries".

    kv (cap 3, no stage's memory: the candidates are its holders). s0, s1, s2 hold side[serial] (2, 1, 1)
    around kv (1) and run e[serial] over [0, 1]; s3 runs e[1] over [0, 10]. At 1 s2 grows kv by 1 (its
    run ended last of the three): no room, and preempt by (used(side[g]), -queue(e[g])) reads, per
    candidate, s0 (2, 0), s1 (1, -1), s2 (1, 0): s1 is the victim. Without the stage query s1 and s2 tie
    and the last admitted, s2 itself, would go; keys read once, for the grower, would tie all three and
    give s2 too. s1 keeps side[1] (its hold around kv's), leaves d, re-enters kv's queue at the head and
    is admitted at 3, when s0 and s2 end; it runs e[1] and d again: done at 6."""
    r, o = run("""
pool side[3] { cap 10; }
pool kv { cap 3; preempt by (used(side[g]), -queue(e[g])); }
stage d : delay;
stage e[3] : delay;
workload { arrive batch(4); }
session {
  set g = serial;
  branch (serial == 3) { run e[1] (10); }
  else {
    hold side[g] (serial == 0 ? 2 : 1) {
      hold kv (1) {
        observe adm = now;
        run e[g] (1);
        branch (serial == 2) { grow kv (1); observe grew = now; }
        run d (2);
      }
      observe side = used(side[g]);
    }
  }
  observe done = now;
}
run { horizon 50; }
""", monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (1, 3.0, 3.0)]
    assert o["grew"] == [(2, 1.0, 1.0)]
    assert o["side"] == [(0, 3.0, 2.0), (2, 3.0, 1.0), (1, 6.0, 1.0)]
    assert o["done"] == [(0, 3.0, 3.0), (2, 3.0, 3.0), (1, 6.0, 6.0), (3, 10.0, 10.0)]
    assert (pool(r, "kv").preemptions, pool(r, "kv").admissions) == (1, 4)


def test_victim_keys_read_now_at_each_preemption(monkeypatch):
    """P66: the keys read `now` and constants at the Victim moment. kv (cap 4), four holders of 1 from 0; s1
    grows by 1 at 1 and again at 3 (s1 runs d 1, grows, 2, grows, 2). preempt by (now >= T ? serial :
    -serial), T = 2: at 1 the keys are -serial, so s3 (-3) is the victim; at 3 they are serial, so s0 (0).
    Both re-enter kv's queue at the head (s0 ahead of s3) and are admitted at 5, when s1 ends (its 3 units
    back; s2 holds 1): both done at 15, s2 at 10. A key read at admission (now = 0) would take s2 at 3."""
    r, o = run("""
let T = 2;
pool kv { cap 4; preempt by (now >= T ? serial : -serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  hold kv (1) {
    observe adm = now;
    branch (serial == 1) { run d (1); grow kv (1); run d (2); grow kv (1); run d (2); } else { run d (10); }
  }
  observe done = now;
}
run { horizon 50; }
""", monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (3, 0.0, 0.0), (0, 5.0, 5.0), (3, 5.0, 5.0)]
    assert o["done"] == [(1, 5.0, 5.0), (2, 10.0, 10.0), (0, 15.0, 15.0), (3, 15.0, 15.0)]
    assert pool(r, "kv").preemptions == 2


# --- c45: queue keys read now and a stage query at each attempt -----------------------------------------------


def test_queue_keys_read_now_and_a_stage_query_at_each_attempt(monkeypatch):
    """P80: "Keys may read visible session attributes, now and pool/stage queries"; they are read for every
    waiting hold before each admission attempt.

    m (cap 1), queue by (queue(e[g]), now < 2 ? serial : -serial), g = serial % 2. s0 holds m [0, 1]; s1
    to s4 wait from 0; s5 runs on e[1] over [0, 10] (queue(e[1]) = 1, queue(e[0]) = 0). At 1 the keys
    are s1 (1, 1), s2 (0, 2), s3 (1, 3), s4 (0, 4): s2, [1, 3]. At 3: s1 (1, -1), s3 (1, -3), s4 (0, -4):
    s4, [3, 5]. At 5: s3 (1, -3) before s1 (1, -1): s3, [5, 7]; s1 at 7. (Without the stage query s1 would
    go at 1; with the clock read at the join, s1 at 5 and s3 at 7.)"""
    _, o = run("""
pool m { cap 1; queue by (queue(e[g]), now < 2 ? serial : -serial); }
stage d : delay;
stage e[2] : delay;
workload { arrive batch(6); }
session {
  set g = serial % 2;
  branch (serial == 5) { run e[1] (10); } else { hold m (1) { observe adm = now; run d (serial == 0 ? 1 : 2); } }
}
run { horizon 50; }
""", monkeypatch)
    assert sorted(o["adm"], key=lambda x: x[1]) == [(0, 0.0, 0.0), (2, 1.0, 1.0), (4, 3.0, 3.0), (3, 5.0, 5.0),
                                                   (1, 7.0, 7.0)]


# --- c69: a spill's predicate -----------------------------------------------------------------------------------


def test_a_spill_predicate_is_any_non_zero_value(monkeypatch):
    """P117: "The prefix is spilled when this is non-zero. May read `size`." when (size - 2): an entry of 1
    (-1) and one of 3 (1) are spilled, one of 2 (0) is not.

    kv (cap 3), the tier (cap 10) over a delay link. s0 (1 unit, [0, 1]), s1 (2, [0, 2]) and s2 (3, waiting)
    hold kv and cache what they held. At 1 s0's 1 is cached; s2 still cannot fit (2 used). At 2 s1 caches
    2; s2's 3 evicts both, lru: s0's 1 (spilled: written, work 1 on the link [2, 3]) and s1's 2 (not
    spilled). s2 runs [2, 5] and caches 3; s3's hold of 3 (joined at 4) evicts it at 5: spilled, work 3 on
    the link [5, 8]. At 20 + i session i reads what it has in the tier: 1, 0, 3. Link: 2 completions,
    service 2. The tier caches 1 over [2, 50] and 3 over [5, 50]: (48 + 135) / 50."""
    r, o = run("""
pool kv { cap 3; spill tier via link (size) when (size - 2); }
pool tier { cap 10; }
stage d : delay;
stage link : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    hold kv (serial + 1) { run d (serial + 1); } cache (serial + 1);
    run d (20); observe t = cachedin(tier);
  } else { run d (4); hold kv (3) { run d (1); } }
}
run { horizon 50; }
""", monkeypatch)
    assert o["t"] == [(0, 21.0, 1.0), (1, 22.0, 0.0), (2, 25.0, 3.0)]
    kv, tier, link = pool(r, "kv"), pool(r, "tier"), stage(r, "link")
    assert (kv.spills, kv.evicted_entries, kv.evicted_units) == (2, 3, 6.0)
    assert (link.completions, link.service) == (2, 2.0)
    assert tier.cached == 183 / 50


# --- c29: what a victim caches --------------------------------------------------------------------------------


@pytest.mark.parametrize("clause, kept, after", [("", 0.0, 0.0), ("cache (2);", 89 / 50, 2.0)])
def test_a_victim_caches_its_computed_prefix_per_its_cache_clause(clause, kept, after, monkeypatch):
    """P64: "The victim leaves its stage, releases its hold and caches its computed prefix"; language.txt §3:
    "The cache clause is what makes a hold take part in the prefix cache", a hold without it is "memory
    alone". docs/language.md ("A preemption caches computed prefixes …"): the clause decides, at a
    preemption as at a release.

    kv (cap 4, lifo, no block). s0 and s1 hold 2 each from 0; s1 loads 1 (position 1). At 1 s0 grows by 1
    (4 + 1 > 4) and s1, the last admitted, is the victim. With cache (2) it caches min(2, 1) = 1, which
    leaves room for s0's growth (3 + 1 <= 4); without the clause it caches nothing. At 6 s0 ends and
    caches 3; s1 is admitted again (computed 1): with the clause it consumes its own 1, and both ways s0's
    3 are evicted for its 2 (2 + 3 > 4). It loads 1 and at 8 caches min(2, 2) = 2 with the clause,
    nothing without. cached: 1 over [1, 6) and 2 over [8, 50] with the clause, (5 + 84) / 50; none
    without. (A victim caching its prefix whatever its clause would keep 1 over [1, 6): 0.1.)"""
    r, o = run("""
pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (1); run d (5); } cache (3); }
  else { hold kv (2) { observe k = computed; load kv (1); run d (2); } CLAUSE observe after = cachedin(kv); }
}
run { horizon 50; }
""".replace("CLAUSE", clause), monkeypatch)
    assert o["k"] == [(1, 0.0, 0.0), (1, 6.0, 1.0)]
    assert o["after"] == [(1, 8.0, after)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.admissions, kv.evicted_entries, kv.evicted_units) == (1, 3, 1, 3.0)
    assert kv.cached == kept
