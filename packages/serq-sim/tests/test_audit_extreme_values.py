"""An audit of the report's statistics on samples near the ends of the double range: an observe (or a gauge)
of values of 1e300, or of 1e-300, gets the figures the same values in units of 1 get, scaled: its mean, its
CI and its cv2 (docs/simulator.md, "Statistics"). The squares of their deviations leave the double range
(1e600, 1e-600): the CI was inf for the first and 0 for the second, cv2 NaN for both, and the mean of forty
samples of 1e308 was inf."""

from __future__ import annotations

import json
import math
import random

import pytest
import serq_frontend
import serq_sim
from serq_report import encode_json
from serq_sim.stats import mean_var, observe_stats, time_stats

T19 = 2.093


@pytest.mark.parametrize("c", [1.0, 1e300, 1e-300, 2.0 ** 1000, 2.0 ** -1020])
def test_a_hand_computed_observe_at_any_scale(c):
    # 40 samples 1, 1, 3, 3, ... (times c): mean 2, sample variance 40/39, cv2 = (40/39) / 4 = 10/39; the 20
    # batches of two are [1, 1] and [3, 3] by turns: batch means 1 and 3, their variance 20/19, so the
    # half-width is 2.093 sqrt((20/19) / 20) = 2.093 / sqrt(19); the median 1, p99 3
    xs = [1.0 * c, 1.0 * c, 3.0 * c, 3.0 * c] * 10
    n, mean, ci, cv2, p99 = observe_stats(xs)
    assert n == 40
    assert mean == pytest.approx(2 * c, rel=1e-15, abs=0)
    assert ci == pytest.approx(T19 * c / math.sqrt(19), rel=1e-12, abs=0)
    assert cv2 == pytest.approx(10 / 39, rel=1e-12, abs=0)
    assert p99 == 3.0 * c


@pytest.mark.parametrize("k", [-1000, -600, 600, 1000])
def test_a_power_of_two_scales_every_figure_exactly(k):
    # samples times 2**k are the same doubles with another exponent: every figure is the unscaled one times
    # 2**k (cv2 itself unchanged), to the last bit
    r = random.Random(k)
    y = [r.expovariate(1.0) for _ in range(1000)]
    f = 2.0 ** k
    base = observe_stats(y)
    n, mean, ci, cv2, p99 = observe_stats([v * f for v in y])
    assert (n, mean, ci, cv2, p99) == (base[0], base[1] * f, base[2] * f, base[3], base[4] * f)


def test_a_mean_of_samples_whose_sum_leaves_the_double_range_lies_between_them():
    assert observe_stats([1e308] * 40)[1] == 1e308
    assert observe_stats([1.7e308, 1.6e308] * 20)[1] == pytest.approx(1.65e308, rel=1e-15, abs=0)
    assert observe_stats([1.7e308, 1.6e308] * 20)[2] == 0.0  # every batch is [1.7e308, 1.6e308]
    # a variance past the double range is inf; one below it 0 (the figures made from it are not)
    assert mean_var([1e300, 3e300]) == (2e300, math.inf)


@pytest.mark.parametrize("c", [1e300, 1e-300])
def test_a_gauge_of_huge_or_tiny_values_has_its_ci(c):
    # a gauge 0 on [0, 1), 1 on [1, 2), 0 on [2, 4) ... over [0, 40): each of the 20 windows of 2 holds 1
    # for half its time or none, by turns of the pattern; its scaled copy has the scaled CI
    times = [float(t) for t in range(40)]
    values = [1.0 if t % 4 == 1 else 0.0 for t in range(40)]
    mean, ci, lo, hi = time_stats(times, values, 0.0, 40.0)
    smean, sci, slo, shi = time_stats(times, [v * c for v in values], 0.0, 40.0)
    assert ci > 0 and sci == pytest.approx(ci * c, rel=1e-12, abs=0)
    assert smean == pytest.approx(mean * c, rel=1e-12, abs=0) and (slo, shi) == (0.0, c)


def test_the_report_of_a_run_scales_with_its_observe():
    src = """
    stage svc : fifo;
    workload { arrive poisson(0.5); }
    session {
      set t0 = now;
      run svc (~exp(1));
      observe r = now - t0;
      observe big = 1e300 * (now - t0);
      observe tiny = 1e-300 * (now - t0);
      end;
    }
    run { horizon 4000; warmup 100; seed 3; }
    """
    report = serq_sim.run(serq_frontend.compile(source=src))
    doc = json.loads(encode_json(report))["observes"]
    for name, c in (("big", 1e300), ("tiny", 1e-300)):
        for fig in ("mean", "ci", "p50", "p99"):
            assert doc[name][fig] == pytest.approx(doc["r"][fig] * c, rel=1e-12, abs=0), (name, fig)
        assert doc[name]["cv2"] == pytest.approx(doc["r"]["cv2"], rel=1e-12, abs=0), name
