"""A stretch of quiet rounds whose next round would end past the largest double ends the run where the
per-job planning ends it (serq_sim.step.lazy.LazyDecoding._quiet_rounds; docs/simulator.md, "Lazy
decoding and quiet rounds").

Without a horizon an event at inf never happens (engine.MAX_TIME), and the run ends at the last event.
Three decoders of 50 tokens on an engine whose iteration costs 1e307 s: iteration k ends at k × 1e307,
and the 18th would end at 1.8e308, past the largest double (1.797e308), so 17 iterations end (the first
serves the prefills, the 16 after it one token to each decoder) and the run ends at 1.7e308 with the
engine busy throughout (utilisation 1, 3 jobs present; the report counts 18 iterations, the one that
never ends among them, as it counts an iteration when it starts). The per-job planning (SERQ_SIM_TIER=general)
said so; the lazy planning took rounds 2 … 17 as one stretch at t = 1e307 and pushed the 18th iteration's
end, at inf: no event came after the stretch, so the run ended at 1e307, its time averages the stretch's
integrals over that span: utilisation 17, 51 jobs present, 'end 1e+307'. The stretch now leaves a round
whose next would end at inf to the event loop, so the run's last event is that round's end."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(60)


def program(cost: str, grow: str = "") -> str:
    return f"""pool reqs {{ cap 4; admit via E; }}
pool kv {{ cap 1024; block 16; evict lru; preempt lifo; }}
stage E : step {{ budget 64; cost {cost}; memory kv; }}
workload {{
  arrive batch(3);
}}
session {{
  hold reqs (1), kv (10) {{
    prefill (10) {grow};
    decode (50) {grow};
  }}
  end;
}}
run {{ horizon inf; seed 1; }}
"""


def both(src: str, monkeypatch):
    reports = {}
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        reports[tier] = serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
    assert encode_json(reports[""]) == encode_json(reports["general"])
    return reports[""]


@pytest.mark.parametrize("grow", ["", "growing kv"])
def test_the_run_ends_at_the_last_iteration_that_ends(monkeypatch, grow):
    report = both(program("1e307", grow), monkeypatch)
    assert report.result.end == pytest.approx(1.7e308, rel=1e-12)  # (17 sums of 1e307)
    engine = report.stage("E")
    assert engine.iterations == 18
    assert engine.utilisation == 1.0
    assert engine.present == pytest.approx(3.0, rel=1e-12)
    assert report.result.ended == 0  # each decoder has 50 - 16 tokens left when the clock runs out


def test_a_cost_that_reads_the_tokens_too(monkeypatch):
    # 1e307 + tokens × 1e305: the first iteration (30 prefill tokens) costs 1.3e307, each after it (3
    # decode tokens) 1.03e307, so 17 end (1.3e307 + 16 × 1.03e307 = 1.778e308) and the 18th, started then,
    # would end past the largest double
    report = both(program("1e307 + tokens * 1e305"), monkeypatch)
    assert report.stage("E").iterations == 18
    assert report.result.end == pytest.approx(1.3e307 + 16 * 1.03e307, rel=1e-12)
    assert report.stage("E").utilisation == 1.0
