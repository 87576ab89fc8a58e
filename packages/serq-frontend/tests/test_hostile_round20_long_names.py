"""A name a message quotes between backquotes is cut to 120 characters (serq.errors.clipped_quotes, applied
where a compile error is rendered, serq_frontend.diagnostics.render, and where a run-time error is,
serq.errors.located).

A program's names are of any length. ``unknown name `q…``` quoted a name of 100 000 characters whole, and
``unknown stage `s…` (did you mean `s…`?)`` two of 5 000: a first line of 100 000 or 10 000 characters above
a source line cut to 200. A longer quoted text is now its first 60 and last 59 characters around a ``…``, as a
``use``'s file name already was.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq.errors import QUOTED_WIDTH, clipped, clipped_quotes, located
from serq_frontend import CompileError

pytestmark = pytest.mark.timeout(60)

TAIL = "workload { arrive poisson(1); }\nrun { horizon 5; }\n"


def first_line(text: str) -> str:
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=text)
    lines = str(info.value).splitlines()
    assert max(len(x) for x in lines) < 420, [len(x) for x in lines]
    return lines[0]


def cut(name: str) -> str:
    return name[:60] + "…" + name[-59:]


def test_an_unknown_name_of_the_longest_length():
    # (a name is at most MAX_NAME characters, 256: one of 100 000 is refused as too long, quoted cut as well)
    name = "q" * 128 + "r" * 128
    assert first_line(f"stage s : fifo;\nsession {{ run s ({name}); }}\n" + TAIL) == \
        f"<source>:2:18: error: unknown name `{cut(name)}`"
    name = "q" * 50_000 + "r" * 50_000
    assert first_line(f"stage s : fifo;\nsession {{ run s ({name}); }}\n" + TAIL) == \
        f"<source>:2:18: error: the name `{cut(name)}` is 100000 characters long; a name is at most 256 characters"


def test_a_name_declared_twice():
    name = "a" + "b" * 254 + "c"
    assert first_line(f"stage {name} : fifo;\nstage {name} : fifo;\n" + TAIL) == \
        f"<source>:2:7: error: `{cut(name)}` is declared twice (first at 1:1)"


def test_the_closest_name_is_cut_too():
    name = "s" + "ab" * 127
    typo = name[:-1] + "c"
    assert first_line(f"stage {name} : fifo;\nsession {{ run {typo} (1); }}\n" + TAIL) == \
        f"<source>:2:15: error: unknown stage `{cut(typo)}` (did you mean `{cut(name)}`?)"


def test_a_note_names_a_long_definition_cut():
    name = "d" * 256
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=f"def {name}() = zz;\nstage s : fifo;\nsession {{ run s ({name}()); }}\n" + TAIL)
    lines = str(info.value).splitlines()
    assert lines[0] == "<source>:1:" + str(len(name) + 10) + ": error: unknown name `zz`"
    assert f"note: in the expansion of `{cut(name)}`, used here" in lines[3]


def test_short_names_are_quoted_whole():
    name = "x" * QUOTED_WIDTH
    assert first_line(f"stage s : fifo;\nsession {{ run s ({name}); }}\n" + TAIL) == \
        f"<source>:2:18: error: unknown name `{name}`"


def test_clipped_quotes_pairs_backquotes_from_the_start():
    prose = "p" * 300
    assert clipped_quotes(f"`a` {prose} `b`") == f"`a` {prose} `b`"  # the prose between two quotes is no quote
    assert clipped_quotes(f"`{prose}` and `b`") == f"`{cut(prose)}` and `b`"
    assert clipped_quotes("no quote " + prose) == "no quote " + prose
    assert clipped("x" * 121) == "x" * 60 + "…" + "x" * 59 and len(clipped("x" * 121)) == 120


def test_a_run_time_message_is_cut_alike():
    name = "n" * 1_000
    assert located(None, f"stage `{name}`: broken", "p.sq") == f"p.sq: error: stage `{cut(name)}`: broken"
