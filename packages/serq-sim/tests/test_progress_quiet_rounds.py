"""The progress bar inside a step stage's stretch of quiet rounds (step/lazy.py, ``_quiet_rounds``).

A stretch is one event however many rounds it takes, and the bar was drawn only at the event loop's ticks
and in the countdown of work inside an event, which a stretch does not count: one request decoding 10**8
tokens alone (minutes of wall time) left the bar where the stretch began. The stretch now draws it where it
reads the clock for ``--max-wall`` (every ``_WALL_ROUNDS`` rounds), with its own clock and its rounds
counted as events, as the report counts them; drawing it changes nothing in the report.
"""

from __future__ import annotations

import io
import re
import sys

import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.step import lazy

# one session decoding 200 000 tokens alone, a round of cost 0.01 each: one stretch of 200 000 rounds
PROGRAM = """stage engine : step { budget 512; cost 0.01; }
workload { arrive batch(1); }
session { run engine decode (200000); observe t = now; end; }
run { horizon inf; seed 1; }
"""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_moves_inside_a_stretch_and_changes_nothing(tmp_path, monkeypatch):
    src = tmp_path / "decode.sq"
    src.write_text(PROGRAM)
    prog = serq_frontend.compile(str(src))
    plain = encode_json(serq_sim.run(prog)).decode()
    # the stretch's clock a second on at each of its readings: each reading draws the bar (at most every 0.25 s)
    clock = iter(range(10**6))
    monkeypatch.setattr(lazy, "_monotonic", lambda: 1e6 + next(clock))
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    r = serq_sim.run(prog, progress=True)
    monkeypatch.setattr(sys, "stderr", sys.__stderr__)
    assert encode_json(r).decode() == plain
    n = lazy._WALL_ROUNDS
    draws = [(float(t), int(e)) for t, e in re.findall(r"t=(\S+)\s+events=(\d+)", err.getvalue())]
    # every reading of the stretch's clock, after n, 2n, ... rounds: the rounds taken counted as events (the
    # batch's first iteration is planned before the loop: no event popped yet), the clock at their end
    inside = [d for d in draws if d[1] % n == 0 and d[1] > 0]
    assert len(inside) == 200_000 // n - (1 if 200_000 % n == 0 else 0)
    assert [e for _, e in inside] == [n * (i + 1) for i in range(len(inside))]
    for t, e in inside:
        assert abs(t - e * 0.01) < 1e-6 * e
