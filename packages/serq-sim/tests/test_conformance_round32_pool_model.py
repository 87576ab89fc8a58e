"""Conformance of language.txt §3's Configuration, Pools and Ties on random small programs of one pool,
against pool_model32.model, an independent model written from the spec's words: sessions of two holds each
(FIFO with head-of-line blocking, reserve, rejection when joining, the own prefix consumed and the rest left
dead, eviction in LRU order per entry or per block from the tail, caching min(ℓ, allocation) rounded down to
blocks), times on a grid of 0.5 so that events tie and the settle order decides. Every program runs on the
tier serQ picks and on the general engine (conform.run: the same JSON reports and samples); each session's
admission times, the prefix its second hold consumed and its end, and the pool's figures, are the model's.
And sessions that grow their hold on a pool of `preempt lifo` (pool_model32.model_grow): the victims, their
return to the head of the queue, the hold executed again, a grower beyond the cap executing it again and
again (language.txt §3), `stuck` from its second preemption.
"""

from __future__ import annotations

import random

import pool_model32 as pm
import pytest
from conform import pool_json, run

HORIZON = 40.0


@pytest.mark.parametrize("seed", range(20))
def test_a_random_pool_program_against_the_model(monkeypatch, seed):
    rng = random.Random(3200 + seed)
    for _ in range(3):
        cap, b, sessions = pm.draw(rng)
        src = pm.program(cap, b, sessions, HORIZON)
        want_obs, want = pm.model(cap, b, sessions, HORIZON)
        r, got = run(src, monkeypatch)
        for name, samples in want_obs.items():
            assert got.get(name, []) == samples, (name, src)
        m = pool_json(r, "m")
        assert {k: m[k] for k in want} == pytest.approx(want, rel=1e-9, abs=1e-12), src


def test_the_draws_reach_the_rules():
    """The programs drawn take the paths the model is about: over the 60 of the test, evictions, rejections,
    a consumed prefix, a wait in the queue and a block pool each occur in some."""
    seen = dict(evicted=0, rejected=0, consumed=0, waited=0, blocks=0)
    for seed in range(20):
        rng = random.Random(3200 + seed)
        for _ in range(3):
            cap, b, sessions = pm.draw(rng)
            obs, fig = pm.model(cap, b, sessions, HORIZON)
            seen["evicted"] += fig["evicted_units"] > 0
            seen["rejected"] += fig["rejections"] > 0
            seen["consumed"] += any(v > 0 for _s, _t, v in obs["k2"])
            seen["waited"] += any(t > sessions[s]["A"] for s, t, _v in obs["a1"])
            seen["blocks"] += b > 1
    assert all(n >= 5 for n in seen.values()), seen


@pytest.mark.parametrize("seed", range(20))
def test_a_random_growing_program_against_the_model(monkeypatch, seed):
    """pool_model32.model_grow: sessions that grow their hold on a pool of `preempt lifo`, victims the most
    recently admitted holders (the grower itself included), each back at the head of the queue to execute
    its hold again, a grower its own victim beyond the cap too (language.txt §3: it re-executes for as long
    as the run goes on), and the sessions preempted twice stuck."""
    rng = random.Random(3300 + seed)
    for _ in range(3):
        cap, b, sessions = pm.draw_grow(rng)
        src = pm.program_grow(cap, b, sessions, HORIZON)
        want_obs, want = pm.model_grow(cap, b, sessions, HORIZON)
        r, got = run(src, monkeypatch)
        for name, samples in want_obs.items():
            assert got.get(name, []) == samples, (name, src)
        m = pool_json(r, "m")
        assert {k: m[k] for k in want} == pytest.approx(want, rel=1e-9, abs=1e-12), src


def test_the_growing_draws_preempt_and_outgrow():
    """Over the 60 growing programs of the test, some preempt, some preempt more than once, some have a
    session stuck, and some have a grower whose hold alone outgrows the cap (it was rejected from 8066ccce;
    §3 re-executes it)."""
    seen = dict(preempted=0, twice=0, stuck=0, outgrown=0)
    for seed in range(20):
        rng = random.Random(3300 + seed)
        for _ in range(3):
            cap, b, sessions = pm.draw_grow(rng)
            _obs, fig = pm.model_grow(cap, b, sessions, HORIZON)
            seen["preempted"] += fig["preemptions"] > 0
            seen["twice"] += fig["preemptions"] > 1
            seen["stuck"] += fig["stuck"] > 0
            seen["outgrown"] += pm.outgrows(cap, b, sessions)
    assert all(n >= 5 for n in seen.values()), seen


@pytest.mark.parametrize("exact", [True, False], ids=["grid", "doubles"])
@pytest.mark.parametrize("seed", range(10))
def test_a_random_keyed_queue_against_the_scan(monkeypatch, seed, exact):
    """pool_model32.model_keys: `queue by` keys that read `waited` (aging thresholds, deadlines, orders of it
    alone or after a priority) read again at every attempt by a scan, ties in join order, the chosen head
    blocking the rest; on a grid of 0.5 (ties) and on doubles from clocks up to 3e9 (rounding), against the
    queues serQ keeps sorted for such keys (docs/simulator.md, Waiting selection)."""
    rng = random.Random(3400 + seed)
    for _ in range(4):
        cap, k, sessions = pm.draw_keys(rng, exact)
        src = pm.program_keys(cap, k, sessions, 4e9)
        _r, got = run(src, monkeypatch)
        assert got["a"] == pm.model_keys(cap, k, sessions, 4e9), src


@pytest.mark.parametrize("seed", range(20))
def test_a_random_pool_program_from_a_warmup(monkeypatch, seed):
    """pool_model32.model with a warm-up on the events' grid (so that admissions, evictions and samples fall
    on its instant): the time averages over [warmup, horizon], the events and samples at or after it."""
    rng = random.Random(3900 + seed)
    for _ in range(3):
        cap, b, sessions = pm.draw(rng)
        warmup = rng.choice([0.5, 1.0, 2.0, 3.5])
        src = pm.program(cap, b, sessions, HORIZON, warmup)
        want_obs, want = pm.model(cap, b, sessions, HORIZON, warmup)
        r, got = run(src, monkeypatch)
        for name, samples in want_obs.items():
            assert got.get(name, []) == samples, (name, src)
        m = pool_json(r, "m")
        assert {k: m[k] for k in want} == pytest.approx(want, rel=1e-9, abs=1e-12), src
