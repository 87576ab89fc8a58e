"""A run of zero work completes at once (language.txt §3): the session goes on in place, keeping its turn
among the sessions ready at that instant, in the general engine and the fast tier alike."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

PROGRAM = """
stage svc : fifo;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run svc (0); }
  observe who = serial;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("tier", ["general", ""])
def test_a_zero_work_run_keeps_the_sessions_place(monkeypatch, tier):
    """Sessions 0 and 1 arrive together and run in that order; 0's zero-work run does not send it behind
    1, so its sample comes first (before the fix it was [1, 0])."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=PROGRAM))
    assert r.tier == (tier or "fast")
    assert r.observe("who").values.tolist() == [0.0, 1.0]
    assert r.observe("who").times.tolist() == [0.0, 0.0]


def test_a_zero_work_run_on_a_step_stage_and_a_flow():
    """The same on a step engine (a decode of 0 tokens) and on a flow over
    two ps stages."""
    src = """
pool kv { cap 64; block 4; }
stage E : step { budget 8; cost 1; memory kv; };
stage a : ps(1);
stage b : ps(1);
share maxmin;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    decode on E (0);
    run a, b (0);
  }
  observe who = serial;
}
run { horizon 10; }
"""
    r = serq_sim.run(serq_frontend.compile(source=src))
    assert r.observe("who").values.tolist() == [0.0, 1.0]
