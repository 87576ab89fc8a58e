"""The example programs run to a report (short horizons), and what they report is sane."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# program, extra arguments, observes that must have samples
RUNS = {
    "multi-turn/vllm.sq": (["--horizon", "120"], ["ttft", "response", "full_hit"]),
    "multi-turn/vllm_chat.sq": (["--horizon", "120"], ["ttft", "response", "full_hit"]),
    "multi-turn/vllm_single_turn.sq": (["--horizon", "60"], ["ttft", "response"]),
    "multi-turn/vllm_subagents.sq": (["--horizon", "120"], ["ttft", "response", "full_hit"]),
    "multi-turn/vllm_replicas.sq": (["--horizon", "120"], ["ttft", "response", "full_hit"]),
    "multi-turn/vllm_shedding.sq": (["--arrivals", "100"], ["ttft", "response", "accepted", "shed"]),
    "replay/vllm_replay.sq": (["--arrivals", "12"], ["ttft", "response", "full_hit"]),
    "multi-turn/replica.sq": (["--horizon", "60"], ["ttft", "response", "hit"]),
    "multi-turn/routing.sq": (["--horizon", "200"], ["response", "hit"]),
    "pd-disaggregation/llmd_nixl_pull.sq": (["--horizon", "120"], ["ttft", "response"]),
    "multi-turn/closed.sq": (["--horizon", "300"], ["response"]),
    "single-turn/mg1.sq": (["--horizon", "300"], ["response"]),
    "single-turn/ps.sq": (["--horizon", "300"], ["response"]),
    "single-turn/vllm_priority.sq": (["--horizon", "300"], ["ttft", "response", "ttft_interactive", "ttft_batch"]),
    "single-turn/vllm_sarathi.sq": (["--horizon", "120"], ["ttft", "response"]),
}


@pytest.fixture
def run(serq_in_process):
    """``run(program, *args)``: the JSON report of ``serq run`` of the example (in this process: what is
    checked is the report's figures)."""

    def call(program: str, *args: str) -> dict:
        r = serq_in_process("run", str(ROOT / "examples" / program), "--no-progress", "--warmup", "0", "--json",
                            *args)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return call


@pytest.mark.parametrize("program", sorted(RUNS))
def test_example_runs_to_a_report(program, run):
    args, observes = RUNS[program]
    report = run(program, *args)
    for name in observes:
        ob = report["observes"][name]
        assert ob["count"] > 0, name
        assert ob["mean"] is not None and ob["mean"] >= 0, name
    if "ttft" in observes:
        # the first token comes before the last: a request's TTFT is below its response time
        assert report["observes"]["ttft"]["mean"] <= report["observes"]["response"]["mean"]
    for key in ("full_hit", "hit"):
        if key in observes:
            assert 0 <= report["observes"][key]["mean"] <= 1
    assert report["events"] > 0 and report["arrivals"] > 0


def test_the_replay_drains_exactly_its_arrivals(run):
    report = run("replay/vllm_replay.sq", "--arrivals", "12")
    assert report["arrivals"] == 12 and report["ended"] == 12
    assert report["end"] < report["horizon"]


def test_the_pd_program_moves_kv_over_the_nics(run):
    report = run("pd-disaggregation/llmd_nixl_pull.sq", "--horizon", "120")
    nics = [s for s in report["stages"] if s["name"].endswith(".nic")]
    assert nics and sum(s["completions"] for s in nics) > 0
