"""A bound on events stops both plannings of a step engine at the same event (the determinism audit).

``max_events=N`` stops a run after its N-th event, on every tier (tests/test_partial.py). The lazy planning
of a step engine completes a stretch of quiet rounds inside one planning, each counted an event; the
bound was checked only at the loop's next tick, after the stretch, so the default planning stopped past N
(1 311 events for N = 50 on vllm.sq), with another partial report than the per-job planning
(``SERQ_SIM_TIER=general``), which stops at N. A stretch now ends at the bound and stops the run there,
after the round that is the N-th event, with the clock at that round's end: the same event, the same
report; and a bound takes nothing from the speed of the stretches (they were once switched off under one).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.step import StepStage
from tiers import run_on_tier

ROOT = Path(__file__).resolve().parents[3]

# one engine, long decodes, sparse arrivals: iterations that serve lazy decoders only, one after another
PROGRAM = """pool reqs { cap 8; admit via engine; }
pool kv { cap 4000; block 16; }
stage engine : step { budget 256; cost 0.01; memory kv; }
workload { arrive poisson(0.05); }
session {
  set t0 = now;
  hold reqs (1), kv (200) {
    run engine prefill (40);
    observe ttft = now - t0;
    run engine decode (150);
  }
}
run { horizon 200; seed 2; }
"""


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(source=PROGRAM)


def test_the_program_takes_quiet_rounds_when_unbounded(program):
    sim, outcome, _ = run_on_tier(program, "")
    assert outcome[0] == "report"
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    assert eng.quiet_rounds > 100  # what the bound below would be carried past


@pytest.mark.parametrize("n", [30, 461])
def test_max_events_stops_the_lazy_planning_at_exactly_n_events(program, monkeypatch, n):
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    lazy = serq_sim.run(program, max_events=n)
    assert lazy.result.events == n and lazy.partial == "max-events"
    assert any(f"stopped after {n} events (--max-events {n})" in note for note in lazy.result.notes)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    per_job = serq_sim.run(program, max_events=n)
    assert per_job.result.events == n
    assert encode_json(lazy) == encode_json(per_job)


# each session: an arrival, a completion (two events), then ten samples of x (tests/test_samples_bound.py)
TEN = """stage d : delay;
workload { arrive poisson(1000); }
session {
  run d (0.0001);
  set i = 0;
  loop { observe x = i; set i = i + 1; branch (i == 10) { end; } }
}
run { horizon 1e12; seed 1; }
"""
# the same with a gauge: the general engine
TEN_GAUGE = TEN.replace("stage d : delay;", "stage d : delay;\ngauge q = queue(d);")


@pytest.mark.parametrize("src, tier", [(TEN, "fast"), (TEN_GAUGE, "general")])
def test_a_wall_bound_that_never_fires_does_not_move_the_samples_bound(src, tier):
    # --max-wall reads the clock every 1 000 events; the bound on samples was checked at those ticks
    # too, so a run given a wall bound of hours stopped at another event, with another report
    program = serq_frontend.compile(source=src)
    plain = serq_sim.run(program, max_samples=50_000)
    walled = serq_sim.run(program, max_samples=50_000, max_wall=1e9)
    assert plain.tier == walled.tier == tier
    assert plain.result.partial == walled.result.partial == "max-samples"
    if tier == "general":  # counted down where they are added: stopped holding 50 000, observes' and the gauge's
        held = len(plain.observe("x")) + sum(len(g) for g in plain.gauges.values())
        assert held == 50_000
    assert encode_json(walled) == encode_json(plain)
    bounded = serq_sim.run(program, max_samples=50_000, max_events=10**9)  # (exact ticks in the fast tier)
    assert encode_json(bounded) == encode_json(plain)


def test_a_wall_bound_does_not_move_the_samples_bound_of_the_lazy_planning(program, monkeypatch):
    # quiet rounds count in the events a stretch at a time; the checks come every TICK events the loop pops,
    # at the same event whether the loop also ticks for the clock or not (ticks a tenth as far apart here,
    # so that a short run sees several)
    from serq_sim import engine

    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    monkeypatch.setattr(engine, "TICK", 1500)
    plain = serq_sim.run(program, max_samples=40, horizon=1e4)
    walled = serq_sim.run(program, max_samples=40, horizon=1e4, max_wall=1e9)
    assert plain.result.partial == "max-samples"
    assert encode_json(walled) == encode_json(plain)


def test_the_order_of_the_slos_is_not_in_the_report():
    # --slo tpot=0.05,ttft=1 and --slo ttft=1,tpot=0.05 are one objective: one report, the SLOs in the order
    # the metrics are listed (ttft, tpot, e2el)
    import serq_report

    vllm = serq_frontend.compile(str(ROOT / "examples/multi-turn/vllm.sq"))
    reports = []
    for slo in ({"tpot": 0.05, "e2el": 30.0, "ttft": 1.0}, {"ttft": 1.0, "tpot": 0.05, "e2el": 30.0}):
        r = serq_sim.run(vllm, horizon=40, warmup=0)
        r.set_slo(slo)
        reports.append((encode_json(r), serq_report.render(r, "text")))
    assert reports[0] == reports[1]
    assert b'"slo": {\n      "ttft": 1.0,\n      "tpot": 0.05,\n      "e2el": 30.0\n    }' in reports[0][0]
    assert "good: ttft <= 1, tpot <= 0.05, e2el <= 30)" in reports[0][1]


def _stage(sim):
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    return eng


def test_a_bound_not_reached_changes_nothing_and_keeps_the_quiet_rounds(program):
    sim, outcome, samples = run_on_tier(program, "")
    bounded, b_outcome, b_samples = run_on_tier(program, "", max_events=10**9)
    assert (b_outcome, b_samples) == (outcome, samples)
    assert _stage(bounded).quiet_rounds == _stage(sim).quiet_rounds > 100


def test_every_bound_inside_the_stretches_stops_both_plannings_at_the_same_event(program):
    sim, outcome, _ = run_on_tier(program, "")
    total = sim.events
    # bounds spread over the whole run: most of them fall inside a stretch of quiet rounds
    for n in range(7, total, max(total // 40, 1)):
        lazy_sim, lazy, lazy_samples = run_on_tier(program, "", max_events=n)
        per_job_sim, per_job, per_job_samples = run_on_tier(program, "general", max_events=n)
        assert lazy_sim.events == per_job_sim.events == n
        assert (lazy, lazy_samples) == (per_job, per_job_samples), n
        assert lazy_sim.now == per_job_sim.now, n
