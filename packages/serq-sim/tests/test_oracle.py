"""The vLLM oracle: every recorded scenario reproduced exactly by the vllm_request program on the step clock
(first-token and last-token times per request, total preemptions, and cached tokens where recorded)."""

from __future__ import annotations

import pytest
import serq_sim
from vllm_program import HERE, answers, load, program

SCENARIOS = sorted(p.name[:-5] for p in HERE.glob("*.json") if not p.name.endswith(".out.json"))
SERVE = sorted(p.name[:-5] for p in (HERE / "serve").glob("*.json")
               if not p.name.endswith((".out.json", ".target.json")))


def _check(name: str, serve: bool) -> None:
    sc, expected = load(name, serve)
    prog, index = program(sc)
    got = answers(serq_sim.run(prog, check_invariants=True), index)
    for key in ("first", "done"):
        assert {int(k): v for k, v in got[key].items()} == {int(k): v for k, v in expected[key].items()}, key
    assert got["preemptions"] == expected["preemptions"]
    if "cached" in expected:
        assert {int(k): v for k, v in got["cached"].items()} == {int(k): v for k, v in expected["cached"].items()}


def test_all_scenarios_present():
    assert len(SCENARIOS) == 8 and len(SERVE) == 4


@pytest.mark.parametrize("name", SCENARIOS)
def test_vllm_scenario(name):
    _check(name, False)


@pytest.mark.parametrize("name", SERVE)
def test_vllm_serve_scenario(name):
    _check(name, True)


def test_the_oracle_can_fail():
    """The same scenario with another request cap gives other answers (the comparison can fail)."""
    sc, expected = load("hol")
    prog, index = program(dict(sc, max_seqs=1))
    got = answers(serq_sim.run(prog), index)
    assert got["first"] != {k: v for k, v in expected["first"].items()}
