"""The variance and half-width of samples equal to some eight digits (serq_sim.stats._corrected, the corrected
two-pass sum, and batch_means_ci; docs/simulator.md "Statistics").

An observe of 1e16 and 1e16 + 2 alternately (2 is the last place of 1e16) has the mean 1e16 + 1, which is no
double: the report's mean is 1e16 + 2, one of the two neighbours. The squares of the deviations from that mean
were 0 and 4, a variance of 200 / 99 where the samples' is 100 / 99: cv² 2.02e-32 where it is 1.01e-32, twice
the figure. The rounding δ of the mean adds n δ² to the squares; (Σ (v - m))² / n is that term, and is now taken
off when it can reach the sum's last bits. Checked against the variance in rationals.

Its batch means, rounded to the doubles near 1e16, were 1e16 and 1e16 + 2 where they are 1e16 + 0.8 and
1e16 + 1.2: the half-width was 0.48, five times the batches' 0.096. Batch means within a few ulps of one
another are now taken as the means of the deviations from the overall mean (serq_sim.stats.batch_means_ci),
exact there."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from serq_sim.stats import mean_var, observe_summary
from tiers import both

pytestmark = pytest.mark.timeout(60)


def exact_cv2(xs: list[float]) -> float:
    n = len(xs)
    mu = sum(map(Fraction, xs)) / n
    var = sum((Fraction(v) - mu) ** 2 for v in xs) / (n - 1)
    return float(var / (mu * mu))


def exact_var(xs: list[float]) -> float:
    n = len(xs)
    mu = sum(map(Fraction, xs)) / n
    var = sum((Fraction(v) - mu) ** 2 for v in xs) / (n - 1)
    return math.inf if var > Fraction(2.0**1023) * 2 else float(var)  # beyond the doubles: inf, as documented


@pytest.mark.parametrize("c", [1e16, 3.0, 1e300, 2.0**-1000, 123456.789])
def test_two_neighbouring_doubles(c):
    # c and the next double alternately: the exact mean lies halfway between them, no double
    xs = [c, math.nextafter(c, math.inf)] * 50
    m, var = mean_var(xs)
    assert var == pytest.approx(exact_var(xs), rel=1e-12, abs=0)
    _, _, _, cv2, _ = observe_summary(xs)
    assert cv2 == pytest.approx(exact_cv2(xs), rel=1e-12, abs=0)


def test_the_variance_at_1e16_is_100_over_99():
    xs = [1e16, 1e16 + 2] * 50
    # the squares about the exact mean 1e16 + 1 are 1 each: 100 / 99 (the rounded mean's were 0 and 4: 200 / 99)
    assert mean_var(xs)[1] == 100 / 99


def test_the_half_width_at_1e16():
    # 20 batches of 5: 0, 2, 0, 2, 0 above 1e16 (a mean of 0.8) and 2, 0, 2, 0, 2 (1.2) alternately. Their
    # mean is 1, their variance 20 × 0.2² / 19, the half-width 2.093 √(0.04 / 19). The batch means as doubles
    # near 1e16 were 1e16 and 1e16 + 2, and the half-width 0.48, five times that.
    xs = [1e16, 1e16 + 2] * 50
    _, _, ci, _, _ = observe_summary(xs)
    assert ci == pytest.approx(2.093 * math.sqrt(0.04 / 19), rel=1e-12, abs=0)


def test_ordinary_samples_keep_their_figures():
    # samples whose spread is far above the last place of their mean: the sum it cannot change is left alone,
    # the same bits as the squares about the rounded mean
    import random

    r = random.Random(7)
    xs = [r.expovariate(1.0) for _ in range(1000)]
    m = math.fsum(xs) / len(xs)
    assert mean_var(xs)[1] == math.fsum((v - m) * (v - m) for v in xs) / (len(xs) - 1)


def test_an_observe_at_1e16_on_both_tiers(monkeypatch):
    src = """workload {
  arrive renewal(1);
}
session {
  observe x = 1e16 + 2 * (serial % 2);
  end;
}
run { horizon 100; seed 1; }
"""
    general = both(src, monkeypatch)
    o = general.result.observes["x"]
    # 100 sessions at 1 … 100, serials 0 … 99: 50 samples of each value
    assert o.count == 100
    assert o.cv2 == pytest.approx(exact_cv2([1e16, 1e16 + 2] * 50), rel=1e-12, abs=0)
    assert o.ci == pytest.approx(2.093 * math.sqrt(0.04 / 19), rel=1e-12, abs=0)
    # the 50th smallest is 1e16, the 90th, 95th and 99th 1e16 + 2
    assert (o.p50, o.p90, o.p95, o.p99) == (1e16, 1e16 + 2, 1e16 + 2, 1e16 + 2)
