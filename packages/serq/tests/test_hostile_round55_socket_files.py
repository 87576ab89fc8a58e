"""A socket (a Unix-domain socket's file) where a command writes or reads. An output there was checked as a
file to be written through (docs/security.md said so), but no open reaches a socket: the write failed with
the system's `No such device or address` after the work, so `serq run -o` ran the program and
`serq compare -o` every arm before it, and an input there (a records file, a trace, a program) was that
same error where a FIFO is `is a FIFO (a named pipe), not a file`. A socket is now refused as an output
before the work, and read as an input is `is a socket, not a file`; the socket is left as it is."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix-domain sockets")

SERQ = str(Path(sys.executable).parent / "serq")
# its run fails at t=0 (a negative work): an output refused before the run is said instead
FAILS = ("let x = 1;\nstage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (x - 1.5 + now); }\n"
         "run { horizon 5; }\n")
RUNS = ("stage s : fifo;\nworkload { arrive poisson(1); }\nsession { set t0 = now; run s (0.5); "
        "observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")


def _socket(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("args, name", [
    (["run", "f.sq", "--no-progress", "-o", "s.txt"], "s.txt"),
    (["compare", "f.sq", "--set", "x=1,2", "--workers", "0", "--no-progress", "-o", "s.csv"], "s.csv"),
    (["sweep", "f.sq", "--set", "x=1,2", "--workers", "0", "--no-progress", "-o", "s.csv", "--fresh"], "s.csv"),
])
def test_a_socket_as_an_output_is_refused_before_the_work(tmp_path, args, name):
    (tmp_path / "f.sq").write_text(FAILS)
    held = _socket(tmp_path / name)
    try:
        r = _serq(tmp_path, *args)
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == (f"error: {name}: is a socket, which no file is written to (remove it, or choose another "
                            "output)\n")
        assert stat.S_ISSOCK(os.lstat(tmp_path / name).st_mode)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["f.sq", name]
    finally:
        held.close()


def test_a_socket_as_the_output_of_metrics_and_plot_and_as_an_input(tmp_path):
    (tmp_path / "p.sq").write_text(RUNS)
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", "--dump", "d")
    assert r.returncode == 0 and (tmp_path / "d" / "y.csv").is_file()
    held = [_socket(tmp_path / n) for n in ("s.svg", "s.txt", "s.csv", "s.sq")]
    try:
        r = _serq(tmp_path, "plot", "d", "--cdf", "y", "-o", "s.svg")
        assert (r.returncode, r.stderr) == (1, "error: s.svg: is a socket, which no file is written to (remove "
                                               "it, or choose another output)\n")
        r = _serq(tmp_path, "metrics", "s.csv")
        assert (r.returncode, r.stderr) == (1, "error: s.csv: cannot read the records: is a socket, not a file\n")
        for command in ("check", "fmt"):
            r = _serq(tmp_path, command, "s.sq")
            assert (r.returncode, r.stderr) == (1, "error: s.sq: cannot read: is a socket, not a file\n")
        for n in ("s.svg", "s.txt", "s.csv", "s.sq"):
            assert stat.S_ISSOCK(os.lstat(tmp_path / n).st_mode)
    finally:
        for s in held:
            s.close()
