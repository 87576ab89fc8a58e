"""Ctrl-C or SIGTERM while serQ's own parts load is no plugin's: only a third party's loading is named.

A signal landing while the built-in parts were imported at start-up (or in serQ's own signal handler, called
there) said ``serq: interrupted in plugin 'host' (from serq 0.1.0) as it was loaded (serq.builtin):
_on_signal at …/serq/signals.py:100`` before ``terminated`` (test_partial's signal at start-up, under load).
"""

from __future__ import annotations

import pluggy
import pytest
from serq import plugins


def _stopped_loading(monkeypatch, name: str, value: str) -> KeyboardInterrupt:
    monkeypatch.setattr(plugins, "entry_points", lambda group: [(name, value, None)])

    def load(v):
        raise KeyboardInterrupt

    monkeypatch.setattr(plugins, "load_object", load)
    pm = pluggy.PluginManager("serq")
    with pytest.raises(KeyboardInterrupt) as info:
        plugins.load_entry_points(pm)
    return info.value


@pytest.mark.parametrize("name, value", [("host", "serq.builtin"), ("frontend", "serq_frontend.plugin"),
                                         ("sim", "serq_sim.plugin:Plugin")])
def test_a_signal_while_an_own_part_loads_names_no_plugin(monkeypatch, name, value):
    e = _stopped_loading(monkeypatch, name, value)
    assert plugins.plugin_at(None, e) is None


def test_a_third_partys_loading_is_named_as_before(monkeypatch):
    e = _stopped_loading(monkeypatch, "slow", "slowplug:thing")
    assert plugins.plugin_at(None, e) == "plugin 'slow' as it was loaded (slowplug:thing)"
