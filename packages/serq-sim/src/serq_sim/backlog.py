"""The backlog over the run: the live-session count's time-weighted mean over equal bins of the post-warm-up
run, with the live count and the arrivals at each bin's end (both tiers keep it; the report's not-steady
test, :func:`serq_sim.notes.steadiness`, reads it).

The engine already integrates the live count (``a_live``, reset at the warm-up's end) at every spawn and
end of a session; this keeps that integral at the bins' boundaries. A spawn or an end at or past the next
boundary (one comparison, on the session's path, not an event's) calls :meth:`Backlog.cut`, which closes
every boundary up to now: the live count is constant since the last change, so the integral at a
boundary is exact. The bins start as 1/1024 of :data:`BINS` bins over the warm-up's end to the horizon
(2^-10 time units without a horizon); when :data:`BINS` × 2 are closed, pairs merge (the width doubles),
so a run that reaches its horizon ends with :data:`BINS` bins and one that drains early (``arrivals N``)
with between :data:`BINS` and twice as many (fewer only when it drained within 1/1024 of its span).
"""

from __future__ import annotations

import math
from array import array

INF = math.inf
#: The bins a run that reaches its horizon ends with (between this and twice it when it ends early).
BINS = 20
#: The finest bins: the span over BINS * FINE (a span of FINE / 2**10 time units without a horizon).
FINE = 1024


class Backlog:
    """The bins' ends (``times``), the live count's integral from the warm-up's end to each (``area``),
    the live count at each (``live``) and the arrivals by then (``arrivals``, counted from t = 0);
    ``live0`` and ``arrivals0`` at the warm-up's end."""

    __slots__ = ("start", "horizon", "span", "n0", "step", "next", "times", "area", "live", "arrivals",
                 "live0", "arrivals0")

    def __init__(self, warmup: float, horizon: float):
        self.start = start = max(float(warmup), 0.0)
        self.horizon = horizon
        self.span = horizon - start if horizon < INF else INF
        self.n0 = BINS * FINE
        self.step = 1
        self.times = array("d")
        self.area = array("d")
        self.live = array("d")
        self.arrivals = array("d")
        self.live0 = 0
        self.arrivals0 = 0
        self.next = self._at(1) if self.span > 0 else INF

    def _at(self, i: int) -> float:
        """The end of fine bin ``i`` (1-based)."""
        if self.span == INF:
            try:
                return self.start + i / FINE
            except OverflowError:  # past the largest double: a clock near 1.8e308 reaches no later end
                return INF
        if i >= self.n0:
            return self.horizon if i == self.n0 else INF
        return self.start + self.span * i / self.n0

    def warm(self, live: int, arrivals: int) -> None:
        """The warm-up's end: the live count and the arrivals then."""
        self.live0 = live
        self.arrivals0 = arrivals

    def cut(self, now: float, live: int, live_t: float, a_live: float, arrivals: int) -> float:
        """Close every boundary at or before ``now`` (the live count ``live`` since ``live_t``, its integral
        ``a_live`` then, ``arrivals`` so far); returns the next boundary."""
        times, area, lv, arr = self.times, self.area, self.live, self.arrivals
        while now >= self.next:
            c = self.next
            times.append(c)
            area.append(a_live + live * (c - live_t))
            lv.append(live)
            arr.append(arrivals)
            if len(times) == 2 * BINS:  # merge pairs: keep every second boundary
                for col in (times, area, lv, arr):
                    del col[0::2]
                self.step *= 2
            self.next = self._at((len(times) + 1) * self.step)
        return self.next

    def means(self) -> list[float]:
        """The live count's mean over each closed bin. A bin whose end the clock cannot tell from its start
        (its width below the precision of the times there: a horizon of 5e-324, or bins of 5 time units at
        t = 1e17, where a double's step is 16) lasts no time: its mean is the live count at that instant
        (it was ``ZeroDivisionError``, a traceback at the end of such a run)."""
        out = []
        t0, a0 = self.start, 0.0
        for t, a, live in zip(self.times, self.area, self.live):
            out.append((a - a0) / (t - t0) if t > t0 else live)
            t0, a0 = t, a
        return out
