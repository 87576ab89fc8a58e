"""The program of the tests of a run stopped for what it holds (test_known_defects_round39_holders, round40's
oom_holders, round41's stop_parts), compiled from grow.sq so that its spans name that file, and a memory guard
that says "stop" from its second look on.

One pool of one unit held over a one-second run, arrivals at 100 a second: every session but the one holding the
pool waits at the hold (grow.sq:6:3); observe a takes a sample at every arrival (grow.sq:5:3), b at every end,
so a holds the most samples."""

from __future__ import annotations

import serq_frontend

GROW = """stage s : fifo(1);
pool p { cap 1; }
workload { arrive poisson(100); }
session {
  observe a = 1;
  hold p (1) {
    run s (1);
  }
  observe b = 2;
}
run { horizon 1e9; seed 1; }
"""


def grow(tmp_path, monkeypatch):
    """GROW compiled from grow.sq in ``tmp_path``, made the current folder (its spans name grow.sq)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grow.sq").write_text(GROW)
    return serq_frontend.compile("grow.sq")


class SecondLookGuard:
    """A memory guard that says "stop" from its second look on (the second tick, 40 000 events)."""

    def __init__(self):
        self.looks = 0

    def over(self):
        self.looks += 1
        return "stopped near the memory limit" if self.looks >= 2 else None
