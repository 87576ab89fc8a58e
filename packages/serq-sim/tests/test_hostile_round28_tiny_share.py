"""A ps share (or a flow's rate) just below the smallest normal double, as its error shows it.

A share below 2**-1022 (stages.TINY_SHARE) is a run-time error. One just below it, the largest subnormal
2.225073858507201e-308, read 2.22507e-308 at six digits, as 2**-1022 does: 'gives each job a share of
2.22507e-308, below the smallest normal double (2.22507e-308)', a share below itself. When the share reads
as the bound, the numbers compared are given with all their digits.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error

pytestmark = pytest.mark.timeout(60)

SUB = "2.225073858507201e-308"  # the largest subnormal double, 2**-1022 - 2**-1074
TINY = "2.2250738585072014e-308"  # 2**-1022


def error(src: str, monkeypatch) -> str:
    """The error of ``src`` on the default tier and on the general engine, which must be the same words."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return same_error(prog, monkeypatch)


def ps(cap: str) -> str:
    return f"""stage cpu : ps({cap});
workload {{
  arrive batch(4);
}}
session {{
  run cpu (1e-300);
}}
run {{ horizon inf; }}
"""


def test_the_numbers_are_given_whole_when_the_share_reads_as_the_bound(monkeypatch):
    assert float(SUB) == 2.0**-1022 - 2.0**-1074 and float(TINY) == 2.0**-1022
    # four jobs at present * SUB: each gets SUB (a multiplication by 4 and a division by 4, both exact)
    msg = error(ps(f"present * {SUB}"), monkeypatch)
    assert msg == (
        f"<source>:1:16: error: at t=0: stage cpu: the capacity {float(SUB) * 4!r} at present = 4 gives each job "
        f"a share of {SUB}, below the smallest normal double ({TINY}), where a share loses its precision; a ps "
        "stage's capacity is 0 or at least present times that\n"
        f"  stage cpu : ps(present * {SUB});\n"
        "  " + " " * 15 + "^")  # (under `present`, the capacity's first character)


def test_a_share_that_reads_apart_keeps_six_digits(monkeypatch):
    # 3 * 2**-1022 between four jobs: 0.75 * 2**-1022, 1.66881e-308
    msg = error(ps(f"3 * {TINY}"), monkeypatch)
    assert "the capacity 6.67522e-308 at present = 4 gives each job a share of 1.66881e-308, below the smallest " \
           "normal double (2.22507e-308)" in msg


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
def test_a_flows_rate_that_reads_as_the_bound(share, monkeypatch):
    # two runs over a (2 * SUB) and b (1): a's fair share, SUB each, is the bottleneck of both
    src = f"""stage a : ps(2 * {SUB});
stage b : ps(1);
share {share};
workload {{
  arrive batch(2);
}}
session {{
  run a, b (1e-300);
}}
run {{ horizon inf; }}
"""
    msg = error(src, monkeypatch)
    assert msg == (
        f"<source>:8:3: error: at t=0, session 0: the run over stages a, b gets a rate of {SUB} under share "
        f"{share}, below the smallest normal double ({TINY}), where a share loses its precision; the capacities "
        "of its stages shared among the flows give each run at least that\n"
        "    run a, b (1e-300);\n"
        "    ^")
