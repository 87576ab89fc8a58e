"""What a short `serq` command imports once its program is in the compile cache: the modules its work does
not need stay out of its start-up (docs/performance.md, "Start-up"). Each is a few milliseconds of a
process that, for an oracle-sized scenario, is nearly all start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

#: ``serq ARGS`` in this process, then which of the watched modules it imported
PROBE = """import json, sys
sys.argv = ["serq", *sys.argv[1:]]
from serq.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m in WATCHED or m.split(".")[0] in WATCHED)))
"""

#: not needed by a run of a cached program, nor by a scenario: the compiler (lark, the parser, the linker),
#: numpy (the statistics and the answers are read without it), OpenSSL's hashlib (the run's digests are
#: the interpreter's own SHA-256), importlib.metadata (the host scans for its plugins itself)
NOT_FOR_A_RUN = ["lark", "numpy", "hashlib", "_hashlib", "serq_frontend.parser", "serq_frontend.link",
                 "serq_frontend.sugar", "tqdm", "importlib.metadata"]
#: nor by a scenario: pathlib, and the urllib.parse and ipaddress it imports (`serq run` hands its loader a
#: pathlib.Path)
NOT_FOR_A_SCENARIO = [*NOT_FOR_A_RUN, "pathlib", "urllib", "ipaddress"]
#: nor by a program with a step stage (every vLLM program), which the fast tier never runs: its module, the
#: largest of a run's start-up (serq_sim.api._fast_kinds)
NOT_FOR_A_STEP_PROGRAM = ["serq_sim.fast"]


def imported(args: list[str], watched: list[str], env: dict[str, str]) -> list[str]:
    probe = PROBE.replace("WATCHED", repr(set(watched)))
    r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300,
                       env=env, cwd=REPO)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


@pytest.fixture
def env(tmp_path):
    out = {**os.environ, "SERQ_CACHE_DIR": str(tmp_path / "cache")}
    out.pop("SERQ_COMPILE_CACHE", None)
    return out


@pytest.mark.parametrize("scenario", ["vllm/multiturn", "bench/scenario_1000.json"])
def test_a_scenario_imports_what_it_runs(env, scenario):
    args = ["vllm", "scenario", scenario]
    first = imported(args, NOT_FOR_A_SCENARIO, env)  # a miss compiles the program
    assert "lark" in first and "pathlib" in first
    assert imported(args, NOT_FOR_A_SCENARIO, env) == []


def test_a_run_of_a_cached_program_imports_what_it_runs(env):
    args = ["run", "bench/vllm_single.sq", "--arrivals", "1", "--horizon", "1e9", "--no-progress", "--json"]
    assert "lark" in imported(args, NOT_FOR_A_RUN, env)
    assert imported(args, NOT_FOR_A_RUN, env) == []


@pytest.mark.parametrize("args", [["vllm", "scenario", "vllm/multiturn"],
                                  ["run", "bench/vllm_single.sq", "--arrivals", "1", "--horizon", "1e9",
                                   "--no-progress", "--json"]])
def test_a_step_program_does_not_import_the_fast_tier(env, args):
    assert imported(args, NOT_FOR_A_STEP_PROGRAM, env) == []
    # a program the fast tier may run imports it
    assert imported(["run", "examples/single-turn/mg1.sq", "--horizon", "10", "--warmup", "0", "--no-progress"],
                    NOT_FOR_A_STEP_PROGRAM, env) == ["serq_sim.fast"]


def test_a_step_program_still_reads_serq_sim_tier(env):
    r = subprocess.run([sys.executable, "-m", "serq", "vllm", "scenario", "vllm/multiturn"], capture_output=True,
                       text=True, timeout=300, env={**env, "SERQ_SIM_TIER": "genral"}, cwd=REPO)
    assert r.returncode == 1 and "the environment variable SERQ_SIM_TIER is 'genral'" in r.stderr


def test_a_run_that_replays_a_trace_imports_no_hashlib(env):
    # only a sweep's run hashes the trace it reads (serq_sim.trace.load_trace's digest); `serq run` checks
    # nothing, so its start-up takes no OpenSSL
    args = ["run", "examples/replay/vllm_replay.sq", "--arrivals", "1", "--no-progress", "--json"]
    imported(args, ["hashlib"], env)  # (a miss compiles the program)
    assert imported(args, ["hashlib", "_hashlib"], env) == []
