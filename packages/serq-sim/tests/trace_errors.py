"""What the trace reader tells of a malformed trace, read back by the tests: its first line
(``FILE:LINE:COL: error: …``), once the rest of the message is checked to be the line it names quoted,
with a caret under the column, as a source's mistake is told."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import serq_sim
from serq_sim.trace import load_trace


def _shown(ch: str) -> str:
    """A character as a quoted line shows it (docs/language.md): a tab a space, a byte that is not UTF-8 (read
    as a lone surrogate) and a control character below 0x80 ``\\xNN``, any other that does not print
    ``\\uNNNN``."""
    if ch == "\t":
        return " "
    if ch.isprintable():
        return ch
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x80 else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def first_line_checked(message: str, path: str) -> str:
    """``message``'s first line, after checking its other two: line LINE of the file at ``path`` (lines
    split at ``\\r\\n``, ``\\r`` or ``\\n``, as the CSV reader splits them; ``""`` past the last) indented by
    two (as a source's line), its characters that do not print as escapes (:func:`_shown`), a caret under column COL. A line of more than 200
    characters is quoted in part: the part is checked to be a piece of the line, the caret under COL's
    character."""
    head, *rest = message.split("\n")
    m = re.match(rf"{re.escape(path)}:(\d+):(\d+): error: ", head)
    assert m, head
    line, col = int(m.group(1)), int(m.group(2))
    text = Path(path).read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogateescape")
    lines = re.split(r"\r\n|\r|\n", text)
    raw = lines[line - 1] if line <= len(lines) else ""
    src = "".join(map(_shown, raw))
    assert len(rest) == 2, message
    quoted, caret = rest
    assert quoted.startswith("  ") and caret.startswith("  ") and caret.rstrip().endswith("^"), message
    if len(raw) <= 200:
        assert quoted == f"  {src}", (quoted, src)
        assert caret == "  " + " " * len("".join(map(_shown, raw[: col - 1]))) + "^", message
    else:  # 200 characters of it, each cut marked ...
        part = quoted[2:]
        under = len(caret) - 3  # where the caret is in the part
        cut = part.startswith("...")
        part, under = (part[3:], under - 3) if cut else (part, under)
        part = part.removesuffix("...")
        start = col - 1 - under  # where the part starts in the line
        assert len(part) == 200 and (start > 0) == cut, message
        assert 0 <= start and src[start: start + len(part)] == part, message
        assert quoted.endswith("...") == (start + 200 < len(src)), message
    return head


def trace_error(path: str) -> str:
    """The first line of the error :func:`load_trace` raises for the trace at ``path`` (the rest checked by
    :func:`first_line_checked`)."""
    with pytest.raises(serq_sim.SimError) as e:
        load_trace(path)
    return first_line_checked(str(e.value), path)
