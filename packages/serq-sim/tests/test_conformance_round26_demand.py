"""Conformance of pool-reference.txt's rejection rule beside language.txt §3's (docs/language.md, "A hold
whose demand reads the state is not rejected at its join"):

* pool-reference: "If either units or reserve is independent of deployment state and exceeds capacity after
  block rounding, the hold is rejected and its session ends. State-dependent demand waits for admission and
  is reported as over_cap if it still exceeds capacity at the end of the run."
* language.txt §3: "A request that can never fit — its units, or its reserve when that is larger, above the
  cap, as they evaluate when the session joins the queue — is rejected: the session ends."

The program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte); every figure is computed by hand in the docstring.
"""

from __future__ import annotations

from conform import pool, run

DEMANDS = """
pool kv { cap 10; block 4; }
pool m { cap 10; }
stage d : delay;
workload { arrive batch(5); }
session {
  branch (serial == 0) { hold kv (now + 1) reserve (9) { observe a = now; } }
  branch (serial == 1) { hold kv (1) reserve (now + 11) { observe a = now; } }
  branch (serial == 2) { hold kv (2) { observe a = now; } }
  branch (serial == 3) { hold m (13 - now) { observe a = now; } }
  branch (serial == 4) { run d (3); }
  observe done = now;
}
run { horizon 10; }
"""


def test_a_constant_reserve_over_the_cap_is_rejected_and_a_state_dependent_one_waits(monkeypatch):
    """kv (cap 10, block 4). s0's units read the clock but its reserve, 9, does not: 12 after rounding, above
    the cap, so it is rejected when it joins and its session ends (no `done`). s1's reserve reads the clock
    (11 at 0): it waits at the head, and at the end (21) still exceeds the cap: over_cap 1. s2's 2 units fit
    but wait behind it ("failure to fit blocks the rest"), and are not over the cap. kv's queue holds 2 over
    [0, 10]: 2; no admission.

    m (cap 10): s3's units, 13 - now, are 13 at its join, above the cap, and read the clock: it waits. s4's
    end at 3 is an event, the attempt there reads 10: admitted at 3 (waited 3; queue 3 / 10). Ended: s0, s3
    and s4."""
    r, o = run(DEMANDS, monkeypatch)
    assert o["a"] == [(3, 3.0, 3.0)]
    assert o["done"] == [(3, 3.0, 3.0), (4, 3.0, 3.0)]
    kv, m = pool(r, "kv"), pool(r, "m")
    assert (kv.rejections, kv.over_cap, kv.admissions, kv.queue) == (1, 1, 0, 2.0)
    assert (m.rejections, m.over_cap, m.admissions, m.wait, m.queue) == (0, 0, 1, 3.0, 0.3)
    assert (r.result.arrivals, r.result.ended) == (5, 3)
