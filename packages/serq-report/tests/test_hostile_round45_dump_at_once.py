"""Two runs dumping into one folder at once: the folder holds one run's dump whole, never a mix.

``serq run p.sq --seed 1 --dump D & serq run p.sq --seed 2 --dump D`` each wrote its files over the other's,
and D held seed 2's observe files beside seed 1's (each file whole, the set a mix), both runs saying
nothing and ending 0. A dump now takes the folder for itself (an advisory lock on the folder, held until its
list is written); a folder another dump holds is refused at once, and nothing is written there."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
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


def test_a_folder_another_dump_holds_is_refused_and_left_as_it_was(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _run(tmp_path, "--dump", "d").returncode == 0
    before = {f.name: f.read_bytes() for f in (tmp_path / "d").iterdir()}
    assert set(before) == {"r.csv", "serq-dump.json"}
    fd = os.open(tmp_path / "d", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a dump in progress holds it
        p = _run(tmp_path, "--seed", "2", "--dump", "d")
    finally:
        os.close(fd)
    assert p.returncode == 1
    assert p.stderr.splitlines() == ["error: d: another run is dumping into this folder now; let it end, or give "
                                     "--dump another folder (nothing was written there)"]
    assert {f.name: f.read_bytes() for f in (tmp_path / "d").iterdir()} == before


def test_once_the_other_dump_ends_the_folder_is_written(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _run(tmp_path, "--dump", "d1").returncode == 0
    assert _run(tmp_path, "--seed", "2", "--dump", "d2").returncode == 0
    assert (tmp_path / "d1" / "r.csv").read_bytes() != (tmp_path / "d2" / "r.csv").read_bytes()
    assert _run(tmp_path, "--seed", "2", "--dump", "d1").returncode == 0  # no lock left behind
    assert (tmp_path / "d1" / "r.csv").read_bytes() == (tmp_path / "d2" / "r.csv").read_bytes()
