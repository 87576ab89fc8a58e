"""Every example runs to its own end (the full default horizon, or its `arrivals N` drained) with seeds 1, 2
and 3, without hanging, and reports sane figures; and the no-progress guard is nowhere near tripping on
any of them (the most events any instant makes is far below its limit)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_sim import engine

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").rglob("*.sq"))
# a regression that makes an example spin stops here with a partial report (which fails the test) instead
# of running until the suite's timeout
WALL = 600.0


@pytest.fixture
def stall_watch(monkeypatch):
    """The most events the no-progress guard saw at one instant (its ticks: every 20 000 events)."""
    seen = {"max": 0}
    original = engine.Simulation.tick

    def tick(self, events):
        if self.now == self.stall_t:
            seen["max"] = max(seen["max"], events - self.stall_ev)
        return original(self, events)

    monkeypatch.setattr(engine.Simulation, "tick", tick)
    return seen


def test_every_example_is_here():
    assert len(EXAMPLES) >= 14 and "pd-disaggregation/llmd_nixl_pull.sq" in EXAMPLES


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_to_its_end(example, seed, stall_watch):
    program = serq_frontend.compile(ROOT / "examples" / example)
    r = serq_sim.run(program, seed=seed, max_wall=WALL)
    res = r.result
    assert r.partial is None, res.notes
    assert r.warnings == [], res.notes
    assert res.seed == seed
    if program.run.arrivals is None:
        assert res.end == res.horizon < math.inf
    else:  # `arrivals N`: every arrival made and drained before the horizon
        assert res.arrivals == program.run.arrivals and res.end <= res.horizon
    assert res.events > 0 and res.arrivals > 0
    assert 0 <= res.ended <= res.arrivals
    assert res.mean_live >= 0
    for name, o in res.observes.items():
        assert o.count > 0, name
        assert math.isfinite(o.mean), name
    for st in res.stages:
        assert st.completions >= 0 and -1e-9 <= st.utilisation <= 1 + 1e-9, st
    for pl in res.pools:
        assert pl.used >= -1e-9 and pl.admissions >= 0, pl
    # the guard allows 1 000 000 events at one instant (more with many live sessions); no example comes
    # within a hundredth of it
    assert stall_watch["max"] < engine.STALL_EVENTS // 100
