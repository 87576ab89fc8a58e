"""A report's look-ups by name follow one rule (serq_sim.report._named): a name that is no str is a
TypeError, one the report has not a KeyError naming it and the names there are. ``report.stats("nope")``
and ``report.observe("y").buffer("nope")`` raised the bare ``KeyError('nope')``, and ``report.observe([1])``
``unhashable type: 'list'``."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 10; warmup 0; seed 1; arrivals 3; }
"""


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=PROGRAM))


@pytest.mark.parametrize("call, kind, said", [
    (lambda r: r.stats("nope"), KeyError, "no observe 'nope' (the program has: y)"),
    (lambda r: r.observe("nope"), KeyError, "no observe 'nope' (the program has: y)"),
    (lambda r: r.gauge("nope"), KeyError, "no gauge 'nope' (the program has: none)"),
    (lambda r: r.observe("y").buffer("nope"), KeyError,
     "no column 'nope' (the columns are: values, times, sessions, turns)"),
    (lambda r: r.observe([1]), TypeError, "the name of an observe is a str, not list"),
    (lambda r: r.stats(None), TypeError, "the name of an observe is a str, not NoneType"),
    (lambda r: r.observe("y").buffer(0), TypeError, "the name of a column is a str, not int"),
])
def test_a_look_up_by_name_is_one_message(report, call, kind, said):
    with pytest.raises(kind) as info:
        call(report)
    assert type(info.value) is kind and info.value.args == (said,)


def test_a_name_the_report_has_is_found(report):
    assert report.stats("y").count == len(report.observe("y")) == 3
    assert len(report.observe("y").buffer("values")) == 3
