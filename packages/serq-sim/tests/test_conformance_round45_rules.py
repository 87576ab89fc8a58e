"""Conformance round 45, rule by rule: language.txt §3 and pool-reference.txt's rules in small programs on
constant times, each outcome worked out by hand from the pages' words in the comment above the case.

* §3, Stages: `share bottleneck` ("its equal share at the tightest of its stages, min over s of φ_s / n_s")
  and `share maxmin` ("every flow's rate rises together until a stage fills"), with a single-stage run on a
  stage some run shares ("every job on it … is a flow of the policy"), and the utilisation Σ rate / φ.
* §3, Ties: "choose: the keys, in order, then the smallest index".
* §3, Gauges: the time average, "the least and greatest value held for a positive time".
* §3, Stages: `serve by (remaining)`, "the tokens its run has left", against admission order, with a chunk.
* §3, Ties: "where the heads of two queues both wait for room in one pool … the pool declared first is
  served first", and a hold on two pools blocking its first pool's queue (head-of-line).
* §3, Stages: `serve exclusive prefill`: "a waiting prefill that fits can replace them and use the full
  budget, including in budget_left at admission".
* §3, Pools: "A stage that serves several queues tries them in the order their pools are declared, and the
  first head that does not fit stops the iteration's admissions".
* pool-reference.txt, `preempt`: "requeue head (the default) places it first, ahead of policy keys. requeue
  tail treats it as a newcomer … queue by places it by its keys, with waited reset to 0".
* §3, Pools and Stages: `preempt lifo` on an engine's memory takes the last admitted resident, no admission
  in a step that preempted; "An iteration that schedules no token is not an iteration, unless it preempted:
  then … It lasts C", and the livelock it makes counted as `stuck`.

Each program runs on the tier serQ picks and on the general engine (conform.run: the JSON reports and every
observe's samples the same bytes).
"""

from __future__ import annotations

import pytest
from conform import check_by_hand

RULES = [
    # bottleneck: f0 holds a (ps 2) and b (ps 1), f1 a alone (a is shared, so f1 is a flow too). n_a = 2,
    # n_b = 1: f0 min(2/2, 1/1) = 1, f1 2/2 = 1. f0 ends at 1; f1 alone on a, rate 2, its last 1 in 0.5:
    # 1.5. a's utilisation (1 + 1)/2 on [0,1], 2/2 on [1,1.5]: 1.5/100; b's 1 on [0,1]: 1/100.
    ("share_bottleneck_a_single_stage_run_on_a_shared_stage_is_a_flow", """
stage a : ps(2);
stage b : ps(1);
share bottleneck;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run a, b (1); } else { run a (2); }
  observe done = now;
}
run { horizon 100; }
""", {"done": [(0, 1.0, 1.0), (1, 1.5, 1.5)]},
     {("a", None): {"utilisation": 0.015, "service": 1.25}, ("b", None): {"utilisation": 0.01}}),
    # maxmin: f0 on a and b, f1 on a (work 3), f2 on b. All rise together; b (φ 1) fills at 0.5 each for
    # f0 and f2; f1 rises alone until a (φ 2) fills: 2 - 0.5 = 1.5. f0: 1/0.5 = 2, f2: 1/0.5 = 2, f1:
    # 3/1.5 = 2. Both stages full on [0,2]: 2/100.
    ("share_maxmin_rates_rise_together_until_a_stage_fills", """
stage a : ps(2);
stage b : ps(1);
share maxmin;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run a, b (1); } else { branch (serial == 1) { run a (3); } else { run b (1); } }
  observe done = now;
}
run { horizon 100; }
""", {"done": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {("a", None): {"utilisation": 0.02}, ("b", None): {"utilisation": 0.02}}),
    # choose by the jobs at each member, ties to the least index: s0 sees 0, 0, 0 (0); s1 1, 0, 0 (1); s2
    # 1, 1, 0 (2); s3 1, 1, 1 (0), and waits 1 behind s0 on the fifo s[0].
    ("choose_ties_go_to_the_least_index", """
stage s[3] : fifo;
workload { arrive batch(4); }
session {
  choose j in 3 by (queue(s[j]));
  observe pick = j;
  run s[j] (1);
  observe done = now;
}
run { horizon 10; }
""", {"pick": [(0, 0.0, 0.0), (1, 0.0, 1.0), (2, 0.0, 2.0), (3, 0.0, 0.0)],
      "done": [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 1.0, 1.0), (3, 2.0, 2.0)]},
     {("s", 0): {"wait": 0.5, "throughput": 0.2}, ("s", 1): {"wait": 0.0}}),
    # Gauges: s0 holds 5 on [0,3], s1 5 on [2,5]: used 5, 10, 5, 0 on [0,2], [2,3], [3,5], [5,10]: mean
    # 30/10, least 0, greatest 10; `free(kv) == 0` holds on [2,3]: 0.1, 0 and 1.
    ("a_gauges_time_average_least_and_greatest", """
pool kv { cap 10; }
stage d : delay;
gauge u = used(kv);
gauge full = free(kv) == 0;
workload { arrive batch(2); }
session {
  run d (serial * 2);
  hold kv (5) { run d (3); }
}
run { horizon 10; }
""", {}, {("gauge", "u"): {"mean": 3.0, "min": 0.0, "max": 10.0},
          ("gauge", "full"): {"mean": 0.1, "min": 0.0, "max": 1.0}, ("kv", None): {"used": 3.0}}),
    # serve by (remaining), budget 4, chunk 3; prefills of 9, 5, 2 admitted in that order. t=0: s0 3 (budget
    # 1 left), s1 1, s2 waits. t=1: s1 (4 left) before s0 (6): s1 3, s0 1. t=2: s1 (1) 1, done at 3; s0 (5)
    # 3. t=3: s0 2, done at 4; s2 admitted with 2 left, done at 4. (Admission order would end s1 at 4.)
    ("serve_by_remaining_serves_the_shortest_run_first", """
pool reqs { cap 10; admit via e; }
stage e : step { budget 4; cost 1; chunk 3; serve by (remaining); }
workload { arrive batch(3); }
session {
  set p = serial == 0 ? 9 : serial == 1 ? 5 : 2;
  hold reqs (1) { run e prefill (p); }
  observe done = now;
}
run { horizon 50; }
""", {"done": [(1, 3.0, 3.0), (0, 4.0, 4.0), (2, 4.0, 4.0)]},
     {("reqs", None): {"admissions": 3, "wait": 1.0}}),
    # s0 holds all of c on [0,2]. At 1 s1 joins b's queue for b, c; s2 a's for a, c; at 1.5 s3 b's for b
    # alone. At 2 both heads want 3 of c (cap 5): a is declared first, s2 is admitted (2); s1 at 3, when s2
    # leaves; s3, behind s1 in b's queue, at 3 though b had room all along. Waits at b: 2 and 1.5.
    ("two_heads_waiting_for_one_pool_the_pool_declared_first_goes_first", """
pool a { cap 2; }
pool b { cap 2; }
pool c { cap 5; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold c (5) { run d (2); } }
  else { branch (serial == 1) { run d (1); hold b (1), c (3) { observe t = now; run d (1); } }
  else { branch (serial == 2) { run d (1); hold a (1), c (3) { observe t = now; run d (1); } }
  else { run d (1.5); hold b (1) { observe t = now; run d (1); } } } }
}
run { horizon 10; }
""", {"t": [(2, 2.0, 2.0), (1, 3.0, 3.0), (3, 3.0, 3.0)]},
     {("a", None): {"wait": 1.0}, ("b", None): {"wait": 1.75, "queue": 0.35}, ("c", None): {"admissions": 3}}),
    # exclusive prefill: s0 prefills 2 on [0,1] and decodes from 1; s1's prefill of 4 waits from 2, when s0
    # decodes: it displaces s0's decode and its header reads the whole budget, 8 (s0's header read 8 at 0:
    # probe 16). s1's prefill on [2,3]; s0's decodes on [1,2], [3,4], [4,5]: done 5 (4 without the rule).
    ("exclusive_prefill_displaces_a_decode_and_its_header_reads_the_whole_budget", """
pool reqs { cap 4; admit via e; }
pool probe { cap 100; }
stage e : step { budget 8; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 2);
  hold reqs (1), probe (budget_left(e)) {
    observe u = used(probe);
    branch (serial == 0) { prefill (2); decode (3); } else { prefill (4); }
  }
  observe done = now;
}
run { horizon 20; }
""", {"u": [(0, 0.0, 8.0), (1, 2.0, 16.0)], "done": [(1, 3.0, 3.0), (0, 5.0, 5.0)]}, {}),
    # The same without the rule: s1's header reads 8 - 1 (s0's decode token) = 7, both run in [2,3].
    ("without_exclusive_prefill_the_header_reads_what_the_decode_left", """
pool reqs { cap 4; admit via e; }
pool probe { cap 100; }
stage e : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 2);
  hold reqs (1), probe (budget_left(e)) {
    observe u = used(probe);
    branch (serial == 0) { prefill (2); decode (3); } else { prefill (4); }
  }
  observe done = now;
}
run { horizon 20; }
""", {"u": [(0, 0.0, 8.0), (1, 2.0, 15.0)], "done": [(1, 3.0, 3.0), (0, 4.0, 4.0)]}, {}),
    # An engine serving q1 and q2 (declared in that order). s0 holds q1's one slot on [0,4] (prefill 4 on
    # [0,1], decodes to 4). At 1 s1 waits at q1 and s2 at q2, which has room: q1's head does not fit, which
    # stops the iteration's admissions, so s2 waits too. At 4 s0 leaves; the iteration at 4 admits s1, then
    # s2: both prefill 1, done at 5.
    ("the_first_head_that_does_not_fit_stops_the_engines_admissions", """
pool q1 { cap 1; admit via e; }
pool q2 { cap 5; admit via e; }
stage e : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 0 ? 0 : 1);
  branch (serial < 2) {
    hold q1 (1) { prefill (serial == 0 ? 4 : 1); branch (serial == 0) { decode (3); } }
  } else {
    hold q2 (1) { prefill (1); }
  }
  observe done = now;
}
run { horizon 20; }
""", {"done": [(0, 4.0, 4.0), (1, 5.0, 5.0), (2, 5.0, 5.0)]},
     {("q1", None): {"wait": 1.5}, ("q2", None): {"wait": 3.0}}),
    # cap 10, queue by (-waited), preempt by (-admission) requeue tail. s0 holds 5 and s1 5 at 0; s2 joins
    # for 6 at 1. At 2 s0's growth of 5 takes the last admitted, s1; s0 grows. s1 goes back as a newcomer,
    # waited 0 against s2's 1: s2's key -1 is the least. At 3 s0 leaves: s2 admitted (6), s1 (5) does not
    # fit; at 4 s2 leaves and s1 is admitted.
    ("requeue_tail_places_the_victim_by_its_keys_with_waited_reset", """
pool kv { cap 10; queue by (-waited); preempt by (-admission) requeue tail; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (5) { run d (2); grow kv (5); run d (1); }
  } else { branch (serial == 1) {
    hold kv (5) { observe t1 = now; run d (10); }
  } else {
    run d (1);
    hold kv (6) { observe t2 = now; run d (1); }
  } }
}
run { horizon 30; }
""", {"t1": [(1, 0.0, 0.0), (1, 4.0, 4.0)], "t2": [(2, 3.0, 3.0)]}, {("kv", None): {"preemptions": 1}}),
    # The same with requeue head: the victim goes first, ahead of the keys: s1 at 3, and s2 (6 beside s1's
    # 5) only when s1 leaves at 13.
    ("requeue_head_places_the_victim_ahead_of_the_keys", """
pool kv { cap 10; queue by (-waited); preempt by (-admission) requeue head; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (5) { run d (2); grow kv (5); run d (1); }
  } else { branch (serial == 1) {
    hold kv (5) { observe t1 = now; run d (10); }
  } else {
    run d (1);
    hold kv (6) { observe t2 = now; run d (1); }
  } }
}
run { horizon 30; }
""", {"t1": [(1, 0.0, 0.0), (1, 3.0, 3.0)], "t2": [(2, 13.0, 13.0)]}, {("kv", None): {"preemptions": 1}}),
    # preempt lifo on the engine's memory (cap 8, block 4). t=0: s0 and s1 admitted (4 each), prefill 4 each.
    # t=1: s0's decode grows to 8: no room, the last admitted resident, s1, is preempted; no admission in
    # that step. s0 decodes 4 tokens on [1,5]; s1 (4 beside s0's 8) waits and is admitted at 5: prefill on
    # [5,6], 4 decodes on [6,10]: done at 10. kv used 8 on [0,5], 4 on [5,6], 8 on [6,10]: 76/10.
    ("preempt_lifo_takes_the_last_admitted_resident_and_admits_none_that_step", """
pool reqs { cap 4; admit via e; }
pool kv { cap 8; block 4; preempt lifo; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (4) { observe adm = now; prefill (4) growing kv; decode (4) growing kv; }
  observe done = now;
}
run { horizon 10; }
""", {"adm": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 5.0, 5.0)], "done": [(0, 5.0, 5.0), (1, 10.0, 10.0)]},
     {("kv", None): {"preemptions": 1, "used": 7.6, "admissions": 3, "stuck": 0}}),
    # cap 4: the one session prefills 4 on [0,1]; its decode needs a fifth unit: it preempts itself in an
    # iteration that schedules no token, which still lasts the cost, 1; it is admitted again at 2, and so
    # at 1, 3, 5, 7, 9 (5 preemptions, admitted at 0, 2, …, 10): preempted again at the same position, stuck.
    ("an_iteration_that_only_preempts_lasts_its_cost_and_the_livelock_is_stuck", """
pool reqs { cap 4; admit via e; }
pool kv { cap 4; block 4; preempt lifo; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (4) { observe adm = now; prefill (4) growing kv; decode (1) growing kv; }
  observe done = now;
}
run { horizon 10; }
""", {"adm": [(0, float(t), float(t)) for t in (0, 2, 4, 6, 8, 10)], "done": []},
     {("kv", None): {"preemptions": 5, "stuck": 1, "admissions": 6, "used": 2.0}}),
    # queue by reading budget_left(e) of the engine that admits the pool, "reevaluated after each successful
    # admission": prompts 6, 5, 2 all waiting at 0, budget 8. First attempt (8 left): keys (0, 0), (0, 1),
    # (0, 2): s0, which takes 6. Second (2 left): (1, 1), (0, 2): s2, which takes 2; no budget is left. s1
    # at 1, done 2. (FIFO would admit s1 second with 2 tokens of its 5: s2 at 1, done 2.)
    ("queue_keys_read_the_attempts_budget_and_are_read_again_after_each_admission", """
pool reqs { cap 10; admit via e; queue by (p > budget_left(e) ? 1 : 0, serial); }
stage e : step { budget 8; cost 1; }
workload { arrive batch(3); }
session {
  set p = serial == 0 ? 6 : serial == 1 ? 5 : 2;
  hold reqs (1) { observe adm = now; prefill (p); }
  observe done = now;
}
run { horizon 20; }
""", {"adm": [(0, 0.0, 0.0), (2, 0.0, 0.0), (1, 1.0, 1.0)], "done": [(0, 1.0, 1.0), (2, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("reqs", None): {"wait": 1 / 3}}),
    # ps(min(present, 2)) and fifo(2), warm-up 2.5. ps: works 1, 2, 3 at rate 2/3 each until 1.5 (the first
    # ends), then 1 each (the second's last 1 ends at 2.5), the third alone at 1 ends at 3.5. fifo(2): s0
    # on [1.5,2.5], s1 [2.5,4.5], s2 [3.5,6.5], none waits. Samples and completions at or after 2.5; the
    # averages over 7.5: ps present 1 on [2.5,3.5], 2 completions (services 2.5, 3.5); fifo present 1, 2, 1
    # on [2.5,3.5], [3.5,4.5], [4.5,6.5]: 5/7.5, utilisation half that, 3 completions.
    ("ps_of_present_fifo_of_two_servers_and_the_warm_up", """
stage s : ps(min(present, 2));
stage f : fifo(2);
workload { arrive batch(3); }
session {
  run s (serial + 1);
  observe ps_done = now;
  run f (serial + 1);
  observe f_done = now;
}
run { horizon 10; warmup 2.5; }
""", {"ps_done": [(1, 2.5, 2.5), (2, 3.5, 3.5)], "f_done": [(0, 2.5, 2.5), (1, 4.5, 4.5), (2, 6.5, 6.5)]},
     {("s", None): {"present": 1 / 7.5, "throughput": 2 / 7.5, "service": 3.0},
      ("f", None): {"present": 5 / 7.5, "utilisation": 2.5 / 7.5, "throughput": 3 / 7.5, "service": 2.0, "wait": 0.0}}),
    # The online estimates, by docs/language.md's estimator (language.txt names λ̂, ρ̂, Ŵ and no estimator):
    # α = 0.01, the first completion sets the service and the wait outright, the second the gap between
    # service starts. Three runs of 2 on a fifo sent at 0, 1, 2 start at 0, 2, 4 (waits 0, 1, 2) and end at
    # 2, 4, 6: ŝ 2, gaps 2 and 2 (λ̂ 0.5), ρ̂ min(0.5 · 2, 0.99) = 0.99, Ŵ 0.99 · (0.99 · 0 + 0.01 · 1) +
    # 0.01 · 2 = 0.0299; price(s, 1, 1) = 1 + 0.5 (2² − 1²) / (2 · 0.01) + 0.5 · 0.0299 · 1 / 0.01.
    ("the_online_estimates_and_the_price_of_a_miss", """
stage s : fifo;
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) {
    run d (serial);
    run s (2);
  } else {
    run d (7);
    observe l = est_lambda(s);
    observe r = est_rho(s);
    observe w = est_wait(s);
    observe p = price(s, 1, 1);
  }
}
run { horizon 20; }
""", {"l": [(3, 7.0, 0.5)], "r": [(3, 7.0, 0.99)], "w": [(3, 7.0, 0.99 * (0.99 * 0 + 0.01 * 1) + 0.01 * 2)],
      "p": [(3, 7.0, 1 + 0.5 * (4 - 1) / (2 * (1 - 0.99)) + 0.5 * (0.99 * 0.01 + 0.01 * 2) / (1 - 0.99))]},
     {("s", None): {"wait": 1.0}}),
    # §3, Ties: "jobs of a ps stage with equal finish tags finish in the order they started". s1 starts 2 at
    # 0, s0 starts 1 at 1, when s1 has 1 left: both at 1/2 finish at 3, s1 first (it started first), so s1
    # joins g's queue first and is admitted at 3, s0 at 4.
    ("equal_finish_tags_finish_in_the_order_they_started", """
pool g { cap 1; }
stage s : ps(1);
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial == 0 ? 1 : 0);
  run s (serial == 0 ? 1 : 2);
  hold g (1) { observe adm = now; run d (1); }
}
run { horizon 10; }
""", {"adm": [(1, 3.0, 3.0), (0, 4.0, 4.0)]}, {("s", None): {"service": 2.5}}),
    # pool-reference.txt, `spill`: "pred … May read size". gpu cap 8, lru: s0 caches 6 at 1; at 2 s1's hold
    # of 6 evicts it (size 6 >= 4): spilled, 6 on pcie (fifo) on [2,8]; usable in cpu when the write
    # completes (docs/language.md: "A spilled prefix is usable when its write completes"), its room taken
    # from the eviction: cachedin(cpu) 0 at 3, 6 at 9; cpu cached 6 on [2,20]: 108/20. s1 caches 3 at 3;
    # at 4 s2's 7 evicts it (size 3: not spilled). gpu: 2 entries, 9 units evicted, 1 spill; cached 6 on
    # [1,2] and 3 on [3,4]: 9/20; used 6, 6, 7 for 1 each: 19/20.
    ("a_spill_whose_predicate_reads_size_lands_when_its_write_completes", """
pool gpu { cap 8; evict lru; spill cpu via pcie (size) when (size >= 4); }
pool cpu { cap 100; }
stage pcie : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold gpu (6) { run d (1); } cache (6);
    run d (2);
    observe c3 = cachedin(cpu);
    observe g3 = cachedin(gpu);
    run d (6);
    observe c9 = cachedin(cpu);
  } else { branch (serial == 1) {
    run d (2);
    hold gpu (6) { run d (1); } cache (3);
  } else {
    run d (4);
    hold gpu (7) { run d (1); }
  } }
}
run { horizon 20; }
""", {"c3": [(0, 3.0, 0.0)], "g3": [(0, 3.0, 0.0)], "c9": [(0, 9.0, 6.0)]},
     {("gpu", None): {"evicted_entries": 2, "evicted_units": 9.0, "spills": 1, "cached": 0.45, "used": 0.95},
      ("cpu", None): {"cached": 5.4}, ("pcie", None): {"service": 6.0, "utilisation": 0.3}}),
    # §3, Pools: "next to a family of one, every member gets that one": S[0] admits q[0] and q[1], trying them
    # in order, "and the first head that does not fit stops the iteration's admissions". s0 and s2 wait at
    # q[0] (one slot), s1 at q[1]. t=0: s0 admitted (4 of the budget 8); q[0]'s next head, s2, does not fit,
    # which stops the iteration's admissions: s1 waits though q[1] is free and budget is left. t=1: s0 leaves
    # as the iteration ends; s2 and s1 admitted, 4 tokens each: done at 2.
    ("a_stage_of_one_serves_every_member_and_a_members_unfit_head_stops_the_rest", """
pool q[2] { cap 1; admit via S; }
stage S[1] : step { budget 8; cost 1; }
workload { arrive batch(3); }
session {
  set j = serial % 2;
  hold q[j] (1) { observe adm = now; prefill on S[0] (4); }
  observe done = now;
}
run { horizon 10; }
""", {"adm": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 1.0, 1.0)], "done": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {("q", 1): {"wait": 1.0}, ("q", 0): {"wait": 0.5}}),
    # §3, Gauges: the spec's two imbalance gauges over a family of two, their index k (the program's sessions
    # have an attribute j, which an aggregate's index may not be). s0 holds reqs[0] and kv[0] (2) on [0,2];
    # s1 waits for reqs[0] from 1 and holds it with kv[0] (4) on [2,4]; s2 holds reqs[1] and kv[1] (6) on
    # [2,4]. Some member full on [0,4]: 0.4; the spread 2 - 0 on [0,2], 6 - 4 on [2,4]: 8/10, least 0 (after
    # 4), greatest 2.
    ("the_specs_imbalance_gauges", """
let N = 2;
pool reqs[2] { cap 1; }
pool kv[2] { cap 10; }
stage d : delay;
gauge full = max k in N (free(reqs[k]) == 0);
gauge spread = max k in N (used(kv[k])) - min k in N (used(kv[k]));
workload { arrive batch(3); }
session {
  set j = serial == 2 ? 1 : 0;
  run d (serial);
  hold reqs[j] (1), kv[j] (2 + 2 * serial) { run d (2); }
}
run { horizon 10; }
""", {}, {("gauge", "full"): {"mean": 0.4, "min": 0.0, "max": 1.0},
          ("gauge", "spread"): {"mean": 0.8, "min": 0.0, "max": 2.0}}),
    # §3, exclusive prefill: "Displaced decodes keep any newly acquired allocation but neither execute nor
    # advance computed KV". s0 prefills 4 on [0,1]; at 1 its decode grows to position 5 (8 allocated) and is
    # displaced by s1's waiting prefill: s1's body reads used 8 + 4 = 12. s0 decodes on [2,4] (positions 5,
    # 6; no growth needed). cache (10): s1 min(10, 4), s0 min(10, 6) rounded down to 4. Used 4, 12, 8, 8 on
    # [0,1], [1,2], [2,4]: 32/10; cached 4 from 2 and 4 from 4: 56/10.
    ("a_displaced_decode_keeps_its_growth_and_does_not_advance", """
pool reqs { cap 4; admit via e; }
pool kv { cap 100; block 4; }
stage e : step { budget 8; cost 1; serve exclusive prefill; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold reqs (1), kv (4) {
    observe u = used(kv);
    prefill (4) growing kv;
    decode (serial == 0 ? 2 : 0) growing kv;
  } cache (10);
  observe done = now;
  observe k = cachedin(kv);
}
run { horizon 10; }
""", {"u": [(0, 0.0, 4.0), (1, 1.0, 12.0)], "done": [(1, 2.0, 2.0), (0, 4.0, 4.0)],
      "k": [(1, 2.0, 4.0), (0, 4.0, 4.0)]}, {("kv", None): {"used": 3.2, "cached": 5.6}}),
    # exclusive prefill, budget 4: "A resident prefill takes precedence … Once a prefill is selected, no
    # further waiting request is admitted in that iteration". s0 prefills 2 on [0,1]; at 1 s1's prefill of 8
    # displaces s0's decode (4 on [1,2]); at 2 s1, a resident prefill, is served alone (its last 4, done 3)
    # and s2, waiting since 2, is not admitted; at 3 s2's prefill of 1 displaces the decode (done 4); s0's 5
    # decodes on [4,9].
    ("a_resident_prefill_goes_alone_and_admits_none", """
pool reqs { cap 4; admit via e; }
stage e : step { budget 4; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  hold reqs (1) {
    observe adm = now;
    prefill (serial == 0 ? 2 : serial == 1 ? 8 : 1);
    decode (serial == 0 ? 5 : 0);
  }
  observe done = now;
}
run { horizon 20; }
""", {"adm": [(0, 0.0, 0.0), (1, 1.0, 1.0), (2, 3.0, 3.0)], "done": [(1, 3.0, 3.0), (2, 4.0, 4.0), (0, 9.0, 9.0)]},
     {("e", None): {"utilisation": 0.45}}),
    # pool-reference.txt, `preempt`: "Leases are not candidates; the grower can be its own victim." kv is no
    # engine's memory: the candidates are holders with an active hold scope. s1 holds 3 from 0; s0 holds 4 at
    # 0.5 (the last admitted) and leases them from 1 to its end at 6. At 2 s1's growth of 4 finds 3 + 4 + 4 >
    # 10: the lease is no candidate, so lifo takes s1 itself, admitted again at once (7); so at 4; at 6 s0's
    # end (its event scheduled first) ends the lease and s1 grows: done 7. Two preemptions at position 0:
    # stuck. Used s1's 3 on [0,6] and 7 on [6,7], s0's 4 on [0.5,6]: 47/20.
    ("a_lease_is_no_preemption_candidate_and_the_grower_is_its_own_victim", """
pool kv { cap 10; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run d (0.5);
    hold kv (4) { run d (0.5); } lease kv (inf);
    run d (5);
  } else {
    hold kv (3) { observe adm = now; run d (2); grow kv (4); run d (1); }
    observe done = now;
  }
}
run { horizon 20; }
""", {"adm": [(1, 0.0, 0.0), (1, 2.0, 2.0), (1, 4.0, 4.0)], "done": [(1, 7.0, 7.0)]},
     {("kv", None): {"preemptions": 2, "stuck": 1, "admissions": 4, "used": 2.35}}),
    # §3, Pools: "release m inside the body does the same for m alone, at that point: the innermost enclosing
    # hold on m gives its allocation there back, caching per its clause, and holds m no longer"; a transfer
    # from a hold (not a lease) on p. p's 4 are released at 2, when the link (ps 2, work 2) ends: used 0
    # there, cached min(4, 4) from 2, and p's scope end at 4 has nothing left. q caches min(4, 3) (the load)
    # at 3.
    ("a_transfer_from_an_enclosing_hold_releases_it_there", """
pool p { cap 10; }
pool q { cap 10; }
stage link : ps(2);
stage d : delay;
workload { arrive batch(1); }
session {
  hold p (4) {
    run d (1);
    hold q (4) {
      transfer (2) from p to q (3);
      observe up = used(p);
      observe cp = cachedin(p);
      run d (1);
    } cache (4);
    observe cq = cachedin(q);
    run d (1);
  } cache (4);
  observe cp2 = cachedin(p);
}
run { horizon 10; }
""", {"up": [(0, 2.0, 0.0)], "cp": [(0, 2.0, 4.0)], "cq": [(0, 3.0, 3.0)], "cp2": [(0, 4.0, 4.0)]},
     {("p", None): {"used": 0.8, "cached": 3.2, "holders": 0.2}, ("q", None): {"used": 0.8, "cached": 2.1}}),
    # §3, Configuration: an iteration starts "provided no other event is pending at the same instant (a
    # scheduler step sees every arrival up to it)", in the middle of a long run of decode-only iterations.
    # cost 0.5 + 0.25 · residents (docs/language.md: in `cost`, the jobs on the stage once it is planned).
    # s0 alone: prefill 1 then 1000 decodes, 0.75 each. s1 (prefill 3) arrives at 100.1 and is admitted at
    # the next boundary, 134 · 0.75 = 100.5; budget 2: one token each, 1.0 an iteration: s1 done 103.5. s0
    # decoded 133 by 100.5 and 3 more by 103.5; its last 864 at 0.75: done 751.5.
    ("an_arrival_in_a_long_stretch_of_decodes_is_admitted_at_the_next_boundary", """
pool reqs { cap 4; admit via e; }
stage e : step { budget 2; cost 0.5 + 0.25 * residents; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial == 0 ? 0 : 100.1);
  hold reqs (1) { observe adm = now; prefill (serial == 0 ? 1 : 3); decode (serial == 0 ? 1000 : 0); }
  observe done = now;
}
run { horizon 1000; }
""", {"adm": [(0, 0.0, 0.0), (1, 100.5, 100.5)], "done": [(1, 103.5, 103.5), (0, 751.5, 751.5)]},
     {("e", None): {"utilisation": 0.7515}}),
]

POSITION_ENGINE = """
pool reqs { cap 4; admit via e; }
pool kv { cap 16; block 4; preempt by (KEY) requeue head; }
stage e : step { budget 16; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  set pf = serial == 1 ? 8 : 4;
  hold reqs (1), kv (pf) { observe adm = now; prefill (pf) growing kv; decode (4) growing kv; }
  observe done = now;
}
run { horizon 30; }
"""


@pytest.mark.parametrize("key, adm, done, kv", [
    # All three admitted at 0 (4 + 8 + 4 = 16) and prefilled on [0,1]. At 1, in admission order: s0's decode
    # grows; the least position among the residents, 4, is s0's and s2's: the tie goes to the last admitted,
    # s2; s0 grows (16). s1's growth then takes the least, s0 (4 against 8). Both go back to the head (s0
    # ahead of s2). s1 decodes on [1,5]; s0 is admitted at 2 (12 + 4), prefills, and at 3 its growth takes
    # itself (4 against s1's 10); admitted again at 4, prefill, decodes on [5,9]; s2 admitted at 5 (s1 left),
    # done 10. Three preemptions; s0 preempted again at position 4: stuck. kv used 16 on [0,1], 12 on [1,2],
    # 16 on [2,3], 12 on [3,4], 16 on [4,5], 8, 12, 16, 16 on [5,9], 8 on [9,10]: 140/30.
    ("position", [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (0, 2.0, 2.0), (0, 4.0, 4.0), (2, 5.0, 5.0)],
     [(1, 5.0, 5.0), (0, 9.0, 9.0), (2, 10.0, 10.0)], {"preemptions": 3, "stuck": 1, "used": 140 / 30}),
    # -position: s0's growth at 1 takes s1 (-8), and s0 and s2 grow (16): both decode on [1,5]; s1 is
    # admitted at 5, prefills 8, decodes on [6,10]. kv 16 on [0,5], 8 on [5,6], 12 on [6,10]: 136/30.
    ("-position", [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (1, 5.0, 5.0)],
     [(0, 5.0, 5.0), (2, 5.0, 5.0), (1, 10.0, 10.0)], {"preemptions": 1, "stuck": 0, "used": 136 / 30}),
])
def test_a_preemption_key_reads_each_candidates_position(monkeypatch, key, adm, done, kv):
    """pool-reference.txt, `preempt`: "Keys are read at the Victim moment, for each candidate: … position (the
    position its hold has computed on the pool …)"; "ties go to the last admitted"; the candidates are the
    residents of the stage whose memory the pool is."""
    check_by_hand(monkeypatch, POSITION_ENGINE.replace("KEY", key), {"adm": adm, "done": done},
                  {("kv", None): kv})

PRIORITY_ENGINE = """
pool reqs { cap 4; admit via e; queue by (prio, serial); }
pool kv { cap 8; block 4; preempt by (-prio) requeue MODE; }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 0 ? 1 : 0;
  set pf = serial == 2 ? 8 : 4;
  set dc = serial == 2 ? 0 : 2;
  run d (serial == 2 ? 0.5 : 0);
  hold reqs (1), kv (pf) { observe adm = now; prefill (pf) growing kv; decode (dc) growing kv; }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("mode, adm, done", [
    # s1 (prio 0) then s0 (prio 1) admitted at 0, 4 each (8). At 1 s1's decode grows: the least -prio among
    # the residents is s0's (-1): s0 is preempted and goes back to reqs' queue; s2 (prio 0, 8 units) has
    # waited there since 0.5. s1 decodes on [1,3]. At 3: tail places s0 by its keys, (1, 0) after s2's
    # (0, 2): s2 admitted (8), prefills 8, done 4; s0 at 4, prefill on [4,5], decodes to 7.
    ("tail", [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 3.0, 3.0), (0, 4.0, 4.0)],
     [(1, 3.0, 3.0), (2, 4.0, 4.0), (0, 7.0, 7.0)]),
    # head: s0 first at 3 (4), s2's 8 does not fit beside it; s0 done 6, s2 admitted at 6, done 7.
    ("head", [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 3.0, 3.0), (2, 6.0, 6.0)],
     [(1, 3.0, 3.0), (0, 6.0, 6.0), (2, 7.0, 7.0)]),
])
def test_a_priority_engine_requeues_its_victim_at_the_head_or_by_its_keys(monkeypatch, mode, adm, done):
    """pool-reference.txt, `preempt`: "Candidates are holders resident in the stage whose memory is this pool
    … The victim … re-enters the hold's first pool's queue" (here the engine's queue of requests, `queue by`),
    "requeue head (the default) places it first, ahead of policy keys. requeue tail treats it as a newcomer"."""
    check_by_hand(monkeypatch, PRIORITY_ENGINE.replace("MODE", mode), {"adm": adm, "done": done},
                  {("kv", None): {"preemptions": 1}})


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in RULES], ids=[c[0] for c in RULES])
def test_rules_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)
