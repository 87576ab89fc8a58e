"""An output that names standard output when the command was started with it closed (`serq run p.sq -o
/dev/stdout >&-`, `-o /dev/fd/1`, `/proc/self/fd/1`, or a link to one): the command holds the null device
at a closed descriptor (so no file it opens takes its place), and the report went there: status 0, nothing
said, the report lost, where a shell's `>` finds no such file. Such an output is now refused before the run,
one error, status 1; with standard output open it is written through to it as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="descriptors named by /dev/fd")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
CLOSED = ("error: {}: standard output is closed (the command was started without it: >&-), so there is nothing "
          "there to write to\n")


def _closed_stdout() -> None:
    os.close(1)


def _serq(cwd: Path, *args: str, closed: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=None if closed else subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120, preexec_fn=_closed_stdout if closed else None)


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "out.txt"])
def test_standard_output_closed_is_refused_before_the_run(tmp_path, name):
    (tmp_path / "p.sq").write_text(PROGRAM)
    os.symlink("/dev/stdout", tmp_path / "out.txt")  # a link to it, named as a file
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", "-o", name)
    assert (r.returncode, r.stderr) == (1, CLOSED.format(name))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "p.sq"]


def test_the_null_device_and_an_open_standard_output_are_written_as_before(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", "-o", "/dev/null")
    assert (r.returncode, r.stderr) == (0, "")
    want = _serq(tmp_path, "run", "p.sq", "--no-progress", closed=False)
    assert want.returncode == 0 and want.stdout.startswith("run: horizon 20")
    for name in ("/dev/stdout", "/dev/fd/1"):
        r = _serq(tmp_path, "run", "p.sq", "--no-progress", "-o", name, closed=False)
        assert (r.returncode, r.stdout, r.stderr) == (0, want.stdout, "")
