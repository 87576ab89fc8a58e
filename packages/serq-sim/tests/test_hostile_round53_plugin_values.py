"""A third party's stage kind that gives the engine what is no number where a number is its contract: its count
``present`` set to text or None, or ``sim.at(t, …)`` given a time of text or None (serq_sim.guards: checked_acc,
checked_at; docs/hooks.md, "When a plugin misbehaves").

The checks compared the value with a number, ``n >= 0`` and ``t >= sim.now``, and so raised Python's own
TypeError, ``'>=' not supported between instances of 'str' and 'int'``, which the run told as an exception of
the plugin's code at its ``attach``: the plugin was named, what it did wrong was not. Each is now said as the
contract's other breaches are. Both tiers."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

pytestmark = pytest.mark.timeout(60)


class Odd(StageKind):
    case = ""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        if self.case == "present of text":
            self.present = "x"
        elif self.case == "present of None":
            self.present = None
        elif self.case == "the clock set back":
            self.sim.now -= 5
        elif self.case == "the clock set to NaN":
            self.sim.now = float("nan")
        if self.case == "a time of text":
            self.sim.at("1", self.finish, job)
        elif self.case == "a time of None":
            self.sim.at(None, self.finish, job)
        else:
            self.sim.at(self.sim.now + 1, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)


class Plugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        def build(sim, node, member, flat):
            st = Odd(sim, node, member, flat)
            st.case = self.case
            return st

        register("odd", build)


#: sessions at t = 1 and 2 (a renewal's first arrival is one gap in): the second's attach calls acc() after the
#: first's set present to what it did
PROGRAM = """stage svc : @odd;
workload { arrive renewal(1); }
session { set t0 = now; run svc (1); observe t = now - t0; }
run { horizon 3; }
"""


def _message(case: str, monkeypatch) -> str:
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        pm = get_plugin_manager(plugins=[Plugin(case)])
        with pytest.raises(PluginError) as e:
            serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
        out.append(str(e.value))
    assert out[0] == out[1]
    head, _, rest = out[0].partition(".Plugin' ")
    assert head.startswith("error: plugin '"), out[0]
    return rest.splitlines()[0]


def test_the_kind_as_it_should_be(monkeypatch):
    # renewal(1): arrivals at 1 and 2, each a run of 1 at a stage that completes every job 1 after it arrives, at
    # 2 and 3 (the horizon)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    pm = get_plugin_manager(plugins=[Plugin("")])
    assert serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm).observe("t").values.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(("case", "shown"), [("present of text", "'x'"), ("present of None", "None")])
def test_a_count_present_that_is_no_number(case, shown, monkeypatch):
    assert _message(case, monkeypatch) == (
        f"failed in its stage svc: its count present is {shown}, not a number (the jobs at it: attach(job) counts "
        "a job in as 1, self.present += 1, and its completion or detach(job) out as 1) (at t=2)")


@pytest.mark.parametrize(("case", "shown"), [("a time of text", "'1'"), ("a time of None", "None")])
def test_a_time_that_is_no_number(case, shown, monkeypatch):
    what = _message(case, monkeypatch)
    assert what.startswith(f"failed in Odd.attach during the run: ContractError: sim.at({shown}, …): {shown} is "
                           "not a time (a number from now on) at "), what
    assert what.endswith(" (at t=1, session 0)"), what


@pytest.mark.parametrize(("case", "shown", "why"), [
    ("the clock set back", "-4.0", "the clock cannot go back"),
    ("the clock set to NaN", "nan", "NaN is no time"),
])
def test_a_clock_set_by_the_kind(case, shown, why, monkeypatch):
    # session 0 arrives at t = 1 and its attach sets the clock, then calls sim.at
    what = _message(case, monkeypatch)
    assert what.startswith(f"failed in Odd.attach during the run: ContractError: sim.now is {shown}, where the clock "
                           f"had reached t=1: {why} (a kind reads sim.now, it does not set it) at "), what
