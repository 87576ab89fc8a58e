"""Known defects, round 31, in serq's command line.

7. Ctrl-C or SIGTERM in a plugin's hook under a command: click, turning the interrupt into its Abort, wrote a
   blank line on stderr first, so the message began with it ("\\nserq: interrupted in plugin 'stuck' …").
   The interrupt now passes click's main (serq.cli.Interrupt) and stderr holds serQ's lines alone, as it
   does for an interrupt while the plugins load.
8. Two different plugins registering one name (a stage kind, a policy, a report format): the message named
   both and, unlike one plugin's registering a name twice, said no way to run without them. It says it now:
   each plugin by the name SERQ_DISABLED_PLUGINS takes, or `serq plugins` to list them; serQ's own parts
   (a built-in's name taken by a plugin) are none to run without."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import collect, get_plugin_manager

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _plugin(tmp_path, body: str):
    site = tmp_path / "site"
    info = site / "stuck-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stuck\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nstuck = stuck_plugin\n")
    (site / "stuck_plugin.py").write_text("import os\nimport signal\n\nfrom serq import hookimpl\n\n\n@hookimpl\n"
                                          "def serq_sim_register_stage_kinds(register):\n" + body)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return site


@pytest.mark.timeout(120)
@pytest.mark.parametrize("body, status, last", [
    ("    raise KeyboardInterrupt  # (Ctrl-C while it spins)\n", 130, "interrupted"),
    ("    os.kill(os.getpid(), signal.SIGTERM)\n    signal.pause()\n", 143, "terminated"),
])
def test_an_interrupt_in_a_plugins_hook_is_said_with_no_blank_line(tmp_path, body, status, last):
    site = _plugin(tmp_path, body)
    r = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--no-progress"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(site)})
    assert r.returncode == status, r.stderr
    assert r.stderr == (f"serq: interrupted in plugin 'stuck' (from stuck 1.0): serq_sim_register_stage_kinds at "
                        f"{site / 'stuck_plugin.py'}:9\n{last}\n"), r.stderr
    assert r.stdout == ""


class _Acme:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        from serq_sim.stages import DelayStage

        register("k", DelayStage)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("o", lambda sim, pool, node: None)


class _Other(_Acme):
    pass


@pytest.mark.parametrize("hook, kind, name", [("serq_sim_register_stage_kinds", "stage kind", "k"),
                                              ("serq_sim_register_eviction_orders", "eviction order", "o")])
def test_two_plugins_registering_one_name_say_how_to_run_without_one(hook, kind, name):
    pm = get_plugin_manager(plugins=[])
    pm.register(_Acme(), name="acme")
    pm.register(_Other(), name="other")
    with pytest.raises(PluginError) as e:
        collect(pm, hook, kind)
    assert str(e.value).splitlines() == [
        f"error: {kind} '{name}' is registered twice: by acme and by other",
        "(run without one of them: SERQ_DISABLED_PLUGINS=acme or SERQ_DISABLED_PLUGINS=other, or uninstall one; "
        "`serq plugins` lists them)"]
