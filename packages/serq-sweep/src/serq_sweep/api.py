"""The Python API: :func:`sweep`, :func:`aggregate`."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from serq.errors import UserError, shown_path

from . import core
from .engines import engine as make_engine


def run_plan(plan: core.Plan, *, workers: int | None = None, dask: Any = None, out: str | None = None,
             fresh: bool = False, progress: bool | None = None, desc: str = "sweep", records: Any = None,
             given: Any = None) -> tuple[list[str], list[dict[str, Any]], bool, int]:
    """Run ``plan`` (resuming from ``out`` unless ``fresh``) and write its tables to ``out``. Returns the
    table's columns, its rows, whether every run finished, and how many runs an earlier sweep had
    finished. ``records``: None, or a :class:`Records` that keeps every run's records (and writes them
    to its file, resuming with ``out``). ``given`` names ``workers`` in a message (``--workers`` by default:
    :func:`serq.loading.given_or_option`)."""
    from serq import signals
    from serq.files import journal_locked

    done: dict[str, dict] = {}
    others: set[str] = set()  # (the runs of the table there that this sweep does not run)
    inputs: list[str] = []
    journal = None
    made = False
    failed = True
    # the locks of the tables beside the journal's (its points table: table_held), until they are written
    beside = contextlib.ExitStack()
    try:
        if out is not None:
            out = os.fspath(out)
            inputs = core.check_outputs(out, plan)
        if records is not None:  # (its outputs told apart from --out's before the table there is read)
            records.check(plan, out, inputs)
        if out is not None:
            # a journal this call makes that no run was written to is removed when the sweep fails (refused
            # before its first run: its workers cannot start, say): nothing is left beside -o that no run put
            # there
            made = fresh or not os.path.lexists(core.journal_path(out))
            journal, locked = journal_locked(core.journal_path(out), _lock_journal)
            if not locked:  # before anything is read from it or cleared: one sweep a table
                journal.close()
                journal = None  # (the other sweep's: never removed here)
                raise _table_taken(out, plan.given)
            # its points table is the table of a sweep into OUT.points.csv: held as that sweep holds its own (two
            # sweeps at once into t.csv and t.points.csv each wrote the other's table at their end)
            points = core.points_path(out)
            if records is None or records.path is None or not _same_name(records.path, points):
                beside.enter_context(table_held(points, plan.given, beside=True))  # (records there: their own lock)
            if fresh:
                os.ftruncate(journal.fileno(), 0)
            else:
                if not made and os.fstat(journal.fileno()).st_size == 0:
                    core.say(orphan_said(core.journal_path(out), "this sweep journals its runs there"))
                done = core.load_finished(out, plan, others)  # (a journal of someone else's refused there)
                core.check_points_table(out, plan.given)
                said = core.left_out(out, others, plan.given)
                if said is not None:  # before the first run, while the table there is still whole
                    core.say(said)
        skip = set(done)
        if records is not None:
            records.open(fresh, done, len(others))
            skip = {k for k in skip if records.complete(k, done[k])}
        resumed = _rows_of(plan, skip)
        with make_engine(workers, dask, plan.pm, given) as eng:
            done, complete = core.execute(plan, eng, done=done, journal=journal, progress=progress, desc=desc,
                                          skip=skip, records=None if records is None else records.add)
            again = core.cut_down(plan, done, skip) if complete else set()
            if again:  # resumed runs short of figures their point's runs have now: run again, once
                resumed -= _rows_of(plan, again)
                done, complete = core.execute(plan, eng, done=done, journal=journal, progress=progress,
                                              desc=desc, skip=skip - again,
                                              records=None if records is None else records.add)
        failed = False
    finally:
        if failed:
            beside.close()
        if failed and journal is not None:
            if made:  # (dropped while this sweep holds its lock: a journal another sweep appends to is never)
                _drop_if_empty(core.journal_path(out), journal)
            journal.close()
        if failed and records is not None:
            records.close(failed)
    try:
        if records is not None:
            records.keep(done)
        with signals.deferred():  # a second signal cannot lose what finished
            if records is not None:
                records.write(complete)
            if out is not None:
                columns, table = core.write_tables(plan, done, out, inputs)
                if complete and journal is not None:  # (every run of it in the table now)
                    _drop_held(core.journal_path(out), journal)
            else:
                columns, table = core.rows(plan, done)
                for r in table:
                    for c in columns:
                        r.setdefault(c, math.nan)
    finally:
        beside.close()
        if journal is not None:
            journal.close()  # the lock held until the table is written
        if records is not None:
            records.close()  # (the records' journal's lock, until the records are written)
    return columns, table, complete, resumed


def _rows_of(plan: core.Plan, keys: set[str]) -> int:
    """How many rows of the sweep's table the runs ``keys`` are: a run is one row a point, and points whose
    IR is one (a program and its copy) share their runs (core.Plan.tasks), so a resume of such a sweep that
    ran nothing said "2 run now, 2 resumed" of 4 rows (its keys counted, not its rows)."""
    if not keys:
        return 0
    if len({p.ir_hash for p in plan.points}) == len(plan.points):  # (no two points share a run)
        return len(keys)
    return sum(1 for p in plan.points for s in plan.seeds if plan.key(p, s) in keys)


def _lock_journal(fd: int) -> bool:
    """Take the sweep's journal for this sweep alone: an advisory lock (``flock``) held until its table is
    written, dropped when the journal is closed or the process ends, however it ends. ``False`` when another
    sweep holds it: a second sweep into the same table is refused before it reads the journal or runs
    anything (two sweeps into one ``--out`` each ran every run, each having read the journal before the
    other wrote to it, and a ``--fresh`` one removed the journal the other was appending to). Where the
    platform or the file system has no such lock, the sweep runs unlocked (serq.files.held_alone). ``fd``: the
    journal open (serq.files.journal_locked takes it so, again while the file locked is no longer at its name)."""
    from serq.files import held_alone

    return held_alone(fd)


@contextlib.contextmanager
def table_held(out: str | os.PathLike | None, given: Any = None, setting: str = "out", beside: bool = False) -> Any:
    """Within, the table ``out`` of a command that keeps no journal (``serq compare -o``, ``serq sweep --find
    -o``, and a sweep's points table and a table's file of its records beside its own) is this command's
    alone: the lock of ``out`` every writer of it takes (serq.files.output_held: ``OUT.journal``, the lock a
    sweep takes on its journal, :func:`_lock_journal`; ``serq run -o`` and ``--records`` take it too). Only a
    sweep's journal was locked: a comparison into the table a sweep was writing (or a second comparison) ran
    all its runs and replaced it, or was replaced, without a word, and a sweep that then ended complete removed
    its journal, its finished runs gone. A second command is refused before it runs anything, in the words
    every writer's refusal has (serq.files.taken_said). Where the journal cannot be made (a folder that does
    not exist) nothing is held here: the command says why itself; a journal that is a folder, a link or a hard
    link is refused (it was passed over, the command running unlocked). ``setting``: the option (or argument)
    whose file ``out`` is, which the refusal tells the user to give another name (``--out``; ``--records`` for
    a table's file of a sweep's records). ``beside``: ``out`` is a file a sweep writes beside its own table (its
    points table, a table's file of its records), whose journal is only this lock's: an empty one a killed
    sweep left goes without a word (the sweep's own journal is the one said).

    A journal found there that no command holds is what a command killed there left (``kill -9``, the OOM
    killer, a machine that went down): an empty one held no run, and is said and removed (it went without a
    word); one that holds runs is a sweep's into ``out`` that did not end, which that sweep resumes: the
    command is refused, the journal left whole (a comparison wrote its table at ``out`` beside it, and the
    sweep could no longer resume: its table was no sweep's)."""
    from serq.files import output_held

    if out is None:
        yield
        return
    out = os.fspath(out)
    said = None if beside else (lambda path: core.say(orphan_said(path, "is removed")))
    with output_held(out, core.another_name(given, setting), said=said):
        yield


def orphan_said(path: str, then: str) -> str:
    """What a command says of the empty journal ``path`` it found, which no command held (one was killed
    before its first run ended there): it holds no run; ``then``, what becomes of it."""
    return (f"serq: {shown_path(path)}: an empty journal no command holds (a command killed there left it: a sweep "
            f"or a comparison before its first run ended, a run as it wrote this file); it holds no run, and {then}")


def _table_taken(out: str, given: Any, setting: str = "out") -> UserError:
    """The refusal of a table ``out`` whose journal another command holds locked: every writer's words
    (serq.files.taken_said)."""
    from serq.files import taken_said

    return UserError(taken_said(out, core.another_name(given, setting)))


def _same_name(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file (by their absolute names: neither need exist)."""
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _drop_held(path: str, held: Any) -> None:
    """Remove the journal ``path`` whose runs are all written, when it is still the very file ``held`` is (the
    journal open in this command, whose lock it holds): a file put at its name since (another sweep's journal,
    moved there) is not this sweep's to remove."""
    try:
        st = os.lstat(path)
        mine = os.fstat(held.fileno())
        if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
            os.unlink(path)
    except (OSError, ValueError):
        pass


def _drop_if_empty(path: str, held: Any) -> bool:
    """serq.files.dropped_if_empty: ``path`` removed when it is the empty journal ``held`` (this command's)."""
    from serq.files import dropped_if_empty

    return dropped_if_empty(path, held)


class Records:
    """The records of a sweep's runs, kept in memory and, with a ``path``, written to the records tables
    there (:mod:`serq_sweep.records`; resumed with the sweep's ``--out``)."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = None if path is None else os.fspath(path)
        self.runs: dict[str, Any] = {}
        self.files: dict[str, str] = {}
        self._journal = None
        self._made = False
        self._points: dict[str, Any] | None = None
        #: the locks of the tables' own files (a program of several tables: FILE.NAME.EXT), until they are written
        self._held = contextlib.ExitStack()

    def check(self, plan: core.Plan, out: str | None, inputs: list[str]) -> None:
        """Refuse, before anything is read or written, a swept name that is a column of a record table, records
        without ``out``, a records file that is another output of the sweep (a usage error, told before the
        table at ``out`` is read: it may be the very file); what :meth:`open` then opens."""
        from . import records as R

        self.plan, self.inputs = plan, inputs
        self.names = R.table_names(plan)
        self._points = None
        R.clash_of_columns(plan)
        if self.path is None:
            return
        if out is None:
            raise UserError(f"{core.named(plan.given, 'records', self.path)}: give "
                            f"{core.named(plan.given, 'out')} too (the records resume with the sweep's table)")
        self.files = R.check(self.path, plan, out, inputs)

    def open(self, fresh: bool, done: Mapping[str, Any] | None = None, table_others: int = 0) -> None:
        """Open the records of the sweep :meth:`check` passed: its journal, and the runs kept (unless ``fresh``;
        ``done``, the runs of the sweep's table it runs, and ``table_others``, how many others the table
        holds, bound the records read back: records.load)."""
        from . import records as R

        if self.path is None:
            return
        from serq.files import journal_locked

        jp = R.journal_path(self.path)
        given = getattr(self.plan, "given", None)
        made = fresh or not os.path.lexists(jp)
        # one sweep a set of records at a time, as one a table (_lock_journal), taken before the journal is read
        # or cleared: two sweeps into other tables with one --records each wrote the records file whole at
        # its end, the last over the first (whose records were lost, its table saying they were there), and
        # a --fresh one removed the journal the other was appending to
        journal, locked = journal_locked(jp, _lock_journal)
        if not locked:
            journal.close()  # (the other sweep's: never removed here)
            from serq.files import taken_said

            raise UserError(taken_said(self.path, core.another_name(given, "records"),
                                       core.named(given, "records", shown_path(self.path))))
        self._journal, self._made = journal, made
        # each table's file of a program of several (FILE.NAME.EXT, a table of its own) is held as a table is
        # (table_held: the lock of FILE.NAME.EXT.journal): a sweep or comparison writing that file as its own
        # table (-o, --records r.request.csv) and this sweep each wrote it whole at their end, the last over
        # the first, neither told. Taken now, before the journal is read or any run runs; the second is refused
        try:
            for table in dict.fromkeys(self.files.values()):
                if not _same_name(table, self.path):
                    self._held.enter_context(table_held(table, given, "records", beside=True))
        except BaseException:
            self.close(failed=True)
            raise
        if fresh:
            os.ftruncate(journal.fileno(), 0)
        else:
            others: set[str] = set()
            self.runs = R.load(self.path, self.plan, others, done, table_others)
            said = R.left_out(self.path, others, given)
            if said is not None:  # before the first run, while the records there are still whole
                core.say(said)

    def complete(self, key: str, result: dict | None) -> bool:
        from . import records as R

        # the tables the run's program records: one of another program of the sweep (a table of its own
        # beside lib/vllm.sq's `request`) is no record this run lacks (the other program's runs ran again on
        # every resume, their records of that table said missing)
        if self._points is None:
            self._points = {self.plan.key(p, s): p for p in self.plan.points for s in self.plan.seeds}
        point = self._points.get(key)
        names = self.names if point is None else [n for n in self.names if n in point.records]
        return R.complete(key, self.runs, result, names)

    def add(self, key: str, run: dict) -> None:
        self.runs[key] = run
        if self._journal is not None:
            from . import records as R

            self._journal.write(R.journal_line(key, run))
            self._journal.flush()

    def keep(self, done: Mapping[str, Any]) -> None:
        """Keep the records of the runs in the sweep's table (``done``) only: an interrupt (Ctrl-C under
        the Python API) between a run's records and its row, or a records journal line whose row's journal
        line was lost, leaves records of a run the table does not have (it runs again on resuming)."""
        self.runs = {k: v for k, v in self.runs.items() if k in done}

    def close(self, failed: bool = False) -> None:
        """Close the journal, and with it its lock (:meth:`open`: held until the records are written); when
        the sweep ``failed``, a journal this sweep made and wrote nothing to is removed."""
        self._held.close()
        if self._journal is not None:
            if failed and self._made:  # (dropped while this sweep holds its lock: never another's)
                from . import records as R

                _drop_if_empty(R.journal_path(self.path), self._journal)
            self._journal.close()
            self._journal = None

    def write(self, complete: bool) -> None:
        if self.path is None:
            return
        from . import records as R

        R.write(self.plan, self.runs, self.path, self.inputs)
        if complete and self._journal is not None:  # (every run's records in the tables now)
            _drop_held(R.journal_path(self.path), self._journal)

    def frames(self) -> Any:
        """A DataFrame for a program of one record table, else a dict of them by name."""
        from . import records as R

        frames = {n: R.frame(self.plan, self.runs, n) for n in self.names}
        return next(iter(frames.values())) if len(frames) == 1 else frames


def sweep(program: str | os.PathLike | Sequence[str | os.PathLike], *, sets: Mapping[str, Any] | None = None,
          defs: Mapping[str, Any] | None = None, zip: Sequence[Sequence[str]] = (),  # noqa: A002
          seeds: Any = (1,), horizon: float | None = None, warmup: float | None = None,
          arrivals: int | None = None, workers: int | None = None, dask: Any = None,
          out: str | os.PathLike | None = None, fresh: bool = False, progress: bool | None = None,
          max_wall: float | None = None, max_events: int | None = None, max_samples: int | None = None,
          records: bool | str | os.PathLike = False, pm: Any = None, slo: Mapping[str, float] | None = None,
          trace: str | os.PathLike | Sequence[str | os.PathLike] | None = None) -> Any:
    """Run a sweep and return its table as a pandas DataFrame (one row per point and seed; see
    :mod:`serq_sweep.core`).

    ``program``: a path, or a list of paths (swept as the column ``program``). ``sets``: name -> a number,
    a list of numbers, or a range ``"START:STOP:STEP"``; ``defs``: name -> an expression or a list of
    them; the points are the grid over them, where the names of each group in ``zip`` move together.
    ``seeds``: a list of seeds or ``"1..20"``. ``horizon``, ``warmup``, ``arrivals`` override the run block;
    ``max_wall``, ``max_events``, ``max_samples`` bound each run (a bounded run's row has status
    ``partial``). ``slo``: seconds by request metric (``{"ttft": 1, "tpot": 0.05}``, ``serq run --slo``'s),
    for the figure ``requests.goodput`` of every run. ``trace``: a trace file, or a list of them, the runs
    replay instead of their workload's (``serq run --trace``): the axis ``trace`` after ``program``, a column
    of the table holding each path as given (even of one file). ``workers``: local processes (default every core; 0
    runs in this process); ``dask``: a scheduler address, ``"local"`` (a LocalCluster of ``workers``
    processes) or a ``distributed.Client``.
    ``out``: also write the table (``.parquet`` or ``.csv``) and its per-point aggregates
    (``NAME.points.EXT``), resuming from what an earlier sweep into it finished unless ``fresh``
    (``fresh=True`` without ``out`` is a :class:`serq.errors.UsageError`, as ``--fresh`` without ``--out`` is).
    ``records``: True keeps every run's records (what ``serq run --records`` writes) and returns
    ``(frame, records)``: one DataFrame of the records of every run, columns ``point``, the swept names,
    ``seed``, ``key``, then the record's (a dict of them by name for a program of several record tables);
    a path (``.parquet``, ``.csv``) also writes them there, resuming with ``out``
    (:mod:`serq_sweep.records`).
    ``progress``: a progress bar (None: when stderr is a terminal or in a notebook; see
    :func:`serq_sweep.core.progress_bar`).

    The frame's ``attrs["axes"]`` lists the swept names. Ctrl-C stops the sweep: what finished is written
    to ``out``, and ``KeyboardInterrupt`` is raised again.
    """
    from .axes import flag, output_path
    from .engines import check_engine

    if not (records is None or isinstance(records, (bool, str, os.PathLike))):  # (records=1: fspath's TypeError)
        raise TypeError(f"records must be True, False or a path (str or os.PathLike), not {type(records).__name__}")
    records = output_path(records, "records") if not isinstance(records, bool) else records
    out, fresh = output_path(out, "out"), flag(fresh, "fresh")
    progress = flag(progress, "progress", none=True)
    from serq.loading import argument_given

    core.check_fresh(out, fresh, argument_given)  # (fresh=True without out=, refused as --fresh without --out is)

    check_engine(workers, dask, pm, argument_given)  # before anything is compiled

    if out is not None:  # (by its name, before anything is compiled: it was said after every point was)
        core.check_out_name(os.fspath(out), argument_given)
        if records is not None and not isinstance(records, bool):
            core.check_records_apart(os.fspath(out), os.fspath(records), argument_given)
        core.check_resumable(os.fspath(out), os.fspath(records) if isinstance(records, (str, os.PathLike)) else None,
                             fresh, argument_given)  # (a FIFO there was said after every point was compiled)
    plan = core.plan(program, sets=sets, defs=defs, zip=zip, seeds=seeds, horizon=horizon, warmup=warmup,
                     arrivals=arrivals, max_wall=max_wall, max_events=max_events, max_samples=max_samples,
                     pm=pm, slo=slo, given=argument_given, trace=trace)  # (its messages name the arguments: horizon=…)
    recs = None
    if records is not False and records is not None:
        recs = Records(None if records is True else records)
    columns, table, complete, _ = run_plan(plan, workers=workers, dask=dask, out=out, fresh=fresh,
                                           progress=progress, records=recs, given=argument_given)
    if not complete:
        raise KeyboardInterrupt
    frame = core.to_frame(columns, table)
    frame.attrs["axes"] = plan.names
    return frame if recs is None else (frame, recs.frames())


def _numbers(column: Any) -> bool:
    """Whether a frame's column is a figure the points table averages: one of numbers, or of objects some of
    which are numbers (a bool figure, ``interrupted``, beside the NaN of a failed run's row is an object
    column), as :func:`core.aggregate_rows` takes every figure some row gives as a number (it was left out
    here, and kept in the points file, when a run had failed)."""
    import numbers

    import pandas as pd

    if pd.api.types.is_numeric_dtype(column):
        return True
    return column.dtype == object and any(isinstance(v, numbers.Number) for v in column)


def aggregate(frame: Any, by: Sequence[str] | None = None) -> Any:
    """Per point across seeds: for every numeric figure its mean and 95 % half-width (Student t over the
    seeds), columns ``FIGURE:mean`` and ``FIGURE:ci``, then each figure's ``FIGURE:n`` (the runs with a finite
    value its mean is over), and ``runs``: the table of ``OUT.points.EXT`` a sweep
    writes beside ``OUT`` (:func:`core.aggregate_rows`). ``by``: the columns that make a point (default
    ``frame.attrs["axes"]``, else every column before ``seed`` but ``point``: :func:`core.point_columns`).
    A frame with a ``point`` column whose groups are one point each (a sweep's table grouped by its swept
    names) keeps it as the first column, as the file has it; a point whose every run failed is a row of
    ``runs`` 0 and NaN figures, as in the file (it had no ``point`` column, and no row for such a point). A
    frame of no rows (no run) gives a frame of no rows, its columns those it would have (``by``, ``runs``, each
    numeric figure's ``:mean`` and ``:ci``, then its ``:n``): it gave one row of ``runs`` 0, a point no sweep had."""
    import pandas as pd

    from .axes import texts
    from .stats import mean_ci

    if not isinstance(frame, pd.DataFrame):  # (None, a dict: an AttributeError of .columns)
        raise TypeError(f"frame must be a pandas DataFrame (a sweep's table), not {type(frame).__name__}")
    cols = list(frame.columns)
    core.repeated_parquet_column(cols, "frame")
    if core.records_columns(cols):  # (a request was taken for a run: runs 1196 for a point of 2 runs)
        raise ValueError("frame: these are records, a row per request (its columns session, turn, time), not a "
                         "sweep's table: aggregate takes the table of runs (serq sweep --out, sweep(...)), a row "
                         "per run; group records yourself (frame.groupby([...swept names, 'turn']))")
    what = "by"
    if by is None:
        axes = frame.attrs.get("axes")
        by = core.point_columns(cols) if axes is None else axes
        what = "by (frame.attrs['axes'], the swept names)" if axes is not None else what
    # a str is the one column (by="B" grouped by the columns B, ...: its letters), a set has no order
    by = texts(by, "by", "column")
    missing = [c for c in by if c not in cols]
    if missing:  # (a KeyError from inside pandas' groupby)
        raise ValueError(f"{what}: no column {missing[0]!r} in the frame (its columns: "
                         f"{', '.join(map(str, cols[:12]))}" + (", ..." if len(cols) > 12 else "") + ")")
    if "status" in cols:  # (a seed that is no seed; one run in two rows: two seeds of a point)
        for found in (core.bad_seed(frame), core.repeated_run(frame)):
            if found is not None:
                raise ValueError(found[1])
    # the figures by their names (those moved before key too); a frame without key, every numeric column
    figs = [c for c in core.table_figures(cols) if c not in by and c not in ("point", "seed") and _numbers(frame[c])]
    out = []
    if len(frame) == 0:  # no run: no point (a point column only where the file has one)
        point = ["point"] if "point" in cols and "point" not in by else []
        return pd.DataFrame(columns=[*point, *by, "runs", *(f"{f}:{k}" for f in figs for k in ("mean", "ci")),
                                     *(f"{f}:n" for f in figs)])
    groups = list(frame.groupby(by, sort=False, dropna=False)) if by else [((), frame)]
    # each group one point: its index first, as the points file has it
    point = ("point" in cols and "point" not in by
             and all(g["point"].nunique(dropna=False) == 1 for _, g in groups))
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {"point": g["point"].iloc[0]} if point else {}
        row.update(zip_(by, key))
        ok = g[g["status"] != "error"] if "status" in cols else g  # (the runs that did not fail)
        row["runs"] = len(ok)
        counts = {}
        for f in figs:
            counts[f], m, ci, _ = mean_ci(ok[f].astype(float).tolist())
            row[f"{f}:mean"], row[f"{f}:ci"] = m, ci
        for f in figs:  # (after every mean and CI, as the points file has them)
            row[f"{f}:n"] = counts[f]
        out.append(row)
    return pd.DataFrame(out)


zip_ = zip
