"""The CSV dumps of a run (``serq run --dump DIR``).

``DIR/NAME.csv`` for every observe of the Result (its instants too), header ``time,session,turn,value`` and one row per
sample in the order the report gives them; ``DIR/gauge/NAME.csv`` for every gauge, header
``time,value`` and one row per change point. Lines end in ``\\n``. Floats are written as Python's
``repr`` writes them (the shortest text that reads back as the same float: ``0.1``, ``12.0``,
``1e-05``, ``nan``, ``inf``), integers and booleans as integers, so the same run gives the same bytes.
A name is the file's name when it is safe everywhere (:func:`file_names`); any other name (``a/b``,
``..``, a NUL, a device name such as ``con``, non-ASCII letters, a very long name, two names that differ
only in case) is mapped to one that is, and every name the program has gets a file of its own.
Every file is written atomically (:func:`serq_report.open_atomic`), and the dump as a whole
(:func:`serq.files.renamed_together`): each file is written beside its target, and all are renamed into place
once all are written, so a dump that fails (a full disk, a file-size limit, an I/O error) or is interrupted
while writing leaves the folder as it was (an earlier dump's files and list, whole), the folders it made
removed. Last, ``DIR/serq-dump.json``
(:data:`serq.files.DUMP_MANIFEST`) lists the files this dump wrote (``observes`` and ``gauges``, the file
names without ``.csv``): a reader (``serq plot DIR``) takes only those, not the files an earlier dump of
another program left in the folder; the list goes first, so a dump cut short leaves none. The user names the folder, not the files
in it: a file (or ``gauge``) in the folder that is a symbolic link, a FIFO, a device or anything but a
regular file (a real folder for ``gauge``) is refused before any file is written (``own=True`` in
:mod:`serq.files`), as is a file the run read (``inputs``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from serq.files import (  # noqa: F401
    DUMP_MANIFEST,
    MAX_NAME,
    OutputError,
    check_dumped,
    check_folder,
    check_not_input,
    check_own,
    file_names,
    path_arg,
    path_args,
)

from ._result import result_of
from .atomic import open_atomic

__all__ = ["dump", "file_names", "format_column", "header", "write_table"]

#: Cells formatted and written at a time (a chunk is as many rows as hold this many cells, one at least): the
#: cells of a chunk are Python strings (some 70 bytes each), so the chunk is the writing's memory beyond the
#: columns, which it reads in place. 2**18 rows of four columns took 135 MiB at once (of 43 columns, a table of
#: records, ten times that), more than a run the memory guard stopped had kept for its report
#: (serq_sim.memguard: "out of memory" under ``ulimit -v 400000``, the run's report lost); 2**14 cells take
#: some 3 MiB, and write as fast (the formatting is vectorised a column of a chunk at a time).
CHUNK = 1 << 14


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
    rows = max(1, CHUNK // len(columns))
    for start in range(0, n, rows):
        cells = [format_column(c[start : start + rows]) for c in columns]
        yield "\n".join(map(",".join, zip(*cells))) + "\n"


def header(names: Iterable[str]) -> str:
    """The header line of a table (without its line end): the names as RFC 4180 writes fields, a name
    holding a comma, a quote or a line break quoted (its quotes doubled), every other name as it is. An
    IR file's record column may be named ``done,"at"``: written bare, it was two fields of the header."""
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(list(names))
    return buf.getvalue()


def _write_csv(path: str, names: list[str], columns: list[np.ndarray], inputs: list[str], own: bool = False) -> None:
    with open_atomic(path, "w", inputs=inputs, own=own) as f:
        f.write(header(names) + "\n")
        for chunk in _chunks(columns):
            f.write(chunk)


def write_table(path: str | os.PathLike[str], columns: dict[str, Any], *,
                inputs: Iterable[str | None] = (), own: bool = False) -> None:
    """One table as a CSV file, atomically: a header of the column names (:func:`header`: quoted as RFC 4180
    says when a name holds a comma, a quote or a line break), then one row per entry, cells as in the
    dumps (floats by ``repr``, integers as integers). ``serq run --records FILE.csv``. ``own``: ``path``
    is a name serq made (a per-table ``FILE.NAME.csv``): anything there but a regular file is
    refused (:func:`serq.files.check_own`), as a dump's files are."""
    path = path_arg(path, "write_table")  # (None: os.fspath's TypeError, which named no argument)
    inputs = path_args(inputs, "write_table")
    if own:
        check_own(path)
    check_not_input(path, inputs)
    _write_csv(path, list(columns), _columns(f"table {path}", **columns), inputs, own=own)


def dump(report: Any, folder: str | os.PathLike[str], *, inputs: Iterable[str | None] = ()) -> list[str]:
    """Write the samples of every observe and the change points of every gauge as CSV files.

    :param report: a ``serq_sim.Report``: its ``result`` names the observes and gauges,
        ``observe(name)`` gives ``times, sessions, turns, values`` and ``gauge(name)`` ``times, values``.
    :param folder: created (with parents) if missing; ``gauge/`` in it only when there are gauges.
    :param inputs: the files the run read; a dump that would write over one of them is refused
        (:class:`serq.files.OutputError`) before any file is written.
    :returns: the paths written, observes first, each kind in the Result's order.
    """
    result = result_of(report)
    if report is result:
        raise TypeError("dump needs a report with samples (observe, gauge), not a bare Result")
    given = os.fspath(folder) if isinstance(folder, (str, os.PathLike)) else None
    if not isinstance(given, str):  # (folder=3: os.fspath's TypeError, which named no argument)
        raise TypeError(f"dump's folder is a path (str or os.PathLike), not {type(folder).__name__}")
    folder = given
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Iterable):  # (a str: its letters)
        raise TypeError(f"dump's inputs are a list of paths, not {type(inputs).__name__}")
    observe_names = [*result.observes, *result.instants]  # the instants' samples too
    observe_files = file_names(observe_names)
    gauge_files = file_names(result.gauges)
    inputs = path_args(inputs, "dump")  # (an item that is no path: named by dump, not by check_not_input)
    check_folder(folder)  # a folder, or a path where one can be made
    gauge_folder = os.path.join(folder, "gauge")
    if gauge_files and (os.path.islink(gauge_folder) or (os.path.lexists(gauge_folder)
                                                         and not os.path.isdir(gauge_folder))):
        raise OutputError(f"{gauge_folder}: is {'a symbolic link' if os.path.islink(gauge_folder) else 'not a folder'}; "
                          "a dump writes its gauges only into a folder of its own (remove it, or dump elsewhere)")
    manifest = os.path.join(folder, DUMP_MANIFEST)
    for path, kind in [(os.path.join(folder, f"{f}.csv"), "observe") for f in observe_files.values()] + \
            [(os.path.join(gauge_folder, f"{f}.csv"), "gauge") for f in gauge_files.values()] + [(manifest, "list")]:
        check_own(path)
        check_not_input(path, inputs)
        check_dumped(path, kind)  # a file there no dump wrote
    made = _made_folders(folder)
    try:
        lock = _lock_folder(folder)
        try:
            if lock is not None and os.path.isdir(gauge_folder) and not os.path.islink(gauge_folder):
                from serq.files import leftovers_removed

                leftovers_removed(gauge_folder)  # (the folder's own, as take_folder did the folder's)
            if gauge_files and not os.path.lexists(gauge_folder):  # (made once the folder is this dump's alone)
                os.makedirs(gauge_folder, exist_ok=True)
                made.insert(0, gauge_folder)
            return _dump(report, result, folder, observe_names, observe_files, gauge_files, gauge_folder, manifest,
                         inputs)
        finally:
            if lock is not None:
                os.close(lock)
    except BaseException:
        for made_folder in made:  # (innermost first: a folder the dump made, empty again, is removed)
            try:
                os.rmdir(made_folder)
            except OSError:
                break
        raise


def _made_folders(folder: str) -> list[str]:
    """Make ``folder`` (with the parents it lacks): the folders made, innermost first (a dump that fails removes
    them again, once empty)."""
    missing = []
    at = os.path.abspath(folder)
    while not os.path.lexists(at) and at != os.path.dirname(at):
        missing.append(at)
        at = os.path.dirname(at)
    os.makedirs(folder, exist_ok=True)
    return missing


#: how long a dump waits for another run writing into its folder (:func:`_lock_folder`)
DUMP_WAIT = 60.0


def _lock_folder(folder: str) -> int | None:
    """The folder taken for this dump alone: an advisory lock (``flock``) on the folder itself, held until its
    list is written, dropped when the descriptor is closed or the process ends. Two runs dumping into one
    folder at once each wrote its files over the other's, and the folder held one run's observes beside
    the other's (and its list), all said to be well. A folder another run holds (its dump, or its set of
    record tables, serq_sim.records.hold_set) is waited for, up to :data:`DUMP_WAIT` seconds, and then written
    (serq.files.held_waiting): of two dumps into one folder the one written last is there, whole, where
    refusing the second at once lost its dump to a few milliseconds' overlap. Still held after the wait, or a
    signal while waiting: refused, nothing written. Where the platform or the file system has no such lock,
    the dump is written unlocked (the descriptor returned is the caller's to close; None: nothing opened)."""
    from serq.files import take_folder

    fd, refused = take_folder(folder, DUMP_WAIT)
    if refused is not None:
        from serq.errors import shown_path

        if refused == "signal":
            raise OutputError(f"{shown_path(folder)}: a signal came while this run waited for another one writing "
                              "into this folder (nothing was written there)") from None
        raise OutputError(f"{shown_path(folder)}: another run has held this folder for {DUMP_WAIT:g} s (dumping or "
                          "writing its records there); give --dump another folder (nothing was written there)") from None
    return fd


def _dump(report: Any, result: Any, folder: str, observe_names: list[str], observe_files: dict[str, str],
          gauge_files: dict[str, str], gauge_folder: str, manifest: str, inputs: list[str]) -> list[str]:
    # every file is written whole beside its target first, and renamed over it only once all are written: a dump
    # cut short (a full disk, a file-size limit, an I/O error) removes what it wrote and leaves the folder as it
    # was (it left the files written before the failure over an earlier dump's, the earlier list removed)
    from serq.files import renamed_together

    with renamed_together(before=lambda: _unlink_list(manifest)):
        return _dump_files(report, result, folder, observe_names, observe_files, gauge_files, gauge_folder,
                           manifest, inputs)


def _unlink_list(manifest: str) -> None:
    """Remove the folder's list of its last dump's files before the new dump's files are renamed into place: the
    new list is renamed last, so a dump cut short between the renames leaves none (a reader then takes every
    file there, as of a dump written before the list)."""
    try:
        os.unlink(manifest)
    except FileNotFoundError:
        pass


def _dump_files(report: Any, result: Any, folder: str, observe_names: list[str], observe_files: dict[str, str],
                gauge_files: dict[str, str], gauge_folder: str, manifest: str, inputs: list[str]) -> list[str]:
    written = []
    for name in observe_names:
        o = report.observe(name)
        cols = _columns(f"observe {name}", times=o.times, sessions=o.sessions, turns=o.turns, values=o.values)
        path = os.path.join(folder, f"{observe_files[name]}.csv")
        _write_csv(path, ["time", "session", "turn", "value"], cols, inputs, own=True)
        written.append(path)
    if result.gauges:
        for name in result.gauges:
            g = report.gauge(name)
            cols = _columns(f"gauge {name}", times=g.times, values=g.values)
            path = os.path.join(gauge_folder, f"{gauge_files[name]}.csv")
            _write_csv(path, ["time", "value"], cols, inputs, own=True)
            written.append(path)
    import json

    with open_atomic(manifest, "w", inputs=inputs, own=True) as f:
        f.write(json.dumps({"serq-dump": 1, "observes": [observe_files[n] for n in observe_names],
                            "gauges": [gauge_files[n] for n in result.gauges]}, indent=1) + "\n")
    written.append(manifest)
    return written
