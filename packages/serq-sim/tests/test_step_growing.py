"""The step engine's shortcuts on vLLM programs (lib/vllm.sq: KV blocks growing as tokens are computed,
prefix hits, preemption, chunk caps, serving orders) give what the per-job planning gives: the same JSON
report byte for byte and the same observe samples, SERQ_SIM_TIER=general (the per-job reference) being the
truth. Each case also proves the shortcut it is about was taken, so a test cannot pass by never taking it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import serq_frontend
from serq_report.json import encode_json
from serq_sim.api import registries
from serq_sim.engine import Simulation
from serq_sim.step import StepStage

HERE = Path(__file__).resolve().parent
STRESS = HERE / "lazy" / "vllm_stress.sq"


def _sim(program, tier: str, **kw):
    old = os.environ.get("SERQ_SIM_TIER")
    os.environ["SERQ_SIM_TIER"] = tier
    try:
        sim = Simulation(program, registries(), seed=kw.get("seed"), horizon=kw.get("horizon"),
                         warmup=kw.get("warmup"), arrivals=kw.get("arrivals"), check_invariants=False,
                         progress=False, trace_path=None)
        try:
            r = sim.run()
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            return sim, ("error", type(e).__name__, str(e)), None
    finally:
        if old is None:
            del os.environ["SERQ_SIM_TIER"]
        else:
            os.environ["SERQ_SIM_TIER"] = old
    samples = {name: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
               for name, o in r.observes.items()}
    return sim, ("report", encode_json(r)), samples


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


@pytest.mark.parametrize("sets", [
    dict(), dict(blocks=60, rate=6), dict(blocks=40, rate=8, C=8), dict(B=37, C=5, blocks=100, rate=5),
    dict(B=63.5, blocks=80, rate=5), dict(B=512, max_seqs=64, blocks=300, rate=10, turns=3),
    dict(B=16, bs=1, blocks=500, rate=4), dict(B=2048, bs=16, blocks=30, rate=6, E_n=100),
    dict(kvcost=0, blocks=50, rate=6),
], ids=str)
def test_growing_requests_agree(sets):
    # preemption storms (small blocks), chunk caps, fractional budgets, prefix hits across turns
    sim = assert_same(compile_(**sets))
    if sets.get("blocks", 400) <= 100:
        assert sim.pools[1].preemptions > 0
    assert sim.pools[1].node.name == "kv"
