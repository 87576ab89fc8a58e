"""Known defects, round 24 (the simulator's part).

The queues that find a pool's head by reading the keys of a few candidates (pools.linear.LinearQueue,
pools.model.WaitedQueue and ThresholdQueue) did not count their key reads down as units of the event's
work (Simulation.pulse, pulse_out), as the plain scan of the keys does (pools.admission.head): a lookup
that reads thousands of candidates (exact ties: every one of them is read) ran to its end deaf to
``--max-wall``. Now each key read inside a lookup (a placement, a grouping, a candidate, a key read again at
a cut) is a unit, on both tiers, and a bound the run does not reach changes nothing in its report."""

from __future__ import annotations

import math
import sys

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq_ir import nodes as N
from serq_ir.analysis import taken_arm
from serq_report.json import encode_json
from serq_sim import engine, fast
from serq_sim.compile import reads, reads_taken
from serq_sim.pools.linear import LinearQueue
from serq_sim.pools.model import ThresholdQueue, WaitedQueue, _chosen, kept_keys

TIERS = [("", "fast"), ("general", "general")]

# 1 500 sessions join the queue at t=0 (a pool of one, holds of 1 s), every one of the same key at
# every instant: each head lookup from t=1 on reads the key of every waiting session
TIED = """pool p { cap 1; queue by (KEY); }
stage d : delay;
workload { arrive batch(1500); }
session { set prio = 1; hold p (1) { run d (1); observe x = serial; } }
run { horizon 6; }
"""
# a linear key (LinearQueue: every candidate within the bound read), an aging threshold (ThresholdQueue: every
# key read at the placement and again past the cut) and (K, waited) (WaitedQueue: every K grouped)
KEYS = [("lin", "prio - waited", LinearQueue), ("cuts", "waited >= 0.5 ? 0 : prio", ThresholdQueue),
        ("waited", "prio, waited", WaitedQueue)]
HEADS = {LinearQueue.head.__code__, ThresholdQueue.head.__code__, WaitedQueue.head.__code__}


def _in_head() -> bool:
    f = sys._getframe(1)
    while f is not None:
        if f.f_code in HEADS:
            return True
        f = f.f_back
    return False


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tier", [t for t, _ in TIERS], ids=[i for _, i in TIERS])
@pytest.mark.parametrize("form, key, kind", KEYS, ids=[k[0] for k in KEYS])
def test_max_wall_stops_a_run_inside_a_head_lookup(monkeypatch, tier, form, key, kind):
    # the countdown held at its full length (2 048 units) and a bound already past: the run stops at the first
    # time the countdown runs out, which the 1 500 sessions resumed at t=0 do not reach and the first lookup
    # does (placing or grouping the 1 500 waiting sessions, reading their keys); before, the lookups counted
    # nothing and the run stopped at the end of the event, outside any lookup, its note naming no work
    monkeypatch.setattr(engine, "PULSE_FIRST", engine.PULSE)
    monkeypatch.setattr(fast, "PULSE_FIRST", engine.PULSE)
    monkeypatch.setattr(engine, "PULSE_SECONDS", float("inf"))
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    made = []
    init = kind.__init__

    def kept(self, *a, **kw):
        init(self, *a, **kw)
        made.append(self)

    monkeypatch.setattr(kind, "__init__", kept)
    calls = []
    out = engine.Simulation.pulse_out

    def watched(self, what, *a, **kw):
        calls.append((what, _in_head()))
        return out(self, what, *a, **kw)

    monkeypatch.setattr(engine.Simulation, "pulse_out", watched)
    r = serq_sim.run(serq_frontend.compile(source=TIED.replace("KEY", key)), max_wall=1e-9)
    assert made and not any(q.scan for q in made), form  # the lookups were the queue's, not the scan's
    assert r.partial == "max-wall", r.partial
    assert calls and calls[-1][1], calls[-1:]  # the stop came inside a head lookup
    note = next(n for n in r.result.notes if "wall time" in n)
    assert "within one event, reading the queue by keys of pool p for 1500 waiting sessions at <source>:1:1 at t=0;" \
        in note, note


@pytest.mark.timeout(60)
@pytest.mark.parametrize("form, key, kind", KEYS, ids=[k[0] for k in KEYS])
def test_a_bound_not_reached_changes_nothing(monkeypatch, form, key, kind):
    # the countdown from its first unit (it adapts: the clock read often), the bound far: the report is the
    # one without a bound, on both tiers, and the two tiers agree
    program = serq_frontend.compile(source=TIED.replace("KEY", key).replace("horizon 6", "horizon 40"))
    reports = {}
    for tier, name in TIERS:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        plain = serq_sim.run(program, seed=3)
        bounded = serq_sim.run(program, seed=3, max_wall=1e9)
        assert bounded.partial is None and plain.tier == bounded.tier
        reports[name] = (encode_json(plain), encode_json(bounded), plain.observe("x").values.tobytes(),
                         bounded.observe("x").values.tobytes())
        assert reports[name][0] == reports[name][1]
        assert reports[name][2] == reports[name][3]
    assert reports["fast"][0] == reports["general"][0]
    # the first 40 sessions admitted in join order (ties: the first to join)
    assert list(serq_sim.run(program, seed=3, max_wall=1e9).observe("x").values) == list(range(40))


# a conditional whose test is a number: one rule (serq_ir.analysis.taken_arm) for what its evaluation can reach
# (compile.reads with taken) and for the queue by keys kept (pools.model._chosen, which kept the conditional of a
# NaN test where the other two took its first arm); the evaluation itself is the truth they must agree with
TESTS = [(math.nan, "then"), (0.0, "orelse"), (-0.0, "orelse"), (2.0, "then")]
TEST_IDS = ["nan", "zero", "minus-zero", "two"]


def _cond(test):
    return N.Cond(test=N.Num(value=test), then=N.Ctx(name="waited"), orelse=N.Attr(slot=4))


@pytest.mark.parametrize("test, arm", TESTS, ids=TEST_IDS)
def test_reads_reaches_the_arm_taken(test, arm):
    def waited(e):
        return isinstance(e, N.Ctx) and e.name == "waited"

    assert reads_taken(_cond(test), waited) is (arm == "then")
    assert reads(_cond(test), waited)  # (without taken: every arm)


@pytest.mark.parametrize("test, arm", TESTS, ids=TEST_IDS)
def test_the_keys_kept_are_the_arm_taken(test, arm):
    e = _cond(test)
    assert _chosen(e) is getattr(e, arm)
    (kept,) = kept_keys([N.Binary(op="+", lhs=e, rhs=N.Num(value=1))])
    assert kept.lhs is getattr(e, arm)


@pytest.mark.parametrize("tier", [t for t, _ in TIERS], ids=[i for _, i in TIERS])
@pytest.mark.parametrize("test, arm", TESTS, ids=TEST_IDS)
def test_the_evaluation_takes_the_same_arm(monkeypatch, tier, test, arm):
    # the IR has no NaN number from the frontend: the test is written into the IR by hand
    program = serq_frontend.compile(source="workload { arrive batch(1); }\nsession { observe a = serial ? 1 : 2; }\n"
                                           "run { horizon 1; }\n")
    (st,) = program.session
    cond = msgspec.structs.replace(st.value, test=N.Num(value=test))
    program = msgspec.structs.replace(program, session=[msgspec.structs.replace(st, value=cond)])
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    assert taken_arm(cond) is getattr(cond, arm)
    if test != test:
        # a NaN number in an IR is refused at its path since 40b7f949 (serq_ir.validate): no evaluation meets one
        with pytest.raises(serq_ir.IRError) as err:
            serq_sim.run(program)
        assert "NaN" in str(err.value) and "$.session[0].value.test.value" in str(err.value)
        return
    r = serq_sim.run(program)
    assert list(r.observe("a").values) == [1.0 if arm == "then" else 2.0]
