"""The simulation and its step stages keep every attribute the engine sets in a slot (``__slots__``: an
instance with more than 30 attributes in its dict has each method call and attribute read looked up by
name, which a step stage pays every iteration). A run of every example, of the step engine's stress programs
and of a scenario on both tiers leaves nothing in their dicts: an attribute added to the engine without its
slot fails here, by name. (The dicts stay open to others: a plugin may still set its own.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import serq_frontend
from tiers import run_on_tier

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
PROGRAMS = sorted(
    [str(p) for p in (ROOT / "examples").rglob("*.sq") if p.relative_to(ROOT / "examples").parts[0] != "plugins"]
    + [str(p) for p in (HERE / "lazy").glob("*.sq")]
    + [str(ROOT / "bench" / "vllm_single.sq")]
)


def _check(sim) -> None:
    assert not vars(sim), f"Simulation attributes outside __slots__: {sorted(vars(sim))}"
    for st in sim.step_stages:
        assert not vars(st), f"StepStage attributes outside __slots__: {sorted(vars(st))}"


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: Path(p).relative_to(ROOT).as_posix())
def test_a_run_sets_only_slots(path, tier):
    program = serq_frontend.compile(path)
    # a short run: 40 arrivals drained for a program that counts them (no warm-up: 40 requests at 4 a second
    # drain before 10 s, which would measure nothing), else 120 s after a warm-up of 10
    span = (dict(arrivals=40, horizon=1e9, warmup=0.0) if program.run.arrivals is not None
            else dict(horizon=120.0, warmup=10.0))
    sim, outcome, _ = run_on_tier(program, tier, seed=2, **span)
    assert outcome[0] == "report", outcome
    _check(sim)


def test_a_scenario_run_sets_only_slots():
    from serq_vllm.scenarios import scenario_program

    data = json.loads((ROOT / "bench" / "scenario_1000.json").read_text())
    program, _chains = scenario_program(data)
    sim, outcome, _ = run_on_tier(program, "")
    assert outcome[0] == "report", outcome
    _check(sim)


def test_the_dicts_stay_open():
    program = serq_frontend.compile(str(ROOT / "bench" / "vllm_single.sq"))
    sim, _outcome, _ = run_on_tier(program, "", arrivals=5, horizon=1e9)
    sim.a_plugins_own = 1
    sim.step_stages[0].a_plugins_own = 2
    assert vars(sim) == {"a_plugins_own": 1} and vars(sim.step_stages[0]) == {"a_plugins_own": 2}
