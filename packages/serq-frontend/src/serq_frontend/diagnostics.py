"""Diagnostics: where a piece of source is, and the one exception a compile raises.

A message reads as a C compiler's does::

    prog.sq:12:5: error: unknown stage `egine`
      run egine (1);
          ^
    prog.sq:30:3: note: in the expansion of `vllm_request`, used here
      vllm_request(reqs, kv, engine, prompt, o, t0);
      ^
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from serq.errors import did_you_mean  # noqa: F401 - the one rule of a near name, here for the front end's modules


@dataclass(frozen=True, slots=True)
class Pos:
    """A place in a source file (1-based). ``uses`` are the uses of definitions (or queue entries) this
    place was expanded at, the outermost first: a link ``(use, name, inner)``, ``inner`` the link of the
    use it was expanded at inside ``name``'s body (``None``: none)."""

    file: str
    line: int
    col: int
    uses: tuple[Pos, str, Any] | None = None

    def at(self) -> str:
        from serq.errors import shown_path

        return f"{shown_path(self.file)}:{self.line}:{self.col}"

    def seen_from(self, other: Pos) -> str:
        """This place as a message at ``other`` names it: ``line:col`` in ``other``'s file, its file too in
        another (a library's: ``…/lib/vllm.sq:155:7``)."""
        return f"{self.line}:{self.col}" if self.file == other.file else self.at()

    def expanded(self, use: Pos, name: str) -> Pos:
        """This position as seen through one more expansion, at ``use``, of the definition ``name`` (one
        link: each node of a body is expanded at every use around it, however deep the uses nest)."""
        return Pos(self.file, self.line, self.col, (use, name, self.uses))

    def notes(self) -> list[tuple[Pos, str]]:
        """``(use, name)`` of every expansion, the innermost first, each use followed by the expansions
        its own place was seen through."""
        return uses_of(self.uses)


def uses_of(link: tuple[Pos, str, Any] | None) -> list[tuple[Pos, str]]:
    """``(use, name)`` of every expansion of a place whose uses are ``link`` (:attr:`Pos.uses`), as
    :meth:`Pos.notes` gives them: the innermost first, each use followed by the expansions its own place
    was seen through (what a compile-time error notes, and the linker writes in the IR's spans)."""
    links = []
    while link is not None:
        links.append(link)
        link = link[2]
    out: list[tuple[Pos, str]] = []
    for use, name, _ in reversed(links):
        out.append((use, name))
        out.extend(use.notes())
    return out


class CompileError(Exception):
    """A program that does not parse or link. ``str(e)`` is the whole diagnostic."""

    serq_user_error = True

    def __init__(self, message: str, pos: Pos | None = None, *, rendered: str | None = None):
        self.message = message
        self.pos = pos
        super().__init__(rendered if rendered is not None else message)

    @property
    def line(self) -> int | None:
        return self.pos.line if self.pos else None

    @property
    def col(self) -> int | None:
        return self.pos.col if self.pos else None


class Sources:
    """The text of every file a compile read, for the source lines under a message."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}

    def add(self, name: str, text: str) -> None:
        self.texts[name] = text
        self._lines.pop(name, None)

    def line(self, name: str, n: int) -> str | None:
        lines = self._lines.get(name)
        if lines is None:
            text = self.texts.get(name)
            if text is None:
                return None
            lines = self._lines[name] = text.split("\n")
        if 1 <= n <= len(lines):
            return lines[n - 1].rstrip("\r")
        return None


def _excerpt(sources: Sources | None, pos: Pos) -> list[str]:
    text = sources.line(pos.file, pos.line) if sources else None
    if text is None:
        return []
    from serq.errors import quote_line

    text, col = quote_line(text, pos.col)
    return [f"  {text}", "  " + " " * (col - 1) + "^"]


def render(message: str, pos: Pos | None, sources: Sources | None, *, name: str = "<source>",
           kind: str = "error") -> str:
    """``FILE:LINE:COL: error: MESSAGE`` (``kind``: ``warning``), the source line, a caret, and a note per
    expansion. A name the message quotes is cut to a width (:func:`serq.errors.clipped_quotes`)."""
    from serq.errors import clipped, clipped_quotes, left_out, noted

    message = clipped_quotes(message)
    if pos is None:
        from serq.errors import shown_path

        return f"{shown_path(name)}: {kind}: {message}"
    out = [f"{pos.at()}: {kind}: {message}", *_excerpt(sources, pos)]
    inner, skipped, outer = noted(pos.notes())  # (at most serq.errors.MAX_NOTES, as a run-time error's)
    for notes in (inner, outer):
        if notes is outer and skipped:
            out.append(left_out(skipped))
        for use, name in notes:
            out.append(f"{use.at()}: note: in the expansion of `{clipped(name)}`, used here")
            out.extend(_excerpt(sources, use))
    return "\n".join(out)


class Reporter:
    """Raises :class:`CompileError` with the rendered diagnostic."""

    def __init__(self, sources: Sources, name: str = "<source>"):
        self.sources = sources
        self.name = name

    def error(self, pos: Pos | None, message: str) -> CompileError:
        return CompileError(message, pos, rendered=render(message, pos, self.sources, name=self.name))

    def warn(self, pos: Pos, message: str) -> None:
        """``FILE:LINE:COL: warning: MESSAGE``, the line and a caret, on stderr: the compile goes on. (The
        compile cache keeps what a compile writes on stderr and writes it again on a hit.)"""
        import sys

        from serq.errors import printable_lines

        if sys.stderr is not None:
            sys.stderr.write(printable_lines(render(message, pos, self.sources, name=self.name, kind="warning"))
                             + "\n")

    def noted(self, e: CompileError, pos: Pos, note: str) -> CompileError:
        """``e`` with one more note at its end, ``FILE:LINE:COL: note: NOTE``, the line and a caret (an
        error in a library, noted with the ``use`` that read it)."""
        lines = [str(e), f"{pos.at()}: note: {note}", *_excerpt(self.sources, pos)]
        return CompileError(e.message, e.pos, rendered="\n".join(lines))

    def in_library(self, e: CompileError, pos: Pos, note: str) -> CompileError:
        """``e`` noted, as :meth:`noted` does, with the ``use`` at ``pos`` that read the library it is in: the
        notes of a chain of libraries, each using the next, are at most serq.errors.MAX_NOTES, the innermost
        and the outermost, the ones between said in one line (an error 1 000 libraries down was noted 1 000
        times, 3 000 lines)."""
        from serq.errors import noted

        before, uses = getattr(e, "before_libraries", str(e)), [*getattr(e, "libraries", ()), (pos, note)]
        inner, skipped, outer = noted(uses)
        lines = [before]
        for part in (inner, outer):
            if part is outer and skipped:
                lines.append(f"note: … {skipped} libraries more, each used by the next, left out …")
            for at, text in part:
                lines += [f"{at.at()}: note: {text}", *_excerpt(self.sources, at)]
        out = CompileError(e.message, e.pos, rendered="\n".join(lines))
        out.before_libraries, out.libraries = before, uses
        return out


def strip_bom(text: str) -> str:
    """``text`` without the UTF-8 byte-order mark an editor may write first (as a trace file's is skipped):
    it is no character of the program, so the first line's columns count from what follows it."""
    return text[1:] if text.startswith("\ufeff") else text


def decode_source(data: bytes, name: str) -> str:
    """The text of a .sq file's bytes, UTF-8. A byte that is not UTF-8 is one error at its line and column,
    the line quoted with the bytes that are not UTF-8 as ``\\xNN`` (serq.errors.shown_char). A byte-order mark at the start is not
    part of the text (``strip_bom``)."""
    try:
        return strip_bom(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        before = data[: e.start]
        line = before.count(b"\n") + 1
        start = before.rfind(b"\n") + 1
        col = len(data[start: e.start].decode("utf-8")) + 1
        end = data.find(b"\n", e.start)
        text = data[start: len(data) if end < 0 else end].decode("utf-8", errors="surrogateescape")
        sources = Sources()
        sources.add(name, "\n" * (line - 1) + text)
        from serq.files import not_utf8

        message = not_utf8(data[e.start], data[:4])
        pos = Pos(name, line, col)
        raise CompileError(message, pos, rendered=render(message, pos, sources, name=name)) from None


def check_unicode(text: str, name: str) -> None:
    """Refuse a text handed over in memory (``compile(source=…)``, a ``--def`` body) that holds a lone
    surrogate, at its line and column, as :func:`decode_source` refuses a byte of a file that is not UTF-8.
    Python gives a command-line argument's bytes that are not UTF-8 as such surrogates (``--def 's=1 //
    \\xff'``): the body compiled (in a comment, or a string), and the ``--def`` the JSON report and a
    sweep's table record ended the run (or the sweep, after every run) in a ``UnicodeEncodeError``."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
        return
    except UnicodeEncodeError as e:
        i = e.start
    code = ord(text[i])
    before = text[:i]
    line = before.count("\n") + 1
    col = i - (before.rfind("\n") + 1) + 1
    message = (f"the text is not UTF-8 (byte 0x{code - 0xDC00:02X})" if 0xDC80 <= code <= 0xDCFF
               else f"the text holds U+{code:04X}, a lone surrogate, which is no character")
    sources = Sources()
    sources.add(name, text)
    pos = Pos(name, line, col)
    raise CompileError(message, pos, rendered=render(message, pos, sources, name=name))
