"""``Report.set_slo(slo)`` checks ``slo`` by ``serq run --slo``'s rules (serq_sim.metrics.check_slo), each
fault naming it: a TypeError for what is no mapping or no real number, a ValueError for a name that is no
SLO metric and a NaN or negative value. ``{"nope": 1}`` was the bare KeyError ``'nope'``, ``{"ttft": "1"}``
"'<=' not supported between instances of 'float' and 'str'", ``None`` an AttributeError of ``.items()``, and
``{"ttft": -1}`` or NaN a goodput of 0 with no word."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

# three requests, each 2 s from send to its first token and 3 s to its last (a delay stage of 2, then 1)
PROGRAM = """stage a : delay;
workload { arrive poisson(1); }
session {
  set t0 = now; run a (2); set f = now; run a (1);
  record req { sent = t0; first_token = f; last_token = now; output = 2; }
}
run { horizon 100; warmup 0; seed 1; arrivals 3; }
"""


@pytest.fixture(scope="module")
def report():
    return serq_sim.run(serq_frontend.compile(source=PROGRAM))


def test_the_goodput_counts_the_requests_within_the_slo(report):
    report.set_slo({"ttft": 2.5, "e2el": 3.5})
    assert report.result.requests.good == 3
    report.set_slo({"ttft": 1.5})
    assert report.result.requests.good == 0


@pytest.mark.parametrize("slo, kind, said", [
    ({"nope": 1}, ValueError, "slo: 'nope' is not a metric of an SLO (one of ttft, tpot, e2el)"),
    ({"ttft": "1"}, TypeError, "slo['ttft'] is a number of seconds, not '1'"),
    ({"ttft": True}, TypeError, "slo['ttft'] is a number of seconds, not True"),
    ({"ttft": -1}, ValueError, "slo['ttft']: an SLO is not negative"),
    ({"ttft": float("nan")}, ValueError, "slo['ttft']: NaN is not a number of seconds"),
    ({"ttft": 10**400}, ValueError, "slo['ttft']: an integer of 1329 bits is beyond the doubles"),
    (None, TypeError, "slo is a mapping of metric names to seconds ({'ttft': 1.0}), not NoneType"),
    ([("ttft", 1)], TypeError, "slo is a mapping of metric names to seconds ({'ttft': 1.0}), not list"),
])
def test_a_wrong_slo_is_said_naming_it(report, slo, kind, said):
    with pytest.raises(kind) as info:
        report.set_slo(slo)
    assert type(info.value) is kind and str(info.value) == said
