"""An output written through to a pipe whose reader closed it before the whole was written (`serq run p.sq -o
/dev/stdout | true`, a FIFO read by `head -c 10`): the write's EPIPE reached click, which takes any EPIPE
for standard output's and ends the command with status 1 and no word. It is now one error naming the output,
status 1."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/stdout"),
                                reason="POSIX pipes")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); OBSERVES }\nrun { horizon 5; }\n"
SAID = ("error: {}: the process reading it closed it before the whole was written (a broken pipe); what was "
        "written before is all it got\n")


def _program(tmp_path: Path, observes: int = 1) -> None:
    body = " ".join(f"observe o{i} = 1;" for i in range(observes))
    (tmp_path / "p.sq").write_text(PROGRAM.replace("OBSERVES", body))


def test_standard_output_a_pipe_no_process_reads(tmp_path):
    _program(tmp_path)
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the command starts
    try:
        proc = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "-o", "/dev/stdout"], cwd=tmp_path,
                              stdin=subprocess.DEVNULL, stdout=w, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert (proc.returncode, proc.stderr) == (1, SAID.format("/dev/stdout"))


def test_a_fifo_whose_reader_stops_early(tmp_path):
    _program(tmp_path, observes=3000)  # a report larger than a pipe's buffer
    os.mkfifo(tmp_path / "out.txt")
    got: list[bytes] = []

    def read_a_little() -> None:
        with open(tmp_path / "out.txt", "rb") as f:
            got.append(f.read(10))

    reader = threading.Thread(target=read_a_little, daemon=True)
    reader.start()
    proc = subprocess.run([SERQ, "run", "p.sq", "--no-progress", "-o", "out.txt"], cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    reader.join(timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", SAID.format("out.txt"))
    assert got == [b"run: horiz"]
