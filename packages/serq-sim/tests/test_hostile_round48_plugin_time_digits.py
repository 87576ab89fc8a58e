"""A third party's stage kind whose times miss by one unit in the last place: the contract's message shows
the bounds by all their digits, so that what it refuses is seen to be outside them.

Before, the bounds were shown as %g shows them: a job.started one unit in the last place before the job's
arrival at 1/3 was told 'job.started is 0.33333333333333326, not a time from the job's arrival
(t=0.333333) to now (t=1.33333)', where 0.33333333333333326 reads as between the two; and sim.at of an
instant one unit before now 'an event before now (t=1.33333)' of a t that read as after it. (A start that
%g's figures show outside them is told with those figures, as before: test_hostile_round21_stage_contracts.)"""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

pytestmark = pytest.mark.timeout(60)


class Late(StageKind):
    """Every job served for 1 from its arrival; at its end, what its case says."""

    case = ""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.sim.at(self.sim.now + 1, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        if self.case == "an event one unit before now":
            self.sim.at(math.nextafter(self.sim.now, -math.inf), self.finish, job)
            return
        self.acc()
        self.present -= 1
        job.stage = None
        if self.case == "a start one unit before the arrival":
            job.started = math.nextafter(job.enqueued, -math.inf)
        elif self.case == "a start one unit after now":
            job.started = math.nextafter(self.sim.now, math.inf)
        else:
            job.started = job.enqueued
        self.sim.job_done(self, job)


class Plugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        case = self.case

        def late(sim, node, member, flat):
            stage = Late(sim, node, member, flat)
            stage.case = case
            return stage

        register("late", late)


# the job arrives at svc at 1/3 (the delay's), is served for 1 and ends at 1/3 + 1
PROGRAM = """stage d : delay;
stage svc : @late;
workload { arrive batch(1); }
session { run d (1 / 3); set t0 = now; run svc (1); observe t = now - t0; }
run { horizon 100; }
"""

ARRIVAL = 1 / 3
END = 1 / 3 + 1


def run(case: str):
    pm = get_plugin_manager(plugins=[Plugin(case)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def test_the_kind_as_it_should_be():
    # served from its arrival at 1/3 to 1/3 + 1: wait 0, service 1
    r = run("")
    svc = r.stage("svc")
    assert (svc.completions, svc.wait, svc.service) == (1, 0.0, END - ARRIVAL)
    assert r.observe("t").values.tolist() == [END - ARRIVAL]


@pytest.mark.parametrize(("case", "started"), [
    ("a start one unit before the arrival", math.nextafter(ARRIVAL, -math.inf)),
    ("a start one unit after now", math.nextafter(END, math.inf)),
])
def test_a_start_just_outside_is_told_with_the_digits_that_show_it(case, started):
    with pytest.raises(PluginError) as e:
        run(case)
    head = str(e.value).partition("\n")[0]
    said = (f"sim.job_done(svc, job): job.started is {started!r}, not a time from the job's arrival "
            f"(t={ARRIVAL!r}) to now (t={END!r})")
    assert said in head, head
    # the figures shown put the start outside them
    assert not ARRIVAL <= started <= END


def test_an_event_one_unit_before_now_is_told_with_now_by_all_its_digits():
    with pytest.raises(PluginError) as e:
        run("an event one unit before now")
    head = str(e.value).partition("\n")[0]
    before = math.nextafter(END, -math.inf)
    assert f"sim.at({before!r}, …): an event before now (t={END!r}): the clock cannot go back" in head, head
    assert before < END
