"""``serq metrics``: vLLM's serving metrics of a records file, whole or by group.

A records file (``serq run --records FILE``, ``serq sweep --records FILE``: ``.csv`` or ``.parquet``) with the
columns of a request (``sent``, ``first_token``, ``last_token``, ``output``; lib/vllm.sq's ``vllm_request``
records them) gives the metric set of ``serq run``'s report (:func:`serq_sim.metrics.request_metrics`: TTFT,
TPOT, E2E latency, the phases with an ``admitted`` column, the prefix-cache hit rate with ``cached`` and
``prompt``, the throughputs, goodput and attainment under ``--slo``) without running the program again:

* ``--by COLUMN`` (repeatable) splits the requests by the values of a column: a replica (``engine``, which
  lib/vllm.sq records as the member of the engine family that served the request), a tenant or a class
  attribute a program records. Each group is a row, and a row ``all`` gives the whole run; a request of a
  group counts in its own throughputs over the run's window, so the groups' req/s add up to the run's.
* ``--where NAME=VALUE`` keeps the rows that hold VALUE in column NAME (``serq plot``'s rule, serq_sweep.rows).
* ``--slo ttft=0.5,tpot=0.05`` judges every request against an objective after the run: goodput and attainment
  for objectives the run was not given.

**The window.** A records file does not hold the run's window (``end - warmup``, the duration of the report's
throughputs). ``--duration SECONDS`` gives it; without it the window is the span of the run's requests, from
the first ``sent`` to the last ``last_token`` (every row of the run, before ``--where``), which is shorter
than the run's by the idle time at its ends: its throughputs are the rates while requests were in the system.
With ``--duration`` equal to the report's, the figures are the report's, bit for bit (the file holds every
float as the run had it), but for ITL, which needs each token's time and is not in the records.

**A sweep's records** hold many runs (the columns ``point``, the swept names, ``seed`` and ``key``): each run is
its own, never pooled with another (their windows overlap, and requests of two loads side by side are no
one workload's), and is labelled by its point, swept values and seed. A key names one run: rows of one key that
differ in a label (the records of two sweeps joined, a cell edited) are an error at the first such cell, naming
the key, the column, both values and the line of the run's first row (they were taken as one run).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click
from serq.errors import UsageError, UserError, clipped, did_you_mean, printable, shown_path
from serq.options import SECONDS
from serq.options import Path as _Path

#: the most groups (rows of the answer, over every run) one call makes: a column of a value a request
#: (``--by sent``) is no grouping
MAX_GROUPS = 10_000

#: the columns that are numbers wherever the table has them (the metric set's, and those it reads when there)
_NUMBERS = ("sent", "first_token", "last_token", "output", "prompt", "cached", "admitted")


class _Rows:
    """The rows of one group as :func:`serq_sim.metrics.request_metrics` reads a record table: ``name``,
    ``columns`` and ``column(name)`` (a list of floats)."""

    __slots__ = ("name", "columns", "_cols")

    def __init__(self, name: str, cols: dict[str, list[float]]):
        self.name = name
        self._cols = cols
        self.columns = list(cols)

    def column(self, name: str) -> list[float]:
        return self._cols[name]


def _key(v: Any, form: bool = False) -> tuple:
    """A cell's group: a number by its value (1 and 1.0 alike), NaN as one value, a text as itself, or with
    ``form`` by its canonical form (serq_sweep.rows.expression_form, by which ``--where`` matches a text of any
    column but a run's own: `` a`` and ``a``, ``~exp( 1 )`` and ``~exp(1)`` one group, as ``--where g=a`` keeps
    both; they were two); numbers sort first, then NaN, then texts."""
    from .rows import _cell_number, expression_form

    n = _cell_number(v)
    if n is None:
        return (2, expression_form(str(v)) if form else str(v))
    if n != n:
        return (1, 0.0)
    return (0, n)


def _label(v: Any) -> Any:
    """A cell as the answer shows it: an integral number as an int, another as a float, a text as it is."""
    from .rows import _cell_number

    n = _cell_number(v)
    if n is None:
        return str(v)
    return int(n) if n == n and n.is_integer() and abs(n) < 2.0**53 else n


def _names(given: Any, what: str) -> list[str]:
    if given is None:
        return []
    if isinstance(given, str):
        given = [given]
    elif not isinstance(given, Iterable) or isinstance(given, bytes):
        # (by=3 was the TypeError "'int' object is not iterable"; by=b"engine" was refused at its byte 101)
        raise UsageError(f"{what}: a column's name or a list of them, not {clipped(repr(given))}")
    out: list[str] = []
    for name in given:
        if not isinstance(name, str) or not name:
            raise UsageError(f"{what}: a column's name, not {clipped(repr(name))}")
        if name in out:
            raise UsageError(f"{what} {clipped(name)} is given twice: group by a column once")
        out.append(name)
    return out


def _duration(duration: Any) -> float | None:
    """``metrics``'s ``duration``, checked as ``serq metrics --duration`` is by its option's type (serq.options.
    SECONDS, the type of every option in seconds): the same values, the same words after the name
    (``duration: -1 is not a positive, finite number of seconds``). A number of another type (numpy's,
    a Fraction, a Decimal) is its value; what is no real number (a bool, a list) is refused."""
    if duration is None:
        return None
    from serq.numbers import real

    if not isinstance(duration, str):
        d = real(duration)
        if d is None:
            raise UsageError(f"duration: {clipped(repr(duration))} is not a number")
        duration = d
    try:
        return SECONDS.parse(duration)
    except ValueError as e:
        raise UsageError(f"duration: {e}") from None


def _slo(slo: Any) -> dict[str, float] | None:
    if slo is None:
        return None
    from serq_sim.metrics import check_slo, parse_slo

    try:
        return parse_slo(slo) if isinstance(slo, str) else check_slo(slo)
    except (TypeError, ValueError) as e:
        raise UsageError(f"--slo: {e}") from None


def _wanted(given: Iterable[str]):
    """The columns of a records file that serq metrics reads, as a function of its header (which the CSV reader,
    serq_sweep.core.read_csv_columns, reads and hands it, as serq plot's curve_columns is handed it): the metric
    set's, ``given`` (the ``--by`` and ``--where`` names) and a sweep's run columns (``point`` … ``seed``,
    ``key``). A Parquet file is read whole."""
    given = list(given)

    def names(header: list[str]) -> list[str]:
        wanted = {*_NUMBERS, *given, "key"}
        if "point" in header and "seed" in header and header.index("point") < header.index("seed"):
            wanted.update(header[header.index("point"):header.index("seed") + 1])
        return [n for n in header if n in wanted]

    return names


def _read(path: str, names: Any) -> Any:
    """The records file ``path`` as a DataFrame (of a CSV file, the columns ``names`` gives of its header), read
    as ``serq plot`` reads records."""
    low = path.lower()
    if not low.endswith((".csv", ".parquet")):
        raise UsageError(f"{shown_path(path)}: serq metrics reads a records file, .csv or .parquet (serq run "
                         "--records FILE, serq sweep --records FILE)")
    try:
        import pandas  # noqa: F401 - the tables are read by pandas
    except ImportError:
        raise UserError("serq metrics needs pandas: pip install 'serq-sweep[pandas]'") from None
    from .plots import _read_records

    return _read_records(path, names)


def _numbers(frame: Any, column: str, where: str) -> Any:
    """Column ``column`` as a float array, or one message at its first cell that is no number (the line quoted,
    when the file is a CSV file)."""
    from .plots import column_floats

    # (a flag is no number: an output of true was 1 token, as the language's flags are none)
    return column_floats(frame, column, f"column {column} does not hold numbers (a request's {column} is a number)",
                         where, flags=False)


def _runs(frame: Any, header: list[str], where_at: str = "") -> tuple[list[str], list[Any]]:
    """A sweep's runs: the columns that label one (``point``, the swept names, ``seed``) and each run's row
    positions, in the order of the file (by ``key``, or by the labels when a sweep's records have no ``key``); a
    run's records (no ``key`` column) are one run, unlabelled."""
    import numpy as np

    i, j = (header.index("point"), header.index("seed")) if "point" in header and "seed" in header else (-1, -1)
    if "key" not in header:
        if i != 0 or j < 0:
            return [], [np.arange(len(frame))]
        # a sweep's records (they begin with point; a run's with session) whose key column was taken out: its
        # runs told apart by their labels, point … seed (they were pooled as one run's requests)
        labels = header[:j + 1]
        keys = list(zip(*(frame[c].tolist() for c in labels)))
    else:
        labels = header[i:j + 1] if 0 <= i < j else ["key"]
        keys = [(k,) for k in frame["key"].tolist()]
    first: dict[Any, list[int]] = {}
    for r, k in enumerate(keys):
        first.setdefault(tuple(map(_key, k)), []).append(r)
    runs = [np.array(rows, dtype=np.int64) for rows in first.values()]
    if "key" in header and labels != ["key"]:
        _one_run_a_key(frame, labels, runs, where_at)
    return labels, runs


def _one_run_a_key(frame: Any, labels: list[str], runs: list[Any], where_at: str) -> None:
    """Refuse a sweep's records where the rows of one ``key`` differ in a label (``point``, a swept name,
    ``seed``): a key names one run (serq_sweep.records), so such rows are two runs under one key (the records of
    two sweeps joined, a cell edited), which were taken as one run, labelled by its first row, their requests
    pooled over one window. The error is at the first cell that differs from its run's first row, naming the
    key, the column and both values, and the line of that first row (a CSV file's lines; a Parquet file's rows,
    counted from 1)."""
    import numpy as np
    from serq_ir.rules import show_number

    from .plots import _Lines

    def said(v: Any) -> str:
        v = _label(v)
        return printable(clipped(repr(v) if isinstance(v, str) else show_number(v)))

    lines = frame.attrs.get("serq_lines")
    lines = lines if isinstance(lines, _Lines) else None
    head = np.empty(len(frame), dtype=np.int64)  # each row's run's first row
    for rows in runs:
        head[rows] = rows[0]
    bad = []  # (row, column) of the first cell of each column that differs from its run's first row
    for c in labels:
        cells = frame[c].to_numpy(dtype=object)
        for r in np.flatnonzero(cells != cells[head]).tolist():  # (NaN differs from itself: _key says)
            if _key(cells[r]) != _key(cells[head[r]]):
                bad.append((r, c))
                break
    if not bad:
        return
    r, c = min(bad, key=lambda rc: (rc[0], labels.index(rc[1])))
    r0 = int(head[r])
    v, v0 = frame[c].iat[r], frame[c].iat[r0]
    at = f"line {int(lines.lines[r0][0])}" if lines is not None else f"row {r0 + 1}"
    why = (f"the rows of the run of key {printable(clipped(str(frame['key'].iat[r])))} differ in column "
           f"{printable(clipped(c))}: {said(v)} here, {said(v0)} at {at}, its first row; a key names one run (one "
           "point and seed), so these are two runs under one key (the records of two sweeps joined, or a cell "
           "edited): give each run its own key, or keep the rows of one")
    located = lines.located(r, c, why) if lines is not None else None
    raise UserError(located or f"{where_at}: row {r + 1}: {why}")


def _span(frame: Any, numbers: dict[str, Any], rows: Any, run: dict[str, Any], where_at: str) -> float:
    """A run's window without ``--duration``: from its first ``sent`` to its last ``last_token`` (NaN cells left
    out; 0 for a run of no rows). One that is no such span (the last token before the first send, an infinite
    time, no request with both times) is an error at the cell that makes it so, asking for ``--duration``: it
    was a window of -3 s, or of 0 s with numpy's warning 'All-NaN slice encountered' on stderr, and rates of
    NaN."""
    import numpy as np
    from serq_report.text import format_number

    from .plots import _Lines

    if not len(rows):
        return 0.0
    sent, last = numbers["sent"][rows], numbers["last_token"][rows]
    of = f" (the run {', '.join(f'{k}={v}' for k, v in run.items())})" if run else ""
    ask = "give the run's window with --duration SECONDS (the report's end - warmup)"
    if np.isnan(sent).all() or np.isnan(last).all():
        column = "sent" if np.isnan(sent).all() else "last_token"
        raise UserError(f"{where_at}: every request{of} has a {column} of NaN, so the run's window is not the "
                        f"span of its requests: {ask}")
    i, j = int(rows[np.nanargmin(sent)]), int(rows[np.nanargmax(last)])
    first, end = float(numbers["sent"][i]), float(numbers["last_token"][j])
    if math.isfinite(first) and math.isfinite(end) and end >= first:
        return end - first
    if end < first:
        row, column = i, "sent"
        why = (f"the requests{of} span no time: the first sent, {format_number(first)}, is after the last "
               f"last_token, {format_number(end)}: {ask}")
    else:
        row, column = (i, "sent") if not math.isfinite(first) else (j, "last_token")
        why = (f"the requests{of} span no finite time: a {column} of {format_number(numbers[column][row])}: "
               f"{ask}")
    lines = frame.attrs.get("serq_lines")
    located = lines.located(row, column, why) if isinstance(lines, _Lines) else None
    raise UserError(located or f"{where_at}: {why}")


class Served:
    """One row of the answer: the run it is of (its labels, empty for a run's own records), the group (the
    ``--by`` columns' values; empty for the whole run), its metric set and its peak concurrency."""

    __slots__ = ("run", "group", "requests", "max_concurrent_requests")

    def __init__(self, run: dict[str, Any], group: dict[str, Any], requests: Any, max_concurrent_requests: int = 0):
        self.run, self.group, self.requests = run, group, requests
        #: vLLM's benchmark's "Peak concurrent requests" of the row's requests (:func:`peak`)
        self.max_concurrent_requests = max_concurrent_requests

    def to_builtins(self) -> dict[str, Any]:
        import msgspec

        return {"run": _labels(self.run), "group": _labels(self.group),
                "requests": msgspec.to_builtins(self.requests),
                "max_concurrent_requests": self.max_concurrent_requests}


def _labels(cells: dict[str, Any]) -> dict[str, Any]:
    """A row's run or group cells as the JSON writes them: an infinite one as the text "inf" or "-inf", as the
    IR's JSON writes one (JSON has no infinity; as null, the groups inf, -inf and NaN were three rows of one
    label); NaN, the group of missing cells, is null."""
    return {k: ("inf" if v > 0 else "-inf") if isinstance(v, float) and math.isinf(v) else v
            for k, v in cells.items()}


def metrics(records: str | os.PathLike[str], *, by: Sequence[str] | str | None = None,
            where: Mapping[str, object] | None = None, slo: Mapping[str, float] | str | None = None,
            duration: float | str | None = None) -> list[Served]:
    """The serving metrics of a records file (the module's docstring): a :class:`Served` for each run and group,
    in the order of the runs in the file, each run's groups by their values (numbers first, in increasing order,
    then NaN, then texts), then its whole (with ``by``). A fault in the file, a column it has not, or a value of
    ``where`` no row holds is a :class:`~serq.errors.UserError`; a bad argument a
    :class:`~serq.errors.UsageError`."""
    import numpy as np
    from serq_sim.metrics import NEEDED, request_metrics, with_slo

    from .rows import _AS_WRITTEN, header_of, selected

    try:
        path = os.fspath(records)
    except TypeError:  # (3, None: os.fspath's "expected str, bytes or os.PathLike object, not int")
        path = None
    if not isinstance(path, str):
        raise UsageError(f"records: a path, not {clipped(repr(records))}")
    by = _names(by, "--by")
    window = _duration(duration)
    slos = _slo(slo)
    frame = _read(path, _wanted([*by, *(str(n) for n in (where or {}))]))
    header = header_of(frame)
    where_at = shown_path(path)
    missing = [c for c in NEEDED if c not in header]
    if missing:
        shown = printable(", ".join(header))  # (a name with a line break split the message's line)
        raise UserError(f"{where_at}: the records have no column {', '.join(missing)}: serq metrics reads a table of "
                        f"requests (the columns {', '.join(NEEDED)}; lib/vllm.sq's vllm_request records them), and "
                        f"this one has {shown if len(shown) <= 200 else shown[:197] + '...'}")
    for name in by:
        if name not in header:
            raise UserError(f"--by {clipped(printable(name))}: {where_at} has no column {clipped(printable(name))} "
                            f"(its columns: {printable(', '.join(header))[:200]}){did_you_mean(name, header)}"
                            + _beside(path, name))
    frame = frame.reset_index(drop=True)
    numbers = {c: _numbers(frame, c, where_at) for c in _NUMBERS if c in header}
    labels, runs = _runs(frame, header, where_at)
    if not runs:
        # (a sweep's records of a header alone: its text was an IndexError traceback, its table a file of no
        # column; a run's records of no row are a run of no requests, which the window and figures say)
        raise UserError(f"{where_at}: the records hold no request of any run (a sweep's records have a row a "
                        "request, labelled by its run): there is no run to give the metrics of")
    keep = np.ones(len(frame), dtype=bool)
    if where:
        kept = selected(frame, where, f"the records {where_at}")
        keep[:] = False
        keep[kept.index.to_numpy()] = True
    group_cells = [frame[c].tolist() for c in by]
    forms = [c not in _AS_WRITTEN for c in by]
    out: list[Served] = []
    columns = [c for c in numbers]
    for rows in runs:
        run = {c: _label(frame[c].iat[int(rows[0])]) for c in labels} if labels else {}
        span = window if window is not None else _span(frame, numbers, rows, run, where_at)
        mine = rows[keep[rows]]
        if where and not len(mine):
            continue  # a run none of whose requests --where keeps (another point's, --where blocks=3000)
        groups: dict[tuple, list[int]] = {}
        shown: dict[tuple, dict[str, Any]] = {}
        if by:
            for r in mine.tolist():
                k = tuple(_key(cells[r], form) for cells, form in zip(group_cells, forms))
                if k not in groups:
                    if len(out) + len(groups) + 2 > MAX_GROUPS:  # (said at once: every row was grouped first)
                        raise UserError(f"--by {', '.join(by)}: {len(groups) + 1} groups or more in one run of "
                                        f"{where_at}; serq metrics makes {MAX_GROUPS} rows at most: group by a "
                                        "column of few values (a replica, a tenant, a class)")
                    groups[k] = []
                    shown[k] = {c: _label(cells[r]) for c, cells in zip(by, group_cells)}
                groups[k].append(r)
        parts = [(shown[k], np.array(groups[k], dtype=np.int64)) for k in sorted(groups)]
        parts.append(({}, mine))
        for group, at in parts:
            table = _Rows(path, {c: numbers[c][at].tolist() for c in columns})
            m = request_metrics(table, span)
            if slos is not None:
                m = with_slo(m, table, slos)
            out.append(Served(run, group, m, peak(numbers["sent"][at], numbers["last_token"][at])))
    return out


def peak(sent: Any, last: Any) -> int:
    """vLLM's benchmark's "Peak concurrent requests" (``max_concurrent_requests``) of requests sent at ``sent`` and
    done at ``last``: the most in flight at once, a sweep over each request's ``[sent, last_token)`` with a
    departure before an arrival at one instant (docs/vllm.md); a request with a NaN time is left out."""
    import numpy as np

    ok = ~(np.isnan(sent) | np.isnan(last))
    times = np.concatenate([last[ok], sent[ok]])
    steps = np.concatenate([np.full(int(ok.sum()), -1, dtype=np.int64), np.ones(int(ok.sum()), dtype=np.int64)])
    if not len(times):
        return 0
    order = np.lexsort((steps, times))  # by time, a departure (-1) before an arrival (+1) at one instant
    return max(int(np.cumsum(steps[order]).max()), 0)


def render(path: str, served: Sequence[Served], by: Sequence[str], duration: float | None,
           slo: bool) -> str:
    """The text of ``serq metrics``: a run's whole as ``serq run``'s requests section; runs and groups as a
    table, a row each."""
    from serq.layout import align
    from serq_report.text import format_number, request_lines

    if duration is None:
        window = ("the window of each run is the span of its requests, from the first sent to the last token "
                  "(--duration SECONDS gives the run's: end - warmup)")
    else:
        window = f"the window of each run is {format_number(duration)} s (--duration)"
    lines = [f"records: {shown_path(path)}; {window}", ""]
    labelled = any(s.run for s in served)
    if not by and not labelled:
        head, *rest = request_lines(served[0].requests)
        head += f"  peak concurrency {served[0].max_concurrent_requests}"
        return "\n".join([*lines, head, *rest]) + "\n"
    run_cols = list(served[0].run) if served else []
    hit = any(s.requests.prefix_cache_hit_rate is not None for s in served)
    phases = any(s.requests.queue is not None for s in served)

    def num(x: Any) -> str:
        return "-" if x is None else format_number(x)

    header = [*run_cols, *by, "completed", "peak", "req/s", "output tok/s"]
    if hit:
        header.append("hit rate")
    header += ["ttft mean", "ttft p50", "ttft p99", "tpot mean", "tpot p99", "e2el mean", "e2el p99"]
    if phases:
        header.append("queue mean")
    if slo:
        header += ["good", "goodput", "attainment"]
    # the label of a run's whole: "all", or "(all)" where a group of the first --by column is "all" itself
    whole = "(all)" if by and any(str(s.group.get(by[0])) == "all" for s in served) else "all"
    rows = []
    for s in served:
        m = s.requests
        row = [str(s.run.get(c, "")) for c in run_cols]
        if by:
            row += [str(s.group[c]) for c in by] if s.group else [whole, *([""] * (len(by) - 1))]
        row += [str(m.completed), str(s.max_concurrent_requests), num(m.request_throughput), num(m.output_throughput)]
        if hit:
            row.append(num(m.prefix_cache_hit_rate))
        row += [num(m.ttft.mean), num(m.ttft.median), num(m.ttft.p99), num(m.tpot.mean), num(m.tpot.p99),
                num(m.e2el.mean), num(m.e2el.p99)]
        if phases:
            row.append(num(m.queue.mean if m.queue is not None else None))
        if slo:
            row += [str(m.good), num(m.goodput), num(m.attainment)]
        rows.append(row)
    if slo and served:
        objective = ", ".join(f"{k} <= {format_number(v)}" for k, v in served[0].requests.slo.items())
        lines[-1:] = [f"good: every request with {objective}", ""]
    return "\n".join(lines + align([header, *rows], left=len(run_cols) + len(by))) + "\n"


def encode(path: str, served: Sequence[Served], by: Sequence[str], duration: float | None) -> str:
    """The JSON of ``serq metrics --json``: the file, the columns grouped by, the window given (null: each run's
    span) and a row each, NaN and infinities as null."""
    import msgspec

    doc = {"records": path, "by": list(by), "duration": duration, "rows": [s.to_builtins() for s in served]}
    return (msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n").decode("utf-8")


def where_items(items: Iterable[str]) -> dict[str, str]:
    from .rows import where_option

    return where_option(list(items))


def table(served: Sequence[Served], by: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The rows as a table (``serq metrics --format csv``, ``-o FILE.parquet``): the run's labels, the ``--by``
    columns (empty for a run's whole, whose ``whole`` is 1) and the metric set's figures by their JSON paths (``completed``,
    ``ttft.p99``, ``slo.ttft``), a column each; a figure a row has not (a phase without ``admitted``) is NaN."""
    import msgspec

    def flat(d: dict[str, Any], head: str, out: dict[str, Any]) -> None:
        for k, v in d.items():
            name = f"{head}{k}"
            if isinstance(v, dict):
                flat(v, name + ".", out)
            elif k != "table":
                out[name] = math.nan if v is None else v

    # a run's label column or a --by column of texts is all texts (a group of missing cells is "nan"), one of
    # numbers all numbers: a column of one type (Parquet holds no other: a swept definition's bodies ~exp(1)
    # and 2 were pyarrow's ArrowTypeError traceback); the run's whole is the row of ``whole`` 1, its --by cells
    # empty (NaN, or "" in a column of texts)
    run_cols = list(served[0].run) if served else []
    texts = {c for c in [*run_cols, *by]
             if any(isinstance(s.group.get(c) if c in by else s.run.get(c), str) for s in served)}
    figures = []
    for s in served:
        figure: dict[str, Any] = {}
        flat(msgspec.to_builtins(s.requests), "", figure)
        figure["max_concurrent_requests"] = s.max_concurrent_requests
        figures.append(figure)
    # a label of the name of a figure (a swept `let duration`, --by completed) or of ``whole`` is written by its
    # JSON path, run.NAME or group.NAME: it was written over by the figure, the rows of a sweep over duration all
    # of the figure's window, those of --by completed told apart by nothing
    taken = {name for figure in figures for name in figure} | ({"whole"} if by else set())
    run_names = {c: f"run.{c}" if c in taken else c for c in run_cols}
    by_names = {c: f"group.{c}" if c in taken else c for c in by}
    names = [*run_names.values(), *(by_names[c] for c in by if c not in run_names), *(["whole"] if by else [])]
    if len(set(names)) < len(names) or taken & (set(names) - {"whole"}):
        twice = next(n for n in names if names.count(n) > 1 or n in taken and n != "whole")
        raise UserError(f"the table's column {clipped(twice)} would be written twice (a label of the run or of "
                        "--by, and a figure's or another label's); give --format json, which keeps them apart")
    columns: dict[str, None] = dict.fromkeys(names)
    rows = []
    for s, figure in zip(served, figures):
        row: dict[str, Any] = {run_names[c]: str(v) if c in texts else v for c, v in s.run.items()}
        for c in by:
            v = s.group.get(c, "" if c in texts else math.nan)
            row[by_names[c] if c not in run_names else run_names[c]] = str(v) if c in texts else v
        if by:
            row["whole"] = 0 if s.group else 1
        row.update(figure)
        columns.update(dict.fromkeys(row))
        rows.append(row)
    return list(columns), rows


def _beside(path: str, name: str) -> str:
    """What a ``--by NAME`` that the records at ``path`` lack is told when another table of the same run has
    the column: ``path`` is one of the files ``--records`` writes a table each (``r.request.csv`` beside
    ``r.kind.csv``: serq.options.record_tables) and a sibling's header names ``name``. lib/vllm.sq's request
    table takes no column of the program's, so a program records a request's kind in a table of its own, and
    the user who asks serq metrics for it by its name is told where it is and to join the two (docs/sweep.md,
    "A column of the program's own"), or, when that sibling is a table of requests itself (the join, saved
    beside them under a name of the same form), to give it; "" otherwise: the first sibling that has the
    column, in record_tables' order."""
    from pathlib import Path as _P

    from serq.options import record_tables
    from serq_sim.metrics import NEEDED

    p = _P(path)
    stem, dot, table = p.stem.rpartition(".")
    if not dot or not stem or not table.isidentifier():
        return ""
    for other in record_tables(str(p.with_name(stem + p.suffix))):
        if _P(other).name == p.name:
            continue
        # (read as the records are: a regular file only, so a FIFO of a sibling's name is not waited on, where
        # open() of one waited for ever for its writer)
        try:
            if p.suffix == ".csv":
                from .core import csv_header

                cols = csv_header(other)
            else:
                import pyarrow.parquet as pq
                from serq.files import open_input

                with open_input(other) as f:
                    cols = pq.read_schema(f).names
        except Exception:  # (unreadable, no CSV, no Parquet: no hint from it, the error stands as it was)
            continue
        if cols is not None and name in cols:
            if all(c in cols for c in NEEDED):  # (a table of requests itself, one joined by hand beside them)
                return (f"; {shown_path(other)} beside it is a table of requests with the column "
                        f"{clipped(printable(name))}: give serq metrics that file")
            return (f"; the column {clipped(printable(name))} is in {shown_path(other)}, another table of the same "
                    "run: join the two on session and turn first, and give serq metrics the joined file "
                    "(docs/sweep.md, \"A column of the program's own\")")
    return ""


#: ``--format`` by the suffix of ``-o FILE`` (any other suffix: text)
_FORMATS = {".json": "json", ".csv": "csv", ".parquet": "parquet"}


@click.command("metrics")
@click.argument("records", type=_Path(exists=True, dir_okay=False, records=True))
@click.option("--by", "by", multiple=True, metavar="COLUMN",
              help="A row per value of this column (engine: a replica; repeatable: a row per combination), and "
                   "the run's whole.")
@click.option("--where", "where", multiple=True, metavar="NAME=VALUE",
              help="Only the requests whose column NAME holds VALUE (repeatable: those that match every one).")
@click.option("--slo", "slo", default=None, metavar="NAME=SECONDS,…",
              help="Judge every request against these objectives (ttft, tpot, e2el): goodput and attainment.")
@click.option("--duration", "duration", type=SECONDS, default=None, metavar="SECONDS",
              help="The run's window, end - warmup, for the throughputs (without it: the span of its requests, "
                   "first sent to last token).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default=None, metavar="NAME",
              help="text (the default), json, or csv (a row per run and group, a column per figure); -o FILE's "
                   "suffix names it when this is not given (.json, .csv, .parquet).")
@click.option("--json", "as_json", is_flag=True, help="Write the rows as JSON (--format json).")
@click.option("-o", "--output", "output", type=_Path(dir_okay=False), default=None, metavar="FILE",
              help="Write to this file (atomically) instead of stdout.")
@click.pass_obj
def metrics_command(pm, records, by, where, slo, duration, fmt, as_json, output) -> None:
    """vLLM's serving metrics of a records file (serq run --records, serq sweep --records; .csv or .parquet) without
    running the program again: TTFT, TPOT, E2E latency and the phases, throughputs, the prefix-cache hit rate, and
    goodput under --slo; a row per replica or any recorded column with --by (serq metrics req.csv --by engine).
    A sweep's records give a row per run. The guide: docs/sweep.md, "serq metrics".

    Exit status: 0; 1 for an error in what RECORDS holds (a column it has not, a cell that is no number) or a
    RECORDS that cannot be read (one that does not exist); 2 for a usage error (a flag, a RECORDS that is a
    folder or no .csv or .parquet file); 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP (nothing is written).

    \b
    Examples:
      serq metrics req.csv --slo ttft=1,tpot=0.05
      serq metrics req.csv --by engine --json -o by_engine.json
    """
    if as_json and fmt not in (None, "json"):
        raise UsageError(f"--json and --format {fmt} name two formats: give one")
    if as_json:
        fmt = "json"
    elif fmt is None:
        fmt = _FORMATS.get(os.path.splitext(output)[1].lower(), "text") if output is not None else "text"
    elif output is not None and output.lower().endswith(".parquet"):
        raise UsageError(f"-o {clipped(output)} is a Parquet table: give no --format, or a .{fmt} file")
    if output is not None:
        from serq.files import check_not_input, check_output

        # refused before the records are read, as every command's output is (docs/security.md): a file under
        # a file or in a folder that does not exist was the system's words after the work ('cannot create a
        # file in its folder p.sq (Not a directory); …')
        check_output(output)
        check_not_input(output, [records])
    rows = metrics(records, by=list(by), where=where_items(where), slo=slo, duration=duration)
    window = None if duration is None else rows[0].requests.duration if rows else None
    if fmt in ("csv", "parquet"):
        from .core import encode_table

        data: str | bytes = encode_table(*table(rows, by), fmt)
    elif fmt == "json":
        data = encode(records, rows, by, window)
    else:
        data = render(records, rows, by, window, slo is not None)
    if output is None:
        import sys

        if isinstance(data, bytes):
            data = data.decode("utf-8")
        sys.stdout.write(data)
        sys.stdout.flush()
        return
    from serq.files import write_atomic

    write_atomic(output, data, inputs=[records])
