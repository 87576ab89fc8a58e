"""A run of no horizon ends when it drains, not at a completion a ps stage scheduled before a job came. Under
a capacity that grows faster than the number present (``ps(2 * present - 1)``) a job's arrival makes the
completion sooner: the settle reschedules it, and the one scheduled before stays in the heap, an event that
does nothing. Only a job's leaving (a preemption) had it counted among the dead events
(Simulation.dead_timers), so the run went on to it and ended there, past its drain, on both tiers (and every
time average over the longer span). Now every completion a settle leaves behind is counted (PsStage.settle;
the fast tier's generated loop keeps the same count), and the run ends at its last real event.

language.txt §3: ``ps(φ)``: every job at once, each at φ(present)/present; §2: a run of no horizon ends when
it drains."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import check_by_hand, report_json, run

# s0 runs s (2) from 0; s1 comes to s at 1 (after d (1)) with 0.5. Alone s0 has capacity 1: its completion
# is due at 2. At 1 s0 has 1 left; two present share 3, 1.5 each: s1 is done at 1 + 0.5 / 1.5 = 4/3, when
# s0 has 1 - 0.5 = 0.5 left, alone at rate 1: done at 4/3 + 0.5 = 11/6. The completion due at 2 does
# nothing: the run drains, and ends, at 11/6 (it ended at 2). present on s: 1 on [0,1], 2 on [1,4/3], 1 on
# [4/3,11/6]: (1 + 2/3 + 1/2) / (11/6) = 13/11; sessions live: s0 11/6, s1 4/3: (19/6) / (11/6) = 19/11.
PROGRAM = """
stage d : delay;
stage s : ps(2 * present - 1);
workload { arrive batch(2); }
session {
  run d (serial);
  run s (serial == 0 ? 2 : 0.5);
  observe f = now;
}
run { horizon inf; }
"""

WANT_OBS = {"f": [(1, 4 / 3, 4 / 3), (0, 11 / 6, 11 / 6)]}
WANT = {"end": 11 / 6, "mean_live": 19 / 11, ("s", None): {"present": 13 / 11, "completions": 2}}


def test_ps_capacity_growing_faster_than_present_ends_at_the_drain(monkeypatch):
    check_by_hand(monkeypatch, PROGRAM, WANT_OBS, WANT)  # both tiers, the same bytes
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert serq_sim.run(serq_frontend.compile(source=PROGRAM, sets={}, defs={})).tier == "fast"


def test_a_ps_family_member_the_same(monkeypatch):
    """The same on member 1 of a family of two (the fast tier's per-member state)."""
    src = PROGRAM.replace("stage s : ps", "stage s[2] : ps").replace("run s (", "run s[1] (")
    r, js = check_by_hand(monkeypatch, src, WANT_OBS, {"end": 11 / 6, "mean_live": 19 / 11})
    (member,) = [x for x in js["stages"] if x["name"] == "s" and x["index"] == 1]
    assert member["present"] == pytest.approx(13 / 11, rel=1e-12)


def test_no_event_left_is_said_of_the_drain(monkeypatch):
    """The run drained: no event is left (the completion due at 2 is none), so a live session would be told
    waiting for ever; here none is live, and there is no note of one."""
    r, _ = run(PROGRAM, monkeypatch)
    notes = report_json(r)["notes"]
    assert not any("for ever" in n for n in notes), notes


def test_a_capacity_growing_with_present_still_runs_the_real_completion(monkeypatch):
    """ps(present) (each job at rate 1, the completion of s0 unchanged by s1's coming, rescheduled all the
    same): s1 is done at 1.5, s0 at 2, the run ends at 2; a count that took the completion rescheduled for a
    dead one would have ended it at 1.5."""
    src = PROGRAM.replace("ps(2 * present - 1)", "ps(present)")
    check_by_hand(monkeypatch, src, {"f": [(1, 1.5, 1.5), (0, 2.0, 2.0)]}, {"end": 2.0})


def test_under_a_horizon_the_drain_is_noted_alike_on_both_tiers(monkeypatch):
    """ps(1000 * present - 999): s0 (20) alone from 0, due at 20; s1 (19) from 1, when s0 has 19 left: two
    present share 1001, each done at 1 + 19 / 500.5. Under horizon 10 the completion due at 20 is past the
    horizon and does nothing: the run drained at 1.038 and stood idle 89.6 % of its 10 s, which the report
    notes, on both tiers alike (the fast tier counted that event as one left, the general engine not)."""
    src = PROGRAM.replace("2 * present - 1", "1000 * present - 999").replace("2 : 0.5", "20 : 19").replace(
        "horizon inf", "horizon 10")
    done = 1 + 19 / 500.5
    r, js = check_by_hand(monkeypatch, src, {"f": [(0, done, done), (1, done, done)]}, {"end": 10.0})
    assert any(n.startswith(f"note: every session ended by t={done:g} and none was left to arrive")
               for n in js["notes"]), js["notes"]
