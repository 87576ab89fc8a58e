"""A third party's stage kind that starts its own work (``wants_start``) beside the stall check of step stages.

The settle's ``step_stages`` are every stage that starts work once an instant has settled: the step stages
and a plugin's kind that says ``wants_start``. step/stall.py read each one's ``iter`` and budget as a step
stage's, so every run with such a kind that ended with events left (an open workload) ended in a Python
traceback (AttributeError: '_Single' object has no attribute 'iter') in place of its report. Only a step
stage has a budget to bound; the plugin's kind is left alone, and a step stage beside it is judged as before.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq import hookimpl
from serq.plugins import get_plugin_manager
from slotted_kind import Slotted
from tiers import same_json

pytestmark = pytest.mark.timeout(60)


class _Plugin:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("single", Slotted)


PROGRAM = """stage s : @single;
STEP
workload {
  arrive renewal(2);
}
session {
  set t0 = now;
  run s (1);
  observe wait = now - t0 - 1;
  AFTER
}
run { horizon 10.5; }
"""


def report(src: str, monkeypatch) -> dict:
    """The JSON report on the default tier and on the general engine, which must be the same bytes."""
    pm = get_plugin_manager(plugins=[_Plugin()])
    prog = serq_frontend.compile(source=src, sets={}, defs={}, pm=pm)
    return same_json(prog, monkeypatch, pm=pm)


def test_a_plugins_starting_kind_under_open_arrivals_reports(monkeypatch):
    # D/D/1: arrivals at t = 2, 4, 6, 8, 10, each served at once for 1; the one of t = 10 is in service at 10.5
    r = report(PROGRAM.replace("STEP", "").replace("AFTER", ""), monkeypatch)
    assert (r["arrivals"], r["ended"]) == (5, 4)
    assert r["observes"]["wait"]["count"] == 4 and r["observes"]["wait"]["mean"] == 0.0
    assert not [n for n in r["notes"] if "wait for ever" in n]


def test_a_stalled_step_stage_beside_it_is_judged(monkeypatch):
    # after s, each session's prefill waits at E, whose budget is 0 once it has a resident: sessions 0 … 3
    # (through s at t = 3, 5, 7, 9) wait there for ever; session 4 is still in s at 10.5
    step = "stage E : step { budget residents > 0 ? 0 : 64; cost 1; }"
    r = report(PROGRAM.replace("STEP", step).replace("AFTER", "run E prefill (4);"), monkeypatch)
    assert (r["arrivals"], r["ended"]) == (5, 0)
    assert [n for n in r["notes"] if "wait for ever" in n] == [
        "warning: 4 sessions wait for ever at the end of the run (each waits at step stage E, whose budget "
        "cannot rise above 0 as jobs arrive, so no iteration ever starts): 4 at stage E, which will never "
        "complete them (sessions 0, 1, 2, 3, in the run at <source>:10:3)"]
