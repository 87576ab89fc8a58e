"""The CSV report (``serq run --format csv``, or ``-o r.csv``): the report's figures as rows of a table.

Header ``section,name,statistic,value``, then one row per figure, in the report's order (the order of the
JSON report's keys, every list and table in the Result's order)::

    section,name,statistic,value
    run,,horizon,1000.0
    run,,seed,1
    run,,interrupted,0
    observes,ttft,count,5357
    observes,ttft,mean,0.2530123456
    instants,first_token,samples,5357
    records,request,rows,5290
    requests,,completed,5290
    requests,ttft,p99,1.20001234
    requests,slo,ttft,1.0
    stages,engine[0],utilisation,0.999999
    pools,kv,evicted_entries,17
    gauges,full,max,1.0
    notes,,note,observe x is constant 0 over 40 samples
    notes,waits-for-ever,warning,1 session waits for ever at the end of the run (…): …

``section`` is the JSON report's key (``run`` for its top-level figures), ``name`` the observe, gauge,
metric, stage or pool (a member of an array ``name[index]``, as the text report labels it; empty for a
figure of the section itself), or a warning's code (the JSON report's ``codes``: ``not-steady``,
``few-samples``, ``rejected``, …, ``serq_sim.notes.WARNING_CODES``; empty for a note that is no warning), ``statistic`` the figure's key: ``section.name.statistic`` is the figure's
path in a sweep's table (``observes.ttft.p99``; ``requests.completed`` where the name is empty). The run's
``horizon, end, warmup, seed, events, arrivals, ended, turns, mean_live, interrupted`` and, for a partial
run, ``partial`` (why it stopped: ``max-events``, ``sigterm``, ...); an instant's ``samples``, a record
table's ``rows``; every figure a stage or pool has (those it has not, ``None`` in the JSON report, are
left out); the request metrics' table name (``requests,,table,request``) and SLOs (``requests,slo,ttft``);
last each note, ``note`` or ``warning``, its text as the value and a warning's code as its name, so a
script tells the kinds of warning apart by the code, never by the words (as a sweep's ``warnings`` column). What says what was run and not what came
of it (``report_version``, ``serq_version``, ``program``) is in the JSON report only.

Values as the CSV dumps write them (the same run gives the same bytes): a float by ``repr``, the shortest
text that reads back as the same float (``0.1``, ``12.0``, ``1e-05``, ``nan``, ``inf``, ``-inf``), an
integer as it is, a boolean as ``1`` or ``0``; a value is a number but for ``partial``, the table's name
and the notes. Fields are quoted as RFC 4180 says when they hold a comma, a quote or a line break; lines
end in ``\\n``. ``serq run -o FILE`` writes it atomically, as every report.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, TextIO

from ._result import result_of

__all__ = ["csv_reporter", "render_csv"]

#: the header of the CSV report
HEADER = ("section", "name", "statistic", "value")

#: the run's figures, in the report's order (``partial`` only for a partial run)
RUN = ("horizon", "end", "warmup", "seed", "events", "arrivals", "ended", "turns", "mean_live", "interrupted",
       "partial")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return float.__repr__(v)
    return str(v)


def _label(item: dict[str, Any]) -> str:
    return item["name"] if item.get("index") is None else f"{item['name']}[{item['index']}]"


def rows(report: Any) -> Iterator[tuple[str, str, str, Any]]:
    """The rows of the CSV report of ``report`` (a report or a bare Result), ``(section, name, statistic,
    value)``, the value as it is in the report."""
    import msgspec

    r = msgspec.to_builtins(result_of(report))
    for k in RUN:
        if r.get(k) is not None:
            yield "run", "", k, r[k]
    for name, stats in r["observes"].items():
        for k, v in stats.items():
            yield "observes", name, k, v
    for name, n in r["instants"].items():
        yield "instants", name, "samples", n
    for name, n in r["records"].items():
        yield "records", name, "rows", n
    if r.get("requests") is not None:
        for k, v in r["requests"].items():
            if isinstance(v, dict):  # a metric's statistics, or the SLOs
                for stat, x in v.items():
                    yield "requests", k, stat, x
            elif v is not None:
                yield "requests", "", k, v
    for section in ("stages", "pools"):
        for item in r[section]:
            label = _label(item)
            for k, v in item.items():
                if k not in ("name", "index") and v is not None:
                    yield section, label, k, v
    for name, stats in r["gauges"].items():
        for k, v in stats.items():
            yield "gauges", name, k, v
    codes = r.get("codes") or []  # (a Result made without them, or read back from a report before version 6)
    for i, note in enumerate(r["notes"]):
        head = "warning" if note.startswith("warning: ") else "note"
        code = codes[i] if i < len(codes) else None
        yield "notes", code or "", head, note.removeprefix(f"{head}: ").rstrip("\n")


def render_csv(report: Any) -> str:
    """The CSV report of ``report`` (a report or a bare Result), as a string ending in a newline."""
    import csv  # (here: the module is imported whenever the formats are registered, by every serq run)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    w.writerows((s, n, k, _value(v)) for s, n, k, v in rows(report))
    return buf.getvalue()


def csv_reporter(report: Any, out: TextIO) -> None:
    """The ``csv`` format: writes :func:`render_csv` to ``out``."""
    from ._result import text_out

    text_out(out, "csv_reporter")
    out.write(render_csv(report))
