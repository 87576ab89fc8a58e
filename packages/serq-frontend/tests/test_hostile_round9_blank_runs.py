"""Lexing a run of blank lines takes no memory in its length.

The blanks' terminal, ``WS: /(?:[ \\t\\f\\n]|\\r\\n)+/``, is a greedy repeat of a group, which Python's
regular expressions match keeping a backtracking point a character (some 190 bytes): ``serq check`` of a
source of 8 MB of blank lines before an error took 1.4 GB (a 16 MiB source, the most a source may be,
about 2.7 GB). The repeat is possessive now (``++``): nothing after it in a token could use a shorter
match, so the tokens are the same.
"""

from __future__ import annotations

import tracemalloc

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

N = 400_000  # characters of blanks: the old match held some 75 MB for them
TAIL = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"


def _peak(fn):
    serq_frontend.compile(source=TAIL)  # the parser built and cached before the count starts
    tracemalloc.start(1)
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("blank", ["\n", "\r\n", " \t\r\n"])
def test_a_long_run_of_blank_lines_lexes_in_little_memory(blank):
    text = blank * (N // len(blank)) + TAIL + "  x\n"
    lines = N // len(blank)
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=text)
    # the error is placed after the blank lines: line lines + 4, column 3
    assert f":{lines + 4}:3: error: `x` does not begin an item" in str(info.value)
    peak = _peak(lambda: serq_frontend.compile(source=blank * (N // len(blank)) + TAIL))
    assert peak < 8 * 2**20, peak  # the old match held ~190 bytes a character
