"""Every shipped oracle scenario, run through lib/vllm.sq's vllm_request, matches the real scheduler."""

from __future__ import annotations

import json

import pytest
from serq_vllm.scenarios import answer_path, compare, list_scenarios, run_scenario

SCENARIOS = list_scenarios()


def test_the_shipped_scenarios_are_all_there():
    names = {s.name for s in SCENARIOS}
    for expected in ("vllm/alone", "vllm/chunked", "vllm/hol", "vllm/longchunk", "vllm/mixed",
                     "vllm/multiturn", "vllm/preempt", "vllm/seqcap", "vllm-serve/admission",
                     "vllm-serve/newest_first", "vllm-serve/newest_first_preempt", "vllm-serve/prefill_first"):
        assert expected in names


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario_matches_the_real_scheduler(scenario):
    sc = json.loads(scenario.path.read_text())
    expected = json.loads(answer_path(scenario.path).read_text())
    answer = run_scenario(sc)
    assert compare(answer, expected) == []
    assert answer["steps"] == expected["steps"]


def test_a100_engine_agrees_with_the_scheduler_answers():
    """The six classic scenarios measured on a real A100 engine give the scheduler's answers."""
    from serq_vllm.scenarios import ORACLE

    a100 = json.loads((ORACLE / "vllm" / "a100_engine.json").read_text())["results"]
    for name, measured in a100.items():
        expected = json.loads((ORACLE / "vllm" / f"{name}.out.json").read_text())
        assert measured["first"] == expected["first"] and measured["done"] == expected["done"], name
