"""A gauge's CI where a value times the time it is held is beyond the doubles (serq_sim.stats.time_stats).

The time average already took such a signal in units of HUGE_SPAN (stats._huge_time_mean); the batch-means
half-width summed each window's terms as they were, so a gauge of 9e306 held for 30 s made a window's
sum inf and the half-width NaN beside a finite mean: `gauge g = used(kv) * 1e306;` reported a mean of
9.08382e+305 and a CI of nan, where `used(kv)` alone has ±0.0794996. Each window's average is now taken
as the mean is."""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from serq_sim.stats import T19, time_stats

pytestmark = pytest.mark.timeout(60)


def test_a_signal_near_the_largest_double_has_the_half_width_scaled():
    # 1 over [0, 20), 3 over [20, 40): twenty windows of 2, ten averaging 1 and ten 3; mean 2, the windows'
    # variance 20 / 19, the half-width T19 * sqrt(20 / 19 / 20) (by hand)
    times, values = [0.0, 20.0], [1.0, 3.0]
    mean, ci, lo, hi = time_stats(times, values, 0.0, 40.0)
    assert (mean, lo, hi) == (2.0, 1.0, 3.0)
    assert ci == pytest.approx(T19 * math.sqrt(1 / 19), rel=1e-15)
    # the same signal times 2**1022 (3 * 2**1022 is a double; 3 * 2**1022 held for a window's 2 is not):
    # every figure scaled by that power of two, exactly
    k = 1022
    big = [math.ldexp(v, k) for v in values]
    mean_b, ci_b, lo_b, hi_b = time_stats(times, big, 0.0, 40.0)
    assert mean_b == math.ldexp(mean, k) and (lo_b, hi_b) == (big[0], big[1])
    assert ci_b == math.ldexp(ci, k)


def test_an_infinite_level_beside_a_huge_one_averages_to_inf():
    # -1e308 over [0, 10), inf over [10, 20): the time average is inf (inf held for a positive time); the
    # term -1e308 * 10 overflowed to -inf, and -inf + inf made the mean NaN
    mean, _ci, lo, hi = time_stats([0.0, 10.0], [-1e308, math.inf], 0.0, 20.0)
    assert (mean, lo, hi) == (math.inf, -1e308, math.inf)
    # both infinities held: no average (as the samples' mean of inf and -inf)
    assert math.isnan(time_stats([0.0, 10.0], [-math.inf, math.inf], 0.0, 20.0)[0])
    # -1e308 and 1e308 for 10 each: 0, as the scaled sum says (both terms were beyond the doubles)
    assert time_stats([0.0, 10.0], [-1e308, 1e308], 0.0, 20.0)[0] == 0.0


def test_a_window_held_for_no_time_is_no_error():
    # a span of the least double: the windows' edges coincide (start + span * k / 20 rounds to start or end)
    mean, ci, _lo, _hi = time_stats([0.0], [math.ldexp(1.0, 1023)], 0.0, 5e-324)
    assert mean == math.ldexp(1.0, 1023)
    assert not ci == ci or ci >= 0


PROGRAM = """pool kv {{ cap 100; }}
stage svc : fifo;
workload {{
  arrive poisson(1);
}}
session {{
  hold kv (1) {{
    run svc (~exp(0.5));
  }}
  end;
}}
gauge g = used(kv) * {scale};
run {{ horizon 5000; warmup 5; seed 1; }}
"""


def gauge(scale: str):
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM.format(scale=scale), sets={}, defs={}))
    return report.result.gauges["g"]


def test_a_gauge_of_1e306_has_the_ci_of_its_units_scaled():
    # used(kv) holds 0 … 9 here, each for some seconds: times 1e306, a level of 9e306 for 20 s is a term of
    # 1.8e308, beyond the doubles (the mean was taken in units already, the CI was NaN)
    one = gauge("1")
    assert one.ci > 0
    for scale in (1e305, 1e306, 1e307):
        g = gauge(repr(scale))
        assert g.mean == pytest.approx(one.mean * scale, rel=1e-12)
        assert g.ci == pytest.approx(one.ci * scale, rel=1e-12), (scale, g.ci)
