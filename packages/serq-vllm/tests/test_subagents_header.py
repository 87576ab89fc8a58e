"""examples/multi-turn/vllm_subagents.sq's header on its default rate, 0.1 sessions/s, checked: it said the
engine keeps up there with a TTFT of about 0.13 s, while seed 1, the program's own, gives a mean of 0.29 s,
and seed 6 congests (0.93 s over the default 1 800 s, 5.6 s and a not-steady warning over 3 600 s): the
rate is near the edge, as the header now says."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

SUBAGENTS = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_subagents.sq"


@pytest.mark.timeout(180)
def test_the_default_rate_keeps_up_on_most_seeds_and_is_near_the_edge():
    prog = serq_frontend.compile(path=str(SUBAGENTS))
    for seed in (1, 2, 3):
        r = serq_sim.run(prog, seed=seed)
        m = r.result.requests.ttft
        assert m.median < 0.08 and 0.12 <= m.mean <= 0.3, (seed, m.median, m.mean)
        assert r.pool("reqs").queue < 0.1 and not r.warnings
    six = serq_sim.run(prog, seed=6)
    assert 0.9 < six.result.requests.ttft.mean < 1.0
    long = serq_sim.run(prog, seed=6, horizon=3600)
    assert 5 < long.result.requests.ttft.mean < 6
    assert any("not steady" in w for w in long.warnings)
