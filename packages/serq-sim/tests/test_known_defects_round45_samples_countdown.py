"""``--max-samples N`` stops a run on the general engine at the statement that makes it hold N samples: the samples
an observe, a record's row or a gauge's change point adds are counted down where they are added (one decrement a
statement, Simulation.samples_left). They were counted every 20 000 events, so a session adding 1 000 samples at one
instant (a loop of observes) held 9 999 000 of a bound of 50 000 when the run stopped. The fast tier checks where its
buffers grow, as docs/simulator.md says: at least N and fewer than N + max(1 024, N/8) for one observe."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

# a session: one event (its run's end), then 1 000 samples at that instant
LOOP = """stage d : delay;

workload {
  arrive poisson(1);
}

session {
  run d (1);
  set i = 0;
  loop {
    observe x = now;
    set i = i + 1;
    branch (i >= 1000) {
      end;
    }
  }
}

run { horizon 100000; warmup 0; seed 1; }
"""
# the same with a gauge (its change points are samples too): no fast tier, the lean general engine by default
GAUGE = LOOP.replace("stage d : delay;\n", "stage d : delay;\ngauge q = queue(d);\n")
# a row of three columns a session: 1 000 samples are reached within the 334th row, which holds 1 002
RECORD = """stage d : delay;

workload {
  arrive poisson(1);
}

session {
  run d (1);
  record req {
    a = now;
    b = 1;
    c = 2;
  }
}

run { horizon 100000; warmup 0; seed 1; }
"""
# 5 000 sessions of a batch each observe once as they arrive, at t = 0 (a workload's block: Simulation.observe;
# with a gauge, on the general engine whatever the tier asked)
BATCH = """stage d : delay;
gauge q = queue(d);

workload {
  arrive batch(5000);
  init {
    observe y = 1;
  }
}

session {
  run d (1);
}

run { horizon 10; warmup 0; seed 1; }
"""


def _run(monkeypatch, src: str, tier: str, n: int):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=src), max_samples=n)
    assert r.result.partial == "max-samples" and r.exit_status == 3
    # the samples held: every observe's, the gauges' change points, and a sample a declared column of a row (a
    # warm-up of 0: every row kept; RECORD's three columns)
    held = (sum(len(o) for o in r.observes.values()) + sum(len(g) for g in r.gauges.values())
            + sum(3 * len(r.record_table(name)) for name in r.record_names))
    return r, held


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize(("src", "n", "expect"), [
    (GAUGE, 50_000, 50_000),   # one sample at a time: exactly N
    (GAUGE, 7, 7),
    (RECORD, 1_000, 1_002),    # a row's three columns at once: ceil(1000 / 3) = 334 rows
    (BATCH, 1_000, 1_000),
])
def test_the_general_engine_stops_at_the_bound(monkeypatch, tier, src, n, expect):
    r, held = _run(monkeypatch, src, tier, n)
    assert r.tier == "general"
    assert held == expect
    assert any(f"stopped holding {expect} samples" in note and f"(--max-samples {n})" in note
               for note in r.result.notes), r.result.notes


@pytest.mark.parametrize("n", [50_000, 2_000, 100_000])
def test_the_fast_tier_stops_within_its_documented_bound(monkeypatch, n):
    # one observe: its buffer grows by an eighth (at least 1 024) when full; the run stops at the growth that
    # would take the room past n
    r, held = _run(monkeypatch, LOOP, "", n)
    assert r.tier == "fast"
    assert n <= held < n + max(1024, n // 8), held
    # the general engine on the same program: n exactly
    r, held = _run(monkeypatch, LOOP, "general", n)
    assert r.tier == "general" and held == n


def test_below_the_bound_the_run_is_as_before(monkeypatch):
    # the countdown runs out and counts again (a bound of 10 000 passed by 1 000 at a time), stopping nothing: the
    # same report as with no bound given
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    program = serq_frontend.compile(source=GAUGE.replace("horizon 100000", "horizon 30"))
    bounded = serq_sim.run(program, max_samples=100_000)
    plain = serq_sim.run(program)
    assert bounded.result.partial is None and bounded.result == plain.result
    assert len(bounded.observe("x")) > 20_000
