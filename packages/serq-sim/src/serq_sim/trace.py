"""Reading a workload trace: CSV with the columns ``session,turn,new,out,think,forced``.

Rows are grouped by session (in the order sessions first appear) and each session's turns sorted by
``turn``. A malformed file is a :class:`~serq_sim.errors.SimError` naming the file, line and column.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

from .errors import SimError, format_error

COLUMNS = ("session", "turn", "new", "out", "think", "forced")


@dataclass
class TraceCorpus:
    path: str
    #: per session, its turns as ``(new, out, think, forced)``
    sessions: list[list[tuple[float, float, float, float]]]


def _err(path: str, line: int, col: int, msg: str) -> SimError:
    return SimError(f"{path}:{line}:{col}: error: {msg}")


def resolve_trace(path: str, source: str | None) -> str:
    """Where the trace a program's workload names is: a relative path is relative to the program's
    folder (``source``'s)."""
    if source and not Path(path).is_absolute():
        return str(Path(source).parent / path)
    return path


def load_trace(path: str, declared=None, source: str | None = None) -> TraceCorpus:
    """The trace in ``path``. ``declared``: the span of the workload's ``trace`` clause that names it (a
    file that cannot be read is reported there, with the source line; ``source`` the program's file);
    ``None`` for a trace given on the command line."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except OSError as e:
        why = e.strerror or str(e)
        if declared is not None:
            raise SimError(format_error(declared, None, None, f"cannot read the trace {path}: {why}",
                                        source)) from None
        raise SimError(f"{path}: error: cannot read the trace: {why}") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise _err(path, 1, 1, "the trace is empty (expected the header session,turn,new,out,think,forced)")
    header = next(csv.reader([lines[0]]))
    names = [h.strip() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise _err(path, 1, 1, f"the header lacks the column(s) {', '.join(missing)} (expected "
                   "session,turn,new,out,think,forced)")
    idx = [names.index(c) for c in COLUMNS]
    groups: dict[float, list[tuple[float, tuple]]] = {}
    reader = csv.reader(io.StringIO(text))
    next(reader)
    for row in reader:
        lineno = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(names):
            raise _err(path, lineno, 1, f"expected {len(names)} fields, found {len(row)}")
        starts = []
        pos = 1
        raw = lines[lineno - 1] if lineno - 1 < len(lines) else ""
        for cell in raw.split(","):
            starts.append(pos)
            pos += len(cell) + 1
        vals = []
        for name, i in zip(COLUMNS, idx):
            cell = row[i].strip()
            col = starts[i] if i < len(starts) else 1
            try:
                v = float(cell)
            except ValueError:
                raise _err(path, lineno, col, f"column {name}: {cell!r} is not a number") from None
            if not math.isfinite(v):
                raise _err(path, lineno, col, f"column {name}: {cell!r} is not finite")
            if name in ("new", "out", "think") and v < 0:
                raise _err(path, lineno, col, f"column {name}: {cell} is negative")
            vals.append(v)
        sess, turn, new, out, think, forced = vals
        groups.setdefault(sess, []).append((turn, (new, out, think, forced)))
    if not groups:
        raise _err(path, 2, 1, "the trace has no rows")
    sessions = []
    for rows in groups.values():
        rows.sort(key=lambda r: r[0])
        sessions.append([r[1] for r in rows])
    return TraceCorpus(path, sessions)
