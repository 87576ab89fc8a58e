"""A session that replays more than a million trace turns that take no time runs them all.

The spin guard stops a loop whose passes take no simulated time once a session has made SPIN_LIMIT (10**6)
passes of a loop head at one instant: such a loop never ends. A trace session of more turns than that, each
of no time (prompts of 0 tokens, think 0: a million rows of one instant), is a finite loop, and was stopped
as such (``loop: 1000000 passes at one instant without simulated time passing``, with the note of the row
it had reached). A turn that loads a row of the trace is progress through a finite input and now starts
the count again, on both tiers; passes past the session's last row count as before, and a loop that goes on
past it is stopped a million passes later.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.compile import SPIN_LIMIT
from tiers import same_error, same_json

pytestmark = pytest.mark.timeout(300)

PROGRAM = """stage svc : fifo;

workload {
  arrive batch(1);
  trace "t.csv";
}

session {
  loop {
    turn;
    run svc (new);
    MORE
  }
}

run { horizon 10; seed 1; }
"""

ROWS = SPIN_LIMIT + 3


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zero")
    with open(folder / "t.csv", "w") as f:
        f.write("session,turn,new,out,think,forced\n")
        f.writelines(f"0,{k},0,1,0,0\n" for k in range(1, ROWS + 1))
    return folder


def test_every_row_is_replayed_at_one_instant(trace, monkeypatch):
    src = PROGRAM.replace("MORE", "branch (more) {\n    } else {\n      end;\n    }")
    (trace / "p.sq").write_text(src)
    monkeypatch.chdir(trace)
    report = same_json(serq_frontend.compile("p.sq"), monkeypatch)
    # one session, one turn a row, every turn at t = 0: it ends after the last row
    assert (report["turns"], report["arrivals"], report["ended"]) == (ROWS, 1, 1)


def test_a_loop_that_goes_on_past_the_last_row_is_still_stopped(trace, monkeypatch):
    (trace / "q.sq").write_text(PROGRAM.replace("    MORE\n", ""))
    monkeypatch.chdir(trace)
    msg = same_error(serq_frontend.compile("q.sq"), monkeypatch)
    assert msg.splitlines()[0] == (
        f"q.sq:9:3: error: at t=0, session 0: loop: {SPIN_LIMIT} passes at one instant without simulated time "
        "passing (none of them reached a run, hold or grow that took time; a `choose` of n candidates in it counts "
        "n passes)")
    # the count began again at the last row: the note names it, the session's place when it was stopped
    assert f"t.csv:{ROWS + 1}:1: note: session 0 replays the trace's session 0, turn {ROWS}:" in msg
