"""A syntax error's hint is placed in time linear in the source.

The hint of a word that does not begin an item (```foo` does not begin an item: an item begins with …``)
looks back for the token before it and the name that ends there. Both scans were quadratic: the token
before was found by stripping and copying the whole text before the error once for each comment line
passed (11 s after 320 000 comment lines; a source of 16 MiB of them, an hour), and the name by a search
for ``[A-Za-z_][A-Za-z0-9_]*$``, which matched every long name before it to its end and back (18 s for a
name of 80 000 characters earlier in the file). The budgets below are several times what these errors
take now, and a tenth of what they took: held as the ratio of the test's own runs (a source four times as
long against one, each the least of three: about 4 when linear, 16 when it is the square), not as seconds,
which a loaded machine may miss.
"""

from __future__ import annotations

import gc
import time

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError

HINT = "`foo` does not begin an item: an item begins with def"


def _error(source: str) -> tuple[str, float]:
    serq_frontend.compile(source="stage s : fifo;\n")  # the parser built before the clock starts
    # (the collector's passes cost with every object the test process holds: not the scan's time; and no full
    # collection before it, which walked them all, six times a test)
    gc.disable()
    try:
        t = time.process_time()
        with pytest.raises(CompileError) as info:
            serq_frontend.compile(source=source)
        return str(info.value), time.process_time() - t
    finally:
        gc.enable()


def _linear(make, n: int, where) -> None:
    """The error of ``make(n)`` and of ``make(4 * n)`` each said at ``where(n)``, the second in under 8 times
    the time of the first (each the least of three runs), and 50 ms (the noise of a clock read around a few ms)."""
    cpu = {}
    for k in (n, 4 * n):
        times = []
        for _ in range(3):
            said, t = _error(make(k))
            assert f":{where(k)}: error: {HINT}" in said
            times.append(t)
        cpu[k] = min(times)
    assert cpu[4 * n] < 8 * cpu[n] + 0.05, cpu


@pytest.mark.timeout(120)
def test_many_comment_lines_before_the_error():
    comment = "// " + "c" * 397 + "\n"  # 401 characters a line
    # the error is on the line after the comments: line n + 2, column 1
    _linear(lambda n: "stage s : fifo;\n" + comment * n + "foo bar\n", 5_000, lambda n: f"{n + 2}:1")


@pytest.mark.timeout(120)
def test_a_long_name_before_the_error():
    # (18 s for a name of 80 000 characters when it was the square: 2 000 000 would be hours; a name is at
    # most 256 characters now, so the long run of letters is a comment's, which the scan passes over alike)
    _linear(lambda n: "stage s : fifo; // " + "a" * n + "\nfoo bar\n", 500_000, lambda n: "2:1")


@pytest.mark.parametrize("source, where, word", [
    # the word found is the name right before the error, from its first letter (digits before it are no
    # part of a name), after a `;` or `}` (blanks and comments between), or first in the file
    ("stage s : fifo; foo bar", "1:17", "foo"),
    ("stage s : fifo; // x\n  // y\n\tfoo bar", "3:2", "foo"),
    ("foo bar", "1:1", "foo"),
    ("stage s : fifo;\nfoo_9 bar", "2:1", "foo_9"),
])
def test_the_word_and_its_place_are_as_before(source, where, word):
    said, _ = _error(source)
    assert f":{where}: error: `{word}` does not begin an item" in said
