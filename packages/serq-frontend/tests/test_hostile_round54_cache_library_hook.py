"""``serq_frontend.cache.load`` (the ``.sq`` loader's compile through the compile cache) of a program whose
plugin's ``serq_frontend_library_paths`` raises, or calls ``sys.exit()``: the plugin's one message, a
``PluginError`` naming it, as ``serq_frontend.compile`` gives. Before, the cache asked the hook for the key
outside the compile's guard, and the plugin's own ``RuntimeError`` (or ``SystemExit``, ending a Python
program that called it) came out of serQ's call, naming no plugin; ``serq check`` named it only through
the loader's guard."""

from __future__ import annotations

import sys

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import cache


class Raises:
    @serq.hookimpl
    def serq_frontend_library_paths(self):
        raise RuntimeError("no paths")


class Exits:
    @serq.hookimpl
    def serq_frontend_library_paths(self):
        sys.exit(3)


@pytest.mark.parametrize(("plugin", "said"), [(Raises, "RuntimeError: no paths at "), (Exits, "SystemExit: 3 at ")])
def test_the_hook_failing_is_the_plugins_message(tmp_path, monkeypatch, plugin, said):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    prog = tmp_path / "p.sq"
    prog.write_text('use "mm.sq";\nstage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\n')
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, plugin()])
    for load in (lambda: cache.load(prog, pm=pm), lambda: serq_frontend.compile(prog, pm=pm)):
        with pytest.raises(PluginError) as e:
            load()
        first = str(e.value).splitlines()[0]
        assert first.startswith(f"error: plugin '{__name__}.{plugin.__name__}' failed in "
                                f"{plugin.__name__}.serq_frontend_library_paths during the compile: {said}"), first
    assert list((tmp_path / "cache").glob("compile-*.bin")) == []


@pytest.mark.parametrize("plugin", [Raises, Exits])
def test_a_program_that_uses_no_library_compiles(tmp_path, monkeypatch, plugin):
    # the library folders are asked for by a program that uses a library alone, through the cache as through
    # serq_frontend.compile (test_known_defects_round51_library_paths_lazy; the key asked the hook at every
    # load, and refused this program)
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    prog = tmp_path / "p.sq"
    prog.write_text("stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\n")
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, plugin()])
    assert [s.name for s in cache.load(prog, pm=pm).stages] == ["s"]
    assert [s.name for s in serq_frontend.compile(prog, pm=pm).stages] == ["s"]
