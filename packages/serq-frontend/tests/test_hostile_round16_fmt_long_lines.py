"""serq fmt lays out a long line in time linear in its length.

The formatter keeps the column each token was written at (tabs expanded to 8) and found it after every
run of blanks by expanding a string as long as the column so far, so a line took time of the square of
its length: a generated program of 16 000 statements on one line 3 s, of 100 000 more than two minutes
(``serq fmt`` seemed to hang). The test holds the time of a line of 8 000 statements to under 10 times
that of one of 2 000, each the least of three runs: about 4 now, 13 to 15 with the square's column count.
"""

from __future__ import annotations

import gc
import time

import pytest
from serq_frontend.fmt import format_source


def _formatted(source: str) -> tuple[str, float]:
    # the cyclic collector off while timed: its passes cost with every object a test process holds, which made
    # a linear formatting look 8.6 times slower at four times the length inside the whole suite. (No full
    # collection before it: off, it frees nothing in the timed part anyway, and each one walked every object the
    # test process holds, six times a test: 0.02-0.1 s in a worker of a few hundred thousand, seconds in one of
    # millions.)
    gc.disable()
    try:
        t = time.process_time()
        out = format_source(source)
        return out, time.process_time() - t
    finally:
        gc.enable()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("blank", [" ", "\t", " \t "])
def test_a_long_line_of_statements_is_formatted_in_linear_time(blank):
    # the time of a line four times as long against one, each the least of three: about 4.2 when linear, 13.5 to
    # 15 with the square's column count (fmt._advance as len(('x' * col + blank).expandtabs(8)): 0.06-0.16 s at
    # 2 000 statements, 0.8-2.3 s at 8 000). A ratio of the test's own runs, not a budget of seconds, which a
    # loaded machine missed.
    cpu = {}
    for n in (2_000, 8_000):
        source = "session {" + blank + f"set{blank}a = 1;{blank}" * n + "end; }\n"
        times = []
        for _ in range(3):
            out, t = _formatted(source)
            times.append(t)
        # one line, as written, each blank between tokens one space
        assert out == "session { " + "set a = 1; " * n + "end; }\n"
        cpu[n] = min(times)
    assert cpu[8_000] < 10 * cpu[2_000], cpu


@pytest.mark.parametrize("source, want", [
    # a continued line keeps its place relative to the line its statement starts on, its leading tabs
    # to the next multiple of 8: `1` and `+` both written at column 16, so `+` stays under `1`
    ("session {\n\tset x =\t1\n\t\t+ 2;\n  end;\n}\n", "session {\n  set x = 1\n          + 2;\n  end;\n}\n"),
    # trailing comments written in one column (a tab after 10 and after 11 characters, and after a blank,
    # all reach column 16) stay in that column; counted as 8 columns on, they were not aligned
    ("let a = 1;\t// x\nlet bb = 2;\t// y\nlet c = 3; \t// z\n",
     "let a = 1;      // x\nlet bb = 2;     // y\nlet c = 3;      // z\n"),
])
def test_tab_columns(source, want):
    assert format_source(source) == want
