"""SLO-aware admission, `queue by (waited > slo ? 1 : 0, -waited)` (a request that waited past its SLO goes behind
the others, the longest wait first), was read for every waiting session at every admission attempt: neither
kept queue took it (the threshold queue takes keys that read `waited` only compared with numbers, the groups
`(K…, -waited)` with K of attributes), so an overloaded vLLM engine's pool of 3 800 waiting requests took 17 s
where first come first served took 1.7 s; so did a let switching the keys (`mode == 0 ? 0 : …`), which the
linker keeps as a conditional unless its three parts are numbers. The queues are now built from the keys as
they choose the head (serq_sim.pools.model.kept_keys): a conditional on a number is the branch it takes, and a
last `-waited` (or `slo - waited`, the slack under one SLO) after other keys is left out, since a later session's `waited` is never more than an earlier
one's and the head is the first, in join order, of the least keys. The reports and samples are the scan's of
the keys as written, byte for byte, on both tiers (overloaded, sessions joined at one instant, a step engine
whose preempted requests are re-queued at the head), and the keys are read about once a session."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from counting import count_key_reads
from serq_report.json import encode_json
from serq_sim import build as _build
from serq_sim.pools import model

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[3]

OVERLOADED = """let mode = 1;
let slo = 4;
pool srv { cap 2; queue by (KEY); }
stage d : delay;
workload { arrive poisson(2.6); }
session {
  set prio = floor(~uniform(0, 3));
  set t0 = now;
  hold srv (1) { run d (~exp(1)); }
  observe resp = now - t0;
}
run { horizon 1e12; arrivals 1500; seed 5; }
"""
# sessions joining at one instant (a batch), then in bursts: ties in waited
TIES = """let mode = 1;
let slo = 4;
pool srv { cap 2; queue by (KEY); }
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

KEYS = ["waited > slo ? 1 : 0, -waited", "mode == 0 ? 0 : waited > slo ? 1 : 0, mode == 2 ? prio : -waited",
        "prio, -waited", "prio, waited >= slo, -waited, -waited", "mode == 1 ? prio : waited * 2, -waited",
        "slo - waited", "waited > slo ? 1 : 0, slo - waited", "prio, -waited - 3, 2 - waited, -waited + 1",
        "inf - waited", "prio, waited - slo"]


def scan(monkeypatch):
    """Build the queues from the keys as written, and scan them (the oracle)."""
    monkeypatch.setattr(model, "program_kept_keys", lambda p: p)
    monkeypatch.setattr(_build, "WAITED_GROUPS", False)
    monkeypatch.setattr(_build, "KEYS_AT_JOIN", False)


def outcome(prog, monkeypatch, tier: str, **kw):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(prog, **kw)
    samples = [(list(r.observe(o.name).values), list(r.observe(o.name).sessions)) for o in prog.observes]
    return encode_json(r), samples, r.tier


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("src", [OVERLOADED, TIES], ids=["overloaded", "ties"])
def test_the_head_is_the_scans_of_the_keys_as_written(monkeypatch, src, key, mode):
    prog = serq_frontend.compile(source=src.replace("KEY", key), sets={"mode": mode})
    new = {tier: outcome(prog, monkeypatch, tier) for tier in ("general", "")}
    assert new["general"][2] == "general" and new[""][2] == "fast"
    with monkeypatch.context() as m:
        scan(m)
        old = outcome(prog, m, "general")
    assert new["general"][:2] == new[""][:2] == old[:2]


def test_a_vllm_engine_with_an_slo_aware_queue_is_the_scans(monkeypatch, tmp_path):
    """Requests preempted and re-queued at the head, a let's switch, the step engine's admissions."""
    text = (ROOT / "examples" / "single-turn" / "vllm_bursts.sq").read_text()
    fifo = "pool reqs { cap max_seqs; admit via engine; }"
    assert fifo in text
    text = "let slo = 2;\nlet mode = 1;\n" + text.replace(
        fifo, "pool reqs { cap max_seqs; admit via engine; queue by (mode == 0 ? 0 : waited > slo ? 1 : 0, -waited); }")
    (tmp_path / "p.sq").write_text(text)
    prog = serq_frontend.compile(path=str(tmp_path / "p.sq"), sets={"peak": 12, "base": 4, "blocks": 1500})
    new = outcome(prog, monkeypatch, "general", horizon=120)
    with monkeypatch.context() as m:
        scan(m)
        old = outcome(prog, m, "general", horizon=120)
    assert new[:2] == old[:2]
    import json

    out = json.loads(new[0])
    kv = next(p for p in out["pools"] if p["name"] == "kv")
    reqs = next(p for p in out["pools"] if p["name"] == "reqs")
    assert kv["preemptions"] > 20 and reqs["queue"] > 50, (kv, reqs)


def test_which_keys_are_kept():
    def kept(text, **sets):
        prog = serq_frontend.compile(source=OVERLOADED.replace("KEY", text), sets=sets)
        return model.kept_keys(prog.pools[0].queue.keys), prog

    keys, prog = kept("waited > slo ? 1 : 0, -waited")
    assert len(keys) == 1 and model.waited_cuts(keys) == [4.0]
    keys, prog = kept("mode == 0 ? 0 : waited > slo ? 1 : 0, mode == 2 ? prio : -waited", mode=1)
    assert len(keys) == 1 and model.waited_cuts(keys) == [4.0]
    keys, prog = kept("mode == 0 ? 0 : waited > slo ? 1 : 0, mode == 2 ? prio : -waited", mode=2)
    assert len(keys) == 2 and model.waited_cuts(keys) == [4.0]  # (waited > slo ? 1 : 0, prio)
    keys, prog = kept("-waited")  # alone it stays (the groups' form, K of nothing)
    assert len(keys) == 1 and model.waited_last(keys) == -1
    keys, prog = kept("-waited, prio")  # not last: it orders
    assert len(keys) == 2
    keys, prog = kept("slo - waited")  # the slack under one SLO, alone: first come first served
    assert len(keys) == 1 and model.waited_last(keys) == -1
    keys, prog = kept("waited > slo ? 1 : 0, slo - waited, -waited + 1")
    assert len(keys) == 1 and model.waited_cuts(keys) == [4.0]
    keys, prog = kept("prio, waited - slo")  # rises with waited: it orders
    assert len(keys) == 2
    same = serq_frontend.compile(source=OVERLOADED.replace("KEY", "prio, serial"))
    assert model.program_kept_keys(same) is same


@pytest.mark.parametrize("tier", ["general", ""])
def test_the_keys_are_read_about_once_a_threshold_not_at_every_attempt(monkeypatch, tier):
    # 3 000 arrivals at twice what two slots serve: the queue grows to about 1 500, and the scan read every
    # waiting session's keys at every admission
    calls = count_key_reads(monkeypatch)

    src = """pool p { cap 2; queue by (waited > 5 ? 1 : 0, -waited); }
stage d : delay;
workload { arrive poisson(4); }
session { hold p (1) { run d (~exp(1)); } }
run { horizon inf; arrivals 3000; seed 1; }
"""
    prog = serq_frontend.compile(source=src)
    with monkeypatch.context() as m:
        scan(m)
        m.setenv("SERQ_SIM_TIER", "general")
        old = encode_json(serq_sim.run(prog))
    assert calls[0] > 1_000_000
    calls[0] = 0
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(prog)
    assert encode_json(r) == old
    assert r.result.pools[0].queue > 500
    if tier == "general":
        assert calls[0] < 3 * 3000, calls[0]
