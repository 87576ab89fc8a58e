"""A failure of a third party's stage's ``work()`` (or ``queue()``, ``busy()``) read by a session's ``choose``:
an exception of its own, or a value out of range (NaN), names the session with the time and notes the statement
that read it, besides the stage's declaration. It named the declaration and the time alone."""

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

# Session k runs d for 1 + k, then chooses by work(s[j]): session 0 reads at t=1, session 1 at t=2. The
# kind's observable fails from t=2 on: session 1's choose, at t=2.
SRC = """stage d : delay;
stage s[2] : @flaky;
workload { arrive batch(2); }
session {
  run d (1 + serial);
  choose j in 2 by (OBS(s[j]));
  run s[j] (1);
}
run { horizon 10; }
"""


class Flaky(StageKind):
    """Jobs served at once (no queue); its observables fail from t=2 on, as ``how`` says."""

    how = "raise"

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)

    def attach(self, job):
        self.acc()
        job.stage = self
        self.present += 1
        self.sim.at(self.sim.now + job.work, self._done, job)

    def detach(self, job):
        self.acc()
        job.stage = None
        self.present -= 1

    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def busy_level(self):
        return 0.0

    def _value(self):
        if self.sim.now < 2:
            return 0.0
        if self.how == "raise":
            raise ValueError("no reading")
        return float("nan")

    def work(self):
        return self._value()

    def queue(self):
        return self._value()


@pytest.mark.parametrize("obs", ["work", "queue"])
@pytest.mark.parametrize("how, said", [
    ("raise", "failed in Flaky._value during the run: ValueError: no reading at "),
    ("nan", "failed in its stage s[0]: {obs}() returned nan, not a number at least 0 (at t=2, session 1)"),
])
@pytest.mark.parametrize("tier", ["", "general"])
def test_a_failed_reading_names_the_session_and_the_statement(obs, how, said, tier, tmp_path, monkeypatch):
    kind = type("Flaky", (Flaky,), {"how": how})

    class Plugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("flaky", kind)

    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    pm = get_plugin_manager(plugins=[Plugin()])
    path = tmp_path / "P.sq"
    path.write_text(SRC.replace("OBS", obs))
    prog = serq_frontend.compile(path, pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(prog, pm=pm, seed=1)
    lines = str(e.value).splitlines()
    assert said.format(obs=obs) in lines[0]
    assert lines[0].endswith("(at t=2, session 1)")
    assert lines[2:] == [f"{path}:2:1: note: stage s[0] is declared here", "  stage s[2] : @flaky;", "  ^",
                         f"{path}:6:3: note: session 1 read it here", f"    choose j in 2 by ({obs}(s[j]));", "    ^"]
