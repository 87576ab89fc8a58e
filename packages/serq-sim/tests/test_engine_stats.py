"""A step stage's engine statistics (the report's stages and the text report's engine table): iterations
by composition, mean batch and tokens per iteration, token utilisation, completed requests; worked out by
hand on the step clock (cost 1: iteration k runs over [k, k + 1])."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_report
import serq_sim

TWO = """
stage E : step { budget 64; cost 1; }
stage think : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run think (1); }
  prefill on E (4);
  decode on E (2);
  record req { done = now; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_composition_batch_tokens_and_requests_by_hand(tier, monkeypatch):
    """A prefills its 4 tokens in [0, 1] (prefill-only: 1 job, 4 tokens); B arrives at 1: in [1, 2] A
    decodes and B prefills (mixed: 2 jobs, 5 tokens); in [2, 3] both decode (decode-only: 2, 2; A's
    last token at 3); in [3, 4] B alone (decode-only: 1, 1). 4 iterations of budget 64: 6 jobs, 12
    tokens; 2 requests completed over the 100 s run; busy 4 of 100 s."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    report = serq_sim.run(serq_frontend.compile(source=TWO))
    assert report.records(kind="numpy")["done"].tolist() == [3.0, 4.0]
    e = report.stage("E")
    assert (e.iterations, e.prefill_only, e.mixed, e.decode_only) == (4, 1, 1, 2)
    assert (e.batch, e.tokens, e.token_utilisation) == (6 / 4, 12 / 4, 12 / (4 * 64))
    assert (e.requests, e.request_throughput, e.utilisation) == (2, 2 / 100, 4 / 100)
    assert e.completions == 4  # runs: a prefill and a decode per request
    t = report.stage("think")
    assert t.requests is None and t.batch is None  # not a step stage
    text = serq_report.render(report, "text")
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("engine "))
    assert lines[k].split()[:5] == ["engine", "iterations", "prefill-only", "decode-only", "mixed"]
    row = lines[k + 1]
    assert row.split() == ["E", "4", "1", "2", "1", "1.5", "3", "0.046875", "0.04", "2", "0.02"]


def test_an_infinite_budget_has_no_token_utilisation():
    report = serq_sim.run(serq_frontend.compile(source=TWO.replace("budget 64", "budget inf")))
    e = report.stage("E")
    assert e.tokens == 3.0 and e.token_utilisation != e.token_utilisation  # NaN


def test_the_warm_up_leaves_out_earlier_iterations_and_requests():
    """Warm-up 2.5: the iteration planned at 3 (B's last decode) remains, and both requests (ended at 3 and 4)."""
    report = serq_sim.run(serq_frontend.compile(source=TWO.replace("warmup 0", "warmup 2.5")))
    e = report.stage("E")
    assert (e.iterations, e.decode_only, e.prefill_only, e.mixed, e.batch, e.tokens) == (1, 1, 0, 0, 1.0, 1.0)
    assert e.requests == 2


def test_a_request_without_a_record_ends_with_its_session():
    report = serq_sim.run(serq_frontend.compile(source=TWO.replace("record req { done = now; }", "")))
    assert report.stage("E").requests == 2


P_D = """
stage P : step { budget 64; cost 1; }
stage D : step { budget 64; cost 1; }
workload { arrive batch(3); }
session { prefill on P (10); prefill on D (1); decode on D (3); record r { x = 1; } }
run { horizon 100; warmup 0; }
"""


def test_a_prefiller_completes_the_requests_it_prefills():
    """The prefiller's token opens a request that the decoder's first token ends (P completes it), and
    the decoder's own first token opens the one the record ends."""
    report = serq_sim.run(serq_frontend.compile(source=P_D))
    assert (report.stage("P").requests, report.stage("D").requests) == (3, 3)
    assert report.stage("P").prefill_only == 1 and report.stage("P").batch == 3.0
