"""What holds most of a stopped run's sessions or samples: the statement most waiting sessions wait at, the
observe (gauge, record) holding most samples. Said in the note of a run stopped by the memory guard or
``--max-samples`` (engine.Simulation.stopped), made once, when the run stops: nothing here runs in the
event loop.

The sessions counted are those that wait: queued at a hold (its first pool's queue), queued at a fifo stage
(its ``run`` statement) and, on the general engine, waiting to grow. The fast tier counts them from its own
queues (``fast._waits``) as this module counts the general engine's (:func:`count_general`):
the same sessions at the same statements."""

from __future__ import annotations

from collections import Counter

from serq.errors import place
from serq_ir import nodes as N

from .compile import walk
from .status import GROWING, QUEUED

#: what a waiting session is doing at its statement
QUEUED_HOLD = "queued at the hold"
QUEUED_RUN = "queued at the run"
GROWING_AT = "waiting to grow at the statement"


def count_general(sim) -> Counter:
    """The general engine's waiting sessions, by ``(what, span)``."""
    out: Counter = Counter()
    seen: set[int] = set()
    for pool in sim.pools:
        for q in (pool.front, pool.queue):
            for x in q:
                if x.status == QUEUED and x.pending is not None and id(x) not in seen:
                    seen.add(id(x))
                    out[(QUEUED_HOLD, x.pending.info.node.span)] += 1
        for x in pool.growers:
            if x.status == GROWING and id(x) not in seen:
                seen.add(id(x))
                span = _frame_span(sim, x)
                out[(GROWING_AT, span)] += 1
    for stage in sim.stages:
        q = getattr(stage, "q", None)
        if q is None or not hasattr(q, "__iter__"):
            continue
        for job in q:
            owner = getattr(job, "owner", None)
            span = getattr(job, "span", None)
            if owner is not None and isinstance(span, int) and id(owner) not in seen:
                seen.add(id(owner))
                out[(QUEUED_RUN, sim.spans[span])] += 1
    return out


def _frame_span(sim, s):
    """The span of the statement session ``s``'s code stands at (its generator's frame), or None."""
    gen = getattr(s, "gen", None)
    frame = getattr(gen, "gi_frame", None)
    compiler = getattr(sim, "compiler", None)
    if frame is None or compiler is None:
        return None
    entry = compiler.sources.get(frame.f_code.co_filename)
    if entry is None:
        return None
    lines, _serial_of, spans = entry
    for j in range(min(frame.f_lineno - 1, len(lines) - 1), -1, -1):
        text = lines[j].lstrip()
        if text.startswith("# @sid "):
            mark = text[7:].strip()
            sid = int(mark) if mark.isdigit() else None
            return spans[sid] if sid is not None and sid < len(spans) else None
    return None


def sessions_note(counts: Counter) -> str:
    """`` (N of them queued at the hold at FILE:LINE:COL)``: the statement most waiting sessions wait at (the
    first in the program's text of those with as many), or ``""`` when none waits."""
    if not counts:
        return ""
    (what, span), n = min(counts.items(), key=lambda kv: (-kv[1], _order(kv[0][1]), kv[0][0]))
    at = f" at {place(span)}" if span is not None else ""
    return f" ({n} of them {what}{at})"


def _order(span) -> tuple:
    return (0, str(span.file), span.line, span.col) if span is not None else (1, "", 0, 0)


def samples_note(sim) -> str:
    """``N of them by observe `x` at FILE:LINE:COL``: the observe, gauge or record holding most samples (the
    first declared of those with as many), or ``""`` when none holds one."""
    p = sim.program
    best = None  # (count, what)
    for k, o in enumerate(sim.obs):
        n = len(o.values)
        if n and (best is None or n > best[0]):
            best = (n, ("observe", k))
    for k, (times, _values) in enumerate(getattr(sim, "gauge_points", ())):
        n = len(times)
        if n and (best is None or n > best[0]):
            best = (n, ("gauge", k))
    for k, t in enumerate(getattr(sim, "record_tables", ())):
        n = len(t) * len(t.columns)
        if n and (best is None or n > best[0]):
            best = (n, ("record", k))
    if best is None:
        return ""
    n, (kind, k) = best
    if kind == "gauge":
        g = p.gauges[k]
        at = f" at {place(g.span)}" if g.span is not None else ""
        return f"{n} of them by gauge {g.name}{at}"
    cls, name = (N.Observe, p.observes[k].name) if kind == "observe" else (N.Record, p.records[k].name)
    field = "observe" if kind == "observe" else "record"
    sites = [x.span for x in walk(p) if isinstance(x, cls) and getattr(x, field) == k and x.span is not None]
    at = ""
    if sites:
        at = f" at {place(sites[0])}"
        if len(sites) > 1:
            at += f" (and {len(sites) - 1} more {'site' if len(sites) == 2 else 'sites'})"
    return f"{n} of them by {kind} {name}{at}"
