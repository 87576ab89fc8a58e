"""Tables of records: ``record NAME { col = expr; … }`` appends one row, every column at once.

A table holds one ``array('d')`` per declared column and the columns every record has: ``session``
(the session's serial, ``array('q')``), ``turn`` (its turn number, ``array('i')``) and ``time`` (when the
row was recorded, ``array('d')``): 20 bytes a row plus 8 per declared column, so 100 000 requests of
lib/vllm.sq's 13 columns are 12 MB. Every row is kept during the run; the report leaves out the rows
recorded for requests sent before the warm-up's end (by the column ``sent`` when the table has one, by
``time`` otherwise), so a row is in or out as a whole.

Integer columns. A declared column is given as integers (int64 in the arrays, the DataFrame, CSV and
Parquet) when its values can only be whole numbers, as far as the program tells (:func:`whole_columns`:
no ``record`` of the table computes it from a time, a duration, a division or a draw other than
``bernoulli``, directly or through an attribute) and every row the report keeps is a whole finite
number below 2^53 (a count, a member index, tokens; lib/vllm.sq's ``prompt``, ``output``, ``cached``,
``preemptions`` and ``engine``). Any other column stays float64; ``session`` is int64 and ``turn``
int32 always.
"""

from __future__ import annotations

import math
from array import array
from itertools import compress
from typing import Any

from serq_ir import nodes as N

OWN = ("session", "turn", "time")
#: context variables and observables that are counts: whole numbers
_WHOLE_CTX = frozenset(("size", "waiting", "present", "residents", "decoders", "decoding", "admission"))
_FRACTION_OBS = frozenset(("price", "est_lambda", "est_rho", "est_wait"))
#: the attributes a trace (or a preset's turns) supplies that are not whole: the think time
_FRACTION_ATTRS = frozenset(("think",))


def _whole(e, attrs: list[bool]) -> bool:
    """Whether ``e`` can only be a whole number (or a non-finite one), given which attributes can."""
    if isinstance(e, N.Num):
        v = e.value
        return isinstance(v, str) or not math.isfinite(v) or v == math.floor(v)
    if isinstance(e, N.Attr):
        return 0 <= e.slot < len(attrs) and attrs[e.slot]
    if isinstance(e, N.Ctx):
        return e.name in _WHOLE_CTX
    if isinstance(e, N.Draw):
        return e.dist == "bernoulli"
    if isinstance(e, N.Call):
        if e.fn in ("floor", "ceil"):
            return True
        return e.fn in ("min", "max", "abs", "sum") and all(_whole(a, attrs) for a in e.args)
    if isinstance(e, N.Observable):
        return e.name not in _FRACTION_OBS  # counts, or units: whole or not by the values
    if isinstance(e, N.Unary):
        return e.op == "!" or _whole(e.arg, attrs)
    if isinstance(e, N.Binary):
        if e.op == "/":
            return False
        if e.op in ("+", "-", "*", "%"):
            return _whole(e.lhs, attrs) and _whole(e.rhs, attrs)
        return True  # comparisons and logic: 0 or 1
    if isinstance(e, N.Cond):
        return _whole(e.then, attrs) and _whole(e.orelse, attrs)
    return False


def whole_columns(program: Any) -> list[list[bool]]:
    """For each table, for each declared column, whether it can only be a whole number: the attributes
    that can are found as a fixed point (every ``set`` of one, every preset value, whole), then every
    ``record`` of the table must compute the column from whole numbers only."""
    from .compile import walk

    attrs = [a.name not in _FRACTION_ATTRS for a in program.attributes]
    nodes = list(walk(program, presets=False))  # the presets' values (one preset a session) are read below
    sets = [x for x in nodes if isinstance(x, N.Set)]
    rows = [[x for x in nodes if isinstance(x, N.SlotValue)]]
    for pr in program.workload.presets:
        rows.append(pr.attrs)
        rows.extend(pr.turns)
    for row in rows:
        for x in row:
            v = float(x.value)
            if math.isfinite(v) and v != math.floor(v) and 0 <= x.slot < len(attrs):
                attrs[x.slot] = False
    changed = True
    while changed:
        changed = False
        for st in sets:
            if 0 <= st.slot < len(attrs) and attrs[st.slot] and not _whole(st.value, attrs):
                attrs[st.slot] = False
                changed = True
    out = [[True] * len(d.columns) for d in program.records]
    for x in nodes:
        if isinstance(x, N.Record) and 0 <= x.record < len(out):
            cols = out[x.record]
            for k, v in enumerate(x.values[:len(cols)]):
                if cols[k] and not _whole(v, attrs):
                    cols[k] = False
    return out


class RecordTable:
    """One table's rows while the run goes on."""

    __slots__ = ("name", "columns", "values", "sessions", "turns", "times", "add", "whole")

    def __init__(self, name: str, columns: list[str], whole: list[bool] | None = None):
        self.name = name
        self.columns = list(columns)
        #: which declared columns can only be whole numbers (whole_columns)
        self.whole = list(whole) if whole is not None else [False] * len(columns)
        self.values = [array("d") for _ in columns]
        self.sessions = array("q")
        self.turns = array("i")
        self.times = array("d")
        self._adder()

    def _adder(self) -> None:
        """``self.add``, the run's appender of a row (a closure over the columns' ``append``)."""
        apps = tuple(v.append for v in self.values)
        sa, ta, tm = self.sessions.append, self.turns.append, self.times.append

        def add(serial: int, turn: int, now: float, row: tuple) -> None:
            sa(serial)
            ta(turn)
            tm(now)
            for app, v in zip(apps, row):
                app(v)

        self.add = add

    # A report keeps its tables (serq_sim.report.Report, through Records): pickled (a report returned by a
    # multiprocessing pool's worker, kept by joblib), a table is its columns, and its appender is made again
    # (a local function, which pickle refuses: a report with records could not be pickled, one without could)
    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if k != "add"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._adder()

    def __len__(self) -> int:
        return len(self.times)


def tables(program: Any) -> list[RecordTable]:
    whole = whole_columns(program) if program.records else []
    return [RecordTable(d.name, d.columns, w) for d, w in zip(program.records, whole)]


#: what :meth:`Records.frame` gives: the first of pandas and polars installed, or one named
KINDS = ("auto", "pandas", "polars", "numpy")


class Records:
    """One table of records after the run, rows sent before the warm-up's end left out: :meth:`arrays`
    gives numpy arrays by column (``session``, ``turn``, ``time``, then the declared ones), :meth:`frame`
    a pandas DataFrame (or polars, or the arrays, whichever is installed)."""

    def __init__(self, table: RecordTable, warmup: float):
        self.name = table.name
        self.columns = [*OWN, *table.columns]
        self._table = table
        self._warmup = warmup
        self._arrays: dict[str, Any] | None = None
        self._kept: list[int] | None = None

    def arrays(self) -> dict[str, Any]:
        if self._arrays is None:
            import numpy as np

            t = self._table
            cols = {"session": np.frombuffer(t.sessions, dtype=np.int64) if len(t) else np.zeros(0, np.int64),
                    "turn": np.frombuffer(t.turns, dtype=np.int32) if len(t) else np.zeros(0, np.int32),
                    "time": np.frombuffer(t.times, dtype=np.float64) if len(t) else np.zeros(0)}
            for name, buf in zip(t.columns, t.values):
                cols[name] = np.frombuffer(buf, dtype=np.float64) if len(t) else np.zeros(0)
            key = cols["sent"] if "sent" in cols else cols["time"]
            keep = key >= self._warmup
            if "sent" in cols and np.isnan(key).any():  # (a row sent at NaN: by its time, see kept())
                keep |= np.isnan(key) & (cols["time"] >= self._warmup)
            if not keep.all():
                # the rows kept are a run of rows (always by `time`, in record order; most often by `sent`):
                # views of the table's buffers, not a copy of every column; else the rows picked
                rows = np.flatnonzero(keep)
                first, last = (int(rows[0]), int(rows[-1]) + 1) if len(rows) else (0, 0)
                pick = slice(first, last) if last - first == len(rows) else keep
                cols = {k: v[pick] for k, v in cols.items()}
            for name, whole in zip(t.columns, t.whole):
                a = cols[name]
                # a whole-number column (whole_columns) whose kept values are all whole, finite and exact
                if whole and bool(np.all((a == np.floor(a)) & (np.abs(a) < 2.0 ** 53))):
                    cols[name] = a.astype(np.int64)
            from .report import read_only

            self._arrays = {k: read_only(v) for k, v in cols.items()}  # (kept: written into, the report changed)
        return self._arrays

    def kept(self) -> list[int]:
        """The indexes of the rows the report keeps, in pure Python (the report imports no numpy)."""
        t = self._table
        key = t.values[t.columns.index("sent")] if "sent" in t.columns else t.times
        w = float(self._warmup)
        kept = list(compress(range(len(key)), map(w.__le__, key)))  # the i with key[i] >= w
        if key is not t.times and len(kept) < len(key) and any(map(math.isnan, key)):
            # a row whose `sent` is NaN (a program's `sent = 0 / z;`) is judged by its `time`, as a table without
            # `sent` is: it was left out (NaN >= w is false), of --records and the request metrics alike, without
            # a word, however early the warm-up ended (a third of a table's rows at warm-up 0)
            times = t.times
            kept = [i for i, k in enumerate(key) if k >= w or (k != k and times[i] >= w)]
        return kept

    def column(self, name: str) -> list[float]:
        """One declared column (or ``time``) of the kept rows, as Python floats."""
        t = self._table
        buf = t.times if name == "time" else t.values[t.columns.index(name)]
        kept = self.kept_rows
        if len(kept) == len(buf):  # every row (they are 0, 1, ..., in order)
            return buf.tolist()
        return list(map(buf.__getitem__, kept))

    @property
    def kept_rows(self) -> list[int]:
        if self._kept is None:
            self._kept = self.kept()
        return self._kept

    def __len__(self) -> int:
        return len(self.kept_rows)

    def frame(self, kind: str = "auto") -> Any:
        """The rows as a DataFrame: ``kind`` ``"pandas"``, ``"polars"``, ``"numpy"`` (the dict of arrays)
        or ``"auto"`` (pandas when installed, else polars, else numpy). A ``kind`` that is no str is a
        TypeError (``kind=3`` was a ValueError, as if a name were misspelt), one of no such name a ValueError,
        both before anything is made."""
        if not isinstance(kind, str):
            raise TypeError(f"kind is a str (one of {', '.join(KINDS)}), not {type(kind).__name__}")
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
        cols = self.arrays()
        if kind in ("auto", "pandas"):
            try:
                import pandas as pd
            except ImportError:
                if kind == "pandas":
                    raise _missing(kind) from None
            else:  # (the caller's own columns, to edit in place: a frame of the kept arrays changed the report)
                return pd.DataFrame(cols, copy=True)
        if kind in ("auto", "polars"):
            try:
                import polars as pl
            except ImportError:
                if kind == "polars":
                    raise _missing(kind) from None
            else:
                return pl.DataFrame(cols)
        return dict(cols)

    def __repr__(self) -> str:
        return f"<Records {self.name!r}: {len(self)} rows, columns {', '.join(self.columns)}>"


def _missing(kind: str) -> ModuleNotFoundError:
    """``records(kind=KIND)`` of a library that is not installed: said so, with the kinds that need none (the
    import's own "No module named 'polars'" named neither the call nor a way on)."""
    return ModuleNotFoundError(f"records(kind={kind!r}) needs {kind}, which is not installed (pip install {kind}); "
                               "kind='numpy' gives the columns as numpy arrays, kind='auto' what is installed",
                               name=kind)


def record_files(path: str, names: list[str]) -> dict[str, str]:
    """Where ``serq run --records PATH`` writes each table: PATH for a program of one table; for
    several, ``STEM.NAME.EXT`` beside it (``reqs.csv`` → ``reqs.request.csv``, ``reqs.sub.csv``), NAME the
    table's name made a file name by :func:`serq.files.file_names`, as a dump's files are: an IR file's
    table named ``x/y`` or ``/../../elsewhere`` (``reqs.x%2Fy.csv``) writes beside PATH, never in a folder
    it names."""
    if len(names) <= 1:
        return {n: path for n in names}

    from serq.files import file_names, split_suffix

    stem, ext = split_suffix(path)
    safe = file_names(names)
    return {n: f"{stem}.{safe[n]}{ext}" for n in names}


#: how long a set of record tables waits for another run writing into its folder (:func:`hold_set`)
SET_WAIT = 60.0


def hold_set(path: str, files: int) -> int | None:
    """The folder of ``serq run --records PATH`` taken for this run's set of ``files`` tables alone while it is
    written: an advisory lock (``flock``) on the folder itself, as a dump's folder is (serq_report.csv), the
    descriptor the caller's to close once the last table is written. Two runs of a program of several tables
    into one PATH at once each wrote its tables over the other's, and the folder held one run's
    ``PATH.a.csv`` beside the other's ``PATH.b.csv`` (each file whole, the set a mix). A folder another run
    holds (it writes its own set, or a dump, serq_report.csv) is waited for, up to :data:`SET_WAIT` seconds, and
    then written:
    of two runs into one PATH the set is the one written last, whole; two runs into different files of
    one folder both write theirs. Still held after the wait, or a signal while waiting: refused, no table
    written. A set of one table (one file, replaced whole) and a folder this user may not open or whose file
    system has no such lock are written unlocked (None: nothing held)."""
    if files <= 1:
        return None
    import os

    from serq.files import take_folder

    fd, refused = take_folder(os.path.dirname(path) or ".", SET_WAIT)
    if refused is not None:
        from serq.errors import shown_path
        from serq.files import OutputError

        if refused == "signal":
            raise OutputError(f"--records {shown_path(path)}: a signal came while this run waited for another one "
                              "writing into this file's folder (the report was written, no records were)")
        raise OutputError(f"--records {shown_path(path)}: another run has held this file's folder for "
                          f"{SET_WAIT:g} s (writing its records or a dump there); give --records a file in another "
                          "folder (the report was written, no records were)")
    return fd


def parquet_writer(path: str) -> str:
    """``"pyarrow"`` or ``"polars"``: the first of them that imports, the one :func:`write` writes ``path`` with.
    Neither is a :class:`serq.UserError`: the one check, made before a run (serq run --records, so that a run
    is not lost at its end for want of a writer) and again at the write. A writer is tried by importing it, not
    by finding it (``importlib.util.find_spec``): a module of that name that does not import (one on
    ``PYTHONPATH`` shadowing the installed package, a broken install raising as it loads) is passed over, and
    the message says why it did not import, where it was taken for a writer and the run's records were lost at
    its end to the ``ImportError`` (or the package's own exception) as a traceback."""
    from serq.errors import UserError

    name, why = first_that_imports((("pyarrow", "pyarrow.parquet"), ("polars", "polars")))
    if name is not None:
        return name
    raise UserError(f"--records {path}: writing Parquet needs pyarrow or polars "
                    f"(pip install 'serq-sim[frames]'); a .csv file needs neither{why}")


def first_that_imports(candidates) -> tuple[str | None, str]:
    """``(name, "")`` of the first of ``candidates`` (``(name, module)`` pairs: a package and the module of it
    that is used) whose module imports, else ``(None, why)``: for each that is there and does not import (a
    module of that name on ``PYTHONPATH`` shadowing the installed package, a broken install raising as it
    loads, a module it imports missing), ``; NAME does not import (ERROR: its first line)``. Tried by importing,
    not by finding (``importlib.util.find_spec``), which took such a module for one that works. The Parquet
    writers of a records file (:func:`parquet_writer`) and of a sweep's table (serq_sweep.core.need_parquet_writer)."""
    import importlib

    broken = []
    for name, module in candidates:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name not in (name, module):  # it is there, and a module it imports is not
                broken.append(_not_imported(name, e))
        except Exception as e:  # noqa: BLE001 - whatever a broken or shadowing module raises as it loads
            broken.append(_not_imported(name, e))
        else:
            return name, ""
    return None, "".join(f"; {b}" for b in broken)


def _not_imported(name: str, e: BaseException) -> str:
    first = next(iter(str(e).splitlines()), "")
    return f"{name} does not import ({type(e).__name__}{': ' + first if first else ''})"


def need_parquet(path: str) -> None:
    """Refuse a Parquet records file ``path`` when neither pyarrow nor polars imports (:func:`parquet_writer`)."""
    parquet_writer(path)


def writer_loaded(path: str) -> None:
    """Import now what :func:`write` of ``path`` imports (numpy and serq_report's CSV writer; pyarrow or polars
    for Parquet): made before a run, so that a run the memory guard stopped (serq_sim.memguard) writes its
    records in the room the guard kept, where importing them after it allocated that room and more (numpy's
    OpenBLAS its buffers: "OpenBLAS error: Memory allocation still failed" under ``ulimit -v 400000``, the
    report lost). What is not installed is told by :func:`write` (and :func:`need_parquet`) as before."""
    try:
        if path.lower().endswith(".parquet"):
            from serq.errors import UserError

            try:
                parquet_writer(path)
            except UserError:
                pass
        else:
            import serq_report.csv  # noqa: F401
    except ImportError:
        pass


def write(records: Records, path: str, inputs: list[str], *, own: bool = False) -> None:
    """One table as CSV or Parquet (by ``path``'s extension), atomically (serq.files). ``own``: ``path`` is a
    name serq made (``STEM.NAME.EXT`` of a program of several tables), written only as a new or regular
    file (a symbolic link, a FIFO or a device there is refused, not followed or written through)."""
    from serq.errors import UserError

    if own:  # a file there that no run wrote (serq run checks it before the run too)
        from serq.files import check_recorded

        check_recorded(path, path)
    cols = records.arrays()
    if path.lower().endswith(".parquet"):
        writer = parquet_writer(path)
        import io

        from serq.files import write_atomic

        buf = io.BytesIO()
        if writer == "pyarrow":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table(cols), buf)
        else:
            import polars as pl

            pl.DataFrame(cols).write_parquet(buf)
        write_atomic(path, buf.getvalue(), inputs=inputs, own=own)
    else:
        try:
            from serq_report.csv import write_table
        except ImportError:
            raise UserError("--records needs serq-report (pip install serq-report)") from None
        write_table(path, cols, inputs=inputs, own=own)
