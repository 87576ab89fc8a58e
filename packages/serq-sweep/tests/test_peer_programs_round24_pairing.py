"""serq compare's variance reduction, 1 - var(b - a) / (var(a) + var(b)), when one arm is the same at every seed.

Prefix-affinity routing against random routing (N engines, two-turn conversations that never evict): the
affinity arm hits every follow-up, the same hit rate at every seed, so pairing cannot help (cov(a, b) = 0,
var(b - a) = var(a)) and the reduction is 0. It printed ``-0.0%`` (its value -4.6e-14: the difference of two
nearly equal ratios), and for 29 % of random arms against a constant one it was some +-1e-16 .. 1e-14. It is
taken as 2 cov(a, b) / (var(a) + var(b)) where pairing removes less than half, 0 exactly there; arms equal at
every seed keep their 1 exactly.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from serq_sweep.pairing import reduction_percent
from serq_sweep.stats import paired


def test_an_arm_the_same_at_every_seed_has_no_reduction():
    rng = random.Random(1)
    for _ in range(500):
        a = [rng.random() for _ in range(rng.randint(2, 12))]
        c = rng.choice([0.3, 0.4155844155844156, 1e-9, 123.25])
        for r in (paired(a, [c] * len(a)), paired([c] * len(a), a)):
            assert r["variance_reduction"] == 0.0
            assert reduction_percent(r["variance_reduction"]) == "0.0%"


def test_the_hit_rates_of_random_and_affinity_routing():
    # the hit rates of three seeds of a sweep: random routing, then prefix affinity (192 / 462 at every seed)
    rand = [0.10285714285714286, 0.10368831168831169, 0.10119480519480519]
    aff = [0.4155844155844156] * 3
    r = paired(rand, aff)
    assert r["variance_reduction"] == 0.0 and reduction_percent(r["variance_reduction"]) == "0.0%"
    assert r["diff"] == pytest.approx(0.4155844155844156 - sum(rand) / 3, rel=1e-14)


@pytest.mark.parametrize(("a", "b"), [([1, 2, 4], [2, 5, 3]), ([3, 1, 4, 1, 5], [9, 2, 6, 5, 3]),
                                      ([1, 2, 4], [3, 1, 2]), ([0.1, 0.7, 0.2, 0.9], [0.2, 0.6, 0.1, 1.1])])
def test_the_reduction_is_the_hand_one(a, b):
    # exact: 1 - var(b - a) / (var(a) + var(b)) in fractions
    def var(v):
        v = [Fraction(x) for x in v]
        m = sum(v) / len(v)
        return sum((x - m) ** 2 for x in v) / (len(v) - 1)

    want = 1 - var([y - x for x, y in zip(a, b)]) / (var(a) + var(b))
    assert paired(a, b)["variance_reduction"] == pytest.approx(float(want), rel=1e-14, abs=1e-15)


def test_arms_equal_at_every_seed_keep_the_whole_reduction():
    a = [0.1, 0.3, 0.2, 0.25]
    assert paired(a, list(a))["variance_reduction"] == 1.0


@pytest.mark.parametrize("c", [1.0, 1e200, -3.5])
def test_a_constant_arm_beside_spreads_below_its_last_digit_has_no_reduction(c):
    # b - a rounds to -c at every seed (b's spread is below c's last digit), so var(b - a) read 0 and the
    # reduction 1; by hand it is 1 - var(b) / (0 + var(b)) = 0, pairing helping nothing
    b = [1e-20, 2e-20, 4e-20]
    for r in (paired([c] * 3, b), paired(b, [c] * 3)):
        assert r["variance_reduction"] == 0.0
