"""A plugin registered in-process, ``get_plugin_manager(plugins=[obj])``, that cannot be registered (its
``serq_addhooks`` raises, a hook implementation asks for an argument the hook does not give, it implements
a hook nobody specifies) is a ``PluginError`` naming it by its class, ``module.Class``, with its own
exception as the cause (docs/hooks.md, "When a plugin misbehaves": "named by its class … not by the id()
pluggy names it by: a message is the same from run to run"). Before, the first two were pluggy's own
exceptions, and every one named the plugin by its id() and a memory address."""

from __future__ import annotations

import re

import pytest
import serq_sim.plugin
from serq import get_plugin_manager, hookimpl
from serq.errors import PluginError


class AddhooksRaises:
    @hookimpl
    def serq_addhooks(self, pluginmanager):
        raise RuntimeError("addhooks broke")  # the line the message names


class MisspeltArgument:
    @hookimpl
    def serq_sim_register_stage_kinds(self, registr):
        pass


class UnknownHook:
    @hookimpl
    def serq_no_such_hook(self):
        pass


def _message(plugin) -> tuple[str, BaseException]:
    with pytest.raises(PluginError) as e:
        get_plugin_manager(autoload=False, plugins=[serq_sim.plugin, plugin])
    text = str(e.value)
    assert not re.search(r"0x[0-9a-f]+|\b\d{9,}\b", text), text  # no memory address, no id()
    assert text.endswith("(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"), text
    return text.splitlines()[0], e.value.__cause__


def test_a_serq_addhooks_that_raises():
    first, cause = _message(AddhooksRaises())
    with open(__file__) as f:
        line = next(i for i, text in enumerate(f, 1) if "# the line the message names" in text)
    assert first == (f"error: plugin '{__name__}.AddhooksRaises' cannot be registered: RuntimeError: addhooks "
                     f"broke at {__file__}:{line}")
    assert isinstance(cause, RuntimeError)


def test_an_implementation_asking_for_an_argument_the_hook_does_not_give():
    first, cause = _message(MisspeltArgument())
    assert first.startswith(f"error: plugin '{__name__}.MisspeltArgument' cannot be registered: "), first
    assert "registr" in first and "serq_sim_register_stage_kinds" in first, first
    assert cause is not None


def test_an_implementation_of_a_hook_nobody_specifies_is_named_the_same_each_time():
    first, _ = _message(UnknownHook())
    again, _ = _message(UnknownHook())
    assert first == again
    assert first.startswith(f"error: plugin '{__name__}.UnknownHook' is not valid: it implements the hook "
                            "serq_no_such_hook, which no installed part of serQ"), first
