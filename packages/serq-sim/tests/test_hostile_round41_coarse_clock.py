"""A run whose clock reaches times where its doubles are far apart beside the durations it measures is warned of
(serq_sim.notes.coarse_clock, code ``coarse-clock``; docs/simulator.md, "The report's warnings").

At t = 4e15 the doubles are 0.5 apart (2**51 <= t < 2**52), so a run of 0.6 s started there ends 0.5 s later and a
think time of 0.7 s lasts 0.5 s: the report said, without a word, that every such run took 0.5 s (a clock so
coarse that a run does not move it at all is the no-progress error, tests/test_hostile_round26_clock_precision.py).
"""

from __future__ import annotations

import serq_frontend
from tiers import both

# 20 sessions, each waiting until 4e15 (+ 3 s a session), then a run of 0.6 s at svc and a think of 0.7 s
PROGRAM = """stage svc : fifo;
stage d : delay;
workload {
  arrive batch(20);
}
session {
  run d (START + serial * 3);
  set t0 = now;
  run svc (0.6);
  observe response = now - t0;
  set t1 = now;
  run d (0.7);
  observe think = now - t1;
  end;
}
run { horizon inf; seed 1; }
"""


def _coarse(report) -> list[str]:
    return [n for n, c in zip(report.result.notes, report.result.codes) if c == "coarse-clock"]


def test_runs_measured_where_the_doubles_are_half_a_second_apart_are_warned_of(monkeypatch):
    report = both(PROGRAM.replace("START", "4e15"), monkeypatch)
    # by hand: the doubles at 4e15 are 0.5 apart; 0.6 and 0.7 round to 0.5 (t0 a multiple of 0.5 there)
    assert report.result.observes["response"].mean == 0.5 and report.result.observes["think"].mean == 0.5
    # the last event: session 19's think ends at 4e15 + 57 + 0.5 + 0.5
    assert _coarse(report) == [
        "warning: the clock reached t=4000000000000058, where its doubles are 0.5 apart: every time measured there "
        "is rounded to a multiple of 0.5 s, and stage svc's mean service is 0.5 s, 1 step of the clock (its figures, "
        "and an observe of a difference of times there, are that coarse); start the sessions' work nearer t=0, or "
        "count time in a larger unit"]


def test_a_clock_fine_enough_for_six_digits_is_not_warned_of(monkeypatch):
    # at 4e9 the doubles are 2**-21 (4.8e-7) apart: 0.6 s is over a million of them
    report = both(PROGRAM.replace("START", "4e9"), monkeypatch)
    assert abs(report.result.observes["response"].mean - 0.6) < 1e-6
    assert _coarse(report) == []


def test_a_run_drained_long_before_a_far_horizon_is_not_warned_of(monkeypatch):
    # the horizon is where the run ends, but no time was measured past t = 58.2
    src = PROGRAM.replace("START", "1").replace("horizon inf;", "horizon 1e300;")
    report = both(src, monkeypatch)
    assert report.result.end == 1e300 and _coarse(report) == []
    assert abs(report.result.observes["response"].mean - 0.6) < 1e-12
    assert serq_frontend  # (compiled by tiers.both)
