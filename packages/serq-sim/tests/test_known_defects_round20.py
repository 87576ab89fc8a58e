"""Known defects, round 20 (serq-sim).

1. A run-time error of a session that replays a trace names the trace row it met: the file, the line, the
   trace's session id and turn as the file writes them, and the row's values (trace.replay_note), on both
   tiers (the fast tier formats its own errors, fast._err). The error said nothing of the trace.
2. ``report.records()`` of a program of two record tables names them and how to name one.
3. ``--max-wall`` bounds the set-up's read of a trace (a partial report, nothing simulated).
4. A stop before the event loop counts the quiet rounds planned there as events (it said events 0).
5. A spill tier whose block does not divide the pool's is warned of (spill-lossy).
6. A transfer whose ``from`` and ``to`` come out one member at run time is refused there.
"""

from __future__ import annotations

import serq_frontend
import serq_sim
from tiers import same_error

#: a trace whose sessions are numbered 70 and 5 (first appearance: 70 is the run's trace session 0), the
#: rows of 70 out of the order of their turns; 70's turn 9 has out = 0
TRACE = """session,turn,new,out,think,forced
70,9,30,0,1.5,1
70,3,10,4,0.25,0
5,1,7,2,0,0
"""

#: a simple program (the fast tier's): a run of `out - 1` seconds, negative for out = 0
PROGRAM = """stage d : fifo(1);
workload {
  arrive batch(1);
  trace "t.csv" ordered;
  session {
    turn;
    loop {
      request;
      branch (more) { turn; } else { end; }
    }
  }
}
server {
  run d (out - 1);
}
run { horizon 1000; }
"""


def _program(tmp_path, trace=TRACE, program=PROGRAM):
    (tmp_path / "t.csv").write_text(trace)
    (tmp_path / "p.sq").write_text(program)
    return serq_frontend.compile(tmp_path / "p.sq")


def test_a_run_time_error_names_the_trace_row(tmp_path, monkeypatch):
    prog = _program(tmp_path)
    # the program takes the fast tier (so that both tiers are compared): without the faulty row it runs there
    monkeypatch.setenv("SERQ_SIM_TIER", "")
    (tmp_path / "fine").mkdir()
    fine = _program(tmp_path / "fine", trace=TRACE.replace("70,9,30,0,", "70,9,30,3,"))
    assert serq_sim.run(fine).tier == "fast"
    message = same_error(prog, monkeypatch)
    trace = str(tmp_path / "t.csv")
    # session 0 replays trace session 70: its turn 3 (line 3) ran 3 s; its turn 9 (line 2) has out 0
    assert message.splitlines()[0].endswith("error: at t=3, session 0: the run's work is negative (-1)")
    assert message.splitlines()[3:] == [
        f"{trace}:2:1: note: session 0 replays the trace's session 70, turn 9: new 30, out 0, think 1.5, forced 1",
        "  70,9,30,0,1.5,1",
        "  ^"]


def test_the_note_says_the_turn_in_order_when_the_file_changed(tmp_path, monkeypatch):
    """The file is read again for the line and the words of the ids: one changed since the run read it is
    not quoted; the note names the session and its turn counted in order, with the values the run read."""
    prog = _program(tmp_path)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    import serq_sim.trace as T

    real = T.load_trace

    def load_then_change(path, *a, **k):
        corpus = real(path, *a, **k)
        (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n1,1,1,1,1,1\n")
        return corpus

    monkeypatch.setattr(T, "load_trace", load_then_change)
    try:
        serq_sim.run(prog)
    except serq_sim.SimError as e:
        message = str(e)
    else:
        raise AssertionError("no error")
    assert message.splitlines()[3:] == [
        f"{tmp_path / 't.csv'}: note: session 0 replays the trace's session 70, its turn 2 (counted in order of "
        "turns): new 30, out 0, think 1.5, forced 1"]


def test_a_session_that_replays_no_trace_has_no_note(monkeypatch):
    src = PROGRAM.replace('  trace "t.csv" ordered;\n', "").replace("out - 1", "serial - 1").replace(
        "branch (more) { turn; } else { end; }", "end;")
    prog = serq_frontend.compile(source=src)
    message = same_error(prog, monkeypatch)
    assert message == ("<source>:13:3: error: at t=0, session 0: the run's work is negative (-1)\n"
                       "    run d (serial - 1);\n"
                       "    ^")  # (the server's run, on line 13 once the trace's line is gone)


# 2. report.records() (record_table()) without a name, of a program of two record tables: the tables and how
#    to name one, as the words of the error (a KeyError whose str() was the words in quotes, naming neither
#    how to name a table nor the look-up that does)
TWO_TABLES = """stage d : delay;
workload { arrive batch(1); }
session { record a { x = 1; } record b { y = 2; } run d (1); }
run { horizon 10; }
"""


def test_records_of_two_tables_says_which_and_how_to_name_one():
    import pytest

    r = serq_sim.run(serq_frontend.compile(source=TWO_TABLES))
    words = "the program has 2 record tables, 'a' and 'b': name one, records('a') (record_names lists them)"
    for look in (r.records, r.record_table):
        with pytest.raises(KeyError) as e:
            look()
        assert str(e.value) == words
    assert list(r.records("b", kind="numpy")["y"]) == [2.0]  # named as it says: the table
    none = serq_sim.run(serq_frontend.compile(source=TWO_TABLES.replace("record a { x = 1; } record b { y = 2; } ",
                                                                         "")))
    with pytest.raises(KeyError) as e:
        none.records()
    assert str(e.value) == "the program has no record table (a `record NAME { COL = expr; … }` statement makes one)"


# 3. --max-wall bounds the set-up's read of a trace: past the bound the run stops before it begins, its
#    partial report (max-wall, exit status 3) noting the set-up; the read went on to the trace's end (a trace
#    of a million rows: 8 s under --max-wall 1). The clock is a stand-in that moves 1 s at each reading.
class _Clock:
    """The time module, but for a monotonic clock that moves 1 s at each reading."""

    def __init__(self):
        import time

        self._time, self.t = time, 0.0

    def monotonic(self) -> float:
        self.t += 1.0
        return self.t

    def __getattr__(self, name):
        return getattr(self._time, name)


def test_max_wall_bounds_the_trace_read(tmp_path, monkeypatch):
    from serq_sim import engine

    rows = "".join(f"{i // 4},{i % 4 + 1},10,2,0.5,0\n" for i in range(40_000))  # some 14 pieces of 64 KiB
    program = PROGRAM.replace("out - 1", "out")
    prog = _program(tmp_path, trace="session,turn,new,out,think,forced\n" + rows, program=program)
    whole = serq_sim.run(prog)  # the clock not bounding: the whole trace replayed
    assert whole.partial is None and whole.result.arrivals == 1
    reports = {}
    for tier in ("", "general"):
        monkeypatch.setattr(engine, "_time", _Clock())
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(prog, max_wall=3)  # set up at 1 s; the third piece read, at 4 s, is past the bound
        monkeypatch.undo()
        assert r.partial == "max-wall" and r.exit_status == 3
        assert (r.result.events, r.result.arrivals, r.result.end) == (0, 0, 0)
        note = [n for n in r.notes if "wall time" in n]
        head = f"note: stopped after 3 s of wall time (--max-wall 3) at set-up, reading the trace {tmp_path / 't.csv'} ("
        tail = " bytes read), before the run began at t=0; the figures cover what was simulated"
        assert len(note) == 1 and note[0].startswith(head) and note[0].endswith(tail), note
        read = int(note[0][len(head):-len(tail)])
        assert 0 < read < (tmp_path / "t.csv").stat().st_size  # a part of the file: the read stopped
        reports[tier] = r
    assert reports[""].result == reports["general"].result


# 4. A stop before the event loop (Ctrl-C, SIGTERM, --max-wall's countdown inside an event) after a stretch of
#    quiet rounds was planned there (a batch's first iteration, in Simulation._start's settle) counts the
#    stretch's rounds as events, as the per-job planning counts them: the report said events 0, the rounds
#    being added to the events popped only on the event loop's way out.
DECODE = """stage engine : step { budget 512; cost 0.01; }
workload { arrive batch(1); }
session { run engine decode (20000); observe t = now; end; }
run { horizon inf; seed 1; }
"""


def test_a_stop_in_the_set_up_settle_counts_the_planned_rounds(monkeypatch):
    from serq_sim import engine

    prog = serq_frontend.compile(source=DECODE)
    real = engine.Simulation.settle

    for stop in ("interrupted", "max-wall"):
        calls = []

        def settle(self, pools=True, *, stop=stop, calls=calls):
            real(self, pools)
            if not calls:  # _start's settle, the stretch planned in it: the stop comes as it ends
                calls.append(self)
                if stop == "interrupted":
                    raise KeyboardInterrupt
                self.stop("max-wall", "stopped (--max-wall) within one event")

        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        monkeypatch.setattr(engine.Simulation, "settle", settle)
        r = serq_sim.run(prog)
        monkeypatch.undo()
        assert r.partial == stop
        rounds = r.result.stages[0].iterations
        assert calls[0].virtual_events > 0  # a stretch was planned in _start: the case at hand
        # the per-job planning (an event a round) stopped after as many rounds counts one event fewer than the
        # iterations, the last in flight: as many as the report now gives (it gave 0)
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
        per_job = serq_sim.run(prog, max_events=rounds - 1)
        assert per_job.result.stages[0].iterations == rounds
        assert r.result.events == per_job.result.events == rounds - 1 > 0


# 5. A spill to a tier whose block does not divide the pool's keeps whole blocks of the tier's in each block
#    written, the rest lost at every spill: warned (spill-lossy, notes.lossy_tier), where it was silent.
#    By hand: session 0 caches 32 units (two blocks of 16) at t=11; session 1, at 20, needs all 32, so both
#    blocks are evicted, two spills of 16 each; the tier keeps floor(16 / tb) * tb of each, 2 * that from 20
#    to the run's end at 21: its mean cached 2 * kept / 21.
SPILL = """let tb = 10;
pool kv { cap 32; block 16; evict lru; spill cpu via pcie (0) when (1); }
pool cpu { cap 1000; block tb; evict lru; }
stage d : delay;
stage pcie : delay;
workload { arrive renewal(10); }
session { hold kv (32) { run d (1); } cache (32); end; }
run { horizon inf; arrivals 2; seed 1; }
"""


def test_a_tier_block_that_does_not_divide_the_pool_block_is_warned(monkeypatch):
    import pytest
    from serq_sim.notes import WARNING_CODES
    from tiers import same_json

    for tb, kept in ((16, 16), (8, 16), (10, 10), (12, 12), (256, 0)):
        r = same_json(serq_frontend.compile(source=SPILL, sets={"tb": tb}), monkeypatch)
        pools = {p["name"]: p for p in r["pools"]}
        assert pools["kv"]["spills"] == (2 if kept else 0)
        assert pools["cpu"]["cached"] == pytest.approx(2 * kept / 21, rel=1e-12)
        lossy = [n for n, c in zip(r["notes"], r["codes"]) if c == "spill-lossy"]
        if kept in (10, 12):
            assert lossy == [f"warning: pool kv's `spill` loses units: kv evicts a block of 16 units at a time, each "
                             f"a spill of its own, and its tier cpu keeps whole blocks of {tb}, so each spill keeps "
                             f"{kept} of the 16 written and loses {16 - kept}; give cpu a block that divides 16"]
        else:  # a block that divides 16 keeps it whole; one of 256 keeps nothing, which spill-unused says
            assert lossy == []
            assert ("spill-unused" in r["codes"]) == (tb == 256)
    assert ("spill-lossy", "pool P's `spill` loses units") in WARNING_CODES


# 6. `transfer … from kv[i] to kv[j]` whose indexes come out equal at run time is refused at the transfer, with
#    its time and session, in the linker's words for equal constants (rules.transfer_itself_message): it ran,
#    its release giving back the hold its load had just filled.
TRANSFER = """pool kv[2] { cap 100; }
stage link : delay;
stage d : delay;
workload { arrive batch(1); }
session {
  set i = 1;
  set j = J;
  hold kv[i] (10) {
    hold kv[j] (10) {
      run d (1);
      transfer (0.5) from kv[i] to kv[j] (5);
      observe held = used(kv[0]) + used(kv[1]);
    }
  }
}
run { horizon 10; }
"""


def test_a_transfer_whose_indexes_come_out_equal_is_refused(monkeypatch):
    import pytest
    from serq_frontend import CompileError
    from serq_ir.rules import transfer_itself_message
    from tiers import same_json

    words = transfer_itself_message("kv[1]", "kv[1]")
    assert words.startswith("`transfer … from kv[1] to kv[1]`: a transfer moves the KV from one pool to another")
    refused = same_error(serq_frontend.compile(source=TRANSFER.replace("J", "i")), monkeypatch)
    # at the transfer (line 11, column 7), after the link's 0.5 s: t = 1.5, session 0
    assert refused == (f"<source>:11:7: error: at t=1.5, session 0: {words}\n"
                       "        transfer (0.5) from kv[i] to kv[j] (5);\n"
                       "        ^")
    # the load and the release at the boundary of the functions a long block is split into (compile.CHUNK, 64
    # statements: the run, 61 sets and the link's run before the load, the 64th): refused the same
    sets = "".join(f"      set x{k} = {k};\n" for k in range(61))
    long = TRANSFER.replace("J", "i").replace("      run d (1);\n", "      run d (1);\n" + sets)
    assert same_error(serq_frontend.compile(source=long), monkeypatch).startswith(
        f"<source>:72:7: error: at t=1.5, session 0: {words}")
    # two members: the transfer runs; at its observe kv[0] holds its 10 and kv[1] nothing (released by it)
    r = same_json(serq_frontend.compile(source=TRANSFER.replace("J", "0")), monkeypatch)
    assert r["observes"]["held"]["mean"] == 10
    # equal constants: the linker's refusal, in the same words
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=TRANSFER.replace("kv[i] to kv[j]", "kv[1] to kv[1]"))
    assert words in str(e.value)
