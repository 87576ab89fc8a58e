"""Hand-built IR programs for the IR's own tests."""

from __future__ import annotations

from serq_ir import nodes as n


def num(x: float | str) -> n.Num:
    return n.Num(value=x)


def mm1() -> n.Program:
    """M/M/1: Poisson(0.8) arrivals, one FIFO server with exponential(1) service, response observed."""
    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES] + [n.Attribute(name="t0")]
    t0 = len(n.BUILTIN_ATTRIBUTES)
    return n.Program(
        version=n.IR_VERSION,
        attributes=attrs,
        observes=[n.ObserveDecl(name="response")],
        stages=[n.Stage(name="server", kind=n.Fifo(servers=1.0))],
        workload=n.Workload(arrive=n.Poisson(rate=0.8)),
        session=[
            n.Set(slot=t0, value=n.Ctx(name="now")),
            n.Run(stages=[n.StageRef(stage=0)], work=n.Draw(dist="exp", args=[num(1.0)])),
            n.Observe(observe=0, value=n.Binary(op="-", lhs=n.Ctx(name="now"), rhs=n.Attr(slot=t0))),
        ],
        run=n.RunSettings(horizon=1e5, warmup=100.0, seed=7),
    )


def everything() -> n.Program:
    """A program using every statement, expression, pool option, stage kind and arrival kind."""
    sp = n.Span(file="every.sq", line=3, col=5)
    x = n.Attr(slot=4, span=sp)
    kv0 = n.PoolRef(pool=0, index=num(0.0))
    kv1 = n.PoolRef(pool=1)
    st = n.StageRef(stage=0, index=n.Attr(slot=5))
    exprs: list[n.Expr] = [
        num("inf"), num(-2.5), x,
        # the session's moment has only now (waited and position are read below, at theirs); three, so the
        # statements keep their places (test_validate names session[30])
        *[n.Ctx(name="now") for _ in range(3)],
        *[n.Draw(dist=d, args=[num(1.0), num(2.0)][:k])
          for d, k in (("exp", 1), ("det", 1), ("uniform", 2), ("erlang", 2), ("h2", 2), ("bernoulli", 1))],
        *[n.Call(fn=f, args=[x, num(2.0)][:2 if f in ("min", "max", "pow") else 1])
          for f in ("min", "max", "abs", "floor", "ceil", "sqrt", "exp", "ln", "pow")],
        n.Observable(name="used", target=kv0), n.Observable(name="budget_left", target=n.StageRef(stage=2, index=num(0.0))),
        n.Observable(name="price", target=st, args=[num(1.0), num(0.5)]),
        n.Unary(op="-", arg=x), n.Unary(op="!", arg=x),
        n.Binary(op="&&", lhs=x, rhs=num(1.0)), n.Cond(test=x, then=num(1.0), orelse=num(0.0)),
    ]
    body: list[n.Stmt] = [
        n.Grow(pool=kv0, amount=num(16.0)),
        n.Load(pool=kv0, amount=num(8.0)),
        n.Run(stages=[n.StageRef(stage=2, index=num(0.0))], work=num(100.0), mode="prefill", growing=kv0),
        n.Run(stages=[n.StageRef(stage=2, index=num(0.0))], work=num(10.0), mode="decode", growing=kv0),
        n.Release(pool=kv1),
    ]
    stmts: list[n.Stmt] = [
        n.Turn(span=sp),
        *[n.Set(slot=4, value=e) for e in exprs],
        n.Observe(observe=0, value=x),
        n.Hold(pools=[n.HoldPool(pool=kv0, units=num(32.0), reserve=num(64.0)),
                      n.HoldPool(pool=kv1, units=num(1.0))],
               body=body, reuse=num(16.0), cache=x, lease=n.Lease(pool=kv0, time=num("inf"))),
        n.Drop(pool=kv0),
        n.Run(stages=[n.StageRef(stage=6), n.StageRef(stage=7)], work=num(1.0)),
        n.Branch(guard=n.Draw(dist="bernoulli", args=[num(0.5)]), then=[n.End()], orelse=[n.Turn()]),
        n.Loop(body=[n.Choose(slot=5, n=num(2.0), keys=[n.Observable(name="queue", target=st), x]),
                     n.Run(stages=[st], work=num(1.0))]),
        n.Record(record=0, values=[x, n.Ctx(name="now")]),
        n.End(),
    ]
    raw = {"vacation": 2.5, "a": [1, 2]}
    return n.Program(
        version=n.IR_VERSION,
        attributes=[*(n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES),
                    n.Attribute(name="x"), n.Attribute(name="j"), n.Attribute(name="o", hidden=True)],
        constants=[n.Constant(name="B", value=512.0), n.Constant(name="cap", value="inf")],
        observes=[n.ObserveDecl(name="x"), n.ObserveDecl(name="hit", test=True),
                  n.ObserveDecl(name="at", instant=True)],
        records=[n.RecordDecl(name="request", columns=["sent", "done"])],
        gauges=[n.Gauge(name="u", value=n.Observable(name="used", target=n.PoolRef(pool=0, index=num(1.0))))],
        pools=[
            n.Pool(name="kv", size=2, cap=1024.0, block=16.0, evict=n.EvictBy(keys=[n.Ctx(name="age")]),
                   preempt=n.PreemptBy(keys=[n.Unary(op="-", arg=n.Ctx(name="admission")), n.Ctx(name="position")],
                                       requeue="tail"),
                   queue=n.QueueBy(keys=[n.Ctx(name="waited")]), reserve_held=True,
                   spill=n.Spill(tier=n.PoolRef(pool=1), link=n.StageRef(stage=3), work=n.Ctx(name="size"),
                                 when=num(1.0)),
                   admit_via=2),
            n.Pool(name="tier", evict=n.EvictLru()),
            n.Pool(name="slots", cap="inf", evict=n.Extension(name="random", params=raw),
                   preempt=n.PreemptNone(), queue=n.QueueFifo()),
        ],
        stages=[
            n.Stage(name="svc", size=2, kind=n.Fifo(servers=2.0)),
            n.Stage(name="cpu", kind=n.Ps(capacity=n.Call(fn="min", args=[n.Ctx(name="present"), num(4.0)]))),
            n.Stage(name="engine", size=2, kind=n.Step(budget=num(512.0), cost=n.Ctx(name="tokens"),
                                                 chunk=num(256.0), serve=n.ServeExclusivePrefill(), memory=0)),
            n.Stage(name="link", kind=n.Delay()),
            n.Stage(name="vac", kind=n.Extension(name="vacation", params=raw)),
            n.Stage(name="e2", kind=n.Step(budget=num(64.0), cost=num(1.0),
                                             serve=n.ServeBy(keys=[n.Ctx(name="remaining")]))),
            n.Stage(name="egress", kind=n.Ps(capacity=num(2.0))),
            n.Stage(name="ingress", kind=n.Ps(capacity=num("inf"))),
        ],
        workload=n.Workload(
            arrive=n.Renewal(gap=n.Draw(dist="h2", args=[num(2.0), num(4.0)])),
            presets=[n.Preset(at=0.0, attrs=[n.SlotValue(slot=4, value=1.0)],
                              turns=[[n.SlotValue(slot=6, value=100.0)]])],
            trace=n.Trace(path="t.csv", ordered=True),
            init=[n.Set(slot=4, value=num(0.0))],
            turn=[n.Set(slot=6, value=n.Draw(dist="exp", args=[num(10.0)]))],
        ),
        session=stmts,
        share="maxmin",
        run=n.RunSettings(horizon=100.0, warmup=10.0, seed=3, arrivals=50),
        source="every.sq",
    )


ARRIVALS = [n.Poisson(rate=1.0), n.Renewal(gap=num(2.0)), n.Closed(n=3), n.Batch(n=4), n.NoArrivals()]


def located_first_line(name: str, text: str, at: int, message: str) -> str:
    """The first line of the error an IR file ``name`` holding ``text`` gives about the value at character
    ``at``: its line and column (from 1), counted here in the text."""
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"{name}:{line}:{col}: error: {message}"
