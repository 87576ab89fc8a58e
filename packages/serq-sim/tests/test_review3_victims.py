"""The preemption victim has one rule (language.txt §3: the candidates are the residents of the step stage
whose memory the pool is, else the pool's holders; the victim the least keys, ties to the most recently
admitted, ``lifo`` the most recently admitted: docs/simulator.md names ``pools.growth:preempt_candidates`` and
``policies.preemption:PreemptByKeys.victim``) and three shortcuts that answer it without the candidates'
list: ``growth.last_candidate`` (``lifo``), ``PreemptByKeys._kept_victim`` (keys a resident keeps, in the
order the stage keeps) and ``PreemptByKeys._engine_victim`` (keys reading neither ``admission`` nor
``position``). Both tiers take the shortcuts (``SERQ_SIM_TIER=general`` only turns ``_kept_victim`` off), so
the differential tests between the tiers cannot see the shortcuts drift from the rule: here every victim
asked for in random step-engine programs (two engines sharing their memory pool, sessions growing that pool
from outside the engines, leases, ``reserve held``, several policies) is also chosen by the rule itself, the
walk over ``preempt_candidates``, and the two must be the same session."""

from __future__ import annotations

import random

import pytest
import serq_frontend
import serq_sim
from serq_sim.policies import preemption

PROGRAM = """
pool kv {{ cap {cap}; block {blk}; preempt {pol}; {held} }}
pool reqs {{ cap {rc}; admit via E; }}
pool reqs2 {{ cap {rc}; admit via F; }}
stage E : step {{ budget {bud}; cost {cost}; memory kv; {serve} }}
stage F : step {{ budget 8; cost 0.7; memory kv; }}
stage d : delay;
workload {{ arrive {arr}; }}
session {{
  set P = {p} + serial % 3;
  branch (serial % {m} != 1) {{
    run d ({stag} * serial);
    hold reqs (1), kv ({u}) {{
      run E prefill (P - min(computed, P)) growing kv;
      run E decode ({o}) growing kv;
      observe t = now;
    }}
  }} else {{
    run d ({t0});
    hold reqs2 (1), kv ({u}) {{ run F prefill (P) growing kv; run F decode (6) growing kv; }}
    {outside}
  }}
}}
run {{ horizon 60; }}
"""

POLICIES = ["lifo", "by (-admission) requeue tail", "by (decoding, -admission)", "by (P)", "by (-P) requeue tail",
            "by (decoding)", "by (admission)", "by (P, -admission)"]


def program(i: int) -> str:
    r = random.Random(i)
    return PROGRAM.format(
        cap=r.choice([8, 12, 16, 24]), blk=r.choice([1, 2, 4]), pol=POLICIES[i % len(POLICIES)],
        held=r.choice(["", "", "reserve held;"]), rc=r.choice([2, 4, 10]), bud=r.choice([2, 3, 8, 100]),
        cost=r.choice(["1", "0.5", "1 + tokens / 10"]),
        serve=r.choice(["", "", "serve by (remaining);", "serve by (-P);", "serve decode first;"]),
        arr=r.choice(["batch(5)", "batch(8)", "poisson(2)"]), m=r.choice([3, 4, 100]), p=r.choice([1, 3, 6]),
        stag=r.choice([0, 0.3, 1]), u=r.choice([1, 2, 4]), o=r.choice([5, 12]), t0=r.choice([0.5, 2.5]),
        outside=r.choice(["", "hold kv (1) { grow kv (3); run d (2); }",
                          "hold kv (2) { run d (1); } lease kv (3)"]))


@pytest.mark.parametrize("tier", ["", "general"])
def test_every_victim_a_shortcut_chooses_is_the_rules(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    victim = preemption.PreemptByKeys.victim
    asked = {"by rule": 0, "last": 0, "kept": 0, "engine": 0}

    def checked(self, pool, grower):
        got = victim(self, pool, grower)
        saved = self.last, self.kept, self.walk
        self.last, self.kept, self.walk = None, False, None  # the rule: the walk over preempt_candidates
        try:
            want = victim(self, pool, grower)
        finally:
            self.last, self.kept, self.walk = saved
        assert got is want, (self.node, got and got.serial, want and want.serial)
        last, kept, walk = saved
        engine = (self.keys is not None and not (self.r_adm or self.r_pos) and bool(pool.memory_of)
                  and walk is not None)
        asked["last" if last is not None else "kept" if kept else "engine" if engine else "by rule"] += 1
        return got

    monkeypatch.setattr(preemption.PreemptByKeys, "victim", checked)
    for i in range(48):
        serq_sim.run(serq_frontend.compile(source=program(i), sets={}, defs={}))
    # each shortcut answered victims (the test would pass by testing nothing otherwise): on the default tier
    # ``last`` and ``kept``, which leave the rest of these programs' policies nothing; on the general tier
    # ``last``, the engine's walk and the rule itself
    assert asked["last"] >= 100, asked
    if tier == "":
        assert asked["kept"] >= 100, asked
    else:
        assert asked["kept"] == 0 and asked["engine"] >= 50 and asked["by rule"] >= 50, asked
