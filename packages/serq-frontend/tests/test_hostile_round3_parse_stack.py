"""A source within the size limit whose parse holds ever more on the parser's stack (a run of ``(``, of
prefix ``-``, of ``c ? a :``, of ``loop {``) is refused at the token where the stack passes 50 000 entries
(serq_frontend.parser.MAX_STACK), without reading on. Each character of such a run held some 400 bytes
until the parse ended: 1 MiB of ``(`` took 420 MB and 4 s to be refused, 4 MiB 1.6 GB and 22 s, and 16 MiB
(the size limit) would take 6 GB."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
SIZE = 4 * 2**20


@pytest.mark.parametrize("head, unit", [("let x = ", "("), ("let x = ", "-"), ("let x = ", "a["), ("let x = ", "f("),
                                        ("let x = ", "a ? 1 : "), ("session { ", "loop { "),
                                        ("session { ", "hold kv (1) { ")])
@pytest.mark.parametrize("command", ["check", "fmt"])
def test_a_run_that_only_grows_the_parse_stack_is_refused_early(tmp_path, head, unit, command, peak_memory):
    (tmp_path / "p.sq").write_text(head + unit * ((SIZE - len(head)) // len(unit)) + "1;\n")
    before = (tmp_path / "p.sq").read_bytes()
    with open(tmp_path / ".err", "w") as err:  # (its own peak: conftest.py's peak_memory; killed, 137, after 30 s)
        code, peak = peak_memory([SERQ, command, "p.sq"], timeout=30, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=err)
    lines = (tmp_path / ".err").read_text().splitlines()
    assert code == 1 and len(lines) == 3, lines
    assert lines[0].startswith("p.sq:1:") and lines[0].endswith(
        ": error: the program nests more than 1000 deep here (expressions, brackets and blocks inside one another); "
        "an expression may nest 64 deep and loops, branches and holds 32: name a part with `set`, or write a long "
        "chain of terms as `sum j in n (…)`")
    assert peak < 300 * 2**20, peak
    assert (tmp_path / "p.sq").read_bytes() == before


def test_a_program_nested_within_the_limit_parses():
    import serq_frontend

    depth = 900  # under MAX_NESTING: parsed, and linked to its value
    src = f"let x = {'(' * depth}1{')' * depth};\nstage s : delay;\nworkload {{ arrive poisson(1); }}\n" \
          "session { run s (x); }\nrun { horizon 5; }\n"
    program = serq_frontend.compile(source=src)
    assert [c.value for c in program.constants] == [1.0]
