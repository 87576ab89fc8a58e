"""vLLM's serving metrics against schedules worked out by hand.

The definitions checked are those of vLLM's serving benchmark (vllm/benchmarks/serve.py,
``calculate_metrics``): TTFT = first token - send; E2EL = last token - send; TPOT = (E2EL - TTFT) /
(output - 1) per request of more than one output token (0 for goodput otherwise); ITL = every gap
between consecutive output tokens; median = ``np.median``, pN = ``np.percentile(x, N)`` (method
'linear'); throughputs = completed / duration, sum(output) / duration, (sum(prompt) + sum(output)) /
duration; goodput = requests whose every named metric is at or below its SLO, per second.

The programs run lib/vllm.sq on the step clock (cost 1: times are iteration numbers), block 4, budget 8.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_report
import serq_sim
from serq_sim.metrics import percentile, stats_of
from serq_sim.step.tokens import TokenGaps

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[3]

# Four requests on a KV pool of 5 blocks of 4 tokens:
#   A (session 0): sent 0, prompt 10, output 4   -- a chunked prefill (8 + 2)
#   B (session 1): sent 0, prompt 3,  output 1   -- one output token: no TPOT, no gap
#   C (session 2): sent 0, prompt 4,  output 6   -- preempted once
#   D (session 3): sent 6, prompt 4,  output 2   -- sent late (the warm-up test keeps only it)
#
# The schedule (iteration [t, t+1] planned at t; "pos" the KV tokens computed; growth block by block):
#   t=0  admit A (8 of 10, 2 blocks; reserve 10 fits: 12 <= 20); A prefills 8            prefill-only  8 tok
#   t=1  A prefills 2 (grows to 3 blocks); admit B (1 block), B prefills 3; admit C
#        (1 block: 12 + 4 + 4 = 20 <= 20), C prefills 3 of 4 (budget 8 spent)              prefill-only  8 tok
#   t=2  end: A's and B's first tokens. B (output 1) is done: row B (2, 2), frees its block
#        (3 < 4 tokens computed: nothing cached). A decodes (pos 10 -> 11), C prefills 1     mixed         2 tok
#   t=3  end: A token 2, C's first token. A decodes (11 -> 12); C decodes (4 -> 5,
#        grows to 2 blocks: 20 used)                                                        decode-only   2 tok
#   t=4  end: A token 3, C token 2. A decodes (12 -> 13) and needs a 4th block: 24 > 20,
#        no cached block to evict: preempt lifo = C (the last admitted); C caches
#        floor(5 / 4) * 4 = 4 tokens, computed 5; no admission in this iteration              decode-only   1 tok
#   t=5  end: A token 4: row A (2, 5); A caches 12. C re-admitted: known 6 (4 + 2 outputs),
#        hit 4 (its own block), prefills 2                                                  prefill-only  2 tok
#   t=6  end: C's recompute samples token 3 (gap 6 - 4 = 2). D arrives, is admitted
#        (1 block, evicting one of A's): C decodes (6 -> 7), D prefills 4                    mixed         5 tok
#   t=7  end: C token 4, D's first token. C decodes (7 -> 8), D decodes (4 -> 5, 2nd block)  decode-only   2 tok
#   t=8  end: C token 5, D token 2: row D (7, 8). C decodes (8 -> 9, 3rd block)              decode-only   1 tok
#   t=9  end: C token 6: row C (3, 9), one preemption. Horizon 10.
#
# Per request (sent, first, last; gaps):
#   A 0, 2, 5; 1 1 1        B 0, 2, 2; -        C 0, 3, 9; 1 2 1 1 1        D 6, 7, 8; 1
CLOCK = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 5 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage wait : delay;
workload { arrive batch(4); hidden o; }
session {
  set prompt = serial == 0 ? 10 : (serial == 1 ? 3 : 4);
  set o = serial == 0 ? 4 : (serial == 1 ? 1 : (serial == 2 ? 6 : 2));
  branch (serial == 3) { run wait (6); }
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 10; warmup 0; }
"""

# (session, sent, admitted, first_token, last_token, prompt, output, cached, preemptions), in record order
ROWS = [
    (1, 0.0, 1.0, 2.0, 2.0, 3, 1, 0, 0),
    (0, 0.0, 0.0, 2.0, 5.0, 10, 4, 0, 0),
    (3, 6.0, 6.0, 7.0, 8.0, 4, 2, 0, 0),
    (2, 0.0, 1.0, 3.0, 9.0, 4, 6, 0, 1),
]
COLS = ("session", "sent", "admitted", "first_token", "last_token", "prompt", "output", "cached", "preemptions")
TTFT = [2.0, 2.0, 1.0, 3.0]          # B, A, D, C
E2EL = [2.0, 5.0, 2.0, 9.0]
TPOT = [1.0, 1.0, 6.0 / 5.0]         # A (3 / 3), D (1 / 1), C (6 / 5); B has one token
ITL = [1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0]


def _run(**kw):
    return serq_sim.run(serq_frontend.compile(source=CLOCK), **kw)


def _numpy_stats(x):
    """vLLM's: np.mean, np.median, np.percentile (linear)."""
    a = np.asarray(x, dtype=float)
    return (len(x), float(np.mean(a)), float(np.median(a)), float(np.percentile(a, 90)),
            float(np.percentile(a, 95)), float(np.percentile(a, 99)))


def _got(m):
    return (m.count, m.mean, m.median, m.p90, m.p95, m.p99)


def test_records_are_the_hand_schedule():
    rows = _run().records(kind="numpy")
    got = list(zip(*(rows[c].tolist() for c in COLS)))
    assert got == ROWS
    assert rows["time"].tolist() == [r[4] for r in ROWS]  # recorded at the last token


def test_request_metrics_are_vllms_definitions_of_the_hand_schedule():
    req = _run().result.requests
    assert (req.completed, req.duration) == (4, 10.0)
    assert req.request_throughput == 0.4
    assert req.output_throughput == pytest.approx(13 / 10, rel=1e-15)          # 4 + 1 + 6 + 2
    assert req.total_token_throughput == pytest.approx(34 / 10, rel=1e-15)     # (10 + 3 + 4 + 4) + 13
    # by hand: TTFT 1 2 2 3 -> median 2, p90 at index 2.7: 2.7; E2EL 2 2 5 9 -> median 3.5, p90 5 + 4 * 0.7
    assert _got(req.ttft) == pytest.approx((4, 2.0, 2.0, 2.7, 2.85, 2.97), rel=1e-14)
    assert _got(req.e2el) == pytest.approx((4, 4.5, 3.5, 7.8, 8.4, 8.88), rel=1e-14)
    assert _got(req.tpot) == pytest.approx((3, 3.2 / 3, 1.0, 1.16, 1.18, 1.196), rel=1e-14)
    assert _got(req.itl) == pytest.approx((9, 10 / 9, 1.0, 1.2, 1.6, 1.92), rel=1e-14)
    # and bit for bit what vLLM's benchmark computes of the same lists
    for m, x in ((req.ttft, TTFT), (req.e2el, E2EL), (req.tpot, TPOT), (req.itl, ITL)):
        assert _got(m) == _numpy_stats(x)


def test_vllm_v1_phases_of_the_hand_schedule():
    # vLLM v1's per-request phases (vllm/v1/metrics/stats.py): queue = admitted - sent, prefill = first_token -
    # admitted, decode = last_token - first_token, infer = last_token - admitted. B, A, D, C: queue 1 0 0 1;
    # prefill 1 2 1 2; decode 0 3 1 6 (C's preemption at 4, during its decode, is in it); infer 1 5 2 8
    req = _run().result.requests
    assert _got(req.queue) == pytest.approx((4, 0.5, 0.5, 1.0, 1.0, 1.0), rel=1e-14)
    assert _got(req.prefill) == pytest.approx((4, 1.5, 1.5, 2.0, 2.0, 2.0), rel=1e-14)
    # decode sorted 0 1 3 6: index 2.7 at p90, 3 + 3 * 0.7; infer sorted 1 2 5 8: 5 + 3 * 0.7
    assert _got(req.decode) == pytest.approx((4, 2.5, 2.0, 5.1, 5.55, 5.91), rel=1e-14)
    assert _got(req.infer) == pytest.approx((4, 4.0, 3.5, 7.1, 7.55, 7.91), rel=1e-14)
    for m, x in ((req.queue, [1, 0, 0, 1]), (req.prefill, [1, 2, 1, 2]), (req.decode, [0, 3, 1, 6]),
                 (req.infer, [1, 5, 2, 8])):
        assert _got(m) == _numpy_stats(x)


def test_goodput_counts_a_one_token_request_s_tpot_as_zero():
    report = _run()

    def good(slo):
        report.set_slo(slo)
        req = report.result.requests
        return req.good, req.goodput, req.slo

    # ttft <= 2 and tpot <= 1: A (2, 1), B (2, no TPOT: 0), D (1, 1) are good; C (3, 1.2) is not
    assert good({"ttft": 2.0, "tpot": 1.0}) == (3, 0.3, {"ttft": 2.0, "tpot": 1.0})
    assert good({"e2el": 2.0})[:2] == (2, 0.2)       # B and D
    assert good({"tpot": 1.19})[:2] == (3, 0.3)      # only C's 1.2 fails
    assert good({"tpot": 0.0})[:2] == (1, 0.1)       # only B, whose TPOT counts as 0


def test_engine_statistics_and_preemptions_are_the_hand_schedule():
    result = _run().result
    engine = next(s for s in result.stages if s.name == "engine")
    # iterations (tokens): 8 8 2 2 1 2 5 2 1; jobs served: 1 3 2 2 1 1 2 2 1
    assert (engine.iterations, engine.prefill_only, engine.decode_only, engine.mixed) == (9, 3, 4, 2)
    assert engine.batch == pytest.approx(15 / 9, rel=1e-15)
    assert engine.tokens == pytest.approx(31 / 9, rel=1e-15)
    assert engine.token_utilisation == pytest.approx(31 / (9 * 8), rel=1e-15)
    assert engine.utilisation == pytest.approx(0.9, rel=1e-15)      # busy 9 of 10
    assert (engine.requests, engine.request_throughput) == (4, 0.4)  # requests, not runs
    kv = next(p for p in result.pools if p.name == "kv")
    assert (kv.preemptions, kv.admissions, kv.evicted_units) == (1, 5, 8.0)  # C twice; D's two blocks of A's


def test_the_warm_up_keeps_a_request_whole_by_its_send_time():
    # warm-up 5: A, B, C were sent at 0 and are out, C's gaps after 5 (2 1 1 1) too; D (sent 6) is in
    report = _run(warmup=5.0)
    rows = report.records(kind="numpy")
    assert list(zip(*(rows[c].tolist() for c in COLS))) == [ROWS[2]]
    req = report.result.requests
    assert (req.completed, req.duration, req.request_throughput) == (1, 5.0, 0.2)
    assert _got(req.ttft) == (1, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert _got(req.e2el) == (1, 2.0, 2.0, 2.0, 2.0, 2.0)
    assert _got(req.tpot) == (1, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert _got(req.itl) == (1, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert req.output_throughput == 2 / 5 and req.total_token_throughput == 6 / 5
    # the engine's requests are its completions after the warm-up, whatever their send time: A (5), D (8),
    # C (9); its iterations those planned from 5 on: 2 1 5 2 1 tokens, 1 1 2 2 1 jobs
    engine = next(s for s in report.result.stages if s.name == "engine")
    assert (engine.requests, engine.request_throughput) == (3, 0.6)
    assert (engine.iterations, engine.prefill_only, engine.decode_only, engine.mixed) == (4, 1, 2, 1)
    assert (engine.batch, engine.tokens, engine.token_utilisation) == (1.5, 2.5, 10 / 32)


def test_a_request_in_flight_at_the_end_has_no_row_and_its_gaps_so_far_count():
    # horizon 8.5: C (last token at 9) is in flight: no row, never half of one. The ITL covers every gap
    # of the requests sent after the warm-up, C's four so far (1 2 1 1) with A's three and D's one
    # (docs/language.md, "ITL"); vLLM's benchmark, which waits for every request, has no such request.
    report = _run(horizon=8.5)
    rows = report.records(kind="numpy")
    assert list(zip(*(rows[c].tolist() for c in COLS))) == [ROWS[0], ROWS[1], ROWS[2]]
    req = report.result.requests
    assert (req.completed, req.ttft.count, req.tpot.count, req.e2el.count) == (3, 3, 2, 3)
    assert _got(req.itl) == _numpy_stats([1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0])


HIT = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 8 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage think : delay;
workload { arrive batch(1); hidden o; }
session {
  set prompt = 10; set o = 3; set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  run think (1);
  set prompt = 20; set o = 2; set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 20; warmup 0; }
"""


def test_cached_is_vllms_num_cached_tokens_at_first_scheduling():
    # turn 1: prefill 8 + 2 (t 0-2), tokens at 2, 3, 4; it has computed 10 + 3 - 1 = 12 tokens, cached
    # as 3 blocks. Turn 2 (sent 5, 20 tokens): hit = min(12, floor(19 / 4) * 4) = 12, prefill 8 (t 5-6),
    # tokens at 6, 7. vLLM's prefix-cache hit rate (hits / queries, in tokens, requests not preempted)
    # is the records' sum(cached) / sum(prompt) = 12 / 30.
    rows = serq_sim.run(serq_frontend.compile(source=HIT)).records(kind="numpy")
    got = list(zip(*(rows[c].tolist() for c in COLS)))
    assert got == [(0, 0.0, 0.0, 2.0, 4.0, 10, 3, 0, 0), (0, 5.0, 5.0, 6.0, 7.0, 20, 2, 12, 0)]
    assert rows["cached"].sum() / rows["prompt"].sum() == 0.4
    report = serq_sim.run(serq_frontend.compile(source=HIT))
    assert report.result.requests.prefix_cache_hit_rate == 0.4
    assert "prefix-cache hit rate 0.4" in serq_report.render(report, "text")


def test_the_prefix_cache_hit_rate_leaves_out_a_preempted_request_s_lookup():
    # vLLM counts the lookup of a request preempted before apart (preempted_queries, preempted_hits): C's
    # re-admission, which hits its own 4 tokens of 6, is not in the rate; no first lookup hits: 0 of 21
    req = _run().result.requests
    assert req.prefix_cache_hit_rate == 0.0


# -- the quantiles are numpy's, bit for bit ------------------------------------------------------------------

def _samples(seed: int) -> list[float]:
    rng = random.Random(seed)
    scale = rng.choice([1.0, 1e3, 0.01, 0.0173])
    return [rng.random() * scale for _ in range(rng.randrange(1, 60))]


def test_request_metric_quantiles_are_numpys_bit_for_bit():
    """np.percentile's virtual index is (n - 1) * (q / 100) and np.median of an even count the mean of
    the two middle values; ((n - 1) * q) / 100 and the interpolation at 0.5 differ from them in the last
    bits for about a quarter of the samples here."""
    for seed in range(300):
        x = _samples(seed)
        s = stats_of(x)
        assert (s.median, s.p90, s.p95, s.p99) == _numpy_stats(x)[2:], (seed, x)
        srt = sorted(x)
        for q in (1, 10, 25, 33, 50, 75, 90, 95, 99, 99.9):
            assert percentile(srt, q) == float(np.percentile(x, q)), (seed, q)


@pytest.mark.parametrize("x", [[1.0, math.nan, 0.5, 2.0], [math.nan, 3.0, 1.0], [3.0, 1.0, math.nan]])
def test_quantiles_of_values_with_a_nan_are_numpys(x):
    # a record column computed as NaN (0 / 0): numpy gives NaN, where the quantiles read from sorted()
    # depended on the NaN's place ([nan, 3, 1]: median 1, [3, 1, nan]: median 3)
    with np.errstate(invalid="ignore"):
        want = _numpy_stats(x)
    got = _got(stats_of(x))
    assert all(g == w or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize(("x", "want"), [
    # sorted 1, 2, inf: median 2; p90 at index 1.8, p95 1.9, p99 1.98, between 2 and inf
    ([1.0, 2.0, math.inf], (3, math.inf, 2.0, math.inf, math.inf, math.inf)),
    # sorted -inf, 0, 1, inf: mean NaN (inf - inf), median (0 + 1) / 2; p90 at 2.7, between 1 and inf
    ([1.0, -math.inf, math.inf, 0.0], (4, math.nan, 0.5, math.inf, math.inf, math.inf)),
    ([math.inf] * 3, (3, math.inf, math.inf, math.inf, math.inf, math.inf)),
])
def test_quantiles_beside_an_infinity_are_the_infinity(x, want):
    """numpy's interpolation gives NaN beside an infinity (inf - inf); serQ's gives the infinity
    (serq_sim.metrics.beyond; test_known_defects_round50_quantile_inf.py), numpy's elsewhere."""
    got = _got(stats_of(x))
    assert all(g == w or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want)), (got, want)


def test_itl_quantiles_are_numpys_bit_for_bit():
    rng = random.Random(5)
    for _ in range(100):
        g = TokenGaps()
        for _ in range(rng.randrange(1, 40)):
            g.add(rng.random() * rng.choice([1.0, 0.02]), rng.choice([1, 1, 2, rng.randrange(1, 9)]))
        s = g.stats()
        assert (s.count, s.median, s.p90, s.p95, s.p99) == (len(g),) + _numpy_stats(g.expanded())[2:]


def test_the_report_s_quantiles_are_those_of_its_records_in_numpy():
    """What the tutorial prints side by side: the report's p99 TTFT and pandas/numpy's of the records."""
    report = serq_sim.run(serq_frontend.compile(str(ROOT / "examples/multi-turn/vllm_single_turn.sq")), horizon=60,
                          warmup=10, seed=4)
    rows = report.records(kind="numpy")
    req = report.result.requests
    ttft = rows["first_token"] - rows["sent"]
    e2el = rows["last_token"] - rows["sent"]
    many = rows["output"] > 1
    tpot = (rows["last_token"] - rows["first_token"])[many] / (rows["output"][many] - 1)
    assert len(ttft) > 40
    for m, x in ((req.ttft, ttft), (req.e2el, e2el), (req.tpot, tpot)):
        assert (m.count, m.median, m.p90, m.p95, m.p99) == (len(x),) + _numpy_stats(x)[2:]
        assert m.mean == pytest.approx(float(np.mean(x)), rel=1e-14)
        assert m.mean == math.fsum(x) / len(x)  # correctly rounded sum over n


def test_the_per_job_planning_gives_the_hand_schedule_too(monkeypatch):
    # SERQ_SIM_TIER=general plans every job every iteration (no lazy decoders, no quiet rounds): the same
    # rows, metrics and engine figures as the lazy planning above
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    report = _run()
    rows = report.records(kind="numpy")
    assert list(zip(*(rows[c].tolist() for c in COLS))) == ROWS
    req = report.result.requests
    for m, x in ((req.ttft, TTFT), (req.e2el, E2EL), (req.tpot, TPOT), (req.itl, ITL)):
        assert _got(m) == _numpy_stats(x)
    engine = next(s for s in report.result.stages if s.name == "engine")
    assert (engine.iterations, engine.prefill_only, engine.decode_only, engine.mixed, engine.requests) == (
        9, 3, 4, 2, 4)
