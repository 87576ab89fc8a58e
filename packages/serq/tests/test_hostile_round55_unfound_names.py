"""A file a command reads (click's check that it exists: `serq metrics RECORDS`, `serq plot SOURCE`) whose
name leads nowhere the system can follow: a loop of symbolic links and a name too long for the system were
`File 'x' does not exist`, which it may well do, and a name longer than a message shows was quoted whole
(5 000 characters of a missing path, where every other message cuts a name beyond 240 characters to its
first 120 and last 119 around `…`). They are now the system's reason, the name shown as every message
shows a file's. Each is said as every command says an input it cannot read (`error: NAME: cannot read:
REASON`, status 1, as `serq run`'s program; test_hostile_round57_unread_inputs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
DEEP = "/".join(["d" * 200] * 25) + "/x.csv"  # 5 030 characters, longer than PATH_MAX
LONG = "a" * 300 + ".csv"  # a name longer than a folder takes (NAME_MAX)


def _cut(name: str) -> str:
    return name if len(name) <= 240 else name[:120] + "…" + name[-119:]


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("command", [["metrics"], ["plot", "--cdf", "y", "-o", "c.svg"]])
def test_names_that_lead_nowhere_are_said_so(tmp_path, command):
    os.symlink("b.csv", tmp_path / "a.csv")
    os.symlink("a.csv", tmp_path / "b.csv")
    for name, why in (("a.csv", "a.csv: cannot read: Too many levels of symbolic links"),
                      (LONG, f"{_cut(LONG)}: cannot read: File name too long"),
                      (DEEP, f"{_cut(DEEP)}: cannot read: File name too long")):
        r = _serq(tmp_path, command[0], name, *command[1:])
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == f"error: {why}\n"
    r = _serq(tmp_path, command[0], "missing.csv", *command[1:])
    assert (r.returncode, r.stderr) == (1, "error: missing.csv: cannot read: No such file or directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]
