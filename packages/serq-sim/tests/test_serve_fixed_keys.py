"""A step stage's ``serve by`` keys that read nothing which changes while a job is resident (attributes,
numbers and ``admission``) are evaluated once per job, at the first planning that orders it, and kept while
the job is resident (``StepStage.serve_fixed``; ``Planner._order``); the per-job reference
(``SERQ_SIM_TIER=general``) evaluates them at every iteration. Both must give the same report byte for
byte: ties (kept in the residents' order), NaN keys, re-admissions after preemption (a new job, a new
admission), newcomers ordered by an admission, families of engines."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

TEMPLATE = """
let N = {engines};
pool reqs[N] {{ cap 24; admit via E; }}
pool kv[N] {{ cap {cap}; block 8; evict lru; preempt lifo; }}
stage E[N] : step {{ budget 48; cost 0.01 + 0.002 * decoders + 0.0001 * prefilled; memory kv; serve by ({keys}); }}
workload {{ arrive poisson(30); }}
session {{
  loop {{
    set pri = floor(~uniform(0, 3));
    set odd = pri == 1 ? 0 / 0 : pri;
    set t0 = now;
    choose j in N by (holders(reqs[j]), j);
    hold reqs[j] (1), kv[j] (8) {{
      run E[j] prefill (floor(~uniform(10, 90))) growing kv[j];
      set pri = 2 - pri;  // the decode job's keys are not the prefill job's
      run E[j] decode (floor(~uniform(5, 60))) growing kv[j];
    }}
    observe response = now - t0;
    branch with (0.5) {{ run E[j] decode (0); }} else {{ end; }}
  }}
}}
run {{ horizon 40; seed {seed}; }}
"""

KEYS = ["pri", "-pri, admission", "pri, -admission", "odd, t0", "1, -t0", "-admission", "decoding ? 0 : 1",
        "decoding, -pri"]


def _report(src, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src))


@pytest.mark.parametrize("keys", KEYS)
@pytest.mark.parametrize("engines, cap", [(1, 400), (2, 300)])
def test_keys_taken_once_order_as_the_reference(monkeypatch, keys, engines, cap):
    src = TEMPLATE.format(engines=engines, cap=cap, keys=keys, seed=5)
    fixed = _report(src, monkeypatch, "")
    reference = _report(src, monkeypatch, "general")
    assert encode_json(fixed) == encode_json(reference)
    kv = [p for p in fixed.result.pools if p.name.startswith("kv")]
    assert sum(p.preemptions for p in kv) > 5  # re-admissions: new jobs with new keys


def test_which_keys_are_fixed(monkeypatch):
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    def fixed(keys):
        prog = serq_frontend.compile(source=TEMPLATE.format(engines=1, cap=400, keys=keys, seed=1))
        sim = Simulation(prog, registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                         check_invariants=False, progress=False, trace_path=None)
        (stage,) = sim.step_stages
        return stage.serve_fixed

    # a job is a prefill or a decode for good: `decoding` (serve decode first) is kept too
    assert fixed("pri") and fixed("-pri, admission") and fixed("1, -t0") and fixed("decoding, pri")
    assert fixed("decoding ? 0 : 1")
    # these change while a job is resident: evaluated every iteration
    assert not fixed("remaining") and not fixed("decoding + remaining") and not fixed("pri * residents")
    assert not fixed("holders(reqs), pri") and not fixed("now - t0")


def test_a_nan_key_counts_as_inf(monkeypatch):
    # docs/language.md: a `serve by` key that is NaN counts as inf; ties (here NaN and inf) in admission
    # order (sessions outside every hold: by serial). Budget 1 a step, each decode 2 tokens: the first in
    # the serving order takes each step. Keys: s0 NaN, s1 2, s2 1, s3 inf -> s2 done at 2, s1 at 4, s0 at
    # 6 (NaN as inf, before s3 by admission), s3 at 8; the same on the per-job reference.
    src = """
stage E : step { budget 1; cost 1; serve by (k); }
workload { arrive batch(4); }
session {
  set k = serial == 0 ? (serial - serial) / (serial - serial) : (serial == 1 ? 2 : (serial == 2 ? 1 : inf));
  run E decode (2);
  observe done = now;
}
run { horizon 100; }
"""
    from conform import run

    _, obs = run(src, monkeypatch)
    assert obs["done"] == [(2, 2.0, 2.0), (1, 4.0, 4.0), (0, 6.0, 6.0), (3, 8.0, 8.0)]


def test_kept_keys_take_the_lazy_planning(monkeypatch):
    # a vLLM-like engine whose serve keys a job keeps while resident: the residents are kept in that
    # order (StepStage.ranked) and the lazy planning (lazy growers, quiet rounds) takes it, with the same
    # report as the per-job reference
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    for keys in ("pri", "-pri, admission", "odd, t0", "decoding ? 0 : 1"):
        src = TEMPLATE.format(engines=1, cap=400, keys=keys, seed=3)
        sim = Simulation(serq_frontend.compile(source=src), registries(), seed=None, horizon=None, warmup=None,
                         arrivals=None, check_invariants=False, progress=False, trace_path=None)
        report = sim.run()
        (stage,) = sim.step_stages
        assert stage.ranked and stage.glazy_iterations > 0 and stage.quiet_rounds > 0, keys
        assert encode_json(report) == encode_json(_report(src, monkeypatch, "general"))
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
