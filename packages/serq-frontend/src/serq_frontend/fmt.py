"""``serq fmt``: one canonical layout for serQ source, comments kept.

The formatter works on tokens, not on the AST, so that every comment stays where it was. It keeps the
author's line breaks (a long header stays wrapped where it was wrapped) and normalises the rest:
indentation (two spaces a brace, four more on a continued line), the spaces between tokens (binary
operators spaced, none inside brackets, none before ``;`` or ``,``), one blank line at most between
statements, a trailing comments of consecutive lines aligned, no trailing blanks, one newline at the end. Whether
a name and its ``(`` are apart (``hold kv (1)``, ``min(a, b)``) is kept as written. The result is a
fixed point: formatting it again changes nothing.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*)
  | (?P<string>"[^"\n]*")
  | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op><=|>=|==|!=|&&|\|\||[-+*/%<>=!?:~;,.(){}\[\]])
  | (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<other>.)
""", re.VERBOSE)

_BINARY = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "=", "?", ":"}
_OPENERS = {"(", "["}
_CLOSERS = {")", "]"}


class Tok:
    __slots__ = ("kind", "text", "space_before", "unary")

    def __init__(self, kind: str, text: str, space_before: bool):
        self.kind = kind
        self.text = text
        self.space_before = space_before
        self.unary = False


def _lines(text: str) -> list[list[Tok]]:
    lines: list[list[Tok]] = [[]]
    space = False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "ws":
            space = True
            continue
        if kind == "nl":
            lines.append([])
            space = False
            continue
        lines[-1].append(Tok(kind, m.group(), space))
        space = False
    return lines


def _mark_unary(lines: list[list[Tok]]) -> None:
    prev: Tok | None = None
    for line in lines:
        for t in line:
            if t.kind == "comment":
                continue
            if t.text in ("-", "!", "~"):
                t.unary = prev is None or prev.text in _BINARY or prev.text in ("(", "[", ",", "{", ";", "}") \
                    or (prev.kind == "name" and prev.text in ("return", "in", "by")) or prev.unary
                if t.text in ("!", "~"):
                    t.unary = True
            prev = t


def _join(tokens: list[Tok]) -> str:
    out: list[str] = []
    prev: Tok | None = None
    for t in tokens:
        if prev is None:
            out.append(t.text)
            prev = t
            continue
        sp = True
        if t.kind == "comment":
            sp = True
        elif t.text in (";", ",", ")", "]", "."):
            sp = False
        elif prev.text in ("(", "[", ".") or prev.unary:
            sp = False
        elif t.text == "[":
            sp = False
        elif t.text == "(" and (prev.kind == "name" or prev.text in _CLOSERS):
            sp = t.space_before
        out.append((" " if sp else "") + t.text)
        prev = t
    return "".join(out)


def format_source(text: str) -> str:
    """The canonical layout of ``text`` (which should parse; the formatter does not check)."""
    lines = _lines(text)
    _mark_unary(lines)
    out: list[str] = []
    depth = 0
    paren = 0
    continued = False
    blank = 0
    for tokens in lines:
        if not tokens:
            blank += 1
            continue
        lead_close = 0
        for t in tokens:
            if t.text == "}":
                lead_close += 1
            else:
                break
        indent = max(0, depth - lead_close)
        cont = continued and lead_close == 0 and tokens[0].kind != "comment"
        if blank and out:
            out.append(("", None))
        blank = 0
        prefix = "  " * indent + ("    " if cont else "") + "  " * (paren if cont else 0)
        if tokens[-1].kind == "comment" and len(tokens) > 1:
            out.append((prefix + _join(tokens[:-1]), tokens[-1].text))
        else:
            out.append((prefix + _join(tokens), None))
        last = None
        for t in tokens:
            if t.kind == "comment":
                continue
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                depth = max(0, depth - 1)
            elif t.text in _OPENERS:
                paren += 1
            elif t.text in _CLOSERS:
                paren = max(0, paren - 1)
            last = t
        if last is not None:
            continued = not (last.text in (";", "{", "}") and paren == 0)
    # no trailing blank lines, one newline at the end
    while out and out[-1] == ("", None):
        out.pop()
    return "\n".join(_align(out)) + "\n" if out else ""


def _align(lines: list[tuple[str, str | None]]) -> list[str]:
    """Trailing comments of consecutive lines start in one column, two spaces after the longest code."""
    result: list[str] = []
    i = 0
    while i < len(lines):
        code, comment = lines[i]
        if comment is None:
            result.append(code)
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j][1] is not None:
            j += 1
        width = max(len(c) for c, _ in lines[i:j])
        for c, m in lines[i:j]:
            result.append(c.ljust(width) + "  " + str(m))
        i = j
    return result
