"""A step stage's ``token_utilisation`` under a finite budget so large that its sum over the iterations passes
the largest double (``budget 1e308``: inf after two iterations) is the tokens over that budget, not NaN: it was
NaN, the figure of an infinite budget (docs/simulator.md), because the sum of the budgets was inf. An infinite
budget is still NaN, and a budget whose sum stays finite is as before. On both tiers."""

from __future__ import annotations

import math

import pytest
import serq_frontend
from tiers import same_json

#: one session: a 100-token prefill (its first token) and 4 decode tokens, one iteration each, a budget that
#: never binds: 5 iterations of 104 tokens in all
PROGRAM = """let B = 512;
pool kv { cap 1000; block 16; }
stage e : step { budget B; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (100) {
    prefill on e (100) growing kv;
    decode on e (4) growing kv;
  }
  end;
}
run { horizon 100; warmup 0; seed 1; }
"""


def _engine(monkeypatch, budget: float) -> dict:
    prog = serq_frontend.compile(source=PROGRAM, sets={"B": budget}, defs={})
    (stage,) = same_json(prog, monkeypatch)["stages"]
    assert (stage["iterations"], stage["tokens"]) == (5, 104 / 5)
    return stage


@pytest.mark.parametrize("budget", [1e308, 1.7976931348623157e308, 512.0, 1e307])
def test_the_tokens_over_the_budget(monkeypatch, budget):
    # 104 tokens over 5 budgets; 5e308 is no double, but 20.8 / 1e308 is one
    assert _engine(monkeypatch, budget)["token_utilisation"] == pytest.approx(104 / 5 / budget, rel=1e-12)


def test_an_infinite_budget_is_still_no_utilisation(monkeypatch):
    assert _engine(monkeypatch, math.inf)["token_utilisation"] is None  # (NaN, null in the JSON)
