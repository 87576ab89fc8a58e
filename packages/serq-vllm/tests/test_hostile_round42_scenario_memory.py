"""A scenario too large for the memory the run may have is refused before its program is built.

The memory guard (serq_sim.memguard) stops a run that grows past half the memory available, but a scenario's
program, its sessions' presets, is built before the run: a scenario of 10**7 requests (a file of 210 MB, within
the 256 MB a JSON input may have) took gigabytes before any guard looked, and would have needed some 22 GB at the
run's peak (2.2 KB a request, docs/vllm.md). ``serq vllm scenario`` and ``run_scenario`` now refuse a scenario
whose requests would take more than the guard leaves the run, naming the count, the need and the limit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from serq import UserError
from serq_sim import memguard
from serq_vllm import scenarios

SERQ = str(Path(sys.executable).parent / "serq")


def _scenario(n: int) -> dict:
    return {"budget": 16, "max_seqs": 4, "block_size": 4, "num_blocks": 20,
            "requests": [{"prompt": 5, "out": 1} for _ in range(n)]}


def _guard_with_room(monkeypatch, room: int) -> None:
    page = 4096
    used = int(memguard._statm()[1]) * page
    guard = memguard.MemoryGuard([(1, used + room, 8 * 2**30, memguard.MACHINE)], page)
    monkeypatch.setattr(memguard, "memory_guard", lambda: guard)


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="no /proc: no memory guard")
def test_a_scenario_beyond_the_room_is_refused_before_its_run(monkeypatch):
    # 10 000 requests need 22 000 000 bytes (21 MiB); a guard that leaves 16 MiB refuses them (what the process
    # holds may grow by some while the test runs: the room said is what is left of the 16 MiB)
    big = _scenario(10_000)
    _guard_with_room(monkeypatch, 16 * 2**20)
    with pytest.raises(UserError) as e:
        scenarios.run_scenario(big)
    msg = str(e.value)
    assert re.fullmatch(
        r"error: the scenario's 10000 requests would take some 21 MiB at the run's peak \(about 2200 bytes a "
        r"request\), more than the 1?[0-9] MiB the memory guard leaves the run of the 8192 MiB resident memory the "
        r"machine had room for when the run began \(MemAvailable\): no answer \(a scenario of fewer requests, or more "
        r"memory for the run: SERQ_MEMORY_SHARE\)", msg), msg
    # the guard as the machine has it: answered
    monkeypatch.undo()
    answer = scenarios.run_scenario(_scenario(3))  # (15 prompt tokens in step 0, each one output token)
    assert answer["done"] == {"0": 1, "1": 1, "2": 1}


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="no /proc: no memory guard")
def test_the_command_refuses_it_in_one_line(tmp_path):
    f = tmp_path / "sc.json"
    f.write_text(json.dumps(_scenario(10_000)))
    # a share of the available memory that leaves the run some 17 MiB, less than the 10 000 requests' 21 MiB (a
    # share that left less than 16 MiB, memguard.MIN_ROOM, is refused as such: a billionth of it, which this gave)
    share = f"{17 * 2**20 / memguard.available()[0]:.3g}"
    r = subprocess.run([SERQ, "vllm", "scenario", str(f)], capture_output=True, text=True, timeout=60,
                       env={**__import__("os").environ, "SERQ_MEMORY_SHARE": share}, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"error: {f}: the scenario's 10000 requests would take some 21 MiB at the run's peak")
    # the guard off: no refusal of the command's own
    r = subprocess.run([SERQ, "vllm", "scenario", str(f)], capture_output=True, text=True, timeout=60,
                       env={**__import__("os").environ, "SERQ_MEMORY_SHARE": "off"}, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and len(json.loads(r.stdout)["done"]) == 10_000, r.stderr
