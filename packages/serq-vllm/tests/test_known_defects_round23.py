"""Known defects of serq vllm target, round 23: a step stage that gives no `budget`.

language.txt §2 writes a step stage's ``budget expr ;`` as required; this frontend takes a stage without one
as of an infinite budget (docs/language.md lists the difference, and test programs rely on it). ``serq vllm
target`` of such an engine said "the engine's budget is inf: vLLM's max_num_batched_tokens is a whole number,
at least 1", of a budget the program does not write: it now says that the stage gives no `budget`, that its
budget is therefore infinite, that vLLM has no unbounded max_num_batched_tokens, and what to write, at the
stage. A `budget inf;` written (or `--set B=inf`) is told as before, at the value; so is an IR file without
spans, where a budget left out and one written `inf` are the same node.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]
PROGRAM = (ROOT / "examples" / "multi-turn" / "vllm.sq").read_text()

def _at(text: str, path: tuple) -> str:
    """``LINE:COL`` of the value at ``path`` of the JSON ``text`` (serq.jsonin.value_at), where a node of an IR
    file without spans is placed (serq_ir.codec.placed)."""
    from serq.jsonin import value_at

    pos = value_at(text, path)
    return f"{text.count(chr(10), 0, pos) + 1}:{pos - text.rfind(chr(10), 0, pos)}"



def _without_budget() -> str:
    assert PROGRAM.count("  budget B;\n") == 1
    return PROGRAM.replace("  budget B;\n", "")


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=100,
                          stdin=subprocess.DEVNULL)


def test_target_of_an_engine_without_budget_says_it_gives_none(tmp_path):
    """Mutation: without the check of serq_ir.analysis.budget_not_given in target.py the message was "the
    engine's budget is inf: vLLM's max_num_batched_tokens is a whole number, at least 1"."""
    src = _without_budget()
    (tmp_path / "p.sq").write_text(src)
    line = src.splitlines().index("stage engine : step {") + 1
    r = _serq(tmp_path, "vllm", "target", "p.sq")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"p.sq:{line}:1: error: stage `engine` gives no `budget`, so its budget is infinite (a step stage without "
        "`budget` has an infinite one): vLLM's max_num_batched_tokens has no unbounded value; give the engine the "
        "tokens of an iteration, `budget B;`",
        "  stage engine : step {",
        "  ^"]


def test_a_budget_written_inf_is_told_at_its_value(tmp_path):
    src = PROGRAM.replace("  budget B;\n", "  budget inf;\n")
    (tmp_path / "p.sq").write_text(src)
    r = _serq(tmp_path, "vllm", "target", "p.sq")
    assert r.returncode == 1
    assert "error: the engine's budget is inf: vLLM's max_num_batched_tokens is a whole number, at least 1" in (
        r.stderr.splitlines()[0])
    assert r.stderr.splitlines()[1] == "    budget inf;"


def test_an_ir_without_spans_tells_it_too(tmp_path):
    # (it could not tell, and said "the engine's budget is inf: … a whole number, at least 1": the IR says
    # so now without its spans, Step.budget_given, round 25)
    (tmp_path / "p.sq").write_text(_without_budget())
    ir = _serq(tmp_path, "ir", "--no-spans", "p.sq")
    assert ir.returncode == 0, ir.stderr
    (tmp_path / "p.ir.json").write_text(ir.stdout)
    r = _serq(tmp_path, "vllm", "target", "p.ir.json")
    assert r.returncode == 1
    assert r.stderr == (f"p.ir.json:{_at(ir.stdout, ('stages', 0))}: error: stage `engine` gives no `budget`, so "
                        "its budget is infinite (a step stage without `budget` has an infinite one): vLLM's "
                        "max_num_batched_tokens has no unbounded value; give the engine the tokens of an iteration, "
                        "`budget B;` - at '$.stages[0]'\n")


@pytest.mark.parametrize("budget", ["  budget B;\n", "  budget 512;\n"])
def test_an_engine_with_its_budget_still_targets(tmp_path, budget):
    (tmp_path / "p.sq").write_text(PROGRAM.replace("  budget B;\n", budget))
    r = _serq(tmp_path, "vllm", "target", "p.sq")
    assert r.returncode == 0, r.stderr
    assert "max_num_batched_tokens" in r.stdout
