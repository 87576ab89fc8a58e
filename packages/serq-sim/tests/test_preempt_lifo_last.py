"""``preempt lifo`` finds its victim without the candidates' list (pools.growth.last_candidate):
at every preemption of programs built to preempt often, on an engine's memory pool and on a plain pool,
the victim is the one the list gives (``sim.preempt_candidates(pool)``, its last), and the outputs are
those of the list's path."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.engine import Simulation
from serq_sim.policies import preemption
from serq_sim.pools import growth

ROOT = Path(__file__).resolve().parents[3]

PLAIN = """
pool p { cap 10; preempt lifo; }
pool q { cap 10; }
stage d : delay;
workload { arrive poisson(1.5); }
session {
  hold p (3) {
    run d (~exp(1));
    hold q (1) { grow p (~uniform(0, 4)); run d (~exp(0.5)); }
    observe done = now;
  }
}
run { horizon 400; seed 3; }
"""


def _programs():
    single = serq_frontend.compile(str(ROOT / "bench" / "vllm_single.sq"), sets={"blocks": 600})
    import msgspec

    single = msgspec.structs.replace(single, run=msgspec.structs.replace(single.run, arrivals=300, horizon=1e9))
    return {"engine": single, "plain": serq_frontend.compile(source=PLAIN)}


PROGRAMS = _programs()
POOL = {"engine": "kv", "plain": "p"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_victim_is_the_lists_last(monkeypatch, name):
    calls = []
    orig = preemption.PreemptByKeys.victim

    def both(self, pool, grower):
        assert self.last is growth.last_candidate
        fast = growth.last_candidate(self.sim, pool)
        cands = self.sim.preempt_candidates(pool)
        listed = cands[-1][0] if cands else None
        assert fast is listed
        calls.append(fast is not None)
        return orig(self, pool, grower)

    monkeypatch.setattr(preemption.PreemptByKeys, "victim", both)
    r = serq_sim.run(PROGRAMS[name])
    assert sum(calls) >= 20, calls  # the programs preempt often
    monkeypatch.undo()
    fast = serq_sim.run(PROGRAMS[name])
    # and the outputs are the list path's, byte for byte
    monkeypatch.setattr(growth, "last_candidate", lambda sim, pool: False)
    ref = serq_sim.run(PROGRAMS[name])
    assert encode_json(fast) == encode_json(ref) == encode_json(r)
    assert fast.pool(POOL[name]).preemptions >= 20


def test_candidates_of_another_engine_are_asked_for(monkeypatch):
    # an engine whose candidates are not the built-in ones (here: the first admitted only) is asked
    seen = []

    def first_only(self, pool):
        cands = growth.preempt_candidates(self, pool)
        seen.append(len(cands))
        return cands[:1]

    monkeypatch.setattr(Simulation, "preempt_candidates", first_only)
    chosen = []
    orig = preemption.PreemptByKeys.victim

    def record(self, pool, grower):
        v = orig(self, pool, grower)
        chosen.append(v is self.sim.preempt_candidates(pool)[0][0])
        return v

    monkeypatch.setattr(preemption.PreemptByKeys, "victim", record)
    serq_sim.run(PROGRAMS["plain"])
    assert seen and chosen and all(chosen)
