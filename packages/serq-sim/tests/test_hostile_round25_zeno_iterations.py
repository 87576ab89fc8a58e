"""Step iterations far below any time scale meet one no-progress guard on both plannings
(serq_sim.step.StepStage._no_time, the lazy planning's stretch of quiet rounds in step/lazy.py;
docs/simulator.md, "A step iteration of no time is an event").

Two decoders of 3 000 000 tokens on an engine whose iteration costs 1e-300 s: each iteration moves the
clock (1e-300 is far above the clock's precision at 0), but a million of them move it by 1e-294 s, within
the no-progress guard's instant (ZENO × max(|t|, 1 s), about 1e-12 s near 0). The per-job planning
(SERQ_SIM_TIER=general) met the event guard at a tick, "more than 1000000 events in 1.02e-294 s of
simulated time since t=0"; the lazy planning took the 3 000 000 rounds as one stretch of quiet rounds (each
ends after it starts), never ticked, and reported a run that ended at t = 3e-294: exit 0 on one tier, 1 on
the other. A round within the guard's instant is now an iteration of no time on both plannings, left to
the event loop by the stretch and counted by the stage's guard, which stops both at the same iteration."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
import serq_sim.engine as engine
from serq_report.json import encode_json
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)


def program(cost: str, tokens: str) -> str:
    # the decode is statement 1 of the session: line 6, column 3
    return f"""stage E : step {{ budget 64; cost {cost}; }}
workload {{
  arrive batch(2);
}}
session {{
  run E decode ({tokens});
  observe done = now;
  end;
}}
run {{ horizon 100; seed 1; }}
"""


@pytest.fixture(autouse=True)
def small_guard(monkeypatch):
    # the guards' bound of 1 000 000 events (and jobs) taken down to 2 000, each check a thousand events
    # apart, so that a run meets it in a few thousand iterations (the words and the rule are the same)
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)
    monkeypatch.setattr(engine, "TICK", 1000)


def outcome(src: str, monkeypatch, tier: str) -> tuple[str, str]:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    try:
        report = serq_sim.run(prog)
    except SimError as e:
        return "error", str(e)
    return "report", encode_json(report)


def test_iterations_of_1e_300_seconds_meet_the_same_guard_on_both_plannings(monkeypatch):
    src = program("1e-300", "3e6")
    lazy = outcome(src, monkeypatch, "")
    per_job = outcome(src, monkeypatch, "general")
    assert lazy == per_job
    kind, msg = lazy
    assert kind == "error"
    # the bound: 2 000 jobs and 1 000 for each of the 2 sessions live when the instant began; each
    # iteration serves the 2 decoders, so the 2 001st goes past it, at 2 001 × 1e-300 s; the instant
    # began at the end of the first iteration, t = 1e-300
    assert msg.startswith("<source>:6:3: error: at t=2.001e-297, session 0: no progress: the iterations of stage E "
                          "take next to no time (its cost is far below any time scale at this time) and served "
                          "more than 4000 jobs in 2e-297 s of simulated time since t=1e-300: its residents are the "
                          "run at <source>:6:3 of session 0, the run at <source>:6:3 of session 1"), msg


def test_a_cost_of_0_is_still_told_as_no_time(monkeypatch):
    # the clock does not move at all: the words of before, at t=0 (one decoder token an iteration each)
    src = program("0", "inf")
    lazy = outcome(src, monkeypatch, "")
    assert lazy == outcome(src, monkeypatch, "general")
    assert lazy[1].startswith("<source>:6:3: error: at t=0, session 0: no progress: the iterations of stage E take no time (its cost "
                              "is 0, or below the clock's precision at this time) and served more than 4000 "
                              "jobs at one instant without simulated time passing: its residents are"), lazy[1]


@pytest.mark.parametrize("cost", ["2e-13", "1e-9", "0.01"])
def test_small_steps_the_clock_resolves_run_to_their_end(monkeypatch, cost):
    # 2e-13 s is within the instant (about 9.1e-13 s near 0) but some five iterations fill it, and the
    # next begins another: 2 000 tokens end at 2 000 iterations, done = 2 000 × cost, on both plannings
    src = program(cost, "2000")
    lazy = outcome(src, monkeypatch, "")
    assert lazy == outcome(src, monkeypatch, "general")
    assert lazy[0] == "report", lazy[1]
    monkeypatch.setenv("SERQ_SIM_TIER", "")
    report = serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
    done = report.observe("done")
    assert len(done.values) == 2
    assert done.values.tolist() == pytest.approx([2000 * float(cost)] * 2, rel=1e-9)
