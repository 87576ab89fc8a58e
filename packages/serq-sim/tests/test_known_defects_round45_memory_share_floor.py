"""A share of the machine's memory (``SERQ_MEMORY_SHARE``) that leaves a run less room than it takes before its first
event is refused, the message naming the variable and the shares this machine takes. ``SERQ_MEMORY_SHARE=1e-320`` (a
denormal: 0 bytes of room) was taken, and every run stopped at its first check, t = 0, a partial report of nothing."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sim import memguard, tier_env

SERQ = str(Path(sys.executable).parent / "serq")
MIB = 2**20


def _machine(monkeypatch, tmp_path, free: int) -> None:
    """No ulimit, 10 pages of 4 096 bytes resident, ``free`` bytes available."""
    statm = tmp_path / "statm"
    statm.write_text("1000 10 10 10 0 400 0\n")
    monkeypatch.setattr(memguard, "_STATM", str(statm))
    monkeypatch.setattr(memguard.os, "sysconf", lambda name: 4096)
    monkeypatch.setattr(resource, "getrlimit", lambda rl: (resource.RLIM_INFINITY,) * 2)
    monkeypatch.setattr(memguard, "available", lambda: (free, memguard.MACHINE))
    monkeypatch.delenv("SERQ_MEMORY_WORKERS", raising=False)


def _refusal(share: str, least: str, room: str, among: str = "", free: str = "8192 MiB") -> str:
    return (f"error: the environment variable SERQ_MEMORY_SHARE is '{share}': it is the share of the memory available "
            f"when a run begins that the run may grow by, on this machine a number from {least} to 1, or 'off' in any case "
            f"(no bound but a ulimit's): {float(share):.3g} of the {free} {memguard.MACHINE}{among} leaves it {room}, less "
            "than the 16 MiB a run may take before its first event")


@pytest.mark.parametrize(("share", "room"), [
    ("1e-320", "0 bytes"),  # a denormal
    ("5e-324", "0 bytes"),  # the least denormal
    ("1e-9", "8 bytes"),
    ("0.0001", "839 KiB"),
    ("0.00195", "16 MiB"),  # 15.97 MiB, shown rounded
])
def test_a_share_below_the_floor_is_refused(monkeypatch, tmp_path, share, room):
    # 8 GiB available: 16 MiB of it is 16/8192 = 0.001953125 of it, 0.00196 shown (rounded up, so that it is taken)
    _machine(monkeypatch, tmp_path, 8192 * MIB)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", share)
    for check in (memguard.memory_guard, tier_env.check_environment):  # a run's guard, a sweep's check before it
        with pytest.raises(UserError) as e:
            check()
        assert str(e.value) == _refusal(share, "0.00196", room)
        assert e.value.code == tier_env.ENVIRONMENT


@pytest.mark.parametrize("share", ["0.00196", "0.002", "1", "off", ""])
def test_a_share_at_or_above_the_floor_is_taken(monkeypatch, tmp_path, share):
    _machine(monkeypatch, tmp_path, 8192 * MIB)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", share)
    guard = memguard.memory_guard()
    if share == "off":
        assert guard is None
    else:
        # the bound: the 10 pages resident and the share of 8 GiB, at least 16 MiB
        (field, bound, limit, name), = guard.limits
        assert bound - 10 * 4096 == int(8192 * MIB * float(share or "0.5")) >= 16 * MIB


def test_runs_in_parallel_raise_the_floor(monkeypatch, tmp_path):
    # 4 runs at once divide the share: each must still have 16 MiB, 4 * 16/8192 = 0.0078125 of it, 0.00782 shown
    _machine(monkeypatch, tmp_path, 8192 * MIB)
    monkeypatch.setenv("SERQ_MEMORY_WORKERS", "4")
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "0.0078")  # 8192 MiB * 0.0078 / 4 = 15.97 MiB
    with pytest.raises(UserError) as e:
        memguard.memory_guard()
    assert str(e.value) == _refusal("0.0078", "0.00782", "16 MiB",
                                    ", divided among 4 runs at once (a sweep's workers: SERQ_MEMORY_WORKERS)")
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "0.00782")
    assert memguard.memory_guard().limits[0][1] - 10 * 4096 == int(8192 * MIB * 0.00782 / 4)


def test_a_machine_short_of_memory_is_not_the_shares_fault(monkeypatch, tmp_path):
    # 20 MiB available: no share below 0.8 leaves 16 MiB. Unset, the default 0.5 is taken (the guard stops the run
    # with its note as before: the machine is what is short); given, 0.5 or 0.1 is refused, as a larger share mends it
    _machine(monkeypatch, tmp_path, 20 * MIB)
    monkeypatch.delenv("SERQ_MEMORY_SHARE", raising=False)
    assert memguard.memory_guard().limits[0][1] == 10 * 4096 + 10 * MIB
    for share, room in (("0.5", "10 MiB"), ("0.1", "2 MiB")):
        monkeypatch.setenv("SERQ_MEMORY_SHARE", share)
        with pytest.raises(UserError) as e:
            memguard.memory_guard()
        assert str(e.value) == _refusal(share, "0.8", room, free="20 MiB")
    # 10 MiB available: not even all of it is 16 MiB; a share is no fault of the variable's then
    _machine(monkeypatch, tmp_path, 10 * MIB)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "0.01")
    assert memguard.memory_guard().limits[0][1] == 10 * 4096 + int(10 * MIB * 0.01)


PROGRAM = """stage s : fifo(1);

workload {
  arrive poisson(1);
}

session {
  run s (0.5);
}

run { horizon 10; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_command_refuses_a_denormal_share_in_one_line(tmp_path, tier):
    program = tmp_path / "p.sq"
    program.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERQ_MEMORY")}
    env.update(SERQ_MEMORY_SHARE="1e-320", SERQ_SIM_TIER=tier)
    r = subprocess.run([SERQ, "run", str(program), "--no-progress"], capture_output=True, text=True, env=env,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout)
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: the environment variable SERQ_MEMORY_SHARE is '1e-320': it is the share of "
                               "the memory available when a run begins that the run may grow by, on this machine a "
                               "number from "), r.stderr
    assert r.stderr.endswith(" leaves it 0 bytes, less than the 16 MiB a run may take before its first event\n")
