"""A run under ``arrivals N`` that does not drain because a session livelocks (language.txt §3: a hold that
outgrows its pool preempts itself and executes again for as long as the run goes on) says so in its error.

The error of a run that did not drain replaces the report, and with it the stuck warning that names the
livelock: it said only "1 session still live at the horizon (not drained)". By hand: cap 4, a hold of 2
that must reach position 6 (prefill 2, decode 4, growing): at its decode's growth to 5 it preempts itself,
its hold alone beyond the cap; re-executed, it grows into the same preemption, stuck at its second."""

from __future__ import annotations

from conform import run_error

LIVELOCK = """
pool kv { cap 4; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive poisson(1); }
session {
  hold kv (2) { run E prefill (2) growing kv; run E decode (4) growing kv; }
}
run { horizon 20; arrivals 1; warmup 0; }
"""


def test_a_run_that_does_not_drain_for_a_livelock_names_it(monkeypatch):
    msg = run_error(LIVELOCK, monkeypatch)
    assert msg.endswith(
        "run { arrivals 1; }: 1 session still live at the horizon (not drained); on kv 1 session preempted itself "
        "again and again at the same position, its hold needing more than the pool's capacity (5 units for the "
        "first, capacity 4): a livelock that only the horizon ends; a larger pool, a cut before the growth or a "
        "reserve of what the hold will need, which rejects it, ends it"), msg


def test_a_run_that_does_not_drain_otherwise_names_none(monkeypatch):
    # the same session with room for its decode: it drains; with 2 sessions and arrivals 3 one arrival is short
    msg = run_error(LIVELOCK.replace("cap 4", "cap 6").replace("arrivals 1", "arrivals 100"), monkeypatch)
    assert "livelock" not in msg and "only" in msg, msg
