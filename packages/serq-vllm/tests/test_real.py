"""The bridge against the real scheduler: every shipped scenario's stored answer is what the installed
vLLM gives. Needs vLLM (docs/vllm-oracle.md): in this interpreter, or in the one SERQ_VLLM_PYTHON names;
skipped, saying why, when neither has it (vllm_python.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from serq_vllm import real
from serq_vllm.scenarios import answer_path, list_scenarios
from vllm_python import vllm_python

FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


PYTHON, WHY = vllm_python()
pytestmark = [pytest.mark.vllm, pytest.mark.skipif(PYTHON is None, reason=WHY)]

RUN_ALL = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("bridge", sys.argv[1])
bridge = importlib.util.module_from_spec(spec); spec.loader.exec_module(bridge)
print(json.dumps([bridge.run_real(json.load(open(p))) for p in sys.argv[2:]]))
"""


def test_every_stored_answer_is_the_real_schedulers():
    scenarios = list_scenarios()
    r = subprocess.run([PYTHON, "-c", RUN_ALL, real.__file__, *(str(s.path) for s in scenarios)],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    answers = json.loads(r.stdout)
    for s, got in zip(scenarios, answers):
        want = json.loads(answer_path(s.path).read_text())
        for field in FIELDS:
            if field in want:
                assert got[field] == want[field], (s.name, field)
        if "vllm" in want:
            assert got["vllm"] == want["vllm"], s.name


def test_the_cli_runs_the_bridge_in_another_interpreter():
    from serq_vllm.scenarios import ORACLE

    serq = os.path.join(os.path.dirname(sys.executable), "serq")
    r = subprocess.run([serq, "vllm", "real", "--python", PYTHON, str(ORACLE / "vllm" / "hol.json")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["done"] == json.loads((ORACLE / "vllm" / "hol.out.json").read_text())["done"]
