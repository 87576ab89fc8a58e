"""vLLM's benchmark metrics of a multi-turn schedule worked out by hand, through vLLM's own formulas.

vLLM's ``vllm bench serve`` computes its summary in ``calculate_metrics`` (vllm/benchmarks/serve.py) from one
``RequestFuncOutput`` a request: ``ttft``, ``latency`` (the E2E latency), ``itl`` (the list of gaps between
consecutive output tokens), ``output_tokens``, ``prompt_len``. :func:`vllm_calculate_metrics` below is that
function's arithmetic written out again (numpy's ``mean``, ``std``, ``median`` and ``percentile``, TPOT as
``(latency - ttft) / (output_len - 1)`` of the requests of more than one token and 0 in goodput otherwise,
goodput's ``slo >= value`` for each metric named, every rate over ``dur_s``). It is fed the requests of the
schedule below, written down by hand (not read from serQ), and the report must give its figures; the
per-request records must be the schedule's rows, the same in CSV and in Parquet, the same bytes each run.

lib/vllm.sq's engine: a token budget of 100 (every prompt is prefilled in one iteration), at most 2 requests
running (``reqs`` cap 2), a KV pool of 1 000 tokens (no preemption), the step's time
``0.5 + prefilled / 8 + decoders / 4`` (exact binary fractions, so every time below is exact). Session 0 sends
turn 1 at 0 (prompt 8, output 3), thinks 1 s after its answer and sends turn 2 (prompt 15: its 11 tokens so far
and 4 new, output 2); sessions 1, 2, 3 send one request each at 0.25 (16, 4), 0.5 (4, 2) and 6 (8, 3).

  [0, 1.5]         A1 prefills 8 (A1 sent 0 starts the idle engine): its token 1 at 1.5
  [1.5, 4.25]      A1 decodes; B admitted (2 running), prefills 16: 0.5 + 2 + 0.25; C waits (cap 2)
  [4.25, 5.25]     A1, B decode (0.5 + 0.5): A1's token 3 at 5.25, done; A thinks until 6.25
  [5.25, 6.5]      B decodes, C admitted, prefills 4 (0.5 + 0.5 + 0.25): C's first token at 6.5
                   D arrives at 6, A2 at 6.25: both wait (B and C run)
  [6.5, 7.5]       B, C decode: B's token 4 and C's token 2 at 7.5, both done (B first: served first)
  [7.5, 9.875]     D and A2 admitted; A2 hits 8 tokens of A1's cache (floor(11 / 4) blocks of 4) and
                   prefills 15 - 8 = 7, D prefills 8: 0.5 + 15 / 8. Both first tokens at 9.875
  [9.875, 10.875]  D, A2 decode: A2's token 2, done
  [10.875, 11.625] D decodes alone (0.75): its token 3, done; the run drains at 11.625

request  sent   admitted  first    last     prompt  output  cached  gaps
A1       0      0         1.5      5.25     8       3       0       2.75, 1
B        0.25   1.5       4.25     7.5      16      4       0       1, 1.25, 1
C        0.5    5.25      6.5      7.5      4       2       0       1
A2       6.25   7.5       9.875    10.875   15      2       8       1
D        6      7.5       9.875    11.625   8       3       0       1, 0.75

The simulation runs on the step engine, which every tier runs as the general engine does
(``conform.run`` checks the two reports are the same bytes).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conform import run

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

SOURCE = """\
use "vllm.sq";

pool reqs { cap 2; admit via engine; }
pool kv { cap 1000; block 4; evict lru; preempt lifo; }
stage engine : step {
  budget 100;
  cost 0.5 + 0.125 * prefilled + 0.25 * decoders;
  memory kv;
}
stage wait : delay;

workload {
  arrive batch(4);
  hidden o;
}

session {
  set delay = serial == 0 ? 0 : (serial == 1 ? 0.25 : (serial == 2 ? 0.5 : 6));
  set prompt = serial == 0 ? 8 : (serial == 1 ? 16 : (serial == 2 ? 4 : 8));
  set o = serial == 0 ? 3 : (serial == 1 ? 4 : (serial == 2 ? 2 : 3));
  branch (delay > 0) {
    run wait (delay);
  }
  turn;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  branch (serial == 0) {
    run wait (1);
    turn;
    set t0 = now;
    vllm_request(reqs, kv, engine, 15, 2, t0);
  }
}

run { horizon inf; warmup 0; }
"""

# (name, session, turn, sent, admitted, first, last, prompt, output, cached, gaps), in record order
HAND = [
    ("A1", 0, 1, 0.0, 0.0, 1.5, 5.25, 8, 3, 0, [2.75, 1.0]),
    ("B", 1, 1, 0.25, 1.5, 4.25, 7.5, 16, 4, 0, [1.0, 1.25, 1.0]),
    ("C", 2, 1, 0.5, 5.25, 6.5, 7.5, 4, 2, 0, [1.0]),
    ("A2", 0, 2, 6.25, 7.5, 9.875, 10.875, 15, 2, 8, [1.0]),
    ("D", 3, 1, 6.0, 7.5, 9.875, 11.625, 8, 3, 0, [1.0, 0.75]),
]
COLUMNS = ("session", "turn", "time", "sent", "admitted", "first_token", "last_token", "prompt", "output",
           "cached", "preemptions", "engine")


def hand_rows(names):
    return [(s, t, last, sent, adm, first, last, p, o, c, 0, 0)
            for n, s, t, sent, adm, first, last, p, o, c, _ in HAND if n in names]


def outputs(names, extra_gaps=()):
    """vLLM's ``RequestFuncOutput`` of each request named: its send time is the client's clock start, so
    ``ttft`` and ``latency`` are measured from it, ``itl`` the gaps after its first token."""
    out = [{"success": True, "ttft": first - sent, "latency": last - sent, "itl": list(gaps),
            "output_tokens": o, "prompt_len": p}
           for n, _, _, sent, _, first, last, p, o, _, gaps in HAND if n in names]
    return out, list(extra_gaps)


def vllm_calculate_metrics(outs, dur_s, goodput_config_dict, percentiles=(90, 95, 99), more_itls=()):
    """vllm/benchmarks/serve.py ``calculate_metrics``'s arithmetic, in seconds (it prints milliseconds), on
    outputs that all succeeded; ``more_itls`` the gaps serQ also counts of requests still in flight (none in a
    vLLM benchmark, which waits for every response)."""
    actual_output_lens, total_input, completed, good_completed = [], 0, 0, 0
    itls, tpots, all_tpots, ttfts, e2els = [], [], [], [], []
    for o in outs:
        output_len = o["output_tokens"]
        actual_output_lens.append(output_len)
        total_input += o["prompt_len"]
        tpot = 0.0
        if output_len > 1:
            latency_minus_ttft = o["latency"] - o["ttft"]
            tpot = latency_minus_ttft / (output_len - 1)
            tpots.append(tpot)
        all_tpots.append(tpot)
        itls += o["itl"]
        ttfts.append(o["ttft"])
        e2els.append(o["latency"])
        completed += 1
    itls += list(more_itls)
    if goodput_config_dict:
        valid_metrics, slo_values = [], []
        for name, values in (("ttft", ttfts), ("tpot", all_tpots), ("e2el", e2els)):
            if name in goodput_config_dict:
                valid_metrics.append(values)
                slo_values.append(goodput_config_dict[name])
        for req_metric in zip(*valid_metrics):
            if all(s >= r for s, r in zip(slo_values, req_metric)):
                good_completed += 1

    def summary(x):
        return {"mean": float(np.mean(x or 0)), "std": float(np.std(x or 0)), "median": float(np.median(x or 0)),
                **{f"p{p}": float(np.percentile(x or 0, p)) for p in percentiles}, "count": len(x)}

    return {
        "completed": completed, "total_input": total_input, "total_output": sum(actual_output_lens),
        "request_throughput": completed / dur_s, "request_goodput": good_completed / dur_s,
        "good": good_completed,
        "output_throughput": sum(actual_output_lens) / dur_s,
        "total_token_throughput": (total_input + sum(actual_output_lens)) / dur_s,
        "ttft": summary(ttfts), "tpot": summary(tpots), "itl": summary(itls), "e2el": summary(e2els),
    }


def assert_report_is(req, v):
    assert req.completed == v["completed"]
    assert (req.total_input_tokens, req.total_output_tokens) == (v["total_input"], v["total_output"])
    assert req.request_throughput == v["request_throughput"]
    assert req.output_throughput == v["output_throughput"]
    assert req.total_token_throughput == v["total_token_throughput"]
    for name in ("ttft", "tpot", "itl", "e2el"):
        m, want = getattr(req, name), v[name]
        got = {"count": m.count, "mean": m.mean, "std": m.std, "median": m.median, "p90": m.p90, "p95": m.p95,
               "p99": m.p99}
        assert got == pytest.approx(want, rel=1e-15, abs=0), name
        # the order statistics are numpy's bit for bit
        assert (m.median, m.p90, m.p95, m.p99) == (want["median"], want["p90"], want["p95"], want["p99"]), name


SLOS = {"ttft": 3.875, "tpot": 1.0, "e2el": 5.625}  # each the value of some request exactly: D, C and A2, D


def test_the_records_are_the_hand_schedule(monkeypatch):
    report, _ = run(SOURCE, monkeypatch)
    rec = report.records(kind="numpy")
    assert tuple(rec) == COLUMNS
    got = list(zip(*(rec[c].tolist() for c in COLUMNS)))
    assert got == hand_rows({"A1", "B", "C", "A2", "D"})
    assert report.result.end == 11.625


def test_the_drained_run_is_vllms_calculate_metrics(monkeypatch):
    """horizon inf: the run ends at the last response (11.625), which is vLLM's benchmark duration (its clock
    starts before the first send, at 0), so every figure is the benchmark's, goodput under every combination of
    the three SLOs included, each SLO met exactly by some request (``<=``, vLLM's ``slo >= value``)."""
    report, _ = run(SOURCE, monkeypatch)
    req = report.result.requests
    outs, _ = outputs({"A1", "B", "C", "A2", "D"})
    v = vllm_calculate_metrics(outs, 11.625, {})
    assert req.duration == 11.625
    assert_report_is(req, v)
    # by hand, too: TTFT 1.5 4 6 3.625 3.875; TPOT 1.875 13/12 1 1 0.875; E2EL 5.25 7.25 7 4.625 5.625
    assert (req.ttft.mean, req.ttft.median, req.e2el.median) == (3.8, 3.875, 5.625)
    assert req.tpot.median == 1.0 and req.itl.count == 9 and req.itl.median == 1.0
    assert req.request_throughput == 5 / 11.625 and req.output_throughput == 14 / 11.625
    assert req.total_token_throughput == 65 / 11.625
    assert req.prefix_cache_hit_rate == 8 / 51
    # the goodput of every non-empty set of SLOs, against vLLM's count and a count by hand
    by_hand = {("ttft",): 3, ("tpot",): 3, ("e2el",): 3, ("ttft", "tpot"): 2, ("ttft", "e2el"): 3,
               ("tpot", "e2el"): 2, ("ttft", "tpot", "e2el"): 2}
    for k in range(1, 4):
        for names in itertools.combinations(("ttft", "tpot", "e2el"), k):
            slo = {n: SLOS[n] for n in names}
            report.set_slo(slo)
            got = report.result.requests
            want = vllm_calculate_metrics(outs, 11.625, slo)
            assert got.good == want["good"] == by_hand[names], names
            assert got.goodput == want["request_goodput"], names
            assert got.attainment == by_hand[names] / 5, names


def test_a_warm_up_and_a_horizon_cut_the_requests_as_documented(monkeypatch):
    """warm-up 0.25, horizon 11.25: A1 (sent 0, before the warm-up's end) is out whole, gaps and all; B, sent at
    the warm-up's end exactly, is in; D is in flight at 11.25 (its second token at 10.875, its third due at
    11.625): no row, its one gap so far (1) in the ITL (docs/language.md, "ITL"); the rates are over the window
    11.25 - 0.25 = 11 (vLLM's benchmark has neither: the figures are its formulas over these requests)."""
    src = SOURCE.replace("run { horizon inf; warmup 0; }", "run { horizon 11.25; warmup 0.25; }")
    report, _ = run(src, monkeypatch)
    rec = report.records(kind="numpy")
    assert list(zip(*(rec[c].tolist() for c in COLUMNS))) == hand_rows({"B", "C", "A2"})
    req = report.result.requests
    assert req.duration == 11.0
    outs, more = outputs({"B", "C", "A2"}, extra_gaps=[1.0])
    assert_report_is(req, vllm_calculate_metrics(outs, 11.0, {}, more_itls=more))
    assert req.itl.count == 3 + 1 + 1 + 1
    assert req.prefix_cache_hit_rate == 8 / 35
    report.set_slo({"ttft": 3.625})  # A2 exactly; B 4 and C 6 miss
    assert (report.result.requests.good, report.result.requests.goodput) == (1, 1 / 11)


def _records(tmp_path, name, *args):
    out = tmp_path / name
    prog = tmp_path / "hand.sq"
    prog.write_text(SOURCE)
    r = subprocess.run([SERQ, "run", str(prog), "--no-progress", "-o", str(tmp_path / "report.txt"),
                        "--records", str(out), *args], capture_output=True, timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr.decode()
    return out.read_bytes()


def test_csv_and_parquet_records_hold_the_hand_rows_the_same_bytes_each_run(tmp_path):
    import pandas as pd

    csv1, csv2 = _records(tmp_path, "a.csv"), _records(tmp_path, "b.csv")
    pq1, pq2 = _records(tmp_path, "a.parquet"), _records(tmp_path, "b.parquet")
    assert csv1 == csv2 and pq1 == pq2
    lines = csv1.decode().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    # integers as integers, times as the shortest text that reads back
    assert lines[4] == "0,2,10.875,6.25,7.5,9.875,10.875,15,2,8,0,0"
    c = pd.read_csv(tmp_path / "a.csv")
    p = pd.read_parquet(tmp_path / "a.parquet")
    assert list(p.columns) == list(COLUMNS)
    # turn is int32 in Parquet (docs/language.md, "Which record columns are integers"); CSV has no types
    assert str(p["turn"].dtype) == "int32"
    assert all(str(p[col].dtype) == "int64" for col in ("session", "prompt", "output", "cached", "preemptions",
                                                        "engine"))
    assert all(str(p[col].dtype) == "float64" for col in ("time", "sent", "admitted", "first_token",
                                                          "last_token"))
    hand = pd.DataFrame(hand_rows({"A1", "B", "C", "A2", "D"}), columns=list(COLUMNS))
    for frame in (c, p):
        assert [tuple(r) for r in frame.itertuples(index=False)] == [tuple(r) for r in hand.itertuples(index=False)]


def _by_name(rows):
    return {r.name: r for r in rows}


@pytest.mark.parametrize("window", ["drained", "cut"])
def test_the_engine_pool_and_stage_figures_are_the_hand_schedule(monkeypatch, window):
    """The same schedule's engine, pool and stage figures, each a sum over the table above divided by the window.

    Iterations (start: prefill tokens + decoders): 0: 8 + 0, 1.5: 16 + 1, 4.25: 0 + 2, 5.25: 4 + 1, 6.5: 0 + 2,
    7.5: 15 + 0, 9.875: 0 + 2, 10.875: 0 + 1. KV held (blocks of 4, grown as a decode's position passes a
    block): A1 8 then 12 from 1.5; B 16 then 20 from 4.25; C 4 then 8 from 6.5; A2 16 (its 8 reused and 7 new);
    D 8 then 12 from 9.875. Cached when released (the position reached, min(cache, computed), down to blocks):
    A1 8 at 5.25 (consumed by A2 at 7.5), B 16 and C 4 at 7.5, A2 16 at 10.875. Queue waits: B 1.25, C 4.75,
    D 1.5, A2 1.25. The delay stage holds B 0.25 s, C 0.5, D 6 and A's think 1 (busy over [0, 6.25]).

    ``cut`` is warm-up 0.25, horizon 11.25: the iteration planned at 0 is not counted, the one planned at 10.875
    is (planned after the warm-up: docs/simulator.md, "Engine statistics"); ``requests`` counts A1, done after
    the warm-up though sent before it (the records do not)."""
    src = SOURCE if window == "drained" else SOURCE.replace("run { horizon inf; warmup 0; }",
                                                            "run { horizon 11.25; warmup 0.25; }")
    report, _ = run(src, monkeypatch)
    res = report.result
    stages, pools = _by_name(res.stages), _by_name(res.pools)
    e, w, reqs, kv = stages["engine"], stages["wait"], pools["reqs"], pools["kv"]
    if window == "drained":
        span = 11.625
        want_engine = dict(iterations=8, prefill_only=2, decode_only=4, mixed=2, batch=14 / 8, tokens=52 / 8,
                           requests=5, completions=10, service=21 / 10)
        holders, kv_used, kv_cached, admissions, wait = 21.0, 273.0, 112.5, 5, 8.75 / 5
        delay_present, delay_busy, delay_done = 7.75, 6.25, 4
    else:
        span = 11.0
        # the iteration planned at 10.875 counts (1 decoder); its end, 11.625, is after the horizon
        want_engine = dict(iterations=7, prefill_only=1, decode_only=4, mixed=2, batch=13 / 7, tokens=44 / 7,
                           requests=4)
        holders = 20.375  # 1.25 + 7.5 + 4.5 + 6.75 + 0.375
        kv_used = 266.5   # A1 55, B 109, C 13, A2 54, D 35.5
        kv_cached = 99.0  # 8 x 2.25 + 20 x 3.375 + 36 x 0.375
        admissions, wait = 4, 8.75 / 4
        delay_present, delay_busy, delay_done = 7.0, 6.0, 4  # C 0.25, D 5.75, the think 1; B ends at 0.25
    for key, value in want_engine.items():
        assert getattr(e, key) == pytest.approx(value, rel=1e-14), key
    assert e.request_throughput == pytest.approx(want_engine["requests"] / span, rel=1e-14)
    assert e.token_utilisation == pytest.approx(want_engine["tokens"] / 100, rel=1e-14)
    assert e.utilisation == 1.0
    assert e.present == pytest.approx(holders / span, rel=1e-14)
    assert (reqs.holders, reqs.used) == pytest.approx((holders / span, holders / span), rel=1e-14)
    assert reqs.queue == pytest.approx(8.75 / span, rel=1e-14)
    assert (reqs.admissions, kv.admissions, reqs.wait) == (admissions, admissions, pytest.approx(wait, rel=1e-14))
    assert (kv.used, kv.cached) == pytest.approx((kv_used / span, kv_cached / span), rel=1e-14)
    assert (kv.preemptions, kv.evicted_entries, kv.rejections, kv.stuck) == (0, 0, 0, 0)
    assert w.present == pytest.approx(delay_present / span, rel=1e-14)
    assert w.utilisation == pytest.approx(delay_busy / span, rel=1e-14)
    assert w.completions == delay_done


def test_vllms_peak_concurrent_requests_is_the_records(monkeypatch):
    """vLLM's "Peak concurrent requests" (``max_concurrent_requests``: a sweep over each request's ``[start_time,
    start_time + latency)``, a departure before an arrival at one instant) is not in the report; the records give it
    (docs/vllm.md): over [6.25, 7.5) B, C, D and A2 are in flight, 4, the peak."""
    report, _ = run(SOURCE, monkeypatch)
    rec = report.records(kind="numpy")
    events = sorted([(s, 1) for s in rec["sent"].tolist()] + [(e, -1) for e in rec["last_token"].tolist()])
    now = peak = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    assert peak == 4


# The same program on a KV pool of 28 tokens (7 blocks): B's first decode needs a 5th block while A1 holds 3
# (12 + 20 > 28, nothing cached to evict), and B, the last admitted, preempts itself (lib/vllm.sq's lifo).
#   [0, 1.5]        A1 prefills 8
#   [1.5, 4.25]     A1 decodes (3rd block), B prefills 16: B's first token at 4.25
#   [4.25, 5]       B preempted at the planning (its 16 computed tokens cached); no admission after a
#                   preemption; A1 decodes alone (0.75): its last token at 5, done, 8 cached; A thinks to 6
#   [5, 6.125]      B admitted again (known 17, its own 16 reused, prefills 1), C admitted (prefills 4; one of
#                   A1's cached blocks evicted): B's recompute samples its token 2 (a gap of 1.875 across the
#                   preemption), C's first token
#                   D (its wait, scheduled at 0) and A2 (A's think, scheduled at 5) arrive at 6: D first
#   [6.125, 7.125]  B, C decode (C grows: A1's other block evicted): C done
#   [7.125, 8.875]  B decodes, D admitted (C's cached block evicted), prefills 8: B done, D's first token
#   [8.875, 11.5]   A2 admitted: A1's blocks are gone, its hit 0; prefills 15 beside D's decode (B's cached
#                   blocks evicted for both)
#   [11.5, 12.5]    D and A2 decode: both done
PREEMPTING = SOURCE.replace("pool kv { cap 1000;", "pool kv { cap 28;")
HAND_PREEMPTED = [  # (session, turn, sent, admitted, first, last, prompt, output, cached, preemptions, gaps)
    (0, 1, 0.0, 0.0, 1.5, 5.0, 8, 3, 0, 0, [2.75, 0.75]),
    (2, 1, 0.5, 5.0, 6.125, 7.125, 4, 2, 0, 0, [1.0]),
    (1, 1, 0.25, 1.5, 4.25, 8.875, 16, 4, 0, 1, [1.875, 1.0, 1.75]),
    (3, 1, 6.0, 7.125, 8.875, 12.5, 8, 3, 0, 0, [2.625, 1.0]),
    (0, 2, 6.0, 8.875, 11.5, 12.5, 15, 2, 0, 0, [1.0]),
]


def test_a_request_preempted_after_its_first_token_by_hand(monkeypatch):
    """B's row keeps its first admission (1.5) and first token (4.25), its hit of that admission (0, not the 16 it
    reused on its re-admission: vLLM's ``num_cached_tokens``), one preemption; its gaps are its tokens' (the one
    across the preemption 1.875), and the figures are vLLM's formulas of these requests, drained at 12.5."""
    report, _ = run(PREEMPTING, monkeypatch)
    rec = report.records(kind="numpy")
    cols = ("session", "turn", "sent", "admitted", "first_token", "last_token", "prompt", "output", "cached",
            "preemptions")
    assert list(zip(*(rec[c].tolist() for c in cols))) == [r[:-1] for r in HAND_PREEMPTED]
    assert rec["time"].tolist() == [r[5] for r in HAND_PREEMPTED]
    outs = [{"success": True, "ttft": f - s, "latency": la - s, "itl": gaps, "output_tokens": o, "prompt_len": p}
            for _, _, s, _, f, la, p, o, _, _, gaps in HAND_PREEMPTED]
    req = report.result.requests
    assert req.duration == report.result.end == 12.5
    assert_report_is(req, vllm_calculate_metrics(outs, 12.5, {}))
    assert req.tpot.count == 5 and req.itl.count == 9 and req.prefix_cache_hit_rate == 0.0
    # vLLM v1's phases: queue 0 4.5 1.25 1.125 2.875; B's prefill 4.25 - 1.5 holds no preemption, its decode
    # 8.875 - 4.25 holds the preemption and the recompute
    assert req.queue.mean == (0 + 4.5 + 1.25 + 1.125 + 2.875) / 5
    # decode 3.5 1 4.625 3.625 1, prefill 1.5 1.125 2.75 1.75 2.625
    assert (req.decode.mean, req.decode.median) == (13.75 / 5, 3.5)
    assert (req.prefill.mean, req.prefill.median) == (9.75 / 5, 1.75)
    pools, stages = _by_name(report.result.pools), _by_name(report.result.stages)
    kv, e = pools["kv"], stages["engine"]
    # one preemption; 6 admissions (B twice); A1's 8, C's 4 and B's 16 cached tokens evicted, 3 entries
    assert (kv.preemptions, kv.admissions, pools["reqs"].admissions) == (1, 6, 6)
    assert (kv.evicted_entries, kv.evicted_units) == (3, 28.0)
    assert (e.iterations, e.prefill_only, e.decode_only, e.mixed, e.requests) == (8, 2, 3, 3, 5)
    assert e.tokens == 60 / 8 and e.batch == 14 / 8  # 8 + 17 + 1 + 5 + 2 + 9 + 16 + 2 tokens
