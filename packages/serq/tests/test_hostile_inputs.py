"""Hostile inputs at the command line: what a user may name where a file to read is expected. Each is one
message naming the path and a non-zero status, quickly: never a hang, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); }
run { horizon 5; seed 1; }
"""

TRACED = """stage s : delay;
workload { arrive closed(1); trace "t.csv"; }
session { loop { turn; run s (1); branch (more) { } else { end; } } }
run { horizon 5; seed 1; }
"""


def _serq(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # a command that blocks on its input fails here, at the timeout, instead of hanging the suite
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=30,
                          stdin=subprocess.DEVNULL)


def _one_error(r: subprocess.CompletedProcess, *parts: str, status: int = 1) -> None:
    assert r.returncode == status, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, r.stderr
    for part in parts:
        assert part in errors[0], r.stderr


def _special(tmp_path: Path, name: str, kind: str) -> None:
    """``tmp_path / name`` as a FIFO nobody writes, or a link to the endless ``/dev/zero``."""
    if kind == "fifo":
        os.mkfifo(tmp_path / name)
    else:
        (tmp_path / name).symlink_to("/dev/zero")


KINDS = [("fifo", "is a FIFO (a named pipe), not a file"), ("zero", "is a character device, not a file")]

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="FIFOs and /dev/zero are POSIX")


@needs_fifo
@pytest.mark.parametrize("kind, what", KINDS)
@pytest.mark.parametrize("command", [["run"], ["check"], ["ir"], ["ast"], ["fmt"], ["fmt", "--check"],
                                     ["sweep", "--workers", "0", "--no-progress"]])
def test_a_program_that_is_not_a_regular_file_is_refused(tmp_path, kind, what, command):
    _special(tmp_path, "p.sq", kind)
    # (an error of serq fmt --check is status 2: its 1 says a file would be reformatted)
    _one_error(_serq(*command, "p.sq", cwd=tmp_path), "p.sq", what, status=2 if "--check" in command else 1)


@needs_fifo
@pytest.mark.parametrize("kind, what", KINDS)
def test_an_ir_file_that_is_not_a_regular_file_is_refused(tmp_path, kind, what):
    _special(tmp_path, "p.ir.json", kind)
    for command in ("run", "check"):
        _one_error(_serq(command, "p.ir.json", cwd=tmp_path), "p.ir.json", what)


@needs_fifo
@pytest.mark.parametrize("kind, what", KINDS)
def test_a_step_trace_that_is_not_a_regular_file_is_refused(tmp_path, kind, what):
    _special(tmp_path, "steps.jsonl", kind)
    _one_error(_serq("fit", "steps.jsonl", cwd=tmp_path), "steps.jsonl", what)


@needs_fifo
@pytest.mark.parametrize("kind, what", KINDS)
def test_a_trace_on_the_command_line_that_is_not_a_regular_file_is_refused(tmp_path, kind, what):
    (tmp_path / "p.sq").write_text(TRACED)
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,0,10,5,0,0\n")
    _special(tmp_path, "other.csv", kind)
    _one_error(_serq("run", "p.sq", "--no-progress", "--trace", "other.csv", cwd=tmp_path), "other.csv", what)
    # the trace the program names: located at its clause (a link out of the program's folder is refused
    # as such)
    os.replace(tmp_path / "other.csv", tmp_path / "t.csv")
    _one_error(_serq("run", "p.sq", "--no-progress", cwd=tmp_path), "p.sq:2:30", "t.csv")


@needs_fifo
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_library_that_is_not_a_regular_file_is_refused_at_its_use(tmp_path, kind):
    _special(tmp_path, "lib.sq", kind)
    (tmp_path / "p.sq").write_text('use "lib.sq";\n' + PROGRAM)
    _one_error(_serq("check", "p.sq", cwd=tmp_path), "p.sq:1:1", "lib.sq")


def test_a_regular_file_through_a_link_is_read(tmp_path):
    (tmp_path / "real.sq").write_text(PROGRAM)
    (tmp_path / "p.sq").symlink_to(tmp_path / "real.sq")
    r = _serq("check", "p.sq", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
