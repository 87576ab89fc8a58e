"""The step engine's shortcuts on vLLM programs (lib/vllm.sq: KV blocks growing as tokens are computed,
prefix hits, preemption, chunk caps, serving orders) give what the per-job planning gives: the same JSON
report byte for byte and the same observe samples, SERQ_SIM_TIER=general (the per-job reference) being the
truth. Each case also proves the shortcut it is about was taken, so a test cannot pass by never taking it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import serq_frontend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serq_sim.api import registries
from serq_sim.engine import Simulation
from serq_sim.step import StepStage
from tiers import run_on_tier

inf_ = float("inf")
HERE = Path(__file__).resolve().parent
STRESS = HERE / "lazy" / "vllm_stress.sq"


_sim = run_on_tier


def engines(sim) -> list[StepStage]:
    return [s for s in sim.stages if isinstance(s, StepStage)]


def assert_same(program, **kw):
    """The two plannings agree; returns the simulation that did not plan per job."""
    _ref_sim, ref, ref_samples = _sim(program, "general", **kw)
    sim, got, got_samples = _sim(program, "", **kw)
    assert ref[0] == "report"
    assert got == ref
    assert got_samples == ref_samples
    return sim


def compile_(path=STRESS, defs=None, **sets):
    return serq_frontend.compile(str(path), sets={k: float(v) for k, v in sets.items()}, defs=defs or {})


# ---------------------------------------------------------------- serve by keys that are admission order
@pytest.mark.parametrize("keys", ["admission", "1, admission, 2", "-admission", "decoding, admission",
                                  "remaining, admission", "admission, remaining"])
def test_serve_by_admission_is_not_sorted(keys, tmp_path):
    # serve by (admission) with numbers beside it orders the residents as they are kept: no keys to sort by
    # (the per-job reference still sorts); any other key is still evaluated
    path = tmp_path / "p.sq"
    path.write_text(STRESS.read_text().replace("serve by (serve_key());", f"serve by ({keys});"))
    prog = compile_(path, blocks=60, rate=6)
    sim = assert_same(prog)
    (eng,) = engines(sim)
    assert (eng.serve_keys is None) == (keys in ("admission", "1, admission, 2"))
    os.environ["SERQ_SIM_TIER"] = "general"
    try:
        ref = Simulation(prog, registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                         check_invariants=False, progress=False, trace_path=None)
    finally:
        del os.environ["SERQ_SIM_TIER"]
    assert engines(ref)[0].serve_keys is not None
    assert sim.pools[1].preemptions > 0


GROWING = [
    dict(), dict(blocks=60, rate=6), dict(blocks=40, rate=8, C=8), dict(B=37, C=5, blocks=100, rate=5),
    dict(B=63.5, blocks=80, rate=5), dict(B=512, max_seqs=64, blocks=300, rate=10, turns=3),
    dict(B=16, bs=1, blocks=500, rate=4), dict(B=2048, bs=16, blocks=30, rate=6, E_n=100),
    dict(kvcost=0, blocks=50, rate=6),
    # budgets below the decoders' count: a run of lazy decoders is cut short
    dict(B=5, max_seqs=16, rate=8), dict(B=3, bs=2, rate=6, blocks=200), dict(B=9, C=2, rate=10, blocks=70),
    dict(B=1, rate=2), dict(B=0, rate=1), dict(B=inf_, rate=4, blocks=90),
]


@pytest.mark.parametrize("sets", GROWING, ids=str)
def test_growing_requests_agree(sets):
    # preemption storms (small blocks), chunk caps, fractional budgets, prefix hits across turns, budgets
    # that cannot serve every decoder
    sim = assert_same(compile_(**sets))
    if sets.get("blocks", 400) <= 100 and sets.get("B", 64) > 0:
        assert sim.pools[1].preemptions > 0
    (eng,) = engines(sim)
    b = sets.get("B", 64)
    # the growing decoders were planned lazily unless the budget is fractional, nothing is served or every
    # token needs a block of its own
    whole = b == inf_ or (b == int(b) and b > 0)
    assert (eng.glazy_iterations > 0) == (whole and sets.get("bs", 4) > 1)


@pytest.mark.parametrize("change", [
    ("chunk long_prefill(reqs, C);", "chunk inf;"),                     # quiet rounds may be taken
    ("preempt lifo;", "preempt none;"),                                 # growers stall instead
    ("preempt lifo;", "preempt by (-admission) requeue tail;"),
    ("preempt lifo;", "preempt by (decoding, -admission);"),
    ("preempt lifo;", "preempt by (admission);"),                      # victims ahead of the grower
    ("preempt lifo;", "preempt by (-position);"),                       # reads positions: per job
    ("evict lru;", "evict by (-last);"),
    ("0.01 + 0.0002 * decoders", "0.01 + 0.0002 * residents + 0.00001 * kv_prefill + 0.0001 * tokens"),
], ids=lambda c: c[1])
@pytest.mark.parametrize("sets", [dict(blocks=50, rate=6), dict(B=7, rate=6, blocks=300), dict(B=4, blocks=25, rate=4, C=8),
                                  dict(B=256, max_seqs=32, rate=12, blocks=120, C=16)], ids=str)
def test_growing_variants_agree(change, sets, tmp_path):
    path = tmp_path / "p.sq"
    src = STRESS.read_text()
    assert change[0] in src
    path.write_text(src.replace(change[0], change[1]))
    sim = assert_same(compile_(path, **sets))
    (eng,) = engines(sim)
    assert (eng.glazy_iterations > 0) == ("position" not in change[1])


FAMILY = STRESS.read_text().replace("pool reqs {", "pool reqs[2] {").replace("pool kv {", "pool kv[2] {").replace(
    "stage engine : step", "stage engine[2] : step").replace(
    "vllm_request_at(reqs, kv, engine,", "vllm_request_at(reqs[j], kv[j], engine[j],").replace(
    "  set k = 0;", "  set k = 0;\n  set j = serial - 2 * floor(serial / 2);")


@pytest.mark.parametrize("sets", [dict(), dict(blocks=50, rate=8), dict(B=6, rate=8, C=3)], ids=str)
def test_a_family_of_engines_agrees(sets, tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(FAMILY)
    sim = assert_same(compile_(path, **sets))
    assert all(e.glazy_iterations > 0 for e in engines(sim)) and len(engines(sim)) == 2


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.one_of(st.integers(1, 300), st.just(12.5)), blocks=st.sampled_from([25, 40, 80, 400]),
       rate=st.sampled_from([2.0, 6.0, 12.0]), seqs=st.sampled_from([4, 16, 64]),
       chunk=st.sampled_from([1, 3, 16, inf_]), bs=st.sampled_from([1, 2, 4, 16]),
       preempt=st.sampled_from(["preempt lifo;", "preempt by (admission);", "preempt none;"]),
       seed=st.integers(0, 1000))
def test_random_settings_agree(budget, blocks, rate, seqs, chunk, bs, preempt, seed):
    prog = serq_frontend.compile(source=STRESS.read_text().replace("preempt lifo;", preempt),
                                 sets=dict(B=float(budget), blocks=float(blocks), rate=rate, max_seqs=float(seqs),
                                           C=float(chunk), bs=float(bs)), defs={})
    assert_same(prog, seed=seed, horizon=12.0)


@pytest.mark.parametrize("name,sets", [
    ("reserve.sq", dict(rate=1.0, c_it=0.01, B=512, K=64, frac=0)), ("reserve.sq", dict(rate=1.0, c_it=0.01, B=37, K=inf_, frac=0)),
    ("nested.sq", dict(B=64, K=16)), ("nested.sq", dict(B=8, K=inf_, rate=6)),
    ("preempted.sq", dict(cap=240, rate=4)), ("preempted.sq", dict(cap=160, rate=6, B=8, K=inf_)),
], ids=str)
def test_decoders_that_grow_nothing_with_a_cost_reading_kv(name, sets, tmp_path):
    # the cost reads kv_decode and kv_prefill: the lazy planning keeps their running total, also for
    # decoders that grow nothing (they finish lazily: their memory leaves the total then)
    src = (HERE / "lazy" / name).read_text()
    src = src.replace("stage engine : step { budget B; cost ", "stage engine : step { budget B; cost 0.0001 * kv_decode "
                      "+ 0.00003 * kv_prefill + ")
    assert "kv_decode" in src
    path = tmp_path / name
    path.write_text(src)
    sim = assert_same(compile_(path, **sets))
    (eng,) = engines(sim)
    assert eng.glazy_iterations > 0 and eng.cost_kv
