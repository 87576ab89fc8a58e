"""Sweeps beside each other (the concurrency audit): two ``serq sweep`` processes into one ``--out`` (the
second is refused while the first runs, and the first's tables are what a sweep alone writes), and sweeps
in several threads of one process (``workers=0``), each giving the tables it gives alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

PROG = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe r = now; }\n"
SERQ = str(Path(sys.executable).parent / "serq")


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def test_a_second_serq_sweep_into_the_out_of_one_under_way_is_refused(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text(PROG)
    cmd = [SERQ, "sweep", str(prog), "--seeds", "1,2,3", "--horizon", "5", "--workers", "0", "--no-progress"]
    alone = subprocess.run([*cmd, "-o", str(tmp_path / "alone.csv")], capture_output=True, timeout=60)
    assert alone.returncode == 0, alone.stderr.decode()
    out = tmp_path / "t.csv"
    env = {**os.environ, "SERQ_SWEEP_STOP_AFTER": "1"}  # the first stops itself after its first run
    first = subprocess.Popen([*cmd, "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while not _stopped(first.pid):
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        journal = (tmp_path / "t.csv.journal").read_bytes()
        assert journal.count(b"\n") == 1
        second = subprocess.run([*cmd, "-o", str(out)], capture_output=True, text=True, timeout=60)
        assert second.returncode == 1 and "Traceback" not in second.stderr
        assert second.stderr.strip().endswith(f"another serq command (a run, a sweep or a comparison) is writing this file now (its journal "
                                              f"{out}.journal is locked); let it end, or give another --out")
        assert (tmp_path / "t.csv.journal").read_bytes() == journal and not out.exists()
    finally:
        os.kill(first.pid, signal.SIGCONT)
        _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err.decode()
    assert out.read_bytes() == (tmp_path / "alone.csv").read_bytes()
    assert (tmp_path / "t.points.csv").read_bytes() == (tmp_path / "alone.points.csv").read_bytes()


def test_sweeps_in_three_threads_at_once_write_what_each_writes_alone(tmp_path):
    import serq_sweep

    prog = tmp_path / "p.sq"
    prog.write_text("let lam = 1;\n" + PROG.replace("poisson(1)", "poisson(lam)"))
    plans = [dict(seeds="1,2", horizon=5), dict(seeds="3,4", horizon=4, sets={"lam": [0.5, 2]}),
             dict(seeds="1", horizon=6, sets={"lam": "1:3:1"})]

    def one(k: int, name: str) -> bytes:
        serq_sweep.sweep(str(prog), out=str(tmp_path / f"{name}.csv"), workers=0, progress=False, **plans[k])
        return (tmp_path / f"{name}.csv").read_bytes()

    alone = [one(k, f"alone{k}") for k in range(3)]
    meet = threading.Barrier(3, timeout=30)
    got: dict[int, object] = {}

    def work(k: int) -> None:
        try:
            meet.wait()
            got[k] = one(k, f"t{k}")
        except BaseException as e:  # noqa: BLE001 - compared below
            got[k] = e

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [got.get(k) for k in range(3)] == alone
