"""A sweep's local workers divide the memory guard's share of the machine (SERQ_MEMORY_WORKERS): a share that leaves
each of them less than a run takes to begin (serq_sim.memguard.MIN_ROOM, 16 MiB) is one error before any run, as
the share itself is (tier_env.check_environment). Each worker refused it for every run, a table of errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from serq_sim import memguard

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let L = 1;

stage gpu : fifo;

workload {
  arrive poisson(L);
}

session {
  set t0 = now;
  run gpu (~exp(0.25));
  observe response = now - t0;
}

run { horizon 40; warmup 0; seed 1; }
"""


def test_a_share_too_small_for_each_worker_is_one_error(tmp_path):
    (tmp_path / "k.sq").write_text(PROGRAM)
    free = memguard.available()
    assert free is not None
    # some 24 MiB of what the machine has: enough for one run, 12 MiB each for two
    share = f"{24 * 2**20 / free[0]:.3g}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERQ_MEMORY")}
    env["SERQ_MEMORY_SHARE"] = share
    args = [SERQ, "sweep", "k.sq", "--set", "L=0.5,1", "--no-progress", "--out", "t.csv"]
    r = subprocess.run([*args, "--workers", "2"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"error: the environment variable SERQ_MEMORY_SHARE is '{share}': it is the share of "
                               "the memory available when a run begins that the run may grow by, on this machine a "
                               "number from "), r.stderr
    assert ", divided among 2 runs at once (a sweep's workers: SERQ_MEMORY_WORKERS) leaves it 1" in r.stderr
    assert r.stderr.endswith(" MiB, less than the 16 MiB a run may take before its first event\n")
    assert not (tmp_path / "t.csv").exists()
    # in this process, one run at a time: the whole share, taken
    r = subprocess.run([*args, "--workers", "0"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.csv").read_text().count("\n") == 3  # the header and two runs
