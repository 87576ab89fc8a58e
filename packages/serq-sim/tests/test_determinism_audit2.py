"""A bound on events stops both plannings of a step engine at the same event (the determinism audit).

``max_events=N`` stops a run after its N-th event, on every tier (tests/test_partial.py). The lazy planning
of a step engine completes a stretch of quiet rounds inside one planning, each counted an event; the
bound was checked only at the loop's next tick, after the stretch, so the default planning stopped past N
(1 311 events for N = 50 on vllm.sq), with another partial report than the per-job planning
(``SERQ_SIM_TIER=general``), which stops at N. Under a bound the stretches are not taken: the same event,
the same report.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.step import StepStage
from tiers import run_on_tier

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
