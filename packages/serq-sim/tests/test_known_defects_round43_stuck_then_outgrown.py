"""The ordering 01f673b3 is for: a session made stuck by another holder's growth that later itself outgrows the
pool. ``Pool.livelocked`` counted a session livelocked only at the preemption that made it stuck, so one stuck
earlier by another's growth was left out of the stuck warning's livelock words (which then said it may cycle
while the pool is short, and not that it preempts itself for ever); it is counted by its serial now, once. No
test built that ordering. Here it is, by hand, on both tiers (the default and SERQ_SIM_TIER=general), with a
horizon (the warning) and without one (the run-time error at its first such preemption)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from tiers import same_json

pytestmark = pytest.mark.timeout(120)

# Three sessions at 0, admitted in serial order: B (0) 1 unit, C (1) 1, A (2) 2, so 4 of 4 used; under preempt
# lifo (kv is no step stage's memory) the victim of a growth is the holder admitted last. By hand:
#   t=1   B grows by 1: 4 + 1 > 4, the victim is A (admitted last), preempted at position 0 (a grow advances no
#         position); B holds 2, C 1; A re-queued at the head needs 2: 3 + 2 > 4, it waits
#   t=2   C's hold ends: 2 used, A is admitted again (4 used), and is the last admitted
#   t=3   B grows by 1 again: the victim is A again, at position 0, no greater than at its previous preemption:
#         A is stuck, by another holder's growth; B holds 3, A waits (3 + 2 > 4)
#   t=4   B's hold ends: A is admitted (2 used)
#   t=5.5 A grows by 3 to 5 units, above the cap 4, keeping nothing else there: it preempts itself (the pool's
#         only holder) and, re-executed at once, is admitted again; so again at 7 and 8.5; the horizon 9.75
# kv: preemptions 1, 3, 5.5, 7, 8.5 (5); admissions B, C, A at 0, A at 2, 4, 5.5, 7, 8.5 (8); stuck 1 (A), and A,
# stuck before it outgrew the pool, livelocked: its first outgrowing needed 5 units. A observes its admissions;
# stage d completes B's three runs (1, 3, 4), C's (2) and A's runs ended by its own growth (5.5, 7, 8.5): 7.
PROGRAM = """pool kv { cap 4; preempt lifo; }
stage d : delay;

workload {
  arrive batch(3);
}

session {
  branch (serial == 0) {
    hold kv (1) {
      run d (1);
      grow kv (1);
      run d (2);
      grow kv (1);
      run d (1);
    }
  } else {
    branch (serial == 1) {
      hold kv (1) {
        run d (2);
      }
    } else {
      hold kv (2) {
        observe a = now;
        run d (1.5);
        grow kv (3);
      }
    }
  }
}

run { horizon HORIZON; warmup 0; }
"""

STUCK = ("warning: 1 session stuck in the run, preempted again without progress (at no greater position than at "
         "their previous preemption): kv (1 stuck, 5 preemption(s)); on kv 1 session preempted itself again and again "
         "at the same position, its hold needing more than the pool's capacity (5 units for the first, capacity 4), "
         "so re-executed it grows into the same preemption for as long as the run goes on (a livelock; a larger pool, "
         "a cut before the growth or a reserve of what the hold will need, which rejects it, ends it); on kv no "
         "growing run or load advances a hold's position, so every preemption there found position 0, and only a "
         "session preempted again by its own growth is counted (re-executed, its hold grows into the same shortage)")


def compiled(horizon: str):
    return serq_frontend.compile(source=PROGRAM.replace("HORIZON", horizon), sets={}, defs={})


def test_a_session_stuck_by_another_then_outgrowing_is_livelocked(monkeypatch):
    r = same_json(compiled("9.75"), monkeypatch)
    (kv,) = r["pools"]
    assert (kv["preemptions"], kv["admissions"], kv["stuck"], kv["rejections"]) == (5, 8, 1, 0)
    (d,) = r["stages"]
    assert d["completions"] == 7
    assert (r["end"], r["arrivals"], r["ended"]) == (9.75, 3, 2)
    # the livelock words, and not the words of a session that may cycle while the pool is short (it was those)
    assert [n for n, c in zip(r["notes"], r["codes"]) if c == "stuck"] == [STUCK]
    assert "can cycle between admission and preemption" not in STUCK


def test_the_pool_counts_the_session_once_by_its_serial(monkeypatch):
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        from serq_sim.api import registries
        from serq_sim.engine import Simulation

        sim = Simulation(compiled("9.75"), registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                         check_invariants=True, progress=False, trace_path=None, max_events=None)
        report = sim.run()
        (kv,) = sim.pools
        # A (serial 2) is the one, counted once over its three self-preemptions, with the units it first needed
        assert (kv.livelocked, kv.livelock_units, kv.stuck) == ({2}, 5.0, 1)
        assert report.observe("a").values.tolist() == [0.0, 2.0, 4.0, 5.5, 7.0, 8.5]


def test_without_a_horizon_its_first_outgrowing_is_the_error(monkeypatch):
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(compiled("inf"))
        out.append(str(e.value))
    assert out[0] == out[1]
    assert out[0].splitlines()[0] == (
        "<source>:23:7: error: at t=5.5, session 2: hold: its growth takes the hold to 5 units of kv, above the pool's "
        "capacity 4, so the hold preempted itself and, executed again, would grow into the same preemption for ever; "
        "the run has no horizon (horizon inf) to end it: give the run a horizon (horizon T, or --horizon T), the pool "
        "a larger capacity, the body a cut before the growth, or the hold a reserve of what it will need (reserve), "
        "which rejects it once that is above the capacity")
