"""The fast tier (serq_sim.fast) gives what the general engine gives: the same JSON report byte for byte,
the same observe samples, the same errors; on every eligible example, bench and theory program and on
random simple programs."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from irb import P, b, draw, obs
from serq_ir import nodes as N
from serq_sim import fast
from tiers import assert_same

REPO = Path(__file__).resolve().parents[3]
TRACE = REPO / "examples" / "replay" / "short_base.csv"


# ---------------------------------------------------------------------------------------------------
# the repository's programs


def _programs():
    files = sorted(glob.glob(str(REPO / "examples" / "**" / "*.sq"), recursive=True))
    files += [str(REPO / "bench" / "mm1.sq"), str(REPO / "bench" / "observe10m.sq")]
    files += sorted(glob.glob(str(REPO / "packages" / "serq-sim" / "tests" / "theory" / "programs" / "*.sq")))
    return files


ELIGIBLE = []
for _f in _programs():
    _p = serq_frontend.compile(_f, sets={}, defs={})
    if fast.exclusion(_p) is None:
        ELIGIBLE.append(_f)


def test_the_eligible_programs_are_the_simple_ones():
    names = {Path(f).relative_to(REPO).as_posix() for f in ELIGIBLE}
    assert "bench/mm1.sq" in names
    assert "examples/single-turn/mg1.sq" in names and "examples/single-turn/ps.sq" in names
    assert "examples/multi-turn/closed.sq" in names
    assert "packages/serq-sim/tests/theory/programs/tandem.sq" in names
    assert not any("vllm" in n or "routing" in n for n in names)


#: programs run here at another setting than their own: the memory benchmark's 1 000 arrivals a second
#: would make the warm and cold runs 10⁶ and 6·10⁵ sessions of ten samples each, in both tiers
SETS = {"bench/observe10m.sq": {"rate": 10.0}}


@pytest.mark.parametrize("path", ELIGIBLE, ids=lambda f: Path(f).relative_to(REPO).as_posix())
@pytest.mark.parametrize("kw", [dict(horizon=4000.0, warmup=200.0), dict(horizon=600.0, warmup=0.0, seed=7),
                                dict(arrivals=3000, horizon=1e9, warmup=0.0)], ids=["warm", "cold", "limit"])
def test_repository_programs_agree(path, kw, monkeypatch):
    prog = serq_frontend.compile(path, sets=SETS.get(Path(path).relative_to(REPO).as_posix(), {}), defs={})
    if "arrivals" in kw and not isinstance(prog.workload.arrive, (N.Poisson, N.Renewal)):
        kw = dict(kw, arrivals=None, horizon=600.0)
    assert_same(prog, monkeypatch, **kw)


def test_mm1_benchmark_takes_the_fast_tier(monkeypatch):
    prog = serq_frontend.compile(str(REPO / "bench" / "mm1.sq"), sets={}, defs={})
    assert fast.tier(prog) == "fast"
    assert fast.tier(prog, check_invariants=True) == "general"
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    assert fast.tier(prog) == "general"
    assert serq_sim.run(prog, arrivals=2000).tier == "general"
    monkeypatch.delenv("SERQ_SIM_TIER")
    assert serq_sim.run(prog, arrivals=2000).tier == "fast"
    assert serq_sim.run(prog, arrivals=2000, check_invariants=True).tier == "general"


def test_a_program_with_a_pool_of_blocks_takes_the_general_engine():
    p = P()
    kv = p.pool("kv", cap=10.0, block=2.0)
    s = p.stage("s", N.Fifo())
    prog = p.build([p.hold([(kv, 1)], [p.run(s, draw("exp", 1.0))])], arrive=N.Poisson(rate=0.5),
                   horizon=100.0)
    assert fast.exclusion(prog) == "a pool with blocks"
    assert fast.tier(prog) == "general"
    assert serq_sim.run(prog).tier == "general"


def test_other_exclusions():
    p = P()
    s = p.stage("s", N.Fifo())
    p.gauge("q", obs("queue", s))
    assert fast.exclusion(p.build([p.run(s, 1.0)])) == "gauges"
    p = P()
    s = p.stage("s", N.Fifo())
    assert fast.exclusion(p.build([p.set_("x", obs("work", s)), p.run(s, 1.0)])) == "observable work"
    p = P()
    s = p.stage("s", N.Step(budget=N.Num(value=8.0), cost=N.Num(value=1.0)))
    assert fast.exclusion(p.build([p.run(s, 1.0, mode="decode")])) == "stage kind Step"


# ---------------------------------------------------------------------------------------------------
# random simple programs

SERVERS = [1.0, 2.0, 3.0, "inf"]  # a whole number or inf: the IR refuses a fraction, as the frontend does


@st.composite
def simple_programs(d):
    p = P()

    def b(op, lhs, rhs):  # names resolved in p
        return N.Binary(op=op, lhs=p.ex(lhs), rhs=p.ex(rhs))

    def call(fn, *args):
        return N.Call(fn=fn, args=[p.ex(a) for a in args])

    def cond(test, then, orelse):
        return N.Cond(test=p.ex(test), then=p.ex(then), orelse=p.ex(orelse))

    fams = []  # (ref, size)
    for k in range(d(st.integers(1, 3))):
        kind = d(st.sampled_from(["fifo", "delay", "ps"]))
        size = d(st.sampled_from([1, 1, 2, 3]))
        if kind == "fifo":
            node = N.Fifo(servers=d(st.sampled_from(SERVERS)))
        elif kind == "delay":
            node = N.Delay()
        else:
            phi = d(st.sampled_from([
                N.Num(value=1.0), N.Num(value=2.0), call("min", N.Ctx(name="present"), 3.0),
                b("/", N.Ctx(name="present"), b("+", N.Ctx(name="present"), 1.0)),
                b("+", 0.5, b("/", 1.0, N.Ctx(name="present"))),  # (a capacity may not draw: serq_ir.rules.DRAWS_AT)
            ]))
            node = N.Ps(capacity=phi)
        fams.append((p.stage(f"s{k}", node, size), size))

    def ref(allow_bad=False):
        r, size = d(st.sampled_from(fams))
        if size == 1 and d(st.booleans()):
            return r
        if allow_bad and d(st.integers(0, 30)) == 0:
            idx = b("%", "serial", float(size + 1))  # sometimes out of range: an error
        else:
            idx = d(st.sampled_from([N.Num(value=0.0), b("%", "serial", float(size)),
                                     call("floor", draw("uniform", 0.0, float(size))),
                                     call("min", float(size - 1), "turn_no")]))
        return N.StageRef(stage=r.stage, index=idx)

    def work():
        w = d(st.sampled_from([
            draw("exp", 1.0), draw("exp", 0.5), draw("det", 1.0), draw("det", 0.0), draw("uniform", 0.0, 2.0),
            draw("erlang", 2.0, 1.0), draw("h2", 1.0, 4.0), b("*", "x", 0.5), cond(draw("bernoulli", 0.2), 0.0, 1.0),
            call("max", 0.0, b("-", draw("exp", 1.0), 0.5)),  # 0 w.p. 0.39: the run completes at once
        ]))
        k = d(st.integers(0, 40))
        if k == 0:
            w = call("ln", -1.0)  # NaN: an error
        elif k == 1:
            w = b("-", draw("exp", 1.0), 0.5)  # negative w.p. 0.39: an error
        return w

    def value():
        return d(st.sampled_from([
            "now", b("-", "now", "t0"), draw("exp", 2.0), obs("queue", ref()), obs("busy", ref()),
            b("+", "x", 1.0), cond(b("<", draw("uniform", 0.0, 1.0), 0.3), 1.0, 0.0), "turn_no",
            b("*", "now", 0.5), b("/", "y", b("-", "x", 1.0)),  # (present exists at a ps capacity only)
        ]))

    def stmts(depth, budget):
        out = []
        for _ in range(d(st.integers(1, 4))):
            c = d(st.sampled_from(["set", "observe", "run", "run", "branch", "loop", "choose", "turn", "end"]))
            if c == "set":
                out.append(p.set_(d(st.sampled_from(["x", "y", "t0"])), value()))
            elif c == "observe":
                out.append(p.observe(d(st.sampled_from(["r", "q"])), value()))
            elif c == "run":
                out.append(N.Run(stages=[ref(allow_bad=True)], work=work()))
            elif c == "branch" and depth < 2:
                g = d(st.sampled_from([draw("bernoulli", 0.5), b(">", "x", 1.0), b("<", draw("exp", 1.0), 0.7)]))
                if d(st.integers(0, 30)) == 0:
                    g = draw("uniform", 0.0, 1.0)  # not 0 or 1: an error
                out.append(p.branch(g, stmts(depth + 1, budget), stmts(depth + 1, budget) if d(st.booleans()) else []))
            elif c == "loop" and depth < 2:
                k = f"k{depth}"
                body = [p.set_(k, b("+", k, 1.0))] + stmts(depth + 1, budget)
                body.append(p.branch(b(">=", k, float(d(st.integers(1, 4)))), [N.End()]))
                out.append(p.set_(k, 0.0))
                out.append(N.Loop(body=body))
            elif c == "choose":
                r, size = d(st.sampled_from(fams))
                j = p.slot("j")
                keys = [obs("queue", N.StageRef(stage=r.stage, index=N.Attr(slot=j)) if size > 1 else r)]
                if d(st.booleans()):
                    keys.append(b("-", 0.0, N.Attr(slot=j)))
                out.append(N.Choose(slot=j, n=N.Num(value=float(size)), keys=keys))
                out.append(N.Run(stages=[N.StageRef(stage=r.stage, index=N.Attr(slot=j) if size > 1 else None)],
                                 work=work()))
            elif c == "turn":
                out.append(N.Turn())
            elif c == "end" and depth > 0:
                out.append(N.End())
        return out

    arrive_kind = d(st.sampled_from(["poisson", "renewal", "closed", "batch", "none"]))
    r0, size0 = fams[0]  # (its member 0: a family of several is named by member, serq_ir.validate)
    first = N.Run(stages=[N.StageRef(stage=r0.stage, index=N.Num(value=0.0)) if size0 > 1 else r0],
                  work=draw("exp", 1.0))  # time passes in every session
    session = [p.set_("t0", "now"), first] + stmts(0, 3)
    if d(st.booleans()):
        session.append(p.observe("r", b("-", "now", "t0")))
    if arrive_kind == "closed" and d(st.booleans()):
        session = [N.Loop(body=session)]  # a closed loop that never ends
    init = [p.set_("x", draw("exp", 1.0))] if d(st.booleans()) else []
    if d(st.booleans()):
        init.append(p.observe("i", draw("uniform", 0.0, 1.0)))
    turn = [p.set_("y", draw("exp", 3.0))] if d(st.booleans()) else []
    presets = []
    if d(st.booleans()):
        for _ in range(d(st.integers(1, 4))):
            turns = [[N.SlotValue(slot=p.slot("x"), value=float(d(st.integers(0, 3))))]
                     for _ in range(d(st.integers(0, 2)))]
            presets.append(N.Preset(at=float(d(st.integers(0, 20))),
                                    attrs=[N.SlotValue(slot=p.slot("y"), value=2.0)], turns=turns))
    trace = None
    if arrive_kind in ("poisson", "closed") and d(st.integers(0, 4)) == 0:
        p.trace_attrs()
        trace = N.Trace(path=str(TRACE), ordered=d(st.booleans()))
    arrivals = None
    if arrive_kind == "poisson":
        arrive = N.Poisson(rate=d(st.sampled_from([0.3, 0.8, 2.0])))
    elif arrive_kind == "renewal":
        arrive = N.Renewal(gap=d(st.sampled_from([draw("exp", 1.5), draw("h2", 1.0, 4.0), draw("det", 1.0),
                                                  b("+", 0.1, draw("uniform", 0.0, 1.0))])))
    elif arrive_kind == "closed":
        arrive = N.Closed(n=d(st.integers(1, 6)))
    elif arrive_kind == "batch":
        arrive = N.Batch(n=d(st.integers(1, 30)))
    else:
        arrive = N.NoArrivals()
    horizon = d(st.sampled_from([50.0, 200.0]))
    if arrive_kind in ("poisson", "renewal") and d(st.booleans()):
        arrivals = d(st.integers(1, 150))
        horizon = d(st.sampled_from([horizon, 1e6, "inf"]))
    warmup = d(st.sampled_from([0.0, 0.0, 5.0, 20.0]))
    return p.build(session, arrive=arrive, horizon=horizon, warmup=warmup, seed=d(st.integers(0, 10**6)),
                   arrivals=arrivals, presets=presets, init=init, turn=turn, trace=trace)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(simple_programs())
def test_random_simple_programs_agree(prog):
    assert fast.exclusion(prog) is None
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # the trace a program names is read below the current folder (docs/simulator.md)
        out = assert_same(prog, mp)
    if out[0] == "error":  # only the errors the generator provokes on purpose
        assert out[1] == "SimError", out
        assert any(m in out[2] for m in (": index ", "branch guard", "work is NaN", "work is negative",
                                            "arrivals")), out[2]
    event(out[0])


def test_errors_agree(monkeypatch):
    p = P()
    s = p.stage("s", N.Fifo(), size=2)
    prog = p.build([p.run(N.StageRef(stage=s.stage, index=b("%", "serial", 3.0, p)), 1.0)],
                   arrive=N.Poisson(rate=1.0), horizon=10.0)
    out = assert_same(prog, monkeypatch)
    assert out[0] == "error" and "stage s: index 2 out of range" in out[2]
    p = P()
    s = p.stage("s", N.Delay())
    prog = p.build([p.run(s, 1.0), p.branch(draw("uniform", 0.0, 1.0), [])], arrive=N.Batch(n=3), horizon=10.0)
    out = assert_same(prog, monkeypatch)
    assert out[0] == "error" and "branch guard" in out[2]
    p = P()
    s = p.stage("s", N.Delay())
    prog = p.build([p.run(s, 1.0)], arrive=N.Renewal(gap=b("-", draw("exp", 1.0), 1.0)), horizon=10.0)
    out = assert_same(prog, monkeypatch)
    assert out[0] == "error" and "arrive renewal" in out[2]


def test_the_environment_variable_is_read_per_run(monkeypatch):
    assert os.environ.get("SERQ_SIM_TIER", "") in ("", "fast")
    p = P()
    s = p.stage("s", N.Fifo())
    prog = p.build([p.run(s, draw("exp", 1.0))], arrive=N.Poisson(rate=0.5), horizon=50.0)
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    assert serq_sim.run(prog).tier == "general"
    monkeypatch.setenv("SERQ_SIM_TIER", "fast")
    assert serq_sim.run(prog).tier == "fast"
