"""A pool family whose members' caps differ (docs/language.md, "A family's members' caps"): `cap` reads
`member(kv)`, each member its own index, so a fleet of unlike GPUs is one family and the request records'
`engine` column counts its members from 0 across the fleet. Each member holds, admits and rejects against
its own cap, on both tiers alike (the fast tier runs such a family where its members' caps are of one kind,
finite or not); an IR file written before `caps` existed reads as it did."""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir
import serq_sim
from conform import pool_json, run
from serq_report.json import encode_json
from serq_sim import fast
from tiers import assert_same

pytestmark = pytest.mark.timeout(60)

#: four sessions at 0, even serials at m[0] (cap 2), odd ones at m[1] (cap 1), each holding one unit for one
#: second of a delay stage
FLEET = """
pool m[2] { cap CAP; }
stage d[2] : delay;
workload { arrive batch(4); }
session {
  set j = serial % 2;
  hold m[j] (1) { run d[j] (1); }
  observe done = now;
}
run { horizon 10; }
"""


def test_each_member_admits_against_its_own_cap_by_hand(monkeypatch):
    report, obs = run(FLEET.replace("CAP", "member(m) == 0 ? 2 : 1"), monkeypatch)
    # m[0] (cap 2) admits sessions 0 and 2 at once; m[1] (cap 1) admits 1, and 3 when 1 is done at 1
    assert obs["done"] == [(0, 1.0, 1.0), (1, 1.0, 1.0), (2, 1.0, 1.0), (3, 2.0, 2.0)]
    m0, m1 = pool_json(report, "m", 0), pool_json(report, "m", 1)
    assert (m0["admissions"], m1["admissions"]) == (2, 2)
    # the time averages over the run's [0, 10]: m[0] holds 2 units for 1 s, m[1] one unit for 2 s; one waits
    # 1 s at m[1]
    assert report.result.end == 10.0
    assert (m0["used"], m1["used"]) == (2 / 10, 2 / 10)
    assert (m0["wait"], m1["wait"]) == (0.0, 0.5)
    # the same family with one cap, 2, has no wait: the cap is the member's, not the first member's
    _, same = run(FLEET.replace("CAP", "2"), monkeypatch)
    assert [t for _, t, _ in same["done"]] == [1.0, 1.0, 1.0, 1.0]


def test_the_fleet_is_the_same_as_two_families_of_one_cap_each(monkeypatch):
    one = FLEET.replace("CAP", "member(m) == 0 ? 2 : 1")
    two = (FLEET.replace("pool m[2] { cap CAP; }", "pool a { cap 2; }\npool b { cap 1; }")
           .replace("hold m[j] (1) { run d[j] (1); }",
                    "branch (j == 0) { hold a (1) { run d[0] (1); } } else { hold b (1) { run d[1] (1); } }"))
    r1, o1 = run(one, monkeypatch)
    r2, o2 = run(two, monkeypatch)
    assert o1 == o2
    assert pool_json(r1, "m", 0) == pool_json(r2, "a") and pool_json(r1, "m", 1) == pool_json(r2, "b")


STEP = """
pool reqs[2] { cap 4; admit via engine; }
pool kv[2] { cap CAP; block 16; }
stage engine[2] : step { budget 64; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  set j = serial;
  hold reqs[j] (1), kv[j] (20) { prefill on engine[j] (10); decode on engine[j] (5); }
  observe done = now;
  record request { engine = member(engine[j]); }
}
run { horizon 100; }
"""


def test_a_step_fleet_of_unlike_memories_rejects_on_the_small_member_alone(monkeypatch):
    # 20 units are 2 blocks of 16: kv[0] (cap 32) holds them, kv[1] (cap 16, one block) never can, so
    # session 1 is rejected (the session ends) where session 0 runs
    report, obs = run(STEP.replace("CAP", "member(engine) == 0 ? 2 * 16 : 16"), monkeypatch)
    k0, k1 = pool_json(report, "kv", 0), pool_json(report, "kv", 1)
    assert (k0["admissions"], k0["rejections"]) == (1, 0)
    assert (k1["admissions"], k1["rejections"]) == (0, 1)
    assert [s for s, _, _ in obs["done"]] == [0]  # the rejected session ends there, before its observe
    assert report.records("request")["engine"].tolist() == [0]
    # with both members of 2 blocks, both run, one on each member, as the records' engine column says
    both, _ = run(STEP.replace("CAP", "2 * 16"), monkeypatch)
    assert sorted(both.records("request")["engine"].tolist()) == [0, 1]


OLD_IR = {  # an IR file as serq wrote it before `caps` (version 2, one cap a family)
    "version": 2,
    "pools": [{"name": "m", "size": 2, "array": True, "cap": 2.0}],
    "stages": [{"name": "d", "size": 2, "array": True, "kind": {"kind": "Delay"}}],
}


def test_an_ir_file_written_before_caps_reads_as_it_did(monkeypatch):
    source = FLEET.replace("CAP", "2")
    compiled = serq_frontend.compile(source=source, sets={}, defs={})
    data = json.loads(serq_ir.encode(compiled))
    assert "caps" not in data["pools"][0] and data["pools"][0]["cap"] == 2.0
    # the file without the program's other fields changed: what the old file said of its pools and stages
    assert {k: v for k, v in data["pools"][0].items() if k != "span"} == OLD_IR["pools"][0]
    assert {k: v for k, v in data["stages"][0].items() if k != "span"} == OLD_IR["stages"][0]
    old = serq_ir.decode(json.dumps({**data, "pools": OLD_IR["pools"], "stages": OLD_IR["stages"]}).encode())
    assert old.pools[0].caps is None
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert encode_json(serq_sim.run(old)) == encode_json(serq_sim.run(compiled))
    # a cap that reads the member but gives every member one value is the IR of that one cap
    same = serq_frontend.compile(source=FLEET.replace("CAP", "member(m) < 5 ? 2 : 7"), sets={}, defs={})
    assert serq_ir.strip_spans(same) == serq_ir.strip_spans(compiled)


def test_a_caps_list_round_trips_and_each_member_reads_its_own():
    p = serq_frontend.compile(source=FLEET.replace("CAP", "member(m) == 0 ? 2 : inf"), sets={}, defs={})
    assert p.pools[0].caps == [2.0, "inf"] and p.pools[0].cap == "inf"
    again = serq_ir.decode(serq_ir.encode(p))
    assert again == p
    sim = serq_sim.engine.Simulation(again, serq_sim.api.registries(), seed=1, horizon=10, warmup=None,
                                     arrivals=None, check_invariants=False, progress=False, trace_path=None)
    assert [pl.cap for pl in sim.pools] == [2.0, float("inf")]


@pytest.mark.parametrize("cap, body, on_fast", [
    ("member(m) == 0 ? 2 : 1", "hold m[j] (1) { run d[j] (1); }", True),
    # a fifo, waits at the small member, units read at the join, a rejection on one member alone, free()
    ("member(m) == 0 ? 3 : 1", "hold m[j] (1 + serial % 3) { run f (1); } observe fr = free(m[j]);", True),
    ("1 + member(m)", "hold m[serial % 2] (1), m2 (1) { run f (0.5); }", True),
    # a member without a cap beside one with: one kind of books each, so the general engine runs it
    ("member(m) == 0 ? inf : 1", "hold m[j] (1) { run d[j] (1); }", False),
])
def test_the_fast_tier_runs_a_family_of_unlike_caps_as_the_general_engine_does(monkeypatch, cap, body, on_fast):
    src = (FLEET.replace("CAP", cap).replace("hold m[j] (1) { run d[j] (1); }", body)
           .replace("stage d[2] : delay;", "stage d[2] : delay;\nstage f : fifo;\npool m2 { cap 2; }")
           .replace("batch(4)", "poisson(1.5)").replace("horizon 10", "horizon 60; seed 3"))
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    assert prog.pools[0].caps is not None
    assert (fast.exclusion(prog) is None) == on_fast, fast.exclusion(prog)
    report = assert_same(prog, monkeypatch, expect_fast=on_fast)
    assert report[0] == "report"
