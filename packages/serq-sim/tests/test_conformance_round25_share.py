"""Conformance of language.txt §3, Stages, for runs over several stages, on a chain of three stages with five
flows, by hand under both policies:

"run a, b (w) is one job that holds a and b from its start to its end: a flow, whose work goes down at one
rate at all its stages, set by the program's share from their capacities. share maxmin is max-min fair:
every flow's rate rises together until a stage fills, the flows through it stop there, and the others go
on. share bottleneck gives each flow its equal share at the tightest of its stages, min over s of φ_s /
n_s, and leaves what that does not use at the other stages unused. … A stage array held by some run with
another is shared for the whole run: every job on it, a single-stage run included, is a flow of the
policy, and its utilisation is the capacity its flows carry, Σ rate / φ."

a ps(3), b ps(2), c ps(1); all five flows start at 0: f1 = run a, b (1) (s0), f2 = run b, c (1) (s1),
f3 = run a (2) (s2), f4 = run c (1) (s3), f5 = run b (1) (s4). f3, f4 and f5 are single-stage runs on
stages a run with another holds: flows of the policy (under maxmin f5 gets 0.75 at b, not ps's 2/3).
Run on the tier serQ picks and on the general engine (conform.run).
"""

from __future__ import annotations

import pytest
from conform import run, stage

CHAIN = """
stage a : ps(3);
stage b : ps(2);
stage c : ps(1);
workload { arrive batch(5); }
session {
  branch (serial == 0) { run a, b (1); }
  branch (serial == 1) { run b, c (1); }
  branch (serial == 2) { run a (2); }
  branch (serial == 3) { run c (1); }
  branch (serial == 4) { run b (1); }
  observe t = now;
}
share POLICY;
run { horizon 4; }
"""


def check(policy, expected, present, monkeypatch):
    """The run's end times by session, and each stage's time-average present, utilisation and completions
    (horizon 4; utilisation Σ rate / φ is the work each stage carried over its capacity, the same under both
    policies: a (1 + 2) / 3, b (1 + 1 + 1) / 2, c (1 + 1) / 1, over 4)."""
    r, o = run(CHAIN.replace("POLICY", policy), monkeypatch)
    got = {s: v for s, _, v in o["t"]}
    assert got.keys() == expected.keys()
    for s, t in expected.items():
        assert got[s] == pytest.approx(t, rel=1e-12, abs=0), (s, got[s], t)
    for name, util, pres, done in (("a", 0.25, present[0], 2), ("b", 0.375, present[1], 3),
                                   ("c", 0.5, present[2], 2)):
        st = stage(r, name)
        assert st.utilisation == pytest.approx(util, rel=1e-12), name
        assert st.present == pytest.approx(pres, rel=1e-12), name
        assert st.completions == done, name


def test_maxmin_fills_c_first_then_b_and_lets_a_go_on(monkeypatch):
    """The rates rise together: c fills at 0.5 (f2 + f4 = 1), which stops f2 and f4; f1, f3 and f5 go on
    until b fills at 0.75 (f1 + f2 + f5 = 0.75 + 0.5 + 0.75 = 2), which stops f1 and f5; f3 goes on alone
    at a, to 3 - 0.75 = 2.25. f3 ends at 2 / 2.25 = 8/9. The rates stay (a is no constraint on f1 at 0.75):
    f1 and f5, 1/3 left each at 8/9, end at 8/9 + 4/9 = 4/3; f2 and f4, at 0.5 throughout, at 2.
    Present: a 2 jobs on [0, 8/9], 1 on [8/9, 4/3]: 5/9; b 3 on [0, 4/3], 1 on [4/3, 2]: 7/6; c 1."""
    check("maxmin", {2: 8 / 9, 0: 4 / 3, 4: 4 / 3, 1: 2.0, 3: 2.0}, (5 / 9, 7 / 6, 1.0), monkeypatch)


def test_bottleneck_gives_each_flow_its_share_at_its_tightest_stage(monkeypatch):
    """n_a = 2, n_b = 3, n_c = 2: f1 min(3/2, 2/3) = 2/3, f2 min(2/3, 1/2) = 1/2, f3 3/2, f4 1/2, f5 2/3 (b
    carries 11/6 of its 2, and a 13/6 of its 3: the rest unused). f3 ends at 4/3; n_a = 1 then changes
    nothing for f1 (b is its tightest): f1 and f5, 1/9 left each, end at 4/3 + 1/6 = 3/2; then n_b = 1: f2
    gets min(2, 1/2) = 1/2 as before, and f2 and f4 end at 2. Present: a 2 on [0, 4/3], 1 on [4/3, 3/2]:
    17/24; b 3 on [0, 3/2], 1 on [3/2, 2]: 5/4; c 1."""
    check("bottleneck", {2: 4 / 3, 0: 1.5, 4: 1.5, 1: 2.0, 3: 2.0}, (17 / 24, 5 / 4, 1.0), monkeypatch)
