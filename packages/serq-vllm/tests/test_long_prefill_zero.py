"""lib/vllm.sq's long_prefill(reqs, c), vLLM's long_prefill_token_threshold c: 0 is no cap, as in vLLM (it
cuts a chunk where 0 < threshold < tokens, scheduler.py:612-616), the same as inf. A step stage's chunk of 0
gives a prefill no token (language.txt §3), so `--set C=0` on a vLLM program, vLLM's default threshold,
paused every prefill while two requests were present and the engine stalled."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_report
import serq_sim

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[3]


def _report(c: float) -> str:
    program = serq_frontend.compile(ROOT / "examples" / "multi-turn" / "vllm_single_turn.sq", sets={"C": c})
    return serq_report.render(serq_sim.run(program, horizon=60, warmup=10), "json")


def test_a_threshold_of_0_is_no_cap():
    off = _report(float("inf"))
    assert '"completed": 0' not in off
    assert _report(0.0) == off


def test_a_threshold_caps_the_chunks():
    assert _report(64.0) != _report(float("inf"))  # (the test above has power: a cap changes the run)
