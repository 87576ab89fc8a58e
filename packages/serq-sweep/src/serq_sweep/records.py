"""The records of a sweep's runs (``serq sweep --records FILE``, ``sweep(..., records=...)``).

Each run's per-request records (what ``serq run --records`` writes: :meth:`serq_sim.Report.records`, the
rows sent before the warm-up's end left out) go into one tidy table per record table of the program:
``point``, the swept names, ``seed`` and ``key`` (the run's, as in the sweep's table, so the two join on
it), then the record's columns (``session``, ``turn``, ``time``, then the declared ones), the runs in point
and seed order and each run's rows in the order ``serq run --records`` gives them. ``FILE`` is ``.parquet``
or ``.csv``; a program of several record tables gets ``STEM.NAME.EXT`` for each (``serq run --records``'s
rule). A column whose values are whole numbers in every run is an integer column, as in ``serq run
--records``; a column some run gives as floats is float64 in the whole table.

Resuming goes with the sweep's table (``--out``): each finished run's records are appended at once to a
journal beside the records file (``FILE.journal``, one JSON line a run); a rerun skips a run when its row is
in the table (or its journal) and its records are in the records tables or their journal (or it has none:
it failed, or its row counts no record after the warm-up). Ctrl-C or SIGTERM writes the records of what
finished; the complete tables remove the journal. Every file is written atomically (:mod:`serq.files`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from serq.errors import UsageError, UserError, printable, shown_path
from serq.files import MAX_LINE, open_input

from .core import (
    FLOAT_CELL,
    WHOLE_CELL,
    TableFault,
    another_name,
    cell_fault,
    csv_rows,
    fresh_named,
    named,
    not_utf8_fault,
    repeated_column,
    unmarked_utf16,
    wide_fields,
    width_fault,
)

#: one run's records: table name -> column -> a numpy array
Run = dict[str, dict[str, Any]]


def table_names(plan: Any) -> list[str]:
    """The record tables of the plan's programs (in the order they are first declared)."""
    names: dict[str, None] = {}
    for p in plan.points:
        for n in p.records:
            names.setdefault(n, None)
    if not names:
        raise UserError(f"{_named(plan, 'records')}: the program declares no records "
                        "(`record NAME { col = expr; … }`; lib/vllm.sq's vllm_request records every request)")
    return list(names)


def files(path: str, names: Sequence[str]) -> dict[str, str]:
    """Where each table goes: ``path`` for one table; ``STEM.NAME.EXT`` for several."""
    from serq_sim.records import record_files

    return record_files(path, list(names))


def journal_path(path: str) -> str:
    return f"{path}.journal"


def record_format(path: str, given: Any = None) -> str:
    from .core import named, table_format

    return table_format(path, "--records", "a records file", head=named(given, "records", shown_path(path)))


def _named(plan: Any, setting: str, text: str | None = None) -> str:
    """``--records`` or ``records=`` (serq_sweep.core.named), as the plan was given: by the command line or the
    Python API."""
    from .core import named

    return named(getattr(plan, "given", None), setting, text)


#: the columns of a sweep's records table before the record's own, the swept names between point and seed
PREFIX = ("point", "seed", "key")


def clash_of_columns(plan: Any) -> None:
    """Refuse a swept name that is a column of a record table already: the columns every record has
    (``session``, ``turn``, ``time``) or one a program's ``record`` declares. The swept names are columns of
    each record table too (after ``point``), so ``--set wait=1,2`` beside ``record req { wait = …; }`` wrote
    a table of two columns ``wait``, which no reader tells apart: ``serq plot --cdf wait`` of it was a
    traceback, and pandas reads the second as ``wait.1``. So is a declared column that is one of
    :data:`PREFIX`: ``record req { key = …; }`` made two columns ``key``, and the sweep's resume refused its
    own table. (The columns of a table are those every program of the sweep declares for it.)"""
    from serq_sim.records import OWN

    for table in table_names(plan):
        declared = list(dict.fromkeys(c for cols in dict.fromkeys(tuple(p.records[table]) for p in plan.points
                                                                   if table in p.records) for c in cols))
        for col in declared:  # (a record's column key: a resume read the sweep's key or the record's, not both)
            if col in PREFIX:
                raise UsageError(f"{_named(plan, 'records')}: the record table {table} has a column {col}, which the sweep's "
                                 f"records table gives each row of its own ({', '.join(PREFIX)}, with the swept "
                                 "names): give the column another name to keep the records of a sweep")
        for name in plan.names:
            if name in OWN or name in declared:
                raise UsageError(f"{_named(plan, 'records')}: the swept name {name} is a column of the record table {table} "
                                f"({', '.join([*OWN, *declared])}); a swept name is a column of its own there: "
                                "give the let another name to sweep it")


def check(path: str, plan: Any, out: str | None, inputs: Iterable[str]) -> dict[str, str]:
    """Refuse a records file a sweep cannot write (before anything runs); its tables' files."""
    from serq.files import check_distinct, check_not_input, check_output

    from .core import journal_path as out_journal
    from .core import points_path

    if record_format(path, getattr(plan, "given", None)) == "parquet":
        from .core import need_parquet_writer

        need_parquet_writer(_named(plan, "records", path), "a .parquet records table")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UserError(f"{_named(plan, 'records', shown_path(path))}: no folder {shown_path(folder)} to write it in")
    paths = files(path, table_names(plan))
    # every file of the sweep is a file of its own, by any path (./r.csv, a symbolic or hard link): a usage
    # error (serq.files.check_distinct), as serq run's outputs are
    # (the Python API's caller is told of out= and records=, not of options it never gave)
    o, r = _named(plan, "out"), _named(plan, "records")
    cli = o.startswith("--")
    outputs = [] if out is None else [(o, out),
                                      ("--out's points table" if cli else f"the points table of {o}", points_path(out)),
                                      ("--out's journal" if cli else f"the journal of {o}", out_journal(out))]
    outputs += [(r, target) for target in paths.values()]
    outputs.append(("--records' journal" if cli else f"the journal of {r}", journal_path(path)))
    check_distinct(outputs, of="a sweep")
    inputs = list(inputs)
    for target in [*paths.values(), journal_path(path)]:
        check_not_input(target, inputs)
    for target in [*paths.values(), journal_path(path)]:  # what the writes would refuse; own: named by serq
        check_output(target, own=target != path)
    return paths


# ---------------------------------------------------------------------------------------------------
# What a run gives, and what an earlier sweep kept
# ---------------------------------------------------------------------------------------------------


def journal_line(key: str, run: Run, limit: int | None = None) -> str:
    """A run's records as its journal keeps them: one JSON line, ``{"key": K, "tables": {NAME: {COLUMN: [...]}}}``
    (floats by repr, json's, so they read back as the same floats; an integer column stays integers); when that
    line would be longer than ``limit`` (by default the journal's reader's bound, MAX_LINE, 16 MiB: a run of
    some 300 000 records), the lines of its parts in order, each ``{"key": K, "tables": {NAME: {COLUMN: rows
    i to j}}, "part": [P, N]}`` and each within ``limit``, which :func:`load` joins back. A run's records were
    one line of any length, which the reader then refused as no sweep's entry: the resume of a sweep of large
    runs stopped by Ctrl-C was ``line 1 is longer than 16 MiB, which no entry of a sweep's journal is``, the
    finished runs given up with --fresh."""
    limit = MAX_LINE if limit is None else limit
    whole = json.dumps({"key": key, "tables": {n: {c: a.tolist() for c, a in cols.items()}
                                               for n, cols in run.items()}}) + "\n"
    if len(whole) <= limit:  # (ASCII: a character is a byte)
        return whole
    parts = list(_parts(run, limit - len(json.dumps({"key": key, "tables": {}, "part": [10**9, 10**9]})) - 1))
    return "".join(json.dumps({"key": key, "tables": t, "part": [i, len(parts)]}) + "\n"
                   for i, t in enumerate(parts))


def _parts(run: Run, room: int) -> Iterator[dict[str, dict[str, list]]]:
    """The record tables of ``run`` in pieces of consecutive rows of one table, each written in at most
    ``room`` characters of JSON (a table that fits whole is one piece)."""
    for name, cols in run.items():
        whole = {name: {c: a.tolist() for c, a in cols.items()}}
        size = len(json.dumps(whole))
        rows = len(next(iter(cols.values()))) if cols else 0
        if size <= room or rows <= 1:
            yield whole
            continue
        # rows a piece from the table's characters a row, with room to spare; halved where a piece still does
        # not fit (rows of long numbers after short ones)
        step, i = max(1, int(rows * room * 0.9 / size)), 0
        while i < rows:
            piece = {name: {c: a[i:i + step].tolist() for c, a in cols.items()}}
            if step > 1 and len(json.dumps(piece)) > room:
                step //= 2
                continue
            yield piece
            i += step


#: the dtypes of the columns every record has, as a run gives them (serq_sim.records: ``session`` int64,
#: ``turn`` int32, ``time`` float64); the journal's JSON and a CSV file do not keep them (a turn read back
#: was int64), so what a resumed sweep read is held to them: its tables are those of a sweep run whole
OWN_DTYPES = {"session": "int64", "turn": "int32", "time": "float64"}


def _own_dtypes(cols: dict[str, Any]) -> dict[str, Any]:
    """``cols`` with the columns every record has in their dtypes (:data:`OWN_DTYPES`); a ValueError when a
    value is none of that dtype (a hand-edited ``session`` of 1e30 or 0.5 was cast to -9223372036854775808
    and 0, a RuntimeWarning at most)."""
    import numpy as np

    for c, dtype in OWN_DTYPES.items():
        a = cols.get(c)
        if a is not None and a.dtype != dtype:
            if a.dtype.kind not in "iufb":
                raise ValueError(f"column {c}: not numbers")
            with np.errstate(invalid="ignore", over="ignore"):
                b = a.astype(dtype)
            wrong = np.flatnonzero(b != a) if dtype != "float64" else np.zeros(0, dtype=np.int64)
            if wrong.size:
                raise _NotWhole(f"column {c}: {a[wrong[0]].item()!r} is not a whole number within {dtype}", c,
                                int(wrong[0]))
            cols[c] = b
    return cols


class _NotWhole(ValueError):
    """:func:`_own_dtypes`'s refusal of the value at ``index`` of ``column``."""

    def __init__(self, why: str, column: str, index: int):
        super().__init__(why)
        self.column, self.index = column, index


def _arrays(cols: Mapping[str, Sequence]) -> dict[str, Any]:
    """One record table of a run as the journal keeps it (column -> a list of numbers) as arrays, held to
    what a run gives (:func:`journal_line`): every column a list of numbers (integers within int64), all of
    one length, ``session``, ``turn`` and ``time`` among them; a ValueError otherwise. A list of lists, of
    text or of nulls, or an integer beyond int64, was a traceback where the records table was written, and
    columns of different lengths were written out of line with each other (the rows of every later run
    shifted), silently, as was a table of no columns (the run's records lost)."""
    import numpy as np

    if not isinstance(cols, Mapping):
        raise ValueError("a record table is an object of columns")
    missing = [c for c in OWN_DTYPES if c not in cols]
    if missing:
        raise ValueError(f"no column {missing[0]}")
    out = {}
    for c, v in cols.items():
        if not (isinstance(v, list) and all(type(x) in (int, float) for x in v)):
            raise ValueError(f"column {c}: not a list of numbers")
        if any(type(x) is int and not -2**63 <= x < 2**63 for x in v):
            raise ValueError(f"column {c}: an integer beyond int64")
        floats = any(type(x) is float for x in v)
        out[c] = np.array(v, dtype=np.float64 if floats or not v else np.int64)
    if len({len(a) for a in out.values()}) > 1:
        raise ValueError("columns of different lengths")
    return _own_dtypes(out)


def record_columns(header: Sequence[str], swept: Sequence[str] = ()) -> list[int]:
    """The places in ``header``, a records table's, of the record's own columns: every column but
    :data:`PREFIX` and the swept names ``swept``, by their names wherever they stand (a table whose columns
    were reordered by hand, the record's before ``key``, lost those: its runs ran again); without the swept
    names, those after ``key`` (where a sweep writes them)."""
    if swept or "key" not in header:
        taken = {*PREFIX, *swept}
        return [j for j, c in enumerate(header) if c not in taken]
    k = list(header).index("key")
    return [j for j in range(k + 1, len(header)) if header[j] not in PREFIX]


def _read_csv(path: str, swept: Sequence[str] = ()) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """A records table in CSV: its header, and key -> column -> array (integers where every cell of the
    column is written as one, as the writer writes integer columns); the record's columns by their names
    (:func:`record_columns`, ``swept`` the sweep's swept names)."""
    import numpy as np

    # a regular file only (a FIFO would block), of lines of at most MAX_LINE bytes (a sparse file is one line)
    with wide_fields(), io.TextIOWrapper(open_input(path, max_line=MAX_LINE), newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
        except UnicodeDecodeError:
            raise not_utf8_fault(path) from None
        if header is None:
            return [], {}
        unmarked_utf16(path, header)
        repeated_column(path, header, reader.line_num)
        if "key" not in header:
            raise ValueError("no column key")
        k = header.index("key")
        places = record_columns(header, swept)
        cols = [header[j] for j in places]
        by_key: dict[str, list[list[str]]] = {}
        where: dict[str, list[tuple[int, int]]] = {}  # per key, the lines of each of its rows
        for first, last, row in csv_rows(path, reader):
            if len(row) != len(header):
                raise width_fault(path, first, last, row, len(header))
            by_key.setdefault(row[k], []).append([row[j] for j in places])
            where.setdefault(row[k], []).append((first, last))
    whole = [all(_int64(r[j]) for rs in by_key.values() for r in rs) for j in range(len(cols))]
    out = {}
    for key, rs in by_key.items():
        arrays = {}
        for j, c in enumerate(cols):
            if whole[j]:
                arrays[c] = np.array([int(r[j]) for r in rs], dtype=np.int64)
                continue
            values = []
            for r, lines in zip(rs, where[key]):
                try:
                    values.append(_cell(r[j], c))
                except ValueError as e:  # at the cell, the line quoted
                    raise cell_fault(path, *lines, places[j], str(e)) from None
            arrays[c] = np.array(values, dtype=np.float64)
        try:
            out[key] = _own_dtypes(arrays)
        except _NotWhole as e:  # at the cell, the line quoted
            raise cell_fault(path, *where[key][e.index], header.index(e.column), str(e)) from None
    return header, out


def _int64(cell: str) -> bool:
    """Whether ``cell`` is an integer as the writer writes one: digits 0-9 after an optional ``-``, within the
    64-bit integers of an integer column (``str.isdigit`` took ``²`` and full-width ``１２``, which ``int()``
    read as 12; a longer integer made numpy's int64 overflow, a traceback)."""
    return WHOLE_CELL.fullmatch(cell) is not None and -2**63 <= int(cell) < 2**63 if len(cell) <= 21 else False


def _cell(cell: str, column: str) -> float:
    """A cell of a float column, in serQ's number syntax (or NaN, which the writer writes for a column a run
    lacks): ``float()`` read ``1_000``, `` 5 ``, ``Infinity`` and other scripts' digits."""
    if FLOAT_CELL.fullmatch(cell) is None:
        raise ValueError(f"column {column}: {cell[:40]!r} is not a number")
    return float(cell)


def records_size(name: str, written: int, counted: int, unknown: int, max_samples: int, prefix: int) -> Any:
    """The check of a records table in Parquet before any row of it is read (serq_sweep.core.read_parquet's
    ``sized``): a ValueError when its rows are more than its runs wrote (``name``: the table's). ``written``: the
    rows that the
    ``counted`` runs of the sweep's table wrote, as their rows there count them (``records.NAME``, the rows
    after the warm-up, what the records keep: a run's records are resumed only when they are as many,
    :func:`complete`); ``unknown``: the runs of that table whose rows say no count (another sweep's, left
    out, or a row without the figure), each of which can have written at most ``max_samples`` samples (a
    run's --max-samples, serQ's default else: every record's row holds a sample a column of the columns
    after the ``prefix`` ones, ``point``, the swept names, ``seed``, ``key``, and a run holding more is
    stopped, serq_sim.engine.Engine.samples_held) and the rows of one tick of events more
    (:data:`serq_sim.engine.TICK`). A records table was read whole, and a file of a few KB of one value
    compressed into millions of rows was a bomb of gigabytes to a sweep resuming; the bound of
    ``max_samples`` alone, 25 million rows a run of 4 columns by default, let one of 0.4 MB through."""
    from serq_sim.engine import TICK

    def check(meta: Any) -> None:
        if meta is None:
            return
        rows, cols = meta.num_rows, max(1, meta.num_columns - prefix)
        each = max_samples // cols + TICK
        most = written + unknown * each
        if rows > most:
            by = [f"{written} that the {counted} run(s) of the sweep's table wrote (their records.{name})"] if counted \
                else []
            if unknown:
                by.append(f"{unknown * each} that {unknown} run(s) of at most {max_samples} samples each of "
                          f"{cols} record column(s) can have written")
            raise ValueError(f"it holds {rows} rows, more than the {most}" + (": " + " and ".join(by) if by else
                             " that the runs of the sweep's table wrote (it holds none)"))

    return check


def written_rows(name: str, done: Mapping[str, Mapping[str, Any]], others: int,
                 points: Mapping[str, Any] | None = None) -> tuple[int, int, int]:
    """``(written, counted, unknown)`` of records table ``name`` for :func:`records_size`: the rows the runs
    ``done`` (the sweep's table and its journal, key -> result) wrote by their ``records.NAME``, how many of
    them say so (a failed run wrote none, nor a run whose point's program, ``points[key]``, records no such
    table), and the runs that say no count: those whose row lacks the figure, and ``others``, the runs of the
    table that this sweep does not run (whose rows are not kept)."""
    written = counted = 0
    unknown = others
    for key, result in done.items():
        point = None if points is None else points.get(key)
        if result.get("status") not in ("ok", "partial") or (point is not None and name not in point.records):
            counted += 1  # (a failed run keeps no records; a program without the table writes none of it)
            continue
        n = result.get("figures", {}).get(f"records.{name}")
        if isinstance(n, bool) or not isinstance(n, (int, float)) or not 0 <= n < 2**63 or n != int(n):
            unknown += 1
            continue
        written += int(n)
        counted += 1
    return written, counted, unknown


#: the most rows, and the most cells (rows times columns), of a records file in Parquet that ``serq plot
#: --cdf`` reads (with no sweep to say how many runs wrote it): ten million requests, each a step of the
#: CDF, are more than a figure shows; a file past them is refused from its footer before any row is read
MAX_PLOTTED_ROWS = 10**7
MAX_PLOTTED_CELLS = 10**8


def plotted_size(meta: Any) -> None:
    """The check of a records file in Parquet that ``serq plot --cdf`` reads (serq_sweep.core.read_parquet's
    ``sized``): a ValueError when its footer says more rows than :data:`MAX_PLOTTED_ROWS` or more cells than
    :data:`MAX_PLOTTED_CELLS`. A sweep resuming holds its records to what its runs could have written
    (:func:`records_size`); a plot has no sweep, and read such a file whole: a few KB of one value compressed
    into millions of rows was a bomb of gigabytes."""
    from .core import footer_bound

    said = "a records file serq plot reads may have"
    footer_bound(meta, MAX_PLOTTED_ROWS, MAX_PLOTTED_CELLS, said, said)


def swept_names(header: Sequence[str]) -> list[str]:
    """The swept names of a records table read with no sweep to name them (``serq plot --cdf --hue``), by
    their names wherever they stand, as :func:`serq_sweep.core.point_columns` reads a table's: every column
    but :data:`PREFIX`, the columns every record has (``session``, ``turn``, ``time``: no swept name is one,
    :func:`clash_of_columns`) and the record's declared ones, those after ``key`` (:func:`record_columns`).
    The columns before ``seed`` were taken: a table whose columns were reordered by hand listed a record's
    column as a swept name, or none."""
    from serq_sim.records import OWN

    from .core import point_columns

    return [c for c in point_columns([str(c) for c in header]) if c not in OWN]


def _read_parquet(path: str, sized: Any = None, swept: Sequence[str] = ()) -> tuple[list[str], dict[str, dict[str, Any]]]:
    from .core import read_parquet

    frame = read_parquet(path, sized=sized or False)
    header = list(frame.columns)
    if "key" not in header:
        raise ValueError("no column key")
    cols = [header[j] for j in record_columns(header, swept)]
    for c in cols:  # a record's columns are numbers, as the CSV reader holds each cell to (_cell): a column of
        # words (or of nothing, Arrow's null type) was resumed and written back into the records table
        if frame[c].dtype.kind not in "iuf":
            raise ValueError(f"column {printable(str(c))[:60]}: not numbers (a record's columns are numbers)")
    out = {}
    for key, g in frame.groupby("key", sort=False):
        out[key] = {c: g[c].to_numpy() for c in cols}
    return header, out


def declared(point: Any, name: str) -> tuple[str, ...]:
    """The columns every record of table ``name`` has in a run of ``point``: those every record has
    (``session``, ``turn``, ``time``) and those its program's ``record`` declares (none: a table its program
    does not declare)."""
    from serq_sim.records import OWN

    return (*OWN, *point.records[name]) if name in point.records else ()


def load(path: str, plan: Any, others: set[str] | None = None, done: Mapping[str, Mapping[str, Any]] | None = None,
         table_others: int = 0) -> dict[str, Run]:
    """The records an earlier sweep into ``path`` kept (its tables and its journal): key -> the run's
    tables (a key this sweep does not run is left out, and added to ``others`` when given). ``done``: the
    runs of the sweep's table there (and its journal) this sweep runs, key -> result, ``table_others`` how
    many others it holds; a records table in Parquet holds no more rows than those runs wrote
    (:func:`records_size`, :func:`written_rows`)."""
    from serq_sim.engine import DEFAULT_MAX_SAMPLES

    wanted = {plan.key(p, s): p for p in plan.points for s in plan.seeds}
    runs: dict[str, Run] = {}
    most = int(plan.limits.get("max_samples") or DEFAULT_MAX_SAMPLES)
    given = getattr(plan, "given", None)
    fresh = fresh_named(given)  # (--fresh, or the Python API's fresh=True)
    for name, file in files(path, table_names(plan)).items():
        if not os.path.exists(file):
            continue
        try:
            if record_format(file) == "parquet":
                sized = records_size(name, *written_rows(name, done or {}, table_others, wanted), most,
                                     len(PREFIX) + len(plan.names))
                _, by_key = _read_parquet(file, sized, plan.names)
            else:
                _, by_key = _read_csv(file, plan.names)
            for key, cols in by_key.items():
                # a run's records without a column its program's record declares (a column deleted or renamed
                # by hand) are not its records: it runs again, as records cut down to fewer rows do (they were
                # resumed with the column NaN, written so into the table, its values lost without a word)
                # and a run's records are the columns its program's record declares, no others: a swept name of
                # the table there that this sweep does not sweep (a --set mu dropped, the runs of mu's default
                # kept by their keys) was resumed as a record's column, written after key in the records table
                own = declared(wanted[key], name) if key in wanted else ()
                if key in wanted and all(c in cols for c in own):
                    runs.setdefault(key, {})[name] = _own_dtypes({c: cols[c] for c in own})
                elif key not in wanted and others is not None:
                    others.add(key)
        except TableFault as e:
            raise UserError(e.message("cannot read the records to resume from", f"; remove it or give {fresh}")
                            ) from None
        except (OSError, ValueError, KeyError, ImportError, csv.Error) as e:
            from .core import unreadable

            raise UserError(f"{shown_path(file)}: cannot read the records to resume from ({unreadable(file, e)}); remove it or give "
                            f"{fresh}") from None
    from .core import journal_entries

    # a run journaled in parts (journal_line): its parts in order, joined once the last has come; parts cut
    # short by a kill (no last part, or one out of order) are no records, and the run runs again
    parts: dict[str, tuple[int, int, dict[str, dict[str, list]]]] = {}
    for key, r in journal_entries(journal_path(path), set(wanted), {"tables": lambda v: isinstance(v, dict)},
                                  others, given=given):
        try:
            tables = r["tables"]
            if "part" in r:
                part = r["part"]
                if not (isinstance(part, list) and len(part) == 2 and all(type(x) is int for x in part)
                        and 0 <= part[0] < part[1]):
                    raise ValueError("its part is no [P, N] of whole numbers, P below N")
                at, of = part
                if at == 0:
                    parts[key] = (0, of, {})
                if key not in parts or parts[key][:2] != (at, of):
                    parts.pop(key, None)
                    continue
                joined = parts[key][2]
                for name, cols in tables.items():
                    if not isinstance(cols, Mapping):
                        raise ValueError("a record table is an object of columns")
                    into = joined.setdefault(name, {})
                    for c, v in cols.items():
                        if not isinstance(v, list):
                            raise ValueError(f"column {c}: not a list of numbers")
                        into.setdefault(c, []).extend(v)
                if at + 1 < of:
                    parts[key] = (at + 1, of, joined)
                    continue
                tables = parts.pop(key)[2]
            runs[key] = {n: _arrays(cols) for n, cols in tables.items()}
            for n, cols in runs[key].items():  # (what a run journals: every column its program's record declares)
                lacking = [c for c in declared(wanted[key], n) if c not in cols]
                if lacking:
                    raise ValueError(f"no column {lacking[0]} of the table {n}")
        except (AttributeError, TypeError, ValueError, KeyError) as e:
            why = f" ({e})" if isinstance(e, ValueError) else ""
            raise UserError(f"{journal_path(path)}: the records of run {key} are not a sweep's{why}; remove the "
                            f"file or give {fresh}") from None
    return runs


def left_out(path: str, others: set[str], given: Any = None) -> str | None:
    """What a sweep says, before its first run, of the runs ``others`` whose records are in the records file
    ``path`` (its tables, or its journal) and which it does not run, or None when there are none: the records
    it writes hold its own runs alone (those of another sweep, or of values and seeds not swept now, went
    without a word, where the table's are said: serq_sweep.core.left_out). ``given`` names ``--records`` or
    the Python API's ``records=`` (serq_sweep.core.named)."""
    if not others:
        return None
    return (f"warning: {named(given, 'records', printable(path))}: the records of {len(others)} run(s) there (or in its journal) "
            "are of no point and seed of this sweep (a value or seed not swept now, another sweep's, or the "
            "program, a trace, a run bound or a serQ version changed since): the records this sweep writes "
            f"leave them out; copy them aside now to keep them, or give {another_name(given, 'records')}")


def complete(key: str, runs: Mapping[str, Run], result: Mapping[str, Any] | None, names: Sequence[str]) -> bool:
    """Whether the records of run ``key`` are kept: every table's rows are in ``runs``, or the run (its
    ``result`` in the sweep's table) failed or counts no row of the tables missing."""
    have = runs.get(key, {})
    missing = [n for n in names if n not in have]
    if not missing:
        return result is None or _rows_agree(have, result, names)
    if result is None:
        return False
    if result.get("status") == "error":
        return True
    figs = result.get("figures", {})
    return all(figs.get(f"records.{n}") == 0 for n in missing)


def _rows_agree(have: Run, result: Mapping[str, Any], names: Sequence[str]) -> bool:
    """Whether the records kept of a run hold as many rows of each table as its row in the sweep's table counts
    (``records.NAME``, the rows after the warm-up, what the records keep): a journal entry of no rows, or a
    records table cut down by hand, was resumed as the run's records, its rows lost without a word. A run
    whose records disagree runs again, which writes both anew."""
    if result.get("status") not in ("ok", "partial"):
        return True
    figs = result.get("figures", {})
    for n in names:
        want = figs.get(f"records.{n}")
        if isinstance(want, bool) or not isinstance(want, (int, float)) or want != want:
            continue  # (no count to hold the records to)
        cols = have[n]
        rows = len(next(iter(cols.values()))) if cols else 0
        if rows != want:
            return False
    return True


# ---------------------------------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------------------------------


def assemble(plan: Any, runs: Mapping[str, Run], name: str) -> tuple[list[str], list[tuple], dict[str, Any]]:
    """Table ``name`` of the runs in ``runs``: its columns, the runs in it in point and seed order as
    ``(prefix values, rows)``, and the record columns concatenated (a column a run lacks is NaN there)."""
    import numpy as np

    rec_cols: dict[str, None] = {}
    order = []
    for p in plan.points:
        for s in plan.seeds:
            k = plan.key(p, s)
            tbl = runs.get(k, {}).get(name)
            if tbl is None:
                continue
            for c in tbl:
                rec_cols.setdefault(c, None)
            n = len(next(iter(tbl.values()))) if tbl else 0
            order.append(((p.index, *plan.shown(p).values(), s, k), n, tbl))
    prefix = ["point", *plan.names, "seed", "key"]
    columns = [*prefix, *rec_cols]
    cat: dict[str, Any] = {}
    for c in rec_cols:
        parts = [tbl[c] if c in tbl else np.full(n, math.nan) for _, n, tbl in order if n]
        cat[c] = np.concatenate(parts) if parts else np.zeros(0)
    return columns, [(pre, n) for pre, n, _ in order], cat


def _encode_csv(columns: list[str], order: list[tuple], cat: dict[str, Any]) -> bytes:
    from serq_report.csv import format_column

    from .core import _csv_value

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    cells = [format_column(a) for a in cat.values()]
    rows = list(zip(*cells)) if cells else []
    i = 0
    for pre, n in order:
        head = io.StringIO()
        csv.writer(head, lineterminator="").writerow([_csv_value(v) for v in pre])
        lead = head.getvalue() + ("," if cells else "")
        buf.write("".join(lead + ",".join(r) + "\n" for r in rows[i:i + n]))
        i += n
    return buf.getvalue().encode("utf-8")


def frame(plan: Any, runs: Mapping[str, Run], name: str) -> Any:
    """Table ``name`` as a pandas DataFrame."""
    import numpy as np

    try:
        import pandas as pd
    except ImportError:
        raise UserError("the records as a DataFrame need pandas: pip install 'serq-sweep[pandas]'") from None
    columns, order, cat = assemble(plan, runs, name)
    npre = len(columns) - len(cat)
    data: dict[str, Any] = {}
    for j, c in enumerate(columns[:npre]):
        values = [pre[j] for pre, n in order for _ in range(n)]
        a = np.asarray(values) if values else np.zeros(0)
        data[c] = a.astype(object) if a.dtype.kind == "U" else a
    data.update(cat)
    return pd.DataFrame(data, columns=columns)


def write(plan: Any, runs: Mapping[str, Run], path: str, inputs: Iterable[str]) -> None:
    """Every table of ``runs`` to its file (``path``, or ``STEM.NAME.EXT`` for several), atomically, and the set of
    them all or nothing (serq.files.renamed_together: a write that failed part way, a full disk, left the
    tables written before it beside the earlier sweep's others, a mix of two sweeps' records)."""
    from serq.files import folders_synced_once, renamed_together

    with folders_synced_once(), renamed_together():  # (each file fsynced, the folder once at the end)
        _write_tables(plan, runs, path, list(inputs))


def _write_tables(plan: Any, runs: Mapping[str, Run], path: str, inputs: list[str]) -> None:
    from serq.files import write_atomic

    for name, file in files(path, table_names(plan)).items():
        if record_format(file) == "csv":
            columns, order, cat = assemble(plan, runs, name)
            data = _encode_csv(columns, order, cat)
        else:
            buf = io.BytesIO()
            try:
                frame(plan, runs, name).to_parquet(buf, index=False)
            except ImportError:
                raise UserError("a .parquet records table needs pyarrow: pip install 'serq-sweep[pandas]' "
                                "(or write .csv)") from None
            data = buf.getvalue()
        write_atomic(file, data, inputs=inputs, own=file != path)  # STEM.NAME.EXT: named by serq
