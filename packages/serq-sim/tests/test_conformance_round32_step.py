"""Conformance of language.txt §3's step engine and its queues, and of the Ties at one instant, by hand:

* Configuration: "then it starts an iteration on every idle step stage that has residents or a waiting
  queue it serves, provided no other event is pending at the same instant (a scheduler step sees every
  arrival up to it)";
* "A pool marked admit via S is not admitted at settle time: its queue is served by step stage S, at the
  start of an iteration, after the residents have taken their tokens, while the iteration has budget left
  … A stage that serves several queues tries them in the order their pools are declared, and the first head
  that does not fit stops the iteration's admissions"; "Families are joined member for member: pool q[N] {
  admit via S; } next to stage S[N] serves q[i] by S[i] … next to a family of one, every member gets that
  one"; "serve exclusive prefill selects either one prefill alone or a decode-only batch … a waiting prefill
  that fits can replace them and use the full budget, including in budget_left at admission";
* Waiting selection: "With admit via, budget_left(stage) reads that attempt's remaining token budget; keys
  are reevaluated after each successful admission";
* Ties: "Events at one instant: the order they were scheduled; … jobs of a ps stage with equal finish tags
  finish in the order they started".

Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples); the observes are asserted as (session, time, value). Every number is derived in the case's
comment.
"""

from __future__ import annotations

import pytest
from conform import report_json, run

CASES = [
    # The iteration at 1 waits for every event of the instant. Budget 4: s0's prefill of 6 takes 4 over [0,
    # 1]. s1 reaches the engine at 1 through two delays of 0.5, the second's end scheduled at 0.5, after
    # the iteration's end (scheduled at 0): when that end fires at 1, s1's arrival is still pending at 1, so
    # the next iteration is planned after it and serves s0's last 2 and s1's 2 together: both end at 2.
    ("an_iteration_sees_the_instants_arrivals", """
stage E : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run E prefill (6); } else { run d (0.5); run d (0.5); run E prefill (2); }
  observe t = now;
}
run { horizon 10; }
""", {"t": [(0, 2.0, 2.0), (1, 2.0, 2.0)]}, {"E": {"iterations": 2, "tokens": 4.0, "prefill_only": 2}}),
    # Two queues served by E, tried in the order their pools are declared: s2's prefill (no hold) takes the
    # whole budget over [0, 1], so nobody is admitted at 0. s0 waits in qb from 0, s1 in qa from 0.5; at 1
    # qa, declared first, is tried first: s1 admitted, its prefill of 4 takes the budget ([1, 2]); s0 at 2.
    ("queues_tried_in_declaration_order", """
pool qa { cap 10; admit via E; }
pool qb { cap 10; admit via E; }
stage E : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold qb (1) { observe t = now; run E prefill (4); } }
  branch (serial == 1) { run d (0.5); hold qa (1) { observe t = now; run E prefill (4); } }
  branch (serial == 2) { run E prefill (4); }
}
run { horizon 10; }
""", {"t": [(1, 1.0, 1.0), (0, 2.0, 2.0)]}, {"qa": {"admissions": 1, "wait": 0.5}, "qb": {"wait": 2.0}}),
    # The first head that does not fit stops the iteration's admissions. s3 holds 3 of kv (cap 8) over [0,
    # 4]. s1 heads qa from 0 asking kv 8: no room; s0 joins qb at 0.5 asking kv 2, which has room, but qa's
    # head stops every attempt before qb is tried. At 4 s1 is admitted ([4, 5]), its 8 of kv leaving s0 no
    # room until 5: s0 admitted at 5.
    ("the_first_head_that_does_not_fit_stops_admission", """
pool qa { cap 10; admit via E; }
pool qb { cap 10; admit via E; }
pool kv { cap 8; }
stage E : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { run d (0.5); hold qb (1), kv (2) { observe t = now; run E prefill (4); } }
  branch (serial == 1) { hold qa (1), kv (8) { observe t = now; run E prefill (4); } }
  branch (serial == 3) { hold kv (3) { run d (4); } }
}
run { horizon 10; }
""", {"t": [(1, 4.0, 4.0), (0, 5.0, 5.0)]}, {"qb": {"wait": 4.5}, "kv": {"admissions": 3}}),
    # A family served member for member: q[j] by S[j]. s0, s2 join q[0], s1, s3 q[1] (one slot each):
    # s0 and s1 at 0 ([0, 1] on S[0] and S[1]), s2 and s3 at 1.
    ("families_member_for_member", """
pool q[2] { cap 1; admit via S; }
stage S[2] : step { budget 4; cost 1; }
workload { arrive batch(4); }
session { set j = serial % 2; hold q[j] (1) { observe t = now; run S[j] prefill (4); } }
run { horizon 10; }
""", {"t": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0), (3, 1.0, 1.0)]}, {}),
    # Next to a family of one, every member gets that one: S[1] serves q[0] and q[1], q[0] first. Budget 4,
    # one slot a member: s0 (q[0]) [0, 1]; at 1 q[0]'s head s2 before q[1]'s s1: [1, 2]; s1 [2, 3]; s3 [3, 4].
    ("a_family_of_one_serves_every_member", """
pool q[2] { cap 1; admit via S; }
stage S[1] : step { budget 4; cost 1; }
workload { arrive batch(4); }
session { set j = serial % 2; hold q[j] (1) { observe t = now; run S[0] prefill (4); } }
run { horizon 10; }
""", {"t": [(0, 0.0, 0.0), (2, 1.0, 1.0), (1, 2.0, 2.0), (3, 3.0, 3.0)]}, {}),
    # A family's members are served at the family's place in the declaration, in index order, and a member's
    # head that does not fit stops the admissions as a pool's does. s0 holds 3 of kv (cap 8) over [0, 4];
    # s1 heads q[1] from 0 asking kv 8: no room. s3 joins q[0] at 0.25: tried first, it fits (kv 1) and is
    # admitted at once ([0.25, 1.25]); s2 joins a (declared after q) at 0.5 asking kv 2, which has room, but
    # q[1]'s head stops every attempt before a is tried: at 4 s1 is admitted ([4, 5]), and s2 at 5.
    ("a_familys_members_in_index_order_at_its_place", """
pool q[2] { cap 10; admit via S; }
pool a { cap 10; admit via S; }
pool kv { cap 8; }
stage S : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (3) { run d (4); } }
  branch (serial == 1) { hold q[1] (1), kv (8) { observe t = now; run S prefill (4); } }
  branch (serial == 2) { run d (0.5); hold a (1), kv (2) { observe t = now; run S prefill (4); } }
  branch (serial == 3) { run d (0.25); hold q[0] (1), kv (1) { observe t = now; run S prefill (1); } }
}
run { horizon 10; }
""", {"t": [(3, 0.25, 0.25), (1, 4.0, 4.0), (2, 5.0, 5.0)]}, {"a": {"wait": 4.5}}),
    # Waiting selection under admit via: "budget_left(stage) reads that attempt's remaining token budget;
    # keys are reevaluated after each successful admission". Budget 8, prompts 6, 5, 2 waiting at 0 under
    # queue by (prompt > budget_left(E) ? 1 : 0): at the first attempt all keys are 0 (join order): s0,
    # leaving 2; then s1's key is 1 and s2's 0: s2 (2 tokens), leaving none. [0, 1] serves s0 and s2; s1 is
    # admitted at 1, [1, 2].
    ("queue_keys_read_the_attempts_budget", """
pool q { cap 10; queue by (prompt > budget_left(E) ? 1 : 0); admit via E; }
stage E : step { budget 8; cost 1; }
workload { arrive batch(3); }
session {
  set prompt = serial == 0 ? 6 : serial == 1 ? 5 : 2;
  hold q (1) { observe a = now; run E prefill (prompt); }
  observe t = now;
}
run { horizon 10; }
""",
     {"a": [(0, 0.0, 0.0), (2, 0.0, 0.0), (1, 1.0, 1.0)], "t": [(0, 1.0, 1.0), (2, 1.0, 1.0), (1, 2.0, 2.0)]},
     {"E": {"iterations": 2, "tokens": 6.5}}),
    # FIFO instead: s0, then s1 with the 2 left (its prefill cut to 2 by the budget), and s2 at 1 beside s1's
    # other 3: both end at 2.
    ("fifo_admits_with_what_is_left", """
pool q { cap 10; admit via E; }
stage E : step { budget 8; cost 1; }
workload { arrive batch(3); }
session {
  set prompt = serial == 0 ? 6 : serial == 1 ? 5 : 2;
  hold q (1) { observe a = now; run E prefill (prompt); }
  observe t = now;
}
run { horizon 10; }
""",
     {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0)], "t": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]},
     {"E": {"iterations": 2, "tokens": 6.5}}),
    # "with preempt lifo the holder that is a resident of the step stage the pool is the memory of and was
    # admitted last … (a holder away from the engine … is in no running list)". Block 4, cap 8. s0 holds 4
    # reserving 8 at 0 and prefills 4 on E ([0, 1]); s1 holds 4 at 0.5 and runs 10 on a delay, the last
    # admitted, away from E. At 1 s0's decode wants a second block: the only resident, s0, is its own victim
    # (s1 untouched), caching its 4; the step [1, 2] only preempted. s0's reserve of 8 waits for s1 (10.5);
    # admitted again it consumes its 4 (k = 4), prefills 4 - 4 = 0 at once and decodes 4 over [10.5, 14.5].
    # kv used 4 + 40 + 8 · 4 = 76, cached 4 · 9.5 + 8 · 5.5 = 82, queued 9.5, waits 0, 0, 9.5.
    ("the_victim_is_a_resident_not_a_holder_away", """
pool kv { cap 8; block 4; preempt lifo; }
stage E : step { budget 16; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) reserve (8) {
      observe k = cached;
      run E prefill (4 - cached) growing kv;
      run E decode (4) growing kv;
    } cache (8);
  } else { run d (0.5); hold kv (4) { run d (10); } }
  observe t = now;
}
run { horizon 20; }
""", {"k": [(0, 0.0, 0.0), (0, 10.5, 4.0)], "t": [(1, 10.5, 10.5), (0, 14.5, 14.5)]},
     {"E": {"iterations": 6, "prefill_only": 1, "decode_only": 4},
      "kv": {"used": 3.8, "cached": 4.1, "queue": 0.475, "wait": 9.5 / 3, "holders": 0.75, "preemptions": 1}}),
    # serve exclusive prefill: "a waiting prefill that fits can replace [the resident decodes] and use the
    # full budget, including in budget_left at admission … Displaced decodes … neither execute nor advance".
    # s0 decodes 5 from 0 ([0, 1] its first token); s1 joins at 0.5 and is admitted at 1 with budget_left
    # 8 (the units of b it takes), its prefill of 6 alone in [1, 2]; s0's other 4 over [2, 6]. Six
    # iterations, one prefill only: tokens 1, 6, 1, 1, 1, 1: 11/6; E present 6 + 1 over 20.
    ("exclusive_prefill_displaces_the_decodes", """
pool q { cap 10; admit via E; }
pool b { cap 100; }
stage E : step { budget 8; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold q (1) { run E decode (5); } }
  else { run d (0.5); hold q (1), b (x) at admission (x = budget_left(E)) { observe u = used(b); run E prefill (6); } }
  observe t = now;
}
run { horizon 20; }
""", {"u": [(1, 1.0, 8.0)], "t": [(1, 2.0, 2.0), (0, 6.0, 6.0)]},
     {"E": {"iterations": 6, "prefill_only": 1, "decode_only": 5, "tokens": 11 / 6, "present": 0.35}}),
    # "Displaced decodes keep any newly acquired allocation but neither execute nor advance computed KV".
    # Block 4. s0 prefills 4 over [0, 1]; at 1 its decode to position 5 first grows its hold to a second
    # block, then s1's waiting prefill (joined at 0.5) displaces it: s1 is admitted reading used(kv) = 8 (the
    # block kept), its 6 alone over [1, 2]; s0 decodes positions 5, 6, 7 over [2, 5] in the block it kept.
    # kv used 4 + 8 · 4 = 36; s0 caches min(10, 7) to blocks, 4 from 5: 60. Tokens 4, 6, 1, 1, 1: 13/5.
    ("a_displaced_decode_keeps_its_new_block", """
pool q { cap 10; admit via E; }
pool kv { cap 100; block 4; }
pool b { cap 100; }
stage E : step { budget 8; cost 1; serve exclusive prefill; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold q (1), kv (4) { run E prefill (4) growing kv; run E decode (3) growing kv; } cache (10); }
  else { run d (0.5); hold q (1), b (x) at admission (x = used(kv)) { observe u = used(b); run E prefill (6); } }
  observe t = now;
}
run { horizon 20; }
""", {"u": [(1, 1.0, 8.0)], "t": [(1, 2.0, 2.0), (0, 5.0, 5.0)]},
     {"E": {"iterations": 5, "prefill_only": 2, "decode_only": 3, "tokens": 2.6},
      "kv": {"used": 1.8, "cached": 3.0}, "q": {"queue": 0.025, "wait": 0.25}}),
    # The same under the default order: at 1 s0's decode takes its token first, s1 sees budget_left 7 and
    # its 6 fit beside it: a mixed iteration [1, 2]; s0's last 3 over [2, 5]. Tokens 1, 7, 1, 1, 1: 11/5.
    ("without_it_the_prefill_takes_what_the_decodes_leave", """
pool q { cap 10; admit via E; }
pool b { cap 100; }
stage E : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold q (1) { run E decode (5); } }
  else { run d (0.5); hold q (1), b (x) at admission (x = budget_left(E)) { observe u = used(b); run E prefill (6); } }
  observe t = now;
}
run { horizon 20; }
""", {"u": [(1, 1.0, 7.0)], "t": [(1, 2.0, 2.0), (0, 5.0, 5.0)]},
     {"E": {"iterations": 5, "mixed": 1, "decode_only": 4, "tokens": 11 / 5}}),
    # Equal finish tags on a ps stage finish in the order they started: on ps(1) s1's job (1.5) starts at 0,
    # s0's (0.5) at 1 (after a delay): each has 0.5 left at 1, served at 0.5 each, both end at 2, s1's
    # first (their times at p 2 and 1: service 1.5). The first to finish takes the one slot of m: s1 at 2,
    # s0 at 3.
    ("ps_ties_finish_in_start_order", """
pool m { cap 1; }
stage p : ps(1);
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); run p (0.5); } else { run p (1.5); }
  hold m (1) { observe t = now; run d (1); }
}
run { horizon 10; }
""", {"t": [(1, 2.0, 2.0), (0, 3.0, 3.0)]}, {"p": {"completions": 2, "service": 1.5}}),
    # Events at one instant in the order they were scheduled: s0's delay of 2 is scheduled at 0, s1's of
    # 1 at 1 (after one of 1): both end at 2, s0's first, and s0 takes the slot: s0 at 2, s1 at 3. With the
    # delays the other way round (s1 scheduled first) s1 goes first: the second program.
    ("one_instant_in_scheduling_order", """
pool m { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (2); } else { run d (1); run d (1); }
  hold m (1) { observe t = now; run d (1); }
}
run { horizon 10; }
""", {"t": [(0, 2.0, 2.0), (1, 3.0, 3.0)]}, {}),
    ("one_instant_in_scheduling_order_reversed", """
pool m { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (2); } else { run d (1); run d (1); }
  hold m (1) { observe t = now; run d (1); }
}
run { horizon 10; }
""", {"t": [(1, 2.0, 2.0), (0, 3.0, 3.0)]}, {}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_step_or_an_instant_by_hand(monkeypatch, src, obs, figures):
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert got[name] == want, name
    js = report_json(r)
    for name, want in figures.items():
        entry = next(s for s in js["stages"] + js["pools"] if s["name"] == name)
        assert {k: entry[k] for k in want} == pytest.approx(want, rel=1e-12), name


EXCLUSIVE = """
pool q { cap 10; admit via E; }
pool b { cap 100; }
stage E : step { budget BUDGET; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold q (1) { run E decode (3); } }
  else { run d (0.5); hold q (1), b (x) at admission (x = budget_left(E)) { observe a = used(b); run E prefill (4); } }
  observe t = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("budget, admitted, ends", [
    # budget 2: the two decodes (3 tokens each) take the whole budget every iteration, [0, 3]; the prefill
    # waiting from 0.5 is admitted only at 3, when none decodes, with the whole 2 (a = 2), 4 tokens over
    # [3, 5].
    (2, [(2, 3.0, 2.0)], [(0, 3.0, 3.0), (1, 3.0, 3.0), (2, 5.0, 5.0)]),
    # budget 3: the decodes leave 1, so at 1 the waiting prefill displaces them with the whole 3 (a = 3): 3
    # then 1 over [1, 3], alone; the decodes' other 2 over [3, 5].
    (3, [(2, 1.0, 3.0)], [(2, 3.0, 3.0), (0, 5.0, 5.0), (1, 5.0, 5.0)]),
])
def test_exclusive_prefill_displaces_only_what_leaves_budget(monkeypatch, budget, admitted, ends):
    """§3: "resident decodes are tentative: while budget is left, a waiting prefill that fits can replace
    them and use the full budget, including in budget_left at admission", and pool-reference.txt: "The usual
    fit, budget-exhaustion and preemption gates still apply" (docs/language.md: budget is left after the
    tentative decodes' tokens, or no waiting request is tried)."""
    _r, obs = run(EXCLUSIVE.replace("BUDGET", str(budget)), monkeypatch)
    assert obs["a"] == admitted
    assert obs["t"] == ends
