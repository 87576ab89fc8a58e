"""``serq plot``: a sweep's figure against a swept name with 95 % CI bands, CDFs of an observe's samples
and gauges' time series from a ``serq run --dump`` folder, and CDFs of per-request TTFT, TPOT, ITL and E2E
latency from records (``serq run --records``, ``serq sweep --records``) (matplotlib, ``serq-sweep[plot]``).

From records, each request gives one value (vLLM's definitions, as the report's ``requests`` figures,
serq_sim.metrics): ``ttft`` ``first_token - sent``, ``e2el`` ``last_token - sent``, ``tpot``
``(last_token - first_token) / (output - 1)`` of the requests of more than one output token, and ``itl``
the request's mean inter-token gap: records keep no single gaps, and the gaps of a request add up to
``last_token - first_token`` over ``output - 1`` of them, so the per-request mean ITL is that request's
TPOT (the distribution of single gaps, pooled over requests, is the report's ``requests.itl``
quantiles). With an ``admitted`` column, vLLM v1's phases as the report's: ``queue`` ``admitted - sent``,
``prefill`` ``first_token - admitted``, ``decode`` ``last_token - first_token``, ``infer`` ``last_token -
admitted``, of the rows whose ``admitted`` is not negative (serq_sim.metrics). Any other column of the
records is drawn as it is (``--cdf prompt``).

Each function returns a ``matplotlib.figure.Figure`` (made without pyplot, so no window and no global
state); :func:`save` writes it (``.svg``, ``.png`` or ``.pdf``) atomically, the same figure giving the same
bytes. The data drawn are the artists' own (``ax.lines[i].get_xydata()``).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click
from serq.errors import UsageError, UserError, clipped, did_you_mean, printable, printable_lines, shown_path
from serq.files import MAX_LINE, open_input, split_suffix
from serq.numbers import BLANKS_HINT, NUMBER_HINT, NotANumber, OutOfRange, number
from serq_ir.rules import show_number

FORMATS = ("svg", "png", "pdf")
#: the largest magnitude a value drawn may have: matplotlib cannot lay out an axis that reaches the end of the
#: double range (its ticks and margins overflow: ``ValueError: arange: cannot compute length``)
DRAWABLE = 1e300


#: the most lines (and bands) a plot draws: a --hue of a swept name has a few values, but one of a figure or
#: of a request's column has one per row, and each line costs matplotlib milliseconds (--hue of a column of
#: 200 000 values ran for more than 5 minutes in 6 GB; a records CDF per value was quadratic)
MAX_LINES = 1000


#: the most entries a legend shows. A legend of a hundred entries (--hue session of a records file) took the
#: whole figure: matplotlib collapsed the axes to nothing and said so on stderr, a UserWarning with its
#: source line. Beyond this the lines are drawn without one, and the axes say how many there are.
MAX_LEGEND = 30


def _legend(ax: Any, entries: int, what: str) -> None:
    """The legend of ``entries`` lines, or, past :data:`MAX_LEGEND`, a note in the axes' corner instead."""
    if entries <= MAX_LEGEND:
        ax.legend(fontsize="small")
    else:
        ax.text(0.99, 0.01, f"{entries} lines, a line per value of {what}: too many for a legend",
                transform=ax.transAxes, ha="right", va="bottom", fontsize="small")


#: the most characters of a name (or a hue's value) a figure draws, in an axis label, a title or a legend entry;
#: a gauge's name beside its axes, 2.2 inches high, :data:`MAX_DRAWN_GAUGE`. A longer one ran off the figure
#: (an observe's name of 100 characters as a y label, a gauge's of 40), and in a legend collapsed the axes to
#: nothing (a name of 150 characters), matplotlib saying so on stderr, a UserWarning with its source line.
#: 32 draws every figure of the report's own sections whole (requests.total_token_throughput, 31; at 26,
#: requests.prefix_cache_hit_rate was requests.pre…ache_hit_rate on every axis that drew it).
MAX_DRAWN = 32
MAX_DRAWN_GAUGE = 16


def _drawn(name: object, width: int = MAX_DRAWN) -> str:
    """``name`` as a figure draws it: at most ``width`` characters, a longer one as its first and last
    characters around a ``…`` (the end of a name tells apart the figures of one observe: ``….p99``)."""
    text = str(name)
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return f"{text[:head]}…{text[len(text) - (width - 1 - head):]}"


def _hue_value(h: Any) -> str:
    """A hue's value in a legend, as every label of a sweep shows a value (``core.show_value``: two values
    that agree to six digits are two labels, not one); a NumPy float as the float it is."""
    from .core import show_value

    return show_value(float(h)) if isinstance(h, float) else str(h)

def _few_lines(count: int, hue: str, per: int = 1) -> None:
    """Refuse (one message) a --hue whose ``count`` values make more than :data:`MAX_LINES` lines (``per``
    lines a value)."""
    if count * per > MAX_LINES:
        raise UserError(f"--hue {hue}: {count} values, more than the {MAX_LINES} lines a plot draws (a line a "
                        "value: --hue takes a swept name of a few values)")


def drawable(values: Any, what: str) -> None:
    """Refuse (one message) values to draw of which one is finite and beyond :data:`DRAWABLE` in magnitude
    (a table, dump or records file with ``1e308`` in it): matplotlib failed on them with a traceback. ``inf``
    and NaN are left out of a line, as they always were. Every value a plot draws is checked here first."""
    big = next((v for v in values if math.isfinite(v) and abs(v) > DRAWABLE), None)
    if big is not None:
        raise UserError(f"{what}: cannot draw the value {show_number(big)}: serq plot draws values up to {show_number(DRAWABLE)} in "
                        "magnitude")


def something_to_draw(lines: Any, what: str, why: str) -> None:
    """Refuse (one message, status 1: what the source holds) a plot none of whose ``lines`` (each an
    iterable of points, a point a tuple of numbers) has a point of finite numbers: NaN and ``inf`` are
    left out of a line, so the figure would be drawn empty and written as if it held a plot. ``why``:
    what the values were, in the message."""
    for line in lines:
        if any(all(math.isfinite(c) for c in point) for point in line):
            return
    raise UserError(f"{what}: nothing to plot: {why}")


def _matplotlib_folder() -> None:
    """Before matplotlib is first imported: when the folders it keeps its configuration and font cache in
    would be made under a home that is unusable (``HOME`` missing, not absolute or not a folder;
    ``XDG_CONFIG_HOME`` or ``XDG_CACHE_HOME`` relative, which it would make in the current folder), or are
    folders it could not make or write (a base that is a file, ``XDG_CACHE_HOME=/etc/passwd``; one under which
    no folder is made, ``HOME=/proc``, ``/sys``; one this user may not write), point ``MPLCONFIGDIR`` at a
    temporary folder made here and removed when the process ends. matplotlib made ``~/.config/matplotlib``
    and ``~/.cache/matplotlib`` with every folder above them: ``HOME=/nonexistent`` (a system user's home,
    which must never exist) was made by ``serq plot`` run as root, and with a folder it could not make or
    write it said so on stderr, two lines of its own (``mkdir -p failed for path /etc/passwd/matplotlib`` and
    a warning of its temporary cache). A usable home's folders are matplotlib's, made here as matplotlib
    makes them (``mkdir -p``) to see that they can be (they are the user's own matplotlib's, as for any
    program that plots); a ``MPLCONFIGDIR`` given is used as it is (docs/sweep.md)."""
    import sys

    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return
    xdg = sys.platform.startswith(("linux", "freebsd"))
    given = {name: os.environ.get(name) or "" for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME")} if xdg else {}
    home = os.path.expanduser("~")
    # (a relative XDG folder would be made wherever the command runs; a home is read where one is not given)
    usable = all(os.path.isabs(g) for g in given.values() if g)
    if usable and (not xdg or not all(given.values())):
        usable = os.path.isabs(home) and os.path.isdir(home) and os.access(home, os.W_OK | os.X_OK)
    if usable:
        folders = ([os.path.join(given["XDG_CONFIG_HOME"] or os.path.join(home, ".config"), "matplotlib"),
                    os.path.join(given["XDG_CACHE_HOME"] or os.path.join(home, ".cache"), "matplotlib")]
                   if xdg else [os.path.join(home, ".matplotlib")])
        if all(map(_folder_made, folders)):
            return
    import atexit
    import shutil
    import tempfile

    try:
        folder = tempfile.mkdtemp(prefix="serq-matplotlib-")
    except OSError:  # (no temporary folder either: matplotlib's own choice and its word on it)
        return
    os.environ["MPLCONFIGDIR"] = folder
    atexit.register(shutil.rmtree, folder, True)


def _folder_made(folder: str) -> bool:
    """Whether ``folder`` is, or is made here as matplotlib makes it (``mkdir -p``), a folder this process may
    write in: matplotlib's own test of its configuration and cache folders, without its words on stderr."""
    try:
        os.makedirs(folder, exist_ok=True)
    except (OSError, ValueError):  # (ValueError: a NUL in the name)
        return False
    return os.path.isdir(folder) and os.access(folder, os.W_OK)


def _figure(width: float = 6.4, height: float = 4.0) -> Any:
    _matplotlib_folder()
    try:
        Figure = _import_figure()
    except ImportError:
        raise UserError("serq plot needs matplotlib: pip install 'serq-sweep[plot]' (or serq[plot])") from None
    return Figure(figsize=(width, height), layout="constrained")


def _import_figure() -> Any:
    """matplotlib's ``Figure``, imported. matplotlib's first import sets its ``backend`` from ``MPLBACKEND``
    and raised ``ValueError: Key backend: 'x' is not a valid value for backend`` for a name it has not (a
    typo, a backend of a package not installed): ``serq plot`` ended in that traceback, though it draws on a
    figure of its own and saves it by its suffix, never through the backend (pyplot's). So the first import
    runs without ``MPLBACKEND`` (put back at once, for what else the process runs), and then sets the backend
    from it as matplotlib does, a name it refuses leaving its default (docs/sweep.md)."""
    import sys

    if "matplotlib" in sys.modules or not os.environ.get("MPLBACKEND"):
        from matplotlib.figure import Figure

        return Figure
    given = os.environ.pop("MPLBACKEND")
    try:
        from matplotlib.figure import Figure
    finally:
        os.environ["MPLBACKEND"] = given
    import matplotlib

    try:
        matplotlib.rcParams["backend"] = given  # (matplotlib's own words at its import)
    except ValueError:
        pass  # (a backend matplotlib has not: the figure is drawn and saved without one)
    return Figure


#: the key of a frame's ``attrs`` that holds the file :func:`_read` read it from
SOURCE = "serq_source"


def _named(table: Any) -> Any:
    """``table`` as a message names it: its path, or the file a frame of :func:`_read` was read from; a frame
    given as such is named by no file (:func:`_not_records`'s ``FILE: ``)."""
    if _is_frame(table):
        return table.attrs.get(SOURCE, table)
    return table


def _read(table: Any, names: Any = None) -> Any:
    """The table ``table`` (a path, or a DataFrame as it is); of a CSV file, the columns ``names`` alone when
    given (names, or a function of the header that gives them: :func:`curve_columns`)."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        from .core import repeated_parquet_column

        try:  # (one named twice was a traceback of pandas, or read as the first)
            repeated_parquet_column(list(table.columns), "the frame")
        except ValueError as e:
            raise UserError(str(e)) from None
        return table
    from .core import TableFault, read_parquet, table_format

    path = os.fspath(table)
    fmt = table_format(path, "serq plot", output=False)
    try:
        frame = _csv_frame(path, names) if fmt == "csv" else read_parquet(path, sized=True)
        # (the file it was read from, which a message about the table names when the frame is handed on:
        # serq plot TABLE reads it once, for its swept name, its rows --where keeps and its curve)
        frame.attrs[SOURCE] = path
        return frame
    except TableFault as e:
        raise UserError(e.message("cannot read the table")) from None
    except (OSError, ValueError) as e:
        raise UserError(f"{shown_path(path)}: cannot read the table: {_why(e)}") from None


def _csv_frame(path: str, names: Any = None) -> Any:
    """A sweep's table or a records file in CSV as a DataFrame, read as a sweep reads its table back to resume
    (:func:`serq_sweep.core.read_csv_columns`: its writer's syntax, every row of the header's fields, a fault a
    :class:`~serq_sweep.core.TableFault` at its line and column): pandas took a row cut short as one with
    holes and named a byte that is not UTF-8 in Python's words. ``names``: the columns read (those of them the
    header has, or a function of the header that gives them), when not all; the frame's ``attrs`` keep the header (:func:`.rows.header_of`, for a message that
    lists the file's columns) and where each row was (:class:`_Lines`), for an error about a cell. The table
    is read a column at a time: a frame of a row's dict each held 1.2 GB for a million records."""
    import pandas as pd

    from .core import read_csv_columns
    from .rows import HEADER

    # a run's status, message, warnings and key a chunk at a time as pandas makes a column of them (its strings,
    # not an object a cell: a million keys held 80 MB more, and as much again in the memory they were made among)
    header, columns, lines = read_csv_columns(path, names, (lambda cells: pd.Series(cells),
                                                            lambda parts: pd.concat(parts, ignore_index=True)))
    frame = pd.DataFrame(columns, columns=[c for c in header if c in columns])
    frame.attrs[HEADER] = header
    frame.attrs["serq_lines"] = _Lines(path, header, lines)
    return frame


def _bad_cell(frame: Any, column: str, why: str) -> str:
    """``why``, at the first cell of ``column`` that is no number when ``frame`` was read from a CSV file (the
    line quoted with a caret), else as it is."""
    lines = frame.attrs.get("serq_lines")
    if not isinstance(lines, _Lines):
        return why
    row = next((i for i, v in frame[column].items() if not isinstance(v, int | float) or isinstance(v, bool)), None)
    return lines.located(row, column, why) or why


class _Lines:
    """Where each row of a table read from a CSV file was (``lines[i]``, the first and last line of row ``i``),
    for an error about a cell (a frame's ``attrs``, carried over by pandas to the frames made of it: a deep
    copy of it is itself)."""

    def __init__(self, path: str, header: list[str], lines: Any):
        self.path, self.header, self.lines = path, header, lines

    def __deepcopy__(self, memo: Any) -> _Lines:
        return self

    def located(self, row: Any, column: str, why: str) -> str | None:
        """``why`` at the cell of ``column`` in row ``row`` (the frame's index label), the line quoted."""
        from serq_sim.trace import csv_located

        from .core import cell_fault

        if not (isinstance(row, int) and 0 <= row < len(self.lines) and column in self.header):
            return None
        first, last = (int(n) for n in self.lines[row])
        fault = cell_fault(self.path, first, last, self.header.index(column), why)
        return csv_located(self.path, fault.line, fault.col, why)


def _why(e: BaseException) -> str:
    """What an error reading a table says: an ``OSError``'s reason without its number and path (the
    message names the path), else the reader's own words."""
    return (e.strerror or str(e)) if isinstance(e, OSError) else str(e)


def _numeric(frame: Any, column: str, what: str) -> None:
    """Refuse (one message) a column that does not hold numbers: a curve's x and y are numbers."""
    import pandas as pd

    values = frame[column]
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        bad = next((v for v in values if not isinstance(v, int | float) or isinstance(v, bool)), None)
        raise UserError(_bad_cell(frame, column, f"{what}: column {column} does not hold numbers (it has {bad!r}); a "
                                  "curve's x and y are numbers (a name whose values are not, such as a program, goes "
                                  "to --hue)"))


def _flags_as_numbers(frame: Any, column: str) -> Any:
    """``frame`` with ``column`` as 0 and 1 when it holds flags (``interrupted``: true, false, or nothing where a
    run has none), as the points table averages a flag (its ``interrupted:mean``) and ``serq compare`` and
    ``--find`` take it: ``--y interrupted`` of a sweep's runs table was refused as holding no numbers, while
    the same figure of its points table was drawn. A frame given is not changed (a copy is)."""
    import pandas as pd

    values = frame[column]
    if pd.api.types.is_bool_dtype(values):
        return frame.assign(**{column: values.astype(float)})
    if values.dtype == object:
        cells = values.tolist()
        if any(isinstance(v, bool) for v in cells) and all(
                isinstance(v, bool) or v is None or (isinstance(v, float) and math.isnan(v)) for v in cells):
            return frame.assign(**{column: [float(v) if isinstance(v, bool) else math.nan for v in cells]})
    return frame


def _half_widths(frame: Any, column: str, what: str) -> None:
    """Refuse (one message, at the cell where the table is a CSV file) a points table's ``FIGURE:ci`` column that
    holds what no CI's half-width is: a cell that is no number (it was a traceback, ``could not convert string
    to float``) or a negative one (its band was drawn inside out)."""
    import pandas as pd

    values = frame[column]
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        bad = next((v for v in values if not isinstance(v, int | float) or isinstance(v, bool)), None)
        raise UserError(_bad_cell(frame, column, f"{what}: column {column} does not hold numbers (it has "
                                                 f"{printable(clipped(repr(bad), 60))}); a CI's half-width is a number"))
    negative = values[values < 0]
    if len(negative):
        why = (f"{what}: column {column} holds the negative half-width {show_number(float(negative.iloc[0]))}; a "
               "CI's half-width is at least 0")
        lines = frame.attrs.get("serq_lines")
        at = lines.located(negative.index[0], column, why) if isinstance(lines, _Lines) else None
        raise UserError(at or why)


def _table_kind(cols: list) -> tuple[bool, bool, Any, str]:
    """Of a table's columns ``cols``: whether it is a points table, whether a capacity search's, the search's
    knob (None for another), and the column that ends its swept names (:func:`serq_sweep.core.point_columns`)."""
    from .search import COLUMNS as SEARCH_COLUMNS

    points_table = any(c.endswith(":mean") for c in cols)
    # a search's table has the figures' means and no CI: its knob (the column before outcome) ends its swept
    # names; it was read as a points table, and --y of a figure ended in a KeyError of its FIGURE:ci
    search_table = set(SEARCH_COLUMNS) <= set(cols) and cols.index("outcome") > 0
    knob = cols[cols.index("outcome") - 1] if search_table else None
    # the swept names as the table's kind has them: before runs in a points table (it has no seed column, so
    # a points table's were none: "the table's swept names: )"), before seed in a runs table, before the knob
    # in a search's
    end = knob if search_table else "runs" if points_table else "seed"
    return points_table, search_table, knob, end


def swept_x(table: Any) -> tuple[str | None, list[str]]:
    """The x of ``serq plot TABLE --y FIGURE`` without ``--x``: the table's one swept name, when it sweeps
    exactly one (None otherwise), with the swept names it has (:func:`serq_sweep.core.point_columns`)."""
    from .core import point_columns
    from .rows import header_of

    cols = header_of(_read(table))
    names = [str(c) for c in point_columns(cols, _table_kind(cols)[3])]
    return (names[0] if len(names) == 1 else None), names


def _is_swept(table: Any, x: str | None) -> bool:
    """Whether ``x`` is one of ``table``'s swept names (not a figure drawn as the x)."""
    from .core import point_columns
    from .rows import header_of

    cols = header_of(_read(table))
    return x is not None and x in [str(c) for c in point_columns(cols, _table_kind(cols)[3])]


def curve_data(table: Any, x: str, y: str, hue: str | None = None) -> tuple[str, dict[Any, tuple[list, list, list]]]:
    """What :func:`curve` draws (:func:`_curve_data`'s first two)."""
    fig, out, _title, _whole = _curve_data(table, x, y, hue)
    return fig, out


def _curve_data(table: Any, x: str, y: str, hue: str | None,
                thin: list[tuple[str, bool]] | None = None,
                labels: dict[Any, list[str]] | None = None) -> tuple[str, dict, str, bool]:
    """What :func:`curve` draws: the figure's column, and per hue value ``(xs, means, half-widths)``,
    xs ascending. A runs table (a row per seed) is averaged here (Student t over the seeds, rows that failed
    left out; each point whose figure is not a finite number in every one of its runs is put in ``thin``, as
    ``max_seqs=4, Lambda=6 over 1 of 3 runs``, beside whether some of them have no such member, for
    :func:`curve` to say); a points table (``FIGURE:mean``, ``FIGURE:ci``) is read as it is, and so is the table of a
    capacity search (``serq sweep --find --out``: a row per point, the knob's value found, ``holds``,
    ``fails`` and each condition's ``FIGURE:mean`` at the value found, without a CI). Then the title the
    table's kind gives the figure, and whether the y values are whole numbers (a search's knob of an integer
    column), ticked so."""
    import pandas as pd

    from .core import point_columns, table_figures
    from .figures import resolve
    from .rows import header_of
    from .stats import mean_ci

    frame = _read(table)
    cols = header_of(frame)  # (a CSV table is read for the columns the curve draws: curve_columns)
    _not_records(cols, _named(table), x, y)
    _not_comparison(cols, _named(table), y)
    points_table, search_table, knob, end = _table_kind(cols)
    x_figure = _x_figure(cols, x, end, points_table, search_table)
    for name, what in ((x, "--x"), (hue, "--hue")):
        if name is not None and name not in cols and not (what == "--x" and x_figure):
            if end in cols:
                said = f"the table's swept names: {', '.join(map(str, point_columns(cols, end))) or 'none'}"
            else:
                shown = ", ".join(map(str, cols))
                # (an empty file was "its columns: " and nothing)
                said = (f"no {end} column, so not a table of serq sweep; its columns: "
                        f"{shown if len(shown) <= 80 else shown[:77] + '...'}" if cols else
                        f"no {end} column, so not a table of serq sweep: the file holds no header line")
            shown_name = clipped(name)  # (a name of 100 000 characters was quoted whole, twice)
            raise UserError(f"{what} {shown_name}: no column {shown_name} ({said}){did_you_mean(name, map(str, cols))}")
    if "status" in cols or points_table or search_table:  # (a sweep's tables: a records table has rows a run)
        _runs_once(frame, end)
    if "status" in cols:
        frame = frame[frame["status"] != "error"]
    # before the figure is looked for: a table of runs that all failed has none of the figures, and --y was
    # said to be no figure of it ("no figure 'requests.ttft.mean' in the results")
    if frame.empty or ("status" not in cols and "runs" in cols and not (frame["runs"] != 0).any()):
        raise UserError("no rows to plot: the table is empty or every run in it failed")
    if search_table:
        figures = [knob, "holds", "fails", *(c[:-5] for c in cols if c.endswith(":mean"))]
    elif points_table:
        figures = [c[:-5] for c in cols if c.endswith(":mean")]
    else:
        figures = table_figures(cols)  # (by their names, where the sweep wrote them or not)
    try:
        fig = resolve(y, figures)
    except UserError as e:  # named by its option, as --x's and --hue's are (it said only "no figure 'y' …")
        raise type(e)(f"--y {clipped(y)}: {str(e).removeprefix('error: ')}") from None
    y_column = f"{fig}:mean" if f"{fig}:mean" in cols and (search_table or points_table) else fig
    frame = _flags_as_numbers(frame, y_column)
    x_column = x if x_figure is None else f"{x_figure}:mean" if points_table else x_figure
    for name, what, column in ((x, "--x", x_column), (y, "--y", y_column)):
        _numeric(frame, column, f"{what} {name}")
    out: dict[Any, tuple[list, list, list]] = {}
    if hue:
        _few_lines(int(frame[hue].nunique(dropna=False)), hue)
    if x_figure is None:
        _one_point_per_x(frame, cols, x, hue, end)
    absent = _absent_column(frame, y_column) if not (points_table or search_table) else None
    if absent is not None:
        frame = frame.assign(**{ABSENT: absent})
    groups = frame.groupby(hue, sort=True) if hue else [(None, frame)]
    # a knob of whole numbers (a count of replicas, blocks: an integer column) keeps its values as ints, so
    # that curve() ticks its axis at whole numbers only (it was ticked 6.0, 6.2, 6.4 replicas)
    whole = x_figure is None and pd.api.types.is_integer_dtype(frame[x].dtype)
    # a points table's band is its FIGURE:ci, where it has one (a table of means alone, written by hand or by
    # a search, has none: its FIGURE:ci was a KeyError traceback)
    read_as_is = points_table or search_table
    band = [f"{fig}:ci"] if read_as_is and f"{fig}:ci" in cols else []
    for c in band:
        _half_widths(frame, c, f"--y {clipped(y)}")
    # a points table's count of the runs each mean is over (FIGURE:n, beside runs): a mean over fewer is said
    # as a runs table's is (a table written before it had the column, or a search's, says nothing)
    counts = [f"{fig}:n", "runs"] if points_table and f"{fig}:n" in cols and "runs" in cols else []
    for h, g in groups:
        h = h[0] if isinstance(h, tuple) else h
        if x_figure is not None:
            named: list[str] = []
            out[h] = _figure_points(g, x_column, y_column, band, read_as_is, point_columns(cols, end), thin,
                                    counts, named, hue)
            if labels is not None:
                labels[h] = named
            continue
        xs, ms, cis = [], [], []
        for xv, part in _by_x(g, x, [y_column, *band, *counts, *([ABSENT] if absent is not None else [])]):
            if read_as_is:
                m, ci = float(part[0][0]), float(part[1][0]) if band else math.nan
                over = _fewer(part[-2][0], part[-1][0]) if counts and thin is not None else None
                if over is not None:
                    at = f"{_drawn(hue)}={_drawn(_hue_value(h))}, " if hue else ""
                    thin.append((f"{at}{_drawn(x)}={_drawn(_hue_value(xv))} {over}", False))
            else:
                ys = part[0].astype(float).tolist()
                n, m, ci, _ = mean_ci(ys)
                if thin is not None and n < len(part[0]):
                    at = f"{_drawn(hue)}={_drawn(_hue_value(h))}, " if hue else ""
                    gone = int(part[-1].sum()) if absent is not None else 0
                    thin.append((f"{at}{_drawn(x)}={_drawn(_hue_value(xv))} "
                                 f"{_over(n, len(part[0]), _infinite(ys), gone)}", gone > 0))
            xs.append(int(xv) if whole else float(xv))
            ms.append(m)
            cis.append(ci)
        out[h] = (xs, ms, cis)
    if search_table:
        title = (f"{_drawn(fig)} found by the capacity search" if y_column == fig
                 else f"{_drawn(fig)} (mean across seeds at the {_drawn(knob)} found)")
    elif x_figure is not None:
        title = f"{_drawn(fig)} against {_drawn(x_figure)} (means{', 95 % CI' if band or not read_as_is else ''})"
    else:
        title = f"{_drawn(fig)} (mean{', 95 % CI' if band or not read_as_is else ''} across seeds)"
    return fig, out, title, search_table and pd.api.types.is_integer_dtype(frame[y_column].dtype)


def curve_columns(header: list[str], x: str | None, y: str, hue: str | None = None,
                  where: Iterable[object] | None = None) -> list[str] | None:
    """The columns of a sweep's table (its ``header``) a curve of ``y`` against ``x`` reads (:func:`_curve_data`):
    every column that is no figure (a point's swept names, ``point``, ``seed``, ``status``, ``key``, ``runs``, a
    search's knob, ``holds`` and ``fails``), ``hue``'s and ``where``'s, and of the figures those ``x`` and ``y``
    name (a points table's ``FIGURE:mean``, ``:ci`` and ``:n``, and a stage's or pool's member's ``present``);
    None (every column) for a table whose figures are not told by their names (one without ``key`` nor
    ``FIGURE:mean``, made by hand) or when ``y`` names no figure of it (the curve says so, as before). A table
    of a million runs read whole held 1 GB for two of its figures (2.7 GB as a dict per row)."""
    from .core import figure_columns, report_figure
    from .figures import resolve

    points_table, search_table, knob, _end = _table_kind(header)
    if points_table or search_table:
        figures = {c for c in header if c.rpartition(":")[1] and report_figure(c)}
        offered = [*([knob, "holds", "fails"] if search_table else []), *(c[:-5] for c in header if c.endswith(":mean"))]
    elif "key" in header:
        figures = set(figure_columns(header))
        offered = [c for c in header if c in figures]
    else:
        return None
    named: list[str] = []
    for name in (y, x):
        if name is None:
            continue
        try:
            named.append(resolve(name, offered))
        except UserError:
            if name == y:
                return None
    wanted = {*(str(n) for n in where or ()), *([hue] if hue is not None else []), *([x] if x is not None else [])}
    for fig in named:
        prefix = fig.rpartition(".")[0]
        for f in (fig, f"{prefix}.present"):
            wanted.update((f, f"{f}:mean", f"{f}:ci", f"{f}:n"))
    # (a run's message and warnings are no part of a curve)
    return [c for c in header if (c not in figures and c not in ("message", "warnings")) or c in wanted]


def _not_records(cols: Sequence[str], table: Any, x: str, y: str) -> None:
    """Refuse (one message, status 1) a curve of records (:func:`serq_sweep.core.records_columns`). A curve
    averages a table's rows at each x as the seeds of one point, so records were drawn as if each request
    were a seed: ``--x turn --y cached`` of one run's records was titled "mean, 95 % CI across seeds" with a
    band over the requests of a turn, which are no independent samples, and of a sweep's records ``turn``,
    no swept name, was taken for a figure, a point per point of the sweep at the mean turn of all its
    requests."""
    from .core import records_columns

    if not records_columns(cols):
        return
    names = {str(c) for c in cols}
    where = f"{os.fspath(table)}: " if isinstance(table, (str, os.PathLike)) else ""
    column = y if y in names else "COLUMN"
    by = f" --hue {x}" if x in names else ""
    raise UserError(f"{where}--x {clipped(x)} --y {clipped(y)}: these are records, a row per request "
                    f"(columns {_columns_listed(cols)}), not a sweep's table: --x and --y draw a figure's mean "
                    f"across seeds against a swept name (serq sweep --out). Of records draw a CDF, --cdf "
                    f"{clipped(column)}{clipped(by)}, a line per value of {clipped(x) if by else 'a column'}, or "
                    "group the rows yourself (pandas' groupby)")


def _not_comparison(cols: Sequence[str], table: Any, y: str | None) -> None:
    """Refuse (one message, status 1) a curve of serq compare's table (``-o``, :data:`serq_sweep.pairing.COLUMNS`):
    a row per arm and figure, no swept name and no seed, so ``--y requests.ttft.p99`` alone was told that "the
    table sweeps no name" and ``--x N`` that there is no column N ("did you mean `n`?", the seeds a difference
    is over)."""
    from .pairing import COLUMNS

    if not {"arm", "base", "figure", "diff", "ci_paired"} <= {str(c) for c in cols}:
        return
    where = f"{os.fspath(table)}: " if isinstance(table, (str, os.PathLike)) else ""
    raise UserError(f"{where}this is serq compare's table (columns {_columns_listed(cols)}), not a sweep's: a row per "
                    f"arm and figure, each arm's mean ({COLUMNS[4]}, {COLUMNS[5]}) and its paired difference from the "
                    "first arm, with no swept name to draw a curve against. For the arms as a curve, sweep them: "
                    "serq sweep FILE --set NAME=V1,V2,... --seeds ... --out T.csv, then serq plot T.csv --y "
                    f"{clipped(y) if y else 'FIGURE'}")


def _x_figure(cols: Sequence[str], x: str, end: str, points_table: bool, search_table: bool) -> str | None:
    """The figure ``--x`` names when it is no swept name of a runs or a points table (``--x
    requests.ttft.mean --y requests.itl.p99``: a trade-off, a point per point of the sweep), else None. Such an
    x was read as a swept name: each run of a runs table was a point of its own (its x its value, its y the
    "mean across seeds" of that run alone, the seeds of one point scattered along the line), and a points
    table had no column of that name."""
    from .core import point_columns, table_figures
    from .figures import resolve

    if search_table or end not in cols or x in point_columns(cols, end) or x in ("point", end):
        return None
    figures = [c[:-5] for c in cols if c.endswith(":mean")] if points_table else table_figures(cols)
    try:
        return resolve(x, figures)
    except UserError:
        return None


def _fewer(n: Any, runs: Any) -> str | None:
    """What a points table's row says of a mean over ``n`` of its point's ``runs`` (its ``FIGURE:n`` and
    ``runs``) when that is fewer than all of them (:func:`_over`); None when it is all of them, or the cells
    are no counts (a table edited by hand)."""
    try:
        n, runs = float(n), float(runs)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(n) and math.isfinite(runs)) or n != int(n) or runs != int(runs) or not 0 <= n < runs:
        return None
    return _over(int(n), int(runs))


def _figure_points(g: Any, x_column: str, y_column: str, band: Sequence[str], read_as_is: bool,
                   swept: Sequence[str], thin: list[tuple[str, bool]] | None = None,
                   counts: Sequence[str] = (), labels: list[str] | None = None,
                   hue: str | None = None) -> tuple[list, list, list]:
    """A line of ``y`` against the figure ``x``: per point of the sweep (its swept names), the mean of x
    across its seeds, and y's mean and 95 % CI (a points table's row as it is), ordered by x; a point whose x
    is no finite number is left out, as a line leaves out a NaN. ``labels``, when given, gets each point's
    swept values but ``hue``'s, the line's own, in the same order (``B=256``; ``B=256, C=512`` of two names),
    which :func:`curve` writes beside it."""
    from .stats import finite, mean, mean_ci

    rows: list[tuple[float, float, float]] = []
    names: list[str] = []
    keys = [c for c in swept if c in g.columns]
    if read_as_is:
        cis = g[band[0]].tolist() if band else [math.nan] * len(g)
        rows = [(float(a), float(b), float(c)) for a, b, c in zip(g[x_column], g[y_column], cis)]
        point_values = [tuple(g[k].iloc[i] for k in keys) for i in range(len(g))]
        names = [_at(keys, values, hue) for values in point_values]
        if counts and thin is not None:  # (a points table's FIGURE:n and runs: a mean over fewer runs said)
            for values, n, runs in zip(point_values, g[counts[0]], g[counts[1]]):
                over = _fewer(n, runs)
                if over is not None:
                    thin.append((f"{_at(keys, values) or 'the point'} {over}", False))
    else:
        parts = g.groupby(keys, sort=False, dropna=False) if keys else [(None, g)]
        for values, part in parts:
            ys = part[y_column].astype(float).tolist()
            n, m, ci, _ = mean_ci(ys)
            values = values if isinstance(values, tuple) else (values,)
            if thin is not None and n < len(part):
                gone = int(part[ABSENT].sum()) if ABSENT in part.columns else 0
                thin.append((f"{_at(keys, values) or 'the point'} {_over(n, len(part), _infinite(ys), gone)}",
                             gone > 0))
            rows.append((mean(finite(part[x_column].astype(float).tolist())), m, ci))
            names.append(_at(keys, values, hue))
    kept = sorted((i for i, r in enumerate(rows) if math.isfinite(r[0])), key=lambda i: rows[i][0])
    if labels is not None:
        labels.extend(names[i] for i in kept)
    return [rows[i][0] for i in kept], [rows[i][1] for i in kept], [rows[i][2] for i in kept]


def _at(keys: Sequence[str], values: Sequence[Any], but: str | None = None) -> str:
    """A point of the sweep as its swept values (``B=256, C=512``), each as a plot writes it, ``but``'s left out
    (a line's own --hue): what a point's label and the notes of a point of fewer runs say."""
    return ", ".join(f"{_drawn(k)}={_drawn(_hue_value(v))}" for k, v in zip(keys, values) if k != but)


#: the column :func:`_curve_data` adds to a runs table: whether the run's program has no member the figure is of
ABSENT = "\0absent"


def _absent_column(frame: Any, y_column: str) -> Any:
    """Per run, whether the figure ``y_column`` is absent from its program: the figure of a stage's or pool's
    member (``stages.svc[3].utilisation``) whose ``present`` is blank, the member not being one of the run's
    (a sweep over a family's size K, K=1 having no ``svc[3]``); None for a figure of no such member. Such a
    run was said to have "no sample of it: an observe that took none…"."""
    prefix, _, _ = y_column.rpartition(".")
    present = f"{prefix}.present"
    if not prefix.startswith(("stages.", "pools.")) or present not in frame.columns or present == y_column:
        return None
    import pandas as pd

    return pd.isna(pd.to_numeric(frame[present], errors="coerce")).to_numpy()


def _over(n: int, runs: int, infinite: int = 0, absent: int = 0) -> str:
    """What the warning of thin means says of a point's mean over ``n`` of its ``runs``; ``infinite``: how
    many of the others had a value of inf or -inf. Such a value is left out of the mean as a NaN is, but the
    run had one, not "no sample of it": a figure of 1e308 * 10 in one run of two was said so alone.
    ``absent``: how many of them have no such stage or pool member (:func:`_absent_column`)."""
    said = f"over {n} of {runs} runs" if n else f"no value in its {runs} runs (left out of its line)"
    if absent:
        said += f", absent from {'them' if absent == runs else absent}"
    return f"{said}, infinite in {infinite}" if infinite else said


def _infinite(values: Sequence[float]) -> int:
    return sum(1 for v in values if math.isinf(v))


def _thin_warning(y: str, thin: Sequence[tuple[str, bool]]) -> str:
    """The warning of a curve drawn from a runs table (or a points table, by its ``FIGURE:n``) with means over
    fewer runs than their points ran (the others had no finite value of the figure), as ``--show`` marks such a mean ``(n=1)`` and ``--find``
    warns of it: the curve drew them without a word, so a load at which two of three seeds completed no
    request after the warm-up was drawn at the third's p99 TTFT, below its neighbours, looking served.
    ``thin``: each point as said, beside whether some of its runs have no such stage or pool member (a flag,
    not read off the words: a swept value or hue that held ", absent from " was taken for one)."""
    more = f", and {len(thin) - 3} more" if len(thin) > 3 else ""
    absent = [said for said, gone in thin if gone]
    gone = "the figure is absent from those points' runs: the program there has no such stage or pool member"
    if len(absent) == len(thin):
        why = gone
    else:
        why = ("no sample of it: an observe that took none, a request metric of a run that completed no request "
               "after the warm-up")
        why += f"; or, where said, {gone.removeprefix('the figure is ')}" if absent else ""
    return (f"warning: --y {clipped(y)}: some points' runs had no value of it ({why}), and each such "
            f"mean is drawn over the others': {'; '.join(said for said, _ in thin[:3])}{more}")


def _runs_once(frame: Any, end: str) -> None:
    """Refuse a table of runs with a seed that is no seed (:func:`serq_sweep.core.bad_seed`), at that cell, and a
    table that holds one run, or one point, in two rows (:func:`serq_sweep.core.repeated_run`, ``end`` the column
    that ends its swept names), at the second row's ``end`` (``seed``, ``runs``, the knob), naming both rows'
    lines, when the table was read from a CSV file."""
    from .core import bad_seed, repeated_run

    lines = frame.attrs.get("serq_lines")
    lines = lines if isinstance(lines, _Lines) else None
    firsts = None if lines is None else [int(lines.lines[i][0]) for i in frame.index]
    for column, found in (("seed", bad_seed(frame, firsts) if end == "seed" else None),
                          (end, repeated_run(frame, end, firsts))):
        if found is None:
            continue
        row, why = found
        at = lines.located(frame.index[row], column, why) if lines is not None else None
        raise UserError(at or why)


def _one_point_per_x(frame: Any, cols: Sequence[str], x: str, hue: str | None, end: str) -> None:
    """Refuse a table whose line would hold several points at one x: a swept name other than ``--x`` and
    ``--hue`` that varies. A runs table's rows of those points were averaged as if they were seeds (the mean
    of two deployments, with a CI of their difference), and a points table's first row at each x was drawn
    and the others left out, so the two tables of one sweep drew different curves."""
    line = [x] if hue is None else [hue, x]
    # what makes a point: the swept names, before ``runs`` in a points table (a row a point), before
    # ``seed`` in a runs table (a row a run), before the knob in a search's (a row a point), and ``point``
    # where the table has it
    from .core import point_columns

    others = [c for c in point_columns(cols, end) if c not in line]
    others += ["point"] if "point" in cols and "point" not in line else []
    if not others:
        return
    within = frame.drop_duplicates(subset=line + others).groupby(line, sort=False, dropna=True).size()
    if within.empty or within.max() <= 1:
        return
    at = within.idxmax()
    at = at if isinstance(at, tuple) else (at,)
    rows = frame
    for c, v in zip(line, at):
        rows = rows[rows[c] == v]
    varies = [c for c in others if c != "point" and rows[c].nunique(dropna=False) > 1]
    said = ", ".join(varies) or "point"
    where = " and ".join(f"{c} = {_hue_value(v)}" for c, v in zip(line, at))
    if varies:
        from .rows import _shown

        one = f"--where {varies[0]}={_shown(rows[varies[0]].iloc[0])}"
        keep = f"or keep the rows of one value of it ({one})"
    else:
        keep = "or keep the rows of one point (--where NAME=VALUE)"
    raise UserError(f"--x {x}: the table has {int(within.max())} points at {where} (they differ in {said}): a "
                    f"line draws one point per x; give {varies[0] if varies else 'the name that differs'} as "
                    f"--hue, {keep}")


def _by_x(g: Any, x: str, columns: Sequence[str]) -> Any:
    """The rows of ``g`` by their value of ``x``, ascending (NaN left out, as ``groupby`` leaves it): per
    value ``(x, [the values of each of columns, in the rows' order])``. One sort of the column, not a
    DataFrame a value (grouping with ``groupby`` held every group at once: 3.5 GB and 50 s for a table of
    200 000 values of x)."""
    import numpy as np
    import pandas as pd

    xv = g[x].to_numpy()
    keep = ~pd.isna(xv)
    xv = xv[keep]
    order = np.argsort(xv, kind="stable")
    xv = xv[order]
    values, starts = np.unique(xv, return_index=True)
    ends = [*starts[1:].tolist(), len(xv)]
    arrays = [g[c].to_numpy()[keep][order] for c in columns]
    for v, a, b in zip(values.tolist(), starts.tolist(), ends):
        yield v, [arr[a:b] for arr in arrays]


#: the ``gid`` of the level :func:`curve` draws for a swept value of inf: its x data are the axes' ends in the
#: axes' own coordinates, 0 and 1, no values of x (:func:`log_axes`, :func:`_ticks_at_points`)
LEVEL = "serq-level-at-inf"


def _x_values(line: Any) -> Any:
    """The x values ``line`` holds: none for a level at a swept inf (:data:`LEVEL`), which spans the axes."""
    return () if line.get_gid() == LEVEL else line.get_xdata()


#: the most points a line against a figure has each named by its swept values (more would cover the line)
POINT_LABELS = 20


def curve(table: Any, x: str, y: str, hue: str | None = None, *, title: str | None = None) -> Any:
    """``y`` (a figure's name) against the swept ``x`` (or against a figure ``x``, a point per point of the
    sweep), a line per value of ``hue``, each with its 95 % CI band (none where a point has one seed)."""
    thin: list[tuple[str, bool]] = []
    named: dict[Any, list[str]] = {}
    fig_name, data, drawn_title, y_whole = _curve_data(table, x, y, hue, thin, named)
    # a swept value of inf (a knob's "off": a threshold, a cap, max_seqs inf) has no place on the x axis: its
    # point is drawn as a dashed level across the axes, labelled `C = inf`, with its CI as a pale band; it was
    # left out of the line without a word, so a sweep of C=256,…,2048,inf drew the four and not the one it
    # is compared with (a figure x, a point per point of the sweep, never holds one: its inf is left out)
    levels: dict[Any, list[tuple[float, float, float]]] = {}
    for h, (xs, ms, cis) in list(data.items()):
        at_inf = [(xv, m, c) for xv, m, c in zip(xs, ms, cis) if math.isinf(xv) and math.isfinite(m)]
        if at_inf:
            levels[h] = at_inf
            kept = [i for i, xv in enumerate(xs) if not math.isinf(xv)]
            data[h] = ([xs[i] for i in kept], [ms[i] for i in kept], [cis[i] for i in kept])
    something_to_draw([*(zip(xs, ms) for xs, ms, _ in data.values()),
                       *([(0.0, m) for _, m, _ in pts] for pts in levels.values())], f"--y {y}",
                      f"no point whose {x} and {fig_name} are both finite numbers (a NaN or infinite "
                      "value is left out of a line)")
    figure = _figure()
    ax = figure.add_subplot()
    bands = {}
    for h, (xs, ms, cis) in data.items():
        drawable(xs, f"--x {x}")
        drawable(ms, f"--y {y}")
        if any(not math.isnan(c) for c in cis):
            lo = [m - (0 if math.isnan(c) else c) for m, c in zip(ms, cis)]
            hi = [m + (0 if math.isnan(c) else c) for m, c in zip(ms, cis)]
            drawable(lo + hi, f"--y {y} (its 95 % CI band)")
            bands[h] = lo, hi
    entries = 0
    for h, (xs, ms, _cis) in data.items():
        label = None if hue is None else f"{_drawn(hue)} = {_drawn(_hue_value(h))}"
        if not xs and h in levels:
            label = None  # (a line of no point but its level: the level's entry names it)
        (line,) = ax.plot(xs, ms, marker="o", markersize=3, label=label)
        entries += label is not None
        # against a figure (a trade-off, a point per point of the sweep) each point is named by its swept
        # values, the other names' than --hue: the line alone did not say which budget a point was
        texts = named.get(h, [])
        if texts and len(xs) <= POINT_LABELS:
            for xv, m, text in zip(xs, ms, texts):
                if text and math.isfinite(m):
                    ax.annotate(text, (xv, m), textcoords="offset points", xytext=(4, 4), fontsize="x-small",
                                color=line.get_color())
        if h in bands:
            ax.fill_between(xs, *bands[h], alpha=0.2, color=line.get_color(), linewidth=0)
        for xv, m, c in levels.get(h, ()):
            drawable([m], f"--y {y}")
            at = f"{_drawn(hue)} = {_drawn(_hue_value(h))}, " if hue is not None else ""
            ax.axhline(m, linestyle="--", linewidth=1, color=line.get_color(), gid=LEVEL,
                       label=f"{at}{_drawn(x)} = {'inf' if xv > 0 else '-inf'}")
            entries += 1
            if math.isfinite(c):
                drawable([m - c, m + c], f"--y {y} (its 95 % CI band)")
                ax.axhspan(m - c, m + c, alpha=0.1, color=line.get_color(), linewidth=0)
    ax.set_xlabel(_drawn(x))
    from matplotlib.ticker import MaxNLocator

    if all(type(v) is int for xs, _, _ in data.values() for v in xs):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if y_whole:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(_drawn(y))
    ax.set_title(title or drawn_title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    if hue is not None or levels:
        _legend(ax, entries, f"--hue {_drawn(hue)}" if hue is not None else _drawn(x))
    if thin:
        click.echo(printable_lines(_thin_warning(y, thin)), err=True)
    return figure


def _dump_file(folder: str, name: str, gauge: bool) -> str:
    """The CSV file of observe (or gauge) ``name`` in the dump ``folder``, or one message saying there is none."""
    from serq.files import file_of, name_of_file

    # the file serq run --dump wrote for the name, by its rule (serq.files.file_names): a name was joined
    # to the folder as it is, so --gauge ../x read the observe x, and an observe a/b (a%2Fb.csv) was not found
    where = os.path.join(folder, "gauge") if gauge else folder
    stems = [f[:-4] for f in os.listdir(where) if f.endswith(".csv")] if os.path.isdir(where) else []
    kind = "gauge" if gauge else "observe"
    listed = _dump_listing(folder, f"{kind}s")
    left = []
    if listed is not None:  # the files of the folder's last dump only (serq.files.DUMP_MANIFEST)
        left = [f for f in stems if f not in listed]
        stems = [f for f in stems if f in listed]
    stem = file_of(name, stems)
    if stem is None:
        have = sorted(name_of_file(f) for f in stems)
        old = file_of(name, left)
        why = f"; {old}.csv there is left from an earlier dump, not written by the last one" if old else ""
        raise UserError(f"{shown_path(folder)}: no {kind} {clipped(name)} in the dump ({kind}s there: {', '.join(have) or 'none'})"
                        f"{did_you_mean(name, have)}{why}")
    return os.path.join(where, f"{stem}.csv")


def _dump_listing(folder: str, key: str) -> set[str] | None:
    """The file names (without ``.csv``) of ``key`` (``observes`` or ``gauges``) that the dump list of
    ``folder`` gives (``serq.files.DUMP_MANIFEST``, written by the dump last), or None when it has none (a
    dump written before the list, or one cut short): then every file there is taken. A list that is not
    one a dump writes is an error naming it."""
    from serq.files import DUMP_MANIFEST
    from serq.jsonin import read_json

    path = os.path.join(folder, DUMP_MANIFEST)
    if not os.path.lexists(path):
        return None
    # read as every JSON file a user gives is (size bound, UTF-8, no key twice; a mistake located)
    data = read_json(path, "a dump's list of files", check=lambda doc: _check_listing(doc, key))
    return set(data[key])


class _ListingFault(Exception):
    """What is wrong with a dump's list of files, at ``json_path`` of it (located by serq.jsonin.read_json)."""

    serq_user_error = True

    def __init__(self, why: str, json_path: tuple):
        super().__init__(f"not the list of files serq run --dump writes ({why})")
        self.json_path = json_path


def _check_listing(doc: Any, key: str) -> None:
    """Refuse a dump's list of files that is not one ``serq run --dump`` writes, saying what it lacks: a list
    without the mark ``"serq-dump": 1`` was said to have "no list of observes" beside its list of observes."""
    if not isinstance(doc, dict):
        raise _ListingFault("it is no JSON object", ())
    if doc.get("serq-dump") != 1:
        raise _ListingFault('no "serq-dump": 1', ("serq-dump",) if "serq-dump" in doc else ())
    files = doc.get(key)
    if not isinstance(files, list):
        raise _ListingFault(f"no list of {key}", (key,) if key in doc else ())
    for i, f in enumerate(files):
        if not isinstance(f, str):
            raise _ListingFault(f"{key}: item {i + 1} is no file's name", (key, i))


def _dump_csv(folder: str, name: str, gauge: bool) -> tuple[list[float], list[float]]:
    import csv

    path = _dump_file(folder, name, gauge)
    ts, vs = [], []
    try:
        f = io.TextIOWrapper(open_input(path, max_line=MAX_LINE), newline="", encoding="utf-8-sig")
    except OSError as e:
        raise UserError(f"{shown_path(path)}: cannot read: {_why(e)}") from None
    from serq_sim.trace import csv_located

    from .core import TableFault, cell_fault, csv_rows, not_utf8_fault, repeated_column, unmarked_utf16

    with f:
        reader = csv.reader(f)
        try:
            try:
                header = next(reader, None)
            except UnicodeDecodeError:
                raise not_utf8_fault(path) from None
            unmarked_utf16(path, header)
            if header is None or "time" not in header or "value" not in header:
                raise UserError(f"{shown_path(path)}:1: error: not a dump's CSV (its header has no columns time and value)")
            # a column named twice (value,value: the first was read, the other ignored) is refused at the second
            repeated_column(path, header, reader.line_num)
            it, iv = header.index("time"), header.index("value")
            latest = -math.inf  # (a gauge's latest change point's time: its change points are in time order)
            for first, last, row in csv_rows(path, reader):
                if gauge and ts and ts[-1] == ts[-1]:
                    latest = max(latest, ts[-1])
                for i, into in ((it, ts), (iv, vs)):
                    try:  # as serq run --dump writes them (repr: 0.1, 1e-05, inf, nan), in serQ's number syntax
                        # (serq.numbers: float() read 1_000 as 1000 and ١٢ as 12)
                        into.append(number(row[i], nan=True))
                    except (IndexError, ValueError) as e:
                        # (the rule's hint, or the blanks around a number, which were dropped: `' 2.0'` was told
                        # only that the row has none, as `x` is)
                        hinted = isinstance(e, NotANumber) and (NUMBER_HINT in str(e) or BLANKS_HINT in str(e))
                        why = f": {e}" if hinted else ""
                        message = (f"the row has no number under time or value ({','.join(row)[:80]!r}){why}")
                        # at the cell, or at the row's start for a row without it; the line quoted
                        fault = cell_fault(path, first, last, i, message)
                        raise UserError(csv_located(path, fault.line, fault.col, message)) from None
                if gauge and ts[-1] < latest:  # a step function drawn from change points out of order goes back
                    # in time (a file edited or joined by hand): each step was drawn as a line back to it
                    message = (f"time {ts[-1]!r} is before the change point above it ({latest!r}); a gauge's "
                               "change points are in time order, as --dump writes them")
                    fault = cell_fault(path, first, last, it, message)
                    raise UserError(csv_located(path, fault.line, fault.col, message))
        except TableFault as e:
            raise UserError(csv_located(path, e.line, e.col, f"not a dump's CSV ({e.why})")) from None
        except csv.Error as e:
            raise UserError(f"{shown_path(path)}:{max(reader.line_num, 1)}: error: not a dump's CSV ({e})") from None
    return ts, vs


def _cdf_step(ax: Any, vs: list[float], label: str) -> None:
    """The empirical CDF of the sorted values ``vs`` on ``ax``: a step up by 1/n at each, from its first value on.
    One value is the step of one point, drawn as its rise from 0 to 1 at that value: the step's one point
    ``(v, 1)`` alone is a line of no length, which matplotlib draws as nothing, and the legend named a line
    (``g = 2 (1 requests)``) that the plot did not show."""
    n = len(vs)
    if n == 1:
        ax.step([vs[0], vs[0]], [0.0, 1.0], where="post", label=label)
        return
    import numpy as np

    ax.step(vs, np.arange(1, n + 1) / n, where="post", label=label)


def cdf(dump: str, observes: Sequence[str]) -> Any:
    """The empirical CDF of each observe's samples in a dump (``serq run --dump DIR``): a step at every
    sample, from 0 to 1."""
    samples = {}
    said = []
    for name in observes:
        _, vs = _dump_csv(dump, name, gauge=False)
        nan = sum(1 for v in vs if math.isnan(v))
        up, down = sum(1 for v in vs if v == math.inf), sum(1 for v in vs if v == -math.inf)
        if nan or up or down:  # (as a records CDF says them: _unplotted)
            said.append(_unplotted_samples(_dump_file(dump, name, False), name, len(vs), nan, up, down))
        vs = sorted(v for v in vs if not math.isnan(v))
        drawable(vs, f"--cdf {name}")
        samples[name] = vs
    something_to_draw((((v,) for v in vs) for vs in samples.values()), f"--cdf {', '.join(observes)}",
                      "no sample that is a finite number (each is NaN or infinite, or there are none)")
    if said:
        click.echo("\n".join(printable_lines(w) for w in said), err=True)
    figure = _figure()
    ax = figure.add_subplot()
    for name, vs in samples.items():
        _cdf_step(ax, vs, f"{_drawn(name)} ({len(vs)} samples)")
    ax.set_xlabel("value")
    ax.set_ylabel("fraction of samples ≤ value")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    _legend(ax, len(observes), "--cdf")
    return figure


#: the metrics a CDF of records computes: name -> (what it is, the columns it needs)
RECORD_METRICS = {
    "ttft": ("time to first token", ("sent", "first_token")),
    "tpot": ("time per output token", ("first_token", "last_token", "output")),
    "itl": ("inter-token latency, per-request mean", ("first_token", "last_token", "output")),
    "e2el": ("end-to-end latency", ("sent", "last_token")),
    # vLLM v1's phases of the requests admitted (admitted not negative), as the report's
    "queue": ("queue time", ("sent", "admitted")),
    "prefill": ("prefill time", ("admitted", "first_token")),
    "decode": ("decode time", ("admitted", "first_token", "last_token")),
    "infer": ("inference time", ("admitted", "last_token")),
}
#: each phase's (from, to) columns: the value is ``to - from``
PHASE_SPANS = {"queue": ("sent", "admitted"), "prefill": ("admitted", "first_token"),
               "decode": ("first_token", "last_token"), "infer": ("admitted", "last_token")}


def cdf_columns(metrics: Iterable[str], hue: str | None = None, where: Iterable[object] = ()) -> set[str]:
    """The columns of records a CDF of ``metrics`` reads (a metric's own and those it is computed from), with
    ``hue`` and the names of ``where``: a records file in CSV is read for these alone (:func:`_read_records`)."""
    names = {*(str(n) for n in where), *([hue] if hue is not None else [])}
    for m in metrics:
        names.add(m)
        names.update(RECORD_METRICS[m][1] if m in RECORD_METRICS else ())
    return names


def _read_records(source: Any, names: Any = None) -> Any:
    """The records ``source`` (a records file, or a DataFrame as it is); of a CSV file, the columns ``names`` alone
    when given (:func:`cdf_columns`; or a function of the header that gives them, as :func:`_csv_frame` takes),
    the frame keeping the file's header for what a message lists."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return source
    path = os.fspath(source)
    low = path.lower()
    if not low.endswith((".csv", ".parquet")):
        raise UserError(f"{shown_path(path)}: --cdf reads a dump folder or a records file (.parquet or .csv)")
    from .core import TableFault, read_parquet
    from .records import plotted_size

    try:
        if low.endswith(".csv"):
            return _csv_frame(path, names)
        return read_parquet(path, sized=plotted_size)
    except TableFault as e:
        raise UserError(e.message("cannot read the records")) from None
    except FileNotFoundError as e:
        from serq.options import tables_written

        told = tables_written(path)
        raise UserError(f"{shown_path(path)}: cannot read the records: {_why(e)}" + (f"; {told}" if told else "")) from None
    except (OSError, ValueError) as e:
        raise UserError(f"{shown_path(path)}: cannot read the records: {_why(e)}") from None


def _metric(frame: Any, name: str, where: str) -> Any:
    """The values of metric ``name`` (or column ``name``) per row of ``frame``, NaN where it has none."""
    import numpy as np

    from .rows import header_of

    header = header_of(frame)
    cols = set(header)
    if name in RECORD_METRICS:
        need = RECORD_METRICS[name][1]
        if all(c in cols for c in need):
            # each column as numbers first, and the metric of them (a cell of text among them was a TypeError
            # traceback of pandas' subtraction; one numpy's float() reads, `1_0`, too)
            col = {c: _column_numbers(frame, c, name, where) for c in need}
            if name == "ttft":
                return col["first_token"] - col["sent"]
            if name == "e2el":
                return col["last_token"] - col["sent"]
            if name in PHASE_SPANS:  # a row never admitted (admitted negative) has none
                start, end = PHASE_SPANS[name]
                return np.where(col["admitted"] < 0, np.nan, col[end] - col[start])
            out = col["output"]
            span = col["last_token"] - col["first_token"]
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(out > 1, span / (out - 1), np.nan)
        if name not in cols:
            raise UserError(f"{where}: --cdf {name} needs the records' columns {', '.join(need)} (it has "
                            f"{_columns_listed(header)}){_a_sweeps_table(cols)}{_a_dump_file(frame, where)}")
    if name not in cols:
        shown = clipped(name)
        raise UserError(f"{where}: --cdf {shown}: no column {shown} in the records and no metric of that name "
                        f"(metrics: {', '.join(RECORD_METRICS)}; columns: {_columns_listed(header)})"
                        + _a_sweeps_table(cols) + _a_dump_file(frame, where)
                        + did_you_mean(name, [*RECORD_METRICS, *header]))
    return _column_numbers(frame, name, name, where)


#: the columns a message about --cdf lists at most (a sweep's table has hundreds, one for every figure)
LISTED_COLUMNS = 20


def _columns_listed(columns: Any) -> str:
    """A file's columns in a message: the first :data:`LISTED_COLUMNS`, then how many more."""
    names = [str(c) for c in columns]
    if len(names) <= LISTED_COLUMNS:
        return ", ".join(names)
    return f"{', '.join(names[:LISTED_COLUMNS])}, … ({len(names) - LISTED_COLUMNS} more)"


def _a_sweeps_table(cols: set) -> str:
    """The hint of a --cdf given a sweep's runs or points table, which holds figures, not records."""
    if "session" in cols or not ({"runs"} <= cols or {"status", "key"} <= cols):
        return ""
    return ("; it is a sweep's table, one row per run or point: --cdf reads the records, the file of serq run "
            "--records or serq sweep --records, and a table's figures are drawn with --x and --y")


#: the header of an observe's file in a dump folder (serq_report.csv), which no records table has (theirs
#: begin session, turn, time)
DUMP_OBSERVE_COLUMNS = ["time", "session", "turn", "value"]


def _a_dump_file(frame: Any, where: str) -> str:
    """The hint of a --cdf given one observe's file of a dump folder (``serq run --dump DIR``'s ``DIR/ttft.csv``)
    as if it were records: its CDF is drawn from the folder (it said only that the records' columns sent and
    first_token are missing)."""
    import os

    from .rows import header_of

    if header_of(frame) != DUMP_OBSERVE_COLUMNS:
        return ""
    folder, base = os.path.split(where)
    stem = base[:-4] if base.endswith(".csv") else base
    return (f"; it is the samples of the observe {clipped(stem)} as serq run --dump writes them: their CDF is "
            f"drawn from the dump folder, serq plot {clipped(folder or '.')} --cdf {clipped(stem)} -o FILE")


def _column_numbers(frame: Any, column: str, name: str, where: str) -> Any:
    """Column ``column`` of ``frame`` as floats, or one message (``--cdf NAME``) at its first cell that is no
    number, the line quoted, when the frame was read from a CSV file."""
    return column_floats(frame, column, f"--cdf {name}: column {column} does not hold numbers", where)


def column_floats(frame: Any, column: str, why: str, where: str, flags: bool = True) -> Any:
    """Column ``column`` of ``frame`` as floats, or the :class:`UserError` ``why`` at its first cell that is no
    number (:func:`_bad_cell`: the line quoted with a caret when the frame was read from a CSV file, else after
    ``where``); with ``flags`` False a true/false cell is no number either (``serq metrics``: an ``output`` of
    true was 1 token)."""
    import numpy as np

    cells = frame[column]
    if cells.dtype.kind in "iuf" or (flags and cells.dtype.kind == "b"):
        try:
            return cells.to_numpy(dtype=float)
        except (TypeError, ValueError):  # (a nullable column's missing cells, pandas' NA: read one by one)
            pass
    # a text cell is a number as the language writes one (serq.numbers.number): numpy's float() read `1_0` as 10,
    # ` 2` as 2 and `+5` as 5, cells the CSV reader keeps as text as no writer writes them, so serq metrics took
    # them and `serq plot --cdf e2el` subtracted a column of text (pandas' TypeError traceback)
    out = np.empty(len(cells), dtype=float)
    for i, v in enumerate(cells.tolist()):
        try:
            if isinstance(v, str):
                out[i] = number(v, nan=True)
            elif v is None or type(v).__name__ == "NAType":  # (a missing cell: pandas' NA)
                out[i] = math.nan
            elif not isinstance(v, bool) and isinstance(v, int | float | np.number):
                out[i] = float(v)
            elif isinstance(v, bool) and flags:
                out[i] = float(v)
            else:
                raise TypeError
        except (TypeError, ValueError) as e:
            # (the reason where it tells more than that the cell is none: the rule's hint, the blanks, the range)
            told = isinstance(e, OutOfRange) or (isinstance(e, NotANumber) and (NUMBER_HINT in str(e)
                                                                                 or BLANKS_HINT in str(e)))
            said = f"{why}: {e}" if told and isinstance(v, str) else why
            lines = frame.attrs.get("serq_lines")
            located = lines.located(i, column, said) if isinstance(lines, _Lines) else None
            raise UserError(located or f"{where}: {said}") from None
    return out


#: The columns of a request's moments (serq_sim.metrics' table, lib/vllm.sq's `request`): a records file with one
#: of them holds a request a row, and a CDF of it counts requests; any other table (a program's `record
#: conversation`) counts rows.
REQUEST_COLUMNS = ("sent", "first_token", "last_token")


def rows_word(frame: Any) -> str:
    """What a row of the records ``frame`` is, in a CDF's words: ``requests`` for a table of requests (one of
    :data:`REQUEST_COLUMNS`), ``rows`` for another (a conversation a row, a tool call a row: its legend said
    `(9875 requests)` and its axis `fraction of requests`)."""
    from .rows import header_of

    return "requests" if set(REQUEST_COLUMNS) & set(header_of(frame)) else "rows"


def records_cdf_data(records: Any, metrics: Sequence[str], hue: str | None = None,
                     said: list[str] | None = None, unit: list[str] | None = None) -> dict[tuple[str, Any], list[float]]:
    """What :func:`records_cdf` draws: per (metric, value of ``hue``, None without one) the metric's values
    sorted (the requests that have one; every run of a sweep's records table pooled, or per value of
    ``hue``), each step of the CDF at one of them. ``said``, when given, gets a warning per metric of the
    rows left out for a blank cell and of the values that are infinite (:func:`_unplotted`); ``unit``, when
    given, gets what a row is (:func:`rows_word`)."""
    import math as _m

    where = os.fspath(records) if isinstance(records, (str, os.PathLike)) else "the records"
    frame = _read_records(records, cdf_columns(metrics, hue))
    if unit is not None:
        unit.append(rows_word(frame))
    if hue is not None and hue not in frame.columns:
        from .records import swept_names
        from .rows import header_of

        header = header_of(frame)
        swept = swept_names(header)
        raise UserError(f"{where}: --hue {hue}: no column {hue}"
                        + (f" (the swept names: {', '.join(swept)})" if swept else "")
                        + did_you_mean(hue, header))
    out: dict[tuple[str, Any], list[float]] = {}
    lines: list[Any] = []
    if hue is not None:
        # a blank (or nan) cell under hue is no value of it: each was a line of its own, `g = nan (0
        # requests)` in the legend (NaN is no NaN's equal), its requests drawn on none, and as many of them
        # counted towards the lines a plot draws at most
        cells = frame[hue].to_numpy().tolist()
        blank = sum(1 for v in cells if v is None or (isinstance(v, float) and _m.isnan(v)))
        lines = sorted({v for v in cells if not (v is None or (isinstance(v, float) and _m.isnan(v)))},
                       key=lambda v: (isinstance(v, str), v))
        _few_lines(len(lines), hue, len(metrics))
        if blank and said is not None:
            said.append(f"warning: {printable(where)}: --hue {_drawn(hue)}: {blank} of the {len(frame)} rows have a "
                        f"blank (or nan) cell under {_drawn(hue)} and are left out: no line is theirs")
    for name in metrics:
        values = _metric(frame, name, where)
        if said is not None:
            warning = _unplotted(frame, name, values, where)
            if warning is not None:
                said.append(warning)
        if hue is None:
            out[(name, None)] = _sorted_numbers(values)
            continue
        keys = frame[hue].to_numpy()
        for h in lines:
            out[(name, h)] = _sorted_numbers(values[keys == h])
    return out


def _sorted_numbers(values: Any) -> list[float]:
    """The values of a float array that are not NaN, sorted (stably: ``-0.0`` and ``0.0`` in their order)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    return np.sort(values[~np.isnan(values)], kind="stable").tolist()


def _unplotted(frame: Any, name: str, values: Any, where: str) -> str | None:
    """The warning of a records CDF of metric (or column) ``name``, its ``values`` per row of ``frame``, whose
    rows have a blank (or ``nan``) cell under a column it reads (those rows are left out: the legend's count
    alone told of them) or whose values are ``inf`` or ``-inf`` (counted, as the fraction of requests at or
    below each value counts them, and drawn nowhere: the curve ends below 1 by the ``inf`` values' share
    and starts above 0 by the ``-inf`` values'); None when there are none. A value the metric has none of
    by its definition (a phase of a request never admitted, the ``tpot`` of one output token) is none of
    these."""
    import numpy as np

    need = RECORD_METRICS[name][1] if name in RECORD_METRICS else ()  # (as _metric reads it)
    if not need or not all(c in frame.columns for c in need):
        need = (name,)
    blank = np.zeros(len(frame), dtype=bool)
    under = []
    for c in need:
        cells = np.isnan(frame[c].to_numpy(dtype=float))
        if cells.any():
            under.append((c, int(cells.sum())))
            blank |= cells
    up, down = int(np.sum(values == np.inf)), int(np.sum(values == -np.inf))
    parts = []
    if under:
        cols = " and ".join(f"{n} under {clipped(str(c))}" for c, n in under) if len(under) > 1 else \
            f"under {clipped(str(under[0][0]))}"
        parts.append(f"{int(blank.sum())} of the {len(frame)} rows have a blank (or nan) cell {cols} and are left "
                     "out")
    if up or down:
        parts.append(f"the values of {_drawn(name)} hold {_infinities(up, down, 'the ' + rows_word(frame))}")
    if not parts:
        return None
    return f"warning: {printable(where)}: --cdf {_drawn(name)}: " + "; ".join(parts)


def _unplotted_samples(path: str, name: str, total: int, nan: int, up: int, down: int) -> str:
    """The warning of a dump's CDF of observe ``name`` (its file ``path``, ``total`` samples) of which ``nan``
    are NaN (left out) and ``up`` and ``down`` are ``inf`` and ``-inf`` (counted, drawn nowhere), in the words
    of a records CDF's (:func:`_unplotted`)."""
    parts = []
    if nan:
        parts.append(f"{nan} of the {total} samples are nan and are left out")
    if up or down:
        parts.append(f"the samples hold {_infinities(up, down, 'them')}")
    return f"warning: {printable(path)}: --cdf {_drawn(name)}: " + "; ".join(parts)


def _infinities(up: int, down: int, among: str) -> str:
    """What a CDF's warning says of ``up`` values of ``inf`` and ``down`` of ``-inf`` (at least one of them):
    counted ``among`` the rest (in the curve's total) and drawn nowhere, and where the curve ends and starts."""
    counts = " and ".join(t for t in (f"{up} inf" if up else "", f"{down} -inf" if down else "") if t)
    ends = " and ".join(t for t in ("ends below 1 by the share of inf" if up else "",
                                     "starts above 0 by the share of -inf" if down else "") if t)
    return f"{counts}, counted among {among} and drawn nowhere (beyond the axis: the curve {ends})"


def _no_requests_warning(hue: str, values: Sequence[Any], where: Mapping[str, object]) -> str:
    """The warning of a records CDF whose ``--hue`` values ``values`` have requests in the records and none in
    the rows ``--where`` keeps: they have no line, and the legend said nothing of them (a point of a sweep whose
    runs completed no request has no row in the records, so ``max_seqs=4`` at ``Lambda=10`` was simply not
    drawn beside ``max_seqs=16``, as if the sweep had no such point)."""
    shown = ", ".join(f"{_drawn(hue)}={_drawn(_hue_value(v))}" for v in values[:3])
    more = f", and {len(values) - 3} more" if len(values) > 3 else ""
    kept = ", ".join(f"{clipped(str(k))}={clipped(str(v))}" for k, v in where.items())
    return (f"warning: --hue {clipped(hue)}: {shown}{more} has requests in the records and none where {kept}, "
            "so no line: its runs there recorded no request (a run that completed none has no row)")


def records_cdf(records: Any, metrics: Sequence[str], hue: str | None = None) -> Any:
    """The empirical CDF of each metric over the requests of ``records`` (a records file of ``serq run
    --records`` or ``serq sweep --records``, or a DataFrame): a step at every request's value, from 0 to 1;
    a line per value of ``hue`` (a swept name) when given."""
    said: list[str] = []
    unit: list[str] = []
    data = records_cdf_data(records, metrics, hue, said, unit)
    (word,) = unit
    for (name, _), vs in data.items():
        drawable(vs, f"--cdf {name}")
    something_to_draw((((v,) for v in vs) for vs in data.values()), f"--cdf {', '.join(metrics)}",
                      f"no {word[:-1]} has a value that is a finite number (each is NaN or infinite, or there are "
                      "none)")
    if said:  # (what the legend's counts alone told of)
        click.echo("\n".join(printable_lines(w) for w in said), err=True)
    figure = _figure()
    ax = figure.add_subplot()
    for (name, h), vs in data.items():
        label = _drawn(name) if h is None else f"{_drawn(name)}, {_drawn(hue)} = {_drawn(_hue_value(h))}"
        _cdf_step(ax, vs, f"{label} ({len(vs)} {word})")
    timed = all(m in RECORD_METRICS for m in metrics)
    ax.set_xlabel("seconds" if timed else "value")
    ax.set_ylabel(f"fraction of {word} ≤ value")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    _legend(ax, len(data), f"--hue {_drawn(hue)}" if hue is not None else "--cdf")
    return figure


def gauges(dump: str, names: Sequence[str]) -> Any:
    """Each gauge's value against time, as the step function its change points make."""
    series = []
    for name in names:
        ts, vs = _dump_csv(dump, name, gauge=True)
        drawable(ts, f"--gauge {name} (its time)")
        drawable(vs, f"--gauge {name}")
        series.append((ts, vs))
    something_to_draw((zip(ts, vs) for ts, vs in series), f"--gauge {', '.join(names)}",
                      "no change point whose time and value are finite numbers (each is NaN or infinite, or there "
                      "are none)")
    figure = _figure(6.4, 2.2 * max(1, len(names)) + 0.6)
    axes = figure.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name, (ts, vs) in zip(axes, names, series):
        ax.step(ts, vs, where="post")
        ax.set_ylabel(_drawn(name, MAX_DRAWN_GAUGE))
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time")
    return figure


def save(figure: Any, path: str, inputs: Sequence[str] = ()) -> None:
    from serq.files import write_atomic

    ext = split_suffix(path)[1].lower().lstrip(".")
    if ext not in FORMATS:  # the form of the flag's value: a usage error (serq.errors.UsageError), status 2
        raise UsageError(f"-o {shown_path(path)}: a plot is .svg, .png or .pdf")
    buf = io.BytesIO()
    meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None}}[ext]
    import warnings

    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "serq", "svg.fonttype": "path"}), warnings.catch_warnings():
        # matplotlib's word on its own timing, when placing a legend where it covers the fewest points took it more
        # than a second (a CDF of a million requests): a UserWarning naming this file's line on stderr, whether
        # it came depending on the machine's load; the picture is the same either way
        warnings.filterwarnings("ignore", message='Creating legend with loc="best" can be slow', category=UserWarning)
        figure.savefig(buf, format=ext, metadata=meta, dpi=120)
    write_atomic(path, buf.getvalue(), inputs=inputs)


def _is_frame(v: Any) -> bool:
    """Whether ``v`` is a pandas DataFrame (pandas imported only to ask, when ``v`` is no path)."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency of the tables
        return False
    return isinstance(v, pd.DataFrame)


#: the values of ``--log``: the axes drawn on a log scale
LOG_AXES = ("x", "y", "xy")


def log_axes(figure: Any, log: str, *, swept_x: bool = False) -> None:
    """Draw the axes ``log`` names (``"x"``, ``"y"`` or ``"xy"``) of every plot of ``figure`` on a log scale
    (a p99 TTFT from 1 s to 185 s across loads). A line's point at or below 0 has no place on one: refused (a :class:`UserError` naming the axis, its label and the value; matplotlib left such a
    point out with a warning, the line drawn without it). A CI band reaching 0 or below is clipped at the
    axis's end, its line being drawn whole. ``swept_x``: the x axis holds a sweep's swept values (a curve
    against its swept name), which a log x then shows as its ticks (:func:`_ticks_at_points`)."""
    for ax in figure.axes:
        for axis in log:
            label = ax.get_xlabel() if axis == "x" else ax.get_ylabel()
            for line in ax.get_lines():  # (a level at a swept inf holds no x: its 0 was said to be a value of x)
                for v in (_x_values(line) if axis == "x" else line.get_ydata()):
                    f = float(v)  # (a curve's x and y are numbers, checked as it is drawn; a CDF's too)
                    if f <= 0:
                        raise UserError(f"--log {log}: {label} holds {f:g}, which a log axis cannot show (it "
                                        "shows values above 0)")
            (ax.set_xscale if axis == "x" else ax.set_yscale)("log", nonpositive="clip")
            if not (axis == "x" and swept_x and _ticks_at_points(ax)):
                _ticks_one_two_five(ax, axis)


def _ticks_one_two_five(ax: Any, axis: str) -> None:
    """A log axis whose lines span 1.3 to 4 decades ticked at 1, 2 and 5 times the powers of 10, labelled as
    numbers (``%g``: 0.02, 0.05, 0.1, 0.2), and no label on the other minor ticks. matplotlib labels minor
    ticks while its view holds fewer than two whole decades, in the form 3×10⁻²: a TTFT CDF from 15 ms to
    0.7 s was labelled 2×10⁻², 3×10⁻², 4×10⁻², 6×10⁻², 10⁻¹, 2×10⁻¹, … and the labels ran into each other.
    Under 1.3 decades its labels are few and apart, above 4 it labels the decades alone: left as they are."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    values = [float(v) for line in ax.get_lines()
              for v in (_x_values(line) if axis == "x" else line.get_ydata())]
    values = [v for v in values if math.isfinite(v) and v > 0]
    if not values or not 1.3 <= math.log10(max(values) / min(values)) <= 4:
        return
    where = ax.xaxis if axis == "x" else ax.yaxis
    where.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    where.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    where.set_minor_formatter(NullFormatter())


def _ticks_at_points(ax: Any) -> bool:
    """A log x of a sweep's swept values (B = 256, 512, …, 8192) ticked at those values, each labelled as
    the table writes it (``%g``), and no label on the minor ticks. matplotlib's log axis labels minor ticks
    when it spans under two decades or so, in the form 3×10²: over 256…8192 the labels 2×10³, 3×10³ and
    4×10³ ran into each other and none of them was a swept value. Only for at most 12 values whose
    neighbours are at least 1.5 times apart (a label is no wider than the gap then), and whether it was so
    ticked; otherwise the axis is ticked as another log axis is (:func:`_ticks_one_two_five`)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    points = sorted({float(v) for line in ax.get_lines() for v in _x_values(line)  # (a level's 1 is no x)
                     if math.isfinite(float(v)) and float(v) > 0})
    if not 2 <= len(points) <= 12 or any(b / a < 1.5 for a, b in zip(points, points[1:])):
        return False
    ax.xaxis.set_major_locator(FixedLocator(points))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    return True


def plot(source: Any, out: str | None = None, *, x: str | None = None, y: str | None = None,
         hue: str | None = None, cdf_of: Sequence[str] = (), gauge: Sequence[str] = (),
         where: Mapping[str, object] | None = None, log: str | None = None) -> Any:
    """The Python side of ``serq plot``: a curve from a table (``x``, ``y``, ``hue``), CDFs (``cdf_of``)
    of observes from a dump folder or of per-request metrics from a records file (``hue`` a swept name
    of a sweep's records), or gauges (``gauge``) from a dump folder; written to ``out`` when given.
    ``where`` (``{NAME: VALUE}``, ``--where NAME=VALUE``) draws only the rows of a table or of records whose
    column NAME holds VALUE (:mod:`serq_sweep.rows`). ``log`` (``"x"``, ``"y"`` or ``"xy"``, ``--log``) draws
    those axes on a log scale (:func:`log_axes`). Returns the Figure."""
    from .axes import output_path, texts

    try:  # (a table and records are read as DataFrames: serq-sweep's [plot] extra, as matplotlib is)
        import pandas  # noqa: F401
    except ImportError:
        raise UserError("serq plot needs pandas: pip install 'serq-sweep[plot]' (or serq[plot])") from None
    # what is of the wrong type is said here, naming it: a str given as cdf_of or gauge was iterated (cdf_of=
    # "ttft" drew the letters t, t, f, t), source=None and out=3 were os.fspath's TypeError
    if not isinstance(source, (str, os.PathLike)) and not _is_frame(source):
        raise TypeError(f"source must be a path (str or os.PathLike) or a DataFrame, not {type(source).__name__}")
    out = output_path(out, "out")
    out = None if out is None else os.fspath(out)
    for what, v in (("x", x), ("y", y), ("hue", hue)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{what} must be a name (a str), not {type(v).__name__}")
    cdf_of, gauge = texts(cdf_of, "cdf_of", "metric"), texts(gauge, "gauge", "gauge")
    # an empty name names nothing, whatever the source holds: it was said as no name at all ("--x : no
    # column  (…)", "no gauge  in the dump")
    for flag, v, what in (("--x", x, "column"), ("--y", y, "figure"), ("--hue", hue, "column"),
                          *(("--cdf", c, "observe, metric or column") for c in cdf_of),
                          *(("--gauge", g, "gauge") for g in gauge)):
        if v is not None and not v.strip():
            raise UsageError(f"{flag} {v!r}: {'a blank' if v else 'an empty'} name names no {what}")
    src = os.fspath(source) if isinstance(source, (str, os.PathLike)) else source
    # an output's suffix, flags that do not go together and a flag missing are usage errors (status 2), as
    # a table's --out is of serq sweep (serq.errors.UsageError: a UserError to a caller of this function);
    # what SOURCE holds is an error of that input (status 1)
    if out is not None and split_suffix(out)[1].lower().lstrip(".") not in FORMATS:
        raise UsageError(f"-o {shown_path(out)}: a plot is .svg, .png or .pdf")
    if log is not None and log not in LOG_AXES:  # (click's choice says so of --log)
        raise UsageError(f"--log {log!r}: the axes on a log scale are x, y or xy")
    if cdf_of and gauge:
        raise UsageError("--cdf and --gauge make two plots: give one of them")
    if (cdf_of or gauge) and (x is not None or y is not None):  # (they were ignored)
        raise UsageError(f"--{'x' if x is not None else 'y'} and --{'cdf' if cdf_of else 'gauge'} make two plots "
                         "(--x/--y a sweep's table's curve): give one of them")
    if out is not None:  # before the source is read and drawn, as serq run's -o (it failed after the drawing,
        from serq.files import check_output  # in other words: 'cannot create a file in its folder …')

        check_output(out)
    if where and isinstance(src, str) and os.path.isdir(src):
        raise UsageError("--where keeps the rows of a sweep's table or of records; a dump folder's samples are "
                         "no such rows")
    if cdf_of and not (isinstance(src, str) and os.path.isdir(src)):
        left_out: list[Any] = []
        if where:
            from .rows import selected

            every = _read_records(src, cdf_columns(cdf_of, hue, where))
            src = selected(every, where, "the records")
            if hue is not None and hue in every.columns and hue in src.columns:
                kept = set(src[hue].tolist())
                left_out = sorted({v for v in every[hue].tolist()
                                   if v not in kept and not (isinstance(v, float) and math.isnan(v))},
                                  key=lambda v: (isinstance(v, str), v))
        figure = records_cdf(src, cdf_of, hue)  # a records file (or DataFrame)
        if left_out:
            click.echo(printable_lines(_no_requests_warning(hue, left_out, where)), err=True)
    elif cdf_of or gauge:
        if not (isinstance(src, str) and os.path.isdir(src)):
            raise UserError(f"{shown_path(src)}: --gauge reads a dump folder (serq run --dump DIR)")
        if hue is not None:
            raise UserError("--hue draws a line per value of a swept name: of a sweep's table, or of the "
                            "records of serq sweep --records")
        figure = cdf(src, cdf_of) if cdf_of else gauges(src, gauge)
    else:
        if x is None or y is None:
            if isinstance(src, str) and os.path.isdir(src):  # (it asked a dump folder for a table's flags)
                raise UsageError(f"serq plot {shown_path(src)}: a dump folder (serq run --dump DIR) needs --cdf OBSERVE or "
                                 "--gauge NAME; a sweep's table takes --x NAME and --y FIGURE")
            if isinstance(src, str) and src.lower().endswith(".csv"):  # (a table without commas: said so first)
                from .core import TableFault, header_separator

                try:
                    header_separator(src)
                except TableFault as e:
                    raise UserError(e.message("cannot read the table")) from None
            if y is None:
                if x is not None:  # (--x given: the figure is what is missing)
                    raise UsageError(f"serq plot TABLE --x {clipped(x)} needs --y FIGURE: the figure to draw against "
                                     f"{clipped(x)}")
                raise UsageError("serq plot TABLE needs --x NAME and --y FIGURE")
        if isinstance(src, str) and os.path.isdir(src):
            raise UserError(f"{shown_path(src)}: a folder: --x/--y read a sweep's table (--cdf/--gauge read a dump)")
        # the table read once (its swept name, the rows --where keeps, the curve, --log's swept x each read it
        # from its file: --y alone read it twice, --log once more); the frame keeps the file's name for the
        # messages that name it (_named)
        src = _read(src, lambda header: curve_columns(header, x, y, hue, where))
        from .rows import header_of

        _not_comparison(header_of(src), _named(src), y)
        if x is None:
            # --y alone: the table's one swept name is the x (docs/sweep.md, serq plot)
            x, names = swept_x(src)
            if x is None:
                swept = (f"the table sweeps {', '.join(map(clipped, names))}" if names else
                         "the table sweeps no name")
                raise UsageError(f"serq plot TABLE --y {clipped(y)} needs --x NAME: {swept} (--x is the one "
                                 "swept name of a table that sweeps one)")
        if where:
            from .rows import selected

            src = selected(src, where)
        figure = curve(src, x, y, hue)
    if log is not None:
        log_axes(figure, log, swept_x=not (cdf_of or gauge) and _is_swept(src, x))
    if out is not None:
        inputs = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else []
        if (cdf_of or gauge) and isinstance(src, str) and os.path.isdir(src):
            # the files read inside the folder: -o x.svg, a link to DIR/response.csv, replaced it
            inputs += [_dump_file(src, n, gauge=not cdf_of) for n in (cdf_of or gauge)]
        save(figure, out, inputs=inputs)
    return figure
