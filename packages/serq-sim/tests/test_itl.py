"""The inter-token latency (step/tokens.py): the gaps between consecutive output tokens of a request,
kept as weighted runs; their statistics are those of the expanded gaps; on small step-clock programs
the gaps are the ones worked out by hand."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_sim.api import registries
from serq_sim.engine import Simulation
from serq_sim.metrics import stats_of
from serq_sim.step.tokens import TokenGaps


@pytest.mark.parametrize("seed", range(8))
def test_weighted_runs_give_the_statistics_of_the_expanded_gaps(seed):
    rng = random.Random(seed)
    g = TokenGaps()
    for _ in range(rng.randrange(1, 300)):
        v = rng.choice([0.02, 0.021, 0.5, rng.random(), 1e-3 * rng.randrange(1, 50)])
        g.add(v, rng.choice([1, 1, 2, 7, rng.randrange(1, 5000)]))
    x = g.expanded()
    assert len(g) == len(x)
    # runs merge when one repeats the value before it: no two neighbours are equal
    assert all(a != b for a, b in zip(g.values, g.values[1:]))
    got, want = g.stats(), stats_of(x)
    assert got.count == want.count
    for q in ("median", "p90", "p95", "p99"):
        assert getattr(got, q) == getattr(want, q)  # exact: the same order statistics
        assert getattr(got, q) == pytest.approx(float(np.percentile(x, {"median": 50}.get(q) or int(q[1:]))),
                                                rel=1e-12)
    assert got.mean == pytest.approx(want.mean, rel=1e-14)
    # vLLM's "Std ITL" (np.std of the gaps), from the runs without expanding them
    assert got.std == pytest.approx(float(np.std(x)), rel=1e-10, abs=1e-15)
    assert want.std == pytest.approx(float(np.std(x)), rel=1e-10, abs=1e-15)
    if len(x) >= 40:
        assert got.ci == pytest.approx(want.ci, rel=1e-9, abs=1e-15)
    else:
        assert math.isnan(got.ci)


PD = """
stage P : step { budget 64; cost 1; }
stage D : step { budget 64; cost 1; }
stage wire : delay;
stage think : delay;
workload { arrive batch(1); }
session {
  set t0 = now;
  prefill on P (10);
  run wire (0.5);
  prefill on D (1);
  set t1 = now;
  decode on D (4);
  record req { sent = t0; first_token = t1; last_token = now; output = 5; }
  run think (2);
  set t0 = now;
  decode on D (3);
  record req { sent = t0; first_token = t0 + 1; last_token = now; output = 3; }
}
run { horizon 100; warmup 0; }
"""


def test_a_transfer_opens_the_request_and_a_record_closes_it():
    """P prefills in [0, 1] (its token at 1 is the prefiller's, not the request's: a prefill that
    completes without a preemption opens a request); 0.5 on the wire; D's prefill in [1.5, 2.5] samples
    the first token, then 4 decodes at 3.5 … 6.5: 4 gaps of 1 (output 5). The record ends the request;
    after 2 s of thinking a request of 3 decode tokens (9.5 … 11.5): 2 gaps of 1, not one of 3 from the
    last request's token."""
    report = serq_sim.run(serq_frontend.compile(source=PD))
    rows = report.records(kind="numpy")
    assert rows["last_token"].tolist() == [6.5, 11.5]
    itl = report.result.requests.itl
    assert (itl.count, itl.mean, itl.p99) == (6, 1.0, 1.0)


LAZY = """
stage E : step { budget 8; cost 0.5 + 0.125 * tokens; }
workload { arrive poisson(1.5); }
session {
  set t0 = now;
  prefill on E (~uniform(1, 20) < 10 ? 3 : 12);
  set t1 = now;
  set o = 1 + floor(~exp(6));
  decode on E (o - 1);
  record req { sent = t0; first_token = t1; last_token = now; output = o; }
}
run { horizon 400; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_every_request_s_gaps_add_up_to_its_last_token_minus_its_first(tier, monkeypatch):
    """With every request drained and no warm-up, the gaps are out - 1 per request and add up to
    last - first: the ITL's count and total are the records' (lazy decoding and the per-job planning
    alike; chunked prefills that wait for budget, decoders that miss a round)."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=LAZY)
    sim = Simulation(prog, registries(), seed=3, horizon=math.inf, arrivals=300)
    report = sim.run()
    rows = report.records(kind="numpy")
    assert len(rows["output"]) == 300
    count = int(np.sum(rows["output"] - 1))
    spread = math.fsum(rows["last_token"] - rows["first_token"])
    itl = report.result.requests.itl
    assert itl.count == count
    assert itl.mean * count == pytest.approx(spread, rel=1e-12)
    # every gap is a whole number of iterations: at least the cheapest one (0.5 + 0.125)
    assert min(sim.token_gaps.values) >= 0.625


WARM = """
stage E : step { budget 64; cost 0.5 + 0.25 * tokens; }
stage wait : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run wait (3.5); }
  set t0 = now;
  prefill on E (4);
  set t1 = now;
  decode on E (5);
  record req { sent = t0; first_token = t1; last_token = now; output = 6; }
}
run { horizon 100; warmup 2; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_warm_up_applies_per_request_by_its_send_time(tier, monkeypatch):
    """An iteration costs 0.5 + 0.25 a token. Request A (session 0) is sent at 0, before the warm-up's end
    (2): its prefill of 4 takes [0, 1.5], its decodes end at 2.25, 3, 3.75 (one token: 0.75 each), then
    5.5 (B's prefill of 4 joins: 5 tokens, 1.75) and 6.5 (two decodes, 1): five gaps, all after the
    warm-up, none of which counts. Request B (session 1) is sent at 3.5, after it: its first token at
    5.5, its decodes at 6.5, 7.25, 8, 8.75, 9.5: gaps 1, 0.75, 0.75, 0.75, 0.75, all of which count."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    report = serq_sim.run(serq_frontend.compile(source=WARM))
    rows = report.records(kind="numpy")
    assert rows["sent"].tolist() == [3.5] and rows["last_token"].tolist() == [9.5]  # A's row is left out
    itl = report.result.requests.itl
    assert (itl.count, itl.mean, itl.median, itl.p99) == (5, 0.8, 0.75, pytest.approx(0.99))
    assert report.result.requests.tpot.mean == itl.mean  # B's one TPOT: (9.5 - 5.5) / 5


# long answers at a lower rate: many decoders sent before the warm-up decode lazily across it
LONG = LAZY.replace("exp(6)", "exp(60)").replace("poisson(1.5)", "poisson(0.3)")


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("warmup", [37.0, 150.0])
@pytest.mark.parametrize("src", [LAZY, LONG], ids=["short", "long"])
def test_after_a_warm_up_the_gaps_are_those_of_the_kept_records(tier, warmup, src, monkeypatch):
    """With a warm-up, every request drained: the ITL's count and total are those of the records the
    report keeps (sent after the warm-up's end), whatever the requests straddling it did (in the lazy
    planning too, where decoders sent before it are lazy after it: their rounds do not count)."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=src.replace("warmup 0", f"warmup {warmup:g}"))
    sim = Simulation(prog, registries(), seed=5, horizon=math.inf, arrivals=400)
    report = sim.run()
    if not tier:
        assert sim.stages[0].lazy_iterations > 0
    rows = report.records(kind="numpy")
    assert 0 < len(rows["output"]) < 400 and rows["sent"].min() >= warmup
    count = int(np.sum(rows["output"] - 1))
    spread = math.fsum(rows["last_token"] - rows["first_token"])
    itl = report.result.requests.itl
    assert itl.count == count
    assert itl.mean * count == pytest.approx(spread, rel=1e-12)
