"""What the report's `events` counts (docs/language.md, "What the run line's `events` counts"): every event the
run took off its event list, those that did nothing included (a ps stage's completion superseded when another
job came or left, the timer of a lease ended before its time), the count `--max-events` bounds. Traced by hand
on both tiers.

Two sessions of `arrive batch(2)`: session s waits `run d (s)`, then runs 2 units on `cpu`.
  fifo     d of session 1 ends at 1; session 0's job ends at 2, session 1's (queued) at 4: 3 events
  ps(1)    d at 1; session 0's completion, scheduled for 2 when it ran alone, is superseded at 1 (two jobs
           share the server: session 0's last unit ends at 3, session 1's at 4): events at 1, 2 (the
           superseded completion, which does nothing), 3 and 4: 4 events, 3 of which fired
A zero delay (session 0's `run d (0)`) and the batch's arrival are no events of the list.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

SRC = """stage d : delay;
stage cpu : KIND;
workload { arrive batch(2); }
session { run d (serial); run cpu (2); observe done = now; }
run { horizon 10; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_events_count_the_superseded_completion_and_max_events_bounds_that_count(tier, monkeypatch):
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    fifo = serq_sim.run(serq_frontend.compile(source=SRC.replace("KIND", "fifo")))
    ps = serq_sim.run(serq_frontend.compile(source=SRC.replace("KIND", "ps(1)")))
    assert fifo.result.events == 3 and list(fifo.observe("done").values) == [2.0, 4.0]
    assert ps.result.events == 4 and list(ps.observe("done").values) == [3.0, 4.0]
    # --max-events 2 stops after the superseded completion at 2, before session 0's job ends at 3
    part = serq_sim.run(serq_frontend.compile(source=SRC.replace("KIND", "ps(1)")), max_events=2)
    assert part.result.partial == "max-events" and part.result.events == 2 and part.result.end == 2.0
    assert len(part.observe("done").values) == 0
