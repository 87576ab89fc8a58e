"""A hold whose growing decode advanced its position only as a lazy decoder caches that position.

Release caches ``min(cache, computed, allocation)``, ``computed`` the position a growing run reached,
else the allocation (docs/simulator.md, "Pools"; ``HoldRT.grown`` says which). A decoder made lazy
before the planning served it (the step stage's lazy growers: a decode with room in its hold) had its
position brought up to date when it finished, was preempted or was planned again, without marking its
hold as advanced, so the release cached the whole allocation. ``hold kv (4) { prefill (3); decode (2)
growing kv; } cache (inf)`` (the prefill not growing: the decode alone advances the position, to 2)
cached 4 in the default tier and 2 under ``SERQ_SIM_TIER=general``, which plans every job.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

PROG = """pool kv {{ cap 16; block {block}; admit via e; }}
stage e : step {{ budget {budget}; cost 0.1; memory kv; }}
workload {{ arrive batch(1); }}
session {{
  hold kv (4) {{ {before} decode (2) growing kv; }} cache (inf)
  observe u = cachedin(kv);
}}
run {{ horizon 40; seed 1; }}
"""


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("before", ["prefill (3);", "run e decode (1);"])
@pytest.mark.parametrize("budget", [1, 100])
@pytest.mark.parametrize("block, cached", [(1, 2.0), (4, 0.0)])
def test_a_lazy_growers_hold_caches_its_position(monkeypatch, tier, before, budget, block, cached):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=PROG.format(block=block, budget=budget, before=before)))
    # the position the decode reached is 2 (the run before it grows nothing), under the allocation of 4:
    # 2 cached, rounded down to blocks (0 of block 4)
    assert list(r.observe("u").values) == [cached]
