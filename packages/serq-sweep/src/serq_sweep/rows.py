"""``serq plot --where NAME=VALUE``: the rows of a sweep's table or of records that a plot draws.

A sweep over two names (``--set Lambda=… --set blocks=…``) drawn against one of them takes the other as
``--hue``, or draws the rows of one value of it: ``--where blocks=8010`` keeps those rows, as
``recs[recs.blocks == 8010]`` does in Python. Each ``--where`` is one column and one value; several keep the
rows that match them all. A value that reads as a number (``8010``, ``8.01e3``, ``inf``) matches the cells
that hold that number, an int or a float alike; any other value matches the cells whose text is that value.
A value is taken as written, blanks and all, a number's as a word's (:func:`_wanted`, the one reading): as
the sweep's own ``--set B=VALUE`` keeps a value's blanks, ``--where "B= 512"`` is no number and matches no
cell of 512 (its refusal says the blanks are the value's); the blanks around a number were trimmed, and
those around a word kept. A text matches a swept definition's body (``--def``) by its canonical form, as the
sweep tells those values apart (:func:`expression_form`): ``--where 'service=~exp( 1 )'`` keeps the rows of
``~exp(1)``; a run's own columns and the paths of ``program`` and ``trace`` match as written.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from serq.errors import UsageError, UserError, clipped, did_you_mean, printable
from serq.numbers import NotANumber, number, real

#: the most values of a column a refusal lists
SHOWN_VALUES = 12


def where_option(items: Sequence[str]) -> dict[str, str]:
    """The command line's ``--where NAME=VALUE`` items as ``{NAME: VALUE}``, in the order given: an item
    without ``=``, of an empty name or value, or a name given twice is a usage error."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name or not value:
            raise UsageError(f"--where {clipped(item)}: give a column and one of its values, --where NAME=VALUE "
                             "(--where blocks=8010)")
        if name in out:
            raise UsageError(f"--where {clipped(name)} is given twice ({clipped(out[name])} and {clipped(value)}): "
                             "a row has one value in a column; give it once")
        out[name] = value
    return out


def _wanted(value: object) -> float | str | bool:
    """What a ``--where`` value matches: a number (a value that reads as one, as the language writes it, with no
    blank around it; or a number given in Python), or the text of a cell, blanks and all."""
    if isinstance(value, str):
        try:
            return number(value)
        except NotANumber:
            return value
    if isinstance(value, bool):  # (a flag given in Python: where={"interrupted": False})
        return value
    r = real(value)
    if r is None:
        raise TypeError(f"where: a value is a number or a str, not {type(value).__name__}")
    return r


#: the columns a ``--where`` text matches as written, not by its canonical form (:func:`expression_form`): a
#: run's own (serq_sweep.core.FIXED) and the paths of the axes ``program`` and ``trace``
_AS_WRITTEN = frozenset({"point", "seed", "status", "message", "warnings", "key", "program", "trace"})


@functools.lru_cache(maxsize=4096)  # (a column of records holds its few values once a row)
def expression_form(text: str) -> str:
    """The canonical form of ``text`` as a sweep tells the values of a swept definition (``--def NAME=BODY``) apart:
    the body as ``serq fmt`` spaces it, on one line, without comments (serq_frontend.fmt.expression_form, the
    ``.sq`` loader's, serq.loading.definition_form), so ``~exp( 1 )`` is ``~exp(1)``; the text itself without
    serq-frontend."""
    try:
        from serq_frontend.fmt import expression_form as form
    except ImportError:  # pragma: no cover - serq-frontend comes with serq
        return text
    return form(text)


def _cell_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    r = real(v)
    if r is not None:
        return r
    try:  # numpy's numbers (a column of a frame read back)
        import numpy as np

        if isinstance(v, np.number) and not isinstance(v, np.bool_):
            return float(v)
    except ImportError:  # pragma: no cover - numpy comes with pandas
        pass
    return None


def _matches(v: Any, want: float | str | bool, form: str | None = None) -> bool:
    """Whether the cell ``v`` holds what a ``--where`` value reads as (``want``, :func:`_wanted`); with ``form``,
    a text cell of that canonical form matches too (:func:`expression_form`: a swept definition's body)."""
    if isinstance(v, bool):
        # a flag cell (interrupted; a record of a condition) holds the word true or false in any case, as a CSV
        # table's reader reads one (core._parse_csv): --where interrupted=false kept no row, and said its values
        # were False
        flag = want if isinstance(want, bool) else want.lower() if isinstance(want, str) else None
        return flag == v if isinstance(flag, bool) else flag == ("true" if v else "false")
    if isinstance(want, bool):
        return False
    if isinstance(want, str):
        return isinstance(v, str) and (v == want or form is not None and expression_form(v) == form)
    n = _cell_number(v)
    return n is not None and (n == want or (math.isnan(n) and math.isnan(want)))


def _shown(v: Any) -> str:
    from .core import show_value

    n = _cell_number(v)
    if n is not None:
        return str(int(n)) if n.is_integer() and abs(n) < 1e15 else show_value(n)
    return clipped(printable(str(v)))


#: the key of a frame's ``attrs`` holding the header of the CSV file it was read from, when the frame holds only
#: the columns a plot reads (serq_sweep.plots._csv_frame)
HEADER = "serq_header"


def header_of(frame: Any) -> list[str]:
    """The columns of the file ``frame`` was read from (it may hold only those a plot reads: :data:`HEADER`),
    else its own: what a message lists, and what a name is looked up among."""
    header = frame.attrs.get(HEADER)
    return list(header) if isinstance(header, list) else [str(c) for c in frame.columns]


def selected(frame: Any, where: Mapping[str, object] | None, what: str = "the table") -> Any:
    """The rows of ``frame`` whose column NAME holds VALUE for every item of ``where`` (the frame itself when
    ``where`` is empty). A name that is no column, and a value no row holds, is a :class:`UserError` naming
    the ``--where`` item, with the columns or the column's values."""
    if not where:
        return frame
    if not isinstance(where, Mapping):
        raise TypeError(f"where must be a mapping of a column's name to a value, not {type(where).__name__}")
    for name, value in where.items():
        given = f"--where {clipped(printable(str(name)))}={clipped(printable(str(value)))}"
        if name not in frame.columns:
            header = header_of(frame)
            shown = printable(", ".join(header))
            raise UserError(f"{given}: {what} has no column {clipped(printable(str(name)))} (its columns: "
                            f"{shown if len(shown) <= 200 else shown[:197] + '...'})"
                            f"{did_you_mean(str(name), header)}")
        want = _wanted(value)
        column = frame[name].tolist()
        # a swept definition's body is told by its canonical form, as the sweep told its values apart: --where
        # 'service=~exp( 1 )' keeps the rows of ~exp(1) (it matched none); the run's own columns are as written
        form = expression_form(want) if isinstance(want, str) and name not in _AS_WRITTEN else None
        keep = [_matches(v, want, form) for v in column]
        if not any(keep):
            values = sorted({_shown(v) for v in column}, key=lambda s: (_sort_number(s) is None, _sort_number(s), s))
            listed = ", ".join(values[:SHOWN_VALUES]) + (f", … ({len(values)} values)" if len(values) > SHOWN_VALUES
                                                         else "")
            blanks = (f"; the blanks around {clipped(value.strip())!r} are part of the value"
                      if isinstance(value, str) and value.strip() != value else "")
            raise UserError(f"{given}: no row of {what} has {clipped(printable(str(name)))} = {clipped(printable(str(value)))} (its "
                            f"values: {listed or 'none, the table has no rows'}){blanks}")
        frame = frame[keep]
    return frame


def _sort_number(s: str) -> float | None:
    try:
        return number(s)
    except NotANumber:
        return None
