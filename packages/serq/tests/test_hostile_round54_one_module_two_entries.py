"""Two entry points of the group ``serq`` that name one module (``a = twin54`` and ``b = twin54``, in one
distribution or in two): the second is refused as a plugin that cannot be loaded, in one line naming the
plugin the module is already (docs/hooks.md). Before, pluggy's ValueError was the message: "Plugin already
registered under a different name: b=<module …> {'host': <module 'serq.builtin' from …>, 'ir': …}", every
plugin of the manager with its module's path, ending ``at …/pluggy/_manager.py:215``, a line of pluggy's.
Either name blocked, the other loads it."""

from __future__ import annotations

import sys

import pytest
import serq
from serq.errors import PluginError

MODULE = """
from serq import hookimpl


@hookimpl
def serq_frontend_library_paths():
    return []
"""


def dist(site, project, lines):
    info = site / f"{project.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\n" + "".join(f"{k} = {v}\n" for k, v in lines))


@pytest.fixture
def site(tmp_path, monkeypatch):
    s = tmp_path / "site"
    s.mkdir()
    (s / "twin54.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(s))
    monkeypatch.delenv("SERQ_DISABLED_PLUGINS", raising=False)
    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    yield s
    sys.modules.pop("twin54", None)


@pytest.mark.parametrize("two", [False, True], ids=["one distribution", "two distributions"])
def test_the_second_entry_point_of_one_module_is_one_line(site, monkeypatch, two):
    if two:
        dist(site, "serq-twin", [("a", "twin54")])
        dist(site, "serq-twin2", [("b", "twin54")])
    else:
        dist(site, "serq-twin", [("a", "twin54"), ("b", "twin54")])
    with pytest.raises(PluginError) as e:
        serq.get_plugin_manager()
    assert str(e.value).splitlines() == [
        f"error: plugin 'b' (from serq-twin{'2' if two else ''} 0.1.0) cannot be loaded (twin54): what it names is "
        "the plugin 'a' of serq-twin 0.1.0 already, and one module (or object) is one plugin: give it one entry "
        "point",
        f"(run without it: SERQ_DISABLED_PLUGINS=b, or uninstall serq-twin{'2' if two else ''})"]
    for blocked, kept in (("b", "a"), ("a", "b")):
        monkeypatch.setenv("SERQ_DISABLED_PLUGINS", blocked)
        pm = serq.get_plugin_manager()
        assert pm.get_plugin(kept) is sys.modules["twin54"] and pm.get_plugin(blocked) is None
