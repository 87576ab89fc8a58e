"""Code a plugin registers that lives outside the plugin's own module and package: a command registered
lazily as ``other_module:attribute``, a stage kind or policy class imported from a library of the
plugin's own. When that code raised, no frame of the plugin's module was on the traceback, so the
failure was not named as the plugin's: ``serq zap`` or ``serq run`` ended with a Python traceback, where
the same code in the plugin's own module is one message naming the plugin and its line (docs/hooks.md,
"When a plugin misbehaves": "a command: failed in FUNCTION …, however deep in serQ it was called"). What
a plugin registers is now noted with the modules of its code, and a failure there is the plugin's."""

from __future__ import annotations

import sys

import pytest
from host_helpers import run_serq
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

HINT = "(run without it: SERQ_DISABLED_PLUGINS=elsewhere, or uninstall elsewhereplug)"


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder first on ``sys.path``, whose modules are forgotten after the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("r15_"):
            del sys.modules[name]


def test_a_lazy_command_in_another_module_that_raises_is_the_plugins_failure(site):
    info = site / "elsewhereplug-0.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: elsewhereplug\nVersion: 0.2\n")
    (info / "entry_points.txt").write_text("[serq]\nelsewhere = r15_hooks\n")
    (site / "r15_hooks.py").write_text(
        "from serq import hookimpl\nfrom serq.cli import LazyCommand\n\n\n@hookimpl\n"
        "def serq_register_commands(register):\n    register(LazyCommand('zap', 'r15_commands:zap'))\n")
    (site / "r15_commands.py").write_text(
        "import click\n\n\n@click.command('zap')\ndef zap():\n    raise RuntimeError('zap went wrong')\n")
    r = run_serq("zap", env={"PYTHONPATH": str(site)}, cwd=site)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1, r
    assert r.stdout == ""
    assert r.stderr.splitlines() == [
        "error: plugin 'elsewhere' (from elsewhereplug 0.2) failed in zap: RuntimeError: zap went wrong at "
        f"{site / 'r15_commands.py'}:6",
        HINT]


class Plugin:
    """Registers ``evict @broken;``, a class of another module (``r15_policies``, written by the test), as
    it is or wrapped in a functools.partial."""

    wrap = False

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        import functools

        from r15_policies import Broken

        register("broken", functools.partial(Broken) if self.wrap else Broken)


class PartialPlugin(Plugin):
    wrap = True


@pytest.mark.parametrize("plugin", [Plugin, PartialPlugin])
def test_a_policy_class_from_another_module_that_raises_is_the_plugins_failure(site, plugin):
    import serq_frontend
    import serq_sim

    (site / "r15_policies.py").write_text(
        "from serq_sim.policies import EvictionOrder\n\n\nclass Broken(EvictionOrder):\n"
        "    def key(self, entry):\n        raise RuntimeError('key went wrong')\n")
    pm = get_plugin_manager(plugins=[plugin()])
    # a cap of 4 units held 3 at a time and cached: the second hold evicts the first's cache, so the
    # order's key is asked for at once
    program = serq_frontend.compile(source=(
        "pool kv { cap 4; evict @broken; }\nstage svc : fifo;\nworkload { arrive batch(2); }\n"
        "session { hold kv (3) { run svc (1); } cache (3); }\nrun { horizon 10; }\n"), pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(program, pm=pm)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"error: plugin '{__name__}.{plugin.__name__}' failed in Broken.key"), first
    # (since round 30 with the time, and the pool's declaration after the message)
    assert first.endswith(f"RuntimeError: key went wrong at {site / 'r15_policies.py'}:6 (at t=1)"), first
    assert str(e.value).splitlines()[2] == "<source>:1:1: note: pool kv is declared here"
