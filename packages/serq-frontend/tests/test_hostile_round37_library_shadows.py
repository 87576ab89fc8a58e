"""A program's `let`, pool, stage or queue named like a definition of a library it uses is refused at the
library's definition, as before, and now says where the program's name is and that it is the one to rename:
it said `` `reusable` is a `let`; a definition needs another name `` at lib/vllm.sq's line, which asked the
library's user for another name in a file they do not edit, naming no line of their own."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_frontend import CompileError

LIB = "def half(x) = x / 2;\n"
TAIL = "workload { arrive poisson(1); }\nsession { run svc (half(2)); end; }\nrun { horizon 10; }\n"


@pytest.mark.parametrize("declaration, what, kind, col", [
    ("let half = 3;\n", "a `let`", "let", 5),
    ("stage half : fifo;\n", "a stage", "stage", 7),
    ("pool half { cap 1; }\n", "a pool", "pool", 6),
])
def test_a_programs_name_a_library_defines_is_named_where_the_program_has_it(tmp_path: Path, monkeypatch,
                                                                               declaration, what, kind, col):
    monkeypatch.setenv("SERQ_CACHE_DIR", "")
    (tmp_path / "lib.sq").write_text(LIB)
    (tmp_path / "p.sq").write_text('use "lib.sq";\nstage svc : fifo;\n' + declaration + TAIL)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(tmp_path / "p.sq")
    lines = str(e.value).splitlines()
    assert lines[0] == (f"{tmp_path / 'lib.sq'}:1:5: error: `half` is {what} of the program (at "
                        f"{tmp_path / 'p.sq'}:3:{col}), and this library defines it too: a definition needs a name "
                        f"of its own, so give the program's {kind} another name"), lines
    assert lines[3] == f"{tmp_path / 'p.sq'}:1:1: note: in the library `lib.sq`, used here", lines


def test_a_definition_of_the_programs_own_text_is_told_as_before():
    source = "let half = 3;\n" + LIB + "stage svc : fifo;\n" + TAIL
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=source)
    assert str(e.value).splitlines()[0] == "<source>:2:5: error: `half` is a `let`; a definition needs another name"
