"""A registration hook takes a ``register`` callback and returns nothing (docs/hooks.md, "Registration
hooks get a ``register`` callback"). An implementation that returns what it means to register (a dict of
kinds, a list of formats) instead of calling ``register`` is a plugin's mistake: one message naming the
plugin and the hook, not a registration silently dropped (a program naming the kind was told that no
plugin registers stage kinds)."""

from __future__ import annotations

import pytest
import serq_frontend
from serq import get_plugin_manager, hookimpl
from serq.errors import PluginError
from serq.loading import loaders
from serq.plugins import collect
from serq_sim.stages import StageKind


class ReturnsKinds:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        return {"returned": StageKind}


class ReturnsLoaders:
    @hookimpl
    def serq_register_loaders(self, register):
        return [(".ret", lambda path, options: None)]


class RegistersNothing:
    """Registers nothing and returns nothing: no mistake."""

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        if False:
            register("never", StageKind)


def test_a_registration_hook_that_returns_instead_of_registering_is_named():
    pm = get_plugin_manager(plugins=[RegistersNothing(), ReturnsKinds()])
    with pytest.raises(PluginError) as e:
        collect(pm, "serq_sim_register_stage_kinds", "stage kind")
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"error: plugin '{__name__}.ReturnsKinds' registers a stage kind wrongly in "
                            "serq_sim_register_stage_kinds: it returned ")
    assert "register(name, object)" in first
    # the compile that names the kind says the same, not "no plugin registers stage kinds"
    with pytest.raises(PluginError, match="ReturnsKinds' registers a stage kind wrongly"):
        serq_frontend.compile(source="stage s : @returned;\nworkload { arrive batch(1); }\n"
                              "session { run s (1); }\n", pm=pm)


def test_a_loader_hook_that_returns_is_named_too():
    pm = get_plugin_manager(plugins=[ReturnsLoaders()])
    with pytest.raises(PluginError, match=r"ReturnsLoaders' registers a loader for wrongly in serq_register_loaders"):
        loaders(pm)


def test_the_parts_own_registration_hooks_return_nothing():
    pm = get_plugin_manager(plugins=[RegistersNothing()])
    assert "Fifo" in collect(pm, "serq_sim_register_stage_kinds", "stage kind")
