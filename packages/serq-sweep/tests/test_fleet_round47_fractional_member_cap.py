"""The capacity search's warning of a knob that makes a pool's cap a fraction of its blocks reads each member's
cap of a family whose members' caps differ (`caps`, docs/language.md, "A family's members' caps"), naming the
member; it read the family's `cap`, which such a family leaves out."""

from __future__ import annotations

import serq_frontend
from serq_sweep.search import _fractional_cap

SRC = """let B = 2;
pool kv[2] { cap member(kv) == 0 ? 64 : B * 16; block 16; }
stage s[2] : delay;
workload { arrive poisson(1); }
session { hold kv[1] (16) { run s[1] (1); } }
run { horizon 10; }
"""


def _program(b: float):
    return serq_frontend.compile(source=SRC, sets={"B": b}, defs={})


def test_a_members_cap_between_whole_blocks_is_warned_of_by_its_member():
    lo = _program(2.0)
    lo_caps = [p.cap if p.caps is None else p.caps for p in lo.pools]
    said = _fractional_cap(_program(2.5), lo_caps, set(), "B", 2.5, "", "--over B")
    assert said is not None and "the cap of pool kv[1] is 40, 2.5 blocks of 16" in said
    # a whole number of blocks, and the member the knob leaves as it was, say nothing
    assert _fractional_cap(_program(3.0), lo_caps, set(), "B", 3.0, "", "--over B") is None
