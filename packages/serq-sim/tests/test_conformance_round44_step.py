"""Conformance of language.txt §3 (Stages: step; Pools) and pool-reference.txt by hand, round 44: a step
engine's admissions and preemptions under the later dialect's options, iteration by iteration on the step
clock (cost 1: an iteration is one time unit).

* pool-reference.txt, `queue`: "For a stage-bound pool, budget_left(stage) reads the budget remaining for
  that admission, and the policy is evaluated again after every admission": a fit-first queue.
* pool-reference.txt, `reserve held`: "Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap: the growing
  hold can use its own reservation … A hold that grows beyond its reservation follows the pool's preempt
  rule"; §3, Statistics: "stuck: sessions preempted a second time without having advanced past the
  position of their previous preemption".
* pool-reference.txt, `preempt`: "`by (k, …)` Preempt the candidate with the least keys … Keys are read at
  the Victim moment, for each candidate: … position (the position its hold has computed on the pool)";
  "requeue head (the default) places it first".
* §3, Stages: "A hold that reserves what it will need (reserve (known) after a preemption) is rejected
  instead, once the reservation is above the cap"; §3, Pools: "A request that can never fit … is rejected:
  the session ends".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value) and
the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand

STEPS = [
    # Budget 10; prompts 6, 8, 3, 2; keys (budget_left(E) >= prompt ? 0 : 1, serial). [0,1]: 10 left, all
    # fit: s0 (6 tokens); 4 left: s2 is the only fit (3); 1 left: no fit, s1 by serial, 1 token; 0 left.
    # [1,2]: s1's 7, 3 left: s3 (2). f: s0 1, s2 1, s1 2, s3 2 (FIFO would finish s2 at 2). The body reads
    # the budget the admission left before its own tokens: 10, 4, 1, then s3's 3. reqs: used 5/10, queue
    # s3 on [0,1]: 0.1, wait 1/4. E: 10 + 9 tokens in 2 iterations.
    ("a_queue_key_reads_the_budget_left_at_each_admission", """
pool reqs { admit via E; queue by (budget_left(E) >= prompt ? 0 : 1, serial); }
stage E : step { budget 10; cost 1; }
workload { arrive batch(4); }
session {
  set prompt = serial == 0 ? 6 : serial == 1 ? 8 : serial == 2 ? 3 : 2;
  hold reqs (1) { observe b = budget_left(E); prefill (prompt); }
  observe f = now;
}
run { horizon 10; }
""", {"b": [(0, 0.0, 10.0), (1, 0.0, 1.0), (2, 0.0, 4.0), (3, 1.0, 3.0)],
      "f": [(0, 1.0, 1.0), (2, 1.0, 1.0), (1, 2.0, 2.0), (3, 2.0, 2.0)]},
     {("reqs", None): {"used": 0.5, "queue": 0.1, "wait": 0.25, "admissions": 4},
      ("E", None): {"iterations": 2, "tokens": 9.5, "prefill_only": 2}}),
    # reserve held, cap 12. s0: kv (2) reserve (8): u = 6; s1: kv (3): 2 + 6 + 3 = 11 fits. Positions grow
    # one token an iteration. [1,2]: s0 to 3 (5 + 0 + 1), s1 to 4 (6 + s0's u 5 + 1 = 12). [2,3]: s0 to 4;
    # s1 to 5: 8 + 4 + 1 = 13 > 12: lifo takes the last admitted, s1 itself (position 4); s0 alone, no
    # admission. [3,4]: s0 to 5, s1 admitted again (5 + 3 + 3 = 11), prefill 3. [4,5]: s0 to 6, s1 to 4
    # (9 + 2 + 1 = 12). [5,6]: s0 to 7, s1 to 5: 11 + 1 + 1 = 13: s1 preempted again at 4, no further than
    # before: stuck. [6,7]: s0 to 8 (its u 0), s1 admitted (8 + 3 = 11); s0 done at 7. s1 to 4 at 8, 5 at 9.
    # kv used 5, 7, 4, 8, 10, 7, 11, 4, 5: 61/20; reqs 14/20, queue 2/20, wait 2/4. E: 9 iterations,
    # tokens 5, 2, 1, 4, 2, 1, 4, 1, 1 = 21; jobs 2, 2, 1, 2, 2, 1, 2, 1, 1 = 14; [0,1] prefill only, [3,4]
    # and [6,7] mixed; 6 completions (s0's two runs, s1's prefill three times and its decode once), their
    # service 1 + 6 + 1 + 1 + 1 + 2 = 12.
    ("reserve_held_on_an_engines_memory_and_a_victim_stuck_by_it", """
pool reqs { admit via E; }
pool kv { cap 12; reserve held; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (2) reserve (8) { prefill (2) growing kv; decode (6) growing kv; }
  } else {
    hold reqs (1), kv (3) { observe a = now; prefill (3) growing kv; decode (2) growing kv; }
  }
  observe f = now;
}
run { horizon 20; }
""", {"a": [(1, 0.0, 0.0), (1, 3.0, 3.0), (1, 6.0, 6.0)], "f": [(0, 7.0, 7.0), (1, 9.0, 9.0)]},
     {("kv", None): {"used": 3.05, "preemptions": 2, "stuck": 1, "admissions": 4, "rejections": 0},
      ("reqs", None): {"used": 0.7, "queue": 0.1, "wait": 0.5},
      ("E", None): {"iterations": 9, "tokens": 21 / 9, "batch": 14 / 9, "prefill_only": 1, "mixed": 2,
                    "decode_only": 6, "completions": 6, "service": 2.0, "utilisation": 0.45}}),
    # cap 10, preempt by (position). [0,1]: prompts 4, 2, 3 admitted (9). [1,2]: s0 grows to 5 (10); s1's
    # growth to 3 does not fit: positions s0 4, s1 2, s2 3: s1 (itself) goes; s2 grows to 4 (9); no
    # admission. [2,3]: s0 to 6; s2's growth to 5: 11: s0 at 5, s2 at 4: s2 goes, re-queued at the head,
    # ahead of s1. [3,4]: s0 to 7, s2 admitted (10), s1 not (12). [4,5]: s0 to 8: 11: s0 at 7, s2 at 3: s2
    # goes again, no further than its 4: stuck. s0 done at 5. [5,6]: s2 and s1 admitted (5). s2's decodes
    # at [6,7], [7,8]: done 8; s1's four: done 10. kv used 9, 9, 6, 10, 8, 5, 7, 9, 5, 6: 74/30; E: 10
    # iterations, tokens 9, 2, 1, 4, 1, 5, 2, 2, 1, 1 = 28, jobs 3, 2, 1, 2, 1, 2, 2, 2, 1, 1 = 17.
    ("preempt_by_position_on_an_engines_memory", """
pool reqs { admit via E; }
pool kv { cap 10; preempt by (position) requeue head; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  set p = serial == 0 ? 4 : serial == 1 ? 2 : 3;
  set o = serial == 2 ? 2 : 4;
  hold reqs (1), kv (p) { observe a = now; prefill (p) growing kv; decode (o) growing kv; }
  observe f = now;
}
run { horizon 30; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0), (2, 3.0, 3.0), (1, 5.0, 5.0), (2, 5.0, 5.0)],
      "f": [(0, 5.0, 5.0), (2, 8.0, 8.0), (1, 10.0, 10.0)]},
     {("kv", None): {"used": 74 / 30, "preemptions": 3, "stuck": 1, "admissions": 6},
      ("E", None): {"iterations": 10, "tokens": 2.8, "batch": 1.7, "prefill_only": 2, "mixed": 1,
                    "decode_only": 7}}),
    # cap 8, one session: reserve (computed < prompt ? prompt : computed + 1) is 4 at first. Prefill 4 at
    # [0,1], the decode grows one a step to 8 at [4,5]; at 5 its growth to 9 preempts itself (the step that
    # only preempted, [5,6]): 8 cached (cache (10) of position 8), computed 8, and the hold joins again with
    # reserve 9 > 8: rejected, the session ends; nothing after the hold is observed. kv used 4+5+6+7+8 =
    # 30/20, cached 8 on [5,20] = 6. E: 6 iterations, 4 + 4 tokens, [0,1] prefill only, 4 decode only.
    ("a_victims_reservation_above_the_cap_is_rejected_when_it_joins_again", """
pool reqs { admit via E; }
pool kv { cap 8; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  set prompt = 4;
  hold reqs (1), kv (prompt) reserve (computed < prompt ? prompt : computed + 1) {
    observe a = now;
    observe k = computed;
    prefill (prompt) growing kv;
    decode (6) growing kv;
  } cache (10);
  observe done = now;
}
run { horizon 20; }
""", {"a": [(0, 0.0, 0.0)], "k": [(0, 0.0, 0.0)], "done": []},
     {("kv", None): {"used": 1.5, "cached": 6.0, "preemptions": 1, "rejections": 1, "admissions": 1,
                     "stuck": 0},
      ("reqs", None): {"used": 0.25},
      ("E", None): {"iterations": 6, "tokens": 8 / 6, "prefill_only": 1, "decode_only": 4, "utilisation": 0.3}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in STEPS], ids=[c[0] for c in STEPS])
def test_step_engines_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)
