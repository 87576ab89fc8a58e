"""Statistics across seeds: Student t quantiles, means with 95 % confidence half-widths, paired and unpaired
differences. Pure Python (``math.fsum``), no scipy."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

#: the 0.975 quantile of the standard normal (the limit of :func:`t975` as the degrees of freedom grow)
_Z975 = 1.959963984540054


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function ``I_x(a, b)`` (modified Lentz),
    taken until a step changes it by less than the double's precision."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    c, h = 1.0, d
    for m in range(1, 1000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _upper(t: float, v: float) -> float:
    """``P(T > t)`` for Student's t of ``v`` degrees of freedom and ``t >= 0``: ``I_x(v/2, 1/2) / 2`` with
    ``x = v / (v + t^2)``, its complement ``t^2 / (v + t^2)`` written out (no cancellation near 1)."""
    a, b = v / 2.0, 0.5
    t2 = t * t
    x, y = v / (v + t2), t2 / (v + t2)
    if y <= 0.0:
        return 0.5
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    if x < (a + 1.0) / (a + b + 2.0):
        i = math.exp(lbt) * _beta_cf(a, b, x) / a
    else:
        i = 1.0 - math.exp(lbt) * _beta_cf(b, a, y) / b
    return i / 2.0


def _density(t: float, v: float) -> float:
    return math.exp(math.lgamma((v + 1.0) / 2.0) - math.lgamma(v / 2.0) - 0.5 * math.log(v * math.pi)
                    - (v + 1.0) / 2.0 * math.log1p(t * t / v))


@functools.lru_cache(maxsize=4096)
def t975(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (NaN below 1), a fractional ``df``
    (Welch's) as it is: what ``scipy.stats.t.ppf(0.975, df)`` gives, to about 1e-13 relative (2.5705818356363
    at 5, 2.0930240544083 at 19). Newton's method on the upper tail ``P(T > t) = 0.025`` (the regularized
    incomplete beta function) inside a bracket it keeps, bisecting where a step would leave it; past 1 000
    degrees of freedom the Cornish-Fisher expansion around the normal quantile to its fourth term, whose
    error there is below 1e-15. It was the usual table of three decimals up to 30 (2.571 at 5), with
    Welch's degrees of freedom rounded down."""
    if not df >= 1:
        return math.nan
    v = float(df)
    if v > 1000.0:
        if v == math.inf:
            return _Z975
        z = _Z975
        return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
                + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
                + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4))
    lo, hi = 0.0, 2.0
    while _upper(hi, v) > 0.025:  # (12.7 at 1 degree of freedom: hi 16)
        lo, hi = hi, hi * 2.0
    t = (lo + hi) / 2.0
    for _ in range(200):
        q = _upper(t, v) - 0.025
        if q > 0:
            lo = t
        else:
            hi = t
        nt = t + q / _density(t, v)
        if not lo < nt < hi:
            nt = (lo + hi) / 2.0
        if abs(nt - t) <= 2e-16 * t:
            return nt
        t = nt
    return t


def finite(xs: Sequence[float]) -> list[float]:
    return [float(x) for x in xs if x is not None and isinstance(x, (int, float)) and math.isfinite(x)]


def mean(v: Sequence[float]) -> float:
    """The mean of finite values ``v`` (NaN of none): their exact sum over their count, rounded once, and
    held between the least and the greatest value (the mean of values all the same is that value). A sum
    past the double range (``1e308`` twice) is taken in fractions, so the mean, which lies between the
    values, is still theirs (``math.fsum`` raised OverflowError)."""
    if not v:
        return math.nan
    try:
        m = math.fsum(v) / len(v)
    except OverflowError:
        from fractions import Fraction

        return float(sum(map(Fraction, v)) / len(v))
    # the quotient's rounding may take it past the values when they are (nearly) equal: ten of 0.1 have the
    # mean 0.1, but fsum's 1.0 over 10 is not always the value (one in nine such means was off by an ulp),
    # and the sd and the CIs of a figure the same at every seed were 1e-14 where they are 0
    lo, hi = min(v), max(v)
    return lo if m < lo else hi if m > hi else m


def unit(values: Sequence[float]) -> float:
    """The factor the squares of ``values`` (finite) and of their deviations are taken in: 1.0 when the
    largest magnitude is within ``2**+-450``, else ``2**-e`` with ``2**e`` just above it
    (``serq_sim.stats.square_exponent``, the report's rule), which scales every value exactly (``1e300``
    and ``1e-300`` alike; the squares of ``1e-200`` underflowed to 0, so an sd or a CI of such figures was
    0)."""
    from serq_sim.stats import square_exponent

    e = square_exponent(values)
    return math.ldexp(1.0, -e) if e else 1.0


def mean_sd(xs: Sequence[float]) -> tuple[int, float, float]:
    """``(n, mean, sample standard deviation)`` of the finite values of ``xs`` (NaN where undefined; an sd
    beyond the double range is ``inf``). The deviations are squared in the units of :func:`unit` (exact:
    values of ``1e300`` or ``1e-300`` get the sd their values in units of 1 get, scaled)."""
    v = finite(xs)
    n = len(v)
    if n == 0:
        return 0, math.nan, math.nan
    m = mean(v)
    if n < 2:
        return n, m, math.nan
    f = unit(v)
    if f == 1.0:
        sd = math.sqrt(math.fsum((x - m) ** 2 for x in v) / (n - 1))
    else:
        mf = m * f
        sd = math.sqrt(math.fsum((x * f - mf) ** 2 for x in v) / (n - 1)) / f  # past the range: inf
    return n, m, sd


def mean_ci(xs: Sequence[float]) -> tuple[int, float, float, float]:
    """``(n, mean, 95 % half-width, sd)`` over the finite values (``t975(n-1) * sd / sqrt(n)``)."""
    n, m, sd = mean_sd(xs)
    ci = t975(n - 1) * sd / math.sqrt(n) if n >= 2 else math.nan
    return n, m, ci, sd


def paired(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """``b - a`` over pairs (seeds) where both are finite: the mean difference, its paired 95 % half-width
    (t over the differences), the unpaired (Welch) half-width the same runs would give as two independent
    samples, and the variance reduction ``1 - var(b - a) / (var(a) + var(b))``, taken as ``2 cov(a, b) /
    (var(a) + var(b))`` where pairing removes less than half (0 exactly for an arm the same at every seed);
    every variance in the units of :func:`unit`, so that figures of ``1e-200`` or ``1e300`` get the CIs and the reduction their
    values in units of 1 get. The means ``a`` and ``b`` are each arm's over its own finite values: a figure
    only one arm has (a pool or a stage the other program does not declare) shows that arm's mean and NaN
    beside it (both were NaN, as if neither arm had it); with every pair whole they are the pairs' means.
    ``n`` is the number of pairs, ``n_a`` and ``n_b`` the values each arm's mean is over."""
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None
             and math.isfinite(x) and math.isfinite(y)]
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    n, d, ci_p, sd_d = mean_ci([y - x for x, y in pairs])
    _, _, sa = mean_sd(xs)
    _, _, sb = mean_sd(ys)
    n_a, ma, _ = mean_sd([x for x in a if x is not None and math.isfinite(x)])
    n_b, mb, _ = mean_sd([y for y in b if y is not None and math.isfinite(y)])
    if n >= 2:
        # the variances in the units of the sds (unit: sds of 1e-200 have squares that underflow to 0)
        f = unit([s for s in (sa, sb, sd_d) if math.isfinite(s)])
        sa_f, sb_f, sd_f = sa * f, sb * f, sd_d * f
        va, vb = sa_f * sa_f / n, sb_f * sb_f / n
        se = math.sqrt(va + vb)
        # Welch-Satterthwaite, (va + vb)^2 / ((va^2 + vb^2) / (n - 1)), as the ratio r of the smaller
        # variance to the larger: the fourth powers of sds within the unit's range (2**+-450) left the
        # double range from about 1e+-77 on (an OverflowError or a ZeroDivisionError); equal sds give
        # 2 (n - 1), a zero one n - 1
        lo, hi = sorted((va, vb))
        r = lo / hi if hi > 0 else 1.0
        df = (n - 1) * (1 + r) ** 2 / (1 + r * r)
        ci_u = t975(df) * se / f
        tot = sa_f * sa_f + sb_f * sb_f
        # 1 - var(b - a) / (var(a) + var(b)) is 2 cov(a, b) / (var(a) + var(b)). Near 0 the difference of two
        # nearly equal numbers is the rounding of each: an arm the same at every seed, which pairing cannot
        # help, had a reduction of +-1e-14 (printed -0.0%); there the covariance is taken, 0 exactly for such
        # an arm (its deviations are 0: its mean is its value). Near 1 the difference is exact (arms equal at
        # every seed have var(b - a) = 0 and the reduction 1). An arm the same at every seed beside one that
        # varies less than the other's last digit (1.0 against 1e-20, 2e-20, 4e-20) has differences that round
        # to one value, var(b - a) 0 where it is var(b): its reduction is 0, its covariance's, without them
        ratio = sd_f * sd_f / tot if tot > 0 else math.nan
        if tot > 0 and (sa_f == 0 or sb_f == 0):
            reduction = 0.0
        elif ratio > 0.5:
            ma_f, mb_f = mean(xs) * f, mean(ys) * f
            cov = math.fsum((x * f - ma_f) * (y * f - mb_f) for x, y in pairs) / (n - 1)
            reduction = 2 * cov / tot
        else:
            reduction = 1 - ratio
    else:
        ci_u = reduction = math.nan
    return {"n": n, "a": ma, "b": mb, "diff": d, "ci_paired": ci_p, "ci_unpaired": ci_u,
            "variance_reduction": reduction, "n_a": n_a, "n_b": n_b}
