"""The user's bounds inside a step stage's stretch of quiet rounds (step/lazy.py, ``_quiet_rounds``).

A stretch is one event however many rounds it takes: one request decoding 10**8 tokens alone is a stretch
of 10**8 rounds. ``--max-wall`` read the clock only between events (every 1 000) and in the countdown of
work inside an event, which the stretch did not count: ``serq run`` of such a request under
``--max-wall 2`` ran 123 s to its end, and ``--max-wall 1`` of a batch's decode, whose stretch is planned
before the event loop starts, as long. The stretch now reads the clock every ``_WALL_ROUNDS`` rounds and
ends once the bound is passed; the run stops there with the partial report, as at ``--max-events``.

A stretch planned before the event loop (a batch's first iteration) that ended at ``--max-events N``
gave the report ``events 0`` (the per-job planning's, ``SERQ_SIM_TIER=general``, ``events N``): the
loop's way out adds the stretch's rounds to the events it popped, and the stop came before the loop.
"""

from __future__ import annotations

import time

import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.step import lazy

# one session decoding 200 000 tokens alone, a round of cost 0.01 each: 200 000 events, ending at 2000
PROGRAM = """stage engine : step { budget 512; cost 0.01; }
workload { arrive batch(1); }
session { run engine decode (200000); observe t = now; end; }
run { horizon inf; seed 1; }
"""


def _program(tmp_path):
    src = tmp_path / "decode.sq"
    src.write_text(PROGRAM)
    return serq_frontend.compile(str(src))


def _report(r) -> str:
    return encode_json(r).decode()


def test_the_whole_run_as_computed_by_hand(tmp_path, monkeypatch):
    prog = _program(tmp_path)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    per_job = serq_sim.run(prog, max_events=300)
    monkeypatch.delenv("SERQ_SIM_TIER")
    r = serq_sim.run(prog)
    assert r.result.events == 200_000 and r.result.partial is None
    t = 0.0
    for _ in range(200_000):  # a round of 0.01 a token, the clock added up round by round
        t += 0.01
    assert list(r.observe("t").values) == [t]
    assert per_job.result.events == 300


def test_max_events_reached_in_a_stretch_before_the_event_loop_counts_its_rounds(tmp_path, monkeypatch):
    prog = _program(tmp_path)
    for n in (1, 2, 100, 3000):
        monkeypatch.setenv("SERQ_SIM_TIER", "general")  # the per-job planning: every round an event popped
        per_job = serq_sim.run(prog, max_events=n)
        monkeypatch.delenv("SERQ_SIM_TIER")
        quiet = serq_sim.run(prog, max_events=n)
        assert quiet.result.partial == per_job.result.partial == "max-events"
        # n rounds of 0.01: the clock at n * 0.01 (as the rounds' sum), n events (the stretch said 0)
        assert quiet.result.events == per_job.result.events == n
        assert abs(quiet.result.end - n * 0.01) < 1e-9 * n
        assert _report(quiet) == _report(per_job)


def test_max_wall_passed_in_a_stretch_stops_the_run_there(tmp_path, monkeypatch):
    prog = _program(tmp_path)
    # the stretch's clock a million seconds ahead of the engine's (whose own readings, every 1 000 events
    # popped and in the countdown, are the real clock's: far from the bound of 1 000 s): the stretch
    # finds the bound passed at its first reading, after _WALL_ROUNDS rounds, and only there
    real = time.monotonic
    monkeypatch.setattr(lazy, "_monotonic", lambda: real() + 1e6)
    r = serq_sim.run(prog, max_wall=1000)
    assert r.result.partial == "max-wall" and r.result.interrupted
    n = lazy._WALL_ROUNDS
    assert r.result.events == n
    (note,) = r.result.notes
    assert f"(--max-wall 1000) in the quiet rounds of step stage engine ({n} events)" in note
    # where it stopped is where --max-events n stops it: the same report but for the reason and its note
    monkeypatch.setattr(lazy, "_monotonic", real)
    at_n = serq_sim.run(prog, max_events=n)
    a = _report(r).replace(note, "NOTE").replace('"max-wall"', '"BOUND"')
    b = _report(at_n).replace(at_n.result.notes[0], "NOTE").replace('"max-events"', '"BOUND"')
    assert a == b


def test_a_bound_that_is_not_reached_changes_nothing(tmp_path):
    prog = _program(tmp_path)
    free = serq_sim.run(prog)
    bounded = serq_sim.run(prog, max_wall=10_000, max_events=10**9)
    assert _report(bounded) == _report(free)
