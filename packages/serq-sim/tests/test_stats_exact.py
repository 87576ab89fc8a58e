"""The report's statistics against their definitions (docs/simulator.md, "Statistics"), computed here
independently: sums exactly with fractions, order statistics by a full sort in the total order, time
averages piece by piece; the pure-Python and numpy order statistics agree; the report needs no numpy."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from array import array
from fractions import Fraction

import numpy as np
import pytest
from serq_sim import stats
from serq_sim.stats import kth_smallest, mean_var, observe_stats, time_stats, total

INF, NAN = math.inf, math.nan


def exact_total(xs) -> float:
    """The exact sum rounded once (``float(Fraction)`` rounds correctly), ±inf beyond the range."""
    xs = list(xs)
    if any(map(math.isnan, xs)) or (INF in xs and -INF in xs):
        return NAN
    if INF in xs or -INF in xs:
        return INF if INF in xs else -INF
    s = sum(map(Fraction, xs), Fraction(0))
    try:
        return float(s)
    except OverflowError:
        return INF if s > 0 else -INF


def same(a: float, b: float) -> bool:
    """Equal as floats, a zero's sign included; NaN equals NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def total_order_key(v: float):
    return (1, 0.0, 0) if math.isnan(v) else (0, v, math.copysign(1.0, v))


def reference_kth(xs, k: int) -> float:
    v = sorted(xs, key=total_order_key)[k]
    return NAN if math.isnan(v) else v


def awkward_samples(r: random.Random, n: int) -> list[float]:
    """Samples with ties, zeros of both signs, infinities, NaNs (sometimes), in awkward orders."""
    kind = r.randrange(6)
    if kind == 0:
        xs = [r.expovariate(1.0) for _ in range(n)]
    elif kind == 1:
        xs = [float(r.randrange(-3, 4)) * r.choice([1.0, -1.0]) for _ in range(n)]  # ±0.0 and ties
    elif kind == 2:
        xs = [r.choice([-0.0, 0.0, 1.0, -1.0, INF, -INF, 1e308, 5e-324]) for _ in range(n)]
    elif kind == 3:
        xs = [r.gauss(0.0, 1e3) for _ in range(n)]
    elif kind == 4:
        xs = [float(i) for i in range(n)]
    else:
        xs = [r.lognormvariate(0.0, 3.0) for _ in range(n)]
    order = r.randrange(4)
    if order == 1:
        xs.sort()
    elif order == 2:
        xs.sort(reverse=True)
    elif order == 3:  # sawtooth
        xs.sort()
        w = max(n // 7, 1)
        xs = [v for i in range(0, n, w) for v in reversed(xs[i : i + w])]
    if r.random() < 0.3:
        for _ in range(r.randrange(1, 4)):
            xs[r.randrange(n)] = NAN
    return xs


def test_total_is_the_exact_sum_rounded_once():
    r = random.Random(1)
    cases = [
        [], [-0.0], [-0.0, -0.0], [1e16, 1.0, -1e16], [0.1] * 10, [1e308, 1e308, -1e308], [1e308, 1e308],
        [-1e308, -1e308], [INF, 1.0], [INF, -INF], [NAN, 1.0], [INF, NAN], [1e308, 1e308, INF],
        [1e308, 1e308, -INF], [1e308, 1e308, NAN], [5e-324, 5e-324, -1e-323], [2.0**1023, 2.0**1023 * (1 - 2**-53)],
    ]
    for _ in range(300):
        n = r.randrange(1, 60)
        cases.append([r.choice([1.0, -1.0]) * r.random() * 10.0 ** r.randrange(-30, 30) for _ in range(n)])
        cases.append([r.choice([1e308, -1e308, 1.7e308, 1.0, -3.0, 1e-300]) for _ in range(n)])
    for xs in cases:
        assert same(total(xs), exact_total(xs)) or (total(xs) == 0.0 == exact_total(xs)), xs
        assert same(total(array("d", xs)), total(xs))


def corrected_squares(xs, m):
    """The squares of the deviations from the rounded mean ``m`` less ``(Σ (v - m))² / n``: the squares about
    the exact mean (the corrected two-pass sum, docs/simulator.md "Statistics")."""
    s1 = exact_total([v - m for v in xs])
    return max(exact_total([(v - m) * (v - m) for v in xs]) - s1 * s1 / len(xs), 0.0)


def test_mean_and_variance_follow_the_definition():
    r = random.Random(2)
    for _ in range(200):
        xs = [r.gauss(1e6, 1.0) if r.random() < 0.5 else r.expovariate(0.01) for _ in range(r.randrange(1, 300))]
        m, var = mean_var(xs)
        assert m == exact_total(xs) / len(xs)
        if len(xs) >= 2:
            assert var == corrected_squares(xs, m) / (len(xs) - 1)
        else:
            assert math.isnan(var)


def test_batch_means_follow_the_definition():
    r = random.Random(3)
    for n in (40, 41, 59, 60, 399, 1000, 2017):
        xs = [r.expovariate(1.0) for _ in range(n)]
        size = n // 20
        means = [exact_total(xs[k * size : (k + 1) * size]) / size for k in range(20)]
        mm = exact_total(means) / 20
        var = exact_total([(v - mm) * (v - mm) for v in means]) / 19
        assert stats.batch_means_ci(xs) == 2.093 * math.sqrt(var / 20)
        assert observe_stats(xs)[2] == stats.batch_means_ci(xs)


@pytest.mark.parametrize("seed", range(40))
def test_order_statistics_agree_in_every_path(seed):
    r = random.Random(seed)
    n = r.choice([1, 2, 39, 40, 100, 4095, 4096, 5000, 12345])
    xs = awkward_samples(r, n)
    buf = array("d", xs)
    nan_free = not any(map(math.isnan, xs))
    ks = {0, n - 1, n // 2, min(max(math.ceil(0.99 * n), 1), n) - 1} | {r.randrange(n) for _ in range(5)}
    for k in ks:
        want = reference_kth(xs, k)
        assert same(stats._kth_numpy(buf, k), want), (k, want)
        assert same(kth_smallest(buf, k), want), (k, want)
        assert same(kth_smallest(xs, k, nan_free=nan_free), want), (k, want)
        if nan_free:
            got = stats._kth_above_threshold(buf, k)
            assert got is None or same(got, want), (k, got, want)


def test_the_threshold_selection_catches_a_p99():
    r = random.Random(9)
    for n in (4096, 20000, 200000):
        for order in ("random", "up", "down"):
            xs = [r.expovariate(1.0) for _ in range(n)]
            if order != "random":
                xs.sort(reverse=order == "down")
            k = math.ceil(0.99 * n) - 1
            got = stats._kth_above_threshold(array("d", xs), k)
            assert got == sorted(xs)[k], (n, order)


def test_observe_statistics_are_the_same_with_numpys_sort(monkeypatch):
    r = random.Random(4)
    samples = [awkward_samples(r, r.choice([40, 100, 5000])) for _ in range(60)]
    python = [observe_stats(array("d", xs)) for xs in samples]
    monkeypatch.setattr(stats, "NUMPY_SORT_FROM", 1)
    with_numpy = [observe_stats(array("d", xs)) for xs in samples]
    for a, b in zip(python, with_numpy):
        assert all(same(x, y) for x, y in zip(a, b)), (a, b)


def reference_time_stats(times, values, start, end, windows=20):
    """Piece by piece: every piece clipped to [start, end] and to every window."""
    n = len(times)
    pieces = []
    for i in range(n):
        a = max(times[i], start)
        b = min(times[i + 1] if i + 1 < n else end, end)
        if b > a:
            pieces.append((a, b, values[i]))
    if not pieces or not end > start:
        return NAN, NAN, NAN, NAN
    mean = exact_total([v * (b - a) for a, b, v in pieces]) / (end - start)
    vals = [v for _, _, v in pieces]
    if any(map(math.isnan, vals)):
        lo = hi = NAN
    else:
        lo = sorted(vals, key=total_order_key)[0]
        hi = sorted(vals, key=total_order_key)[-1]
    if pieces[0][0] == start and len(set(vals)) == 1 and vals[0] != 0 and math.isfinite(vals[0]):
        return vals[0], 0.0, lo, hi  # one value held throughout: its own mean, every window's, no spread
    edges = [start + (end - start) * k / windows for k in range(windows + 1)]
    edges[-1] = end
    avgs = []
    for k in range(windows):
        e0, e1 = edges[k], edges[k + 1]
        parts = []
        for a, b, v in pieces:
            if a >= e0 and b <= e1:
                parts.append(v * (b - a))
            elif min(b, e1) > max(a, e0):
                parts.append(v * (min(b, e1) - max(a, e0)))
        avgs.append(exact_total(parts) / (e1 - e0))
    m = exact_total(avgs) / windows
    var = corrected_squares(avgs, m) / (windows - 1)
    return mean, 2.093 * math.sqrt(var / windows), lo, hi


def test_time_statistics_follow_the_definition():
    r = random.Random(5)
    for _ in range(300):
        n = r.randrange(1, 200)
        times = sorted(r.choice([r.uniform(0, 100), float(r.randrange(0, 100))]) for _ in range(n))
        values = [r.choice([r.uniform(-5, 50), float(r.randrange(0, 9)), -0.0, 0.0]) for _ in range(n)]
        start = r.choice([0.0, r.uniform(0, 50), times[0], times[-1]])
        end = r.choice([100.0, r.uniform(start, 120), times[-1], start + 1e-9])
        got = time_stats(array("d", times), array("d", values), start, end)
        want = reference_time_stats(times, values, start, end)
        assert all(same(g, w) for g, w in zip(got, want)), (got, want, times, values, start, end)


def test_report_and_run_need_no_numpy(tmp_path):
    code = """if True:
        import sys
        from serq.cli import main
        path = sys.argv[1]
        for fmt in (["--json"], []):
            sys.argv = ["serq", "run", path, "--no-progress", "--seed", "2", *fmt]
            try:
                main()
            except SystemExit as e:
                assert not e.code, e.code
        print("numpy" in sys.modules, file=sys.stderr)
    """
    from gauged import PROGRAM as program  # a program with a cache, a gauge and two observes

    path = tmp_path / "gauged.sq"
    path.write_text(program)
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "False", out.stderr
    assert '"used_kv"' in out.stdout and '"response"' in out.stdout  # the JSON report
    assert "\nused_kv " in out.stdout and "\nresponse " in out.stdout  # the text report


def test_the_api_gives_numpy_arrays_over_the_samples():
    import serq_frontend
    import serq_sim

    program = serq_frontend.compile(
        source="""
        pool kv { cap 64; }
        stage d : delay;
        gauge used_kv = used(kv);
        workload { arrive poisson(1); }
        session { hold kv (2) { run d (1); } observe x = now; }
        run { horizon 50; warmup 0; seed 1; }
        """
    )
    report = serq_sim.run(program)
    o = report.observe("x")
    assert isinstance(o.values, np.ndarray) and o.values.dtype == np.float64
    assert o.times.dtype == np.float64 and o.sessions.dtype == np.int64 and o.turns.dtype == np.int32
    assert len(o) == len(o.values) == report.result.instants["x"] > 0  # x = now: an instant
    assert o.values is o.values  # made once
    assert np.shares_memory(o.values, np.asarray(o.values)) and list(o.values) == list(o.buffer("values"))
    g = report.gauge("used_kv")
    assert g.times.dtype == np.float64 and list(g.values) == list(g.buffer("values")) and len(g) == len(g.times)
