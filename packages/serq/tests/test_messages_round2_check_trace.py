"""`serq check` of a program whose workload's trace cannot be read (language.txt §2: `trace "file.csv"`, relative
to the program's folder): a warning at the clause, status 0.

It said OK and nothing else, and `serq run` of the same program was refused at the clause ("cannot read the
trace …"). It is a warning, not a refusal, because `serq run --trace FILE` replaces the workload's trace, so the
program may still run (docs/language.md, Commands). The words are the run's.
"""

from __future__ import annotations

import os

import pytest

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); trace "TRACE"; }
session { turn; run s (out + new + think + more + forced); end; }
run { horizon 10; }
"""
ROWS = "session,turn,new,out,think,more,forced\n0,0,1,1,0,0,0\n"
OK = "OK: 0 pool(s), 1 stage(s), 9 attribute(s), 1 block(s)\n"


def _program(folder, trace: str) -> str:
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "p.sq").write_text(PROGRAM.replace("TRACE", trace))
    return "sub/p.sq"


def _said(path: str, why: str) -> list[str]:
    return [f"sub/p.sq:2:31: warning: cannot read the trace {path}: {why}; `serq run` of the program refuses it "
            "unless `--trace FILE` replaces it",
            '  workload { arrive poisson(1); trace "' + path.removeprefix("sub/") + '"; }',
            "                                ^"]


def test_a_missing_trace_is_warned_of_at_its_clause(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    file = _program(tmp_path, "t.csv")
    r = serq_in_process("check", file)
    assert (r.returncode, r.stdout) == (0, OK)
    assert r.stderr.splitlines() == _said("sub/t.csv", "No such file or directory")
    # the run refuses it with the same words, as an error; with --trace it runs
    run = serq_in_process("run", file)
    assert run.returncode == 1
    assert run.stderr.splitlines()[0] == ("sub/p.sq:2:31: error: cannot read the trace sub/t.csv: No such file or "
                                          "directory")
    (tmp_path / "other.csv").write_text(ROWS)
    assert serq_in_process("run", file, "--trace", "other.csv").returncode == 0


def test_a_trace_that_is_no_file_is_warned_of(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    file = _program(tmp_path, "d")
    (tmp_path / "sub" / "d").mkdir()
    r = serq_in_process("check", file)
    assert r.returncode == 0
    assert r.stderr.splitlines() == _said("sub/d", "is a folder, not a file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_warned_of_without_waiting_for_a_writer(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    file = _program(tmp_path, "f.csv")
    os.mkfifo(tmp_path / "sub" / "f.csv")
    r = serq_in_process("check", file)
    assert r.returncode == 0
    assert r.stderr.splitlines() == _said("sub/f.csv", "is a FIFO (a named pipe), not a file")


def test_a_trace_beside_the_program_says_nothing(tmp_path, monkeypatch, serq_in_process):
    """The trace is read relative to the program's folder, not the current one."""
    monkeypatch.chdir(tmp_path)
    file = _program(tmp_path, "t.csv")
    (tmp_path / "sub" / "t.csv").write_text(ROWS)
    (tmp_path / "t.csv").unlink(missing_ok=True)
    r = serq_in_process("check", file)
    assert (r.returncode, r.stdout, r.stderr) == (0, OK, "")


def test_an_ir_file_whose_trace_is_missing_is_warned_of_too(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    file = _program(tmp_path, "t.csv")
    ir = serq_in_process("ir", file)
    assert ir.returncode == 0
    (tmp_path / "p.ir.json").write_text(ir.stdout)
    r = serq_in_process("check", "p.ir.json")
    assert r.returncode == 0
    assert r.stderr.splitlines() == _said("sub/t.csv", "No such file or directory")
