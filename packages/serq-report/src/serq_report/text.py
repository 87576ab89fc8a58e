"""The text report: the run line, the observe table, the instants and records lines, the request metrics,
the stage table, the step engines' table, the pool and gauge tables, then the notes and warnings.

Layout (every line ends in ``\\n``, no trailing spaces, sections separated by one blank line, a table
with no rows is left out)::

    run: horizon 1000  end 1000  warmup 100  seed 1  events 52311  arrivals 400  ended 380  turns 1510  mean live 19.8

    observe  count      mean        ci      cv2       p50       p90       p95       p99
    ttft      1490  0.253012  ±0.00123  1.02344  0.170001  0.533012  0.712301  1.20001

    instants (samples only): first_token 1490  done 1490
    records (rows): request 1490

    stage      present  util  completions  throughput  wait  service
    ...

    note: observe hit is constant 0 over 5357 samples

An interrupted run (Ctrl-C) has ``INTERRUPTED`` right after ``run:``; a run stopped early for another
reason (``Result.partial``: ``sigterm``, ``max-events``, ``max-wall``, ...) has ``PARTIAL (reason)``. Tables have their kind as the first
column's heading, names left-aligned and numbers right-aligned, columns two spaces apart, each column as
wide on the screen as its widest cell (:func:`serq.layout.width`: a wide East Asian character or an emoji
takes two columns, a combining accent none). A member of a
stage or pool array (declared ``kv[N]``, N = 1 included) is ``name[i]``, a stage or pool declared
without a size plain ``name`` (its ``index`` is None), so a sweep over an array's size keeps its labels
at 1. The stage table has an ``iterations`` column only
when some stage has a count (``-`` for the others). Rows keep the order of the Result.

Numbers (:func:`format_number`): counts as integers; every other figure with 6 significant digits as
Python's ``format(x, ".6g")`` writes it (``0.253012``, ``1.5e+06``, ``1e-05``), ``nan`` for NaN,
``inf``/``-inf``, and ``0`` for a negative zero. A confidence half-width is prefixed ``±`` unless NaN. The
run line's times (horizon, end, warmup) are read against one another: one whose 6 digits would be another's
though their values differ is shown with the fewest digits that tell them apart (:func:`told_apart`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TextIO

from serq_ir.report import REQUEST_STATS, PoolStats, RequestMetrics, Result, StageStats

from ._result import result_of

__all__ = ["format_number", "render_text", "request_lines", "text_reporter"]


def format_number(x: float) -> str:
    """A figure with 6 significant digits: ``.6g``, ``nan``, ``inf``, ``-inf``; ``-0`` shows as ``0``. ``x`` is a
    real number (serq.numbers.real): a str or a bool is a TypeError (``float()`` read ``"1.5"`` and ``True``
    as numbers, and said "could not convert string to float" of ``"x"``), an int beyond the doubles a
    ValueError (``float()``'s OverflowError)."""
    from serq.numbers import real

    v = real(x)
    if v is None:
        if isinstance(x, int) and not isinstance(x, bool):
            raise ValueError(f"format_number: an integer of {x.bit_length()} bits is beyond the doubles")
        raise TypeError(f"format_number takes a real number, not {type(x).__name__}")
    x = v
    if x == 0.0:
        return "0"
    return format(x, ".6g")


def _int(x: int) -> str:
    return str(int(x))


def _ci(x: float) -> str:
    return "nan" if math.isnan(x) else "±" + format_number(x)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    # aligned by the columns a cell takes on the screen (serq.layout): a name of wide characters, an emoji
    # or a combining accent (an IR file's) takes more or fewer columns than its code points
    from serq.layout import align

    return align([header, *rows], left=1)


def _labels(entries: Sequence[StageStats | PoolStats]) -> list[str]:
    return [e.name if e.index is None else f"{e.name}[{e.index}]" for e in entries]


#: the most significant digits a figure of the run line is shown with: 17 tell every double from every other
MOST_DIGITS = 17


def told_apart(values: Sequence[float]) -> list[str]:
    """The times of the run line (``horizon``, ``end``, ``warmup``), shown beside one another and read
    against one another, each as :func:`format_number` writes it, but for those whose 6 significant digits
    are another's though their values differ (a warm-up of 99.99999999999999 beside a horizon of 100: both
    ``100``, which read as equal): those are shown with the fewest significant digits, one number for them
    all, that tell each from every other of the line (``99.99999999999999`` beside ``100``), at most
    :data:`MOST_DIGITS`, which tell every double apart. Values equal to one another are shown alike."""
    from serq.numbers import real

    nums = [real(v) for v in values]
    shown = [format_number(v) for v in values]
    clash = [i for i, v in enumerate(nums)
             if any(shown[j] == shown[i] and u != v and not (u != u and v != v) for j, u in enumerate(nums))]
    if not clash:
        return shown
    for digits in range(7, MOST_DIGITS + 1):
        trial = list(shown)
        for i in clash:
            trial[i] = format(nums[i], f".{digits}g")
        # apart: two values of the line differ exactly when their texts read as different numbers
        if all((float(trial[i]) == float(trial[j])) == (nums[i] == nums[j])
               for i in range(len(nums)) for j in range(i) if nums[i] == nums[i] and nums[j] == nums[j]):
            return trial
    return trial  # pragma: no cover - 17 digits read back as the double itself


def _run_line(r: Result) -> str:
    horizon, end, warmup = told_apart([r.horizon, r.end, r.warmup])
    fields = [
        ("horizon", horizon),
        ("end", end),
        ("warmup", warmup),
        ("seed", _int(r.seed)),
        ("events", _int(r.events)),
        ("arrivals", _int(r.arrivals)),
        ("ended", _int(r.ended)),
        ("turns", _int(r.turns)),
        ("mean live", format_number(r.mean_live)),
    ]
    if r.partial not in (None, "interrupted"):
        head = f"run: PARTIAL ({r.partial})  "
    else:
        head = "run: INTERRUPTED  " if r.interrupted else "run: "
    return head + "  ".join(f"{k} {v}" for k, v in fields)


def _observes(r: Result) -> list[str]:
    rows = [
        [name, _int(o.count), format_number(o.mean), _ci(o.ci), format_number(o.cv2), format_number(o.p50),
         format_number(o.p90), format_number(o.p95), format_number(o.p99)]
        for name, o in r.observes.items()
    ]
    header = ["observe", "count", "mean", "ci", "cv2", "p50", "p90", "p95", "p99"]
    return _table(header, rows) if rows else []


def _instants(r: Result) -> list[str]:
    if not r.instants:
        return []
    return ["instants (samples only): " + "  ".join(f"{name} {_int(n)}" for name, n in r.instants.items())]


def _records(r: Result) -> list[str]:
    if not r.records:
        return []
    return ["records (rows): " + "  ".join(f"{name} {_int(n)}" for name, n in r.records.items())]


def _requests(r: Result) -> list[str]:
    return [] if r.requests is None else request_lines(r.requests)


def request_lines(m: RequestMetrics) -> list[str]:
    """The ``requests`` section of the text report for the metric set ``m``: its head line (completions,
    tokens, throughputs, prefix-cache hit rate, goodput) and the table of per-request statistics (``serq run``'s
    report, and ``serq metrics`` of a records file)."""
    if m.total_input_tokens == m.total_input_tokens:
        tokens = f"({format_number(m.total_input_tokens)} input, {format_number(m.total_output_tokens)} output tokens)"
        total = f"  total {format_number(m.total_token_throughput)} tok/s"
    else:  # no input tokens counted (the JSON's null): said as such, and no total ("nan input", "total nan tok/s")
        tokens = (f"({format_number(m.total_output_tokens)} output tokens; input not counted: no prompt column, "
                  "or a prompt of NaN)")
        total = ""
    head = (f"requests ({m.table}): completed {_int(m.completed)} over {format_number(m.duration)} s  {tokens}  "
            f"{format_number(m.request_throughput)} req/s  output {format_number(m.output_throughput)} tok/s{total}")
    if m.prefix_cache_hit_rate is not None:
        head += f"  prefix-cache hit rate {format_number(m.prefix_cache_hit_rate)}"
    if m.goodput is not None:
        slo = ", ".join(f"{k} <= {format_number(v)}" for k, v in m.slo.items())
        # the count beside the requests it is of: their ratio is the SLO attainment
        head += f"  goodput {format_number(m.goodput)} req/s ({_int(m.good or 0)} of {_int(m.completed)} good: {slo})"
        if m.attainment is not None:  # (good / completed, the JSON's requests.attainment)
            head += f"  attainment {format_number(m.attainment)}"
    rows = []
    for name in REQUEST_STATS:
        st = getattr(m, name)
        if st is None:
            continue
        rows.append([name, _int(st.count), format_number(st.mean), format_number(st.std), _ci(st.ci),
                     format_number(st.median), format_number(st.p90), format_number(st.p95),
                     format_number(st.p99)])
    return [head, "", *_table(["metric", "count", "mean", "std", "ci", "median", "p90", "p95", "p99"], rows)]


def _stages(r: Result) -> list[str]:
    if not r.stages:
        return []
    with_iterations = any(s.iterations is not None for s in r.stages)
    header = ["stage", "present", "util", "completions", "throughput", "wait", "service"]
    if with_iterations:
        header.append("iterations")
    rows = []
    for label, s in zip(_labels(r.stages), r.stages):
        row = [
            label,
            format_number(s.present),
            format_number(s.utilisation),
            _int(s.completions),
            format_number(s.throughput),
            format_number(s.wait),
            format_number(s.service),
        ]
        if with_iterations:
            row.append("-" if s.iterations is None else _int(s.iterations))
        rows.append(row)
    return _table(header, rows)


def _engines(r: Result) -> list[str]:
    """The step stages' engine statistics: iterations by composition, mean batch and tokens per
    iteration, token utilisation (tokens / budget) beside busy time, completed requests."""
    rows = []
    for label, s in zip(_labels(r.stages), r.stages):
        if s.requests is None:
            continue
        rows.append([label, _int(s.iterations or 0), _int(s.prefill_only or 0), _int(s.decode_only or 0),
                     _int(s.mixed or 0), format_number(s.batch), format_number(s.tokens),
                     format_number(s.token_utilisation), format_number(s.utilisation), _int(s.requests),
                     format_number(s.request_throughput)])
    if not rows:
        return []
    return _table(["engine", "iterations", "prefill-only", "decode-only", "mixed", "batch", "tokens/it",
                   "token util", "busy", "requests", "req/s"], rows)


def _pools(r: Result) -> list[str]:
    if not r.pools:
        return []
    header = [
        "pool",
        "used",
        "cached",
        "queue",
        "holders",
        "wait",
        "admissions",
        "evicted",
        "evicted_units",
        "preemptions",
        "spills",
        "rejections",
        "stuck",
        "over_cap",
    ]
    rows = [
        [
            label,
            format_number(p.used),
            format_number(p.cached),
            format_number(p.queue),
            format_number(p.holders),
            format_number(p.wait),
            _int(p.admissions),
            _int(p.evicted_entries),
            format_number(p.evicted_units),
            _int(p.preemptions),
            _int(p.spills),
            _int(p.rejections),
            _int(p.stuck),
            _int(p.over_cap),
        ]
        for label, p in zip(_labels(r.pools), r.pools)
    ]
    return _table(header, rows)


def _gauges(r: Result) -> list[str]:
    rows = [
        [name, format_number(g.mean), _ci(g.ci), format_number(g.min), format_number(g.max)]
        for name, g in r.gauges.items()
    ]
    return _table(["gauge", "mean", "ci", "min", "max"], rows) if rows else []


def _notes(r: Result) -> list[str]:
    lines = []
    for note in r.notes:
        head = "warning" if note.startswith("warning: ") else "note"  # a warning: what --strict fails on
        text = note.removeprefix(f"{head}: ").rstrip("\n")
        lines.extend(f"{head}: {line}" if i == 0 else f"  {line}" for i, line in enumerate(text.split("\n")))
    return lines


def render_text(report: Any) -> str:
    """The text report of a report (or a bare Result), as a string ending in a newline."""
    r = result_of(report)
    sections = [[_run_line(r)], _observes(r), _instants(r) + _records(r), _requests(r), _stages(r), _engines(r), _pools(r), _gauges(r), _notes(r)]
    return "\n\n".join("\n".join(s) for s in sections if s) + "\n"


def text_reporter(report: Any, out: TextIO) -> None:
    """The ``text`` format: writes :func:`render_text` to ``out``."""
    from ._result import text_out

    text_out(out, "text_reporter")
    out.write(render_text(report))
