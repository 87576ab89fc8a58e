"""The environment variables that switch something on or off are read by one rule (serq.switches): unset or
blank gives the default, ``0``/``off``/``no``/``false`` (any case) off, any other value on. Each had its own
reading: ``SERQ_DISABLE_PLUGIN_AUTOLOAD=0`` turned the autoload off (any value did), and
``SERQ_TRACE_ITER=false`` turned the iteration trace on."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from serq.plugins import get_plugin_manager
from serq.switches import switch


@pytest.mark.parametrize(("value", "default", "on"), [
    (None, False, False), (None, True, True), ("", True, True), ("  ", False, False),
    ("0", True, False), ("off", True, False), (" No ", True, False), ("FALSE", True, False),
    ("1", False, True), ("yes", False, True), ("true", False, True), ("anything", False, True),
])
def test_the_one_rule(monkeypatch, value, default, on):
    if value is None:
        monkeypatch.delenv("SERQ_X_SWITCH", raising=False)
    else:
        monkeypatch.setenv("SERQ_X_SWITCH", value)
    assert switch("SERQ_X_SWITCH", default) is on


@pytest.mark.parametrize(("value", "loaded"), [("0", True), ("false", True), ("1", False), ("yes", False)])
def test_autoload_switched_off_only_by_a_value_that_says_so(monkeypatch, value, loaded):
    monkeypatch.setenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", value)
    pm = get_plugin_manager()
    # serQ's own parts come only through their entry points (the host's plugin is always there)
    assert ("serq_sim" in {getattr(p, "__name__", "").split(".")[0] for p in pm.get_plugins()}) is loaded


@pytest.mark.parametrize(("value", "traced"), [("false", False), ("off", False), ("0", False), ("1", True)])
def test_the_iteration_trace_is_off_for_a_value_that_says_off(value, traced):
    code = "from serq_sim.step.common import _TRACE; print(_TRACE)"
    env = {**os.environ, "SERQ_TRACE_ITER": value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == str(traced), out.stderr
