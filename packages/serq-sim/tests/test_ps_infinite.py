"""``ps(φ)`` with an infinite capacity: every job there runs at φ(present)/present = inf, so a job of finite
work completes the instant it starts (language.txt §3: "ps(φ): every job at once, each at
φ(present)/present"). The virtual time advanced by the rate times the time passed, inf × 0 = NaN: after
the first completion the clock read NaN and no other job ever completed (one of 102 sessions ended).
Hand-computed cases, both tiers byte for byte."""

from __future__ import annotations

import serq_frontend
import serq_sim
from serq_report.json import encode_json


def _run(src, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src))


def _both(src, monkeypatch):
    a = _run(src, monkeypatch, "")
    b = _run(src, monkeypatch, "general")
    assert encode_json(a) == encode_json(b)
    return a


def by_session(r, name):
    o = r.observe(name)
    return {int(s): float(v) for v, s in zip(o.values, o.sessions)}


def test_every_job_completes_at_once(monkeypatch):
    src = """stage s : ps(inf);
workload { arrive poisson(1); }
session { set t0 = now; run s (~exp(1)); observe r = now - t0; end; }
run { horizon 100; seed 1; }
"""
    r = _both(src, monkeypatch)
    res = r.result
    assert res.ended == res.arrivals > 80
    assert set(r.observe("r").values.tolist()) == {0.0}


def test_jobs_at_one_instant_complete_then_in_the_order_of_their_work(monkeypatch):
    # three jobs start at t = 0 with work 3, 1, 2: all complete at 0, the least work first (finish tags)
    src = """stage s : ps(inf);
workload { arrive batch(3); }
session { set w = serial == 0 ? 3 : serial == 1 ? 1 : 2; run s (w); observe done_at = now; observe w = w; }
run { horizon 10; }
"""
    r = _both(src, monkeypatch)
    assert by_session(r, "done_at") == {0: 0.0, 1: 0.0, 2: 0.0}
    assert r.observe("w").values.tolist() == [1.0, 2.0, 3.0]


def test_a_capacity_infinite_only_for_one_job(monkeypatch):
    # two jobs of work 1 at t = 0 share a capacity of 2 (rate 1 each): the first completes at t = 1 (tie:
    # start order), the second is then alone, at an infinite rate: it completes at t = 1 too
    src = """stage s : ps(present >= 2 ? 2 : inf);
workload { arrive batch(2); }
session { run s (1); observe done_at = now; }
run { horizon 10; }
"""
    r = _both(src, monkeypatch)
    assert by_session(r, "done_at") == {0: 1.0, 1: 1.0}


def test_infinite_work_at_an_infinite_rate_never_completes(monkeypatch):
    # session 0 runs for ever; the others, arriving at 1, 2, ..., complete at once beside it
    src = """stage s : ps(inf);
stage d : delay;
workload { arrive batch(4); }
session { run d (serial); set t0 = now; run s (serial == 0 ? inf : 5); observe r = now - t0; }
run { horizon 50; }
"""
    r = _both(src, monkeypatch)
    assert by_session(r, "r") == {1: 0.0, 2: 0.0, 3: 0.0}
    assert r.result.end == 50.0
