"""Conformance of language.txt §2, §3 and §7 (and pool-reference.txt, program-reference.txt) by hand,
round 38: the step engine's rules one at a time (the budget and the chunk read before each iteration, the
serving orders `serve by` with their ties, `serve decode first` against admission order under a chunk cap,
the cost's variables `decoders`, `prefilled`, `kv_decode`, `kv_prefill` and `attention`, a newcomer's first
chunk planned in the iteration that admits it, `serve exclusive prefill`, an iteration that only preempts),
holds with `reserve` and `reserve held` and `grow` across turns, leases and transfers in time, `observe`
and `record` inside holds that are executed again, the report's figures under a warm-up, the built-in
functions and draws at their edge arguments, and the run-time errors §2 and §3 name.

§3, Stages: "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent; a
growing job first grows its hold to the position it will reach (block by block, preempting if needed);
then the stage admits from the queues it serves. The iteration advances the clock by C, an expression in
tokens, decoders, prefilled, residents, kv_decode, kv_prefill, attention"; §2, Expressions: "attention =
Σ n (K + n/2) over the prefill chunks, K the position before the chunk".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
from conform import check_by_hand, run, run_error
from tiers import assert_same

inf = math.inf
nan = math.nan

# ---------------------------------------------------------------------------------------------------------
# The step engine, rule by rule
# ---------------------------------------------------------------------------------------------------------

STEP = [
    # `budget 1 + decoders`, read before each iteration (decoders: the decoding residents then). s0 prefills
    # 3 alone at budget 1: tokens at [0,1], [1,2], [2,3], p 3. From 3 s0 decodes: budget 2, s0's decode
    # token first (admission order), s1's prefill the other: s1 at [3,4], [4,5], [5,6] (p 6) and s0's three
    # decode tokens then too (d 6). s1 decodes alone from 6, one token an iteration (budget 2, one
    # decoder): [6,7], [7,8], [8,9] → d 9; 3 + 3 + 3 iterations.
    ("budget_reads_decoders_each_iteration", """
stage e : step { budget 1 + decoders; cost 1; }
workload { arrive batch(2); }
session {
  run e prefill (3);
  observe p = now;
  run e decode (3);
  observe d = now;
}
run { horizon 100; }
""", {"p": [(0, 3.0, 3.0), (1, 6.0, 6.0)], "d": [(0, 6.0, 6.0), (1, 9.0, 9.0)]},
     {("e", None): {"iterations": 9}}),
    # `chunk 6 / residents`: three residents, chunk 2, budget 10: each takes 2 at [0,1] and [1,2]; s0 (4) is
    # done at 2. Two residents: chunk 3: s1 its last 2, s2 3 of 4 at [2,3]. One resident: chunk 6: s2 its
    # last 1 at [3,4].
    ("chunk_reads_residents_each_iteration", """
stage e : step { budget 10; cost 1; chunk 6 / residents; }
workload { arrive batch(3); }
session { run e prefill (4 + 2 * serial); observe p = now; }
run { horizon 100; }
""", {"p": [(0, 2.0, 2.0), (1, 3.0, 3.0), (2, 4.0, 4.0)]}, {("e", None): {"iterations": 4}}),
    # serve by (remaining), budget 3: s2 (2 left) first, then s0 and s1 (4 each) tie in admission order: s2
    # 2 and s0 1 at [0,1]; s0 (3) before s1 (4): s0 3 at [1,2]; s1 3 then 1: done at 4.
    ("serve_by_remaining_ties_in_admission_order", """
stage e : step { budget 3; cost 1; serve by (remaining); }
workload { arrive batch(3); }
session { run e prefill (serial == 2 ? 2 : 4); observe p = now; }
run { horizon 100; }
""", {"p": [(2, 1.0, 1.0), (0, 2.0, 2.0), (1, 4.0, 4.0)]}, {}),
    # serve by (-remaining), budget 3: s0, s1 (-4) tie, admission order: s0 3 at [0,1]. Then s1 (-4), s2
    # (-2), s0 (-1): s1 3 at [1,2]. Then s2 (-2), s0 and s1 (-1, admission order): s2 2, s0 1 at [2,3];
    # s1 its last 1 at [3,4].
    ("serve_by_minus_remaining", """
stage e : step { budget 3; cost 1; serve by (-remaining); }
workload { arrive batch(3); }
session { run e prefill (serial == 2 ? 2 : 4); observe p = now; }
run { horizon 100; }
""", {"p": [(0, 3.0, 3.0), (2, 3.0, 3.0), (1, 4.0, 4.0)]}, {("e", None): {"iterations": 4}}),
    # serve by (-admission): the last admitted first; budget 2, prefills of 2: s2 at [0,1], s1 [1,2], s0 [2,3].
    ("serve_by_minus_admission_newest_first", """
stage e : step { budget 2; cost 1; serve by (-admission); }
workload { arrive batch(3); }
session { run e prefill (2); observe p = now; }
run { horizon 100; }
""", {"p": [(2, 1.0, 1.0), (1, 2.0, 2.0), (0, 3.0, 3.0)]}, {}),
    # admission order under chunk 2 = budget 2: s0's prefill (admitted first) takes the whole budget at [0,1]
    # and [1,2] (p 2); s1's decode waits: [2,3], [3,4] (d 4).
    ("admission_order_prefill_first_takes_the_budget", """
stage e : step { budget 2; cost 1; chunk 2; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { run e prefill (4); observe p = now; }
  else { run e decode (2); observe d = now; }
}
run { horizon 100; }
""", {"p": [(0, 2.0, 2.0)], "d": [(1, 4.0, 4.0)]}, {("e", None): {"iterations": 4, "mixed": 0}}),
    # the same under `serve decode first`: s1's decode token first, s0's prefill the one left at [0,1] and
    # [1,2] (d 2); s0 its last 2 at [2,3] (p 3): the orders differ once a cap binds.
    ("serve_decode_first_under_a_chunk_cap", """
stage e : step { budget 2; cost 1; chunk 2; serve decode first; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { run e prefill (4); observe p = now; }
  else { run e decode (2); observe d = now; }
}
run { horizon 100; }
""", {"p": [(0, 3.0, 3.0)], "d": [(1, 2.0, 2.0)]}, {("e", None): {"iterations": 3, "mixed": 2}}),
    # cost 100 * decoders + prefilled (prefilled: the prefill tokens of the iteration), budget 2: [0,101] s0
    # decodes 1, s1 prefills 1; [101,202] the same: s0's decode done (d 202); [202,203] s1's last 1: cost 1.
    ("cost_reads_decoders_and_prefilled_tokens", """
stage e : step { budget 2; cost 100 * decoders + prefilled; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { run e decode (2); observe d = now; }
  else { run e prefill (3); observe p = now; }
}
run { horizon 1000; }
""", {"d": [(0, 202.0, 202.0)], "p": [(1, 203.0, 203.0)]},
     {("e", None): {"iterations": 3, "mixed": 2, "prefill_only": 1}}),
    # cost kv_decode + kv_prefill / 100 on memory kv: the units the decoding (prefilling) residents the
    # iteration serves hold there. [0, 10.04]: s0 (10 held) decodes, s1 (4 held) prefills 3: 10 + 0.04; s1
    # done (p 10.04); [10.04, 20.04] s0 alone: 10 (d 20.04).
    ("cost_reads_kv_decode_and_kv_prefill", """
pool kv { cap 100; }
stage e : step { budget 8; cost kv_decode + kv_prefill / 100; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (10) { run e decode (2); } observe d = now; }
  else { hold kv (4) { run e prefill (3); } observe p = now; }
}
run { horizon 1000; }
""", {"d": [(0, 20.04, 20.04)], "p": [(1, 10.04, 10.04)]}, {}),
    # cost 1 + attention, chunk 4: the chunk of 4 at K 0: 4 (0 + 2) = 8, cost 9; the chunk of 2 at K 4:
    # 2 (4 + 1) = 10, cost 11: p 20. Decode tokens are no prefill chunk: attention 0, cost 1 each: d 22.
    ("cost_reads_attention_of_each_chunk", """
stage e : step { budget 8; cost 1 + attention; chunk 4; }
workload { arrive batch(1); }
session { run e prefill (6); observe p = now; run e decode (2); observe d = now; }
run { horizon 1000; }
""", {"p": [(0, 20.0, 20.0)], "d": [(0, 22.0, 22.0)]},
     {("e", None): {"iterations": 4, "prefill_only": 2, "decode_only": 2}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in STEP], ids=[c[0] for c in STEP])
def test_step_engine_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Admission into a step engine: the newcomer's first chunk, budget_left, exclusive prefill, preemption
# ---------------------------------------------------------------------------------------------------------

ADMIT = [
    # §3: "then the stage admits from the queues it serves" and budget_left(S) "evaluates to the budget
    # left": the iteration at 0 admits s0 with the whole budget (units 5) and plans its 3 tokens, then s1
    # with the 2 left (units 2: used 7 in its body), which gets those 2 in the same iteration; s0 is done
    # at 1, s1's last 2 at [1,2]. kv: 5 on [0,1] and 2 on [0,2]: 9 / 100.
    ("newcomer_first_chunk_in_the_admitting_iteration", """
pool reqs { cap 8; admit via e; }
pool kv { cap 100; }
stage e : step { budget 5; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (budget_left(e)) {
    observe u = used(kv);
    run e prefill (3 + serial);
    observe p = now;
  }
}
run { horizon 100; }
""", {"u": [(0, 0.0, 5.0), (1, 0.0, 7.0)], "p": [(0, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("e", None): {"iterations": 2, "prefill_only": 2}, ("kv", None): {"used": 0.09, "admissions": 2}}),
    # reqs cap 1: s1 waits for s0's release at 3 (prefill [0,1], decodes [1,2], [2,3]); the release is the
    # event at 3 and the iteration planned at 3 admits s1 and gives it its prefill at once: [3,4], then
    # [4,5], [5,6]. Waits 0 and 3: 1.5; s1 queued on [0,3]: 3 / 100.
    ("the_release_and_the_admission_at_one_instant", """
pool reqs { cap 1; admit via e; }
stage e : step { budget 4; cost 1; }
workload { arrive batch(2); }
session {
  hold reqs (1) { observe a = now; run e prefill (2); run e decode (2); }
  observe f = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 3.0, 3.0)], "f": [(0, 3.0, 3.0), (1, 6.0, 6.0)]},
     {("e", None): {"iterations": 6, "prefill_only": 2, "decode_only": 4},
      ("reqs", None): {"wait": 1.5, "queue": 0.03}}),
    # serve exclusive prefill: s0 prefills 3 alone at [0,1] and decodes alone at [1,2]; s1 queues at 1.5. At 2
    # s0's decode is tentative and s1's prefill fits: it replaces it with the full budget (units 4, used 8
    # in its body) at [2,3]; s0 decodes again at [3,4], [4,5]: f 5. 5 iterations, none mixed.
    ("exclusive_prefill_displaces_a_decode_and_sees_the_whole_budget", """
pool reqs { cap 8; admit via e; }
pool kv { cap 100; }
stage e : step { budget 4; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 1.5);
  hold reqs (1), kv (budget_left(e)) {
    observe u = used(kv);
    run e prefill (3 - serial);
    observe p = now;
    run e decode (3 - 3 * serial);
  }
  observe f = now;
}
run { horizon 100; }
""", {"u": [(0, 0.0, 4.0), (1, 2.0, 8.0)], "p": [(0, 1.0, 1.0), (1, 3.0, 3.0)],
      "f": [(1, 3.0, 3.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "prefill_only": 2, "decode_only": 3, "mixed": 0}}),
    # the same program served in admission order: at 2 s0's decode token comes first and s1 is admitted
    # with the 3 left (used 7), prefilling its 2 beside it (mixed); s0's last decode at [3,4]: f 4.
    ("admission_order_admits_beside_a_decode", """
pool reqs { cap 8; admit via e; }
pool kv { cap 100; }
stage e : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 1.5);
  hold reqs (1), kv (budget_left(e)) {
    observe u = used(kv);
    run e prefill (3 - serial);
    observe p = now;
    run e decode (3 - 3 * serial);
  }
  observe f = now;
}
run { horizon 100; }
""", {"u": [(0, 0.0, 4.0), (1, 2.0, 7.0)], "p": [(0, 1.0, 1.0), (1, 3.0, 3.0)],
      "f": [(1, 3.0, 3.0), (0, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "prefill_only": 1, "decode_only": 2, "mixed": 1}}),
    # an iteration that only preempts: s0's prefill of 4 growing from 3 units needs 4, s1 holds 1 away
    # from the engine until 2.5 (no candidate: not resident), so s0 is its own victim at 0, 1 and 2: each
    # such iteration lasts C = 1 at no token. The victim re-enters kv's queue, which the settle after the
    # iteration's end admits (kv is no engine's queue): at 1, 2, and at 2.5 (s1's release). The iteration
    # at 3 fits: [3,4], p 4. Waits 0 (s1), 0, 1, 1, 0.5: 2.5 over 5 admissions; s0 queued 2.5 of 100.
    ("an_iteration_that_only_preempts_lasts_its_cost", """
pool kv { cap 4; preempt lifo; }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (3) { run e prefill (4) growing kv; }
    observe p = now;
  } else {
    hold kv (1) { run d (2.5); }
  }
}
run { horizon 100; }
""", {"p": [(0, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "prefill_only": 1},
      ("kv", None): {"admissions": 5, "preemptions": 3, "stuck": 1, "wait": 0.5, "queue": 0.025}}),
    # `init` sets k = 3 + serial at arrival. budget 4: s0 3 and s1 1 at [0,1]; s1 3 at [1,2]. s0 drops its
    # cached 3 (c2 0, and its next hold consumes nothing: c3 0); s1 keeps its 4. A run of zero work
    # completes at once (z at the release instant) and is no iteration nor completion. used 3 + 8 = 11 /
    # 100; cached: s0's 3 from 1, s1's 4 from 2 (consumed and cached again at 2): 297 + 392 = 689 / 100.
    ("init_drop_and_a_run_of_no_work", """
pool kv { cap 100; }
stage e : step { budget 4; cost 1; memory kv; }
workload { arrive batch(2); init { set k = 3 + serial; } }
session {
  hold kv (k) { run e prefill (k); } cache (k);
  observe c1 = cachedin(kv);
  branch (serial == 0) { drop kv; }
  observe c2 = cachedin(kv);
  hold kv (k) { observe c3 = cached; run e prefill (0); observe z = now; } cache (k);
}
run { horizon 100; }
""", {"c1": [(0, 1.0, 3.0), (1, 2.0, 4.0)], "c2": [(0, 1.0, 0.0), (1, 2.0, 4.0)],
      "c3": [(0, 1.0, 0.0), (1, 2.0, 4.0)], "z": [(0, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("e", None): {"iterations": 2, "completions": 2}, ("kv", None): {"used": 0.11, "cached": 6.89}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in ADMIT], ids=[c[0] for c in ADMIT])
def test_admission_into_a_step_engine_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# reserve, reserve held and grow; leases and transfers in time
# ---------------------------------------------------------------------------------------------------------

RESERVE = """
pool kv { cap 10; HELD }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (8) { run d (2); } }
  else { run d (0.5); hold kv (5) { observe a = now; run d (1); } }
}
run { horizon 100; }
"""

HOLDS = [
    # §3: the head is admitted when "used + r ≤ cap"; without `reserve held` s0's reserve is read at its
    # admission only: s1's 5 fits beside s0's 2 at 0.5. used 2·2 + 5·1 = 9 / 100.
    ("reserve_is_checked_at_admission_only", RESERVE.replace("HELD", ""),
     {"a": [(1, 0.5, 0.5)]}, {("kv", None): {"used": 0.09, "wait": 0.0}}),
    # with `reserve held` s0's unallocated 8 - 2 = 6 counts: 2 + 6 + 5 > 10, s1 waits for s0's end at 2.
    # Waits 0, 1.5: 0.75; queued 1.5 / 100.
    ("reserve_held_counts_the_unallocated_reservation", RESERVE.replace("HELD", "reserve held;"),
     {"a": [(1, 2.0, 2.0)]}, {("kv", None): {"used": 0.09, "wait": 0.75, "queue": 0.015}}),
    # growth by another hold: used 4 + s0's 6 - 2 = 4 + d 3 > 10, so s1's grow (preempt none) waits until
    # s0's scope ends at 2 and then holds 5. used: 2·2 + 2·1.5 + 5·1 = 12 / 100.
    ("reserve_held_blocks_another_holds_growth", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (6) { run d (2); } }
  else { run d (0.5); hold kv (2) { grow kv (3); observe g = now; observe u = used(kv); run d (1); } }
}
run { horizon 100; }
""", {"g": [(1, 2.0, 2.0)], "u": [(1, 2.0, 5.0)]}, {("kv", None): {"used": 0.12, "holders": 0.045}}),
    # the grower uses its own reservation: s1's 2 was admitted at 0 beside s0's 2 and its unallocated 4
    # (2 + 4 + 2 ≤ 10); at 1 s0 grows 4: used 4 + others' unallocated 0 + 4 ≤ 10, at once: used 8, and
    # free = cap - used - Σ unallocated = 10 - 8 - 0 = 2.
    ("reserve_held_the_grower_uses_its_own_reservation", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) reserve (6) { run d (1); grow kv (4); observe g = now; observe u = used(kv); observe f = free(kv); run d (1); }
  } else { hold kv (2) { observe a = now; run d (3); } }
}
run { horizon 100; }
""", {"g": [(0, 1.0, 1.0)], "u": [(0, 1.0, 8.0)], "f": [(0, 1.0, 2.0)], "a": [(1, 0.0, 0.0)]},
     {("kv", None): {"used": 0.14}}),
    # pool-reference: "Reservations end with the hold's scope, release or preemption": s0's `release kv`
    # at 0 ends its reservation with its allocation (free 10), so s1's 7 fits at 0.5.
    ("reserve_held_ends_at_release", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (8) { release kv; observe f = free(kv); run d (2); } }
  else { run d (0.5); hold kv (7) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", {"f": [(0, 0.0, 10.0)], "a": [(1, 0.5, 0.5)]}, {("kv", None): {"used": 0.07, "holders": 0.01}}),
    # "leases retain none": at 1 s0's scope ends into a lease of its 2; its reservation ends, so s1's 6
    # (waiting since 0.5: 2 + 6 + 6 > 10) fits then: 2 + 6 ≤ 10. s0 reads free 8 before that settle; the
    # lease ends with the session at 2 and its cache (2) applies then (m, read at 2 before it, is 0).
    ("reserve_held_a_lease_keeps_no_reservation", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) reserve (8) { run d (1); } cache (2) lease kv (5);
    observe l = free(kv);
    run d (1);
    observe m = cachedin(kv);
  } else { run d (0.5); hold kv (6) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", {"l": [(0, 1.0, 8.0)], "m": [(0, 2.0, 0.0)], "a": [(1, 1.0, 1.0)]},
     {("kv", None): {"used": 0.1, "cached": 1.96, "wait": 0.25}}),
    # block 2: grow kv (3) adds 4 (rounded up to blocks) to 2: 6; cache (5) keeps min(5, 6) = 5 rounded down
    # to blocks: 4. The next turn's hold consumes the 4: turn_no 2, cached 4. used 6 + 6 = 12 / 100;
    # cached 6 from 2: 588 / 100.
    ("grow_rounds_up_and_the_next_turn_finds_the_prefix", """
pool kv { cap 20; block 2; }
stage d : delay;
workload { arrive batch(1); }
session {
  turn;
  hold kv (2) { grow kv (3); observe u = used(kv); run d (1); } cache (5);
  observe c = cachedin(kv);
  turn;
  hold kv (6) { observe t = turn_no * 100 + cached; run d (1); } cache (6);
}
run { horizon 100; }
""", {"u": [(0, 0.0, 6.0)], "c": [(0, 1.0, 4.0)], "t": [(0, 1.0, 204.0)]},
     {("kv", None): {"used": 0.12, "cached": 5.88}, "turns": 2}),
    # lease kv (2): s0's 4 stay allocated from its scope's end at 1 until 3; s1's 8 (cap 8) waits from 0.5
    # to 3, when the lease ends into a cache of 4 that the admission evicts at once. used 4·3 + 8 = 20 /
    # 100; waits 0, 2.5.
    ("a_lease_of_a_time_ends_then", """
pool kv { cap 8; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4) lease kv (2); run d (5); }
  else { run d (0.5); hold kv (8) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", {"a": [(1, 3.0, 3.0)]},
     {("kv", None): {"used": 0.2, "cached": 0.0, "wait": 1.25, "evicted_entries": 1, "evicted_units": 4.0}}),
    # lease kv (inf) ended by `release kv;` outside the hold at 2: cached 4 then, and s1 admitted at 2.
    ("a_release_outside_the_hold_ends_the_lease", """
pool kv { cap 8; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4) lease kv (inf);
    run d (1);
    release kv;
    observe c = cachedin(kv);
    run d (5);
  } else { run d (0.5); hold kv (8) { observe a = now; run d (1); } }
}
run { horizon 100; }
""", {"c": [(0, 2.0, 4.0)], "a": [(1, 2.0, 2.0)]}, {("kv", None): {"used": 0.16, "wait": 0.75}}),
    # transfer (2) from kvP to kvD (3) over a fifo link: s0's read [1,3], s1's waits for it, [3,5]. Each
    # read ends the lease (kvP caches its 4) and loads 3 into kvD, whose cache (4) keeps min(4, 3) = 3.
    # kvP used 4·3 + 4·5 = 32, cached 4·97 + 4·95 = 768; kvD used 4·3 + 4·5, cached 3·96 + 3·94 = 570.
    ("transfers_queue_on_a_fifo_link", """
pool kvP { cap 100; }
pool kvD { cap 100; }
stage d : delay;
stage link : fifo;
workload { arrive batch(2); }
session {
  hold kvP (4) { run d (1); } cache (4) lease kvP (inf);
  hold kvD (4) {
    transfer (2) from kvP to kvD (3);
    observe t = now;
    observe p = cachedin(kvP);
    run d (1);
  } cache (4);
  observe q = cachedin(kvD);
}
run { horizon 100; }
""", {"t": [(0, 3.0, 3.0), (1, 5.0, 5.0)], "p": [(0, 3.0, 4.0), (1, 5.0, 4.0)],
      "q": [(0, 4.0, 3.0), (1, 6.0, 3.0)]},
     {("link", None): {"wait": 1.0, "service": 2.0, "present": 0.06},
      ("kvP", None): {"used": 0.32, "cached": 7.68}, ("kvD", None): {"used": 0.32, "cached": 5.7}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in HOLDS], ids=[c[0] for c in HOLDS])
def test_holds_reservations_and_leases_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# observe and record inside holds executed again, at a session's end, and under a warm-up
# ---------------------------------------------------------------------------------------------------------

# s1 holds 3 of kv's 5 on [0,3]; s0 holds 2 from 0.5 and grows 1 at 1.5: 6 > 5, and with no engine the
# victim is the holder admitted last, s0 itself. Its hold (no growing run: position 0, docs/language.md "A
# preemption caches computed prefixes") caches nothing and re-enters the head of the queue, where the
# settle admits it at once (3 + 2 ≤ 5); the same at 2.5; at 3.5 s1 is gone and the growth fits: f 4.5.
AGAIN = """
pool kv { cap 5; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { hold kv (3) { run d (3); } }
  else {
    run d (0.5);
    hold kv (2) { observe o = computed; record r { x = computed; } run d (1); grow kv (1); run d (1); }
    observe f = now;
  }
}
run { horizon 100; }
"""

SAMPLES = [
    # an observe inside the hold takes a sample at each execution: 0.5, 1.5, 2.5 (computed 0 each time).
    # Two preemptions at one position: stuck 1. used 3·3 + 2·3 + 3·1 = 18 / 100; admissions 1 + 3.
    ("an_observe_in_a_hold_executed_again_samples_each_time", AGAIN,
     {"o": [(0, 0.5, 0.0), (0, 1.5, 0.0), (0, 2.5, 0.0)], "f": [(0, 4.5, 4.5)]},
     {("kv", None): {"used": 0.18, "admissions": 4, "preemptions": 2, "stuck": 1, "wait": 0.0}}),
    # §3, Pools: "end releases every hold but keeps the session's cached prefixes": s0's `end;` inside its
    # hold at 1 releases its 6 (5 in blocks of 2) with its cache (3) applied, rounded down to 2; s1's 10
    # at 2 evicts those 2 (one entry). used 6 + 10 = 16 / 100, cached 2 on [1,2]: 0.02.
    ("an_end_inside_a_hold_releases_it_and_caches", """
pool kv { cap 10; block 2; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (5) { run d (1); end; } cache (3); }
  else {
    run d (2);
    observe u = used(kv) * 100 + queued(kv) * 10 + holders(kv);
    hold kv (10) { observe a = now; run d (1); }
  }
}
run { horizon 100; }
""", {"u": [(1, 2.0, 0.0)], "a": [(1, 2.0, 2.0)]},
     {("kv", None): {"used": 0.16, "cached": 0.02, "evicted_entries": 1, "evicted_units": 2.0}, "ended": 2}),
    # warm-up 3 of [0,13]: kv (cap 1) passes s0 [0,2], s1 [2,4], s2 [4,6] through s. Samples at 2 are cut;
    # s: present and utilisation 3 / 10, completions at 4 and 6 (wait 0, service 2). kv: used 3 / 10,
    # s2 waits on [3,4]: queue 0.1; one admission after 3 (s2's at 4, wait 4). s1's admission at 2 (cut)
    # evicted s0's entry, s2's at 4 evicts s1's (1 entry, 1 unit); s2's 1 cached on [6,13]: 0.7. The gauge
    # used + 10 queued: 11 on [3,4], 1 on [4,6], 0 after: 13 / 10, least 0, greatest 11 (the 21 of [0,2]
    # is before the warm-up). The run: arrivals 3 (every arrival), ended 2 (after the warm-up).
    ("figures_under_a_warm_up", """
pool kv { cap 1; }
stage s : fifo;
workload { arrive batch(3); }
session {
  hold kv (1) { run s (2); } cache (1);
  observe t = now;
}
gauge g = used(kv) + 10 * queued(kv);
run { horizon 13; warmup 3; }
""", {"t": [(1, 4.0, 4.0), (2, 6.0, 6.0)]},
     {("s", None): {"present": 0.3, "utilisation": 0.3, "completions": 2, "throughput": 0.2, "wait": 0.0,
                    "service": 2.0},
      ("kv", None): {"used": 0.3, "cached": 0.7, "queue": 0.1, "holders": 0.3, "wait": 4.0, "admissions": 1,
                     "evicted_entries": 1, "evicted_units": 1.0},
      ("gauge", "g"): {"mean": 1.3, "min": 0.0, "max": 11.0}, "arrivals": 3, "ended": 2}),
    # a hold that can never grow to what its body needs preempts itself for ever (§3, Statistics, stuck):
    # kv (1) decoding 5 growing on cap 3: positions 1, 2, 3 at [0,1], [1,2], [2,3]; the iteration at 3
    # preempts it and lasts 1 at no token; kv's settle re-admits it at 4 (wait 1) and the decode starts
    # again: [4,7] tokens, 7 preempts, 8 re-admits, [8,11], 11 preempts, 12 re-admits, [12,13) planned.
    # Under warm-up 2.5 of [0, 12.5]: iterations planned at 3 … 12: 10, 7 with a token (decode-only);
    # preemptions at 3, 7, 11; admissions 4, 8, 12 (wait 1); queued [3,4], [7,8], [11,12]: 0.3; used 3·0.5
    # + (1 + 2 + 3)·2 + 1·0.5 = 14 / 10; holders 0.5 + 3 + 3 + 0.5 = 7 / 10; the stage busy throughout.
    ("a_livelock_under_a_warm_up", """
pool kv { cap 3; preempt lifo; }
stage e : step { budget 1; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (1) { run e decode (5) growing kv; }
  observe t = now;
}
run { horizon 12.5; warmup 2.5; }
""", {"t": []},
     {("e", None): {"iterations": 10, "decode_only": 7, "completions": 0, "utilisation": 1.0, "present": 0.7,
                    "batch": 0.7},
      ("kv", None): {"used": 1.4, "holders": 0.7, "queue": 0.3, "wait": 1.0, "admissions": 3, "preemptions": 3,
                     "stuck": 1}}),
    # the same session on cap 10 decodes [0,5] growing 1 → 5: planned after 2.5 are the iterations at 3 and
    # 4; the decode completes at 5 (one completion); busy [2.5, 5]: 0.25; used 3·0.5 + 4 + 5 = 10.5 / 10.
    ("a_step_stage_under_a_warm_up", """
pool kv { cap 10; preempt lifo; }
stage e : step { budget 1; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (1) { run e decode (5) growing kv; }
  observe t = now;
}
run { horizon 12.5; warmup 2.5; }
""", {"t": [(0, 5.0, 5.0)]},
     {("e", None): {"iterations": 2, "decode_only": 2, "completions": 1, "utilisation": 0.25},
      ("kv", None): {"used": 1.05, "admissions": 0, "preemptions": 0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in SAMPLES], ids=[c[0] for c in SAMPLES])
def test_samples_and_figures_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_a_record_in_a_hold_executed_again_writes_a_row_each_time(monkeypatch):
    """docs/language.md, "A record writes a row each time it runs": the preempted hold of AGAIN runs its
    `record` at 0.5, 1.5 and 2.5, three rows of session 0, turn 0, the column `computed` 0 each time."""
    r, _ = run(AGAIN, monkeypatch)
    t = r.records("r")
    assert [list(t[c]) for c in ("session", "turn", "time", "x")] == [[0, 0, 0], [0, 0, 0], [0.5, 1.5, 2.5],
                                                                       [0, 0, 0]]


def test_a_record_is_kept_by_its_send_time_and_an_observe_by_its_own(monkeypatch):
    """docs/language.md, "A record is whole or absent, and warm-up applies to it by its send time": the
    rows whose `sent` is at or after the warm-up's end (1) are kept, sessions 1 (sent 1) and 2 (sent 2);
    session 0 sent at 0 and done at 3 is cut. The observe of the same moment keeps all three (3, 4, 5)."""
    src = """
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  set t0 = now;
  run d (3);
  record req { sent = t0; done = now; }
  observe f = now;
}
run { horizon 100; warmup 1; }
"""
    r, obs = run(src, monkeypatch)
    t = r.records("req")
    assert [list(t[c]) for c in ("session", "sent", "done")] == [[1, 2], [1.0, 2.0], [4.0, 5.0]]
    assert obs["f"] == [(0, 3.0, 3.0), (1, 4.0, 4.0), (2, 5.0, 5.0)]


# ---------------------------------------------------------------------------------------------------------
# The functions of §2 at their edge arguments, computed (from an attribute) and folded (constants)
# ---------------------------------------------------------------------------------------------------------

# §2, Expressions: "min, max, abs, floor, ceil, sqrt, exp, ln, pow"; "a non-zero operand is true". z is
# session 0's serial, 0, so `z - 1` is -1 computed at run time; the folded form writes 0 for z. The values
# are IEEE 754's (the reference's f64), with docs/language.md's choices where the spec is silent: `floor`
# and `ceil` give +0 for a value that rounds to zero, `min` and `max` pass over NaN, `%` is fmod.
FUNCTIONS = [
    ("min(z + 1, inf)", 1.0),          # inf is no bound below
    ("max(z - inf, -5)", -5.0),        # -inf is below every number
    ("abs(z - inf)", inf),
    ("floor(z - 0.5)", -1.0),
    ("1 / ceil(z - 0.5)", inf),        # ceil(-0.5) is +0 here (docs/language.md), so 1 / it is +inf
    ("sqrt(z - 1)", nan),              # the root of a negative number
    ("sqrt(z)", 0.0),
    ("exp(z - inf)", 0.0),
    ("exp(z + 710)", inf),             # e^710 is beyond the doubles
    ("ln(z)", -inf),
    ("ln(z - 1)", nan),
    ("ln(z + 1)", 0.0),
    ("pow(z, 0)", 1.0),                # 0^0 is 1 (IEEE pow)
    ("pow(z, -1)", inf),               # 0 to a negative power
    ("pow(z - 2, 3)", -8.0),
    ("pow(z - 2, 0.5)", nan),          # a negative base to a power that is not whole
    ("pow(z + 4, 0.5)", 2.0),
    ("pow(z - inf, 2)", inf),
    ("(z - 1) ? 5 : 6", 5.0),          # -1 is non-zero: true
    ("(z / z) ? 5 : 6", 5.0),          # NaN is non-zero: true
    ("!(z / z)", 0.0),
    ("(z / z) == (z / z)", 0.0),       # NaN equals nothing
    ("(z / z) != (z / z)", 1.0),
    ("(z - 7) % 3", -1.0),             # the sign of the dividend
    ("max(z / z, 1)", 1.0),            # NaN passed over
    ("min(z / z, 1)", 1.0),
    ("min(z + 3, z + 1, z + 2)", 1.0),  # several arguments
    ("z * inf", nan),                  # 0 · inf
    ("(z + 1) < inf", 1.0),
    ("floor(z + 2.5) + ceil(z + 2.5)", 5.0),
]

FUNCTION_PROGRAM = """
workload { arrive batch(1); }
session { set z = serial; observe x = EXPR; }
run { horizon 1; }
"""


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("expr, value", FUNCTIONS, ids=[e for e, _ in FUNCTIONS])
def test_functions_at_their_edges_computed_and_folded(monkeypatch, expr, value):
    _, computed = run(FUNCTION_PROGRAM.replace("EXPR", expr), monkeypatch)
    _, folded = run(FUNCTION_PROGRAM.replace("EXPR", expr.replace("z", "(0)")), monkeypatch)
    for got in (computed["x"], folded["x"]):
        assert len(got) == 1 and got[0][:2] == (0, 0.0)
        assert _same(got[0][2], value), (expr, got)


# ---------------------------------------------------------------------------------------------------------
# Run-time errors §2 and §3 name: the place, the time, the session (the same first line on both tiers)
# ---------------------------------------------------------------------------------------------------------

_ERR = """pool kv[2] { cap 10; }
stage d : delay;
stage e : step { budget BUDGET; cost COST; }
workload { arrive batch(2); }
session { set z = serial; BODY }
run { horizon 10; }
"""


def _err(body: str, budget: str = "4", cost: str = "1") -> str:
    return _ERR.replace("BODY", body).replace("BUDGET", budget).replace("COST", cost)


RUN_ERRORS = [
    # §3, Pools: "load m (n) advances … by n tokens, which its allocation must cover"
    (_err("hold kv[0] (2) { load kv[0] (z + 3); run d (1); } cache (3);"),
     "<source>:5:44: error: at t=0, session 0: load kv[0] (3): the hold has 2 allocated and 0 computed; a load "
     "must fit the allocation (grow first)"),
    # §3, Branching: "any other value (a fraction, a count, a negative number, NaN) is a run-time error"
    (_err("branch (z / z) { run d (1); }"),
     "<source>:5:27: error: at t=0, session 0: branch guard is NaN, not 0 or 1: a guard is a test; write the "
     "comparison meant (`n > 0`, `x != 0`)"),
    (_err("branch (z - 1) { run d (1); }"),
     "<source>:5:27: error: at t=0, session 0: branch guard is -1, not 0 or 1: a guard is a test; write the "
     "comparison meant (`n > 0`, `x != 0`)"),
    # a member of a family: an index that is not a whole number names none (the caret at the reference)
    (_err("hold kv[z + 0.5] (1) { run d (1); }"),
     "<source>:5:32: error: at t=0, session 0: pool kv: index 0.5 is not a whole number (the family has 2)"),
    # docs/language.md: a hold takes one amount of each member; computed indices that meet are an error
    (_err("hold kv[0] (1), kv[z] (1) { run d (1); }"),
     "<source>:5:27: error: at t=0, session 0: the hold names pool kv[0] twice; a hold takes one amount of each "
     "pool (write one amount, the sum)"),
    # a step stage's budget read before each iteration: NaN (2 residents: 2 / 0 - inf) and negative
    (_err("run e prefill (1);", budget="residents / 0 - inf"),
     "<source>:3:25: error: at t=0: stage e: the budget is NaN"),
    (_err("run d (1); run e prefill (1);", budget="1 - residents"),
     "<source>:3:25: error: at t=1: stage e: the budget is negative (-1)"),
    # the cost names the iteration's sums
    (_err("run e decode (2);", cost="decoders - 3"),
     "<source>:3:33: error: at t=0: stage e: the iteration's cost is negative (-1) (its batch: tokens 2, "
     "decoders 2, prefilled 0, residents 2, kv_decode 0, kv_prefill 0; sessions 0, 1)"),
    # a draw's parameters computed at run time
    (_err("run d (~uniform(z + 2, 1));"),
     "<source>:5:34: error: at t=0, session 0: ~uniform(2, 1): the low bound is above the high bound"),
    (_err("run d (~erlang(z + 0.5, 1));"),
     "<source>:5:34: error: at t=0, session 0: ~erlang(0.5, 1): the number of phases must be a whole number of "
     "at least 1"),
    (_err("run d (~exp(z / z));"),
     "<source>:5:34: error: at t=0, session 0: ~exp(NaN): a parameter is NaN"),
    (_err("branch (~bernoulli(z + 1.5)) { run d (1); }"),
     "<source>:5:35: error: at t=0, session 0: ~bernoulli(1.5): a probability is between 0 and 1"),
]


@pytest.mark.parametrize("src, message", RUN_ERRORS, ids=[f"e{i}" for i in range(len(RUN_ERRORS))])
def test_run_time_errors_name_the_place_time_and_session(monkeypatch, src, message):
    assert run_error(src, monkeypatch) == message


# ---------------------------------------------------------------------------------------------------------
# More of the engine: §7's step that preempted, queue keys reading budget_left, exclusive prefill's gates,
# budget and chunk reading the memory pool, a reservation beside a cache, gauges at an instant
# ---------------------------------------------------------------------------------------------------------

EXCLUSIVE = """
pool reqs { cap 8; admit via e; }
stage e : step { budget 8; cost 1; CHUNK serve exclusive prefill; }
workload { arrive batch(3); }
session {
  hold reqs (1) {
    observe a = now;
    run e prefill (3);
    observe p = now;
    run e decode (2);
  }
  observe f = now;
}
run { horizon 100; }
"""

QUEUE_BUDGET = """
pool reqs { cap 8; admit via e; QUEUE }
stage e : step { budget 4; cost 1; }
workload { arrive batch(3); }
session {
  set prompt = serial == 2 ? 1 : 3;
  hold reqs (1) { observe a = now; run e prefill (prompt); }
  observe p = now;
}
run { horizon 100; }
"""

MORE = [
    # §7: "no admission in a step that preempted". s0, s1 decode 4 growing from 1 unit each (block 1, cap
    # 5): used 2, 4, then at 2 s0 grows to 3 (5) and s1 to 3 (6 > 5): s1, admitted last, is its own victim,
    # releases its 2 and goes back to the head of reqs. s2 (queued since 1.5, 1 unit) would fit (3 + 1 ≤ 5)
    # but that step admits nothing. At 3: s1 again (1 unit: used 5), then s2 does not fit (blocks); s0
    # ends at 4 (its 4th token at [3,4]); at 4 s2 fits: [4,5]. s1 decodes its 4 again: [3,7]. Waits 0, 0,
    # 1 (s1 again), 2.5 (s2): 0.875. kv used 2 + 4 + 3 + 5 + 3 + 3 + 4 = 24 / 100.
    ("no_admission_in_a_step_that_preempted", """
pool reqs { cap 3; admit via e; }
pool kv { cap 5; block 1; preempt lifo; }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold reqs (1), kv (1) { observe a = now; run e decode (4) growing kv; }
  } else {
    run d (1.5);
    hold reqs (1), kv (1) { observe a = now; run e prefill (1) growing kv; }
  }
  observe f = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 3.0, 3.0), (2, 4.0, 4.0)],
      "f": [(0, 4.0, 4.0), (2, 5.0, 5.0), (1, 7.0, 7.0)]},
     {("reqs", None): {"wait": 0.875, "queue": 0.035, "admissions": 4},
      ("kv", None): {"used": 0.24, "preemptions": 1}, ("e", None): {"iterations": 7}}),
    # FIFO: s0 (3) then s1 with the 1 left; s2 waits for the next iteration: [1,2] s1's 2 and s2's 1.
    ("fifo_admits_the_head_with_what_is_left", QUEUE_BUDGET.replace("QUEUE", ""),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0)], "p": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {}),
    # queue by (prompt > budget_left(e) ? 1 : 0, serial), read again after each admission: at 4 left all
    # fit, s0 first; at 1 left s1 (3) no longer fits its lane, s2 (1) does and is admitted before it.
    ("queue_keys_read_budget_left_again_after_each_admission",
     QUEUE_BUDGET.replace("QUEUE", "queue by (prompt > budget_left(e) ? 1 : 0, serial);"),
     {"a": [(0, 0.0, 0.0), (2, 0.0, 0.0), (1, 1.0, 1.0)], "p": [(0, 1.0, 1.0), (2, 1.0, 1.0), (1, 2.0, 2.0)]},
     {}),
    # exclusive prefill, no chunk: one prefill an iteration, and none admitted after it: s0 at [0,1], s1
    # displaces s0's decode at [1,2], s2 both decodes at [2,3]; the three decode together at [3,5].
    ("exclusive_prefill_admits_one_prefill_an_iteration", EXCLUSIVE.replace("CHUNK", ""),
     {"a": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 2.0, 2.0)], "p": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 3.0)],
      "f": [(0, 5.0, 5.0), (1, 5.0, 5.0), (2, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "prefill_only": 3, "decode_only": 2}}),
    # chunk 2: "A resident prefill takes precedence": s0's last token at [1,2] stops s1's admission until 2;
    # each prefill takes two iterations: admitted at 0, 2, 4, prefilled at 2, 4, 6; decodes at [6,8].
    ("exclusive_prefill_a_resident_prefill_takes_precedence", EXCLUSIVE.replace("CHUNK", "chunk 2;"),
     {"a": [(0, 0.0, 0.0), (1, 2.0, 2.0), (2, 4.0, 4.0)], "p": [(0, 2.0, 2.0), (1, 4.0, 4.0), (2, 6.0, 6.0)],
      "f": [(0, 8.0, 8.0), (1, 8.0, 8.0), (2, 8.0, 8.0)]},
     {("e", None): {"iterations": 8, "prefill_only": 6, "decode_only": 2}}),
    # budget 10 - kv_decode, chunk kv_prefill (the residents before the iteration): s0 decoding with 9 held
    # leaves a budget of 1, which its decode takes: s1 (2 held, chunk 2) gets nothing until s0 is done at 3,
    # then 2 an iteration: [3,6]. token_utilisation: 9 tokens of budgets 1 + 1 + 1 + 10 + 10 + 10.
    ("budget_and_chunk_read_the_memory_pool", """
pool kv { cap 100; }
stage e : step { budget 10 - kv_decode; cost 1; chunk kv_prefill; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (9) { run e decode (3); } observe d = now; }
  else { hold kv (2) { run e prefill (6); } observe p = now; }
}
run { horizon 100; }
""", {"d": [(0, 3.0, 3.0)], "p": [(1, 6.0, 6.0)]},
     {("e", None): {"iterations": 6, "token_utilisation": 9 / 33}}),
    # pool-reference, reserve held: "Cached prefixes are evicted when units are allocated, not when
    # reserved": s1's reserve of 8 at 2 (free 10 - 2 - 6 = 2) leaves s0's cached 6 in place (c1 at 2.2);
    # its growth of 6 at 2.5 allocates: 8 + 6 > 10 evicts the entry whole (c2 0 at 3.2). used 6 + 1 + 8 =
    # 15 / 100, cached 6 on [1, 2.5]: 0.09.
    ("reserve_held_evicts_when_it_allocates", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (1.2);
    observe c1 = cachedin(kv);
    run d (1);
    observe c2 = cachedin(kv);
  } else {
    run d (2);
    hold kv (2) reserve (8) { observe f = free(kv); run d (0.5); grow kv (6); observe u = used(kv); run d (1); }
  }
}
run { horizon 100; }
""", {"c1": [(0, 2.2, 6.0)], "c2": [(0, 3.2, 0.0)], "f": [(1, 2.0, 2.0)], "u": [(1, 2.5, 8.0)]},
     {("kv", None): {"used": 0.15, "cached": 0.09, "evicted_entries": 1, "evicted_units": 6.0}}),
    # §3, Gauges: "read at the end of every instant": s0's holds of 5 and 8 at 1 take no time and are
    # never read; g is 2 on [0,2]: mean 0.4, greatest 2. h = 10 holders + queued: 10 on [0,2].
    ("a_gauge_reads_the_end_of_an_instant", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); hold kv (5) { run d (0); } hold kv (8) { run d (0); } }
  else { hold kv (2) { run d (2); } }
}
gauge g = used(kv);
gauge h = holders(kv) * 10 + queued(kv);
run { horizon 10; }
""", {}, {("gauge", "g"): {"mean": 0.4, "min": 0.0, "max": 2.0}, ("gauge", "h"): {"mean": 2.0, "max": 10.0},
          ("kv", None): {"used": 0.4, "admissions": 3}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in MORE], ids=[c[0] for c in MORE])
def test_more_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Programs the fast tier runs (docs/simulator.md, The fast tier): ps capacities, aged queue lanes, a finite
# run, a closed population, choose, ps(inf), nested holds
# ---------------------------------------------------------------------------------------------------------

FAST = [
    # ps(min(present, 2)), works 1, 2, 3: three present at 2/3 each until the first is done at 1.5 (the
    # others have 1 and 2 left), two at 1 each: 2.5; the last alone its 1 left at 1: 3.5. present (3·1.5
    # + 2 + 1) / 10; busy [0, 3.5].
    ("ps_of_two_servers", """
stage p : ps(min(present, 2));
workload { arrive batch(3); }
session { run p (serial + 1); observe t = now; }
run { horizon 10; }
""", {"t": [(0, 1.5, 1.5), (1, 2.5, 2.5), (2, 3.5, 3.5)]},
     {("p", None): {"present": 0.75, "utilisation": 0.35, "service": 2.5}}),
    # pool-reference.txt's aged lanes on cap 1: s0 holds [0,4]; s1 (long) waits from 0, s2 and s3 (short)
    # from 1 and 3.5. At 4 s1 has waited 4 ≥ 3: lane 0, before the short lane 1; then s2, s3 by serial.
    ("aged_lanes_admit_the_long_request_that_waited", """
pool kv { cap 1; queue by (prompt > 128 && waited >= 3 ? 0 : prompt <= 128 ? 1 : 2, serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  set prompt = serial == 1 ? 200 : 100;
  run d (serial == 3 ? 3.5 : serial == 2 ? 1 : 0);
  hold kv (1) { observe a = now; run d (4); }
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 4.0, 4.0), (2, 8.0, 8.0), (3, 12.0, 12.0)]},
     {("kv", None): {"wait": (0 + 4 + 7 + 8.5) / 4}}),
    # run { arrivals 3; } of renewal(2): arrivals at 2, 4, 6 (the first after one gap), fifo(2) of 3 each:
    # done 5, 7, 9, the run's end. Time averages over [0, 9]: present (2 + 2 + 1 + 2 + 2) / 9 = 1,
    # utilisation half of it.
    ("a_finite_run_ends_when_it_drains", """
stage s : fifo(2);
workload { arrive renewal(2); }
session { run s (3); observe t = now; }
run { horizon 100; arrivals 3; }
""", {"t": [(0, 5.0, 5.0), (1, 7.0, 7.0), (2, 9.0, 9.0)]},
     {"end": 9.0, "arrivals": 3, "ended": 3, ("s", None): {"present": 1.0, "utilisation": 0.5,
                                                           "throughput": 1 / 3}}),
    # closed(2): a session that ends is replaced at once: s0 ends at 1 (s2 arrives, 3 to run: ends at 4,
    # s4 arrives), s1 at 2 (s3, 4 to run: past 5). Five arrivals, three ended; always two live.
    ("a_closed_population_is_replaced_at_once", """
stage d : delay;
workload { arrive closed(2); }
session { observe t = now; run d (serial + 1); }
run { horizon 5; }
""", {"t": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0), (3, 2.0, 2.0), (4, 4.0, 4.0)]},
     {"arrivals": 5, "ended": 3, "mean_live": 2.0}),
    # choose j in 3 by (used(kv[j]), -j): all empty at 0, -j picks kv[2]; at 1 kv[2] holds 5: kv[1]; at 2:
    # kv[0].
    ("choose_keys_in_order", """
pool kv[3] { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  choose j in 3 by (used(kv[j]), -j);
  observe c = j;
  hold kv[j] (5) { run d (3); }
}
run { horizon 100; }
""", {"c": [(0, 0.0, 2.0), (1, 1.0, 1.0), (2, 2.0, 0.0)]}, {("kv", 0): {"used": 0.15}}),
    # ps(inf): a job of finite work completes the instant it starts (docs/language.md)
    ("an_infinite_ps_capacity_completes_at_once", """
stage p : ps(inf);
workload { arrive batch(3); }
session { run p (3 - serial); observe t = now * 10 + serial; }
run { horizon 10; }
""", {"t": [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 0.0, 2.0)]},
     {("p", None): {"completions": 3, "service": 0.0, "present": 0.0}}),
    # ps(1 + queue(f)) reads φ when its jobs change, after the instant's sessions have run (docs/language.md,
    # "When a ps capacity is read"): at 0 s1 is at f by then, φ = 2: s0's 4 at rate 2, done at 2; s2 joins
    # alone at 2, φ = 2: done at 2.5.
    ("a_ps_capacity_reads_the_instant_it_changes", """
stage f : fifo;
stage p : ps(1 + queue(f));
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run p (4); observe t = now; }
  else { branch (serial == 1) { run f (10); } else { run d (2); run p (1); observe t = now; } }
}
run { horizon 100; }
""", {"t": [(0, 2.0, 2.0), (2, 2.5, 2.5)]}, {("p", None): {"present": 0.025, "service": 1.25}}),
    # nested holds: s0's inner B is given back at 1, its outer A at 2; s1 waits at B from 0.5 to 1, then at
    # A from 1 to 2: waits at B 0 and 0.5, at A 0 and 1.
    ("nested_holds_are_given_back_inner_first", """
pool A { cap 1; }
pool B { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold A (1) { hold B (1) { run d (1); } observe r = now; run d (1); } }
  else { run d (0.5); hold B (1) { observe a = now; } hold A (1) { observe b = now; } }
}
run { horizon 100; }
""", {"r": [(0, 1.0, 1.0)], "a": [(1, 1.0, 1.0)], "b": [(1, 2.0, 2.0)]},
     {("A", None): {"used": 0.02, "wait": 0.5}, ("B", None): {"used": 0.01, "wait": 0.25}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in FAST], ids=[c[0] for c in FAST])
def test_fast_tier_programs_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)
    # the tier serQ picks for each is the fast one, and it agrees with the general engine
    assert_same(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch, expect_fast=True)


# ---------------------------------------------------------------------------------------------------------
# Spills, stalled growers, pools served in declaration order, a step stage's observables between its
# iterations, the online estimates, a fractional budget
# ---------------------------------------------------------------------------------------------------------

LAST = [
    # docs/language.md, "A spilled prefix is usable when its write completes": s1's 4 at 2 evicts s0's 4
    # from kv into cpu over pcie (work = size 4): the write is [2,6]; s0 reads cpu 0 at 3 (the units take
    # their room there from 2, unusable) and 4 at 7, and its hold of cpu consumes them (c 4). cpu's cached:
    # 4 from 2 (consumed and cached again at 7, an instant): 4·98 / 100.
    ("a_spilled_prefix_is_usable_when_its_write_completes", """
pool kv { cap 4; spill cpu via pcie (size) when (1); }
pool cpu { cap 100; }
stage pcie : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4);
    run d (2);
    observe a = cachedin(cpu) * 10 + cachedin(kv);
    run d (4);
    observe b = cachedin(cpu) * 10 + cachedin(kv);
    hold cpu (4) { observe c = cached; } cache (4);
  } else { run d (2); hold kv (4) { run d (1); } }
}
run { horizon 100; }
""", {"a": [(0, 3.0, 0.0)], "b": [(0, 7.0, 40.0)], "c": [(0, 7.0, 4.0)]},
     {("kv", None): {"spills": 1, "evicted_entries": 1, "evicted_units": 4.0},
      ("cpu", None): {"cached": 3.92, "admissions": 1}, ("pcie", None): {"service": 4.0}}),
    # §3, Ties: "A pool's growers: the order they stalled, the head blocking the rest" (preempt none).
    # cap 10: s0 3, s1 3, s2 2 (to 3), s3 2 (to 4). s0's grow of 4 stalls at 1, s1's of 1 at 2 (full). At
    # 3 s2's release leaves 8: s0's 4 does not fit and s1's 1, which would, waits behind it. At 4 (used 6)
    # s0 grows to 10; at 5 s0 ends and s1 grows.
    ("stalled_growers_in_the_order_they_stalled", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (3) { run d (1); grow kv (4); observe g = now; run d (1); } }
  else { branch (serial == 1) { hold kv (3) { run d (2); grow kv (1); observe g = now; run d (1); } }
  else { hold kv (2) { run d (serial + 1); } } }
}
run { horizon 100; }
""", {"g": [(0, 4.0, 4.0), (1, 5.0, 5.0)]}, {("kv", None): {"used": 0.52, "holders": 0.18}}),
    # §3, Ties: "where the heads of two queues both wait for room in one pool … the pool declared first is
    # served first": C frees at 1; s1 (in B's queue since 0.2) before s0 (in A's since 0.1), B declared
    # first. s0 at 2. A hold waits in its first pool's queue: B's wait 0.8, A's 1.9.
    ("two_queues_waiting_for_one_pool_in_declaration_order", """
pool B { cap 10; }
pool A { cap 10; }
pool C { cap 5; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { hold C (5) { run d (1); } }
  else {
    run d (0.1 * (serial + 1));
    branch (serial == 0) { hold A (1), C (5) { observe a = now; run d (1); } }
    else { hold B (1), C (5) { observe a = now; run d (1); } }
  }
}
run { horizon 100; }
""", {"a": [(1, 1.0, 1.0), (0, 2.0, 2.0)]},
     {("B", None): {"wait": 0.8, "queue": 0.008}, ("A", None): {"wait": 1.9, "queue": 0.019},
      ("C", None): {"used": 0.15, "wait": 0.0}}),
    # a step stage's work is its residents' tokens left, applied when an iteration ends: at 0.5 s0's 4
    # (queue 1, busy 1, budget_left the estimate 2 - min(4, inf) = 0); at 1.5: 2; at 3.5 s0 decodes (its
    # prefill done at 2, one decode token applied at 3): 1 left, budget_left 2 - 1. fifo(2) with two jobs
    # of 4 from 0: at 3.5 queue 2, busy 2, work 0.5 + 0.5.
    ("a_step_stages_observables_between_iterations", """
pool kv { cap 100; }
stage e : step { budget 2; cost 1; memory kv; }
stage f : fifo(2);
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (3) { run e prefill (4); run e decode (2); } }
  else { branch (serial == 1) {
    run d (0.5); observe w1 = work(e) * 1000 + queue(e) * 100 + busy(e) * 10 + budget_left(e);
    run d (1); observe w2 = work(e) * 1000 + queue(e) * 100 + busy(e) * 10 + budget_left(e);
    run d (2); observe w3 = work(e) * 1000 + queue(e) * 100 + busy(e) * 10 + budget_left(e);
    observe q = queue(f) * 100 + busy(f) * 10 + work(f);
  } else { run f (4); } }
}
run { horizon 100; }
""", {"w1": [(1, 0.5, 4110.0)], "w2": [(1, 1.5, 2110.0)], "w3": [(1, 3.5, 1111.0)], "q": [(1, 3.5, 221.0)]},
     {}),
    # docs/language.md, the online estimates (α = 0.01; the first completion sets the service and the wait,
    # λ̂ from the second): starts 0, 1, 1.5 (s2 arrived 1.2, waited 0.3), services 0.5. Before the first
    # completion all read 0, and at 0.75 λ̂ is still unknown (0), ρ̂ 0, Ŵ 0. After the third (at 2): gap
    # 0.99·1 + 0.01·0.5 = 0.995, λ̂ = 1 / 0.995; ŝ 0.5, ρ̂ = λ̂ / 2; Ŵ = 0.01·0.3; price(s, 1, 1) = 1 +
    # λ̂ (2² - 1²) / (2 (1 - ρ̂)) + λ̂ Ŵ / (1 - ρ̂).
    ("the_online_estimates_after_three_completions", """
stage s : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) { run d (serial == 2 ? 1.2 : serial); run s (0.5); }
  else {
    run d (0.25); observe a = est_lambda(s) * 100 + est_rho(s) * 10 + est_wait(s);
    run d (0.5); observe b = est_lambda(s) * 100 + est_rho(s) * 10 + est_wait(s);
    run d (1.6); observe c = est_lambda(s); observe r = est_rho(s); observe w = est_wait(s);
    observe p = price(s, 1, 1);
  }
}
run { horizon 100; }
""", {"a": [(3, 0.25, 0.0)], "b": [(3, 0.75, 0.0)], "c": [(3, 2.35, 1 / 0.995)], "r": [(3, 2.35, 0.5 / 0.995)],
      "w": [(3, 2.35, 0.01 * 0.3)],
      "p": [(3, 2.35, 1 + (1 / 0.995) * 3 / (2 * (1 - 0.5 / 0.995)) + (1 / 0.995) * 0.003 / (1 - 0.5 / 0.995))]},
     {}),
    # docs/language.md, "A decoder gets the part of a token the budget has left": budget 2.5, three
    # decoders: 1, 1 and 0.5 at [0,1] and [1,2] (s0, s1 done at 2: 2 tokens each); s2's decode (1.5) has 0.5
    # left, alone at [2,3]. tokens 2.5 + 2.5 + 0.5 over 3 iterations; utilisation 5.5 / 7.5.
    ("a_fractional_budget_gives_a_decoder_part_of_a_token", """
stage e : step { budget 2.5; cost 1; }
workload { arrive batch(3); }
session { run e decode (serial == 2 ? 1.5 : 2); observe d = now; }
run { horizon 100; }
""", {"d": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 3.0, 3.0)]},
     {("e", None): {"iterations": 3, "tokens": 5.5 / 3, "token_utilisation": 5.5 / 7.5}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in LAST], ids=[c[0] for c in LAST])
def test_spills_growers_orders_and_estimates_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# A victim whose tokens were planned, the observables of pools and aggregates at their edges, the CLI's
# overrides of the run block
# ---------------------------------------------------------------------------------------------------------

EDGES = [
    # serve by (-admission) serves s1 (admitted last) first. cap 3, block 1: s1 holds 2, s0 1. At 1 s1's
    # second token is planned within its 2; s0's growth to 2 needs a unit: 4 > 3, and lifo's victim is s1,
    # the last admitted, whose planned token is taken back (the iteration's tokens: 1). s0 grows, and the
    # step that preempted admits nothing; s1 waits (2 + 2 > 3) until s0's decode of 3 ends at 3, then decodes
    # its 3 again from its re-admission: [3,6]. tokens 2 + 1 + 1 + 1 + 1 + 1 over 6 iterations; used 3 + 2
    # + 3 + 2 + 2 + 3 = 15 / 100; waits 0, 0, 2 (s1 from its preemption at 1 to 3).
    ("a_victim_served_before_its_grower_gives_its_tokens_back", """
pool kv { cap 3; block 1; preempt lifo; }
stage e : step { budget 10; cost 1; memory kv; serve by (-admission); }
workload { arrive batch(2); }
session {
  hold kv (serial == 0 ? 1 : 2) { observe a = now; run e decode (3) growing kv; }
  observe f = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 3.0, 3.0)], "f": [(0, 3.0, 3.0), (1, 6.0, 6.0)]},
     {("e", None): {"iterations": 6, "tokens": 7 / 6},
      ("kv", None): {"used": 0.15, "preemptions": 1, "admissions": 3, "wait": 2 / 3}}),
    # §2's observables at their edges: blocksize of a pool without `block` is 1 (and 4 with it), free of
    # cap inf is inf, a hold of 1 on block 4 takes 4 (used 4, free 8); an aggregate over 1 term is that
    # term, over 3 the max, min and sum of j = 0, 1, 2 written out.
    ("pool_observables_and_aggregates_at_their_edges", """
pool kv { cap inf; }
pool b4 { cap 12; block 4; }
pool fam[3] { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (5), b4 (1) {
    observe bs = blocksize(kv);
    observe bb = blocksize(b4);
    observe fr = free(kv);
    observe fb = free(b4);
    observe ub = used(b4);
    observe s1 = sum j in 1 (used(fam[j]) + 7);
    observe m3 = max j in 3 (j * 2);
    observe n3 = min j in 3 (10 - j);
    observe s3 = sum j in 3 (j);
  }
}
run { horizon 1; }
""", {"bs": [(0, 0.0, 1.0)], "bb": [(0, 0.0, 4.0)], "fr": [(0, 0.0, inf)], "fb": [(0, 0.0, 8.0)],
      "ub": [(0, 0.0, 4.0)], "s1": [(0, 0.0, 7.0)], "m3": [(0, 0.0, 4.0)], "n3": [(0, 0.0, 8.0)],
      "s3": [(0, 0.0, 3.0)]}, {}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in EDGES], ids=[c[0] for c in EDGES])
def test_edges_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_the_cli_overrides_the_run_block(tmp_path):
    """program-reference.txt, run: "--horizon, --warmup, --seed and --arrivals override them"; language.txt
    §2: "The CLI accepts --arrivals N for run and ir, overriding the source value". The program's own
    `arrivals 3` of renewal(2) into fifo(2) of 3 drains at 9; `--arrivals 2` at 7 (arrivals at 2 and 4, done
    at 5 and 7), with the horizon and warm-up given; `serq ir --arrivals 5` writes 5 in the IR's run."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    serq = str(Path(sys.executable).parent / "serq")
    prog = tmp_path / "p.sq"
    prog.write_text("stage s : fifo(2);\nworkload { arrive renewal(2); }\nsession { run s (3); observe t = now; }\n"
                    "run { horizon 100; arrivals 3; }\n")

    def report(*args):
        out = subprocess.run([serq, "run", str(prog), "--json", *args], capture_output=True, text=True,
                             timeout=120, check=True)
        js = json.loads(out.stdout)
        return js["end"], js["arrivals"], js["horizon"], js["warmup"]

    assert report() == (9.0, 3, 100.0, 0.0)
    assert report("--arrivals", "2", "--warmup", "1", "--horizon", "50") == (7.0, 2, 50.0, 1.0)
    ir = subprocess.run([serq, "ir", str(prog), "--arrivals", "5"], capture_output=True, text=True, timeout=120,
                        check=True)
    assert json.loads(ir.stdout)["run"]["arrivals"] == 5


# ---------------------------------------------------------------------------------------------------------
# A prefill/decode path in time: kernel holds with a lease and a transfer, and the queue sugar with a pull
# ---------------------------------------------------------------------------------------------------------

PD = [
    # budget 4: P prefills s0 at [0,1] and s1 at [1,2]; each leases its 4 and reads it over the fifo link
    # (1 each): s0 [1,2], s1 [2,3]; the read's release ends the lease (kvP caches 4). D decodes s0 at [2,3]
    # and, with s1 (its read done at 3, the same instant as the iteration's end), at [3,4]; s1 alone at
    # [4,5]. kvD caches min(6, 4 loaded) = 4. kvP used 4·2 + 4·3, cached 4·98 + 4·97; kvD used 4·3 + 4·3,
    # cached 4·96 + 4·95. D's decodes continue P's requests (docs/language.md, ITL): D counts none.
    ("a_prefill_lease_and_transfer_in_kernel_form", """
pool kvP { cap 100; }
pool kvD { cap 100; }
stage P : step { budget 4; cost 1; memory kvP; }
stage D : step { budget 4; cost 1; memory kvD; }
stage link : fifo;
workload { arrive batch(2); }
session {
  hold kvP (4) { run P prefill (4); } cache (4) lease kvP (inf);
  observe p = now;
  hold kvD (4) { transfer (1) from kvP to kvD (4); observe x = now; run D decode (2); } cache (6);
  observe f = now;
}
run { horizon 100; }
""", {"p": [(0, 1.0, 1.0), (1, 2.0, 2.0)], "x": [(0, 2.0, 2.0), (1, 3.0, 3.0)], "f": [(0, 4.0, 4.0), (1, 5.0, 5.0)]},
     {("P", None): {"iterations": 2, "requests": 2}, ("D", None): {"iterations": 3, "requests": 0},
      ("link", None): {"wait": 0.0, "service": 1.0},
      ("kvP", None): {"used": 0.2, "cached": 7.8, "holders": 0.05}, ("kvD", None): {"used": 0.24, "cached": 7.64}}),
    # the same path as queues: `D pull P latency 0.5 share maxmin`. s0's read waits 0.5 ([1,1.5]) and then
    # holds P.nic (ps 2) and D.nic (ps 4) at once: max-min gives it 2. s1's from 2.5: P.nic is shared, 1
    # each; s0 has 4 - 2 = 2 left then: done at 4.5; s1 alone at 2 for its last 2: 5.5 (the marks). D
    # decodes s0 at [4.5,6.5] and s1 from its read's end at 5.5 (the iteration then): 7.5. P.nic carries
    # its capacity on [1.5, 5.5]: utilisation 0.04; D.nic half of its capacity then: 0.02. P.kv's leases
    # end at the reads' ends: used 4·4.5 + 4·5.5, cached 4·95.5 + 4·94.5.
    ("a_prefill_decode_pull_over_two_nics", """
queue P[1] : prefill {
  pool kv { cap 100; }
  serve step { budget 4; cost 1; memory kv; }
  nic ps(2);
  prefill (prompt) {
    hold kv (prompt) { prefill (prompt); } cache (prompt) lease kv (inf);
  }
}
queue D[1] : decode {
  pool kv { cap 100; }
  serve step { budget 4; cost 1; memory kv; }
  nic ps(4);
  decode (prompt) from src {
    hold kv (prompt) {
      transfer (prompt) from src to kv (prompt);
      mark got;
      decode (o);
    } cache (prompt + o);
  }
}
D pull P latency 0.5 share maxmin;
workload { arrive batch(2); hidden o; }
session {
  set prompt = 4;
  set o = 2;
  P[0].prefill (prompt);
  D[0].decode (prompt) from P[0];
  observe g = D.got;
  observe f = now;
}
run { horizon 100; }
""", {"g": [(0, 6.5, 4.5), (1, 7.5, 5.5)], "f": [(0, 6.5, 6.5), (1, 7.5, 7.5)]},
     {("P.nic", 0): {"present": 0.06, "utilisation": 0.04, "service": 3.0},
      ("D.nic", 0): {"present": 0.06, "utilisation": 0.02},
      ("D.nic.latency", 0): {"service": 0.5, "completions": 2},
      ("P.kv", 0): {"used": 0.4, "cached": 7.6}, ("D.kv", 0): {"used": 0.44, "cached": 7.44}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in PD], ids=[c[0] for c in PD])
def test_prefill_decode_paths_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# pool-reference.txt, preempt: "requeue head (the default) places it first, ahead of policy keys.
# requeue tail treats it as a newcomer: FIFO places it last". cap 3, block 1, on the engine's memory: s0
# and s1 decode 3 growing from 1 unit; s2 (2 units) queues at 0.5. At 1 s1, the last admitted, is its own
# victim (keys that order as lifo stop the serving as lifo does: s0 was served first).
REQUEUE = """
pool kv { cap 3; block 1; preempt by (-admission) requeue WHERE; }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold kv (1) { observe a = now; run e decode (3) growing kv; } }
  else { run d (0.5); hold kv (2) { observe a = now; run e decode (1); } }
  observe f = now;
}
run { horizon 100; }
"""

REQUEUES = [
    # head: s1 before s2. At 2 s1 is admitted again (2 + 1 ≤ 3), s2 not; s0's growth to 3 then preempts s1
    # a second time at no further position (stuck 1). s0 done at 3; at 3 s1 and s2 are admitted; s2's
    # decode of 1 done at 4, s1's 3 at [3,6]. Waits 0, 0, 1, 1, 2.5: 4.5 / 5.
    ("requeue_head_goes_before_the_waiting_newcomer", REQUEUE.replace("WHERE", "head"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 2.0), (1, 3.0, 3.0), (2, 3.0, 3.0)],
      "f": [(0, 3.0, 3.0), (2, 4.0, 4.0), (1, 6.0, 6.0)]},
     {("kv", None): {"admissions": 5, "preemptions": 2, "stuck": 1, "wait": 0.9, "queue": 0.045}}),
    # tail: s1 behind s2, whose 2 do not fit beside s0's 2 at 2: both wait for s0's end at 3. One
    # preemption; waits 0, 0, 2, 2.5: 4.5 / 4.
    ("requeue_tail_goes_behind_the_waiting_newcomer", REQUEUE.replace("WHERE", "tail"),
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 3.0, 3.0), (2, 3.0, 3.0)],
      "f": [(0, 3.0, 3.0), (2, 4.0, 4.0), (1, 6.0, 6.0)]},
     {("kv", None): {"admissions": 4, "preemptions": 1, "stuck": 0, "wait": 1.125, "queue": 0.045}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in REQUEUES], ids=[c[0] for c in REQUEUES])
def test_requeue_head_and_tail_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_an_ordered_trace_replays_its_sessions_turn_by_turn(tmp_path, monkeypatch):
    """§3, Workload: "with a trace, turn loads the next turn's new, out, think, forced and sets more (ordered:
    session i replays trace session i)". The trace's sessions 7 and 9 (its rows out of order) are sessions 0
    and 1. Session 0: new 100 (run 1: at 1, more 1), think 2, then new 200 (forced 1) at 3 + 2 = 5, think 3,
    then new 300 at 8 + 3 = 11, more 0: it ends. Session 1: new 50, its only row: at 0.5, more 0. Turns 3 +
    1; each sample carries its turn."""
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n7,1,200,20,3,1\n9,0,50,5,1,0\n"
                                    "7,0,100,10,2,0\n7,2,300,30,0,0\n")
    prog = tmp_path / "p.sq"
    prog.write_text("""stage d : delay;
workload { arrive batch(2); trace "t.csv" ordered; }
session {
  turn;
  loop {
    run d (new / 100);
    observe n = new * 10 + more;
    observe f = forced;
    branch (more) { run d (think); turn; } else { end; }
  }
}
run { horizon 100; }
""")
    r, obs = run("", monkeypatch, path=prog)
    assert obs["n"] == [(1, 0.5, 500.0), (0, 1.0, 1001.0), (0, 5.0, 2001.0), (0, 11.0, 3000.0)]
    assert obs["f"] == [(1, 0.5, 0.0), (0, 1.0, 0.0), (0, 5.0, 1.0), (0, 11.0, 0.0)]
    assert sorted(zip(r.observes["n"].times.tolist(), r.observes["n"].turns.tolist())) == [(0.5, 1), (1.0, 1),
                                                                                             (5.0, 2), (11.0, 3)]
    assert (r.result.turns, r.result.ended) == (4, 2)


# ---------------------------------------------------------------------------------------------------------
# A lease is no preemption victim; rejection after block rounding
# ---------------------------------------------------------------------------------------------------------

VICTIMS = [
    # pool-reference.txt: "Candidates are holders resident in the stage whose memory is this pool … Leases are
    # not candidates; the grower can be its own victim." s0 prefills 1 at [0,1] and leases its 3 until 3.5.
    # s1 (1 unit from 0.5) grows to 2 at 1: 5 > 4, and the only candidate is itself: preempted at 1, 2 and 3
    # (re-admitted at each iteration's end, an empty iteration each; stuck 1). The lease ends at 3.5 into a
    # cache of 3; s1 is admitted then, and its growth at 4 evicts the entry's tail unit: [4,5]. used 3·3.5 +
    # 1·1.5 + 2·1 = 13.5 / 100; cached 3·0.5 + 2·96; queued [1, 3.5]; waits 0, 0, 1, 1, 0.5.
    ("a_lease_is_no_preemption_candidate", """
pool kv { cap 4; block 1; preempt lifo; }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (3) { run e prefill (1); } cache (3) lease kv (2.5); run d (10); }
  else { run d (0.5); hold kv (1) { observe a = now; run e prefill (2) growing kv; } observe f = now; }
}
run { horizon 100; }
""", {"a": [(1, 0.5, 0.5), (1, 2.0, 2.0), (1, 3.0, 3.0), (1, 3.5, 3.5)], "f": [(1, 5.0, 5.0)]},
     {("e", None): {"iterations": 5},
      ("kv", None): {"used": 0.135, "cached": 1.935, "queue": 0.025, "wait": 0.5, "admissions": 5,
                     "preemptions": 3, "stuck": 1, "evicted_units": 1.0}}),
    # pool-reference.txt: "If either units or reserve is independent of deployment state and exceeds capacity
    # after block rounding, the hold is rejected and its session ends": 9 → 12 > 10, reserve 11 > 10; the
    # two sessions end at their join (no sample after the hold); s2's 1 (4 in blocks) runs.
    ("rejected_after_block_rounding", """
pool kv { cap 10; block 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  observe s = now;
  hold kv (serial == 0 ? 9 : 1) reserve (serial == 1 ? 11 : 0) { run d (1); observe in = now; }
  observe after = now;
}
run { horizon 10; }
""", {"s": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0)], "in": [(2, 1.0, 1.0)], "after": [(2, 1.0, 1.0)]},
     {("kv", None): {"rejections": 2, "admissions": 1, "used": 0.4}, "ended": 3}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in VICTIMS], ids=[c[0] for c in VICTIMS])
def test_victims_and_rejections_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_sessions_run_in_the_order_they_became_ready(monkeypatch):
    """§3, Ties: "Events at one instant: the order they were scheduled; sessions run in the order they became
    ready". Both runs end at 2: s1's (scheduled at 0) before s0's (scheduled at 0.5), so s1 runs first and
    takes the pool of 1 at 2; s0 at 3. The fast tier runs it (and agrees)."""
    src = """
pool kv { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (0.5); run d (1.5); } else { run d (2); }
  hold kv (1) { observe a = now; run d (1); }
}
run { horizon 100; }
"""
    _, obs = run(src, monkeypatch)
    assert obs["a"] == [(1, 2.0, 2.0), (0, 3.0, 3.0)]
    assert_same(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch, expect_fast=True)


@pytest.mark.parametrize("n, noted", [(39, False), (40, True)])
def test_a_test_observe_constant_0_is_noted_from_40_samples(monkeypatch, n, noted):
    """§3, Statistics: "An observe whose expression is a test (its outermost operator a comparison, &&, || or
    !) and that was 0 over 40 or more samples gets a line under the table, note: observe hit is constant 0
    over 5357 samples … A test that always held is not noted." `z = 0` is no test; `one` always held."""
    from conform import report_json

    src = (f"workload {{ arrive batch({n}); }}\nsession {{ observe hit = serial > 100; observe one = serial >= 0; "
           "observe z = 0; }\nrun { horizon 1; }\n")
    r, _ = run(src, monkeypatch)
    notes = report_json(r)["notes"]
    assert (f"note: observe hit is constant 0 over {n} samples" in notes) is noted
    assert not any("observe one" in x or "observe z" in x for x in notes)
