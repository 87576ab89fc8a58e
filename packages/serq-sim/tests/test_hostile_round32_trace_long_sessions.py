"""A session replaying a long trace session holds a view of its turns, not a list of them.

Above ``EAGER_ROWS`` rows a trace's sessions are kept as columns, and each session that started replaying
trace session i made the whole list of its turns: some 150 bytes a turn, made again for every session,
whatever few turns it then reached. Five sessions replaying a trace session of a million turns (a 20 MB
file) took 1.1 GB and 13 s before their first turn, fifteen 1.8 GB; the columns themselves 48 MB. Each
turn is now made when the session reaches it (``serq_sim.trace.TraceTurns``).
"""

from __future__ import annotations

import tracemalloc

import pytest
import serq_frontend
import serq_sim
from serq_sim import trace as trace_mod
from serq_sim.trace import TraceTurns, load_trace

HEADER = "session,turn,new,out,think,forced\n"
TURNS = 20_000
SESSIONS = 40

# every session replays trace session 0 (the only one) and leaves after its third turn
PROGRAM = f"""stage d : delay;

workload {{
  arrive batch({SESSIONS});
  trace "long.csv";
}}

session {{
  turn;
  loop {{
    observe n = new;
    observe o = out;
    run d (think);
    branch (more && turn_no < 3) {{
      turn;
    }} else {{
      end;
    }}
  }}
}}

run {{ horizon 100; seed 1; }}
"""


def _files(tmp_path):
    # turn k (from 1) of the one session: new 10 k, out k % 7, think 0.25
    rows = "".join(f"0,{k},{10 * k},{k % 7},0.25,0\n" for k in range(1, TURNS + 1))
    (tmp_path / "long.csv").write_text(HEADER + rows)
    src = tmp_path / "long.sq"
    src.write_text(PROGRAM)
    return serq_frontend.compile(str(src))


@pytest.mark.parametrize("tier", ["", "general"])
def test_sessions_replaying_a_long_trace_session_take_no_list_of_its_turns(tmp_path, monkeypatch, tier):
    prog = _files(tmp_path)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    eager = serq_sim.run(prog)  # 20 000 rows: the turns made into tuples once, shared by every session
    monkeypatch.setattr(trace_mod, "EAGER_ROWS", 0)
    tracemalloc.start()
    try:
        lazy = serq_sim.run(prog)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # by hand: each of the 40 sessions reads turns 1, 2, 3 (new 10, 20, 30; out 1, 2, 3) at 0, 0.25, 0.5
    for r in (eager, lazy):
        assert sorted(r.observe("n").values) == [10.0] * SESSIONS + [20.0] * SESSIONS + [30.0] * SESSIONS
        assert sorted(r.observe("o").values) == [1.0] * SESSIONS + [2.0] * SESSIONS + [3.0] * SESSIONS
        assert sorted(r.observe("n").times) == [0.0] * SESSIONS + [0.25] * SESSIONS + [0.5] * SESSIONS
        assert r.result.ended == SESSIONS and r.result.turns == 3 * SESSIONS
    assert lazy.result == eager.result
    for name in ("n", "o"):
        assert lazy.observe(name).values.tobytes() == eager.observe(name).values.tobytes()
        assert lazy.observe(name).sessions.tobytes() == eager.observe(name).sessions.tobytes()
    # the run, reading the trace, takes about 2 MB (the columns of 20 000 rows are about 1 MB); a list of
    # the turns per session was 40 x 20 000 tuples, and the run took 141 MB
    assert peak < 16_000_000, f"{peak / 1e6:.1f} MB"


def test_a_trace_sessions_turns_read_as_a_sequence(tmp_path, monkeypatch):
    p = tmp_path / "t.csv"
    p.write_text(HEADER + "5,2,20,2,0.5,0\n9,1,7,1,0,1\n5,1,10,1,0.25,0\n5,3,30,3,1,0\n")
    monkeypatch.setattr(trace_mod, "EAGER_ROWS", 0)
    sessions = load_trace(str(p)).sessions
    first = sessions[0]  # session 5, by turn
    assert isinstance(first, TraceTurns)
    want = [(10.0, 1.0, 0.25, 0.0), (20.0, 2.0, 0.5, 0.0), (30.0, 3.0, 1.0, 0.0)]
    assert len(first) == 3 and first[0] == want[0] and first[-1] == want[2] and first[1:] == want[1:]
    assert first == want and list(first) == want and first != want[:2] and first != 3
    with pytest.raises(IndexError):
        first[3]
    with pytest.raises(IndexError):
        first[-4]
    assert sessions[1] == [(7.0, 1.0, 0.0, 1.0)] and sessions[-1] == sessions[1]
