"""get_plugin_manager(plugins=[...]) with a plugin the manager has already, or one whose name another plugin
has: pluggy's ValueError was the message, with its dict of every registered module, a line of pluggy's and
the advice to disable the other plugin (``SERQ_DISABLED_PLUGINS=sim`` for a module named ``sim``, which
takes serq-sim away). An installed plugin given again in process is there once; a name taken is one line
naming both."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
import serq
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import collect

pytestmark = pytest.mark.timeout(60)


def format_plugin(module_name: str) -> types.ModuleType:
    m = types.ModuleType(module_name)

    @hookimpl
    def serq_report_register_formats(register):
        register("walk_oneline", lambda report, out: out.write("x\n"))

    m.serq_report_register_formats = serq_report_register_formats
    return m


def test_a_plugin_given_twice_is_registered_once():
    m = format_plugin("walk_fmt_twice")
    pm = serq.get_plugin_manager(plugins=[m, m])
    registry = collect(pm, "serq_report_register_formats", "report format")
    # one registration, so no "report format 'walk_oneline' is registered twice"
    assert "walk_oneline" in registry
    assert sum(1 for p in pm.get_plugins() if p is m) == 1


def test_a_name_another_plugin_has_is_one_line_naming_both():
    m = format_plugin("sim")  # serq-sim's entry point is named sim
    with pytest.raises(PluginError) as e:
        serq.get_plugin_manager(plugins=[m])
    msg = str(e.value)
    assert msg == ("error: plugin 'sim' cannot be registered: its name 'sim' is taken by the plugin 'sim' of "
                   f"serq-sim {serq.__version__}; a plugin object given in plugins= needs a name of its own "
                   "(its module's __name__)")
    assert "SERQ_DISABLED_PLUGINS" not in msg and "<module" not in msg


def test_an_installed_plugin_given_again_in_process_is_there_once(tmp_path):
    (tmp_path / "walk_largest.py").write_text(
        "from serq import hookimpl\n"
        "from serq_sim.policies import EvictionOrder\n\n\n"
        "class LargestFirst(EvictionOrder):\n"
        "    def key(self, entry):\n"
        "        return (-entry.size,)\n\n\n"
        "@hookimpl\n"
        "def serq_sim_register_eviction_orders(register):\n"
        "    register('walk_largest', LargestFirst)\n")
    info = tmp_path / "walk_largest-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: walk-largest\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nwalk_largest = walk_largest\n")
    script = ("import walk_largest, serq\n"
              "from serq.plugins import collect\n"
              "pm = serq.get_plugin_manager(plugins=[walk_largest])\n"
              "r = collect(pm, 'serq_sim_register_eviction_orders', 'eviction order')\n"
              "print(pm.get_name(walk_largest), 'walk_largest' in r)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SERQ_CACHE_DIR": ""}
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=50)
    assert p.returncode == 0, p.stderr
    # registered once, under its entry point's name (it was "Plugin already registered under a different name")
    assert p.stdout.split() == ["walk_largest", "True"]
