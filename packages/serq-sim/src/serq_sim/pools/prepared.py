"""A hold statement's admission by a step stage, prepared once: the Python code of
:func:`.admission.admit_from` after the head is found (the demand, the fit, taking the head from its queue,
the allocation on every pool, running the admitted session), specialised to one hold.

What the general functions (:func:`.admission.demand_of`, :func:`.admission.fits`,
:func:`.admission.pop_head`, :func:`.admission.admit`) find out at every admission is decided here once:
how many pools the hold has, which of them have blocks (the rounding inlined), which amounts are numbers
(checked and rounded here), whether a reserve or a reuse bound is written, whether the hold caches. The
header's expressions are compiled into the function's body rather than called as one closure each, and a
subexpression that appears more than once (``lib/vllm.sq``'s ``known`` is written out five times in its
units, reserve and reuse) is computed once, as are the observables a header reads of a pool or stage
named without an index (``cachedin``, ``holders``, ``queued``, ``used``, ``free``; ``budget_left`` of
the admitting stage is the budget left it passes).

Only what cannot fail and has no effect is computed once and ahead of its place: numbers, attributes,
``now``, the operators and functions over them (none of them raises: the helpers of
:mod:`serq_sim.compile` return NaN or an infinity where Python would raise) and those observables; every
other part (a draw, an observable of a computed member, a context variable) stays where it was written,
evaluated when and as often as the general path evaluates it, so errors and draws are the same. The
values are the same floats: the same operations in the same order on the same operands.

A hold that the preparation does not cover (a draw in its header) keeps the general path. Under
``SERQ_SIM_TIER=general`` no hold is prepared: the general path is the reference the differential tests
compare this one with (tests/test_prepared_admission.py)."""

from __future__ import annotations

import math
import re

from serq_ir import nodes as N

from ..compile import _CMP, _FN, POOL_OBS, num, reads
from ..stats import HUGE_SPAN, HUGE_UNITS
from ..status import READY
from . import cache
from .admission import amount_error, fits, take_own
from .cache import clamped
from .model import EPS, INF, SLOT_CACHED, HoldRT, Slot, refused_amount

#: prepare holds (False: every hold takes the general path; the tests compare the two)
ENABLED = True

#: the fields :class:`.model.Slot`'s ``__init__`` sets, in its order (the prepared code sets them itself)
_SLOT_FIELDS = ("pool", "alloc", "pos", "r", "u", "owner", "hold", "lease")


class _Gen:
    """The code of one hold's admission: its expressions with common parts computed once. ``code(e)``
    gives ``(canon, code, safe)``: the expression's code written out (the key of a common part),
    its code with the common parts as temporaries, and whether it cannot fail and has no effect (it may be
    computed ahead of its place and once). The demand and the reuse bound are read at one moment
    (admission.reuse_of), so a part of both is one value."""

    def __init__(self, comp, hold: N.Hold, info, st0):
        self.comp = comp
        self.hold = hold
        self.info = info
        #: the stage that admits this hold, when it is known here (the first pool has no index)
        self.st0 = st0
        self.n = 0
        #: counting (not emitting): how often each safe part that is not a leaf occurs
        self.counting = True
        self.count: dict[tuple[str, str], int] = {}
        self.temp: dict[tuple[str, str], str] = {}
        self.pre: list[str] = []
        self.needs_ctx = False
        self.ok = True
        #: two-argument min and max, floor and ceil written out (the lean code's choice: serq_sim.compile)
        self.inline = getattr(comp, "inline", False)
        self.k = 0

    def once(self, code: str) -> tuple[str, str]:
        """``(read, first)``: how an operand written out is read again, and how it is evaluated the first
        time (an assignment to a temporary, unless it is a name, an attribute or a number: read twice)."""
        if _SIMPLE.fullmatch(code):
            return code, code
        v = self.fresh()
        return v, f"({v} := {code})"

    def fresh(self) -> str:
        """A name for a temporary of the generated function (an operand written out once)."""
        self.k += 1
        return f"_w{self.k}"

    def code(self, e):
        c = self.comp
        if isinstance(e, N.Num):
            x = c.expr(e)
            return x, x, True
        if isinstance(e, N.Attr):
            x = f"A[{e.slot}]"
            return x, x, True
        if isinstance(e, N.Ctx):
            if e.name == "now":
                return "E.now", "E.now", True
            self.needs_ctx = True
            x = f"C.{e.name}"
            return x, x, False
        if isinstance(e, N.Draw):
            self.ok = False
            return "None", "None", False
        if isinstance(e, N.Observable):
            return self.observable(e)
        if isinstance(e, N.Unary):
            ca, a, sa = self.code(e.arg)
            if e.op == "-":
                return self.share(f"(-{ca})", f"(-{a})", sa)
            return self.share(f"(0.0 if {ca} != 0.0 else 1.0)", f"(0.0 if {a} != 0.0 else 1.0)", sa)
        if isinstance(e, N.Binary):
            ca, a, sa = self.code(e.lhs)
            cb, b, sb = self.code(e.rhs)
            op = e.op
            if op in ("+", "-", "*"):
                fmt = "({a} " + op + " {b})"
            elif op == "/":
                if isinstance(e.rhs, N.Num) and _num(e.rhs) != 0.0 and _num(e.rhs) == _num(e.rhs):
                    fmt = "({a} / {b})"
                else:
                    fmt = "_div({a}, {b})"
            elif op == "%":
                fmt = "_mod({a}, {b})"
            elif op in _CMP:
                fmt = "(1.0 if {a} " + op + " {b} else 0.0)"
            elif op == "&&":
                fmt = "(1.0 if ({a} != 0.0 and {b} != 0.0) else 0.0)"
            elif op == "||":
                fmt = "(1.0 if ({a} != 0.0 or {b} != 0.0) else 0.0)"
            else:
                raise ValueError(f"unknown operator {op!r}")
            return self.share(fmt.format(a=ca, b=cb), fmt.format(a=a, b=b), sa and sb)
        if isinstance(e, N.Cond):
            if isinstance(e.test, N.Num):
                # a test that is a number takes one branch, always
                return self.code(e.then if _num(e.test) != 0.0 else e.orelse)
            test = e.test
            if isinstance(test, N.Binary) and test.op in _CMP:
                # ``(1.0 if x < y else 0.0) != 0.0`` is ``x < y``
                cx, x, sx = self.code(test.lhs)
                cy, y, sy = self.code(test.rhs)
                ct, t, st_ = f"{cx} {test.op} {cy}", f"{x} {test.op} {y}", sx and sy
            else:
                ct, t, st_ = self.code(test)
                ct, t = f"{ct} != 0.0", f"{t} != 0.0"
            ca, a, sa = self.code(e.then)
            cb, b, sb = self.code(e.orelse)
            if st_ and ca == cb:
                return ca, a, sa  # both branches the same: the test (which cannot fail) changes nothing
            canon = f"({ca} if {ct} else {cb})"
            code = f"({a} if {t} else {b})"
            return self.share(canon, code, st_ and sa and sb)
        if isinstance(e, N.Call):
            parts = [self.code(a) for a in e.args]
            safe = all(p[2] for p in parts)
            fn = e.fn
            if len(parts) == 1 and fn in ("sum", "min", "max"):
                return parts[0]
            if fn in ("min", "max"):
                # an infinity past the first argument of min (-inf of max) wins only when every other
                # argument is NaN (min keeps the first least argument that is not NaN, and no number is less
                # than inf: serq_sim.compile._min): it is left out, and is the value when the rest is NaN
                drop = "_INF" if fn == "min" else "(-_INF)"
                kept = parts[:1] + [p for p in parts[1:] if p[0] != drop]
                if len(kept) < len(parts):
                    c, x, _ = self._minmax(fn, kept, safe)
                    v = self.fresh()
                    return self.share(f"_nan_or({c}, {drop})", f"({v} if ({v} := {x}) == {v} else {drop})",
                                      safe)
                return self._minmax(fn, parts, safe)
            if len(parts) == 1 and fn in ("floor", "ceil") and self.inline:
                # _floor / _ceil without the call (as the lean code writes them): a finite x floor-divided by
                # 1 is its floor exactly (+ 0.0 makes -0.0 the 0.0 that float(math.floor(x)) gives); NaN and
                # +-inf are x itself
                v = self.fresh()
                f = f"{v} // 1.0" if fn == "floor" else f"-((-{v}) // 1.0)"
                canon = f"{_FN[fn]}({parts[0][0]})"
                code = f"({f} + 0.0 if -_INF < ({v} := {parts[0][1]}) < _INF else {v})"
                return self.share(canon, code, safe)
            if fn == "sum":
                if len(parts) <= 32:
                    fmt = "(" + " + ".join("{}" for _ in parts) + ")"
                else:
                    fmt = "_sum(" + ", ".join("{}" for _ in parts) + ")"
            else:
                fmt = _FN[fn] + "(" + ", ".join("{}" for _ in parts) + ")"
            return self.share(fmt.format(*(p[0] for p in parts)), fmt.format(*(p[1] for p in parts)), safe)
        raise TypeError(f"not an expression: {e!r}")

    def _minmax(self, fn: str, parts, safe: bool):
        """``min`` or ``max`` of the parts, NaN left out (serq_sim.compile._min)."""
        if len(parts) == 1:
            return parts[0]
        if len(parts) == 2 and self.inline:
            # max(a, b) is b when b > a or a is NaN, else a (min: b when b < a or a is NaN), without the call:
            # a, then b, evaluated once each, in order (as the lean code writes it: serq_sim.compile)
            op = "<" if fn == "max" else ">"
            canon = f"{fn}({parts[0][0]}, {parts[1][0]})"
            a, a1 = self.once(parts[0][1])
            b, b1 = self.once(parts[1][1])
            code = f"({b} if {a1} {op} {b1} or {a} != {a} else {a})"
            return self.share(canon, code, safe)
        fmt = f"_{fn}(" + ", ".join("{}" for _ in parts) + ")"
        return self.share(fmt.format(*(p[0] for p in parts)), fmt.format(*(p[1] for p in parts)), safe)

    def observable(self, e: N.Observable):
        c = self.comp
        t = e.target
        if reads(e, _is_draw):
            self.ok = False
        if t.index is None and not e.args:
            if isinstance(t, N.PoolRef) and e.name in POOL_OBS:
                p = c.pool_ref(t, "session")
                x = POOL_OBS[e.name].format(p=p, v=f"_v{p}")
                return self.share(x, x, True)
            if isinstance(t, N.StageRef) and e.name == "budget_left" and self.st0 is not None:
                if c.program.stages[t.stage].size == 1 and c.sim.stages[c.sim.stage_base[t.stage]] is self.st0:
                    return "bl", "bl", True  # the budget left the admitting stage passes
        if e.name == "budget_left":
            # read of another stage, or through a computed member: as written; through the simulation it
            # would read the admitting stage's budget left there, which this code does not set
            if t.index is not None:
                self.ok = False
            ref = c.stage_ref(t, "session")
            x = f"(bl if {ref} is st else {ref}.budget_left())"
            return x, x, False
        x = c.expr(e)
        return x, x, False  # as written: evaluated in place

    def share(self, canon: str, code: str, safe: bool):
        """A safe part met more than once is computed once, into a temporary, before the first expression
        that reads it (its own parts before it)."""
        if not safe:
            return canon, code, False
        key = canon
        if self.counting:
            self.count[key] = self.count.get(key, 0) + 1
            return canon, code, True
        t = self.temp.get(key)
        if t is None:
            if self.count.get(key, 0) < 2:
                return canon, code, True
            self.n += 1
            t = f"_cse{self.n}"
            self.temp[key] = t
            self.pre.append(f"{t} = {code}")
        return canon, t, True


def _is_draw(e) -> bool:
    return isinstance(e, N.Draw)


def _num(e: N.Num) -> float:
    return num(e.value)


def prepare(comp, hold: N.Hold, info):
    """The prepared admission of ``hold`` (``f(sim, pool, s, budget_left, stage) -> bool``, what
    :func:`.admission.admit_from` does once it has the head ``s``), or None: the general path."""
    from ..tier_env import forced_general

    if not ENABLED or forced_general():
        return None
    try:
        return _prepare(comp, hold, info)
    except RecursionError:  # a header too deep for the code: the general path
        return None


def _prepare(comp, hold: N.Hold, info):
    sp = hold.span
    old = comp.cur_span
    if sp is not None:
        comp.cur_span = comp.span_id(sp)
    try:
        return _source(comp, hold, info)
    finally:
        comp.cur_span = old


def _source(comp, hold: N.Hold, info):
    sim = comp.sim
    pools = hold.pools
    npools = len(pools)
    pure = info.pure
    nodes = [comp.program.pools[hp.pool.pool] for hp in pools]
    # a member of each pool's family (the members of a family share their node: block, capacity)
    members = [sim.pools[sim.pool_base[hp.pool.pool]] for hp in pools]
    st0 = members[0].via if pools[0].pool.index is None and nodes[0].size == 1 else None
    g = _Gen(comp, hold, info, st0)
    # the demand's expressions (units, reserves) and the reuse bound, read at one moment (the fit tested,
    # the head still in its queue: admission.reuse_of), counted first, then written: a part met twice goes
    # into the prelude of the demand or of the reuse bound; a part of the demand that the reuse bound reads
    # too is computed once, with the demand, unless the demand of a pure hold is kept (it is then not
    # evaluated again, and the reuse bound has its own prelude)
    for hp in pools:
        g.code(hp.units)
        if hp.reserve is not None:
            g.code(hp.reserve)
    count_d = g.count
    if hold.reuse is not None:
        if pure:
            g.count = {}
        g.code(hold.reuse)
    count_r = g.count
    if not g.ok:
        return None
    g.counting = False
    g.count = count_d if pure else count_r
    units_code = []
    res_code = []
    for hp in pools:
        units_code.append(g.code(hp.units)[1])
        res_code.append(g.code(hp.reserve)[1] if hp.reserve is not None else None)
    pre_d = g.pre
    g.pre = []
    reuse_code = None
    pre_r: list[str] = []
    if hold.reuse is not None:
        if pure:
            g.temp = {}
            g.count = count_r
        reuse_code = g.code(hold.reuse)[1]
        pre_r = g.pre
    pre_d, pre_r, finals = _inline_once(pre_d, pre_r, units_code + res_code + [reuse_code])
    units_code = finals[:npools]
    res_code = finals[npools:2 * npools]
    reuse_code = finals[-1]
    lines: list[str] = []
    w = lines.append
    blocks = [float(nd.block) if nd.block else None for nd in nodes]
    caps = [m.cap + EPS for m in members]
    for k in range(npools):
        comp.g[f"_adm_cap{id(members[k])}"] = caps[k]

    w("def _admit(E, q, s, bl, st):")
    w("    A = s.attrs")
    if g.needs_ctx:
        w("    C = E.null_ctx")
    w("    pend = s.pending")
    w("    info = pend.info")
    names = [f"P{k}" for k in range(npools)]
    w(f"    {', '.join(names)}{',' if npools == 1 else ''} = pend.pools")
    if not pure and any(info.static):
        # what the hold needs at least, known at its join, first (admission.admissible): while that does
        # not fit, nothing else of the demand is evaluated
        w("    fl = pend.floor")
        w("    if fl is not None and not _adm_fits(fl):")
        w("        return False")

    def rnd(k: int, x: str) -> str:
        b = blocks[k]
        if b is None:
            return x
        if b >= 1.0:
            if g.inline:
                # Pool.round_up with math.ceil written out: x is a number >= 0 here (checked) or +inf, so
                # x / b - 1e-12 is finite; -((-y) // 1.0) is ceil(y) exactly and + 0.0 makes its -0.0 (y in
                # (-1, 0]) the 0 of an int times b; a positive amount up to one block takes one
                return (f"({x} if {x} == _INF else {b!r} if 0.0 < {x} / {b!r} <= 1.0 else "
                        f"(-((-({x} / {b!r} - 1e-12)) // 1.0) + 0.0) * {b!r})")
            return (f"({x} if {x} == _INF else {b!r} if 0.0 < {x} / {b!r} <= 1.0 else "
                    f"_adm_ceil({x} / {b!r} - 1e-12) * {b!r})")
        return f"{names[k]}.round_up({x})"

    # a time of HUGE_SPAN or later can happen only at or before a horizon there or beyond (every span and wait
    # is at most the horizon); units of HUGE_UNITS or more only on a pool whose cap is there or beyond
    huge_time = not members[0].sim.horizon < HUGE_SPAN

    def acc(k: int, ind: str) -> None:
        """Pool.acc() of ``P{k}`` (the same operations), written out: nothing to do when it is up to date."""
        P = f"P{k}"
        test = "0.0 < dt" + (f" < {HUGE_SPAN!r}" if huge_time else "")
        if not members[k].cap < HUGE_UNITS:
            test += f" and {P}.used < {HUGE_UNITS!r} and {P}.cached < {HUGE_UNITS!r}"
        w(f"{ind}t = {P}.t_last")
        w(f"{ind}if t != now:")
        w(f"{ind}    dt = now - t")
        w(f"{ind}    if {test}:")
        w(f"{ind}        {P}.a_used += {P}.used * dt")
        w(f"{ind}        {P}.a_cached += {P}.cached * dt")
        w(f"{ind}        {P}.a_queue += (len({P}.front) + len({P}.queue)) * dt")
        w(f"{ind}        {P}.a_holders += len({P}.holders) * dt")
        w(f"{ind}    elif dt > 0.0:")
        w(f"{ind}        {P}.acc_huge(dt)")
        w(f"{ind}    {P}.t_last = now")

    def check(k: int, what: str, x: str, code: str, booked: bool, ind: str) -> None:
        """admission.demand_of's test of an amount, for the pool's rule (.model.refused_amount): the
        error's call when the pool refuses it; none for a literal it accepts."""
        cap = members[k].cap
        v = _literal(code)
        if v is not None and not refused_amount(cap, v, booked):
            return
        test = f"not 0.0 <= {x} < _INF" if refused_amount(cap, INF, booked) else f"not {x} >= 0.0"
        w(f"{ind}if {test}:")
        w(f"{ind}    _adm_amount_error(E, s, info, P{k}, {what!r}, {x}, {k})")

    def demand(ind: str) -> None:
        for line in pre_d:
            w(f"{ind}{line}")
        for k in range(npools):
            u, r = units_code[k], res_code[k]
            w(f"{ind}u{k} = {u}")
            check(k, "units", f"u{k}", u, True, ind)
            if r is None:
                w(f"{ind}n{k} = {rnd(k, f'u{k}')}")
            else:
                w(f"{ind}r{k} = {r}")
                check(k, "reserve", f"r{k}", r, nodes[k].reserve_held, ind)
                if g.inline:  # max(r, u), written out
                    w(f"{ind}if u{k} > r{k}:")
                    w(f"{ind}    r{k} = u{k}")
                else:
                    w(f"{ind}r{k} = max(r{k}, u{k})")
                w(f"{ind}n{k} = {rnd(k, f'r{k}')}")

    if pure:
        w("    dm = pend.demand")
        w("    if dm is None:")
        demand("        ")
        w("        pend.demand = [" + ", ".join(f"(P{k}, u{k}, n{k})" for k in range(npools)) + "]")
        w("    else:")
        w("        " + ", ".join(f"(_, u{k}, n{k})" for k in range(npools)) + (","
                                                                                 if npools == 1 else "") + " = dm")
    else:
        demand("    ")
    # the fit: every pool in order (admission.fits)
    fit = " or ".join(f"P{k}.used + P{k}.reserved + n{k} > _adm_cap{id(members[k])}" for k in range(npools))
    w(f"    if {fit}:")
    w("        return False")
    # the reuse bound, read with the demand: the head still in its queue (admission.reuse_of)
    if reuse_code is not None:
        for line in pre_r:
            w(f"    {line}")
        w(f"    reuse = {reuse_code}")
        w("    if reuse != reuse:")
        w("        raise E.error('the reuse bound is NaN', None, s, info.at['reuse'])")
        # a negative bound is none, warned of once (admission.reuse_of, cache.clamped)
        w("    if 0.0 > reuse:")
        w("        _adm_clamped(E, s, 'reuse', info.at['reuse'], reuse)")
        w("        reuse = 0.0")
    else:
        w("    reuse = None")
    # the head leaves its queue (admission.pop_head); ``q`` is the hold's first pool, P0 (a hold joins the
    # queue of its first pool only: admission.hold), so the allocation's P0.acc() that follows finds it up
    # to date and is left out
    w("    now = E.now")
    acc(0, "    ")
    w("    fr = q.front")
    w("    if fr and fr[0] is s:")
    w("        fr.popleft()")
    w("    else:")
    w("        qq = q.queue")
    w("        if qq[0] is s:")
    w("            qq.popleft()")
    w("        else:")
    w("            qq.remove(s)")
    # the allocation (admission.admit)
    has_cache = hold.cache is not None
    # the HoldRT and its Slots are made field by field (object.__new__ and the stores __init__ makes, in its
    # order: faster than calling __init__); the slots' list is the hold's once every slot is made (nothing
    # in between reads it)
    w("    hold = _adm_new(_adm_HoldRT)")
    w("    hold.info = info")
    w("    hold.grown = False")
    if has_cache:
        w("    consumed = 0.0")
        w("    serial = s.serial")
    for k in range(npools):
        P = f"P{k}"
        if k:
            acc(k, "    ")
        a = rnd(k, f"u{k}")
        if a != f"u{k}":
            w(f"    a{k} = {a}")
            a = f"a{k}"
        if has_cache:
            w(f"    e = {P}.own.pop(serial, None)")
            w("    if e is not None:")
            w(f"        own = _adm_take_own(E, {P}, s, e, reuse, {a})")
            w("        if own > consumed:")
            w("            consumed = own")
            w("    else:")
            w("        own = 0.0")
            own = "own"
        else:
            own = "0.0"
        # cache.make_room's own first test: nothing to evict when the allocation fits beside the cache
        w(f"    if {P}.used + {P}.cached + {a} > _adm_cap{id(members[k])}:")
        w(f"        _adm_cache.make_room(E, {P}, {a})")
        w(f"    {P}.used += {a}")
        if nodes[k].reserve_held:
            w(f"    x = max(n{k} - {a}, 0.0)")
            w(f"    {P}.reserved += x")
            x = "x"
        else:
            x = "0.0"  # reserved += 0.0 leaves it as it is (it is never -0.0)
        w(f"    sl{k} = _adm_new(_adm_Slot)")
        for field, value in zip(_SLOT_FIELDS, (P, a, own, f"n{k}", x, "s", "hold", "False")):
            w(f"    sl{k}.{field} = {value}")
        w(f"    {P}.holders[sl{k}] = None")
    w("    hold.slots = [" + ", ".join(f"sl{k}" for k in range(npools)) + "]")
    # HoldRT.named: a lease must name a member the hold was admitted to
    w("    hold.named = " + ("[" + ", ".join(f"P{k}" for k in range(npools)) + "]" if hold.lease else "None"))
    w("    if E.warm:")
    for k in range(npools):
        w(f"        P{k}.admissions += 1")
    if huge_time:
        w(f"        if now < {HUGE_SPAN!r}:")
        w("            P0.wait_sum += now - pend.queued_at")
        w("        else:")
        w("            P0.add_wait(now - pend.queued_at)")
    else:
        w("        P0.wait_sum += now - pend.queued_at")
    w("    s.adm_seq = next(E.adm_counter)")
    w("    E.admitted += 1")
    w(f"    A[{SLOT_CACHED}] = {'consumed' if has_cache else '0.0'}")
    w("    s.pending = None")
    w("    s.qpool = None")
    w("    s.holds.append(hold)")
    # E.make_ready(s) and E.drain_ready(): with nothing else ready, s is resumed at once (then whatever
    # it made ready, in order)
    w("    ready = E.ready")
    w("    if ready or s.in_ready:")
    w("        E.make_ready(s)")
    w("    else:")
    w("        s.status = _adm_READY")
    w("        E._resume(s)")
    w("        if not ready:")
    w("            return True")
    w("    E.drain_ready()")
    w("    return True")
    src = "\n".join(lines) + "\n"
    gl = comp.g
    gl.setdefault("_adm_ceil", math.ceil)
    gl.setdefault("_adm_READY", READY)
    gl.setdefault("_adm_HoldRT", HoldRT)
    gl.setdefault("_adm_Slot", Slot)
    gl.setdefault("_adm_cache", cache)
    gl.setdefault("_adm_new", object.__new__)
    gl.setdefault("_adm_take_own", take_own)
    gl.setdefault("_adm_clamped", clamped)
    gl.setdefault("_adm_amount_error", amount_error)
    gl.setdefault("_adm_fits", fits)
    ns: dict = {}
    exec(compile(src, "<serq admission>", "exec"), gl, ns)  # noqa: S102 - our own generated code
    fn = ns["_admit"]
    fn.__serq_source__ = src
    return fn


_TEMP = re.compile(r"\b_cse[0-9]+\b")
#: an operand read twice rather than kept in a temporary: a name, an attribute (A[k]) or a number
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|A\[[0-9]+\]|[0-9]+\.[0-9]+(e[-+]?[0-9]+)?")


def _inline_once(pre_d: list[str], pre_r: list[str], finals: list):
    """The preludes and final codes with every temporary read once (or never) written in its place: only a
    part read twice is worth its own name (a part of a shared part is counted with it)."""
    defs = {}
    order = []
    for which, pre in ((0, pre_d), (1, pre_r)):
        for line in pre:
            name, code = line.split(" = ", 1)
            defs[name] = code
            order.append((which, name))
    while True:
        texts = list(defs.values()) + [f for f in finals if f is not None]
        uses: dict[str, int] = {}
        for t in texts:
            for m in _TEMP.findall(t):
                uses[m] = uses.get(m, 0) + 1
        once = [n for n in defs if uses.get(n, 0) <= 1]
        if not once:
            break
        n = once[-1]  # the last first: it may read the earlier ones
        code = defs.pop(n)
        pat = re.compile(r"\b" + n + r"\b")

        def put(_m, code=code):
            return code

        defs = {k: pat.sub(put, v) for k, v in defs.items()}
        finals = [pat.sub(put, f) if f is not None else None for f in finals]
    out_d = [f"{n} = {defs[n]}" for which, n in order if which == 0 and n in defs]
    out_r = [f"{n} = {defs[n]}" for which, n in order if which == 1 and n in defs]
    return out_d, out_r, finals


def _literal(code: str) -> float | None:
    """The value of ``code`` when it is a number literal, else None."""
    if code == "_INF":
        return INF
    try:
        return float(code)
    except ValueError:
        return None
