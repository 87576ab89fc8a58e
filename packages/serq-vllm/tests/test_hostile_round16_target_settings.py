"""serq vllm target refuses, at the construct, a configuration vLLM refuses or serQ cannot state exactly.

* ``max_num_seqs`` above ``max_num_batched_tokens`` (vLLM's SchedulerConfig refuses it at start-up, and
  ``serq vllm scenario`` refuses such a scenario) was printed as a target.
* A setting not below 2**53 (``--set max_seqs=1e300``) was printed as the 301 digits of the double nearest
  it: serQ's numbers are doubles, which hold every whole number only below 2**53 (the scenario check
  refuses such a setting for the same reason).
* A KV pool of no whole block (``--set blocks=0``, or a cap below one block) was printed as ``num_gpu_blocks: 1``,
  vLLM's null block alone: a cache vLLM does not start and a pool that rejects every request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq.errors import UserError
from serq_vllm.target import target

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = ROOT / "examples" / "multi-turn" / "vllm_single_turn.sq"  # B = 2048, max_seqs = 256, bs = 16


def _target(**sets: float) -> dict:
    return target(serq_frontend.compile(PROGRAM, sets=sets), base=PROGRAM.name)


def _line(text: str) -> int:
    return next(i for i, t in enumerate(PROGRAM.read_text().splitlines(), 1) if t.startswith(text))


@pytest.mark.timeout(60)
def test_max_num_seqs_above_the_budget_is_refused_at_the_pool():
    with pytest.raises(UserError) as e:
        _target(max_seqs=4096)
    said = str(e.value)
    assert said.startswith(f"{PROGRAM}:{_line('pool reqs')}:1: error: the cap of pool `reqs` is 4096, above "
                           "the engine's budget 2048: vLLM refuses max_num_seqs > max_num_batched_tokens"), said
    # as many sequences as tokens is vLLM's bound itself, and a target
    assert _target(max_seqs=2048)["config"]["max_num_seqs"] == 2048


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sets, where, setting", [
    ({"max_seqs": 1e300}, "pool reqs", "max_num_seqs"),
    ({"B": 2.0**53}, "  budget B", "max_num_batched_tokens"),
    ({"bs": 2.0**53}, "pool kv", "block_size"),
    ({"blocks": 2.0**53}, "pool kv", "num_gpu_blocks"),
])
def test_a_setting_not_below_2_53_is_refused(sets, where, setting):
    with pytest.raises(UserError) as e:
        _target(**sets)
    said = str(e.value)
    assert said.startswith(f"{PROGRAM}:{_line(where)}:"), said
    assert "not below 2**53" in said and said.splitlines()[0].endswith(f"no whole number for vLLM's {setting}"), said


@pytest.mark.timeout(60)
def test_settings_just_below_2_53_are_exact():
    big = 2**53 - 1
    config = _target(B=float(big), max_seqs=float(big))["config"]
    assert (config["max_num_batched_tokens"], config["max_num_seqs"]) == (big, big)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sets", [{"blocks": 0}, {"blocks": 0.5}])
def test_a_kv_pool_of_no_whole_block_is_refused_at_the_pool(sets):
    with pytest.raises(UserError) as e:
        _target(**sets)
    said = str(e.value)
    cap = "0" if sets["blocks"] == 0 else "8"
    assert said.startswith(f"{PROGRAM}:{_line('pool kv')}:1: error: memory pool `kv` holds no whole block (its cap "
                           f"{cap} / its block 16): vLLM's num_gpu_blocks would be its null block alone"), said
    # one whole block is a target: the block and vLLM's null block
    assert _target(blocks=1)["config"]["num_gpu_blocks"] == 2
