"""Two outputs of one command that are one file, by any spelling (the name twice, ``./F``, a symbolic link to
F, a hard link to F), are a usage error: status 2, one line naming both flags, said before anything runs and
with nothing written. ``serq run -o F --records F`` was status 1 (an error of the inputs, which no input
was), and ``serq sweep -o T.csv --records H.csv`` with H.csv a hard link to T.csv was not refused at all
(the check compared resolved names, which a hard link does not share)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))

PROGRAM = """let x = 1;
stage s : fifo;
workload { arrive batch(2); }
session { set t0 = now; run s (x); observe response = now - t0; record req { sent = t0; done = now; } }
run { horizon 20; }
"""


def _serq(folder: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``folder``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and of the files left as they were)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(folder)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=60,
                          stdin=subprocess.DEVNULL)


def _snapshot(folder: Path) -> dict:
    return {p.name: (p.is_symlink(), p.read_bytes() if p.is_file() else None) for p in sorted(folder.iterdir())}


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "F.csv").write_text("old\n")
    os.symlink("F.csv", tmp_path / "L.csv")
    os.link(tmp_path / "F.csv", tmp_path / "H.csv")
    return tmp_path


@pytest.mark.parametrize("command, other, said", [
    ("run", "F.csv", "F.csv: named by both -o and --records"),
    ("run", "./F.csv", "./F.csv (it is F.csv): named by both -o and --records"),
    ("run", "L.csv", "L.csv (it is F.csv): named by both -o and --records"),
    ("run", "H.csv", "H.csv (it is F.csv): named by both -o and --records"),
    ("sweep", "F.csv", "F.csv: named by both --out and --records"),
    ("sweep", "./F.csv", "./F.csv (it is F.csv): named by both --out and --records"),
    ("sweep", "L.csv", "L.csv (it is F.csv): named by both --out and --records"),
    ("sweep", "H.csv", "H.csv (it is F.csv): named by both --out and --records"),  # was not refused
])
def test_two_outputs_that_are_one_file_are_a_usage_error(folder, serq_in_process, command, other, said):
    before = _snapshot(folder)
    here = None if other == "F.csv" else serq_in_process  # (the first of each command as a child process)
    if command == "run":
        r = _serq(folder, "run", "p.sq", "--no-progress", "-o", "F.csv", "--records", other, here=here)
    else:
        r = _serq(folder, "sweep", "p.sq", "--set", "x=1", "--workers", "0", "--no-progress", "-o", "F.csv",
                  "--records", other, here=here)
    assert r.returncode == 2, r.stderr
    of = "a run" if command == "run" else "a sweep"
    assert r.stderr == f"error: {said}; each output of {of} needs a file of its own\n"
    assert r.stdout == ""
    assert _snapshot(folder) == before  # nothing written, no journal left


def test_a_sweeps_records_beside_its_table_are_written(folder):
    r = _serq(folder, "sweep", "p.sq", "--set", "x=1", "--workers", "0", "--no-progress", "-o", "T.csv",
              "--records", "R.csv")
    assert r.returncode == 0, r.stderr
    assert (folder / "R.csv").read_text().splitlines()[0].endswith(",sent,done")
