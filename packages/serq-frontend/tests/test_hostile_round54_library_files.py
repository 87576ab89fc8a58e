"""A plugin's ``serq_frontend_library_paths`` that returns a library's file rather than its folder
(``Path(__file__).parent / "lib" / "mm.sq"``): a ``use`` it does not find says the path is a file, not a
folder. Before, ``no such library (looked in /…/lib/mm.sq)`` alone read as if the file were missing, when it
was there (and ``use "mm.sq";`` named it). A folder that is not there is listed as before, without it."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin

USE = 'use "mm.sq";\nstage s : delay;\nworkload { arrive batch(1); }\nsession { run s (two()); }\n'


def manager(folders):
    class Lib:
        @serq.hookimpl
        def serq_frontend_library_paths(self):
            return folders

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Lib()])


def test_a_file_for_a_folder_is_said(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "mm.sq").write_text("def two() = 2;\n")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=USE, pm=manager([str(lib / "mm.sq"), str(tmp_path / "gone")]))
    assert str(e.value).splitlines()[0] == (
        f'<source>:1:1: error: `use "mm.sq"`: no such library (looked in {lib / "mm.sq"}, {tmp_path / "gone"}); '
        f"{lib / 'mm.sq'} is a file, not a folder")
    # the folder itself finds it
    program = serq_frontend.compile(source=USE, pm=manager([str(lib)]))
    assert program.session[0].work.value == 2.0


def test_a_folder_that_is_not_there_is_listed_alone(tmp_path):
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=USE, pm=manager([str(tmp_path / "gone")]))
    assert str(e.value).splitlines()[0] == (
        f'<source>:1:1: error: `use "mm.sq"`: no such library (looked in {tmp_path / "gone"})')
