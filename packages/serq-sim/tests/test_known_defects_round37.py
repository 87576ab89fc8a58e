"""Known defects, round 37, in serq-sim.

1. (Reported: an IR file's ``set`` of a trace attribute beside a trace is taken, as if the frontend refused the
   same in a source.) The frontend takes it too, by an earlier decision (test_peer_programs_round20_trace_columns:
   a session may give ``new`` a value before its first ``turn;``), and the IR takes what the frontend writes:
   the two agree. What such a program does is pinned here and in docs/language.md: the value set is read until
   the next ``turn;``, which loads the trace's row over it; on both tiers, from the source and from its IR
   decoded (validated) again.
"""

from __future__ import annotations

import array

import pytest
import serq_frontend
import serq_ir
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(120)

# ---------------------------------------------------------------- 1. a set of a trace attribute beside a trace

TRACE = "session,turn,new,out,think,forced\n0,1,5,2,1.0,0\n0,2,6,2,1.0,0\n"
SETS_NEW = """stage s : delay;
workload {
  arrive renewal(1);
  trace "t.csv" ordered;
  session {
    set new = 100;
    observe a = new;
    turn;
    loop {
      set new = new + 1000;
      request;
      branch (more) {
        turn;
      } else {
        end;
      }
    }
  }
}
server {
  observe b = new;
  run s (1);
}
run { horizon 10; arrivals 1; }
"""


def test_a_set_of_a_trace_attribute_holds_until_the_next_turn_loads_the_row(tmp_path):
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "p.sq").write_text(SETS_NEW)
    program = serq_frontend.compile(tmp_path / "p.sq")
    again = serq_ir.decode(serq_ir.encode(program), name="p.ir.json")  # (the validator takes what the linker wrote)
    for p in (program, again):
        outcomes = []
        for tier in ("", "general"):
            _, outcome, samples = run_on_tier(p, tier)
            assert outcome[0] == "report", outcome
            outcomes.append((outcome, samples))
            # before the first turn the value set (100); each turn loads its row (5, then 6) over the 1000 added
            assert array.array("d", samples["a"][0]).tolist() == [100.0]
            assert array.array("d", samples["b"][0]).tolist() == [1005.0, 1006.0]
        assert outcomes[0] == outcomes[1]
