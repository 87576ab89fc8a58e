"""Statistics: observes, gauges, time averages, the run line, notes."""

from __future__ import annotations

import math
from array import array
from fractions import Fraction

import numpy as np
import serq_sim
from irb import P, at, b, obs, roles
from serq_ir import nodes as N
from serq_sim import stats
from serq_sim.stats import observe_stats, observe_summary, time_stats


def test_observe_statistics():
    x = np.arange(100, dtype=float)
    n, mean, ci, cv2, p99 = observe_stats(x)
    assert (n, mean, p99) == (100, 49.5, 98.0)  # ceil(0.99 * 100) = 99th smallest
    # the squared deviations (i - 49.5)² and their sum 83325 are exact, so the variance is 83325 / 99
    assert cv2 == (83325.0 / 99) / 49.5**2
    # 20 batches of 5: batch means 2, 7, …, 97; squared deviations sum to 25 * 665: variance 875,
    # half-width 2.093 * sqrt(875 / 20)
    assert ci == 2.093 * math.sqrt(875.0 / 20)
    n, mean, ci, cv2, p99 = observe_stats(np.ones(39))
    assert math.isnan(ci) and math.isnan(p99)
    assert observe_stats(array("d")) == (0, *observe_stats(array("d"))[1:])
    assert all(map(math.isnan, observe_stats([])[1:]))
    n, mean, ci, cv2, p99 = observe_stats([3.0])
    assert (n, mean) == (1, 3.0) and math.isnan(cv2)


def test_observe_quantiles_are_nearest_ranks():
    # 200 samples 1 … 200 shuffled: the q-quantile is the ceil(q n)-th smallest, the value ceil(200 q)
    x = [float(v) for v in np.random.default_rng(3).permutation(np.arange(1, 201))]
    n, mean, ci, cv2, qs = observe_summary(x)
    assert qs == [100.0, 180.0, 190.0, 198.0]
    assert observe_stats(x)[4] == 198.0
    # 41 samples: ceil(0.5 * 41) = 21st, ceil(0.9 * 41) = 37th, ceil(0.95 * 41) = 39th, ceil(0.99 * 41) = 41st
    assert observe_summary([float(v) for v in range(41)])[4] == [20.0, 36.0, 38.0, 40.0]
    assert all(map(math.isnan, observe_summary([1.0] * 39)[4]))  # below 40 samples: none
    # a NaN is above every number: one of 100 is the 100th smallest, two reach the 99th
    assert observe_summary([math.nan] + [float(v) for v in range(99)])[4] == [49.0, 89.0, 94.0, 98.0]
    two = observe_summary([math.nan, math.nan] + [float(v) for v in range(98)])[4]
    assert two[:3] == [49.0, 89.0, 94.0] and math.isnan(two[3])
    # from NUMPY_SORT_FROM on numpy's sort gives the same values
    big = [float(v) for v in np.random.default_rng(4).permutation(3000)]
    old = stats.NUMPY_SORT_FROM
    try:
        stats.NUMPY_SORT_FROM = 1000
        assert observe_summary(big)[4] == [1499.0, 2699.0, 2849.0, 2969.0]
    finally:
        stats.NUMPY_SORT_FROM = old
    assert observe_summary(big)[4] == [1499.0, 2699.0, 2849.0, 2969.0]


def test_instants_leave_the_observe_table():
    import serq_frontend

    program = serq_frontend.compile(source="""
        stage d : delay;
        workload { arrive poisson(1); }
        session { set t0 = now; run d (1); observe sent = t0; observe at = now; run d (1); observe at = now;
                  observe mixed = now; observe mixed = now - t0; observe w = now - t0; }
        run { horizon 100; warmup 0; seed 1; }
        """)
    assert [(o.name, o.instant) for o in program.observes] == [
        ("sent", False), ("at", True), ("mixed", False), ("w", False)]
    r = serq_sim.run(program).result
    assert list(r.observes) == ["sent", "mixed", "w"]
    assert r.instants == {"at": r.observes["sent"].count + r.observes["w"].count}
    assert r.observes["w"].p50 == 2.0


def test_statistics_are_correctly_rounded_sums():
    # numpy's pairwise sum gives 0.0 for the mean here; the exact sum is 3, divided by 4
    x = [1e16, 1.0, -1e16, 2.0]
    n, mean, _, cv2, _ = observe_stats(x)
    assert mean == 0.75
    devs = [Fraction((v - 0.75) * (v - 0.75)) for v in x]  # each deviation and square rounded
    assert cv2 == float(sum(devs)) / 3 / 0.75**2


def test_time_stats_of_a_step():
    # 0 on [0, 1), 2 on [1, 3), 5 from 3; over [1, 4]: (2*2 + 5) / 3
    mean, ci, lo, hi = time_stats(np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 5.0]), 1.0, 4.0)
    assert mean == 3.0 and (lo, hi) == (2.0, 5.0)
    # a value held for no time is not an extreme; a constant has a zero CI
    _, _, lo, hi = time_stats(np.array([0.0, 2.0, 2.0]), np.array([1.0, 9.0, 1.0]), 0.0, 4.0)
    assert hi == 1.0
    mean, ci, _, _ = time_stats(np.array([0.0]), np.array([3.0]), 0.0, 7.0)
    assert mean == 3.0 and ci < 1e-12  # a window's 3 * width / width may be off by one unit
    # 1 on [0, 10), 3 on [10, 20] in 20 windows of 1: ten window averages 1 and ten 3, so the CI is
    # 2.093 * sqrt(var / 20), var = 20 * 1² / 19
    mean, ci, lo, hi = time_stats(array("d", [0.0, 10.0]), array("d", [1.0, 3.0]), 0.0, 20.0)
    assert (mean, lo, hi) == (2.0, 1.0, 3.0)
    assert ci == 2.093 * math.sqrt(20.0 / 19 / 20)
    # a change point after the end, nothing in [start, end], no span
    assert time_stats([0.0, 5.0], [1.0, 9.0], 0.0, 5.0)[2:] == (1.0, 1.0)
    assert all(map(math.isnan, time_stats([6.0], [1.0], 0.0, 5.0)))
    assert all(map(math.isnan, time_stats([0.0], [1.0], 5.0, 5.0)))
    assert all(map(math.isnan, time_stats([], [], 0.0, 5.0)))


def test_gauge_pool_and_stage_averages():
    p = P()
    pool = p.pool("p", cap=10.0)
    d = p.stage("d", N.Delay())
    p.gauge("u", obs("used", pool))
    prog = p.build(roles(p, [[p.hold([(pool, 4)], [p.run(d, 3)])], [p.hold([(pool, 2)], [p.run(d, 4)])]]),
                   presets=[at(p, 0, 0), at(p, 1, 1)], horizon=10.0, warmup=0.0)
    r = serq_sim.run(prog)
    # used: 4 on [0,1), 6 on [1,3), 2 on [3,5), 0 on [5,10]: (4 + 12 + 4) / 10 = 2
    g = r.result.gauges["u"]
    assert abs(g.mean - 2.0) < 1e-12 and (g.min, g.max) == (0.0, 6.0)
    assert list(r.gauge("u").times) == [0.0, 1.0, 3.0, 5.0]
    assert list(r.gauge("u").values) == [4.0, 6.0, 2.0, 0.0]
    assert abs(r.pool("p").used - 2.0) < 1e-12
    assert abs(r.pool("p").holders - (1 + 2 * 2 + 2) / 10) < 1e-12
    assert abs(r.stage("d").present - 7 / 10) < 1e-12
    assert abs(r.result.mean_live - 0.7) < 1e-12
    assert (r.result.arrivals, r.result.ended, r.result.end) == (2, 2, 10.0)


def test_warmup_discards_and_note_for_a_constant_test():
    p = P()
    d = p.stage("d", N.Delay())
    prog = p.build([p.run(d, 1), p.observe("hit", b(">", N.Ctx(name="now"), 1e9), test=True), p.observe("t", "now")],
                   arrive=N.Renewal(gap=N.Num(value=1.0)), horizon=100.5, warmup=50.0)
    r = serq_sim.run(prog)
    t = r.observe("t").times
    # the warm-up event at 50 was scheduled first, so the sample taken at 50 counts: 50 … 100
    assert t[0] == 50.0 and len(t) == 51
    assert r.result.notes == ["note: observe hit is constant 0 over 51 samples"]
    assert r.result.observes["hit"].count == 51


def test_non_finite_samples_give_non_finite_figures_without_warnings():
    import warnings

    inf, nan = math.inf, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = np.array([1.0, 2.0, inf] + [1.0] * 50)
        n, mean, ci, cv2, p99 = observe_stats(values)
        assert n == 53 and mean == inf and math.isnan(cv2) and p99 == inf
        assert math.isnan(ci)  # a batch mean is inf: inf - inf in the variance of the batch means
        mean, ci, lo, hi = time_stats(np.array([0.0, 1.0]), np.array([1.0, inf]), 0.0, 2.0)
        assert mean == inf and lo == 1.0 and hi == inf and math.isnan(ci)
        # both infinities, NaN: NaN; a sum past the double range: the exact sum over n (the mean lies
        # between the samples); a cv2 past the double range (var 1 over a mean of 6.7e-171 squared): inf
        assert all(map(math.isnan, observe_stats([inf, -inf] * 20)[1:4]))
        assert all(map(math.isnan, observe_stats([nan] * 40)[1:]))
        assert observe_stats([1e308] * 40)[1] == 1e308
        assert observe_stats([1e308, 1e308, -1e308])[1] == 1e308 / 3
        assert observe_stats([-1.0, 1.0, 2e-170])[3] == inf
        # a gauge with a NaN: its mean, min and max are NaN
        assert all(map(math.isnan, time_stats([0.0, 1.0], [1.0, nan], 0.0, 2.0)))


def test_p99_orders_nan_last_and_minus_zero_first():
    nan = math.nan
    # 100 samples: p99 is the 99th smallest; one NaN is the 100th, two NaNs reach the 99th
    one = [float(i) for i in range(99)] + [nan]
    assert observe_stats(one)[4] == 98.0
    assert math.isnan(observe_stats([nan, nan] + [float(i) for i in range(98)])[4])
    zeros = [-0.0] * 99 + [0.0]  # the 99th smallest is the last -0.0
    assert math.copysign(1.0, observe_stats(zeros)[4]) == -1.0
    zeros = [0.0] * 2 + [-0.0] * 98  # the 99th smallest is the first 0.0
    assert math.copysign(1.0, observe_stats(zeros)[4]) == 1.0


def test_pow_of_integer_observables_is_a_number():
    from serq_sim.compile import _pow

    assert _pow(0, 0) == 1.0 and isinstance(_pow(0, 0), float)
    assert _pow(2, 3) == 8.0
    assert _pow(-8.0, 1 / 3) != _pow(-8.0, 1 / 3)  # complex: NaN
    assert _pow(0.0, -1.0) == float("inf")


def test_h2_of_mean_zero_is_zero_and_draws_as_any_other():
    import random

    from serq_sim.rand import d_h2

    a, b = random.Random(5), random.Random(5)
    assert d_h2(a.random, 0.0, 4.0) == 0.0
    d_h2(b.random, 1.0, 4.0)
    assert a.random() == b.random()  # the same two numbers were drawn
