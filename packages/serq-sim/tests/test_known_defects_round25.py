"""Known defects of the simulator, round 25.

6. The note of a ``preempt by`` key's run-time error named the pool, the grower's session and the time, but not
   the grower's own statement (the ``grow`` or the growing run that asked for a victim), which every run-time
   error names: it names it now (serq_sim.pools.growth.grow_slot passes it to
   serq_sim.policies.preemption.chosen_for), on both tiers.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error

pytestmark = pytest.mark.timeout(60)

# two sessions of prio 0 and 5 hold 4 each of 10; session 0 grows by 4 at t=1 at line 14 (12 > 10): the
# candidates' keys are evaluated, and session 1's, q[5] of a family of 2, fails
GROW = """pool kv { cap 10; preempt by (used(q[prio])); }
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
    set x = 1;
      grow kv (4);
    run d (1);
  }
}
run { horizon 100; }
"""

# a step stage's memory pool: the residents' decodes (the run at line 12) grow the pool past its cap at t=6
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
  hold kv (4) { run e prefill (4);
      run e decode (20) growing kv; }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("src, t, at", [(GROW, "1", "14:7"), (STEP, "6", "12:7")])
def test_the_keys_error_names_the_growers_statement(src, t, at, monkeypatch, tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(src)
    text = same_error(serq_frontend.compile(p), monkeypatch)
    assert text.splitlines()[-1] == (
        f"note: while choosing whom pool kv preempts for the growth of session 0 at t={t} by the statement at "
        f"{p}:{at} (its keys are evaluated for each candidate)")
