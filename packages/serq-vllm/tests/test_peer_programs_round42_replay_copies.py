"""A trace replay scaled out: peer_programs42/replay_copies.sq replays the ordered trace N times at once on a
fleet of N engines (copy c on engine[c], `arrive batch(N * S)`, session k replaying the trace's k mod S and
waiting its own send time first). The engines share nothing, so each copy must be examples/replay/vllm_replay.sq
replaying the same trace alone (its sessions `spacing` apart, from one gap on: `arrive renewal(spacing)`),
request for request; the fleet's figures are one replay's, its counts N times one's. short30.csv is the first 30
sessions of examples/replay/short_base.csv."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

HERE = Path(__file__).resolve().parent / "peer_programs42"
REPLAY = Path(__file__).resolve().parents[3] / "examples" / "replay" / "vllm_replay.sq"
COLS = ["turn", "sent", "admitted", "first_token", "last_token", "prompt", "output", "cached", "preemptions"]
pytestmark = pytest.mark.timeout(60)


def test_every_copy_is_the_example_replaying_the_trace_alone():
    alone = serq_sim.run(serq_frontend.compile(str(REPLAY)), trace=str(HERE / "short30.csv"), arrivals=30)
    one = alone.records().sort_values(["session", "turn"]).reset_index(drop=True)
    assert len(one) == 299 and one.preemptions.sum() == 0 and one.cached.sum() > 0
    fleet = serq_sim.run(serq_frontend.compile(str(HERE / "replay_copies.sq"), sets={"N": 2}))
    assert [w for w in fleet.warnings] == []
    recs = fleet.records()
    for c in (0, 1):
        copy = recs[recs.session // 30 == c].copy()
        assert (copy.engine == c).all()
        copy["session"] = copy.session % 30
        copy = copy.sort_values(["session", "turn"]).reset_index(drop=True)
        assert copy[["session", *COLS]].equals(one[["session", *COLS]])
    a, f = alone.result, fleet.result
    assert f.requests.completed == 2 * a.requests.completed
    assert f.requests.prefix_cache_hit_rate == a.requests.prefix_cache_hit_rate
    assert f.requests.ttft.mean == a.requests.ttft.mean and f.end == a.end
    engine = next(s for s in a.stages if s.name == "engine")
    for member in (s for s in f.stages if s.name == "engine"):
        assert (member.iterations, member.tokens, member.utilisation) == (engine.iterations, engine.tokens,
                                                                          engine.utilisation)
