"""A file named with a letter that only looks like an ASCII one, beside the file it prints as, is told so.

``serq check mɡ1.sq`` (a script ɡ, U+0261) in a folder that holds ``mg1.sq`` said only ``cannot read: No such
file or directory``, beside a listing where the file seems to be there; a program's ``trace "short_basе.csv"``
(a Cyrillic е) and ``--trace`` alike. Each now adds serq.errors.missing_file_note: the folder's file whose
ASCII name is like it, and the look-alike letter by code point and name (a program file of any suffix, an IR
file, a trace, through the command and the Python API). An ASCII name that is not there is told as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq.errors import missing_file_note
from serq_frontend.diagnostics import CompileError
from serq_ir.errors import IRError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """\
stage s : delay;
workload { arrive poisson(1); trace "t.csv"; }
session { loop { turn; run s (new); } }
run { horizon 5; }
"""
TRACE = "session,turn,new,out,think,forced\n0,1,2,1,0,0\n"
SCRIPT_G = "\u0261"  # looks like g
NOTE_G = "the name given is not ASCII: its `\u0261` is U+0261 LATIN SMALL LETTER SCRIPT G"


def folder(tmp_path: Path) -> Path:
    (tmp_path / "mg1.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(TRACE)
    return tmp_path


def serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [["check"], ["run", "--no-progress"], ["ir"]])
def test_a_program_file_with_a_look_alike_letter(tmp_path, command):
    r = serq(folder(tmp_path), *command, f"m{SCRIPT_G}1.sq")
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"error: m{SCRIPT_G}1.sq: cannot read: No such file or directory (did you mean `mg1.sq`? "
                        f"{NOTE_G})\n"), r.stderr


def test_a_suffix_with_a_look_alike_letter(tmp_path):
    r = serq(folder(tmp_path), "check", "mg1.s\u051b")
    assert r.returncode == 1, r.stderr
    assert r.stderr == ("error: mg1.s\u051b: cannot read: No such file or directory (did you mean `mg1.sq`? the name "
                        "given is not ASCII: its `\u051b` is U+051B CYRILLIC SMALL LETTER QA)\n"), r.stderr


def test_an_ascii_name_is_told_as_before(tmp_path):
    r = serq(folder(tmp_path), "check", "mg2.sq")
    assert r.returncode == 1, r.stderr
    assert r.stderr == "error: mg2.sq: cannot read: No such file or directory\n", r.stderr


def test_a_trace_given_on_the_command_line(tmp_path):
    folder(tmp_path)
    r = serq(tmp_path, "run", "mg1.sq", "--no-progress", "--trace", "t.cs\u0475")
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == ("t.cs\u0475: error: cannot read the trace: No such file or directory (did you "
                                        "mean `t.csv`? the name given is not ASCII: its `\u0475` is U+0475 CYRILLIC "
                                        "SMALL LETTER IZHITSA)"), r.stderr


def test_a_trace_clause_of_the_program(tmp_path):
    folder(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM.replace('"t.csv"', '"t.cs\u0475"'))
    r = serq(tmp_path, "run", "p.sq", "--no-progress")
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == ("p.sq:2:31: error: cannot read the trace t.cs\u0475: No such file or directory "
                                        "(did you mean `t.csv`? the name given is not ASCII: its `\u0475` is U+0475 "
                                        "CYRILLIC SMALL LETTER IZHITSA)"), r.stderr


def test_the_python_api(tmp_path, monkeypatch):
    monkeypatch.chdir(folder(tmp_path))
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(f"m{SCRIPT_G}1.sq")
    assert str(e.value) == f"error: m{SCRIPT_G}1.sq: cannot read: No such file or directory (did you mean `mg1.sq`? {NOTE_G})"
    (tmp_path / "mg1.ir.json").write_bytes(serq_ir.encode(serq_frontend.compile("mg1.sq")))
    with pytest.raises(IRError) as e:
        serq_ir.load(f"m{SCRIPT_G}1.ir.json")
    assert str(e.value) == (f"error: m{SCRIPT_G}1.ir.json: cannot read: No such file or directory (did you mean "
                            f"`mg1.ir.json`? {NOTE_G})")


def test_the_note_reads_the_named_folder(tmp_path):
    sub = tmp_path / "d"
    sub.mkdir()
    (sub / "mg1.sq").write_text(PROGRAM)
    assert missing_file_note(str(sub / f"m{SCRIPT_G}1.sq")) == f" (did you mean `mg1.sq`? {NOTE_G})"
    assert missing_file_note(str(tmp_path / "nosuch" / f"m{SCRIPT_G}1.sq")) == ""  # (a folder not there)
    assert missing_file_note(str(sub / "mg2.sq")) == ""
