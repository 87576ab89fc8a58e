"""The `serq vllm` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_vllm.scenarios import ORACLE

SERQ = str(Path(sys.executable).parent / "serq")


def serq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, timeout=300, env=os.environ)


def test_scenarios_lists_the_shipped_files():
    r = serq("vllm", "scenarios")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("vllm/preempt ") and "2 request(s)" in line for line in lines)
    assert any(line.startswith("vllm-serve/newest_first ") and "serve by (-admission)" in line for line in lines)


def test_scenario_prints_the_answer():
    r = serq("vllm", "scenario", str(ORACLE / "vllm" / "preempt.json"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = json.loads((ORACLE / "vllm" / "preempt.out.json").read_text())
    assert (got["first"], got["done"], got["preemptions"], got["steps"]) == (
        want["first"], want["done"], want["preemptions"], want["steps"])


def test_scenario_by_name():
    r = serq("vllm", "scenario", "vllm/hol")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["first"] == json.loads((ORACLE / "vllm" / "hol.out.json").read_text())["first"]


@pytest.mark.parametrize("text,message", [
    ("{", "error: Expecting property name enclosed in double quotes"),
    ('{"requests": []}', "not a scenario"),
    ('{"budget": 1, "max_seqs": 1, "block_size": 16, "num_blocks": 3, "requests": [{"prompt": 0, "out": 1}]}',
     "'prompt' and 'out' must be positive integers"),
])
def test_bad_scenario_is_one_error(tmp_path, text, message):
    p = tmp_path / "bad.json"
    p.write_text(text)
    r = serq("vllm", "scenario", str(p))
    assert r.returncode == 1
    assert message in r.stderr and "Traceback" not in r.stderr


def test_missing_scenario():
    r = serq("vllm", "scenario", "vllm/nope")
    assert r.returncode == 1 and "no such scenario" in r.stderr


@pytest.mark.parametrize("name", ["admission", "newest_first", "newest_first_preempt", "prefill_first"])
def test_target_of_a_scenario_program(tmp_path, name):
    """The engine configuration the scenario's program implies is the oracle's target file."""
    sc = json.loads((ORACLE / "vllm-serve" / f"{name}.json").read_text())
    want = json.loads((ORACLE / "vllm-serve" / f"{name}.target.json").read_text())
    from serq_vllm.scenarios import PROGRAM

    args = ["vllm", "target", str(PROGRAM), "--set", f"B={sc['budget']}", "--set", f"max_seqs={sc['max_seqs']}",
            "--set", f"bs={sc['block_size']}", "--set", f"blocks={sc['num_blocks'] - 1}",
            "--set", f"C={sc.get('chunk', 0)}", "--set", f"caching={1 if sc.get('prefix_caching') else 0}",
            "--def", f"serve_key={sc['serve']}"]
    r = serq(*args)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == want


def test_real_without_vllm_says_how_to_install():
    try:
        import vllm  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("vLLM is installed here")
    r = serq("vllm", "real", str(ORACLE / "vllm" / "preempt.json"))
    assert r.returncode == 1
    assert "docs/vllm-oracle.md" in r.stderr and "Traceback" not in r.stderr
