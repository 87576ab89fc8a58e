"""Building IR programs concisely in tests.

Expressions: numbers and strings are turned into nodes by :func:`ex`: a string is an attribute name
(declared on first use) or a context variable (``"now"``, ``"present"``, …), a number a ``Num``. Operators
build ``Binary`` nodes: ``b("+", "x", 1)``. Statements are small functions (``set_``, ``hold``, ``run``…),
and :class:`P` collects pools, stages, observes and attributes and builds the :class:`serq_ir.Program`.
"""

from __future__ import annotations

from serq_ir import nodes as N

CTX = set(N.ContextName.__args__)


class P:
    """A program under construction."""

    def __init__(self):
        self.attrs: list[N.Attribute] = [N.Attribute(name=n, builtin=True) for n in N.BUILTIN_ATTRIBUTES]
        self.pools: list[N.Pool] = []
        self.stages: list[N.Stage] = []
        self.observes: list[N.ObserveDecl] = []
        self.gauges: list[N.Gauge] = []

    # names
    def slot(self, name: str) -> int:
        for i, a in enumerate(self.attrs):
            if a.name == name:
                return i
        self.attrs.append(N.Attribute(name=name))
        return len(self.attrs) - 1

    def trace_attrs(self) -> None:
        for n in N.TRACE_ATTRIBUTES:
            if all(a.name != n for a in self.attrs):
                self.attrs.append(N.Attribute(name=n, builtin=True))

    def ex(self, x) -> N.Expr:
        if isinstance(x, (int, float)):
            return N.Num(value=float(x))
        if isinstance(x, str):
            if x in ("inf", "-inf"):
                return N.Num(value=x)
            if x in CTX:
                return N.Ctx(name=x)
            return N.Attr(slot=self.slot(x))
        return x

    def pool(self, name: str, **kw) -> N.PoolRef:
        self.pools.append(N.Pool(name=name, **kw))
        return N.PoolRef(pool=len(self.pools) - 1)

    def stage(self, name: str, kind, size: int = 1) -> N.StageRef:
        self.stages.append(N.Stage(name=name, kind=kind, size=size))
        return N.StageRef(stage=len(self.stages) - 1)

    def obs(self, name: str, test: bool = False) -> int:
        for i, o in enumerate(self.observes):
            if o.name == name:
                return i
        self.observes.append(N.ObserveDecl(name=name, test=test))
        return len(self.observes) - 1

    def gauge(self, name: str, value) -> None:
        self.gauges.append(N.Gauge(name=name, value=self.ex(value)))

    def build(self, session, *, arrive=None, horizon="inf", warmup=0.0, seed=1, arrivals=None, presets=(),
              init=(), turn=(), trace=None, share=None, source=None) -> N.Program:
        wl = N.Workload(arrive=arrive or N.NoArrivals(), presets=list(presets), init=list(init),
                        turn=list(turn), trace=trace)
        return N.Program(version=N.IR_VERSION, attributes=self.attrs, observes=self.observes,
                         gauges=self.gauges, pools=self.pools, stages=self.stages, workload=wl,
                         session=list(session), share=share, source=source,
                         run=N.RunSettings(horizon=horizon, warmup=warmup, seed=seed, arrivals=arrivals))

    # statements
    def set_(self, name: str, value) -> N.Set:
        return N.Set(slot=self.slot(name), value=self.ex(value))

    def observe(self, name: str, value, test: bool = False) -> N.Observe:
        return N.Observe(observe=self.obs(name, test), value=self.ex(value))

    def hold(self, pools, body, *, cache=None, reuse=None, lease=None) -> N.Hold:
        hps = []
        for item in pools:
            ref, units = item[0], item[1]
            reserve = item[2] if len(item) > 2 else None
            hps.append(N.HoldPool(pool=ref, units=self.ex(units),
                                  reserve=None if reserve is None else self.ex(reserve)))
        ls = None
        if lease is not None:
            ls = N.Lease(pool=lease[0], time=self.ex(lease[1]))
        return N.Hold(pools=hps, body=list(body), cache=None if cache is None else self.ex(cache),
                      reuse=None if reuse is None else self.ex(reuse), lease=ls)

    def run(self, stage, work, mode="plain", growing=None) -> N.Run:
        stages = stage if isinstance(stage, (list, tuple)) else [stage]
        return N.Run(stages=list(stages), work=self.ex(work), mode=mode, growing=growing)

    def grow(self, pool, amount) -> N.Grow:
        return N.Grow(pool=pool, amount=self.ex(amount))

    def branch(self, guard, then, orelse=()) -> N.Branch:
        return N.Branch(guard=self.ex(guard), then=list(then), orelse=list(orelse))


def b(op: str, lhs, rhs, p: P | None = None) -> N.Binary:
    """A binary node (``p`` resolves names; numbers need none)."""
    ex = p.ex if p is not None else _num
    return N.Binary(op=op, lhs=ex(lhs), rhs=ex(rhs))


def _num(x):
    if isinstance(x, (int, float)):
        return N.Num(value=float(x))
    return x


def call(fn: str, *args) -> N.Call:
    return N.Call(fn=fn, args=[_num(a) for a in args])


def draw(dist: str, *args) -> N.Draw:
    return N.Draw(dist=dist, args=[_num(a) for a in args])


def obs(name: str, target, *args) -> N.Observable:
    return N.Observable(name=name, target=target, args=[_num(a) for a in args])


def cond(test, then, orelse) -> N.Cond:
    return N.Cond(test=_num(test), then=_num(then), orelse=_num(orelse))


def neg(x) -> N.Unary:
    return N.Unary(op="-", arg=_num(x))


def ctx(name: str) -> N.Ctx:
    return N.Ctx(name=name)


def num(x) -> N.Num:
    return N.Num(value=float(x) if not isinstance(x, str) else x)


def roles(p: P, blocks: list[list]) -> list:
    """One session block where a session with attribute ``role == k`` runs ``blocks[k]``."""
    out: list = list(blocks[-1])
    for k in range(len(blocks) - 2, -1, -1):
        out = [p.branch(b("==", p.ex("role"), k), blocks[k], out)]
    return out


def at(p: P, t: float, role: int, **attrs) -> N.Preset:
    """A preset session arriving at ``t`` with ``role`` (and other attributes)."""
    vals = [N.SlotValue(slot=p.slot("role"), value=float(role))]
    vals += [N.SlotValue(slot=p.slot(k), value=float(v)) for k, v in attrs.items()]
    return N.Preset(at=float(t), attrs=vals)


def pool_of(report, name: str, index: int = 0):
    return report.pool(name, index)


def samples(report, name: str) -> list[tuple[float, int]]:
    """``(value, session)`` of every sample of an observe, in order."""
    o = report.observe(name)
    return [(float(v), int(s)) for v, s in zip(o.values, o.sessions)]
