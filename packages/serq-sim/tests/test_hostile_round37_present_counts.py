"""A third party's stage kind that counts its jobs in ``present`` by other than whole numbers (a job counted
in as 0.5, or inf) is refused where the count is integrated, as a count below 0 is: it was integrated as it
was, and the report's present (and so the stage's utilisation by Little's law, and what ``queue(s)`` reads)
was half the jobs there, without a word."""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

# two sessions at t=0, each one job of 1 s at the stage: present is 2 for 1 s of the 10, a mean of 0.2
PROGRAM = "stage s : @counted;\nworkload { arrive batch(2); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _plugin(step):
    class Counted(StageKind):
        """Every job served at once, for its work (a delay), counted in and out by ``step``."""

        def attach(self, job):
            self.acc()
            self.present += step
            job.stage = self
            job.started = self.sim.now
            self.sim.at(self.sim.now + job.work, self._done, job)

        def detach(self, job):
            self.acc()
            self.present -= step
            job.stage = None

        def _done(self, job):
            if job.stage is not self:
                return
            self.acc()
            self.present -= step
            job.stage = None
            self.sim.job_done(self, job)

    class CountedPlugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("counted", Counted)

    return CountedPlugin()


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("step", [1, 1.0, np.int64(1), True])
def test_a_whole_count_is_taken(monkeypatch, tier, step):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[_plugin(step)])
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
    (stage,) = [st for st in report.result.stages if st.name == "s"]
    assert stage.present == pytest.approx(0.2, rel=1e-12)


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("step, shown", [(0.5, "0.5"), (float("inf"), "inf"), (1.25, "1.25")])
def test_a_count_that_is_no_whole_number_is_refused(monkeypatch, tier, step, shown):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[_plugin(step)])
    program = serq_frontend.compile(source=PROGRAM, pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(program, pm=pm)
    lines = str(e.value).splitlines()
    # the first job's count is integrated by the second job's attach, at t=0
    assert lines[0].endswith(f"failed in its stage s: its count present is {shown}, not a whole number of jobs "
                             "(attach(job) counts a job in as 1, self.present += 1, and its completion or "
                             "detach(job) out as 1) (at t=0)"), lines
    assert lines[0].startswith("error: plugin '") and ".CountedPlugin' failed in its stage s: " in lines[0], lines
    assert lines[2] == "<source>:1:1: note: stage s is declared here", lines
