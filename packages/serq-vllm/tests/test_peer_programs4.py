"""vLLM programs of a fourth round of users (tests/peer_programs4/): a drained benchmark of agent sessions
on one vLLM v1 engine (lib/vllm.sq) whose KV cache is small enough to preempt, against what any drained
run must give whatever its schedule: one record a request, the report's ITL made of exactly each request's
output - 1 gaps adding up to last_token - first_token, the hit rate of the records, and Little's law as an
identity over a run that starts empty and drains. On the tier serQ picks and the general engine, byte for
byte."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

HERE = Path(__file__).resolve().parent / "peer_programs4"


def both_tiers(path: Path, monkeypatch, sets=None):
    """The program on the tier serQ picks and on the general engine: the same report, bytes for bytes."""
    prog = serq_frontend.compile(path=str(path), sets=sets or {})
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        out.append(serq_sim.run(prog))
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("blocks", [32, 1000])
def test_a_drained_agent_benchmark_accounts_for_every_token(monkeypatch, blocks):
    # agents_drain.sq: 40 sessions of 1 to a few requests each; 32 blocks preempt (the program's setting),
    # 1000 do not.
    r = both_tiers(HERE / "agents_drain.sq", monkeypatch, sets={"blocks": blocks})
    j = json.loads(encode_json(r))
    rec = r.records()
    requests = r.observe("response")
    # every request sent was served and recorded once, every session ended
    assert j["arrivals"] == j["ended"] == 40 and r.observe("lifetime").values.size == 40
    assert len(rec) == len(requests) == j["turns"] == j["requests"]["completed"]
    assert sorted(zip(rec.session, rec.turn)) == sorted(zip(requests.sessions.tolist(), requests.turns.tolist()))
    assert (rec.preemptions.sum() > 0) == (blocks == 32)
    assert j["pools"][1]["preemptions"] == rec.preemptions.sum()
    # ITL: each request's output - 1 gaps, adding up to its last token less its first
    itl = j["requests"]["itl"]
    assert itl["count"] == (rec.output - 1).sum()
    assert math.isclose(itl["mean"] * itl["count"], (rec.last_token - rec.first_token).sum(), rel_tol=1e-9)
    # TTFT and E2E are the records' own; the hit rate is theirs
    assert math.isclose(j["requests"]["ttft"]["mean"], (rec.first_token - rec.sent).mean(), rel_tol=1e-12)
    assert math.isclose(j["requests"]["e2el"]["mean"], (rec.last_token - rec.sent).mean(), rel_tol=1e-12)
    assert math.isclose(j["requests"]["prefix_cache_hit_rate"], rec.cached.sum() / rec.prompt.sum(),
                        rel_tol=1e-12)
    assert (rec.cached <= rec.prompt - 1).all() and (rec.cached % 16 == 0).all()
    # the run ends at the last token; Little over [0, end] exactly
    assert j["end"] == rec.last_token.max()
    assert math.isclose(j["mean_live"] * j["end"], r.observe("lifetime").values.sum(), rel_tol=1e-9)
    assert math.isclose(j["requests"]["duration"], j["end"], rel_tol=1e-12)
