"""Known defects, round 9 (serq-vllm): a request of lib/vllm.sq refused after its first token.

A request preempted after its first token joins the KV pool again reserving every token it has (its prompt
and the outputs it kept); when that is above the pool's capacity the pool rejects it and its session ends.
It has its hit, first_token and ttft observed and no record, so the observe table's ttft counted one
request more than the records, and the report said of the rejection only that "the latency figures cover
only the admitted". The rejections warning now counts such a refusal apart (docs/vllm.md, "A request refused
after its first token"), so that every request with a ttft sample has a record or is counted there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.timeout(60)

REFUSED = re.compile(r"their sessions ended there: (?:(\d+) when it joined the queue, so the latency figures cover "
                     r"only the admitted; )?(\d+) on re-admission after a preemption \(")


def run(name: str, sets: dict, **over):
    return serq_sim.run(serq_frontend.compile(path=str(HERE / name), sets=sets), **over)


def counts(r) -> tuple[int, int]:
    """(rejected when first joining, refused on re-admission) from the kv pool's warning."""
    (w,) = [n for n in r.warnings if n.startswith("warning: pool kv rejected")]
    m = REFUSED.search(w)
    return (0, 0) if m is None else (int(m[1] or 0), int(m[2]))


def test_a_lone_request_whose_outputs_outgrow_the_pool_is_refused_after_its_first_token():
    """victim.sq with one request, prompt 4 and 8 output tokens, on 2 blocks of 4 (cap 8), budget 16, cost 1:
      it [0,1]  admitted with its 4 tokens (1 block, hit 0); prefills 4: first token at 1 (TTFT 1)
      it [1,5]  decodes positions 4..7 (the second block at [1,2]): tokens at 2, 3, 4, 5
      it [5,6]  position 8 needs a third block; none is free and the request is running[-1]: it preempts
                itself (the step that only preempted lasts cost 1), computed 8
    Joining again it reserves known = max(4, 8 + 1) = 9 tokens, 3 blocks > 2: rejected, the session ends.
    vLLM would not start this engine (a KV cache of 2 blocks below max_model_len 12)."""
    r = run("peer_programs15/victim.sq", {"N": 1, "PA": 4, "OA": 8, "blocks": 2})
    assert (list(r.observe("ttft").values), list(r.observe("first_token").values), list(r.observe("hit").values)) \
        == ([1.0], [1.0], [0.0])
    assert [len(r.observe(k)) for k in ("done", "response", "preempted")] == [0, 0, 0]
    assert len(r.records("request", kind="numpy")["sent"]) == 0 and r.result.requests.completed == 0
    kv = r.pool("kv")
    assert (kv.admissions, kv.preemptions, kv.rejections) == (1, 1, 1)
    assert counts(r) == (0, 1)
    # four gaps between its five tokens (at 1 … 5), in the ITL of the requests in flight
    assert (r.result.requests.itl.count, r.result.requests.itl.mean, r.result.end) == (4, 1.0, 6.0)


def test_every_request_with_a_ttft_sample_has_a_record_or_is_counted_refused():
    """load.sq at 200 arrivals on 40 blocks: each (session, turn) with a ttft sample has a record, except the
    ones refused on re-admission, as many as the warning counts; those with a record have their ttft there."""
    r = run("peer_programs15/load.sq", {"blocks": 40}, arrivals=200)
    ttft = r.observe("ttft")
    sampled = dict(zip(zip(ttft.sessions.tolist(), ttft.turns.tolist()), ttft.values.tolist()))
    rec = r.records("request", kind="numpy")
    rows = {(s, t): f - t0 for s, t, f, t0 in zip(rec["session"].tolist(), rec["turn"].tolist(),
                                                 rec["first_token"].tolist(), rec["sent"].tolist())}
    assert set(rows) <= set(sampled)
    assert all(rows[k] == sampled[k] for k in rows)
    without = set(sampled) - set(rows)
    joined, refused = counts(r)
    assert len(without) == refused > 0
    # the requests rejected when they joined have no sample at all: the pool's rejections are the two kinds
    assert joined + refused == r.pool("kv").rejections
    # the observe table, the records and the engine's requests agree once the refused are counted
    assert len(ttft) == len(r.observe("hit")) == len(rows) + refused == r.result.requests.completed + refused
    assert len(r.observe("done")) == len(rows)
    # the engine table counts the sessions it served a request of (the refused one's included)
    assert r.stage("engine").requests == len(ttft)
    # a refused request's session ends with it: no later turn of it has a sample
    for s, t in without:
        assert max(u for (s2, u) in sampled if s2 == s) == t
