"""A report's record tables are looked up by the report's one rule of a look-up by name
(serq_sim.report._named), as its observes, gauges and columns are: a name that is no str is a TypeError
naming what was given, one the program has not a KeyError naming it and the tables there are.
``report.records(["req"])`` was Python's "unhashable type: 'list'", and ``report.records(3)`` a KeyError,
as if 3 were a table's name misspelt. ``kind`` that is no str (``kind=3``) was a ValueError, the error
of a misspelt name; it is a TypeError, and either is raised before the table's arrays are made."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); record req { sent = t0; wait = now - t0; } end; }
run { horizon 10; warmup 0; seed 1; arrivals 3; }
"""


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=PROGRAM))


@pytest.mark.parametrize("call, kind, said", [
    (lambda r: r.records(["req"]), TypeError, "the name of a record table is a str, not list"),
    (lambda r: r.record_table(["req"]), TypeError, "the name of a record table is a str, not list"),
    (lambda r: r.records(3), TypeError, "the name of a record table is a str, not int"),
    (lambda r: r.record_table(b"req"), TypeError, "the name of a record table is a str, not bytes"),
    (lambda r: r.records("reqs"), KeyError, "no record table 'reqs' (the program has: req) (did you mean `req`?)"),
    (lambda r: r.records(kind=3), TypeError, "kind is a str (one of auto, pandas, polars, numpy), not int"),
    (lambda r: r.records(kind=["numpy"]), TypeError, "kind is a str (one of auto, pandas, polars, numpy), not list"),
    (lambda r: r.records(kind="xx"), ValueError, "kind 'xx': one of auto, pandas, polars, numpy"),
])
def test_a_table_is_looked_up_by_the_one_rule(report, call, kind, said):
    with pytest.raises(kind) as info:
        call(report)
    assert type(info.value) is kind and info.value.args == (said,)


def test_a_wrong_kind_is_refused_before_the_arrays_are_made(report):
    table = report.record_table("req")
    table._arrays = None  # (made at the first read; a refused kind makes none)
    with pytest.raises(TypeError):
        table.frame(3)
    assert table._arrays is None


def test_the_table_the_program_has_is_found(report):
    # three arrivals of a 0.5 s job each: every row's wait is at least the job's 0.5 s
    rows = report.records("req", kind="numpy")
    assert list(rows) == ["session", "turn", "time", "sent", "wait"]
    assert list(rows["session"]) == [0, 1, 2] and all(w >= 0.5 for w in rows["wait"])
    assert report.record_table() is report.record_table("req")
