"""The inter-token latency (ITL) of every step stage: when each output token is produced, and the gap
between consecutive output tokens of a request (vLLM's ``itl``).

A session produces an output token at the end of an iteration in which it is given a decode token, or
in which a prefill of its completes (vLLM samples a token when a request's computed tokens reach its
known ones). A decode token is one that completes a whole token of the decode's work (its tokens left,
rounded up, go down): a decoder given only part of a token (the budget's last fraction,
docs/language.md) that completes none produces no token then (``StepStage._end`` leaves it out of the
jobs it passes here), and the last part of a fractional decode (``decode (1.5)``: 1, then 0.5) is its
last token. The session keeps the time of its last output token (``Session.tok``, -1 for none) and
whether it was preempted since (``Session.tokp``). A gap is taken at every output token that follows
another of the same request: a decode token, after any earlier token of the request; the completion of
a prefill, only when the session was preempted since its last token (the recomputed prefill after a
preemption samples the request's next token; a prefill that completes otherwise begins a request, its
first token, so a P/D program's prefiller token is not followed by a gap across the transfer, and the
decoder's first token opens the request). A ``record`` statement ends the request (``tok`` = -1), and
so does the session's end; the request counts as completed (``StepStage.requests``, after the warm-up)
on the stage of its first output token, when it ends.

The gaps are kept aggregate, so that a decoder served iteration after iteration costs nothing of its
own: the decoders whose previous token was the iteration's start (the previous iteration's end) have
the iteration's duration (end - start) as their gap, a weighted sample; every other gap (the first
decode after a stall, a preemption, a transfer or a wait) is a sample of its own. Both go into one
sequence of runs ``(value, weight)`` in the order of the iterations' ends, a run merged into the one
before when its value is the same (so a steady engine's rounds of one cost are one run). Quantiles are exact (numpy's median and linear interpolation of the
sorted gaps, bit for bit, read from the weighted values); the CI is the batch-means half-width over the gaps in
that order.

The warm-up applies per request, by its send time, as it does to the records (and so to TTFT, TPOT and
E2E): every gap of a request sent at or after the warm-up's end is kept, and none of a request sent
before it, whenever its tokens come. The send time is the record's ``sent`` (of the table the metric set
reads, :func:`serq_sim.metrics.metric_table`), read when the request's first output token opens it:
when every ``record`` of that table takes ``sent`` from one attribute (lib/vllm.sq's ``t0``), that
attribute then; otherwise the first token's time stands for it. Whether the request counts is a flag of
its session (``Session.tokw``), and a step stage keeps how many of its lazy decoders do not count
(``StepStage.nlazy_x``), so the weighted gaps of a round count only the others. (Gaps are kept only
after the warm-up's end, when no request sent later has a token before it.)
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from operator import mul

from serq_ir.report import MetricStats

from ..metrics import NUMPY_FROM, median, quantile
from ..stats import BATCHES, MIN_SAMPLES, _half_width
from .common import EPS


class TokenGaps:
    """The ITL gaps of a run, as runs of equal values: ``values[i]`` taken ``weights[i]`` times."""

    __slots__ = ("values", "weights", "last", "warmup", "sent")

    def __init__(self, warmup: float = 0.0, sent: int | None = None) -> None:
        self.values = array("d")
        self.weights = array("q")
        self.last = math.nan
        #: a request counts when its send time is at least ``warmup``: the attribute ``sent`` when its
        #: first output token opens it (None: that token's time)
        self.warmup = warmup
        self.sent = sent

    def add(self, value: float, weight: int) -> None:
        """``weight`` gaps of ``value`` (seconds)."""
        if value == self.last:
            self.weights[-1] += weight
        else:
            self.values.append(value)
            self.weights.append(weight)
            self.last = value

    def iteration(self, stage, assign: list, start: float, end: float, nlazy: int, pending: list,
                  lazy_done, warm: bool) -> None:
        """The end of an iteration of ``stage`` that ran from ``start`` to ``end``: the output tokens of
        the jobs in ``assign`` still there (a decode given a token, a prefill whose work is done), and
        of the ``nlazy`` lazy decoders (each given a token; those in ``pending``, ``(job, tok)``, had
        their previous token at ``tok``, every other one at ``start``); ``lazy_done`` the lazy jobs whose
        last token this is. Only the gaps of requests that count (``Session.tokw``; the lazy decoders
        that do not: ``stage.nlazy_x``) and that end after the warm-up (``warm``) are kept: the irregular
        ones in ascending order (so the order of the jobs does not matter), then the regular ones."""
        regular = 0
        irr = []  # the irregular gaps
        for job in assign:
            if job.stage is not stage:
                continue
            s = job.owner
            if s is None:
                continue
            if job.mode == "decode":
                tok = s.tok
                if tok == start:
                    if s.tokw:
                        regular += 1
                else:
                    if tok >= 0.0:
                        if s.tokw:
                            irr.append(end - tok)
                    else:  # the request's first token
                        self.open(s, stage, warm, end)
                    s.tokp = False
                s.tok = end
            elif job.work <= EPS:  # a prefill that completes samples a token
                if s.tokp and s.tok >= 0.0:
                    if s.tokw:
                        irr.append(end - s.tok)
                else:  # the request's first token
                    self.open(s, stage, warm, end)
                s.tokp = False
                s.tok = end
        if nlazy:
            regular += nlazy - stage.nlazy_x
            for job, tok in pending:
                if job.lz >= 0:  # still lazy: it got this round's token
                    s = job.owner
                    if tok >= 0.0:
                        if s.tokw:
                            regular -= 1
                            irr.append(end - tok)
                    else:  # the request's first token: it did not count before it opened
                        tokw = s.tokw
                        self.open(s, stage, warm, end)
                        if s.tokw != tokw:  # the lazy count of those not counting was kept by the old flag
                            stage.nlazy_x += 1 if tokw else -1
                        if tokw:  # it was among the counted lazy decoders
                            regular -= 1
                    s.tokp = False
        if lazy_done is not None:
            for job in lazy_done:
                job.owner.tok = end
        if warm:
            if irr:
                if len(irr) > 1:
                    irr.sort()
                for g in irr:
                    self.add(g, 1)
            if regular:
                self.add(end - start, regular)

    def open(self, s, stage, warm: bool, now: float) -> None:
        """``s``'s request has its first output token on ``stage`` at ``now``: a request it had open ends;
        whether the new one counts (its send time against the warm-up)."""
        st = s.tokst
        if st is not None and warm:
            st.requests += 1
        s.tokst = stage
        k = self.sent
        s.tokw = (s.attrs[k] if k is not None else now) >= self.warmup

    @staticmethod
    def close(s, warm: bool) -> None:
        """``s``'s request ends (a ``record``, the session's end): it counts as completed on the stage of
        its first output token."""
        st = s.tokst
        if st is not None:
            if warm:
                st.requests += 1
            s.tokst = None
        s.tok = -1.0

    # ------------------------------------------------------------------ after the run
    def __len__(self) -> int:
        return sum(self.weights)

    def expanded(self) -> list[float]:
        """Every gap, in order (tests; the report never expands them)."""
        return [v for v, w in zip(self.values, self.weights) for _ in range(w)]

    def stats(self) -> MetricStats:
        """Count, mean, standard deviation, CI, median, p90, p95, p99 as :func:`serq_sim.metrics.stats_of` computes them of
        the expanded gaps (the mean's sum of value × weight products, each rounded once)."""
        n = sum(self.weights)
        nan = math.nan
        if n == 0:
            return MetricStats(count=0, mean=nan, std=nan, ci=nan, median=nan, p90=nan, p95=nan, p99=nan)
        vals, ws = self.values, self.weights
        big = len(vals) >= NUMPY_FROM  # (numpy's arrays over the runs: the same floats, metrics.NUMPY_FROM)
        if big:
            import numpy as np

            nv = np.frombuffer(vals, dtype=np.float64)
            nw = np.frombuffer(ws, dtype=np.int64)
            with np.errstate(all="ignore"):  # (an overflow is inf, as in Python, without numpy's warning)
                products = nv * nw
        else:
            products = list(map(mul, vals, ws))
        # every run's product, value × weight: the mean is their exact sum (any order); the CI's batches sum them
        mean = math.fsum(_floats(products) if big else products) / n
        # serq_sim.metrics.spread over the expanded gaps: a run's squared deviations summed as one product
        # (w × d², rounded once, where the expanded sum adds w of them exactly: within rounding)
        try:
            if big:
                with np.errstate(all="ignore"):
                    d = nv - mean
                    d *= d
                    d *= nw  # nw × (d × d), in place (one array of the runs, not three)
                    sq = math.fsum(_floats(d))
                    del d
            else:
                sq = math.fsum(w * ((v - mean) * (v - mean)) for v, w in zip(vals, ws))
        except OverflowError:  # a partial sum past the double range (the terms are squares: no inf - inf)
            sq = math.inf
        std = math.sqrt(sq / n) if sq == sq else nan
        # the runs in ascending order of their values (their indices, sorted by value: no Python step a run),
        # and the gaps up to and including each (an array: one machine word a run): the i-th smallest gap
        # (from 0) is the value of the first run whose sum exceeds i (runs of one value are adjacent; a gap
        # is never -0.0, an end minus an earlier or equal start, so equal values are the same float)
        # (sorted through a list: an array's item is a new float object at each read); numpy's stable sort
        # of the indices is the same order. From NUMPY_FROM runs on, the sorted values and their sums stay
        # numpy's arrays (8 bytes a run each), searched where ``bisect_right`` searches: a list of a float or
        # an int object a run held some 100 bytes a run, and a family of engines at low load has a run an
        # iteration (256 replicas, 200 s: 4.7 million runs, the report's 500 MB)
        if big:
            o = np.argsort(nv, kind="stable")
            ordered = nv[o]
            sums = nw[o]
            del o
            np.cumsum(sums, out=sums)
            search = sums.searchsorted

            def kth(i: int) -> float:
                return float(ordered[int(search(i, side="right"))])
        else:
            listed = vals.tolist()
            order = sorted(range(len(listed)), key=listed.__getitem__)
            cum = array("q", accumulate(map(ws.__getitem__, order)))

            def kth(i: int) -> float:
                return listed[order[bisect_right(cum, i)]]

        # serq_sim.metrics' order statistics (numpy's median and percentile) over the expanded gaps
        med, p90, p95, p99 = median(n, kth), quantile(n, 90, kth), quantile(n, 95, kth), quantile(n, 99, kth)
        ci = self._ci(n, products) if n >= MIN_SAMPLES else nan
        return MetricStats(count=n, mean=mean, std=std, ci=ci, median=med, p90=p90, p95=p95, p99=p99)

    def _ci(self, n: int, products) -> float:
        """The batch-means half-width: 20 consecutive batches of ``n // 20`` gaps (the rest left out).
        A batch's sum is that of its runs' products (value × the run's gaps in the batch), taken exactly
        (``math.fsum``: whatever their order); ``products``, every run's, taken once by :meth:`stats` (a list,
        or from :data:`NUMPY_FROM` runs on numpy's array of them)."""
        size = n // BATCHES
        vals, ws = self.values, self.weights
        cum = array("q", accumulate(ws))  # the gaps up to and including each run, in the runs' order
        means = []
        for j in range(BATCHES):
            lo = j * size
            hi = lo + size  # the batch's gaps are [lo, hi)
            a = bisect_right(cum, lo)  # the run of gap lo
            b = bisect_left(cum, hi)  # the run of gap hi - 1
            if a == b:
                parts = [vals[a] * size]
            else:
                mid = products[a + 1:b]  # (numpy's array from NUMPY_FROM runs on: its floats, as a list's)
                parts = [vals[a] * (cum[a] - lo), *(mid if isinstance(mid, list) else mid.tolist()),
                         vals[b] * (hi - cum[b - 1])]
            means.append(math.fsum(parts) / size)
        return _half_width(means)


#: the floats of a numpy array :func:`_floats` converts to Python floats at a time
_CHUNK = 1 << 14


def _floats(a):
    """The items of the numpy array ``a`` as Python floats, in order, :data:`_CHUNK` at a time (``math.fsum``
    of them is that of ``a.tolist()``, the same floats in the same order, without a list of them all)."""
    for i in range(0, len(a), _CHUNK):
        yield from a[i:i + _CHUNK].tolist()


def sent_slot(program) -> int | None:
    """The attribute every ``record`` of the metric set's table (the first with the columns it needs)
    takes its ``sent`` from, or None (no such table, or ``sent`` is not one attribute)."""
    from serq_ir import nodes as N

    from ..compile import walk
    from ..metrics import requests_in

    for k, d in enumerate(program.records):
        if requests_in(d.columns):
            col = list(d.columns).index("sent")
            slots = {x.values[col].slot if isinstance(x.values[col], N.Attr) else None
                     for x in walk(program, presets=False) if isinstance(x, N.Record) and x.record == k}
            return slots.pop() if len(slots) == 1 else None
    return None


def gaps_of(sim) -> TokenGaps:
    """The run's :class:`TokenGaps` (one for every step stage), made by the first stage that asks."""
    g = getattr(sim, "token_gaps", None)
    if g is None:
        g = sim.token_gaps = TokenGaps(sim.warmup, sent_slot(sim.program))
    return g
