"""The kept preemption order and a NaN key of a job that has left. On a step stage's memory pool, `preempt by`
keys that read nothing moving are kept in an order of the residents (serq_sim.orders.keys_order), read once a
job, at its join; a NaN it meets there is noted, for the report's nan-key warning, by walking the candidates at
the next victim as the per-job reference does (PreemptByKeys._note_kept_nan). When the job whose key was NaN
left before any victim was asked for, the walk never met it, the NaN stayed pending, and every victim after it
walked the candidates: the kept order was undone for the rest of the run (20 walks of 21 victims below). A
pending NaN now keeps the jobs it was NaN for and is dropped once none is resident; the reports are as before,
the same on both tiers, with no nan-key warning (no victim was asked for while that job was resident).

The program: `arrive renewal(1)` starts session k at t = k + 1. Sessions 0 and 1 hold kv (cap 4) at once and
grow it a unit a token over 3 decodes, so the pool is short from the start and the order is built at the first
victim. Session 2 (key 0 * inf) thinks 4 s and then decodes one token; sessions 3 to 11 think 6 s first. That no
victim was asked for while session 2 was resident is what the reference says: its walk, at every victim, never
met the NaN (no nan-key on either tier)."""

from __future__ import annotations

import serq_frontend
from serq_sim.policies import preemption
from tiers import on_both_tiers

PROGRAM = """let A = inf;

pool kv { cap 4; block 1; preempt by (w * A); }
stage E : step { budget 10; cost 1; memory kv; }
stage think : delay;

workload { arrive renewal(1); }

session {
  set w = serial == 2 ? 0 : serial + 1;
  branch (serial == 2) {
    run think (4);
    hold kv (1) { run E decode (1) growing kv; }
  } else {
    branch (serial > 2) { run think (6); }
    hold kv (1) { run E decode (3) growing kv; }
  }
  observe done = now;
  end;
}

run { horizon 60; arrivals 12; }
"""


def test_a_nan_key_of_a_job_gone_before_any_victim_walks_nothing(monkeypatch):
    walks, victims = [0], [0]
    walked, victim = preemption.PreemptByKeys._walked, preemption.PreemptByKeys.victim

    def counted_walk(self, pool):
        walks[0] += 1
        return walked(self, pool)

    def counted_victim(self, pool, grower):
        victims[0] += 1
        return victim(self, pool, grower)

    monkeypatch.setattr(preemption.PreemptByKeys, "_walked", counted_walk)
    monkeypatch.setattr(preemption.PreemptByKeys, "victim", counted_victim)
    seen = {}

    def reset():
        walks[0] = victims[0] = 0

    def check(tier, sim):
        seen[tier] = (walks[0], victims[0], dict(sim.nan_keys))

    on_both_tiers(serq_frontend.compile(source=PROGRAM, sets={}, defs={}), check, reset)
    # the reference walks at every victim; the kept order at none (it walked at 20 of the 21)
    assert seen["general"][:2] == (21, 21)
    assert seen[""] == (0, 21, {})
    assert seen["general"][2] == {}



def test_the_pending_jobs_are_let_go_when_no_victim_comes():
    # sessions 2 to 199 all have the NaN key and each decodes one token after its think: none is preempted (the
    # pool is short only for sessions 0 and 1), so no walk lets their jobs go; the pending list is cut back to
    # the resident ones as it grows, not kept for every job of the run (198 before)
    src = PROGRAM.replace("serial == 2 ? 0", "serial >= 2 ? 0").replace("branch (serial == 2)", "branch (serial >= 2)")
    src = src.replace("arrivals 12", "arrivals 200").replace("horizon 60", "horizon 1000")
    seen = {}

    def check(tier, sim):
        (pool,) = sim.pools
        seen[tier] = (sum(len(jobs) for jobs in pool.preempt.kept_nan.values()), pool.preemptions, dict(sim.nan_keys))

    on_both_tiers(serq_frontend.compile(source=src, sets={}, defs={}), check)
    pending, preemptions, nan = seen[""]
    assert preemptions > 0 and nan == {} and seen["general"][1:] == (preemptions, {})
    assert pending <= 12  # (cut back once above twice the residents and 8)
