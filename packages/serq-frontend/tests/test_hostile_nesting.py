"""A library (`use`) or a `--def` body nested past the recursion limit of the passes after parsing:
the program's own text is held to 1 000 levels at its deepest node, but a library's and a --def's were
not, and came out as `p.sq: error: the program nests too deeply to compile`, without a position and
naming the program. They are held to the same limit, at their own file's (or --def's) line and column."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("def f() = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (f()); }\n"
           "run { horizon 5; }\n")
DEEP = "-" * 20000 + "1"


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "check", *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "SERQ_COMPILE_CACHE": "0"})


def _located(r: subprocess.CompletedProcess, where: str, notes: tuple[str, ...] = ()) -> None:
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"{where}: error: the program nests more than 1000 deep here"), lines[0]
    assert len(lines) == 3 + 3 * len(notes) and lines[2].strip() == "^", r.stderr[:400]
    assert lines[3::3] == list(notes)


def test_a_library_nested_too_deeply_is_refused_in_the_library(tmp_path):
    (tmp_path / "lib.sq").write_text(f"def g() = {DEEP};\n")
    (tmp_path / "p.sq").write_text('use "lib.sq";\n' + PROGRAM.replace("f()", "g()").replace("def f() = 1;\n", ""))
    _located(_check(tmp_path, "p.sq"), "lib.sq:1:1009", ("p.sq:1:1: note: in the library `lib.sq`, used here",))


@pytest.mark.parametrize("body, at", [(DEEP, "1001"), ("(" * 1500 + "-" * 1500 + "1" + ")" * 1500, "2501")])
def test_a_def_nested_too_deeply_is_refused_in_the_def(tmp_path, body, at):
    (tmp_path / "p.sq").write_text(PROGRAM)
    _located(_check(tmp_path, "p.sq", "--def", f"f={body}"), f"--def f:1:{at}")
