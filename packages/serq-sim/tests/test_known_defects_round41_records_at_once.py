"""Two `serq run PROG --records R.csv` at once, of a program of several record tables: R.a.csv and R.b.csv are
one run's set, never one run's R.a.csv beside the other's R.b.csv.

Each run wrote its tables one after the other with nothing between the two runs, so about one try in six
left a mixed set (each file whole), both runs ending 0. The run now takes R.csv's folder for itself while
it writes its set (an advisory flock on the folder, as a dump does): a folder another run holds is refused
at once and no table is written there. The lock is held here by the test itself, so the case does not
depend on timing."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
TWO = """\
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (1); record a { x = now - t0 + 1; } record b { y = now; } }
run { horizon 5; seed 1; }
"""
ONE = """\
stage s : delay;
workload { arrive poisson(1); }
session { run s (1); record a { y = now; } }
run { horizon 5; seed 1; }
"""


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=100)


def _files(folder: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in folder.iterdir() if f.name.startswith("r.")}


def _held(folder: Path):
    fd = os.open(folder, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another run writing its set holds it
    return fd


@pytest.mark.parametrize("where", [".", "out"])
def test_a_set_whose_folder_another_run_holds_is_refused_and_left_as_it_was(tmp_path, where):
    (tmp_path / "p.sq").write_text(TWO)
    folder = tmp_path / where
    folder.mkdir(exist_ok=True)
    name = "r.csv" if where == "." else "out/r.csv"
    assert _run(tmp_path, "--records", name, "-o", "rep1.txt").returncode == 0
    before = _files(folder)
    assert set(before) == {"r.a.csv", "r.b.csv"}
    fd = _held(folder)
    try:
        p = _run(tmp_path, "--seed", "2", "--records", name, "-o", "rep2.txt")
        held = _files(folder)  # (while the other run holds the folder)
    finally:
        os.close(fd)
    assert p.returncode == 1
    assert p.stderr.splitlines() == [f"error: --records {name}: another run is writing its records (or a dump) "
                                     "into this file's folder now; let it end, or give --records a file in another "
                                     "folder (the report was written, no records were)"]
    assert held == before  # nothing of seed 2's set
    assert "records (rows): a " in (tmp_path / "rep2.txt").read_text()  # the report was written


def test_once_the_other_run_ends_its_set_is_written_whole(tmp_path):
    (tmp_path / "p.sq").write_text(TWO)
    (tmp_path / "two").mkdir()
    assert _run(tmp_path, "--records", "r.csv").returncode == 0
    assert _run(tmp_path, "--seed", "2", "--records", "two/r.csv").returncode == 0
    seed1, seed2 = _files(tmp_path), _files(tmp_path / "two")
    assert seed1["r.a.csv"] != seed2["r.a.csv"] and seed1["r.b.csv"] != seed2["r.b.csv"]
    fd = _held(tmp_path)
    try:
        assert _run(tmp_path, "--seed", "2", "--records", "r.csv").returncode == 1
    finally:
        os.close(fd)
    assert _files(tmp_path) == seed1
    assert _run(tmp_path, "--seed", "2", "--records", "r.csv").returncode == 0  # no lock left behind
    assert _files(tmp_path) == seed2


def test_two_runs_at_once_leave_one_runs_set(tmp_path):
    """Two processes started together: whichever order they write in, the set is one run's (the second refused,
    or written whole after the first)."""
    (tmp_path / "p.sq").write_text(TWO)
    sets = {}
    for seed in (1, 2):
        (tmp_path / f"s{seed}").mkdir()
        assert _run(tmp_path, "--seed", str(seed), "--records", f"s{seed}/r.csv").returncode == 0
        sets[seed] = _files(tmp_path / f"s{seed}")
    for _ in range(3):
        procs = [subprocess.Popen([SERQ, "run", "p.sq", "--no-progress", "--seed", str(seed), "--records", "r.csv",
                                   "-o", f"rep{seed}.txt"], cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
        results = [p.communicate(timeout=100) for p in procs]
        assert all(p.returncode in (0, 1) for p in procs), results
        assert any(p.returncode == 0 for p in procs)
        assert _files(tmp_path) in (sets[1], sets[2])


def test_a_single_table_takes_no_lock(tmp_path):
    """One table is one file, replaced whole: written as before even while the folder is held."""
    (tmp_path / "p.sq").write_text(ONE)
    fd = _held(tmp_path)
    try:
        p = _run(tmp_path, "--records", "r.csv")
    finally:
        os.close(fd)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == "session,turn,time,y"
