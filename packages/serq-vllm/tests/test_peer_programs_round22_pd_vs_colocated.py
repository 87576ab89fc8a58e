"""examples/pd-disaggregation/pd_vs_colocated.sq: one request through the disaggregated path by hand, and the
co-located path equal to a program of N vLLM engines behind the same router, on both tiers.

The example runs the same GPUs as NP prefill and N - NP decode engines (disagg = 1: the prefill member
prefills, the decode member reads all but the last prompt token over a delay of x0 + (prompt - 1) / bw,
computes that token and samples the first, then the rest) or as N co-located lib/vllm.sq engines
(disagg = 0), so that serq compare runs both on the same sessions. A session of one turn of 100 prompt tokens
and 5 output tokens at a constant step cost of 10 ms: the prefill member's one iteration ends at 0.01, the
transfer at 0.01 + 0.002 + 99 / 170000, the decode member's first iteration (the first token) 0.01 later,
and its four decode iterations 0.04 after that.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

pytestmark = [pytest.mark.timeout(120), pytest.mark.parametrize("tier", ["", "general"])]

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "pd-disaggregation" / "pd_vs_colocated.sq"

COLOCATED = """use "vllm.sq";
use "step_costs.sq";
let N = 4;
let B = 2048;
let bs = 16;
let blocks = 8010;
let Lambda = 1;
let E_n = 400;
let E_o = 200;
let p_more = 0.8;
let Z = 5;
pool reqs[N] { cap 256; admit via engine; }
pool kv[N] { cap blocks * bs; block bs; evict lru; preempt lifo; }
stage engine[N] : step { budget B; cost a100_qwen3_8b(); memory kv; }
stage tool : delay;
workload {
  arrive poisson(Lambda);
  hidden o;
  init { set K = 0; }
  turn {
    set n = 1 + floor(~exp(E_n));
    set o = 1 + floor(~exp(E_o));
    set more = ~bernoulli(p_more);
  }
}
session {
  turn;
  loop {
    set prompt = K + n;
    set t0 = now;
    choose j in N by (-min(cachedin(kv[j]), reusable(prompt, bs)), holders(reqs[j]) + queued(reqs[j]));
    vllm_request(reqs[j], kv[j], engine[j], prompt, o, t0);
    set K = prompt + o;
    branch (more) {
      tool (~exp(Z));
      turn;
    } else {
      end;
    }
  }
}
run { horizon 600; warmup 60; seed 1; }
"""


def _source(**swap: str) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in swap.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def test_one_request_disaggregated_by_hand(tier, tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    src = _source(**{"set n = 1 + floor(~exp(E_n));": "set n = 100;", "set o = 1 + floor(~exp(E_o));": "set o = 5;",
                     "cost a100_qwen3_8b();": "cost 0.01;"})
    (tmp_path / "pd.sq").write_text(src)
    program = serq_frontend.compile(tmp_path / "pd.sq", sets={"p_more": 0})
    report = serq_sim.run(program, seed=1, horizon=float("inf"), warmup=0.0, arrivals=1)
    rows = report.records()
    assert len(rows) == 1
    row = rows.iloc[0]
    first = 0.01 + 0.002 + 99 / 170000 + 0.01
    assert (row.sent, row.admitted, row.prompt, row.output, row.cached, row.preemptions) == (0, 0, 100, 5, 0, 0)
    assert row.first_token == pytest.approx(first, rel=1e-12)
    assert row.last_token == pytest.approx(first + 0.04, rel=1e-12)
    # the decode member is the lightest loaded of the members from NP = 2 on: member 2
    assert row.engine == 2
    assert report.result.observes["ttft"].mean == pytest.approx(first, rel=1e-12)
    assert report.result.requests.ttft.mean == pytest.approx(first, rel=1e-12)


def test_colocated_is_n_vllm_engines_behind_the_same_router(tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    example = serq_sim.run(serq_frontend.compile(EXAMPLE, sets={"disagg": 0}), seed=2, horizon=300.0)
    plain = serq_sim.run(serq_frontend.compile(source=COLOCATED), seed=2, horizon=300.0)
    a, b = example.result, plain.result
    assert a.events == b.events and a.arrivals == b.arrivals and a.ended == b.ended
    assert a.requests.ttft == b.requests.ttft and a.requests.tpot == b.requests.tpot
    assert example.records().equals(plain.records())
