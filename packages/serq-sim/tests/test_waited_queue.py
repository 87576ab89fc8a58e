"""``queue by (K…, waited)`` and ``(K…, -waited)``, the ``K`` reading only attributes and numbers, find the
head without reading every waiting session's key (serq_sim.pools.model.WaitedQueue): ``waited`` grows
alike for every waiting session, so their order within a group of equal ``K`` is their join order (the
last joined least, or the first with ``-waited``), up to the sessions whose ``waited`` is equal, which
the scan leaves to the first joined. The reports and samples are the scan's (``build.WAITED_GROUPS =
False``) byte for byte: ties of sessions joined at one instant, ties made by rounding (``now - joined``
at ``now`` = 10¹⁷), ``-waited``, ``waited`` alone, a NaN ``K`` (back to the scan), multi-pool holds, a
family, a step engine whose victims are re-queued at the tail or the head; the fast tier's queues (its
generated code, pools.model.WaitedQueue too) agree with both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from counting import count_key_reads
from serq_report.json import encode_json
from serq_sim import build as _build

REPO = Path(__file__).resolve().parents[3]

# an overloaded one-slot pool (rho 1.2): the queue grows to hundreds
OVERLOADED = """pool srv { cap 1; queue by (KEY); }
stage d : delay;
workload { arrive poisson(1.2); }
session {
  set prio = floor(~uniform(0, 3));
  set t0 = now;
  hold srv (1) { run d (~exp(1)); }
  observe resp = now - t0;
}
run { horizon 1e12; arrivals 1500; seed 5; }
"""
# sessions joining at one instant (a batch; holds of no time admit a chain at t=0), then in bursts
TIES = """pool srv { cap 2; queue by (KEY); }
stage d : delay;
workload { arrive batch(300); }
session {
  set prio = serial % 2;
  set t0 = now;
  run d (floor(serial / 50));
  hold srv (1) { branch (serial % 7 == 0) { run d (0.5); } observe x = serial; }
  observe resp = now - t0;
}
run { horizon 1e9; seed 2; }
"""
# joined at t in 1..200, admitted near 10^17 (the first holder keeps the slot until then): now - joined
# rounds to multiples of 16, so sessions that joined at different times tie on waited
ROUNDING = """pool srv { cap 1; queue by (KEY); }
stage d : delay;
workload { arrive renewal(1); }
session {
  set prio = serial % 2;
  set t0 = now;
  hold srv (1) { run d (~exp(1) * 3e16); }
  observe resp = serial;
}
run { horizon 1e19; arrivals 200; seed 1; }
"""
# a NaN K for session 40: from its join the queue is scanned again
NAN = """pool srv { cap 1; queue by (KEY); }
stage d : delay;
workload { arrive poisson(1.3); }
session {
  set prio = serial == 40 ? inf - inf : floor(~uniform(0, 3));
  hold srv (1) { run d (~exp(1)); }
  observe resp = serial;
}
run { horizon 1e12; arrivals 400; seed 3; }
"""
# a hold over two pools (it waits at the first), a family of pools named by a computed index
MULTI = """pool a[2] { cap 2; queue by (KEY); }
pool b { cap 3; }
stage d : delay;
workload { arrive poisson(3); }
session {
  set prio = floor(~uniform(0, 2));
  hold a[serial % 2] (1), b (1) { run d (~exp(1)); }
  observe resp = serial;
}
run { horizon 1e12; arrivals 600; seed 7; }
"""

KEYS = ["prio, waited", "prio, -waited", "waited", "-waited", "prio, serial % 5, waited"]


def _run(prog, monkeypatch, groups: bool, tier: str = "general", **kw) -> tuple[bytes, list]:
    monkeypatch.setattr(_build, "WAITED_GROUPS", groups)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(prog, **kw)
    samples = [(list(r.observe(o.name).values), list(r.observe(o.name).sessions)) for o in prog.observes]
    return encode_json(r), samples


def _same(prog, monkeypatch, fast: bool = True, **kw) -> bytes:
    new = _run(prog, monkeypatch, True, **kw)
    assert new == _run(prog, monkeypatch, False, **kw)
    if fast:  # the fast tier's queues, its own generated code: with the groups and with its scan
        assert new == _run(prog, monkeypatch, True, "", **kw)
        assert new == _run(prog, monkeypatch, False, "", **kw)
    return new[0]


CASES = [(name, src, key) for name, src in [("overloaded", OVERLOADED), ("ties", TIES), ("rounding", ROUNDING),
                                            ("nan", NAN), ("multi", MULTI)]
         for key in KEYS if name != "nan" or "prio" in key]  # (the NaN is in prio)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name, src, key", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_the_head_is_the_scans(monkeypatch, name, src, key):
    prog = serq_frontend.compile(source=src.replace("KEY", key))
    out = json.loads(_same(prog, monkeypatch))
    assert out["pools"][0]["wait"] > 0, out["pools"][0]  # sessions did wait


@pytest.mark.timeout(60)
def test_ties_by_rounding_are_met(monkeypatch):
    # at now near 3·10¹⁶ and beyond, now - joined for joined in 1..200 rounds to a multiple of 4 or more:
    # several sessions of one group tie on waited, and the head is the first of them, not the last
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    monkeypatch.setattr(_build, "WAITED_GROUPS", True)
    prog = serq_frontend.compile(source=ROUNDING.replace("KEY", "prio, waited"))
    sim = Simulation(prog, registries())
    q = sim.pools[0].queue
    ties = [0]
    head = type(q).head

    def counted(self, now):
        s = head(self, now)
        if s is not None:
            g = self.groups[self.order[0]]
            ties[0] += s is not g[-1] and now - s.pending.queued_at == now - g[-1].pending.queued_at
        return s

    monkeypatch.setattr(type(q), "head", counted)
    sim.run()
    assert ties[0] > 10


@pytest.mark.timeout(60)
def test_a_preemption_heavy_vllm_program_agrees(tmp_path, monkeypatch):
    # 800 KV blocks: LIFO victims re-queued at the head (before the queue), the rest at the tail
    name = "vllm_single_turn.sq"
    line = "pool reqs { cap max_seqs; admit via engine; }"
    text = (REPO / "examples" / "multi-turn" / name).read_text()
    assert line in text
    text = text.replace(line, line.replace("admit via engine;", "admit via engine; queue by (t0 > 20, waited);"))
    path = tmp_path / name
    path.write_text(text)
    prog = serq_frontend.compile(str(path), sets={"blocks": 800})
    out = json.loads(_same(prog, monkeypatch, fast=False, arrivals=300, horizon=1e9, warmup=0.0))
    kv = next(p for p in out["pools"] if p["name"] == "kv")
    reqs = next(p for p in out["pools"] if p["name"] == "reqs")
    assert kv["preemptions"] > 20 and reqs["queue"] > 1


@pytest.mark.timeout(60)
def test_the_head_is_found_without_reading_every_key(monkeypatch):
    # 2 000 sessions wait at t=0 for a one-slot pool whose holds take no time: the scan read the keys of
    # every waiting session at every admission (4 001 997); now each K once, when it is grouped
    calls = count_key_reads(monkeypatch)

    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    src = """pool p { cap 1; queue by (prio, waited); }
stage d : delay;
workload { arrive batch(2000); }
session { set prio = serial % 3; hold p (1) { branch (serial == 0) { run d (1); } observe x = now; } }
run { horizon 100; }
"""
    r = serq_sim.run(serq_frontend.compile(source=src))
    assert r.result.pools[0].admissions == 2000
    # (and the keys of the last few, at most 4 waiting, which are scanned: model._SHORT)
    assert calls[0] < 2100, calls[0]


@pytest.mark.timeout(60)
def test_the_fast_tier_finds_the_head_in_its_groups_too(monkeypatch):
    # its generated code joins the groups and asks them for the head, the scan kept for a NaN K
    from serq_sim import fast
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    monkeypatch.setattr(_build, "WAITED_GROUPS", True)
    prog = serq_frontend.compile(source=OVERLOADED.replace("KEY", "prio, waited"))
    src = fast.build(Simulation(prog, registries()), False)[1]
    assert "g0_q.join(A, (A[" in src and "A = _q.head(now)" in src
