"""``serq run --slo`` of a program that records no requests is refused before the run.

The goodput needs a record table with the columns sent, first_token, last_token and output, which the
program's declarations say before anything runs; the check was made on the report, after the run: a run
of hours ended with ``error: --slo: the program records no requests``, its report and records unwritten.
serq_sim.cli now checks the program's tables first (serq_sim.metrics.NEEDED).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

# the run would fail at its first event (a negative work): the --slo error can only come before it
PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (-1 - now); record req { sent = t0; first_token = now; last_token = now; } }
run { horizon 100; warmup 0; }
"""
NO_REQUESTS = ("error: --slo: the program records no requests (a record table with the columns sent, first_token, "
               "last_token and output; lib/vllm.sq's vllm_request records them)\n")


@pytest.mark.timeout(120)
def test_slo_without_a_request_table_is_refused_before_the_run(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)  # a table without output: no request metrics
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--slo", "ttft=1", "-o", "r.txt"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == NO_REQUESTS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]
