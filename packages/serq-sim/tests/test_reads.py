"""A program reads only inside its folder (and the library folders, and what SERQ_PATH adds), and a
diagnostic quotes only serQ sources: `use` of a file outside, a trace outside, and an IR span naming a
file that is not a `.sq` file neither read nor quote it."""

from __future__ import annotations

import os

import pytest
import serq_frontend
import serq_ir
import serq_sim
from irb import P
from serq_ir import nodes as N

SECRET = "TOKEN-4f9a-do-not-print"
BODY = "stage s : fifo;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "prog").mkdir()
    (tmp_path / "outside").mkdir()
    # a file outside the program's folder whose first line is not serQ: a diagnostic would quote it
    (tmp_path / "outside" / "lib.sq").write_text(f"{SECRET} here\n")
    (tmp_path / "outside" / "good.sq").write_text("def twice(x) = 2 * x;\n")
    (tmp_path / "outside" / "t.csv").write_text("session,turn,new,out,think,forced\n0,0,1,1,0,0\n")
    return tmp_path


@pytest.mark.parametrize("how", ["relative", "absolute", "link"])
def test_use_reads_nothing_outside_the_programs_folder(tree, how, monkeypatch):
    monkeypatch.delenv("SERQ_PATH", raising=False)
    prog = tree / "prog" / "p.sq"
    target = {"relative": "../outside/lib.sq", "absolute": str(tree / "outside" / "lib.sq"), "link": "l.sq"}[how]
    if how == "link":
        if os.name != "posix":
            pytest.skip("symbolic links")
        os.symlink(tree / "outside" / "lib.sq", tree / "prog" / "l.sq")
    prog.write_text(f'use "{target}";\n' + BODY)
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(prog)
    assert "outside the folders a program may read" in str(e.value)
    assert SECRET not in str(e.value)


def test_use_names_a_sq_file(tree):
    prog = tree / "prog" / "p.sq"
    (tree / "prog" / "notes.txt").write_text(f"{SECRET}\n")
    prog.write_text('use "notes.txt";\n' + BODY)
    with pytest.raises(serq_frontend.CompileError, match=r"a library is a `\.sq` file") as e:
        serq_frontend.compile(prog)
    assert SECRET not in str(e.value)


def test_serq_path_widens_what_use_reads(tree, monkeypatch):
    monkeypatch.setenv("SERQ_PATH", str(tree / "outside"))
    prog = tree / "prog" / "p.sq"
    prog.write_text('use "good.sq";\nstage s : fifo;\nworkload { arrive batch(1); }\nsession { run s (twice(1)); }\n')
    assert serq_frontend.compile(prog).stages[0].name == "s"
    prog.write_text('use "../outside/good.sq";\nstage s : fifo;\nworkload { arrive batch(1); }\n'
                    'session { run s (twice(1)); }\n')
    assert serq_frontend.compile(prog).stages[0].name == "s"


def test_a_trace_outside_the_programs_folder_is_not_read(tree, monkeypatch):
    monkeypatch.delenv("SERQ_PATH", raising=False)
    prog = tree / "prog" / "p.sq"
    prog.write_text('stage s : fifo;\nworkload { arrive batch(1); trace "../outside/t.csv"; }\n'
                    'session { turn; run s (new); }\nrun { horizon 10; }\n')
    program = serq_frontend.compile(prog)
    with pytest.raises(serq_sim.SimError, match=r"p\.sq:2:.*is outside the program's folder"):
        serq_sim.run(program)
    monkeypatch.setenv("SERQ_PATH", str(tree / "outside"))  # widened
    assert serq_sim.run(program).result.end >= 0
    monkeypatch.delenv("SERQ_PATH")
    assert serq_sim.run(program, trace=str(tree / "outside" / "t.csv")).result.end >= 0  # --trace: any file


def test_a_span_naming_another_file_is_not_quoted(tree):
    secret = tree / "outside" / "key"
    secret.write_text(f"{SECRET}\n")
    quoted = tree / "outside" / "real.sq"
    quoted.write_text("run here\n")
    for file, shown in ((str(secret), False), (str(quoted), True)):
        p = P()
        guard = N.Draw(dist="uniform", args=[N.Num(value=0.2), N.Num(value=0.8)])
        prog = p.build([p.set_("g", guard), N.Branch(guard=p.ex("g"), then=[], span=N.Span(file=file, line=1,
                                                                                                col=1))],
                       arrive=N.Batch(n=1))
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(serq_ir.decode(serq_ir.encode(prog)))
        assert str(e.value).startswith(f"{file}:1:1: error: at t=0, session 0: branch guard is 0.")
        assert (SECRET in str(e.value)) is False
        assert ("run here" in str(e.value)) is shown  # a .sq file's line is quoted as before


def test_a_trace_the_program_names_is_read_only_as_a_regular_file(tmp_path):
    # a FIFO planted where a program's trace clause points blocked the run forever (nothing hangs); a
    # --trace the user names is read only as a regular file too (docs/security.md: a pipe without a
    # writer would block, and a malformed trace is read a second time to locate its error)
    import subprocess
    import sys

    prog = tmp_path / "p.sq"
    prog.write_text('stage s : fifo;\nworkload { arrive batch(1); trace "t.csv"; }\n'
                    'session { turn; run s (new); }\nrun { horizon 10; }\n')
    os.mkfifo(tmp_path / "t.csv")
    out = tmp_path / "r.txt"
    serq = [sys.executable, "-c", "from serq.cli import main; main()"]
    r = subprocess.run([*serq, "run", str(prog), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"{prog}:2:29: error: cannot read the trace {tmp_path / 't.csv'}: is a FIFO "
                               "(a named pipe), not a file"), r.stderr
    assert not out.exists()
    fifo = tmp_path / "given"
    os.mkfifo(fifo)
    r = subprocess.run([*serq, "run", str(prog), "--trace", str(fifo), "-o", str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == f"{fifo}: error: cannot read the trace: is a FIFO (a named pipe), not a file\n", r.stderr
    assert not out.exists()
