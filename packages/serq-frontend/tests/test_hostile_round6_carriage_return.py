"""A carriage return alone is no line end and no blank: it is an error where it stands.

A file of old Mac line ends (CR alone), or a CR inside a line, is shown by editors as a line break. The
lexer took a CR for a blank and ended a comment only at LF, so ``stage s : fifo; // x<CR>workload { … }
<CR>session { … }<CR>`` compiled, silently, to a program of one stage and no workload (its comment ran on
over what the editor shows as the lines after it); ``serq check`` said OK and ``serq run`` simulated
nothing, and ``serq fmt`` joined the lines into one. A CRLF line end, and a CRLF file, are unchanged.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError
from sqhelpers import commands_refuse_and_leave

SAID = ("a carriage return not followed by a line feed: a line ends in LF or CRLF (an editor may show a line "
        "break here, which serQ does not read as one)")
LINES = ["stage s : fifo; // the server", "workload { arrive poisson(1); }", "session { run s (1); }"]


@pytest.mark.parametrize("text, col", [
    ("\r".join(LINES) + "\r", 30),                            # old Mac line ends: the comment's end
    ("stage s : fifo;\rworkload { arrive poisson(1); }\n", 16),  # one CR between two statements
    ("stage s : fifo; // a\rb\n", 21),                        # a CR inside a comment
])
def test_a_carriage_return_alone_is_an_error_where_it_stands(text, col):
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=text)
    assert (info.value.line, info.value.col) == (1, col)
    assert str(info.value).splitlines()[0] == f"<source>:1:{col}: error: {SAID}"


def test_crlf_line_ends_compile_as_lf_ones():
    lf = serq_frontend.compile(source="\n".join(LINES) + "\n")
    crlf = serq_frontend.compile(source="\r\n".join(LINES) + "\r\n")
    assert len(lf.stages) == len(crlf.stages) == 1
    assert lf.workload.arrive == crlf.workload.arrive
    assert lf.session == crlf.session


@pytest.mark.timeout(60)
def test_check_and_fmt_refuse_such_a_file_and_leave_it(tmp_path):
    commands_refuse_and_leave(tmp_path, ("\r".join(LINES) + "\r").encode(), f"p.sq:1:30: error: {SAID}")
