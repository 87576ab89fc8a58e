"""``serq vllm target`` refuses a negative chunk cap, as ``serq vllm scenario`` refuses a negative 'chunk', naming
the value and the ``--set`` that gave it. ``--set C=-5`` of ``chunk long_prefill(reqs, C)`` folded the test ``C > 0``
to false, and the branch inf gave ``long_prefill_token_threshold: 0`` (no cap), silently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "vllm_bursts.sq"
SAID = ("the engine's chunk cap is {}, negative: vLLM's long_prefill_token_threshold is a whole number, at least 0 (0: "
        "no long-prefill threshold, which a chunk of 0 or inf says)")


@pytest.mark.parametrize(("value", "shown"), [(-5.0, "-5"), (-0.5, "-0.5"), (float("-inf"), "-inf"),
                                              (-5e-324, "-5e-324")])
def test_a_negative_chunk_is_refused_at_its_place(value, shown):
    program = serq_frontend.compile(str(PROGRAM), sets={"C": value})
    with pytest.raises(UserError) as e:
        target(program, "vllm_bursts.sq")
    lines = str(e.value).replace(str(PROGRAM), "vllm_bursts.sq").splitlines()
    # the C of `chunk long_prefill(reqs, C);`, line 42, column 28
    assert lines[0] == "vllm_bursts.sq:42:28: error: " + SAID.format(shown)
    assert lines[1:] == ["    chunk long_prefill(reqs, C);", " " * 29 + "^"]


@pytest.mark.parametrize(("value", "threshold"), [(0.0, 0), (float("inf"), 0), (64.0, 64), (256.0, 256)])
def test_a_chunk_of_0_or_more_is_taken(value, threshold):
    program = serq_frontend.compile(str(PROGRAM), sets={"C": value})
    assert target(program, "vllm_bursts.sq")["config"]["long_prefill_token_threshold"] == threshold


def test_a_negative_chunk_written_in_the_program_is_refused(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text(PROGRAM.read_text().replace("let C = 256;", "let C = -5; "))
    with pytest.raises(UserError) as e:
        target(serq_frontend.compile(str(f)), str(f))
    assert str(e.value).splitlines()[0] == f"{f}:42:28: error: " + SAID.format("-5")


def test_the_command_and_the_scenario_agree(tmp_path):
    r = subprocess.run([SERQ, "vllm", "target", str(PROGRAM), "--set", "C=-5"], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert r.stderr.splitlines() == [f"{PROGRAM}:42:28: error: " + SAID.format("-5"),
                                     "    chunk long_prefill(reqs, C);", " " * 29 + "^",
                                     "note: `C` is -5, given by --set C"]
    # the scenario of that engine's chunk: refused too, as a negative 'chunk'
    sc = tmp_path / "sc.json"
    sc.write_text(json.dumps({"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 20, "chunk": -5,
                              "requests": [{"prompt": 5, "out": 1}]}))
    r = subprocess.run([SERQ, "vllm", "scenario", str(sc)], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert "error: 'chunk' must be a non-negative integer (0: no long-prefill threshold)" in r.stderr
