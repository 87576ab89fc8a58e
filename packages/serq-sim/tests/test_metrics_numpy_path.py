"""The metric set's two ways of sorting and summing (serq_sim.metrics.NUMPY_FROM): in Python below the
bound, with numpy from it. Both must give the same floats, bit for bit, for every metric and for the
inter-token latency's runs (step/tokens.py), whatever the values: ties, signed zeros, infinities, values
far apart, runs of large weight."""

from __future__ import annotations

import math
import random
import struct
from array import array

import numpy as np
import pytest
from serq_sim import metrics
from serq_sim.step import tokens
from serq_sim.step.tokens import TokenGaps


def bits(stats) -> list[bytes]:
    """Every field of a MetricStats as its bytes (a NaN equal to a NaN, -0.0 told from 0.0)."""
    out = []
    for name in stats.__struct_fields__:
        v = getattr(stats, name)
        out.append(struct.pack("<d", v) if isinstance(v, float) else repr(v).encode())
    return out


def samples(r: random.Random, n: int) -> list[float]:
    kind = r.choice(["spread", "ties", "zeros", "huge", "inf"])
    if kind == "spread":
        return [r.expovariate(1.0) for _ in range(n)]
    if kind == "ties":
        return [float(r.randrange(5)) for _ in range(n)]
    if kind == "zeros":
        return [r.choice([0.0, -0.0, 1.0, -1.0]) for _ in range(n)]
    if kind == "huge":
        return [r.choice([1e308, -1e308, 1e-300, 3.0]) * r.random() for _ in range(n)]
    return [r.choice([math.inf, 1.0, 2.5]) for _ in range(n)]


def both_ways(monkeypatch, fn):
    """``fn()`` in Python (the bound above every size) and with numpy (the bound at 0)."""
    monkeypatch.setattr(metrics, "NUMPY_FROM", 10**12)
    monkeypatch.setattr(tokens, "NUMPY_FROM", 10**12)
    py = fn()
    monkeypatch.setattr(metrics, "NUMPY_FROM", 0)
    monkeypatch.setattr(tokens, "NUMPY_FROM", 0)
    return py, fn()


@pytest.mark.parametrize("seed", range(40))
def test_a_metric_is_the_same_either_way(monkeypatch, seed):
    r = random.Random(seed)
    values = samples(r, r.choice([1, 2, 3, 39, 40, 41, 257, 1000]))
    py, npy = both_ways(monkeypatch, lambda: metrics.stats_of(list(values)))
    assert bits(py) == bits(npy), (py, npy)


def test_the_sort_is_stable_over_signed_zeros(monkeypatch):
    # -0.0 and 0.0 compare equal: both ways keep them in the order they came, so the median of
    # [0.0, -0.0, -0.0, 0.0] reads the same zeros
    values = [0.0, -0.0, -0.0, 0.0, -0.0]
    py, npy = both_ways(monkeypatch, lambda: metrics.sorted_values(list(values)))
    assert [math.copysign(1, v) for v in py] == [math.copysign(1, v) for v in npy] == [1, -1, -1, 1, -1]


def gaps_of_runs(r: random.Random, runs: int) -> TokenGaps:
    g = TokenGaps()
    for _ in range(runs):
        kind = r.random()
        if kind < 0.5:
            v = r.choice([0.02, 0.021, 0.03, 0.5])  # a steady engine's few iteration times
        elif kind < 0.9:
            v = r.expovariate(30.0)
        else:
            v = r.choice([1e300, 1e-300, 0.0])
        g.add(v, r.choice([1, 1, 2, 17, 250, 10**6]))
    return g


@pytest.mark.parametrize("seed", range(40))
def test_the_gaps_are_the_same_either_way(monkeypatch, seed):
    r = random.Random(seed)
    g = gaps_of_runs(r, r.choice([1, 2, 5, 40, 300, 3000]))
    py, npy = both_ways(monkeypatch, g.stats)
    assert bits(py) == bits(npy), (py, npy)


def test_the_gaps_with_squares_past_the_double_range(monkeypatch):
    # w × d² beyond the largest double: inf either way, and numpy prints no warning
    g = TokenGaps()
    for v, w in ((1e200, 3), (0.0, 5), (1e-3, 10**6)):
        g.add(v, w)
    with np.errstate(all="raise"):  # a warning numpy gave would be an error here
        py, npy = both_ways(monkeypatch, g.stats)
    assert py.std == npy.std == math.inf
    assert bits(py) == bits(npy)


def test_the_python_way_is_what_the_expanded_gaps_give():
    # an independent check of the Python way: the runs expanded, then the metric of the list
    r = random.Random(7)
    g = gaps_of_runs(r, 60)
    g.weights = array("q", [w if w < 1000 else 3 for w in g.weights])
    got = g.stats()
    want = metrics.stats_of(g.expanded())
    assert (got.count, got.median, got.p90, got.p95, got.p99) == (want.count, want.median, want.p90, want.p95,
                                                                  want.p99)
    assert math.isclose(got.mean, want.mean, rel_tol=1e-12)
