"""A finite growth that takes a hold's own units beyond the largest double, on a pool without a cap.

A pool whose cap is 2**53 or more counts its total exactly (pools/exact.py): two holds of 1e308 on a pool of
cap inf hold 2e308 between them. One hold's units are a double, so a hold of 1e308 grown by 1e308 cannot be
booked; that was refused as 'the growth of kv is infinite on a pool without a cap', of a growth the program
wrote as 1e308. It is the same error, saying what is beyond the doubles: the hold's units, 1e308 + 1e308.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.errors import SimError

pytestmark = pytest.mark.timeout(60)

PROGRAM = """pool kv { cap inf; preempt lifo; }
stage d : delay;
workload {
  arrive renewal(1);
}
session {
  hold kv (HOLD) {
    run d (0.5);
    grow kv (GROW);
    observe u = used(kv);
    run d (1.5);
  }
}
run { horizon 10; }
"""


def outcome(hold: str, grow: str, monkeypatch):
    """The JSON report, or the error, on the default tier and on the general engine: the same on both."""
    prog = serq_frontend.compile(source=PROGRAM.replace("HOLD", hold).replace("GROW", grow), sets={}, defs={})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        try:
            out.append(encode_json(serq_sim.run(prog)))
        except SimError as e:
            out.append(e)
    assert str(out[0]) == str(out[1])
    return out[1] if isinstance(out[1], SimError) else json.loads(out[1])


def test_a_finite_growth_beyond_the_doubles_is_said_as_the_holds_units(monkeypatch):
    # session 0 arrives at t = 1 and grows at 1.5
    e = outcome("1e308", "1e308", monkeypatch)
    assert str(e) == (
        "<source>:9:5: error: at t=1.5, session 0: the growth of kv by 1e+308 makes the hold's units 1e+308 + "
        "1e+308, beyond the largest double: a hold on a pool without a cap holds a finite amount\n"
        "      grow kv (1e308);\n"
        "      ^")


def test_an_infinite_growth_keeps_its_words(monkeypatch):
    e = outcome("1", "inf", monkeypatch)
    assert "at t=1.5, session 0: grow kv: the amount is infinite on a pool without a cap" in str(e)


def test_growths_whose_sum_over_holds_is_beyond_the_doubles_are_counted(monkeypatch):
    # session k arrives at t = k (1 … 10; the last one at the horizon, holding for no time), holds 5e307, grows by 5e307 at k + 0.5 (1e308, a double) and releases
    # at k + 2: from the second on, a growth finds the previous session holding 1e308, so the pool holds 2e308
    # (counted exactly; used(kv) reads it rounded, inf). Time-average by hand: sessions 1 … 8 hold
    # 5e307 * 0.5 + 1e308 * 1.5 = 1.75e308 unit-seconds each, session 9 5e307 * 0.5 + 1e308 * 0.5 = 7.5e307 by
    # t = 10: 1.475e309 over 10 s, 1.475e308 (the pool's releases take the sums back exactly)
    r = outcome("5e307", "5e307", monkeypatch)
    assert (r["arrivals"], r["ended"]) == (10, 8)
    u = r["observes"]["u"]
    assert u["count"] == 9 and u["mean"] is None  # one sample 1e308, eight beyond the doubles (inf)
    assert r["pools"][0]["used"] == pytest.approx(1.475e308, rel=1e-12)
