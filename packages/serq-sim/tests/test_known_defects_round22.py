"""Known defects of the simulator, round 22.

6. A run-time error of a ``preempt by`` key (a family's index out of range) named the key's place, the time and
   the candidate the key was evaluated for, not the session whose growth asked for a victim: a note names it,
   with the pool and the time, on both tiers, for a pool of sessions and a step stage's memory pool
   (serq_sim.policies.preemption.chosen_for)."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error

pytestmark = pytest.mark.timeout(60)

# two sessions of prio 0 and 5 hold 4 each of 10; at t=1 session 0 grows by 4 (12 > 10): the candidates'
# keys are evaluated, and session 1's, q[5] of a family of 2, fails
POOL = """pool kv { cap 10; preempt by (used(q[prio])); }
pool q[2] { cap 5; }
stage d : delay;
workload {
  arrive batch(2);
  init {
    set prio = serial * 5;
  }
}
session {
  hold kv (4) {
    run d (1 + serial);
    grow kv (4);
    run d (1);
  }
}
run { horizon 100; }
"""

# a step stage's memory pool, keys that read an attribute only (kept in order by the engine): the residents'
# decodes grow the pool past its cap at t=6, session 0 first in the serving order
STEP = """pool q[2] { cap 5; }
pool kv { cap 10; preempt by (member(q[prio])); }
stage e : step { budget 100; cost 1; memory kv; }
workload {
  arrive batch(2);
  init {
    set prio = serial * 5;
  }
}
session {
  hold kv (4) {
    run e prefill (4);
    run e decode (20) growing kv;
  }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("src, line, col, t, caret", [(POOL, 1, 36, "1", "q[prio]"), (STEP, 2, 38, "6", "q[prio]")])
def test_a_keys_error_names_the_grower(src, line, col, t, caret, monkeypatch, tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(src)
    text = same_error(serq_frontend.compile(p), monkeypatch)
    shown = src.splitlines()[line - 1]
    assert text.splitlines() == [
        f"{p}:{line}:{col}: error: at t={t}, session 1: pool q: index 5 out of range (the family has 2)",
        f"  {shown}", " " * (2 + shown.index(caret)) + "^",
        f"note: while choosing whom pool kv preempts for the growth of session 0 at t={t} by the statement at "
        f"{p}:13:5 (its keys are evaluated for each candidate)"]


# 9. Ctrl-C (SIGINT) while the set-up read the trace ended serq run with `interrupted` and no report, where
#    Ctrl-C in the run prints the partial report (status 130) and --max-wall at the read stops the run before
#    it begins with one: the read's Ctrl-C and SIGTERM stop it the same way (a partial report, nothing
#    simulated, a note naming the set-up). The signal is sent by the process to itself as the read begins.

TRACED = """stage s : delay;
workload {
  arrive batch(2);
  trace "t.csv";
}
session {
  loop {
    turn;
    run s (out);
    branch (more) { } else { end; }
  }
}
run { horizon 100; }
"""

DRIVE = """import os, signal, sys
from serq_sim import trace
read = trace._read
def _read(*args):
    os.kill(os.getpid(), signal.{sig})
    return read(*args)
trace._read = _read
from serq.cli import main
main([{args}])
"""


@pytest.mark.parametrize("sig, status, said, partial", [("SIGINT", 130, "interrupted", "interrupted"),
                                                         ("SIGTERM", 143, "terminated (SIGTERM)", "sigterm")])
def test_a_signal_in_the_trace_read_gives_the_partial_report(tmp_path, sig, status, said, partial):
    import json
    import subprocess
    import sys

    (tmp_path / "p.sq").write_text(TRACED)
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n"
                                    + "".join(f"{i // 4},{i % 4 + 1},10,2,0.5,0\n" for i in range(400)))
    args = '"run", "p.sq", "--no-progress", "--json"'
    r = subprocess.run([sys.executable, "-c", DRIVE.format(sig=sig, args=args)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == status, r.stderr
    report = json.loads(r.stdout)
    assert report["partial"] == partial and (report["events"], report["arrivals"], report["end"]) == (0, 0, 0)
    assert report["notes"] == [f"note: {said} at set-up, reading the trace t.csv, before the run began at t=0; the "
                               "figures cover what was simulated"]


# 8. The errors built outside Simulation.error (the closed workload's replacement guard, the no-progress guard of
#    a step stage whose iterations take no time, a plugin's error placed at its job) carried no note of the trace
#    row their session replays, which every other run-time error of a trace session carries: one function makes
#    them all (serq_sim.errors.session_error), on both tiers. The guards' limits are made small here.

ROWS = "session,turn,new,out,think,forced\n" + "".join(f"{i},1,{10 + i},2,0,0\n" for i in range(50))

# closed(1): each session ends at the instant it starts; the guard allows 3 + 1 replacements (session 4 is past)
CLOSED = """stage d : delay;
workload {
  arrive closed(1);
  trace "t.csv" ordered;
}
session {
  turn;
  end;
}
run { horizon 10; }
"""

# a step stage of cost 0: its iterations take no time, and the guard allows 50 + 1 a session live (52)
STILL = """stage e : step { budget 100; cost 0; }
workload {
  arrive batch(2);
  trace "t.csv" ordered;
}
session {
  turn;
  run e prefill (new);
  run e decode (out * 1000000);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("src, serial, head", [
    (CLOSED, 4, "3:3: error: at t=0, session 4: no progress: the closed workload replaced more than 4 ended"),
    (STILL, 0, "9:3: error: at t=0, session 0: no progress: the iterations of stage e take no time")])
def test_a_guards_error_names_the_trace_row(src, serial, head, monkeypatch, tmp_path):
    from serq_sim import engine, workload

    monkeypatch.setattr(workload, "REPLACE_LIMIT", 3)
    monkeypatch.setattr(workload, "REPLACE_PER_MEMBER", 1)
    monkeypatch.setattr(engine, "STALL_EVENTS", 50)
    monkeypatch.setattr(engine, "STALL_PER_SESSION", 1)
    (tmp_path / "t.csv").write_text(ROWS)
    p = tmp_path / "p.sq"
    p.write_text(src)
    lines = same_error(serq_frontend.compile(p), monkeypatch).splitlines()
    assert lines[0].startswith(f"{p}:{head}")
    # the trace's session N is its line N + 2 (the header first), ordered: session N replays it
    assert lines[3:] == [f"{tmp_path / 't.csv'}:{serial + 2}:1: note: session {serial} replays the trace's session "
                         f"{serial}, turn 1: new {10 + serial}, out 2, think 0, forced 0", f"  {serial},1,{10 + serial},2,0,0",
                         "  ^"]


def test_a_plugins_error_placed_at_its_job_names_the_trace_row(tmp_path):
    # guards.placed, given a SimError raised in a plugin's code (its last frame outside serQ) and the job of a
    # session replaying the trace: placed at the job's run, with the row's note
    from serq_sim import guards
    from serq_sim.api import registries
    from serq_sim.engine import Simulation
    from serq_sim.errors import SimError

    (tmp_path / "t.csv").write_text(ROWS)
    p = tmp_path / "p.sq"
    p.write_text(STILL)
    sim = Simulation(serq_frontend.compile(p), registries())
    s = type("S", (), {"serial": 3, "trace": [sim.trace.sessions[3], 1, 3]})()  # (past its first turn)
    job = type("J", (), {"owner": s, "span": 0})()
    namespace: dict = {"SimError": SimError}
    exec(compile("def fail():\n    raise SimError('stage e: no room for the job')\n", "acme.py", "exec"), namespace)
    try:
        namespace["fail"]()
    except SimError as e:
        placed = guards.placed(e, sim, job)
    lines = str(placed).splitlines()
    assert lines[0].endswith("error: at t=0, session 3: stage e: no room for the job")
    assert lines[-3:] == [f"{tmp_path / 't.csv'}:5:1: note: session 3 replays the trace's session 3, turn 1: new 13, "
                          "out 2, think 0, forced 0", "  3,1,13,2,0,0", "  ^"]
