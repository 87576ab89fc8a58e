"""Conformance of what a program does: every semantic rule of language.txt (§2's run-time words and §3),
pool-reference.txt and program-reference.txt, in the dialect docs/language.md describes (its "differs"
and "silent" sections, and docs/simulator.md's "Decisions", decide where the pages are silent or part).
The checklist below lists each rule, the line it is read from and the test that holds the simulator to a
hand-computed outcome: an earlier test (by its name; ``X`` is test_conformance_X.py, other files are named
whole) or a test of this file ("here").

Checklist (L = language.txt, P = pool-reference.txt, R = program-reference.txt):

  id   line  rule                                                            test
  -- ordering of events at equal times, the settle --
  s01  L254  commands take no time; sessions run in the order they became     round12: test_sessions_admitted_together_
             ready                                                            run_in_the_order_they_became_ready
  s02  L254  the settle after every event: ready sessions, then growers and   audit6: test_the_settle_follows_each_event_
             admissions at pools not served by a stage, until nothing changes not_each_instant; hand: test_a_release_then_
                                                                              a_hold_joins_before_the_settle_admits
  s03  L254  an idle step stage starts only when no other event is pending    hand: test_step_iteration_waits_for_the_
             at the instant                                                   instants_other_events
  s04  L264  events at one instant: the order they were scheduled             round14_a: test_an_arrival_at_a_releases_
                                                                              instant_comes_first_when_it_was_scheduled_first
  s05  L264  growers in the order they stalled, the head blocking; a waiting  hand: test_growers_in_the_order_they_stalled_
             grower before the queue's head                                   the_head_blocking; more: test_a_waiting_
                                                                              grower_goes_before_the_queues_head
  s06  L264  two queues' heads waiting for one pool: the pool declared first  more: test_heads_of_two_queues_waiting_for_
                                                                              one_pool_go_in_declaration_order
  s07  L264  ps jobs with equal finish tags finish in start order             sem: test_ps_jobs_with_equal_finish_tags_
                                                                              finish_in_start_order
  -- pools: admission, queue disciplines, head of line --
  s08  L256  a hold joins its first pool's queue only                         audit: test_a_hold_on_several_pools_is_
                                                                              queued_at_its_first_pool_only
  s09  L256  units, reserve, reuse evaluated at admission, not at the join    audit: test_units_are_evaluated_when_the_
                                                                              session_is_admitted
  s10  L256  admitted when used + max(u, reserve) <= cap; reserve checked at  hand: test_reserve_is_checked_at_admission_
             admission only                                                   only
  s11  L256  head-of-line blocking                                            hand: test_head_of_line_blocking
  s12  P80   queue by: keys read at every attempt, ties by join order         hand: test_queue_by_reads_waited_at_each_
                                                                              admission; sem: test_queue_by_ties_go_to_the_
                                                                              join_order
  s13  P82   only the selected hold is tried; no aging timer                  sem: test_queue_by_tries_only_the_selected_
                                                                              hold; audit2: test_a_waited_key_changes_the_
                                                                              head_only_at_an_admission_attempt
  s14  P82   stage-bound pool: budget_left is that admission's, keys read     hand: test_step_queue_by_keys_are_evaluated_
             again after every admission                                      again_after_each_admission
  s15  P86   the priority-lanes example with waited                           audit3: test_the_priority_lanes_of_queue_by_
                                                                              with_waited
  s16  P24   units or reserve that read no state above the cap (either one):  here: test_either_units_or_reserve_that_
             rejected at the join; state-dependent demand waits, over_cap     reads_no_state_above_the_cap_is_rejected;
                                                                              sem: test_rejection_is_judged_when_the_hold_
                                                                              joins_and_state_dependent_demand_waits
  -- reserve / reserve held --
  s17  P95   reserve held: other holds' unallocated reservations count        hand: test_reserve_held_counts_against_later_
             against admissions                                               admissions
  s18  P99   a growth may use its own reservation, not another's              hand: test_reserve_held_growth_uses_own_
                                                                              reservation
  s19  P101  nested holds count separately; reservations end with scope,      sem: test_reserve_held_counts_nested_holds_
             release, preemption; leases retain none                          separately, test_reserve_held_ends_with_
                                                                              release; hand: test_a_lease_retains_no_
                                                                              reservation; audit: test_a_preemption_ends_
                                                                              the_victims_reservation
  s20  P101  cached prefixes evicted when allocated, not when reserved        audit: test_cached_prefixes_are_evicted_for_
                                                                              allocations_not_for_reservations
  s21  P99   r rounded up to blocks; growth past it follows preempt           sem: test_reserve_held_rounds_the_reservation_
                                                                              to_blocks; audit5: test_a_growth_beyond_its_
                                                                              reservation_follows_the_pools_preempt_rule
  -- cache, reuse, cachedin, eviction --
  s22  L256  cache: consume at most reuse of the own prefix (cached :=), the  hand: test_cache_reuse_and_dead_entries;
             rest a dead entry of the same age                                sem: test_a_dead_remainder_keeps_its_release_
                                                                              time
  s23  L256  without cache: cached is 0, the own prefix left where it is      sem: test_a_consumed_prefix_sets_the_position_
                                                                              and_cached_is_0_after_a_hold_without_cache
  s24  L256  a hold without cache around the request's (released before it)  here: test_a_hold_without_cache_around_the_
             does not touch what the request finds                            requests_leaves_its_prefix_where_it_is
  s25  L256  a hold without cache: its own prefix evictable as before         here: test_a_hold_without_cache_evicts_the_
                                                                              sessions_own_prefix_for_its_allocation
  s26  L256  other entries evicted in the pool's order until it all fits;     hand: test_eviction_orders_per_block_from_the_
             per entry, or per block from the tail                            tail; more: test_eviction_orders
  s27  P44   lru: release time, then release order                            audit: test_eviction_ties_go_to_the_release_
                                                                              order_within_an_instant
  s28  P47   evict by: keys at the Evict moment (size, age, last, waiting,    hand: test_eviction_keys_read_an_ended_
             attributes: current, or at the last release once ended)          sessions_attributes_at_its_last_release;
                                                                              sem: test_evict_by_waiting; audit5: test_an_
                                                                              eviction_key_reads_a_living_sessions_current_
                                                                              attributes_for_its_dead_remainder_too
  s29  L256  release caches min(cache, computed), rounded down to blocks      more: test_what_a_release_caches_is_rounded_
                                                                              down_to_blocks
  s30  L258  a waiting session's own prefix stays evictable until it is       here: test_a_waiting_sessions_prefix_is_
             admitted (the wait channel), at a pool of its own                evictable_until_it_is_admitted
  s31  L258  the same under admit via: cachedin read when the engine admits   here: test_an_engine_reads_a_waiting_
                                                                              requests_prefix_when_it_admits_it
  s32  L256  drop forgets the own prefix                                      more: test_drop_discards_the_own_prefix_
                                                                              without_an_eviction
  s33  L256  end releases every hold, keeps the cached prefixes               more: test_end_inside_a_hold_caches_per_
                                                                              its_clause_and_ends_a_lease; audit2: test_a_
                                                                              closed_population_ending_inside_holds_keeps_
                                                                              and_loses_its_prefixes_in_lru_order
  s34  P111  spill: predicate and work at Evict; usable when written          more: test_spill_writes_the_evicted_prefix_to_
                                                                              the_tier_when_its_predicate_holds; audit2:
                                                                              test_spill_predicate_and_work_are_read_at_
                                                                              the_evict_moment; spill_semantics: test_a_
                                                                              spilled_prefix_is_usable_when_its_write_
                                                                              completes
  -- release, lease, load, transfer --
  s35  L256  release m: the innermost hold's allocation back now              audit4: test_release_in_a_hold_gives_the_
                                                                              allocation_back_now
  s36  L142  lease: until release, its seconds or the end, then cache         hand: test_lease_outlives_the_scope_until_its_
                                                                              time_or_a_release; audit9: test_a_lease_ends_
                                                                              with_its_session_before_its_seconds; audit:
                                                                              test_a_leases_cache_is_read_when_the_lease_ends
  s37  L256  load advances the position within the allocation                audit4: test_a_load_advances_the_position_
                                                                              within_the_allocation
  s38  L104  transfer: link run, load, release                                audit4: test_a_transfer_runs_the_link_loads_
                                                                              the_destination_and_releases_the_source
  s39  L242  pull: latency before each read, the NICs shared by the policy    more: test_pull_reads_share_the_nics_and_end_
                                                                              the_prefillers_lease; audit4: test_a_link_
                                                                              queues_latency_runs_before_its_transfer_
                                                                              once_per_link_in_order
  -- growth, growing runs, preemption --
  s40  L260  grow: rounded to blocks; preempt none waits and resumes          step: test_step_grower_waits_under_preempt_
                                                                              none; more: test_a_grow_is_rounded_to_blocks_
                                                                              and_evicts_for_its_allocation
  s41  L260  lifo on an engine's memory: the last admitted resident           hand: test_step_growth_preempts_the_last_
                                                                              admitted_resident; round13_b: test_lifo_
                                                                              preempts_the_last_admitted_resident_not_the_
                                                                              last_served
  s42  L260  lifo on a pool no engine counts: the last admitted holder        hand: test_preempt_lifo_without_a_stage_
                                                                              preempts_the_last_admitted_holder
  s43  P59   preempt by: least keys, ties to the last admitted; the grower    hand: test_preempt_by_keys_can_pick_the_
             can be its own victim                                            grower; sem: test_preempt_by_ties_go_to_the_
                                                                              last_admitted
  s44  P62   candidates: residents of the memory's stage, else active holds;  sem: test_a_lease_is_no_victim; audit5: test_
             leases never                                                     a_victims_lease_on_the_pool_stays
  s45  P64   the victim leaves its stage, releases its holds down to the      sem: test_a_preemption_releases_the_holds_down_
             preempted one caching the computed prefix                        to_the_preempted_one; audit7: test_a_victim_
                                                                              leaves_a_ps_stage_whose_capacity_is_read_again
  s46  P64   requeue head ahead of the keys; tail as a newcomer, waited 0     hand: test_requeue_head_and_tail; round13_b:
                                                                              test_a_grower_that_is_its_own_victim_re_
                                                                              enters_at_the_tail_with_waited_reset
  s47  P66   victim keys: admission, decoding, position                       audit: test_preempt_by_decoding, test_a_
                                                                              victim_keyed_by_position_on_the_engines_memory
  s48  P70   the priority-queue example: queue by (priority, t0), preempt by  here: test_the_priority_queue_example_of_
             (-priority, -t0) requeue tail (and head, to compare)             the_pool_reference
  s49  L260  the re-executed hold reads computed = the position reached; 0 on here: test_computed_is_the_position_in_the_
             a first execution and after a hold completes                     re_executed_hold_and_0_after_it_completes
  s50  L264  two victims of one growth re-enter in turn                       audit5: test_two_victims_of_one_growth_re_
                                                                              enter_the_queue_in_turn
  s51  L287  stuck: preempted again at no greater position                    audit2: test_a_session_stuck_in_preemption
  s52  L262  a victim waiting at a queue or as a grower leaves it             sem: test_a_victim_leaves_the_queue_or_the_
                                                                              growth_it_waits_in
  s91  L260  what a victim keeps: its attributes (a set in the body runs      here: test_what_a_preempted_session_keeps
             again on them), its holds around the preempted one; the prefix
             it caches is evictable by the growth that preempted it
  -- the step engine: budget, chunk, serve, admission --
  s53  L266  one token a decode, up to chunk a prefill, until the budget      hand: test_step_decode_takes_one_token_per_
             is spent (a fraction of one included)                            iteration; step: test_a_fractional_budget_
                                                                              gives_the_last_decoder_the_part_left
  s54  L266  serve by keys, ties in admission order; decode first;            hand: test_step_serve_orders_and_chunk;
             remaining; admission order is decode first without a chunk       round16: test_serve_by_ties_go_in_admission_
                                                                              order_where_the_budget_runs_out; audit:
                                                                              test_serve_by_remaining; audit8: test_serving_
                                                                              in_admission_order_is_serving_decode_first_
                                                                              without_a_chunk
  s55  L266  a growing job grows first; tokens applied when it ends           audit: test_growth_comes_before_the_tokens_
                                                                              and_observables_read_mid_iteration
  s56  L266  the cost reads the iteration's composition; budget and chunk     more: test_the_cost_reads_the_iterations_
             the residents before it                                          composition, test_the_budget_reads_the_
                                                                              residents_before_the_iteration
  s57  L266  attention = sum n (K + n/2)                                      hand: test_step_attention_counts_from_the_
                                                                              holds_position
  s58  L266  a run of zero work completes at once, no job                     hand: test_step_zero_work_completes_at_once;
                                                                              round15: test_a_run_of_zero_work_completes_
                                                                              at_once_and_is_no_job_of_its_stage
  s59  L266  no token and no preemption: no iteration; one that only          hand: test_step_a_preempting_step_with_no_
             preempted lasts C at zero tokens                                 token_lasts_its_cost; round16: test_an_
                                                                              iteration_that_only_preempted_lasts_the_cost_
                                                                              at_no_token
  s60  L258  admit via: after the residents, while budget is left, not after  hand: test_step_admission_budget_left_and_no_
             a preemption                                                     admission_after_preemption
  s61  L258  several queues in declaration order; the first head that does   hand: test_step_first_head_that_does_not_fit_
             not fit stops the iteration's admissions                         stops_all_queues; more: test_an_engine_serving_
                                                                              two_queues_tries_them_in_declaration_order
  s62  L266  exclusive prefill: a resident prefill alone; tentative decodes   hand: test_step_exclusive_prefill_displaces_
             displaced, keep their allocation; header sees the full budget    tentative_decodes, test_step_exclusive_
                                                                              prefill_resident_prefill_goes_alone; round13_b:
                                                                              test_a_displaced_decode_keeps_its_block_and_
                                                                              its_position_and_the_prefill_its_chunk
  s63  P107  exclusive prefill: a selected prefill stops admission; no        audit10: test_exclusive_prefill_admits_nothing_
             admission after a tentative decode preempted                     in_an_iteration_whose_tentative_decode_
                                                                              preempted
  s64  L266  chunk: an amount; 0 gives a prefill no token                     round16: test_a_chunk_of_0_gives_a_prefill_
                                                                              no_token
  s65  docs  a self-victim stops lifo's serving; a served victim gives its    round13_b: test_a_self_victim_ends_the_
             token back                                                       serving_under_lifos_order_however_spelt;
                                                                              step: test_a_victim_already_served_gives_its_
                                                                              token_back
  s66  L258  families member for member                                       round15: test_a_step_family_serves_its_pool_
                                                                              family_member_for_member; round12: test_a_
                                                                              family_of_engines_each_admits_its_own_queue_
                                                                              with_its_own_budget
  -- stages and flows --
  s67  L266  fifo(c), ps(phi(present)/present), delay                         hand: test_ps_fifo_and_delay_rates; sem:
                                                                              test_fifo_with_infinite_servers_and_two;
                                                                              audit3: test_a_ps_capacity_reading_present
  s68  L266  flows: maxmin progressive filling, bottleneck leaves the rest    hand: test_flows_maxmin_and_bottleneck; sem:
             unused; utilisation sum rate / phi                               test_flow_rates_where_the_policies_differ;
                                                                              more: test_a_flow_stages_utilisation_is_the_
                                                                              capacity_it_carries
  -- header, bindings, branching, choose --
  s69  L268  the header at admission; cache read at release (or preemption)   audit: test_a_preempted_holds_cache_clause_
                                                                              is_read_at_the_preemption
  s70  L281  branch with p is a bernoulli draw                                more: test_branch_with_is_a_bernoulli_draw
  s71  L264  choose: keys in order, then the least index; keys that draw      audit3: test_choose_keys_in_order_then_the_
             are drawn per candidate                                          least_index; audit6: test_choose_draws_its_
                                                                              keys_for_each_candidate; audit2: test_choose_
                                                                              joins_the_shortest_queue_of_a_stage_family
  -- workload, arrivals, runs --
  s72  L90   poisson arrives at 0; renewal after one gap; renewal(~exp(1 /    hand: test_poisson_starts_at_zero_then_
             rate)) the same later schedule                                   renewal_schedule; audit3: test_the_first_
                                                                              renewal_arrival_comes_after_one_gap_read_at_
                                                                              each_arrival
  s73  L283  init at arrival, turn at every turn; a batch's inits first       audit3: test_a_batch_runs_every_init_at_
                                                                              arrival_before_any_session_block; round13_a:
                                                                              test_the_turn_block_reads_the_turn_it_
                                                                              describes_and_init_the_turn_before_any
  s74  L283  a trace: ordered replays session i                               more: test_an_ordered_trace_replays_its_
                                                                              sessions_turn_by_turn
  s75  L283  arrivals, workload, session, eviction: streams of their own      audit3: test_arrivals_the_workload_the_
                                                                              session_and_trace_sampling_draw_from_their_
                                                                              own_streams
  s76  L54   closed(n) replaces a session when it ends                        audit2: test_a_closed_population_replaces_a_
                                                                              session_when_it_ends; more: test_closed_
                                                                              population_with_think_times_and_turns
  s77  L92   run { arrivals N }: drains, deadline, warm-up errors             hand: test_run_arrivals_deadline_and_warmup;
                                                                              round16: test_arrivals_end_the_run_when_the_
                                                                              last_session_drains
  s78  L94   end; averages over end - warmup                                  audit2: test_a_finite_runs_pool_and_gauge_
                                                                              averages_are_over_end_minus_warmup
  s79  R126  the run block's defaults, flags override field by field          audit3: test_the_run_blocks_defaults_and_
                                                                              any_order; more: test_the_flags_override_the_
                                                                              run_block_field_by_field
  s80  R12   --set a let, --def a definition                                  round13_a: test_an_expression_definitions_
                                                                              body_given_from_outside_is_the_program_
                                                                              written_with_it
  s81  L184  request; splices the server in place                             audit4: test_request_runs_the_server_in_its_
                                                                              place_and_the_program_is_the_one_block_session
  -- observes, records, warm-up and horizon cuts --
  s82  L287  observe: samples after the warm-up, one at it counts             audit: test_samples_before_the_warm_up_are_
                                                                              left_out_and_one_at_it_counts; audit6: test_
                                                                              what_the_warm_up_instant_counts
  s83  L287  the note on a test that never held                               audit: test_the_note_on_a_test_that_never_held
  s84  L289  gauges: read at the end of every instant, over [warmup, end]     audit2: test_gauges_read_the_end_of_each_
                                                                              instant_not_what_it_passes_through, test_a_
                                                                              gauges_time_average_ci_and_extremes_are_over_
                                                                              the_window_after_the_warm_up
  s85  docs  records: whole rows kept by their send time, cut at the horizon  audit6: test_the_warm_up_keeps_or_leaves_out_
                                                                              whole_rows_by_their_send_time; round14_a:
                                                                              test_records_are_written_per_statement_run_
                                                                              kept_by_sent_and_cut_at_the_horizon
  s86  L94   the horizon cuts off the sessions live at it; events at it run   audit2: test_a_horizon_cuts_off_the_sessions_
                                                                              live_at_the_end; audit10: test_an_iteration_
                                                                              a_lease_and_an_admission_at_the_horizon_happen
  s87  L287  pool figures after the warm-up, stuck over the whole run         round13_a: test_a_pools_counts_after_a_warm_
                                                                              up_and_stuck_over_the_whole_run
  s88  L96   online estimates, price                                          more: test_online_estimates_of_a_stage
  -- queues (sugar) at run time --
  s89  L246  an entry sets the queue's, observes the program's; mark          round17: test_what_an_entry_sets_is_the_
                                                                              queues_what_it_observes_the_programs_and_a_
                                                                              mark_is_one_attribute
  s90  L224  gateways route where requested and set what the session reads   audit4: test_gateways_coexist_route_where_
                                                                              requested_and_set_what_the_session_reads_back

Counts: 91 rules; 83 checked by earlier tests with hand-computed outcomes, 8 newly here (s24, s25, s30,
s31, s48, s49, s91, and s16 in part: its earlier test had the amount that reads no state alone, not one of
two beside an amount that reads the state). No disagreement: every program below gives the outcome its
derivation says, on the tier serQ picks and on the general engine (none is eligible for the fast tier:
each has a cache clause, a reserve or a preemption policy), and s48's record table is the same on both.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import pool, run, stage

pytestmark = pytest.mark.timeout(60)


def test_a_hold_without_cache_around_the_requests_leaves_its_prefix_where_it_is(monkeypatch):
    """L256: "Without it the hold is memory alone: it leaves the session's cached blocks where they are
    … So a hold around the request's on the same pool, a reservation given back with release before the
    request's admission, say, does not touch what the request will find."

    cap 10. [0, 1] the first hold caches 3 (its allocation). At 1 the outer hold (2, no cache) is
    admitted beside the entry (2 + 3 <= 10): cachedin 3, used 2. `release kv` gives its 2 back and caches
    nothing (no clause): cachedin still 3. The inner hold (3, cache) consumes its own 3: cached = 3,
    cachedin 0 in its body; [1, 2] it runs, then caches min(3, 3) = 3 again. No eviction anywhere.
    Against: a hold without cache that consumed the prefix as one with cache does would read a = 0."""
    r, o = run("""
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3) { run d (1); } cache (3);
  hold kv (2) {
    observe a = cachedin(kv);
    observe u = used(kv);
    release kv;
    observe b = cachedin(kv);
    hold kv (3) { observe k = cached; observe c = cachedin(kv); run d (1); } cache (3);
  }
  observe e = cachedin(kv);
}
run { horizon 100; }
""", monkeypatch)
    assert (o["a"], o["u"], o["b"]) == ([(0, 1.0, 3.0)], [(0, 1.0, 2.0)], [(0, 1.0, 3.0)])
    assert (o["k"], o["c"], o["e"]) == ([(0, 1.0, 3.0)], [(0, 1.0, 0.0)], [(0, 2.0, 3.0)])
    p = pool(r, "kv")
    assert (p.admissions, p.evicted_entries) == (3, 0)


def test_a_hold_without_cache_evicts_the_sessions_own_prefix_for_its_allocation(monkeypatch):
    """L256: a hold without cache leaves the session's cached blocks "where they are, evictable as before";
    "Other entries are evicted in the pool's order until allocations and cache fit"; "Eviction is per
    entry" (no block).

    cap 4. [0, 1] hold 3 with cache: entry 3 at 1. At 1 a hold of 3 without cache: 3 + 3 > 4, so the
    session's own entry (the only one) goes whole: cachedin 0 in the body (a), used 3; [1, 2]. At 2 no
    prefix (b = 0). A hold of 1 with cache at 2 finds nothing (k = 0), takes no time and caches
    min(1, 1) = 1; a hold of 2 with cache consumes that 1 and caches 2 at 3; a hold of 1 without cache
    fits beside it (1 + 2 <= 4): the prefix stays, c = 2 at 3 and e = 2 at 4. One eviction, of 3 units.
    Against: a hold without cache that could not evict the own prefix would not fit (3 + 3 > 4) and
    would wait for ever."""
    r, o = run("""
pool kv { cap 4; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (3) { run d (1); } cache (3);
  hold kv (3) { observe a = cachedin(kv); observe u = used(kv); run d (1); }
  observe b = cachedin(kv);
  hold kv (1) { observe k = cached; } cache (1);
  hold kv (2) { run d (1); } cache (2);
  hold kv (1) { observe c = cachedin(kv); run d (1); }
  observe e = cachedin(kv);
}
run { horizon 100; }
""", monkeypatch)
    assert (o["a"], o["u"], o["b"], o["k"]) == ([(0, 1.0, 0.0)], [(0, 1.0, 3.0)], [(0, 2.0, 0.0)],
                                                  [(0, 2.0, 0.0)])
    assert (o["c"], o["e"]) == ([(0, 3.0, 2.0)], [(0, 4.0, 2.0)])
    p = pool(r, "kv")
    assert (p.admissions, p.evicted_entries, p.evicted_units) == (5, 1, 3.0)


def test_a_waiting_sessions_prefix_is_evictable_until_it_is_admitted(monkeypatch):
    """L258: "Until then a waiting session's cached prefix is evictable, which is the wait channel";
    L256: the header is evaluated at admission, cached prefixes never block.

    slot cap 1, kv cap 4. s0 [0, 1] caches 3 on kv (c0 = 3 at 1), then holds slot (1), kv (3) with
    cache: it waits in slot's queue, s1 holding slot on [0, 3]. s2 after [0, 2] holds kv (4): used 0, the
    entry of 3 is evicted for it (its session waits, it is not pinned), admitted at 2, [2, 3]. At 3 two
    events, in the order they were scheduled: s1's end (at 0) frees slot, but kv is full (s2's 4) and s0
    waits; s2's end (at 2) frees kv and s0 is admitted at 3 with nothing to consume: cached 0.
    Against: a prefix pinned while its session waits would keep s2 out (3 + 4 > 4) until s0 is done, and
    s0 would read cached 3."""
    r, o = run("""
pool slot { cap 1; }
pool kv { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (3) { run d (1); } cache (3);
    observe c0 = cachedin(kv);
    hold slot (1), kv (3) { observe k = cached; observe t = now; run d (1); } cache (3);
  } else {
    branch (serial == 1) {
      hold slot (1) { run d (3); }
    } else {
      run d (2);
      hold kv (4) { observe t2 = now; run d (1); }
    }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["c0"] == [(0, 1.0, 3.0)]
    assert o["t2"] == [(2, 2.0, 2.0)]
    assert (o["t"], o["k"]) == ([(0, 3.0, 3.0)], [(0, 3.0, 0.0)])
    p = pool(r, "kv")
    assert (p.evicted_entries, p.evicted_units) == (1, 3.0)


def test_an_engine_reads_a_waiting_requests_prefix_when_it_admits_it(monkeypatch):
    """L258: a pool marked admit via S "is not admitted at settle time: its queue is served by step stage
    S, at the start of an iteration, after the residents have taken their tokens … Until then a waiting
    session's cached prefix is evictable"; L268: the header's bindings (cachedin) are read at admission;
    L266: a growing job first grows its hold to the position it will reach.

    reqs cap 1 (admitted by E), kv cap 4 (E's memory, no block), cost 1. Iteration [0, 1]: s0 admitted
    (reqs 1, kv 2), prefill 2. At 1 its hold caches 2 on kv (and min(2, 1) = 1 on reqs: the clause is
    the hold's, for each of its pools), c = 2; s0 queues again behind s1 (joined at 0.5). Iteration at 1:
    s1 admitted (kv 1 beside the entry of 2, reqs' entry of 1 evicted for its slot), served at once:
    decode token 1, position 1 (within 1). [2, 3]: token 2 grows the hold to 2 (2 + 2 <= 4). [3, 4]:
    token 3 grows it to 3: 3 + 2 > 4, s0's entry of 2 (waiting, not pinned) is evicted whole. s1 ends at
    4; iteration [4, 5] admits s0, whose binding h = cachedin(kv) is now 0: cached 0, kv (1), prefill 1;
    at 5 it caches min(3, position 1) = 1. Five iterations, three completions at E.
    Against: a header read when the session joined the queue (h = 2) would make s0 consume 2."""
    r, o = run("""
pool reqs { cap 1; admit via E; }
pool kv { cap 4; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (2) { run E prefill (2); } cache (2);
    observe c = cachedin(kv);
    hold reqs (1), kv (h + 1) at admission (h = cachedin(kv)) {
      observe k = cached; observe t = now; run E prefill (1) growing kv;
    } cache (3);
    observe e = cachedin(kv);
  } else {
    run d (0.5);
    hold reqs (1), kv (1) { observe t1 = now; run E decode (3) growing kv; }
    observe done1 = now;
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["c"] == [(0, 1.0, 2.0)]
    assert (o["t1"], o["done1"]) == ([(1, 1.0, 1.0)], [(1, 4.0, 4.0)])
    assert (o["t"], o["k"], o["e"]) == ([(0, 4.0, 4.0)], [(0, 4.0, 0.0)], [(0, 5.0, 1.0)])
    kv, reqs, e = pool(r, "kv"), pool(r, "reqs"), stage(r, "E")
    assert (kv.evicted_entries, kv.evicted_units, kv.admissions) == (1, 2.0, 3)
    assert (reqs.evicted_entries, reqs.evicted_units, reqs.admissions) == (1, 1.0, 3)
    assert (e.completions, e.iterations) == (3, 5)


def test_computed_is_the_position_in_the_re_executed_hold_and_0_after_it_completes(monkeypatch):
    """L260: "The re-executed hold finds computed set to the position the hold had computed (0 on a first
    execution and after a hold completes)"; P62: with no stage naming the pool as memory the candidates
    are the holders, lifo the last admitted.

    cap 4, preempt lifo, both admitted at 0 (s0 2, then s1 2). s1 loads 2 at 0 (position 2: computed 0
    in its first execution, c1 = 0 at 0) and runs [0, 3]. At 1 s0 grows by 1: 4 + 1 > 4, the last
    admitted holder s1 is preempted at position 2 (no cache clause: nothing cached) and re-queued; s0 grows
    to 3 and runs [1, 6]. s1 (2) does not fit beside 3 until s0 ends at 6: its hold executes again with
    computed 2 (c1 = 2 at 6), loads and runs [6, 9]. After the hold completes computed is 0 (c2 at 9), and
    so in the next hold's first execution (c3 at 9) and after it (c4 at 10).
    Against: computed left at the preemption's position after the hold completes would read 2 at 9 and 10."""
    r, o = run("""
pool m { cap 4; preempt lifo; }
stage svc : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (2) { run svc (1); grow m (1); run svc (5); }
  } else {
    hold m (2) { observe c1 = computed; load m (2); run svc (3); }
    observe c2 = computed;
    hold m (1) { observe c3 = computed; run svc (1); }
    observe c4 = computed;
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["c1"] == [(1, 0.0, 0.0), (1, 6.0, 2.0)]
    assert (o["c2"], o["c3"], o["c4"]) == ([(1, 9.0, 0.0)], [(1, 9.0, 0.0)], [(1, 10.0, 0.0)])
    p = pool(r, "m")
    assert (p.preemptions, p.admissions, p.stuck) == (1, 4, 0)


def test_either_units_or_reserve_that_reads_no_state_above_the_cap_is_rejected(monkeypatch):
    """P24: "If either units or reserve is independent of deployment state and exceeds capacity after block
    rounding, the hold is rejected and its session ends. State-dependent demand waits for admission and is
    reported as over_cap if it still exceeds capacity at the end of the run."

    cap 5, three sessions at 0. s0: units used(kv) (state), reserve 10 (none, above 5): rejected. s1: units
    10 (none, above 5), reserve used(kv): rejected. s2: units used(kv) + 6, reserve 1: only the state-
    dependent one exceeds: it waits to the horizon (queue 1 on average), over_cap 1. Neither of the first
    two observes `out`; two sessions ended.
    Against: a rejection that asked for both amounts to read no state would keep s0 and s1 waiting with s2
    (over_cap 3)."""
    r, o = run("""
pool kv { cap 5; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (used(kv)) reserve (10) { run d (1); } }
  else { branch (serial == 1) { hold kv (10) reserve (used(kv)) { run d (1); } }
  else { hold kv (used(kv) + 6) reserve (1) { run d (1); } } }
  observe out = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["out"] == []
    p = pool(r, "kv")
    assert (p.rejections, p.admissions, p.over_cap, p.queue) == (2, 0, 1, 1.0)
    assert r.result.ended == 2


PRIORITY = """
pool kv { cap 6; queue by (priority, t0); preempt by (-priority, -t0) requeue WHERE; }
stage d : delay;
workload { arrive batch(5); }
session {
  set priority = serial == 1 || serial == 2 || serial == 4 ? 1 : 0;
  run d (serial == 2 ? 0.1 : serial == 3 ? 0.5 : serial == 4 ? 0.3 : 0);
  set t0 = now;
  branch (serial == 0) {
    hold kv (2) { run d (1); grow kv (2); run d (1); }
  } else {
    hold kv (serial == 3 ? 4 : 2) {
      observe adm = now;
      record r { sent = t0; admitted = now; prio = priority; }
      run d (serial >= 3 ? 1 : 5);
    }
  }
  observe done = now;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("where", ["tail", "head"])
def test_the_priority_queue_example_of_the_pool_reference(where, monkeypatch):
    """P68-73: "For a priority queue where larger priority values lose first: queue by (priority, t0);
    preempt by (-priority, -t0) requeue tail;" with priority and the arrival time t0 set by the program;
    P59: the least keys lose; P62: with no engine the candidates are the holders; P64: "requeue head (the
    default) places it first, ahead of policy keys. requeue tail treats it as a newcomer: … queue by
    places it by its keys".

    cap 6. Arrivals (t0): s0 (prio 0) and s1 (1) at 0, s2 (1) at 0.1, s4 (1) at 0.3, s3 (0) at 0.5. s0 2
    and s1 2 at 0, s2 2 at 0.1: full. s4 (2) queues at 0.3, s3 (4) at 0.5: keys (0, 0.5) before (1, 0.3).
    At 1 s0 grows by 2: 6 + 2 > 6; keys (-priority, -t0): s0 (0, 0), s1 (-1, 0), s2 (-1, -0.1): s2, the
    later arrival of the losing priority, is the victim (2 back, no cache), s0 grows to 4: full.
    tail: s2 joins by its keys (1, 0.1): s3, s2, s4. At 2 s0 ends (4 back): s3 (4) fits, admitted at 2,
    then s2 (2 beside s1 2 + s3 4) does not: blocked. At 3 s3 ends: s2 and s4 admitted at 3. s1 ends 5,
    s4 at 4, s2 at 8.
    head: s2 first. At 2 s2 re-admitted (4 used), s3 (4) does not fit; at 5 s1 ends, s3 admitted (6), s4
    blocked; at 6 s3 ends and s4 is admitted. s2 ends at 7, s4 at 7.
    Six admissions (s2 twice). The record table holds one row per admission, the re-executed hold's
    included, its columns read when the statement runs."""
    r, o = run(PRIORITY.replace("WHERE", where), monkeypatch)
    if where == "tail":
        adm = [(1, 0.0, 0.0), (2, 0.1, 0.1), (3, 2.0, 2.0), (2, 3.0, 3.0), (4, 3.0, 3.0)]
        done = [(0, 2.0, 2.0), (3, 3.0, 3.0), (4, 4.0, 4.0), (1, 5.0, 5.0), (2, 8.0, 8.0)]
    else:
        adm = [(1, 0.0, 0.0), (2, 0.1, 0.1), (2, 2.0, 2.0), (3, 5.0, 5.0), (4, 6.0, 6.0)]
        done = [(0, 2.0, 2.0), (1, 5.0, 5.0), (3, 6.0, 6.0), (2, 7.0, 7.0), (4, 7.0, 7.0)]
    assert o["adm"] == adm
    assert o["done"] == done
    p = pool(r, "kv")
    assert (p.preemptions, p.admissions) == (1, 6)
    rows = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        prog = serq_frontend.compile(source=PRIORITY.replace("WHERE", where), sets={}, defs={})
        t = serq_sim.run(prog).records(kind="numpy")
        rows.append(sorted(zip(t["session"].tolist(), t["sent"].tolist(), t["admitted"].tolist(),
                               t["prio"].tolist())))
    assert rows[0] == rows[1]
    t0 = {1: 0.0, 2: 0.1, 3: 0.5, 4: 0.3}
    prio = {1: 1, 2: 1, 3: 0, 4: 1}
    assert rows[1] == sorted((s, t0[s], a, prio[s]) for s, a, _ in adm)


def test_what_a_preempted_session_keeps(monkeypatch):
    """L260: the victim's "job leaves its stage, its hold is released with its computed prefix cached, and it
    re-enters the head of the pool's queue with the hold statement to execute again"; P64: "The victim
    leaves its stage, releases its hold and caches its computed prefix"; §3 Configuration: the attributes
    are the session's, so a `set` in the body before the preemption is kept and runs again; a hold around
    the preempted one, on another pool, stays (the holds down to the preempted one are released); and the
    prefix the victim caches is an entry like any other, evictable by the growth that preempted it.

    a cap 10, m cap 4 preempt lifo. s0 holds m 2 at 0, runs [0, 1]. s1 holds a 1, then m 2 at 0: n = 1,
    ua = 1, loads 2 (position 2), runs [0, 3]. At 1 s0 grows by 1: 4 + 1 > 4, the last admitted holder s1
    is preempted: its run leaves svc, its hold on m caches min(2, 2) = 2 and it re-queues at m's head; its
    hold on a stays. s0's growth then needs 2 + 2 cached + 1 > 4: s1's entry of 2 is evicted whole, s0
    grows to 3 and runs [1, 6]. s1's hold (2) fits only when s0 ends at 6: admitted again with nothing
    cached (k = 0), n = 2, ua still 1; it loads 2, runs [6, 9] and caches 2 (ca = 2 at 9, n2 = 2). m: 3
    admissions, 1 preemption, 1 entry of 2 evicted; a: 1 admission, never released before 9.
    Against: attributes restored at a re-execution would give n1 = 1 at 6; an outer hold released with the
    preempted one would read ua = 0 at 6 and a second admission on a."""
    r, o = run("""
pool a { cap 10; }
pool m { cap 4; preempt lifo; }
stage svc : delay;
workload { arrive batch(2); }
session {
  set n = 0;
  branch (serial == 0) {
    hold m (2) { run svc (1); grow m (1); run svc (5); }
  } else {
    hold a (1) {
      hold m (2) {
        set n = n + 1; observe k = cached; observe ua = used(a); observe n1 = n; load m (2); run svc (3);
      } cache (2);
    } cache (1);
    observe n2 = n;
    observe ca = cachedin(m);
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["n1"] == [(1, 0.0, 1.0), (1, 6.0, 2.0)]
    assert o["ua"] == [(1, 0.0, 1.0), (1, 6.0, 1.0)]
    assert o["k"] == [(1, 0.0, 0.0), (1, 6.0, 0.0)]
    assert (o["n2"], o["ca"]) == ([(1, 9.0, 2.0)], [(1, 9.0, 2.0)])
    m, a = pool(r, "m"), pool(r, "a")
    assert (m.admissions, m.preemptions, m.evicted_entries, m.evicted_units) == (3, 1, 1, 2.0)
    assert (a.admissions, a.preemptions) == (1, 0)
