"""The compile cache and the plugins a program's compile depends on: a plugin edited, changed or taken away
between two loads of one unchanged program is a miss, never the IR of a compile made with other plugins
(docs/hooks.md; serq_frontend.cache's key)."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
import serq_sim.plugin
from serq_frontend import cache

PROGRAM = """stage svc : @wide;
workload { arrive batch(1); }
session { run svc (1); }
run { horizon 10; }
"""

HOOKS = """
from serq import hookimpl
from serq_sim.stages import StageKind


@hookimpl
def serq_sim_register_stage_kinds(register):
    register({name!r}, StageKind)
"""


def manager(*plugins):
    """A manager of modules only, as the installed plugins are: every plugin is named the same in each."""
    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, serq_sim.plugin, *plugins])


@pytest.fixture
def folder(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SERQ_CACHE_DIR", str(d))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    return d


def test_a_hook_implemented_in_a_module_of_the_plugins_package_is_part_of_the_key(tmp_path, folder, monkeypatch):
    # a plugin as a package often is: its entry point names the package, whose __init__ imports the hooks
    # from a module of it; renaming the kind there (the __init__ unchanged) must not leave the program
    # compiling from the cache as if the old name were still registered
    site = tmp_path / "site"
    pkg = site / "cachekey_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .hooks import serq_sim_register_stage_kinds  # noqa: F401\n")
    hooks = pkg / "hooks.py"
    hooks.write_text(textwrap.dedent(HOOKS.format(name="wide")))
    monkeypatch.syspath_prepend(str(site))
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    try:
        plugin = importlib.import_module("cachekey_pkg")
        first = cache.load(prog, pm=manager(plugin))
        assert first.stages[0].kind.name == "wide"
        assert len(list(folder.glob("compile-*.bin"))) == 1
        hooks.write_text(textwrap.dedent(HOOKS.format(name="narrow")) + "# renamed\n")
        importlib.reload(plugin.hooks)
        plugin = importlib.reload(plugin)
        with pytest.raises(serq_frontend.CompileError, match="unknown stage kind `@wide`"):
            cache.load(prog, pm=manager(plugin))
    finally:
        for name in [m for m in sys.modules if m == "cachekey_pkg" or m.startswith("cachekey_pkg.")]:
            del sys.modules[name]
