"""The stuck warning fires for a sign of no progress, not for every session preempted twice.

The ``stuck`` column counts, as language.txt's Statistics has it, sessions preempted a second time without
having advanced past the position of their previous preemption. On a pool where no growing run or load
advances a hold's position every preemption finds position 0, so a preemptive priority's victim preempted
twice by higher-priority arrivals is counted however long it was served in between: it starts over, as the
model has it. The warning said of every correct preemptive-priority program (peer_programs40: preempt3.sq 3 884
sessions, npolicy.sq 1, lcfs_pr.sq 5 606) that its sessions were "stuck ... without progress". It now counts,
on such a pool, the sessions preempted again by their own growth (re-executed, the hold grows into the same
shortage: a cycle), and on a pool with positions every stuck session, as before (docs/simulator.md, "Stuck").
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from tiers import same_json

PEERS40 = Path(__file__).parent / "peer_programs40"

# A preemptive priority by hand. gpu has one unit; session 0 (low, key 0: the victim of preempt by) holds it
# from 0 for a job of 4. Sessions 1 and 2 (high) arrive at 1 and 3 and take the unit by growing into it: each
# preempts session 0, which starts over when the high one leaves (its run of 1 cut). 0 is preempted at 1
# (position 0) and again at 3 (position 0, no greater): stuck, though it was served over [2, 3] in between. It
# is admitted again at 4 and ends at 8, when the run (horizon inf) drains. Preemptions 2, admissions 0, 0, 0 and 1, 2: 5; stuck 1; no warning.
PRIO = """pool gpu { cap 1; preempt by (hi ? 1 : 0); }
stage d : delay;
workload {
  arrive batch(3);
  init { set hi = serial > 0; }
}
session {
  branch (hi) {
    run d (serial == 1 ? 1 : 3);
    hold gpu (0) {
      grow gpu (1);
      run d (1);
    }
  } else {
    hold gpu (1) {
      run d (4);
    }
  }
}
run { horizon inf; }
"""

# The same with a fourth session, low (key 0), that outgrows the pool: from 9 it holds 0 units, runs d for 1
# and grows to 2, beyond the cap 1. The grower is its own victim (pools.growth.preempt_outgrown) at position 0,
# re-executed and admitted again at once: preempted at 10, 11, ..., 20 (11; the events at the horizon are the
# run's), stuck from 11 and livelocked (2 units for the first, capacity 1). Stuck 2 (sessions 0 and 3); the
# warning counts session 3 alone and says the column counts the restarted victim too. Preemptions 2 + 11,
# admissions 5 + 12 (9, 10, ..., 20).
SELF = PRIO.replace("horizon inf;", "horizon 20;").replace("arrive batch(3);", "arrive batch(4);").replace("serial > 0", "serial == 1 || serial == 2").replace(
    """  } else {
    hold gpu (1) {
      run d (4);
    }
  }""", """  } else {
    branch (serial == 3) {
      run d (9);
      hold gpu (0) {
        run d (1);
        grow gpu (2);
      }
    } else {
      hold gpu (1) {
        run d (4);
      }
    }
  }""")


def gpu(doc: dict) -> dict:
    (p,) = [p for p in doc["pools"] if p["name"] == "gpu"]
    return p


def test_a_preemptive_priority_victim_restarted_twice_is_counted_and_not_warned_of(monkeypatch):
    doc = same_json(serq_frontend.compile(source=PRIO), monkeypatch)
    p = gpu(doc)
    assert (p["preemptions"], p["admissions"], p["stuck"]) == (2, 5, 1)
    assert doc["end"] == 8.0
    assert not [n for n in doc["notes"] if "stuck" in n]


def test_a_self_preempting_grower_beside_restarted_victims_is_warned_of_alone(monkeypatch):
    doc = same_json(serq_frontend.compile(source=SELF), monkeypatch)
    p = gpu(doc)
    assert (p["preemptions"], p["admissions"], p["stuck"]) == (13, 17, 2)
    (w,) = [n for n in doc["notes"] if "stuck" in n]
    assert w.startswith("warning: 1 session stuck in the run, preempted again without progress (at no greater "
                        "position than at their previous preemption): gpu (1 stuck, 13 preemption(s)); ")
    assert "on gpu 1 session preempted itself again and again at the same position" in w
    assert w.endswith("the stuck column counts too the sessions another's growth preempted twice, which start over "
                      "as a restart after a failure or a preemptive priority does (the column: 2 on gpu)")


@pytest.mark.parametrize("name, horizon", [("preempt3.sq", 4000), ("npolicy.sq", 4000), ("lcfs_pr.sq", 4000)])
def test_the_preemptive_priority_peers_have_no_stuck_warning(monkeypatch, name, horizon):
    doc = same_json(serq_frontend.compile(path=str(PEERS40 / name)), monkeypatch, horizon=horizon)
    assert sum(p["stuck"] for p in doc["pools"]) > 0  # the column still counts the restarted victims
    assert not [n for n in doc["notes"] if "stuck" in n]
