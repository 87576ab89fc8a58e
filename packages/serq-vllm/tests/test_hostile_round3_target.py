"""serq vllm target with settings vLLM cannot take: one error at the construct, never a traceback nor a
setting cut short.

`--set B=inf` (an infinite budget, which serQ runs) ended in ``OverflowError: cannot convert float infinity
to integer``; a budget of 0.5 printed ``max_num_batched_tokens: 0``, a block of 2.5 tokens ``block_size:
2``, a ``max_seqs`` of 2.5 ``max_num_seqs: 2``: vLLM's settings are whole numbers of at least 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]
PROGRAM = ROOT / "examples" / "multi-turn" / "vllm.sq"


def _target(*sets: str, here=None) -> subprocess.CompletedProcess:
    """``serq vllm target vllm.sq --set …`` in the program's folder, as a child process; given ``here``
    (serq_in_process), serq.cli.main in the test's process, in that folder (a test of what is said)."""
    args = [a for s in sets for a in ("--set", s)]
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(PROGRAM.parent)
            return here("vllm", "target", "vllm.sq", *args)
    return subprocess.run([SERQ, "vllm", "target", "vllm.sq", *args], capture_output=True, text=True,
                          cwd=PROGRAM.parent, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("setting, message", [
    ("B=inf", "vllm.sq:38:10: error: the engine's budget is inf: vLLM's max_num_batched_tokens is a whole number, "
              "at least 1"),
    ("B=0.5", "vllm.sq:38:10: error: the engine's budget is 0.5: vLLM's max_num_batched_tokens is a whole number, "
              "at least 1"),
    ("B=0", "vllm.sq:38:10: error: the engine's budget is 0: vLLM's max_num_batched_tokens is a whole number, at "
            "least 1"),
    ("bs=2.5", "vllm.sq:36:1: error: the block of memory pool `kv` is 2.5: vLLM's block_size is a whole number, at "
               "least 1"),
    ("max_seqs=2.5", "vllm.sq:35:1: error: the cap of pool `reqs` is 2.5: vLLM's max_num_seqs is a whole number, "
                     "at least 1"),
    ("max_seqs=0", "vllm.sq:35:1: error: the cap of pool `reqs` is 0: vLLM's max_num_seqs is a whole number, at "
                   "least 1"),
    ("C=100.5", "vllm.sq:40:28: error: the engine's chunk cap is 100.5: vLLM's long_prefill_token_threshold is a "
                "whole number, at least 1"),
])
def test_a_setting_that_is_not_a_whole_number_is_one_error_at_its_construct(serq_in_process, setting, message):
    r = _target(setting, here=serq_in_process)  # (in the test's process; the tests below as child processes)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    if setting == "B=0":  # the compile's warning of a budget of 0 first (serq_frontend.link), its line and caret
        assert lines[0] == ("vllm.sq:38:10: warning: stage `engine`: a budget of 0 schedules no token, so no job on "
                            "it ever runs")
        lines = lines[3:]
    assert lines[0] == message
    name, value = setting.split("=")
    # the source line and its caret, then the value's origin (serq.loading.sets_noted, as serq run's run-time errors)
    assert lines[3:] == [f"note: `{name}` is {value}, given by --set {name}"]


def test_whole_settings_and_no_seq_cap_are_printed():
    # no request cap: max_num_seqs is the KV cache's 8 010 blocks (vLLM's null is its default, 256), which never
    # binds (a running request holds a block at least), said in a warning
    r = _target("B=8192", "C=100", "max_seqs=inf")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    config = out["config"]
    assert config["max_num_batched_tokens"] == 8192 and config["long_prefill_token_threshold"] == 100
    assert config["max_num_seqs"] == 8010 and config["num_gpu_blocks"] == 8011
    assert out["warnings"][-1].startswith("the cap of pool `reqs` is inf: max_num_seqs is the KV cache's 8010 blocks")


def test_no_seq_cap_under_a_budget_below_the_blocks_is_refused():
    # vLLM refuses max_num_seqs > max_num_batched_tokens: its largest, 4 096, could cap what the program does not
    r = _target("B=4096", "max_seqs=inf")
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr.startswith("vllm.sq:35:1: error: the cap of pool `reqs` is inf: vLLM's max_num_seqs has no "
                               "unbounded value, and its largest, the budget 4096"), r.stderr
