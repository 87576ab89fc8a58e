"""`serq vllm target` of a program of several step engines (P/D disaggregation: a prefill and a decode
instance) refuses it at the construct, as docs/vllm.md says every refusal is: at the second engine, the one
a single vLLM instance does not have, naming them all; an IR file without spans is named by its file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

TWO = """pool kv { cap 100; block 4; evict lru; preempt lifo; }
pool kv2 { cap 100; block 4; evict lru; preempt lifo; }
stage A : step { budget 8; cost 1; memory kv; }
stage B : step { budget 8; cost 1; memory kv2; }
workload { arrive poisson(1); }
session { hold kv (4) { run A prefill (4) growing kv; } hold kv2 (4) { run B decode (1) growing kv2; } }
"""

def _at(text: str, path: tuple) -> str:
    """``LINE:COL`` of the value at ``path`` of the JSON ``text`` (serq.jsonin.value_at), where a node of an IR
    file without spans is placed (serq_ir.codec.placed)."""
    from serq.jsonin import value_at

    pos = value_at(text, path)
    return f"{text.count(chr(10), 0, pos) + 1}:{pos - text.rfind(chr(10), 0, pos)}"



def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SERQ_SIM_TIER"}
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)


@pytest.mark.timeout(120)
def test_two_step_engines_are_refused_at_the_second(tmp_path):
    (tmp_path / "two.sq").write_text(TWO)
    r = _serq(tmp_path, "vllm", "target", "two.sq")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [
        "two.sq:4:1: error: a vLLM target needs exactly one step stage; the program has 2 (`A`, `B`): a target "
        "describes one vLLM instance, so describe each engine with a program of its own (replicas of one "
        "configuration are one family, `stage engine[N]`)",
        "  stage B : step { budget 8; cost 1; memory kv2; }",
        "  ^",
    ]
    ir = _serq(tmp_path, "ir", "two.sq", "--no-spans")
    assert ir.returncode == 0, ir.stderr
    (tmp_path / "two.ir.json").write_text(ir.stdout)
    r = _serq(tmp_path, "vllm", "target", "two.ir.json")
    assert r.returncode == 1
    assert r.stderr.strip() == (f"two.ir.json:{_at(ir.stdout, ('stages', 1))}: error: a vLLM target needs exactly "
                                "one step stage; the program has 2 (`A`, `B`): a target describes one vLLM instance, "
                                "so describe each engine with a program of its own (replicas of one configuration "
                                "are one family, `stage engine[N]`) - at '$.stages[1]'")


@pytest.mark.timeout(120)
def test_the_llmd_example_is_refused_at_its_decode_engine(tmp_path):
    path = ROOT / "examples" / "pd-disaggregation" / "llmd_nixl_pull.sq"
    r = _serq(tmp_path, "vllm", "target", str(path))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    first, line, caret = r.stderr.splitlines()
    lines = path.read_text().splitlines()
    where, msg = first.split(": error: ")
    row, col = map(int, where.rsplit(":", 2)[1:])
    assert msg.startswith("a vLLM target needs exactly one step stage; the program has 2 (`P`, `D`): a target "
                          "describes one vLLM instance, so describe each engine with a program of its own")
    # the decode queue's serve, after `queue D[ND] : decode {`
    assert lines[row - 1].strip().startswith("serve step") and row > next(
        i for i, s in enumerate(lines, 1) if s.startswith("queue D["))
    assert line.strip() == lines[row - 1].strip() and caret.strip() == "^"
