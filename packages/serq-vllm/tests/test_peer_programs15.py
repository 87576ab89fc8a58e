"""serQ's serving metrics against vLLM's own definitions (tests/peer_programs15/), each case worked out on paper
on the step clock (cost 1: iteration k runs over [k, k + 1]) with blocks of 4 tokens, or recomputed from the
per-request records that `serq run --records` writes.

vLLM's definitions (vllm/v1/metrics/stats.py, vllm/benchmarks/serve.py, vllm/v1/core/kv_cache_manager.py):
TTFT = first token - arrival; E2EL = last token - arrival; TPOT = (E2EL - TTFT) / (output - 1) over the
requests of more than one token; ITL every gap between a request's consecutive output tokens; queue = first
scheduling - arrival, prefill = first token - first scheduling, decode = last token - first token, inference
= last token - first scheduling (a rescheduling after a preemption leaves the first scheduling); medians and
percentiles np.median and np.percentile (linear); std np.std; throughputs over the benchmark's duration; the
prefix-cache hit rate cached tokens over queried tokens, a preempted request's lookups counted apart; KV usage
the blocks in use over the usable blocks (a cached block no request holds is free); running and waiting the
requests in the running and waiting queues, a preempted request waiting again."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq.cli import main
from serq_vllm.target import target

HERE = Path(__file__).resolve().parent / "peer_programs15"
DOCS = Path(__file__).resolve().parents[3] / "docs"
pytestmark = pytest.mark.timeout(60)

COLS = ("session", "turn", "sent", "admitted", "first_token", "last_token", "prompt", "output", "cached",
        "preemptions")
STATS = ("count", "mean", "median", "p90", "p95", "p99")


def run(name: str, sets: dict | None = None, **over):
    return serq_sim.run(serq_frontend.compile(path=str(HERE / name), sets=sets or {}), **over)


def rows_of(r) -> list[tuple]:
    rec = r.records("request", kind="numpy")
    return sorted(tuple(rec[c][i].item() for c in COLS) for i in range(len(rec["sent"])))


def stats(m) -> tuple:
    return tuple(getattr(m, k) for k in STATS)


def numpy_stats(values) -> tuple:
    a = np.asarray(values, dtype=float)
    return (len(a), float(np.mean(a)), float(np.median(a)), float(np.percentile(a, 90)),
            float(np.percentile(a, 95)), float(np.percentile(a, 99)))


def close(got: tuple, want: tuple) -> bool:
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-15) for g, w in zip(got, want))


# --- turns.sq: a conversation's second turn hits its first turn's blocks ---------------------------------------

def test_two_turns_and_two_requests_by_hand():
    """Budget 8, blocks of 4, sessions sent together at 0 in serial order:
      it [0,1]  S0 (prompt 6, 4 tokens) admitted, prefills 6 (2 blocks); S1 (prompt 5, 3 tokens) admitted with
                the 2 tokens left of the budget (1 block); the budget is spent, S2 (prompt 8, 1 token) waits
      it [1,2]  S0 decodes (first token at 1); S1 prefills its last 3 (2 blocks); S2 admitted with the 4 left
      it [2,3]  S0 and S1 decode (S1's first token at 2); S2 prefills its last 4: first and only token at 3
      it [3,4]  S0 decodes position 8 (a third block), S1 its last: both done at 4
      S0 computed 6 + 4 - 1 = 9 tokens: 2 whole blocks cached, the ninth token's partial block is not. Its
      second turn is sent at 5 (a second of thought) with prompt 10 + 3 = 13: hit min(8, reusable(13) = 12) = 8,
      prefills 5 in [5,6] (first token at 6), decodes its second token in [6,7].
    TTFT 1, 2, 3, 1; E2EL 4, 4, 3, 2; TPOT 1, 1, 1 (S2's one token has none); queue 0, 0, 1, 0."""
    r = run("turns.sq")
    assert rows_of(r) == [(0, 1, 0.0, 0.0, 1.0, 4.0, 6, 4, 0, 0), (0, 2, 5.0, 5.0, 6.0, 7.0, 13, 2, 8, 0),
                          (1, 1, 0.0, 0.0, 2.0, 4.0, 5, 3, 0, 0), (2, 1, 0.0, 1.0, 3.0, 3.0, 8, 1, 0, 0)]
    m = r.result.requests
    want = {"ttft": [1, 2, 3, 1], "e2el": [4, 4, 3, 2], "tpot": [1, 1, 1], "itl": [1] * 6,
            "queue": [0, 0, 1, 0], "prefill": [1, 2, 2, 1], "decode": [3, 2, 0, 1], "infer": [4, 4, 2, 2]}
    for name, values in want.items():
        assert close(stats(getattr(m, name)), numpy_stats(values)), name
        assert getattr(m, name).std == float(np.std(values)), name
    # the linear rule by hand on TTFT's sorted 1, 1, 2, 3: p90 at index 2.7 is 2 + 0.7 (1), p99 at 2.97
    assert close(stats(m.ttft), (4, 1.75, 1.5, 2.7, 2.85, 2.97))
    assert close(stats(m.queue), (4, 0.25, 0.0, 0.7, 0.85, 0.97))
    # hit rate: the cached tokens over the prompt tokens, 8 / (6 + 13 + 5 + 8); totals and throughputs over [0, 7]
    assert m.prefix_cache_hit_rate == 8 / 32
    assert (m.total_input_tokens, m.total_output_tokens, m.completed, r.result.end) == (32, 10, 4, 7.0)
    assert close((m.request_throughput, m.output_throughput, m.total_token_throughput), (4 / 7, 10 / 7, 42 / 7))
    # running (reqs' holders): 2 over [0,1], 3 over [1,3], 2 over [3,4], 0, then 1 over [5,7]; waiting: S2 over [0,1]
    reqs, kv = r.pool("reqs"), r.pool("kv")
    assert math.isclose(reqs.holders, 12 / 7, rel_tol=1e-12) and math.isclose(reqs.queue, 1 / 7, rel_tol=1e-12)
    # KV in use, in whole blocks: 3, 5, 6, 5, 0, 4, 4 over the seven seconds (S0's second turn takes its 2 cached
    # blocks back and 2 more); cached and free: S2's 2 blocks from 3, S0's 2 and S1's 1 from 4, S0's taken at 5
    assert math.isclose(kv.used, 4 * (3 + 5 + 6 + 5 + 0 + 4 + 4) / 7, rel_tol=1e-12)
    assert math.isclose(kv.cached, 4 * (0 + 0 + 0 + 2 + 5 + 3 + 3) / 7, rel_tol=1e-12)
    assert kv.preemptions == 0 and kv.evicted_units == 0
    # the engine computed every prompt token but the hit, and every decode: 6 + 5 + 8 + (13 - 8) + 3 + 2 + 0 + 1
    engine = r.stage("engine")
    assert (engine.iterations, engine.iterations * engine.tokens, engine.requests) == (6, 30, 4)


@pytest.mark.parametrize("o0", [1, 2, 3, 4, 5, 6, 7, 8])
def test_the_second_turn_hits_the_first_turns_whole_blocks_only(o0):
    """The first turn computes its prompt and all its outputs but the last, 6 + o0 - 1 tokens; the second turn
    (prompt 6 + o0 + 3) finds those in whole blocks of 4, the partial last block never: 4 for o0 = 1, 2; 8 for
    3 … 6; 12 for 7, 8."""
    r = run("turns.sq", {"O0": o0})
    (t1, t2) = [row for row in rows_of(r) if row[0] == 0]
    assert t2[6] == 6 + o0 + 3 and t2[8] == (6 + o0 - 1) // 4 * 4 == {1: 4, 2: 4, 7: 12, 8: 12}.get(o0, 8)
    assert t1[8] == 0 and r.result.requests.prefix_cache_hit_rate == t2[8] / (6 + 5 + 8 + t2[6])


def test_with_prefix_caching_off_nothing_is_found_and_the_rate_is_0():
    """turns.sq with match = -1 (enable_prefix_caching off, as `serq vllm target` says): the second turn prefills
    all 13 of its tokens, 8 in [5,6] and 5 in [6,7] (first token at 7), and decodes its last in [7,8]; the rest is
    as with caching. vLLM counts no lookup then (its counters' ratio is 0 / 0); the report's rate is 0 / 32."""
    prog = serq_frontend.compile(path=str(HERE / "turns.sq"), sets={"match": -1})
    assert target(prog)["config"]["enable_prefix_caching"] is False
    r = serq_sim.run(prog)
    assert rows_of(r) == [(0, 1, 0.0, 0.0, 1.0, 4.0, 6, 4, 0, 0), (0, 2, 5.0, 5.0, 7.0, 8.0, 13, 2, 0, 0),
                          (1, 1, 0.0, 0.0, 2.0, 4.0, 5, 3, 0, 0), (2, 1, 0.0, 1.0, 3.0, 3.0, 8, 1, 0, 0)]
    assert r.result.requests.prefix_cache_hit_rate == 0.0
    text = " ".join((DOCS / "language.md").read_text(encoding="utf-8").split())
    assert "with prefix caching off vLLM counts no lookup (its ratio is 0 / 0) where this rate is 0" in text


# --- victim.sq: the first request needs a block, the last running one is preempted ---------------------------

def test_the_last_running_request_is_preempted_for_the_first_ones_block():
    """Five blocks of 4, budget 16, A (prompt 4, 6 tokens), B (prompt 5, 2 tokens), C (prompt 5, 4 tokens) sent
    together, running in that order:
      it [0,1]  all admitted and prefilled (A 1 block, B 2, C 2: the pool is full); first tokens at 1
      it [1,2]  A's decode at position 4 needs a second block: none is free, so vLLM preempts running[-1] = C
                (not A, the one that grows, nor B): C's 5 computed tokens keep one whole cached block, its
                partial block is free and A takes it; no admission in a step that preempted; B decodes its last
      it [2,3]  C is admitted again with known = 5 + 1 (its first output kept): hit min(4, reusable(6) = 4) = 4,
                it recomputes 6 - 4 = 2 tokens and samples its second token at 3 (the gap 3 - 1 across the
                preemption); A decodes
      it [3,5]  A and C decode; C's fourth and last token at 5
      it [5,6]  A's last decode needs a third block: the pool holds A's 2, C's 2 cached and B's 1 cached; LRU
                evicts B's (released at 2, before C's at 5)
    TTFT 1, 1, 1 (C's first token came before its preemption and is not taken again); ITL A 1 x 5, B 1, C 2, 1, 1;
    TPOT A 5 / 5, B 1 / 1, C (5 - 1) / 3; C's prefill phase 1 and decode 4 hold the wait."""
    r = run("victim.sq")
    assert rows_of(r) == [(0, 1, 0.0, 0.0, 1.0, 6.0, 4, 6, 0, 0), (1, 1, 0.0, 0.0, 1.0, 2.0, 5, 2, 0, 0),
                          (2, 1, 0.0, 0.0, 1.0, 5.0, 5, 4, 0, 1)]
    m = r.result.requests
    want = {"ttft": [1, 1, 1], "e2el": [6, 2, 5], "tpot": [1, 1, 4 / 3], "itl": [1] * 8 + [2],
            "queue": [0, 0, 0], "prefill": [1, 1, 1], "decode": [5, 1, 4], "infer": [6, 2, 5]}
    for name, values in want.items():
        assert close(stats(getattr(m, name)), numpy_stats(values)), name
    # nine gaps, sorted 1 x 8 then 2: p90 at index 7.2, p95 at 7.6, p99 at 7.92, each between the last 1 and the 2
    assert close(stats(m.itl), (9, 10 / 9, 1.0, 1.2, 1.6, 1.92))
    # the re-admission's hit (4) is a preempted request's lookup, which vLLM counts apart: the rate is 0 / 14
    assert m.prefix_cache_hit_rate == 0.0
    kv, reqs = r.pool("kv"), r.pool("reqs")
    assert (kv.preemptions, kv.admissions, kv.evicted_units, kv.evicted_entries) == (1, 4, 4, 1)
    # C recomputed 2 tokens: 14 prefilled at first, then 2, 3, 2, 2, 1 tokens an iteration
    engine = r.stage("engine")
    assert (engine.iterations, engine.iterations * engine.tokens) == (6, 14 + 2 + 3 + 2 + 2 + 1)
    # running: A over [0,6], B over [0,2], C over [0,1] and [2,5]; waiting: C over [1,2], as vLLM's waiting
    # queue holds a preempted request
    assert reqs.holders == 12 / 6 and math.isclose(reqs.queue, 1 / 6, rel_tol=1e-12)
    # blocks in use 5, 4, 4, 4, 4, 3 (of 5: vLLM's usage 0.8 on average); cached C's 1 over [1,2], B's 1 over
    # [2,5], B's and C's 2 over [5,6] once B's is evicted
    assert kv.used == 4 * (5 + 4 + 4 + 4 + 4 + 3) / 6 and kv.used / (5 * 4) == 0.8
    assert kv.cached == 4 * (0 + 1 + 1 + 1 + 1 + 2) / 6


def test_a_request_preempted_in_its_prefill_for_anothers_block_takes_its_first_token_after_the_recompute():
    """victim.sq with two requests, 3 blocks of 4, budget 8 and a long-prefill threshold of 2: A (prompt 2, 6
    tokens), then C (prompt 8, 2 tokens), admitted in [0,1] with a first chunk of 2 (1 block; its 8 tokens'
    2 blocks fit beside A's 1). A samples its first token at 1 and decodes; C prefills 2 tokens an iteration,
    taking its second block in [2,3]: the pool is full. In [3,4] A's decode at position 4 needs a second block:
    vLLM preempts running[-1] = C, whose next chunk (6 -> 8) needed none, before its first token: its 6
    computed tokens keep one whole cached block (4), the partial one goes to A. C cannot come back beside A's 2
    blocks until A is done at 6; then, alone, its chunk is not capped: hit 4, it recomputes 8 - 4 = 4 tokens
    (positions 4 and 5 a second time) and samples its first token at 7, its last at 8.
    TTFT 1 and 7 (C's prefill phase holds its wait and the recompute: 7 - 0); ITL A 1 x 5, C one gap of 1 (its
    first token opens it: no gap across the preemption, there was no token before it)."""
    r = run("victim.sq", {"N": 2, "blocks": 3, "B": 8, "C": 2, "PA": 2, "OA": 6, "PB": 8, "OB": 2})
    assert rows_of(r) == [(0, 1, 0.0, 0.0, 1.0, 6.0, 2, 6, 0, 0), (1, 1, 0.0, 0.0, 7.0, 8.0, 8, 2, 0, 1)]
    m = r.result.requests
    want = {"ttft": [1, 7], "e2el": [6, 8], "tpot": [1, 1], "itl": [1] * 6,
            "queue": [0, 0], "prefill": [1, 7], "decode": [5, 1], "infer": [6, 8]}
    for name, values in want.items():
        assert close(stats(getattr(m, name)), numpy_stats(values)), name
    assert close(stats(m.ttft), (2, 4.0, 4.0, 6.4, 6.7, 6.94))
    kv, reqs = r.pool("kv"), r.pool("reqs")
    assert (kv.preemptions, kv.admissions, kv.evicted_units) == (1, 3, 4)
    # tokens an iteration: 2 + 2, 1 + 2, 1 + 2, A's 1 (C's chunk given back), 1, 1, C's 4, C's 1
    engine = r.stage("engine")
    assert (engine.iterations, engine.iterations * engine.tokens) == (8, 4 + 3 + 3 + 1 + 1 + 1 + 4 + 1)
    # running: A over [0,6], C over [0,3] and [6,8]; waiting: C over [3,6]; blocks in use 2, 2, 3, 2, 2, 2, 2, 3
    assert (reqs.holders, reqs.queue) == (11 / 8, 3 / 8)
    assert kv.used == 4 * (2 + 2 + 3 + 2 + 2 + 2 + 2 + 3) / 8


# --- blocked.sq: a second turn held at the head of the queue, its prefix evicted while it waits -------------------

def test_a_request_held_back_for_blocks_counts_its_hit_once_at_its_admission():
    """Five blocks of 4, budget 8. S0's first turn (prompt 5, 4 tokens) runs over [0,4] and caches 8 tokens (its
    8 computed: 2 blocks). R (prompt 8, 6 tokens) is sent at 2: admitted with the 7 tokens S0's decode leaves,
    its last prompt token in [3,4] (first token at 4), then 5 decodes to 9, taking a third block at 4 and a
    fourth at 8. S0's second turn is sent at 4 (prompt 9 + 7 = 16, 4 blocks) and waits at the head: R holds 3
    blocks. At 8 R's fourth block evicts S0's tail block. At 9 R is done (12 tokens cached) and the second turn is
    admitted: hit 4 (the block left), prefills 8 then 4 (first token at 11), decodes its last at 12.

    The records count the hit once, at the admission, as vLLM's num_cached_tokens: 4 / (5 + 8 + 16). vLLM
    0.33.0's counters vllm:prefix_cache_queries and _hits count the same: the waiting loop looks the second turn
    up at the steps starting 4, 5, 6, 7 (hit 8), 8 and 9 (hit 4), but records a lookup only once allocate_slots
    admitted the request (scheduler.py:1508-1512, "Record at admission so unscheduled lookups are not counted"),
    so 4 / 29 too (the real scheduler through the bridge, log_stats on: queries 5, 8, 16 at steps 0, 2, 9, hits
    0, 0, 4). Earlier v1 releases recorded inside get_computed_blocks, at every lookup: (8 * 4 + 4 + 4) /
    (5 + 8 + 6 * 16) = 40 / 109. docs/language.md says both."""
    r = run("blocked.sq")
    assert rows_of(r) == [(0, 1, 0.0, 0.0, 1.0, 4.0, 5, 4, 0, 0), (0, 2, 4.0, 9.0, 11.0, 12.0, 16, 2, 4, 0),
                          (1, 1, 2.0, 2.0, 4.0, 9.0, 8, 6, 0, 0)]
    m = r.result.requests
    assert m.prefix_cache_hit_rate == 4 / 29
    want = {"ttft": [1, 2, 7], "e2el": [4, 7, 8], "tpot": [1, 1, 1], "itl": [1] * 9,
            "queue": [0, 0, 5], "prefill": [1, 2, 2], "decode": [3, 5, 1], "infer": [4, 7, 3]}
    for name, values in want.items():
        assert close(stats(getattr(m, name)), numpy_stats(values)), name
    reqs, kv = r.pool("reqs"), r.pool("kv")
    # running: S0 over [0,4], R over [2,9], the second turn over [9,12]; waiting: the second turn over [4,9]
    assert close((reqs.holders, reqs.queue), (14 / 12, 5 / 12))
    # blocks in use 2, 2, 4, 4, 3, 3, 3, 3, 4, 3, 4, 5; cached 2 blocks over [4,8], 1 over [8,9], then what is
    # left of R's 3 as the second turn grows: 2, 1, 0
    assert math.isclose(kv.used, 4 * (2 + 2 + 4 + 4 + 3 + 3 + 3 + 3 + 4 + 3 + 4 + 5) / 12, rel_tol=1e-12)
    assert math.isclose(kv.cached, 4 * (2 * 4 + 1 + 2 + 1 + 0) / 12, rel_tol=1e-12)
    # S0's tail block, then R's three blocks one by one: one entry evicted whole (R's)
    assert (kv.evicted_units, kv.evicted_entries, kv.preemptions) == (16, 1, 0)
    text = " ".join((DOCS / "language.md").read_text(encoding="utf-8").split())
    assert "records the lookup only once `allocate_slots` has admitted it" in text
    assert "gives 4 / 29 here and in the real scheduler's counters" in text and "(40 / 109 there)" in text


# --- load.sq: the report recomputed from the records that serq run --records writes ------------------------------

def cli_run(tmp_path, capsys, *args) -> tuple[dict, dict]:
    out = tmp_path / "rec.csv"
    with pytest.raises(SystemExit) as info:
        main(["run", str(HERE / "load.sq"), "--no-progress", "--json", "--records", str(out), *args])
    got = capsys.readouterr()
    assert info.value.code == 0, got.err
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    cols = {k: np.array([float(row[k]) for row in rows]) for k in rows[0]}
    return json.loads(got.out), cols


@pytest.mark.parametrize("warmup", [0, 50])
def test_the_report_is_the_records_recomputed(tmp_path, capsys, warmup):
    doc, c = cli_run(tmp_path, capsys, "--arrivals", "200", "--warmup", str(warmup), "--slo", "ttft=0.05,tpot=0.021")
    req = doc["requests"]
    n = len(c["sent"])
    assert req["completed"] == n and (c["sent"] >= warmup).all()
    many = c["output"] > 1
    # goodput (vLLM's benchmark): a request meets an SLO at or below it; a request of one token has a TPOT of 0
    tpot0 = np.where(many, (c["last_token"] - c["first_token"]) / np.maximum(c["output"] - 1, 1), 0.0)
    good = int(((c["first_token"] - c["sent"] <= 0.05) & (tpot0 <= 0.021)).sum())
    assert req["good"] == good and 0 < good < n and (~many).any()
    assert math.isclose(req["goodput"], good / (doc["end"] - warmup), rel_tol=1e-12)
    per = {"ttft": c["first_token"] - c["sent"], "e2el": c["last_token"] - c["sent"],
           "tpot": (c["last_token"][many] - c["first_token"][many]) / (c["output"][many] - 1),
           "queue": c["admitted"] - c["sent"], "prefill": c["first_token"] - c["admitted"],
           "decode": c["last_token"] - c["first_token"], "infer": c["last_token"] - c["admitted"]}
    for name, v in per.items():
        s = req[name]
        assert close(tuple(s[k] for k in STATS), numpy_stats(v)), name
        assert math.isclose(s["std"], float(np.std(v)), rel_tol=1e-9), name
    # every request drained: its output - 1 gaps add up to its last token less its first
    gaps = c["output"] - 1
    assert req["itl"]["count"] == gaps.sum()
    assert math.isclose(req["itl"]["mean"], (c["last_token"] - c["first_token"]).sum() / gaps.sum(), rel_tol=1e-9)
    duration = doc["end"] - warmup
    assert math.isclose(req["duration"], duration, rel_tol=1e-12)
    assert (req["total_input_tokens"], req["total_output_tokens"]) == (c["prompt"].sum(), c["output"].sum())
    assert math.isclose(req["request_throughput"], n / duration, rel_tol=1e-12)
    assert math.isclose(req["output_throughput"], c["output"].sum() / duration, rel_tol=1e-12)
    assert math.isclose(req["total_token_throughput"], (c["prompt"].sum() + c["output"].sum()) / duration,
                        rel_tol=1e-12)
    assert math.isclose(req["prefix_cache_hit_rate"], c["cached"].sum() / c["prompt"].sum(), rel_tol=1e-12)
    assert (c["cached"] <= (c["prompt"] - 1) // 16 * 16).all() and (c["cached"] % 16 == 0).all()
    pools = {p["name"]: p for p in doc["pools"]}
    # vllm:request_success_total: the engine counts the completions in the measured window, the records the
    # requests sent in it (docs/simulator.md, "Engine statistics"): with a warm-up, also those sent before its end
    engine = doc["stages"][0]
    assert engine["name"] == "engine" and (engine["requests"] == n if warmup == 0 else engine["requests"] > n)
    if warmup == 0:
        # vllm:num_preemptions_total: the KV pool's count is the records' sum (every request drained)
        assert pools["kv"]["preemptions"] == c["preemptions"].sum() > 0
        # each request waits (vllm:num_requests_waiting) or runs (vllm:num_requests_running) from its send to its
        # last token, preempted or not: the two time averages add up to the E2E latencies over the run
        both = (pools["reqs"]["queue"] + pools["reqs"]["holders"]) * doc["end"]
        assert math.isclose(both, float(per["e2el"].sum()), rel_tol=1e-9)
    # vllm:kv_cache_usage_perc is in whole blocks: the time average lies within the pool
    assert 0 < pools["kv"]["used"] / (60 * 16) < 1
