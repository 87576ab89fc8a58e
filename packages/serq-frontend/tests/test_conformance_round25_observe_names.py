"""language.txt §3, Statistics: "observe x = e records a sample after warm-up with the time, session and
turn"; an observe sets nothing ("Every name assigned by set or choose is a session attribute"). A program
that reads an observe's name back (`observe x = 1; hold p (x) { … }`) was told `unknown name `x``, as if the
name were not in the program; it is told that the name is an observe's and how to read a value again.
"""

from __future__ import annotations

import pytest
from sqhelpers import refused

HEAD = "pool p { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
RUN = "run { horizon 5; }\n"
SAID = ("`x` is an observe's name, not a value: an observe records a sample for the report and sets nothing; "
        "`set` an attribute to the value to read it again (`set v = …; observe x = v;`)")


@pytest.mark.parametrize("src", [
    HEAD + "session { observe x = 1; observe y = ⟨x; }\n" + RUN,
    HEAD + "session { observe y = ⟨x; observe x = 1; }\n" + RUN,
    HEAD + "session { observe x = now; hold p (⟨x) { } }\n" + RUN,
    HEAD + "session { observe x = 1; }\ngauge g = ⟨x;\n" + RUN,
])
def test_an_observes_name_read_as_a_value_is_told_so(src):
    refused(src, SAID)


def test_a_name_nothing_has_is_still_unknown():
    refused(HEAD + "session { observe x = 1; observe y = ⟨z; }\n" + RUN, "unknown name `z`")
