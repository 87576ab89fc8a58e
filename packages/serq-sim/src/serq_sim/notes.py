"""The report's warnings about the figures themselves: a run that is not steady, observes left with too
few samples by the warm-up, holds rejected as never fitting. Each names the figures behind it; each is a
``warning:`` (``serq run --strict`` fails on it). Pure Python, as the rest of the report.

Not steady: an observe's samples in the order taken (their time order), cut into 20 batches; the
least-squares slope of the batch means against the batch number, and its t statistic from the residuals
(18 degrees of freedom). The run is not steady when some duration observe (not a test, not an instant)
of at least :data:`TREND_MIN` samples has ``t > TREND_T`` and a fitted rise over the run (slope × 19) of
more than :data:`TREND_RISE` of its mean: its batch means climb through the run, as a queue that grows
without bound makes them, so its mean depends on the horizon. A steady run's batch means scatter about
a level (t of a few at most, from the batches' correlation).
"""

from __future__ import annotations

import math

from .stats import BATCHES, MIN_SAMPLES, floats, total

#: Samples an observe needs for the trend test.
TREND_MIN = 200
#: The slope's t statistic above which the batch means climb.
TREND_T = 6.0
#: ... and the fitted rise over the run, as a share of the mean, above which it matters.
TREND_RISE = 0.5


def trend(x) -> tuple[float, float, float, float] | None:
    """``(t, rise, first, second)`` of samples ``x``: the slope's t statistic over 20 batch means, the
    fitted rise over the run as a share of the mean, and the means of the first and second halves;
    ``None`` when undefined (too few samples, a non-finite or zero mean, no residual scatter and no slope)."""
    x = floats(x)
    n = len(x)
    size = n // BATCHES
    if n < TREND_MIN or size < 1:
        return None
    b = [total(x[k * size:(k + 1) * size]) / size for k in range(BATCHES)]
    if not all(map(math.isfinite, b)):
        return None
    k = BATCHES
    kbar = (k - 1) / 2
    mean = total(b) / k
    sxx = sum((i - kbar) ** 2 for i in range(k))
    slope = total([(i - kbar) * (v - mean) for i, v in enumerate(b)]) / sxx
    resid = total([(v - mean - slope * (i - kbar)) ** 2 for i, v in enumerate(b)])
    se = math.sqrt(resid / (k - 2) / sxx)
    if mean == 0 or (se == 0 and slope == 0):
        return None
    t = math.inf if se == 0 else slope / se
    first, second = total(b[: k // 2]) / (k // 2), total(b[k // 2:]) / (k - k // 2)
    return t, slope * (k - 1) / abs(mean), first, second


def steadiness(names_values, arrivals: int, ended: int) -> list[str]:
    """The not-steady warning, for the first observe whose batch means climb (and how many do)."""
    found = []
    for name, values in names_values:
        r = trend(values)
        if r is not None and r[0] > TREND_T and r[1] > TREND_RISE:
            found.append((name, r))
    if not found:
        return []
    name, (t, rise, first, second) = found[0]
    others = f" (and {len(found) - 1} more observe(s))" if len(found) > 1 else ""
    return [f"warning: the run is not steady: observe {name}{others} climbs through the run: its mean is "
            f"{first:.6g} over the first half of its samples and {second:.6g} over the second (20 batch means: "
            f"rise {rise * 100:.3g} % of the mean, slope t = {t:.3g}); {arrivals} session(s) arrived and "
            f"{ended} ended. Arrivals may outpace the service (a queue that grows without bound) or the "
            "warm-up may be too short: the means depend on the horizon"]


def few_samples(counts, warmup: float) -> list[str]:
    """Observes (and record tables) left with some but fewer than :data:`MIN_SAMPLES` samples."""
    few = [(name, n) for name, n in counts if 0 < n < MIN_SAMPLES]
    if not few:
        return []
    listed = ", ".join(f"{name} {n}" for name, n in few)
    return [f"warning: too few samples after the warm-up (t = {warmup:g}) for a CI and quantiles (at least "
            f"{MIN_SAMPLES}): {listed}; lengthen the run (--horizon) or shorten the warm-up (--warmup)"]


def rejections(pools) -> list[str]:
    """Pools that rejected holds as never fitting: their share of the holds that reached the pool."""
    out = []
    for label, rejected, admitted, cap in pools:
        if rejected:
            share = rejected / (rejected + admitted)
            out.append(f"warning: pool {label} rejected {rejected} hold(s) that can never fit its capacity "
                       f"{cap:g} ({share * 100:.3g} % of the {rejected + admitted} that reached it after the "
                       f"warm-up: {rejected} rejected, {admitted} admitted); their sessions ended there, so "
                       "the latency figures cover only the admitted")
    return out
