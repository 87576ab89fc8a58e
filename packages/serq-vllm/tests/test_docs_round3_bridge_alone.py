"""The bridge to a real vLLM runs on its own in an interpreter that has vLLM and none of serQ's dependencies, as
its module's docstring and docs/vllm-oracle.md say (``serq vllm real --python PATH``, ``python -m
serq_vllm.real``). Its usage line and errors were said through click, so an interpreter without click (one that
lacks vLLM too: ``serq vllm real --python /usr/bin/python3``) answered ``ModuleNotFoundError: No module named
'click'`` where it should say that vLLM is not installed there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_vllm.real as real

pytestmark = pytest.mark.timeout(60)


def test_the_bridge_alone_says_vllm_is_not_installed():
    # -I -S: no site-packages, so neither vLLM nor click (nor any other package) can be imported
    scenario = Path(real.__file__).parent / "oracle" / "vllm" / "preempt.json"  # a shipped scenario
    p = subprocess.run([sys.executable, "-I", "-S", real.__file__, str(scenario)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1 and p.stdout == "", p
    assert p.stderr.startswith("error: vLLM is not installed in this interpreter ("), p.stderr
    assert "docs/vllm-oracle.md" in p.stderr and "click" not in p.stderr
    p = subprocess.run([sys.executable, "-I", "-S", real.__file__], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (2, "") and p.stderr.startswith("usage: python -m serq_vllm.real"), p
    # docs/vllm-oracle.md's other form: PYTHONPATH=packages/serq-vllm/src python -m serq_vllm.real SCENARIO.json
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(Path(real.__file__).parents[1])
    p = subprocess.run([sys.executable, "-S", "-m", "serq_vllm.real", str(scenario)], capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 1 and p.stderr.startswith("error: vLLM is not installed in this interpreter ("), p


def test_main_needs_no_click(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "click", None)  # `import click` raises ImportError
    assert real.main([]) == 2
    assert real.main([str(tmp_path / "nope.json")]) == 1
    said = capsys.readouterr()
    assert said.out == "" and said.err.splitlines()[0].startswith("usage: ")
    assert said.err.splitlines()[1] == f"error: {tmp_path / 'nope.json'}: cannot read: No such file or directory"


def test_the_bridge_imports_only_the_standard_library_and_vllm():
    """What the file imports where it runs alone (all but run_real_in, which serQ calls to start it elsewhere):
    the standard library, vLLM and what vLLM brings (torch); click was the one import of another package."""
    import ast

    tree = ast.parse(Path(real.__file__).read_text())
    caller = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run_real_in")
    inside = {id(n) for n in ast.walk(caller)}
    imported = set()
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert {"vllm", "json"} <= imported
    assert imported - set(sys.stdlib_module_names) - {"vllm", "torch"} == set(), imported
