"""A waiting hold's floor (docs/language.md, "What a waiting hold needs at least"): the room a pool's
reserve asks for, when the reserve reads only attributes and numbers, is known at the join, and the hold
is not admitted while it does not fit; its other amounts (units that read the deployment's state) are
evaluated only at an attempt whose floor fits. Hand-computed, on both tiers (the per-job planning and the
one that skips attempts whose floor does not fit agree)."""

from __future__ import annotations

import array

import pytest
import serq_frontend
from tiers import run_on_tier

TIERS = ["general", ""]

# session 0 holds all of m from t=0 to t=5; session 1 asks at t=1 for units that read free(m) beside a
# reserve of 10 that reads nothing but numbers
SETTLED = """
pool m {{ cap 10; }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  run d (serial);
  set t1 = now;
  hold m (serial == 0 ? 10 : {units}) reserve (10) {{
    observe wait = now - t1;
    observe got = used(m);
    run d (5);
  }}
}}
run {{ horizon 100; }}
"""


def _run(src: str, tier: str):
    prog = serq_frontend.compile(source=src, sets={}, defs={})  # (the run's clock: t1 set at the join)
    return run_on_tier(prog, tier)


@pytest.mark.parametrize("tier", TIERS)
def test_units_are_not_evaluated_while_the_reserve_does_not_fit(tier):
    # at t=1 free(m) is 0, so the units would be -1 (an error if evaluated); the reserve of 10 does not fit
    # beside session 0's 10 until t=5, when free(m) is 10: units 9, room max(9, 10) = 10, admitted. Waits:
    # 0 and 4 (mean 2); used(m) at each admission: 10 and 9 (units, not the reserve, are allocated)
    _sim, outcome, samples = _run(SETTLED.format(units="free(m) - 1"), tier)
    assert outcome[0] == "report", outcome
    waits = array.array("d", samples["wait"][0]).tolist()
    got = array.array("d", samples["got"][0]).tolist()
    assert waits == [0.0, 4.0]
    assert got == [10.0, 9.0]


@pytest.mark.parametrize("tier", TIERS)
def test_units_that_are_negative_once_the_floor_fits_are_the_error_then(tier):
    # the floor fits at t=5 (free(m) = 10): the units free(m) - 20 = -10 are evaluated then, and refused
    _sim, outcome, _ = _run(SETTLED.format(units="free(m) - 20"), tier)
    assert outcome[0] == "error", outcome
    assert "at t=5, session 1: the units of m are negative (-10)" in outcome[2]


# the same through a step stage's admission (admit via: the prepared admission, and the engine's test of
# whether an attempt can succeed, which skips one whose floor does not fit)
STEPPED = """
pool reqs { cap 4; admit via e; }
pool kv { cap 12; block 1; }
stage e : step { budget 16; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  set t1 = now;
  hold reqs (1), kv (serial == 0 ? 8 : used(kv) == 0 ? 8 : -1) reserve (12) {
    observe wait = now - t1;
    run e prefill (8) growing kv;
    run e decode (3) growing kv;
  }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_a_step_stage_admits_the_head_once_its_reserve_fits(tier):
    # both join at t=0. Session 0 is admitted (8 allocated, room 12 tested), prefills its 8 tokens in the
    # iteration [0, 1) and decodes one token in each of [1, 2), [2, 3), [3, 4), growing to 11; it ends at
    # t=4. Session 1's reserve (12) does not fit beside 8 used until then, so its units (-1 while kv is
    # used: an error if they were evaluated) are read at the planning at t=4 only: 8. Waits 0 and 4
    _sim, outcome, samples = _run(STEPPED, tier)
    assert outcome[0] == "report", outcome
    assert array.array("d", samples["wait"][0]).tolist() == [0.0, 4.0]
