"""lib/vllm.sq's request records and vLLM's serving metrics (TTFT, TPOT, E2E latency, throughputs,
goodput), checked against the real scheduler's first/done steps on every shipped oracle scenario and
against schedules worked out by hand on the step clock (cost 1: iteration k runs over [k, k + 1])."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq.cli import main
from serq_vllm.scenarios import answer_path, list_scenarios, read_scenario, scenario_program

SCENARIOS = [s.name for s in list_scenarios()]


@pytest.mark.parametrize("name", SCENARIOS)
def test_records_and_metrics_agree_with_the_oracle(name):
    sc = read_scenario(name)
    want = json.loads(answer_path(read_scenario.__globals__["ORACLE"] / f"{name}.json").read_text())
    program, chains = scenario_program(sc)
    report = serq_sim.run(program)
    rows = report.records("request", kind="numpy")
    index = {(s, t + 1): i for s, chain in enumerate(chains) for t, (i, _) in enumerate(chain)}
    got = {}
    for k in range(len(rows["session"])):
        i = index[(int(rows["session"][k]), int(rows["turn"][k]))]
        assert i not in got, f"request {i} has two rows"
        got[i] = {c: float(rows[c][k]) for c in rows}
    n = len(sc["requests"])
    assert sorted(got) == list(range(n))  # one row per request, none half-present
    for i in range(n):
        r = got[i]
        assert r["first_token"] == want["first"][str(i)], (i, r)
        assert r["last_token"] == want["done"][str(i)] == r["time"], (i, r)
        assert r["prompt"] == sc["requests"][i]["prompt"] and r["output"] == sc["requests"][i]["out"]
        if "preempted" in want:
            assert r["preemptions"] == want["preempted"][str(i)]
        if "cached" in want:
            assert r["cached"] == want["cached"][str(i)]
        assert r["engine"] == 0 and r["sent"] <= r["admitted"] <= r["first_token"]
    # the metrics from the oracle's steps: TTFT = first - sent, E2E = done - sent, TPOT = (done - first)
    # / (out - 1) over requests of more than one token
    sent = {i: got[i]["sent"] for i in range(n)}
    ttft = [want["first"][str(i)] - sent[i] for i in range(n)]
    e2el = [want["done"][str(i)] - sent[i] for i in range(n)]
    tpot = [(want["done"][str(i)] - want["first"][str(i)]) / (sc["requests"][i]["out"] - 1)
            for i in range(n) if sc["requests"][i]["out"] > 1]
    m = report.result.requests
    assert m.table == "request" and m.completed == n
    for st, values in ((m.ttft, ttft), (m.e2el, e2el), (m.tpot, tpot)):
        assert st.count == len(values)
        assert st.mean == pytest.approx(math.fsum(values) / len(values), rel=1e-12)
        assert st.median == pytest.approx(float(np.median(values)), rel=1e-12)
        assert st.p99 == pytest.approx(float(np.percentile(values, 99)), rel=1e-12)


CHUNKED = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 64 * 16; block 16; evict lru; preempt lifo; }
stage engine : step { budget 64; cost 1; memory kv; }
workload { arrive batch(2); hidden o; }
session {
  set prompt = serial == 0 ? 100 : 10;
  set o = serial == 0 ? 3 : 2;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 100; warmup 0; }
"""


def test_a_chunked_prefill_by_hand():
    """Budget 64, both sent at 0: A (prompt 100, 3 tokens) takes the whole budget in step 0; in step 1 A
    computes its last 36 and B (prompt 10, 2 tokens) its 10, both sample their first token at 2; step 2
    gives each its second (B done at 3), step 3 A its third (done at 4). TTFT 2, 2; E2E 4, 3; TPOT
    (4 - 2) / 2 = 1 and (3 - 2) / 1 = 1."""
    report = serq_sim.run(serq_frontend.compile(source=CHUNKED))
    rows = report.records(kind="numpy")
    by = {int(s): k for k, s in enumerate(rows["session"])}
    a, b = by[0], by[1]
    assert [rows["first_token"][a], rows["last_token"][a], rows["first_token"][b], rows["last_token"][b]] == \
        [2.0, 4.0, 2.0, 3.0]
    assert rows["admitted"][a] == 0.0 and rows["cached"][a] == 0.0 and rows["preemptions"][a] == 0.0
    m = report.result.requests
    assert (m.ttft.mean, m.e2el.mean, m.tpot.mean) == (2.0, 3.5, 1.0)
    assert (m.ttft.count, m.tpot.count, m.completed) == (2, 2, 2)
    # throughput over the measured window 0 … 100: 2 requests, 5 output and 115 total tokens
    assert (m.request_throughput, m.output_throughput, m.total_token_throughput) == (0.02, 0.05, 1.15)


PREEMPT = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 5 * 16; block 16; evict lru; preempt lifo; }
stage engine : step { budget 64; cost 1; memory kv; }
workload { arrive batch(2); hidden o; }
session {
  set prompt = 16;
  set o = 30;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 200; warmup 0; }
"""


def test_a_request_preempted_while_decoding_by_hand():
    """Two requests of prompt 16 and 30 tokens on 5 blocks of 16: step 0 prefills both (first tokens at
    1); they decode together, growing a block each 16 tokens; at 46 tokens (prompt 16 + 30) each needs 3
    blocks, 6 in all: when the pool runs out the later one (lifo) is preempted, keeps its outputs and
    resumes once the first is done. Its TPOT takes the wait in: (last - first) / 29 > 1 while the
    other's is exactly 1."""
    report = serq_sim.run(serq_frontend.compile(source=PREEMPT))
    rows = report.records(kind="numpy")
    by = {int(s): k for k, s in enumerate(rows["session"])}
    a, b = by[0], by[1]
    assert rows["first_token"][a] == rows["first_token"][b] == 1.0
    assert rows["preemptions"][a] == 0 and rows["preemptions"][b] >= 1
    assert rows["last_token"][a] == 30.0  # 29 decode steps after the first token, never held back
    tpot_a = (rows["last_token"][a] - 1.0) / 29
    tpot_b = (rows["last_token"][b] - 1.0) / 29
    assert tpot_a == 1.0 and tpot_b > 1.0
    m = report.result.requests
    assert m.tpot.mean == pytest.approx((tpot_a + tpot_b) / 2, rel=1e-15)
    assert m.e2el.mean == (rows["last_token"][a] + rows["last_token"][b]) / 2


def test_goodput_under_slos(tmp_path, capsys):
    path = tmp_path / "p.sq"
    path.write_text(CHUNKED)
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--no-progress", "--json", "--slo", "ttft=2,e2el=3.5"])
    out = capsys.readouterr()
    assert info.value.code == 0, out.err
    m = json.loads(out.out)["requests"]
    # TTFT 2 and 2 meet ttft <= 2; E2E 4 and 3: only B meets e2el <= 3.5
    assert (m["good"], m["goodput"], m["slo"]) == (1, 0.01, {"ttft": 2.0, "e2el": 3.5})
    for bad in ("ttft", "ttft=x", "itl=1", "ttft=-1", "ttft=1,ttft=2"):
        with pytest.raises(SystemExit) as info:
            main(["run", str(path), "--no-progress", "--slo", bad])
        err = capsys.readouterr().err
        assert info.value.code == 2 and "--slo" in err and "Traceback" not in err, err
