"""A third party's share policy that changes the lists it is given (serq_sim.guards.guard_share; docs/hooks.md,
"When a plugin misbehaves").

``policy(flows, caps)`` returns one rate per flow, checked against the capacities: the flows at a stage carry at
most its capacity. The check read the lists the policy had been handed, after the call: a policy that set every
``caps[k]`` to 100 and returned rates of 50 passed it, and served a ``ps(1)`` at 50 times its capacity, every
run of work 1 over in 0.02 where it takes at least 1, without a word; one that popped a flow and returned a rate
for each flow left was checked against the flows it had left. The policy is now given copies, and its rates are
checked against the engine's flows and capacities. Both tiers."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)


class Policy:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_share_policies(self, register):
        case = self.case

        def share(flows, caps):
            if case == "the capacities raised":
                for k in range(len(caps)):
                    caps[k] = 100.0
                return [50.0] * len(flows)
            if case == "a flow taken out":
                flows.pop()
                return [0.5] * len(flows)
            if case == "a stage taken out of a flow":
                del flows[0][:]
                return [0.75] * len(flows)
            # the even share: the least of each flow's stages' equal shares
            n: dict[int, int] = {}
            for f in flows:
                for k in f:
                    n[k] = n.get(k, 0) + 1
            return [min(caps[k] / n[k] for k in f) for f in flows]

        register("odd", share)


#: a run over both ps(1) stages at once: alone, its rate is 1 and its time its work, 1
PROGRAM = """share odd;
stage a : ps(1);
stage b : ps(1);
workload { arrive batch(2); }
session {
  set t0 = now;
  run a, b (1);
  observe r = now - t0;
}
run { horizon 100; }
"""


def _run(case: str, tier: str, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    pm = get_plugin_manager(plugins=[Policy(case)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def test_the_even_share_by_hand(monkeypatch):
    # two runs of work 1 over the same two stages of capacity 1: each at rate 1/2, both done at t = 2
    for tier in ("", "general"):
        assert _run("", tier, monkeypatch).observe("r").values.tolist() == [2.0, 2.0]


@pytest.mark.parametrize(("case", "what"), [
    ("the capacities raised", "its rates at stage a add up to 100, above the stage's capacity 1: the flows at a "
                              "stage carry at most its capacity (at t=0)"),
    ("a flow taken out", "it returned 1 rate(s) for 2 flow(s): one rate per flow (at t=0)"),
    # the flows' rates at a stage are summed over the flows as the engine has them: 0.75 twice at a and b
    ("a stage taken out of a flow", "its rates at stage a add up to 1.5, above the stage's capacity 1: the flows "
                                    "at a stage carry at most its capacity (at t=0)"),
])
def test_a_policy_that_changes_its_lists_is_checked_against_the_engines(case, what, monkeypatch):
    out = []
    for tier in ("", "general"):
        with pytest.raises(PluginError) as e:
            _run(case, tier, monkeypatch)
        out.append(str(e.value))
    assert out[0] == out[1]
    head, _, rest = out[0].partition(".Policy' failed in its share policy 'odd': ")
    assert head.startswith("error: plugin '"), out[0]
    assert rest.splitlines() == [what,
                                 "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), "
                                 "where this process registers it)",
                                 "<source>:1:1: note: share odd is declared here", "  share odd;", "  ^"]
