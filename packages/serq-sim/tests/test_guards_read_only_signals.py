"""A third party's stage kind whose ``busy_level`` (or another signal) is a read-only property keeps the
engine's other guards: its count ``present`` is still checked where it is integrated, and its jobs still
noted. Every guard was left out for such a kind (the first signal that could not be replaced ended the
set-up of all of them), so a count below 0 was integrated as it was, without a word."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

# two sessions at t=0, each one job of 1 s at the stage
PROGRAM = "stage s : @counted;\nworkload { arrive batch(2); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _plugin(out: int):
    class Counted(StageKind):
        """Every job served at once for its work; a job done counts ``out`` out of ``present``."""

        @property
        def busy_level(self):  # read-only: the engine cannot put its checked call in its place
            return lambda: 0.0

        def attach(self, job):
            self.acc()
            self.present += 1
            job.stage = self
            job.started = self.sim.now
            self.sim.at(self.sim.now + job.work, self._done, job)

        def detach(self, job):
            self.acc()
            self.present -= 1
            job.stage = None

        def _done(self, job):
            if job.stage is not self:
                return
            self.acc()
            self.present -= out
            job.stage = None
            self.sim.job_done(self, job)

    class CountedPlugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("counted", Counted)

    return CountedPlugin()


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_count_below_0_is_refused_though_busy_level_is_read_only(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[_plugin(2)])
    program = serq_frontend.compile(source=PROGRAM, pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(program, pm=pm)
    first = str(e.value).splitlines()[0]
    # both jobs end at t=1, each counting 2 out: present 2 -> 0 -> -2, integrated at the next acc()
    assert "failed in its stage s: its count present is -2, not a number at least 0" in first, first


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_right_count_runs_with_a_read_only_busy_level(monkeypatch, tier):
    # present is 2 for 1 s of the 10: a mean of 0.2, and the read-only signal read as the kind gives it
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[_plugin(1)])
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
    (stage,) = [st for st in report.result.stages if st.name == "s"]
    assert stage.present == pytest.approx(0.2, rel=1e-12)
