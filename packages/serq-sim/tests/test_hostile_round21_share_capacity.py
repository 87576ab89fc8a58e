"""A third party's share policy whose rates carry a stage beyond its capacity (docs/hooks.md, "When a plugin
misbehaves"; language.txt: a stage's utilisation under a share is "the capacity its flows carry, Σ rate /
φ").

Before the check (serq_sim.guards.guard_share), rates of 10 for the two runs over a ps(1) and a ps(2) served
stage a at 20 times its capacity (each run's 1 unit of work in 0.1, where no policy can do better than 2:
the two share a's 1), a numpy array of ones ran both at rate 1 (service 1), and rates of inf completed them
at once, without a word."""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

RATES = {
    "a's share each": lambda n: [0.5] * n,
    "ten each": lambda n: [10.0] * n,
    "ones from numpy": lambda n: np.ones(n, dtype=np.int64),
    "inf each": lambda n: [float("inf")] * n,
    "just over": lambda n: [0.5 + 1e-6] * n,
}


class Plugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_share_policies(self, register):
        rates = RATES[self.case]

        def share(flows, caps):
            return rates(len(flows))

        register("odd", share)


PROGRAM = """stage a : ps(1);
stage b : ps(2);
share odd;
workload { arrive batch(2); }
session { set t0 = now; run a, b (1); observe t = now - t0; }
run { horizon 100; }
"""


def run(case: str):
    pm = get_plugin_manager(plugins=[Plugin(case)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def test_rates_within_the_capacities_run():
    # both runs at 0.5 (a's 1 shared by two; b carries 1 of its 2): each 1 unit of work takes 2
    r = run("a's share each")
    assert r.observe("t").values.tolist() == [2.0, 2.0]
    # a's utilisation: 1 carried over [0, 2] of 100; b's: 1/2 over [0, 2]
    assert r.stage("a").utilisation == pytest.approx(0.02)
    assert r.stage("b").utilisation == pytest.approx(0.01)


@pytest.mark.parametrize(("case", "total"), [("ten each", "20"), ("ones from numpy", "2"), ("inf each", "inf"),
                                             ("just over", "1.000002")])
def test_rates_above_a_stages_capacity_are_refused(case, total):
    with pytest.raises(PluginError) as e:
        run(case)
    assert str(e.value).partition("\n")[0] == (
        f"error: plugin '{Plugin.__module__}.Plugin' failed in its share policy 'odd': its rates at stage a add up "
        f"to {total}, above the stage's capacity 1: the flows at a stage carry at most its capacity (at t=0)")
