"""A run-time error of the workload points at its ``arrive`` (file:line:col, the source line, a caret).

The arrival forms of the IR (``Poisson``, ``Renewal``, ``Closed``, ``Batch``) carry the span of the
``arrive`` they were written as, as every statement does. Before, they had none, so the errors that belong
to the workload rather than to a statement named no place: the closed workload's no-progress guard (its
sessions end at the instant they start, replaced for ever), arrivals stuck at one instant (a renewal gap
below the clock's precision) and ``run { arrivals N; }`` on an IR whose workload is closed. An IR file
without these spans (written before they existed, or by hand) still loads, and its errors say what they
said; spans are not part of a program's meaning (``strip_spans``).
"""

from __future__ import annotations

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
import serq_sim.engine as engine
from serq_ir import nodes as N
from serq_sim import SimError

pytestmark = pytest.mark.timeout(60)

CLOSED = """stage d : delay;
workload {
  arrive closed(1);
}
session {
  run d (0);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_closed_workload_spinning_names_its_arrive(tmp_path, monkeypatch, tier):
    """A closed workload whose sessions take no time: the error is at `arrive closed(1)` (line 3, column 3),
    with the line and a caret under `arrive`, on both tiers."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    f = tmp_path / "spin.sq"
    f.write_text(CLOSED)
    p = serq_frontend.compile(f)
    with pytest.raises(SimError) as e:
        serq_sim.run(p)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"{f}:3:3: error: at t=0, session 100100: no progress: the closed workload ")
    assert lines[1].strip() == "arrive closed(1);"
    assert lines[2].index("^") == lines[1].index("arrive")


@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_at_a_stuck_clock_name_the_arrive(monkeypatch, tier):
    """Arrivals that stop the clock (a gap of 1e-20 from t = 1.5) are the workload's: the no-progress error
    points at `arrive renewal(…)`."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)
    monkeypatch.setattr(engine, "TICK", 1000)
    p = serq_frontend.compile(source="stage s : delay;\nworkload {\n    arrive renewal(max(1e-20, 1.5 - now));\n}\n"
                                     "session { run s (1); }\nrun { horizon 10; }\n")
    with pytest.raises(SimError) as e:
        serq_sim.run(p, max_events=20_000)
    first, quoted, caret = str(e.value).split("\n")  # with the line and a caret under `arrive`, as a file's
    assert first.startswith("<source>:3:5: error: at t=1.5: no progress: more than 2000 events at one instant")
    assert first.endswith("the events due now: arrive renewal")
    assert (quoted, caret) == ("      arrive renewal(max(1e-20, 1.5 - now));", "      ^")


@pytest.mark.parametrize("form, col", [("poisson(2)", 12), ("renewal(~exp(1))", 12), ("closed(3)", 12),
                                       ("batch(3)", 12)])
def test_every_arrive_form_carries_its_span(form, col):
    """The frontend writes the span of `arrive` into each arrival form (the IR's other statements have
    theirs)."""
    p = serq_frontend.compile(source=f"stage d : delay;\nworkload {{ arrive {form}; }}\nsession {{ run d (1); }}\n")
    span = p.workload.arrive.span
    assert (span.line, span.col) == (2, col)


def test_an_ir_without_arrive_spans_still_loads():
    """An IR file written before the arrival forms had spans (no `span` in `arrive`) loads and is the same
    program; the closed workload's error then names no place, as before."""
    p = serq_frontend.compile(source=CLOSED)
    raw = msgspec.json.decode(serq_ir.encode(p))
    assert raw["workload"]["arrive"]["span"] == ["<source>", 3, 3]
    del raw["workload"]["arrive"]["span"]
    bare = serq_ir.decode(msgspec.json.encode(raw))
    assert bare.workload.arrive == N.Closed(n=1)
    assert serq_ir.strip_spans(bare) == serq_ir.strip_spans(p)
    with pytest.raises(SimError) as e:
        serq_sim.run(bare)
    assert str(e.value).startswith("error: at t=0, session 100100: no progress: the closed workload replaced ")
