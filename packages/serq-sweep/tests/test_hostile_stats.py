"""Means and standard deviations across seeds of values near the end of the double range: `math.fsum`
raised OverflowError ("intermediate overflow in fsum") on 1e308 + 1e308, and `(x - m) ** 2` on a deviation
of 1e200, so `serq plot` of a table holding such a figure (and any aggregate over it) ended in a
traceback. The mean of finite values lies between them and is now theirs; an sd past the range is inf."""

from __future__ import annotations

import math
import statistics

import pytest
from serq_sweep.stats import mean, mean_ci, mean_sd


@pytest.mark.parametrize("values, m", [([1e308, 1e308, 1e308], 1e308), ([1e308, -1e308], 0.0),
                                       ([1.7e308, 1.7e308, -1e308], 1.7e308 / 3 * 2 - 1e308 / 3),
                                       ([1.0, 2.0, 4.0], 7 / 3)])
def test_the_mean_of_finite_values_is_finite(values, m):
    n, got, _ = mean_sd(values)
    assert n == len(values) and got == pytest.approx(m, rel=1e-15)
    assert mean(values) == got


@pytest.mark.parametrize("values", [[1e200, 2e200], [1e308, -1e308], [1e-200, 3e-200, 2e-200]])
def test_the_sd_of_large_or_small_values_is_theirs(values):
    scale = max(abs(v) for v in values)
    want = statistics.stdev([v / scale for v in values]) * scale
    assert mean_sd(values)[2] == pytest.approx(want, rel=1e-12, abs=0)  # abs=0: 1e-200 is below approx's 1e-12
    assert mean_ci(values)[3] == mean_sd(values)[2]


def test_an_ordinary_sd_is_unchanged():
    values = [0.1 * k + 1 / (k + 3) for k in range(20)]
    m = math.fsum(values) / len(values)
    assert mean_sd(values)[2] == math.sqrt(math.fsum((x - m) ** 2 for x in values) / (len(values) - 1))


def test_no_finite_values():
    assert mean([]) != mean([])  # NaN
    assert mean_sd([math.inf, math.nan, None])[0] == 0
