"""A refusal that names a second place (the observe a gauge's name is taken from, a definition used before
it is defined) gives its line:col in the refused statement's own file and its file too in another, a
library's (serq_frontend.diagnostics.Pos.seen_from, the one rule of such places)."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError

LIB = """def watch(x) {
  observe w = x;
}
"""

PROGRAM = """use "lib.sq";
stage s : fifo;
workload { arrive poisson(1); }
session {
  run s (1);
  watch(1);
}
gauge w = 1;
"""


def _first_line(path) -> str:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(str(path))
    return str(e.value).splitlines()[0]


def test_a_library_observe_is_named_with_its_file(tmp_path):
    (tmp_path / "lib.sq").write_text(LIB)
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _first_line(tmp_path / "p.sq") == (f"{tmp_path / 'p.sq'}:8:1: error: gauge `w` has the name of an "
                                             f"observe (at {tmp_path / 'lib.sq'}:2:3)")


def test_an_observe_of_the_same_file_is_named_by_line_and_column(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM.replace('use "lib.sq";\n', "").replace("  watch(1);\n",
                                                                                    "  observe w = 1;\n"))
    assert _first_line(tmp_path / "p.sq") == (f"{tmp_path / 'p.sq'}:7:1: error: gauge `w` has the name of an "
                                             "observe (at 5:3)")
