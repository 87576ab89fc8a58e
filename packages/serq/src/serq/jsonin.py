"""JSON a user gave (a step trace, a scenario), read by Python's ``json`` with two guards: an integer must
have a float's range (at most 308 digits), as every number a program reads does, and no object may give a
key twice. Without the first a number such as ``1e400`` written out in digits was read as a Python int
that no float conversion takes (an ``OverflowError`` deep in the code that used it) and one of more than
4 300 digits was refused by the int parser with a message about Python's limits; without the second
``{"budget": 48, …, "budget": 1}`` was read as its last value, silently (which of the two the writer
meant is anybody's guess; a program that gives a setting twice is refused)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = ["JSONDuplicateKey", "JSONNumberError", "at_byte", "check_keys", "fault_at", "first_twice", "located",
           "located_at", "loads", "number_at", "read_json", "read_text", "value_at"]

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


class JSONDuplicateKey(ValueError):
    """An object of a user's JSON that gives a key twice: ``key``, and the character offsets of the second
    (``pos``) and of the first (``first``) in the text."""

    def __init__(self, key: str, pos: int, first: int):
        super().__init__(f"the key {json.dumps(key)} is given twice in one object")
        self.key, self.pos, self.first = key, pos, first

    def message(self, text: str, name: str) -> str:
        """The error located at the second key of ``text`` (:func:`located_at`), naming where the first is."""
        start = text.rfind("\n", 0, self.first) + 1
        where = f"line {text.count(chr(10), 0, self.first) + 1}, column {self.first - start + 1}"
        return located_at(text, name, self.pos, f"{self} (first at {where})")


#: a JSON string as a regular expression (``str`` or, encoded, ``bytes``): runs of plain characters and
#: escapes, each repeat possessive, so that matching a string of n characters takes no memory in n
STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'


class _Twice(Exception):
    """Raised by :func:`_pairs` out of ``json.loads``: some object gives a key twice."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Twice
    return d


@functools.cache
def _tokens() -> re.Pattern[str]:
    """The tokens that tell where a key is: strings and the structural characters (numbers and literals are
    passed over). A string is matched by possessive runs (:data:`STRING`): ``"(?:[^"\\]|\\.)*"`` kept a
    backtracking point a character, so a file of a 50 MB string and a key given twice took 6 GB to place it.
    Compiled on first use, as this module's other patterns are: only an error's place needs them."""
    return re.compile(STRING + r'|[{}\[\]:]')


def first_twice(text: str) -> tuple[str, int, int] | None:
    """The first key (in the text's order) an object of the JSON ``text`` gives twice, as ``(key, offset of
    the second, offset of the first)``, or None. A scan of the text's tokens: what places the error once
    ``json.loads`` has found that there is one."""
    stack: list[dict[str, int] | None] = []  # per open bracket: the keys of an object, None for an array
    last = None  # the string token just before
    for m in _tokens().finditer(text):
        tok = m.group()
        c = tok[0]
        if c == '"':
            last = m
            continue
        if c == "{":
            stack.append({})
        elif c == "[":
            stack.append(None)
        elif c in "}]":
            if stack:
                stack.pop()
        elif stack and stack[-1] is not None and last is not None:  # a ':' after a string: a key
            try:
                key = json.loads(last.group())
            except ValueError:  # pragma: no cover - json.loads read the text
                key = last.group()
            seen = stack[-1]
            if key in seen:
                return key, last.start(), seen[key]
            seen[key] = last.start()
        last = None
    return None


def _twice(text: str) -> JSONDuplicateKey:
    found = first_twice(text)
    if found is None:  # pragma: no cover - json.loads found one
        return JSONDuplicateKey("?", 0, 0)
    return JSONDuplicateKey(*found)


def loads(data: str | bytes) -> Any:
    """``json.loads(data)`` refusing an integer beyond a float's range (:class:`JSONNumberError`, a
    ``ValueError``) and an object that gives a key twice (:class:`JSONDuplicateKey`, a ``ValueError``);
    ``NaN`` and ``Infinity`` are read as Python's json reads them, for the caller to refuse where a finite
    number goes."""
    try:
        if isinstance(data, str) and "0" * (MAX_DIGITS + 1) not in data.translate(_ZEROS):
            # no run of more than MAX_DIGITS digits: no integer _int would refuse
            return json.loads(data, object_pairs_hook=_pairs)
        return json.loads(data, parse_int=_int, object_pairs_hook=_pairs)
    except _Twice:
        raise _twice(data if isinstance(data, str) else data.decode("utf-8", errors="replace")) from None


@functools.cache
def _walk() -> re.Pattern[str]:
    """The tokens :func:`value_at` walks: strings, the structural characters and the runs of a number or a
    literal."""
    return re.compile(STRING + r'|[{}\[\],:]|[^\s{}\[\],:"]+')


@functools.cache
def _bracket() -> re.Pattern[str]:
    """From where it is tried, the next bracket outside a string (group 1), every string and every other
    character before it passed over in one match."""
    return re.compile(rf'(?:{STRING}|[^"\[\]{{}}]++)*+([\[\]{{}}])')


def _skip(text: str, start: int) -> int | None:
    """The offset just past the array or object that opens at ``start`` of the JSON ``text``, or None when
    it does not close: a scan of its brackets outside strings, which builds nothing of what it passes over
    (``json.JSONDecoder.raw_decode`` decoded every value before the one an error is about, most of the time
    of a refusal of a large IR file: 100 000 pools before ``$.pools[100000]``)."""
    depth, pos = 0, start
    match = _bracket().match
    while True:
        m = match(text, pos)
        if m is None:
            return None
        pos = m.end()
        if m.group(1) in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos


#: how deep the arrays and objects of an array's element may nest for :func:`_elements` to pass it over
_ELEMENT_DEPTH = 24


@functools.cache
def _element() -> str:
    """A regular expression of one JSON value whose arrays and objects nest at most :data:`_ELEMENT_DEPTH`
    deep (a text JSON has read: a bracket closes what the last one opened), passed over without a group."""
    inner = rf'(?:{STRING}|[^"\[\]{{}}]++)*+'  # what a container holds with no container in it
    for _ in range(_ELEMENT_DEPTH - 1):
        inner = rf'(?:{STRING}|[^"\[\]{{}}]++|[\[{{]{inner}[\]}}])*+'
    return rf'(?:{STRING}|[\[{{]{inner}[\]}}]|[^\s,\[\]{{}}":]++)'


@functools.cache
def _elements(count: int) -> re.Pattern[str]:
    """``count`` elements of an array and the comma after each (``count`` a power of two: a few patterns)."""
    return re.compile(rf'(?>{_element()}\s*,\s*){{{count}}}')


def _pass_elements(text: str, start: int, gap: int) -> tuple[int, int] | None:
    """``(n, offset)``: the most elements, a power of two at most ``gap``, that one match passes over from the
    element at ``start`` of an array of the JSON ``text`` (one nesting deeper than :data:`_ELEMENT_DEPTH` is
    none of them), and the offset of the element after them; None when not even the first is passed over.
    The elements before the one on a path are so passed over in a few matches of a regular expression, not
    one by one."""
    n = 1 << (gap.bit_length() - 1)
    while n:
        m = _elements(n).match(text, start)
        if m is not None:
            return n, m.end()
        n >>= 1
    return None


def value_at(text: str, path: tuple, *, key: bool = False) -> int | None:
    """The character offset in the JSON ``text`` of the value at ``path`` (object keys and array indices from
    the top: ``("requests", 3, "prompt")``; ``()`` is the whole document), or with ``key`` of the key that
    names it (the last of ``path``), or None when the text has no such value: where an error about a value of
    a user's JSON is located. An array or object off the path (a request before the third, say) is passed
    over by its brackets (:func:`_skip`), not token by token and not decoded."""
    target = list(path)
    depth = len(target)
    stack: list[list] = []  # per open container: [is an object, its key or index now, a key comes next]
    pos, n = 0, len(text)
    walk = _walk().search
    while pos < n:
        m = walk(text, pos)
        if m is None:
            return None
        tok, start = m.group(), m.start()
        pos = m.end()
        c = tok[0]
        top = stack[-1] if stack else None
        if top is not None and top[0] and top[2]:  # an object before a key (or its closing brace)
            if c == '"':
                try:
                    top[1] = json.loads(tok)
                except ValueError:
                    return None
                if key and len(stack) == depth and [e[1] for e in stack] == target:
                    return start
            elif c == ":":
                top[2] = False
            elif c == "}":
                stack.pop()
            continue
        if c == ",":
            if top is not None:
                if top[0]:
                    top[2] = True
                else:
                    top[1] += 1
            continue
        if c in "}]":
            if stack:
                stack.pop()
            continue
        if c == ":":
            continue
        # a value starts here
        here = [e[1] for e in stack]
        if not key and here == target:
            return start
        if (top is not None and not top[0] and len(here) <= depth and type(want := target[len(here) - 1]) is int
                and want > top[1] and here[:-1] == target[: len(here) - 1]):
            # an element before the one on the path: those before it passed over a run at a time
            passed = _pass_elements(text, start, want - top[1])
            if passed is not None:
                top[1] += passed[0]
                pos = passed[1]
                continue
        if len(here) < depth and here == target[: len(here)]:  # on the way to the target: look inside
            if c == "{":
                stack.append([True, None, True])
            elif c == "[":
                stack.append([False, 0, False])
            continue
        if c in "{[":  # off the path: the whole value passed over at once
            end = _skip(text, start)
            if end is None:
                return None
            pos = end
    return None


@functools.cache
def _long_int() -> re.Pattern[str]:
    """A string, or an integer of more digits than :data:`MAX_DIGITS` (what :func:`number_at` looks for)."""
    return re.compile(STRING + rf"|-?[0-9]{{{MAX_DIGITS + 1},}}")


def number_at(text: str) -> int | None:
    """The character offset of the first integer of more than :data:`MAX_DIGITS` digits outside a string of the
    JSON ``text`` (the one :func:`loads` refuses), or None."""
    for m in _long_int().finditer(text):
        if m.group()[0] != '"':
            return m.start()
    return None


def check_keys(text: str) -> None:
    """Refuse (:class:`JSONDuplicateKey`) JSON ``text`` (JSON another reader has read) in which an object
    gives a key twice."""
    try:
        json.loads(text, object_pairs_hook=_pairs)
    except _Twice:
        raise _twice(text) from None


def _message(name: str, line: int, col: int, message: str, text: str, start: int, end: int, at: int) -> str:
    """``name:line:col: error: message`` (the name :func:`serq.errors.printable`: a file's name may hold a line
    break), then the line ``text[start:end]`` quoted with a caret under its character
    ``at`` as a source's line is (:func:`serq.errors.quote_span`: a character that does not print escaped, a line
    longer than 200 characters cut around the column with ``...``, the caret under a wide character's columns),
    indented as a source's diagnostic indents it."""
    from .errors import quote_span, shown_path

    shown, caret = quote_span(text, start, end, at)
    return f"{shown_path(name)}:{line}:{col}: error: {message}\n  {shown}\n  {' ' * (caret - 1)}^"


def located(text: str, name: str, line: int, col: int, message: str, *, first: int = 1) -> str:
    """``name:line:col: error: message``, then line ``line`` of ``text`` (lines end at ``\\n``, as
    :class:`json.JSONDecodeError` counts them; ``text``'s first line is line ``first`` of the file) quoted,
    at most 200 characters of it around ``col``, with a caret under column ``col``: how a mistake in a
    user's JSON is told (a scenario, a step trace)."""
    start = 0
    for _ in range(line - first):  # the line's start, found without splitting the text (a copy of it, and a
        i = text.find("\n", start)  # string per line)
        if i < 0:
            start = len(text)
            break
        start = i + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return _message(name, line, col, message, text, start, end, col)


def located_at(text: str, name: str, pos: int, message: str) -> str:
    """:func:`located` at the character offset ``pos`` of ``text`` (``json.JSONDecodeError.pos``)."""
    pos = max(0, min(pos, len(text)))
    start = text.rfind("\n", 0, pos) + 1
    return located(text, name, text.count("\n", 0, pos) + 1, pos - start + 1, message)


def at_byte(data: bytes, name: str, offset: int, message: str) -> str:
    """:func:`located` at byte ``offset`` of ``data`` (bytes that are not UTF-8 shown as ``\\xNN``,
    :func:`serq.errors.shown_char`; the column counts characters): where a byte of a file that is not UTF-8 is. Only the line up to the byte and the
    400 bytes either side of it are decoded."""
    start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    end = data.find(b"\n", offset)
    end = len(data) if end < 0 else end
    if end > start and data[end - 1: end] == b"\r":
        end -= 1
    lo = max(start, offset - 400)
    near = data[lo: max(lo, min(end, offset + 400))].decode("utf-8", errors="surrogateescape")
    near_col = len(data[lo:offset].decode("utf-8", errors="surrogateescape")) + 1
    return _message(name, line, col, message, near, 0, len(near), near_col)


def read_text(path: str, what: str = "a JSON file", *, file_first: bool = False) -> str:
    """A user's JSON file as text: read as UTF-8 whatever the locale, a byte-order mark skipped (JSON readers
    may ignore one, RFC 8259); a file that cannot be read, one of more than :data:`serq.files.MAX_JSON`
    bytes (``what`` it is names it), or a byte that is not UTF-8 (located at its line and column, the line
    quoted with a caret), is a :class:`serq.errors.UserError`. ``file_first``: a file that cannot be read is
    said as ``FILE: error: cannot read: …``, in the form of the located errors (``FILE:LINE:COL: error: …``),
    for a command whose every message names the file first (``serq fit``); else ``error: FILE: cannot
    read: …``, as a program's."""
    from .errors import UserError, shown_path
    from .files import MAX_JSON, not_utf8, read_input

    try:
        data = read_input(path, limit=MAX_JSON, what=what)
    except OSError as e:
        why = e.strerror or e
        raise UserError(f"{shown_path(path)}: error: cannot read: {why}" if file_first else
                        f"{shown_path(path)}: cannot read: {why}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(at_byte(data, path, e.start, not_utf8(data[e.start], data[:4]))) from None


def read_json(path: str, what: str = "a JSON file", check: Any = None) -> Any:
    """A user's JSON document (``what`` it is: ``"a scenario"``), read by the one rule of every JSON file serq
    takes: :func:`read_text` (size bound, UTF-8, a byte-order mark skipped), then :func:`loads` (no key given
    twice, no integer beyond a float's range). An empty file, text that is not JSON, a key given twice, an
    integer beyond a float's range and JSON nested too deeply are each one :class:`serq.errors.UserError`,
    located at its line and column with the line quoted where there is one.

    ``check``: a function of the document that raises an exception naming what is wrong with a value of it;
    one whose exception has a ``json_path`` (a path as :func:`value_at` takes it; ``json_key`` true: the
    fault is the key itself) is located there, at the value's line and column with the line quoted and a
    caret, as a JSON mistake is (a scenario's ``"prompt": -5`` was told by its JSON path alone)."""
    from .errors import UserError, shown_path

    text = read_text(path, what)
    if not text.strip():
        raise UserError(located(text, path, 1, 1, f"the file is empty ({what} is a JSON object)"))
    try:
        doc = loads(text)
    except json.JSONDecodeError as e:
        raise UserError(located_at(text, path, e.pos, f"not JSON: {e.msg}")) from None
    except JSONNumberError as e:
        at = number_at(text)
        raise UserError(f"{shown_path(path)}: error: {e}" if at is None else located_at(text, path, at, str(e))) from None
    except JSONDuplicateKey as e:  # json kept the last: which the writer meant is anybody's guess
        raise UserError(e.message(text, path)) from None
    except RecursionError:  # json.loads recurses a frame per level of [ or {: at the document's start
        raise UserError(located_at(text, path, len(text) - len(text.lstrip()), f"not {what}: JSON nested too deeply")
                        ) from None
    if check is not None:
        try:
            check(doc)
        except Exception as e:
            if getattr(e, "json_path", None) is None or not getattr(e, "serq_user_error", False):
                raise
            raise UserError(fault_at(text, path, e)) from None
    return doc


def fault_at(text: str, path: str, e: Exception) -> str:
    """The message of ``e``, a fault of a value of the JSON ``text`` of the file ``path`` whose ``json_path``
    (and ``json_key``) says where: located at the value's line and column, the line quoted with a caret, or
    ``path: message`` when the text has no such value. The one form of such a fault, found reading the file
    (:func:`read_json`'s ``check``) or later (a scenario's request that did not finish in its run)."""
    from .errors import shown_path

    at = value_at(text, tuple(e.json_path), key=bool(getattr(e, "json_key", False)))
    return f"{shown_path(path)}: {e}" if at is None else located_at(text, path, at, str(e))
