"""Every example program compiles (``serq check``), its IR round-trips, and it has spans."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir
from sqhelpers import EXAMPLES, _pm

FILES = sorted(EXAMPLES.rglob("*.sq"))
REQUIRED = ["single-turn/mg1.sq", "single-turn/ps.sq", "multi-turn/closed.sq", "multi-turn/replica.sq",
            "multi-turn/routing.sq", "multi-turn/vllm.sq", "multi-turn/vllm_chat.sq",
            "multi-turn/vllm_single_turn.sq", "multi-turn/vllm_subagents.sq",
            "pd-disaggregation/llmd_nixl_pull.sq", "replay/vllm_replay.sq"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_compiles(path):
    p = serq_frontend.compile(path, pm=_pm())
    assert serq_ir.decode(serq_ir.encode(p)) == p
    assert p.source == str(path)
    for s in p.session:
        assert s.span is not None and s.span.line > 0


def test_the_required_examples_exist():
    missing = [r for r in REQUIRED if not (EXAMPLES / r).exists()]
    assert not missing
