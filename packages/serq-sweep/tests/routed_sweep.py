"""The sweep of the tests of ``serq plot``'s points whose runs lack a figure's member (test_known_defects_round40
plot_absent_member, round41's plot_absent_flag): R GPUs behind a least-loaded router, swept over R = 1, 2, 3
and seeds 1, 2, so that stages.gpu[2] exists at R = 3 alone and stages.gpu[1] at R = 2 and 3."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let R = 2;

pool slot[R] { cap 1; }
stage gpu[R] : delay;

workload {
  arrive poisson(0.5);
}

session {
  set t0 = now;
  choose j in R by (holders(slot[j]) + queued(slot[j]), j);
  hold slot[j] (1) {
    run gpu[j] (~exp(1));
  }
  observe response = now - t0;
}

run { horizon 40; warmup 0; seed 1; }
"""


def serq(args: list[str], cwd: Path, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (the suite's serq_in_process fixture),
    serq.cli.main in the test's process, in that folder (a test of what is said and written)."""
    if here is not None:
        import pytest

        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=150,
                          stdin=subprocess.DEVNULL)


def routed_sweep(d: Path) -> Path:
    """PROGRAM (in `serq fmt` form) swept into ``d``/t.csv: the runs table."""
    (d / "k.sq").write_text(PROGRAM)
    r = serq(["fmt", "--check", "k.sq"], d)
    assert r.returncode == 0, r.stdout + r.stderr
    r = serq(["sweep", "k.sq", "--set", "R=1,2,3", "--seeds", "1,2", "--out", "t.csv", "--workers", "0"], d)
    assert r.returncode == 0, r.stderr
    return d / "t.csv"


def shared_table(once_per_run, folder: Path) -> Path:
    """The runs table of :func:`routed_sweep`, swept once for the whole test run (the suite's ``once_per_run``:
    every worker and both modules read the one sweep), copied into ``folder`` (a module's own, where its plots
    and edited tables are written)."""
    made = once_per_run("routed-sweep", routed_sweep)
    shutil.copyfile(made / "t.csv", folder / "t.csv")
    return folder / "t.csv"
