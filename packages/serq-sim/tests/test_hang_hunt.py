"""Nothing hangs: hostile programs a careless user could write stop as docs/simulator.md says, on both tiers.

Each run below is bounded (``max_events``, a small timeout): a regression fails fast instead of hanging."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim import SimError

TIERS = ["", "general"]


def _run(src: str, monkeypatch, tier: str, **kw):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src), max_events=2_000_000, **kw)


# 200 decoders of infinite work at cost 0: every iteration serves all 200 at t=0, for ever. The guard
# counted events (iterations), allowing 1 000 000 + 1 000 a live session = 1 200 000 of them, each
# planning 200 jobs: about a minute before the error (3 million iterations of 2 000 jobs for
# batch(2000): hours). Counted in jobs served, it stops after 6 000 iterations.
MANY_ZERO_COST = """pool reqs { cap 100000; admit via e; }
stage e : step { budget 1e9; cost 0; }
workload { arrive batch(200); }
session { hold reqs (1) { run e prefill (10); run e decode (WORK); } }
run { horizon 10; }
"""


@pytest.mark.timeout(10)
@pytest.mark.parametrize("work", ["inf", "1e15"])  # not lazy; lazy (a whole number of tokens)
@pytest.mark.parametrize("tier", TIERS)
def test_many_decoders_at_cost_zero_meet_the_guard_at_once(monkeypatch, tier, work):
    with pytest.raises(SimError) as e:
        _run(MANY_ZERO_COST.replace("WORK", work), monkeypatch, tier)
    msg = str(e.value)
    # 1 000 000 + 1 000 × 200 sessions live at t=0, in jobs served by iterations of no time
    assert msg.startswith(
        "<source>:4:47: error: at t=0, session 0: no progress: the iterations of stage e take no time (its cost "
        "is 0, or below the clock's precision at this time) and served more than 1200000 jobs at one instant "
        "without simulated time passing: its residents are the run at <source>:4:47 of session 0, the run at "
        "<source>:4:47 of session 1,"), msg
    assert msg.endswith(" and 195 more"), msg


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_iterations_below_the_clocks_precision_meet_the_same_guard(monkeypatch, tier):
    # at t = 1e18 a cost of 1e-3 is below half an ulp (128): now + cost == now, every iteration at that instant
    src = """pool reqs { cap 100; admit via e; }
stage e : step { budget 100; cost 1e-3; }
stage d : delay;
workload { arrive batch(50); }
session { run d (1e18); hold reqs (1) { run e decode (inf); } }
run { horizon 1e19; }
"""
    with pytest.raises(SimError) as e:
        _run(src, monkeypatch, tier)
    # the 50 sessions are live when the instant 1e18 begins: 1 000 000 + 50 000
    assert str(e.value).startswith(
        "<source>:5:41: error: at t=1e+18, session 0: no progress: the iterations of stage e take no time (its "
        "cost is 0, or below the clock's precision at this time) and served more than 1050000 jobs at one "
        "instant"), str(e.value)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_finite_work_at_cost_zero_ends_at_zero(monkeypatch, tier):
    # the guard counts no legitimate work: 200 decoders of 1 000 tokens each at cost 0 are 1 000 iterations of
    # 200 jobs (200 000 served, below 1 200 000), all at t = 0
    src = MANY_ZERO_COST.replace("decode (WORK);", "decode (1000); observe t = now;")
    r = _run(src, monkeypatch, tier)
    assert r.partial is None
    assert r.result.ended == 200
    assert set(r.observe("t").values.tolist()) == {0.0}
