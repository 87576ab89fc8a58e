"""docs/language.md (Names): a figure's name (an observe, a gauge) and a definition's parameter may take a
built-in attribute's or a context variable's name, where a pool, a stage, a queue, a binding or a queue entry's
parameter may not. A figure is read by no expression, so ``serial`` elsewhere is still the session's number; a
definition's parameter is read as the parameter in its body (``def f(now) = now * 2;`` makes ``f(3)`` 6 at any
time). The values by hand, on both tiers (a gauge keeps a program off the fast tier: without it there)."""

from __future__ import annotations

import serq_frontend
from tiers import both, same_json

PROGRAM = """stage s : delay;
workload { arrive batch(3); }
def f(now) = now * 2;
def g(serial) = serial;
def h(turn_no) = turn_no + 1;
GAUGEsession {
  run s (5);
  observe a = f(3);
  observe b = g(7);
  observe c = h(10);
  observe turn_no = serial;
  observe now = now;
}
run { horizon 100; }
"""


def test_figures_and_parameters_take_the_languages_names(monkeypatch):
    r = both(PROGRAM.replace("GAUGE", ""), monkeypatch)
    # three sessions at t=0, serials 0, 1, 2, each observing after its run of 5: the parameters read the
    # arguments (6, 7 and 11 at t=5), the observe named `turn_no` reads the serial, the one named `now` the clock
    got = {name: r.observe(name).values.tolist() for name in ("a", "b", "c", "turn_no", "now")}
    assert got == {"a": [6.0] * 3, "b": [7.0] * 3, "c": [11.0] * 3, "turn_no": [0.0, 1.0, 2.0], "now": [5.0] * 3}


def test_a_gauge_named_serial_leaves_the_attribute_alone(monkeypatch):
    program = serq_frontend.compile(source=PROGRAM.replace("GAUGE", "gauge serial = 3;\n"), sets={}, defs={})
    assert [g.name for g in program.gauges] == ["serial"]
    r = same_json(program, monkeypatch)
    assert r["gauges"]["serial"]["mean"] == 3
    assert (r["observes"]["turn_no"]["count"], r["observes"]["turn_no"]["mean"]) == (3, 1)  # (0 + 1 + 2) / 3
    assert (r["observes"]["b"]["mean"], r["observes"]["c"]["mean"]) == (7, 11)
