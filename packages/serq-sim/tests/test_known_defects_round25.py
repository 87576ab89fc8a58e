"""Known defects of the simulator, round 25.

6. The note of a ``preempt by`` key's run-time error named the pool, the grower's session and the time, but not
   the grower's own statement (the ``grow`` or the growing run that asked for a victim), which every run-time
   error names: it names it now (serq_sim.pools.growth.grow_slot passes it to
   serq_sim.policies.preemption.chosen_for), on both tiers.
7. A third party's stage kind or policy that breaks its contract at run time gave its error without the note
   of the trace row the session replays (serq_sim.errors.replay_text now, the one text of that note).
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind
from tiers import same_error

pytestmark = pytest.mark.timeout(60)

# two sessions of prio 0 and 5 hold 4 each of 10; session 0 grows by 4 at t=1 at line 14 (12 > 10): the
# candidates' keys are evaluated, and session 1's, q[5] of a family of 2, fails
GROW = """pool kv { cap 10; preempt by (used(q[prio])); }
pool q[2] { cap 5; }
stage d : delay;
workload {
  arrive batch(2);
  init {
    set prio = serial * 5;
  }
}
session {
  hold kv (4) {
    run d (1 + serial);
    set x = 1;
      grow kv (4);
    run d (1);
  }
}
run { horizon 100; }
"""

# a step stage's memory pool: the residents' decodes (the run at line 12) grow the pool past its cap at t=6
STEP = """pool q[2] { cap 5; }
pool kv { cap 10; preempt by (member(q[prio])); }
stage e : step { budget 100; cost 1; memory kv; }
workload {
  arrive batch(2);
  init {
    set prio = serial * 5;
  }
}
session {
  hold kv (4) { run e prefill (4);
      run e decode (20) growing kv; }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("src, t, at", [(GROW, "1", "14:7"), (STEP, "6", "12:7")])
def test_the_keys_error_names_the_growers_statement(src, t, at, monkeypatch, tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(src)
    text = same_error(serq_frontend.compile(p), monkeypatch)
    assert text.splitlines()[-1] == (
        f"note: while choosing whom pool kv preempts for the growth of session 0 at t={t} by the statement at "
        f"{p}:{at} (its keys are evaluated for each candidate)")


# 7. A third party's stage kind or preemption policy that breaks its contract at run time (a job left without
#    its stage, a wrong completion, an exception at a job) gave a PluginError without the note of the trace row
#    the session replays, which every other run-time error of a trace session carries: the same one text now
#    (serq_sim.errors.replay_text), for the session of the job or of the growth at hand.

ROWS = "session,turn,new,out,think,forced\n" + "".join(f"{i},1,{10 + i},2,0,0\n" for i in range(5))

TRACED = """stage svc : @bad;
workload {
  arrive batch(2);
  trace "t.csv" ordered;
}
session {
  turn;
  run svc (1);
  end;
}
run { horizon 10; }
"""


class Bad(StageKind):
    """Serves each job for 1; the session's job ``case`` says how it breaks the contract."""

    case = ""

    def attach(self, job):
        if self.case == "raises" and job.owner.serial == 1:
            raise ValueError("no room")
        self.acc()
        self.present += 1
        if not (self.case == "no stage" and job.owner.serial == 1):
            job.stage = self
        self.sim.at(self.sim.now + 1, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        if job.stage is not self:
            return
        if self.case == "raises later" and job.owner.serial == 1:
            raise ValueError("worn out")
        self.acc()
        self.present -= 1
        job.stage = None
        job.started = self.sim.now + (5 if self.case == "late start" and job.owner.serial == 1 else -1)
        self.sim.job_done(self, job)


class BadPlugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        case = self.case

        def bad(sim, node, member, flat):
            stage = Bad(sim, node, member, flat)
            stage.case = case
            return stage

        register("bad", bad)


@pytest.mark.parametrize("case, said", [
    ("no stage", "attach(job) left job.stage None"),
    ("raises", "ValueError: no room"),
    ("late start", "sim.job_done(svc, job): job.started is 6.0"),
    ("raises later", "ValueError: worn out"),
])
def test_a_plugins_contract_error_names_the_trace_row(case, said, tmp_path):
    import serq_sim

    (tmp_path / "t.csv").write_text(ROWS)
    p = tmp_path / "p.sq"
    p.write_text(TRACED)
    pm = get_plugin_manager(plugins=[BadPlugin(case)])
    prog = serq_frontend.compile(p, pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(prog, pm=pm)
    text = str(e.value)
    assert said in text.splitlines()[0]
    # session 1 replays the trace's session 1, the row on line 3 (the header first)
    assert text.splitlines()[-3:] == [f"{tmp_path / 't.csv'}:3:1: note: session 1 replays the trace's session 1, "
                                      "turn 1: new 11, out 2, think 0, forced 0", "  1,1,11,2,0,0", "  ^"]
