"""The no-progress guard names the runs whose events are due, at their place, the same on both tiers
(serq_sim.engine.Simulation.stall_error; docs/simulator.md, "No progress").

A closed workload whose sessions run for 1e-300 s (or 5e-324 s, the least double) makes its events at
ever new times that never reach the horizon. The general engine's error was positioned at the run and
named each run's place and session; the fast tier's (every program here is one of its) was unpositioned,
`t.sq: error: at t=…: no progress: …; the events due now: the run on stage svc of session 1020000`, and at
a ps stage, whose events carry an epoch and not a session, `no event names a statement`. The fast tier
now finds a session's run from the place it resumes at (a run's resume label) and every job of a ps
member from that member's heap, so both tiers give one message, byte for byte."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
import serq_sim.engine as engine
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)


def program(kind: str, population: int, work: str, run: str = "run svc") -> str:
    # the run is statement 1 of the session block: line 6, column 3
    return f"""stage svc : {kind};
workload {{
  arrive closed({population});
}}
session {{
  {run} ({work});
  observe x = 1;
  end;
}}
run {{ horizon 50; warmup 5; seed 0; }}
"""


@pytest.fixture
def small_guard(monkeypatch):
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)
    monkeypatch.setattr(engine, "TICK", 1000)


def stalled(src: str, monkeypatch, tier: str, **kw) -> str:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    with pytest.raises(SimError) as e:
        serq_sim.run(prog, **kw)
    return str(e.value)


def both(src: str, monkeypatch, **kw) -> str:
    fast = stalled(src, monkeypatch, "", **kw)
    general = stalled(src, monkeypatch, "general", **kw)
    assert fast == general
    return fast


def listed(msg: str) -> list[str]:
    """The sessions the message names, in its order."""
    head = msg.split("the events due now are those of ", 1)[1]
    return [part.split(" of session ")[1].split(",")[0].split(" ")[0]
            for part in head.split("the run at ")[1:]]


@pytest.mark.parametrize("kind", ["delay", "fifo(3)", "ps(1)", "ps(present)"])
@pytest.mark.parametrize("work", ["1e-300", "5e-324"])
def test_three_runs_due_again_and_again_are_named_at_their_place(small_guard, monkeypatch, kind, work):
    msg = both(program(kind, 3, work), monkeypatch)
    first = msg.splitlines()[0]
    assert first.startswith("<source>:6:3: error: at t="), msg
    assert "no progress: more than 2000 events in " in first and "s of simulated time since t=0" in first, msg
    # the three sessions of the population are at the stage together (each replaced at its run's end by the
    # next serial): three runs, each at the run statement, in serial order, the first the message's session
    sessions = listed(first)
    assert len(sessions) == 3 and first.count("the run at <source>:6:3 of session ") == 3, msg
    serials = [int(s) for s in sessions]
    assert serials == sorted(serials) and f"session {serials[0]}: no progress" in first, msg
    assert first.endswith(", due again and again within that span"), msg


def test_a_ps_stage_names_every_job_it_holds(small_guard, monkeypatch):
    # eight sessions at ps(present): the ps stage's one event is due, and its jobs are all eight (five named,
    # then how many more), as the general engine lists a ps stage's jobs; the fast tier named none
    msg = both(program("ps(present)", 8, "1e-300"), monkeypatch)
    assert len(listed(msg)) == 5 and " and 3 more, due again and again" in msg, msg
    assert "no event names a statement" not in msg


def test_a_ps_family_names_the_jobs_of_its_members(small_guard, monkeypatch):
    # two members, the sessions of even serials at svc[0] and odd at svc[1]: both members' events are due,
    # and the message names the four sessions' runs at the run's place (line 6, column 3)
    src = program("ps(1)", 4, "1e-300", run="run svc[serial % 2]").replace("stage svc :", "stage svc[2] :")
    msg = both(src, monkeypatch)
    assert msg.startswith("<source>:6:3: error: at t="), msg
    assert len(listed(msg)) == 4 and msg.count("the run at <source>:6:3 of session ") == 4, msg


def test_a_clock_that_cannot_move_names_the_run_put_off(small_guard, monkeypatch):
    # after a run of 1 the clock is at 1 or later, where 1e-20 is below its precision: each run of 1e-20 ends
    # at the instant it starts (1 + 1e-20 == 1), and the guard's instant is the clock stuck at one time
    src = """stage svc : fifo;
workload { arrive batch(2); }
session {
  run svc (1);
  loop { run svc (1e-20); }
}
run { horizon 50; seed 0; }
"""
    msg = both(src, monkeypatch)
    first = msg.splitlines()[0]
    assert first.startswith("<source>:5:10: error: at t="), msg
    assert "no progress: more than 2000 events at one instant without simulated time passing" in first, msg
    assert "the run at <source>:5:10 of session " in first and "put off to this same instant again" in first


def test_with_a_bound_on_events_too(small_guard, monkeypatch):
    # a run with --max-events ticks by its exact event count (the other tick of the fast tier's loop)
    msg = both(program("delay", 3, "1e-300"), monkeypatch, max_events=10**7)
    assert msg.startswith("<source>:6:3: error: at t=") and len(listed(msg)) == 3, msg


def test_arrivals_alone_are_still_named_as_before(small_guard, monkeypatch):
    # no run is due: the workload's own event, at the arrive (unchanged)
    src = """stage s : fifo;
workload { arrive poisson(1e300); }
session { run s (1); end; }
run { horizon 10; seed 1; }
"""
    msg = both(src, monkeypatch, max_events=200_000)
    assert msg.startswith("<source>:2:12: error: at t="), msg
    assert msg.splitlines()[0].endswith("; the events due now: arrive poisson"), msg
