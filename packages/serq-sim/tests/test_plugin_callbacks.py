"""A stage kind's ``sim.at(t, callback, arg)`` whose callback cannot be called as the engine calls it,
``callback(arg)`` (not callable at all, or a method taking no argument besides ``self``), is the plugin's
mistake at the line of its ``sim.at`` (docs/hooks.md, "It asks the engine what cannot be"). Before, the
engine's own ``cb(arg)`` raised the TypeError when the event came due: no frame of the plugin's was on
the stack, so it was a traceback from serq_sim.engine, blaming serQ."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

HERE = __file__


class Later(StageKind):
    """Completes each job one time unit after it arrives, through the callback its case says."""

    case = "as it should be"

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        if self.case == "a callback that is not callable":
            self.sim.at(self.sim.now + 1, "finish", job)  # the line the message names
        elif self.case == "a callback that takes no argument":
            self.sim.at(self.sim.now + 1, self.tick, job)  # the line the message names
        else:
            self.sim.at(self.sim.now + 1, self.finish, job)

    def tick(self):
        pass

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)


def _line(text: str) -> int:
    with open(HERE) as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "# the line" in line)


def _run(case: str):
    kind = type("Later", (Later,), {"case": case})

    class Plugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("later", kind)

    pm = get_plugin_manager(plugins=[Plugin()])
    program = serq_frontend.compile(source="stage s : @later;\nworkload { arrive batch(2); }\n"
                                    "session { set t0 = now; run s (1); observe r = now - t0; }\n"
                                    "run { horizon 10; }\n", pm=pm)
    return serq_sim.run(program, pm=pm)


def test_the_kind_as_it_should_be():
    assert list(_run("as it should be").observe("r").values) == [1.0, 1.0]


@pytest.mark.parametrize(("case", "line", "why"), [
    ("a callback that is not callable", '"finish", job)', "'finish' is not callable"),
    ("a callback that takes no argument", "self.tick, job)", "cannot be called as callback(arg)"),
])
def test_a_callback_the_engine_cannot_call_is_the_plugins_mistake_at_its_line(case, line, why):
    with pytest.raises(PluginError) as e:
        _run(case)
    first = str(e.value).splitlines()[0]
    assert "failed in Later.attach during the run: ContractError: sim.at(1.0, …): the callback " in first, first
    assert why in first, first
    assert first.endswith(f"at {HERE}:{_line(line)} (at t=0, session 0)"), first
