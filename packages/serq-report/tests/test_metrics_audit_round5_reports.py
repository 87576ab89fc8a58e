"""Every serving metric the three reports print for the shipped vLLM programs, recomputed with pandas from the
table ``serq run --records`` wrote beside them.

The truth is the records file (CSV, read back by pandas; the Parquet file of the same run must hold the same
values) and docs/language.md's definitions, applied here without serQ's code:

* the rows are the requests sent at or after the warm-up's end (``sent >= warmup``; a request sent before is out
  whole, one in flight at the horizon has no row), in record order;
* TTFT ``first_token - sent``, E2EL ``last_token - sent``, TPOT ``(last_token - first_token) / (output - 1)`` of
  the rows of more than one token; queue ``admitted - sent``, prefill ``first_token - admitted``, decode
  ``last_token - first_token``, infer ``last_token - admitted`` of the rows whose ``admitted`` is not negative;
* count; mean ``math.fsum / n``; std ``sqrt(fsum((x - mean)^2) / n)`` (numpy's population std, its sum exact);
  median and p90/p95/p99 ``np.median`` and ``np.percentile`` (linear); ci 2.093 times the standard error of the
  means of 20 consecutive batches of ``n // 20`` rows (NaN below 40);
* totals of ``prompt`` and ``output``; throughputs over the window ``horizon - warmup``; the prefix-cache hit
  rate ``sum(cached) / sum(prompt)``; goodput and attainment under ``--slo`` (TPOT 0 for one token, at or below
  its SLO is good).

The JSON report must hold those values to the last bit; the CSV report (``section,name,statistic,value``) the
same floats; the text report each as ``format(x, ".6g")`` (``±`` before a CI, ``nan`` for none). The JSON report
and the CSV records come of the default planning path, the CSV and text reports and the Parquet records of the
general one (``SERQ_SIM_TIER=general``), so that each comparison is also one of the two paths.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[3]
STATS = ("count", "mean", "std", "ci", "median", "p90", "p95", "p99")
SLO = {"ttft": 0.1, "tpot": 0.02, "e2el": 5.0}

# (program, its --set values, horizon, warm-up): a multi-turn engine short of KV blocks (preemptions and
# evictions), two replicas behind a router, a CPU offload tier (its hits in `cached`), prefill/decode
# disaggregation (a table without `cached`: no hit rate)
CASES = {
    "vllm": ("examples/multi-turn/vllm.sq", ["--set", "blocks=800", "--set", "Lambda=0.6"], 120, 20),
    "replicas": ("examples/multi-turn/vllm_replicas.sq", [], 80, 10),
    "offload": ("examples/multi-turn/offload.sq", [], 80, 10),
    "pd": ("examples/pd-disaggregation/llmd_nixl_pull.sq", [], 80, 10),
}


@pytest.fixture
def _serq(serq_in_process, monkeypatch):
    """``_serq(*args, tier="")``: ``serq ARGS`` with SERQ_SIM_TIER set to ``tier``, in this process
    (serq_in_process: what is checked is the reports and records it writes)."""

    def call(*args, tier=""):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_in_process(*args)
        assert r.returncode == 0, r.stderr
        return r

    return call


def _batch_means_ci(x):
    n = len(x)
    if n < 40:
        return math.nan
    size = n // 20
    means = [math.fsum(x[k * size:(k + 1) * size]) / size for k in range(20)]
    m = math.fsum(means) / 20
    return 2.093 * math.sqrt(math.fsum((b - m) ** 2 for b in means) / 19 / 20)


def _stats(series):
    x = [float(v) for v in series]
    n = len(x)
    if n == 0:
        return {"count": 0, **{k: math.nan for k in STATS[1:]}}
    m = math.fsum(x) / n
    return {"count": n, "mean": m, "std": math.sqrt(math.fsum((v - m) ** 2 for v in x) / n), "ci": _batch_means_ci(x),
            "median": float(np.median(x)), "p90": float(np.percentile(x, 90)), "p95": float(np.percentile(x, 95)),
            "p99": float(np.percentile(x, 99))}


def _truth(r: pd.DataFrame, window: float) -> dict:
    """The requests section as the records give it: {metric: {stat: value}} and the scalar figures."""
    metrics = {"ttft": _stats(r.first_token - r.sent), "e2el": _stats(r.last_token - r.sent),
               "tpot": _stats(((r.last_token - r.first_token) / (r.output - 1))[r.output > 1])}
    if "admitted" in r:  # the phases of the rows whose `admitted` is not negative; none without the column
        a = r[~(r.admitted < 0)]
        metrics |= {"queue": _stats(a.admitted - a.sent), "prefill": _stats(a.first_token - a.admitted),
                    "decode": _stats(a.last_token - a.first_token), "infer": _stats(a.last_token - a.admitted)}
    prompt, output = math.fsum(r.prompt), math.fsum(r.output)
    tpot = np.where(r.output > 1, (r.last_token - r.first_token) / (r.output - 1).clip(lower=1), 0.0)
    good = int(((r.first_token - r.sent <= SLO["ttft"]) & (tpot <= SLO["tpot"]) & (r.last_token - r.sent <= SLO["e2el"])).sum())
    scalars = {"completed": len(r), "duration": window, "total_input_tokens": prompt, "total_output_tokens": output,
               "request_throughput": len(r) / window, "output_throughput": output / window,
               "total_token_throughput": (prompt + output) / window, "good": good, "goodput": good / window,
               "attainment": good / len(r),
               "prefix_cache_hit_rate": math.fsum(r.cached) / prompt if "cached" in r else None}
    return {"metrics": metrics, "scalars": scalars}


def _equal(got, want, where):
    if want is None or (isinstance(want, float) and math.isnan(want)):
        assert got is None or (isinstance(got, float) and math.isnan(got)), (where, got)
    else:
        assert got == want, (where, got, want)


def _run(_serq, case, d):
    """The case's JSON report and CSV records on the default planning path, and its CSV and text reports and
    Parquet records on the general one (so each comparison below is also one of the two paths)."""
    path, sets, horizon, warmup = CASES[case]
    common = [str(ROOT / path), *sets, "--horizon", str(horizon), "--warmup", str(warmup), "--slo",
              ",".join(f"{k}={v}" for k, v in SLO.items()), "--no-progress"]
    _serq("run", *common, "--json", "-o", str(d / "r.json"), "--records", str(d / "r.csv"))
    _serq("run", *common, "--records", str(d / "r.parquet"), "--format", "csv", "-o", str(d / "r.report.csv"),
          tier="general")
    text = _serq("run", *common, tier="general").stdout
    return {"json": json.loads((d / "r.json").read_bytes()), "records": pd.read_csv(d / "r.csv"),
            "parquet": pd.read_parquet(d / "r.parquet"), "csv": (d / "r.report.csv").read_text(), "text": text,
            "window": float(horizon - warmup), "warmup": float(warmup), "case": case}


@pytest.mark.parametrize("case", list(CASES))
def test_the_three_reports_are_the_records_recomputed(case, tmp_path, _serq):
    run = _run(_serq, case, tmp_path)
    _json_is_the_records_recomputed(run)
    _parquet_records_hold_the_csv_records(run)
    _csv_report_holds_the_json_figures(run)
    _text_report_prints_the_json_figures_to_six_digits(run)


def _json_is_the_records_recomputed(run):
    recs, req = run["records"], run["json"]["requests"]
    assert (recs.sent >= run["warmup"]).all() and len(recs) > 40
    want = _truth(recs, run["window"])
    for name, stats in want["metrics"].items():
        for k, v in stats.items():
            _equal(req[name][k], v, (name, k))
    for k, v in want["scalars"].items():
        _equal(req[k], v, k)
    if "admitted" not in recs:
        assert all(req[k] is None for k in ("queue", "prefill", "decode", "infer"))
    # what the case exercises: an SLO some requests meet and some miss
    assert 0 < want["scalars"]["good"] < len(recs)
    if run["case"] == "vllm":
        assert recs.preemptions.sum() > 0
    if run["case"] == "replicas":
        assert set(recs.engine) == {0, 1}
    if run["case"] in ("vllm", "replicas", "offload"):
        assert 0 < want["scalars"]["prefix_cache_hit_rate"] < 1
    if run["case"] == "pd":
        assert "cached" not in recs and req["prefix_cache_hit_rate"] is None


def _parquet_records_hold_the_csv_records(run):
    a, b = run["records"], run["parquet"]
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        assert a[c].tolist() == b[c].tolist(), c


def _csv_report_holds_the_json_figures(run):
    rows = {(r["section"], r["name"], r["statistic"]): r["value"] for r in csv.DictReader(io.StringIO(run["csv"]))}
    req = run["json"]["requests"]
    seen = 0
    for name in ("ttft", "tpot", "itl", "e2el", "queue", "prefill", "decode", "infer"):
        if req[name] is None:  # (no `admitted` column: no phases, and no rows of them)
            assert not any(key[:2] == ("requests", name) for key in rows), name
            continue
        for k in STATS:
            v = req[name][k]
            cell = rows[("requests", name, k)]
            if v is None:
                assert cell in ("", "nan"), (name, k, cell)
            else:
                assert float(cell) == v, (name, k, cell, v)
            seen += 1
    for k in ("completed", "duration", "total_input_tokens", "total_output_tokens", "request_throughput",
              "output_throughput", "total_token_throughput", "good", "goodput", "attainment"):
        assert float(rows[("requests", "", k)]) == req[k], k
        seen += 1
    if req["prefix_cache_hit_rate"] is None:
        assert ("requests", "", "prefix_cache_hit_rate") not in rows
    else:
        assert float(rows[("requests", "", "prefix_cache_hit_rate")]) == req["prefix_cache_hit_rate"]
    assert seen == (74 if req["queue"] is not None else 42)


def _g(x):
    return "nan" if x is None else "0" if x == 0 else format(x, ".6g")


def _text_report_prints_the_json_figures_to_six_digits(run):
    req = run["json"]["requests"]
    lines = run["text"].splitlines()
    head = next(line for line in lines if line.startswith("requests ("))
    assert f"completed {req['completed']} over {_g(req['duration'])} s" in head
    assert f"{_g(req['request_throughput'])} req/s  output {_g(req['output_throughput'])} tok/s" in head
    if req["prefix_cache_hit_rate"] is not None:
        assert f"prefix-cache hit rate {_g(req['prefix_cache_hit_rate'])}" in head
    assert f"goodput {_g(req['goodput'])} req/s ({req['good']} of {req['completed']} good:" in head
    table = lines[lines.index(next(line for line in lines if line.startswith("metric "))) + 1:]
    for name in ("ttft", "tpot", "itl", "e2el", "queue", "prefill", "decode", "infer"):
        st = req[name]
        if st is None:
            assert not any(line.startswith(name + " ") for line in table[:8]), name
            continue
        row = next(line.split() for line in table if line.startswith(name + " "))
        ci = "nan" if st["ci"] is None else "±" + _g(st["ci"])
        assert row == [name, str(st["count"]), _g(st["mean"]), _g(st["std"]), ci, _g(st["median"]), _g(st["p90"]),
                       _g(st["p95"]), _g(st["p99"])], name


DRAINED = ["multi-turn/vllm.sq", "multi-turn/vllm_chat.sq", "multi-turn/vllm_replicas.sq", "multi-turn/offload.sq",
           "multi-turn/vllm_subagents.sq", "single-turn/vllm_sarathi.sq", "single-turn/vllm_priority.sq",
           "single-turn/vllm_bursts.sq", "pd-disaggregation/llmd_nixl_pull.sq", "pd-disaggregation/pd_vs_colocated.sq"]


@pytest.mark.parametrize("example", DRAINED)
def test_a_drained_run_s_itl_is_its_records_gaps(example, tmp_path, _serq):
    # docs/language.md, ITL: in a run that drains (arrivals N, no warm-up) the gaps are exactly the rows'
    # output - 1 gaps, which add up to last_token - first_token a row (a preempted request's wait in one of them;
    # a P/D request's first token the decoder's): so the ITL's count is sum(output - 1) and its mean times its
    # count sum(last_token - first_token), within the rounding of two sums of some 10^4 terms
    runs = {}
    for tier in ("", "general"):
        out, rec = tmp_path / f"r{tier}.json", tmp_path / f"r{tier}.csv"
        _serq("run", str(ROOT / "examples" / example), "--arrivals", "30", "--warmup", "0", "--json", "-o", str(out),
              "--records", str(rec), tier=tier)
        runs[tier] = (out.read_bytes(), rec.read_bytes())
    assert runs[""] == runs["general"]
    itl = json.loads(runs[""][0])["requests"]["itl"]
    recs = pd.read_csv(io.BytesIO(runs[""][1]))
    assert itl["count"] == int((recs.output - 1).sum()) > 1000
    assert itl["mean"] * itl["count"] == pytest.approx(math.fsum(recs.last_token - recs.first_token), rel=1e-12)
