"""A step stage whose iterations give less than a token that changes no job's work in floating point (a
budget of 1e-300 against a prompt of 1 000 tokens: ``1000 - 1e-300`` is ``1000``) made no progress for ever:
``--horizon inf`` never ended (``examples/multi-turn/vllm.sq --set B=1e-300 --arrivals 3``). Beyond
``DUST_ITERATIONS`` such iterations in a row, nothing else happening between them and the budget, chunk and
serve keys reading nothing that changes with the clock, the run is the error naming the stage's residents
(StepStage._dust), on both tiers; a budget below a token that does move a job, or one that reads the clock,
runs as before."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.step.stage import DUST_ITERATIONS
from tiers import same_error, same_json

pytestmark = pytest.mark.timeout(120)

# one request of 1 000 prompt tokens on an engine of cost 1 an iteration
PROGRAM = """pool kv { cap 4096; block 16; }
stage E : step { budget BUDGET; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  set t0 = now;
  hold kv (1000) { prefill on E (1000) growing kv; }
  observe response = now - t0;
}
run { horizon HORIZON; seed 1; }
"""


def _compile(budget: str, horizon: str = "inf"):
    return serq_frontend.compile(source=PROGRAM.replace("BUDGET", budget).replace("HORIZON", horizon))


def test_a_budget_too_small_to_move_the_work_is_an_error(monkeypatch):
    msg = same_error(_compile("1e-300"), monkeypatch)
    # the first iteration is 0 to 1; the error at the end of the one past the bound
    assert f"at t={DUST_ITERATIONS + 1}, session 0: no progress: {DUST_ITERATIONS} iterations of stage E" in msg
    assert "gave its jobs 1e-300 tokens, too few to change the work any of them has left" in msg
    assert "its residents are the run at <source>:6:20 of session 0" in msg


def test_under_a_horizon_too(monkeypatch):
    msg = same_error(_compile("1e-300", "5000"), monkeypatch)
    assert f"at t={DUST_ITERATIONS + 1}, session 0: no progress" in msg


def test_a_budget_below_a_token_that_moves_the_work_runs(monkeypatch):
    # half a token an iteration: 2 000 iterations of 1 s
    r = same_json(_compile("0.5"), monkeypatch)
    assert r["observes"]["response"]["mean"] == 2000.0


def test_a_budget_that_reads_the_clock_is_not_judged(monkeypatch):
    # 1e-300 until t = 1500 (1 500 such iterations, past the bound), then 512: two iterations of the prompt
    r = same_json(_compile("now >= 1500 ? 512 : 1e-300"), monkeypatch)
    assert r["observes"]["response"]["mean"] == 1502.0
