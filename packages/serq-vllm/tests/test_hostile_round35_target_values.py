"""serq vllm target of settings at the edge of a double: each refusal shows the value it refuses.

A block of 16.000000000000004 tokens (``--set bs=16.000000000000004``) was refused as ``the block of memory
pool `kv` is 16: vLLM's block_size is a whole number``, which contradicts itself: the value is shown by
every digit where it is not whole. A KV pool whose cap passes the largest double (``cap blocks * bs`` of a
block of 1e308) said ``memory pool 'kv' has no cap``; it says the cap is inf.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

PROGRAM = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm.sq"


def _refusal(**sets: float) -> str:
    program = serq_frontend.compile(str(PROGRAM), sets=sets)
    with pytest.raises(UserError) as e:
        target(program, "vllm.sq")
    return str(e.value).replace(str(PROGRAM), "vllm.sq")  # (the span's file is the path compiled)


@pytest.mark.parametrize("name, value, said", [
    ("bs", 16.000000000000004, "vllm.sq:36:1: error: the block of memory pool `kv` is 16.000000000000004: "
                               "vLLM's block_size is a whole number, at least 1"),
    ("B", 2048.0000000000005, "vllm.sq:38:10: error: the engine's budget is 2048.0000000000005: vLLM's "
                              "max_num_batched_tokens is a whole number, at least 1"),
    ("max_seqs", 255.99999999999997, "vllm.sq:35:1: error: the cap of pool `reqs` is 255.99999999999997: vLLM's "
                                     "max_num_seqs is a whole number, at least 1"),
    ("bs", 0.9999999999999999, "vllm.sq:36:1: error: the block of memory pool `kv` is 0.9999999999999999: vLLM's "
                               "block_size is a whole number, at least 1"),
    ("bs", 5e-324, "vllm.sq:36:1: error: the block of memory pool `kv` is 5e-324: vLLM's block_size is a whole "
                   "number, at least 1"),
])
def test_a_fraction_that_shows_as_whole_is_shown_by_every_digit(name, value, said):
    assert _refusal(**{name: value}).splitlines()[0] == said


@pytest.mark.parametrize("sets", [{"bs": 1e308}, {"blocks": 1e308}, {"blocks": float("inf")}])
def test_a_kv_cap_past_the_largest_double_is_said_to_be_inf(sets):
    first = _refusal(**sets).splitlines()[0]
    assert first == ("vllm.sq:36:1: error: memory pool `kv`'s cap is inf: vLLM's num_gpu_blocks is a whole number "
                     "of blocks, and a KV cache without bound has none")


def test_the_whole_settings_beside_them_are_taken():
    # the same settings a whole number apart are a configuration (16 is the program's own block)
    program = serq_frontend.compile(str(PROGRAM), sets={"bs": 16.0, "B": 2048.0, "max_seqs": 256.0})
    config = target(program, "vllm.sq")["config"]
    assert (config["block_size"], config["max_num_batched_tokens"], config["max_num_seqs"]) == (16, 2048, 256)
    assert config["num_gpu_blocks"] == 8010 + 1
