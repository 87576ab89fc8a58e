"""Known defects of the host (docs/hooks.md, "When a plugin misbehaves"): each found wrong by hand, then
fixed at its cause.

An old-style hook wrapper (pluggy's ``hookwrapper=True``) fails in its own way: it sets the hook's outcome
with ``outcome.force_exception(exc)``, and pluggy raises ``exc`` in its own code, so no frame of the plugin's
is on the traceback, and serQ, which names a plugin by the frame of its that raised
(serq.plugins.plugin_failure), found none: a Python traceback. One that raises in its teardown was named,
after pluggy's PluggyTeardownRaisedWarning had said it on stderr first (four lines and a line of serQ's)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from host_helpers import run_serq
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

PLUGIN = '''import os
from serq import hookimpl

CASE = os.environ.get("WRAP", "")


@hookimpl(hookwrapper=True)
def serq_sim_register_eviction_orders(register):
    outcome = yield
    if CASE == "forces":
        outcome.force_exception(RuntimeError("the wrapper refused"))
    if CASE == "raises":
        raise RuntimeError("the wrapper raised")


@hookimpl(hookwrapper=True)
def serq_sim_register_stage_kinds(register):
    yield


@hookimpl
def serq_sim_register_preemption_policies(register):
    if CASE == "inner raises":
        raise LookupError("the plain hook raised")
'''

PROGRAM = "stage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"
HINT = "(run without it: SERQ_DISABLED_PLUGINS=wrap, or uninstall wrapplug)"


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``needle``'s first occurrence in ``text``."""
    return text[:text.index(needle)].count("\n") + 1


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("wrap")
    info = root / "site" / "wrapplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wrapplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[serq]\nwrap = wrap_mod\n")
    (root / "site" / "wrap_mod.py").write_text(PLUGIN)
    (root / "p.sq").write_text(PROGRAM)
    return root


def serq_run(site, case: str):
    return run_serq("run", "p.sq", "--no-progress", env={"PYTHONPATH": str(site / "site"), "WRAP": case}, cwd=site)


@pytest.mark.parametrize(("case", "what", "needle"), [
    # the wrapper is named at its first line (its decorator): the line of force_exception is no longer running
    ("forces", "failed in serq_sim_register_eviction_orders: RuntimeError: the wrapper refused (the outcome its "
               "hook wrapper forced)", "@hookimpl(hookwrapper=True)\ndef serq_sim_register_eviction_orders"),
    ("raises", "failed in serq_sim_register_eviction_orders: RuntimeError: the wrapper raised",
     'raise RuntimeError("the wrapper raised")'),
    # a plain hook's exception that an old-style wrapper only lets through is the plain hook's (not the wrapper's)
    ("inner raises", "failed in serq_sim_register_preemption_policies: LookupError: the plain hook raised",
     'raise LookupError("the plain hook raised")'),
])
def test_an_old_style_hook_wrapper_that_fails_is_one_message_naming_the_plugin(site, case, what, needle):
    r = serq_run(site, case)
    assert r.returncode == 1, r
    assert r.stdout == "", r.stdout
    at = f"{site / 'site' / 'wrap_mod.py'}:{line_of(PLUGIN, needle)}"
    assert r.stderr.splitlines() == [f"error: plugin 'wrap' (from wrapplug 0.1) {what} at {at}", HINT], r.stderr


def test_the_wrappers_as_they_are_take_nothing_from_the_run(site):
    r = serq_run(site, "")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.startswith("run: horizon 10")


class Forcing:
    """An old-style wrapper of a registration hook that forces an exception as the hook's outcome."""

    @hookimpl(hookwrapper=True)
    def serq_sim_register_share_policies(self, register):
        outcome = yield
        outcome.force_exception(ValueError("no share policy today"))


def test_through_the_api_the_forced_exception_is_a_plugin_error_naming_the_plugin():
    pm = get_plugin_manager(plugins=[Forcing()])
    with pytest.raises(PluginError) as e:
        serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
    head, _, hint = str(e.value).partition("\n")
    code = Forcing.serq_sim_register_share_policies.__code__
    name = f"{__name__}.Forcing"
    assert head == (f"error: plugin '{name}' failed in Forcing.serq_sim_register_share_policies during "
                    "serq_sim_register_share_policies: ValueError: no share policy today (the outcome its hook "
                    f"wrapper forced) at {code.co_filename}:{code.co_firstlineno}"), head
    assert hint == "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)", hint
    assert isinstance(e.value.__cause__, ValueError)
