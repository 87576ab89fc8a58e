"""``queue by`` keys that read only attributes and numbers are evaluated once, when a session joins the
queue (serq_sim.pools.model.KeyedQueue), instead of for every waiting session at every head lookup: the
cost of an admission no longer grows with the queue's length, and the results are those of the scan
(``build.KEYS_AT_JOIN = False``) byte for byte: static and dynamic keys, ties, NaN keys, preemption's
re-queue at the head, families."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim import build as _build
from serq_sim.api import registries
from serq_sim.engine import Simulation

REPO = Path(__file__).resolve().parents[3]

PRIO = """
pool server { cap 1; queue by (KEY); }
stage svc : delay;
workload { arrive batch(N); }
session {
  set prio = serial % 3;
  hold server (1) { run svc (1); }
  observe response = now;
}
run { horizon 1e9; warmup 0; seed 1; }
"""


def _evaluations(n: int, key: str, at_join: bool, monkeypatch) -> tuple[int, int]:
    """Key evaluations and admissions of ``n`` sessions queued at once at a one-slot pool."""
    monkeypatch.setattr(_build, "KEYS_AT_JOIN", at_join)
    prog = serq_frontend.compile(source=PRIO.replace("KEY", key).replace("N", str(n)), sets={}, defs={})
    sim = Simulation(prog, registries())
    pool = sim.pools[0]
    calls = [0]
    keyed = pool.keyed

    def counted(s, A, C):
        calls[0] += 1
        return keyed(s, A, C)

    pool.keyed = counted
    if hasattr(pool.queue, "keys"):  # (KeyedQueue's own: the same keys, not checked for NaN)
        join_keys = pool.queue.keys

        def counted_join(s, A, C):
            calls[0] += 1
            return join_keys(s, A, C)

        pool.queue.keys = counted_join
    r = sim.run()
    return calls[0], r.result.pools[0].admissions


def test_static_keys_are_evaluated_once_per_join(monkeypatch):
    # every session joins once: n evaluations, whatever the queue's length (n - 1 wait behind the first)
    for n in (50, 200, 800):
        assert _evaluations(n, "prio, serial", True, monkeypatch) == (n, n)
    # the scan evaluates every waiting session's key at every head lookup (several per admission: the
    # release, the end, the settles), so its count grows with the square of n: 4 times the sessions, about
    # 16 times the evaluations
    small, _ = _evaluations(50, "prio, serial", False, monkeypatch)
    large, _ = _evaluations(200, "prio, serial", False, monkeypatch)
    assert small > 20 * 50 and large > 12 * small


def test_keys_that_read_state_are_evaluated_at_every_lookup(monkeypatch):
    # now is read: the key may change while a session waits, so it is the scan's, at every lookup
    assert _evaluations(60, "prio + now * 0", True, monkeypatch) == _evaluations(60, "prio + now * 0", False,
                                                                                 monkeypatch)
    assert _evaluations(60, "prio + now * 0", True, monkeypatch)[0] > 20 * 60


def _report(prog, monkeypatch, at_join: bool, **kw) -> bytes:
    monkeypatch.setattr(_build, "KEYS_AT_JOIN", at_join)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    return encode_json(serq_sim.run(prog, **kw))


def _same(prog, monkeypatch, **kw) -> bytes:
    new = _report(prog, monkeypatch, True, **kw)
    old = _report(prog, monkeypatch, False, **kw)
    assert new == old
    return new


@pytest.mark.parametrize("key", ["prio, serial", "prio", "-prio", "sqrt(prio - 1)", "prio == 1 ? (prio - 1) / (prio - 1) : prio",
                                 "prio + waited", "now - prio"])
def test_keys_agree_with_the_scan(key, monkeypatch):
    src = """
pool server { cap 2; queue by (KEY); }
stage svc : delay;
workload { arrive poisson(2.2); }
session {
  set prio = floor(~uniform(0, 3));
  hold server (1) { run svc (~exp(1)); }
  observe response = now;
}
run { horizon 1000; warmup 100; seed 3; }
""".replace("KEY", key)
    _same(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch)


def _vllm(tmp_path, name: str, pool_line: str, sets: dict):
    text = (REPO / "examples" / "multi-turn" / name).read_text()
    assert pool_line in text
    text = text.replace(pool_line, pool_line.replace("admit via engine;", "admit via engine; queue by (t0);"))
    path = tmp_path / name
    path.write_text(text)
    return serq_frontend.compile(str(path), sets=sets, defs={})


def test_a_preemption_heavy_vllm_program_agrees(tmp_path, monkeypatch):
    # 800 KV blocks: the LIFO victims are re-queued at the head, before the sorted queue
    prog = _vllm(tmp_path, "vllm_single_turn.sq", "pool reqs { cap max_seqs; admit via engine; }",
                 {"blocks": 800})
    out = json.loads(_same(prog, monkeypatch, arrivals=400, horizon=1e9, warmup=0.0))
    kv = next(p for p in out["pools"] if p["name"] == "kv")
    reqs = next(p for p in out["pools"] if p["name"] == "reqs")
    assert kv["preemptions"] > 50 and reqs["queue"] > 1


def test_a_family_of_engines_agrees(tmp_path, monkeypatch):
    prog = _vllm(tmp_path, "vllm_replicas.sq", "pool reqs[N] { cap max_seqs; admit via engine; }",
                 {"blocks": 600})
    _same(prog, monkeypatch, horizon=120.0, warmup=0.0)


def test_a_nan_key_turns_the_queue_to_the_scan(monkeypatch):
    monkeypatch.setattr(_build, "KEYS_AT_JOIN", True)
    src = PRIO.replace("KEY", "sqrt(prio - 1)").replace("N", "30")
    sim = Simulation(serq_frontend.compile(source=src, sets={}, defs={}), registries())
    sim.run()
    assert sim.pools[0].keyed_at_join and sim.pools[0].queue.scan
