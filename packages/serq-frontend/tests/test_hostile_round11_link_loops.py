"""A loop of symbolic links beside a program (``x.sq -> x.sq``, a link left half-made) is a name the
folder lists that names no file. The closest-name hint of a ``use`` that finds no library looks at every
``*.sq`` the searched folders hold, and resolved each with ``pathlib.Path.resolve``, which raises a
``RuntimeError`` (not an ``OSError``) for a loop before Python 3.13: the compile ended in a traceback
instead of the ``no such library`` error. ``serq.files.path_resolved`` gives that ``RuntimeError`` as an
``OSError`` (``ELOOP``), and the hint passes the loop over."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq.files import path_resolved
from serq_frontend.diagnostics import CompileError

pytestmark = pytest.mark.timeout(60)


def test_a_use_that_finds_nothing_beside_a_link_loop_is_one_error(tmp_path):
    (tmp_path / "loop.sq").symlink_to("loop.sq")
    (tmp_path / "libx.sq").write_text("def f() = 1;\n")
    prog = tmp_path / "p.sq"
    prog.write_text('use "lib.sq";\nstage s : fifo;\n')
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(str(prog), pm=None)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f'{prog}:1:1: error: `use "lib.sq"`: no such library (looked in {tmp_path}'), first
    assert first.endswith("(did you mean `libx.sq`?)"), first


def test_path_resolved_of_a_link_loop_is_an_os_error(tmp_path):
    loop = tmp_path / "a"
    loop.symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    if sys.version_info >= (3, 13):  # pathlib resolves a loop as far as it goes, as os.path.realpath does
        assert path_resolved(loop) == str(Path(loop).resolve())
    else:  # pathlib raises RuntimeError("Symlink loop from …"), which no `except OSError` catches
        with pytest.raises(OSError) as e:
            path_resolved(loop)
        assert e.value.errno == errno.ELOOP
    assert os.path.islink(loop)  # (nothing was changed)
