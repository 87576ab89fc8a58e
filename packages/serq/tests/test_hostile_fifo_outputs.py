"""An output that is a FIFO no process reads (`serq run p.sq -o fifo`), or whose reader stopped reading: the
report is written inside serq.signals.deferred, where a signal is only recorded, and the write blocked in
the kernel, so Ctrl-C and SIGTERM (`timeout`) were recorded and ignored: the command waited for ever and
only SIGKILL ended it. A write through to a FIFO or a device now waits for its reader in steps and gives up
when the command is asked to stop (status 130/143, one line), and a reader that reads gets every byte."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); OBSERVES }\nrun { horizon 5; }\n"


def _program(tmp_path: Path, observes: int = 1) -> None:
    body = " ".join(f"observe o{i} = 1;" for i in range(observes))
    (tmp_path / "p.sq").write_text(PROGRAM.replace("OBSERVES", body))


def _stopped(proc: subprocess.Popen, sig: int, after: float = 1.5) -> tuple[int, str]:
    """Send ``sig`` to ``proc`` after ``after`` seconds; its status and standard error once it ends (a
    command that does not end within 30 s fails the test, and is killed)."""
    try:
        proc.wait(timeout=after)
    except subprocess.TimeoutExpired:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the command went on waiting for the FIFO's reader after the signal")
    return proc.returncode, err


@pytest.mark.parametrize("sig, status, said", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_fifo_that_no_process_reads_does_not_hold_the_command_past_a_signal(tmp_path, sig, status, said):
    _program(tmp_path)
    os.mkfifo(tmp_path / "out.txt")
    proc = subprocess.Popen([SERQ, "run", "p.sq", "-o", "out.txt", "--no-progress"], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    code, err = _stopped(proc, sig)
    assert code == status and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == said, err


def test_a_reader_that_stops_reading_does_not_hold_the_command_past_a_signal(tmp_path):
    _program(tmp_path, observes=3000)  # a report larger than a pipe's buffer
    os.mkfifo(tmp_path / "out.txt")
    fd = os.open(tmp_path / "out.txt", os.O_RDONLY | os.O_NONBLOCK)  # a reader that never reads
    try:
        proc = subprocess.Popen([SERQ, "run", "p.sq", "-o", "out.txt", "--no-progress"], cwd=tmp_path,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        code, err = _stopped(proc, signal.SIGTERM, after=8)
    finally:
        os.close(fd)
    assert code == 143 and "Traceback" not in err, err


def test_a_fifo_that_is_read_gets_the_whole_report(tmp_path):
    _program(tmp_path, observes=3000)
    os.mkfifo(tmp_path / "out.txt")
    want = subprocess.run([SERQ, "run", "p.sq", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120).stdout
    got: list[bytes] = []

    def read() -> None:
        with open(tmp_path / "out.txt", "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    r = subprocess.run([SERQ, "run", "p.sq", "-o", "out.txt", "--no-progress"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    reader.join(timeout=30)
    assert r.returncode == 0, r.stderr
    assert got and got[0].decode() == want and len(want) > 65536


def test_a_sweeps_table_to_a_fifo_no_process_reads(tmp_path):
    (tmp_path / "p.sq").write_text("let lam = 0.5;\n" + PROGRAM.replace("poisson(1)", "poisson(lam)")
                                   .replace("OBSERVES", "observe r = 1;"))
    os.mkfifo(tmp_path / "f.csv")
    proc = subprocess.Popen([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", "--find", "r.count > 1",
                             "--over", "lam", "0.1:0.9", "-o", "f.csv"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    code, err = _stopped(proc, signal.SIGTERM, after=4)
    assert code == 143 and "Traceback" not in err, err
