"""The host's errors. A user's mistake is an exception whose message is what the user sees."""

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar


class SerqError(Exception):
    """Base of serQ's errors."""


class UserError(SerqError):
    """A mistake in what the user gave (a program, a file, a flag): printed without a traceback, exit 1.

    Any exception class with a true ``serq_user_error`` attribute is treated the same way, so parts
    that do not depend on the host (serq-ir) can raise their own.
    """

    serq_user_error = True

    def __init__(self, message: str):
        if not message.startswith("error:") and ": error:" not in message.split("\n", 1)[0]:
            message = f"error: {message}"
        super().__init__(message)


class UsageError(UserError):
    """A value of a command-line flag (or argument) that the flag's own form refuses, or flags that do not go
    together: ``--set g=1_000``, ``--set g``, a sweep's list ``1,,2`` or range, ``--seeds 5..1``, ``--find``'s
    condition, ``--over``'s range, an unknown ``--format``. Printed as a :class:`UserError` is (one line
    naming the flag and the value), status 2, as click's own usage errors (a value a flag's type refuses:
    ``--horizon nan``, ``--slo ttft=x``): the one rule of every serq command, which ``serq.cli`` applies to
    every exception whose class has a true ``serq_usage_error``. A value that is well formed but does not fit
    the program (a ``--set`` of a ``let`` the program does not have, ``--arrivals`` of a workload that takes
    none, a ``--show`` of a figure it has not) is an error of the program and that value: a
    :class:`UserError`, status 1. To a caller of the Python API it is a :class:`UserError` like any other."""

    serq_usage_error = True


class OutOfMemory(MemoryError):
    """Memory ran out where ``where`` says (``compiling the program, before its run began``, ``holding 3
    samples (…)``): serq's one line says it after "out of memory", in place of the hint of the command's own
    bound (serq_sim.memguard.hint: ``--max-samples`` only where a run held samples)."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


class PluginError(SerqError):
    """A plugin registered something wrongly (a name two plugins claim, say)."""

    serq_user_error = True


def printable(text: str) -> str:
    """``text`` as a one-line message may print it: control and other unprintable characters (a newline
    would split the message, an escape sequence would drive the terminal) written as ``\\xNN`` /
    ``\\uNNNN`` escapes."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _escaped(ch: str) -> str:
    """A character :func:`printable` escapes: a byte that is not UTF-8, read as a lone surrogate
    (``surrogateescape``), as ``\\xNN``, its value, as a quoted line (:func:`shown_char`) and a file's name
    (serq.files.shown_name) show it, not as the surrogate (``\\udcff``); any other as Python's ``ascii``
    writes it (``\\n``, ``\\x1b``, ``\\u200b``)."""
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:
        return f"\\x{o - 0xDC00:02x}"
    return ascii(ch)[1:-1]


def printable_lines(text: str) -> str:
    """A message of one or more lines as the terminal is given it: each line :func:`printable` (a file name
    or a string of a program someone sent, quoted in the message, cannot drive the terminal), the line
    breaks kept."""
    if text.isprintable():
        return text
    return "\n".join(printable(line) for line in text.split("\n"))


#: the most characters of a source line a diagnostic quotes
QUOTE_WIDTH = 200

#: the most characters of a file's name a message prints (:func:`shown_path`): a longer one is cut around
#: ``…`` (the system opens no name of more than 4 096 bytes; one of 240 characters is rare and shown whole)
PATH_WIDTH = 240


def shown_path(path: object) -> str:
    """A file's name as every message prints it, in ``FILE:LINE:COL:``, ``FILE: error:`` and the words of a
    message alike: :func:`printable` (a line break in a name typed on the command line split the message's
    first line in two), and one longer than :data:`PATH_WIDTH` characters cut as :func:`clipped` cuts
    (``serq run --trace`` printed a name of 5 000 characters whole, where ``serq sweep --trace`` cut it)."""
    return clipped(printable(str(path)), PATH_WIDTH)

#: the most characters of a text (a program's name, a library's) a message quotes between backquotes
QUOTED_WIDTH = 120


def clipped(text: str, width: int = QUOTED_WIDTH) -> str:
    """``text`` as a message quotes it: a longer one than ``width`` characters as its first and last
    characters around a ``…`` (a name of megabytes is not repeated whole)."""
    return text if len(text) <= width else f"{text[: width // 2]}…{text[-(width // 2 - 1):]}"


def clipped_quotes(message: str) -> str:
    """``message`` with each text it quotes between backquotes :func:`clipped`: a program's names are of any
    length, and a message quoted them whole (``unknown name `x…```, and again in its ``did you mean``: a
    line of 200 000 characters for a name of 100 000), where the source line beneath it is cut to
    :data:`QUOTE_WIDTH`. The backquotes pair up from the message's start, as it is read."""
    if len(message) <= QUOTED_WIDTH + 2 or "`" not in message:
        return message
    import re

    return re.sub(r"`([^`\n]*)`", lambda m: f"`{clipped(m.group(1))}`" if len(m.group(1)) > QUOTED_WIDTH
                  else m.group(0), message)


def _width(ch: str) -> int:
    """The columns a terminal gives one character of a quoted line: 2 for a wide one (CJK, most emoji), 0
    for a combining mark (it sits on the character before it), 1 for any other: :func:`serq.layout.width`,
    the rule the tables serQ prints are aligned by."""
    if ch.isascii():
        return 1
    from .layout import width

    return width(ch)


def _caret(shown: str, col: int) -> int:
    """The display column (1-based) of character ``col`` of ``shown``: the widths of the characters before
    it, and for a combining mark that of the character it sits on."""
    i = col - 1
    while 0 < i < len(shown) and _width(shown[i]) == 0:
        i -= 1
    before = shown[:i]
    return (len(before) if before.isascii() else sum(_width(ch) for ch in before)) + 1


def shown_char(ch: str) -> str:
    """How a quoted line shows a character that does not print (:func:`quote_span`; a tab is a space): a byte
    that is not UTF-8, read as a lone surrogate (``surrogateescape``: U+DC80 to U+DCFF), as ``\\xNN``, its
    value; an ASCII control character as ``\\xNN`` too (its byte and its code point are one number); any
    other as ``\\uNNNN`` (``\\UNNNNNNNN`` past U+FFFF), its code point. A byte that is not UTF-8 is 0x80 or
    more, so ``\\x80`` is that byte and ``\\u0080`` the character U+0080, whose UTF-8 is two bytes."""
    if ch == "\t":
        return " "
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:
        return _escaped(ch)
    if o < 0x80:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def quote_line(text: str, col: int) -> tuple[str, int]:
    """A source line as a diagnostic quotes it above its caret, and the caret's column (1-based) in it: a tab
    is a space and any other character that does not print an escape (:func:`shown_char`: ``\\x00``, ``\\xff``
    for a byte that is not UTF-8; so a line of a program someone sent cannot drive the terminal, stays one
    line, and shows which bytes it holds), and a line longer than :data:`QUOTE_WIDTH` is cut to that many
    characters around ``col``, ``...`` marking each cut. ``col`` counts characters; the caret's column counts
    the columns a terminal shows them in (an escape its length, a wide character two, a combining mark none:
    :func:`_caret`), so the caret stands under its character (under the escape's backslash)."""
    return quote_span(text, 0, len(text), col)


def quote_span(text: str, start: int, end: int, col: int) -> tuple[str, int]:
    """:func:`quote_line` of the line ``text[start:end]``, copying no more of it than is shown: how every input's
    line is quoted (a source, a JSON file, a CSV file), a line of 256 MB as cheaply as a short one."""
    n = end - start
    col = max(1, min(col, n + 1))
    lo = 0 if n <= QUOTE_WIDTH else max(0, min(col - 1 - QUOTE_WIDTH // 2, n - QUOTE_WIDTH))
    hi = min(n, lo + QUOTE_WIDTH)
    shown = text[start + lo: start + hi]
    col -= lo
    if not shown.isprintable():
        parts = [ch if ch.isprintable() else shown_char(ch) for ch in shown]
        if sum(map(len, parts)) > QUOTE_WIDTH:  # escapes widen it: the characters around the caret's that fit
            a, b, i = col - 1, col - 1, col - 1
            width, grew = 0, True
            while grew:
                grew = False
                if b < len(parts) and width + len(parts[b]) <= QUOTE_WIDTH:
                    width, b, grew = width + len(parts[b]), b + 1, True
                if a > 0 and (b > i or b == len(parts)) and width + len(parts[a - 1]) <= QUOTE_WIDTH:
                    width, a, grew = width + len(parts[a - 1]), a - 1, True
            parts, lo, hi, col = parts[a:b], lo + a, lo + b, col - a
        col = sum(map(len, parts[: col - 1])) + 1  # (an escape is ASCII: one column a character)
        shown = "".join(parts)
    if lo > 0:
        shown, col = "..." + shown, col + 3
    if hi < n:
        shown += "..."
    return shown, _caret(shown, col)


#: the texts a program was compiled from that are no files, by the name its spans give them (``--def m``:
#: a definition's body given on the command line), while a command that compiled them runs the program
#: (:func:`texts_given`); the IR keeps no text, so the command that has it says it
_GIVEN_TEXTS: ContextVar[Mapping[str, str | None] | None] = ContextVar("serq_given_texts", default=None)


@contextmanager
def texts_given(texts: Mapping[str, str | None]) -> Iterator[None]:
    """Within, a span in one of ``texts`` (its name as the spans give it, to its text) is quoted as a span in a
    file is (:func:`source_excerpt`): the body of ``--def m`` under a run-time error there, as its compile's
    errors quote it. A name mapped to None is quoted from nothing (two texts a message names alike)."""
    token = _GIVEN_TEXTS.set({**(_GIVEN_TEXTS.get() or {}), **texts})
    try:
        yield
    finally:
        _GIVEN_TEXTS.reset(token)


#: a diagnostic's first line or a note's: ``FILE:LINE:COL: error: …`` (:func:`located`)
_HEADER = re.compile(r"(.+?):([0-9]+):([0-9]+): (?:error|note|warning): ")


def texts_quoted(message: str, texts: Mapping[str, str | None]) -> str:
    """``message`` (:func:`located`'s text of an error, written where ``texts`` were not given: a worker of a
    sweep, which runs IR and has no ``--def`` body) with the line of each of its places in one of ``texts``
    (:func:`texts_given`'s names and texts) quoted under it, with its caret, as :func:`located` quotes it where
    they are given: the process that compiled the program has the text, the error comes back to it with the
    place. A place already quoted is left as it is."""
    if not texts or not message:
        return message
    lines = message.split("\n")
    out: list[str] = []
    with texts_given(texts):
        for i, line in enumerate(lines):
            out.append(line)
            m = _HEADER.match(line)
            if m is None or m.group(1) not in texts:
                continue
            excerpt = source_excerpt(m.group(1), int(m.group(2)), int(m.group(3)))
            if excerpt and lines[i + 1: i + 2] != excerpt.split("\n")[1:2]:
                out.append(excerpt[1:])
    return "\n".join(out)


#: the JSON path of each span serq_ir.codec.placed gave a node of an IR file that had none (the span the
#: object's own line and column in the file): :func:`located` names the path after the message, as a fault
#: of the file is told (``… - at '$.stages[0].kind.cost'``). Written only by :func:`place_spans`, which keeps
#: the places of the last :data:`PLACED_FILES` files read (at most :data:`PLACED_MOST` places between them).
PLACED: dict[tuple, str] = {}

#: the spans :data:`PLACED` holds of each file, by the file's name, the file read last the last
_PLACED_OF: dict[str, list[tuple]] = {}

#: the most files whose placed spans :data:`PLACED` keeps, and the most spans it keeps between them: the spans
#: of the files read before them are let go (the file read last keeps its spans however many they are)
PLACED_FILES = 1024
PLACED_MOST = 1_000_000


def place_spans(name: str, places: Mapping[tuple, str]) -> None:
    """Keep ``places`` (each span serq_ir.codec.placed gave a node of the IR file ``name``, with its JSON path) in
    :data:`PLACED`, in place of what was kept of a file of that name before (its spans, read again or changed
    since, are this reading's). PLACED grew with every file without spans a process read, never cleared (a
    script reading 10 000 such files kept every node's place of each); it keeps the files read last, at most
    :data:`PLACED_FILES` of them and :data:`PLACED_MOST` places, and lets the others go: a program read before
    them is told its run-time errors at its nodes' places without the JSON path after them, its step stages'
    placed budgets count as written, and ``serq ir`` of it writes those places as spans (every command reads
    fewer files than that: a sweep of IR files reads one a program)."""
    for span in _PLACED_OF.pop(name, ()):
        PLACED.pop(span, None)
    PLACED.update(places)
    _PLACED_OF[name] = list(places)
    while len(_PLACED_OF) > 1 and (len(_PLACED_OF) > PLACED_FILES or len(PLACED) > PLACED_MOST):
        for span in _PLACED_OF.pop(next(iter(_PLACED_OF))):
            PLACED.pop(span, None)

#: the folders a span's relative file is looked for in, in order, while a command runs a program it read from
#: an IR file (:func:`spans_read_from`); None: as the spans were written, from the current folder and beside the
#: program's source
_SPAN_FOLDERS: ContextVar[tuple[str, ...] | None] = ContextVar("serq_span_folders", default=None)


@contextmanager
def spans_read_from(folders: tuple[str, ...] | None) -> Iterator[None]:
    """Within, a span's relative file is quoted from the first of ``folders`` that has it (serq_sim.errors.span_folders:
    an IR file's spans name files relative to the folder it was compiled in, which the run may not be in), and from
    no other place; None changes nothing."""
    token = _SPAN_FOLDERS.set(folders)
    try:
        yield
    finally:
        _SPAN_FOLDERS.reset(token)


def line_bounds(text: str, line: int) -> tuple[int, int] | None:
    """Where line ``line`` (1-based; lines as the parser counts them, each ended by ``\\n``) of ``text`` begins
    and ends (before its ``\\n``), or None past its end: found without copying the text (a source of 16 MiB
    held for quoting, ``serq_frontend.compile(source=…)``'s, was split into a list of its lines for every place
    a message quoted)."""
    if line < 1:
        return None
    start, need, size = 0, line - 1, len(text)
    while need:
        stop = min(size, start + _LINES_STRETCH)
        count = text.count("\n", start, stop)
        if count < need and stop < size:  # (the line is further on: every line ending here is passed at once)
            need, start = need - count, stop
            continue
        end = text.find("\n", start)
        if end < 0:
            return None
        need, start = need - 1, end + 1
    end = text.find("\n", start)
    return start, size if end < 0 else end


#: how many characters :func:`line_bounds` counts the line endings of at once
_LINES_STRETCH = 1 << 16


def _excerpt(text: str, line: int, col: int) -> str:
    """The excerpt of line ``line`` of a source's ``text`` at ``col`` (:func:`source_excerpt`), ``""`` past its end;
    no more of the text is copied than is shown (:func:`quote_span`)."""
    bounds = line_bounds(text, line)
    if bounds is None:
        return ""
    start, end = bounds
    while end > start and text[end - 1] == "\r":  # (as the parser reads a line ended by \r\n)
        end -= 1
    if line == 1 and text.startswith("\ufeff"):  # (the byte-order mark is no character of the line)
        start += 1
    shown, col = quote_span(text, start, end, col)
    return f"\n  {shown}\n  {' ' * (col - 1)}^"  # indented as the frontend's diagnostics are


def source_excerpt(file: str, line: int, col: int, base: str | None = None) -> str:
    """The source line and a caret under ``col``, or ``""`` when the file cannot be read or is no serQ
    source: only a regular file whose name ends in ``.sq`` is quoted, so an IR whose span names another
    file (``/etc/passwd``, a key, a trace) does not have its lines printed (docs/security.md). It is read
    as every source is (:func:`serq.files.read_input`, at most ``MAX_SOURCE`` bytes): one an IR's span
    names that is larger (a sparse file of 1 GiB) is not quoted, and was read whole and split into lines
    (6 s and 2 GB). ``base``: the file the program was loaded from, beside which a relative span's file is
    looked for too; a program read from an IR file, in the folders :func:`spans_read_from` names instead
    (serq_sim.errors.span_folders). A span in a text :func:`texts_given` holds (``--def m``, the command line's) is quoted
    from that text."""
    given = _GIVEN_TEXTS.get()
    if given is not None and file in given:
        text = given[file]
        return "" if text is None else _excerpt(text, line, col)
    if not file.endswith(".sq"):
        return ""
    from pathlib import Path

    from .files import MAX_SOURCE, read_input

    folders = _SPAN_FOLDERS.get()
    if folders is not None and not Path(file).is_absolute():
        candidates = [Path(folder) / file for folder in folders]
    else:
        candidates = [Path(file)]
        if base:
            candidates.append(Path(base).parent / file)
    for p in candidates:
        try:
            data = read_input(p, limit=MAX_SOURCE)
        except (OSError, ValueError):  # missing, no regular file, too large
            continue
        return _excerpt(data.decode("utf-8", errors="surrogateescape"), line, col)
    return ""


#: how many expansions a message notes at most: the innermost half and the outermost half, the ones between
#: them said in one line (a use 40 definitions deep was noted 40 times, 120 lines)
MAX_NOTES = 8


def noted(uses: tuple | list) -> tuple[list, int, list]:
    """The uses of definitions a message notes of ``uses`` (the innermost first): the innermost ones, how
    many it leaves out after them, and the outermost ones (:data:`MAX_NOTES` in all)."""
    if len(uses) <= MAX_NOTES:
        return list(uses), 0, []
    half = MAX_NOTES // 2
    return list(uses[:half]), len(uses) - 2 * half, list(uses[len(uses) - half:])


def left_out(count: int) -> str:
    """The note that stands for ``count`` expansions :func:`noted` leaves out."""
    return f"note: … {count} expansions more, each used inside the next, left out …"


def located(span, body: str, base: str | None = None, kind: str = "error") -> str:
    """``FILE:LINE:COL: error: BODY`` and the source line with a caret (:func:`source_excerpt`) for a
    ``span`` (an IR span: ``file``, ``line``, ``col``); without one, ``BASE: error: BODY`` (``base``, the
    program's file) or ``error: BODY``. A span in a definition's body that a use expanded (its ``via``, the
    uses, the innermost first) is followed by a note at each use, as a compile-time error there has them:
    ``FILE:LINE:COL: note: in the expansion of `NAME`, used here``, the line and a caret. ``kind``: ``note``
    for a place a message notes after its own line (a plugin's failure at a pool or a stage: serq_sim.guards)."""
    body = clipped_quotes(body)
    if span is None:
        head = f"{shown_path(base)}: " if base else ""
        return f"{head}{kind}: {body}"
    if PLACED and isinstance(span, tuple) and span in PLACED:  # a node of an IR file without spans
        first, nl, rest = body.partition("\n")
        body = f"{first} - at '{clipped(PLACED[span])}'{nl}{rest}"
    # the files by :func:`shown_path`, as a compile's messages name them (a run's error at a program of a long
    # name printed it whole, where serq check cut it)
    out = f"{shown_path(span.file)}:{span.line}:{span.col}: {kind}: {body}" + source_excerpt(span.file, span.line,
                                                                                               span.col, base)
    inner, skipped, outer = noted(getattr(span, "via", ()))
    for uses in (inner, outer):
        if uses is outer and skipped:
            out += f"\n{left_out(skipped)}"
        for use in uses:
            out += (f"\n{shown_path(use.file)}:{use.line}:{use.col}: note: in the expansion of "
                    f"`{printable(clipped(use.name))}`, used here" + source_excerpt(use.file, use.line, use.col, base))
    return out


def place(span) -> str:
    """``FILE:LINE:COL`` of an IR span on one line, and for a span in a definition's body each use that expanded
    it, the innermost first: ``lib.sq:3:5 in `f` used at p.sq:9:3`` (what :func:`located` writes as its notes,
    said short, for a note that names a place within its own line: a partial report's, a list of runs)."""
    out = f"{shown_path(span.file)}:{span.line}:{span.col}"
    inner, skipped, outer = noted(getattr(span, "via", ()))
    for uses in (inner, outer):
        if uses is outer and skipped:
            out += f" … {skipped} uses more …"
        for use in uses:
            out += f" in `{printable(clipped(use.name))}` used at {shown_path(use.file)}:{use.line}:{use.col}"
    return out


def number_of(n: float, singular: str, plural: str | None = None) -> str:
    """``singular`` when the count ``n`` is 1, else ``plural`` (``singular`` and an ``s`` by default): the word
    a message writes after a count, ``1 point`` and ``2 points``, ``1 session waits`` and ``3 sessions wait``
    (``number_of(n, "waits", "wait")``), where messages wrote ``point(s)`` and ``session(s)``. The count is
    the caller's to show, as it shows its numbers."""
    return singular if n == 1 else (singular + "s" if plural is None else plural)


def did_you_mean(name: object, candidates: object) -> str:
    """`` (did you mean `x`?)`` with the candidate closest to an unknown ``name`` (a misspelling, or the
    name in another case: ``--set r=2`` of a ``let R``, ``--slo TTFT=1``), or nothing when none is close:
    the one rule of every door that takes a name of the user's (a flag's, a look-up of the Python API's).
    A candidate equal to ``name`` but for case comes first; otherwise the closest by
    :func:`difflib.get_close_matches`, compared case-folded (``TTFT`` was nothing like ``ttft`` to it)."""
    close = _closest(name, candidates)
    return f" (did you mean `{close}`?{_look_alike(name, close)})" if close is not None else ""


def _look_alike(name: object, offered: str | None) -> str:
    """What a did-you-mean adds when the name given is not ASCII and the name it offers is: the first character
    that is not, by its code point and Unicode name (`` its `а` is U+0430 CYRILLIC SMALL LETTER A``). A name
    pasted with a look-alike letter (Cyrillic ``а`` for ``a``, a zero-width space) was offered the name it
    looks like and no word of why they differ: ``--set lаmbda: the program has no `let lаmbda` (did you mean
    `lambda`?)``, two names that print the same. Nothing otherwise."""
    if not isinstance(name, str) or offered is None or name.isascii() or not offered.isascii():
        return ""
    shown, code = named_char(next(c for c in name if not c.isascii()))
    return f" the name given is not ASCII: its `{shown}` is {code}"


def named_char(ch: str) -> tuple[str, str]:
    """A character a message names, not ASCII: ``(shown, code)``, ``shown`` the character itself where it
    prints and is no combining mark, else its escape (``\\u200b``), and ``code`` its code point and Unicode
    name, ``U+0430 CYRILLIC SMALL LETTER A`` (the code point alone where it has no name). A byte that is not
    UTF-8, which Python reads as a lone surrogate (a file's name, an argument), is no character: ``\\xff``
    and ``the byte 0xFF, not UTF-8``, not the surrogate's U+DCFF. The words of a look-alike letter in a
    did-you-mean (:func:`did_you_mean`) and of an unexpected character in a program (serq_frontend.parser)."""
    import unicodedata

    shown = ch if ch.isprintable() and not unicodedata.combining(ch) else _escaped(ch)
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:
        return shown, f"the byte 0x{o - 0xDC00:02X}, not UTF-8"
    name = unicodedata.name(ch, "")
    return shown, f"U+{ord(ch):04X}{' ' + name if name else ''}"


#: the most entries of a folder :func:`missing_file_note` reads for a name like the one not found
MISSING_SCAN = 10_000


def missing_file_note(path: object) -> str:
    """What "cannot read: No such file or directory" adds when the file's name is not ASCII and a file of its
    folder, whose name is, is like it: its name, with the look-alike character (`` (did you mean `mg1.sq`? the
    name given is not ASCII: its `ԛ` is U+051B CYRILLIC SMALL LETTER QA)``). A name pasted with a look-alike
    letter was told only that no such file is there, beside the file it prints as. Nothing otherwise (an ASCII
    name, a folder that cannot be listed); at most :data:`MISSING_SCAN` entries of the folder are read."""
    import os

    try:
        given = os.fspath(path)  # type: ignore[arg-type]
    except TypeError:
        return ""
    if not isinstance(given, str):
        return ""
    name = os.path.basename(given)
    if not name or name.isascii():
        return ""
    names = []
    try:
        with os.scandir(os.path.dirname(given) or ".") as entries:
            for k, entry in enumerate(entries):
                if k >= MISSING_SCAN:
                    break
                if entry.name.isascii():
                    names.append(entry.name)
    except (OSError, ValueError):
        return ""
    return did_you_mean(name, names)


def _closest(name: object, candidates: object) -> str | None:
    """The candidate :func:`did_you_mean` offers for ``name``, or None."""
    import difflib

    if not isinstance(name, str):
        return None
    folded: dict[str, str] = {}
    for c in candidates:  # type: ignore[attr-defined]
        if isinstance(c, str) and c != name:  # (the first in sorted order of those one case-folding apart)
            k = c.casefold()
            if c < folded.get(k, c + "\0"):
                folded[k] = c
    key = name.casefold()
    if key in folded:
        return folded[key]
    if len(key) == 2:
        # a two-letter word one letter off (`tp` for `to`, `st` for `at`, `om` for `on`) is no close match to
        # difflib (half its letters differ); the one candidate of two letters one substitution or swap away is
        # offered, and none when two are (`bt`: `at` or `by`)
        near = one_edit(key, [c for c in folded if len(c) == 2])
        if near is not None:
            return folded[near]
    pool = list(folded)
    if len(pool) > CLOSE_POOL:
        pool = _likeliest(key, pool, CLOSE_POOL)
    close = difflib.get_close_matches(key, pool, n=1)
    return folded[close[0]] if close else None


#: the most candidates :func:`did_you_mean` compares a name with by difflib: more are narrowed first
#: (:func:`_likeliest`). difflib compares each in turn: a name not among the 300 000 figures of a wide table
#: took seconds to be told unknown (60 s on a busy machine), the table's figures all alike in length and
#: letters. Fewer are compared whole, so what is offered among them is what it always was.
CLOSE_POOL = 2_000


def _likeliest(key: str, names: list[str], most: int) -> list[str]:
    """The at most ``most`` of ``names`` (case-folded, distinct) most likely to be the closest to ``key`` by
    difflib: of those whose length difflib's ratio allows (at least 0.6: each length at most 7/3 of the
    other's), the neighbours of ``key`` in the names sorted as they read (those sharing its longest beginning)
    and sorted as they read from the end (its longest ending): a misspelling keeps either the one or the other
    of a long name (``stages.s12345.througput``). Every name when they are no more than ``most``."""
    import bisect

    n = len(key)
    names = [c for c in names if 3 * len(c) <= 7 * n and 3 * n <= 7 * len(c)]
    if len(names) <= most:
        return names
    half = most // 4  # (a quarter on each side of it, in each order)
    ahead = sorted(names)
    i = bisect.bisect_left(ahead, key)
    picked = dict.fromkeys(ahead[max(0, i - half):i + half])
    behind = sorted(c[::-1] for c in names)
    j = bisect.bisect_left(behind, key[::-1])
    picked.update(dict.fromkeys(c[::-1] for c in behind[max(0, j - half):j + half]))
    return list(picked)


def one_edit(word: str, candidates: object) -> str | None:
    """The one candidate of ``word``'s length that differs from it by one letter or by two neighbours
    swapped, or None when none does or several do."""
    found = None
    for c in candidates:  # type: ignore[attr-defined]
        if not isinstance(c, str) or len(c) != len(word) or c == word:
            continue
        diff = [i for i, (a, b) in enumerate(zip(word, c)) if a != b]
        if len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == c[diff[1]]
                              and word[diff[1]] == c[diff[0]]):
            if found is not None and found != c:
                return None
            found = c
    return found


def knob_hint(name: object, lets: object, definitions: object, takes: str = "let", given: object = None) -> str:
    """The did-you-mean of a name a flag takes that the program lacks, the one rule of ``--set``, ``--def``,
    ``serq sweep --over`` and ``--zip``: the closest of what the flag takes (``takes``: ``"let"`` for
    ``--set`` and ``--over``, ``"definition"`` for ``--def``, ``"either"`` for ``--zip``, whose names are the
    swept ones, ``lets`` and ``definitions`` those set and those defined) and the closest of the other kind,
    said to be one with the flag that sets it (``given``, serq.loading.given_or_option: ``--def rate``, or
    ``defs['rate']`` for the Python API): `` (did you mean `lam` or `rate`, an expression definition given
    with --def rate?)``. ``--def rte`` suggested only definitions and ``--set`` only lets (a definition said
    to be one without its flag), and a name of the other kind that the user meant was left unsaid."""
    from .loading import given_or_option

    given = given_or_option(given)
    lets = [c for c in lets if isinstance(c, str)]  # type: ignore[attr-defined]
    defs = [c for c in definitions if isinstance(c, str) and c not in lets]  # type: ignore[attr-defined]
    own, other = ((lets, defs) if takes == "let" else (defs, lets) if takes == "definition"
                  else ([*lets, *defs], []))
    said = []
    mine = _closest(name, own)
    if mine is not None:
        said.append(f"`{mine}`")
    theirs = _closest(name, other)
    if theirs is not None:
        kind, flag = ("an expression definition", "def") if theirs in defs else ("a let", "set")
        said.append(f"`{theirs}`, {kind} given with {given(flag, clipped(theirs))}")
    return f" (did you mean {' or '.join(said)}?{_look_alike(name, mine or theirs)})" if said else ""
