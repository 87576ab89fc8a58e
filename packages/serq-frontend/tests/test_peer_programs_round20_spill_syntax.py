"""A spill written without the work of its write (peer programs, round 20: a researcher wrote `spill cpu via
pcie when (1);`, meaning a write that takes no time to model, and was told ``unexpected `when` (expected
`(`)``). As a hold, a grow or a run written without its amount is told its word and how it is written
(docs/language.md, Diagnostics), so is a spill, at the token found where the parenthesis goes."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError

pytestmark = pytest.mark.timeout(60)

WORDS = "`spill` takes the work of its write in parentheses after the link, `spill TIER via LINK (work) when (pred);`"


@pytest.mark.parametrize(("text", "at", "found"), [
    ("pool cpu { cap 10; }\nstage l : delay;\npool kv { cap 10; spill cpu via l when (1); }\n", (3, 35), "`when`"),
    ("pool cpu { cap 10; }\nstage l : delay;\npool kv { cap 10; spill cpu via l; }\n", (3, 34), "`;`"),
    ("pool cpu[2] { cap 10; }\nstage l[2] : delay;\npool kv[2] { cap 10; spill cpu[1] via l[1] when (1); }\n",
     (3, 44), "`when`"),
    ("pool cpu { cap 10; }\nstage l : delay;\npool kv {\n  cap 10;\n  spill cpu via l\n}\n", (6, 1), "`}`"),
])
def test_a_spill_without_its_work_is_told_how_it_is_written(text, at, found):
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=text + "session { }\n")
    assert (e.value.line, e.value.col) == at
    assert e.value.message == f"unexpected {found}: {WORDS}"


def test_a_spill_with_its_work_and_other_mistakes_keep_their_words():
    ok = "pool cpu { cap 10; }\nstage l : delay;\npool kv { cap 10; spill cpu via l (0) when (1); }\nsession { }\n"
    assert serq_frontend.compile(source=ok).pools[1].spill is not None
    # a spill without its `when` is told that part and the form (test_known_defects_round23; it was the
    # parser's own words, "unexpected `;` (expected when)")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=ok.replace(" when (1)", ""))
    assert e.value.message.startswith("unexpected `;`: a spill says which evicted prefixes it writes, `when (pred)` "
                                      "after its work: `spill TIER via LINK (work) when (pred);`")
    # a hold without its units is still told as a hold
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source="pool p { cap 1; }\nsession { hold p { } }\n")
    assert "`hold` takes its units in parentheses after each pool" in e.value.message
