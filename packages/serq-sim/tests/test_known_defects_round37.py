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


# ---------------------------------------------------------------- 4. a choose of thousands of keys

MANY = """let A = inf;

pool m[3] { cap 1; }
stage s : delay;

workload { arrive renewal(1); }

session {
  set w = serial == 2 ? 0 : 1;
  choose j in 3 by (KEYS);
  hold m[j] (1) { run s (1); }
  end;
}

run { horizon 10; }
"""


def test_a_choose_of_thousands_of_keys_is_the_same_on_both_tiers(tmp_path, monkeypatch):
    from tiers import same_json

    # 3 000 keys: all 0 but key 1 500, NaN for session 2's candidate 1 (0 * inf), and the last, 5 - j, which
    # decides: every session takes m[2] (a NaN orders nothing: candidate 1 does not pass candidate 0 there)
    keys = ["j * 0"] * 3000
    keys[1500] = "(j == 1 ? w * A : 0)"
    keys[-1] = "5 - j"
    src = MANY.replace("KEYS", ", ".join(keys))
    (tmp_path / "K.sq").write_text(src)
    r = same_json(serq_frontend.compile(tmp_path / "K.sq"), monkeypatch)
    line = src.splitlines()[9]
    col = line.index("j == 1") + 1  # (the key inside its parentheses)
    notes = [n for n, c in zip(r["notes"], r["codes"]) if c == "nan-key"]
    assert notes == [f"warning: the `choose` key at {tmp_path / 'K.sq'}:10:{col} is NaN (first at t=3, session 2): "
                     "a NaN does not order (where it decides, the candidate met first stays); a key that can be NaN "
                     "(`0 * inf`, `inf - inf`, `x % 0`) orders by no number of its own"]
    assert [p["admissions"] for p in r["pools"]] == [0, 0, r["arrivals"]] and r["arrivals"] > 5
