"""One sweep writes a table at a time (serq_sweep.api._lock_journal, docs/sweep.md): a sweep holds an
advisory lock on its journal (OUT.journal) from before it reads it until its table is written. Two sweeps
into one --out each ran every run (each read the journal before the other wrote to it), and a --fresh one
removed the journal the other was appending to; the second is now refused before it reads or runs
anything, and leaves the first's journal as it was."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UserError

pytestmark = pytest.mark.timeout(120)

PROG = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe r = now; }\n"


def _held(path: Path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


@pytest.mark.parametrize("fresh", [False, True])
def test_a_second_sweep_into_a_table_being_written_is_refused(tmp_path, fresh):
    prog = tmp_path / "p.sq"
    prog.write_text(PROG)
    out = tmp_path / "t.csv"
    journal = tmp_path / "t.csv.journal"
    fd = _held(journal)  # the first sweep, running: its journal holds a finished run
    os.write(fd, b"a line the first sweep wrote\n")
    try:
        with pytest.raises(UserError) as e:
            serq_sweep.sweep(str(prog), seeds="1,2", horizon=5, out=str(out), workers=0, fresh=fresh)
        assert str(e.value) == (f"error: {out}: another serq command (a run, a sweep or a comparison) is writing this file now (its journal "
                                f"{journal} is locked); let it end, or give out= another name")
        assert journal.read_bytes() == b"a line the first sweep wrote\n"  # read by no one, cleared by no one
        assert not out.exists()
    finally:
        os.close(fd)


def test_the_command_line_says_so_and_a_sweep_runs_once_the_lock_is_gone(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text(PROG)
    out = tmp_path / "t.csv"
    serq = str(Path(sys.executable).parent / "serq")
    cmd = [serq, "sweep", str(prog), "--seeds", "1,2", "--horizon", "5", "-o", str(out), "--workers", "0",
           "--no-progress"]
    fd = _held(tmp_path / "t.csv.journal")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    finally:
        os.close(fd)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().endswith("another serq command (a run, a sweep or a comparison) is writing this file now (its journal "
                                     f"{out}.journal is locked); let it end, or give another --out")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(out.read_text().splitlines()) == 3  # a header and the two runs
    assert not (tmp_path / "t.csv.journal").exists()
