"""A plugin that registers one name twice (a stage kind, a policy, a report format, a command) is one message
naming it, with how to run without it, as every other mistake of a plugin's: it was `stage kind 'k' is
registered twice: by acme (serq-acme 0.3.0) and by acme (serq-acme 0.3.0)`, the plugin named twice and no
way out given. A name two plugins register still names both."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import collect, get_plugin_manager
from serq_sim.stages import DelayStage

SERQ = str(Path(sys.executable).parent / "serq")


class Twice:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("k", DelayStage)
        register("k", DelayStage)

    @hookimpl
    def serq_report_register_formats(self, register):
        register("shout", lambda report, out: out.write("A\n"))
        register("shout", lambda report, out: out.write("B\n"))


class Other:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("k", DelayStage)


@pytest.mark.parametrize("hook, kind, name", [("serq_sim_register_stage_kinds", "stage kind", "k"),
                                              ("serq_report_register_formats", "report format", "shout")])
def test_one_plugins_name_registered_twice_names_it_once(hook, kind, name):
    pm = get_plugin_manager(plugins=[Twice()])
    with pytest.raises(PluginError) as e:
        collect(pm, hook, kind)
    plugin = f"{__name__}.Twice"
    assert str(e.value).splitlines() == [
        f"error: plugin '{plugin}' registers the {kind} '{name}' twice: a name is registered once (its second "
        f"register('{name}', …) is refused)",
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"]


def test_two_plugins_one_name_names_both_as_before():
    pm = get_plugin_manager(plugins=[Other()])
    pm.register(Twice.__new__(Other), name="second")  # another object of the class: another plugin
    with pytest.raises(PluginError) as e:
        collect(pm, "serq_sim_register_stage_kinds", "stage kind")
    assert str(e.value).splitlines() == [
        f"error: stage kind 'k' is registered twice: by {__name__}.Other and by second",
        f"(run without one of them: leave {__name__}.Other out of the plugins this process registers or "
        "SERQ_DISABLED_PLUGINS=second, or "
        "uninstall one; `serq plugins` lists them)"]


def test_an_installed_plugin_registering_a_command_twice(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_twice-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-twice\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("[serq]\ntwice = twiceplug\n")
    (site / "twiceplug.py").write_text(
        "import click\nfrom serq import hookimpl\n\n\n@hookimpl\ndef serq_register_commands(register):\n"
        "    register(click.Command('hi', callback=lambda: None))\n"
        "    register(click.Command('hi', callback=lambda: None))\n")
    r = subprocess.run([SERQ, "check", "x.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(site)})
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "error: plugin 'twice' (from serq-twice 1.2) registers the command 'hi' twice: a name is registered once "
        "(its second register('hi', …) is refused)",
        "(run without it: SERQ_DISABLED_PLUGINS=twice, or uninstall serq-twice)"], r.stderr

