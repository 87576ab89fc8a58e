"""A sweep: points (programs compiled once each) x seeds, run on an engine, into one tidy table.

The table has one row per point and seed: ``point`` (its number, from 0), a column per swept name (and
``program`` when several programs are swept, ``trace`` when the runs replay ``--trace`` files), ``seed``, ``status`` (``ok``, ``partial``: a bound stopped
the run, ``error``: a run-time error of the program), ``message``, ``key`` (what identifies the run: the
SHA-256 of the IR simulated, the seed and the run bounds) and then every figure of the report
(:mod:`serq_sweep.figures`). Rows are in the order of point and seed whatever order the runs finished in,
so the same sweep gives the same table on any engine.

Resuming: with an output file, each finished run is appended at once to a journal beside it
(``OUT.journal``, one JSON line a run); a sweep reads the table and the journal it finds there and runs
only the runs whose key is in neither. Ctrl-C or SIGTERM ends the workers, writes the table of what
finished (atomically, :mod:`serq.files`) and exits 130 or 143; the complete table removes the journal.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import io
import json
import math
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from serq.errors import UsageError, UserError, clipped, located, printable, shown_path
from serq.files import MAX_LINE, open_input
from serq.jsonin import MAX_DIGITS, value_at
from serq.numbers import NAN_PATTERN
from serq.numbers import PATTERN as NUMBER_PATTERN

from .axes import Axis, def_axes, named_values, points, program_files, seeds_given, set_axes

#: what the journal keeps of a run's result (not its timings: the table is the same whatever the timings)
_JOURNALED = ("status", "message", "warnings", "figures")
#: columns before the figures (the swept names go between ``point`` and ``seed``)
FIXED = ("point", "seed", "status", "message", "warnings", "key")
#: the columns of a table that are text whatever they look like: a key is 24 hexadecimal digits, and one
#: of digits only (``496702020860…``) or of digits and one ``e`` (``2129097858e9…``, a float's exponent) read
#: back as a number, so its run was never found finished and ran again at every resume
TEXT = ("status", "message", "warnings", "key")
def figure_names() -> tuple[str, ...]:
    """The names a swept name may not have beside :data:`FIXED`: each is a column of a sweep's tables already,
    the report's own figures of one name (``events``, ``arrivals``, ``end``, ``turns``: the top level of
    :class:`serq_ir.report.Result` that is figures, serq_sweep.figures) and the per-point table's ``runs``.
    A let of such a name swept made a table of two columns of that name, and the figure's value was written
    into the swept one: ``--set events=1,2`` wrote a table whose two points both said ``events`` 153, the
    run's count of events."""
    return (*_top_figures(), "runs")


def _top_figures() -> tuple[str, ...]:
    """The top level of :class:`serq_ir.report.Result` that is figures (``events``, ``observes``, ``stages``,
    …; not :data:`serq_sweep.figures.NOT_FIGURES`): the names a swept name may not have (:func:`figure_names`)
    and the heads of a table's figures by name (:func:`report_figure`), one rule."""
    from serq_ir.report import Result

    from .figures import NOT_FIGURES

    return tuple(f for f in Result.__struct_fields__ if f not in NOT_FIGURES)


#: the status of a run (serq_sweep.worker.run_task): finished, stopped at a bound, or failed
STATUSES = ("ok", "partial", "error")


@dataclass
class Point:
    index: int
    params: dict[str, Any]
    file: str
    #: the program's IR as serq_ir.encode writes it, held compressed (serq_sweep.worker.packed: the IR given
    #: as JSON is packed here); what a task sends and serq_sweep.worker.run_task reads. A point held its JSON,
    #: 64 KB of examples/multi-turn/vllm.sq's, from the plan to the end of the sweep; packed it is 3 KB
    ir: bytes
    ir_hash: str
    inputs: list[str] = field(default_factory=list)
    #: the program's record tables: each one's name and its declared columns, in order
    records: dict[str, list[str]] = field(default_factory=dict)
    #: the trace its runs replay instead of the one its workload names (``--trace FILE``, the path as given),
    #: read by the worker as ``serq run --trace`` reads it; None: the workload's own
    trace: str | None = None
    #: the SHA-256 of the bytes of the trace its runs read (this one or the workload's), as the plan read them
    #: and :func:`run_hash` keyed the runs by; the worker's run is an error when it reads other bytes
    #: (serq_sim.trace.changed); None: no trace
    trace_digest: str | None = None
    #: the ``--def`` bodies it was compiled with, by the name its spans give each (serq.loading.def_texts): a
    #: worker's message of a run-time error there is quoted with the body's line here (serq.errors.texts_quoted)
    texts: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from .worker import packed

        self.ir = packed(self.ir)

    @property
    def label(self) -> str:
        return quoted_label(self.params) or "(the program as it is)"


def show_value(v: Any) -> str:
    """A swept value as every label shows it (a point's, an arm's in ``serq compare``, a row of ``--show``):
    a float as the shortest text that reads back as it (``repr``) less a trailing ``.0`` (``0.1``, ``2``,
    ``1e-05``, ``0.1000001``), anything else as ``str``. Two values of a sweep are two labels: six
    significant digits (``:g``) showed ``--set lambda=0.1000001,0.1000002`` as two points ``0.1``, and
    ``serq compare --set B=1234567,1234568`` as ``1.23457e+06 - 1.23457e+06``."""
    if isinstance(v, float):
        text = repr(v)
        return text[:-2] if text.endswith(".0") else text
    return str(v)


_show = show_value


#: the axes whose values are files' names (the programs' and the traces' paths as given)
PATH_AXES = frozenset(("program", "trace"))


def quoted_label(params: Mapping[str, Any]) -> str:
    """A point's ``NAME=VALUE, …`` as every message quotes it (a point's compile error, a run's ``(at the sweep's
    point …, seed N)``, a capacity search's notes), each part shown by what it is, by the one rule of messages:
    a file's name (a value of the axes ``program`` and ``trace``) as every message prints a file's name
    (:func:`serq.errors.shown_path`: printable, cut past ``PATH_WIDTH``, 240 characters), and a name or a
    value of the program's (a swept ``let`` or definition, :func:`show_value`) as every message quotes a
    name of the program (:func:`serq.errors.clipped`: past ``QUOTED_WIDTH``, 120 characters, its first 60
    and last 59 around ``…``). A trace's path was cut at 120 in the label beside the same path cut at 240 in
    the message's own ``FILE:LINE:COL`` (and a run's place was not cut at all); a swept definition of 140 000
    characters was quoted whole."""
    return ", ".join(f"{clipped(k)}={shown_path(v) if k in PATH_AXES else clipped(show_value(v))}"
                     for k, v in params.items())


@dataclass
class Plan:
    """What a sweep runs: its axes, points and seeds."""

    axes: list[Axis]
    points: list[Point]
    seeds: list[int]
    limits: dict[str, Any]
    #: the plugin manager the points were compiled with, which the runs in this process use too (a stage
    #: kind or policy registered in-process, not installed, is known to it only); None: the installed ones
    pm: Any = field(default=None, repr=False, compare=False)
    #: the warnings said before the runs, each once a program (serq_sim.notes.never_ends: a run with no end)
    warnings: list[str] = field(default_factory=list, repr=False, compare=False)
    #: how a message names a setting (serq.loading.given_or_option): the command line's option (None) or the
    #: Python API's argument (serq.loading.argument_given); a failed run's notes of its ``--set`` values say it
    given: Any = field(default=None, repr=False, compare=False)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.axes]

    @functools.cached_property
    def _numbers(self) -> frozenset[str]:
        return frozenset(a.name for a in self.axes if a.kind == "set")

    def shown(self, point: Point) -> dict[str, Any]:
        """``point.params`` as the tables give them: a ``--set`` value that is a whole number is an integer
        (``--set blocks=1200,8010``: 1200, not 1200.0), whatever the axis's other values (``--set B=16,inf``
        wrote 16.0, ``Lambda=1:2:0.5`` 1.0 and 2.0: a value's text depended on its neighbours); not ``-0``,
        which the integer ``0`` would write as ``0``, nor one beyond 2**53; the others are as swept."""
        numbers = self._numbers
        if not numbers:
            return point.params
        return {k: int(v) if k in numbers and _whole(v) else v for k, v in point.params.items()}

    def key(self, point: Point, seed: int) -> str:
        text = json.dumps([point.ir_hash, seed, sorted(self.limits.items())])
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def tasks(self, done: Iterable[str] = (), records: bool = False) -> list[tuple]:
        """The runs not in ``done``, each key once (the first point that has it: points whose IR differs
        only in spans and source share their runs); with ``records``, each run returns its records too."""
        done = set(done)
        out = []
        for p in self.points:
            for s in self.seeds:
                k = self.key(p, s)
                if k not in done:
                    done.add(k)  # (run twice, the result that came last was kept: its message named either file)
                    out.append(((p.index, s, k), p.ir, p.ir_hash, p.file, s, self.limits, records, p.trace,
                                p.trace_digest))
        return out


def _plugin_manager(pm: Any) -> Any:
    from serq.plugins import api_plugin_manager

    return api_plugin_manager(pm)


def compile_point(pm: Any, file: str, sets: Mapping[str, float], defs: Mapping[str, str],
                  overrides: Mapping[str, Any], given: Any = None, trace: str | None = None,
                  said: set[str] | None = None) -> tuple[Any, list[str]]:
    """The program of ``file`` with ``sets``/``defs`` and the run ``overrides`` (horizon, warmup,
    arrivals) applied, and the files its run reads. ``given`` names an override in a message
    (serq.loading.apply_run_overrides: the command line's option, the default, or the API's argument).
    ``trace``: a ``--trace`` FILE its runs replay instead of the workload's (one of its inputs, and the trace
    clause's folder no longer checked; :func:`check_replaceable` refuses it for a program without one).
    ``said``: what the compiles of the same sweep wrote on stderr (their warnings), each text written once
    (:func:`compiled_once`): every point is compiled, and a warning of the program was written once a point,
    or once an evaluation of a capacity search."""
    from serq.loading import LoadOptions, apply_run_overrides, given_or_option, load_program, sets_noted
    from serq_sim.cli import check_trace_beside, run_inputs

    with compiled_once(said), _unstored(bool(sets or defs)):
        program = load_program(pm, file, LoadOptions(sets=dict(sets), defs=dict(defs), given=given))
    check_trace_beside(program, file, trace)  # (an IR file's source does not choose where its trace is read)
    # a warmup not below the horizon: refused there, before any run, not once per run
    given = given_or_option(given)
    with sets_noted(sets, given):  # (a horizon --set gave, below --warmup: as serq run notes it)
        program = apply_run_overrides(program, **{k: v for k, v in overrides.items() if v is not None},
                                      name=file, given=given)
    if program.run.horizon is None:
        from serq.loading import no_horizon

        raise no_horizon(program, file, given)
    return program, run_inputs(program, file, trace)



def _unstored(point: bool) -> Any:
    """The block a point's compile is made in: with ``point`` (the program given ``--set`` or ``--def``
    values), one whose compile does not use the compile cache (serq_frontend.cache.unstored): a sweep's
    points, each its own key, wrote and synced an entry apiece and pushed the user's other programs out of
    the cache; the program as written goes through it as ``serq run``'s does."""
    if point:
        try:
            from serq_frontend.cache import unstored
        except ImportError:  # (no serq-frontend: the sweep is of IR files)
            pass
        else:
            return unstored()
    return contextlib.nullcontext()


@contextlib.contextmanager
def compiled_once(said: set[str] | None) -> Iterator[None]:
    """What the compile inside writes on stderr (a warning: `FILE:LINE:COL: warning: …`, the line and a
    caret), written when it ends, or fails, unless ``said`` holds the same text (then nothing), which it is
    added to; with ``said`` None, written as it comes."""
    if said is None:
        yield
        return
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            yield
    finally:
        text = buf.getvalue()
        if text and text not in said:
            said.add(text)
            if sys.stderr is not None:
                sys.stderr.write(text)


def trace_files(trace: Any, given: Any = None) -> list[str]:
    """The trace files a sweep's runs replay instead of their workload's (``serq sweep --trace FILE``, each
    FILE a value of the axis ``trace``; ``trace=`` of the Python API: a path or a list of them), each
    checked once, before anything is compiled or run: one that cannot be opened as a file (missing, a
    FIFO, unreadable) is ``serq run --trace``'s error of it (:func:`serq_sim.trace.unreadable`: ``FILE: error:
    cannot read the trace: …``), status 1, a bad input file as a program that cannot be read is (it was a
    usage error, status 2, where ``serq run`` said 1); one that is no
    trace (a cell that is no number, a row cut short) is ``serq run --trace``'s error of it, by its loader
    (:func:`serq_sim.trace.load_trace`: ``FILE:LINE:COL: error: …``, the line and a caret), status 1; one
    file by two paths (``t.csv ./t.csv``, a link) is refused, as a program's is: two points of one run.
    ``given`` names the option or argument in a message (``--trace t.csv``, ``trace=t.csv``)."""
    from serq.files import name_not_text, open_input, shown_name
    from serq.loading import given_or_option

    from .axes import program_files

    given = given_or_option(given)
    paths = [] if trace is None else program_files(trace, "trace")
    ids: dict[tuple[int, int], str] = {}
    for path in paths:
        if not path:
            raise UsageError(f"{given('trace', repr(path))}: an empty name names no file")
        problem = name_not_text(path)
        if problem is not None:  # (the table names each trace in a cell, as text)
            raise UsageError(f"{given('trace', shown_name(path))}: {problem}, and the table of a sweep names each "
                            "trace it replays as text; rename it")
        try:
            with open_input(path) as f:
                st = os.fstat(f.fileno())
        except OSError as e:  # missing, a FIFO (not waited for), unreadable: serq run --trace's error, status 1
            from serq_sim.trace import unreadable

            raise unreadable(path, e) from None
        if (st.st_dev, st.st_ino) in ids:
            raise UsageError(f"the traces of a sweep are given twice: {shown_path(ids[st.st_dev, st.st_ino])}"
                            f" and {shown_path(path)} are one file")
        ids[st.st_dev, st.st_ino] = path
    return paths


def trace_axis(paths: Sequence[str], swept: Sequence[Axis], said: Any, table: str) -> list[Axis]:
    """The axis ``trace`` of a sweep's or a capacity search's ``--trace`` files ``paths`` (:func:`trace_files`),
    none when there are none; a swept name (``swept``: the ``--set`` and ``--def`` axes) ``trace`` beside it is
    refused, ``said`` naming what was given (:func:`serq.loading.given_or_option`): it was two columns of one
    name in ``table``, the path and the value."""
    if not paths:
        return []
    for a in swept:
        if a.name == "trace":
            raise UsageError(f"{said(a.kind, 'trace')}: the name of the axis {said('trace')} makes, a column of "
                            f"{table}; give the swept name another")
    return [Axis("trace", "trace", tuple(paths))]


def load_traces(paths: Sequence[str]) -> None:
    """Read each trace of :func:`trace_files` once, before any point compiles or runs, as ``serq run --trace``
    reads it (:func:`serq_sim.trace.load_trace`): a malformed one is its error (``FILE:LINE:COL: error: …``,
    the line and a caret; status 1), said once, not once a run."""
    from serq_sim.trace import load_trace

    for path in paths:
        load_trace(path)


def load_program_trace(program: Any, trace: str | None, read: set[str]) -> None:
    """Read the trace the program's own ``trace`` clause names once, before any run, as its run reads it
    (:func:`serq_sim.trace.load_trace`, at the clause: ``FILE:LINE:COL: error: …``, the line and a caret; a
    file that cannot be read said at the clause), unless ``trace`` (``--trace``) replaces it or ``read`` (the
    traces read so far, by path) holds it. A malformed trace of the program's failed every run of a sweep
    apart, an error a point, where a bad ``--trace FILE`` is refused once (:func:`load_traces`); it is the
    program's, not a point's, so the message names no point."""
    clause = program.workload.trace
    if trace is not None or clause is None:
        return
    from serq_sim.trace import load_trace, resolve_trace

    path = resolve_trace(clause.path, program.source)
    if path in read:
        return
    read.add(path)
    load_trace(path, clause.span, program.source)


def check_replaceable(program: Any, trace: str | None, given: Any = None) -> None:
    """Refuse a ``--trace`` FILE for a program whose workload reads no trace, before any run, with the error
    ``serq run --trace`` gives it (:func:`serq_sim.trace.check_replaceable`; ``given`` names the option or
    the API's argument, ``trace=t.csv``), once: it is the program's, not a point's, so no point is named."""
    from serq_sim.trace import check_replaceable as refuse

    refuse(program, trace, given)


def trace_digest(path: str) -> str:
    """The SHA-256 of the bytes of the trace file ``path`` (serq_sim.trace.file_digest: a regular file only,
    opened as the run opens it, the digest the run checks its bytes against), or a word naming the fault when
    it cannot be read (the run then fails, saying why)."""
    from serq_sim.trace import file_digest

    try:
        return file_digest(path)
    except (OSError, ValueError) as e:
        return f"unreadable {path}: {getattr(e, 'strerror', None) or e}"


#: the key of :func:`run_hash`'s ``traces`` under which a sweep keeps what :func:`versions.deciding` looks
#: up once: no str, so no trace's path (an empty one included) is it
_VERSIONS = ("versions",)


def run_hash(program: Any, traces: dict[Any, Any] | None = None, pm: Any = None, trace: str | None = None) -> str:
    """What a run of ``program`` depends on besides its seed and bounds, hashed: its IR without spans and
    source (a program and a copy of it with another comment, or its kernel twin, share their runs), the
    versions of the parts that decide its results (:func:`versions.deciding`: serq-ir, serq-frontend,
    serq-sim and the plugins of ``pm`` providing a stage kind or policy it names; a table resumed after an
    upgrade kept the runs of the old version beside the new one's) and, when it replays a trace, the
    trace's bytes. The trace clause names its file relative to the program's
    folder, which the IR without its source leaves out: two programs of one text in two folders, each
    beside a trace of its own, had one key and the second was given the first one's runs, and a trace
    edited between a sweep and its resume kept the runs of the old one. ``traces``: the digests of the
    traces read so far by path, which one sweep (or search) keeps so that its points read a trace once
    (and, under the key :data:`_VERSIONS`, which is no str and so names no trace, what
    :func:`versions.deciding` looks up once a sweep: under ``""`` a trace whose path is empty found it as
    its digest). ``trace``: a ``--trace`` FILE the runs replay instead of the workload's: its bytes are
    hashed in the place of the workload's trace's (two traces of one name, a file edited between a sweep and
    its resume, are two keys; two files of the same bytes replay the same runs, one key)."""
    import msgspec
    import serq_ir

    from .versions import deciding

    if traces is None:
        traces = {}
    digest = hashlib.sha256(serq_ir.encode(msgspec.structs.replace(program, source=None), spans=False))
    digest.update(b"\0versions\0" + "\n".join(deciding(program, pm, traces.setdefault(_VERSIONS, {}))).encode())
    read = replayed_digest(program, traces, trace)
    if read is not None:
        digest.update(b"\0trace\0" + read.encode())
    return digest.hexdigest()


def replayed_digest(program: Any, traces: dict[Any, Any], trace: str | None = None) -> str | None:
    """The digest (:func:`trace_digest`) of the trace a run of ``program`` reads (``trace``, a ``--trace`` FILE,
    or the one its workload's trace clause names), read once per path into ``traces`` (:func:`run_hash`'s);
    None when it reads none. :func:`run_hash` keys the runs by it, and the worker checks that the bytes it
    reads are these (serq_sim.run's ``trace_digest``): a trace edited while the sweep ran made rows of the new
    bytes under the old bytes' key, which a resume then took for runs of the old trace."""
    clause = program.workload.trace
    if clause is None:
        return None
    from serq_sim.trace import resolve_trace

    path = trace if trace is not None else resolve_trace(clause.path, program.source)
    if path not in traces:
        traces[path] = trace_digest(path)
    return traces[path]


def program_names(labels: Sequence[str]) -> None:
    """Refuse a program of a sweep's axis ``program`` whose name is no text (:func:`serq.files.name_not_text`:
    a byte that is not UTF-8): the table, its points and its journal name each program in a cell, and such
    a name was a ``UnicodeEncodeError`` traceback when the table was written, after every run had run."""
    from serq.files import name_not_text, shown_name

    for label in labels:
        problem = name_not_text(label) if isinstance(label, str) else None
        if problem is not None:
            raise UserError(f"{shown_name(label)}: {problem}, and the table of a sweep (or a comparison) names "
                            "each of its programs as text; rename it")


def run_limits(*, max_wall: Any = None, max_events: Any = None, max_samples: Any = None,
               slo: Any = None) -> dict[str, Any]:
    """The bounds each run of a sweep is given, checked and made plain numbers before any point compiles, by
    ``serq_sim.run``'s own rule (serq_sim.api.run_limits); a wrong one is one UserError. A numpy integer
    (``max_events=np.int64(5)``) was a TypeError of the JSON that keys the runs, after every point had
    compiled. A whole ``max_wall`` stays an int: the key of a run (and so what a table resumes) is as
    before. ``slo`` (seconds by metric: ttft, tpot, e2el; ``serq run --slo``'s, checked by its rule,
    serq_sim.metrics.check_slo) rides with the bounds, under ``"slo"``: each run's report gets its goodput
    (serq_sweep.worker.run_task), and the SLO is part of the run's key, so a table resumed under another SLO
    runs again; without one the key is as before."""
    import numbers

    from serq_sim.api import run_limits as checked

    try:
        limits = checked(max_wall=max_wall, max_events=max_events, max_samples=max_samples)
        if slo is not None:
            from serq_sim.metrics import check_slo

            limits["slo"] = dict(sorted(check_slo(slo).items()))  # (one objective, one key, in any order)
    except (TypeError, ValueError) as e:  # a wrong type, a value out of range
        raise UserError(str(e)) from None
    from serq.options import EVENTS, SAMPLES

    for name, kind in (("max_events", EVENTS), ("max_samples", SAMPLES)):
        # the command line's check of --max-events (and a count's): a whole number too long to write (10**5000)
        # was Python's ValueError from inside the JSON of the runs' keys
        why = kind.problem(limits[name]) if name in limits else None
        if why is not None:
            raise UserError(f"{name}: {why}")
    if isinstance(max_wall, numbers.Integral):
        limits["max_wall"] = int(max_wall)
    return limits


#: the figures of the request metrics that only an SLO gives (``serq run --slo``, ``serq sweep --slo``), each
#: with what it is
SLO_FIGURES = {"requests.goodput": "counts the requests that meet an SLO",
               "requests.good": "counts the requests that meet an SLO",
               "requests.attainment": "is the fraction of the completed requests that meet an SLO"}


def named(given: Any, setting: str, text: str | None = None) -> str:
    """How a message heads what ``setting`` gave (:func:`serq.loading.given_or_option`): the command line's
    option (``--slo``, ``--records r.csv``) or the Python API's keyword (``slo=``, ``records=r.csv``); the
    API's errors of ``records=`` and ``slo=`` said ``--records:`` and ``--slo:``, options its caller never
    gave."""
    from serq.loading import given_or_option

    said = given_or_option(given)(setting, text)
    return said if text is not None or said.startswith("--") else f"{said}="


def fresh_named(given: Any) -> str:
    """How a message tells a sweep to start afresh, as it was given (:func:`named`): the command line's
    ``--fresh`` or the Python API's ``fresh=True`` (the API's caller was told to give ``--fresh``, an option
    it has no way to give)."""
    said = named(given, "fresh")
    return said if said.startswith("--") else f"{said}True"


def refuse_no_end(program: Any, file: str, limits: dict[str, Any], given: Any) -> None:
    """Refuse a program whose runs would have no end (serq_sim.notes.no_end_refused: horizon inf, a workload
    that starts sessions for ever, no max_events or max_wall), before any of its runs, as ``serq run`` refuses
    it: ``FILE: error: …``. A sweep's plan and ``--find``'s points (search.py) ask it: each run raised
    serq_sim.run's ValueError in the worker, and ``serq sweep --find … --horizon inf`` printed its traceback."""
    from serq_sim.notes import no_end_refused

    endless = no_end_refused(program, limits, given)
    if endless is not None:
        raise UserError(located(None, endless, file))


def check_fresh(out: Any, fresh: bool, given: Any = None, error: type[Exception] = UsageError) -> None:
    """Refuse a sweep told to start afresh with no table to start afresh from: ``--fresh`` without ``--out``
    (serq sweep) and ``fresh=True`` without ``out=`` (serq_sweep.sweep), one rule in the words of each
    (``given``: :func:`named`), raised as ``error`` (the command line's click.UsageError, which adds its help
    hint; the API's :class:`serq.errors.UsageError`). Either was taken silently: a sweep without a table
    resumes nothing."""
    if fresh and out is None:
        raise error(f"{fresh_named(given)} goes with {named(given, 'out')} (it runs the sweep again instead of "
                    "resuming from the table there)")


def another_name(given: Any, setting: str = "out") -> str:
    """How a message tells a sweep to write elsewhere (:func:`named`): the command line's ``another --out``
    (its words as they were) or the Python API's ``out= another name``."""
    said = named(given, setting)
    return f"another {said}" if said.startswith("--") else f"{said} another name"


def check_slo_program(program: Any, file: str, limits: Mapping[str, Any], given: Any = None) -> None:
    """Refuse, before any run, an SLO for a program that records no requests, as ``serq run --slo`` does:
    its runs would have no goodput to give. ``given`` names the option or keyword (:func:`named`)."""
    if "slo" not in limits:
        return
    from serq_sim.metrics import NO_REQUESTS, records_requests

    if not records_requests(program):
        raise UserError(f"{shown_path(file)}: {named(given, 'slo')}: {NO_REQUESTS}")


def definition_forms(pm: Any, files: Sequence[str], axes: Sequence[Axis]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Each swept definition's values (``--def``) by their canonical forms, one for each program of the
    sweep, as the loader of the program gives them (:func:`serq.loading.definition_form`: for a ``.sq``
    file the body as ``serq fmt`` spaces it, on one line, without comments). The points are told apart by
    them (:func:`axes.points`)."""
    from serq.loading import definition_form

    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for a in axes:
        if a.kind != "def":
            continue
        out[a.name] = forms = {}
        for v in a.values:
            if v not in forms:
                forms[v] = tuple(definition_form(pm, f, v) for f in files)
    return out


@dataclass(frozen=True)
class PlanShape:
    """What a plan is before its points are compiled (:func:`plan`'s ``shape``): its axes, its points' values
    (a dict a point) and its seeds, the fields of a :class:`Plan` that a test of its shape reads."""

    axes: tuple[Axis, ...]
    points: list[dict[str, Any]]
    seeds: tuple[int, ...]


def plan(files: Sequence[str], *, sets: Mapping[str, Any] | None = None, defs: Mapping[str, Any] | None = None,
         zip: Sequence[Sequence[str]] = (), seeds: Any = (1,), horizon: float | None = None,  # noqa: A002
         warmup: float | None = None, arrivals: int | None = None, max_wall: float | None = None,
         max_events: int | None = None, max_samples: int | None = None, pm: Any = None,
         program_labels: Sequence[str] | None = None, repeat: bool = False, slo: Any = None,
         given: Any = None, trace: Any = None, shape: Any = None) -> Plan:
    """Compile every point of the sweep (once each). ``files``: one program, or several (an axis
    ``program``); ``sets``: name -> a number, a list, or a range ``"2:10:0.5"``; ``defs``: name -> an
    expression or a list of them; ``zip``: groups of names that move together; ``seeds``: a list of ints or
    ``"1..20"``; ``slo``: seconds by request metric (ttft, tpot, e2el), the goodput's objectives;
    ``trace``: a trace file, or a list of them, the runs replay instead of their workload's (``serq run
    --trace``): an axis ``trace`` after ``program``, its values the paths as given, even of one file; with
    ``repeat`` (serq compare) one file, replayed by every arm, and no axis. ``shape``: a test of the plan's
    axes, points and seeds before anything is read or compiled (:class:`PlanShape`; serq compare's arms and
    seeds), which raises to refuse them."""
    import serq_ir
    from serq_sim.tier_env import check_environment

    files = program_files(files)  # (before the plugins are loaded: a wrong type is said at once)
    check_environment()  # (a value every run would refuse: said once, before any run or output)
    _stop_after()  # (the sweep's own: a value it does not take is said here too, before any output)
    if trace is not None:
        from .axes import ordered

        ordered(trace, "trace")  # (said before anything is read: a set has no order)
    sets, defs = named_values(sets, "sets"), named_values(defs, "defs")
    pm = _plugin_manager(pm)
    if not files:  # (said for the command: compare([]) said "no program to sweep")
        raise UserError(f"no program to {'compare' if repeat else 'sweep'}")
    axes: list[Axis] = []
    if len(files) > 1:
        labels = list(program_labels) if program_labels else files
        program_names(labels)
        if len(set(labels)) != len(labels):
            if repeat:  # serq compare: the arms would bear one label; its A/A test is written otherwise
                raise UsageError("the arms of the comparison are one program given twice: " + ", ".join(files)
                                 + "; an A/A test is one FILE under one value given twice (--set NAME=V,V)")
            raise UsageError("the programs of a sweep are given twice: " + ", ".join(files))
        if not repeat:  # one file by two paths (p.sq ./p.sq, a link): two points of one run, as a value twice
            ids: dict[tuple[int, int], str] = {}
            from serq.files import path_str

            for f in files:
                try:  # the file a loader reads: pathlib's spelling (p.sq/ is p.sq there, not to os.stat)
                    st = os.stat(path_str(f))
                except (OSError, ValueError):  # (its compile says why)
                    continue
                if (st.st_dev, st.st_ino) in ids:
                    raise UsageError(f"the programs of a sweep are given twice: {ids[st.st_dev, st.st_ino]} and "
                                    f"{f} are one file")
                ids[st.st_dev, st.st_ino] = f
        axes.append(Axis("program", "program", tuple(labels)))
    from serq.loading import given_or_option

    said = given_or_option(given)
    traces_given = trace_files(trace, given)
    replay = None  # serq compare's one trace, every arm's
    if repeat and traces_given:
        if len(traces_given) > 1:
            raise UsageError(f"{said('trace')}: a comparison's arms replay one trace, given once; "
                            f"here {len(traces_given)} (to compare traces, serq sweep --trace A --trace B)")
        replay = traces_given[0]
    swept = set_axes(sets, given) + def_axes(defs, given)
    if not repeat:
        axes += trace_axis(traces_given, swept, said, "the table")
    axes += swept
    swept_once(axes, FIXED, "the table of the runs" if repeat else "the table", said)
    for a in axes:
        if not repeat and a.name in figure_names():
            raise UsageError(f"{a.name}: a column of the table already, the report's {a.name} (the names so "
                             f"taken: {', '.join(figure_names())}); a swept name is a column of its own: give "
                             "the let another name to sweep it")
    seed_list = seeds_given(seeds, given)
    overrides = {"horizon": horizon, "warmup": warmup, "arrivals": arrivals}
    limits = run_limits(max_wall=max_wall, max_events=max_events, max_samples=max_samples, slo=slo)
    by_label = dict(zip_(axes[0].values, files)) if len(files) > 1 else {}
    # (repeat: a point given twice, as serq compare's A/A arms.) More than MAX_POINTS runs is refused before
    # the grid is made, and so before a point is compiled: each run is a task held
    grid = points(axes, zip, repeat=repeat, seeds=len(seed_list), forms=definition_forms(pm, files, axes),
                  given=given)
    if shape is not None:  # (serq compare's arms and seeds: refused after every point was compiled, 20 s for
        shape(PlanShape(tuple(axes), grid, tuple(seed_list)))  # a grid of 100 x 100 values)
    load_traces(traces_given)
    from serq.loading import def_texts

    out: list[Point] = []
    warnings: list[str] = []
    traces: dict[Any, Any] = {}  # (each trace read once, whatever the number of points)
    compiled: set[str] = set()  # (what the points' compiles wrote on stderr: each warning once)
    # (each point's IR but its constants, as a digest, where some --set name has several values: _unread_sets)
    unread: list[bytes] | None = [] if any(a.kind in ("set", "def") and len(set(a.values)) > 1 for a in axes) else None
    clauses: set[str] = set()  # (the traces the programs' own clauses name, each read once: load_program_trace)
    for i, params in enumerate(grid):
        file = by_label[params["program"]] if by_label else files[0]
        s = {a.name: params[a.name] for a in axes if a.kind == "set"}
        d = {a.name: params[a.name] for a in axes if a.kind == "def"}
        replayed = params["trace"] if replay is None and traces_given else replay
        try:
            program, inputs = compile_point(pm, file, s, d, overrides, given, trace=replayed, said=compiled)
        except Exception as e:
            if not getattr(type(e), "serq_user_error", False):
                raise
            label = quoted_label(params)
            msg = str(e)
            if label:  # the point, on the message's own line when it is one line (a quoted source has more)
                msg += f" (at the sweep's point {label})" if "\n" not in msg else f"\n(at the sweep's point {label})"
            raise UserError(msg) from None
        check_replaceable(program, replayed, given)
        load_program_trace(program, replayed, clauses)
        check_slo_program(program, file, limits, given)
        from serq_sim.notes import never_ends

        refuse_no_end(program, file, limits, given)  # (each run would be refused: said once, before them)
        for w in never_ends(program):  # once a program, not once a point
            w = f"{shown_path(file)}: {w}" if len(files) > 1 else w
            if w not in warnings:
                warnings.append(w)
        out.append(Point(i, params, file, serq_ir.encode(program), run_hash(program, traces, pm, replayed), inputs,
                         {r.name: list(r.columns) for r in program.records}, replayed,
                         replayed_digest(program, traces, replayed), def_texts(d, given)))
        if unread is not None:
            unread.append(_bare_digest(program))
    if unread is not None:
        warnings += _unread_sets(axes, grid, unread, said)
    return Plan(axes, out, seed_list, limits, pm, warnings, given)


def _bare_digest(program) -> bytes:
    """A digest of ``program``'s IR without its list of constants, the one part of it a ``let``'s value is
    always in, read or not: two points whose digests are equal run the same program."""
    import msgspec
    import serq_ir

    return hashlib.blake2b(serq_ir.encode(msgspec.structs.replace(program, constants=[])), digest_size=16).digest()


def _unread_sets(axes: Sequence[Axis], grid: Sequence[Mapping[str, Any]], digests: Sequence[bytes],
                 said: Any) -> list[str]:
    """The warnings of the ``--set`` (and ``--def``) names whose values make one program at every point of the other axes
    (``digests``: :func:`_bare_digest` of each point of ``grid``): a let the program reads nowhere, or only
    where its values come to the same (``max(x, 5)`` of 1 and 2). Each value of such a name runs the same
    runs, and its rows differed only in their keys, without a word. Names zipped with another, each of whose
    values meets the others' once, are not judged."""
    out = []
    for a in axes:
        if a.kind not in ("set", "def") or len(set(a.values)) < 2:
            continue
        groups: dict[tuple, dict[Any, bytes]] = {}
        for params, digest in zip_(grid, digests):
            rest = tuple((k, v) for k, v in params.items() if k != a.name)
            groups.setdefault(rest, {})[params[a.name]] = digest
        judged = [g for g in groups.values() if len(g) > 1]
        if judged and all(len(set(g.values())) == 1 for g in judged):
            shown = [f"{a.name}={show_value(v)}" for v in list(judged[0])[:3]]
            more = ", …" if len(judged[0]) > 3 else ""
            if a.kind == "set":
                out.append(f"warning: {said('set', a.name)}: its values make one program ({', '.join(shown)}{more} "
                           f"compile alike): the program reads `{a.name}` nowhere, or only where these values come "
                           "to the same, so each of them runs the same runs")
            else:
                out.append(f"warning: {said('def', a.name)}: its bodies make one program ({', '.join(shown)}{more} "
                           f"compile alike): the program calls `{a.name}` nowhere, or only where these bodies come "
                           "to the same, so each of them runs the same runs")
    return out


zip_ = zip


# ---------------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------------


def in_notebook() -> bool:
    """Whether this process is an IPython kernel's (Jupyter, JupyterLab, VS Code's notebooks), where
    stderr is no terminal and a progress bar is shown all the same."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython too old or too odd to ask: no notebook
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def has_widgets() -> bool:
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


def progress_bar(total: int, initial: int, enabled: bool | None, desc: str) -> Any:
    """A progress bar of ``total`` runs, ``initial`` of them done. ``enabled`` None shows it when stderr
    is a terminal or in a notebook (:func:`in_notebook`). In a notebook with ipywidgets it is tqdm's
    widget; anywhere else (a notebook without ipywidgets too, whose stderr redraws a line ending in a
    carriage return in place) tqdm's text bar on stderr, redrawn at most once a second in a notebook."""
    notebook = in_notebook()
    if enabled is None:
        enabled = bool(getattr(sys.stderr, "isatty", lambda: False)()) or notebook
    if not enabled:
        return _NoBar()
    if notebook and has_widgets():
        from tqdm.notebook import tqdm as widget

        return widget(total=total, initial=initial, desc=desc, unit="run", leave=True)
    if sys.stderr is None:  # (no standard error, pythonw or 2>&- under the API: tqdm's bar wrote to None)
        return _NoBar()
    from tqdm.std import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="run", file=sys.stderr, dynamic_ncols=True,
                leave=True, mininterval=1.0 if notebook else 0.1)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def execute(plan: Plan, engine: Any, *, done: Mapping[str, dict] | None = None, journal: Any = None,
            progress: bool | None = None, desc: str = "sweep", skip: Iterable[str] | None = None,
            records: Any = None) -> tuple[dict[str, dict], bool]:
    """Run the plan's runs not in ``skip`` (default: the keys of ``done``, key -> result) on ``engine``;
    every result is added to ``done`` (and written to ``journal``, a text file, as one JSON line).
    ``records``: a callable given ``(key, the run's records)`` of every run (its runs return their
    records). Returns ``(done, complete)``; on Ctrl-C or SIGTERM the workers end and ``complete`` is
    false."""
    done = dict(done or {})
    tasks = plan.tasks(done if skip is None else skip, records=records is not None)
    texts = {p.index: p.texts for p in plan.points if p.texts}
    total = len(plan.points) * len(plan.seeds)
    bar = progress_bar(total, total - len(tasks), progress, desc)
    stop_after = _stop_after()
    n = 0
    complete = False
    signals = sys.modules.get("serq.signals")  # the serq command's handlers (none under the Python API)
    # a result is taken whole or not at all: its records, its row and both journals' lines (a signal that
    # arrives while one is taken is acted on after it)
    taking = signals.deferred if signals is not None else contextlib.nullcontext
    try:
        for t, result in engine.run(tasks):
            with taking():
                if signals is not None and signals.pending():
                    # a signal whose interrupt something in the pool swallowed (it is delivered again a
                    # moment later), or one that arrived as the result came: the runs that finish after it
                    # are not taken, as they are not when it is raised
                    raise signals.stop_requested()
                _point, _seed, key = t[0]
                result.setdefault("warnings", "")  # (a run that failed, or whose worker ended: none)
                if result.get("status") == "error" and _point in texts:
                    # (the worker runs IR, which keeps no text: a --def body's line is quoted by this process,
                    # which compiled it, as serq run quotes it)
                    from serq.errors import texts_quoted

                    result["message"] = texts_quoted(str(result.get("message")), texts[_point])
                if records is not None:
                    records(key, result.pop("records", {}))
                done[key] = result
                if journal is not None:
                    journal.write(json.dumps({"key": key, **{k: v for k, v in result.items()
                                                             if k in _JOURNALED}}) + "\n")
                    journal.flush()
            if signals is not None and signals.pending():
                raise signals.stop_requested()
            bar.update(1)
            n += 1
            if n == stop_after:  # a test's fixed point to signal at (docs/sweep.md)
                _stop_here()
        complete = True
    except KeyboardInterrupt:
        complete = False
        if signals is not None:  # the stop is made here
            signals.acknowledge()
    finally:
        bar.close()
    return done, complete


def _stop_here() -> None:
    """Stop this process (SIGSTOP) until it is continued. A signal sent while it is stopped is taken, once it
    is continued, by whichever of its threads runs first, maybe not this one: it is given a moment to land
    (its handler raises here, or at the next result) before the sweep goes on."""
    os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(0.1)


def _stop_after() -> int:
    """``SERQ_SWEEP_STOP_AFTER=N``: the sweep stops itself (SIGSTOP) once its N-th run of this invocation is
    journaled, so that a test signals it at a known point rather than racing it; 0 (unset, empty, ``0``, or no
    SIGSTOP here): never. N is a whole number in the digits 0-9 (blanks around it allowed), serq.numbers'
    rule, as the other SERQ_* numbers (serq_sim.memguard): any other value is refused, a
    :class:`serq.errors.UserError` naming it (``٣`` and ``²``, which ``str.isdigit`` takes, were a sweep
    that never stopped, and ``²`` before that a ValueError of ``int()``)."""
    raw = os.environ.get("SERQ_SWEEP_STOP_AFTER", "")
    value = raw.strip()
    if not value:
        return 0
    if not (value.isascii() and value.isdigit()):
        from serq.numbers import rule_hint
        from serq_sim.tier_env import env_error

        raise env_error("SERQ_SWEEP_STOP_AFTER", raw, "how many runs a sweep journals before it stops itself "
                        "(SIGSTOP), for tests of its signals: a whole number, 0 for never" + rule_hint(value, int))
    if not hasattr(signal, "SIGSTOP"):
        return 0
    # (more digits than int() reads, 4300: a count no sweep reaches, as one of 19 digits already is)
    return int(value) if len(value) <= 18 else sys.maxsize


def check_figures(plan: Plan, names: Sequence[str], said: str | None = None) -> list[str]:
    """Refuse, before the sweep runs, a figure name (``serq sweep --show``, ``serq compare --figure``) that no
    run of ``plan`` has, or that names two figures of the table (an :class:`~serq_sweep.figures.AmbiguousFigure`),
    as :func:`serq_sweep.figures.resolve` would refuse it after every run (a typo cost the whole sweep, and its
    table when no ``--out`` kept it). The figures a run has are those of its program, whatever it simulates:
    each point is run for one event, in turn, until every name resolves (the first, mostly), and then the first
    point of each program not yet run, whose figures may make a name that resolved ambiguous (``mean`` is one
    figure of a.sq but two of the table of a.sq and b.sq); a point that fails at once is passed over (its runs
    will say why). ``said`` names the option or argument that gave ``names`` (``--show``, ``--figure``,
    ``--find``; ``figures``, ``conditions``), said first in the refusal. Returns the figures the probes had
    (none when ``names`` is empty or no probe ran), which each of ``names`` resolves among.

    """
    if not names:
        return []
    try:
        return _check_figures(plan, names)
    except UserError as e:  # (UnknownFigure, AmbiguousFigure, the SLO's UsageError: each class kept)
        if said is None:
            raise
        text = str(e)
        raise type(e)(f"{said}: {text[len('error: '):] if text.startswith('error: ') else text}") from None


def _check_figures(plan: Plan, names: Sequence[str]) -> list[str]:
    from .figures import UnknownFigure, resolve
    from .worker import run_task

    columns: dict[str, None] = {}
    missing: list[str] = list(names)
    programs: set[str] = set()
    for p in plan.points:
        if not missing and p.file in programs:
            continue
        try:
            # (with the runs' SLO: its figures, requests.slo.ttft, are theirs)
            probe = {"max_events": 1, **{k: v for k, v in plan.limits.items() if k == "slo"}}
            r = run_task(p.ir, p.ir_hash, p.file, plan.seeds[0], probe, trace=p.trace, digest=p.trace_digest,
                         pm=plan.pm)
        except Exception as e:  # noqa: BLE001 - a probe that cannot run checks nothing
            if not getattr(type(e), "serq_user_error", False):
                raise
            continue
        programs.add(p.file)
        columns.update(dict.fromkeys(r["figures"]))
        still = []
        for n in names:
            try:
                resolve(n, columns)
            except UnknownFigure:  # (an AmbiguousFigure stays one: more figures only add tails)
                still.append(n)
        missing = still
    if columns:  # (no point ran: the runs say why)
        for n in missing[:1] or names:
            resolve(n, columns)
        # a figure only an SLO gives, asked for without one: each run's would be NaN (a search judged it
        # failing everywhere, and --show printed nan)
        for n in names if "slo" not in plan.limits else ():
            column = resolve(n, columns)
            if column in SLO_FIGURES:
                raise UsageError(f"{n}: {column} {SLO_FIGURES[column]}, which the runs are given "
                                 "with --slo (ttft=1,tpot=0.05; serq_sweep.sweep(slo=…)); without one each run's "
                                 "is NaN")
    return list(columns)


def rows(plan: Plan, done: Mapping[str, dict]) -> tuple[list[str], list[dict[str, Any]]]:
    """The table's columns and rows (point, seed order) of the runs in ``done``."""
    figures: dict[str, None] = {}
    out = []
    for p in plan.points:
        for s in plan.seeds:
            k = plan.key(p, s)
            r = done.get(k)
            if r is None:
                continue
            row = {"point": p.index, **plan.shown(p), "seed": s, "status": r["status"], "message": r["message"],
                   "warnings": r.get("warnings", ""), "key": k}
            for name, v in r["figures"].items():
                figures.setdefault(name, None)
                row[name] = v
            out.append(row)
    columns = ["point", *plan.names, "seed", *FIXED[2:], *figures]
    return columns, out


def report_figure(column: Any) -> bool:
    """Whether ``column`` is a report's figure by its name: its path starts at a top-level figure of
    :class:`serq_ir.report.Result` (``events``, ``observes.ttft.p99``, ``stages.engine.utilisation``; a points
    table's ``FIGURE:mean``, ``FIGURE:ci`` and ``FIGURE:n`` are of their figure). No swept name is one (a swept name of a
    top-level figure is refused, :func:`figure_names`), so a table's figures are told from its swept names
    by their names wherever they stand."""
    head = str(column).split(".", 1)[0]
    if "." not in str(column):
        head = head.removesuffix(":mean").removesuffix(":ci").removesuffix(":n")
    return head in _top_figures()


def figure_columns(columns: Sequence[str]) -> list[str]:
    """The figures' columns of a sweep's table, in its order: every column that is a report's figure by its
    name (:func:`report_figure`), wherever it stands, and every other column after ``key`` but :data:`FIXED`
    (where a sweep writes the figures: a column of a name no report has, added there by hand, is read as a
    figure as before). A table whose columns were reordered by hand (figures before ``key``) had those
    figures taken for no column ("no figure 'events'" of ``serq plot``, and none in the Python API's
    ``aggregate``): a resume reads its figures by name already."""
    columns = list(columns)
    after = columns.index("key") + 1 if "key" in columns else len(columns)
    return [c for i, c in enumerate(columns) if c not in FIXED and (i >= after or report_figure(c))]


def records_columns(columns: Sequence[str]) -> bool:
    """Whether ``columns`` are those of records (``serq run --records``, ``serq sweep --records``), a row per
    request, rather than of a sweep's table, a row per run or point: the columns every record has
    (``session``, ``turn``, ``time``) and not the marks of a table (a runs table's ``status``, ``message`` and
    ``warnings``, a points table's ``FIGURE:mean``, a search's ``outcome``, ``holds`` and ``fails``), each
    of which a record's own column may be alone. A curve (``serq plot --x --y``) and ``aggregate`` take a
    table's rows at a point for its seeds, so records were read as a run a request: each turn's mean with a
    CI "across seeds" over its requests, ``runs`` 1196 for a point of 2 runs."""
    from serq_sim.records import OWN

    from .search import COLUMNS

    names = {str(c) for c in columns}
    table = ({"status", "message", "warnings"} <= names or any(c.endswith(":mean") for c in names)
             or set(COLUMNS[:3]) <= names)
    return set(OWN) <= names and not table


def table_figures(columns: Sequence[str]) -> list[str]:
    """The columns a table of runs offers as figures (``serq plot``'s ``--y``, the Python API's
    ``aggregate``): in a sweep's table (one with ``key``) its figures by their names (:func:`figure_columns`),
    wherever they stand; in a table without ``key`` (made by hand, not a sweep's) every column."""
    columns = list(columns)
    return figure_columns(columns) if "key" in columns else columns


def swept_once(axes: Sequence[Axis], columns: Sequence[str], table: str, said: Any) -> None:
    """Refuse (a usage error) a swept name that is one of ``columns``, those ``table`` has of its own, or that
    two axes sweep (``--set k`` and ``--def k``), each said as its option names it (``said``,
    :func:`serq.loading.given_or_option`): both were "k: swept twice, or the name of a column of the table",
    which left the user to guess which (a definition ``key`` swept by ``--def`` is refused as the column
    ``key``, and was told it was swept twice)."""
    seen: dict[str, Axis] = {}
    for a in axes:
        if a.name in columns:
            what = "definition" if a.kind == "def" else "let"
            raise UsageError(f"{_swept_as(a, said)}: {a.name} is a column of {table} already ({', '.join(columns)}); "
                             f"a swept name is a column of its own: give the {what} another name to sweep it")
        if a.name in seen:
            raise UsageError(f"{_swept_as(seen[a.name], said)} and {_swept_as(a, said)}: {a.name} is swept twice, "
                             "a column of the table each; a name is swept once (a let's values by --set, a "
                             "definition's bodies by --def)")
        seen[a.name] = a


def _swept_as(a: Axis, said: Any) -> str:
    """How a message names the option that sweeps ``a``: ``--set k`` (``sets['k']``), ``--def k``, ``--trace``,
    or the programs given."""
    if a.kind in ("set", "def"):
        return said(a.kind, a.name)
    return said("trace") if a.kind == "trace" else "the programs given"


def point_columns(columns: Sequence[str], end: str = "seed") -> list[str]:
    """The columns that say which point a row of a table is: the swept names (a table or frame without
    ``end``: none). In a runs table (``end`` ``seed``, with ``key``) every column that is neither
    :data:`FIXED` nor a figure (:func:`figure_columns`), wherever it stands; in another (``runs`` of a points
    table, a search's knob) every column before ``end`` but ``point`` and the figures. ``aggregate`` took
    every column after the first one, ``point`` in a table as written, so a frame without ``point`` lost its
    first swept name and pooled the points that differ in it; a figure moved before ``seed`` by hand was
    taken for a swept name. A plot's line reads its points by this too."""
    columns = list(columns)
    if end not in columns:
        return []
    if end == "seed" and "key" in columns:
        figures = set(figure_columns(columns))
        return [c for c in columns if c not in FIXED and c not in figures]
    return [c for c in columns[: columns.index(end)] if c != "point" and c not in FIXED and not report_figure(c)]


#: the flag of each bound a run's ``partial`` status names (the run's ``message``)
_BOUNDS = {"max-events": "--max-events", "max-wall": "--max-wall", "max-samples": "--max-samples",
           "memory": "the samples' memory bound"}


def run_place(params: Mapping[str, Any], seed: Any) -> str:
    """Where in a sweep a run ran, the line after its error: ``(at the sweep's point trace=week.csv, seed 2)``
    (``(at seed 2)`` with no axis). A run's error says where in the program it failed, not which point or
    seed: a sweep's or a comparison's first failed run, and the capacity search's (with its knob first),
    named neither the trace it replayed nor the value of a --set that made it fail (which ``serq run``
    notes, 'note: `P` is 0, given by --set P')."""
    label = quoted_label(params)
    return f"(at the sweep's point {label}, seed {seed})" if label else f"(at seed {seed})"


def point_notes(axes: Sequence[Axis], params: Mapping[str, Any], given: Any = None) -> list[str]:
    """The notes a failed run's message ends with of the values its point took from ``--set`` (the axes of
    kind ``set`` in ``params``): ``note: `P` is -1, given by --set P`` (``sets['P']`` for the Python API,
    ``given``), as ``serq run`` notes them (serq.loading.set_notes, the one text)."""
    from serq.loading import set_notes

    return set_notes({a.name: params[a.name] for a in axes if a.kind == "set" and a.name in params}, given)


def failures(plan: Plan, runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The message of each failed run of ``runs`` (rows: ``point``, ``seed``, ``status``, ``message``), each
    followed by the notes of its point's ``--set`` values (:func:`point_notes`) and the line of
    :func:`run_place`."""
    points = {p.index: p for p in plan.points}
    return ["\n".join([str(r.get("message")), *point_notes(plan.axes, points[r["point"]].params, plan.given),
                       run_place(points[r["point"]].params, r["seed"])]) if r.get("point") in points
            else str(r.get("message")) for r in runs if r.get("status") == "error"]


def none_finished(plan: Plan, runs: Sequence[Mapping[str, Any]]) -> None:
    """Raise the runs' failure when every one of ``runs`` (rows: ``point``, ``seed``, ``status``, ``message``)
    failed: what ``serq sweep --show`` and ``serq compare`` would show of them has no figure at all, and the
    figures they were asked for (known before the runs, :func:`check_figures`) were said to be missing ("no
    figure 'requests.ttft.mean' in the results") in place of why the runs failed."""
    failed = failures(plan, runs)
    if runs and len(failed) == len(runs):
        raise UserError(f"{len(failed)} run(s) failed; the first:\n{failed[0]}")


def cut_short(runs: Sequence[Mapping[str, Any]], judged: str) -> str | None:
    """The warning that some of ``runs`` (rows or results: ``status``, ``message``) were cut short by a bound
    (status ``partial``: their figures are those of the simulated time run so far), which ``judged`` (``the
    conditions of --find were judged``) counts all the same; ``None`` when none was. ``serq sweep --find``,
    ``serq compare`` and ``serq sweep --show`` judge or average such runs as any other, and said nothing."""
    partial = [r for r in runs if r.get("status") == "partial"]
    if not partial:
        return None
    bounds = " and ".join(sorted({_BOUNDS.get(str(r.get("message")), str(r.get("message"))) for r in partial}))
    return (f"warning: {len(partial)} of {len(runs)} run(s) were cut short by {bounds} (status partial: their "
            f"figures cover only the time simulated before the bound); {judged} on their figures all the same")


#: what a seed is, as a table's check of its seed column says it (serq.options.SEED's words)
SEED_RULE = "a seed is a whole number from 0 to 2**64 - 1"


def bad_seed(frame: Any, lines: Any = None) -> tuple[int, str] | None:
    """Where and what is wrong with a table of runs (a DataFrame with a ``seed`` column) one of whose seeds is
    no seed (a text, a fraction, an empty cell, a negative number): the first such row's place and the message;
    None when every seed is one. Such a row was averaged with its point's other seeds, silently. ``lines``: the
    first line of each row (a CSV file's, :func:`read_csv_columns`), which the message names; else its row,
    counted from 1."""
    import numpy as np

    column = {str(c): c for c in frame.columns}
    if "seed" not in column:
        return None
    cells = frame[column["seed"]]
    kind = getattr(cells.dtype, "kind", "O")
    if kind in "iu":
        below = np.flatnonzero(cells.to_numpy() < 0)
        if not len(below):
            return None
        j = int(below[0])
    else:
        from serq.numbers import NotANumber, whole

        j = None
        for i, v in enumerate(cells.tolist()):
            v = _plain(v)
            if isinstance(v, str):  # (a frame read by pandas with a text among its seeds: each a text)
                try:
                    v = whole(v)
                except (NotANumber, ValueError):
                    j = i
                    break
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                j = i
                break
            # (a float column's: a seed of 64 bits is read as the nearest float, 2**64 - 1 as 2.0**64)
            if isinstance(v, float) and not (v.is_integer() and 0 <= v <= 2.0**64):
                j = i
                break
            if isinstance(v, int) and not 0 <= v < 2**64:
                j = i
                break
        if j is None:
            return None
    v = _plain(cells.iloc[j])
    shown = "an empty cell" if isinstance(v, float) and v != v else (
        f"{clipped(printable(repr(v)))}" if isinstance(v, str) else clipped(show_value(v)))
    at = f"line {int(lines[j])}" if lines is not None else f"row {j + 1}"
    return j, (f"the seed of the run at {at} is {shown}, which is no seed ({SEED_RULE}): a row of a sweep's table "
               "is the run of one seed of its point, and its seeds are what its mean and CI are over; fix or remove "
               "the row")


def repeated_run(frame: Any, end: str = "seed", lines: Any = None) -> tuple[int, str] | None:
    """Where and what is wrong with a table (a DataFrame) that holds one run, or one point, in two rows: the
    second row's place and the message; None when each is in one row. In a table of runs (``end`` ``seed``)
    a run is one point (``point`` and the swept names, :func:`point_columns`) and one seed; in a
    points table (``end`` ``runs``) or a search's (``end`` its knob) a point is its ``point`` and swept names.
    A row copied by hand (or two tables of one sweep joined) was a second seed of its point to ``serq plot``'s
    mean and CI and to ``aggregate``: the run counted twice, the band narrower than its seeds give; a points
    table's point given twice was drawn from whichever of its rows came first. (Rows of one key alone are no
    such pair: points whose IR is one, a program and its copy, share a run.) A run is one point and seed whatever
    its key: two rows of one point and seed under two keys (the tables of two sweeps joined, a key edited) were two
    seeds of the point. ``lines``: the first line of each row (a CSV file's), by which the message names the two
    rows; else by their rows, counted from 1."""
    column = {str(c): c for c in frame.columns}
    if end not in column:
        return None
    runs = end == "seed"
    by = [*(["point"] if "point" in column else []), *point_columns(list(column), end),
          *(["seed"] if runs else [])]
    if not by:
        return None
    cols = [column[c] for c in by]
    # the columns compared alone, without the frame's attrs (a CSV table's lines): DataFrame.duplicated walks
    # every column of the frame it is called on, each a Series given a deep copy of the attrs, so a table of
    # 20 000 figures took minutes to be told it had no figure of a name (serq plot --y NAME), and 300 000 hours
    frame = frame[cols]
    frame.attrs = {}
    # rows that differ in their numbers (point, seed) differ in all of these: the runs' keys, a text of each row,
    # are compared only where those repeat (comparing a million keys held 140 MB, a plot's largest need)
    numbers = [c for c in cols if getattr(frame[c].dtype, "kind", "O") in "iuf"]
    if numbers and len(numbers) < len(cols) and not frame.duplicated(subset=numbers).any():
        return None
    again = frame.duplicated(subset=cols, keep="first").to_numpy()  # (NaN equal to NaN, as a copy's is)
    if not again.any():
        return None
    j = int(again.argmax())
    row = [_plain(frame[c].iloc[j]) for c in cols]
    # (up to the first copy, the only rows given twice are its run's: the first of them is the one it copies)
    first = int(frame.iloc[: j + 1].duplicated(subset=cols, keep=False).to_numpy().argmax())
    where = ", ".join(f"{clipped(c)} {clipped(show_value(v))}" for c, v in zip(by, row))
    rows = (f"lines {int(lines[first])} and {int(lines[j])}" if lines is not None else
            f"rows {first + 1} and {j + 1}")
    if runs:
        return j, (f"the table holds the run of {printable(where)} twice ({rows}): a run is one row, and each seed "
                   "of a point is counted once in its mean and CI; remove the copy")
    return j, (f"the table holds the point at {printable(where)} twice ({rows}): a point is one row, and a line "
               "draws it once; remove the copy")


def aggregate_rows(plan: Plan, columns: Sequence[str], table: Sequence[dict[str, Any]]
                   ) -> tuple[list[str], list[dict[str, Any]]]:
    """Per point across its seeds (runs that did not fail): ``runs``, and for every numeric figure
    ``FIGURE:mean`` and ``FIGURE:ci`` (95 %, Student t over the seeds), then each figure's ``FIGURE:n``, the
    runs with a finite value of it that its mean is over."""
    from .stats import mean_ci

    figs = figure_columns(columns)
    by_point: dict[int, list[dict[str, Any]]] = {}
    for r in table:
        if r["status"] != "error":
            by_point.setdefault(r["point"], []).append(r)
    numeric = [f for f in figs if any(isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), str)
                                      for r in table)]
    out_cols = ["point", *plan.names, "runs"]
    for f in numeric:
        out_cols += [f"{f}:mean", f"{f}:ci"]
    # how many runs each mean is over (its finite values: fewer than runs where some run had none), after
    # every mean and CI, so the columns before keep their places (it was no column, said by --show alone)
    out_cols += [f"{f}:n" for f in numeric]
    out = []
    for p in plan.points:
        rs = by_point.get(p.index, [])
        row: dict[str, Any] = {"point": p.index, **plan.shown(p), "runs": len(rs)}
        for f in numeric:
            n, m, ci, _ = mean_ci([float(r[f]) for r in rs if isinstance(r.get(f), (int, float))])
            row[f"{f}:mean"], row[f"{f}:ci"], row[f"{f}:n"] = m, ci, n
        out.append(row)
    return out_cols, out


# ---------------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------------


def table_format(path: str, flag: str = "--out", what: str = "a table", *, output: bool = True,
                 head: str | None = None) -> str:
    """``"parquet"`` or ``"csv"`` by ``path``'s extension; else one message naming ``flag``: a usage error
    (status 2) for a file to write (``output``), the form of the flag's value; an input's kind is an error of
    that input (status 1), as ``serq run`` says of a file of a type no part loads. ``head``: what heads the
    message in place of ``flag`` and ``path`` (the Python API's ``records=r.txt``, :func:`named`)."""
    low = path.lower()
    if low.endswith(".parquet"):
        return "parquet"
    if low.endswith(".csv"):
        return "csv"
    raise (UsageError if output else UserError)(f"{head or f'{flag} {shown_path(path)}'}: {what} is .parquet or .csv")


def points_path(path: str) -> str:
    """Where the per-point aggregates of table ``path`` go: ``results.points.parquet`` beside
    ``results.parquet``."""
    from serq.files import split_suffix

    stem, ext = split_suffix(path)
    return f"{stem}.points{ext}"


def journal_path(path: str) -> str:
    return f"{path}.journal"


def written_value(v: Any) -> str:
    """A value as a table's CSV writes it (:func:`_csv_value`: an int as its digits, a float as its ``repr``,
    ``2.0``, which reads back as the same float), NaN as ``nan`` rather than an empty cell: what a printed
    table shows of the values its ``--out`` writes, so the two agree (``serq sweep --find``)."""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return _csv_value(v)


def _whole(v: Any) -> bool:
    """Whether the swept value ``v`` is written as an integer (:meth:`Plan.shown`): a float that is a whole
    number below 2**53, not ``-0.0`` (as one it was 0, and ``--set z=0,-0``, two points and two keys, gave
    two rows of z 0)."""
    return (isinstance(v, float) and v.is_integer() and abs(v) < 2.0 ** 53
            and (v != 0 or math.copysign(1.0, v) > 0))


def _csv_value(v: Any) -> str:
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return "" if v is None else str(v)


def encode_table(columns: Sequence[str], table: Sequence[dict[str, Any]], fmt: str,
                 ints: Iterable[str] = ()) -> bytes:
    """The table's bytes in ``fmt``; ``ints``: columns of whole numbers that may hold NaN (the knob of a
    capacity search on a grid of whole numbers, whose ``fails`` is NaN where the condition holds
    everywhere), an integer column with missing values in Parquet (pandas' ``Int64``), not float64."""
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in table:
            w.writerow([_csv_value(r.get(c)) for c in columns])
        return buf.getvalue().encode("utf-8")
    frame = to_frame(columns, table)
    for c in ints:
        frame[c] = frame[c].astype("Int64")
    buf = io.BytesIO()
    try:
        frame.to_parquet(buf, index=False)
    except ImportError:
        raise UserError("a .parquet table needs pyarrow: pip install 'serq-sweep[pandas]' (or write .csv)"
                        ) from None
    return buf.getvalue()


def to_frame(columns: Sequence[str], table: Sequence[dict[str, Any]]) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise UserError("a DataFrame needs pandas: pip install 'serq-sweep[pandas]'") from None
    return pd.DataFrame([[r.get(c, math.nan) for c in columns] for r in table], columns=list(columns))


def _parse_csv(v: str) -> Any:
    """A cell of a sweep's CSV table as :func:`_csv_value` wrote it: an integer as digits 0-9 (after an
    optional ``-``), a float by ``repr`` (serQ's number syntax, or ``nan``), a bool, else the text as it is.
    ``int()`` and ``float()`` read more (full-width ``１２``, ``1_000``, `` 3 ``, ``+3``, ``Infinity``), so a
    hand-edited cell was silently a number no writer writes; it is now kept as text. A flag is read in any
    case (``TRUE``, ``true``, ``True``): a table saved by a spreadsheet writes ``True`` back as ``TRUE``, which
    was text, resumed and written back so (``interrupted`` a word, not a flag) and refused by ``serq plot
    --y interrupted`` as no number. (A float saved with 15 significant digits is a float, that figure.)"""
    if v == "":
        return math.nan
    if len(v) in (4, 5) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    if WHOLE_CELL.fullmatch(v):
        digits = len(v) - (v[0] == "-")
        if digits > MAX_DIGITS:  # no writer writes one: float() of it overflowed (a traceback), and one of more
            # than 4 300 digits was refused by int() in Python's words
            shown = v if len(v) <= 24 else f"{v[:12]}...{v[-6:]}"
            raise ValueError(f"the integer {shown} ({digits} digits) is beyond the range of a number (at most "
                             f"{MAX_DIGITS} digits)")
        return int(v)
    if FLOAT_CELL.fullmatch(v):
        return float(v)
    return v


#: a cell as a sweep's writers write a number (this table's :func:`_csv_value`, the records CSV's
#: serq_report.csv.format_column): an integer by ``str(int)``, a float by ``repr`` (``0.5``, ``1e+300``,
#: ``-0.0``, ``inf``, ``nan``); the readers of both hold a hand-edited cell to them
WHOLE_CELL = re.compile(r"-?[0-9]+")
FLOAT_CELL = re.compile(rf"{NUMBER_PATTERN}|{NAN_PATTERN}")


#: The longest line of a table or journal a sweep reads back (a sweep's runs table and points table, its
#: journals, what serq plot reads of them): the line of a wide run. A program has up to
#: serq_ir.rules.MAX_MEMBERS (100 000) stage and pool members, each a column per figure (a stage's 15), so
#: the header of a sweep of a family of 60 000 stages is 25 MB, its points table's (a mean, CI and count per
#: figure) 85 MB, and a run's journal entry, every figure by name, as long; the bound on a trace's or a
#: dump's lines, serq.files.MAX_LINE (16 MiB), refused the sweep's own table (``line 1 is longer than 16
#: MiB``) at its resume and its plot. 256 MiB takes the tables of 100 000 members whose names are up to
#: some 30 characters, and still bounds what a hostile file (a sparse file of NUL bytes is one line) makes
#: a reader hold: a line is refused once it runs past it, before it is held whole.
TABLE_LINE = 256 * 2**20


@contextlib.contextmanager
def wide_fields() -> Iterator[None]:
    """The csv module's bound on a field's characters (131 072 by default) raised to :data:`MAX_LINE`, the
    bound on a line of the file, while a table a sweep wrote is read back, and put back after: a swept
    definition's text is a cell of its point's rows, and one longer than the default (the Python API takes
    any) made a table its own resume could not read (``_csv.Error: field larger than field limit``, a
    traceback; a hand-edited cell the same). The bound is the module's, not the reader's: the tables are
    read before any run of the sweep starts."""
    before = csv.field_size_limit()
    csv.field_size_limit(max(before, MAX_LINE))
    try:
        yield
    finally:
        csv.field_size_limit(before)


class TableFault(ValueError):
    """A fault of a CSV file a sweep wrote (its table, a records table), read back: ``why``, at ``line`` and
    ``col`` of ``path``. :meth:`message` tells it as a source's mistake is told, the line quoted with a caret
    under the column (a hand-edited cell was named by its line's number and its column's name alone)."""

    def __init__(self, path: str, line: int, col: int, why: str):
        super().__init__(why)
        self.path, self.line, self.col, self.why = path, line, col, why

    def message(self, what: str, after: str = "") -> str:
        """``PATH:LINE:COL: error: WHAT (WHY)AFTER``, then the line quoted with a caret under the column. (A file
        saved as UTF-16 without a byte-order mark is refused at its header by :func:`unmarked_utf16`, which every
        reader of a table, the records and a dump calls, before any other fault of it.)"""
        from serq_sim.trace import csv_located

        return csv_located(self.path, self.line, self.col, f"{what} ({self.why}){after}")


def not_utf8_fault(path: str) -> TableFault:
    """The :class:`TableFault` of the first byte of the CSV file ``path`` that is not UTF-8, at its line and
    column."""
    from serq.files import not_utf8
    from serq_sim.trace import csv_bad_byte

    bad = csv_bad_byte(path)
    if bad is None:  # pragma: no cover - the decoder said there is one
        return TableFault(path, 1, 1, "not UTF-8 text")
    line, col, byte, head = bad
    return TableFault(path, line, col, not_utf8(byte, head, None))


def csv_rows(path: str, reader: Any) -> Iterator[tuple[int, int, list[str]]]:
    """The records of the CSV ``reader`` of ``path`` after its header that are not blank, as ``(first line,
    last line, fields)`` (a quoted field may span lines); a byte that is not UTF-8 is a :class:`TableFault`
    at its line and column."""
    last = reader.line_num
    try:
        for row in reader:
            first, last = last + 1, reader.line_num
            if row:  # (a blank line, as csv.DictReader skips it)
                yield first, last, row
    except UnicodeDecodeError:
        raise not_utf8_fault(path) from None


def width_fault(path: str, first: int, last: int, row: Sequence[str], width: int) -> TableFault:
    """The :class:`TableFault` of a record (lines ``first`` to ``last``) of ``len(row)`` fields where the header
    has ``width``: at its first field past the header's, or at its start when it has fewer."""
    from serq_sim.trace import csv_cell_at

    line, col = csv_cell_at(path, first, last, width) if len(row) > width else (first, 1)
    return TableFault(path, line, col, f"line {first} has {len(row)} fields, the header {width}")


def cell_fault(path: str, first: int, last: int, index: int, why: str) -> TableFault:
    """The :class:`TableFault` ``why`` of field ``index`` of a record (lines ``first`` to ``last``), at its start."""
    from serq_sim.trace import csv_cell_at

    line, col = csv_cell_at(path, first, last, index)
    return TableFault(path, line, col, why)


def repeated_column(path: str, header: Sequence[str], last: int) -> None:
    """Refuse a header (lines 1 to ``last``) that names a column twice: a :class:`TableFault` at the second.
    Read into a row of cells by name, the later column's cells silently took the place of the earlier's
    (a sweep swept a let named as one of the report's figures, ``events``, and wrote such a table; a resume
    read the figure as the point's value), and ``serq plot --cdf`` of records holding two columns ``wait``
    was a traceback of pandas."""
    twice = repeated_name(header)
    if twice is not None:
        j, i = twice
        raise cell_fault(path, 1, last, i, f"the header gives the column {printable(header[i])[:60]} twice, as "
                         f"fields {j + 1} and {i + 1}: {ONE_NAME}")


#: why a table's column named twice is refused (:func:`repeated_column`, :func:`repeated_parquet_column`)
ONE_NAME = "no column of a table is named twice"


def repeated_name(names: Sequence[Any]) -> tuple[int, int] | None:
    """``(first, second)``: the places of the first name ``names`` give twice (the second place the least such),
    None when each is given once: the one search of a CSV header's, a Parquet schema's and a frame's."""
    seen: dict[Any, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            return seen[name], i
        seen[name] = i
    return None


def other_separator(path: str, header: Sequence[str] | None) -> None:
    """Refuse (a :class:`TableFault` at its first separator) a CSV table whose header is one column holding a
    ``;`` or a tab: a table whose fields are separated by something other than a comma (a spreadsheet's
    export in a locale whose decimal mark is a comma), read as one column. Every reader of a table or records
    met it as something else: ``serq plot`` said it needs ``--x``, or that the table has no column of the name
    asked for, its one column listed. No table serq writes has such a header (a column's name is a name of the
    language, or a figure's path)."""
    if not header or len(header) != 1:
        return
    name = header[0]
    at = [i for i in (name.find(";"), name.find("\t")) if i >= 0]
    if not at:
        return
    i = min(at)
    said = "';'" if name[i] == ";" else "a tab"
    shown = printable(clipped(name, 80))
    raise TableFault(path, 1, i + 1, f"the header is one column, {shown}, whose name holds {said}: the fields seem "
                     f"separated by {said}, not by commas; serq reads a table whose fields are separated by commas, "
                     "as serq writes one: write it with commas")


def csv_header(path: str) -> list[str] | None:
    """The names of the CSV file ``path``'s first row, read as a table is read (a regular file only, never a
    FIFO waited on; a line of at most TABLE_LINE bytes; a byte-order mark left out), or None when it cannot be read
    so (the reader that reads the whole file says why)."""
    try:
        with wide_fields(), io.TextIOWrapper(open_input(path, max_line=TABLE_LINE), newline="",
                                             encoding="utf-8-sig") as f:
            return next(csv.reader(f), [])
    except (OSError, ValueError, csv.Error):
        return None


def header_separator(path: str) -> None:
    """:func:`other_separator` of the CSV file ``path``'s header, read alone (serq plot's check before it
    asks for a flag a table without commas would be no help with: ``needs --x NAME and --y FIGURE``); a file it
    cannot read so is left to the reader that reads it."""
    header = csv_header(path)
    if header is not None:
        other_separator(path, header)


def unmarked_utf16(path: str, header: Sequence[str] | None) -> None:
    """Refuse (a :class:`TableFault` at 1:1) a CSV table whose ``header`` begins as UTF-16 text without a
    byte-order mark does (:func:`serq.files.utf16_note`), read as UTF-8 (a NUL beside each letter): such a
    table was told by whatever its reader met first, a row of one field, or no column of the name asked
    for, its names quoted with a NUL between every two letters."""
    if not header or "\x00" not in header[0][:2]:
        return
    from serq.files import text_utf16_note

    note = text_utf16_note("".join(header))
    if note:
        raise TableFault(path, 1, 1, note.removeprefix("; "))


def read_csv_table(path: str, lines: list[tuple[int, int]] | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and the rows of a CSV table written by a sweep (its runs or its points), each row's first and
    last line appended to ``lines`` when given. A malformed row or cell, or a byte that is not UTF-8, is a
    :class:`TableFault` at its line and column.

    The rows are read :data:`CSV_CHUNK` at a time and parsed a column at a time (:func:`_parse_chunk`), each
    cell read as :func:`_parse_csv` reads it; a fault is the one the first faulty row, read in order, has."""
    rows: list[dict[str, Any]] = []
    header: list[str] = []
    with contextlib.closing(_csv_chunks(path)) as chunks:
        for header, chunk, spans, fault in chunks:
            # the rows before a faulty one are parsed first: a cell of theirs that is no number is the first fault
            rows.extend(_parse_chunk(path, header, chunk, spans))
            if lines is not None:
                lines.extend(spans)
            if fault is not None:
                raise fault
    return header, rows


def read_csv_columns(path: str, names: Iterable[str] | Callable[[list[str]], Iterable[str] | None] | None = None,
                     text: tuple[Callable[[list[str]], Any], Callable[[list[Any]], Any]] | None = None
                     ) -> tuple[list[str], dict[str, Any], Any]:
    """The header of a CSV table written by a sweep (its runs or its points, or records), its columns named in
    ``names`` (all of them when None; a name the header has not is no column; a function of the header that
    gives them, or None for all) and where each row was: as
    :func:`read_csv_table` reads the table, a column at a time, with no object per row. A column whose cells are
    all numbers (integers, floats, empty cells as NaN) is a numpy array (int64, or float64 when any cell is
    not an integer), another a list of its cells as :func:`_parse_csv` reads them; the rows' lines are a numpy
    array of ``(first, last)`` pairs. Every row is held to the header's width and to UTF-8; a cell
    :func:`_parse_csv` refuses is a fault in a column read (the first, in the order of the rows and then the
    columns), a column not read is not parsed. ``text``: ``(made, joined)``, a column of :data:`TEXT` (a run's
    status, message, warnings and key) a chunk at a time as ``made`` makes its cells (a pandas array: a million
    keys as strings each held 80 MB and more), and ``joined`` of those. (A table of a million rows read as a dict
    per row held 1.2 GB for the two columns a CDF of ttft reads.)"""
    import numpy as np

    wanted = None if names is None or callable(names) else set(names)
    header: list[str] = []
    picked: list[int] | None = None
    pieces: list[list[Any]] = []
    spans_read: list[Any] = []
    with contextlib.closing(_csv_chunks(path)) as chunks:
        for header, chunk, spans, fault in chunks:
            if picked is None:
                if callable(names):
                    given = names(header)
                    wanted = None if given is None else set(given)
                picked = [i for i, n in enumerate(header) if wanted is None or n in wanted]
                pieces = [[] for _ in picked]
            if chunk:
                for i, piece, column in zip(picked, pieces, _parse_columns(path, header, chunk, spans, picked,
                                                                           typed=True)):
                    piece.append(text[0](column) if text is not None and header[i] in TEXT else column)
                spans_read.append(np.array(spans, dtype=np.int64))
            if fault is not None:
                raise fault
    columns = {header[i]: text[1](piece) if text is not None and header[i] in TEXT and piece else _joined_column(piece)
               for i, piece in zip(picked or [], pieces)}
    return header, columns, np.concatenate(spans_read) if spans_read else np.zeros((0, 2), dtype=np.int64)


def _joined_column(pieces: list[Any]) -> Any:
    """A column read a chunk at a time (:func:`read_csv_columns`): one numpy array of its chunks when each is
    one (int64 and float64 make float64, as a column of those cells does in pandas), else a list of its cells."""
    import numpy as np

    if all(isinstance(p, np.ndarray) for p in pieces):
        if not pieces:
            return np.zeros(0, dtype=object)
        return np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
    out: list[Any] = []
    for p in pieces:
        out.extend(p.tolist() if isinstance(p, np.ndarray) else p)
    return out


def _csv_chunks(path: str) -> Iterator[tuple[list[str], list[list[str]], list[tuple[int, int]], TableFault | None]]:
    """The rows of a CSV table written by a sweep, :data:`CSV_CHUNK` at a time, as ``(header, rows, their
    (first, last) lines, the fault that ended them or None)``: at least one chunk (no row in a table of a header
    alone); a fault (a row not of the header's width, a byte that is not UTF-8) ends the last."""
    # a regular file only (a FIFO would block), of lines of at most TABLE_LINE bytes (a sparse file of NUL bytes
    # is one line); a row whose fields are not the header's is an error, not a row with holes
    with wide_fields(), io.TextIOWrapper(open_input(path, max_line=TABLE_LINE), newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, [])
        except UnicodeDecodeError:
            raise not_utf8_fault(path) from None
        unmarked_utf16(path, header)
        other_separator(path, header)
        repeated_column(path, header, reader.line_num)
        records = csv_rows(path, reader)
        while True:
            chunk: list[list[str]] = []
            spans: list[tuple[int, int]] = []
            fault = None
            try:
                for first, last, row in records:
                    if len(row) != len(header):
                        fault = width_fault(path, first, last, row, len(header))
                        break
                    chunk.append(row)
                    spans.append((first, last))
                    if len(chunk) == CSV_CHUNK:
                        break
            except TableFault as e:  # (a byte that is not UTF-8)
                fault = e
            yield header, chunk, spans, fault
            if fault is not None or len(chunk) < CSV_CHUNK:
                return


#: the rows of a CSV table parsed at a time: a column's cells of a chunk are checked in one pass
CSV_CHUNK = 4096


#: a column's cells, each after a line feed: a character no integer cell has; no float cell that is a number;
#: a cell (a line) with a character a number has not (inf, nan, a word); a cell that begins with a ``+``
#: (``float()`` reads ``+1``, which no writer writes) or is an integer
NOT_WHOLE = re.compile(r"[^0-9\n-]")
NOT_DECIMAL = re.compile(r"[^0-9.eE+\n-]")
WORD_LINE = re.compile(r"\n([0-9.eE+-]*[^0-9.eE+\n-][^\n]*)")
PLUS_OR_WHOLE_LINE = re.compile(rf"\n(?:\+|(?:{WHOLE_CELL.pattern})(?:\n|\Z))")
#: a column of flags (or empty cells), each after a line feed
FLAG_COLUMN = re.compile(r"(?:\n(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])?)*")
#: a float cell of letters: inf and NaN as :data:`FLOAT_CELL` takes them
WORD_FLOAT = re.compile(rf"-?inf|{NAN_PATTERN}")


def _parse_column(cells: Sequence[str]) -> list[Any] | None:
    """The cells of a column as :func:`_parse_csv` reads each, or None (:func:`_typed_column`)."""
    typed = _typed_column(cells)
    return None if typed is None else typed[1]


def _typed_column(cells: Sequence[str]) -> tuple[str, list[Any]] | None:
    """The cells of a column as :func:`_parse_csv` reads each, when they are all integers of at most
    :data:`MAX_DIGITS` digits, all floats (none an integer) or all flags, empty cells (NaN) among them; else
    None (the column's cells are read one by one). A few scans of the column's text in C, then ``int()`` or
    ``float()`` of each cell, where a cell's own reading tried three patterns in Python: of the characters
    0-9 and ``-`` alone, ``int()`` reads just what :data:`WHOLE_CELL` takes; of 0-9, ``.``, ``e``, ``E``, ``+``
    and ``-``, ``float()`` reads just what :data:`FLOAT_CELL` takes but a leading ``+``. With the cells, what
    they are: ``int`` (an empty cell NaN among them), ``float`` or ``flag``."""
    joined = "\n" + "\n".join(cells)
    if joined.count("\n") != len(cells):  # (a quoted cell holding a line feed)
        return None
    nan = math.nan
    holes = "" in cells
    try:
        if not NOT_WHOLE.search(joined):
            if max(map(len, cells)) > MAX_DIGITS:  # (refused by _parse_csv, at its cell)
                return None
            return "int", [int(v) if v else nan for v in cells] if holes else list(map(int, cells))
        if PLUS_OR_WHOLE_LINE.search(joined):
            return None
        if NOT_DECIMAL.search(joined) and not all(WORD_FLOAT.fullmatch(w) for w in WORD_LINE.findall(joined)):
            if not FLAG_COLUMN.fullmatch(joined):
                return None
            return "flag", [v.lower() == "true" if v else nan for v in cells]
        return "float", [float(v) if v else nan for v in cells] if holes else list(map(float, cells))
    except ValueError:  # (a cell such as '-', '1e', '.': text, or refused, as its own reading says)
        return None


def _parse_chunk(path: str, header: list[str], chunk: list[list[str]], spans: list[tuple[int, int]]
                 ) -> list[dict[str, Any]]:
    """The rows ``chunk`` (at lines ``spans``) of a CSV table of columns ``header``, as cells by name, each read
    as :func:`_parse_csv` reads it (a column of :data:`TEXT` as it is); a cell it refuses is a
    :class:`TableFault`, the first in the order of the rows and then the columns."""
    if not chunk:
        return []
    columns = _parse_columns(path, header, chunk, spans, range(len(header)))
    return [dict(zip(header, values)) for values in zip(*columns)]


def _parse_columns(path: str, header: list[str], chunk: list[list[str]], spans: list[tuple[int, int]],
                   picked: Sequence[int], typed: bool = False) -> list[Any]:
    """The columns ``picked`` (their indexes in ``header``) of the rows ``chunk`` (at lines ``spans``), each a list
    of its cells as :func:`_parse_chunk` reads them, a cell refused a :class:`TableFault` as it says (the first
    in the order of the rows and then of these columns). ``typed``: a column of numbers that fit in a numpy
    array (int64 or float64; an empty cell NaN) is one, and a column of text holds each of its words once."""
    columns: list[Any] = []
    slow: list[int] = []
    if len(picked) == len(header):
        cut: Iterable[Sequence[str]] = zip(*chunk) if chunk else ([] for _ in header)
    else:
        cut = ([row[i] for row in chunk] for i in picked)
    for i, cells in zip(picked, cut):
        kind, parsed = ("text", cells) if header[i] in TEXT else (_typed_column(cells) if cells else None) or ("", None)
        if parsed is None:
            slow.append(len(columns))
            parsed = list(cells)
        elif typed and kind in ("int", "float"):
            parsed = _number_array(parsed)
        elif typed and kind == "text":  # (a word given in many rows, a run's status, held once)
            held: dict[str, str] = {}
            parsed = [held.setdefault(v, v) for v in parsed]
        columns.append(parsed)
    for k in slow:  # cell by cell, in the order of the rows (only these columns can refuse a cell), a value once
        column, known = columns[k], {}
        for j, v in enumerate(column):
            try:
                column[j] = known[v]
            except KeyError:
                pass
            else:
                continue
            try:
                column[j] = known[v] = _parse_csv(v)
            except ValueError as e:
                raise _first_refused(path, header, chunk, spans, [picked[n] for n in slow], j, picked[k], e) from None
    return columns


def _number_array(values: list[Any]) -> Any:
    """A chunk's column of integers or floats (NaN for an empty cell) as a numpy array, int64 or float64 as
    pandas makes a column of those values; the list itself when an integer is beyond int64."""
    import numpy as np

    try:
        array = np.array(values)
    except OverflowError:
        return values
    return array if array.dtype.kind in "if" and array.dtype.itemsize == 8 else values


def _first_refused(path: str, header: list[str], chunk: list[list[str]], spans: list[tuple[int, int]],
                   slow: list[int], row: int, col: int, error: ValueError) -> TableFault:
    """The :class:`TableFault` of the first cell :func:`_parse_csv` refuses in ``chunk``, in the order of the rows
    and then the columns: the one at ``row`` and ``col`` (``error``), or one of an earlier cell of another
    column among ``slow``."""
    for j in range(row + 1):
        for i in slow:
            if j == row and i == col:
                break
            try:
                _parse_csv(chunk[j][i])
            except ValueError as e:
                row, col, error = j, i, e
                break
        else:
            continue
        break
    return cell_fault(path, *spans[row], col, f"column {printable(header[col])[:60]}: {error}")


def read_table(path: str, lines: list[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
    """The rows of a table written by a sweep (``.csv`` or ``.parquet``); a CSV table's as
    :func:`read_csv_table` reads them."""
    return read_table_columns(path, lines)[1]


def read_table_columns(path: str, lines: list[tuple[int, int]] | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and the rows of a table written by a sweep (``.csv`` or ``.parquet``), as :func:`read_table`
    reads them: the columns are the header's even when there is no row."""
    fmt = table_format(path, output=False)
    if fmt == "csv":
        return read_csv_table(path, lines)
    frame = read_parquet(path, sized=True)
    return [str(c) for c in frame.columns], frame.to_dict("records")


#: what reading a Parquet file without pandas or pyarrow says (writing one says as much: :func:`table_bytes`)
PARQUET_NEEDS = "reading a .parquet file needs pandas and pyarrow: pip install 'serq-sweep[pandas]' (or use .csv)"


#: the most cells (rows times columns) a table of a sweep read back may have: a sweep has at most a million
#: runs (axes.MAX_POINTS), each a row, of a hundred figures or so
MAX_TABLE_CELLS = 10**8


def read_parquet(path: str, sized: Any = False) -> Any:
    """A ``.parquet`` file (a sweep's table, its points table or records) as a pandas DataFrame, read through
    :func:`serq.files.open_input` as every input is. Without pandas or pyarrow (optional: serq-sweep's
    ``[pandas]`` extra) it is a :class:`UserError` naming the file: a resumed sweep, ``serq plot`` of a
    table and ``--cdf`` of records ended in a traceback of the import (writing one already said so).
    ``sized``: a table of runs or points, held to what a sweep writes (:func:`table_size`) before its
    rows are read; a function of the file's Parquet metadata, another such check (a records table's,
    serq_sweep.records.records_size)."""
    try:
        import pandas as pd
    except ImportError:
        raise UserError(f"{shown_path(path)}: {PARQUET_NEEDS}") from None
    with open_input(path) as f:
        meta = parquet_metadata(f)
        if meta is not None:  # (a column named twice: pyarrow's error of it was the whole schema, a line a column)
            repeated_parquet_column(meta.schema.to_arrow_schema().names)
        if sized:
            (sized if callable(sized) else table_size)(meta)
        try:
            frame = pd.read_parquet(f)
        except ImportError:  # (pandas' own: no engine, pyarrow or fastparquet, is installed)
            raise UserError(f"{shown_path(path)}: {PARQUET_NEEDS}") from None
        except ValueError as e:  # (pyarrow's words can run on for a line a column: the first line, cut)
            said = str(e).strip().split("\n", 1)[0]
            raise ValueError(said if len(said) <= 300 else said[:299] + "…") from None
    plain_cells(frame)
    return frame


def repeated_parquet_column(names: Sequence[Any], whose: str = "the schema") -> None:
    """Refuse (a ValueError) a Parquet table whose schema names a column twice, as :func:`repeated_column`
    refuses a CSV header that does: pyarrow reads no such table, and its error listed the whole schema.
    ``whose``: what holds the names (``frame``: a DataFrame given to ``aggregate`` or ``plot``, whose column
    named twice was an AttributeError of pandas, or a second ``seed`` taken for the first)."""
    twice = repeated_name(names)
    if twice is not None:
        j, i = twice
        raise ValueError(f"{whose} names the column {printable(str(names[i]))[:60]} twice, as columns "
                         f"{j + 1} and {i + 1}: {ONE_NAME}")


def table_size(meta: Any) -> None:
    """Refuse (a ValueError saying why) a Parquet table of runs or points whose footer ``meta`` (None: no
    pyarrow, nothing to check) says more rows than a sweep's runs can be (:data:`axes.MAX_POINTS`) or more
    cells than :data:`MAX_TABLE_CELLS`, before any row is read: Parquet compresses a column of one value to
    almost nothing, and a file of 0.9 MB holding 30 million rows of one run was read whole, 16 GB and
    minutes, by a sweep resuming from it."""
    from .axes import MAX_POINTS

    footer_bound(meta, MAX_POINTS, MAX_TABLE_CELLS, "runs a sweep has at most", "a sweep's table has at most")


def footer_bound(meta: Any, most_rows: int, most_cells: int, rows_of: str, cells_of: str) -> None:
    """The one shape of the checks of a Parquet file's footer ``meta`` (None: nothing to check) against fixed
    bounds: a ValueError when its rows are more than ``most_rows`` (``it holds R rows, more than the N
    ROWS_OF``) or its cells more than ``most_cells`` (``… cells CELLS_OF``)."""
    if meta is None:
        return
    rows, cols = meta.num_rows, meta.num_columns
    if rows > most_rows:
        raise ValueError(f"it holds {rows} rows, more than the {most_rows} {rows_of}")
    if rows * cols > most_cells:
        raise ValueError(f"it holds {rows} rows of {cols} columns, more than the {most_cells} cells {cells_of}")


def parquet_metadata(f: Any) -> Any:
    """The metadata (its footer: rows, columns) of the Parquet file open as ``f``, read before any row is;
    None without pyarrow (pandas' reading says what is missing). ``f`` is left at its start."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    try:
        return pq.ParquetFile(f).metadata
    except (OSError, ValueError) as e:
        if isinstance(e, OSError) and e.errno is not None:
            raise  # (the file's own: EIO and the like, said by its reason)
        # pyarrow's words of a footer it cannot decode end in a newline ("Couldn't deserialize thrift:
        # TProtocolException: Negative size\n"), which ended the message of serq plot in a blank line and
        # broke a resumed sweep's in two: the first line, cut, as read_parquet takes pandas' words
        said = str(e).strip().split("\n", 1)[0]
        raise ValueError(said if len(said) <= 300 else said[:299] + "…") from None
    finally:
        f.seek(0)


#: what a cell of a table serQ writes holds (a number, a flag, a word, or nothing), as Python gives it
PLAIN_CELL = (int, float, str, bool, type(None))


def plain_cells(frame: Any) -> None:
    """Refuse (a ``ValueError`` naming the column, its row and the value) a column of a Parquet file that holds
    what no table serQ writes holds: a list, a map, a date, a duration, bytes, a decimal or a complex number
    (Parquet keeps any Arrow type). A CSV cell is held to its writer's syntax (:func:`_parse_csv`); a Parquet
    cell was taken as it came: a list in a figure's column of a table resumed was a traceback (``can only
    convert an array of size 1``), one in ``key`` another (``unhashable type``), and a date was written back
    into the resumed table as a figure."""
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "iufb":  # (numbers and flags, nullable ones included)
            continue
        if column.dtype.kind == "O":  # words (pandas' strings, Python objects): each cell looked at
            for row, v in enumerate(column.tolist()):
                if not isinstance(v, PLAIN_CELL) and not _missing(v):
                    raise ValueError(f"column {printable(str(name))[:60]}, row {row + 1}: "
                                     f"{printable(clipped(repr(v), 60))} is no number, flag or word")
            continue
        raise ValueError(f"column {printable(str(name))[:60]} holds {printable(str(column.dtype))} values, none of "
                         "a table serQ writes (numbers, flags, words)")


def _missing(v: Any) -> bool:
    """Whether ``v`` is pandas' missing value (``pd.NA``, ``NaT``) rather than a value."""
    try:
        import pandas as pd

        return v is pd.NA or v is pd.NaT
    except ImportError:  # pragma: no cover - a frame came from pandas
        return False


def _result_of_row(row: Mapping[str, Any], figure_names: Sequence[str]) -> dict[str, Any]:
    return {"status": str(row.get("status")), "message": _text(row.get("message")),
            "warnings": _text(row.get("warnings")), "figures": {f: _plain(row[f]) for f in figure_names if f in row}}


def _text(v: Any) -> str:
    """A text cell read back: an empty one is ``""`` (a CSV's empty cell, a Parquet column's None or NaN)."""
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):  # a numpy scalar from parquet
        v = v.item()
    return v


def unreadable(path: str, e: Exception) -> str:
    """Why a table a sweep resumes from could not be read, from the error reading it: an ``OSError``'s reason,
    a byte that is not UTF-8 named as serQ's other inputs name it (with the byte-order mark of a file saved
    as UTF-16: Python's words were "'utf-8' codec can't decode byte 0xff in position 0: invalid start
    byte"), else the reader's words."""
    if isinstance(e, OSError):
        return str(e.strerror or e)
    if isinstance(e, UnicodeDecodeError):
        from serq.files import not_utf8

        try:
            with open(path, "rb") as f:
                head = f.read(4)
        except OSError:
            head = b""
        return not_utf8(e.object[e.start], head, None)
    return str(e)


def load_finished(path: str, plan: Plan, others: set[str] | None = None) -> dict[str, dict]:
    """The runs an earlier sweep into ``path`` finished: those of the table there and of its journal,
    key -> result (a key this sweep does not run is left out, and added to ``others`` when given)."""
    wanted = {plan.key(p, s) for p in plan.points for s in plan.seeds}
    given = getattr(plan, "given", None)
    fresh = fresh_named(given)  # (--fresh, or the Python API's fresh=True)
    done: dict[str, dict] = {}
    if os.path.exists(path):
        lines: list[tuple[int, int]] = []
        try:
            names, table = read_table_columns(path, lines)
        except TableFault as e:
            raise UserError(e.message("cannot read the table to resume from", f"; remove it or give {fresh}")) from None
        except (OSError, ValueError, KeyError, csv.Error) as e:
            raise UserError(f"{shown_path(path)}: cannot read the table to resume from ({unreadable(path, e)}); remove it or give "
                            f"{fresh}") from None
        # a file of columns and no key is not a sweep's table, with rows or without (a header alone, 'name,score',
        # was taken for an empty table and replaced); an empty file has nothing to lose
        if names and "key" not in names:
            raise UserError(f"{shown_path(path)}: not a sweep's table (no column key); remove it or give {fresh}")
        # (a table of keys without their statuses: each row's was said to be 'None', none a sweep writes)
        if names and "status" not in names:
            raise UserError(f"{shown_path(path)}: not a sweep's table (no column status, which every row of one has); remove "
                            f"it or give {fresh}")
        # a table written before runs kept their reports' warnings has no column of them: its runs are run
        # again (once), rather than written back as runs that warned of nothing
        if table and "warnings" not in names:
            for r in table:
                if others is not None and r.get("key") is not None and r.get("key") not in wanted:
                    others.add(str(r["key"]))
            table = []
        if table:
            # the figures by their names, not their places (report_figure: a table whose columns were reordered
            # by hand, figures before key, had those figures taken for no column, and its runs said to have no
            # number under a figure whose cell held one): a run's figures are its report's, each under one of
            # the report's heads, so a swept name of the table's own that this sweep does not sweep (a --set mu
            # dropped, the runs of mu's default kept by their keys), a column renamed or added by hand (lam to
            # Lam, an empty name) is none: each was written back after key as a figure, mu:mean and mu:ci in
            # the points table and a curve of serq plot --y mu
            swept = set(plan.names)
            figs = [c for c in names if c not in FIXED and c not in swept and report_figure(c)]
            unknown = [c for c in names if c not in FIXED and c not in swept and not report_figure(c)]
            refuse_unknown_figures(path, names, unknown, given)
            said = not_figures(path, unknown, given)
            if said is not None:  # before the first run, while the table there is still whole
                say(said)
            firsts: dict[str, int] = {}  # key -> the row (counted from 2) a run was first read at
            for n, r in enumerate(table, 2):
                if r.get("key") in wanted:
                    if r.get("status") not in STATUSES:  # (hand-edited: "OK", "", "o\x00k" were taken as ok)
                        shown = printable(repr(str(r.get("status"))[:40]))
                        why = (f"the run {r['key']} (row {n - 1}) has the status {shown}, none a sweep writes "
                               f"({', '.join(STATUSES)}); remove it or give {fresh}")
                        if lines and "status" in names:  # (a CSV table: at the cell, the line quoted)
                            from serq_sim.trace import csv_located

                            fault = cell_fault(path, *lines[n - 2], names.index("status"), why)
                            raise UserError(csv_located(path, fault.line, fault.col, why))
                        raise UserError(f"{shown_path(path)}: {why}")
                    res = _result_of_row(r, figs)
                    for f, v in res["figures"].items() if res["status"] != "error" else ():
                        fault = figure_fault(f, v)
                        if fault is not None:  # (a cell edited into a text, "abc", was resumed as the run's figure)
                            why = f"the run {r['key']} (row {n - 1}): {fault}; remove it or give {fresh}"
                            if lines:  # (a CSV table: at the cell, the line quoted)
                                from serq_sim.trace import csv_located

                                at = cell_fault(path, *lines[n - 2], names.index(f), why)
                                raise UserError(csv_located(path, at.line, at.col, why))
                            raise UserError(f"{shown_path(path)}: {why}")
                    lacking = lacking_figure(res["status"], res["figures"])
                    if lacking is not None:  # (a row blanked or cut down by hand was resumed as a run of no figures)
                        why = (f"the run {r['key']} (row {n - 1}) is {res['status']} and has no number under "
                               f"{lacking}, which every run that did not fail has; remove it or give {fresh}")
                        if lines and lacking in names:  # (a CSV table: at the cell, the line quoted)
                            from serq_sim.trace import csv_located

                            fault = cell_fault(path, *lines[n - 2], names.index(lacking), why)
                            raise UserError(csv_located(path, fault.line, fault.col, why))
                        raise UserError(f"{shown_path(path)}: {why}")
                    if res["status"] == "error":
                        # a run that failed has no figures (what it journals, what a sweep that runs it keeps):
                        # its row's empty cells read back as NaN (CSV) and as None in a Parquet column of text
                        # or flags (interrupted, partial), which then led the resumed table's columns
                        res["figures"] = {}
                    if r["key"] in done:
                        _one_result(path, r["key"], firsts[r["key"]], n, done[r["key"]], res, names, lines, fresh)
                    firsts.setdefault(r["key"], n)
                    done[r["key"]] = res
                elif others is not None and r.get("key") is not None:
                    others.add(str(r["key"]))
    for key, r in journal_entries(journal_path(path), wanted, _RESULT_FIELDS, others, entry=_journaled_run,
                                  given=given):
        if "warnings" not in r:  # (journaled before runs kept their warnings: run again, as such a table's)
            done.pop(key, None)
            continue
        done[key] = {"status": r["status"], "message": r["message"], "warnings": r["warnings"],
                     "figures": r["figures"]}
    return {k: r for k, r in done.items() if not not_the_programs(r)}


def _one_result(path: str, key: str, first: int, n: int, was: Mapping[str, Any], res: Mapping[str, Any],
                names: Sequence[str], lines: Sequence[tuple[int, int]], fresh: str) -> None:
    """Refuse a table that gives the run ``key`` in two rows (``first`` and ``n``, counted from 2 as the
    caller counts them) that differ: a run has one result, and the resume took the row that came last in
    silence, the other's figures lost (a row copied by hand and edited, the tables of two sweeps joined). Rows
    alike are one run's (points whose IR is one, a program and its copy, share a run and its key), kept."""
    for col, a, b in (("status", was["status"], res["status"]), ("message", was["message"], res["message"]),
                      ("warnings", was["warnings"], res["warnings"]),
                      *((f, was["figures"].get(f), res["figures"].get(f))
                        for f in dict.fromkeys([*was["figures"], *res["figures"]]))):
        if _same_cell(a, b):
            continue
        why = (f"the run {key} is in rows {first - 1} and {n - 1}, which differ under {printable(col)[:60]} "
               f"({clipped(show_value(a) if isinstance(a, float) else str(a))} and "
               f"{clipped(show_value(b) if isinstance(b, float) else str(b))}): a run has one row; remove the "
               f"one that is not its run's, or give {fresh}")
        if lines and col in names:  # (a CSV table: at the second row's cell, the line quoted)
            from serq_sim.trace import csv_located

            at = cell_fault(path, *lines[n - 2], list(names).index(col), why)
            raise UserError(csv_located(path, at.line, at.col, why))
        raise UserError(f"{shown_path(path)}: {why}")


def _same_cell(a: Any, b: Any) -> bool:
    """Whether two cells of a run's rows read back as one value: NaN as NaN, ``-0.0`` apart from ``0.0``."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return type(a) is type(b) and a == b


def refuse_unknown_figures(out: str, names: Sequence[str], unknown: Sequence[str], given: Any = None) -> None:
    """Refuse to resume from the table at ``out`` (its columns ``names``) when one of its ``unknown`` columns
    (no figure a run reports, :func:`report_figure`, and no name this sweep sweeps) stands where a sweep writes
    the figures, after ``seed`` (after ``key`` when the table has no ``seed``): a figure's column renamed by
    hand (``observes.w.mean`` to ``w_mean``), or a column of the user's own added there. Left out as a name
    swept before is (:func:`not_figures`), it was lost, and so was the figure it had been: a run resumed from
    the table had no number under that figure, and only a run of its point run now tells a resume which
    figures its runs have (:func:`cut_down`), so a resume that ran nothing again wrote a table without that
    figure and without the column, and said only 'copy it aside'. A column before ``seed``, where a sweep
    writes its swept names, is a name swept before (or one renamed), left out with the warning. ``given``
    names ``--fresh`` or ``fresh=True`` (:func:`fresh_named`)."""
    where: dict[str, int] = {}
    for i, c in enumerate(names):  # (names.index of each column: a table of 10**5 columns took minutes)
        where.setdefault(c, i)
    start = where["seed"] if "seed" in where else where["key"]
    among = [c for c in unknown if where[c] > start]
    if not among:
        return
    shown = ", ".join(clipped(printable(str(c))) or "''" for c in among[:5])
    more = f" and {len(among) - 5} more" if len(among) > 5 else ""
    raise UserError(f"{printable(out)}: the column(s) {shown}{more} of the table there stand among its figures and are "
                    "no figure a run reports (a figure's column renamed by hand, or a column added by hand): the "
                    "table a resume writes has no such column, and a run resumed from this one would have no "
                    "number under the figure it was; rename it back to the figure's name (its path in the report, "
                    f"`observes.NAME.mean`), move a column of your own aside, or give {fresh_named(given)} to run the sweep "
                    "again")


def say(text: str) -> None:
    """``text`` on stderr, as the command line says it (click.echo, imported here: a program of the Python API
    that is told nothing loads no click)."""
    import click

    click.echo(text, err=True)


def not_figures(out: str, columns: Sequence[str], given: Any = None) -> str | None:
    """What a sweep resuming from the table at ``out`` says of its ``columns`` that are neither a figure a run
    reports (:func:`report_figure`) nor a name this sweep sweeps, which the table it writes leaves out (a
    name swept before and not now, a column added or renamed by hand); None when there are none. ``given``
    names ``--out`` or ``out=`` (:func:`another_name`)."""
    if not columns:
        return None
    shown = ", ".join(clipped(printable(str(c))) or "''" for c in columns[:5])
    more = f" and {len(columns) - 5} more" if len(columns) > 5 else ""
    return (f"warning: {printable(out)}: the column(s) {shown}{more} of the table there are no figure a run reports "
            "and no name this sweep sweeps (a name swept before and not now, a column added or renamed by hand): "
            f"the table this sweep writes leaves them out; copy it aside now to keep them, or give {another_name(given)}")


#: the words of the errors :func:`not_the_programs` knows in a row written before they carried a code: an
#: environment variable's value refused (serq_sim.tier_env.env_error) and a worker that ended inside the run
#: (engines._died)
_NOT_THE_PROGRAMS = re.compile(r"error: the environment variable SERQ_[A-Z_]+ is |: the (?:worker process|Dask "
                               r"worker) running point [0-9]+, seed [0-9]+ ended without its result")


def not_the_programs(result: Mapping[str, Any]) -> bool:
    """Whether ``result`` is a run that failed for a reason that is not its program's, which a resume runs again
    rather than keep as the run's error until ``--fresh``: its trace changed under it (:func:`trace_changed`), an
    environment variable every run reads had a value it does not take where it ran (``SERQ_SIM_TIER=bogus``:
    code ``environment``, serq_sim.tier_env.ENVIRONMENT; the sweep's own environment is checked before any run,
    a worker's elsewhere, Dask's, is not), or its worker process ended inside it (code ``worker-ended``, a kill
    or the machine's memory: no result at all). Known by the code the row's ``warnings`` holds, and in a row
    written before these carried one (its ``warnings`` empty) by its message's first words. A run-time error
    of the program is its result, kept as it is."""
    if result.get("status") != "error":
        return False
    from serq_sim.tier_env import ENVIRONMENT

    code = result.get("warnings")
    if code in (ENVIRONMENT, WORKER_ENDED) or trace_changed(result):
        return True
    return not code and _NOT_THE_PROGRAMS.search(str(result.get("message", ""))[:400]) is not None


#: the code of the result of a run whose worker process ended inside it (engines._died)
WORKER_ENDED = "worker-ended"


def trace_changed(result: Mapping[str, Any]) -> bool:
    """Whether ``result`` is a run whose trace was edited under it (serq_sim.trace.changed: its bytes were not
    the plan's): no result of the trace its key holds, so a resume runs it again. Kept, its error stayed in
    the table of every resume, the file restored or not, though the message says to run the sweep again.
    Known by the code its error carries, which the run's ``warnings`` holds (worker.run_task), not by its
    message's words."""
    from serq_sim.trace import TRACE_CHANGED

    return result.get("status") == "error" and result.get("warnings") == TRACE_CHANGED


def left_out(out: str, others: set[str], given: Any = None) -> str | None:
    """What a resumed sweep into ``out`` says of the runs ``others`` of the table there (and its journal) that
    it does not run, or None when there are none: the table it writes holds its own runs alone, so those
    rows go (they went without a word: a sweep narrowed to fewer values or seeds, or rerun after its
    program changed, lost the rest of the table it resumed). ``given`` names ``--out`` or ``out=``
    (:func:`another_name`)."""
    if not others:
        return None
    return (f"warning: {printable(out)}: {len(others)} run(s) of the table there (or its journal) are no point and "
            "seed of this sweep (a value or seed not swept now, or the program, a trace, a run bound or a "
            "serQ version changed since): the table this sweep writes leaves them out; copy it aside now to "
            f"keep them, or give {another_name(given)}")


def _figures(v: Any) -> bool:
    # what execute journals: figure -> a number, true/false, null or a word (``partial``'s reason); an integer
    # within a float's range (one beyond it, edited in, was an OverflowError traceback where it was averaged)
    return isinstance(v, dict) and all(x is None or isinstance(x, (float, str)) or (
        isinstance(x, int) and -sys.float_info.max <= x <= sys.float_info.max) for x in v.values())


#: the figure every run that did not fail reports as a number whatever its program: its count of events
#: (serq_ir.report.Result.events), what tells a run's figures from none
RUN_FIGURES = ("events",)


def lacking_figure(status: Any, figures: Mapping[str, Any]) -> str | None:
    """The first of :data:`RUN_FIGURES` that a run of ``status`` ``ok`` or ``partial`` has no number of in
    ``figures`` (absent, NaN, a word, a flag), or None: a resumed table's row or journal entry without it is
    no run a sweep wrote (a journal entry ``"figures": {}`` of an ``ok`` run, or a row blanked by hand, was
    written back as a run of every figure NaN, silently)."""
    if status not in ("ok", "partial"):
        return None
    for f in RUN_FIGURES:
        v = figures.get(f)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            return f
    return None


def cut_down(plan: Plan, done: Mapping[str, dict], resumed: Iterable[str]) -> set[str]:
    """The runs resumed (their keys in ``resumed``) that lack a figure a run of their point has that ran now:
    the figures a run reports are its program's (the IR's stages, pools, observes and gauges, the run bounds
    and SLO, which its key holds), so such a run was read back from a table whose column was deleted by hand,
    and it resumed as a run without that figure: the points table's mean of it was over the runs run now
    alone. A run that failed has no figures; a point with no run run now tells nothing."""
    resumed = set(resumed)
    again: set[str] = set()
    for p in plan.points:
        keys = [plan.key(p, s) for s in plan.seeds]
        ran = [done[k]["figures"] for k in keys if k in done and k not in resumed
               and done[k].get("status") in ("ok", "partial")]
        if not ran:
            continue
        wanted = set().union(*ran)
        for k in keys:
            r = done.get(k)
            if (k in resumed and r is not None and r.get("status") in ("ok", "partial")
                    and not wanted <= r["figures"].keys()):
                again.add(k)
    return again


def _journaled_run(r: Mapping[str, Any]) -> tuple[tuple, str] | None:
    """Where an entry of a sweep's journal is not a run's result, and why (or ``""``), or None: a figure of no
    kind the report gives it (:func:`figure_fault`) or a run without the figures every run has
    (:func:`lacking_figure`)."""
    if "warnings" in r and not isinstance(r["warnings"], str):
        return ("warnings",), ""
    for name, value in r["figures"].items():
        why = figure_fault(name, value)
        if why is not None:
            return ("figures", name), why
    lacking = lacking_figure(r["status"], r["figures"])
    if lacking is None:
        return None
    return (("figures", lacking) if lacking in r["figures"] else ("figures",)), ""


def figure_fault(name: str, value: Any) -> str | None:
    """Why ``value`` is no figure ``name`` of a run a sweep journals, or None: every figure is a number (or
    null, NaN: none), but those the report holds as text (``partial``'s reason, ``requests.table``) or as a
    flag (``interrupted``), which are that too (:func:`report_kinds`). A figure edited by hand into a text
    (``"mean": "12.5"``, ``"abc"``) or a flag was taken as the run's result: its column of the table written
    back held the text, and its points table had no mean of the figure."""
    if value is None or isinstance(value, float) and value != value:
        return None
    kind = _figure_kind(name)
    if kind == "a text":
        ok = isinstance(value, str)
    elif kind == "true or false":
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        return None
    shown = f"the text {json.dumps(value)}" if isinstance(value, str) else json.dumps(value)
    return f"the figure {clipped(printable(name))} is {clipped(printable(shown))}, not {kind}"


@functools.lru_cache(maxsize=4096)
def _figure_kind(name: str) -> str:
    """What the figure ``name`` (its report path, dots between its parts) holds: ``a text``, ``true or false``
    or ``a number`` (:func:`report_kinds`, whose paths' ``*`` is any name: an observe's, a stage's)."""
    parts = name.split(".")
    text, flags = report_kinds()
    for kind, patterns in (("a text", text), ("true or false", flags)):
        if any(len(p) == len(parts) and all(a in ("*", b) for a, b in zip(p, parts, strict=True)) for p in patterns):
            return kind
    return "a number"


@functools.lru_cache(maxsize=1)
def report_kinds() -> tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]]:
    """The figures (:mod:`serq_sweep.figures`' paths, ``*`` for a name) the report holds as text and as a flag,
    read off its schema (serq_ir.report.Result): every other figure is a number."""
    import msgspec.inspect as mi
    from serq_ir.report import Result

    from .figures import NOT_FIGURES

    text: set[tuple[str, ...]] = set()
    flags: set[tuple[str, ...]] = set()

    def walk(t: Any, path: tuple[str, ...], named: bool = False) -> None:
        if isinstance(t, mi.StructType):
            for f in t.fields:
                if not (path == () and f.name in NOT_FIGURES) and not (named and f.name in ("name", "index")):
                    walk(f.type, (*path, f.name))
        elif isinstance(t, mi.UnionType):
            for u in t.types:
                walk(u, path, named)
        elif isinstance(t, mi.DictType):
            walk(t.value_type, (*path, "*"))
        elif isinstance(t, mi.ListType):  # (a list of named objects, by name; a list of scalars is no figure)
            if isinstance(t.item_type, mi.StructType):
                walk(t.item_type, (*path, "*"), True)
        elif isinstance(t, mi.StrType):
            text.add(path)
        elif isinstance(t, mi.BoolType):
            flags.add(path)

    walk(mi.type_info(Result), ())
    return frozenset(text), frozenset(flags)


#: the fields of an entry of a sweep's journal and what each holds (:func:`journal_entries`)
_RESULT_FIELDS = {"status": lambda v: v in STATUSES, "message": lambda v: isinstance(v, str),
                  "figures": _figures}


def journal_entries(path: str, wanted: set[str], fields: Mapping[str, Any], others: set[str] | None = None,
                    entry: Any = None, given: Any = None) -> Iterator[tuple[str, dict]]:
    """The entries of the journal ``path`` (one JSON object a line, if the file exists) whose key this
    sweep runs, in the order written (a later entry of a key replaces an earlier one; the key of another
    is added to ``others`` when given). A line that does not
    parse is the last one of a journal cut short by a kill, and is skipped; an object without one of
    ``fields`` (field -> a test of its value), or whose value fails its test, is one message naming the
    line (``"figures": null`` ended in an AttributeError traceback); so is one of this sweep's runs that ``entry``
    (a function of the entry whose fields passed, returning the path of what is wrong in it, or None) refuses.
    ``given`` names ``--fresh`` or ``fresh=True`` in those messages (:func:`fresh_named`)."""
    fresh = fresh_named(given)
    if not os.path.exists(path):
        return
    # a regular file only, of lines of at most TABLE_LINE bytes (a sparse journal of NUL bytes is one line);
    # UTF-8, a byte-order mark skipped (a journal saved by an editor that adds one lost its first entry)
    with open_input(path, max_line=TABLE_LINE) as f:
        for n, raw in _journal_lines(f, path, fresh):
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                # a sweep writes its entries in ASCII (json.dumps), so a kill cannot leave such a byte: it was
                # edited in, and was read as U+FFFD, a message changed in the table written or the entry
                # dropped without a word
                raise UserError(_not_utf8_entry(path, n, raw, e, fresh)) from None
            try:
                r = json.loads(line)
            except ValueError:
                if torn_entry(line):
                    continue  # (cut short by a kill: a sweep's line, which open_own_append ended)
                # no line a sweep writes: a file of someone else's at the name serq gives its journal, which the
                # sweep would append to and then remove
                raise UserError(_not_an_entry(path, n, line, (), fresh=fresh)) from None
            except RecursionError:  # JSON nested deeper than json.loads recurses: no entry a sweep writes
                raise UserError(_not_an_entry(path, n, line, (), fresh=fresh)) from None
            if not isinstance(r, dict):
                raise UserError(_not_an_entry(path, n, line, (), fresh=fresh))
            for k, ok in (("key", lambda v: isinstance(v, str)), *fields.items()):
                if k not in r or not ok(r[k]):
                    raise UserError(_not_an_entry(path, n, line, (k,) if k in r else (), fresh=fresh))
            if r["key"] in wanted:
                fault = entry(r) if entry is not None else None
                if fault is not None:
                    raise UserError(_not_an_entry(path, n, line, *fault, fresh=fresh))
                yield r["key"], r
            elif others is not None:
                others.add(r["key"])


def _journal_lines(f: Any, path: str, fresh: str = "--fresh") -> Iterator[tuple[int, bytes]]:
    """The lines of the journal open as ``f``, numbered from 1; one longer than :data:`TABLE_LINE` is no entry a
    sweep journals, and is told as one (it was the reader's words alone, without what to do)."""
    from serq.files import LineTooLong

    try:
        yield from enumerate(f, 1)
    except LineTooLong as e:
        raise UserError(f"{shown_path(path)}: {e.strerror}, which no entry of a sweep's journal is; remove the file or give "
                        f"{fresh}") from None


#: how every entry of a sweep's journal begins (json.dumps of a dict whose first field is the key)
ENTRY_START = '{"key": "'


def torn_entry(line: str) -> bool:
    """Whether ``line`` of a journal, which does not parse, is an entry a kill cut short (it begins as every
    entry begins, or is a beginning of that), or blank: nothing a sweep did not write. Any other is no line
    of a sweep's journal (a file of someone else's at its name)."""
    text = line.strip()
    return not text or text.startswith(ENTRY_START) or ENTRY_START.startswith(text)


def _not_utf8_entry(path: str, n: int, raw: bytes, e: UnicodeDecodeError, fresh: str = "--fresh") -> str:
    """The error of line ``n`` (``raw``) of a sweep's journal, at its first byte that is not UTF-8, the line
    quoted (such bytes as ``\\xNN``, serq.errors.shown_char) with a caret under it."""
    from serq.files import not_utf8
    from serq.jsonin import located

    text = raw.rstrip(b"\r\n").decode("utf-8", errors="surrogateescape")
    col = len(raw[:e.start].decode("utf-8")) + 1
    return located(text, path, n, col, f"{not_utf8(raw[e.start], raw[:4] if n == 1 else b'', 'the journal')}; remove the file or "
                   f"give {fresh}", first=n)


def _not_an_entry(path: str, n: int, line: str, at: tuple, why: str = "", fresh: str = "--fresh") -> str:
    """The error of line ``n`` (``line``) of a sweep's journal, no entry a sweep writes: at the value of the field
    ``at`` that is not one (the line's start for a line that is no object, or lacks a field), the line quoted
    with a caret, as a JSON mistake is (it was the line's number alone); ``why``, when given, in brackets."""
    from serq.jsonin import located

    text = line.rstrip("\r\n")
    pos = value_at(text, at) if at else None
    return located(text, path, n, 1 if pos is None else pos + 1,
                   f"not an entry of a sweep's journal{f' ({why})' if why else ''}; remove the file or give {fresh}",
                   first=n)


def write_tables(plan: Plan, done: Mapping[str, dict], out: str, inputs: Iterable[str]) -> tuple[list, list]:
    """Write the table of ``done`` to ``out`` and its per-point aggregates beside it (both atomically, and the
    two together, serq.files.renamed_together: a points table that could not be written, a full disk, left the
    new table beside the earlier sweep's points)."""
    from serq.files import folders_synced_once, renamed_together, write_atomic

    fmt = table_format(out)
    columns, table = rows(plan, done)
    # a figure a run did not report (an error's row) is NaN in every format
    for r in table:
        for c in columns:
            r.setdefault(c, math.nan)
    acols, atable = aggregate_rows(plan, columns, table)
    inputs = list(inputs)
    with folders_synced_once(), renamed_together():  # (each file fsynced, their folder once)
        write_atomic(out, encode_table(columns, table, fmt), inputs=inputs)
        write_atomic(points_path(out), encode_table(acols, atable, fmt), inputs=inputs, own=True)
    return columns, table


def need_parquet_writer(head: str, what: str = "a .parquet table") -> None:
    """Refuse, before anything runs, a ``.parquet`` output when pandas has no engine that imports to write it
    (pyarrow, else fastparquet: what ``DataFrame.to_parquet`` tries). It was said only at the write, after every
    run (the runs' journal left beside the table), and a pyarrow that raised as it loaded (a module of that name
    on ``PYTHONPATH``, a broken install) with some other exception than ImportError was a traceback. The
    engine is tried by importing it; one that is there and does not import is named, with why. ``head``: the
    output as given (``--out r.parquet``, the Python API's ``out=r.parquet``: :func:`named`)."""
    from serq_sim.records import first_that_imports

    name, why = first_that_imports((("pyarrow", "pyarrow.parquet"), ("fastparquet", "fastparquet")))
    if name is None:
        raise UserError(f"{head}: {what} needs pyarrow: pip install 'serq-sweep[pandas]' (or write .csv){why}")


def check_table(out: str, inputs: Iterable[str] = (), given: Any = None) -> None:
    """Refuse, before anything runs, the table ``out`` of a sweep, a comparison (``serq compare -o``) or a
    search (``--find -o``) when it is no table (``.csv``, ``.parquet``), when its write would be refused
    (serq.files.check_output: a folder, a folder that does not exist, a path under ``/dev`` that does not
    exist) or when it is one of ``inputs``, files the runs read. ``given`` names the option or keyword
    (:func:`named`: ``out=o.txt`` of the Python API, whose caller gave no ``--out``)."""
    from serq.files import check_not_input, check_output

    if table_format(out, head=named(given, "out", shown_path(out))) == "parquet":
        need_parquet_writer(named(given, "out", out))
    check_not_input(out, inputs)
    check_output(out)


def check_points_table(out: str, given: Any = None) -> None:
    """Refuse, before anything runs, a file at ``out``'s points table (:func:`points_path`, a name serq gives
    it) that is not a points table a sweep wrote (a header whose first column is ``point``, with ``runs``):
    the sweep would replace it, and the user named only ``out``. An empty file has nothing to lose; a points
    table of another sweep (other axes) is replaced, as its table at ``out`` is. ``--fresh`` replaces either,
    as it does the table at ``out``. ``given`` names ``--out`` and ``--fresh`` or the Python API's ``out=`` and
    ``fresh=True`` (:func:`named`)."""
    path = points_path(out)
    after = (f"; a sweep into {shown_path(out)} writes its table of points there: remove it, give {named(given, 'out')} another "
             f"name, or give {fresh_named(given)}")
    try:
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            return  # (new; or what check_outputs refused, a link or a FIFO)
        names, _rows = read_table_columns(path)
    except TableFault as e:  # (at its line and column, the line quoted)
        raise UserError(e.message("not a sweep's points table", after)) from None
    except (OSError, ValueError, KeyError, csv.Error) as e:
        raise UserError(f"{shown_path(path)}: not a sweep's points table ({unreadable(path, e)}){after}") from None
    if names[:1] != ["point"] or "runs" not in names:
        raise UserError(f"{shown_path(path)}: not a sweep's points table (no column point and runs){after}")


def check_out_name(out: str, given: Any = None) -> None:
    """Refuse a table ``out`` of no table's suffix (``.csv``, ``.parquet``: a usage error), in a folder that does
    not exist, or that its write would refuse (serq.files.check_output: a folder, a path under ``/dev`` that does
    not exist), by its name alone: :func:`check_outputs` before the runs, and the sweep's command and ``sweep()``
    before anything is compiled (a sweep of 10 000 points said ``--out r.txt: a table is .parquet or .csv``, status
    2, after 23 s of compiling them). ``given`` names ``--out`` or ``out=`` (:func:`named`)."""
    from serq.files import check_output

    if table_format(out, head=named(given, "out", shown_path(out))) == "parquet":
        need_parquet_writer(named(given, "out", out))
    folder = os.path.dirname(out) or "."
    if not os.path.isdir(folder):
        # (serq run's words and names, serq.files.check_output: a line break escaped, a long name cut)
        raise UserError(f"{shown_path(out)}: no folder {shown_path(folder)} to write it in")
    check_output(out)  # (what its write would refuse: a folder, a path under /dev that does not exist, …)


def check_records_apart(out: str | None, records: str | None, given: Any = None) -> None:
    """Refuse ``--records`` and ``--out`` (``records=``, ``out=``) that are one file by any path, before anything
    is compiled: their journals are one file (``OUT.journal``) whatever tables the program records, and with one
    table so are the two tables. It was said after every point was compiled (serq_sweep.records.check, which
    needs the program's tables), of their journals for a program of several tables. ``given`` names them
    (:func:`named`)."""
    if out is None or records is None:
        return
    from serq.files import check_distinct

    check_distinct([(named(given, "out"), out), (named(given, "records"), records)], of="a sweep")


def check_resumable(out: str | None, records: str | None = None, fresh: bool = False, given: Any = None) -> None:
    """Refuse, before anything is compiled, what a sweep into ``out`` (``--out``, ``out=``) would refuse of the files
    there once every point was compiled: its points table and journal (names serq gives them) that are no regular
    file (:func:`check_outputs`), and, resuming (not ``fresh``), a table at ``out`` or a ``records`` file that is
    there and cannot be read to resume from (a FIFO, a device, a socket: serq.files.open_input, which does not wait
    for a FIFO's writer). A FIFO at ``--out`` was refused after every point was compiled, behind a compile error
    of the program when it had one. With ``fresh`` the table and records there are not read, and are written
    through (docs/security.md). ``given`` names ``--fresh`` or ``fresh=True`` (:func:`fresh_named`)."""
    if out is None:
        return
    from serq.files import check_output, open_input

    for target in (points_path(out), journal_path(out)):  # named by serq, beside the table the user named
        check_output(target, own=True)
    if fresh:
        return
    for path, what in ((out, "table"), (records, "records")):
        if path is None or not os.path.lexists(path):
            continue
        try:
            open_input(path).close()
        except FileNotFoundError:  # (a symbolic link to nothing: a new file, as check_output takes it)
            continue
        except OSError as e:
            raise UserError(f"{shown_path(path)}: cannot read the {what} to resume from ({unreadable(path, e)}); "
                            f"remove it or give {fresh_named(given)}") from None


def check_outputs(out: str, plan: Plan) -> list[str]:
    """Refuse, before anything runs, a table ``out`` (and the files serq names beside it, its points table
    and its journal) that the writes would refuse (serq.files.check_output: a folder, a path under ``/dev``
    that does not exist, anything but a regular file where serq names the file) or that is one of the
    files the runs read. Returns those files."""
    from serq.files import check_not_input, check_output

    check_out_name(out, plan.given)
    inputs = sorted({i for p in plan.points for i in p.inputs})
    for target in (points_path(out), journal_path(out)):
        check_not_input(target, inputs)
    check_table(out, inputs, plan.given)
    for target in (points_path(out), journal_path(out)):  # named by serq, beside the table the user named
        check_output(target, own=True)
    return inputs
