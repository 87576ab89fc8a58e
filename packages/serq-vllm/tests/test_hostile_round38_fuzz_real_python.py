"""scripts/fuzz_real.py's --python (the long-lived bridge in vLLM's interpreter) that is no program, writes
garbage, has no vLLM, exits or never answers: one line, ``error: --python PATH: …``, status 1, and the
interpreter stopped with what it started. It was a traceback (PermissionError, a JSON error, 'the vLLM bridge
exited'), and one that never answered kept the script waiting for ever."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fuzz_real.py"
READY = 'echo \'{"ready": "0.0"}\''
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="shell scripts stand in for interpreters; /proc tells a process gone")


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_real_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script(tmp_path, name: str, body: str, *, mode: int = 0o755) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(mode)
    return str(path)


def failure(fuzz, python: str, *, timeout: float = 60.0, scenario: bool = False) -> str:
    with pytest.raises(fuzz.BridgeFailure) as info:
        real = fuzz.Real(python, timeout=timeout)
        try:
            if scenario:
                real.run({"budget": 16, "max_seqs": 1, "block_size": 16, "num_blocks": 4,
                          "requests": [{"prompt": 1, "out": 1}]})
        finally:
            real.close()
    return str(info.value)


def test_start_up(fuzz, tmp_path):
    text = script(tmp_path, "text", "x", mode=0o644)
    assert failure(fuzz, text) == f"--python {text}: cannot run it: Permission denied"
    garbage = script(tmp_path, "garbage", "echo garbage")
    assert failure(fuzz, garbage) == (f"--python {garbage}: its first line is not the worker's ready line (is it a "
                                      "Python interpreter with vLLM?): 'garbage'")
    no_vllm = script(tmp_path, "py", "echo 'Traceback (most recent call last):' >&2\n"
                                     "echo 'bridge.VllmNotInstalled: vLLM is not installed' >&2\nexit 1")
    assert failure(fuzz, no_vllm) == (f"--python {no_vllm}: it exited (status 1) before its ready line (after "
                                      "vLLM's import): 'bridge.VllmNotInstalled: vLLM is not installed'")
    big = script(tmp_path, "big", "head -c 100000000 /dev/zero | tr '\\0' x; echo")
    told = failure(fuzz, big)
    assert told.startswith(f"--python {big}: its first line is not the worker's ready line") and len(told) < 400


def test_answers(fuzz, tmp_path):
    garbage = script(tmp_path, "garbage", f"{READY}\nread x\necho garbage")
    assert failure(fuzz, garbage, scenario=True) == (
        f"--python {garbage}: its answer to a scenario is not a JSON object: 'garbage'")
    gone = script(tmp_path, "gone", f"{READY}\nread x\nexit 3")
    assert failure(fuzz, gone, scenario=True) == f"--python {gone}: it exited (status 3) before its answer to a scenario"


def test_one_that_never_answers_is_stopped(fuzz, tmp_path):
    pid_file = tmp_path / "pid"
    hang = script(tmp_path, "hang", f"sleep 1000 &\necho $! > {pid_file}\nwait")
    assert failure(fuzz, hang, timeout=0.5) == (
        f"--python {hang}: its ready line (after vLLM's import) did not come within 0.5 s; stopped it")
    child = int(pid_file.read_text())
    for _ in range(1000):  # killed, it is gone or a zombie soon after (its reaping is its new parent's)
        if gone(child):
            break
        time.sleep(0.01)
    assert gone(child)
    late = script(tmp_path, "late", f"{READY}\nsleep 1000")
    assert failure(fuzz, late, timeout=0.5, scenario=True) == (
        f"--python {late}: its answer to a scenario did not come within 0.5 s; stopped it")


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_the_script_says_it_in_one_line(tmp_path):
    garbage = script(tmp_path, "garbage", "echo garbage")
    r = subprocess.run([sys.executable, str(SCRIPT), "--python", garbage, "-n", "1"], capture_output=True, text=True,
                       timeout=120)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: --python {garbage}: its first line is not the worker's ready line (is it a Python "
                        "interpreter with vLLM?): 'garbage'\n")
