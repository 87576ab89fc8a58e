"""The report of a run: :class:`serq_ir.report.Result` plus each observe's samples and each gauge's change
points, which the Python API gives as numpy arrays.

The report is made without numpy (the statistics are :mod:`serq_sim.stats`): the samples stay in the
engine's ``array.array`` buffers, and :class:`ObserveData` and :class:`GaugeData` import numpy and make
their arrays (views of those buffers, ``numpy.frombuffer``) when one is first read.
"""

from __future__ import annotations

import math
import re
from typing import Any

from serq_ir.report import GaugeStats, ObserveStats, PoolStats, ProgramInfo, Result, StageStats

from .stats import MIN_SAMPLES, all_zero, observe_summary, time_mean, time_stats, units_total


def _array(buf: Any, dtype: str) -> Any:
    """``buf`` as a read-only numpy array of ``dtype`` (:func:`read_only`): a numpy array as it is, an
    ``array.array`` (or another buffer) as a view of its memory, a list or tuple copied; a fresh empty array
    when there are none."""
    import numpy as np

    if isinstance(buf, np.ndarray):
        return read_only(buf)
    if isinstance(buf, (list, tuple)):
        return read_only(np.array(buf, dtype=dtype))
    return read_only(np.frombuffer(buf, dtype=dtype) if len(buf) else np.zeros(0, dtype))


def read_only(a: Any) -> Any:
    """A read-only view of the numpy array ``a``. A report hands out its samples and records as views of the
    run's own buffers, kept and handed out again at every read: a caller's ``values *= 1000`` (seconds to
    milliseconds, in place) changed the report, so that its next read, its dumps and its requests' figures
    (``set_slo``) gave the changed numbers. Writing into one is numpy's ValueError ("assignment destination
    is read-only"); ``values * 1000`` is a new array, the caller's own."""
    view = a.view()
    view.flags.writeable = False
    return view


def _named(table: Any, name: Any, kind: str, where: str = "the program has") -> Any:
    """``table[name]``, the one rule of the report's look-ups by name (an observe, a gauge, an observe's
    statistics, a column): a name that is no str is a TypeError (a list was "unhashable type"), one the
    table has not a KeyError naming it and the names there are (``stats`` and ``buffer`` raised the bare
    KeyError of the name)."""
    if not isinstance(name, str):
        raise TypeError(f"the name of {'an' if kind[0] in 'aeiou' else 'a'} {kind} is a str, not {type(name).__name__}")
    try:
        return table[name]
    except KeyError:
        from serq.errors import did_you_mean

        raise KeyError(f"no {kind} {name!r} ({where}: {', '.join(table) or 'none'})"
                       + did_you_mean(name, table)) from None


class TableNotNamed(KeyError):
    """``records()`` (``record_table()``) without a name, of a program that has no record table or several: the
    tables there are and how to name one. A KeyError (a look-up that found no one table), shown as its words:
    the bare KeyError of the words was printed in quotes, as a key is."""

    def __init__(self, tables):
        names = list(tables)
        if not names:
            text = "the program has no record table (a `record NAME { COL = expr; … }` statement makes one)"
        else:
            listed = ", ".join(map(repr, names[:-1])) + f" and {names[-1]!r}"
            text = (f"the program has {len(names)} record tables, {listed}: name one, "
                    f"records({names[0]!r}) (record_names lists them)")
        super().__init__(text)
        self.tables = names

    def __str__(self) -> str:
        return self.args[0]


def _member(rows: Any, name: Any, index: Any, kind: str) -> Any:
    """The row of ``rows`` (a report's pools or stages) for ``name`` and ``index``, by :func:`_named`'s rule:
    a name that is no str, or an index that is neither None nor an integer, is a TypeError naming it (an
    index ``"0"`` was "no stage engine[0]", of a stage the program has; ``True`` was member 1, ``0.0``
    member 0), and one the report has not a KeyError naming it and the names there are."""
    from serq.numbers import exact, whole_value

    if not isinstance(name, str):
        raise TypeError(f"the name of a {kind} is a str, not {type(name).__name__}")
    if index is not None:
        member = whole_value(index)  # (numpy's integers, a whole Fraction or Decimal: its int)
        if member is None:
            said = f"the index of a {kind}'s member is an integer or None, not {index!r}"
            raise (ValueError if exact(index) else TypeError)(said)
        index = member
    if index is None:  # a family of several members is no one of them (its first was taken, silently)
        members = [row for row in rows if row.name == name]
        if len(members) > 1:
            raise KeyError(f"{kind} {name} is a family of {len(members)} members: name one by its index, "
                           f"{kind}({name!r}, 0) … {kind}({name!r}, {len(members) - 1})")
    for row in rows:
        if row.name == name and (row.index or 0) == (index or 0):
            return row
    names = ", ".join(dict.fromkeys(row.name if row.index is None else f"{row.name}[{row.index}]" for row in rows))
    from serq.errors import did_you_mean
    from serq.numbers import shown

    label = re.fullmatch(r"(.+)\[([0-9]+)\]", name) if index is None else None
    if label and any(row.name == label[1] and row.index == int(label[2]) for row in rows):  # the report's label
        raise KeyError(f"no {kind} named {name}: {name} is member {label[2]} of the family {label[1]}, "
                       f"{kind}({label[1]!r}, {label[2]})")
    raise KeyError(f"no {kind} {name}" + ("" if index is None else f"[{shown(int(index))}]")
                   + f" (the program has: {names or 'none'})"
                   + did_you_mean(name, [] if any(row.name == name for row in rows) else [row.name for row in rows]))


class _Columns:
    """Columns kept as given and made numpy arrays when first read."""

    __slots__ = ("name", "_buffers", "_arrays")
    _DTYPES: dict[str, str] = {}

    def __init__(self, name: str, **columns: Any):
        self.name = name
        self._buffers = columns
        self._arrays: dict[str, Any] = {}

    def _column(self, col: str) -> Any:
        arr = self._arrays.get(col)
        if arr is None:
            arr = self._arrays[col] = _array(self._buffers[col], self._DTYPES[col])
        return arr

    def buffer(self, col: str) -> Any:
        """Column ``col`` as it was given (the engine's ``array.array``), without numpy."""
        return _named(self._buffers, col, "column", "the columns are")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}: {len(self._buffers[next(iter(self._DTYPES))])} rows>"


class ObserveData(_Columns):
    """One observe's samples (after warm-up), in the order they were taken: ``values``, ``times``,
    ``sessions`` and ``turns``, numpy arrays (float64, float64, int64, int32) over the engine's buffers,
    made (and numpy imported) when first read."""

    __slots__ = ()
    _DTYPES = {"values": "float64", "times": "float64", "sessions": "int64", "turns": "int32"}

    def __init__(self, name: str, values: Any, times: Any, sessions: Any, turns: Any):
        super().__init__(name, values=values, times=times, sessions=sessions, turns=turns)

    values = property(lambda self: self._column("values"), doc="The observed values.")
    times = property(lambda self: self._column("times"), doc="When each sample was taken.")
    sessions = property(lambda self: self._column("sessions"), doc="The serial of the sampling session.")
    turns = property(lambda self: self._column("turns"), doc="Its turn number.")

    def __len__(self) -> int:
        return len(self._buffers["values"])


class GaugeData(_Columns):
    """One gauge's change points: ``values[i]`` holds from ``times[i]`` to the next change (numpy arrays,
    float64, made when first read)."""

    __slots__ = ()
    _DTYPES = {"times": "float64", "values": "float64"}

    def __init__(self, name: str, times: Any, values: Any):
        super().__init__(name, times=times, values=values)

    times = property(lambda self: self._column("times"), doc="The instants of the changes.")
    values = property(lambda self: self._column("values"), doc="The value from each change on.")

    def __len__(self) -> int:
        return len(self._buffers["times"])


class Report:
    """What :func:`serq_sim.run` returns."""

    #: Which simulator made it: ``"fast"`` (the fast tier, :mod:`serq_sim.fast`) or ``"general"``.
    tier = "general"

    def __init__(self, result: Result, observes: dict[str, ObserveData], gauges: dict[str, GaugeData],
                 records: dict[str, Any] | None = None, notes: list[str] | None = None):
        self.result = result
        self._observes = observes
        self._gauges = gauges
        self._records = records or {}
        self._notes = notes

    @property
    def notes(self) -> list[str]:
        """The report's notes as the run made them: ``result.notes`` (their text, what the report shows),
        each warning a :class:`serq_sim.notes.Note` carrying the short code of its kind (``.code``:
        ``not-steady``, ``waits-for-ever``, …), which a sweep's table reads (docs/sweep.md). A report made
        from a :class:`~serq_ir.report.Result` alone (a JSON report read back) has the codes of its
        ``codes`` (:func:`serq_sim.notes.read_back`)."""
        if self._notes is None:
            from .notes import read_back

            return read_back(self.result)
        return list(self._notes)

    def records(self, name: str | None = None, kind: str = "auto") -> Any:
        """The table of records ``name`` (``None``: the program's one table), one row per record, rows
        sent before the warm-up's end left out: a pandas DataFrame when pandas is installed, else a
        polars DataFrame, else a dict of numpy arrays by column (``kind`` picks one: ``"pandas"``,
        ``"polars"``, ``"numpy"``). Columns: ``session``, ``turn``, ``time``, then the declared ones."""
        return self.record_table(name).frame(kind)

    def record_table(self, name: str | None = None) -> Any:
        """The :class:`serq_sim.records.Records` of table ``name`` (``None``: the program's one table), by
        the report's one rule of a look-up by name (:func:`_named`): ``record_table(["req"])`` was
        "unhashable type: 'list'" and ``record_table(3)`` a KeyError, as if 3 were a table's name
        misspelt."""
        if name is None:
            if len(self._records) != 1:
                raise TableNotNamed(self._records)
            name = next(iter(self._records))
        return _named(self._records, name, "record table")

    @property
    def record_names(self) -> list[str]:
        return list(self._records)

    def set_slo(self, slo: dict[str, float]) -> None:
        """Fill the goodput of the report's request metrics under ``slo`` (seconds by metric: ttft, tpot,
        e2el); ``serq run --slo ttft=1,tpot=0.05``."""
        import msgspec

        from .metrics import NO_REQUESTS, check_slo, metric_table, with_slo

        slo = check_slo(slo)
        m = self.result.requests
        if m is None:
            raise ValueError(NO_REQUESTS)
        self.result = msgspec.structs.replace(self.result,
                                              requests=with_slo(m, metric_table(self._records), slo))

    # typed accessors
    def observe(self, name: str) -> ObserveData:
        return _named(self._observes, name, "observe")

    def gauge(self, name: str) -> GaugeData:
        return _named(self._gauges, name, "gauge")

    @property
    def observes(self) -> dict[str, ObserveData]:
        return dict(self._observes)

    @property
    def gauges(self) -> dict[str, GaugeData]:
        return dict(self._gauges)

    def stats(self, name: str) -> ObserveStats:
        return _named(self.result.observes, name, "observe")

    def pool(self, name: str, index: int | None = None) -> PoolStats:
        """The pool ``name`` (``index`` None or 0 for a single pool), or member ``index`` of an array."""
        return _member(self.result.pools, name, index, "pool")

    def stage(self, name: str, index: int | None = None) -> StageStats:
        """The stage ``name`` (``index`` None or 0 for a single stage), or member ``index`` of an array."""
        return _member(self.result.stages, name, index, "stage")

    @property
    def interrupted(self) -> bool:
        """The run stopped before its end (:attr:`partial` says why)."""
        return self.result.interrupted

    @property
    def partial(self) -> str | None:
        """Why the run stopped before its end (``"interrupted"``, ``"sigterm"``, ``"max-events"``,
        ``"max-wall"``, ...), or ``None`` when it ran to its end."""
        return self.result.partial

    @property
    def warnings(self) -> list[str]:
        """The notes that are warnings (``warning: …``): what ``serq run --strict`` fails on."""
        return [n for n in self.notes if n.startswith("warning:")]

    @property
    def stopped_note(self) -> str | None:
        """The note that says why and when the run stopped before its end (``note: interrupted at t=…; the
        figures cover what was simulated``), or None."""
        if not self.result.interrupted:
            return None
        return next((n for n in self.notes if n.startswith("note: ") and n.endswith(STOPPED_TAIL)), None)

    @property
    def exit_status(self) -> int:
        """What ``serq run`` exits with after writing this report: 0, or :data:`PARTIAL_EXIT` of
        :attr:`partial` (3 for a reason not listed)."""
        if self.result.partial is None:
            return 130 if self.result.interrupted else 0
        return PARTIAL_EXIT.get(self.result.partial, 3)

    def __repr__(self) -> str:
        r = self.result
        return (f"<Report end={r.end:g} events={r.events} arrivals={r.arrivals} ended={r.ended} "
                f"observes={list(self._observes)}>")


#: the end of the note a run stopped before its end has (:attr:`Report.stopped_note`)
STOPPED_TAIL = "; the figures cover what was simulated"

#: Exit status of ``serq run`` for a partial report, by its reason: a bound the user set is 3, a signal
#: 128 + its number, as a shell reports it.
PARTIAL_EXIT = {"max-events": 3, "max-wall": 3, "max-samples": 3, "memory": 3, "interrupted": 130, "sigterm": 143,
                "sighup": 129}
#: What a partial report's note says of the signal that stopped its run, by its reason (Ctrl-C's
#: ``interrupted`` otherwise): SIGHUP is a closed terminal (or a dropped ssh connection).
SIGNAL_NOTES = {"sigterm": "terminated (SIGTERM)", "sighup": "hung up (SIGHUP)"}


def record_program(report: Report, path: str, data: bytes, program: Any, sets: dict[str, float],
                   defs: dict[str, str], pm: Any = None) -> None:
    """Record in ``report`` what was run: the program's ``path`` as given (as text: a byte of its name
    that is not UTF-8 written ``\\xNN``, :func:`serq.files.shown_name`, since the JSON report holds only
    text and an IR file so named ended a whole run in a ``UnicodeEncodeError``), the SHA-256 of its bytes
    ``data`` and of the IR ``program`` as simulated (without spans or the source's path), and every
    ``--set`` and ``--def``, by name (the order the flags were given in changes nothing that was run, so
    it changes nothing in the report: ``--set a=1 --set b=2`` and ``--set b=2 --set a=1`` are one report).
    With the plugin manager ``pm`` the run had, the plugins that provide what the program names as a
    plugin's (:func:`serq.extensions.plugins_used`): its results depend on their versions too."""
    import msgspec
    import serq_ir
    from serq.files import shown_name

    from .digest import sha256 as _sha256

    sha256 = _sha256()
    ir = serq_ir.encode(msgspec.structs.replace(program, source=None), spans=False)
    info = ProgramInfo(path=shown_name(str(path)), sha256=sha256(data).hexdigest(),
                       ir_sha256=sha256(ir).hexdigest(), sets=dict(sorted(sets.items())),
                       defs=dict(sorted(defs.items())))
    if pm is not None:
        from serq.extensions import plugins_used
        from serq_ir.report import PluginUse

        used = plugins_used(program, pm)
        if used:
            info = msgspec.structs.replace(info, plugins=[PluginUse(**u) for u in used])
    report.result = msgspec.structs.replace(report.result, program=info)


def member_index(m: Any) -> int | None:
    """A pool or stage member's index as the report gives it: None for one declared without a size
    (``pool kv``), its index in an array otherwise (``pool kv[N]``, N = 1 too)."""
    node = m.node
    return m.index if node.size > 1 or getattr(node, "array", False) else None


def member_label(m: Any) -> str:
    """``kv`` for a single pool or stage, ``kv[i]`` for a member of an array."""
    i = member_index(m)
    return m.name if i is None else f"{m.name}[{i}]"


def _unfinished_iterations(sim) -> list[tuple[str, float, float | None, tuple[str, float | None] | None]]:
    """The step stages of :func:`serq_sim.notes.unfinished_iterations`: those with an iteration under way at
    the end of the run and no other counted, each ``(label, planned, ends, memory)``, ``ends`` the time of its
    end's event on the heap: none counted (the one under way planned before the warm-up's end), or the one
    under way alone (planned after it, with no warm-up or a short one: counted, its tokens never applied)."""
    out = []
    ends_at = None
    warmup = sim.warmup
    for st in sim.stages:
        if getattr(st, "sum_budget", None) is None or getattr(st, "iter", None) is None:
            continue
        if st.iterations != (1 if st.t_start >= warmup else 0):  # (others counted: the figures describe them)
            continue
        if not sim.end > sim.warmup:
            continue
        if ends_at is None:  # (the queue read once, and only where such a stage is)
            from .step.stage import iteration_ends

            ends_at = iteration_ends(sim.heap)
        ends = ends_at.get(id(st))
        pool = st.memory if getattr(st, "cost_kv", False) else None
        memory = None if pool is None else (member_label(pool), getattr(pool, "block", None))
        out.append((member_label(st), st.t_start, ends, memory))
    return out


def _div(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def _token_utilisation(st) -> float:
    """A step stage's tokens over the budget summed over its iterations: NaN for an infinite budget. A constant
    finite budget whose sum passes the largest double (``budget 1e308``: inf after two iterations) is every
    iteration's, so the ratio is the tokens an iteration over it; it was NaN, the infinite budget's."""
    if math.isfinite(st.sum_budget):
        return _div(st.sum_tokens, st.sum_budget)
    b = getattr(st, "budget_const", None)
    if b is not None and math.isfinite(b) and st.iterations > 0:
        return _div(st.sum_tokens / st.iterations, b)
    return math.nan


def _drained(sim) -> tuple[float, object] | None:
    """(the time it drained, the workload's arrive node) of a run that ran out of events with no session live and
    no arrival limit (a batch, a trace's sessions, presets: all ended, nothing left to arrive), else None: a
    longer horizon adds nothing to such a run (notes.few_samples)."""
    if getattr(sim, "heap_left", True) or sim.live > 0 or sim.interrupted or sim.arr_limit is not None:
        return None
    return getattr(sim, "clock_reached", sim.now), sim.program.workload.arrive


def build_report(sim) -> Report:
    p = sim.program
    start = sim.warmup
    end = sim.end
    span = end - start
    observes: dict[str, ObserveData] = {}
    ostats: dict[str, ObserveStats] = {}
    instants: dict[str, int] = {}
    notes: list[str] = []
    for decl, o in zip(p.observes, sim.obs):
        values = o.values
        observes[decl.name] = ObserveData(decl.name, values, o.times, o.sessions, o.turns)
        if decl.instant:  # an instant (`observe done = now;`): its mean means nothing
            instants[decl.name] = len(values)
            continue
        n, mean, ci, cv2, (p50, p90, p95, p99) = observe_summary(values)
        ostats[decl.name] = ObserveStats(count=n, mean=mean, ci=ci, cv2=cv2, p50=p50, p90=p90, p95=p95,
                                         p99=p99)
        if decl.test and n >= MIN_SAMPLES and all_zero(values):
            notes.append(f"note: observe {decl.name} is constant 0 over {n} samples")
    stages = []
    for st in sim.stages:
        completions = st.completions
        step = {}
        if getattr(st, "sum_budget", None) is not None:  # a step stage's engine statistics
            it = st.iterations
            step = dict(requests=st.requests, request_throughput=_div(st.requests, span),
                        prefill_only=st.it_prefill, decode_only=st.it_decode, mixed=st.it_mixed,
                        batch=_div(st.sum_jobs, it), tokens=_div(st.sum_tokens, it),
                        token_utilisation=_token_utilisation(st))
        stages.append(StageStats(
            name=st.name, index=member_index(st),
            present=time_mean(st.a_present, st.b_present, span),
            # at most 1, as the busy level it averages (StageKind.busy_level): the spans' lengths summed one by
            # one come to the run's span only up to their rounding, and fifo(3) busy throughout gave
            # 1.0000000000000002 (min keeps a NaN)
            utilisation=min(time_mean(st.a_busy / (c := getattr(st, "c", 1.0)), st.b_busy / c, span), 1.0),
            completions=completions,
            throughput=_div(completions, span),
            wait=time_mean(st.wait_sum, st.b_wait, completions),
            service=time_mean(st.service_sum, st.b_service, completions),
            iterations=st.iterations,
            **step,
        ))
    pools = []
    for pl in sim.pools:
        pools.append(PoolStats(
            name=pl.name, index=member_index(pl),
            used=time_mean(pl.a_used, pl.b_used, span), cached=time_mean(pl.a_cached, pl.b_cached, span),
            queue=time_mean(pl.a_queue, pl.b_queue, span), holders=time_mean(pl.a_holders, pl.b_holders, span),
            wait=time_mean(pl.wait_sum, pl.b_wait, pl.admissions),
            admissions=pl.admissions, evicted_entries=pl.evicted_entries,
            evicted_units=units_total(pl.evicted_units, pl.b_evicted),
            preemptions=pl.preemptions, spills=pl.spills, rejections=pl.rejections, stuck=pl.stuck,
            over_cap=pl.over_cap,
        ))
    gauges: dict[str, GaugeData] = {}
    gstats: dict[str, GaugeStats] = {}
    for (name, _fn), (ts, vs) in zip(sim.gauges, sim.gauge_points):
        gauges[name] = GaugeData(name, ts, vs)
        mean, ci, lo, hi = time_stats(ts, vs, start, end)
        gstats[name] = GaugeStats(mean=mean, ci=ci, min=lo, max=hi)
    from .records import Records

    records = {t.name: Records(t, sim.warmup) for t in getattr(sim, "record_tables", ())}
    requests = None
    if records:
        from .metrics import metric_table, request_metrics

        table = metric_table(records)
        if table is not None:
            gaps = getattr(sim, "token_gaps", None)  # the step stages' output tokens (step/tokens.py)
            # the measured window: a run stopped before the warm-up's end (a bound, Ctrl-C) measured nothing, a
            # window of 0 (its rates NaN), not of the negative span end - warmup (`completed 0 over -35.5 s`)
            requests = request_metrics(table, max(span, 0.0), gaps.stats() if gaps is not None else None)
    from . import notes as warn
    from .fleet import warnings as other_memory

    notes += warn.no_sessions(p.workload)
    notes += warn.idle_rules(p)
    from .stages import DelayStage

    thinking = (time_mean(sim.a_live, sim.b_live, span), math.fsum(pl.queue for pl in pools),
                [(member_label(st), s.present) for st, s in zip(sim.stages, stages) if isinstance(st, DelayStage)])
    # (a load of 1 or more known by hand warns where the backlog's climb did not show: notes.saturated)
    notes += warn.steadiness(sim.backlog, sim.arrivals, sim.arr_limit, thinking) or warn.saturated(p, sim.arr_limit, sim.partial)
    drained = _drained(sim)
    notes += warn.few_samples([(d.name, len(o.values)) for d, o in zip(p.observes, sim.obs) if not d.instant],
                              sim.warmup, (table.name, len(table)) if requests is not None else None,
                              sim.arr_limit, drained,
                              # (a run stopped before the warm-up's end says so already)
                              0 if requests is None or (sim.interrupted and end <= sim.warmup)
                              else len(table._table))
    notes += warn.idle_tail(drained, sim.warmup, end, sim.arrivals)
    notes += warn.batch_trace(p.workload, getattr(sim, "trace", None))
    if requests is not None:
        notes += warn.shared_turns(table)
        notes += warn.cached_beyond_prompt(table)
    labels = [member_label(pl) for pl in sim.pools]  # (once a member, not once a warning)
    notes += warn.rejections([(label, pl.rejections, pl.admissions, pl.cap, pl.refused,
                               pl.rounded_out, pl.block) for label, pl in zip(labels, sim.pools)])
    notes += warn.stuck([(label, pl.stuck, pl.preemptions, pl.positioned, len({*pl.self_stuck, *pl.livelocked}),
                          len(pl.livelocked), pl.livelock_units, pl.cap)
                         for label, pl in zip(labels, sim.pools)])
    notes += warn.lapsed_reads([(label, pl.lapsed_reads) for label, pl in zip(labels, sim.pools)])
    notes += warn.nan_keys(getattr(sim, "nan_keys", {}))
    notes += warn.negative_bounds(getattr(sim, "clamped", {}))
    notes += other_memory(sim)
    notes += warn.evicted_beyond([(label, pl.evicted_units, pl.b_evicted) for label, pl in zip(labels, sim.pools)])
    notes += warn.held_beyond([(label, pl.a_used, pl.b_used, pl.a_cached, pl.b_cached)
                               for label, pl in zip(labels, sim.pools)], span)
    notes += warn.unfinished_iterations(_unfinished_iterations(sim), sim.warmup, end)
    # (the clock at the run's last event: a run drained long before a horizon of 1e300 measured nothing there)
    notes += warn.coarse_clock(getattr(sim, "clock_reached", end),
                               [(member_label(st), s.service) for st, s in zip(sim.stages, stages)])
    forever = sim.waiting_forever() if hasattr(sim, "waiting_forever") else None
    if forever:
        notes.append(forever)
    if sim.interrupted:
        why = getattr(sim, "partial_note", "") or "interrupted"
        from .errors import fmt_time

        notes.append(f"note: {why} at t={fmt_time(end)}{STOPPED_TAIL}")
        if 0 < sim.warmup and end <= sim.warmup:  # (what was simulated was all warm-up: the figures are of no time, not of it)
            notes.append(f"note: the run stopped before its warm-up's end (t={fmt_time(sim.warmup)}), so it measured "
                         "nothing: no sample, and every time average and rate of no time (nan)")
    import serq

    result = Result(
        serq_version=serq.__version__,
        horizon=sim.horizon, end=end, warmup=sim.warmup, seed=sim.seed, events=sim.events,
        arrivals=sim.arrivals, ended=sim.ended, turns=sim.turns,
        mean_live=time_mean(sim.a_live, sim.b_live, span), interrupted=sim.interrupted,
        partial=getattr(sim, "partial", None) or ("interrupted" if sim.interrupted else None),
        observes=ostats, instants=instants, records={n: len(r) for n, r in records.items()}, requests=requests, stages=stages,
        pools=pools, gauges=gstats, notes=[str(n) for n in notes],  # (the text: a Note is a str of its own class)
        codes=[warn.warning_code(n) for n in notes],
    )
    return Report(result, observes, gauges, records, notes)
