"""The CSV dumps of a run (``serq run --dump DIR``).

``DIR/NAME.csv`` for every observe of the Result, header ``time,session,turn,value`` and one row per
sample in the order the report gives them; ``DIR/gauge/NAME.csv`` for every gauge, header
``time,value`` and one row per change point. Lines end in ``\\n``. Floats are written as Python's
``repr`` writes them (the shortest text that reads back as the same float: ``0.1``, ``12.0``,
``1e-05``, ``nan``, ``inf``), integers and booleans as integers, so the same run gives the same bytes.
Every file is written atomically (:func:`serq_report.open_atomic`): a run interrupted while dumping
leaves each file either whole or absent (or as an earlier run left it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._result import result_of
from .atomic import open_atomic

__all__ = ["dump", "format_column"]

#: Rows formatted and written at a time.
CHUNK = 1 << 18


def format_column(a: np.ndarray) -> list[str]:
    """The cells of one column: floats by ``repr``, integers and booleans by ``str(int)``.

    Vectorised: each distinct value is formatted once (distinct by bit pattern, so ``-0.0`` stays
    ``-0.0``) and the cells are gathered by index.
    """
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"a column must be one-dimensional, not of shape {a.shape}")
    if a.size == 0:
        return []
    kind = a.dtype.kind
    if kind == "f":
        a = a.astype(np.float64, copy=False)
        bits, inverse = np.unique(a.view(np.uint64), return_inverse=True)
        cells = np.array(list(map(float.__repr__, bits.view(np.float64).tolist())), dtype=object)
    elif kind in "iub":
        a = a.astype(np.int64, copy=False) if kind != "u" else a
        uniq, inverse = np.unique(a, return_inverse=True)
        cells = np.array(list(map(str, uniq.tolist())), dtype=object)
    else:
        raise TypeError(f"cannot dump a column of dtype {a.dtype}")
    return cells[inverse.reshape(-1)].tolist()


def _columns(name: str, **cols: Any) -> list[np.ndarray]:
    arrays = [np.asarray(v) for v in cols.values()]
    n = {a.shape for a in arrays}
    if len(n) != 1 or arrays[0].ndim != 1:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in zip(cols, arrays))
        raise ValueError(f"{name}: columns of different lengths ({shapes})")
    return arrays


def _chunks(columns: list[np.ndarray]) -> Iterator[str]:
    n = len(columns[0])
    for start in range(0, n, CHUNK):
        cells = [format_column(c[start : start + CHUNK]) for c in columns]
        yield "\n".join(map(",".join, zip(*cells))) + "\n"


def _write_csv(path: str, header: str, columns: list[np.ndarray]) -> None:
    with open_atomic(path, "w") as f:
        f.write(header + "\n")
        for chunk in _chunks(columns):
            f.write(chunk)


def _check_name(kind: str, name: str) -> None:
    if not name or name.startswith(".") or "/" in name or "\\" in name or "\0" in name:
        raise ValueError(f"cannot dump {kind} {name!r}: not usable as a file name")


def dump(report: Any, folder: str | os.PathLike[str]) -> list[str]:
    """Write the samples of every observe and the change points of every gauge as CSV files.

    :param report: a ``serq_sim.Report``: its ``result`` names the observes and gauges,
        ``observe(name)`` gives ``times, sessions, turns, values`` and ``gauge(name)`` ``times, values``.
    :param folder: created (with parents) if missing; ``gauge/`` in it only when there are gauges.
    :returns: the paths written, observes first, each kind in the Result's order.
    """
    result = result_of(report)
    if report is result:
        raise TypeError("dump needs a report with samples (observe, gauge), not a bare Result")
    folder = os.fspath(folder)
    for name in result.observes:
        _check_name("observe", name)
    for name in result.gauges:
        _check_name("gauge", name)
    os.makedirs(folder, exist_ok=True)
    written = []
    for name in result.observes:
        o = report.observe(name)
        cols = _columns(f"observe {name}", times=o.times, sessions=o.sessions, turns=o.turns, values=o.values)
        path = os.path.join(folder, f"{name}.csv")
        _write_csv(path, "time,session,turn,value", cols)
        written.append(path)
    if result.gauges:
        gauge_folder = os.path.join(folder, "gauge")
        os.makedirs(gauge_folder, exist_ok=True)
        for name in result.gauges:
            g = report.gauge(name)
            cols = _columns(f"gauge {name}", times=g.times, values=g.values)
            path = os.path.join(gauge_folder, f"{name}.csv")
            _write_csv(path, "time,value", cols)
            written.append(path)
    return written
