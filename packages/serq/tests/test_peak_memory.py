"""conftest.py's ``peak_memory`` reports a command's own peak, whatever the test process holds.

A bound on a command's memory (a deeply nested source refused under 300 MB, a sparse file refused without
reading it) was read with os.wait4 on the command itself, whose ru_maxrss counts the address space of the
process it was forked from: a test worker grown to 300 MB by the tests before failed the bound, in the
whole suite only (test_hostile_round3_parse_stack.py).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)

HELD = 400 * 2**20


def test_a_command_is_measured_without_the_memory_of_the_test_process(peak_memory):
    held = bytearray(HELD)
    held[::4096] = b"\1" * len(range(0, HELD, 4096))  # resident, page by page
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert usage.ru_maxrss * 1024 >= HELD  # what the direct child reports: the test process's memory
    code, peak = peak_memory([sys.executable, "-c", "pass"])
    assert code == 0 and peak < 100 * 2**20, peak
    code, peak = peak_memory([sys.executable, "-c", f"b = bytearray({HELD}); b[::4096] = b'1' * {HELD // 4096}"])
    assert code == 0 and HELD <= peak < HELD + 100 * 2**20, peak
    del held


def test_a_command_past_its_time_is_killed(peak_memory):
    code, _ = peak_memory([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)
    assert code == 128 + 9
    code, _ = peak_memory([sys.executable, "-c", "raise SystemExit(3)"])
    assert code == 3
