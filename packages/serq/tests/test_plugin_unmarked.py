"""A plugin function named like a hook but without the ``@serq.hookimpl`` marker is never called by pluggy:
everything it registers was silently missing (a program's ``@kind`` then "unknown"). It is named."""

from __future__ import annotations

import pluggy
import pytest
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager, registrations

other = pluggy.HookimplMarker("elsewhere")


class Forgot:
    def serq_sim_register_stage_kinds(self, register):  # no marker
        register("batcher", object)


class OtherProject:
    @other
    def serq_report_register_formats(self, register):  # another project's marker
        register("mine", lambda report, out: None)


class Fine:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("batcher", lambda sim, node, member, flat: None)

    def serq_helper(self):  # named like serQ's hooks, but no hook has this name: nothing to say
        return 1


@pytest.mark.parametrize("plugin, hook", [(Forgot(), "serq_sim_register_stage_kinds"),
                                          (OtherProject(), "serq_report_register_formats")])
def test_an_unmarked_hook_is_named(plugin, hook):
    with pytest.raises(PluginError) as e:
        get_plugin_manager(plugins=[plugin])
    head = str(e.value).partition("\n")[0]
    name = f"{type(plugin).__module__}.{type(plugin).__qualname__}"
    assert head == (f"error: plugin {name!r} defines {hook} without the @serq.hookimpl marker: serQ never calls "
                    "it, so nothing it registers is there (write @hookimpl above it: from serq import hookimpl)")


def test_a_marked_hook_and_a_helper_of_another_name_are_fine():
    pm = get_plugin_manager(plugins=[Fine()])
    got, problems = registrations(pm)
    assert problems == [] and "batcher" in [n for r in got.values() for n in r.get("stage kinds", [])]
