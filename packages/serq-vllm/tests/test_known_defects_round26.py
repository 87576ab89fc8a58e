"""Known defects, round 26 (serq-vllm)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from serq.signals import Terminated, run_stopped
from serq_vllm.scenarios import _stopped


def _report(partial, interrupted=True):
    return SimpleNamespace(result=SimpleNamespace(partial=partial, interrupted=interrupted, notes=[]))


# 4. a scenario's run a signal stopped raises what serq.signals.run_stopped gives, as a sweep's worker does


@pytest.mark.parametrize("partial, raised", [("sigterm", Terminated), ("interrupted", KeyboardInterrupt)])
def test_a_scenario_stopped_by_a_signal_raises_the_one_rule_s_exception(partial, raised):
    with pytest.raises(KeyboardInterrupt) as e:
        _stopped(_report(partial))
    assert type(e.value) is raised is type(run_stopped(partial))


def test_the_rule():
    assert type(run_stopped("sigterm")) is Terminated
    assert type(run_stopped("interrupted")) is KeyboardInterrupt
    assert run_stopped("max-wall") is None and run_stopped("memory") is None and run_stopped(None) is None
