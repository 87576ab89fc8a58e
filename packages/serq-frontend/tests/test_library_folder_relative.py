"""A library folder a plugin gives as a relative path (``serq_frontend_library_paths``; a plugin imported
through a relative ``sys.path`` entry gives ``Path(__file__).parent`` relative) is relative to the current
folder when the plugin was registered, and is resolved against it once: a later ``chdir`` (the library API's
plugin manager is kept for the process) does not move the library. Before, it was resolved against the
current folder at each compile: after a ``chdir`` a ``use`` found no file, or another folder's (docs/hooks.md).
"""

from __future__ import annotations

import os

import pytest
import serq_frontend
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_frontend.cache import library_paths

pytestmark = pytest.mark.timeout(60)


class Library:
    def __init__(self, folder):
        self.folder = folder

    @hookimpl
    def serq_frontend_library_paths(self):
        return [self.folder]


def _folders(pm, under):
    return [str(p) for p in library_paths(pm) if str(p).startswith(str(under))]


def test_a_relative_folder_is_the_one_of_the_registration_after_a_chdir(tmp_path, monkeypatch):
    monkeypatch.delenv("SERQ_PATH", raising=False)
    for d in ("plug/lib", "elsewhere/lib", "work"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "plug/lib/m.sq").write_text("def twice(x) = 2 * x;\n")
    (tmp_path / "elsewhere/lib/m.sq").write_text("def twice(x) = 3 * x;\n")  # what the cwd's lib/ would give
    prog = tmp_path / "work/p.sq"
    prog.write_text('use "m.sq";\nstage s : delay;\nsession { run s (twice(1)); }\n')
    monkeypatch.chdir(tmp_path / "plug")
    pm = get_plugin_manager(plugins=[Library("lib")])
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert _folders(pm, tmp_path) == [str(tmp_path / "plug/lib")]
    assert serq_frontend.compile(prog, pm=pm).session[0].work.value == 2.0


def test_plugins_registered_in_different_folders_each_keep_their_own(tmp_path, monkeypatch):
    monkeypatch.delenv("SERQ_PATH", raising=False)
    for d in ("a", "b", "c"):
        (tmp_path / d).mkdir()
    monkeypatch.chdir(tmp_path / "a")
    pm = get_plugin_manager(plugins=[Library("lib")])
    monkeypatch.chdir(tmp_path / "b")
    pm.register(Library(os.path.join("..", "b", "lib2")))
    pm.register(Library(str(tmp_path / "abs")))  # an absolute folder is as it is
    monkeypatch.chdir(tmp_path / "c")
    # pluggy calls the last registered first
    assert _folders(pm, tmp_path) == [str(tmp_path / "abs"), str(tmp_path / "b" / ".." / "b" / "lib2"),
                                      str(tmp_path / "a" / "lib")]
