"""Tables of records: ``record NAME { col = expr; … }`` appends one row, every column at once.

A table holds one ``array('d')`` per declared column and the columns every record has: ``session``
(the session's serial, ``array('q')``), ``turn`` (its turn number, ``array('i')``) and ``time`` (when the
row was recorded, ``array('d')``): 20 bytes a row plus 8 per declared column, so 100 000 requests of
lib/vllm.sq's 13 columns are 12 MB. Every row is kept during the run; the report leaves out the rows
recorded for requests sent before the warm-up's end (by the column ``sent`` when the table has one, by
``time`` otherwise), so a row is in or out as a whole.
"""

from __future__ import annotations

from array import array
from typing import Any

OWN = ("session", "turn", "time")


class RecordTable:
    """One table's rows while the run goes on."""

    __slots__ = ("name", "columns", "values", "sessions", "turns", "times", "add")

    def __init__(self, name: str, columns: list[str]):
        self.name = name
        self.columns = list(columns)
        self.values = [array("d") for _ in columns]
        self.sessions = array("q")
        self.turns = array("i")
        self.times = array("d")
        apps = tuple(v.append for v in self.values)
        sa, ta, tm = self.sessions.append, self.turns.append, self.times.append

        def add(serial: int, turn: int, now: float, row: tuple) -> None:
            sa(serial)
            ta(turn)
            tm(now)
            for app, v in zip(apps, row):
                app(v)

        self.add = add

    def __len__(self) -> int:
        return len(self.times)


def tables(program: Any) -> list[RecordTable]:
    return [RecordTable(d.name, d.columns) for d in program.records]


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
            if not keep.all():
                cols = {k: v[keep] for k, v in cols.items()}
            self._arrays = cols
        return self._arrays

    def kept(self) -> list[int]:
        """The indexes of the rows the report keeps, in pure Python (the report imports no numpy)."""
        t = self._table
        key = t.values[t.columns.index("sent")] if "sent" in t.columns else t.times
        w = self._warmup
        return [i for i, v in enumerate(key) if v >= w]

    def column(self, name: str) -> list[float]:
        """One declared column (or ``time``) of the kept rows, as Python floats."""
        t = self._table
        buf = t.times if name == "time" else t.values[t.columns.index(name)]
        return [buf[i] for i in self.kept_rows]

    @property
    def kept_rows(self) -> list[int]:
        if self._kept is None:
            self._kept = self.kept()
        return self._kept

    def __len__(self) -> int:
        return len(self.kept_rows)

    def frame(self, kind: str = "auto") -> Any:
        """The rows as a DataFrame: ``kind`` ``"pandas"``, ``"polars"``, ``"numpy"`` (the dict of arrays)
        or ``"auto"`` (pandas when installed, else polars, else numpy)."""
        cols = self.arrays()
        if kind in ("auto", "pandas"):
            try:
                import pandas as pd
            except ImportError:
                if kind == "pandas":
                    raise
            else:
                return pd.DataFrame(cols, copy=False)
        if kind in ("auto", "polars"):
            try:
                import polars as pl
            except ImportError:
                if kind == "polars":
                    raise
            else:
                return pl.DataFrame(cols)
        if kind not in ("auto", "numpy"):
            raise ValueError(f"kind {kind!r}: one of auto, pandas, polars, numpy")
        return dict(cols)

    def __repr__(self) -> str:
        return f"<Records {self.name!r}: {len(self)} rows, columns {', '.join(self.columns)}>"


def record_files(path: str, names: list[str]) -> dict[str, str]:
    """Where ``serq run --records PATH`` writes each table: PATH for a program of one table; for
    several, ``STEM.NAME.EXT`` beside it (``reqs.csv`` → ``reqs.request.csv``, ``reqs.sub.csv``)."""
    if len(names) <= 1:
        return {n: path for n in names}
    import os

    stem, ext = os.path.splitext(path)
    return {n: f"{stem}.{n}{ext}" for n in names}


def write(records: Records, path: str, inputs: list[str]) -> None:
    """One table as CSV or Parquet (by ``path``'s extension), atomically (serq.files)."""
    from serq.errors import UserError

    cols = records.arrays()
    if path.lower().endswith(".parquet"):
        import io

        from serq.files import write_atomic

        buf = io.BytesIO()
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            try:
                import polars as pl
            except ImportError:
                raise UserError(f"--records {path}: writing Parquet needs pyarrow or polars "
                                "(pip install 'serq-sim[frames]'); a .csv file needs neither") from None
            pl.DataFrame(cols).write_parquet(buf)
        else:
            pq.write_table(pa.table(cols), buf)
        write_atomic(path, buf.getvalue(), inputs=inputs)
    else:
        try:
            from serq_report.csv import write_table
        except ImportError:
            raise UserError("--records needs serq-report (pip install serq-report)") from None
        write_table(path, cols, inputs=inputs)
