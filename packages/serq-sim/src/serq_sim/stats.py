"""Statistics: batch means, time averages of change points, the online price estimator.

Pure Python, so a run's report needs no numpy: sums are ``math.fsum`` (the exact sum, rounded once), and
an order statistic (:func:`kth_smallest`) is taken in Python below :data:`NUMPY_SORT_FROM` samples and
from numpy's sort (imported then) from there on, which give the same value. The functions take any
sequence of floats: an ``array.array('d')`` (the engine's buffers), a list or a numpy array.

Definitions (docs/simulator.md, "Statistics"):

* ``total(x)``: the exact sum of ``x`` rounded once to the nearest double (``math.fsum``); ``±inf`` when
  it is beyond the double range; NaN when ``x`` has a NaN, or both ``inf`` and ``-inf``; ``+0.0`` when
  it is exactly zero.
* mean ``m = total(x) / n`` (:func:`average`: when ``fsum`` cannot finish the sum, a partial sum beyond
  the double range, the exact sum over ``n`` rounded once); sample variance ``(total((xᵢ - m)²) - total(xᵢ - m)² / n) / (n - 1)``,
  each ``xᵢ - m`` and its square rounded as doubles (the second term, the rounding of ``m``, taken only where
  it can change the first: :func:`_corrected`), taken in units of a power of two ``2**e`` near the
  largest ``|xᵢ|`` when those squares would leave the range of normal doubles (:func:`spread`): the
  figures made from it (cv², a half-width) are then computed in those units, so that samples of ``1e300``
  or of ``1e-300`` get the figures samples of ``1`` scaled by them get.
* the ``k``-th smallest in the order ``-inf < … < -0.0 < +0.0 < … < inf < NaN`` (every NaN alike, and
  returned as ``nan``).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from functools import partial
from itertools import chain, compress, islice, repeat
from math import copysign, fsum
from operator import le, mul, sub

#: Below this many samples an observe has no CI and no p99; at or above it a constant-0 test is noted.
MIN_SAMPLES = 40
#: Batches of the batch-means CI (observes) and windows of a gauge's CI.
BATCHES = 20
#: Student t quantile (0.975) for 19 degrees of freedom.
T19 = 2.093
#: From this many samples on, an order statistic is read from numpy's sort (numpy imported then); below
#: it in pure Python, which is faster than importing numpy there and holds a Python float (32 bytes) per
#: sample it sorts.
NUMPY_SORT_FROM = 1_000_000

NAN = math.nan
INF = math.inf
_DEN = 1 << 1074  # every finite double is an integer multiple of 2**-1074


def _div(a: float, b: float) -> float:
    """``a / b`` as IEEE 754 divides (a zero divisor gives ``±inf`` or NaN, not an exception)."""
    if b != 0:  # a NaN divisor too
        return a / b
    if a != a or a == 0:
        return NAN
    return copysign(INF, a) * copysign(1.0, b)


#: A time-weighted integral the engine keeps (a stage's present and busy, a pool's used, cached, queue and
#: holders, the live count's) is the sum of ``level * dt`` over the spans between the level's changes; a span of
#: HUGE_SPAN or longer (a clock near 1e308: ``run s (1e308)`` under ``horizon inf``) is added to a second
#: sum in units of HUGE_SPAN, ``level * (dt * PER_HUGE)`` (an exact scaling: a power of two), which
#: :func:`time_mean` scales back after dividing by the run's span. Two jobs present for 1e308 made an integral
#: of 2e308, beyond the largest double: the report said inf of a mean of 2. A run without such a span has the
#: second sums 0 and its means are the first sums over the span, as before, to the bit; the first sums of a
#: count cannot overflow (fewer than 2**64 events, each adding a count below 2**64 times a span below 2**512)
HUGE_SPAN = 2.0**512
PER_HUGE = 2.0**-512
#: a pool's units of this many or more are integrated the same way over any span (1e300 units held for 1e10
#: made its integral inf): below it, and below HUGE_SPAN, a level times a span is below 2**768
HUGE_UNITS = 2.0**256


def add_sample(total: float, huge: float, x: float, apart: float = HUGE_SPAN) -> tuple[float, float]:
    """``(total, huge)`` with the sample ``x`` added: to ``huge`` in units of :data:`HUGE_SPAN` when it is
    ``apart`` or more (by default that long: a wait or a service near 1e308), else to ``total``; a sum of
    samples kept as :func:`time_mean` reads it (over their count). Two services of 1e308 summed to inf, their
    mean too."""
    if x < apart:
        return total + x, huge
    return total, huge + x * PER_HUGE


def add_units(total: float, huge: float, x: float) -> tuple[float, float]:
    """``(total, huge)`` with ``x`` units added: to ``huge`` in units of :data:`HUGE_SPAN` when ``x`` is
    :data:`HUGE_UNITS` or more, else to ``total``; a pool's count of units evicted as :func:`units_total`
    reads it. A count of 94 evictions of 6e307 units was inf, and so was the report's figure; now the two
    sums stay finite (fewer than 2**64 amounts below 2**256 sum below 2**320) and give the figure's size."""
    return add_sample(total, huge, x, HUGE_UNITS)


def units_total(total: float, huge: float) -> float:
    """The count :func:`add_units` keeps as one double: ``inf`` when it is beyond the largest double."""
    return total + huge * HUGE_SPAN if huge else total


def shown_units(total: float, huge: float) -> str:
    """The count :func:`add_units` keeps (``huge`` in units of :data:`HUGE_SPAN`), written as ``%g`` writes a
    double (6 significant digits), also where it is beyond the doubles (``5.64e+309``)."""
    x = units_total(total, huge)
    if x != INF:
        return f"{x:g}"
    from decimal import Context, Decimal

    big = Context(prec=400)
    exact = big.add(Decimal(total), big.multiply(Decimal(huge), Decimal(HUGE_SPAN)))  # (each exact)
    e = exact.adjusted()
    m = float(Context(prec=6).plus(exact.scaleb(-e)))  # in [1, 10]: 9.999995 rounds to 10
    if m >= 10.0:
        m, e = m / 10.0, e + 1
    return f"{m:g}e+{e}"


def time_mean(integral: float, huge: float, span: float) -> float:
    """The mean over ``span`` of a level whose integral is ``integral + huge * HUGE_SPAN`` (``huge``: its spans of
    :data:`HUGE_SPAN` or longer, kept apart); NaN for no span."""
    if not span > 0:
        return NAN
    mean = integral / span
    return mean + huge / span * HUGE_SPAN if huge else mean


def floats(x):
    """``x`` as a sequence of Python floats: an ``array.array('d')``, list or tuple as it is; a numpy
    array (or another buffer of doubles) copied into an ``array('d')``; anything else into a list."""
    if isinstance(x, (array, list, tuple)):
        return x
    try:
        mv = memoryview(x)
    except TypeError:
        return [float(v) for v in x]
    with mv:
        if mv.ndim == 1 and mv.format in ("d", "<d", "=d") and mv.c_contiguous:
            out = array("d")
            out.frombytes(mv.cast("B"))
            return out
    return [float(v) for v in x]


def total(x) -> float:
    """The exact sum of the floats in ``x`` (a sequence: it may be read twice) rounded once: see the
    module's docstring."""
    try:
        return fsum(x)
    except ValueError:  # inf + -inf
        return NAN
    except OverflowError:  # a partial sum left the double range; the total may not
        return _exact_total(x)


def _exact_total(x, n: int = 1) -> float:
    """:func:`total` in integers (``x`` read once), over ``n``: slow, for the sums ``fsum`` cannot finish."""
    acc = 0
    pos = neg = False
    for v in x:
        if v != v:
            return NAN
        if v == INF:
            pos = True
        elif v == -INF:
            neg = True
        else:
            num, den = float(v).as_integer_ratio()
            acc += num * (_DEN // den)
    if pos or neg:
        return NAN if pos and neg else (INF if pos else -INF)
    try:
        return acc / (_DEN * n)  # int / int is correctly rounded
    except OverflowError:
        return INF if acc > 0 else -INF


#: samples whose deviations are taken at once by :func:`_squared_deviations` (a list of this many floats)
_CHUNK = 1 << 14


def _squares(d: list) -> map:
    return map(mul, d, d)


def _squared_deviations(x, m: float) -> float:
    """``total((v - m)² for v in x)``."""
    try:
        # the same products in the same order, made by map over a chunk of deviations at a time (no Python
        # code per sample)
        n = len(x)
        chunks = (list(map(sub, x[i:i + _CHUNK], repeat(m))) for i in range(0, n, _CHUNK))
        return fsum(chain.from_iterable(map(_squares, chunks)))
    except ValueError:
        return NAN
    except OverflowError:
        return _exact_total((v - m) * (v - m) for v in x)


def average(x, n: int) -> float:
    """``total(x) / n``, the mean of the ``n`` floats of ``x``; when ``fsum`` cannot finish their sum (a
    partial sum, or the sum, beyond the double range: forty samples of ``1e308``) and none is infinite,
    the exact sum over ``n`` rounded once, so the mean lies between the samples (``total(x) / n`` was
    ``inf``)."""
    try:
        return fsum(x) / n
    except ValueError:  # inf + -inf
        return NAN
    except OverflowError:  # a partial sum left the double range: the exact sum over n, rounded once
        return _exact_total(x, n)


#: the squares of deviations below ``2**-450``, or above ``2**450``, in magnitude leave the normal doubles
_SQUARE_SAFE = 450
#: a sum of squared deviations under this may hold squares that fell below the normal doubles
_SMALL_SQUARES = math.ldexp(1.0, -900)


def square_exponent(x) -> int:
    """The ``e`` of the power of two ``2**e`` that squares of the finite values ``x`` (and of their
    deviations) are taken in: 0 when the largest magnitude is within ``2**±450`` (every such square is a
    normal double, or negligible beside them) or there is none, else the exponent just above it, at least
    -1000 (``2**1000`` lifts the least subnormal to ``2**-74``, and is a double itself). The one rule of
    :func:`spread` and of a sweep's statistics (``serq_sweep.stats.unit``)."""
    big = max(map(abs, x), default=0.0)
    if big == 0 or not math.isfinite(big):
        return 0
    e = math.frexp(big)[1]
    if -_SQUARE_SAFE <= e <= _SQUARE_SAFE:
        return 0
    return max(e, -1000)


def _within_ulps(n: int, m: float, ss: float) -> bool:
    """Whether ``n`` values about ``m`` whose squared deviations sum to ``ss`` are so close that a rounding of
    each, or of ``m``, to the doubles near ``m`` (within ``2 ulp(m)``) can reach the last bits of ``ss``:
    ``4 n ulp(m)²`` at least a quarter of its last place. The one test of :func:`_corrected` and
    :func:`batch_means_ci`: values apart by more (every ordinary sample) keep the figures of before."""
    if not math.isfinite(m):
        return False
    u = math.ulp(m)
    return u * u * n * 2.0**56 >= ss


def _corrected(x, m: float, ss: float) -> float:
    """``ss``, the sum of ``(v - m)²`` over ``x``, less ``(total(v - m))² / n``: the sum of squares about
    the samples' exact mean, of which ``m`` is a rounding (the corrected two-pass sum). The rounding ``δ``
    of the mean adds ``n δ²`` to the squares, ``|δ|`` within ``2 ulp(m)``: it is computed only when that
    bound reaches the last bits of ``ss``, samples equal to some eight digits (1e16 and 1e16 + 2, whose mean
    1e16 + 1 is no double: about 1e16 + 2, which doubled their variance); a sum it cannot change is
    returned as it is."""
    n = len(x)
    if not 0 < ss < INF or not _within_ulps(n, m, ss):
        return ss
    s1 = total(list(map(sub, x, repeat(m))))
    c = s1 * s1 / n
    return max(ss - c, 0.0) if c < INF else ss


def spread(x, m: float) -> tuple[float, int]:
    """``(s, e)``: ``s`` the sum of squared deviations ``total((v - m)²)`` of the samples ``x`` from their
    mean ``m`` in units of ``2**(2e)``. ``e`` is 0 unless those squares leave the range of normal doubles
    (the sum is ``inf`` or below ``2**-900`` and the largest ``|v|`` is beyond ``2**±450``); then the
    deviations are ``v·2**-e - m·2**-e`` with ``2**e`` just above the largest ``|v|`` (a scaling by a power
    of two, exact), so that ``1e300``-sized samples get no infinite variance and ``1e-300``-sized ones no
    zero one."""
    ss = _squared_deviations(x, m)
    if not (ss == INF or ss < _SMALL_SQUARES) or not math.isfinite(m):
        return _corrected(x, m, ss), 0
    if ss == 0 and (m != 0 and -_SQUARE_SAFE <= math.frexp(m)[1] <= _SQUARE_SAFE or not any(x)):
        return ss, 0  # every sample is m (a sample other than m near m would differ by a normal square)
    e = square_exponent(x)
    if not e:
        return _corrected(x, m, ss), 0
    f = math.ldexp(1.0, -e)
    x = list(map(mul, x, repeat(f)))
    return _corrected(x, m * f, _squared_deviations(x, m * f)), e


def _ldexp(v: float, e: int) -> float:
    """``v · 2**e``, ``±inf`` past the double range (``math.ldexp`` raises OverflowError there)."""
    try:
        return math.ldexp(v, e)
    except OverflowError:
        return copysign(INF, v)


def mean_var(x) -> tuple[float, float]:
    """``(mean, sample variance)`` of the sequence ``x`` (NaN where undefined: no samples, one sample); a
    variance beyond the double range is ``inf``."""
    n = len(x)
    if n == 0:
        return NAN, NAN
    m = average(x, n)
    if n < 2:
        return m, NAN
    ss, e = spread(x, m)
    return m, _ldexp(ss / (n - 1), 2 * e) if e else ss / (n - 1)


def batch_means_ci(x, batches: int = BATCHES) -> float:
    """95 % batch-means half-width: ``batches`` consecutive batches of ``len(x) // batches`` samples
    (the remainder at the end is left out), each batch's mean :func:`average`."""
    size = len(x) // batches
    if batches < 2 or size < 1:
        return NAN
    means = [average(x[k * size : (k + 1) * size], size) for k in range(batches)]
    m = average(means, batches)
    if _within_ulps(batches, m, _squared_deviations(means, m)):
        # batch means a few ulps apart are each rounded to the doubles near them, coarse beside their spread
        # (1e16 and 1e16 + 2 alternately: batches of 5 have the means 1e16 + 0.8 and 1e16 + 1.2, rounded to
        # 1e16 and 1e16 + 2, a half-width of 0.48 where theirs is 0.096). Their deviations from m are
        # exact there (values within a factor 2 of m), and their means as fine as the doubles near 0 are.
        means = [average(list(map(sub, x[k * size : (k + 1) * size], repeat(m))), size) for k in range(batches)]
    return _half_width(means)


def _half_width(means: list[float]) -> float:
    """``t · sqrt(var / k)`` over the ``k`` means, the variance in the units of :func:`spread`."""
    k = len(means)
    if k < 2:
        return NAN
    ss, e = spread(means, average(means, k))
    var = ss / (k - 1)
    t = T19 if k == 20 else 2.0
    if not var >= 0:  # var is NaN with a non-finite mean
        return NAN
    return _ldexp(t * math.sqrt(var / k), e) if e else t * math.sqrt(var / k)


def kth_smallest(x, k: int, *, nan_free: bool = False) -> float:
    """The ``k``-th smallest (from 0) of the floats in ``x`` in the order ``-inf < … < -0.0 < +0.0 < … <
    inf < NaN``; ``nan_free``: the caller knows that ``x`` has no NaN.

    From :data:`NUMPY_SORT_FROM` samples on it is read from numpy's sort. Below, in Python: from
    ``sorted(x)``, or, for a ``k`` in the upper half of :data:`_SELECT_FROM` samples or more (a p99),
    from ``sorted`` of the samples at or above a threshold when they include the ``k``-th
    (:func:`_kth_above_threshold`). Every way gives the same value."""
    n = len(x)
    if not 0 <= k < n:
        raise IndexError(f"no {k}-th smallest of {n} samples")
    if n >= NUMPY_SORT_FROM:
        return _kth_numpy(x, k)
    if not nan_free and any(map(math.isnan, x)):
        srt = sorted(v for v in x if v == v)  # NaNs spoil the order sorted() makes; they would go last
        return _kth_of_sorted(srt, k) if k < len(srt) else NAN
    if n >= _SELECT_FROM and 2 * k >= n:
        v = _kth_above_threshold(x, k)
        if v is not None:
            return v
    return _kth_of_sorted(sorted(x), k)


#: From this many samples on, an order statistic in the upper half is selected (:func:`kth_smallest`).
_SELECT_FROM = 4096


def _kth_of_sorted(srt: list, k: int) -> float:
    """``srt[k]`` of a sorted list without NaN, a zero with its sign in the total order: -0.0 and 0.0
    compare equal, so ``sorted`` leaves them as they came."""
    v = float(srt[k])
    if v == 0:
        lo, hi = bisect_left(srt, 0.0), bisect_right(srt, 0.0)
        # the zeros' signs as +-1.0 summed (exactly: whole numbers) by map, no Python step a zero: negative
        # zeros are (count - sum) / 2
        signs = sum(map(copysign, repeat(1.0), islice(srt, lo, hi)))
        negative = (hi - lo - signs) / 2
        return -0.0 if k < lo + negative else 0.0
    return v


def _kth_above_threshold(x, k: int) -> float | None:
    """The ``k``-th smallest of ``x`` (no NaN, a sequence with extended slicing) from the samples not
    below a threshold ``t``: ``t`` is taken from a sorted sub-sample (every ``step``-th sample) a margin
    below the rank of ``k``, so that the samples ``>= t`` (a few hundredths of them for a p99) include the
    ``k``-th; ``None`` when they do not (the caller sorts everything)."""
    n = len(x)
    step = max(n // 2048, 1)
    sample = sorted(x[::step])
    m = len(sample)
    r = k / n
    j = int(m * r - 3.0 * math.sqrt(m * r * (1.0 - r)) - 8.0)
    if j <= 0:
        return None
    above = sorted(filter(partial(le, sample[j]), x))  # every v with t <= v
    below = n - len(above)
    if k < below:
        return None
    return _kth_of_sorted(above, k - below)


def _kth_numpy(x, k: int) -> float:
    import numpy as np

    a = np.asarray(x, dtype=np.float64)
    srt = np.sort(a)  # NaNs go last
    v = float(srt[k])
    if v != v:
        return NAN
    if v == 0:  # the sort (min/max networks) may not keep the zeros' signs: count them in the samples
        lo = int(np.searchsorted(srt, 0.0, side="left"))
        negative = int(np.count_nonzero((a == 0) & np.signbit(a)))
        return -0.0 if k < lo + negative else 0.0
    return v


#: The quantiles of an observe's samples the report gives (p50, p90, p95, p99).
QUANTILES = (0.5, 0.9, 0.95, 0.99)


def rank(q: float, n: int) -> int:
    """The index (from 0) of the ``q``-quantile of ``n`` samples: the ⌈q n⌉-th smallest (nearest rank)."""
    return min(max(math.ceil(q * n), 1), n) - 1


def kths_smallest(x, ks, *, nan_free: bool = False) -> list[float]:
    """:func:`kth_smallest` of each ``k`` in ``ks`` from one sort of ``x``."""
    n = len(x)
    for k in ks:
        if not 0 <= k < n:
            raise IndexError(f"no {k}-th smallest of {n} samples")
    if len(ks) == 1 or n >= NUMPY_SORT_FROM:
        return [kth_smallest(x, k, nan_free=nan_free) for k in ks] if len(ks) == 1 else _kths_numpy(x, ks)
    srt = sorted(x) if nan_free or not any(map(math.isnan, x)) else sorted(v for v in x if v == v)
    return [_kth_of_sorted(srt, k) if k < len(srt) else NAN for k in ks]


def _kths_numpy(x, ks) -> list[float]:
    import numpy as np

    a = np.asarray(x, dtype=np.float64)
    srt = np.sort(a)  # NaNs go last
    out = []
    lo = negative = None
    for k in ks:
        v = float(srt[k])
        if v == 0:  # the sort may not keep the zeros' signs: count them in the samples
            if lo is None:
                lo = int(np.searchsorted(srt, 0.0, side="left"))
                negative = int(np.count_nonzero((a == 0) & np.signbit(a)))
            v = -0.0 if k < lo + negative else 0.0
        out.append(NAN if v != v else v)
    return out


def observe_summary(x, qs=QUANTILES) -> tuple[int, float, float, float, list[float]]:
    """``(count, mean, ci, cv2, [quantile for q in qs])`` of one observe's samples ``x`` (a sequence of
    floats, in the order taken). Non-finite samples (a division by zero in the observed expression) make
    the sums they enter inf or NaN, silently: the report shows them as such (null in JSON). A quantile
    ``q`` is the ⌈q n⌉-th smallest (:func:`rank`), NaN below :data:`MIN_SAMPLES` samples; in it a NaN
    sample is greater than every number, so it is NaN only when the ⌈q n⌉-th smallest is a NaN."""
    x = floats(x)
    n = len(x)
    if n == 0:
        return 0, NAN, NAN, NAN, [NAN] * len(qs)
    mean = average(x, n)
    cv2 = NAN
    if n >= 2 and mean != 0:  # var / mean² in the units of spread: the same for samples scaled by 2**k
        ss, e = spread(x, mean)
        var, m = ss / (n - 1), math.ldexp(mean, -e) if e else mean
        mm = m * m
        # a square of the mean below the normal doubles (or past them) is var / m / m, not a ratio to 0
        cv2 = _div(var, mm) if 0 < mm < INF and mm >= 2.2250738585072014e-308 else _div(_div(var, m), m)
    if n < MIN_SAMPLES:
        return n, mean, NAN, cv2, [NAN] * len(qs)
    ci = batch_means_ci(x)
    # a NaN sample makes the mean NaN
    return n, mean, ci, cv2, kths_smallest(x, [rank(q, n) for q in qs], nan_free=mean == mean)


def observe_stats(x) -> tuple[int, float, float, float, float]:
    """``(count, mean, ci, cv2, p99)`` of one observe's samples ``x``: :func:`observe_summary` with the
    one quantile 0.99."""
    n, mean, ci, cv2, (p99,) = observe_summary(x, (0.99,))
    return n, mean, ci, cv2, p99


def all_zero(x) -> bool:
    """Whether every sample is 0 (``-0.0`` too; NaN is not 0)."""
    return not any(x)


def time_stats(times, values, start: float, end: float,
               windows: int = BATCHES) -> tuple[float, float, float, float]:
    """``(mean, ci, min, max)`` of a piecewise-constant signal given by change points over
    ``[start, end]``: ``values[i]`` holds from ``times[i]`` (increasing) to the next change. The time
    average ``total(vᵢ · lᵢ) / (end - start)`` over the pieces held a positive time ``lᵢ`` inside
    ``[start, end]`` (nothing held before the first change point counts as 0), a batch-means CI over
    ``windows`` equal windows (each window's average the same way, a piece cut at the window's edges),
    and the least and greatest value held for a positive time (NaN if one is NaN; a zero is ``-0.0``
    in the least when some ``-0.0`` was held, ``0.0`` in the greatest when some ``0.0`` was). A value
    before ``start`` holds into it. One finite value held over the whole span is its own mean, with a
    half-width of 0 (the sums of its windows differ in their last bits)."""
    times, values = floats(times), floats(values)
    span = end - start
    n = len(times)
    if not (span > 0) or n == 0:
        return NAN, NAN, NAN, NAN
    # the pieces [a, b) of the change points that reach into [start, end], with their values
    first = max(bisect_right(times, start) - 1, 0)
    last = bisect_left(times, end)  # pieces from here on start at or after the end
    if last <= first:
        return NAN, NAN, NAN, NAN
    a_s = list(times[first:last])
    b_s = list(times[first + 1 : last])
    b_s.append(end)  # the last piece holds to the end (or is cut there)
    v_s = list(values[first:last])
    if a_s[0] < start:
        a_s[0] = start
    lengths = list(map(sub, b_s, a_s))
    if not min(lengths) > 0:  # leave out the pieces held for no time
        keep = [d > 0 for d in lengths]
        a_s, b_s, v_s, lengths = (list(compress(c, keep)) for c in (a_s, b_s, v_s, lengths))
        if not a_s:
            return NAN, NAN, NAN, NAN
    terms = list(map(mul, v_s, lengths))
    lo, hi = _extremes(v_s)
    if lo == hi and lo != 0 and math.isfinite(lo) and a_s[0] == start:
        # one value held over the whole of [start, end] (`gauge g = 3;`, a pool's used + free): its time
        # average is that value and every window's too, so the half-width is 0 (the sums of the pieces'
        # terms rounded to a spread of some ulps, a CI of 4.6e-17 beside a gauge of 3). A zero held
        # throughout has those already, and the sign the sum gives it.
        return lo, (0.0 if windows >= 2 else NAN), lo, hi
    mean = _pieces_mean(terms, span, lambda: (v_s, lengths))
    ci = _window_ci(a_s, b_s, v_s, terms, lengths, start, end, span, windows) if windows >= 2 else NAN
    return mean, ci, lo, hi


def _pieces_mean(terms: list[float], span: float, pieces) -> float:
    """The time average over ``span`` of pieces whose terms (value times the time it is held) are
    ``terms``: their total over ``span``; where that is not finite over a finite span and no value is NaN (a
    term or the total beyond the doubles), :func:`_huge_time_mean` of ``pieces()``, ``(values, lengths)``.
    The one rule of :func:`time_stats`'s mean and of each of its windows' averages."""
    mean = _div(total(terms), span)
    if not math.isfinite(mean) and 0.0 < span < INF:
        v, lengths = pieces()
        if not any(map(math.isnan, v)):
            mean = _huge_time_mean(v, lengths, span)
    return mean


def _huge_time_mean(v: list[float], lengths: list[float], span: float) -> float:
    """:func:`time_stats`'s mean when a value times a duration, or their sum, is beyond the double range
    while no value is NaN (a gauge of 4 held over [0, 1e308]: 4e308; -1e308 held for 10 beside inf, whose
    terms -inf and inf made NaN of a mean of inf): each factor taken in units of
    :data:`HUGE_SPAN` (exact scalings; a product that underflows there is below 2**-50, nothing beside a sum
    beyond 2**1024), the mean scaled back. Inf or NaN only where the mean itself is beyond the doubles."""
    mean = total([(x * PER_HUGE) * (d * PER_HUGE) for x, d in zip(v, lengths)]) / span
    return mean * HUGE_SPAN * HUGE_SPAN


def _extremes(v: list[float]) -> tuple[float, float]:
    if any(map(math.isnan, v)):
        return NAN, NAN
    lo, hi = min(v), max(v)
    if lo == 0:
        lo = -0.0 if any(x == 0 and copysign(1.0, x) < 0 for x in v) else 0.0
    if hi == 0:
        hi = 0.0 if any(x == 0 and copysign(1.0, x) > 0 for x in v) else -0.0
    return lo, hi


def _window_ci(a_s, b_s, v_s, terms, lengths, start, end, span, windows) -> float:
    """The batch-means half-width of :func:`time_stats` over ``windows`` equal windows, each window's average
    as the mean is taken (:func:`_huge_time_mean` where a value times a duration is beyond the doubles)."""
    edges = [start + span * k / windows for k in range(windows + 1)]
    edges[-1] = end
    avgs = []
    for k in range(windows):
        lo, hi = edges[k], edges[k + 1]
        i = max(bisect_right(a_s, lo) - 1, 0)  # the first piece that may reach into the window
        j = bisect_left(a_s, hi)  # pieces from j on start at or after the window's end
        if j <= i:  # the first piece starts after this window: nothing held in it
            avgs.append(0.0)
            continue
        # the pieces between the first and the last lie inside the window: their terms as they are
        parts = terms[i + 1 : j - 1]
        ends = []  # the first and last pieces, cut at the window's edges: (value, time held in the window)
        for p in (i, j - 1) if j - 1 > i else (i,):
            a, b = a_s[p], b_s[p]
            if a >= lo and b <= hi:
                parts.append(terms[p])
                ends.append((v_s[p], lengths[p]))
            else:
                a, b = max(a, lo), min(b, hi)
                if b > a:
                    parts.append(v_s[p] * (b - a))
                    ends.append((v_s[p], b - a))
        # a value held near the largest double for a while (a gauge of 9e306 for 30 s: a term of inf): the
        # window's average as the mean is taken (the half-width was NaN beside a mean)
        avgs.append(_pieces_mean(parts, hi - lo, lambda i=i, j=j, ends=ends: (
            v_s[i + 1 : j - 1] + [v for v, _ in ends], lengths[i + 1 : j - 1] + [d for _, d in ends])))
    return _half_width(avgs)


class PriceEstimator:
    """Online estimates a replica could make of a stage (exponentially weighted, α = 0.01): the gap
    between service starts (λ̂ = 1 / gap), the service time and the wait; ρ̂ = min(λ̂ ŝ, 0.99)."""

    __slots__ = ("last_start", "gap", "service", "wait", "seen")
    ALPHA = 0.01
    RHO_CAP = 0.99

    def __init__(self):
        self.last_start = None
        self.gap = None
        self.service = 0.0
        self.wait = 0.0
        self.seen = 0

    def observe(self, start: float, wait: float, service: float) -> None:
        a = self.ALPHA
        if self.seen == 0:
            self.service, self.wait = service, wait
        else:
            self.service = (1 - a) * self.service + a * service
            self.wait = (1 - a) * self.wait + a * wait
        if self.last_start is not None:
            g = start - self.last_start
            self.gap = g if self.gap is None else (1 - a) * self.gap + a * g
        self.last_start = start
        self.seen += 1

    def estimates(self) -> tuple[float, float, float]:
        if self.gap is not None and self.gap > 0:
            lam = 1.0 / self.gap
            return lam, min(lam * self.service, self.RHO_CAP), self.wait
        return 0.0, 0.0, self.wait

    def price(self, s_h: float, ds: float) -> float:
        lam, rho, w = self.estimates()
        s_m = s_h + ds
        return ds + lam * (s_m * s_m - s_h * s_h) / (2.0 * (1.0 - rho)) + lam * w * ds / (1.0 - rho)
