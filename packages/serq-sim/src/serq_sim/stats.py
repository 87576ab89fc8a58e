"""Statistics: batch means, time averages of change points, the online price estimator."""

from __future__ import annotations

import math

import numpy as np

#: Below this many samples an observe has no CI and no p99; at or above it a constant-0 test is noted.
MIN_SAMPLES = 40
#: Batches of the batch-means CI (observes) and windows of a gauge's CI.
BATCHES = 20
#: Student t quantile (0.975) for 19 degrees of freedom.
T19 = 2.093

NAN = math.nan


def batch_means_ci(x: np.ndarray, batches: int = BATCHES) -> float:
    """95 % batch-means half-width: ``batches`` consecutive batches of ``len(x) // batches`` samples
    (the remainder at the end is left out)."""
    size = len(x) // batches
    if batches < 2 or size < 1:
        return NAN
    means = x[: size * batches].reshape(batches, size).mean(axis=1)
    return _half_width(means)


def _half_width(means: np.ndarray) -> float:
    k = len(means)
    var = float(np.var(means, ddof=1))
    t = T19 if k == 20 else 2.0
    return t * math.sqrt(var / k)


def observe_stats(values: np.ndarray) -> tuple[int, float, float, float, float]:
    """``(count, mean, ci, cv2, p99)`` of one observe's samples. Non-finite samples (a division by
    zero in the observed expression) make the figures they enter inf or NaN, silently: the report
    shows them as such (null in JSON)."""
    with np.errstate(all="ignore"):
        return _observe_stats(values)


def _observe_stats(values: np.ndarray) -> tuple[int, float, float, float, float]:
    n = len(values)
    if n == 0:
        return 0, NAN, NAN, NAN, NAN
    mean = float(values.mean())
    var = float(values.var(ddof=1)) if n >= 2 else NAN
    cv2 = var / (mean * mean) if n >= 2 and mean != 0 else NAN
    if n < MIN_SAMPLES:
        return n, mean, NAN, cv2, NAN
    ci = batch_means_ci(values)
    srt = np.sort(values)
    idx = min(max(math.ceil(0.99 * n), 1), n) - 1
    return n, mean, ci, cv2, float(srt[idx])


def time_stats(times: np.ndarray, values: np.ndarray, start: float, end: float,
               windows: int = BATCHES) -> tuple[float, float, float, float]:
    """``(mean, ci, min, max)`` of a piecewise-constant signal given by change points over
    ``[start, end]``: the time average, a batch-means CI over ``windows`` equal windows, and the least
    and greatest value held for a positive time. A value before ``start`` holds into it."""
    with np.errstate(all="ignore"):
        return _time_stats(times, values, start, end, windows)


def _time_stats(times: np.ndarray, values: np.ndarray, start: float, end: float,
                windows: int) -> tuple[float, float, float, float]:
    span = end - start
    if not (span > 0) or len(times) == 0:
        return NAN, NAN, NAN, NAN
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    nxt = np.append(t[1:], end)
    a = np.maximum(t, start)
    b = np.minimum(nxt, end)
    keep = b > a
    if not keep.any():
        return NAN, NAN, NAN, NAN
    a, b, v = a[keep], b[keep], v[keep]
    mean = float((v * (b - a)).sum() / span)
    lo, hi = float(v.min()), float(v.max())
    edges = start + span * np.arange(windows + 1) / windows
    edges[-1] = end
    # integral of the signal up to each edge
    cum = np.concatenate(([0.0], np.cumsum(v * (b - a))))
    pos = np.searchsorted(a, edges, side="right") - 1  # the segment each edge falls in (or before)
    integ = np.empty(windows + 1)
    for i, (e, p) in enumerate(zip(edges, pos)):
        if p < 0:
            integ[i] = 0.0
        else:
            integ[i] = cum[p] + v[p] * (min(e, b[p]) - a[p])
    w = np.diff(integ) / np.diff(edges)
    ci = _half_width(w) if windows >= 2 else NAN
    return mean, ci, lo, hi


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
