"""The bound of an idle step stage's budget (step/stall.py) over budgets that floor or ceil large values.

``floor`` and ``ceil`` of a finite bound were Python's ints: ``floor(residents + 1e308)`` bounded below by the
int of 1e308, and the product of two of them an int beyond the doubles, which the next subtraction could not
turn into a float. A run whose step stage sat idle at the end with such a budget ended in a Python traceback
(OverflowError: int too large to convert to float) in place of its report. The bounds are floats, as the
language's ``floor`` and ``ceil`` are: the product is inf, and the stage is judged as any other.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage E : step { budget BUDGET; cost 1; }
workload {
  arrive renewal(1);
}
session {
  run E prefill (4);
  run E decode (4);
}
run { horizon HORIZON; }
"""


def report(budget: str, monkeypatch, horizon: str = "10.5") -> dict:
    """The JSON report on the default tier and on the general engine, which must be the same bytes."""
    prog = serq_frontend.compile(source=PROGRAM.replace("BUDGET", budget).replace("HORIZON", horizon),
                                 sets={}, defs={})
    return same_json(prog, monkeypatch)


def forever(r: dict) -> list[str]:
    return [n for n in r["notes"] if "wait for ever" in n]


STALLED = ("warning: 10 sessions wait for ever at the end of the run (each waits at step stage E, whose budget "
           "cannot rise above 0 as jobs arrive, so no iteration ever starts): 10 at stage E, which will never "
           "complete them (sessions 0, 1, 2, 3, 4, …, in the run at <source>:6:3)")

BIG = "FN(residents + 1e308)"


@pytest.mark.parametrize("fn", ["floor", "ceil"])
def test_a_budget_over_floors_of_large_values_is_bounded(fn, monkeypatch):
    # with a resident, 0 - BIG * BIG is -inf (1e308 squared), so the budget is max(0, -inf) = 0 for ever: the
    # arrivals at t = 1 … 10 each wait, and the bound (BIG from 1e308 up, its square inf) says so
    big = BIG.replace("FN", fn)
    r = report(f"residents > 0 ? max(0, 0 - {big} * {big}) : 64", monkeypatch)
    assert (r["arrivals"], r["ended"], r["stages"][0]["iterations"]) == (10, 0, 0)
    assert forever(r) == [STALLED]


@pytest.mark.parametrize("fn", ["floor", "ceil"])
def test_a_budget_over_floors_of_large_values_that_may_rise_is_not_judged(fn, monkeypatch):
    # the same 0 while fewer than 21 residents wait, 64 from then on: at 10.5 the bound's top is 64 (residents
    # from 10 up), so the stage is not judged; run to 40.5, the 21st arrival (t = 21) starts it
    big = BIG.replace("FN", fn)
    budget = f"residents > 0 ? max(0, 0 - {big} * {big}) + (residents > 20 ? 64 : 0) : 64"
    r = report(budget, monkeypatch)
    assert (r["ended"], r["stages"][0]["iterations"]) == (0, 0) and forever(r) == []
    r = report(budget, monkeypatch, horizon="40.5")
    assert r["stages"][0]["iterations"] > 0 and r["ended"] > 0 and forever(r) == []


def test_a_budget_0_for_a_while_is_not_judged_and_serves_afterwards(monkeypatch):
    # floor(now) < 5: no token until t = 5, then 64; at the end (t = 10.5) the bound of floor(now) is [10, inf]
    # and the budget 64: no warning. The sessions that arrived at t = 1 … 4 are served from t = 5 (the arrival
    # there starts the stage), so every session but the last two (arrived at 9 and 10, their 8 tokens a step
    # of cost 1 each) has ended by 10.5
    r = report("floor(now) < 5 ? 0 : 64", monkeypatch)
    assert forever(r) == []
    assert r["ended"] >= 4 and r["stages"][0]["iterations"] > 0
