"""A family's members read in a long aggregate are the fold's rows themselves, and a constant member is the member.

``max q in N (used(kv[q]))`` is written out by the linker as ``max(used(kv[0]), …, used(kv[N-1]))``, and from 33
terms on the general engine evaluates it as a loop over the rows of the numbers that differ (serq_sim.fold).
The member index was one of those numbers, so every term of every evaluation looked its member up and checked it
(``Simulation.pool_at``): a family of 256 engines with three gauges over it made 35 million lookups in 5 s of
simulated time, 5.4 s of CPU. The rows now hold the members (checked once, when the loop is made) and the
pool's figure is read off the member as a ``choose`` candidate's is: 1.2 s, the same report to the byte. A
member named by a constant index outside any fold (``used(kv[3])``) is likewise the member itself, not a lookup
at each evaluation. The fast tier reads its members by index and is unchanged; both tiers give the figures
computed by hand here."""

from __future__ import annotations

import serq_frontend
import serq_sim
from serq_sim.engine import Simulation
from tiers import run_on_tier

SOURCE = """pool p[40] { cap 1; }
stage d : delay;
gauge busy = sum q in 40 (used(p[q]));
gauge most = max q in 40 (holders(p[q]) + queued(p[q]));
gauge third = used(p[3]);
workload { arrive batch(40); }
session {
  hold p[serial % 40] (1) {
    run d (serial % 40 + 1);
  }
}
run { horizon 100; }
"""


def _program(tmp_path):
    f = tmp_path / "f.sq"
    f.write_text(SOURCE)
    return serq_frontend.compile(str(f))


def test_the_gauges_over_a_family_are_the_hand_computed_figures_on_both_tiers(tmp_path):
    # session k (serials 0..39, all at t = 0) holds p[k] for k + 1 s: sum of used is 40 - floor(t) pools busy
    # until t = 40, a time average over [0, 100] of (1 + 2 + … + 40) / 100 = 8.2; the largest holders + queued
    # is 1 until t = 40 (0.4); p[3] is held for 4 s (0.04)
    program = _program(tmp_path)
    outs = {}
    for tier in ("general", "fast"):
        _sim, outcome, _samples = run_on_tier(program, tier)
        assert outcome[0] == "report", outcome
        outs[tier] = outcome[1]
    assert outs["general"] == outs["fast"]
    r = serq_sim.run(program)
    g = r.result.gauges
    assert (g["busy"].mean, g["busy"].min, g["busy"].max) == (8.2, 0.0, 40.0)
    assert (g["most"].mean, g["most"].max) == (0.4, 1.0)
    assert g["third"].mean == 0.04


def test_the_general_engine_looks_no_member_up_in_the_loop(tmp_path, monkeypatch):
    calls = []
    original = Simulation.pool_at

    def counted(self, *args, **kwargs):
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Simulation, "pool_at", counted)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    r = serq_sim.run(_program(tmp_path))
    assert r.result.gauges["busy"].mean == 8.2
    # the holds index p by a computed index (serial % 40): one lookup each, 40; the gauges' 81 terms, evaluated
    # at the end of each of the run's instants, none (they were 81 lookups an instant)
    assert len(calls) == 40
