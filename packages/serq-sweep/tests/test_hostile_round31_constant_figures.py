"""A figure that is the same at every seed has that value for its mean, 0 for its sd and its CIs, and no
variance reduction (0 over 0): serq_sweep.stats.mean took fsum's sum over the count, whose rounding is not
always the value (ten of 4/9 gave a mean an ulp off), and the deviations from it made an sd of about 1e-17.
`serq compare` of a program without randomness under w=1,2 over seeds 1..10 printed, for the stage's mean
wait (4/9 and 8/9 by hand: works w/3, 2w/3, w in arrival order wait 0, w/3, w), a paired CI of 4.19e-17, an
unpaired one of 8.94e-17 and a variance reduction of 80.0 %, where the other figures had 0, 0 and nan."""

from __future__ import annotations

import math
import random

import pytest
from serq_sweep.stats import mean, mean_ci, mean_sd, paired

pytestmark = pytest.mark.timeout(60)


def _values() -> list[tuple[float, int]]:
    r = random.Random(31)
    return [(4 / 9, 10), (8 / 9, 10), (0.1, 10), (1e-300, 7), (1e300, 3)] + \
        [(r.uniform(0, 1000), r.randint(2, 30)) for _ in range(300)]


def test_the_values_include_sums_whose_quotient_is_not_the_value():
    # (so that the cases below are the ones that went wrong: fsum of n copies over n is off for some)
    assert sum(math.fsum([x] * n) / n != x for x, n in _values()) > 10
    assert math.fsum([4 / 9] * 10) / 10 != 4 / 9


@pytest.mark.parametrize(("x", "n"), _values()[:5])
def test_a_figure_the_same_at_every_seed_named(x, n):
    assert mean_sd([x] * n) == (n, x, 0.0)
    assert mean_ci([x] * n) == (n, x, 0.0, 0.0)


def test_a_figure_the_same_at_every_seed():
    for x, n in _values():
        assert mean_sd([x] * n) == (n, x, 0.0), (x, n)


def test_the_mean_is_between_the_values():
    r = random.Random(7)
    for _ in range(500):
        x = r.uniform(-1e6, 1e6)
        v = [x, math.nextafter(x, math.inf)] * r.randint(1, 20)
        r.shuffle(v)
        assert min(v) <= mean(v) <= max(v), v


def test_two_arms_each_the_same_at_every_seed():
    """The stage's mean wait of the hand case: 4/9 under w = 1, 8/9 under w = 2, at each of 10 seeds."""
    got = paired([4 / 9] * 10, [8 / 9] * 10)
    assert (got["a"], got["b"], got["diff"]) == (4 / 9, 8 / 9, 8 / 9 - 4 / 9)
    assert got["ci_paired"] == 0.0 and got["ci_unpaired"] == 0.0
    assert math.isnan(got["variance_reduction"])
