"""JSON a user gave (a step trace, a scenario), read by Python's ``json`` with one guard: an integer must
have a float's range (at most 308 digits), as every number a program reads does. Without it a number such
as ``1e400`` written out in digits was read as a Python int that no float conversion takes (an
``OverflowError`` deep in the code that used it) and one of more than 4 300 digits was refused by the int
parser with a message about Python's limits."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JSONNumberError", "at_byte", "located", "loads", "read_text"]

#: the most digits an integer in a user's JSON may have (10**308 < the largest float < 10**309)
MAX_DIGITS = 308


class JSONNumberError(ValueError):
    """An integer in a user's JSON beyond the range of a float."""


def _int(text: str) -> int:
    digits = len(text) - (text[:1] == "-")
    if digits > MAX_DIGITS:
        shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]}"
        raise JSONNumberError(f"the integer {shown} ({digits} digits) is beyond the range of a number "
                              f"(at most {MAX_DIGITS} digits)")
    return int(text)


#: every digit as 0, so that a run of digits is a run of 0s (str.translate and a substring search: a
#: hundredth of what a call of _int for every integer of a scenario file costs)
_ZEROS = str.maketrans("123456789", "000000000")


def loads(data: str | bytes) -> Any:
    """``json.loads(data)`` refusing an integer beyond a float's range (:class:`JSONNumberError`, a
    ``ValueError``); ``NaN`` and ``Infinity`` are read as Python's json reads them, for the caller to
    refuse where a finite number goes."""
    if isinstance(data, str) and "0" * (MAX_DIGITS + 1) not in data.translate(_ZEROS):
        return json.loads(data)  # no run of more than MAX_DIGITS digits: no integer _int would refuse
    return json.loads(data, parse_int=_int)


def located(text: str, name: str, line: int, col: int, message: str) -> str:
    """``name:line:col: error: message``, then line ``line`` of ``text`` (lines end at ``\\n``, as
    :class:`json.JSONDecodeError` counts them) quoted, at most 200 characters of it around ``col``, with
    a caret under column ``col``: how a mistake in a user's JSON is told (a scenario, a step trace)."""
    lines = text.split("\n")
    src = lines[line - 1].rstrip("\r") if 0 < line <= len(lines) else ""
    src = "".join(" " if ch == "\t" else ch if ch.isprintable() and ch != "\ufffd" else "?" for ch in src)
    shown = col
    if len(src) > 200:  # one long line: the 100 characters either side of the fault
        lo = max(0, col - 101)
        src, shown = src[lo: col + 99], col - lo
    return f"{name}:{line}:{col}: error: {message}\n    {src}\n    {' ' * (shown - 1)}^"


def at_byte(data: bytes, offset: int) -> tuple[str, int, int]:
    """The text of ``data`` (bytes that are not UTF-8 as U+FFFD) and the line and column (in characters) of
    its byte ``offset``: where to place a message about a byte of a file that is not UTF-8."""
    start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return data.decode("utf-8", errors="replace"), line, col


def read_text(path: str) -> str:
    """A user's JSON file as text: read as UTF-8 whatever the locale, a byte-order mark skipped (JSON readers
    may ignore one, RFC 8259); a file that cannot be read, or a byte that is not UTF-8 (located at its line
    and column, the line quoted with a caret), is a :class:`serq.errors.UserError`."""
    from .errors import UserError
    from .files import read_input

    try:
        data = read_input(path)
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        shown, line, col = at_byte(data, e.start)
        raise UserError(located(shown, path, line, col, f"the file is not UTF-8 text (byte 0x{data[e.start]:02X})")
                        ) from None
