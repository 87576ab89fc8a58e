"""serQ's serving metrics against the ones vLLM 0.33.0 computes itself, on every oracle scenario the bridge runs.

metrics_oracle_round6.json holds, per scenario, what vLLM's own metric code said when the real scheduler ran
it on the step clock (scripts/make_metrics_oracle.py, log_stats on, its outputs fed to vLLM's
``IterationStats``): per finished request the ``FinishedRequestStats`` behind
``vllm:e2e_request_latency_seconds``, ``…_queue_time_seconds``, ``…_prefill_time_seconds``,
``…_decode_time_seconds``, ``…_inference_time_seconds``, ``vllm:request_time_per_output_token_seconds``,
``vllm:request_generation_tokens`` and ``vllm:request_num_preemptions``, and its TTFT
(``first_token_latency``, ``vllm:time_to_first_token_seconds``); every ``vllm:inter_token_latency_seconds``
value; ``vllm:num_preemptions``; and the prefix-cache counters (``queries``, ``hits``: ``vllm:prefix_cache_*``;
``preempted_queries``, ``preempted_hits``, kept apart by vLLM). The scenarios run through
``programs/scenario.sq`` (lib/vllm.sq, cost 1) on the tier serQ picks and on the general engine, which must give
the same report, and each request's record gives the same figures:

* TTFT = first_token - sent; E2E = last_token - sent; queue = admitted - sent; prefill = first_token -
  admitted; decode = last_token - first_token; inference = last_token - admitted (``admitted`` the first
  scheduling, as vLLM's ``scheduled_ts`` "ignore preemptions"); the records' ``preemptions`` and ``output``;
* the report's ``tpot`` is the benchmark's: vLLM's ``mean_time_per_output_token`` of the requests of more than
  one token (vLLM observes 0 for the others, which the report leaves out);
* the report's ``itl`` is vLLM's histogram's values: the same count, mean, std, median and quantiles (every
  request finishes in a scenario, so the gaps of requests in flight do not arise);
* the KV pool's ``preemptions`` is ``vllm:num_preemptions``, the sum of the records' column;
* the prefix-cache hit rate is ``hits / queries`` (0 / 0 with prefix caching off, where the rate is 0): a
  request counted once, at the step that admits it, and a preempted request's lookups left out (scheduler.py
  1508-1512; kv_cache_manager.py ``record_prefix_cache_stats``; stats.py ``PrefixCacheStats.record``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_sim
from serq_report.json import encode_json
from serq_vllm.scenarios import ORACLE, scenario_program

pytestmark = pytest.mark.timeout(120)

DATA = json.loads((Path(__file__).resolve().parent / "metrics_oracle_round6.json").read_text(encoding="utf-8"))
NAMES = sorted(DATA["scenarios"])


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def run_both(program, monkeypatch):
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(serq_sim.run(program))
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


def test_the_oracle_covers_every_scenario_the_bridge_runs():
    want = set()
    for folder in ("vllm", "vllm-serve", "generated"):
        for p in (ORACLE / folder).glob("*.json"):
            if p.name.endswith((".out.json", ".target.json")):
                continue
            sc = json.loads(p.read_text(encoding="utf-8"))
            if "requests" in sc:
                want.add(f"{folder}/{p.stem}")
    assert set(NAMES) == want and len(NAMES) >= 43
    assert DATA["vllm"] == "0.33.0"


@pytest.mark.parametrize("name", NAMES)
def test_the_report_gives_vllms_own_metrics(name, monkeypatch):
    sc = json.loads((ORACLE / f"{name}.json").read_text(encoding="utf-8"))
    want = DATA["scenarios"][name]
    program, chains = scenario_program(sc)
    index = {(serial, k + 1): i for serial, chain in enumerate(chains) for k, (i, _) in enumerate(chain)}
    r = run_both(program, monkeypatch)
    rec = r.records("request", kind="numpy")
    n = len(rec["sent"])
    assert n == len(want["requests"]) == len(sc["requests"])
    tpots = []
    for j in range(n):
        i = index[(int(rec["session"][j]), int(rec["turn"][j]))]
        v = want["requests"][str(i)]
        sent, admitted, first, last = (float(rec[c][j]) for c in ("sent", "admitted", "first_token", "last_token"))
        ours = {"first_token_latency": first - sent, "e2e_latency": last - sent, "queued_time": admitted - sent,
                "prefill_time": first - admitted, "decode_time": last - first, "inference_time": last - admitted,
                "num_generation_tokens": int(rec["output"][j]), "num_preemptions": int(rec["preemptions"][j])}
        for k, x in ours.items():
            assert close(x, v[k]), (i, k, x, v[k])
        if v["num_generation_tokens"] > 1:
            tpots.append(v["mean_time_per_output_token"])
        else:
            assert v["mean_time_per_output_token"] == 0
    m = r.result.requests
    assert m.tpot.count == len(tpots) and (not tpots or close(m.tpot.mean, float(np.mean(tpots))))
    itl = np.asarray(want["itl"], dtype=float)
    assert m.itl.count == len(itl)
    for ours, theirs in ((m.itl.mean, np.mean(itl)), (m.itl.std, np.std(itl)), (m.itl.median, np.median(itl)),
                         (m.itl.p90, np.percentile(itl, 90)), (m.itl.p99, np.percentile(itl, 99))):
        assert close(ours, float(theirs))
    kv = next(p for p in r.result.pools if p.name == "kv")
    assert kv.preemptions == want["num_preemptions"] == int(rec["preemptions"].sum())
    pc = want["prefix_cache"]
    if sc.get("prefix_caching"):
        assert close(m.prefix_cache_hit_rate, pc["hits"] / pc["queries"])
    else:
        assert pc == dict.fromkeys(pc, 0) and m.prefix_cache_hit_rate == 0
