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
from serq_vllm import scenarios
from serq_vllm.scenarios import answer_path, list_scenarios, read_scenario, scenario_program

SCENARIOS = [s.name for s in list_scenarios()]


@pytest.mark.parametrize("name", SCENARIOS)
def test_records_and_metrics_agree_with_the_oracle(name):
    sc = read_scenario(name)
    want = json.loads(answer_path(scenarios.ORACLE / f"{name}.json").read_text())
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
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--no-progress", "--slo", "ttft=nan"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "'ttft=nan': NaN is not a number of seconds" in err, err  # not "negative"


# ------------------------------------------------------------------ ITL: every gap between output tokens

def test_itl_of_a_chunked_prefill_by_hand():
    """CHUNKED with the cost 1 + tokens / 100: step 0 (A's 64 tokens) ends at 1.64, step 1 (A's last 36,
    B's 10) at 1.64 + 1.46, where both sample their first token; step 2 (two decodes) ends 1.02 later
    (A's second token, B's last), step 3 (one decode) 1.01 after that (A's last). The gaps: A's 1.02 and
    1.01, B's 1.02; each request's gaps add up to its last token minus its first."""
    report = serq_sim.run(serq_frontend.compile(source=CHUNKED.replace("cost 1;", "cost 1 + tokens / 100;")))
    t1 = 0.0 + (1 + 64 / 100)
    t2 = t1 + (1 + 46 / 100)
    t3 = t2 + (1 + 2 / 100)
    t4 = t3 + (1 + 1 / 100)
    rows = report.records(kind="numpy")
    by = {int(s): k for k, s in enumerate(rows["session"])}
    assert [rows["first_token"][by[0]], rows["last_token"][by[0]], rows["last_token"][by[1]]] == [t2, t4, t3]
    gaps = sorted([t3 - t2, t4 - t3, t3 - t2])
    itl = report.result.requests.itl
    assert itl.count == 3
    assert itl.mean == math.fsum(gaps) / 3
    assert (itl.median, itl.p99) == (float(np.median(gaps)), pytest.approx(float(np.percentile(gaps, 99)), rel=1e-15))
    assert math.isnan(itl.ci)  # below 40 gaps


def test_itl_of_a_preempted_request_by_hand():
    """PREEMPT: both sample their first token at 1 and decode one token a step. At the planning of step
    17 (t = 17) B, growing to its third block, finds none and preempts itself (lifo): its last token was
    at 17. A decodes on to its 30th token at 30; then B is admitted again with its 32 computed tokens
    cached, recomputes 1 token and samples its 18th token at 31 (the gap across the preemption: 31 - 17
    = 14), then its 12 others at 32 … 43. So 57 gaps of 1 and one of 14."""
    report = serq_sim.run(serq_frontend.compile(source=PREEMPT))
    rows = report.records(kind="numpy")
    by = {int(s): k for k, s in enumerate(rows["session"])}
    assert rows["last_token"][by[1]] == 43.0 and rows["preemptions"][by[1]] == 1
    gaps = [1.0] * 57 + [14.0]
    itl = report.result.requests.itl
    assert itl.count == 58 and itl.mean == 71 / 58
    assert itl.median == 1.0 and itl.p95 == 1.0
    assert itl.p99 == pytest.approx(float(np.percentile(gaps, 99)), rel=1e-15)  # 1 + 13 * 0.43
    # the CI over 20 batches of 2 gaps in time order: the 14 is the 46th gap (32 before 17, 13 of A's
    # alone after it), past the 40 that the batches take, so every batch mean is 1
    assert itl.ci == 0.0


@pytest.mark.parametrize("name", SCENARIOS)
def test_itl_agrees_with_the_oracle(name):
    """Each request has out - 1 gaps, which add up to done - first: over every request of a scenario,
    the ITL count is the sum of out - 1 and its mean the sum of done - first over it, both from the real
    scheduler's steps."""
    sc = read_scenario(name)
    want = json.loads(answer_path(scenarios.ORACLE / f"{name}.json").read_text())
    program, _ = scenario_program(sc)
    report = serq_sim.run(program)
    n = len(sc["requests"])
    count = sum(sc["requests"][i]["out"] - 1 for i in range(n))
    spread = math.fsum(want["done"][str(i)] - want["first"][str(i)] for i in range(n))
    itl = report.result.requests.itl
    assert itl.count == count
    if count:
        assert itl.mean == pytest.approx(spread / count, rel=1e-12)
        # every gap is a whole number of steps (the step clock), at least one
        assert itl.median >= 1.0 and itl.p99 <= max(want["done"].values())
