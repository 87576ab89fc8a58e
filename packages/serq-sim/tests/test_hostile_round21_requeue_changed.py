"""A third party's preemption policy whose ``requeue`` changes after the policy was built (docs/hooks.md,
"When a plugin misbehaves"): it is read at every preemption, where the victim re-enters the queue, but
was checked only when the simulation was built, so a ``requeue`` turned ``'middle'`` (no place the
contract knows) was taken as ``'tail'`` without a word. A change to ``'head'`` or ``'tail'`` is the
policy's to make."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import PreemptionPolicy

pytestmark = pytest.mark.timeout(60)


class Turning(PreemptionPolicy):
    """The first candidate that is not the grower; ``requeue`` turned to ``then`` at its first preemption."""

    requeue = "tail"
    then = "tail"

    def victim(self, pool, grower):
        self.requeue = self.then
        others = [s for s, _slot in self.sim.preempt_candidates(pool) if s is not grower]
        return others[0] if others else None


class Plugin:
    def __init__(self, then: str):
        self.then = then

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        then = self.then

        def turning(sim, pool, node):
            policy = Turning(sim, pool, node)
            policy.then = then
            return policy

        register("turning", turning)


# session 0 holds 4 of a from 0, runs 2, grows by 4 at t=2; session 1 runs 1, holds 4 from t=1 and runs 10
# inside: at t=2, 4 + 4 + 4 > 10, so session 1 is preempted, waits for session 0's release at 3 and runs its
# 10 again: it ends at 13, session 0 at 3
PROGRAM = """pool a { cap 10; preempt @turning; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold a (4) { run d (2); grow a (4); run d (1); } }
  else { run d (1); hold a (4) { run d (10); } }
  observe t = now;
}
run { horizon 100; }
"""


def run(then: str):
    pm = get_plugin_manager(plugins=[Plugin(then)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


@pytest.mark.parametrize("then", ["head", "tail"])
def test_a_requeue_turned_to_head_or_tail_is_the_policys_to_make(then):
    r = run(then)
    assert r.pool("a").preemptions == 1
    assert r.observe("t").values.tolist() == [3.0, 13.0]


def test_a_requeue_turned_to_no_place_is_refused_at_the_preemption():
    with pytest.raises(PluginError) as e:
        run("middle")
    assert str(e.value).partition("\n")[0] == (
        f"error: plugin '{Plugin.__module__}.Plugin' failed in its preemption policy 'turning' (pool a): requeue is "
        "'middle', not 'head' or 'tail', at a preemption (at t=2, session 0)")
