"""The cyclic collector during a run (serq_sim.api.collector_for_runs, docs/performance.md).

A run raises the collector's first threshold to RUN_GC_THRESHOLD while it is set up and runs, on both
tiers, and puts the thresholds back when it ends, however it ends. A threshold the caller set higher, or
0 (automatic collection off), is left as it is. The collector never changes what a run computes: the
report is the same bytes at CPython's default threshold.
"""

from __future__ import annotations

import gc

import pytest
import serq_frontend
import serq_report
import serq_sim
import serq_sim.api as api
from serq_sim import SimError
from serq_sim.engine import Simulation

pytestmark = pytest.mark.timeout(60)

# an overloaded queue (rho 1.2): the sessions it keeps waiting are what the young collections walked
MM1 = """pool server { cap 1; }
stage svc : delay;
workload { arrive poisson(1.2); }
session { set t0 = now; hold server (1) { run svc (~exp(1)); } observe response = now - t0; }
run { horizon 2000; seed 3; }
"""


@pytest.fixture
def thresholds():
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


def _seen(monkeypatch) -> list:
    seen = []
    init, run = Simulation.__init__, Simulation.run

    def init_(self, *a, **k):
        seen.append(("set-up", gc.get_threshold()))
        init(self, *a, **k)

    def run_(self):
        seen.append(("run", gc.get_threshold()))
        return run(self)

    monkeypatch.setattr(Simulation, "__init__", init_)
    monkeypatch.setattr(Simulation, "run", run_)
    return seen


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_run_raises_the_first_threshold_and_puts_it_back(monkeypatch, thresholds, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    gc.set_threshold(700, 10, 10)
    seen = _seen(monkeypatch)
    serq_sim.run(serq_frontend.compile(source=MM1))
    assert seen[0] == ("set-up", (api.RUN_GC_THRESHOLD, 10, 10))
    if tier == "general":
        assert seen[1] == ("run", (api.RUN_GC_THRESHOLD, 10, 10))
    assert gc.get_threshold() == (700, 10, 10)


def test_the_thresholds_come_back_after_a_failed_run(thresholds):
    gc.set_threshold(500, 7, 9)
    bad = serq_frontend.compile(source="stage s : delay;\nworkload { arrive poisson(1); }\n"
                                       "session { run s (now - 5); }\nrun { horizon 10; }\n")
    with pytest.raises(SimError):
        serq_sim.run(bad)
    assert gc.get_threshold() == (500, 7, 9)


@pytest.mark.parametrize("first", [0, 250_000])
def test_a_threshold_of_0_or_above_is_left_alone(monkeypatch, thresholds, first):
    gc.set_threshold(first, 10, 10)
    seen = _seen(monkeypatch)
    serq_sim.run(serq_frontend.compile(source=MM1))
    assert seen[0] == ("set-up", (first, 10, 10))
    assert gc.get_threshold() == (first, 10, 10)


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_collector_changes_nothing_a_run_computes(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    p = serq_frontend.compile(source=MM1)
    raised = serq_report.render(serq_sim.run(p), "json")
    monkeypatch.setattr(api, "RUN_GC_THRESHOLD", 1)  # below CPython's default: left as it is
    assert serq_report.render(serq_sim.run(p), "json") == raised


def test_runs_that_overlap_in_threads_put_back_what_was_there(thresholds):
    """Two runs in two threads whose spans overlap (A begins, B begins, A ends, B ends): the thresholds
    after both are those before the first; each putting back what it found left 100 000 behind."""
    import threading

    gc.set_threshold(700, 10, 10)
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with api.collector_for_runs():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def b():
        a_in.wait(10)
        with api.collector_for_runs():
            b_in.set()
            a_out.wait(10)
            seen["b after a"] = gc.get_threshold()

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert seen["b after a"] == (api.RUN_GC_THRESHOLD, 10, 10)  # still raised while b runs
    assert gc.get_threshold() == (700, 10, 10)


def test_a_compile_inside_a_run_shares_the_setting(thresholds):
    """A compile that begins and ends while a run is under way (serq.shared.COLLECTOR, one setting for
    both) leaves the threshold raised until the run ends, then the run puts back what there was before
    either: a setting of the compile's own put back 700 under the run."""
    gc.set_threshold(700, 10, 10)
    with api.collector_for_runs():
        program = serq_frontend.compile(source=MM1)
        assert gc.get_threshold() == (api.RUN_GC_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)
    assert program.run.horizon == 2000
