"""A syntax error at the end of a large source is placed as fast as the parse got there.

The hints of a syntax error (serq_frontend.parser.syntax_error) read the tokens before the error again for
each question they ask: seven times for a plain unexpected token, a Python step for every blank line and
comment on the way, and every hint that placed a line counted the lines before it one by one. A source of
15 MiB of 700 000 lets ending in `run s (1 +);` took 101 s and 1.3 GB to be refused, where its parse took 56 s
and 0.6 GB; 15 MiB of blank lines before the error, 59 s (the parse 0.4 s). Within one syntax error each
offset's tokens are now read once, a run of blanks and comments is one step, and a line's offset is found
by counting newlines in blocks."""

from __future__ import annotations

import random

import pytest
import serq_frontend
from serq_frontend import parser

pytestmark = pytest.mark.timeout(60)

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { BODY }\nrun { horizon 5; }\n"

#: a statement body with a syntax error, each told by another hint (the messages are the short program's)
ERRORS = {
    "operand": "run s (1 +);",
    "semicolon": "set x = 1\nset y = 2;",
    "else": "set x = 1; else { set y = 1; }",
    "assignment": "x = 1;",
    "two names": "run s (min(now now, 2));",
    "while": "while (now > 1) { set x = 1; }",
    "parenthesis": "run s 1;",
    "block semicolon": "branch (now > 1) { set x = 1; };",
    "unclosed": "run s (1);\n",
}


def _message(source: str) -> str:
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=source)
    return str(info.value)


def _shifted(message: str, lines: int) -> str:
    """``message`` with every line number of the form ``L:C`` moved ``lines`` down (as after ``lines``
    blank lines put before the program)."""
    import re

    return re.sub(r"\b(\d+):(\d+)\b", lambda m: f"{int(m.group(1)) + lines}:{m.group(2)}", message)


class _Counting:
    """The scanner's pattern, counting the characters its finditer is asked to read."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.read = 0

    def finditer(self, text, pos=0, endpos=None):
        end = len(text) if endpos is None else min(endpos, len(text))
        self.read += max(end - pos, 0)
        return self.pattern.finditer(text, pos, end)


@pytest.mark.parametrize("name", sorted(ERRORS))
@pytest.mark.parametrize("before", ["\n", "// a comment\n", "let a = 1;\n"])
def test_after_many_lines_the_message_is_the_short_programs_and_the_text_is_read_once(name, before, monkeypatch):
    body = ERRORS[name]
    program = PROGRAM.replace("BODY", body)
    if name == "unclosed":
        program = program.replace("run s (1);\n }", "run s (1);\n")
    short = _message(program)
    lines = 5_000
    prefix = before * lines if before != "let a = 1;\n" else "".join(f"let a{i} = 1;\n" for i in range(lines))
    counting = _Counting(parser._scanner())
    monkeypatch.setattr(parser, "_scanner", lambda: counting)
    long = _message(prefix + program)
    assert long == _shifted(short, lines)
    # the text up to the error is read once (a hint may read the rest of the file once, for a definition)
    assert counting.read <= 2 * len(prefix + program), (counting.read, len(prefix + program))


def test_the_tokens_are_freed_when_the_message_is_made():
    _message("\n" * 10 + PROGRAM.replace("BODY", "run s (1 +);"))
    assert getattr(parser._SCANNED, "tokens", None) is None and getattr(parser._SCANNED, "text", None) is None


def _tokens_one_by_one(text: str, offset: int) -> list[tuple[str, str, int, int]]:
    """serq fmt's tokens of ``text[:offset]``, blanks, line ends and comments left out, line by line: the
    reading the syntax messages were written against."""
    from serq_frontend.fmt import _TOKEN

    out, line, start = [], 1, 0
    for m in _TOKEN.finditer(text, 0, offset):
        kind = m.lastgroup or "other"
        if kind == "nl":
            line, start = line + 1, m.end()
        elif kind not in ("ws", "comment"):
            out.append((kind, m.group(), line, m.start() - start + 1))
    return out


def test_the_tokens_before_an_offset_are_the_ones_read_one_by_one():
    rng = random.Random(30)
    pieces = ["\n", " ", "\t", "\r\n", "// c \"q\" //\n", "//", "x", "ab_1", "@k", "12", "1.5e3", ".5", '"s // t"',
              '"open', "(", ")", "{", "}", ";", "<=", "&&", "|", "#", "é", "\f", "\v"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 60)))
        for offset in {0, len(text), rng.randrange(0, len(text) + 1)}:
            assert parser._tokens_before(text, offset) == _tokens_one_by_one(text, offset), (text, offset)


def test_the_offset_of_a_line_and_column_is_counted_right_across_blocks():
    rng = random.Random(3)
    # lines of lengths around the 64 KiB block the newlines are counted in, and many empty ones
    lengths = [0] * 70_000 + [65_535, 65_536, 1, 131_071, 0, 0, 5] + [rng.randrange(0, 9) for _ in range(5000)]
    text = "\n".join("y" * n for n in lengths) + "\n"
    starts, k = [], 0
    for n in lengths:
        starts.append(k)
        k += n + 1
    for line in [1, 2, 70_000, 70_001, 70_002, 70_003, 70_004, 70_005, 70_006, len(lengths)] + \
            [rng.randrange(1, len(lengths) + 1) for _ in range(40)]:
        for col in (1, 3):
            assert parser._offset(text, line, col) == starts[line - 1] + col - 1, (line, col)
    with pytest.raises(ValueError):
        parser._offset(text, len(lengths) + 3, 1)
