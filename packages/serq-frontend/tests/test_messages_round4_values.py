"""A constant the linker refuses for its value shows the value: "the cap of pool `kv` is negative" of `cap c *
2` did not say the cap was -6 (nor "the horizon must be above 0", "the warmup must be a finite number of at
least 0", "a fifo has a whole number of servers, at least 1" theirs), where the block, the rate, a count and a
ps capacity said theirs. The value is the constant's as folded, every digit of it, and one a --set gave says
so as before.
"""

from __future__ import annotations

import pytest
from sqhelpers import told

BASE = """let c = 3;
pool kv { cap CAP; }
stage tool : fifo(F);
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon H; warmup W; }
"""


def _told(**parts: str) -> str:
    src = BASE
    for key, default in (("CAP", "c * 2"), ("F", "1"), ("H", "10"), ("W", "0")):
        src = src.replace(key, parts.get(key, default))
    return told(src)


@pytest.mark.parametrize("parts, said", [
    ({"CAP": "⟨c * -2"}, "the cap of pool `kv` is negative (-6)"),
    ({"CAP": "⟨-0.25"}, "the cap of pool `kv` is negative (-0.25)"),
    ({"CAP": "⟨c - 1e300 * 10"}, "the cap of pool `kv` is negative (-1e+301)"),
    ({"H": "⟨c - 3"}, "the horizon must be above 0, not 0"),
    ({"H": "⟨-c"}, "the horizon must be above 0, not -3"),
    ({"W": "⟨-1 / 4"}, "the warmup must be a finite number of at least 0, not -0.25"),
    ({"W": "⟨inf"}, "the warmup must be a finite number of at least 0, not inf"),
    ({"F": "⟨c / 2"}, "stage `tool`: a fifo has a whole number of servers, at least 1, not 1.5"),
    ({"F": "⟨c - 3"}, "stage `tool`: a fifo has a whole number of servers, at least 1, not 0"),
])
def test_the_value_refused_is_shown(parts, said):
    assert _told(**parts) == said


def test_a_value_a_set_gave_says_where_it_came_from():
    assert told(BASE.replace("CAP", "⟨c").replace("F", "1").replace("H", "10").replace("W", "0"),
                sets={"c": -2.0}) == "the cap of pool `kv` is negative (-2) (`c` is -2, given in place of its `let` at 1:1)"


def test_the_values_taken_link():
    # (0 is a cap, 0 a warmup, inf a cap and a fifo's count: the words above are of the values refused only)
    from sqhelpers import compile_src

    for cap, f, w in (("0", "1", "0"), ("inf", "inf", "5"), ("c * 2", "c", "9.5")):
        program = compile_src(BASE.replace("CAP", cap).replace("F", f).replace("H", "10").replace("W", w))
        assert program.run.warmup == float(w)
