"""The interpreter of the IR: the configuration of §3, the settle loop, the event list.

See docs/simulator.md for the design. In short: a session is a generator (compiled by
:mod:`serq_sim.compile`) plus its attributes, status and active holds; a pool has its holders, cache
entries, queue and growers; a stage kind object has its jobs. Events are ``(time, seq, callback, arg)``
in a heap, ``seq`` from one counter, so events at one instant run in the order they were scheduled. After
every event :meth:`Simulation.settle` runs the ready sessions in the order they became ready, then retries
growers and admissions at every pool not served by a stage until nothing changes, then (when no other
event is pending at the instant) lets every idle step stage start an iteration, then lets marked stages
reschedule.
"""

from __future__ import annotations

import heapq
import itertools
import math
import sys
import time as _time
from array import array
from collections import deque

from serq_ir import nodes as N

from . import rand
from .compile import REDO_MESSAGE, SPIN_MESSAGE, Compiler, mentions, num
from .errors import InvariantError, Preempted, SessionGone, SimError, StopRun, format_error
from .stages import _READY, _STAGE, Ctx, FlowNetwork, Job

EPS = 1e-9
INF = math.inf
#: events between two ticks of the event loop (the no-progress guard, the bounds, the progress bar)
TICK = 20_000
#: the no-progress guard: a run that makes more than STALL_EVENTS + STALL_PER_SESSION × (sessions live when
#: the instant began) events at one instant is an error (legitimate work at one instant is bounded by
#: what its sessions do; a flow or a stage rescheduling at the same instant for ever is not)
STALL_EVENTS = 1_000_000
STALL_PER_SESSION = 1_000
_log = math.log

# session status
READY, QUEUED, STAGE, GROWING, ENDED = 0, 1, 2, 3, 4
SLOT_SERIAL, SLOT_TURN, SLOT_CACHED, SLOT_COMPUTED = 0, 1, 2, 3
assert (_READY, _STAGE) == (READY, STAGE)  # the stages' fast paths set these statuses themselves


class Session:
    __slots__ = ("serial", "attrs", "gen", "status", "holds", "pending", "adm_seq", "preempt_pos", "stuck",
                 "leases", "trace", "preset", "requeue", "job", "grow", "qpool", "in_ready", "spin_t", "spin_k",
                 "redo_t", "redo_k")

    def __init__(self, serial: int, nattrs: int):
        self.serial = serial
        self.attrs = [0.0] * nattrs
        self.attrs[SLOT_SERIAL] = float(serial)
        self.gen = None
        self.status = READY
        self.holds: list = []
        self.pending = None
        self.adm_seq = -1
        self.preempt_pos = None
        self.stuck = False
        self.leases: list = []
        self.trace = None
        self.preset = None
        self.requeue = None
        self.job = None
        self.grow = None
        self.qpool = None
        self.in_ready = False
        #: the instant of the session's last loop-head pass, and how many passes it made at it
        self.spin_t = math.nan
        self.spin_k = 0
        #: the instant of the session's last re-execution of a preempted hold, and how many it made then
        self.redo_t = math.nan
        self.redo_k = 0


class Pending:
    """A hold waiting in its first pool's queue."""

    __slots__ = ("info", "pools", "queued_at", "join_seq", "demand")

    def __init__(self, info, pools, queued_at, join_seq):
        self.info = info
        self.pools = pools
        self.queued_at = queued_at
        self.join_seq = join_seq
        #: the demand, once evaluated, when it cannot change while the hold waits (``info.pure``)
        self.demand = None


class HoldRT:
    """An active hold: one slot per pool."""

    __slots__ = ("info", "slots", "grown")

    def __init__(self, info, slots):
        self.info = info
        self.slots = slots
        self.grown = False


class Slot:
    """A hold's allocation on one pool: ``alloc`` units, computed position ``pos``, reservation ``r`` and
    its unallocated part ``u`` (counted by ``reserve held``)."""

    __slots__ = ("pool", "alloc", "pos", "r", "u", "owner", "hold", "lease")

    def __init__(self, pool, alloc, pos, r, u, owner, hold):
        self.pool = pool
        self.alloc = alloc
        self.pos = pos
        self.r = r
        self.u = u
        self.owner = owner
        self.hold = hold
        self.lease = False


class Lease:
    __slots__ = ("slot", "cache", "alive", "grown", "span")

    def __init__(self, slot, cache, grown, span):
        self.slot = slot
        self.cache = cache
        self.alive = True
        self.grown = grown
        #: the hold statement that leased (a NaN cache length at the lease's end is reported there)
        self.span = span


class Entry:
    """A cached prefix: a session's own (``dead`` False) or a dead remainder past a ``reuse`` bound."""

    __slots__ = ("size", "last", "seq", "owner", "snap", "alive", "eid", "dead")

    def __init__(self, size, last, seq, owner, snap, eid, dead=False):
        self.size = size
        self.last = last
        self.seq = seq
        self.owner = owner
        self.snap = snap
        self.alive = True
        self.eid = eid
        self.dead = dead


class Pool:
    """One member of a pool family."""

    def __init__(self, sim, node: N.Pool, member: int, flat: int):
        self.sim = sim
        self.node = node
        self.name = node.name
        self.index = member
        self.flat = flat
        self.cap = num(node.cap)
        self.block = float(node.block) if node.block else None
        self.reserve_held = node.reserve_held
        self.used = 0.0
        self.cached = 0.0
        self.reserved = 0.0
        self.holders: dict[Slot, None] = {}
        self.own: dict[int, Entry] = {}
        self.dead: dict[int, Entry] = {}
        self.front: deque = deque()
        self.queue: deque = deque()
        self.keyed = None  # queue-by keys function
        self.growers: deque = deque()
        self.via = None
        self.memory_of: list = []
        self.evict = None
        self.preempt = None
        self.spill = None
        self.needs_snap = False
        # statistics
        self.t_last = 0.0
        self.a_used = self.a_cached = self.a_queue = self.a_holders = 0.0
        self.wait_sum = 0.0
        self.admissions = 0
        self.evicted_entries = 0
        self.evicted_units = 0.0
        self.preemptions = 0
        self.spills = 0
        self.rejections = 0
        self.stuck = 0
        self.over_cap = 0

    def acc(self) -> None:
        now = self.sim.now
        dt = now - self.t_last
        if dt > 0:
            self.a_used += self.used * dt
            self.a_cached += self.cached * dt
            self.a_queue += (len(self.front) + len(self.queue)) * dt
            self.a_holders += len(self.holders) * dt
        self.t_last = now

    def reset_stats(self) -> None:
        self.acc()
        self.a_used = self.a_cached = self.a_queue = self.a_holders = 0.0
        self.wait_sum = 0.0
        self.admissions = self.evicted_entries = self.preemptions = self.spills = 0
        self.rejections = self.stuck = 0
        self.evicted_units = 0.0

    def iter_entries(self):
        yield from self.own.values()
        yield from self.dead.values()

    def round_up(self, x: float) -> float:
        b = self.block
        if b is None or x == INF:
            return x
        try:
            return math.ceil(x / b - 1e-12) * b
        except OverflowError:  # x / b beyond the float range: blocks finer than x's precision
            return x

    def round_down(self, x: float) -> float:
        b = self.block
        if b is None or x == INF:
            return x
        try:
            return math.floor(x / b + 1e-12) * b
        except OverflowError:  # as in round_up
            return x


class Observations:
    """One observe's samples: values, times, session serials and turn numbers."""

    __slots__ = ("values", "times", "sessions", "turns")

    def __init__(self):
        self.values = array("d")
        self.times = array("d")
        self.sessions = array("q")
        self.turns = array("i")


#: The most samples a run holds unless told otherwise (``serq run --max-samples``): 28 bytes each
#: (an observe's value, time, session and turn), 2.8 GB in all.
DEFAULT_MAX_SAMPLES = 100_000_000


class Simulation:
    """One run of one program. Build with :func:`serq_sim.run` (or :meth:`build`), then :meth:`run`."""

    def __init__(self, program: N.Program, registries, *, seed=None, horizon=None, warmup=None,
                 arrivals=None, check_invariants=False, progress=False, trace_path=None, max_events=None,
                 max_wall=None, max_samples=None):
        self.program = program
        rs = program.run
        if seed is not None:
            from serq_ir.rules import seed_problem

            why = seed_problem(seed)
            if why:
                raise SimError(f"error: {why}")
        self.seed = int(rs.seed if seed is None else seed)
        if horizon is not None:
            self.horizon = float(horizon)
        else:
            # a program without a horizon runs until no event is left (serq run refuses it)
            self.horizon = INF if rs.horizon is None else num(rs.horizon)
        self.warmup = float(rs.warmup if warmup is None else warmup)
        self.arr_limit = rs.arrivals if arrivals is None else arrivals
        self.check = check_invariants
        self.progress = progress
        #: the user's bounds (``serq run --max-events/--max-wall``): the run stops with a partial report
        self.max_events = max_events
        self.max_wall = max_wall
        #: at most this many samples (observes' and gauges' change points) are held: a run that holds more
        #: stops with its partial report (checked at the bounds ticks and when the fast tier grows its
        #: buffers), instead of running out of memory
        self.max_samples = DEFAULT_MAX_SAMPLES if max_samples is None else max_samples
        self.t_wall0 = self.t_shown = _time.monotonic()
        self.show_progress = False
        #: the no-progress guard (see tick): the instant of the first tick at it, the event count and the
        #: live sessions then
        self.stall_t = math.nan
        self.stall_ev = 0
        self.stall_live = 0
        self.source = program.source
        self.now = 0.0
        self.heap: list = []
        self._seq = itertools.count()
        self.ready: deque = deque()
        self.dirty: list = []
        self.events = 0
        #: events a step stage's quiet rounds stood for (serq_sim.step: each is an iteration's end that the
        #: event loop did not pop); counted into ``events`` when the loop stops
        self.virtual_events = 0
        self.arrivals = 0
        self.open_arrivals = 0
        self.ended = 0
        self.turns = 0
        self.live = 0
        self.live_t = 0.0
        self.a_live = 0.0
        self.warm = self.warmup <= 0
        self.next_serial = 0
        self.adm_counter = itertools.count()
        self.join_counter = itertools.count()
        self.release_counter = itertools.count()
        self.eid_counter = itertools.count()
        self.preempt_count = 0
        self.admit_budget = None
        self.interrupted = False
        #: whether events were left when the run ended (none left: every live session waits for ever)
        self.heap_left = True
        #: why the run stopped early (``None``: it did not), and the report's note saying so
        self.partial: str | None = None
        self.partial_note = ""
        self.cur = None
        self.rngs = rand.streams(self.seed)
        self._rand_arr = self.rngs["arrivals"].random
        self.null_ctx = Ctx()
        self.nattrs = len(program.attributes)
        names = {a.name: i for i, a in enumerate(program.attributes)}
        self.slot_more = names.get("more")
        self.trace_slots = [names.get(n) for n in ("new", "out", "think", "forced")]
        self.obs = [Observations() for _ in program.observes]
        self.obs_app = [(o.values.append, o.times.append, o.sessions.append, o.turns.append) for o in self.obs]
        self.gauge_points: list[tuple[array, array]] = []
        self._build(registries, trace_path)

    # ----------------------------------------------------------------------------------- building
    def _build(self, reg, trace_path) -> None:
        p = self.program
        self.pool_base = []
        self.pools: list[Pool] = []
        for node in p.pools:
            self.pool_base.append(len(self.pools))
            for m in range(node.size):
                self.pools.append(Pool(self, node, m, len(self.pools)))
        self.stage_base = []
        n = 0
        for node in p.stages:
            self.stage_base.append(n)
            n += node.size
        self.stages: list = [None] * n
        self.compiler = Compiler(self, p)
        self.spans = self.compiler.spans
        # which stage families some run holds together with another: their ps members are flows
        self.shared_families = set()
        for blk in _all_blocks(p):
            for st in blk:
                if isinstance(st, N.Run) and len(st.stages) > 1:
                    self.shared_families.update(r.stage for r in st.stages)
        self.flow_network = None
        if self.shared_families:
            share = p.share
            if share is None:
                raise SimError(format_error(None, None, None, "a run holds several stages but the program "
                                            "declares no share (share maxmin; or share bottleneck;)",
                                            self.source))
            if share not in reg.share:
                raise SimError(format_error(None, None, None, f"unknown share policy {share!r} (known: "
                                            f"{', '.join(reg.share.names())})", self.source))
            self.flow_network = FlowNetwork(self, reg.share[share])
        for f, node in enumerate(p.stages):
            kind = node.kind
            name = kind.name if isinstance(kind, N.Extension) else type(kind).__name__
            if name not in reg.stage_kinds:
                raise SimError(format_error(node.span, None, None, f"stage {node.name}: unknown stage kind "
                                            f"{name!r} (registered: {', '.join(reg.stage_kinds.names())})",
                                            self.source))
            factory = reg.stage_kinds[name]
            for m in range(node.size):
                flat = self.stage_base[f] + m
                self.stages[flat] = factory(self, node, m, flat)
        # admit via and memory, member for member
        for f, node in enumerate(p.pools):
            if node.admit_via is not None:
                for m in range(node.size):
                    self.pools[self.pool_base[f] + m].via = self._pair(node.admit_via, node.size, m, node)
        self.step_stages = [s for s in self.stages if getattr(s, "wants_start", False)]
        for st in self.step_stages:
            st.bind()
        for pool in self.pools:
            node = pool.node
            ev = node.evict
            ename = ev.name if isinstance(ev, N.Extension) else type(ev).__name__
            if ename not in reg.evict:
                raise SimError(format_error(node.span, None, None, f"pool {node.name}: unknown eviction "
                                            f"order {ename!r} (registered: {', '.join(reg.evict.names())})",
                                            self.source))
            pool.evict = reg.evict[ename](self, pool, ev)
            pr = node.preempt
            pname = pr.name if isinstance(pr, N.Extension) else type(pr).__name__
            if pname not in reg.preempt:
                raise SimError(format_error(node.span, None, None, f"pool {node.name}: unknown preemption "
                                            f"policy {pname!r} (registered: {', '.join(reg.preempt.names())})",
                                            self.source))
            pool.preempt = reg.preempt[pname](self, pool, pr)
            if isinstance(node.queue, N.QueueBy):
                pool.keyed = self.compiler.keys_fn(node.queue.keys, span=node.span)
            if node.spill is not None:
                sp = node.spill
                tier = self._spill_ref(sp.tier, pool)
                link = self._spill_stage(sp.link, pool)
                pool.spill = (tier, link, self.compiler.fn(sp.work, rng="eviction", span=node.span),
                              self.compiler.fn(sp.when, rng="eviction", span=node.span))
            pool.needs_snap = not isinstance(pool.evict, _lru_type()) or pool.spill is not None
        self.free_pools = [pl for pl in self.pools if pl.via is None]
        self.any_pools = bool(self.pools)
        # whether some expression reads a stage's online estimates (any mention of their names counts)
        self.need_est = mentions([p], ('"price"', '"est_lambda"', '"est_rho"', '"est_wait"'))
        # workload
        wl = p.workload
        self.session_fn = self.compiler.session_fn(p.session, "session")
        self.init_fn = self.compiler.plain_fn(wl.init, "init") if wl.init else None
        self.turn_fn = self.compiler.plain_fn(wl.turn, "turn") if wl.turn else None
        self.trace = None
        if wl.trace is not None:
            from .trace import load_trace, resolve_trace, trace_outside

            path = trace_path or resolve_trace(wl.trace.path, self.source)
            if trace_path is None and (why := trace_outside(path, self.source)) is not None:
                raise SimError(format_error(wl.trace.span, None, None, why, self.source))
            self.trace = load_trace(path, wl.trace.span if trace_path is None else None, self.source)
            self.trace_ordered = wl.trace.ordered
        arrive = wl.arrive
        self.arrive = arrive
        self.closed = isinstance(arrive, N.Closed)
        if self.arr_limit is not None:
            if not isinstance(arrive, (N.Poisson, N.Renewal)):
                raise SimError(format_error(None, None, None, "run { arrivals N; } needs an open workload "
                                            "(arrive poisson or renewal)", self.source))
            if self.arr_limit < 1:
                raise SimError(format_error(None, None, None, f"arrivals {self.arr_limit}: must be a "
                                            "positive integer", self.source))
        if isinstance(arrive, N.Renewal):
            self.gap_fn = self.compiler.fn(arrive.gap, rng="arrivals", span=getattr(arrive.gap, "span", None))
        self.gauges = [(g.name, self.compiler.fn(g.value, span=g.span)) for g in p.gauges]
        self.gauge_points = [(array("d"), array("d")) for _ in p.gauges]
        self.gauge_last = [None] * len(p.gauges)
        if not (self.warmup < self.horizon or self.horizon == INF):
            raise SimError(format_error(None, None, None, f"warmup {self.warmup:g} is not below the horizon "
                                        f"{self.horizon:g}", self.source))

    def _pair(self, fam: int, count: int, m: int, node):
        size = self.program.stages[fam].size
        if size == count:
            return self.stages[self.stage_base[fam] + m]
        if size == 1:
            return self.stages[self.stage_base[fam]]
        raise SimError(format_error(node.span, None, None, f"pool {node.name}[{count}] cannot be paired "
                                    f"with stage {self.program.stages[fam].name}[{size}]", self.source))

    def _spill_ref(self, r: N.PoolRef, pool: Pool) -> Pool:
        size = self.program.pools[r.pool].size
        base = self.pool_base[r.pool]
        if size == 1:
            return self.pools[base]
        if size == pool.node.size:
            return self.pools[base + pool.index]
        return self.pools[base]

    def _spill_stage(self, r: N.StageRef, pool: Pool):
        size = self.program.stages[r.stage].size
        base = self.stage_base[r.stage]
        if size == pool.node.size:
            return self.stages[base + pool.index]
        return self.stages[base]

    # ----------------------------------------------------------------------------------- errors
    def error(self, msg: str, sid: int | None = None, s: Session | None = None, span=None) -> SimError:
        if span is None and sid is not None:
            span = self.spans[sid]
        s = s if s is not None else self.cur
        return SimError(format_error(span, self.now, s.serial if s is not None else None, msg, self.source))

    def spin_error(self, s: Session, sid: int) -> None:
        raise self.error(SPIN_MESSAGE, sid, s)

    def draw_fail(self, msg: str, sid: int, s, _t: float) -> None:
        """A draw whose computed parameters are outside its distribution's domain (compile.Compiler.expr)."""
        raise self.error(msg, sid, s)

    def redo_error(self, s: Session, sid: int) -> None:
        raise self.error(REDO_MESSAGE, sid, s)

    def guard_error(self, s: Session, g: float, sid: int) -> None:
        raise self.error(f"branch guard is {_show(g)}, not 0 or 1 (a draw is written `branch with (p)`)",
                         sid, s)

    def pool_at(self, base: int, size: int, idx: float, sid: int, s=None) -> Pool:
        if not (idx == idx) or idx < 0 or idx >= size:
            raise self.error(f"pool index {_show(idx)} out of range (the family has {size})", sid, s)
        return self.pools[base + int(idx)]

    def stage_at(self, base: int, size: int, idx: float, sid: int, s=None):
        if not (idx == idx) or idx < 0 or idx >= size:
            raise self.error(f"stage index {_show(idx)} out of range (the family has {size})", sid, s)
        return self.stages[base + int(idx)]

    # ----------------------------------------------------------------------------------- events
    def at(self, t: float, cb, arg=None) -> None:
        heapq.heappush(self.heap, (t, next(self._seq), cb, arg))

    # ----------------------------------------------------------------------------------- running
    def run(self):
        """Run to the end and return the :class:`serq_sim.report.Report`."""
        from .report import build_report

        try:
            self._start()
            self._loop()
        except (KeyboardInterrupt, StopRun) as e:
            self.stopped(e)
        except MemoryError:
            # a sample may have been cut short between its columns: keep the whole ones
            for cols in [(o.values, o.times, o.sessions, o.turns) for o in self.obs] + self.gauge_points:
                whole = min(map(len, cols))
                for col in cols:
                    del col[whole:]
            self.stopped(self.out_of_memory())
        with _signals_deferred():
            self._finish()
            return build_report(self)

    def stop(self, reason: str, message: str) -> None:
        """End the run now with the partial report (see :class:`StopRun`); both tiers."""
        raise StopRun(reason, message)

    def stopped(self, e: BaseException) -> None:
        """The run was stopped early by ``e`` (Ctrl-C, SIGTERM or :class:`StopRun`): its report is partial."""
        self.interrupted = True
        self.end = self.now
        if isinstance(e, StopRun):
            self.partial, self.partial_note = e.reason, e.message
        else:
            self.partial = getattr(e, "reason", "interrupted")
            self.partial_note = "terminated (SIGTERM)" if self.partial == "sigterm" else "interrupted"

    def samples_held(self) -> int:
        """The samples the run holds: every observe's, and every gauge's change points."""
        return sum(len(o.values) for o in self.obs) + sum(len(ts) for ts, _ in self.gauge_points)

    def too_many_samples(self, held: int) -> None:
        """Stop the run: it holds ``held`` samples, more than :attr:`max_samples`."""
        self.stop("max-samples", f"stopped holding {held} samples (--max-samples {self.max_samples})")

    def out_of_memory(self) -> StopRun:
        """What stops a run that ran out of memory (a ``MemoryError``): its partial report."""
        return StopRun("memory", f"out of memory holding {self.samples_held()} samples (--max-samples N "
                                 "stops a run before it holds N)")

    def tick(self, events: int) -> int:
        """Every few thousand events of the event loop (both tiers, at the same events: after an event and
        its settle, ``events`` counted as the report counts them): the no-progress guard, the user's
        bounds, the progress bar. Returns the event count of the next tick."""
        held = self.samples_held()  # in the fast tier, the buffers' sizes: at least what they hold
        if held >= self.max_samples:
            self.too_many_samples(held)
        now = self.now
        if now == self.stall_t:
            if events - self.stall_ev > STALL_EVENTS + STALL_PER_SESSION * self.stall_live:
                self.stall_error(events - self.stall_ev)
        else:
            self.stall_t = now
            self.stall_ev = events
            self.stall_live = self.live
        me = self.max_events
        if me is not None and events >= me:
            self.stop("max-events", f"stopped after {events} events (--max-events {me})")
        mw = self.max_wall
        if mw is not None or self.show_progress:
            w = _time.monotonic()
            if mw is not None and w - self.t_wall0 >= mw:
                self.stop("max-wall", f"stopped after {w - self.t_wall0:.3g} s of wall time (--max-wall {mw:g})")
            if self.show_progress and w - self.t_shown > 0.25:
                self.t_shown = w
                self._show_progress()
        nxt = events + (1000 if mw is not None else TICK)
        return nxt if me is None else min(nxt, me)

    def stall_error(self, n: int) -> None:
        """The no-progress guard tripped: ``n`` events at this instant. A run-time error naming what the
        events due now are for (the runs of the jobs they complete, their sessions), else the arrivals."""
        now = self.now
        jobs: list[Job] = []
        other = []
        for t, _seq, cb, arg in sorted(self.heap, key=lambda e: (e[0], e[1])):
            if t > now:
                break
            owner = getattr(cb, "__self__", None)
            found = [arg] if isinstance(arg, Job) else _jobs_of(owner)
            if found:
                jobs.extend(j for j in found if j not in jobs)
            elif owner is self:
                other.append(getattr(cb, "__name__", "event").lstrip("_").replace("_", " "))
        runs = sorted((j for j in jobs if isinstance(j.owner, Session)), key=lambda j: j.owner.serial)
        msg = (f"no progress: more than {STALL_EVENTS} events at one instant without simulated time passing "
               "(the clock cannot move past it")
        if runs:
            first = runs[0]
            where = []
            for j in runs[:5]:
                sp = self.spans[j.span]
                at = f" at {sp.file}:{sp.line}:{sp.col}" if sp is not None else ""
                where.append(f"the run{at} of session {j.owner.serial}")
            more = f" and {len(runs) - 5} more" if len(runs) > 5 else ""
            raise self.error(f"{msg}): the events due now are those of {', '.join(where)}{more}, put off to "
                             "this same instant again and again", first.span, first.owner)
        what = f"the events due now: {', '.join(dict.fromkeys(other))}" if other else "no event names a statement"
        raise SimError(format_error(None, now, None, f"{msg}); {what}", self.source))

    def _start(self) -> None:
        if self.warmup > 0:
            self.at(self.warmup, self._end_warmup)
        wl = self.program.workload
        a = self.arrive
        for k, pr in enumerate(wl.presets):
            self.at(float(pr.at), self._arrive_preset, k)
        if isinstance(a, N.Poisson):
            self.rate = num(a.rate)
            self._arrive_cb = self._arrive_poisson
            self.at(0.0, self._arrive_poisson)
        elif isinstance(a, N.Renewal):
            self._schedule_renewal()
        elif isinstance(a, (N.Batch, N.Closed)):
            for _ in range(a.n):
                self.spawn()
        self.settle()

    def _loop(self) -> None:
        heap = self.heap
        pop = heapq.heappop
        settle = self.settle
        horizon = self.horizon
        limit = self.arr_limit
        check = self.check
        self.show_progress = self.progress and sys.stderr.isatty()
        next_tick = self.tick(self.events)
        ready = self.ready
        # the settle's later phases matter only with pools, step stages, marked stages or gauges
        simple = not (self.any_pools or self.step_stages or self.gauges or self.flow_network)
        dirty = self.dirty
        # the event count is kept in a local and stored back on every way out (progress reads it too)
        events = self.events
        try:
            while heap:
                if heap[0][0] > horizon:
                    break
                t, _, cb, arg = pop(heap)
                self.now = t
                events += 1
                cb(arg)
                if simple and not dirty:
                    # the settle of a program without pools, step stages or gauges: run the ready sessions
                    if ready:
                        self.drain_ready()
                    if dirty:
                        settle()
                else:
                    settle()
                if check:
                    self.check_invariants()
                if self.live == 0 and limit is not None and self.open_arrivals >= limit:
                    self.end = t
                    return
                if events >= next_tick:
                    self.events = events
                    next_tick = self.tick(events + self.virtual_events) - self.virtual_events
        finally:
            self.events = events + self.virtual_events
            self.heap_left = bool(heap)
        self.end_at_horizon()

    def end_at_horizon(self) -> None:
        """The run reached the horizon or ran out of events (both tiers): it ends at the horizon, or now
        when there is none; under ``arrivals N`` that is an error saying what was not reached."""
        horizon = self.horizon
        limit = self.arr_limit
        if limit is not None:
            when = horizon if horizon != INF else self.now
            self.now = when
            if self.open_arrivals < limit:
                raise SimError(format_error(None, when, None, f"run {{ arrivals {limit}; }}: only "
                                            f"{self.open_arrivals} arrivals by the horizon", self.source))
            raise SimError(format_error(None, when, None, f"run {{ arrivals {limit}; }}: {self.live} "
                                        "session(s) still live at the horizon (not drained)", self.source))
        self.end = horizon if horizon != INF else self.now

    def _show_progress(self) -> None:
        if self.arr_limit is not None:
            frac = self.open_arrivals / self.arr_limit
        elif self.horizon != INF and self.horizon > 0:
            frac = self.now / self.horizon
        else:
            frac = 0.0
        frac = min(max(frac, 0.0), 1.0)
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r[{bar:<30}] {frac * 100:5.1f}%  t={self.now:.6g}  events={self.events}")
        sys.stderr.flush()
        self._progress_shown = True

    def _finish(self) -> None:
        if getattr(self, "_progress_shown", False):
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()
        end = self.end
        if self.limit_drained_early(end):
            raise SimError(format_error(None, end, None, f"run {{ arrivals {self.arr_limit}; }}: drained at "
                                        f"t={end:g}, at or before the warmup {self.warmup:g} (nothing to "
                                        "measure)", self.source))
        self.now = end
        for pool in self.pools:
            pool.acc()
        for st in self.stages:
            st.acc()
        self._acc_live()
        # over_cap: sessions still waiting whose demand exceeds the capacity
        for pool in self.pools:
            for s in list(pool.front) + list(pool.queue):
                try:
                    demand = self._demand(s, s.pending)
                except SimError:
                    continue
                for q, _u, need in demand:
                    if need > q.cap + EPS:
                        q.over_cap += 1

    def waiting_forever(self) -> str | None:
        """The warning for sessions that, at the end of the run, wait for ever (no event can wake them):
        every live session when no event is left; else the sessions queued at a pool or waiting to grow
        whose pools are held only by such sessions (a deadlock, or a demand beyond the capacity)."""
        from .report import member_label

        waits: dict[Session, list[Pool]] = {}
        where: dict[Session, str] = {}
        for pool in self.pools:
            label = member_label(pool)
            for q in (pool.front, pool.queue):
                for x in q:
                    if x.status == QUEUED and x.pending is not None and x not in waits:
                        waits[x] = list(x.pending.pools)
                        where[x] = f"queued at {label}"
            for x in pool.growers:
                if x.status == GROWING and x not in waits:
                    waits[x] = [pool]
                    where[x] = f"growing at {label}"
        if not self.heap_left:
            if self.live <= 0:
                return None
            stuck = set(waits)
            why = "no event is left that could wake them"
        else:
            # a pool may free units when a holder outside the set (or a lease's end) releases; a session
            # waiting for such a pool may be woken, and then so may its own holds: to the fixed point
            stuck = set(waits)
            freeing: set[Pool] = set()
            changed = True
            while changed:
                changed = False
                for p in self.pools:
                    if p not in freeing and any(sl.lease or sl.owner not in stuck for sl in p.holders):
                        freeing.add(p)
                        changed = True
                for x in [x for x in stuck if any(p in freeing for p in waits[x])]:
                    stuck.discard(x)
                    changed = True
            if not stuck:
                return None
            why = "each waits for pools that only they hold: a deadlock, or a demand beyond the capacity"
        n = self.live if not self.heap_left else len(stuck)
        counts: dict[str, list[int]] = {}
        for x in sorted(stuck, key=lambda x: x.serial):
            counts.setdefault(where[x], []).append(x.serial)
        parts = []
        for w, serials in counts.items():
            shown = ", ".join(str(k) for k in serials[:5]) + (", …" if len(serials) > 5 else "")
            parts.append(f"{len(serials)} {w} (session{'s' if len(serials) > 1 else ''} {shown})")
        other = n - len(stuck)
        if other > 0:
            parts.append(f"{other} at a stage that will never complete them")
        return (f"warning: {n} session(s) wait for ever at the end of the run ({why}): {'; '.join(parts)}")

    def limit_drained_early(self, end: float) -> bool:
        return (self.arr_limit is not None and not self.interrupted and self.warmup > 0
                and end <= self.warmup)

    def _end_warmup(self, _=None) -> None:
        self.warm = True
        for pool in self.pools:
            pool.reset_stats()
        for st in self.stages:
            st.reset_stats()
        self._acc_live()
        self.a_live = 0.0

    def _acc_live(self) -> None:
        now = self.now
        dt = now - self.live_t
        if dt > 0:
            self.a_live += self.live * dt
        self.live_t = now

    def settle(self) -> None:
        ready = self.ready
        while True:
            if ready:
                self.drain_ready()
            if self.any_pools:
                self._admit_all()
                if ready:
                    continue
            if self.step_stages:
                heap = self.heap
                if not (heap and heap[0][0] <= self.now):
                    for st in self.step_stages:
                        if st.idle():
                            st.try_start()
                    if ready:
                        continue
            break
        dirty = self.dirty
        if dirty:
            i = 0
            while i < len(dirty):
                dirty[i].settle()
                i += 1
            dirty.clear()
        if self.gauges:
            heap = self.heap
            if not (heap and heap[0][0] <= self.now):
                self._record_gauges()

    def _record_gauges(self) -> None:
        now = self.now
        ctx = self.null_ctx
        for k, (_name, fn) in enumerate(self.gauges):
            v = fn(None, None, ctx)
            if v != self.gauge_last[k]:
                ts, vs = self.gauge_points[k]
                if ts and ts[-1] == now:
                    vs[-1] = v
                else:
                    ts.append(now)
                    vs.append(v)
                self.gauge_last[k] = v

    def make_ready(self, s: Session) -> None:
        s.status = READY
        if not s.in_ready:
            s.in_ready = True
            self.ready.append(s)

    def _resume(self, s: Session) -> None:
        try:
            s.gen.send(None)
        except StopIteration:
            self.end_session(s)
        except SessionGone:
            pass

    def _throw(self, s: Session, exc: BaseException) -> None:
        try:
            s.gen.throw(exc)
        except StopIteration:
            self.end_session(s)
        except SessionGone:
            pass

    def drain_ready(self) -> None:
        """Run ready sessions now (a step stage's admission runs the admitted session until it blocks)."""
        ready = self.ready
        while ready:
            s = ready.popleft()
            s.in_ready = False
            if s.status == READY:
                self._resume(s)

    # ----------------------------------------------------------------------------------- workload
    def _arrive_poisson(self, _=None) -> None:
        limit = self.arr_limit
        self.open_arrivals += 1
        if limit is None or self.open_arrivals < limit:
            gap = -_log(1.0 - self._rand_arr()) / self.rate
            heapq.heappush(self.heap, (self.now + gap, next(self._seq), self._arrive_cb, None))
        self.spawn()

    def _schedule_renewal(self) -> None:
        g = self.gap_fn(None, None, self.null_ctx)
        if not (g > 0) or g == INF:
            span = getattr(self.arrive.gap, "span", None)
            raise SimError(format_error(span, self.now, None, f"arrive renewal: the gap is {_show(g)}; gaps "
                                        "must be positive and finite", self.source))
        self.at(self.now + g, self._arrive_renewal)

    def _arrive_renewal(self, _=None) -> None:
        self.open_arrivals += 1
        if self.arr_limit is None or self.open_arrivals < self.arr_limit:
            self._schedule_renewal()
        self.spawn()

    def _arrive_preset(self, k: int) -> None:
        self.spawn(self.program.workload.presets[k])

    def spawn(self, preset: N.Preset | None = None) -> Session:
        serial = self.next_serial
        self.next_serial += 1
        s = Session(serial, self.nattrs)
        self.arrivals += 1
        now = self.now  # self._acc_live(), inlined: once per session (a call costs a few % of an M/M/1)
        dt = now - self.live_t
        if dt > 0:
            self.a_live += self.live * dt
        self.live_t = now
        self.live += 1
        if preset is not None:
            for sv in preset.attrs:
                s.attrs[sv.slot] = sv.value
            if preset.turns:
                s.preset = [preset.turns, 0]
        elif self.trace is not None:
            sessions = self.trace.sessions
            if self.trace_ordered:
                i = serial % len(sessions)
            else:
                i = int(self.rngs["trace"].random() * len(sessions))
            s.trace = [sessions[i], 0]
        if self.init_fn is not None:
            self.init_fn(s)
        s.gen = self.session_fn(s)
        s.in_ready = True
        self.ready.append(s)
        return s

    def turn(self, s: Session) -> None:
        A = s.attrs
        A[SLOT_TURN] += 1.0
        if self.warm:
            self.turns += 1
        # the next preset turn, or the next trace row: [rows, index of the next]
        nxt = s.preset if s.preset is not None else s.trace
        if nxt is not None:
            rows, i = nxt
            if i < len(rows):
                if nxt is s.preset:
                    for sv in rows[i]:
                        A[sv.slot] = sv.value
                else:
                    for slot, v in zip(self.trace_slots, rows[i]):
                        if slot is not None:
                            A[slot] = v
                nxt[1] = i + 1
                more = 1.0 if i + 1 < len(rows) else 0.0
            else:
                more = 0.0
            if self.slot_more is not None:
                A[self.slot_more] = more
        if self.turn_fn is not None:
            self.turn_fn(s)

    def observe(self, s: Session, k: int, v: float) -> None:
        if self.warm:
            va, ta, sa, tu = self.obs_app[k]
            va(v)
            ta(self.now)
            sa(s.serial)
            tu(int(s.attrs[1]))

    def choose(self, s: Session, A, slot: int, n: float, keyfn) -> float:
        if not (n == n) or n < 1:
            return 0.0
        n = int(min(n, 1e9))
        best = None
        bi = 0
        ctx = self.null_ctx
        for j in range(n):
            A[slot] = float(j)
            k = keyfn(s, A, ctx)
            if best is None or k < best:
                best, bi = k, j
        return float(bi)

    def end_session(self, s: Session) -> None:
        st = s.status
        if st == ENDED:
            return
        if st != READY:
            self._detach(s)
        while s.holds:
            h = s.holds.pop()
            self._release_hold(s, h)
        while s.leases:
            self._end_lease(s.leases[0])
        s.status = ENDED
        now = self.now  # self._acc_live(), inlined as in spawn
        dt = now - self.live_t
        if dt > 0:
            self.a_live += self.live * dt
        self.live_t = now
        self.live -= 1
        if self.warm:
            self.ended += 1
        if self.closed:
            self.spawn()
        if self.any_pools:
            self._admit_all()

    def _detach(self, s: Session) -> None:
        st = s.status
        if st == QUEUED:
            pool = s.qpool
            pool.acc()
            try:
                pool.front.remove(s)
            except ValueError:
                pool.queue.remove(s)
            s.pending = None
            s.qpool = None
        elif st == STAGE:
            job = s.job
            if job is not None and job.stage is not None:
                job.stage.detach(job)
            s.job = None
        elif st == GROWING:
            pool = s.grow[0]
            pool.growers.remove(s)
            job = s.grow[3]
            if job is not None and job.stage is not None:
                job.stage.detach(job)
            s.grow = None
            s.job = None
        s.status = READY

    # ----------------------------------------------------------------------------------- stages
    def run_job(self, s: Session, st, work: float, mode: str, growing, sid: int) -> None:
        if work != work:
            raise self.error("the run's work is NaN", sid, s)
        if work <= 0:
            self.make_ready(s)
            return
        job = Job(s, work, mode, growing, self.now, sid)
        s.job = job
        s.status = STAGE
        st.attach(job)

    def run_flow(self, s: Session, stages, work: float, sid: int) -> None:
        if work != work:
            raise self.error("the run's work is NaN", sid, s)
        if work <= 0:
            self.make_ready(s)
            return
        job = Job(s, work, "plain", None, self.now, sid)
        s.job = job
        s.status = STAGE
        self.flow_network.add(job, tuple(stages))

    def stage_stats(self, st, job: Job) -> None:
        started = job.started if job.started is not None else job.enqueued
        if self.warm:
            st.completions += 1
            st.wait_sum += started - job.enqueued
            st.service_sum += self.now - started
        if self.need_est:
            st.est.observe(started, started - job.enqueued, self.now - started)

    def job_done(self, st, job: Job) -> None:
        self.stage_stats(st, job)
        owner = job.owner
        if owner is not None and owner.job is job:
            owner.job = None
            owner.status = READY
            if not owner.in_ready:
                owner.in_ready = True
                self.ready.append(owner)

    def start_job(self, st, work: float) -> None:
        """An ownerless job (a spill's write)."""
        if work > 0:
            st.attach(Job(None, work, "plain", None, self.now))

    # ----------------------------------------------------------------------------------- pools
    def hold(self, s: Session, info) -> None:
        A = s.attrs
        C = self.null_ctx
        pools = [ref(s, A, C) for ref in info.pool_refs]
        for k, pool in enumerate(pools):
            if not info.units_dep[k]:
                u = info.units[k](s, A, C)
                if not u >= 0.0:
                    self._amount_error(s, info, pool, "units", u)
                if pool.round_up(u) > pool.cap + EPS:
                    self._reject(s, pool)
            if info.static[k]:
                r = info.reserves[k](s, A, C)
                if not r >= 0.0:
                    self._amount_error(s, info, pool, "reserve", r)
                if pool.round_up(r) > pool.cap + EPS:
                    self._reject(s, pool)
        first = pools[0]
        first.acc()
        s.pending = Pending(info, pools, self.now, next(self.join_counter))
        s.status = QUEUED
        s.qpool = first
        rq = s.requeue
        if rq is not None:
            s.requeue = None
            if rq == "head":
                first.front.appendleft(s)
                return
        first.queue.append(s)

    def _reject(self, s: Session, pool: Pool) -> None:
        if self.warm:
            pool.rejections += 1
        self.end_session(s)
        raise SessionGone

    def _head(self, pool: Pool):
        if pool.front:
            return pool.front[0]
        q = pool.queue
        if not q:
            return None
        if pool.keyed is None or len(q) == 1:
            return q[0]
        ctx = self.null_ctx
        now = self.now
        keyed = pool.keyed
        best = None
        bk = None
        for s in q:
            ctx.waited = now - s.pending.queued_at
            k = keyed(s, s.attrs, ctx)
            if best is None or k < bk:
                best, bk = s, k
        ctx.waited = math.nan
        return best

    def _pop_head(self, pool: Pool, s: Session) -> None:
        pool.acc()
        if pool.front and pool.front[0] is s:
            pool.front.popleft()
        elif pool.queue[0] is s:
            pool.queue.popleft()
        else:
            pool.queue.remove(s)

    def _amount_error(self, s: Session, info, pool: Pool, what: str, x: float) -> None:
        """A hold's units or reserve that is NaN or negative (an amount of memory is neither)."""
        verb = "are" if what == "units" else "is"
        how = "NaN" if x != x else f"negative ({_show(x)})"
        raise self.error(f"the {what} of {pool.name} {verb} {how}", None, s, info.span)

    def _demand(self, s: Session, pend: Pending):
        """``[(pool, units, room needed)]`` of a waiting hold, evaluated now (once, for a hold whose units
        and reserves read only attributes and numbers: a waiting session's attributes do not change)."""
        demand = pend.demand
        if demand is not None:
            return demand
        info = pend.info
        A = s.attrs
        C = self.null_ctx
        units = info.units
        reserves = info.reserves
        out = []
        k = 0
        for pool in pend.pools:
            u = units[k](s, A, C)
            if not u >= 0.0:
                self._amount_error(s, info, pool, "units", u)
            rf = reserves[k]
            r = u
            if rf is not None:
                r = rf(s, A, C)
                if not r >= 0.0:
                    self._amount_error(s, info, pool, "reserve", r)
                r = max(r, u)
            b = pool.block  # pool.round_up(r), inlined
            if b is not None and r != INF:
                try:
                    r = math.ceil(r / b - 1e-12) * b
                except OverflowError:  # as in Pool.round_up
                    pass
            out.append((pool, u, r))
            k += 1
        if info.pure:
            pend.demand = out
        return out

    @staticmethod
    def fits(demand) -> bool:
        for pool, _u, need in demand:
            if pool.used + pool.reserved + need > pool.cap + EPS:
                return False
        return True

    def _admit_all(self) -> None:
        for pool in self.pools:
            if pool.growers:
                self._retry_growers(pool)
        for pool in self.free_pools:
            if pool.front or pool.queue:
                self._try_admit(pool)

    def _try_admit(self, pool: Pool) -> None:
        while True:
            s = self._head(pool)
            if s is None:
                return
            demand = self._demand(s, s.pending)
            if not self.fits(demand):
                return
            self._pop_head(pool, s)
            self._admit(s, s.pending, demand)

    def admit_from(self, pool: Pool, budget_left: float, stage) -> bool:
        """A step stage's scheduler admits the head of ``pool`` with ``budget_left`` tokens left (what
        ``budget_left(stage)`` reads in the header); runs the admitted session until it blocks."""
        s = self._head(pool)
        if s is None:
            return False
        self.admit_budget = (stage, budget_left)
        try:
            demand = self._demand(s, s.pending)
        finally:
            self.admit_budget = None
        for q, _u, need in demand:  # self.fits(demand), inlined
            if q.used + q.reserved + need > q.cap + EPS:
                return False
        self._pop_head(pool, s)
        self._admit(s, s.pending, demand)
        self.drain_ready()
        return True

    def _admit(self, s: Session, pend: Pending, demand) -> None:
        info = pend.info
        A = s.attrs
        reuse = None
        if info.reuse is not None:
            reuse = info.reuse(s, A, self.null_ctx)
            if reuse != reuse:
                raise self.error("the reuse bound is NaN", None, s, info.span)
            reuse = max(reuse, 0.0)
        has_cache = info.cache is not None
        hold = HoldRT(info, [])
        consumed = 0.0
        now = self.now
        warm = self.warm
        for pool, units, need in demand:
            pool.acc()
            alloc = pool.round_up(units)
            own = 0.0
            if has_cache:
                e = pool.own.pop(s.serial, None)
                if e is not None:
                    e.alive = False
                    pool.cached -= e.size
                    own = e.size
                    if reuse is not None:
                        r = pool.round_down(reuse)
                        if own > r + EPS:
                            dead = Entry(own - r, e.last, e.seq, s, e.snap, next(self.eid_counter), True)
                            pool.dead[dead.eid] = dead
                            pool.cached += dead.size
                            pool.evict.on_insert(dead)
                            own = r
            if own > consumed:
                consumed = own
            self.make_room(pool, alloc)
            pool.used += alloc
            u = max(need - alloc, 0.0) if pool.reserve_held else 0.0
            pool.reserved += u
            slot = Slot(pool, alloc, own, need, u, s, hold)
            pool.holders[slot] = None
            hold.slots.append(slot)
            if warm:
                pool.admissions += 1
        if warm:
            pend.pools[0].wait_sum += now - pend.queued_at
        s.adm_seq = next(self.adm_counter)
        A[SLOT_CACHED] = consumed
        s.pending = None
        s.qpool = None
        s.holds.append(hold)
        self.make_ready(s)

    def make_room(self, pool: Pool, need: float) -> None:
        """Evict cached entries (in the pool's order, per block from the tail) until ``need`` fits."""
        cap = pool.cap
        while pool.used + pool.cached + need > cap + EPS:
            e = pool.evict.pick(pool)
            if e is None:
                return
            b = pool.block
            short = pool.used + pool.cached + need - cap
            if b is None:
                amount = e.size
            elif pool.evict.batch and pool.spill is None:
                amount = min(e.size, pool.round_up(short))
            else:
                amount = min(b, e.size)
            self._evict(pool, e, amount)

    def _evict(self, pool: Pool, e: Entry, amount: float) -> None:
        pool.acc()
        e.size -= amount
        pool.cached -= amount
        if self.warm:
            pool.evicted_units += amount
        if e.size <= EPS:
            pool.cached -= e.size
            e.size = 0.0
            e.alive = False
            if e.dead:
                del pool.dead[e.eid]
            else:
                del pool.own[e.owner.serial]
            if self.warm:
                pool.evicted_entries += 1
        if pool.spill is not None:
            self._spill(pool, e, amount)

    def _spill(self, pool: Pool, e: Entry, units: float) -> None:
        from .policies import evict_context

        tier, link, work_fn, when_fn = pool.spill
        ctx = Ctx()
        owner, attrs = evict_context(ctx, e, units, self.now)
        if when_fn(owner, attrs, ctx) == 0:
            return
        work = work_fn(owner, attrs, ctx)
        # the tier takes what fits after evicting its own entries (a spill never breaks its invariant)
        room = tier.cap - tier.used
        units = min(units, max(room, 0.0))
        if units <= EPS:
            return
        tier.acc()
        key = e.owner.serial if (not e.dead and e.owner is not None) else None
        old = tier.own.get(key) if key is not None else None
        if old is not None:
            old.alive = False
            del tier.own[key]
            tier.cached -= old.size
            units_total = old.size + units
        else:
            units_total = units
        self.make_room(tier, units_total)
        units_total = min(units_total, tier.cap - tier.used - tier.cached)
        if units_total > EPS:
            ne = Entry(units_total, self.now, next(self.release_counter), e.owner, e.snap,
                       next(self.eid_counter), key is None)
            if key is None:
                tier.dead[ne.eid] = ne
            else:
                tier.own[key] = ne
            tier.cached += units_total
            tier.evict.on_insert(ne)
        if self.warm:
            pool.spills += 1
        self.start_job(link, max(work, 0.0) if work == work else 0.0)

    def _release_slot(self, s: Session, slot: Slot, cache_value, grown: bool) -> None:
        pool = slot.pool
        pool.acc()
        pool.used -= slot.alloc
        pool.reserved -= slot.u
        pool.holders.pop(slot, None)
        if cache_value is not None:
            computed = slot.pos if grown else slot.alloc
            keep = pool.round_down(min(cache_value, computed, slot.alloc))
            if keep > EPS:
                old = pool.own.pop(s.serial, None)
                if old is not None:
                    old.alive = False
                    pool.cached -= old.size
                snap = list(s.attrs) if pool.needs_snap else None
                e = Entry(keep, self.now, next(self.release_counter), s, snap, next(self.eid_counter))
                pool.own[s.serial] = e
                pool.cached += keep
                pool.evict.on_insert(e)

    def _cache_value(self, s: Session, info):
        if info.cache is None:
            return None
        v = info.cache(s, s.attrs, self.null_ctx)
        if v != v:
            raise self.error("the cache length is NaN", None, s, info.span)
        return max(v, 0.0)

    def _release_hold(self, s: Session, h: HoldRT) -> None:
        cv = self._cache_value(s, h.info)
        for slot in h.slots:
            self._release_slot(s, slot, cv, h.grown)
        h.slots = []

    def end_hold(self, s: Session) -> None:
        h = s.holds.pop()
        info = h.info
        cv = self._cache_value(s, info)
        lease_pool = None
        if info.lease_ref is not None:
            lease_pool = info.lease_ref(s, s.attrs, self.null_ctx)
        for slot in h.slots:
            if slot.pool is lease_pool:
                t = info.lease_time(s, s.attrs, self.null_ctx)
                slot.lease = True
                lease = Lease(slot, info.cache, h.grown, info.span)
                s.leases.append(lease)
                if t == t and t != INF:
                    self.at(self.now + max(t, 0.0), self._lease_end, lease)
                continue
            self._release_slot(s, slot, cv, h.grown)
            if s.preempt_pos:
                s.preempt_pos.pop(slot.pool, None)
        s.attrs[SLOT_COMPUTED] = 0.0
        if self.any_pools:
            self._admit_all()

    def _end_lease(self, lease: Lease) -> None:
        if not lease.alive:
            return
        lease.alive = False
        s = lease.slot.owner
        s.leases.remove(lease)
        cv = None
        if lease.cache is not None:
            v = lease.cache(s, s.attrs, self.null_ctx)
            if v != v:  # as at the end of a hold's scope
                raise self.error("the cache length is NaN (at the end of the lease)", None, s, lease.span)
            cv = max(v, 0.0)
        self._release_slot(s, lease.slot, cv, lease.grown)

    def _lease_end(self, lease: Lease) -> None:
        if lease.alive:
            self._end_lease(lease)
            self._admit_all()

    def _innermost(self, s: Session, pool: Pool):
        for hi in range(len(s.holds) - 1, -1, -1):
            for slot in s.holds[hi].slots:
                if slot.pool is pool:
                    return hi, slot
        return None, None

    def release(self, s: Session, pool: Pool) -> None:
        hi, slot = self._innermost(s, pool)
        if slot is not None:
            h = s.holds[hi]
            h.slots.remove(slot)
            self._release_slot(s, slot, self._cache_value(s, h.info), h.grown)
            if s.preempt_pos:
                s.preempt_pos.pop(pool, None)
        else:
            for lease in s.leases:
                if lease.slot.pool is pool:
                    self._end_lease(lease)
                    break
            else:
                return
        self._admit_all()

    def drop(self, s: Session, pool: Pool) -> None:
        e = pool.own.pop(s.serial, None)
        if e is not None:
            pool.acc()
            e.alive = False
            pool.cached -= e.size

    def load(self, s: Session, pool: Pool, n: float, sid: int) -> None:
        hi, slot = self._innermost(s, pool)
        if slot is None:
            raise self.error(f"load {pool.name}: outside a hold of {pool.name}", sid, s)
        if not n >= 0.0:
            raise self.error(f"load {pool.name}: the amount is {'NaN' if n != n else f'negative ({_show(n)})'}",
                             sid, s)
        if slot.pos + n > slot.alloc + EPS:
            raise self.error(f"load {pool.name} ({_show(n)}): the hold has {_show(slot.alloc)} allocated and "
                             f"{_show(slot.pos)} computed; a load must fit the allocation (grow first)", sid, s)
        slot.pos += n
        s.holds[hi].grown = True

    def grow(self, s: Session, pool: Pool, d: float, sid: int):
        """``grow``: ``None`` when done, ``True`` when the session waits, or the :class:`Preempted` to
        raise when the grower preempted itself."""
        hi, slot = self._innermost(s, pool)
        if slot is None:
            raise self.error(f"grow {pool.name}: outside a hold of {pool.name}", sid, s)
        if not d >= 0.0:
            raise self.error(f"grow {pool.name}: the amount is {'NaN' if d != d else f'negative ({_show(d)})'}",
                             sid, s)
        return self.grow_slot(s, slot, d, None)

    def grow_slot(self, s: Session, slot: Slot, d: float, job):
        """Grow ``slot`` by ``d`` (rounded to blocks), preempting per the pool's rule. Returns ``None``
        when it grew, ``True`` when the grower waits (queued as a grower), or the :class:`Preempted`
        exception when the grower itself was the victim (already thrown if its generator is not
        running)."""
        pool = slot.pool
        need = pool.round_up(slot.alloc + d) - slot.alloc
        if need <= EPS:
            return None
        while True:
            if pool.used + pool.reserved - slot.u + need <= pool.cap + EPS:
                self._grow_alloc(slot, need)
                return None
            victim = pool.preempt.victim(pool, s)
            if victim is None:
                s.status = GROWING
                s.grow = (pool, slot, d, job)
                pool.growers.append(s)
                return True
            exc = self.preempt(victim, pool)
            if victim is s:
                return exc

    def _grow_alloc(self, slot: Slot, need: float) -> None:
        pool = slot.pool
        pool.acc()
        self.make_room(pool, need)
        pool.used += need
        slot.alloc += need
        if pool.reserve_held:
            u = max(slot.r - slot.alloc, 0.0)
            pool.reserved += u - slot.u
            slot.u = u

    def _retry_growers(self, pool: Pool) -> None:
        while pool.growers:
            s = pool.growers[0]
            _p, slot, d, job = s.grow
            need = pool.round_up(slot.alloc + d) - slot.alloc
            if pool.used + pool.reserved - slot.u + need > pool.cap + EPS:
                return
            pool.growers.popleft()
            if need > EPS:
                self._grow_alloc(slot, need)
            s.grow = None
            if job is not None:
                s.status = STAGE
                s.job = job
            else:
                self.make_ready(s)

    def preempt_candidates(self, pool: Pool):
        """The victim candidates of ``pool`` in admission order: ``[(session, slot)]``. On a pool that is
        some step stage's memory, the residents there in the order of their sessions' latest admission
        (the engine's serving order); on any other pool, its holders in the order the pool admitted them
        (``pool.holders`` is in that order), a session with several holds there placed by its latest."""
        engines = pool.memory_of
        seen = {}
        for slot in pool.holders:
            if slot.lease:
                continue
            s = slot.owner
            if engines:
                job = s.job
                if job is None or job.stage not in engines or s.status not in (STAGE, GROWING):
                    continue
                seen[s] = slot  # the innermost (latest) slot wins
            else:
                seen.pop(s, None)  # placed by its latest admission here
                seen[s] = slot
        if engines:
            return sorted(seen.items(), key=lambda kv: kv[0].adm_seq)
        return list(seen.items())

    @staticmethod
    def computed_position(s: Session, slot: Slot) -> float:
        """The position ``slot``'s hold has computed: its position less the tokens the step iteration
        being planned or run gives the session's growing job there (applied only when it ends)."""
        job = s.job
        if job is not None and job.assigned > 0 and job.growing is slot.pool and job.stage is not None:
            gslot = job.gslot
            if gslot is None or gslot is slot:
                return slot.pos - job.assigned
        return slot.pos

    def preempt(self, victim: Session, pool: Pool) -> Preempted:
        hi, slot = self._innermost(victim, pool)
        self._detach(victim)
        computed = slot.pos
        pp = victim.preempt_pos
        if pp is None:
            pp = victim.preempt_pos = {}
        prev = pp.get(pool)
        if prev is not None and computed <= prev + EPS and not victim.stuck:
            victim.stuck = True
            pool.stuck += 1
        pp[pool] = computed
        victim.attrs[SLOT_COMPUTED] = computed
        while len(victim.holds) > hi:
            h = victim.holds.pop()
            # the aborted holds cache their computed prefix (their position), as a hold does whose
            # body advanced it, whether or not this one's had
            h.grown = True
            self._release_hold(victim, h)
        if self.warm:
            pool.preemptions += 1
        self.preempt_count += 1
        victim.requeue = pool.preempt.requeue
        exc = Preempted(hi)
        if victim.gen.gi_running:
            return exc
        self._throw(victim, exc)
        return exc

    # ----------------------------------------------------------------------------------- observables
    def obs_queue(self, st) -> float:
        return st.queue()

    def obs_busy(self, st) -> float:
        return st.busy()

    def obs_work(self, st) -> float:
        return st.work()

    def obs_used(self, p: Pool) -> float:
        return p.used

    def obs_free(self, p: Pool) -> float:
        return p.cap - p.used

    def obs_cachedin(self, p: Pool, s) -> float:
        if s is None:
            return 0.0
        e = p.own.get(s.serial)
        return e.size if e is not None else 0.0

    def obs_holders(self, p: Pool) -> float:
        return float(len(p.holders))

    def obs_queued(self, p: Pool) -> float:
        return float(len(p.front) + len(p.queue))

    def obs_budget_left(self, st) -> float:
        ab = self.admit_budget
        if ab is not None and ab[0] is st:
            return ab[1]
        f = getattr(st, "budget_left", None)
        if f is None:
            raise self.error(f"budget_left({st.name}): not a step stage")
        return f()

    def obs_price(self, st, s_h: float, ds: float) -> float:
        return st.est.price(s_h, ds)

    def obs_est_lambda(self, st) -> float:
        return st.est.estimates()[0]

    def obs_est_rho(self, st) -> float:
        return st.est.estimates()[1]

    def obs_est_wait(self, st) -> float:
        return st.est.estimates()[2]

    # ----------------------------------------------------------------------------------- checking
    def check_invariants(self) -> None:
        """Assert every pool's bookkeeping (``--check-invariants``): allocated + cached ≤ cap, used and
        cached equal to what the holders and entries account for, and the queues consistent."""
        now = self.now
        for pool in self.pools:
            where = f"t={now:g}: pool {pool.name}[{pool.index}]"
            used = sum(sl.alloc for sl in pool.holders)
            cached = sum(e.size for e in pool.iter_entries())
            tol = 1e-6 * max(1.0, pool.cap if pool.cap != INF else 1.0, used, cached)
            if pool.used + pool.cached > pool.cap + tol:
                raise InvariantError(f"{where}: allocated {pool.used} + cached {pool.cached} > cap {pool.cap}")
            if abs(used - pool.used) > tol:
                raise InvariantError(f"{where}: used {pool.used} but the holders hold {used}")
            if abs(cached - pool.cached) > tol:
                raise InvariantError(f"{where}: cached {pool.cached} but the entries hold {cached}")
            if pool.used < -tol or pool.cached < -tol:
                raise InvariantError(f"{where}: negative used/cached")
            for e in pool.iter_entries():
                if not e.alive or e.size <= 0:
                    raise InvariantError(f"{where}: an entry of size {e.size} (alive {e.alive}) is cached")
            res = sum(sl.u for sl in pool.holders)
            if abs(res - pool.reserved) > tol:
                raise InvariantError(f"{where}: reserved {pool.reserved} but the holds reserve {res}")
            seen = set()
            for s in list(pool.front) + list(pool.queue):
                if s in seen:
                    raise InvariantError(f"{where}: session {s.serial} is queued twice")
                seen.add(s)
                if s.status != QUEUED or s.qpool is not pool or s.pending is None:
                    raise InvariantError(f"{where}: session {s.serial} is in the queue with status {s.status}")
            for s in pool.growers:
                if s.status != GROWING or s.grow is None or s.grow[0] is not pool:
                    raise InvariantError(f"{where}: grower {s.serial} has status {s.status}")
            for sl in pool.holders:
                if sl.owner.status == ENDED:
                    raise InvariantError(f"{where}: an ended session {sl.owner.serial} still holds")


def _jobs_of(owner) -> list:
    """The jobs a stage or the flow network has in progress (for the no-progress guard's message)."""
    if owner is None:
        return []
    flows = getattr(owner, "flows", None)
    if isinstance(flows, dict):
        return list(flows)
    out = []
    for name in ("heap", "active", "jobs", "residents", "queue"):
        got = getattr(owner, name, None)
        if not got:
            continue
        for x in got:
            j = x[-1] if isinstance(x, tuple) else x
            if isinstance(j, Job) and j not in out:
                out.append(j)
    return out


def _signals_deferred():
    """While the report is made, a first Ctrl-C or SIGTERM is recorded, not raised (when the ``serq``
    command handles them, :mod:`serq.signals`); a context that does nothing otherwise."""
    try:
        from serq.signals import deferred
    except ImportError:  # pragma: no cover - the host is a dependency
        import contextlib

        return contextlib.nullcontext()
    return deferred()


def _lru_type():
    from .policies import LruOrder

    return LruOrder


def _show(x: float) -> str:
    if x != x:
        return "NaN"
    if x == int(x) if math.isfinite(x) else False:
        return str(int(x))
    return f"{x:g}"


def _all_blocks(p: N.Program):
    from serq_ir.analysis import blocks

    for top in (p.session, p.workload.init, p.workload.turn):
        if top:
            yield top
            yield from blocks(top)
