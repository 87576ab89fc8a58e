"""Text tables as a terminal shows them: the columns a cell takes on the screen, and rows aligned by them.

A name from an IR file may hold any printable character (serq_ir's validation refuses only those that
do not print), so a table padded by ``len`` falls out of line at a name in Chinese (each character two
columns wide on a terminal), with an emoji (two) or with a combining accent (``e`` and U+0301 are two code
points in one column). :func:`width` counts what a terminal shows: two columns for an East Asian wide or
full-width character (Unicode's ``W`` and ``F``, which covers the emoji), none for a combining mark
(categories ``Mn``, ``Me``, or a non-zero combining class) or a format character (``Cf``: a zero-width
joiner), one for everything else
(an ambiguous-width character as a western terminal shows it). Every table serQ prints (the text report,
``serq sweep --show``, ``serq compare``) is aligned by :func:`align`, and a diagnostic's caret placed
under its character by the same widths (``serq.errors.quote_line``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

__all__ = ["align", "width"]


def width(text: str) -> int:
    """The columns ``text`` takes on a terminal (see the module)."""
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.category(ch) in ("Mn", "Me", "Cf") or unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def align(rows: Sequence[Sequence[str]], *, left: int = 1, indent: str = "") -> list[str]:
    """``rows`` (the header first) as lines: the first ``left`` columns left-aligned, the others
    right-aligned, each as wide on the screen as its widest cell, columns two spaces apart, each line
    starting with ``indent`` and with no trailing spaces. A cell's characters that do not print are written as
    escapes (:func:`serq.errors.printable`: a line break as ``\\n``): a swept ``--def`` body may hold any
    character in a comment, and one with a line break split its row of ``serq sweep --show`` in two, one
    with an escape sequence drove the terminal."""
    if not rows:
        return []
    from .errors import printable

    rows = [[printable(c) for c in r] for r in rows]
    widths = [max(width(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = []
        for i, (c, w) in enumerate(zip(r, widths)):
            pad = " " * (w - width(c))
            cells.append(c + pad if i < left else pad + c)
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines
