"""An output that is a FIFO no process reads yet (`serq run p.sq -o fifo`, `serq compare -o fifo.csv`, `serq
plot -o fifo.svg`): the command did its work and then waited for a reader, as a shell's `>` waits, saying
nothing: it sat silent and looked hung. It now says so once on stderr before the wait
(`serq: fifo is a FIFO (a named pipe) that no process reads: waiting for one to open it (Ctrl-C gives the
write up)`); a reader that comes then gets the whole report, and one already there is not waited for (and
nothing is said)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 50; seed 3; }\n")
WAITING = ("serq: {} is a FIFO (a named pipe) that no process reads: waiting for one to open it (Ctrl-C gives "
           "the write up)\n")


def _line(stream, within: float = 120.0) -> str:
    """The next line of ``stream`` (a pipe), or a failure when none comes ``within`` seconds."""
    ready, _, _ = select.select([stream], [], [], within)
    if not ready:
        pytest.fail("the command said nothing while it waited for the FIFO's reader")
    return stream.readline()


def test_a_fifo_no_process_reads_is_said_once_and_then_gets_the_whole_report(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    want = subprocess.run([SERQ, "run", "p.sq", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert want.returncode == 0 and want.stdout.startswith("run: horizon 50"), want.stderr
    name = "out\nnl.txt"  # a name as every message prints it
    os.mkfifo(tmp_path / name)
    proc = subprocess.Popen([SERQ, "run", "p.sq", "-o", name, "--no-progress"], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _line(proc.stderr) == WAITING.format("out\\nnl.txt")
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append((tmp_path / name).read_bytes()), daemon=True)
        reader.start()
        out, err = proc.communicate(timeout=120)
        reader.join(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, out, err) == (0, "", "")  # said once
    assert got == [want.stdout.encode()]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name, "p.sq"]  # still a FIFO, nothing beside it


def test_a_fifo_a_process_reads_already_is_not_waited_for_nor_said(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    os.mkfifo(tmp_path / "out.txt")
    fd = os.open(tmp_path / "out.txt", os.O_RDONLY | os.O_NONBLOCK)  # a reader before the command
    try:
        r = subprocess.run([SERQ, "run", "p.sq", "-o", "out.txt", "--no-progress"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
    finally:
        os.close(fd)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert data.startswith(b"run: horizon 50")


def test_serq_plot_says_so_too(tmp_path):
    (tmp_path / "t.csv").write_text("lambda,seed,y.mean\n1,1,2\n2,1,3\n")
    os.mkfifo(tmp_path / "p.svg")
    proc = subprocess.Popen([SERQ, "plot", "t.csv", "--x", "lambda", "--y", "y.mean", "-o", "p.svg"],
                            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        first = _line(proc.stderr)
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append((tmp_path / "p.svg").read_bytes()), daemon=True)
        reader.start()
        out, err = proc.communicate(timeout=120)
        reader.join(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert first == WAITING.format("p.svg"), first + err
    assert (proc.returncode, out, err) == (0, "", "")
    assert got and b"<svg" in got[0]
