"""An aggregate's count that is refused is shown as a message shows a number (serq_ir.rules.show_number):
``sum j in 1e300 (j)`` said ``sum j in 100000000000000005250476…``, the count's 301 digits, and a count of
-1e300 the same; a count of more terms than an aggregate takes is shown in its digits below 1e16."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend.diagnostics import CompileError


def _refusal(count: str) -> str:
    src = f"""stage s : delay;
workload {{ arrive poisson(1); }}
session {{ run s (sum j in ({count}) (j)); end; }}
run {{ horizon 10; seed 1; }}
"""
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=src)
    return str(e.value).splitlines()[0]


@pytest.mark.parametrize("count, said", [
    ("1e300", "`sum j in 1e+300`: more than 10000 terms"),
    ("20000", "`sum j in 20000`: more than 10000 terms"),
    ("-1e300", "the count of `sum j in …` must be an integer of at least 1, not -1e+300"),
    ("-3", "the count of `sum j in …` must be an integer of at least 1, not -3"),
    ("0.5", "the count of `sum j in …` must be an integer of at least 1, not 0.5"),
    ("-inf", "the count of `sum j in …` must be an integer of at least 1, not -inf"),
])
def test_a_refused_count_is_shown_short(count, said):
    assert _refusal(count) == f"<source>:3:28: error: {said}"
