"""``choose`` with keys of inf (language.txt §2: NAME := the argmin over 0 … n-1, the keys in order; "Ties":
choose orders by the keys, in order, then the smallest index). An infinite key is a number like any other: inf
ties with inf and -inf with -inf, so candidates whose first keys are all inf are ordered by their later keys,
then by index, and a candidate keyed inf is still a candidate (a router's `j < active() ? load : inf` with no
member up sends the request to one). This is the lexicographic order the spec names, and both tiers follow it;
docs/language.md says so ("A `choose` key of inf"). By hand, per statement."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim import fast

SRC = """stage s[3] : delay;

workload {
  arrive batch(1);
}

session {
  set z = serial;
  choose a in 3 by (inf, a == 0 ? 5 : 2 + a);
  observe later = a;
  choose b in 3 by (z < 0 ? 1 : inf);
  observe index = b;
  choose c in 3 by (-inf, 4 - c);
  observe minus = c;
  choose d in 3 by (d == 2 ? 1 : inf, d);
  observe finite = d;
  choose e in 3 by (e == 1 ? -inf : inf);
  observe least = e;
  choose f in 3 by (inf, f == 2 ? inf : 7, -f);
  observe third = f;
  run s[a] (1);
}

run { horizon 10; seed 1; }
"""

# a: keys (inf, 5), (inf, 3), (inf, 4): the first ties, the second is least at 1
# b: inf, inf, inf: every key ties, the smallest index, 0
# c: (-inf, 4), (-inf, 3), (-inf, 2): 2
# d: (inf, 0), (inf, 1), (1, 2): a finite first key is below inf, 2
# e: inf, -inf, inf: 1
# f: (inf, 7, 0), (inf, 7, -1), (inf, inf, -2): the second ties at 7 for 0 and 1, the third is least at 1
EXPECTED = {"later": 1.0, "index": 0.0, "minus": 2.0, "finite": 2.0, "least": 1.0, "third": 1.0}


@pytest.mark.parametrize("tier", ["", "general"])
def test_infinite_keys_tie_and_the_later_keys_decide(tier, monkeypatch):
    prog = serq_frontend.compile(source=SRC, sets={}, defs={})
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        assert fast.tier(prog) == "fast"
    r = serq_sim.run(prog)
    assert {k: r.observe(k).values.tolist() for k in EXPECTED} == {k: [v] for k, v in EXPECTED.items()}
    # the run went to the member a chose
    assert [r.stage("s", i).completions for i in range(3)] == [0, 1, 0]
