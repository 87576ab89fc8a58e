"""A plugin whose code ends the process while it is being loaded: ``sys.exit()`` in its module (or in the
module of a command it registers lazily) or in its ``serq_addhooks``, or a ``BaseException`` of its own.
Loading caught ``Exception`` only, so every ``serq`` command ended with the plugin's status and no word
(``sys.exit(0)``: status 0, as if ``serq check`` had passed; ``serq --help`` printed nothing), or with a
traceback. Each is the plugin's failure to load, one message naming it, as an exception there is; Ctrl-C
(``KeyboardInterrupt``, and SIGTERM's ``serq.signals.Terminated``) stays the command's stop (docs/hooks.md,
"When a plugin misbehaves")."""

from __future__ import annotations

import sys

import pytest
from serq import hookimpl
from serq.cli import LazyCommand
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

BODIES = {
    "exit0": "import sys\nsys.exit(0)\n",
    "exit3": "import sys\nsys.exit(3)\n",
    "own": "class Mine(BaseException):\n    pass\n\n\nraise Mine('mine')\n",
}
SHOWN = {"exit0": "SystemExit: 0", "exit3": "SystemExit: 3", "own": "Mine: mine"}
LINE = {"exit0": 2, "exit3": 2, "own": 5}


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder first on ``sys.path``, whose modules are forgotten after the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("r11_"):
            del sys.modules[name]


def _plugin(site, module: str, body: str) -> None:
    info = site / "exitplug-0.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: exitplug\nVersion: 0.4\n")
    (info / "entry_points.txt").write_text(f"[serq]\nexitplug = {module}\n")
    (site / f"{module}.py").write_text(body)


@pytest.mark.parametrize("case", sorted(BODIES))
def test_a_plugin_module_that_exits_on_import_cannot_be_loaded(site, case):
    module = f"r11_{case}_mod"
    _plugin(site, module, BODIES[case])
    with pytest.raises(PluginError) as e:
        get_plugin_manager()
    assert str(e.value).splitlines() == [
        f"error: plugin 'exitplug' (from exitplug 0.4) cannot be loaded ({module}): {SHOWN[case]} at "
        f"{site / (module + '.py')}:{LINE[case]}",
        "(run without it: SERQ_DISABLED_PLUGINS=exitplug, or uninstall exitplug)"]


def test_a_serq_addhooks_that_exits_cannot_be_loaded(site):
    _plugin(site, "r11_addhooks_mod", "import sys\nfrom serq import hookimpl\n\n\n@hookimpl\n"
                                      "def serq_addhooks(pluginmanager):\n    sys.exit(0)\n")
    with pytest.raises(PluginError) as e:
        get_plugin_manager()
    assert str(e.value).splitlines()[0] == (
        "error: plugin 'exitplug' (from exitplug 0.4) cannot be loaded (r11_addhooks_mod): SystemExit: 0 at "
        f"{site / 'r11_addhooks_mod.py'}:7")


class ExitsInAddhooks:
    @hookimpl
    def serq_addhooks(self, pluginmanager):
        sys.exit(0)


def test_an_in_process_plugin_whose_serq_addhooks_exits_cannot_be_registered():
    with pytest.raises(PluginError) as e:
        get_plugin_manager(plugins=[ExitsInAddhooks()])
    assert str(e.value).startswith(f"error: plugin '{__name__}.ExitsInAddhooks' cannot be registered: SystemExit: 0 at ")


def test_a_lazy_command_whose_module_exits_cannot_be_loaded(site):
    (site / "r11_lazy_mod.py").write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(PluginError) as e:
        LazyCommand("excmd", "r11_lazy_mod:cmd").load(lambda: "exitplug (exitplug 0.4)")
    assert str(e.value) == ("error: the command 'excmd' (registered by exitplug (exitplug 0.4)) cannot be loaded "
                            f"(r11_lazy_mod:cmd): SystemExit: 0 at {site / 'r11_lazy_mod.py'}:2")


def test_ctrl_c_while_a_plugin_loads_stays_ctrl_c(site):
    _plugin(site, "r11_ctrl_c_mod", "raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        get_plugin_manager()
