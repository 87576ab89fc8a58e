"""`use "file.sq";`: the using file's folder first, then the library paths the installed parts give."""

from __future__ import annotations

import pytest
import serq_frontend
from serq import hookimpl
from serq.plugins import get_plugin_manager
from sqhelpers import _pm

LIB = "def twice(x) = 2 * x;\n"
PROG = "stage s : delay;\nsession {{ run s ({arg}); }}\n"


class Library:
    def __init__(self, folder):
        self.folder = folder

    @hookimpl
    def serq_frontend_library_paths(self):
        return [self.folder]


def test_the_programs_folder_comes_before_the_library_path(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.sq").write_text("def twice(x) = 3 * x;\n")
    (tmp_path / "m.sq").write_text(LIB)
    prog = tmp_path / "p.sq"
    prog.write_text('use "m.sq";\n' + PROG.format(arg="twice(1)"))
    pm = get_plugin_manager(plugins=[Library(tmp_path / "lib")])
    work = serq_frontend.compile(prog, pm=pm).session[0].work
    assert work.value == 2.0


def test_a_program_of_the_same_name_is_passed_over_for_the_library(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.sq").write_text(LIB)
    (tmp_path / "m.sq").write_text('use "m.sq";\n' + PROG.format(arg="twice(5)"))  # a program, and it uses m.sq
    prog = tmp_path / "p.sq"
    prog.write_text('use "m.sq";\n' + PROG.format(arg="twice(1)"))
    pm = get_plugin_manager(plugins=[Library(tmp_path / "lib")])
    assert serq_frontend.compile(prog, pm=pm).session[0].work.value == 2.0
    # the program itself finds the library, never itself
    assert serq_frontend.compile(tmp_path / "m.sq", pm=pm).session[0].work.value == 10.0


def test_only_a_program_of_that_name_is_an_error(tmp_path):
    (tmp_path / "m.sq").write_text(PROG.format(arg="1"))
    prog = tmp_path / "p.sq"
    prog.write_text('use "m.sq";\n' + PROG.format(arg="1"))
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(prog, pm=get_plugin_manager(plugins=[Library(tmp_path / "nowhere")]))
    assert str(e.value).startswith(f"{prog}:1:1: error: `use \"m.sq\"` finds {tmp_path / 'm.sq'}, which is a "
                                   "program, not a library")


def test_no_such_library(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text('use "nope.sq";\n' + PROG.format(arg="1"))
    with pytest.raises(serq_frontend.CompileError, match=r'p\.sq:1:1: error: `use "nope\.sq"`: no such library'):
        serq_frontend.compile(prog, pm=_pm())


def test_a_library_that_is_no_regular_file_is_named_as_such(tmp_path):
    import os

    prog = tmp_path / "p.sq"
    prog.write_text('use "d.sq";\nuse "f.sq";\n' + PROG.format(arg="1"))
    (tmp_path / "d.sq").mkdir()
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(prog, pm=_pm())
    assert str(e.value).startswith(f"{prog}:1:1: error: `use \"d.sq\"` finds {tmp_path / 'd.sq'}, which is not a "
                                   "regular file")
    (tmp_path / "d.sq").rmdir()
    (tmp_path / "d.sq").write_text("def x() = 1;\n")
    os.mkfifo(tmp_path / "f.sq")  # never opened: a FIFO is refused before it is read
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(prog, pm=_pm())
    assert str(e.value).startswith(f"{prog}:2:1: error: `use \"f.sq\"` finds {tmp_path / 'f.sq'}, which is not a "
                                   "regular file")


def test_the_examples_next_to_vllm_sq_use_the_library(tmp_path):
    from sqhelpers import EXAMPLES

    p = serq_frontend.compile(EXAMPLES / "multi-turn" / "vllm_chat.sq", pm=_pm())
    assert any(a.name == "hit_tokens" for a in p.attributes)  # an attribute only lib/vllm.sq sets
