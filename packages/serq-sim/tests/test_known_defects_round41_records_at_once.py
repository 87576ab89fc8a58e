"""Two `serq run PROG --records R.csv` at once, of a program of several record tables: R.a.csv and R.b.csv are
one run's set, never one run's R.a.csv beside the other's R.b.csv.

Each run wrote its tables one after the other with nothing between the two runs, so about one try in six
left a mixed set (each file whole), both runs ending 0. The run now takes R.csv's folder for itself while
it writes its set (an advisory flock on the folder, as a dump does): a folder another run holds is waited
for (serq.files.held_waiting, up to serq_sim.records.SET_WAIT), then written whole; held past the wait, it
is refused and no table is written there. The lock is held here by the test itself, so the cases do not
depend on timing."""

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
    # (not the empty R.NAME.csv.journal a run holds as each table's lock while it writes it, serq.files.output_held)
    return {f.name: f.read_bytes() for f in folder.iterdir() if f.name.startswith("r.")
            and not (f.name.endswith(".journal") and f.stat().st_size == 0)}


def _held(folder: Path):
    fd = os.open(folder, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another run writing its set holds it
    return fd


def _started(cwd: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([SERQ, "run", "p.sq", "--no-progress", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("where", [".", "out"])
def test_a_set_whose_folder_another_run_holds_waits_and_is_then_written_whole(tmp_path, where):
    (tmp_path / "p.sq").write_text(TWO)
    folder = tmp_path / where
    folder.mkdir(exist_ok=True)
    name = "r.csv" if where == "." else "out/r.csv"
    (tmp_path / "s2").mkdir()
    assert _run(tmp_path, "--seed", "2", "--records", "s2/r.csv").returncode == 0
    seed2 = _files(tmp_path / "s2")
    assert _run(tmp_path, "--records", name, "-o", "rep1.txt").returncode == 0
    before = _files(folder)
    assert set(before) == {"r.a.csv", "r.b.csv"} and before != seed2
    fd = _held(folder)
    try:
        p = _started(tmp_path, "--seed", "2", "--records", name, "-o", "rep2.txt")
        # the report is written before the records: once it is there, the run is at its set
        for _ in range(2000):
            if (tmp_path / "rep2.txt").exists() or p.poll() is not None:
                break
            time.sleep(0.01)
        time.sleep(0.3)
        assert p.poll() is None  # waiting for the folder
        assert _files(folder) == before  # nothing of seed 2's set while the other holds it
    finally:
        os.close(fd)
    out, err = p.communicate(timeout=100)
    assert p.returncode == 0, err
    assert _files(folder) == seed2  # seed 2's set, whole
    assert "records (rows): a " in (tmp_path / "rep2.txt").read_text()


def test_another_file_of_the_same_folder_is_written_too(tmp_path):
    """Two runs writing different sets into one folder: each waits for the other's write, neither is refused."""
    (tmp_path / "p.sq").write_text(TWO)
    fd = _held(tmp_path)
    try:
        p = _started(tmp_path, "--records", "mine.csv")
        time.sleep(0.5)
    finally:
        os.close(fd)
    out, err = p.communicate(timeout=100)
    assert p.returncode == 0, err
    assert {f.name for f in tmp_path.iterdir() if f.name.startswith("mine.")} == {"mine.a.csv", "mine.b.csv"}


def test_a_folder_held_past_the_wait_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    from serq.files import OutputError
    from serq_sim import records

    monkeypatch.setattr(records, "SET_WAIT", 0.2)
    fd = _held(tmp_path)
    try:
        with pytest.raises(OutputError) as info:
            records.hold_set(str(tmp_path / "r.csv"), 2)
    finally:
        os.close(fd)
    assert str(info.value) == (f"error: --records {tmp_path / 'r.csv'}: another run has held this file's folder for 0.2 s "
                               "(writing its records or a dump there); give --records a file in another folder "
                               "(the report was written, no records were)")
    taken = records.hold_set(str(tmp_path / "r.csv"), 2)  # released: taken at once
    assert isinstance(taken, int)
    os.close(taken)


def test_held_waiting_takes_the_lock_once_it_is_let_go(tmp_path):
    import threading

    from serq.files import held_alone, held_waiting

    fd = _held(tmp_path)
    mine = os.open(tmp_path, os.O_RDONLY)
    try:
        assert not held_alone(mine)
        assert not held_waiting(mine, 0.05)
        assert not held_waiting(mine, 10.0, lambda: True)  # given up at once
        threading.Timer(0.2, os.close, (fd,)).start()
        assert held_waiting(mine, 30.0)
    finally:
        os.close(mine)


def test_two_runs_at_once_leave_one_runs_set(tmp_path):
    """Two processes started together: both end well, and the set is one run's, whole."""
    (tmp_path / "p.sq").write_text(TWO)
    sets = {}
    for seed in (1, 2):
        (tmp_path / f"s{seed}").mkdir()
        assert _run(tmp_path, "--seed", str(seed), "--records", f"s{seed}/r.csv").returncode == 0
        sets[seed] = _files(tmp_path / f"s{seed}")
    for _ in range(3):
        procs = [_started(tmp_path, "--seed", str(seed), "--records", "r.csv", "-o", f"rep{seed}.txt")
                 for seed in (1, 2)]
        results = [p.communicate(timeout=100) for p in procs]
        assert all(p.returncode == 0 for p in procs), results
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
