"""What a plugin's code writes to standard output during ``serq vllm scenario`` and ``serq vllm target`` (its
hooks' ``print`` and ``os.write(1, …)``, called as lib/vllm.sq compiles and runs) goes to standard error, under
the one redirection serq run uses (serq.loading.stdout_to_stderr): standard output is the command's JSON alone.
Before, ``serq vllm scenario``'s answer came after the plugin's lines ("sugar", "fd sugar", "kinds", "fd kinds"),
which no JSON reader took. The answer is the oracle's (vLLM's own, the scenario's .out.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ORACLE = Path(__file__).resolve().parents[1] / "src" / "serq_vllm" / "oracle"
ROOT = Path(__file__).resolve().parents[3]
LINES = ["sugar", "fd sugar", "kinds", "fd kinds"]
PLUGIN = '''import os
import serq


@serq.hookimpl
def serq_frontend_register_sugar(register):
    print("sugar")
    os.write(1, b"fd sugar\\n")


@serq.hookimpl
def serq_sim_register_stage_kinds(register):
    print("kinds")
    os.write(1, b"fd kinds\\n")
'''


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_loud52-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-loud52\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nloud52 = loud52\n")
    (site / "loud52.py").write_text(PLUGIN)
    return site


def serq(tmp_path, site, *args):
    env = {**os.environ, "SERQ_COMPILE_CACHE": "0"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "serq", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("name", ["vllm/preempt", "generated/chunk_many"])
def test_a_scenarios_answer_is_alone_on_standard_output(tmp_path, site, name):
    r = serq(tmp_path, site, "vllm", "scenario", name)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = json.loads((ORACLE / f"{name}.out.json").read_text())
    for key in ("first", "done", "preemptions", "steps"):
        assert got[key] == want[key], key
    # each line the plugin wrote, on standard error (its hooks are called as often as the command collects them)
    assert set(r.stderr.splitlines()) == set(LINES), r.stderr
    assert all(line in r.stderr.splitlines() for line in LINES)


def test_a_targets_json_is_alone_on_standard_output(tmp_path, site):
    program = str(ROOT / "examples" / "single-turn" / "vllm_benchmark.sq")
    r = serq(tmp_path, site, "vllm", "target", program)
    assert r.returncode == 0, r.stderr
    plain = serq(tmp_path, None, "vllm", "target", program)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(r.stdout) == json.loads(plain.stdout)
    assert "sugar" in r.stderr.splitlines() and "sugar" not in plain.stderr
