"""Two runs dumping into one folder at once: the folder holds one run's dump whole, never a mix.

``serq run p.sq --seed 1 --dump D & serq run p.sq --seed 2 --dump D`` each wrote its files over the other's,
and D held seed 2's observe files beside seed 1's (each file whole, the set a mix), both runs saying
nothing and ending 0. A dump now takes the folder for itself (an advisory lock on the folder, held until its
list is written); a folder another run holds is waited for, and then written whole (refused at once, it lost
the second run's dump to a few milliseconds' overlap); held past the wait (serq_report.csv.DUMP_WAIT), it is
refused and nothing is written there."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """\
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (1); observe r = now - t0 + 1; end; }
run { horizon 5; seed 1; }
"""


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", "p.sq", *args], cwd=cwd, capture_output=True, text=True, timeout=100)


def test_a_folder_another_run_holds_is_waited_for_and_then_written_whole(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _run(tmp_path, "--seed", "2", "--dump", "d2").returncode == 0
    seed2 = {f.name: f.read_bytes() for f in (tmp_path / "d2").iterdir()}
    assert _run(tmp_path, "--dump", "d").returncode == 0
    before = {f.name: f.read_bytes() for f in (tmp_path / "d").iterdir()}
    assert set(before) == {"r.csv", "serq-dump.json"} and before["r.csv"] != seed2["r.csv"]
    fd = os.open(tmp_path / "d", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a dump in progress holds it
        p = subprocess.Popen([SERQ, "run", "p.sq", "--seed", "2", "--dump", "d", "-o", "rep.txt"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2000):  # the report is written before the dump: once it is there, the run is at its dump
            if (tmp_path / "rep.txt").exists() or p.poll() is not None:
                break
            time.sleep(0.01)
        time.sleep(0.3)
        assert p.poll() is None  # waiting for the folder
        assert {f.name: f.read_bytes() for f in (tmp_path / "d").iterdir()} == before
    finally:
        os.close(fd)
    _out, err = p.communicate(timeout=100)
    assert p.returncode == 0, err
    after = {f.name: f.read_bytes() for f in (tmp_path / "d").iterdir()}
    assert after["r.csv"] == seed2["r.csv"]  # seed 2's dump, whole


def test_a_folder_held_past_the_wait_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    from serq.files import OutputError
    from serq_report import csv as dump_csv

    monkeypatch.setattr(dump_csv, "DUMP_WAIT", 0.2)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(OutputError) as info:
            dump_csv._lock_folder(str(tmp_path))
    finally:
        os.close(fd)
    assert str(info.value).endswith(f"{tmp_path}: another run has held this folder for 0.2 s (dumping or writing "
                                    "its records there); give --dump another folder (nothing was written there)")
    taken = dump_csv._lock_folder(str(tmp_path))  # let go: taken at once
    assert isinstance(taken, int)
    os.close(taken)


def test_once_the_other_dump_ends_the_folder_is_written(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _run(tmp_path, "--dump", "d1").returncode == 0
    assert _run(tmp_path, "--seed", "2", "--dump", "d2").returncode == 0
    assert (tmp_path / "d1" / "r.csv").read_bytes() != (tmp_path / "d2" / "r.csv").read_bytes()
    assert _run(tmp_path, "--seed", "2", "--dump", "d1").returncode == 0  # no lock left behind
    assert (tmp_path / "d1" / "r.csv").read_bytes() == (tmp_path / "d2" / "r.csv").read_bytes()
