"""Reading a workload trace: CSV with the columns ``session,turn,new,out,think,forced``.

Rows are grouped by session (in the order sessions first appear) and each session's turns sorted by
``turn`` (stably: rows of one session with equal turns keep the file's order). The file is UTF-8 (a
byte-order mark is skipped); other columns are allowed and ignored; blank lines are skipped. Every cell
of the six columns is a finite number, written as serQ writes one (serq.numbers: digits 0-9 with an
optional point and exponent; spaces and tabs around a cell are allowed, ``1_000`` or ``١٢`` is not), and
``new``, ``out`` and ``think`` are not negative. A malformed
file is a :class:`~serq_sim.errors.SimError` naming the file, line and column.

The file is read as a stream, a line at a time, into six ``array('d')`` columns (48 bytes a row), never
whole: a trace of ten million rows takes about 0.6 GB (docs/performance.md). Above :data:`EAGER_ROWS`
rows a turn is made into a tuple only when a session replays it (:class:`TraceTurns`), one at a time.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import os
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, count, groupby, islice, repeat
from operator import gt, itemgetter
from pathlib import Path

from serq.errors import shown_path
from serq.files import MAX_LINE, LineTooLong, not_utf8, open_input
from serq.numbers import NAN_PATTERN, NUMBER_HINT, PATTERN, NotANumber, number, quoted

from .errors import SimError, format_error, show_number

COLUMNS = ("session", "turn", "new", "out", "think", "forced")
INF = math.inf
#: Up to this many rows, every session's turns are made into tuples once, when the trace is read; above
#: it, a turn each time a session replays it (:class:`LazySessions`, :class:`TraceTurns`).
EAGER_ROWS = 100_000


class TraceTurns(Sequence):
    """One trace session's turns read from the columns: item ``k`` is its ``k``-th turn, the tuple
    ``(new, out, think, forced)``, made when the replaying session reaches it. A session that replays a
    trace session holds this view, not a list of its turns: the list (some 150 bytes a turn) was made
    whole for every session that started replaying it, so five sessions replaying a trace session of a
    million turns took 1.1 GB and 13 s before their first turn, however few turns they reached."""

    __slots__ = ("_cols", "_a", "_n")

    def __init__(self, cols: tuple[array, array, array, array], a: int, n: int):
        self._cols = cols
        self._a = a  # the turns are rows a .. a + n - 1 of the columns
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, k):
        n = self._n
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(n))]
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("trace turn index out of range")
        j = self._a + k
        new, out, think, forced = self._cols
        return (new[j], out[j], think[j], forced[j])

    def __eq__(self, other):
        if isinstance(other, (TraceTurns, list, tuple)):
            return len(self) == len(other) and all(map(tuple.__eq__, self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  (a view of mutable columns, compared by its turns)

    def __repr__(self) -> str:
        return f"TraceTurns({list(self)!r})"


class LazySessions(Sequence):
    """The sessions of a trace kept as columns: item ``i`` is session ``i``'s turns, a :class:`TraceTurns`
    over the columns (each turn made when it is asked for)."""

    __slots__ = ("_cols", "_start")

    def __init__(self, cols: tuple[array, array, array, array], start: array):
        self._cols = cols
        self._start = start  # session i's rows are rows start[i] .. start[i + 1] - 1 of the columns

    def __len__(self) -> int:
        return len(self._start) - 1

    def __getitem__(self, i):
        n = len(self._start) - 1
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("trace session index out of range")
        a = self._start[i]
        return TraceTurns(self._cols, a, self._start[i + 1] - a)

    def turns(self, i: int) -> list[tuple[float, float, float, float]]:
        """Session ``i``'s turns as a list of tuples, made whole (the eager sessions of a small trace)."""
        a, b = self._start[i], self._start[i + 1]
        new, out, think, forced = self._cols
        return list(zip(new[a:b], out[a:b], think[a:b], forced[a:b]))


@dataclass
class TraceCorpus:
    path: str
    #: per session, its turns as ``(new, out, think, forced)``: a list of lists, or for a trace of more
    #: than :data:`EAGER_ROWS` rows a :class:`LazySessions`
    sessions: Sequence[Sequence[tuple[float, float, float, float]]]
    #: the rows read
    rows: int = 0
    #: per session, its id as the file's ``session`` column gives it (sessions are numbered by first
    #: appearance; a run-time error of a session that replays one names it by this id, :func:`replay_note`)
    ids: Sequence[float] = ()

    def replay_note(self, state, serial: int | None) -> str:
        """The note a run-time error of a session replaying this trace carries (both tiers): ``state`` is the
        session's ``[turns, next turn, trace session]``, ``serial`` its serial; "" for ``state`` None."""
        return replay_note(self, state, serial)


def _err(path: str, line: int, col: int, msg: str) -> SimError:
    """The error ``msg`` at ``line`` and ``col`` of the trace ``path`` (:func:`csv_located`)."""
    return SimError(csv_located(path, line, col, msg))


def csv_located(path: str, line: int, col: int, msg: str) -> str:
    """``path:line:col: error: msg`` for a CSV file (a trace, a sweep's table, records, a dump), the line
    quoted (200 characters of it at most, around the column) with a caret under the column, as a source's
    mistake is told (:func:`serq.jsonin.located`); without the quote when the line cannot be read again
    (one longer than ``MAX_LINE`` bytes, a file gone since)."""
    text = _source_line(path, line)
    if text is None:
        return f"{shown_path(path)}:{line}:{col}: error: {msg}"
    from serq.jsonin import located

    return located(text, path, line, col, msg, first=line)


def csv_cell_at(path: str, first: int, last: int, index: int) -> tuple[int, int]:
    """Where field ``index`` (from 0) of the record a CSV reader read from lines ``first`` to ``last`` of
    ``path`` starts, as ``(line, column)``; the record's start for a field it does not have."""
    starts = _field_starts(path, first, last)
    return starts[index] if 0 <= index < len(starts) else (first, 1)


def csv_bad_byte(path: str) -> tuple[int, int, int, bytes] | None:
    """The first byte of ``path`` that is not UTF-8, as ``(line, column, byte, the file's first bytes)``
    (:func:`serq.files.not_utf8` takes the last two), or None."""
    with _open(path, "surrogateescape") as f:
        for n, line in enumerate(f, 1):
            m = _ESCAPED.search(line)
            if m is not None:
                head = line[:4].encode("utf-8", "surrogateescape") if n == 1 else b""
                return n, m.start() + 1, ord(m.group()) - 0xDC00, head
    return None


def _source_line(path: str, line: int) -> str | None:
    """Line ``line`` of the trace as the reader splits its lines (``\\n``, ``\\r\\n`` or ``\\r``), its line end
    left off (bytes that are not UTF-8 as one character each, shown as ``\\xNN``), ``""`` past the last line,
    None when it cannot be read."""
    try:
        with _open(path, "surrogateescape") as f:
            for text in islice(f, line - 1, line):
                return text.rstrip("\r\n")
    except (OSError, ValueError):
        return None
    return ""


def program_base(source: str | None, folder: str | None) -> str | None:
    """The program's ``source`` as a path from the current folder, for :func:`resolve_trace` and
    :func:`trace_outside`: ``source`` itself, or joined to ``folder``, the folder a program the library API
    compiled was compiled in when the run is in another (serq_ir.folders; a program given as text, of no
    source, has that folder for its own)."""
    if folder is None or (source and os.path.isabs(source)):
        return source
    return os.path.join(folder, source or "<source>")


def resolve_trace(path: str, source: str | None) -> str:
    """Where the trace a program's workload names is: a relative path is relative to the program's
    folder (``source``'s). The name is kept as written, so that it is read as the system reads it: pathlib
    spelled ``trace "t.csv/"`` and ``trace "t.csv/."``, names of a folder that does not exist ("Not a
    directory"), as ``t.csv``, and the run replayed that file. The empty name is the folder itself."""
    if source and not os.path.isabs(path):
        path = os.path.join(os.path.dirname(source), path)
    return path or "."


def nothing_to_replace(trace: str, source: str | None, given=None) -> SimError:
    """The error of a ``--trace`` FILE (``serq_sim.run(trace=…)``, ``serq sweep --trace``, ``serq compare
    --trace``, ``serq_sweep.sweep(trace=…)``) given to a program whose workload reads no trace: a replacement
    with nothing to replace is refused, not ignored. ``source`` the program's file; ``given`` names what the
    caller gave (:func:`serq.loading.given_or_option`: ``--trace t.csv`` on the command line, ``trace=t.csv``
    for the Python API). The one message of every command and function that takes a trace."""
    from serq.errors import shown_path
    from serq.loading import given_or_option

    said = given_or_option(given)("trace", shown_path(os.fspath(trace)))  # (a long name was printed whole)
    return SimError(format_error(None, None, None, f"{said}: the program's workload reads no trace (no "
                                 "`trace \"FILE\"` clause) for it to replace", source))


def check_replaceable(program, trace, given=None) -> None:
    """Refuse ``trace`` (a file replacing the workload's trace, or None: none given) for ``program`` when its
    workload reads no trace (:func:`nothing_to_replace`, ``given`` naming what the caller gave), before
    anything is built or run: ``serq run --trace``, :func:`serq_sim.run`'s ``trace=``, and serq_sweep's
    sweep, find and compare, each once for the program."""
    if trace is not None and program.workload.trace is None:
        raise nothing_to_replace(trace, program.source, given)


def trace_beside(program, file: str, trace: str | None = None) -> str | None:
    """Why the run of ``program``, read from ``file`` (the file the user named: a ``.sq`` program or an IR
    file), may not read the trace its workload names, or None when it may (or ``trace``, a ``--trace``
    file, replaces it): besides :func:`trace_outside`'s rule, the trace is inside the folder of ``file``,
    the current folder or a ``SERQ_PATH`` folder. An IR file's ``source`` is its own word on where its
    program was, and :func:`trace_outside` reads the trace relative to and inside that folder: an IR file
    someone sent that said ``"source": "/etc/x.sq"`` and ``trace "passwd"`` had ``/etc/passwd`` read as
    its trace. A ``.sq`` program's source is ``file`` itself, so this adds nothing for it."""
    wl = program.workload.trace
    if trace is not None or wl is None or "\0" in wl.path:
        return None
    from serq.files import inside, unnamable, widened_paths

    if unnamable(wl.path):  # (names no file: said at the trace clause, as a NUL is)
        return None
    path = resolve_trace(wl.path, program.source)
    folder = os.path.dirname(file) or "."
    if inside(path, folder) or inside(path, ".") or any(inside(path, w) for w in widened_paths()):
        return None
    return (f"the trace {shown_path(path)} is outside the folder of {file} and the current folder; a program's trace is "
            "read only there, wherever an IR file's source says its program was (SERQ_PATH adds folders, "
            "--trace FILE reads any file)")


def trace_outside(path: str, source: str | None) -> str | None:
    """Why the program may not read the trace its workload names at ``path`` (as resolved), or None when
    it may: a program reads a trace inside its own folder (the current folder for an IR without a
    source), or inside a folder ``SERQ_PATH`` names, with every symbolic link resolved. A ``--trace``
    file is the user's choice and is not checked."""
    from serq.files import inside, unnamable, widened_paths

    root = str(Path(source).parent) if source else "."
    if "\0" in path or unnamable(path):  # names no file: load_trace says so at the trace clause (it is not
        return None  # outside anything)
    if inside(path, root) or any(inside(path, w) for w in widened_paths()):
        return None
    where = "the program's folder" if source else "the current folder (the IR names no source)"
    return (f"the trace {shown_path(path)} is outside {where}; a program reads a trace only there (SERQ_PATH adds "
            "folders, --trace FILE reads any file)")


def _open(path: str, errors: str = "strict", watched: _Watched | None = None) -> io.TextIOWrapper:
    """The trace as text, as every read of it opens it: a regular file only (a FIFO would block), its
    lines at most ``MAX_LINE`` bytes (:class:`serq.files.LineTooLong`: a reader of lines holds a line
    whole, and a sparse file of 1 GiB of NUL bytes is one line); read through ``watched`` (the file's
    bytes, opened so) when given."""
    stream = open_input(path, max_line=MAX_LINE) if watched is None else io.BufferedReader(
        watched, buffer_size=64 * 1024)
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors=errors, newline="")


def _record_text(path: str, first: int, last: int) -> str:
    """Lines ``first`` to ``last`` of the file as the reader split them, line ends kept (undecodable bytes as
    surrogate escapes): the text of a record the CSV reader read from those lines."""
    out = []
    with _open(path, "surrogateescape") as f:
        for n, line in enumerate(f, 1):
            if n >= first:
                out.append(line)
            if n >= last:
                break
    return "".join(out)


_AFTER_QUOTE = "a quoted field goes on after its closing quote (a quote inside a quoted field is doubled: \"\")"
_UNCLOSED = "the file ends inside this quoted field (its closing quote is missing)"
_LONG_FIELD = "this field is longer than {} characters (a trace's cells are numbers)"


class _Scanner:
    """CSV text read by the rules the reader holds it to (``strict``), fed a piece at a time (``feed``) and
    ended (``end``): ``starts`` lists where each field starts, as ``(line, column)`` (unless ``starts``
    is off), and ``fault`` is where the text first breaks those rules, as ``(line, column, why)`` (a
    character after a closing quote that is neither a comma nor a line end; a quoted field the text ends
    inside, at its opening quote), or None. A comma or a line end inside a quoted field ends neither the
    field nor the record; with ``one_record`` the scan stops at the first record's end (a record the
    reader has read, so ``fault`` is None)."""

    def __init__(self, line: int = 1, one_record: bool = False, starts: bool = True):
        self.starts: list[tuple[int, int]] | None = [(line, 1)] if starts else None
        self.line, self.col = line, 1
        self.state = "start"  # of a field; "plain" inside an unquoted one, "quoted", "closed" after its closing quote
        self.opened = (line, 1)
        self.prev = ""
        self.one_record = one_record
        self.fault: tuple[int, int, str] | None = None
        #: the reader's bound on a field's characters (a fault past it, at the field's start), and the characters of
        #: the field read so far
        self.limit = None if one_record else csv.field_size_limit()
        self.length = 0

    def feed(self, text: str) -> bool:
        """Read ``text`` on; True once the scan is over (a fault, or with ``one_record`` the record's end)."""
        line, col, state, opened, prev, starts = self.line, self.col, self.state, self.opened, self.prev, self.starts
        one_record, limit, length = self.one_record, self.limit, self.length
        over = False
        for ch in text:
            content = True  # a character of the field's value (not a quote around it, a separator or a line end)
            if state == "quoted":
                if ch == '"':
                    state, content = "closed", False
            elif state == "closed" and ch == '"':
                state = "quoted"  # a doubled quote: one character
            elif state == "closed" and ch not in ",\r\n":
                if not one_record:
                    self.fault, over = (line, col, _AFTER_QUOTE), True
                    break
                state = "plain"  # (a record the reader took has none: read on as the reader would not)
            elif ch == '"' and state == "start":
                state, opened, content, length = "quoted", (line, col), False, 0
            elif ch == ",":
                state, content = "start", False
                if starts is not None:
                    starts.append((line, col + 1))
            elif ch in "\r\n":
                if one_record:
                    over = True
                    break
                state, content = "start", False
            else:
                if state == "start":
                    opened, length = (line, col), 0
                state = "plain"
            if content and limit is not None:
                length += 1
                if length > limit:  # the reader's "field larger than field limit", at the field's start
                    self.fault, over = (opened[0], opened[1], _LONG_FIELD.format(limit)), True
                    break
            if ch == "\n" and prev == "\r":
                col = 1
            elif ch in "\r\n":
                line, col = line + 1, 1
            else:
                col += 1
            prev = ch
        self.line, self.col, self.state, self.opened, self.prev, self.length = line, col, state, opened, prev, length
        return over

    def skip_line(self, text: str) -> bool:
        """Pass over ``text``, one line (with its line end), without reading it character by character when
        that cannot change anything: the scan is between fields outside a quote and the line holds no quote
        (no fault can be in it, and it leaves the scan between fields). False when it must be fed."""
        if self.state != "start" or self.starts is not None or '"' in text or (
                self.limit is not None and len(text) > self.limit):  # (a field in it may be too long)
            return False
        if text.endswith(("\n", "\r")):
            self.line, self.col = self.line + 1, 1
        else:
            self.col += len(text)
        self.prev = text[-1:] or self.prev
        return True

    def end(self) -> None:
        if self.fault is None and self.state == "quoted":
            self.fault = (self.opened[0], self.opened[1], _UNCLOSED)


def _scan(text: str, line: int = 1, one_record: bool = False):
    """``(starts, fault)`` of CSV ``text`` (starting at line ``line``): :class:`_Scanner`'s."""
    s = _Scanner(line, one_record)
    if not s.feed(text):
        s.end()
    return s.starts, s.fault


def _field_starts(path: str, first: int, last: int) -> list[tuple[int, int]]:
    """Where each field of the record the reader read from lines ``first`` to ``last`` starts."""
    return _scan(_record_text(path, first, last), first, one_record=True)[0]


def _csv_fault(path: str, until: int) -> tuple[int, int, str] | None:
    """Where the file breaks the CSV rules the reader holds it to, as ``(line, column, why)``, or None,
    looking no further than line ``until`` (where the reader stopped). Read a line at a time; a line that
    starts outside a quoted field and holds no quote is passed over unscanned (the scan, a character at a
    time, read the whole file into one string: minutes for a trace of 1 GiB)."""
    s = _Scanner(starts=False)
    with _open(path, "surrogateescape") as f:
        for n, line in enumerate(f, 1):
            if n > until:  # the reader failed before the file's end: not inside a quote the file ends in
                return None
            if not s.skip_line(line) and s.feed(line):
                return s.fault
    s.end()
    return s.fault


_ESCAPED = re.compile("[\udc80-\udcff]")


def _not_utf8(path: str) -> SimError:
    """The error for the first byte of the file that is not UTF-8, at its line and column."""
    bad = csv_bad_byte(path)
    if bad is not None:
        n, col, byte, head = bad
        return _err(path, n, col, not_utf8(byte, head, "the trace"))
    return _err(path, 1, 1, "the trace is not UTF-8 text")  # pragma: no cover - the decoder said it was not


#: what may surround a cell's number (CSV written `1, 2`, a quoted cell's line ends); other whitespace (a
#: no-break space, a form feed) is no part of a number
_BLANKS = " \t\r\n"


_CELL = rf"[{_BLANKS}]*(?:{PATTERN}|{NAN_PATTERN})[{_BLANKS}]*"


@functools.cache
def _row() -> re.Pattern[str]:
    """Six cells joined by NUL, each a number in serQ's syntax (or nan) with the blanks around it (a cell that holds
    a NUL makes more than six parts, and no match). Compiled on first use, by a trace read strictly (about 8 M
    instructions), not by every process that imports this module."""
    return re.compile("\0".join([_CELL] * len(COLUMNS)))


def _plain(six: tuple[str, ...]) -> bool:
    """Whether each of the six cells (with the blanks around it) is a number in serQ's syntax (or nan): one match of
    the row, a third of what a match of each cell takes."""
    return _row().fullmatch("\0".join(six)) is not None


#: the bytes a file of serQ's numbers holds (printable ASCII, tab and line ends): a cell that float() reads
#: and serQ does not holds another (_, a non-ASCII digit or space, another control character), a + that
#: follows no e or E, or is a word (inf, nan, infinity: not finite, found by the checks on whole columns)
_PLAIN_BYTES = bytes(sorted(set(b"\t\n\r" + bytes(range(0x20, 0x7F))) - set(b"_")))


class _Watched(io.RawIOBase):
    """The file's bytes as they are read, noting (``odd``) whether any after the header's line is not in
    :data:`_PLAIN_BYTES`, or is a + after no exponent's e: a look at each 64 KiB the reader reads, where a
    look at each row made reading a trace a quarter slower. ``odd`` says a cell may be one ``float()``
    reads and serQ does not (or a column outside the six holds such text); the rows read from then on are
    checked cell by cell (:func:`_plain`; about 1 s a million rows). ``sha``, a hash object or None, hashes
    the bytes as they go by (:func:`load_trace`'s check of a sweep's ``digest``: what was read, not the file as
    it is before or after). ``watch``, a callable or None, is called with the bytes read so far after each
    piece (:func:`load_trace`'s ``watch``: a run's ``--max-wall`` at set-up)."""

    def __init__(self, raw, sha=None, watch=None):
        super().__init__()
        self.raw, self.odd, self._header, self.sha = raw, False, True, sha
        self.watch, self.done = watch, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.raw.readinto(b)
        if self.watch is not None:
            self.done += n
            self.watch(self.done)
        if n and self.sha is not None:
            self.sha.update(memoryview(b)[:n])
        if n and not self.odd:
            chunk = bytes(memoryview(b)[:n])
            if self._header:  # the header's names are no numbers (user_id): the bytes after its line end
                end = chunk.find(b"\n")
                chunk = b"" if end < 0 else chunk[end + 1:]
                self._header = end < 0
            self.odd = bool(chunk.translate(None, _PLAIN_BYTES)) or (
                chunk.count(b"+") != chunk.count(b"e+") + chunk.count(b"E+"))  # (1e+05, as %e writes it)
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def _first_error(path: str, width: int, idx: list[int]) -> SimError | None:
    """The first malformed row of the file, read again row by row: a row whose number of fields is not
    the header's, or one of whose six cells is not a number, not finite or negative where it may not be
    (the first such cell, at its column); ``None`` if there is none."""
    with _open(path) as f:
        reader = csv.reader(f, strict=True)
        _header(reader)
        last = reader.line_num
        for row in reader:
            first, last = last + 1, reader.line_num  # the record's lines (a quoted field may span several)
            if _blank(row):
                continue
            if len(row) != width:
                return _err(path, first, 1, f"expected {width} fields, found {len(row)}{_row_note(row, width)}")
            starts = None
            for name, i in zip(COLUMNS, idx):
                cell = row[i].strip(_BLANKS)
                shown = quoted(cell)  # (a cell of 100 000 digits was quoted whole)
                bare = shown[1:-1] if shown == repr(cell) else shown
                try:
                    v = number(cell, nan=True)  # (NaN: refused below as not finite)
                    why = (None if math.isfinite(v) else f"{shown} is not finite") if v >= 0 or name in (
                        "session", "turn", "forced") or v != v else f"{bare} is negative"
                    if why is None and name in _KEYS and not -_EXACT < v < _EXACT:
                        why = (f"{bare} is not below 2**53 in size, where a double (what the trace's numbers are "
                               f"read as) does not tell one whole number from the next, so two {name}s "
                               f"could be read as one: number them below 2**53")
                except NotANumber as e:
                    why = str(e)
                    if name in _KEYS and any(ch.isalpha() for ch in cell) and NUMBER_HINT not in why:  # `s1`
                        why += (f": a trace's {name}s are numbers (any finite number below 2**53 in size: 0, 17, "
                                f"-3, 2.5), not names")
                if why is None:
                    continue
                if starts is None:
                    starts = _field_starts(path, first, last)
                at_line, at_col = starts[i] if i < len(starts) else (first, 1)
                return _err(path, at_line, at_col, f"column {name}: {why}")
    return None


def unreadable(path: str, e: OSError, declared=None, source: str | None = None) -> SimError:
    """The error of a trace that cannot be opened as a file (missing, a FIFO, a device, a socket, unreadable),
    one rule for every command that reads one: ``serq run --trace``, a sweep's, a comparison's and a capacity
    search's ``--trace`` (checked before anything compiles, ``serq_sweep.core.trace_files``), a workload's
    ``trace`` clause (``declared``, its span, and ``source``, the program's file: said there). A bad input
    file, status 1, as a program that cannot be read is: ``serq sweep --trace`` of a FIFO was a usage
    error, status 2, where ``serq run --trace`` said this (a folder is the option's type's refusal, status 2,
    in every command)."""
    why = e.strerror or str(e)
    if isinstance(e, FileNotFoundError):  # (a name with a look-alike letter: the file it prints as)
        from serq.errors import missing_file_note

        why += missing_file_note(path)
    if declared is not None:
        return SimError(format_error(declared, None, None, f"cannot read the trace {shown_path(path)}: {why}",
                                     source))
    return SimError(f"{shown_path(path)}: error: cannot read the trace: {why}")


def load_trace(path: str, declared=None, source: str | None = None, digest: str | None = None,
               watch=None) -> TraceCorpus:
    """The trace in ``path``. ``declared``: the span of the workload's ``trace`` clause that names it (a
    file that cannot be read is reported there, with the source line; ``source`` the program's file);
    ``None`` for a trace given on the command line. ``digest``: the SHA-256 (hexadecimal) of the bytes the
    trace had when a sweep planned the run (:func:`changed`), or None: the bytes are hashed as they are read
    only then (with OpenSSL's SHA-256, as :func:`file_digest`; a run that checks nothing pays nothing).
    ``watch``: called with the bytes read so far after each piece the reader reads (some 64 KiB); what it raises
    (the run's ``StopRun`` at its ``--max-wall``, engine.Simulation.setup_watch) ends the read."""
    try:  # a regular file only, named here or on the command line: a FIFO would block, /dev/zero not end
        watched = _Watched(open_input(path, max_line=MAX_LINE), None if digest is None else _sha256()(), watch)
        f = _open(path, watched=watched)
    except OSError as e:
        raise unreadable(path, e, declared, source) from None
    reader = csv.reader(f, strict=True)  # a quoted field the file ends inside is an error, not a value
    try:
        with f:
            corpus = _read(path, reader, watched)
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except csv.Error as e:
        try:
            fault = _csv_fault(path, max(reader.line_num, 1))
        except (OSError, UnicodeDecodeError):  # pragma: no cover - changed since: the reader's own words
            fault = None
        if fault is not None:
            raise _err(path, fault[0], fault[1], f"the trace is not CSV: {fault[2]}") from None
        raise _err(path, max(reader.line_num, 1), 1, f"the trace is not CSV: {e}") from None
    except LineTooLong as e:
        raise _err(path, e.line, 1, f"the trace is not CSV: {e.strerror} (a trace's rows are short)") from None
    except OSError as e:
        raise SimError(f"{shown_path(path)}: error: cannot read the trace: {e.strerror or e}") from None
    if digest is not None and watched.sha.hexdigest() != digest:
        raise changed(path)
    return corpus


def _sha256():
    """The constructor of the SHA-256 a sweep keys a trace's bytes by: ``hashlib``'s (OpenSSL's, some three
    times the speed of the interpreter's own on a trace's megabytes; imported only by a run that checks)."""
    from hashlib import sha256

    return sha256


def file_digest(path: str) -> str:
    """The SHA-256 (hexadecimal) of the bytes of the trace file ``path``, opened as a run opens it (a regular
    file only: else the ``OSError`` of :func:`serq.files.open_input`): what a sweep keys the runs that replay
    it by (serq_sweep.core.trace_digest) and :func:`load_trace` checks a run's bytes against."""
    with open_input(path) as f:
        h = _sha256()()
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


#: what the error of :func:`changed` says after ``PATH: error: ``
CHANGED = "the trace changed since the sweep started"
#: the code the error of :func:`changed` carries (``SimError.code``): a sweep's resume knows such a run by it,
#: which its table's ``warnings`` holds (docs/sweep.md)
TRACE_CHANGED = "trace-changed"


def changed(path: str, why: str | None = None) -> SimError:
    """The error of a run whose trace's bytes, as the run read them, are not those a sweep read when it planned
    the run and keyed it by (the file was edited or replaced since): its results would be kept under the old
    content's key, and a resume would take them for runs of the old trace. ``why``: what the run met
    instead when it could not read the file (:func:`not_as_planned`)."""
    read = ("the run read other bytes than the sweep's key of the run holds" if why is None else
            f"the run could not read the bytes the sweep's key of the run holds ({why})")
    return SimError(f"{shown_path(path)}: error: {CHANGED}: {read}, so the run is not kept (rerun the sweep once the file is "
                    "as it should be)", code=TRACE_CHANGED)


def not_as_planned(path: str, digest: str | None, error: SimError) -> SimError:
    """The error of a run of a sweep whose trace could not be read or replayed (``error``: outside the program's
    folder, no regular file, missing, malformed): :func:`changed` when the sweep read the file when it planned
    the run (``digest``, a SHA-256 in hexadecimal) and its bytes are now others or none, for then ``error`` is
    no result of the bytes the run's key holds (a trace replaced by a symbolic link out of the folder, or by a
    FIFO, and then put back: a resume kept the error though the file was as planned); else ``error`` itself."""
    if digest is None or len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest) \
            or getattr(error, "code", None) == TRACE_CHANGED:
        return error
    try:
        if file_digest(path) == digest:
            return error  # the planned bytes: the error is theirs
        why = None
    except OSError as e:
        why = e.strerror or str(e)
    if why is None and " is outside " in str(error):
        why = str(error).split("\n", 1)[0].split(": error: ", 1)[-1]
    return changed(path, why)


def _blank(row: list[str]) -> bool:
    """Whether a record is a blank line (or only separators and spaces): skipped, before the header too."""
    return not row or all(not c.strip() for c in row)


def _header(reader) -> tuple[list[str] | None, int]:
    """The header, the first record that is not blank (the file's blank lines are skipped wherever they
    are: one before the header made the trace "empty"), and the line it starts on; None at the file's end."""
    while True:
        first = reader.line_num + 1
        header = next(reader, None)
        if header is None or not _blank(header):
            return header, first


def _case_note(names: list[str], missing: list[str]) -> str:
    """The note of a header that lacks columns it names in another case (``SESSION`` for ``session``):
    the column names are lower case, as the trace attributes are (an empty string when none is)."""
    lower = {n.lower(): n for n in names if n not in COLUMNS}
    told = [f"{lower[c]} for {c}" for c in missing if c in lower]
    if not told:
        return ""
    return f"; the column names are lower case ({', '.join(told)})"


def _separator_note(names: list[str]) -> str:
    """The note of a header of one field that holds the columns with another separator (a spreadsheet's
    ``;``, a tab, ``|``, spaces): a trace's fields are separated by commas; or with commas inside one pair
    of quotes (``"session,turn,…"``, a header quoted whole, which the error said lacked every column it
    shows); an empty string otherwise."""
    if len(names) != 1:
        return ""
    if sum(c.strip().lower() in COLUMNS for c in names[0].split(",")) >= 2:  # (a comma in a field: quoted)
        return f"; {_QUOTED_WHOLE.format(what='header', items='names')}"
    for sep, shown in ((";", "`;`"), ("\t", "tabs"), ("|", "`|`"), (" ", "spaces")):
        if sum(c.strip().lower() in COLUMNS for c in names[0].split(sep)) >= 2:
            return f"; the header is one field: a trace's fields are separated by commas, and this file's by {shown}"
    return ""


#: the note of a header or a row of one field whose commas are inside one pair of quotes (a line quoted whole)
_QUOTED_WHOLE = ("the {what} is one quoted field: its {items} and the commas between them are inside one pair of "
                 "quotes (write them unquoted, or each in quotes of its own)")


def _row_note(row: list[str], width: int) -> str:
    """The note of a row of one field that holds the row's values between commas inside one pair of quotes
    (``"0,1,20,4,1,0"``): the row quoted whole, which the error said was 1 field of ``width``."""
    if len(row) == 1 and width > 1 and len(row[0].split(",")) == width:
        return f"; {_QUOTED_WHOLE.format(what='row', items='values')}"
    return ""


def _read(path: str, reader, watched: _Watched) -> TraceCorpus:
    header, at_line = _header(reader)
    if header is None:
        raise _err(path, 1, 1, "the trace is empty (expected the header session,turn,new,out,think,forced)")
    names = [h.strip() for h in header]
    after = reader.line_num + 1  # the line after the header
    for k, name in enumerate(names):
        if name in COLUMNS and name in names[:k]:  # which of the two would be read is anybody's guess
            at = _field_starts(path, at_line, after - 1)[k]
            raise _err(path, at[0], at[1], f"the header names the column {name} twice")
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        from serq.files import text_utf16_note

        note = text_utf16_note("".join(header)) if at_line == 1 else ""
        if not note:
            note = _separator_note(names) or _case_note(names, missing)
        raise _err(path, at_line, 1, f"the header lacks the column(s) {', '.join(missing)} (expected "
                   f"session,turn,new,out,think,forced){note}")
    width = len(names)
    idx = [names.index(c) for c in COLUMNS]
    cells = itemgetter(*idx)
    # the six cells of every row, in the file's order, as doubles: the loop does no more per row than
    # this; the checks come after, on whole columns, and a malformed row is found by reading it again
    # float() reads more than serQ's numbers (1_000, +5, other scripts' digits, other whitespace): the rows
    # are read by float() alone while the bytes read hold nothing it takes beyond them (_Watched), and each
    # cell is checked as serQ reads it from the first row read after a byte that may be such (the words
    # inf, nan, infinity float() reads are not finite: the checks on whole columns find them)
    data = array("d")
    put = data.extend
    strict = False
    for row in reader:
        if len(row) == width:
            if strict or watched.odd:
                strict = True
                six = cells(row)
                ok = _plain(six)
            else:
                six, ok = cells(row), True
            if ok:
                try:
                    put(map(float, six))
                    continue
                except ValueError:
                    del data[len(data) - len(data) % 6:]
        if _blank(row):
            continue
        raise _first_error(path, width, idx) or _err(path, reader.line_num, 1, "malformed row")
    rows = len(data) // 6
    if not rows:  # at the end of the header's line: a line after it may not be there
        text = _source_line(path, after - 1)
        raise _err(path, after - 1, len(text or "") + 1, "the trace has no rows after its header")
    cols: list[array] = []
    for k in range(5, -1, -1):  # split the columns off one at a time: at most one more column is held
        cols.append(data[k :: k + 1])
        del data[k :: k + 1]
    del data
    sess, turn, new, out, think, forced = reversed(cols)
    del cols
    if not _plausible(sess, turn, new, out, think, forced):
        err = _first_error(path, width, idx)
        if err is not None:
            raise err
    # runs of rows of one session; the trace is grouped when no session has two runs and no run's turns
    # go down (then the rows need no reordering)
    index: dict[float, int] = {}
    run_sid, run_len = array("q"), array("q")
    grouped = True
    for s, run in groupby(sess):
        k = index.get(s)
        if k is None:
            k = index[s] = len(index)
        else:
            grouped = False
        run_sid.append(k)
        run_len.append(len(list(run)))
    del sess
    nsess = len(index)
    ids = array("d", index)  # the ids in order of first appearance: one a session
    del index
    if grouped:
        starts = array("q", accumulate(run_len, initial=0))
        down = compress(count(1), map(gt, turn, islice(turn, 1, None)))  # i: turn[i - 1] > turn[i]
        firsts = None
        for i in down:
            if firsts is None:
                firsts = set(starts)
            if i not in firsts:
                grouped = False
                break
    # the lists hold the only references, so _regroup can let each column go as it replaces it
    vals = [new, out, think, forced]
    held = [turn]
    del new, out, think, forced, turn
    if grouped:
        start = starts
    else:
        start = _regroup(run_sid, run_len, nsess, held, vals)
    del held, run_sid, run_len
    lazy = LazySessions(tuple(vals), start)
    sessions = lazy if rows > EAGER_ROWS else [lazy.turns(k) for k in range(nsess)]
    return TraceCorpus(path, sessions, rows, ids)


def _find_row(path: str, sid: float, k: int) -> tuple[int, str, str] | None:
    """Where the ``k``-th turn (from 0, in the order of turns) of the trace session whose id is ``sid`` is in
    ``path``: ``(line, the session cell, the turn cell)`` as written, or None when the file does not hold it
    (changed since it was read, gone). The file is read again (an error's path: the run keeps no line
    numbers and no turn column, 16 bytes a row)."""
    try:
        with _open(path) as f:
            reader = csv.reader(f, strict=True)
            header, _ = _header(reader)
            if header is None:
                return None
            names = [h.strip() for h in header]
            js, jt = names.index("session"), names.index("turn")
            found = []
            line = reader.line_num + 1
            for row in reader:
                if len(row) > max(js, jt) and not _blank(row):
                    try:
                        if float(row[js]) == sid:
                            found.append((float(row[jt]), len(found), line, row[js].strip(), row[jt].strip()))
                    except ValueError:
                        pass
                line = reader.line_num + 1
    except (OSError, ValueError, UnicodeDecodeError, LineTooLong, csv.Error):
        return None
    found.sort(key=itemgetter(0, 1))  # stably by turn, as the rows were ordered when read
    if not 0 <= k < len(found):
        return None
    return found[k][2:]


def replay_note(corpus: TraceCorpus, state, serial: int | None) -> str:
    """``\nTRACE:LINE:1: note: session N replays trace session ID, turn T: new …, out …, think …, forced …``,
    the trace's row quoted under it: the row whose values a run-time error of session N (``serial``) met, for
    a session replaying the trace (``state``, its ``[turns, next turn, trace session]``); "" for None. The
    session id and the turn are as the file writes them (the file is read again to find them, and the row's
    line); the values as the run read them. A session that has not reached its first ``turn`` is said to
    replay the trace session, before its first turn."""
    if state is None or not corpus.ids:
        return ""
    turns, nxt, i = state
    sid = corpus.ids[i]
    who = f"session {serial}" if serial is not None else "the session"
    path = corpus.path
    shown = shown_path(path)
    k = nxt - 1
    if k < 0:
        return f"\n{shown}: note: {who} replays the trace's session {show_number(sid)}, before its first turn"
    new, out, think, forced = turns[k]
    values = (f"new {show_number(new)}, out {show_number(out)}, think {show_number(think)}, "
              f"forced {show_number(forced)}")
    at = _find_row(path, sid, k)
    if at is None:  # the file no longer holds the row: its place in the session's turns
        return (f"\n{shown}: note: {who} replays the trace's session {show_number(sid)}, its turn {k + 1} "
                f"(counted in order of turns): {values}")
    line, sid_text, turn_text = at
    head = f"{shown}:{line}:1: note: {who} replays the trace's session {sid_text}, turn {turn_text}: {values}"
    text = _source_line(path, line)
    if text is None:
        return "\n" + head
    from serq.errors import quote_line

    text, _ = quote_line(text, 1)
    return f"\n{head}\n  {text}\n  ^"  # indented as a source line under an error is


#: the columns that identify (a session) and order (a turn): each value below 2**53 in size, where a
#: double holds every whole number, so that two values written apart are read apart. Read as doubles,
#: the sessions 9007199254740992 and 9007199254740993 (a trace of 64-bit ids) were one session, silently
#: replayed as one conversation of both sessions' turns.
_KEYS = ("session", "turn")
_EXACT = 2.0**53


def _plausible(sess, turn, new, out, think, forced) -> bool:
    """Whether every value is finite, ``new``, ``out``, ``think`` are not negative and ``session`` and
    ``turn`` within 2**53 (``_KEYS``), as far as whole columns tell (C loops): ``False`` when some value
    may not be (the rows are then read again)."""
    try:
        if not all(math.isfinite(math.fsum(c)) for c in (sess, turn, new, out, think, forced)):
            return False
    except (OverflowError, ValueError):  # a partial sum beyond the doubles, or inf + -inf
        return False
    return (min(new) >= 0 and min(out) >= 0 and min(think) >= 0
            and all(-_EXACT < min(c) and max(c) < _EXACT for c in (sess, turn)))


def _regroup(run_sid, run_len, nsess, held, vals) -> array:
    """Reorder the rows session by session (in the order sessions first appear), each session's stably
    by turn: ``vals`` (a list of columns) is reordered in place, ``held`` (``[turn]``) emptied; returns
    the start of each session's rows."""
    sid = array("q")
    for k, n in zip(run_sid, run_len):
        sid.extend(repeat(k, n))
    rows = len(sid)
    counts = array("q", bytes(8 * nsess))
    for k, n in zip(run_sid, run_len):
        counts[k] += n
    start = array("q", accumulate(counts, initial=0))
    del counts
    fill = array("q", start)
    perm = array("q", bytes(8 * rows))  # a stable counting sort by session
    for r, k in enumerate(sid):
        perm[fill[k]] = r
        fill[k] += 1
    del fill, sid
    turn = held.pop()
    for k in range(nsess):
        a, b = start[k], start[k + 1]
        part = perm[a:b]
        turns = [turn[r] for r in part]
        if any(map(gt, turns, islice(turns, 1, None))):
            perm[a:b] = array("q", [r for _, r in sorted(zip(turns, part), key=itemgetter(0))])
    del turn
    for j, col in enumerate(vals):
        vals[j] = None
        vals[j] = array("d", map(col.__getitem__, perm))
        del col
    return start
