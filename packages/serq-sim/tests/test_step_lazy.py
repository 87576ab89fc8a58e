"""Lazy decoding in the step engine (serq_sim.step: a decoder that grows nothing and has a whole number of
tokens left is not visited per iteration) gives what the per-job planning gives: the same JSON report byte
for byte and the same observe samples, with SERQ_SIM_TIER=general (the per-job reference) as the truth.
Each case also proves the lazy planning ran, so a test cannot pass by never taking it."""

from __future__ import annotations

import math
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
LAZY = HERE / "lazy"


def _run(program, tier: str, **kw):
    sim, outcome, samples = run_on_tier(program, tier, **kw)
    if samples is None:
        return outcome, None, 0
    lazy = sum(s.lazy_iterations for s in sim.stages if isinstance(s, StepStage))
    gaps = getattr(sim, "token_gaps", None)  # the output tokens' gaps (ITL), in order
    if gaps is not None:
        samples["(itl)"] = (gaps.values.tobytes(), gaps.weights.tobytes())
    return outcome, samples, lazy


def assert_same(program, **kw) -> int:
    """The two plannings agree; returns how many iterations the lazy one planned with lazy jobs."""
    ref, ref_samples, ref_lazy = _run(program, "general", **kw)
    got, got_samples, lazy = _run(program, "", **kw)
    assert ref_lazy == 0
    assert got == ref
    assert got_samples == ref_samples
    return lazy


def compile_(path, **sets):
    return serq_frontend.compile(str(path), sets={k: float(v) for k, v in sets.items()}, defs={})


def test_cb_benchmark_is_planned_lazily_and_agrees():
    prog = compile_(REPO / "bench" / "cb.sq")
    lazy = assert_same(prog, arrivals=600, horizon=2000.0)
    assert lazy > 5000  # most of its ~11 000 iterations


@pytest.mark.parametrize("sets", [
    dict(B=512, K=math.inf, frac=0), dict(B=512, K=64, frac=0), dict(B=100, K=33.5, frac=0), dict(B=37, K=math.inf, frac=0),
    dict(B=512, K=math.inf, frac=1), dict(B=100, K=64, frac=1), dict(B=37.5, K=math.inf, frac=0),
], ids=str)
def test_reserved_requests(sets):
    lazy = assert_same(compile_(LAZY / "reserve.sq", rate=1.0, c_it=0.01, **sets))
    if sets["B"] != int(sets["B"]) or sets["frac"]:
        assert lazy == 0  # a fractional budget, or fractional tokens to decode: planned per job
    elif sets["K"] == math.inf or sets["K"] == int(sets["K"]):
        assert lazy > 0


@pytest.mark.parametrize("sets", [dict(B=64, K=16), dict(B=20, K=math.inf), dict(B=7, K=3), dict(B=7.5, K=16),
                                  dict(B=8, K=math.inf, rate=6), dict(B=16, K=math.inf, rate=3)], ids=str)
def test_nested_holds_and_a_fractional_tail(sets):
    # at rate 3 and 6 a second turn's prefill ahead of lazy decoders often spends the budget: the lazy
    # planning must see that the last of them would go without its token (and plan per job)
    lazy = assert_same(compile_(LAZY / "nested.sq", **sets))
    assert (lazy > 0) == (sets["B"] == int(sets["B"]))


@pytest.mark.parametrize("sets", [dict(cap=240, rate=2), dict(cap=240, rate=4), dict(cap=400, rate=4),
                                  dict(cap=300, rate=3, frac=1), dict(cap=160, rate=6, B=8, K=math.inf),
                                  dict(cap=240, rate=3, B=16, K=math.inf)], ids=str)
def test_lazy_jobs_preempted_during_the_planning(sets):
    # with a small budget, the token a preempted lazy job gives back goes to the admitted session
    prog = compile_(LAZY / "preempted.sq", **sets)
    assert assert_same(prog) > 0
    os.environ["SERQ_SIM_TIER"] = ""
    try:
        sim = Simulation(prog, registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                         check_invariants=False, progress=False, trace_path=None)
        r = sim.run()
    finally:
        del os.environ["SERQ_SIM_TIER"]
    assert r.pool("kv").preemptions > 0
    # the bookkeeping of lazy jobs holds only lazy jobs (a preempted one leaves no empty entry behind)
    (eng,) = [st for st in sim.stages if isinstance(st, StepStage)]
    assert all(eng.due.values())
    assert sum(len(v) for v in eng.due.values()) == eng.nlazy == sum(1 for j in eng.residents if j.lz >= 0)


@pytest.mark.parametrize("sets", [dict(gap=3, B=24, think=4), dict(gap=2, B=8, think=2), dict(gap=5, B=24, think=1),
                                  dict(gap=1, B=6, think=3)], ids=str)
def test_ties_on_the_step_clock(sets):
    # arrivals, think times and the warm-up end at whole times, as iterations do: an iteration that ends
    # with another event at the same instant is ordered by the event queue, never completed ahead of it
    assert assert_same(compile_(LAZY / "stepclock.sq", **sets)) > 0


def test_with_invariants_checked():
    prog = compile_(LAZY / "preempted.sq", cap=240, rate=3)
    os.environ["SERQ_SIM_TIER"] = ""
    try:
        sim = Simulation(prog, registries(), seed=None, horizon=30.0, warmup=None, arrivals=None,
                         check_invariants=True, progress=False, trace_path=None)
        sim.run()
    finally:
        del os.environ["SERQ_SIM_TIER"]
    assert sum(s.lazy_iterations for s in sim.stages if isinstance(s, StepStage)) > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.sampled_from(["reserve", "nested", "preempted", "stepclock"]),
       budget=st.one_of(st.integers(1, 600), st.sampled_from([2.5, 63.5])),
       chunk=st.one_of(st.just(0), st.integers(1, 100), st.just(12.5)),
       rate=st.sampled_from([0.5, 2.0, 5.0, 10.0]),
       frac=st.sampled_from([0, 1]),
       seed=st.integers(0, 1000))
def test_random_settings_agree(program, budget, chunk, rate, frac, seed):
    sets = dict(B=budget, K=chunk) | (dict(gap=float(int(2 / rate) or 1)) if program == "stepclock" else dict(rate=rate))
    if program in ("reserve", "preempted"):
        sets["frac"] = frac
    if program == "preempted":
        sets["cap"] = 300
    assert_same(compile_(LAZY / f"{program}.sq", **sets), seed=seed, horizon=25.0)
