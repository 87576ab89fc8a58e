"""serq vllm target's refusals name the program: a serve key that reads an observable (``serve by
(queued(reqs))``, which serQ runs) was ``error: serve key Observable has no vLLM form``, the IR's class
name with no file nor line; a program of no step stage, or of two, named no file either."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]
PROGRAM = (ROOT / "examples" / "multi-turn" / "vllm.sq").read_text()

def _at(text: str, path: tuple) -> str:
    """``LINE:COL`` of the value at ``path`` of the JSON ``text`` (serq.jsonin.value_at), where a node of an IR
    file without spans is placed (serq_ir.codec.placed)."""
    from serq.jsonin import value_at

    pos = value_at(text, path)
    return f"{text.count(chr(10), 0, pos) + 1}:{pos - text.rfind(chr(10), 0, pos)}"



def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def _program(tmp_path: Path) -> str:
    text = PROGRAM.replace("  memory kv;\n}", "  memory kv;\n  serve by (queued(reqs));\n}", 1)
    assert text != PROGRAM
    (tmp_path / "p.sq").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "serve by (queued" in t)
    return f"p.sq:{line}:13: error: a serve key that reads `queued(…)` has no vLLM form"


@pytest.mark.timeout(120)
def test_a_serve_key_of_an_observable_is_named_at_its_place(tmp_path):
    said = _program(tmp_path)
    r = _serq(tmp_path, "vllm", "target", "p.sq")
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == said
    assert r.stderr.splitlines()[1].strip() == "serve by (queued(reqs));"
    assert "Observable" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.timeout(120)
def test_an_ir_file_without_spans_is_named_by_its_file(tmp_path):
    _program(tmp_path)
    ir = _serq(tmp_path, "ir", "p.sq", "--no-spans")
    assert ir.returncode == 0, ir.stderr
    (tmp_path / "p.ir.json").write_text(ir.stdout)
    r = _serq(tmp_path, "vllm", "target", "p.ir.json")
    assert r.returncode == 1
    # at the key's own place in the file and its JSON path, as a node of an IR file without spans is told
    at = _at(ir.stdout, ("stages", 0, "kind", "serve", "keys", 0))
    assert r.stderr.strip() == (f"p.ir.json:{at}: error: a serve key that reads `queued(…)` has no vLLM form - at "
                                "'$.stages[0].kind.serve.keys[0]'")


@pytest.mark.timeout(60)
def test_a_program_of_no_step_stage_is_named(tmp_path):
    (tmp_path / "q.sq").write_text("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n")
    r = _serq(tmp_path, "vllm", "target", "q.sq")
    assert r.returncode == 1
    assert r.stderr.strip() == "q.sq: error: a vLLM target needs exactly one step stage; the program has 0"
