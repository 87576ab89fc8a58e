"""The serving metrics' definitions against vLLM's, each computed by hand on a small schedule.

vLLM's definitions, as read in vLLM at commit 93e3bc8f30b1 (2026-07-13):

vllm/benchmarks/serve.py (the serving benchmark, ``vllm bench serve``)
  556-760   calculate_metrics: per successful request
  606-613     TPOT = (latency - ttft) / (output_len - 1) only when output_len > 1 (``tpots``); a request of
              one token gets tpot 0, kept in ``all_tpots`` for the goodput only
  614         ITL: ``itls += output.itl``, every gap of every request, one list
  615-616     TTFT ``output.ttft``; E2EL ``output.latency``
  621-646     goodput: a request is good when ``slo >= value`` for every metric named (ttft, tpot from
              ``all_tpots``, e2el): at or below its SLO
  731-734     request_throughput = completed / dur_s, request_goodput = good / dur_s, output_throughput =
              sum(output lens) / dur_s, total_token_throughput = (total input + total output) / dur_s
  735-760     mean, std, median, percentiles: np.mean, np.std (population), np.median, np.percentile
              (numpy's default method, 'linear'), over ``x or 0`` (0 for an empty list)
  653-706     max_output_tokens_per_s, max_concurrent_requests ("Peak output token throughput", "Peak
              concurrent requests", 1170-1177): tokens and requests in 1-second buckets; no counterpart
  875-898     ``--num-warmups N``: N requests sent and awaited before the timed run (in no figure)
  974, 1048   dur_s: from before the first request is sent to after the last response
vllm/benchmarks/lib/endpoint_request_func.py
  235-236     ttft = time of the first streamed chunk - send; 240: itl.append(chunk time - previous chunk's)
  257         latency = last chunk's time - send
vllm/v1/metrics/stats.py (the engine's own histograms and counters)
  35-111      CachingMetrics: hit_rate = hits / queries (0 of no queries) over the most recent 1 000 requests
  131-142     PrefixCacheStats.record: a request preempted before is counted apart (preempted_queries,
              preempted_hits); otherwise queries += num_tokens, hits += num_hits
  353-402     update_from_output: TTFT from arrival at the first token; first_token_ts set while prefilling
              (the first output only); inter-token latency of every later output; last_token_ts
  404-425     update_from_events: queued_ts at QUEUED; scheduled_ts at the FIRST SCHEDULED ("ignore
              preemptions"); PREEMPTED counts num_preempted_reqs
  428-458     update_from_finished_request: e2e = now - arrival; queued = scheduled_ts - queued_ts; prefill =
              first_token_ts - scheduled_ts; decode = last_token_ts - first_token_ts; inference =
              last_token_ts - scheduled_ts; mean_time_per_output_token = decode / (generated - 1), 0 for one
vllm/v1/core/kv_cache_manager.py
  261-265     prefix_cache_stats.record(num_tokens=request.num_tokens, num_hits=num_new_computed_tokens,
              preempted=request.num_preemptions > 0)
vllm/v1/metrics/loggers.py
  150         num_preemptions += num_preempted_reqs; 259: "Prefix cache hit rate" = CachingMetrics.hit_rate

The schedule below (lib/vllm.sq on the step clock: cost 1, so times are iteration numbers) is worked out by
hand from the library's rules; each metric is then computed by hand from vLLM's definitions, written out as
arithmetic, and the report must equal it (and numpy's functions of the same lists, vLLM's calls, bit for bit).
Metrics without a vLLM counterpart (time averages of pools and stages, utilisation, queue lengths) are
checked against hand-computed integrals and, on an M/M/1 queue, the closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import serq_frontend
import serq_report
import serq_sim
from serq_sim.metrics import stats_of

pytestmark = pytest.mark.timeout(60)

# Three sessions arrive at 0 on a step engine of budget 8 and cost 1, a KV pool of 6 blocks of 4 tokens
# (evict lru, preempt lifo), 8 request slots:
#   S0 turn 1: prompt 4, output 1 (one output token: no TPOT, no gap); then 2 s away; turn 2 (sent at 3):
#              prompt 8 extending the first, output 2: a prefix hit of its own cached block, then preempted
#   S1:        prompt 4, output 6
#   S2:        prompt 4, output 6 (waits one iteration for budget)
#
# t=0  admit S0 (4 tokens, 1 block), S1 (4, 1 block): the budget of 8 is spent, S2 waits.  prefill 8
# t=1  end: S0's first token, its output 1 done: row (sent 0, admitted 0, first 1, last 1); it caches its
#      4 computed tokens (1 block) and leaves for 2 s. S1's first token.
#      plan: S1 decodes (4 -> 5, grows to 2 blocks: used 8, cached 4); admit S2 (4 tokens: used 12)   5 tok
# t=2  end: S1 token 2; S2's first token. plan: S1 5 -> 6; S2 4 -> 5 grows (used 16)             decode 2 tok
# t=3  S0 sends turn 2 (t0 = 3). end: S1 token 3, S2 token 2.
#      plan: S1 6 -> 7, S2 5 -> 6; admit S0: known 8, hit = min(cached 4, floor(7 / 4) * 4) = 4: it reuses
#      its block and allocates one (used 24, cached 0); prefills 8 - 4 = 4                        mixed 6 tok
# t=4  end: S1 token 4, S2 token 3, S0's first token of turn 2 (TTFT 1).
#      plan: S1 7 -> 8, S2 6 -> 7; S0 8 -> 9 needs a 3rd block: none free or cached: preempt lifo = S0, the
#      last admitted; it caches its 8 computed tokens (2 blocks: used 16, cached 8) and waits at the head:
#      known 9, hit 8, reserve 9 needs a new block, none                                          decode 2 tok
# t=5  end: S1 token 5, S2 token 4. plan: S1 8 -> 9 grows: evict one block of S0's (the tail: used 20,
#      cached 4); S2 7 -> 8; S0 still does not fit (hit 4, needs 2 new blocks)                    decode 2 tok
# t=6  end: S1 token 6: row (0, 0, 1, 6); it caches 8 of its 9 computed tokens (used 8, cached 12).
#      S2 token 5. plan: S2 8 -> 9 grows (used 12); admit S0: known 9, hit 4, 2 new blocks, S1's two
#      evicted (used 24, cached 0); recompute 9 - 4 = 5 tokens                                    mixed 6 tok
# t=7  end: S2 token 6: row (0, 1, 2, 7). S0's recompute samples its 2nd token (a gap of 7 - 4 = 3): its
#      output 2 is done: row (3, 3, 4, 7), cached 4, one preemption. Both cache 8 tokens (used 0, cached 16).
# horizon 10, warm-up 0.
SCENARIO = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 6 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage away : delay;
workload { arrive batch(3); hidden o; }
session {
  set prompt = 4;
  set o = serial == 0 ? 1 : 6;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  branch (serial == 0) {
    run away (2);
    set prompt = 8;
    set o = 2;
    set t0 = now;
    vllm_request(reqs, kv, engine, prompt, o, t0);
  }
}
run { horizon 10; warmup 0; }
"""

COLS = ("session", "sent", "admitted", "first_token", "last_token", "prompt", "output", "cached", "preemptions")
# by hand, above: (session, sent, admitted, first_token, last_token, prompt, output, cached, preemptions)
R1 = (0, 0.0, 0.0, 1.0, 1.0, 4, 1, 0, 0)   # S0 turn 1
R2 = (1, 0.0, 0.0, 1.0, 6.0, 4, 6, 0, 0)   # S1
R3 = (2, 0.0, 1.0, 2.0, 7.0, 4, 6, 0, 0)   # S2
R4 = (0, 3.0, 3.0, 4.0, 7.0, 8, 2, 4, 1)   # S0 turn 2: the prefix hit, preempted and recomputed
ROWS = [R1, R2, R3, R4]

# vLLM's per-request values of these rows (seconds on this clock), by hand: first - sent, last - sent, (last -
# first) / (output - 1), and the gaps between consecutive tokens
TTFT = [1.0 - 0.0, 1.0 - 0.0, 2.0 - 0.0, 4.0 - 3.0]                  # 1 1 2 1
E2EL = [1.0 - 0.0, 6.0 - 0.0, 7.0 - 0.0, 7.0 - 3.0]                  # 1 6 7 4
TPOT = [(6.0 - 1.0) / 5, (7.0 - 2.0) / 5, (7.0 - 4.0) / 1]           # R1 (one token) has none: 1 1 3
ITL = [1.0] * 5 + [1.0] * 5 + [3.0]                                  # S1 1..6, S2 2..7, S0 turn 2: 4 -> 7


def _run(src: str = SCENARIO, **kw):
    return serq_sim.run(serq_frontend.compile(source=src), **kw)


def _rows(report) -> list[tuple]:
    rows = report.records(kind="numpy")
    return sorted(zip(*(rows[c].tolist() for c in COLS)), key=lambda r: (r[1], r[0], r[4]))


def _got(m):
    return (m.count, m.mean, m.std, m.median, m.p90, m.p95, m.p99)


def _numpy(x):
    """What vLLM's benchmark computes of a list: np.mean, np.std, np.median, np.percentile (linear)."""
    a = np.asarray(x, dtype=float)
    return (len(x), float(np.mean(a)), float(np.std(a)), float(np.median(a)), float(np.percentile(a, 90)),
            float(np.percentile(a, 95)), float(np.percentile(a, 99)))


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_records_are_the_hand_schedule(tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    assert _rows(_run()) == sorted(ROWS, key=lambda r: (r[1], r[0], r[4]))


def test_ttft_tpot_itl_e2el_are_vllms_benchmark_definitions_by_hand():
    req = _run().result.requests
    # TTFT 1 1 2 1, sorted 1 1 1 2: mean 5/4; population variance (3 * (1/4)^2 + (3/4)^2) / 4 = 3/16; median
    # (1 + 1) / 2; p90 at the virtual index (4 - 1) * 0.9 = 2.7: 1 + 0.7 * (2 - 1); p95 2.85 -> 1.85; p99 1.97
    assert _got(req.ttft) == pytest.approx((4, 1.25, math.sqrt(3) / 4, 1.0, 1.7, 1.85, 1.97), rel=1e-14)
    # E2EL 1 6 7 4, sorted 1 4 6 7: mean 4.5; squared deviations 12.25 + 0.25 + 2.25 + 6.25 = 21, variance
    # 21/4; median (4 + 6) / 2; p90 at 2.7: 6 + 0.7; p95 6.85; p99 6.97
    assert _got(req.e2el) == pytest.approx((4, 4.5, math.sqrt(21) / 2, 5.0, 6.7, 6.85, 6.97), rel=1e-14)
    # TPOT of the requests of more than one token, (last - first) / (output - 1): 5/5, 5/5, 3/1; mean 5/3;
    # variance (4/9 + 4/9 + 16/9) / 3 = 8/9; median 1; p90 at index 2 * 0.9 = 1.8: 1 + 0.8 * 2 = 2.6
    assert _got(req.tpot) == pytest.approx((3, 5 / 3, math.sqrt(8) / 3, 1.0, 2.6, 2.8, 2.96), rel=1e-14)
    # ITL: every gap, ten of 1 and the recompute's 3 (the preemption's wait in it, as a streaming client
    # sees it); no gap of the one-token request. Mean 13/11; variance (10 * (2/11)^2 + (20/11)^2) / 11 =
    # 40/121; median 1; p90 at index 9: 1; p95 at 9.5: 1 + 0.5 * 2 = 2; p99 at 9.9: 1 + 0.9 * 2 = 2.8
    assert _got(req.itl) == pytest.approx((11, 13 / 11, math.sqrt(40) / 11, 1.0, 1.0, 2.0, 2.8), rel=1e-14)
    # and numpy's functions of the same lists, bit for bit (std to within its pairwise sum's rounding)
    for m, x in ((req.ttft, TTFT), (req.e2el, E2EL), (req.tpot, TPOT), (req.itl, ITL)):
        got, want = _got(m), _numpy(x)
        assert got[:2] + got[3:] == want[:2] + want[3:], (got, want)
        assert got[2] == pytest.approx(want[2], rel=1e-15)


def test_totals_and_throughputs_are_over_the_measured_window():
    req = _run().result.requests
    # four requests over the horizon 10 (no arrival limit: the run's end is its horizon): 0.4 req/s;
    # output 1 + 6 + 6 + 2 = 15 tokens, input 4 + 4 + 4 + 8 = 20
    assert (req.completed, req.duration, req.total_input_tokens, req.total_output_tokens) == (4, 10.0, 20.0, 15.0)
    assert (req.request_throughput, req.output_throughput, req.total_token_throughput) == (0.4, 1.5, 3.5)


def test_goodput_and_attainment_are_vllms_by_hand():
    report = _run()

    def good(slo):
        report.set_slo(slo)
        r = report.result.requests
        return r.good, r.goodput, r.attainment

    # (ttft, tpot for goodput, e2el) of R1..R4: (1, 0, 1), (1, 1, 6), (2, 1, 7), (1, 3, 4). An SLO is met at
    # equality (vLLM's slo >= value), and the one-token R1 counts its TPOT as 0
    assert good({"ttft": 1.0, "tpot": 1.0}) == (2, 0.2, 0.5)        # R1, R2
    assert good({"tpot": 0.0}) == (1, 0.1, 0.25)                    # R1 alone
    assert good({"tpot": 2.999}) == (3, 0.3, 0.75)                  # all but R4's 3
    assert good({"e2el": 4.0}) == (2, 0.2, 0.5)                     # R1, R4
    assert good({"ttft": 0.999}) == (0, 0.0, 0.0)


def test_the_v1_phases_are_vllms_by_hand():
    req = _run().result.requests
    # queue = admitted - sent: 0 0 1 0; prefill = first - admitted: 1 1 1 1 (R4's first token came before its
    # preemption); decode = last - first: 0 5 5 3 (R4's preemption and recompute inside); infer = last -
    # admitted: 1 6 6 4. So queue + prefill is TTFT and queue + infer E2EL, request by request.
    assert _got(req.queue) == pytest.approx((4, 0.25, math.sqrt(3) / 4, 0.0, 0.7, 0.85, 0.97), rel=1e-14)
    assert _got(req.prefill) == (4, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0)
    # decode sorted 0 3 5 5: mean 13/4, median 4, p90 at 2.7: 5
    assert _got(req.decode)[:2] + _got(req.decode)[3:] == (4, 3.25, 4.0, 5.0, 5.0, 5.0)
    assert _got(req.infer)[:2] + _got(req.infer)[3:] == (4, 4.25, 5.0, 6.0, 6.0, 6.0)
    for m, x in ((req.queue, [0, 0, 1, 0]), (req.decode, [0, 5, 5, 3]), (req.infer, [1, 6, 6, 4])):
        assert _got(m)[:2] + _got(m)[3:] == _numpy(x)[:2] + _numpy(x)[3:]


def test_the_prefix_cache_hit_rate_is_hits_over_queries_of_first_lookups():
    # vLLM's counters (PrefixCacheStats.record) count, in tokens, each request not preempted before: queries
    # 4 + 4 + 4 + 8 = 20, hits 0 + 0 + 0 + 4; S0's lookups after its preemption (9 tokens, hit 8 at t=4
    # and t=5, 4 at t=6) go to preempted_queries / preempted_hits. With them it would be (4 + 20) / (20 + 27).
    report = _run()
    assert report.result.requests.prefix_cache_hit_rate == 4 / 20
    assert "prefix-cache hit rate 0.2" in serq_report.render(report, "text")


def test_preemptions_are_counted_once_a_preemption():
    result = _run().result
    kv = next(p for p in result.pools if p.name == "kv")
    # vLLM's num_preemptions_total: one PREEMPTED event (S0 at t=4); the records' column sums to it
    assert kv.preemptions == 1
    assert sum(r[8] for r in ROWS) == 1
    # the evictions: one block of S0's at t=5, S1's two at t=6 (S1's entry whole, S0's in part)
    assert (kv.evicted_units, kv.evicted_entries) == (12.0, 1)


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_warm_up_leaves_out_whole_requests_by_their_send_time(tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    # warm-up 2.5: R1..R3 (sent at 0) are out, R4 (sent at 3) is in, with its one gap (3); the window is 7.5
    for warmup in (2.5, 3.0):  # a request sent at the warm-up's very end is in (sent >= warmup)
        report = _run(warmup=warmup)
        assert _rows(report) == [R4]
        req = report.result.requests
        assert (req.completed, req.duration) == (1, 10.0 - warmup)
        assert (req.request_throughput, req.output_throughput) == (1 / (10 - warmup), 2 / (10 - warmup))
        assert req.total_token_throughput == 10 / (10 - warmup)
        assert _got(req.ttft) == (1, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0)
        assert _got(req.tpot) == _got(req.itl) == (1, 3.0, 0.0, 3.0, 3.0, 3.0, 3.0)
        assert req.prefix_cache_hit_rate == 4 / 8


def test_a_request_in_flight_at_the_horizon_has_no_row_and_its_gaps_so_far_count():
    # horizon 6.5: R3 and R4 are in flight. Their rows are absent (TTFT, TPOT, E2EL of R1 and R2 only), while
    # the ITL has every gap so far: S1's five, S2's four (2 -> 6); R4's recompute has not sampled yet
    report = _run(horizon=6.5)
    assert _rows(report) == [R1, R2]
    req = report.result.requests
    assert (req.completed, req.duration, req.ttft.count, req.tpot.count) == (2, 6.5, 2, 1)
    assert _got(req.itl) == (9, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0)


ARRIVALS = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 64; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage think : delay;
workload { arrive renewal(2); hidden o; }
session {
  set prompt = 4;
  set o = 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  run think (THINK);
}
run { horizon inf; warmup 0; arrivals 3; }
"""


def test_under_arrivals_n_the_window_ends_when_the_last_session_ends():
    # arrivals at 2, 4, 6 (renewal 2); each prefills 4 tokens in one iteration and samples 3 tokens: last
    # token at 5, 7, 9. With nothing after the request the run ends at 9, the last response, where vLLM's
    # benchmark duration ends: 3 / 9 req/s. A session that thinks 5 s after its request ends at 14, and
    # the window with it (language.txt: rates use end - warmup): 3 / 14, what docs/vllm.md says.
    for think, end in (("0", 9.0), ("5", 14.0)):
        report = _run(ARRIVALS.replace("THINK", think))
        rows = report.records(kind="numpy")
        assert (rows["sent"].tolist(), rows["last_token"].tolist()) == ([2.0, 4.0, 6.0], [5.0, 7.0, 9.0])
        req = report.result.requests
        assert (report.result.end, req.duration, req.request_throughput) == (end, end, 3 / end)



REFUSED = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 2 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage away : delay;
workload { arrive batch(2); hidden o; }
session {
  set prompt = serial == 0 ? 4 : 3;
  set o = serial == 0 ? 8 : 3;
  branch (serial == 1) { run away (10); }
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon inf; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_request_refused_on_re_admission_has_no_row_and_its_gaps_count(tier, monkeypatch):
    # S0 (prompt 4, output 8) on a KV pool of 2 blocks: prefill [0, 1], tokens at 1 2 3 4 5 (4 -> 8 tokens
    # computed); at 5 its 9th token needs a 3rd block: it preempts itself, and its re-admission, which
    # reserves its 9 known tokens, can never fit the cap 8: refused, the session ends (docs/vllm.md, "A
    # request refused after its first token"). S1 (sent at 10, prompt 3, output 3): tokens at 11 12 13, a row.
    # The run drains, and its ITL has S0's 4 gaps besides the row's 2 (vLLM's inter-token histogram has
    # them; its benchmark would count S0 as failed and leave them out).
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    report = _run(REFUSED)
    assert _rows(report) == [(1, 10.0, 10.0, 11.0, 13.0, 3, 3, 0, 0)]
    kv = report.pool("kv")
    assert (kv.preemptions, kv.rejections) == (1, 1)
    assert report.observe("ttft").values.tolist() == [1.0, 1.0]    # S0's first token is observed
    req = report.result.requests
    assert (req.completed, req.ttft.count, req.tpot.count, req.duration) == (1, 1, 1, 13.0)
    assert _got(req.itl) == (4 + 2, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0)


LOADED = """
use "vllm.sq";
pool reqs { cap SLOTS; admit via engine; }
pool kv { cap BLOCKS * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget BUDGET; cost 0.01 + 0.001 * tokens; memory kv; }
stage think : delay;
workload { arrive poisson(RATE); hidden o; }
session {
  set prompt = 1 + floor(~uniform(0, 40));
  set o = 1 + floor(~uniform(0, 30));
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  branch (~bernoulli(0.5)) {
    run think (~exp(1));
    set prompt = prompt + o + 5;
    set o = 1 + floor(~uniform(0, 10));
    set t0 = now;
    vllm_request(reqs, kv, engine, prompt, o, t0);
  }
}
run { horizon inf; warmup 2; arrivals 150; }
"""


@pytest.mark.parametrize("seed, slots, blocks, budget, rate", [(0, 4, 20, 8, 10), (6, 16, 30, 16, 5), (7, 2, 20, 64, 10)])
def test_the_report_is_vllms_benchmark_of_its_records_under_load(seed, slots, blocks, budget, rate):
    """vLLM's benchmark computed of the records with numpy (TTFT, TPOT only of more than one token and 0 for
    goodput, E2EL, throughputs over the window, goodput at ``slo >= value``), and the hit rate and the queue
    phase, on loaded multi-turn runs with preemptions (65, 24 and 30 in the records; 4, 159 and 0 requests
    good) and a warm-up of 2."""
    src = (LOADED.replace("SLOTS", str(slots)).replace("BLOCKS", str(blocks)).replace("BUDGET", str(budget))
           .replace("RATE", str(rate)))
    report = _run(src, seed=seed)
    slo = {"ttft": 0.2, "tpot": 0.02}
    report.set_slo(slo)
    d, req = report.records(kind="numpy"), report.result.requests
    assert d["preemptions"].sum() > 20 and len(d["sent"]) > 150
    ttft, e2el, out = d["first_token"] - d["sent"], d["last_token"] - d["sent"], d["output"]
    span = d["last_token"] - d["first_token"]
    tpot = span[out > 1] / (out[out > 1] - 1)
    tpot_for_goodput = np.where(out > 1, span / np.maximum(out - 1, 1), 0.0)
    window = report.result.end - 2.0
    for m, x in ((req.ttft, ttft), (req.tpot, tpot), (req.e2el, e2el), (req.queue, d["admitted"] - d["sent"])):
        got, want = _got(m), _numpy(x)
        assert got[:1] + got[3:] == want[:1] + want[3:]
        assert got[1:3] == pytest.approx(want[1:3], rel=1e-13)
    assert (req.request_throughput, req.output_throughput, req.total_token_throughput) == pytest.approx(
        (len(ttft) / window, out.sum() / window, (d["prompt"].sum() + out.sum()) / window), rel=1e-15)
    good = sum(1 for a, b in zip(ttft, tpot_for_goodput) if slo["ttft"] >= a and slo["tpot"] >= b)
    assert (req.good, req.goodput, req.attainment) == pytest.approx((good, good / window, good / len(ttft)),
                                                                    rel=1e-15)
    assert req.prefix_cache_hit_rate == d["cached"].sum() / d["prompt"].sum()

# -- percentiles: numpy's linear interpolation, on a hand set -----------------------------------------------

def test_percentiles_are_numpys_linear_interpolation_on_a_hand_set():
    # 1 .. 10: the virtual index (n - 1) * q / 100: p50 at 4.5 (5 + 0.5 = 5.5, the median of an even count);
    # p90 at 8.1: 9 + 0.1 = 9.1; p95 at 8.55: 9.55; p99 at 8.91: 9.91. Nearest rank would give 5, 9, 10, 10.
    s = stats_of([float(v) for v in (7, 3, 10, 1, 5, 2, 9, 4, 8, 6)])
    assert (s.median, s.p90, s.p95, s.p99) == pytest.approx((5.5, 9.1, 9.55, 9.91), rel=1e-14)
    x = [0.0, 10.0, 20.0, 30.0, 100.0]          # index 4 * 0.9 = 3.6: 30 + 0.6 * 70 = 72; p99 3.96: 97.2
    s = stats_of(x)
    assert (s.median, s.p90, s.p95, s.p99) == pytest.approx((20.0, 72.0, 86.0, 97.2), rel=1e-14)
    assert (s.median, s.p90, s.p95, s.p99) == tuple(float(np.percentile(x, q)) for q in (50, 90, 95, 99))
    one = stats_of([2.5])                         # a single value is every quantile; np.std of one is 0
    assert (one.count, one.std, one.median, one.p90, one.p99) == (1, 0.0, 2.5, 2.5, 2.5)


# -- metrics without a vLLM counterpart: time averages by hand and closed forms ------------------------------

@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_scenario_s_time_averages_by_hand(tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    # the KV pool's used units by the schedule: [0,1) 8, [1,2) 12, [2,3) 16, [3,4) 24, [4,5) 16, [5,6) 20,
    # [6,7) 24, [7,10) 0; cached: 0, 4, 4, 0, 8, 4, 0, then 16 over [7,10); request slots held: 2 2 2 3 2 2 2
    # then 0; waiting for a slot: S2 over [0,1), S0 over [4,6). Live sessions: S0 [0,7], S1 [0,6], S2 [0,7].
    # The engine runs an iteration over [0,7); its residents are the slot holders.
    cases = {
        0.0: dict(used=120 / 10, cached=68 / 10, holders=15 / 10, queue=3 / 10, wait=3 / 5, admissions=5,
                  live=20 / 10, util=7 / 10, its=7),
        # [2.5, 10]: half of [2,3) and the rest; the two admissions after 2.5 waited 0 (S0 at 3) and 2 (at 6)
        2.5: dict(used=(8 + 24 + 16 + 20 + 24) / 7.5, cached=(2 + 0 + 8 + 4 + 0 + 48) / 7.5,
                  holders=(1 + 3 + 2 + 2 + 2) / 7.5, queue=2 / 7.5, wait=1.0, admissions=2,
                  live=(4.5 + 3.5 + 4.5) / 7.5, util=4.5 / 7.5, its=4),
    }
    for warmup, want in cases.items():
        result = _run(warmup=warmup).result
        kv = next(p for p in result.pools if p.name == "kv")
        reqs = next(p for p in result.pools if p.name == "reqs")
        engine = next(s for s in result.stages if s.name == "engine")
        got = dict(used=kv.used, cached=kv.cached, holders=reqs.holders, queue=reqs.queue, wait=reqs.wait,
                   admissions=reqs.admissions, live=result.mean_live, util=engine.utilisation,
                   its=engine.iterations)
        assert got == pytest.approx(want, rel=1e-14), warmup
        assert reqs.used == reqs.holders == engine.present  # one slot a resident
        # the hold waits in the queue of its first pool, reqs: kv admits it with no wait and never queues it
        assert (kv.queue, kv.wait, kv.admissions) == (0.0, 0.0, want["admissions"])
        # Little's law over the slots' queue: waiting = admissions / window x mean wait (no hold queued at
        # either end of the window)
        assert reqs.queue == pytest.approx(reqs.admissions / (10 - warmup) * reqs.wait, rel=1e-14)


FIFO2 = """
stage s : fifo(2);
gauge busy_s = busy(s);
gauge at_s = queue(s);
workload { arrive batch(3); }
session { run s (serial + 1); }
run { horizon 5; warmup 0.5; }
"""

PS = """
stage p : ps(1);
workload { arrive batch(2); }
session { run p (1); }
run { horizon 4; warmup 0; }
"""


def test_fifo_and_ps_utilisation_and_queue_lengths_by_hand():
    # fifo(2), works 1 2 3 all at 0: servers busy [0,1) 2, [1,2) 2, [2,4) 1 (the third starts at 1 and ends
    # at 4); jobs present 3, 2, 1. Over [0.5, 5]: busy 1 + 2 + 2 = 5 server-seconds of 2 x 4.5; present
    # 1.5 + 2 + 2 = 5.5. Runs done after the warm-up: all three (one started before it counts whole): waits
    # 0 0 1, services 1 2 3.
    r = _run(FIFO2)
    s = r.stage("s")
    assert (s.utilisation, s.present) == pytest.approx((5 / 9, 5.5 / 4.5), rel=1e-14)
    assert (s.completions, s.throughput, s.wait, s.service) == pytest.approx((3, 3 / 4.5, 1 / 3, 2.0), rel=1e-14)
    g = r.result.gauges
    assert (g["busy_s"].mean, g["busy_s"].min, g["busy_s"].max) == pytest.approx((5 / 4.5, 0.0, 2.0), rel=1e-14)
    assert (g["at_s"].mean, g["at_s"].min, g["at_s"].max) == pytest.approx((5.5 / 4.5, 0.0, 3.0), rel=1e-14)
    assert r.result.mean_live == pytest.approx(5.5 / 4.5, rel=1e-14)
    # ps, two works of 1 at 0: shared, both end at 2. Utilisation is "some job present": 2 of 4; present 2
    # over [0, 2); service the time spent shared, 2, twice the work
    p = _run(PS).stage("p")
    assert (p.utilisation, p.present, p.completions, p.service) == (0.5, 1.0, 2, 2.0)


MM1 = """
let lam = 0.5;
pool m { cap 1; }
stage server : fifo;
gauge waiting = queued(m);
gauge in_system = queued(m) + holders(m);
gauge serving = holders(m);
workload { arrive poisson(lam); }
session {
  hold m (1) { run server (~exp(1)); }
  end;
}
run { horizon 50000; warmup 500; seed 1; }
"""


def test_an_mm1_queue_s_time_averages_meet_the_closed_forms():
    # M/M/1 at rho = 0.5: the time-average number waiting is rho^2 / (1 - rho) = 0.5, in the system rho /
    # (1 - rho) = 1, in service rho. The gauges' 95 % batch-means CIs (20 windows, seed 1, ~25 000 arrivals)
    # must cover each and be narrow, and the pool's and the stage's time averages are the gauges' means.
    rho = 0.5
    r = _run(MM1)
    g = r.result.gauges
    m, s = r.pool("m"), r.stage("server")
    for name, want, width in (("waiting", rho ** 2 / (1 - rho), 0.1), ("in_system", rho / (1 - rho), 0.1),
                              ("serving", rho, 0.03)):
        assert abs(g[name].mean - want) <= g[name].ci < width * want, (name, g[name])
    assert m.queue == g["waiting"].mean
    assert m.holders == m.used == s.utilisation == s.present == pytest.approx(g["serving"].mean, rel=1e-12)
    # Little's law for the queue, to within the requests waiting across the window's edges
    assert m.queue == pytest.approx(m.admissions / (50000 - 500) * m.wait, rel=0.01)


MM1_STAGE = """
let lam = 0.5;
stage server : fifo;
gauge in_system = queue(server);
gauge serving = busy(server);
workload { arrive poisson(lam); }
session {
  set t0 = now;
  run server (~exp(1));
  observe response = now - t0;
}
run { horizon 40000; warmup 400; seed 2; }
"""


def test_an_mm1_stage_s_figures_meet_the_closed_forms():
    # the same queue as a fifo stage: L = rho / (1 - rho) = 1 in the system, utilisation rho, the response
    # time exponential of rate mu - lambda = 0.5 (mean 2, median 2 ln 2, p90 2 ln 10). The stage's wait and
    # service are over the runs completed after the warm-up, the observe's samples taken at those completions:
    # their sum is the mean response, to rounding.
    rho = 0.5
    r = _run(MM1_STAGE)
    s, g, resp = r.stage("server"), r.result.gauges, r.stats("response")
    assert abs(g["in_system"].mean - rho / (1 - rho)) <= g["in_system"].ci < 0.1
    assert abs(g["serving"].mean - rho) <= g["serving"].ci < 0.02
    assert abs(resp.mean - 2.0) <= resp.ci < 0.1
    assert (s.present, s.utilisation) == pytest.approx((g["in_system"].mean, g["serving"].mean), rel=1e-12)
    assert s.wait + s.service == pytest.approx(resp.mean, rel=1e-12) and s.completions == resp.count
    # an observe's quantiles are nearest rank; about 20 000 correlated samples: within 3 to 6 iid standard errors
    assert resp.p50 == pytest.approx(2 * math.log(2), abs=0.1)
    assert resp.p90 == pytest.approx(2 * math.log(10), abs=0.25)
