"""A plugin's stage kind can say which of its events will do nothing (StageKind.dead_event(callback, arg)),
so a run of no horizon ends at its drain, not at the completion of a job a preemption took off the kind's
stage. Before, only the first party's stages' stale events were known (engine.dead_event): a plugin kind's
completion scheduled for a job that left still ended the run at its time (docs/simulator.md said so). The
kind counts such an event in ``sim.dead_timers`` (the trigger) and answers ``True`` for it; the engine checks
every event left by it before it ends the run, so a kind that does not say keeps the old end (it runs to the
event) and one whose count is off ends no run early (docs/hooks.md, the stage-kind hook).

The program (test_conformance_round41's preempted-job case on a plugin's stage): s1 holds kv (2) from 0.5 and
runs f (10) (due at 10.5); at 1 s0 grows by 3: 3 + 3 > 4, lifo preempts s1 (its job leaves f, the completion
at 10.5 now does nothing); s1 is admitted again at 2 (s0 released) and runs f (1): done at 3. s0: d (1), grow,
d (1): done at 2. The run drains at 3."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

PROGRAM = """
pool kv { cap 4; preempt lifo; }
stage d : delay;
stage f : @own;
workload { arrive batch(2); }
session {
  set k = 0;
  branch (serial == 1) {
    run d (0.5);
    hold kv (2) { set k = k + 1; observe a = now; run f (k == 1 ? 10 : 1); }
  } else {
    hold kv (1) { run d (1); grow kv (3); observe g = now; run d (1); }
  }
  observe e = now;
}
run { horizon inf; }
"""


def _plugin(says: bool, count: bool = True):
    class Own(StageKind):
        """Every job served at once for its work (a delay stage of its own); with ``says``, a completion whose
        job left (detach) is counted dead and said to be."""

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
            if says and count:
                self.sim.dead_timers += 1

        def dead_event(self, callback, arg):
            if not says:
                return super().dead_event(callback, arg)
            return callback == self._done and arg.stage is not self

        def _done(self, job):
            if job.stage is not self:
                if says and count:
                    self.sim.dead_timers -= 1
                return
            self.acc()
            self.present -= 1
            job.stage = None
            self.sim.job_done(self, job)

    class OwnPlugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("own", Own)

    return OwnPlugin()


def _run(monkeypatch, tier, plugin):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[plugin])
    r = serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
    assert r.tier == "general"  # (a plugin's kind runs on the general engine whatever the tier asked)
    return r


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_kind_that_says_ends_the_run_at_its_drain(monkeypatch, tier):
    """end 3 (it was 10.5); mean live: s0 [0,2], s1 [0,3]: 5 / 3; f present 1 on [0.5,1] and [2,3]: 1.5 / 3."""
    r = _run(monkeypatch, tier, _plugin(True))
    res = r.result
    assert res.end == 3.0
    assert res.mean_live == pytest.approx(5 / 3, rel=1e-12)
    assert list(r.observes["e"].values) == [2.0, 3.0]
    assert list(r.observes["a"].values) == [0.5, 2.0]
    (f,) = [st for st in res.stages if st.name == "f"]
    assert (f.completions, f.present) == (1, pytest.approx(0.5, rel=1e-12))


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_kind_that_does_not_say_runs_to_its_event(monkeypatch, tier):
    """The base's answer (no event is dead): the run waits for the completion at 10.5, as before."""
    r = _run(monkeypatch, tier, _plugin(False))
    assert r.result.end == 10.5
    assert list(r.observes["e"].values) == [2.0, 3.0]


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_answer_is_the_rule_not_the_count(monkeypatch, tier):
    """A kind that says but never counts: the count is the trigger, so the engine does not look, and the run
    ends at 10.5 (nothing ended early); one that counts but whose count is too high ends none early either
    (test_conformance_round41's count set by hand)."""
    r = _run(monkeypatch, tier, _plugin(True, count=False))
    assert r.result.end == 10.5


def test_a_dead_event_of_the_wrong_shape_is_the_plugins_failure(monkeypatch):
    """``dead_event(self)`` cannot be called as the engine calls it: refused when the stage is built, naming
    the plugin and the method (as every method of the contract is), not a TypeError at the drain."""
    from serq.errors import PluginError

    class Bad(StageKind):
        def attach(self, job):
            self.acc()
            self.present += 1
            job.stage = self
            self.sim.at(self.sim.now + job.work, self._done, job)

        def dead_event(self):
            return False

        def _done(self, job):
            if job.stage is self:
                self.acc()
                self.present -= 1
                job.stage = None
                self.sim.job_done(self, job)

    class BadPlugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("own", Bad)

    pm = get_plugin_manager(plugins=[BadPlugin()])
    with pytest.raises(PluginError) as e:
        serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
    assert "Bad.dead_event" in str(e.value) and "dead_event(callback, arg)" in str(e.value), str(e.value)
