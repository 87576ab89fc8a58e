"""What `serq run` leaves when a write fails after the run (a file-size limit, as a full disk): the outputs are
written in turn, the report, then the dump, then the records. The file that failed is one error naming it,
status 1, with no temporary file left beside it; the report before it stays written, whole, and the records
after it are not written (docs/security.md, which was silent on it). A dump is all or nothing: one that fails
leaves no file of its own, nor the folder it made (test_hostile_round60_dump_all_or_nothing)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe response = now - t0; record req { y = now - t0; } }\n"
           "run { horizon 3000; seed 2; }\n")
LIMIT = 32 * 1024  # the report is about 1 KB; the dump's samples and the records, 3 000 rows each, more


def _limited():
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_the_dump_that_fails_leaves_the_report_and_writes_no_records(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    want = subprocess.run([SERQ, "run", "p.sq", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert want.returncode == 0, want.stderr
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "-o", "r.txt", "--dump", "out", "--records", "r.csv"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, preexec_fn=_limited)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "error: out/response.csv: File too large\n")
    assert (tmp_path / "r.txt").read_text() == want.stdout  # written first, whole
    # nor the CSV, nor its temporary file, nor the folder the dump made (a dump is all or nothing)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "r.txt"]  # no records


def test_the_records_that_fail_leave_the_report_and_the_records_there_before(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "r.csv").write_text("session,turn,time,y\n0,0,1,1\n")  # a table of an earlier run
    r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "-o", "r.txt", "--records", "r.csv"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, preexec_fn=_limited)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "error: r.csv: File too large\n")
    assert (tmp_path / "r.txt").read_text().startswith("run: horizon 3000")
    assert (tmp_path / "r.csv").read_text() == "session,turn,time,y\n0,0,1,1\n"  # left as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "r.csv", "r.txt"]
