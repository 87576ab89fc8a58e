"""`serq compare … -o t.csv` whose standard output fails (a reader that closed the pipe, `| head -1`; a
closed descriptor, `>&-`; a full device): the comparison's table was printed first and its file written
after, so the failed print ended the command (status 141, or 1) and the file the user named was never
written, every run lost. A sweep writes its `--out` table before it prints, and `--find -o` too; the
comparison now does the same: the file is written whole, then the failed print is said as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
ARGS = ["compare", "p.sq", "--set", "rate=1,1.2", "--seeds", "1..2", "--workers", "0", "--no-progress",
        "--figure", "y.mean"]


def _serq(cwd: Path, *args: str, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=300)


def _closed_pipe() -> int:
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("stdout, status, said", [
    ("pipe", 141, b""),
    ("full", 1, b"error: cannot write to standard output: No space left on device\n"),
])
def test_the_table_file_is_written_when_standard_output_fails(tmp_path, stdout, status, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    want = _serq(tmp_path, *ARGS, "-o", "want.csv", stdout=subprocess.PIPE)
    assert want.returncode == 0 and want.stdout.startswith(b"rate=1.2 - rate=1")
    table = (tmp_path / "want.csv").read_bytes()
    assert table.startswith(b"arm,base,figure,n,a,b,diff,") and b"\nrate=1.2,rate=1,observes.y.mean,2," in table
    fd = _closed_pipe() if stdout == "pipe" else os.open("/dev/full", os.O_WRONLY)
    try:
        r = _serq(tmp_path, *ARGS, "-o", "t.csv", stdout=fd)
    finally:
        os.close(fd)
    assert (r.returncode, r.stderr) == (status, said)
    assert (tmp_path / "t.csv").read_bytes() == table
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.csv", "want.csv"]
