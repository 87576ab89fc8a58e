"""Each `request;` of a workload's session is a copy of the server's body (the sides layer splices it there), and
those copies were not counted against the bound on what a program writes out (consts.MAX_WRITTEN, 200 000
nodes), as the uses of definitions, aggregates and queue calls are: a server of 3 000 statements requested
3 000 times, a file of 110 kB, made 9 000 000 statements; `serq check` ran out of 4 GB after more than five
minutes. The request that passes the bound is refused at its line and column, before its copy is made."""

from __future__ import annotations

import subprocess

import pytest
from serq_frontend import CompileError
from serq_frontend.consts import MAX_WRITTEN
from sqhelpers import SERQ, compile_src


def program(statements: int, requests: int) -> str:
    """A server of ``statements`` sets and a run, requested ``requests`` times, one `request;` a line from
    line 5."""
    body = "".join(f"  set a{i % 50} = now + {i};\n" for i in range(statements))
    reqs = "    request;\n" * requests
    return (f"stage svc : fifo;\nworkload {{\n  arrive poisson(0.5);\n  session {{\n{reqs}    end;\n  }}\n}}\n"
            f"server {{\n{body}  run svc (1);\n}}\nrun {{ horizon 10; }}\n")


# a `set a = now + i;` is 4 nodes (the statement, `+`, `now`, `i`), the `run svc (1);` 3 (the statement, its
# stage's name, its work): a server of 3 000 sets is 12 003 nodes, and the 17th copy (16 x 12 003 = 192 048,
# then 204 051) is the first past 200 000, on line 4 + 17
FIRST = (f"<source>:21:5: error: this `request;` (the server's body, written out here) writes out 12003 nodes, and "
         "the program's definitions, aggregates, queue calls and requests of its server written out make more than "
         f"{MAX_WRITTEN} nodes (expressions and statements) in all")


def test_the_request_past_the_bound_is_refused_at_it():
    with pytest.raises(CompileError) as e:
        compile_src(program(3000, 3000))
    assert str(e.value).splitlines()[0].startswith(FIRST), str(e.value)[:400]
    assert (e.value.line, e.value.col) == (21, 5)


def test_requests_within_the_bound_compile_as_before():
    # 16 copies of 12 003 nodes: within the bound, one session of 16 x 3 001 statements and the `end`
    prog = compile_src(program(3000, 16))
    assert len(prog.session) == 16 * 3001 + 1


def test_the_command_says_it_in_one_message(tmp_path):
    (tmp_path / "p.sq").write_text(program(3000, 3000))
    r = subprocess.run([SERQ, "check", "p.sq"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0].startswith(FIRST.replace("<source>", "p.sq")), lines[0]
    assert lines[1:] == ["      request;", "      ^"], lines
    assert r.stdout == ""
