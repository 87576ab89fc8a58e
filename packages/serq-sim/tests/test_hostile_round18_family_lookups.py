"""``report.stage(name)`` and ``report.pool(name)`` of a family of several members without an index is a
KeyError saying so; it gave the first member's figures, silently (``report.stage("e")`` of ``stage e[2]``
was ``e[0]``'s), while the language takes a family's name without an index nowhere but in a step family's
own expressions. A member's label (``report.stage("e[1]")``, as the report and its rows write it) is a
KeyError naming the call that finds it: it said "no stage e[1] (the program has: e[0], e[1])". A family
of one member is found by its name, as before.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

SRC = """pool kv[2] { cap 4; }
pool one[1] { cap 4; }
stage e[2] : fifo;
stage single : delay;
workload { arrive poisson(1); }
session { hold kv[serial % 2] (1), one (1) { run e[serial % 2] (0.1); run single (0.1); } end; }
run { horizon 20; seed 1; }
"""


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=SRC))


@pytest.mark.parametrize("call, said", [
    (lambda r: r.stage("e"), "stage e is a family of 2 members: name one by its index, stage('e', 0) … stage('e', 1)"),
    (lambda r: r.pool("kv"), "pool kv is a family of 2 members: name one by its index, pool('kv', 0) … pool('kv', 1)"),
    (lambda r: r.stage("e[1]"), "no stage named e[1]: e[1] is member 1 of the family e, stage('e', 1)"),
    (lambda r: r.pool("kv[0]"), "no pool named kv[0]: kv[0] is member 0 of the family kv, pool('kv', 0)"),
    (lambda r: r.stage("e[2]"), "no stage e[2] (the program has: e[0], e[1], single)"),
    (lambda r: r.stage("e", 2), "no stage e[2] (the program has: e[0], e[1], single)"),
])
def test_a_family_is_looked_up_by_member(report, call, said):
    with pytest.raises(KeyError) as info:
        call(report)
    assert info.value.args == (said,)


def test_members_and_singles_are_found(report):
    rows = report.result.stages
    assert report.stage("e", 0) is rows[0] and report.stage("e", 1) is rows[1]
    assert report.stage("single") is rows[2] and report.pool("one") is report.pool("one", 0)
    # the sessions alternate between the members by serial, then run single: both members served, and every
    # session through single went through one of them first
    e0, e1 = report.stage("e", 0).completions, report.stage("e", 1).completions
    assert e0 > 0 and e1 > 0 and abs(e0 - e1) <= 1 and e0 + e1 >= report.stage("single").completions
