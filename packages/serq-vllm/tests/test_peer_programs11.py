"""vLLM programs of an eleventh round of users (tests/peer_programs11/), each checked against truths of its
own: a replica set behind a router by KV use or queue length, chunked prefill under a long-prefill
threshold traced by hand on the step clock, a prefix-heavy chat with short think times (its hit rate counted
by hand on a conversation of two turns), an engine whose KV cache is too small (preemption storms) and a
max_num_seqs sweep. Every run: requests in = completed + in flight, the report's request metrics recomputed
from the records, Little's law on the engine's residents, hit rates within [0, 1]."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_vllm.target import target

HERE = Path(__file__).resolve().parent / "peer_programs11"
pytestmark = pytest.mark.timeout(60)


def run(name: str, sets: dict | None = None, defs: dict | None = None, **over):
    prog = serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})
    return prog, serq_sim.run(prog, **over)


def drained(name: str, n: int, sets: dict | None = None, defs: dict | None = None):
    """Exactly n sessions, every one drained, measured from time 0."""
    return run(name, sets, defs, arrivals=n, horizon=math.inf, warmup=0.0)


def check_metrics(r) -> dict:
    """The report's request metrics against the records' rows, recomputed: TTFT = first - sent, E2EL =
    last - sent, TPOT = (last - first) / (output - 1) over the requests of more than one token (vLLM's
    benchmark); the totals and the prefix-cache hit rate, cached tokens over prompt tokens."""
    rows = r.records("request", kind="numpy")
    req = r.result.requests
    assert req.completed == len(rows["sent"])
    o = rows["output"]
    many = o > 1
    values = {"ttft": rows["first_token"] - rows["sent"], "e2el": rows["last_token"] - rows["sent"],
              "tpot": (rows["last_token"][many] - rows["first_token"][many]) / (o[many] - 1)}
    for name, v in values.items():
        s = getattr(req, name)
        assert s.count == len(v), name
        assert math.isclose(s.mean, float(v.mean()), rel_tol=1e-12), name
        assert math.isclose(s.std, float(np.std(v)), rel_tol=1e-9, abs_tol=1e-15), name
        assert math.isclose(s.median, float(np.median(v)), rel_tol=1e-12), name
        assert math.isclose(s.p99, float(np.percentile(v, 99)), rel_tol=1e-12), name
    assert req.total_input_tokens == rows["prompt"].sum()
    assert req.total_output_tokens == o.sum()
    rate = req.prefix_cache_hit_rate
    assert 0 <= rate <= 1
    assert math.isclose(rate, rows["cached"].sum() / rows["prompt"].sum(), rel_tol=1e-12, abs_tol=1e-15)
    assert (rows["cached"] >= 0).all() and (rows["cached"] <= rows["prompt"] - 1).all()
    return rows


def check_itl(r, rows) -> None:
    """A drained run measured from 0: the ITL samples are every request's gaps between its tokens, output - 1
    of them, which add up to its last token less its first (a preempted request's kept token included)."""
    itl = r.result.requests.itl
    gaps = rows["output"] - 1
    assert itl.count == gaps.sum()
    assert math.isclose(itl.mean, float((rows["last_token"] - rows["first_token"]).sum() / gaps.sum()), rel_tol=1e-9)


def check_little(r, rows, engines: int) -> None:
    """Little's law on each engine's residents, exactly, where nothing was preempted: a request is a resident
    (holds a slot of reqs[j], a job of engine[j]) from its admission to its last token, so the time-average
    residents over [0, end] are the residence times summed over end."""
    assert (rows["preemptions"] == 0).all()
    for j in range(engines):
        on = rows["engine"] == j
        held = float((rows["last_token"][on] - rows["admitted"][on]).sum())
        idx = j if engines > 1 else None
        assert math.isclose(r.pool("reqs", idx).holders * r.result.end, held, rel_tol=1e-9), j
        assert math.isclose(r.stage("engine", idx).present, r.pool("reqs", idx).holders, rel_tol=1e-12), j


@pytest.mark.parametrize("policy", [0, 1], ids=["kv_use", "queue_length"])
def test_replicas_behind_a_router_conserve_requests_and_keep_little(policy):
    prog, r = drained("replicas.sq", 300, {"policy": policy})
    assert r.result.arrivals == r.result.ended == 300
    rows = check_metrics(r)
    assert len(rows["sent"]) == 300
    check_itl(r, rows)
    # each engine's request count (the engine table) is the records it served; every engine took some
    served = [int((rows["engine"] == j).sum()) for j in range(3)]
    assert served == [r.pool("reqs", j).admissions for j in range(3)]
    assert min(served) > 0 and sum(served) == 300
    check_little(r, rows, 3)
    assert target(prog)["config"] == {"block_size": 16, "enable_prefix_caching": True,
                                      "long_prefill_token_threshold": 64, "max_num_batched_tokens": 256,
                                      "max_num_seqs": 8, "num_gpu_blocks": 201}


def test_replicas_in_flight_at_the_horizon_are_the_arrivals_not_ended():
    # a finite horizon: every session is one request, so the sessions in flight at the end are the requests
    # running or waiting on some engine then (the gauge's last value), and the records are the ended ones
    _, r = run("replicas.sq", {"Lambda": 30}, horizon=20.0, warmup=0.0)
    rows = r.records("request", kind="numpy")
    in_flight = r.gauge("in_flight").values[-1]
    assert in_flight > 0
    assert r.result.arrivals == r.result.ended + in_flight == len(rows["sent"]) + in_flight


# tiny.sq by hand (language.txt §3 and §7; budget 8, block 4, cost 1, so a time is the iteration that ends
# then). Requests 0 (prompt 10, output 3) and 1 (prompt 6, output 2) are sent together at 0.
# Threshold C = 4: two requests run or wait, so every chunk is cut to 4.
#   it 1 (0-1): chunk 4; 0 admitted (first chunk 4), prefills 4; 1 admitted with the 4 left, prefills 4
#   it 2 (1-2): 0 prefills 4 (8 of 10); 1 prefills its last 2: its first token at 2
#   it 3 (2-3): 0 prefills its last 2: first token at 3; 1 decodes its second and last token: done at 3
#   it 4, 5: 0 decodes its two remaining tokens: done at 5
# No threshold (C = inf): 0 takes the whole budget.
#   it 1 (0-1): 0 prefills 8; no budget left, 1 waits
#   it 2 (1-2): 0 prefills its last 2: first token at 2; 1 admitted with 6 left, prefills 6: first at 2
#   it 3 (2-3): both decode: 1 done at 3; it 4: 0 done at 4
TINY = {4: {0: (0, 3, 5), 1: (0, 2, 3)}, math.inf: {0: (0, 2, 4), 1: (1, 2, 3)}}


@pytest.mark.parametrize("C", [4, math.inf], ids=["threshold_4", "no_threshold"])
def test_chunked_prefill_iterations_by_hand(C):
    prog, r = run("tiny.sq", {"C": C})
    rows = check_metrics(r)
    got = {s: (a, f, last) for s, a, f, last in zip(rows["session"].tolist(), rows["admitted"].tolist(),
                                                    rows["first_token"].tolist(), rows["last_token"].tolist())}
    assert got == TINY[C]
    assert r.result.end == max(v[2] for v in TINY[C].values())
    # the engine's iterations: one per time unit, none idle between 0 and the end
    assert r.stage("engine").iterations == r.result.end
    check_little(r, rows, 1)
    assert r.pool("reqs").holders == sum(last - a for a, _, last in TINY[C].values()) / r.result.end
    assert target(prog)["config"]["long_prefill_token_threshold"] == (4 if C == 4 else 0)


def test_a_two_turn_chat_by_hand():
    # one conversation on the step clock: turn 1, prompt 10 and output 3, alone: it 1 prefills 8, it 2 the
    # last 2 (first token at 2), its 2 decodes end at 4; it computed 12 = 10 + 3 - 1 tokens, 3 whole blocks
    # cached. The user thinks 1: turn 2 is sent at 5 with prompt 13 + 5 = 18; its hit is the cached 12
    # (at most floor(17 / 4) * 4 = 16), so it prefills 6 in one iteration (first token at 6) and decodes its
    # last token at 7. Hit rate 12 / (10 + 18).
    defs = {"new_tokens": "turn_no == 1 ? 10 : 5", "out_tokens": "turn_no == 1 ? 3 : 2", "think": "1"}
    sets = {"B": 8, "bs": 4, "cost0": 1, "a": 0, "turns": 2}
    _, r = drained("chat.sq", 1, sets, defs)
    rows = check_metrics(r)
    got = [tuple(rows[k][i] for k in ("sent", "first_token", "last_token", "prompt", "cached")) for i in range(2)]
    assert got == [(0, 2, 4, 10, 0), (5, 6, 7, 18, 12)]
    assert r.result.requests.prefix_cache_hit_rate == 12 / 28
    assert r.stats("full_hit").mean == 1


def test_a_prefix_heavy_chat_finds_its_previous_sequence():
    _, r = drained("chat.sq", 60)
    rows = check_metrics(r)
    assert r.result.arrivals == r.result.ended == 60
    assert len(rows["sent"]) == 60 * 6  # every conversation has six turns
    check_itl(r, rows)
    check_little(r, rows, 1)
    # a follow-up's hit is its previous sequence's reusable blocks (nothing is evicted at this load): the
    # previous prompt + output - 1 tokens computed, in whole blocks of 16
    first = rows["turn"] == 1
    assert (rows["cached"][first] == 0).all()
    turns = sorted(zip(rows["session"].tolist(), rows["turn"].tolist(), rows["prompt"].tolist(),
                       rows["output"].tolist(), rows["cached"].tolist()))
    for (s0, _, p0, o0, _), (s1, t1, _, _, c1) in zip(turns, turns[1:]):
        if s0 == s1:
            assert c1 == (p0 + o0 - 1) // 16 * 16, (s1, t1)
    assert 0.5 < r.result.requests.prefix_cache_hit_rate < 1


def test_a_kv_cache_too_small_preempts_and_still_conserves():
    _, r = drained("small_kv.sq", 200)
    rows = check_metrics(r)
    assert r.result.arrivals == r.result.ended == len(rows["sent"]) == 200
    check_itl(r, rows)
    kv = r.pool("kv")
    assert kv.preemptions == rows["preemptions"].sum() > 20
    # every preemption puts the request back at the head of the queue, to be admitted again
    assert kv.admissions == r.pool("reqs").admissions == 200 + kv.preemptions
    assert kv.used <= 48 * 16 and kv.stuck == 0
    # Little on the sessions (one request each, sent as it arrives): the time-average live sessions are the
    # requests' send-to-last-token times summed over the run
    assert math.isclose(r.result.mean_live * r.result.end, float((rows["last_token"] - rows["sent"]).sum()),
                        rel_tol=1e-9)


def test_a_max_num_seqs_sweep_is_each_point_run_alone():
    from serq_sweep import sweep

    # the sweep's seeds are its own (default 1), not the run block's (sweep.sq says seed 2; docs/sweep.md)
    table = sweep(HERE / "sweep.sq", sets={"max_seqs": [1, 2, 8]}, workers=0, progress=False, horizon=120.0)
    assert table["max_seqs"].tolist() == [1, 2, 8] and table["seed"].tolist() == [1, 1, 1]
    own = sweep(HERE / "sweep.sq", sets={"max_seqs": [1]}, seeds=[2], workers=0, progress=False, horizon=120.0)
    assert own["requests.completed"][0] == run("sweep.sq", {"max_seqs": 1}, horizon=120.0)[1].result.requests.completed
    for _, row in table.iterrows():
        _, r = run("sweep.sq", {"max_seqs": row["max_seqs"]}, horizon=120.0, seed=1)
        check_metrics(r)
        for col in ("requests.completed", "requests.ttft.mean", "requests.e2el.p99", "arrivals", "ended"):
            assert row[col] == pytest.approx(eval_col(r, col), rel=1e-12), (row["max_seqs"], col)
    # one slot serialises the requests: its queue is the longest; the mean TTFT falls as slots are added
    ttft = table["requests.ttft.mean"].tolist()
    assert ttft[0] > ttft[1] > ttft[2]


def eval_col(r, col: str) -> float:
    obj = r.result
    for part in col.split("."):
        obj = getattr(obj, part)
    return float(obj)


def test_a_preemption_by_hand():
    # tiny.sq with 5 blocks of 4 (20 tokens), no threshold, two requests of prompt 6 and output 8:
    #   it 1 (0-1): 0 admitted, prefills 6 (2 blocks): first token at 1; 1 admitted with the 2 left (1 block)
    #   it 2 (1-2): 0 decodes (7); 1 prefills its last 4 (2 blocks): first token at 2
    #   it 3, 4: both decode; 0 grows to a third block at 9 (5 blocks in use: the pool is full)
    #   it 5 (4-5): 0 decodes (10); 1 needs a third block: preempt lifo takes the last admitted, 1 itself, at
    #     4: its 8 computed tokens stay cached; no admission in a step that preempted
    #   it 6-8: 1's re-admission needs room for known = 8 + 1 = 9 tokens (3 blocks) beside 0's 3: it waits;
    #     0's fourth block at 13 evicts one of 1's cached blocks; 0 done at 8 (7 decodes from 1)
    #   it 9 (8-9): 1 re-admitted: hit 4 (its one block left), prefills 9 - 4 = 5, keeps its first token
    #   it 10-13: 1 decodes 8 - 1 - (9 - 6) = 4 tokens: done at 13
    _, r = run("tiny.sq", {"C": math.inf, "blocks": 5, "P0": 6, "O0": 8, "P1": 6, "O1": 8})
    rows = check_metrics(r)
    got = [tuple(rows[k][i] for k in ("session", "admitted", "first_token", "last_token", "preemptions", "cached"))
           for i in range(2)]
    assert got == [(0, 0, 1, 8, 0, 0), (1, 0, 2, 13, 1, 0)]
    kv, reqs = r.pool("kv"), r.pool("reqs")
    assert kv.preemptions == 1 and kv.admissions == 3
    # the slots are held 0-8 by 0, 0-4 and 8-13 by 1; 1 waits in the queue 4-8
    assert math.isclose(reqs.holders * 13, 8 + 4 + 5, rel_tol=1e-12)
    assert math.isclose(reqs.queue * 13, 4, rel_tol=1e-12)
    assert math.isclose(reqs.wait, (0 + 0 + 4) / 3, rel_tol=1e-12)
    # evicted: one of 1's cached blocks at 7, then two of 0's 3 cached blocks: at 1's re-admission (3 blocks, one
    # of them its own cached one) and as it grows to 13 tokens
    assert kv.evicted_units == 3 * 4


def test_the_target_output_is_the_one_docs_vllm_md_describes():
    # docs/vllm.md names the keys `serq vllm target` prints and says num_gpu_blocks is the pool's blocks + 1
    # and serve_by [{"Ctx": "Admission"}] admission order
    text = (Path(__file__).resolve().parents[3] / "docs" / "vllm.md").read_text(encoding="utf-8")
    prog = serq_frontend.compile(path=str(HERE / "chat.sq"))
    out = target(prog)
    assert sorted(out) == ["config", "engine", "serve_by", "target"]
    for key in [*out["config"], "scheduler_cls", "serve_by"]:
        assert f"`{key}`" in text, key
    assert out["config"]["num_gpu_blocks"] == 1000 + 1
    assert out["serve_by"] == [{"Ctx": "Admission"}] and '`[{"Ctx": "Admission"}]` is admission' in text


def test_a_kv_size_sweep_keeps_each_runs_records():
    # serq sweep --records: each point's rows are serq run --records' of that point and seed, and a KV cache
    # ten times larger preempts nothing
    from serq_sweep import sweep

    table, rec = sweep(HERE / "small_kv.sq", sets={"blocks": [48, 480]}, workers=0, progress=False, horizon=60.0,
                       records=True)
    for blocks in (48, 480):
        _, r = run("small_kv.sq", {"blocks": blocks}, horizon=60.0, seed=1)
        rows = check_metrics(r)
        mine = rec[rec["blocks"] == blocks]
        for col in ("session", "sent", "first_token", "last_token", "preemptions", "cached"):
            assert mine[col].tolist() == rows[col].tolist(), (blocks, col)
        assert table.loc[table["blocks"] == blocks, "pools.kv.preemptions"].item() == r.pool("kv").preemptions
    assert rec[rec["blocks"] == 48]["preemptions"].sum() > 0 == rec[rec["blocks"] == 480]["preemptions"].sum()


def test_an_engine_that_admits_no_queue_is_no_vllm_target(tmp_path):
    # without `admit via engine` the slots are admitted between iterations with the whole budget: tiny.sq's
    # request 1 starts at 0 beside request 0's 8-token chunk (by hand, vLLM's step has no budget left for it
    # and admits it at 1, as the program with `admit via` does); `serq vllm target` printed max_num_seqs null
    # for it, beside a cap of 2
    from serq import UserError

    source = (HERE / "tiny.sq").read_text(encoding="utf-8")
    assert source.count(" admit via engine;") == 1
    path = tmp_path / "tiny.sq"
    path.write_text(source.replace(" admit via engine;", ""), encoding="utf-8")
    prog = serq_frontend.compile(path=str(path), sets={"C": math.inf})
    rows = serq_sim.run(prog).records("request", kind="numpy")
    assert dict(zip(rows["session"].tolist(), rows["admitted"].tolist())) == {0: 0, 1: 0}
    with pytest.raises(UserError) as e:
        target(prog, str(path))
    lines = str(e.value).splitlines()
    assert lines[0] == (f"{path}:17:1: error: no pool says `admit via engine`: its requests are admitted between its "
                        "iterations, not by its scheduler, where vLLM admits a waiting request in its step with the "
                        "budget the running ones left; add `admit via engine;` to the pool a request's hold waits "
                        "in (its first pool)")
    assert lines[1:] == ["  stage engine : step {", "  ^"]


def test_a_request_the_kv_cache_can_never_hold_is_rejected_and_counted():
    # tiny.sq with 3 blocks of 4 (12 tokens): request 0 (prompt 6, output 10) needs 6 + 10 - 1 = 15 tokens.
    # It decodes to 12 by 7 (first token at 1, one token an iteration), preempts itself at 7 growing to 13
    # (that step only preempts: it lasts the cost, to 8) and its re-admission must reserve known = 13 > 12
    # tokens: rejected, its session ends. Request 1 (prompt 2, output 2) ran beside it: first 1, last 2.
    # Requests in = completed + rejected.
    _, r = run("tiny.sq", {"C": math.inf, "blocks": 3, "P0": 6, "O0": 10, "P1": 2, "O1": 2})
    rows = check_metrics(r)
    kv = r.pool("kv")
    assert [tuple(rows[k][0] for k in ("session", "first_token", "last_token"))] == [(1, 1, 2)]
    assert (kv.preemptions, kv.rejections, r.result.end) == (1, 1, 8)
    assert r.result.arrivals == r.result.ended == r.result.requests.completed + kv.rejections
    assert any("rejected 1 hold(s) that can never fit" in w for w in r.warnings)
