"""``queue by`` keys that read ``waited`` only compared with numbers (an aging threshold: ``waited >= 3 ? 0 :
prio``, pool-reference.txt's lanes), the rest reading only attributes and numbers, find the head without
reading every waiting session's keys at every admission attempt (serq_sim.pools.model.ThresholdQueue): a
session's keys change only when its ``waited`` reaches or passes one of the numbers. The scan read every
waiting session's keys at every attempt, so an overloaded pool took time in proportion to the square of
its queue (32 000 arrivals at twice the capacity: 42 s of CPU on the fast tier, 96 s on the general
engine; 0.74 s and 1.33 s now). The reports and samples are the scan's (``build.WAITED_GROUPS = False``)
byte for byte, on both tiers: thresholds met exactly (waited an exact number at an admission), ``>`` and
``>=`` on either side, several thresholds, a NaN key (back to the scan), multi-pool holds and a family,
sessions joined at one instant, a step engine whose victims are re-queued at the head."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from counting import count_key_reads
from serq_ir import nodes as N
from serq_report.json import encode_json
from serq_sim import build as _build
from serq_sim.pools.model import waited_cuts

pytestmark = pytest.mark.timeout(60)

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
# arrivals at whole seconds, services of whole seconds: waited is a whole number at every admission, so
# the thresholds are met exactly (waited == 2 for `waited >= 2` and `waited > 2` alike)
EXACT = """pool srv { cap 2; queue by (KEY); }
stage d : delay;
workload { arrive renewal(1); }
session {
  set prio = serial % 3;
  set t0 = now;
  hold srv (1) { run d (1 + floor(~uniform(0, 3))); }
  observe resp = now - t0;
}
run { horizon 1e9; arrivals 800; seed 3; }
"""
# sessions joining at one instant (a batch), then in bursts
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
# a NaN key for session 40: from its first reading the queue is scanned again
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

KEYS = ["waited >= 2 ? 0 : prio + 1", "prio, waited > 2", "2 < waited ? -prio : prio, serial",
        "(waited >= 1) + (waited >= 4) * 2 - prio * 3", "waited <= 3 && prio > 0, -serial",
        "min(prio, waited < 1.5 ? 9 : 0), waited >= inf"]


def _run(prog, monkeypatch, fast_paths: bool, tier: str = "general", **kw) -> tuple[bytes, list]:
    monkeypatch.setattr(_build, "WAITED_GROUPS", fast_paths)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(prog, **kw)
    samples = [(list(r.observe(o.name).values), list(r.observe(o.name).sessions)) for o in prog.observes]
    return encode_json(r), samples


def _same(prog, monkeypatch, fast: bool = True, **kw) -> bytes:
    new = _run(prog, monkeypatch, True, **kw)
    assert new == _run(prog, monkeypatch, False, **kw)
    if fast:  # the fast tier's queues, its own generated code: with the threshold queue and with its scan
        assert new == _run(prog, monkeypatch, True, "", **kw)
        assert new == _run(prog, monkeypatch, False, "", **kw)
    return new[0]


CASES = [(name, src, key) for name, src in [("overloaded", OVERLOADED), ("exact", EXACT), ("ties", TIES),
                                            ("nan", NAN), ("multi", MULTI)]
         for key in KEYS if name != "nan" or "prio" in key]


@pytest.mark.parametrize("name, src, key", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_the_head_is_the_scans(monkeypatch, name, src, key):
    prog = serq_frontend.compile(source=src.replace("KEY", key))
    assert waited_cuts(prog.pools[0].queue.keys) is not None
    out = json.loads(_same(prog, monkeypatch))
    assert out["pools"][0]["wait"] > 0, out["pools"][0]  # sessions did wait


def test_which_keys_are_thresholds():
    def keys(text):
        return serq_frontend.compile(source=OVERLOADED.replace("KEY", text)).pools[0].queue.keys

    assert waited_cuts(keys("waited >= 3 ? 0 : prio, serial")) == [3.0]
    assert waited_cuts(keys("5 > waited, waited > 1, waited >= 5, waited < inf")) == [1.0, 5.0]
    # keys that do not read waited (KeyedQueue's), waited read otherwise, an observable or now: the scan (or
    # WaitedQueue's groups for (K…, waited))
    for text in ("prio, serial", "waited * 2 > 3", "waited == 2", "prio, waited", "waited > prio", "now > 3",
                 "waited > 1 ? queued(srv) : 0", "-waited < -2"):
        assert waited_cuts(keys(text)) is None, text
    # the spec's lanes (pool-reference.txt, queue by): a key of thresholds and attributes
    lanes = serq_frontend.compile(source="""pool p { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1
        : prompt <= 128 ? 2 : 3, serial); }
workload { arrive poisson(1); init { set immediate = 0; set prompt = 100; } }
session { hold p (1) { } }
""").pools[0].queue.keys
    assert waited_cuts(lanes) == [3.0]
    assert isinstance(lanes[0], N.Cond)


def test_a_step_engine_whose_victims_are_requeued_at_the_head_agrees(tmp_path, monkeypatch):
    # 800 KV blocks: LIFO victims re-queued at the head (before the queue), the rest by an aging threshold
    name = "vllm_single_turn.sq"
    line = "pool reqs { cap max_seqs; admit via engine; }"
    text = (REPO / "examples" / "multi-turn" / name).read_text()
    assert line in text
    text = text.replace(line, line.replace("admit via engine;",
                                           "admit via engine; queue by (waited >= 2 ? 0 : t0 > 20, t0);"))
    path = tmp_path / name
    path.write_text(text)
    prog = serq_frontend.compile(str(path), sets={"blocks": 800})
    out = json.loads(_same(prog, monkeypatch, fast=False, arrivals=300, horizon=1e9, warmup=0.0))
    kv = next(p for p in out["pools"] if p["name"] == "kv")
    reqs = next(p for p in out["pools"] if p["name"] == "reqs")
    assert kv["preemptions"] > 20 and reqs["queue"] > 1


@pytest.mark.parametrize("tier", ["general", ""])
def test_the_keys_are_read_about_once_a_threshold_not_at_every_attempt(monkeypatch, tier):
    # 3 000 arrivals at twice what two slots serve: the queue grows to about 1 500, and the scan read every
    # waiting session's keys at every admission (some 2.3 million readings); now each session's keys are
    # read when it is placed, when its waited passes the threshold 5, and a few times more while the queue
    # is short enough to scan
    calls = count_key_reads(monkeypatch)

    src = """pool p { cap 2; queue by (waited > 5 ? 0 : prio, serial); }
stage d : delay;
workload { arrive poisson(4); }
session { set prio = serial % 3; hold p (1) { run d (~exp(1)); } }
run { horizon inf; arrivals 3000; seed 1; }
"""
    prog = serq_frontend.compile(source=src)
    monkeypatch.setattr(_build, "WAITED_GROUPS", False)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    scan = encode_json(serq_sim.run(prog))
    scanned = calls[0]
    assert scanned > 1_000_000
    monkeypatch.setattr(_build, "WAITED_GROUPS", True)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    calls[0] = 0
    r = serq_sim.run(prog)
    assert encode_json(r) == scan
    assert r.result.pools[0].queue > 500
    if tier == "general":
        assert calls[0] < 3 * 3000, calls[0]


def test_the_fast_tier_asks_its_threshold_queue_for_the_head(monkeypatch):
    from serq_sim import fast
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    monkeypatch.setattr(_build, "WAITED_GROUPS", True)
    prog = serq_frontend.compile(source=OVERLOADED.replace("KEY", "waited >= 2 ? 0 : prio + 1"))
    src = fast.build(Simulation(prog, registries()), False)[1]
    assert "_G['_TQ'](_kq0, [2.0]" in src and "A = _q.head(now)" in src


def _random_key(rnd) -> str:
    """A key of thresholds on waited, attributes and numbers, drawn from a small grammar."""
    def cmp() -> str:
        c = rnd.choice(["0", "0.5", "1", "2", "2.5", "4", "inf"])
        op = rnd.choice(["<", "<=", ">", ">="])
        return f"(waited {op} {c})" if rnd.random() < 0.7 else f"({c} {op} waited)"

    def term(depth: int) -> str:
        r = rnd.random()
        if depth > 2 or r < 0.3:
            return rnd.choice(["prio", "serial % 4", "-prio", "1", cmp()])
        if r < 0.6:
            return f"({cmp()} ? {term(depth + 1)} : {term(depth + 1)})"
        if r < 0.8:
            return f"({term(depth + 1)} {rnd.choice(['+', '-', '*'])} {term(depth + 1)})"
        return f"({cmp()} {rnd.choice(['&&', '||'])} {term(depth + 1)})"

    keys = [term(0) for _ in range(rnd.randint(1, 3))]
    if not any("waited" in k for k in keys):
        keys[0] = f"({cmp()}) * 10 + {keys[0]}"
    return ", ".join(keys)


def test_random_threshold_keys_give_the_scans_head(monkeypatch):
    import random

    rnd = random.Random(9)
    src = """pool srv { cap 3; queue by (KEY); }
stage d : delay;
workload { arrive renewal(~det(0.5)); }
session {
  set prio = floor(~uniform(0, 3));
  hold srv (1 + (serial % 2)) { run d (floor(~uniform(1, 5)) / 2); }
  observe resp = serial;
}
run { horizon 1e9; arrivals 250; seed 4; }
"""
    for _ in range(12):
        key = _random_key(rnd)
        prog = serq_frontend.compile(source=src.replace("KEY", key))
        assert waited_cuts(prog.pools[0].queue.keys) is not None, key
        _same(prog, monkeypatch)
