"""vLLM's serving metrics from a table of request records (vLLM's ``vllm/benchmarks/serve.py``,
``calculate_metrics``), in seconds:

* TTFT ``first_token - sent``; E2E latency (e2el) ``last_token - sent``;
* TPOT ``(last_token - first_token) / (output - 1)`` of each request with more than one output token
  (a request of one token has none; in goodput it counts as 0, as vLLM counts it);
* request throughput ``completed / duration``, output-token throughput ``sum(output) / duration``,
  total-token throughput ``(sum(prompt) + sum(output)) / duration``, the duration being the measured
  window ``end - warmup`` (vLLM's is the benchmark's wall time);
* goodput: the requests whose every metric named by an SLO is at or below it (``good``), per second; the SLO
  attainment, the fraction of the completed requests that are good, ``good / completed``;
* the prefix-cache hit rate ``sum(cached) / sum(prompt)`` when the table has both columns (lib/vllm.sq's
  ``cached`` is vLLM's ``num_cached_tokens``, the hit of the request's first scheduling: each request
  counted once. vLLM 0.33.0's counters ``vllm:prefix_cache_hits / vllm:prefix_cache_queries`` count in
  tokens the same: a request not preempted before, once, at the step whose waiting loop admits it
  (scheduler.py's "Record at admission so unscheduled lookups are not counted"), a request held at the head
  of the waiting queue for lack of KV blocks with the hit of the step that admits it, over every request
  admitted where this rate is over the recorded ones (docs/language.md); the "Prefix cache hit rate"
  vLLM's logger prints is their ratio over its most recent 1 000 requests,
  ``CachingMetrics(max_recent_requests=1000)``);
* when the table has the column ``admitted`` (lib/vllm.sq's: the request's first admission, vLLM's first
  scheduling), vLLM v1's per-request phase histograms (``vllm/v1/metrics/stats.py``,
  ``IterationStats.update_from_finished_request``), with ``sent`` for vLLM's queued time (the request's
  arrival at the engine, its QUEUED event) and ``admitted`` for its ``scheduled_ts``, the FIRST SCHEDULED
  event (a rescheduling after a preemption leaves it as it was, ``update_from_events``):

  - queue ``admitted - sent``: ``vllm:request_queue_time_seconds`` (queued_time = scheduled_ts - queued_ts);
  - prefill ``first_token - admitted``: ``vllm:request_prefill_time_seconds`` (prefill_time = first_token_ts
    - scheduled_ts); a request preempted before its first token has the wait and the recompute in it;
  - decode ``last_token - first_token``: ``vllm:request_decode_time_seconds`` (decode_time = last_token_ts -
    first_token_ts; first_token_ts is the request's first output: the output processor clears is_prefilling
    there for good, ``vllm/v1/engine/output_processor.py``, so a preemption during the decode is in it);
  - infer ``last_token - admitted``: ``vllm:request_inference_time_seconds`` (inference_time =
    last_token_ts - scheduled_ts), every preemption after the first scheduling in it.

  vLLM takes queued_ts and scheduled_ts in the engine core, so its queue time starts when the core
  receives the request, not at the client's send; a simulated engine has no such gap. A row whose
  ``admitted`` is negative (lib/vllm.sq's -1: never admitted, which no completed request of its is; a
  table of one's own may have it) has no phases: it is left out of these four (their count says how
  many rows they cover), and refused nowhere (recent vLLM observes no phase of a request that finished
  before its first scheduling either: its ``timing`` is None).

Each metric's mean (correctly rounded sum / n), median as ``np.median`` and p90/p95/p99 as
``np.percentile`` (linear interpolation) give them, vLLM's, bit for bit (:func:`quantile`, :func:`median`,
read from the sorted values), but beside an infinite value, where numpy's gives NaN and these the infinity
(:func:`beyond`); the CI is the batch-means half-width of the values in the order of the
records (NaN below 40). A metric of fewer than :data:`NUMPY_FROM` values is computed in Python, so that a
run's report imports no numpy; from there on its sort and its squared deviations are numpy's (imported
then), which give the same floats: a stable sort orders equal values as ``sorted`` does (the only equal
floats that differ are -0.0 and 0.0), and a deviation and its square are the same IEEE operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import sub
from typing import Any

from serq_ir.report import MetricStats, RequestMetrics

from .stats import MIN_SAMPLES, batch_means_ci, total

#: The columns a record table needs for the metric set (prompt is optional: total-token throughput).
NEEDED = ("sent", "first_token", "last_token", "output")
#: From this many values on, a metric's values are sorted and their squared deviations taken by numpy
#: (imported then: its import costs about what sorting 50 000 floats in Python does); below, in Python.
#: The two give the same floats (the module's docstring).
NUMPY_FROM = 100_000
#: Why a program has no request metrics (and so no goodput for ``--slo``).
NO_REQUESTS = ("the program records no requests (a record table with the columns sent, first_token, last_token and "
               "output; lib/vllm.sq's vllm_request records them)")
#: The SLOs ``--slo`` takes, by metric name.
SLO_METRICS = ("ttft", "tpot", "e2el")


def requests_in(columns: Any) -> bool:
    """Whether a record table of these columns is the metric set's: it has every column :data:`NEEDED`
    (the one rule, for a run's tables and for a program's declarations alike)."""
    return all(c in columns for c in NEEDED)


def records_requests(program: Any) -> bool:
    """Whether ``program`` (an IR program) declares a record table of the metric set: what ``--slo`` needs,
    checked before a run (``serq run``, ``serq sweep``), whose report would have no goodput otherwise."""
    return any(requests_in(r.columns) for r in program.records)


def metric_table(records: dict[str, Any]) -> Any | None:
    """The first record table that has the columns the metric set needs, or None."""
    for r in records.values():
        if requests_in(r.columns):
            return r
    return None


def quantile(n: int, q: float, kth: Callable[[int], float]) -> float:
    """numpy's ``percentile(x, q)`` (method 'linear') of ``n`` values whose ``i``-th smallest (from 0) is
    ``kth(i)``, bit for bit: the virtual index ``(n - 1) * (q / 100)`` (numpy divides q by 100 first;
    ``((n - 1) * q) / 100`` differs in the last bits for about a quarter of the samples of p90 and p95),
    its floor and fraction, and numpy's ``_lerp``. Where either neighbour is infinite (numpy's ``_lerp``
    takes ``inf - inf`` there and gives NaN) the rule is :func:`beyond`'s: a rank on a sample is that sample,
    and one between a value and an infinity is that infinity."""
    h = (n - 1) * (q / 100.0)
    lo = math.floor(h)
    a, b, t = kth(lo), kth(min(lo + 1, n - 1)), h - lo
    if not (-math.inf < a and b < math.inf):  # an infinity (or a NaN) on either side
        return beyond(a, b, t)
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t  # numpy's _lerp


def beyond(a: float, b: float, t: float) -> float:
    """The value a fraction ``t`` (0 <= t < 1) of the way from the sorted neighbours ``a <= b`` where either
    is infinite: ``a`` when the rank is on it (``t == 0``) or both are the same infinity, the infinity
    when the other is finite (inf between 4 and inf, -inf between -inf and 4), NaN between -inf and inf
    (or beside a NaN)."""
    if a != a or b != b:
        return math.nan
    if t == 0 or a == b:
        return a
    if math.isinf(a) and math.isinf(b):  # -inf and inf
        return math.nan
    return a if math.isinf(a) else b


def median(n: int, kth: Callable[[int], float]) -> float:
    """numpy's ``median`` (vLLM's median TTFT, TPOT, ITL, E2EL) of ``n`` values as :func:`quantile` takes
    them: the middle value, or the mean of the two middle values, ``(a + b) / 2`` (``np.mean`` of two; of
    a value and an infinity the infinity, of -inf and inf NaN: :func:`quantile`'s rule)."""
    m = n // 2
    return kth(m) if n % 2 else (kth(m - 1) + kth(m)) / 2


def percentile(srt: list[float], q: float) -> float:
    """numpy's ``percentile(x, q)`` of the sorted ``srt``, in Python (:func:`quantile`)."""
    return quantile(len(srt), q, srt.__getitem__)


def sorted_values(values) -> list[float]:
    """``sorted(values)`` (floats without NaN; a list, or from :data:`NUMPY_FROM` values on a numpy array
    too), from :data:`NUMPY_FROM` values on by numpy's stable sort: the same list."""
    if len(values) >= NUMPY_FROM:
        import numpy as np

        return np.sort(np.asarray(values, dtype=np.float64), kind="stable").tolist()
    return sorted(values)


def spread(values, mean: float, n: int) -> float:
    """numpy's ``std`` (vLLM's "Std TTFT", …: the population standard deviation) of the ``n`` values whose
    mean is ``mean``: the square root of the mean squared deviation, its sum exact and rounded once (numpy
    sums pairwise: the two agree to within rounding); NaN when a deviation is (a NaN or an infinite
    value), as numpy's. ``values`` a list, or from :data:`NUMPY_FROM` values on a numpy array too."""
    if n >= NUMPY_FROM:
        import numpy as np

        with np.errstate(all="ignore"):  # (an overflow is inf, as in Python, without numpy's warning)
            d = np.asarray(values, dtype=np.float64) - mean
            sq = total((d * d).tolist())
    else:
        sq = total([(v - mean) * (v - mean) for v in values])
    return math.sqrt(sq / n) if sq == sq else math.nan


def stats_of(values: list[float]) -> MetricStats:
    n = len(values)
    if n == 0:
        nan = math.nan
        return MetricStats(count=0, mean=nan, std=nan, ci=nan, median=nan, p90=nan, p95=nan, p99=nan)
    mean = total(values) / n
    xs = values
    if n >= NUMPY_FROM:  # one array for the spread and the sort (each made its own from the list)
        import numpy as np

        xs = np.array(values, dtype=np.float64)
    std = spread(xs, mean, n)
    if mean != mean and any(v != v for v in values):
        # numpy's median and percentile of values with a NaN are NaN (sorted() has no order for a NaN: the
        # quantiles read from it depended on where the NaN was)
        med = p90 = p95 = p99 = math.nan
    else:
        srt = sorted_values(xs)
        kth = srt.__getitem__
        med, p90, p95, p99 = median(n, kth), quantile(n, 90, kth), quantile(n, 95, kth), quantile(n, 99, kth)
    return MetricStats(count=n, mean=mean, std=std,
                       ci=batch_means_ci(values) if n >= MIN_SAMPLES else math.nan,
                       median=med, p90=p90, p95=p95, p99=p99)


def _columns(table: Any) -> tuple[list[float], list[float], list[float], list[float]]:
    return tuple(table.column(c) for c in NEEDED)


def request_metrics(table: Any, duration: float, itl: Any = None) -> RequestMetrics:
    """The metric set of ``table`` (a :class:`serq_sim.records.Records`), in pure Python; ``itl`` the
    inter-token latency's statistics when measured (``TokenGaps.stats()``, step/tokens.py)."""
    sent, first, last, out = _columns(table)
    n = len(sent)
    ttft = list(map(sub, first, sent))
    e2el = list(map(sub, last, sent))
    tpot = [(la - f) / (o - 1) for f, la, o in zip(first, last, out) if o > 1]

    def per_second(x: float) -> float:
        return x / duration if duration > 0 else math.nan

    output_tokens = total(out)
    prompt_tokens = total(table.column("prompt")) if "prompt" in table.columns else math.nan
    hit_rate = None
    if "cached" in table.columns and "prompt" in table.columns:  # NaN of no rows (no prompt tokens)
        hit_rate = total(table.column("cached")) / prompt_tokens if prompt_tokens > 0 else math.nan
    return RequestMetrics(
        table=table.name, completed=n, duration=duration,
        total_input_tokens=prompt_tokens, total_output_tokens=output_tokens,
        request_throughput=per_second(n), output_throughput=per_second(output_tokens),
        total_token_throughput=per_second(prompt_tokens + output_tokens),
        ttft=stats_of(ttft), tpot=stats_of(tpot), itl=itl,
        e2el=stats_of(e2el), prefix_cache_hit_rate=hit_rate,
        **phases(table, sent, first, last),
    )


def phases(table: Any, sent: list[float], first: list[float], last: list[float]) -> dict[str, MetricStats]:
    """vLLM v1's per-request phases (queue, prefill, decode, infer: :data:`serq_ir.report.REQUEST_PHASES`)
    of the rows whose ``admitted`` is not negative, in record order; none without that column."""
    if "admitted" not in table.columns:
        return {}
    rows = [(s, a, f, la) for s, a, f, la in zip(sent, table.column("admitted"), first, last) if not a < 0]
    return {
        "queue": stats_of([a - s for s, a, _, _ in rows]),
        "prefill": stats_of([f - a for _, a, f, _ in rows]),
        "decode": stats_of([la - f for _, _, f, la in rows]),
        "infer": stats_of([la - a for _, a, _, la in rows]),
    }


def with_slo(m: RequestMetrics, table: Any, slo: dict[str, float]) -> RequestMetrics:
    """``m`` with the goodput and the attainment under ``slo`` (seconds by metric name: ttft, tpot, e2el)."""
    import msgspec

    sent, first, last, out = _columns(table)
    k = 0
    for s, f, la, o in zip(sent, first, last, out):
        value = {"ttft": f - s, "tpot": (la - f) / (o - 1) if o > 1 else 0.0, "e2el": la - s}  # vLLM: 0
        if all(value[name] <= limit for name, limit in slo.items()):
            k += 1
    # kept in the order of SLO_METRICS, not as given: `--slo tpot=0.05,ttft=1` and `--slo ttft=1,tpot=0.05`
    # are one objective, and wrote two reports (the JSON's slo object, the text's "good:" list)
    ordered = {name: slo[name] for name in SLO_METRICS if name in slo}
    ordered.update(slo)
    return msgspec.structs.replace(m, slo=ordered, good=k,
                                   goodput=k / m.duration if m.duration > 0 else math.nan,
                                   attainment=k / m.completed if m.completed > 0 else math.nan)


def check_slo(slo: Any) -> dict[str, float]:
    """``slo`` of :meth:`serq_sim.Report.set_slo` (seconds by metric name) checked by :func:`parse_slo`'s
    rules, each fault naming it: a TypeError for what is no mapping or no real number, a ValueError for a
    name that is no SLO metric and a NaN or negative value. It was a KeyError of the name (``{"nope": 1}``),
    a comparison's or an AttributeError's TypeError (``{"ttft": "1"}``, ``None``), and NaN or a negative
    value made a goodput of 0 silently. An empty mapping is a ValueError, as ``--slo ''`` is refused: it was
    taken for an objective every request meets (a goodput of every request, and a report saying ``265 of 265
    good: )``, the list of what it met empty)."""
    from collections.abc import Mapping

    from serq.errors import did_you_mean
    from serq.numbers import real

    if not isinstance(slo, Mapping):
        raise TypeError(f"slo is a mapping of metric names to seconds ({{'ttft': 1.0}}), not {type(slo).__name__}")
    if not slo:
        raise ValueError(f"slo: no metric given: an SLO is seconds by metric ({{'ttft': 1.0}}), of "
                         f"{', '.join(SLO_METRICS)}")
    out: dict[str, float] = {}
    for name, v in slo.items():
        if name not in SLO_METRICS:
            raise ValueError(f"slo: {name!r} is not a metric of an SLO (one of {', '.join(SLO_METRICS)})"
                             + did_you_mean(name, SLO_METRICS))
        x = real(v)  # (None for what is no real number: a str, a bool, an int beyond the doubles)
        if x is None and isinstance(v, int) and not isinstance(v, bool):
            raise ValueError(f"slo[{name!r}]: an integer of {v.bit_length()} bits is beyond the doubles")
        if x is None:
            raise TypeError(f"slo[{name!r}] is a number of seconds, not {v!r:.60}")
        if x != x:
            raise ValueError(f"slo[{name!r}]: NaN is not a number of seconds")
        if x < 0:
            raise ValueError(f"slo[{name!r}]: an SLO is not negative")
        out[name] = x
    return out


def parse_slo(text: str) -> dict[str, float]:
    """``ttft=1,tpot=0.05`` as ``{"ttft": 1.0, "tpot": 0.05}``; a ValueError says what is wrong, and a blank
    around a NAME is the usage error of ``--set`` and ``--def`` (:func:`serq.loading.split_assignment`, the
    one rule: ``--slo ' ttft=1'`` was read as ``ttft``, the name trimmed, while ``--slo 'ttft= 1'`` was
    refused)."""
    from serq.errors import clipped, did_you_mean
    from serq.loading import split_assignment
    from serq.numbers import BLANKS_HINT, NUMBER_HINT, NotANumber, OutOfRange, number

    out: dict[str, float] = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")  # (the value as given: a number has no spaces around it)
        if eq and name.strip():
            name, value = split_assignment(part, "--slo")
        name = name.strip()  # (for the message of a part with no `=`)
        if not eq or name not in SLO_METRICS:
            raise ValueError(f"{clipped(part.strip())!r}: an SLO is NAME=SECONDS with NAME one of "
                             f"{', '.join(SLO_METRICS)}"
                             + (did_you_mean(name, SLO_METRICS) if eq else ""))
        try:  # serQ's number syntax (float() read 1_000 as 1000, ١٢ as 12, and took spaces around it)
            v = number(value, nan=True)
        except NotANumber as e:
            if isinstance(e, OutOfRange):  # (beyond or below the doubles: said as it is)
                raise ValueError(f"{clipped(part.strip())!r}: {e}") from None
            bare = value.strip(" \t\n\r\f\v")
            hint = (f" ({BLANKS_HINT}: --slo {name}={clipped(bare)})" if BLANKS_HINT in str(e)
                    else f" ({NUMBER_HINT})" if NUMBER_HINT in str(e) else "")
            # (the part as given: 'ttft=1 ' was quoted 'ttft=1', the blank that is refused cut off)
            raise ValueError(f"{clipped(part)!r}: {clipped(value)!r} is not a number of seconds"
                             f"{hint}") from None
        if v != v:  # (the test below refused it as "not negative")
            raise ValueError(f"{clipped(part.strip())!r}: NaN is not a number of seconds")
        if not v >= 0:
            raise ValueError(f"{clipped(part.strip())!r}: an SLO is not negative")
        if name in out:
            raise ValueError(f"{name} is given twice")
        out[name] = v
    return out
