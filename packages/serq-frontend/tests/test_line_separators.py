"""U+2028, U+2029 and U+0085 end no line and no comment silently: each is an error where it stands.

Editors (and Python's ``str.splitlines``) may show a line separator, a paragraph separator or a next-line
character as a line break. A comment ran on over them (it ended only at LF or CR), so ``stage s : fifo; //
the server<U+2028>workload { … }`` compiled to a program whose workload was part of a comment, with no
word said: the text an editor shows on the next line was not read. A comment now ends before one, and the
character is the error (as a lone carriage return is, test_hostile_round6_carriage_return.py); inside a
string, which names a file, it is the string's own text.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError
from sqhelpers import commands_refuse_and_leave

TAIL = ": a line ends in LF or CRLF (an editor may show a line break here, which serQ does not read as one)"
NAMES = {"\u2028": "a line separator (U+2028)", "\u2029": "a paragraph separator (U+2029)",
         "\x85": "a next-line character (U+0085)"}


@pytest.mark.parametrize("ch", sorted(NAMES))
@pytest.mark.parametrize("text, col", [
    ("stage s : fifo; // the server{ch}workload {{ arrive poisson(1); }}\nsession {{ run s (1); }}\n", 30),
    ("stage s : fifo;{ch}workload {{ arrive poisson(1); }}\nsession {{ run s (1); }}\n", 16),
    ("// a comment\nstage s : fifo; // x{ch}\n", 21),
])
def test_a_line_separator_is_an_error_where_it_stands(ch, text, col):
    src = text.format(ch=ch)
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=src)
    line = 2 if src.startswith("//") else 1
    assert (info.value.line, info.value.col) == (line, col)
    assert str(info.value).splitlines()[0] == f"<source>:{line}:{col}: error: {NAMES[ch]}{TAIL}"


def test_other_unicode_in_a_comment_is_still_a_comment():
    # the comment holds non-ASCII text (an em dash, a no-break space, a formula): it is still one comment
    src = "stage s : fifo; // λ — 1\u00a0s, ρ ≤ 0.8\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"
    p = serq_frontend.compile(source=src)
    assert len(p.stages) == 1 and p.workload is not None


@pytest.mark.timeout(60)
def test_check_refuses_such_a_file_and_leaves_it(tmp_path):
    data = "stage s : fifo; // the server\u2028workload { arrive poisson(1); }\nsession { run s (1); }\n".encode()
    commands_refuse_and_leave(tmp_path, data, f"p.sq:1:30: error: {NAMES[chr(0x2028)]}{TAIL}",
                              (("check",), ("fmt",), ("run", "--horizon", "10")))
