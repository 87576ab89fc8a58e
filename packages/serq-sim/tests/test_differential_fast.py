"""Random programs on the fast tier (serq_sim/fast.py: the whole run generated as one Python function)
against the general engine (``SERQ_SIM_TIER=general``). The two must give the same JSON report byte for
byte, the same samples of every observe (values, times, sessions, turns, with their dtypes), the same
record rows, or the same error (type and whole message).

The programs are small and drawn by :func:`program` from ``random.Random(i)`` (deterministic: program i is
the same every run). Most are in the fast tier's class (``serq_sim.fast.exclusion`` is None): ``fifo(c)``,
``ps(φ)`` and ``delay`` stages, families of stages and pools named by computed members (``s[serial % 3]``,
a draw, ``turn_no``, a ``choose``), cap-only pools with FIFO queues or ``queue by`` keys (keys fixed at the
join: attributes, ties, NaN; keys read at every lookup: ``now``, ``waited``, observables), pools without a
cap, holds over several pools, nested holds, holds of a member chosen by ``choose``, units read from the
state, ``branch (test)``, ``branch with (p)``, loops ended by a counter or by ``end;``, ``turn;``,
multi-turn sessions with ``init`` and ``turn`` blocks (a hidden attribute among them) and think times, the
two-sided form (``server`` and the workload's ``session`` with ``request;``), Poisson, renewal, batch and
closed arrivals, ``run { arrivals N; }``, warm-ups, horizons that cut sessions off, observes (several in a
row, instants, observables of stages and pools), every draw, ``let`` constants varied as ``--set`` does,
``min``/``max``/``floor``/``ceil``/``abs``/``sqrt``/``pow``/``exp``/``ln``, ``%``, conditionals, division
by zero, and run-time errors (a NaN or negative work, a draw outside its domain, a guard that is no test, a
member out of range or fractional, negative units, a renewal gap below 0, a ps capacity below 0, a choose
among 0, an arrival limit not drained by the horizon). The others (``EDGES``) are one step outside the
class, each by one construct (a gauge, ``work(s)``, ``est_wait(s)``, a pool with blocks, preemption,
eviction order or ``reserve held``, a hold with a reserve, a cache or a lease, ``grow``, ``release``,
``drop``, ``record``, a run over several stages, statements nested 9 deep, 201 stage families, 2 001
runs, branches and loops, a hold naming one pool family twice): ``fast.exclusion`` must give the reason
the generator meant, and both runs are the general engine's. Programs at those limits (nested exactly 8
deep, 200 stage families, 2 000 runs, branches and loops) are in the class.

Holds whose units draw are in (``DRAWN_UNITS``): they found the fast tier's report crashing on a session
still waiting with such units at the end of the run (test_drawn_units_of_a_session_waiting_at_the_end).

Each block of programs also checks, in aggregate, that nearly every program compiles, that most ran on
the fast tier (``Report.tier``; every program in the class that ran to its report did), that the errors
are a few percent and of several kinds, and that the runs reached what they are built for (sessions
waiting at pools, rejections, multi-turn sessions, sessions live at the horizon), so that the test cannot
pass by testing nothing.

``SERQ_DIFF_FAST_EXAMPLES=N`` runs N programs instead of the default (spread over the same blocks), and
``SERQ_DIFF_FAST_FIRST=S`` starts at program S, e.g.::

    SERQ_DIFF_FAST_EXAMPLES=5000 .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 \\
        packages/serq-sim/tests/test_differential_fast.py

A failure names the program's number; ``python test_differential_fast.py I`` prints program I (its
``--set`` values and the exclusion it is meant to have on a comment line first).
"""

from __future__ import annotations

import os
import random
import re
import sys

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim import fast
from stress18 import pick

#: programs in the default run, and the blocks they are spread over (a test each, for xdist): blocks of 125
#: programs, each enough for the aggregate checks, and among them program 760, the first at the fast tier's
#: limit of 2 000 runs, branches and loops (test_the_generator_reaches_the_fast_tiers_limits). The default was
#: 1 500 in 12 blocks; SERQ_DIFF_FAST_EXAMPLES runs more, as the 18 000 that agreed when the test was written.
DEFAULT_EXAMPLES = 875
BLOCKS = 7
EXAMPLES = int(os.environ.get("SERQ_DIFF_FAST_EXAMPLES", "0")) or DEFAULT_EXAMPLES
FIRST = int(os.environ.get("SERQ_DIFF_FAST_FIRST", "0"))


# --- the generator ------------------------------------------------------------------------------------------


#: holds whose units draw (off: a session waiting at the end of the run with such units crashes the fast
#: tier, test_drawn_units_of_a_session_waiting_at_the_end)
DRAWN_UNITS = True

#: the constructs one step outside the fast tier's class, each with the exclusion it must give
EDGES = {
    "gauge": "gauges",
    "work": "observable work",
    "est": "observable est_wait",
    "block": "a pool with blocks",
    "preempt": "a pool with a preemption policy",
    "evict": "a pool with an eviction order",
    "reserve_held": "a pool with reserve held",
    "reserve": "a hold with a reserve",
    "cache": "a hold that caches or leases",
    "lease": "a hold that caches or leases",
    "grow": "statement Grow",
    "release": "statement Release",
    "drop": "statement Drop",
    "record": "statement Record",
    "flows": "a run over several stages or a growing run",
    "deep": "statements nested more than 8 deep",
    "twice": "a hold naming one pool family twice",
    "families": f"more than {fast.FAST_FAMILIES} stage families",
    "blocks": f"more than {fast.FAST_BLOCKS} runs, branches and loops",
}

#: the edges that are a statement of the session (P a pool member, S a stage member)
EDGE_STMTS = {
    "work": "observe w = work({S});",
    "est": "observe w = est_wait({S});",
    "grow": "hold {P} (1) {{ grow {P} (1); run d (1); }}",
    "release": "hold {P} (1) {{ run d (1); release {P}; run d (1); }}",
    "drop": "hold {P} (1) {{ run d (1); drop {P}; }}",
    "reserve": "hold {P} (1) reserve (2) {{ run d (1); }}",
    "cache": "hold {P} (1) {{ run d (1); }} cache (1);",
    "lease": "hold {P} (1) {{ run d (1); }} lease {P} (2)",
    "record": "record req {{ sent = t0; wait = now - t0; units = sz; }}",
    "flows": "run f, f2 (~exp(1));",
    "block": "hold pe (1) {{ run d (~exp(1)); }}",
    "preempt": "hold pe (2) {{ run d (~exp(1)); }}",
    "evict": "hold pe (1) {{ run d (~exp(1)); }}",
    "reserve_held": "hold pe (1) {{ run d (~exp(1)); }}",
    "twice": "",
}

#: draws for the attributes x and y, which every session sets before anything reads them (``sz`` and
#: ``prio``, which holds' units and queue keys read, are set from draws and numbers only)
DRAWS = ["~exp(1)", "~exp(0.5)", "~det(1.5)", "~uniform(0, 2)", "~erlang(2, 1)", "~erlang(3, 0.5)",
         "~h2(1, 4)", "~h2(0.5, 2)", "~bernoulli(0.3)", "~uniform(1, 3)"]


class _Gen:
    """The state of one program's generation: its stage and pool families, and what it may read."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lets: dict[str, float] = {}
        self.stages: list[tuple[str, str, int]] = []  # (name, kind, size)
        self.pools: list[tuple[str, int, float | None]] = []  # (name, size, cap)
        #: the stages and pools declared without a size: each one, not a family, named without an index
        #: (test_fleet_round47_not_a_family)
        self.lone: set[str] = set()
        self.nest = 0  # how deep loops, branches and holds nest (fast._nesting)
        self.errors = True  # the generator may provoke run-time errors
        self.hidden = False  # the workload has a hidden attribute h
        self.server = False  # the block is a server's: no turn, end or loop

    # -- names -----------------------------------------------------------------------------------------

    def p(self, weighted):
        return pick(self.rng, weighted)

    def rare(self, per: int = 40) -> bool:
        """A provoked error, about one time in ``per`` where it may stand."""
        return self.errors and self.rng.randrange(per) == 0

    def member(self, name: str, size: int, fixed: bool = False) -> str:
        """A reference to a member of family ``name`` (computed unless ``fixed``)."""
        if size == 1:  # (one declared without a size takes no index; the draw is made either way)
            return name if self.rng.random() < 0.7 or name in self.lone else f"{name}[0]"
        if fixed:
            return f"{name}[{self.rng.randrange(size)}]"
        if self.rare(60):
            return f"{name}[{self.p([(1, f'serial % {size + 1}'), (1, 'serial / 2'), (1, 'x - x - 1')])}]"
        idx = self.p([(2, f"serial % {size}"), (1, f"floor(~uniform(0, {size}))"),
                      (1, f"min({size - 1}, turn_no)"), (1, "0"), (1, f"{size - 1}"),
                      (1, f"(serial + turn_no) % {size}"), (1, f"prio % {size}")])
        return f"{name}[{idx}]"

    def stage(self, fixed: bool = False) -> str:
        name, _, size = self.rng.choice(self.stages)
        return self.member(name, size, fixed)

    def pool(self, fixed: bool = False) -> str:
        name, size, _ = self.rng.choice(self.pools)
        return self.member(name, size, fixed)

    # -- expressions -----------------------------------------------------------------------------------

    def observable(self, fixed: bool = False) -> str:
        opts = [(2, f"queue({self.stage(fixed)})"), (2, f"busy({self.stage(fixed)})")]
        if self.pools:
            opts += [(2, f"used({self.pool(fixed)})"), (1, f"free({self.pool(fixed)})"),
                     (2, f"holders({self.pool(fixed)})"), (2, f"queued({self.pool(fixed)})"),
                     (1, f"cachedin({self.pool(fixed)})")]
        return self.p(opts)

    def value(self) -> str:
        """A value to set or observe."""
        return self.p([
            (3, "now - t0"), (1, "now"), (2, self.rng.choice(DRAWS)), (3, self.observable()), (1, "x + 1"),
            (1, "~uniform(0, 1) < 0.3 ? 1 : 0"), (1, "turn_no"), (1, "y / (x - 1)"), (1, "min(x, y)"),
            (1, "max(x, 3) - y"), (1, "floor(x * 3)"), (1, "ceil(y)"), (1, "x % 0"), (1, "serial % 3"),
            (1, "sqrt(x - 1)"), (1, "exp(x) - ln(y)"), (1, "pow(x, 2) + abs(x - y)"), (1, "x > 1 && y < 2"),
            (1, "!(x > 1) || y"), (1, "x / 0"), (1, "(x - x) / 0"), (1, "sz * prio"),
            (1, "max(x, y, 1.5)"), (1, f"{self.observable()} + {self.observable()}"),
            (1, "x > y ? x - y : y - x"), (1, "-x % 3"), (1, "L_w * 2"),
        ])

    def work(self) -> str:
        """A run's work."""
        if self.rare():
            return self.p([(1, "ln(~uniform(-1, 1))"), (1, "~exp(1) - 0.5"), (1, "(sz - sz) / 0"),
                           (1, "~exp(x - 1)"), (1, "~uniform(0, sz - 2)"), (1, "~erlang(floor(x), 1)"),
                           (1, "~h2(1, y)"), (1, "~bernoulli(x) ? 1 : 2")])
        return self.p([
            (3, "~exp(1)"), (2, "~exp(0.5)"), (1, "~det(1)"), (1, "0"), (1, "~det(0)"), (2, "~uniform(0, 2)"),
            (1, "~erlang(2, 1)"), (1, "~h2(1, 4)"), (1, "x * 0.5"), (1, "~bernoulli(0.2) ? 0 : 1"),
            (1, "max(0, ~exp(1) - 0.5)"), (2, "floor(~uniform(0, 3))"), (1, "sz / 2"), (1, "L_w"),
            (1, "min(~exp(2), 3)"), (1, "pow(~uniform(0, 1), 2)"), (1, "ceil(~exp(0.3))"),
            (1, "abs(~uniform(-1, 1))"), (1, "prio + 0.5"), (1, f"0.1 * {self.observable()}"),
            (1, "1 / (x - x)" if self.rng.random() < 0.2 else "1 / (1 + x)"),  # an infinite job, now and then
        ])

    def guard(self) -> str:
        if self.rare():
            return self.p([(1, "~uniform(0, 1)"), (1, "x % 0"), (1, "x")])
        return self.p([(2, "~bernoulli(0.5)"), (2, "x > 1"), (1, "~exp(1) < 0.7"), (2, "serial % 2 == 0"),
                       (1, "prio == 1"), (2, f"{self.observable()} > 1"), (1, "turn_no >= 2"),
                       (1, "x > 1 && y <= 2"), (1, "!(sz == 2) || prio"), (1, "now > 10"),
                       (1, "(x > y ? x : y) >= 1.5")])

    def units(self, cap: float | None) -> str:
        """A hold's units on a pool of capacity ``cap`` (None: no cap)."""
        if self.rare():
            return self.p([(1, "sz - 1.5"), (1, "sqrt(prio - 0.5)"), (1, "inf"),
                           (1, "-1 + ~exp(1)" if DRAWN_UNITS else "prio - 0.5")])
        opts = [(4, "1"), (3, "sz"), (1, "0.5"), (2, "prio + 1"), (1, "0"), (1, "now > 20 ? 2 : 1"), (1, "L_u")]
        if DRAWN_UNITS:
            opts += [(1, "~uniform(0, 2)"), (1, "floor(~uniform(1, 3))")]
        if self.pools:
            opts.append((1, f"used({self.pool(True)}) > 0 ? 1 : 2"))
            opts.append((1, f"min(2, 1 + queued({self.pool(True)}))"))
            opts.append((1, f"free({self.pool(True)}) > 1 ? 1 : 0.5"))
        opts += [(1, f"queue({self.stage(True)}) > 1 ? 2 : 1"), (1, f"busy({self.stage(True)}) * 0.5 + 0.5")]
        if cap is not None:
            opts.append((1, f"{cap:g} + 1"))  # beyond the cap: rejected at the join
            opts.append((1, f"{cap:g}"))
        return self.p(opts)

    # -- statements ------------------------------------------------------------------------------------

    def block(self, depth: int, budget: list[int], holding: tuple = ()) -> list[str]:
        """Statements at ``depth`` (of the session's block); ``budget[0]`` bounds the statements left."""
        out: list[str] = []
        for _ in range(self.rng.randint(1, 4)):
            if budget[0] <= 0:
                break
            budget[0] -= 1
            opts = [(2, "set"), (2, "observe"), (5, "run"), (0.4, "observes"), (0.4, "instant"), (1, "choose")]
            if depth < 6:  # (the fast tier takes 8 deep at most: programs wrapped to 8, or 9, below)
                opts += [(1.5, "branch"), (1, "with")]
            if not self.server:  # (a server may not turn, end or loop for ever)
                opts.append((0.5, "turn"))
                if depth < 3:
                    opts.append((0.8, "loop"))
                if depth > 0:
                    opts.append((0.4, "end"))
            if self.pools and depth < 4:
                opts.append((4, "hold"))
            c = self.p(opts)
            if c == "set":
                out.append(f"set {self.rng.choice(['x', 'y', 't0'])} = {self.value()};")
            elif c == "observe":
                out.append(f"observe {self.obs('o', 'q', 'r')} = {self.value()};")
            elif c == "observes":  # several in a row
                out.append(" ".join(f"observe {self.obs('o', 'q', 'r', 'u')} = {self.value()};"
                                    for _ in range(self.rng.randint(2, 4))))
            elif c == "instant":
                out.append(f"observe {self.obs('at')} = now;")
            elif c == "run":
                out.append(f"run {self.stage()} ({self.work()});")
            elif c in ("branch", "with"):
                self.nest = max(self.nest, depth + 1)
                head = f"branch ({self.guard()})" if c == "branch" else (
                    f"branch with ({self.p([(3, '0.5'), (2, '0.2'), (1, '1'), (1, '0'), (1, 'L_p')])})"
                    if not self.rare() else "branch with (x / 2)")
                then = " ".join(self.block(depth + 1, budget, holding))
                orelse = ""
                if self.rng.random() < 0.5:
                    orelse = f" else {{ {' '.join(self.block(depth + 1, budget, holding))} }}"
                out.append(f"{head} {{ {then} }}{orelse}")
            elif c == "loop":  # ends the session: the last statement of its block
                self.nest = max(self.nest, depth + 2)  # (the branch that ends it is in its body)
                k = f"k{depth}"
                body = " ".join(self.block(depth + 1, budget, holding))
                turns = self.rng.random() < 0.3
                tail = f"turn; run d ({self.p([(2, '~exp(1)'), (1, '~det(0.5)'), (1, '~uniform(0, 2)')])});" \
                    if turns else ""
                out.append(f"set {k} = 0; loop {{ set {k} = {k} + 1; {body} "
                           f"branch ({k} >= {self.rng.randint(1, 4)}) {{ end; }} {tail} }}")
                return out
            elif c == "choose":
                out.append(self.choose(depth, budget, holding))
            elif c == "hold":
                self.nest = max(self.nest, depth + 1)
                out.append(self.hold(depth, budget, holding))
            elif c == "turn":
                out.append("turn;")
            elif c == "end":
                out.append("end;")
                return out
        return out

    def obs(self, *names: str) -> str:
        """An observe's name (each name is observed at several sites)."""
        return self.rng.choice(names)

    def choose(self, depth: int, budget: list[int], holding: tuple) -> str:
        """``choose j in n by (…)``, then a run on the stage member, or a hold of the pool member, it
        names."""
        fams = [(n, s, "stage") for n, _, s in self.stages if s > 1]
        fams += [(n, s, "pool") for n, s, _ in self.pools if s > 1 and n not in holding and depth < 4]
        if not fams:
            return f"run {self.stage()} ({self.work()});"
        name, size, what = self.rng.choice(fams)
        if self.rare(60):
            count = self.p([(1, "sz - 1"), (1, "x"), (1, "0 * x")])
        else:
            count = self.p([(4, str(size)), (1, f"min({size}, sz)"), (1, "1")])
        m = f"{name}[j]"
        if what == "stage":
            keys = self.p([(3, f"queue({m})"), (2, f"queue({m}), -j"), (1, f"busy({m}), queue({m})"),
                           (1, "0"), (1, f"(j + serial) % {size}"), (1, "~uniform(0, 1) < 0.5 ? j : -j")])
            return f"choose j in {count} by ({keys}); run {m} ({self.work()});"
        keys = self.p([(2, f"queued({m})"), (2, f"used({m}), -j"), (1, f"free({m}) < 1, holders({m})"), (1, "-j")])
        self.nest = max(self.nest, depth + 1)
        cap = next(c for n, _, c in self.pools if n == name)
        body = f"run {self.stage()} ({self.work()}); " + " ".join(self.block(depth + 1, budget, holding + (name,)))
        return f"choose j in {count} by ({keys}); hold {m} ({self.units(cap)}) {{ {body} }}"

    def hold(self, depth: int, budget: list[int], holding: tuple) -> str:
        """``hold P (u), Q (v) { … }`` over one or two pool families."""
        k = 1 if len(self.pools) == 1 or self.rng.random() < 0.6 else 2
        fams = self.rng.sample(self.pools, k)
        parts = [f"{self.member(n, s)} ({self.units(c)})" for n, s, c in fams]
        body = " ".join(self.block(depth + 1, budget, holding + tuple(n for n, _, _ in fams)))
        if self.rng.random() < 0.6:  # time passes while it holds
            body = f"run {self.stage()} ({self.work()}); {body}"
        return f"hold {', '.join(parts)} {{ {body} }}"


def _stage_decl(g: _Gen, k: int) -> str:
    rng = g.rng
    name = f"s{k}"
    kind = pick(rng, [(4, "fifo"), (3, "ps"), (2, "delay")])
    size = pick(rng, [(5, 1), (1, "[1]"), (3, 2), (2, 3), (1, "let")])
    if size == "let":
        size = rng.choice([2, 3])
        g.lets[f"n{k}"] = size
        dim = f"[n{k}]"
    elif size == "[1]":
        size, dim = 1, "[1]"
    else:
        dim = f"[{size}]" if size > 1 else ""
    if kind == "fifo":
        servers = pick(rng, [(5, ""), (2, "(2)"), (1, "(3)"), (1, "(inf)"), (1, "(1)"), (1, "(let)")])
        if servers == "(let)":
            g.lets[f"c{k}"] = rng.choice([1, 2, 4])
            servers = f"(c{k})"
        decl = f"fifo{servers}"
    elif kind == "ps":
        phi = pick(rng, [(4, "1"), (2, "2"), (2, "min(present, 2)"), (1, "present / (present + 1)"),
                          (1, "0.5 + present / 4"), (1, "max(1, present - 1)"), (1, "present > 3 ? 2 : 1"),
                          (1, "present > 4 ? 0 : 1"), (1, "L_phi"), (1, "sqrt(present)")])
        if g.rare(60):
            phi = "2 - present"  # below 0 with three present: an error
        decl = f"ps({phi})"
    else:
        decl = "delay"
    g.stages.append((name, kind, size))
    if not dim:
        g.lone.add(name)
    return f"stage {name}{dim} : {decl};"


def _pool_decl(g: _Gen, k: int) -> str:
    rng = g.rng
    name = f"p{k}"
    size = pick(rng, [(5, 1), (1, "[1]"), (3, 2), (2, 3)])
    dim = "[1]" if size == "[1]" else (f"[{size}]" if size > 1 else "")
    size = 1 if size == "[1]" else size
    cap = pick(rng, [(3, 1), (3, 2), (2, 3), (1, 1.5), (1, 5), (1, "let"), (1, None)])
    opts = []
    if cap == "let":
        cap = rng.choice([1, 2, 4])
        g.lets[f"cap{k}"] = cap
        opts.append(f"cap cap{k};")
    elif cap is not None:
        opts.append(f"cap {cap:g};")
    order = pick(rng, [(5, "fifo"), (3, "static"), (2, "dynamic")])
    if order == "fifo" and rng.random() < 0.3:
        opts.append("queue fifo;")
    elif order == "static":  # keys read attributes only: fixed at the join (ties and NaN among them)
        keys = pick(rng, [(2, "prio"), (2, "-sz"), (2, "prio, serial"), (1, "turn_no"), (1, "sz * 2 - prio"),
                           (1, "floor(sz / 2)"), (1, "serial % 2"), (1, "-prio, -serial"), (1, "sqrt(prio - 0.5)"),
                           (1, "x"), (1, "prio ? sz : -sz"), (1, "max(sz, prio * 3), -serial"), (1, "0"),
                           (1, "prio / 0"), (1, "(sz - 2) / (prio - prio), serial")])
        opts.append(f"queue by ({keys});")
    elif order == "dynamic":  # keys read the time or the state: read at every head lookup
        # a pool declared before (or this one), by a fixed member
        other_name, other_size = (name, size) if not g.pools or rng.random() < 0.5 else rng.choice(g.pools)[:2]
        other = f"{other_name}[{rng.randrange(other_size)}]" if other_size > 1 else other_name
        keys = pick(rng, [(2, "now"), (2, "waited"), (2, "prio - waited * 0.1"), (1, "-waited, serial"),
                           (2, f"queued({other}) > 1 ? prio : -prio"), (1, f"used({other})"),
                           (1, "now > 10 ? serial : -serial"), (1, f"queue({g.stage(True)})"),
                           (1, f"busy({g.stage(True)}) + prio"), (1, f"holders({other}) - sz")])
        fams = [(n, s) for n, _, s in g.stages if s > 1]
        if fams and g.rare(20):  # a member out of range when prio is 1: an error at a head lookup
            fam, fsize = rng.choice(fams)
            keys = f"queue({fam}[prio * {fsize}]), serial"
        opts.append(f"queue by ({keys});")
    g.pools.append((name, size, cap if isinstance(cap, (int, float)) else None))
    if not dim:
        g.lone.add(name)
    return f"pool {name}{dim} {{ {' '.join(opts)} }}"


def program(i: int) -> tuple[str, dict[str, float], str | None]:
    """Program ``i``: ``(source, --set values, the exclusion it is meant to have)``."""
    rng = random.Random(i)
    g = _Gen(rng)
    # (a program of 2 000 runs takes half a second on each tier: rare)
    edge = None if rng.random() < 0.85 else pick(rng, [(0.2 if e == "blocks" else 1, e) for e in sorted(EDGES)])
    g.errors = rng.random() < 0.5  # half the programs provoke no error anywhere
    stage_decls = [_stage_decl(g, k) for k in range(pick(rng, [(3, 1), (3, 2), (1, 3)]))]
    pool_decls = [_pool_decl(g, k) for k in range(pick(rng, [(1, 0), (3, 1), (3, 2), (1, 3)]))]
    if edge == "twice" and not any(s > 1 for _, s, _ in g.pools):
        pool_decls.append("pool pt[2] { cap 2; }")
        g.pools.append(("pt", 2, 2))
    if edge in ("grow", "release", "drop", "reserve", "cache", "lease") and not g.pools:
        pool_decls.append("pool pe { cap 3; }")
        g.pools.append(("pe", 1, 3))
        g.lone.add("pe")
    if edge in ("block", "preempt", "evict", "reserve_held"):
        extra = {"block": "block 1;", "preempt": "preempt lifo;", "evict": "evict by (-size);",
                 "reserve_held": "reserve held;"}[edge]
        pool_decls.append(f"pool pe {{ cap 4; {extra} }}")
        g.pools.append(("pe", 1, 4))
        g.lone.add("pe")
    if edge == "flows":
        stage_decls += ["stage f : ps(1);", "stage f2 : ps(2);"]
    # the constants the expressions read; a let now and then is varied as --set does
    lets = {"L_w": rng.choice([0.5, 1, 2]), "L_u": rng.choice([1, 2]), "L_p": rng.choice([0.25, 0.5]),
            "L_phi": rng.choice([1, 2])}
    lets.update(g.lets)
    sets: dict[str, float] = {}
    for name in sorted(lets):
        if rng.random() < 0.12:
            if name.startswith("n"):  # a family's size: larger (its members are named by number too)
                sets[name] = 4
            elif name.startswith("c") and not name.startswith("cap"):
                sets[name] = rng.choice([1, 2, 3, 4])
            elif name.startswith("cap"):
                sets[name] = rng.choice([1, 2, 3, 0.5])
            else:
                sets[name] = rng.choice([0.5, 1, 1.5, 3])
    if "L_p" in sets:
        sets["L_p"] = min(sets["L_p"], 1)
    # the workload
    wl = pick(rng, [(4, "poisson"), (2, "renewal"), (2, "batch"), (2, "closed"), (0.05, "none")])
    arrivals = None
    if wl == "poisson":
        rate = rng.choice([0.3, 0.8, 1.5, 3, "lam"])
        if rate == "lam":
            lets["lam"] = rng.choice([0.5, 1])
        arrive = f"arrive poisson({rate});"
        horizon = rng.choice([15, 30, 60])
    elif wl == "renewal":
        gap = pick(rng, [(2, "~exp(1.5)"), (1, "~h2(1, 4)"), (1, "~det(1)"), (1, "0.1 + ~uniform(0, 1)"),
                          (1, "~erlang(2, 0.5)"), (1, "2")])
        if g.rare(30):
            gap = "~exp(1) - 0.3"  # a negative gap: an error
        arrive = f"arrive renewal({gap});"
        horizon = rng.choice([15, 30, 60])
    elif wl == "batch":
        arrive = f"arrive batch({rng.randint(1, 15)});"
        horizon = rng.choice([5, 20, 60, 200])
    elif wl == "closed":
        arrive = f"arrive closed({rng.randint(1, 6)});"
        horizon = rng.choice([10, 30, 50])
    else:  # no session starts: a warning
        arrive = "arrive none;"
        horizon = rng.choice([10, 30, 50])
    if wl in ("poisson", "renewal") and rng.random() < 0.2:
        arrivals = rng.randint(1, 40)
        horizon = pick(rng, [(3, "1e6"), (2, "inf"), (1, horizon)])
    # attributes: sz and prio from init (or the session's top), more from the turn block
    init, turn = [], []
    forms = [(4, "single"), (3, "turns")]
    if edge is None:
        forms.append((1, "sides"))  # (an edge's statement goes into a session block)
    if wl == "closed":
        forms.append((2, "closed"))
    form = pick(rng, forms)
    g.server = form == "sides"
    top = ["set t0 = now;", f"set x = {rng.choice(DRAWS)};", f"set y = {rng.choice(DRAWS)};"]
    if wl == "closed":  # a session that ends before time passes (at a rejection, say) is replaced at once
        top.insert(0, "run d (~exp(1));")
    attrs = [f"set sz = {pick(rng, [(3, '1 + floor(~uniform(0, 3))'), (1, '2'), (1, '~bernoulli(0.5) + 1')])};",
             f"set prio = {pick(rng, [(3, 'floor(~uniform(0, 2))'), (1, '~bernoulli(0.3)'), (1, 'serial % 2')])};"]
    if rng.random() < 0.5:
        init += attrs
        if rng.random() < 0.3:
            init.append(f"observe init_x = {rng.choice(DRAWS)};")
    else:
        top += attrs
    hidden = ""
    think = pick(rng, [(3, "~exp(2)"), (1, "~det(1)"), (1, "~uniform(0, 3)"), (1, "h")])
    if form in ("turns", "sides"):
        turn.append(f"set more = ~bernoulli({rng.choice([0.5, 0.7])});")
        if rng.random() < 0.5:
            turn.append(f"set y = {rng.choice(DRAWS)};")
        if think == "h" or rng.random() < 0.3:
            hidden = "hidden h;"
            turn.append(f"set h = {rng.choice(DRAWS)};")
            g.hidden = True
    if think == "h" and not g.hidden:
        think = "~exp(2)"
    budget = [rng.randint(3, 14)]
    body = g.block(0 if form == "single" else 1, budget)
    if g.hidden and rng.random() < 0.5:
        body.insert(0, "observe hid = h;")
    done = "observe r = now - t0;" if rng.random() < 0.8 else "observe at = now;"
    server = None
    if form == "single":
        session = top + body + [done]
    elif form == "closed":  # each session for ever
        g.nest = max(g.nest, 1)
        session = top + [f"loop {{ run d ({think}); set t0 = now; {' '.join(body)} {done} }}"]
    else:  # turns: the loop, and the branch on more, two deep
        g.nest = max(g.nest, 2)
        core = f"set t0 = now; {' '.join(body)} {done}"
        if form == "sides":  # the workload's side (turns and think times) and the server's (one request)
            server, core = core, "request;"
        session = top + ["turn;", f"loop {{ {core} branch (more) {{ run d ({think}); turn; }} else {{ end; }} }}"]
    # the edges that are statements
    if edge in EDGE_STMTS:
        pool = (g.pools[-1][0] if g.pools[-1][0] in g.lone else f"{g.pools[-1][0]}[0]") if g.pools else None
        stmt = EDGE_STMTS[edge].format(P=pool, S=g.stage(True))
        if edge == "twice":
            name = next(n for n, s, _ in g.pools if s > 1)
            stmt = f"hold {name}[0] (1), {name}[1] (1) {{ run d (1); }}"
        limit = len(top) + (len(body) if form == "single" else 0)
        low = 1 if wl == "closed" else 0  # (after the closed sessions' first run)
        session.insert(rng.randint(len(top) if edge == "record" else low, limit), stmt)
        if "hold" in stmt:
            g.nest = max(g.nest, 1)
    # wrapped in branches that always pass: 8 deep at most on the fast tier, 9 for the edge
    if edge == "deep" or (form != "sides" and rng.random() < 0.06):
        for _ in range(8 - g.nest + (edge == "deep")):
            session = [f"branch (serial >= 0) {{ {' '.join(session)} }}"]
    # stage families to the fast tier's limit, or one beyond it
    families = len(g.stages) + 1 + (edge == "flows") * 2
    if edge == "families" or rng.random() < 0.02:
        for k in range(fast.FAST_FAMILIES - families + (edge == "families")):
            stage_decls.append(f"stage z{k} : {rng.choice(['delay', 'fifo', 'ps(1)'])};")
        session.insert(0, f"run z{rng.randrange(fast.FAST_FAMILIES - families)} (~exp(0.5));")
    # runs, branches and loops to the fast tier's limit, or one beyond it (in a branch never taken)
    if edge == "blocks" or (form != "sides" and rng.random() < 0.002):
        have = len(re.findall(r"\b(?:run|branch|loop)\b", " ".join(session)))
        filler = " ".join("run d (1);" for _ in range(fast.FAST_BLOCKS - have - 1 + (edge == "blocks")))
        session.append(f"branch (serial < 0) {{ {filler} }}")
    # the run block
    run = [f"horizon {horizon};"]
    if rng.random() < 0.3:
        run.append(f"warmup {rng.choice([w for w in (1, 3, 5, 10) if w < float(horizon)])};")
    run.append(f"seed {rng.randrange(1000)};")
    if arrivals is not None:
        run.append(f"arrivals {arrivals};")
    wl_items = [arrive, hidden]
    if init:
        wl_items.append(f"init {{ {' '.join(init)} }}")
    if turn:
        wl_items.append(f"turn {{ {' '.join(turn)} }}")
    if server is not None:
        wl_items.append(f"session {{ {' '.join(session)} }}")
        session_text = f"server {{ {server} }}"
    else:
        session_text = f"session {{ {' '.join(session)} }}"
    lines = [f"let {k} = {v};" for k, v in sorted(lets.items())]
    lines += pool_decls + stage_decls + ["stage d : delay;"]
    if edge == "flows":
        lines.append("share maxmin;")
    if edge == "gauge":
        lines.append(f"gauge g = queue({g.stage(True)});")
    lines += [f"workload {{ {' '.join(x for x in wl_items if x)} }}", session_text, f"run {{ {' '.join(run)} }}"]
    return "\n".join(lines) + "\n", sets, EDGES[edge] if edge else None


# --- running and comparing ----------------------------------------------------------------------------------


def _outcome(prog, monkeypatch, tier: str):
    """``(outcome, report)``: ``outcome`` the JSON report, every observe's columns and every record table's
    columns (dtype and bytes), or the error's type and message; ``report`` the report or None."""
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    try:
        r = serq_sim.run(prog)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return ("error", type(e).__name__, str(e)), None
    obs = {name: tuple((getattr(o, f).dtype.str, getattr(o, f).tobytes())
                       for f in ("values", "times", "sessions", "turns"))
           for name, o in r.observes.items()}
    recs = {name: {c: (a.dtype.str, a.tobytes()) for c, a in r.record_table(name).arrays().items()}
            for name in r.record_names}
    return ("report", encode_json(r), obs, recs), r


def _first_difference(a, b) -> str:
    if a[0] != b[0] or a[0] == "error":
        return f"default: {a[:3]!r}\ngeneral: {b[:3]!r}"
    if a[1] != b[1]:
        for k, (x, y) in enumerate(zip(a[1], b[1])):
            if x != y:
                lo, hi = max(0, k - 200), k + 200
                return (f"JSON reports differ at character {k}:\ndefault: …{a[1][lo:hi]}\n"
                        f"general: …{b[1][lo:hi]}")
        return "JSON reports differ in length"
    for name in a[2]:
        if a[2][name] != b[2].get(name):
            return f"observe {name} differs"
    return "records differ"


def _blocks() -> list[range]:
    per = -(-EXAMPLES // BLOCKS)
    return [range(FIRST + k * per, FIRST + min((k + 1) * per, EXAMPLES)) for k in range(BLOCKS)
            if k * per < EXAMPLES]


def _compile(src: str, sets: dict):
    return serq_frontend.compile(source=src, sets=sets, defs={})


@pytest.mark.parametrize("seeds", _blocks(), ids=lambda r: f"{r.start}-{r.stop - 1}")
def test_random_programs_agree_on_both_tiers(seeds, monkeypatch):
    n = len(seeds)
    failed_compile = 0
    errors: dict[str, int] = {}
    fast_runs = edges = 0
    pool_waits = rejections = multi = live_at_end = 0
    differ = []
    for i in seeds:
        src, sets, edge = program(i)
        try:
            prog = _compile(src, sets)
        except serq_frontend.CompileError:
            failed_compile += 1
            continue
        why = fast.exclusion(prog)
        # the generator's intent: in the class, or outside it by the one construct it meant
        assert why == edge, (i, why, edge, src)
        edges += edge is not None
        got, rep = _outcome(prog, monkeypatch, "")
        ref, ref_rep = _outcome(prog, monkeypatch, "general")
        if got != ref:
            differ.append((i, src, sets, _first_difference(got, ref)))
            continue
        if ref[0] == "error":
            kind = ref[2].split(": ")[-1][:24]
            errors[kind] = errors.get(kind, 0) + 1
            continue
        assert ref_rep.tier == "general"
        assert rep.tier == ("general" if edge else "fast"), (i, rep.tier, edge)
        fast_runs += rep.tier == "fast"
        res = ref_rep.result
        pool_waits += rep.tier == "fast" and any(p.wait > 0 for p in res.pools)
        rejections += any(p.rejections > 0 for p in res.pools)
        multi += res.turns > res.arrivals
        live_at_end += res.ended < res.arrivals
    assert not differ, "\n\n".join(f"program {i} (--set {sets}):\n{src}{what}"
                                   for i, src, sets, what in differ[:3]) + (
        f"\n\n{len(differ)} of {n} programs differ: {[i for i, _, _, _ in differ]}")
    if n >= 100:  # (a block of fewer programs, SERQ_DIFF_FAST_EXAMPLES below 700, proves nothing either way)
        n_err = sum(errors.values())
        assert failed_compile <= 0.03 * n, failed_compile
        assert 0.01 * n <= n_err <= 0.15 * n, errors
        assert len(errors) >= 3, errors
        assert fast_runs >= 0.65 * n, fast_runs
        assert edges >= 0.05 * n, edges
        assert pool_waits >= 0.05 * n, pool_waits  # (fast-tier runs in which sessions waited at a pool)
        assert rejections >= 0.03 * n, rejections
        assert multi >= 0.15 * n, multi
        assert live_at_end >= 0.4 * n, live_at_end



def test_the_generator_reaches_the_fast_tiers_limits():
    """Among the default programs, some are at each of the fast tier's limits (nested 8 deep, 200 stage
    families, 2 000 runs, branches and loops) and in its class, and some one beyond (the edges ``deep``,
    ``families``, ``blocks``) and out of it."""
    from serq_ir import nodes as N

    def measures(prog):
        return (fast._nesting(prog.session), len(prog.stages),
                sum(1 for st in fast._stmts(prog.session) if isinstance(st, (N.Run, N.Branch, N.Loop))))

    limits = (fast.FAST_NEST, fast.FAST_FAMILIES, fast.FAST_BLOCKS)
    at = [0, 0, 0]
    beyond = [0, 0, 0]
    for i in range(DEFAULT_EXAMPLES):
        src, sets, edge = program(i)
        if not any(m in src for m in ("branch (serial >= 0)", "stage z", "branch (serial < 0)")):
            continue
        prog = _compile(src, sets)
        got = measures(prog)
        if edge is None:
            assert fast.exclusion(prog) is None, i
            assert all(m <= lim for m, lim in zip(got, limits)), (i, got)
        for k, (m, lim) in enumerate(zip(got, limits)):
            at[k] += m == lim
            beyond[k] += m == lim + 1
    assert min(at) >= 1 and min(beyond) >= 1, (at, beyond)


# --- defects the random programs found ----------------------------------------------------------------------


def _report_on_each_tier(src: str, monkeypatch) -> dict[str, object]:
    """``{tier: report or ("error", type, message)}`` for the default tier ("") and the general engine,
    without requiring them to agree."""
    prog = _compile(src, {})
    out = {}
    for tier in ("", "general"):
        got, rep = _outcome(prog, monkeypatch, tier)
        out[tier] = rep if rep is not None else got
    return out


def test_drawn_units_of_a_session_waiting_at_the_end(monkeypatch):
    # docs/simulator.md, "The fast tier": a cap-only pool's holds may have any units, and the report is
    # the general engine's byte for byte. batch(3) at 0: session 0 takes 0.6 + u (u in [0, 0.1]) of the 1
    # unit; sessions 1 and 2 need at least 0.6 and wait behind it for the whole run, since session 0's run
    # of 10 outlives the horizon 5. So p: 1 admission (it waited 0), 2 sessions queued and 1 holder
    # throughout, no rejection, and over_cap 0 (a demand of at most 0.7 never exceeds the cap of 1);
    # nobody ends, nothing is observed.
    src = """
pool p { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session { hold p (0.6 + ~uniform(0, 0.1)) { run d (10); } observe done = now; }
run { horizon 5; }
"""
    reports = _report_on_each_tier(src, monkeypatch)
    for tier, r in reports.items():
        assert not isinstance(r, tuple), (tier, r)
        p = r.pool("p")
        assert (p.admissions, p.wait, p.queue, p.holders, p.rejections, p.over_cap) == (1, 0.0, 2.0, 1.0, 0, 0), tier
        assert (r.result.arrivals, r.result.ended, r.result.end) == (3, 0, 5.0), tier
        assert len(r.observe("done").values) == 0, tier
    assert reports[""].tier == "fast"
    assert encode_json(reports[""]) == encode_json(reports["general"])


if __name__ == "__main__":
    _src, _sets, _edge = program(int(sys.argv[1]))
    print(f"// --set {_sets}, meant to be excluded: {_edge}")
    print(_src, end="")
