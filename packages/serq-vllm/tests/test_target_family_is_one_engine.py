"""docs/vllm.md: `serq vllm target` refuses a program of several step stages (P/D's prefill and decode
instances), while a family `stage engine[N]` is one step stage whose members are replicas of one vLLM
configuration: examples/multi-turn/vllm_replicas.sq (two replicas) has the target its settings say. The
doc said it refused "a program of several step engines", which the same page calls vllm_replicas.sq."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "vllm.md"


@pytest.mark.timeout(120)
def test_a_family_of_replicas_has_one_target():
    import serq_frontend
    from serq_vllm.target import target

    program = serq_frontend.compile(str(ROOT / "examples/multi-turn/vllm_replicas.sq"))
    steps = [s for s in program.stages if type(s.kind).__name__ == "Step"]
    assert len(steps) == 1  # the family engine[N], N = 2
    config = target(program)["config"]
    # the file's settings: B = 2048, max_seqs = 256, bs = 16, blocks = 8010 (+ vLLM's null block), C = inf
    assert config["max_num_batched_tokens"] == 2048 and config["max_num_seqs"] == 256
    assert config["block_size"] == 16 and config["num_gpu_blocks"] == 8011
    assert config["long_prefill_token_threshold"] == 0


def test_the_doc_says_a_family_is_one_target():
    text = " ".join(DOC.read_text().split())
    refusal = text[text.index("`serq vllm target` refuses"):text.index("`serve exclusive prefill`")]
    assert "several step stages" in refusal and "family" in refusal and "vllm_replicas.sq" in refusal
