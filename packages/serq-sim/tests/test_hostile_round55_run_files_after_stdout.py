"""`serq run p.sq --records r.csv --dump out` whose report goes to a standard output that fails (a reader
that closed the pipe, `| head -5`; a closed descriptor, `>&-`; a full device): the report was printed
first, and its failure ended the command before the dump and the records were written (the dump's folder
made and left empty), a whole run's samples and records lost for the look at a report's head. The failed
print is now said after the files are written: the same status (141, or 1 and its one line), and the
dump and the records are those a working standard output gets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; record req { wait = now - t0; } }\n"
           "run { horizon 20; seed 3; }\n")


def _serq(cwd: Path, *args: str, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=120)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _closed_pipe() -> int:
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("stdout, status, said", [
    ("pipe", 141, b""),
    ("closed", 1, b"error: cannot write to standard output: Bad file descriptor\n"),
    ("full", 1, b"error: cannot write to standard output: No space left on device\n"),
])
def test_the_dump_and_records_are_written_when_the_report_is_not(tmp_path, stdout, status, said):
    want_dir, got_dir = tmp_path / "want", tmp_path / "got"
    for d in (want_dir, got_dir):
        d.mkdir()
        (d / "p.sq").write_text(PROGRAM)
    want = _serq(want_dir, "--records", "r.csv", "--dump", "out", stdout=subprocess.PIPE)
    assert (want.returncode, want.stderr) == (0, b"") and want.stdout.startswith(b"run: horizon 20")
    written = _files(want_dir)
    assert sorted(written) == ["out/serq-dump.json", "out/y.csv", "p.sq", "r.csv"]
    assert written["r.csv"].startswith(b"session,turn,time,wait\n") and written["out/y.csv"].count(b"\n") > 5
    if stdout == "closed":
        fd = None
    else:
        fd = _closed_pipe() if stdout == "pipe" else os.open("/dev/full", os.O_WRONLY)
    try:
        r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "--records", "r.csv", "--dump", "out"],
                           cwd=got_dir, stdin=subprocess.DEVNULL, stdout=fd, stderr=subprocess.PIPE, timeout=120,
                           preexec_fn=(lambda: os.close(1)) if fd is None else None)
    finally:
        if fd is not None:
            os.close(fd)
    assert (r.returncode, r.stderr) == (status, said)
    assert _files(got_dir) == written
