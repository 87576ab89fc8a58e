"""SERQ_MEMORY_WORKERS of more digits than Python's int() reads (4 300) is refused as any other value it does
not take, one message naming it: it was a traceback, 'ValueError: Exceeds the limit (4300 digits) for integer
string conversion', from serq_sim.memguard.parallel_runs at every run. Leading zeros are still read
(0002 is 2), however many."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sim import memguard

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (0.5); end; }\nrun { horizon 10; seed 1; }\n"
TAKES = ("it is how many runs run at once on this machine, among which the share of its available memory is "
         "divided (a sweep's local workers are started with it): a whole number from 1 to 4096")


@pytest.mark.parametrize("value", ["9" * 5000, "0" * 5000, "1" + "0" * 4400, "4097", "0"])
def test_a_value_out_of_range_is_refused_whatever_its_digits(monkeypatch, value):
    monkeypatch.setenv("SERQ_MEMORY_WORKERS", value)
    with pytest.raises(UserError) as e:
        memguard.parallel_runs()
    shown = value if len(value) <= 40 else value[:37] + "..."
    assert str(e.value) == f"error: the environment variable SERQ_MEMORY_WORKERS is '{shown}': {TAKES}"


@pytest.mark.parametrize(("value", "runs"), [("0" * 5000 + "8", 8), ("0002", 2), ("4096", 4096), (" 3 ", 3)])
def test_leading_zeros_are_read_however_many(monkeypatch, value, runs):
    monkeypatch.setenv("SERQ_MEMORY_WORKERS", value)
    assert memguard.parallel_runs() == runs


def test_serq_run_says_it_in_one_line(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    env = {**os.environ, "SERQ_MEMORY_WORKERS": "9" * 5000}
    r = subprocess.run([SERQ, "run", "p.sq"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr == f"error: the environment variable SERQ_MEMORY_WORKERS is '{'9' * 37}...': {TAKES}\n", r.stderr[-600:]
