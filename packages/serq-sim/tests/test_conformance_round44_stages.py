"""Conformance of language.txt §3 (Stages; Pools, admit via) by hand, round 44: flows over several ps stages
whose rates change as flows finish, under both `share` policies, and a step engine that admits from two
queues.

* §3, Stages: "run a, b (w) is one job that holds a and b from its start to its end: a flow, whose work goes
  down at one rate at all its stages … share maxmin is max-min fair: every flow's rate rises together until a
  stage fills, the flows through it stop there, and the others go on. share bottleneck gives each flow its
  equal share at the tightest of its stages, min over s of φ_s / n_s, and leaves what that does not use at the
  other stages unused … A stage array held by some run with another is shared for the whole run: every job
  on it, a single-stage run included, is a flow of the policy, and its utilisation is the capacity its flows
  carry, Σ rate / φ."
* §3, Pools: "A stage that serves several queues tries them in the order their pools are declared, and the
  first head that does not fit stops the iteration's admissions".

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value) and
the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand

FLOWS = """
stage a : ps(2);
stage b : ps(3);
stage c : ps(0.5);
share SHARE;
workload { arrive batch(4); }
session {
  branch (serial == 0) { run a, b (4); }
  else { branch (serial == 1) { run b, c (2); }
  else { branch (serial == 2) { run a (3); }
  else { run b (6); } } }
  observe t = now;
}
run { horizon 5; }
"""

STAGES = [
    # F0 on a, b (4); F1 on b, c (2); F2 on a (3); F3 on b (6). maxmin at 0: all rise together; c fills at
    # 0.5 (F1 stops), a at 1 (F0, F2 stop: 1 + 1 = 2), F3 goes on to 3 - 1 - 0.5 = 1.5. F2 ends at 3. Then a
    # holds F0 alone and b fills with F0 = F3 = (3 - 0.5)/2 = 1.25: F0's 1 left ends at 3.8; F3 has 6 - 4.5 -
    # 1 = 0.5 left at 3.8, now at 2.5: ends at 4; F1's 2 at 0.5 ends at 4. Utilisation a: 1 on [0,3], 1.25/2
    # on [3,3.8]: 3.5/5; b full on [0,4]: 4/5; c 4/5. a present: F0 3.8 + F2 3 = 6.8/5.
    ("maxmin_rates_rise_together_and_are_shared_again_as_flows_end", FLOWS.replace("SHARE", "maxmin"),
     {"t": [(2, 3.0, 3.0), (0, 3.8, 3.8), (1, 4.0, 4.0), (3, 4.0, 4.0)]},
     {("a", None): {"utilisation": 0.7, "present": 1.36, "completions": 2},
      ("b", None): {"utilisation": 0.8, "completions": 3}, ("c", None): {"utilisation": 0.8}}),
    # bottleneck at 0: n_a 2, n_b 3, n_c 1: F0 min(2/2, 3/3) = 1, F1 min(3/3, 0.5/1) = 0.5, F2 1, F3 1. F2
    # ends at 3; then F0 min(2/1, 3/3) = 1 still: ends at 4, as F1 does (2 at 0.5); F3 has 2 left at 4, alone
    # at 3: ends at 4 + 2/3. b carries 2.5 of 3 on [0,4] (the 0.5 F1 leaves there unused) and 3 on the rest:
    # (4 · 2.5/3 + 2/3)/5 = 0.8; a 1 on [0,3], 1/2 on [3,4]: 0.7.
    ("bottleneck_leaves_what_the_tightest_stage_does_not_use", FLOWS.replace("SHARE", "bottleneck"),
     {"t": [(2, 3.0, 3.0), (0, 4.0, 4.0), (1, 4.0, 4.0), (3, 14 / 3, 14 / 3)]},
     {("a", None): {"utilisation": 0.7, "present": 1.4}, ("b", None): {"utilisation": 0.8},
      ("c", None): {"utilisation": 0.8}}),
    # E admits from a, then b (declared in that order). [0,1]: s0 (a, kv 6) admitted, prefill 2. s1 (a, kv
    # 6) and s2 (b, kv 2) join at 0.5. At 1, 2, 3 a's head s1 does not fit (12 > 10) and stops the
    # admissions: s2, which would fit (8), waits behind it in another queue. s0's decodes end at 4, where
    # both are admitted. a: s1 waits 3.5: queue 3.5/20, wait 3.5/2; b: s2 waits 3.5.
    ("the_first_queue_whose_head_does_not_fit_stops_the_engines_admissions", """
pool a { admit via E; }
pool b { admit via E; }
pool kv { cap 10; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold a (1), kv (6) { observe x0 = now; prefill (2) growing kv; decode (3) growing kv; }
  } else { branch (serial == 1) {
    run d (0.5);
    hold a (1), kv (6) { observe x1 = now; prefill (2) growing kv; }
  } else {
    run d (0.5);
    hold b (1), kv (2) { observe x2 = now; prefill (2) growing kv; }
  } }
}
run { horizon 20; }
""", {"x0": [(0, 0.0, 0.0)], "x1": [(1, 4.0, 4.0)], "x2": [(2, 4.0, 4.0)]},
     {("a", None): {"queue": 3.5 / 20, "wait": 1.75, "admissions": 2},
      ("b", None): {"queue": 3.5 / 20, "wait": 3.5, "admissions": 1}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in STAGES], ids=[c[0] for c in STAGES])
def test_stages_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)
