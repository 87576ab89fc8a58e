"""The closest-name hint of a ``use`` that finds no library never names the file the ``use`` is in: ``use
"zz.sq";`` in ``u.sq`` said ``(did you mean `u.sq`?)``, a file that does not use itself (the use would be
refused as naming the file it is in)."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError

TAIL = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"


def test_the_hint_does_not_name_the_using_file(tmp_path):
    (tmp_path / "u.sq").write_text('use "zz.sq";\n' + TAIL)
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(tmp_path / "u.sq")
    assert "did you mean `u.sq`" not in str(info.value)
    assert "no such library" in str(info.value)


def test_the_hint_names_a_library_beside_it(tmp_path):
    (tmp_path / "u.sq").write_text('use "lib1.sq";\n' + TAIL)
    (tmp_path / "lib.sq").write_text("def one() = 1;\n")
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(tmp_path / "u.sq")
    assert "(did you mean `lib.sq`?)" in str(info.value)


def test_the_hint_does_not_name_a_hidden_file(tmp_path):
    # a file whose name starts with a dot (an editor's or a tool's copy, `.zqlib.sq`) is nobody's library
    (tmp_path / "u.sq").write_text('use "zqlib.sq";\n' + TAIL)
    (tmp_path / ".zqlib.sq").write_text("def one() = 1;\n")
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(tmp_path / "u.sq")
    assert "no such library" in str(info.value)
    assert ".zqlib.sq" not in str(info.value)
