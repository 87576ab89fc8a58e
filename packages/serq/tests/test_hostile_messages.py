"""A message quotes what a program says (a library's name, a trace's name): on a terminal, a control
character in it went out as it is, so a program someone sent could clear the screen, retitle the window or
hide the rest of the message (`use "\\x1b[2J.sq";`). Every error of every command now reaches standard
error with such characters written as escapes, its line breaks kept (click strips colour codes only when
the output is not a terminal, which is why the check below reads a pseudo-terminal)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import printable_lines

SERQ = str(Path(sys.executable).parent / "serq")
TAIL = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"


def _on_a_terminal(args: list[str], cwd: Path) -> bytes:
    """What the command writes to a pseudo-terminal (standard output and error both)."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.execv(SERQ, [SERQ, *args])
    out = b""
    try:
        while select.select([fd], [], [], 60)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child ended (EIO)
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1, out
    return out


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="a pseudo-terminal (POSIX)")
@pytest.mark.parametrize("program, shown", [
    ('use "\x1b[2J\x1b]0;owned\x07.sq";\n' + TAIL, b'`use "\\x1b[2J\\x1b]0;owned\\x07.sq"`'),
    (TAIL.replace("arrive poisson(1);", 'arrive closed(1); trace "\x1b[31mt.csv";'), b"\\x1b[31mt.csv"),
])
def test_a_control_character_of_a_program_reaches_the_terminal_as_an_escape(tmp_path, program, shown):
    (tmp_path / "p.sq").write_bytes(program.encode())
    out = _on_a_terminal(["run", "p.sq", "--no-progress"], tmp_path)
    assert b"\x1b" not in out and b"\x07" not in out, out
    assert shown in out, out
    assert b"Traceback" not in out


def test_printable_lines_keeps_the_line_breaks_and_escapes_the_rest():
    assert printable_lines("p.sq:1:1: error: x\n  quoted\n  ^") == "p.sq:1:1: error: x\n  quoted\n  ^"
    assert printable_lines("a\x1b[2Jb\r\nc\td\u202e") == "a\\x1b[2Jb\\r\nc\\td\\u202e"


def test_a_plain_message_is_unchanged(tmp_path):
    (tmp_path / "p.sq").write_text('use "nope.sq";\n' + TAIL)
    r = subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 1
    assert r.stderr.startswith('p.sq:1:1: error: `use "nope.sq"`: no such library (looked in .'), r.stderr
