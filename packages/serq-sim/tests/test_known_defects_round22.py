"""Known defects of the simulator, round 22.

6. A run-time error of a ``preempt by`` key (a family's index out of range) named the key's place, the time and
   the candidate the key was evaluated for, not the session whose growth asked for a victim: a note names it,
   with the pool and the time, on both tiers, for a pool of sessions and a step stage's memory pool
   (serq_sim.policies.preemption.chosen_for)."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error

pytestmark = pytest.mark.timeout(60)

# two sessions of prio 0 and 5 hold 4 each of 10; at t=1 session 0 grows by 4 (12 > 10): the candidates'
# keys are evaluated, and session 1's, q[5] of a family of 2, fails
POOL = """pool kv { cap 10; preempt by (used(q[prio])); }
pool q[2] { cap 5; }
stage d : delay;
workload {
  arrive batch(2);
  init {
    set prio = serial * 5;
  }
}
session {
  hold kv (4) {
    run d (1 + serial);
    grow kv (4);
    run d (1);
  }
}
run { horizon 100; }
"""

# a step stage's memory pool, keys that read an attribute only (kept in order by the engine): the residents'
# decodes grow the pool past its cap at t=6, session 0 first in the serving order
STEP = """pool q[2] { cap 5; }
pool kv { cap 10; preempt by (member(q[prio])); }
stage e : step { budget 100; cost 1; memory kv; }
workload {
  arrive batch(2);
  init {
    set prio = serial * 5;
  }
}
session {
  hold kv (4) {
    run e prefill (4);
    run e decode (20) growing kv;
  }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("src, line, col, t, caret", [(POOL, 1, 36, "1", "q[prio]"), (STEP, 2, 38, "6", "q[prio]")])
def test_a_keys_error_names_the_grower(src, line, col, t, caret, monkeypatch, tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(src)
    text = same_error(serq_frontend.compile(p), monkeypatch)
    shown = src.splitlines()[line - 1]
    assert text.splitlines() == [
        f"{p}:{line}:{col}: error: at t={t}, session 1: pool index 5 out of range (the family has 2)",
        f"  {shown}", " " * (2 + shown.index(caret)) + "^",
        f"note: while choosing whom pool kv preempts for the growth of session 0 at t={t} (its keys are evaluated "
        "for each candidate)"]
