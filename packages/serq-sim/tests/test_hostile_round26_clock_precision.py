"""A loop whose runs are too short for the clock's doubles says so (serq_sim.compile.spin_message; docs/simulator.md,
the loop of no time).

At t = 1e16 the doubles are 2 apart, so 1e16 + 0.5 is 1e16: a loop around `run s (0.5)` passes its head at one
instant, and after 1 000 000 passes it is the run-time error of a loop that never waits, on both tiers. That
error said only "no run, hold or grow that takes time in its body", and the body has a run of 0.5 s; past t = 0
it now says which times the clock cannot take there. At t = 0 (every positive time moves the clock) the words
are those of before."""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)

BEFORE = ("loop: 1000000 passes at one instant without simulated time passing (none of them reached a run, hold "
          "or grow that took time; a `choose` of n candidates in it counts n passes")


def program(gap: str, work: str) -> str:
    # the loop is at line 5, column 3
    return f"""stage svc : delay;
workload {{
  arrive renewal({gap});
}}
session {{
  loop {{ run svc ({work}); }}
}}
run {{ horizon {gap} * 3; seed 1; }}
"""


def error(src: str, monkeypatch, tier: str) -> str:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    with pytest.raises(SimError) as e:
        serq_sim.run(prog)
    return str(e.value).splitlines()[0]


@pytest.mark.parametrize("gap, t, work, below, apart", [
    ("1e16", 1e16, "0.5", "1", "2"),                # the doubles at 1e16 are 2 apart: 0.5 and 1 are no time
    ("pow(2, 60)", 2.0**60, "64", "128", "256"),    # at 2**60 they are 256 apart
])
def test_a_run_below_the_clocks_precision(gap, t, work, below, apart, monkeypatch):
    src = program(gap, work)
    fast, general = error(src, monkeypatch, ""), error(src, monkeypatch, "general")
    assert fast == general
    # the first arrival is after one gap: the loop spins at t
    assert general == (f"<source>:6:3: error: at t={t:g}, session 0: {BEFORE}; at t={t:g} a time below {below} "
                       f"does not move the clock: its doubles there are {apart} apart)")
    # the figures are the doubles' own
    assert math.ulp(t) == float(apart) == 2 * float(below)
    assert t + float(work) == t


def test_a_loop_of_no_time_at_0_keeps_its_words(monkeypatch):
    src = """workload {
  arrive batch(1);
}
session {
  loop { set x = 1; }
}
run { horizon 10; seed 1; }
"""
    fast, general = error(src, monkeypatch, ""), error(src, monkeypatch, "general")
    assert fast == general == f"<source>:5:3: error: at t=0, session 0: {BEFORE})"
