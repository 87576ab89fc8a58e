"""A third party's share policy may give a flow no rate (docs/hooks.md: a rate is a number at least 0), and
the flows it gives none when no event is left wait for ever. The warning of those sessions said the stages
"will never complete them", naming neither the policy nor its plugin, as if the stages were at fault; it now
says that the plugin's share policy gives their flows no rate. Flows it serves, and serQ's own shares, are
told as before. Both simulator tiers."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)


class Plugin:
    @hookimpl
    def serq_sim_register_share_policies(self, register):
        def thin(flows, caps):
            # the flows whose every stage has a capacity of 4 get nothing; the others their bottleneck share
            count: dict[int, int] = {}
            for f in flows:
                for k in f:
                    count[k] = count.get(k, 0) + 1
            return [0.0 if all(caps[k] == 4 for k in f) else min(caps[k] / count[k] for k in f) for f in flows]

        register("thin", thin)


def program(share: str) -> str:
    return f"""stage a : ps(1);
stage b : ps(1);
stage c : ps(4);
stage d : ps(4);
share {share};
workload {{ arrive batch(2); }}
session {{
  set t0 = now;
  branch (serial == 0) {{ run a, b (1); }} else {{ run c, d (4); }}
  observe t = now - t0;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("tier", ["default", "general"])
def test_the_warning_names_the_share_policy_that_gives_a_flow_no_rate(monkeypatch, tier):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    pm = get_plugin_manager(plugins=[Plugin()])
    r = serq_sim.run(serq_frontend.compile(source=program("thin"), pm=pm), pm=pm)
    # session 0's flow at rate 1 (a's and b's 1 each, its alone): 1 unit of work by 1; session 1's never
    assert r.observe("t").values.tolist() == [1.0]
    plugin = f"{Plugin.__module__}.Plugin"
    stuck = [w for w in r.warnings if "for ever" in w]
    assert stuck == [
        "warning: 1 session waits for ever at the end of the run (no event is left that could wake them): 1 at stages "
        f"c, d, where the share policy 'thin' of the plugin {plugin} gives their flows no rate (session 1, in the "
        "run at <source>:9:49)"], r.warnings


@pytest.mark.parametrize("tier", ["default", "general"])
def test_serqs_own_share_never_starves_a_flow(monkeypatch, tier):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    r = serq_sim.run(serq_frontend.compile(source=program("maxmin")))
    # maxmin: session 0 at 1 (a and b), session 1 at 4 (c and d): both done at 1
    assert r.observe("t").values.tolist() == [1.0, 1.0]
    assert not [w for w in r.warnings if "for ever" in w], r.warnings
