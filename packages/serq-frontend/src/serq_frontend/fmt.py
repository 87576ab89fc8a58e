"""``serq fmt``: one canonical layout for serQ source, comments kept.

The formatter works on tokens, not on the AST, so that every comment stays where it was. It keeps the
author's line breaks (a long header stays wrapped where it was wrapped) and normalises the rest:
indentation (two spaces a brace; a continued line four more, and two more for every bracket still open,
or deeper where it was written deeper relative to the line its statement starts on, so an argument
aligned under another stays aligned), the spaces between tokens (binary operators spaced, none inside
brackets, none before ``;`` or ``,``), one blank line at most between statements, the trailing comments
of consecutive lines aligned in one column (two spaces after the longest code, or the column they were
written aligned in when that is further right), no trailing blanks (a comment's included), one line end at
the end; the line ends are the text's own (CRLF throughout when its first line ends in CRLF, else LF: a
CRLF file kept its CRLF only after its comments, a mix of two). Whether a name and its ``(`` are apart (``hold kv (1)``, ``min(a, b)``) is kept as written. The ``;`` that may follow a
stage kind ending in ``}`` (``stage e : step { … }``, ``serve step { … }``) is left out, as
language.txt writes it. The result is a fixed point: formatting it again changes nothing.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*)
  | (?P<string>"[^"\n]*")
  | (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>@?[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op><=|>=|==|!=|&&|\|\||[-+*/%<>=!?:~;,.(){}\[\]])
  | (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<other>.)
""", re.VERBOSE)

_BINARY = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "=", "?", ":"}
_OPENERS = {"(", "["}
_CLOSERS = {")", "]"}


class Tok:
    __slots__ = ("kind", "text", "space_before", "unary", "col", "dropped")

    def __init__(self, kind: str, text: str, space_before: bool, col: int):
        self.kind = kind
        self.text = text
        self.space_before = space_before
        self.unary = False
        #: the column the token was written at (tabs expanded to 8)
        self.col = col
        self.dropped = False


def _advance(col: int, blank: str) -> int:
    """The column after ``blank`` written from column ``col``: ``len(("x" * col + blank).expandtabs(8))``
    in the time of ``blank`` alone. That expression built a string as long as the column for every run of
    blanks, so a long line (a generated program on one line) took time of the square of its length: 16 000
    statements on one line 3 s, 100 000 minutes. Like ``str.expandtabs``, a tab goes to the next multiple
    of 8 counted from the line's start or its last ``\r``, and every other character is one column."""
    if "\t" not in blank:
        return col + len(blank)
    since = col  # the column ``expandtabs`` counts tab stops from (no \r before the blanks: "x" * col)
    for ch in blank:
        if ch == "\t":
            step = 8 - since % 8
            col += step
            since += step
        else:
            col += 1
            since = 0 if ch == "\r" else since + 1
    return col


def _lines(text: str) -> list[list[Tok]]:
    lines: list[list[Tok]] = [[]]
    space = False
    col = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "ws":
            space = True
            col = _advance(col, m.group())
            continue
        if kind == "nl":
            lines.append([])
            space = False
            col = 0
            continue
        word = m.group()
        if kind == "comment":  # no trailing blanks, nor the \r of a CRLF line end (written again as the file's)
            word = word.rstrip(" \t\r\f\v")
        lines[-1].append(Tok(kind, word, space, col))
        col += len(m.group())
        space = False
    return lines


#: the words before ``step {`` that make it a stage kind: ``stage e : step {``, ``serve step {``,
#: ``nic step {``
_KIND_BEFORE = {":", "serve", "nic"}


def _drop_kind_semicolons(lines: list[list[Tok]]) -> None:
    """Mark the ``;`` right after the ``}`` of a ``step { … }`` stage kind as dropped (one canonical
    form: without it). Only ``stage …``, ``serve`` and ``nic`` take a
    kind before a ``;``, and the formatter is given source that parses, so a ``: NAME {`` of another
    construct (a queue's roles) is never followed by a ``;``."""
    toks = [t for line in lines for t in line if t.kind != "comment"]
    stack: list[bool] = []
    for i, t in enumerate(toks):
        if t.text == "{":
            stack.append(i >= 2 and toks[i - 1].text == "step" and toks[i - 2].text in _KIND_BEFORE)
        elif t.text == "}":
            kind = stack.pop() if stack else False
            if kind and i + 1 < len(toks) and toks[i + 1].text == ";":
                toks[i + 1].dropped = True


#: the serving forms, whose work follows the word (`tool -n + 20;`, language.txt §2 serving), and the fields
#: whose value follows the word (`cost -0.001 + 2e-5 * tokens;`, `horizon -(-10);`): a `-` after one of them
#: at a statement's start begins the value
_SERVING = ("prefill", "decode", "tool", "transfer")
_FIELDS = ("cap", "block", "budget", "cost", "chunk", "horizon", "warmup", "seed", "arrivals")


def _mark_unary(lines: list[list[Tok]]) -> None:
    prev: Tok | None = None
    before: Tok | None = None  # the token before prev
    for line in lines:
        for t in line:
            if t.kind == "comment":
                continue
            if t.text in ("-", "!", "~"):
                t.unary = prev is None or prev.text in _BINARY or prev.text in ("(", "[", ",", "{", ";", "}") \
                    or (prev.kind == "name" and prev.text in ("return", "in", "by")) or prev.unary \
                    or (prev.kind == "name" and (prev.text in _SERVING or prev.text in _FIELDS)
                        and (before is None or before.text in (";", "{", "}")))
                if t.text in ("!", "~"):
                    t.unary = True
            before, prev = prev, t


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
    """The canonical layout of ``text`` (which should parse; the formatter does not check). A byte-order
    mark an editor wrote first is kept first, and is no token of the layout (no code before the first
    line's first token, nor a statement that the next line continues)."""
    if text.startswith("\ufeff"):
        rest = format_source(text[1:])
        return "\ufeff" + rest if rest else ""
    lines = _lines(text)
    _mark_unary(lines)
    _drop_kind_semicolons(lines)
    out: list[tuple[str, str | None, int]] = []
    depth = 0
    paren = 0
    continued = False
    blank = 0
    # where the current statement's first line was written, and where it is written now
    start_written = start_out = 0
    for tokens in lines:
        if not tokens:
            blank += 1
            continue
        written = tokens[0].col
        tokens = [t for t in tokens if not t.dropped]
        if not tokens:  # a line that held only a dropped `;`
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
            out.append(("", None, 0))
        blank = 0
        if cont:
            width = max(2 * indent + 4 + 2 * paren, start_out + written - start_written)
        else:
            width = 2 * indent
            if tokens[0].kind != "comment":
                start_written, start_out = written, width
        prefix = " " * width
        if tokens[-1].kind == "comment" and len(tokens) > 1:
            out.append((prefix + _join(tokens[:-1]), tokens[-1].text, tokens[-1].col))
        else:
            out.append((prefix + _join(tokens), None, 0))
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
    while out and out[-1] == ("", None, 0):
        out.pop()
    # the file's line ends: CRLF throughout when its first line ends so, else LF (no string or comment
    # holds a line feed, so every one written is a line end)
    nl = "\r\n" if text[max(0, text.find("\n") - 1):].startswith("\r\n") else "\n"
    return nl.join(_align(out)) + nl if out else ""


def expression_form(text: str) -> str:
    """The canonical form of an expression's text (a definition's body given from outside, ``--def
    NAME=BODY``): its tokens as :func:`format_source` spaces them within a line, on one line and without its
    comments, so two texts that differ only in blanks, line breaks and comments have one form (``a+b``,
    `` a + b``, ``a +\n b // sum``: ``a + b``). A line break counts as a blank, which keeps a name and a
    ``(`` after it apart as written (``min (a, b)``), as the formatter keeps them. What a sweep keys its
    ``--def`` values by (serq_sweep, through the hook ``serq_sweep_definition_form``)."""
    lines = _lines(text.removeprefix("\ufeff"))
    for line in lines[1:]:
        if line:
            line[0].space_before = True
    _mark_unary(lines)
    return _join([t for line in lines for t in line if t.kind != "comment"])


def _align(lines: list[tuple[str, str | None, int]]) -> list[str]:
    """Trailing comments of consecutive lines start in one column: two spaces after the longest code, or,
    when they were written aligned in one column further right, that column."""
    result: list[str] = []
    i = 0
    while i < len(lines):
        code, comment, col = lines[i]
        if comment is None:
            result.append(code)
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j][1] is not None:
            j += 1
        width = max(len(c) for c, _, _ in lines[i:j]) + 2
        cols = {c for _, _, c in lines[i:j]}
        if j - i > 1 and len(cols) == 1:  # written aligned: keep that column where it is further right
            width = max(width, col)
        for c, m, _ in lines[i:j]:
            result.append(c.ljust(width) + str(m))
        i = j
    return result
