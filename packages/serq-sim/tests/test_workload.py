"""Workload: arrival processes, presets, traces, run settings (arrivals N), determinism."""

from __future__ import annotations

import msgspec
import pytest
import serq_sim
from irb import P, b, draw, samples
from serq_ir import nodes as N


def arrivals_program(arrive, **kw):
    p = P()
    return p.build([p.observe("t", "now")], arrive=arrive, **kw)


def test_poisson_arrives_at_zero_then_gaps_renewal_after_one_gap():
    r = serq_sim.run(arrivals_program(N.Poisson(rate=2.0), horizon=5.0))
    t = r.observe("t").times
    assert t[0] == 0.0 and (t[1:] > 0).all()
    # renewal(det 1.5): arrivals at 1.5, 3, 4.5 (the first after one gap)
    r = serq_sim.run(arrivals_program(N.Renewal(gap=N.Num(value=1.5)), horizon=5.0))
    assert list(r.observe("t").times) == [1.5, 3.0, 4.5]
    # renewal(~exp(1/rate)) has the same later arrivals as poisson(rate), same seed
    ren = serq_sim.run(arrivals_program(N.Renewal(gap=draw("exp", 0.5)), horizon=5.0)).observe("t").times
    poi = serq_sim.run(arrivals_program(N.Poisson(rate=2.0), horizon=5.0)).observe("t").times
    assert list(ren[: len(poi) - 1]) == list(poi[1: len(ren) + 1])


def test_batch_closed_and_presets():
    p = P()
    d = p.stage("d", N.Delay())
    prog = p.build([p.run(d, 2), p.observe("t", "now")], arrive=N.Closed(n=3), horizon=7.0)
    r = serq_sim.run(prog)
    # three sessions, each replaced when it ends: ends at 2, 4, 6 (three each)
    assert list(r.observe("t").times) == [2.0] * 3 + [4.0] * 3 + [6.0] * 3
    prog = p.build([p.run(d, 2), p.observe("t", "now")], arrive=N.Batch(n=3), horizon=7.0)
    assert list(serq_sim.run(prog).observe("t").times) == [2.0] * 3
    q = P()
    prog = q.build([N.Turn(), q.observe("x", "x"), N.Turn(), q.observe("x", "x"), q.observe("m", "more")],
                   presets=[N.Preset(at=1.0, turns=[[N.SlotValue(slot=q.slot("x"), value=7.0)],
                                                    [N.SlotValue(slot=q.slot("x"), value=9.0)]])])
    q.slot("more")
    r = serq_sim.run(prog)
    assert samples(r, "x") == [(7.0, 0), (9.0, 0)]
    assert samples(r, "m") == [(0.0, 0)]


def test_trace_replay_ordered(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("session,turn,new,out,think,forced\n0,1,100,5,1,0\n0,2,150,6,2,0\n1,1,70,3,0,1\n")
    p = P()
    p.trace_attrs()
    d = p.stage("d", N.Delay())
    prog = p.build([N.Turn(), N.Loop(body=[
        p.observe("new", "new"),
        p.branch("more", [N.Turn(), p.run(d, "think")], [N.End()])])],
        arrive=N.Batch(n=2), trace=N.Trace(path="t.csv", ordered=True),
        source=str(tmp_path / "prog.sq"))
    r = serq_sim.run(prog)
    # session 0 replays trace session 0 (100, then 150 after think 2), session 1 trace session 1
    assert samples(r, "new") == [(100.0, 0), (70.0, 1), (150.0, 0)]
    assert list(r.observe("new").times) == [0.0, 0.0, 2.0]
    assert list(r.observe("new").turns) == [1, 1, 2]
    assert r.result.turns == 3


def test_arrivals_n_drains_and_reports_end():
    p = P()
    d = p.stage("d", N.Delay())
    prog = p.build([p.run(d, 10)], arrive=N.Renewal(gap=N.Num(value=1.0)), arrivals=3, horizon=100.0)
    r = serq_sim.run(prog)
    # arrivals at 1, 2, 3; the last ends at 13
    assert (r.result.arrivals, r.result.ended, r.result.end, r.result.horizon) == (3, 3, 13.0, 100.0)
    with pytest.raises(serq_sim.SimError, match="still live at the horizon"):
        serq_sim.run(prog, horizon=12.0)
    with pytest.raises(serq_sim.SimError, match="only 2 arrivals"):
        serq_sim.run(prog, horizon=2.5)
    with pytest.raises(serq_sim.SimError, match="at or before the warmup"):
        serq_sim.run(prog, warmup=50.0)


def test_same_seed_same_json_other_seed_other():
    p = P()
    f = p.stage("f", N.Fifo())
    pool = p.pool("kv", cap=20.0, block=4.0)
    prog = p.build([p.set_("t0", "now"),
                    p.hold([(pool, draw("uniform", 1, 12))], [p.run(f, draw("exp", 1.0))], cache=8),
                    p.observe("r", b("-", p.ex("now"), p.ex("t0")))],
                   arrive=N.Poisson(rate=0.7), horizon=2000.0, warmup=100.0)
    enc = msgspec.json.Encoder(order="deterministic")
    a = enc.encode(serq_sim.run(prog, seed=7).result)
    assert a == enc.encode(serq_sim.run(prog, seed=7).result)
    assert a != enc.encode(serq_sim.run(prog, seed=8).result)


def _preset_program(turns_each: int, sessions: int = 20):
    """Sessions given as presets, ``turns_each`` turns of two values each, and a record table (whose
    whole-number columns are judged from the presets' values)."""
    p = P()
    x, y = p.slot("x"), p.slot("y")
    d = p.stage("d", N.Delay())
    body = [N.Turn(), p.run(d, "x"), p.observe("x", "x")]
    presets = [N.Preset(at=float(k), turns=[[N.SlotValue(slot=x, value=float(t + 1)), N.SlotValue(slot=y, value=0.5)]
                                            for t in range(turns_each)]) for k in range(sessions)]
    prog = p.build(body, presets=presets, horizon=1000.0)
    table = N.RecordDecl(name="r", columns=["x", "y"])
    rec = N.Record(record=0, values=[N.Attr(slot=x), N.Attr(slot=y)])
    return msgspec.structs.replace(prog, records=[table], session=[*prog.session, rec])


def _python_calls(fn) -> int:
    """How many calls (and generator resumptions) of serQ's own Python code ``fn()`` makes; the garbage
    collector is held off meanwhile, so no finalizer of another test's objects is counted."""
    import gc
    import sys

    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and str(frame.f_globals.get("__name__", "")).startswith("serq"):
            count += 1

    enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
        if enabled:
            gc.enable()
    return count


def test_checking_and_preparing_presets_costs_nothing_per_value():
    # A workload given as presets (serq vllm scenario's: one preset a session) was walked node by node by
    # every pass over the program (serq_ir's checks, the engine's set-up), a call per preset value; the
    # passes now take a preset of numbers in one loop, so the Python calls do not grow with the values.
    from serq_ir.validate import validate
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    short, long = _preset_program(1), _preset_program(40)
    reg = registries()
    validate(short), Simulation(short, reg)  # what the first ones import is not counted
    assert _python_calls(lambda: validate(long)) == _python_calls(lambda: validate(short))
    assert _python_calls(lambda: Simulation(long, reg)) == _python_calls(lambda: Simulation(short, reg))
    # and what the passes find is the same: the values are whole in one slot and not in the other
    r = serq_sim.run(_preset_program(3, sessions=2))
    assert r.record_table("r")._table.whole == [True, False]
    assert samples(r, "x") == [(1.0, 0), (1.0, 1)]
