"""serq vllm scenario of a run that stopped before its end: no answer, and not a scenario's fault.

A run stopped by the memory guard, by Ctrl-C or by SIGTERM leaves the scenario's requests unfinished, which
was told as 'request(s) 0, 1, … did not finish by step 1000000, the scenario program's horizon (a request
stuck, or a scenario longer than that)', status 1, at a request of the file: SIGTERM two seconds into a
scenario of 100 000 requests said so, as did the memory guard at t = 0. Now the memory guard's stop is its
own error and a signal ends the command as any command's (130, 143).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from serq import UserError
from serq.signals import Terminated
from serq_vllm.scenarios import _stopped

SERQ = str(Path(sys.executable).parent / "serq")


def _report(partial, interrupted=False, notes=()):
    return SimpleNamespace(result=SimpleNamespace(partial=partial, interrupted=interrupted, notes=list(notes)))


def test_a_run_to_its_end_goes_on():
    assert _stopped(_report(None)) is None


@pytest.mark.parametrize("partial, interrupted, raised", [
    ("sigterm", True, Terminated), ("interrupted", True, KeyboardInterrupt), (None, True, KeyboardInterrupt),
])
def test_a_signal_stops_the_command_as_the_signal(partial, interrupted, raised):
    with pytest.raises(raised) as e:
        _stopped(_report(partial, interrupted))
    assert type(e.value) is raised


def test_a_bound_is_its_own_error():
    note = "note: stopped after 1 s of wall time (--max-wall 1) at t=5; the figures cover what was simulated"
    with pytest.raises(UserError) as e:
        _stopped(_report("max-wall", True, ["warning: something else", note]))
    assert str(e.value).removeprefix("error: ") == ("the scenario's run stopped after 1 s of wall time (--max-wall 1) "
                                                    "at t=5, before its requests finished: no answer")


def test_the_memory_guard_is_not_a_request_past_the_horizon(monkeypatch):
    # 30 000 one-token requests, admitted one at a time: the guard, given a share of the memory that the
    # sessions alone pass, stops the run as it spawns them, at t = 0. (Such a scenario is refused before its run
    # now, by the memory its requests would need, scenarios._beyond_memory: that check is left out here, so
    # that the run's own stop is what is told.)
    from serq_vllm import scenarios

    sc = {"budget": 4, "max_seqs": 1, "block_size": 1, "num_blocks": 9,
          "requests": [{"prompt": 1, "out": 1}] * 30_000}
    # (and so is the least room a share may leave a run, serq_sim.memguard.MIN_ROOM, which refuses 0.0001 of a
    # machine with less than 160 GiB available: the share is what lets the sessions pass it)
    from serq_sim import memguard

    monkeypatch.setenv("SERQ_MEMORY_SHARE", "0.0001")
    monkeypatch.setattr(memguard, "MIN_ROOM", 0)
    monkeypatch.setattr(scenarios, "_beyond_memory", lambda n: None)
    with pytest.raises(UserError) as e:
        scenarios.run_scenario(sc)
    msg = str(e.value)
    assert len(msg.splitlines()) == 1
    assert msg.startswith("error: the scenario's run stopped near the memory limit: ")
    assert msg.endswith(", before its requests finished: no answer (a scenario of fewer requests, or more "
                        "memory for the run: SERQ_MEMORY_SHARE)")
    assert "did not finish" not in msg
