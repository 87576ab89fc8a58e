"""Running one program on a named tier (``SERQ_SIM_TIER``) for the differential tests of the step engine's
shortcuts (test_step_growing.py, test_step_lazy.py): the report as JSON and every observe's samples; and
``assert_same``, the fast tier against the general engine (test_fast_tier.py, test_fast_pools.py); ``both``, the
report of a source on both (the hostile tests of round 26); ``same_json``, a program's JSON report on the default
tier and the general engine, whichever the default takes."""

from __future__ import annotations

import os

import serq_sim
from serq_report.json import encode_json
from serq_sim.api import registries
from serq_sim.engine import Simulation


def run_on_tier(program, tier: str, **kw):
    """``(simulation, outcome, samples)``: ``outcome`` is ``("report", json)`` or, when the run raised,
    ``("error", type name, message)`` with ``samples`` None; ``samples`` the observes' columns as bytes."""
    old = os.environ.get("SERQ_SIM_TIER")
    os.environ["SERQ_SIM_TIER"] = tier
    try:
        sim = Simulation(program, registries(), seed=kw.get("seed"), horizon=kw.get("horizon"),
                         warmup=kw.get("warmup"), arrivals=kw.get("arrivals"), check_invariants=False,
                         progress=False, trace_path=None, max_events=kw.get("max_events"))
        try:
            r = sim.run()
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            return sim, ("error", type(e).__name__, str(e)), None
    finally:
        if old is None:
            del os.environ["SERQ_SIM_TIER"]
        else:
            os.environ["SERQ_SIM_TIER"] = old
    samples = {name: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
               for name, o in r.observes.items()}
    return sim, ("report", encode_json(r)), samples


def _outcome(program, monkeypatch, tier: str, **kw):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    try:
        r = serq_sim.run(program, **kw)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return ("error", type(e).__name__, str(e)), None
    samples = {name: tuple((getattr(o, f).dtype.str, getattr(o, f).tobytes())
                           for f in ("values", "times", "sessions", "turns"))
               for name, o in r.observes.items()}
    return ("report", r.tier, encode_json(r)), samples


def assert_same(program, monkeypatch, *, expect_fast: bool = True, **kw):
    general, gs = _outcome(program, monkeypatch, "general", **kw)
    quick, qs = _outcome(program, monkeypatch, "", **kw)
    if general[0] == "report":
        assert general[1] == "general"
        if expect_fast:
            assert quick[0] == "report" and quick[1] == "fast", quick[:2]
        assert quick[2] == general[2]
        assert qs == gs
    else:
        assert quick == general
    return general


def on_both_tiers(program, check, reset=None):
    """Run ``program`` on the lean code and on the per-job reference (SERQ_SIM_TIER=general), calling
    ``reset()`` before each run (a work count to start again) and ``check(tier, sim)`` after it, once the run
    ended with a report; the two reports and samples must be the same byte for byte. The tests of costs
    that must grow with the work use it (test_*_burst.py)."""
    reports = {}
    for tier in ("", "general"):
        if reset is not None:
            reset()
        sim, outcome, samples = run_on_tier(program, tier)
        assert outcome[0] == "report", outcome
        check(tier, sim)
        reports[tier] = (outcome, samples)
    assert reports[""] == reports["general"]


def both(src: str, monkeypatch):
    """The report of source ``src`` on the fast tier and on the general engine, which must be the same bytes
    (the program takes the fast tier): the general engine's."""
    import serq_frontend

    prog = serq_frontend.compile(source=src, sets={}, defs={})
    monkeypatch.setenv("SERQ_SIM_TIER", "")
    fast = serq_sim.run(prog)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    general = serq_sim.run(prog)
    assert fast.tier == "fast" and general.tier == "general"
    assert encode_json(fast) == encode_json(general)
    return general


def same_json(prog, monkeypatch, **kw) -> dict:
    """The JSON report of the compiled ``prog`` (``serq_sim.run``'s keywords ``kw``) on the default tier and on the
    general engine, which must be the same bytes, read back."""
    import json

    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(encode_json(serq_sim.run(prog, **kw)))
    assert out[0] == out[1]
    return json.loads(out[1])


def same_error(prog, monkeypatch) -> str:
    """The run-time error (``serq_sim.SimError``) of the compiled ``prog`` on the default tier and on the general
    engine, which must be the same words."""
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        try:
            serq_sim.run(prog)
        except serq_sim.SimError as e:
            out.append(str(e))
        else:
            raise AssertionError(f"no error on tier {tier or 'default'!r}")
    assert out[0] == out[1]
    return out[1]
