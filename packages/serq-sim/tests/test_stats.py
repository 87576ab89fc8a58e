"""Statistics: observes, gauges, time averages, the run line, notes."""

from __future__ import annotations

import math

import numpy as np
import serq_sim
from irb import P, at, b, obs, roles
from serq_ir import nodes as N
from serq_sim.stats import observe_stats, time_stats


def test_observe_statistics():
    x = np.arange(100, dtype=float)
    n, mean, ci, cv2, p99 = observe_stats(x)
    assert (n, mean, p99) == (100, 49.5, 98.0)  # ceil(0.99 * 100) = 99th smallest
    assert abs(cv2 - np.var(x, ddof=1) / 49.5 ** 2) < 1e-12
    # 20 batches of 5: batch means 2, 7, …, 97: sd 29.58…, half-width 2.093 * sd / sqrt(20)
    means = np.arange(20) * 5 + 2.0
    assert abs(ci - 2.093 * np.std(means, ddof=1) / math.sqrt(20)) < 1e-12
    n, mean, ci, cv2, p99 = observe_stats(np.ones(39))
    assert math.isnan(ci) and math.isnan(p99)


def test_time_stats_of_a_step():
    # 0 on [0, 1), 2 on [1, 3), 5 from 3; over [1, 4]: (2*2 + 5) / 3
    mean, ci, lo, hi = time_stats(np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 5.0]), 1.0, 4.0)
    assert abs(mean - 3.0) < 1e-12 and (lo, hi) == (2.0, 5.0)
    # a value held for no time is not an extreme; a constant has a zero CI
    _, _, lo, hi = time_stats(np.array([0.0, 2.0, 2.0]), np.array([1.0, 9.0, 1.0]), 0.0, 4.0)
    assert hi == 1.0
    _, ci, _, _ = time_stats(np.array([0.0]), np.array([3.0]), 0.0, 7.0)
    assert ci < 1e-12


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
    import numpy as np
    from serq_sim.stats import observe_stats, time_stats

    values = np.array([1.0, 2.0, np.inf] + [1.0] * 50)
    n, mean, ci, cv2, p99 = observe_stats(values)
    assert n == 53 and mean == np.inf and np.isnan(cv2) and p99 == np.inf
    assert np.isnan(ci) or ci == np.inf
    mean, ci, lo, hi = time_stats(np.array([0.0, 1.0]), np.array([1.0, np.inf]), 0.0, 2.0)
    assert mean == np.inf and lo == 1.0 and hi == np.inf


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
