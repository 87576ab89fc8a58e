"""Conformance of language.txt §3's Stages (fifo(c), ps(φ), delay) on random small programs against
stage_model32.model, an independent model written from the spec's words: arrivals on a grid (ties, decided
by the order the delays were scheduled) and at any time, works on a grid and any. Every program runs on the
tier serQ picks and on the general engine (conform.run: the same JSON reports and samples); each session's
end at the stage is the model's to 1e-9 (a ps stage's rates are doubles).
"""

from __future__ import annotations

import random

import pytest
import stage_model32 as sm
from conform import run


@pytest.mark.parametrize("seed", range(20))
def test_a_random_stage_program_against_the_model(monkeypatch, seed):
    rng = random.Random(3500 + seed)
    for _ in range(3):
        kind, par, sessions = sm.draw(rng)
        src = sm.program(kind, par, sessions)
        want = sm.model(kind, par, sessions)
        _r, got = run(src, monkeypatch)
        ends = {s: v for s, _t, v in got["t"]}
        assert sorted(ends) == sorted(want), src
        assert all(ends[s] == pytest.approx(want[s], rel=1e-9, abs=1e-9) for s in want), (src, ends, want)


def test_the_draws_reach_every_kind_and_a_queue():
    """Over the 60 programs of the test, each kind occurs, and some session waits at a fifo."""
    kinds, waited = set(), 0
    for seed in range(20):
        rng = random.Random(3500 + seed)
        for _ in range(3):
            kind, par, sessions = sm.draw(rng)
            kinds.add(kind)
            ends = sm.model(kind, par, sessions)
            waited += kind == "fifo" and any(ends[s] > p["A"] + p["W"] + 1e-9 for s, p in enumerate(sessions))
    assert kinds == {"fifo", "ps", "delay"} and waited >= 3, (kinds, waited)


@pytest.mark.parametrize("seed", range(20))
def test_a_random_step_engine_against_the_model(monkeypatch, seed):
    """stage_model32.model_step: a step engine of cost 1 under each serve clause (admission, decode first,
    by remaining, by -remaining, by (decoding, remaining), by -admission), with or without a chunk, a slot
    pool it admits; each session's admission, prefill end and end are the model's."""
    rng = random.Random(3600 + seed)
    for _ in range(3):
        engine = sm.draw_step(rng)
        src = sm.program_step(*engine)
        _r, got = run(src, monkeypatch)
        for name, samples in sm.model_step(*engine).items():
            assert got.get(name, []) == samples, (name, src)


@pytest.mark.parametrize("seed", range(20))
def test_a_random_engine_with_memory_against_the_model(monkeypatch, seed):
    """stage_model32.model_kv: the step engine with a KV pool of blocks as its memory, `preempt lifo`, the
    sessions' prefill and decode growing it, under every serve clause; each session's admissions (again
    after a preemption), prefill ends and end are the model's."""
    rng = random.Random(3700 + seed)
    for _ in range(3):
        engine = sm.draw_kv(rng)
        src = sm.program_kv(*engine)
        _r, got = run(src, monkeypatch)
        want, _preemptions = sm.model_kv(*engine)
        for name, samples in want.items():
            assert got.get(name, []) == samples, (name, src)


def test_the_engines_with_memory_preempt():
    """Over the 60 engines with memory of the test, at least 15 preempt."""
    n = 0
    for seed in range(20):
        rng = random.Random(3700 + seed)
        for _ in range(3):
            n += sm.model_kv(*sm.draw_kv(rng))[1] > 0
    assert n >= 15, n


@pytest.mark.parametrize("seed", range(20))
def test_a_random_exclusive_prefill_engine_against_the_model(monkeypatch, seed):
    """stage_model32.model_exclusive: the step engine under `serve exclusive prefill` (a resident prefill
    alone, else the decodes, which a waiting prefill displaces while they leave budget)."""
    rng = random.Random(3800 + seed)
    for _ in range(3):
        budget, chunk, slots, _serve, sessions = sm.draw_step(rng)
        src = sm.program_exclusive(budget, chunk, slots, sessions)
        assert "serve exclusive prefill" in src
        _r, got = run(src, monkeypatch)
        for name, samples in sm.model_exclusive(budget, chunk, slots, sessions).items():
            assert got.get(name, []) == samples, (name, src)


@pytest.mark.parametrize("seed", range(20))
def test_random_flows_against_the_model(monkeypatch, seed):
    """stage_model32.model_flows: runs over one, two or three ps stages at once under share maxmin or share
    bottleneck; each session's end is the model's (progressive filling, or min over its stages of φ / n) to
    1e-7."""
    rng = random.Random(4000 + seed)
    for _ in range(3):
        phi, share, sessions = sm.draw_flows(rng)
        src = sm.program_flows(phi, share, sessions)
        want = sm.model_flows(phi, share, sessions)
        _r, got = run(src, monkeypatch)
        ends = {s: v for s, _t, v in got["t"]}
        assert sorted(ends) == sorted(want), src
        assert all(ends[s] == pytest.approx(want[s], rel=1e-7, abs=1e-7) for s in want), (src, ends, want)
