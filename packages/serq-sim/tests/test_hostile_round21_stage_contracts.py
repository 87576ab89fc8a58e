"""A third party's stage kind that keeps its jobs' books wrongly (docs/hooks.md, "When a plugin misbehaves"):
one PluginError naming the plugin, its line and the simulated time, not a report whose figures are wrong
without a word.

Before the checks (serq_sim.guards), each case ran to its end: a ``job.started`` set after now reported a
service of -5 and a wait of 6 at stage svc (the job arrives at 0 and completes at 1), one set to NaN a wait
and a service of NaN; ``sim.job_done(d, job)`` of a job that arrived at svc counted its completion at the
delay stage d, which never held it (svc: 0 completions, d: 2); and a count ``present`` taken below 0 was
integrated as it was, a mean present of -9.88 for a stage that held at most two jobs."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

pytestmark = pytest.mark.timeout(60)


class Books(StageKind):
    """One job at a time is no matter here: every job is served for 1 from its arrival; at its end the
    kind does what its case says, then completes it."""

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
        self.acc()
        self.present -= 1
        job.stage = None
        case = self.case
        if case == "a start after now":
            job.started = self.sim.now + 5
        elif case == "a start before the arrival":
            job.started = job.enqueued - 1
        elif case == "a start of NaN":
            job.started = float("nan")
        elif case == "a count below 0":
            self.present -= 5
        elif case == "completed at another stage":
            self.sim.job_done(self.sim.stages[1], job)  # stage d, the delay
            return
        elif case == "completed at no stage":
            self.sim.job_done(None, job)
            return
        else:
            job.started = self.sim.now - 1  # when its service began: its arrival
        self.sim.job_done(self, job)


class Plugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        case = self.case

        def books(sim, node, member, flat):
            stage = Books(sim, node, member, flat)
            stage.case = case
            return stage

        register("books", books)


PROGRAM = """stage svc : @books;
stage d : delay;
workload { arrive batch(2); }
session { set t0 = now; run svc (1); observe t = now - t0; }
run { horizon 100; }
"""

HEAD = f"error: plugin '{Plugin.__module__}.Plugin' "


def run(case: str):
    pm = get_plugin_manager(plugins=[Plugin(case)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def test_the_kind_as_it_should_be():
    # both jobs arrive at 0 and are served at once for 1: wait 0, service 1, two completions at svc, none at d;
    # present 2 over [0, 1] then 0 until the horizon 100: a mean of 2/100
    r = run("")
    assert r.observe("t").values.tolist() == [1.0, 1.0]
    svc, d = r.stage("svc"), r.stage("d")
    assert (svc.completions, svc.wait, svc.service) == (2, 0.0, 1.0)
    assert d.completions == 0
    assert svc.present == pytest.approx(0.02)


@pytest.mark.parametrize(("case", "what"), [
    ("a start after now", "sim.job_done(svc, job): job.started is 6.0, not a time from the job's arrival (t=0) to "
                          "now (t=1)"),
    ("a start before the arrival", "sim.job_done(svc, job): job.started is -1.0, not a time from the job's "
                                   "arrival (t=0) to now (t=1)"),
    ("a start of NaN", "sim.job_done(svc, job): job.started is nan, not a time from the job's arrival (t=0) to "
                       "now (t=1)"),
    ("completed at another stage", "sim.job_done(d, job): the job of session 0 is at stage svc, not at d: a job "
                                   "completes at the stage it arrived at"),
    ("completed at no stage", "sim.job_done(None, job): the job of session 0 is at stage svc, not at None: a job "
                              "completes at the stage it arrived at"),
])
def test_a_completion_booked_wrongly_is_the_plugins_mistake_at_its_line(case, what):
    with pytest.raises(PluginError) as e:
        run(case)
    head, _, hint = str(e.value).partition("\n")
    assert head.startswith(HEAD + "failed in Books.finish during the run: ContractError: " + what + " at "
                           + __file__ + ":"), head
    assert hint.startswith(
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"), hint


def test_a_count_below_0_is_refused_where_it_would_be_integrated():
    # both jobs are present from 0; the first one's end leaves the count at 2 - 1 - 5 = -4, and the second's,
    # at the same instant, calls acc() first and finds it there
    with pytest.raises(PluginError) as e:
        run("a count below 0")
    assert str(e.value).partition("\n")[0] == (
        HEAD + "failed in its stage svc: its count present is -4, not a number at least 0 (a job counted out of "
        "it twice, or never counted in) (at t=1)")


def test_a_built_in_stage_beside_a_plugins_completes_its_jobs_as_before():
    # the plugin's stage and a delay in one run: the delay's completions pass the same checks
    pm = get_plugin_manager(plugins=[Plugin("")])
    source = PROGRAM.replace("run svc (1);", "run svc (1); run d (2);")
    r = serq_sim.run(serq_frontend.compile(source=source, pm=pm), pm=pm)
    assert r.observe("t").values.tolist() == [3.0, 3.0]
    assert (r.stage("d").completions, r.stage("d").service) == (2, 2.0)


class Detaching(Books):
    """A kind that serves each job for its work, and completes the job it is told has left (detach(job): its
    session was preempted)."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.sim.at(self.sim.now + job.work, self.end, job)

    def end(self, job):
        if job.stage is self:  # (not once it has left)
            self.finish(job)

    def detach(self, job):
        super().detach(job)
        self.sim.job_done(self, job)


class DetachingPlugin:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("books", Detaching)


# session 1 holds 4 of a from t=1 and runs 10 on svc inside it; session 0 (holding 4 since 0) grows by 4 at
# t=2, which does not fit (4 + 4 + 4 > 10): the policy takes the greatest serial that holds a, session 1,
# and its run is detached from svc, never to complete
PREEMPTED = """pool a { cap 10; preempt by (-serial); }
stage svc : @books;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold a (4) { run svc (2); grow a (4); run svc (1); } }
  else { run svc (1); hold a (4) { run svc (10); } }
}
run { horizon 100; }
"""


def test_a_job_completed_once_it_has_left_the_stage_is_refused():
    # before the check its session, preempted, was counted a completion at svc and made ready as if its run
    # had ended (7 completions where the built-in delay gives 6)
    pm = get_plugin_manager(plugins=[DetachingPlugin()])
    with pytest.raises(PluginError) as e:
        serq_sim.run(serq_frontend.compile(source=PREEMPTED, pm=pm), pm=pm)
    assert str(e.value).partition("\n")[0].startswith(
        f"error: plugin '{DetachingPlugin.__module__}.DetachingPlugin' failed in Detaching.detach during the run: "
        "ContractError: sim.job_done(svc, job): the job of session 1 is not at svc: it has left the stage "
        f"(detach(job)), or never arrived there at {__file__}:")
