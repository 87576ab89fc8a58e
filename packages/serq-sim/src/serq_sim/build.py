"""The IR → runtime build of a :class:`~serq_sim.engine.Simulation`: pool and stage members (families
paired member for member), stage kinds and policies taken from the registries, the compiled session,
workload and gauges, the trace, and the checks of the run's settings against the program."""

from __future__ import annotations

import math
from array import array

from serq.extensions import source_word
from serq_ir import nodes as N
from serq_ir.rules import NEEDS_OPEN, PAIRING, arrivals_problem, family, open_advice, pairs, window_problem

from . import workload as _workload
from .compile import Compiler, observables_read, state_dependent, walk
from .errors import SimError, StopRun, format_error
from .guards import build_with, check_policy, check_stage, first_party, guard_engine, guard_share
from .pools.linear import LinearQueue, linear_waited
from .pools.model import (
    KeyedQueue,
    Pool,
    SpillMember,
    ThresholdQueue,
    WaitedQueue,
    member_problem,
    waited_cuts,
    waited_last,
)
from .stages import Ctx, FlowNetwork
from .workload import replace_limit

#: up to this many stages that want a start, the settle asks each at every settle whether it is idle; up to
#: this many pools that may have growers or a queue of their own, it looks at each at every settle
_FEW_STEPS = 8

#: the observables that read a stage's online estimates (serq_sim.stats.PriceEstimator)
ESTIMATES = frozenset(("price", "est_lambda", "est_rho", "est_wait"))
INF = math.inf
#: ``queue by`` keys that read only attributes and numbers are evaluated once, at the join
#: (:class:`~serq_sim.pools.model.KeyedQueue`); False evaluates every key at every head lookup (the tests
#: compare the two)
KEYS_AT_JOIN = True
#: keys ``(K…, waited)`` or ``(K…, -waited)`` find the head without reading every waiting session's key
#: (pools.model.WaitedQueue), and so do keys that read ``waited`` only compared with numbers
#: (pools.model.ThresholdQueue), and so do keys of which one reads ``waited`` linearly (pools.linear.LinearQueue);
#: False: the scan (the tests compare the two)
WAITED_GROUPS = True


def queue_form(keys) -> str:
    """How a pool's queue keeps its sessions under ``queue by`` keys (as pools.model.kept_keys made them), the
    one rule of both tiers (the general engine's queues here, the fast tier's generated ones): "static", keys
    reading only attributes and numbers (read once, at the join); "waited", ``(K…, waited)`` or ``(K…,
    -waited)`` (WaitedQueue); "cuts", ``waited`` only compared with numbers (ThresholdQueue); "lin", one key
    reading ``waited`` linearly (LinearQueue); "dyn", any other, every key read at every head lookup."""
    if not any(state_dependent(k) for k in keys):
        return "static"
    if WAITED_GROUPS:
        if waited_last(keys):
            return "waited"
        if waited_cuts(keys) is not None:
            return "cuts"
        if linear_waited(keys) is not None:
            return "lin"
    return "dyn"


def _at_waited(keyed):
    """A pool's ``queue by`` keys as a function of the session and its ``waited`` (ThresholdQueue.key), read
    with a context of its own, as the scan reads them with ``waited`` set."""
    ctx = Ctx()

    def key(s, w):
        ctx.waited = w
        return keyed(s, s.attrs, ctx)

    return key


def _key_pulse(sim, pool):
    """``pulse(n, queue, now)`` of a pool's WaitedQueue, ThresholdQueue or LinearQueue: ``n`` keys read inside
    a head lookup are units of the event's work, counted down as the scan's are (admission.head), so that
    ``--max-wall`` stops a lookup that reads many (docs/simulator.md)."""
    from .pools.admission import scan_pulse

    def pulse(n, q, now):
        sim.pulse -= n
        if sim.pulse < 0:
            scan_pulse(sim, pool, len(q))

    return pulse


def _leaves_of(sim, leaves: list, span):
    """The values of a linear key's leaves for a session (LinearQueue.leaves), or None when it has none."""
    if not leaves:
        return None
    fn = sim.compiler.keys_fn(leaves, span=span)

    def of(s):
        return fn(s, s.attrs, sim.null_ctx)

    return of


def build(sim, reg, trace_path, trace_digest=None) -> None:
    """Build ``sim``'s runtime from its program: pools and stages (member by member), the compiled
    session, workload and gauges, the policies from the registries ``reg``, the trace."""
    p = sim.program
    sim.pool_base = []
    sim.pools: list[Pool] = []
    for node in p.pools:
        sim.pool_base.append(len(sim.pools))
        for m in range(node.size):
            sim.pools.append(Pool(sim, node, m, len(sim.pools)))
    sim.stage_base = []
    n = 0
    for node in p.stages:
        sim.stage_base.append(n)
        n += node.size
    sim.stages: list = [None] * n
    sim.compiler = Compiler(sim, p)
    sim.spans = sim.compiler.spans
    # which stage families some run holds together with another: their ps members are flows
    sim.shared_families = set()
    for blk in _all_blocks(p):
        for st in blk:
            if isinstance(st, N.Run) and len(st.stages) > 1:
                sim.shared_families.update(r.stage for r in st.stages)
    sim.flow_network = None
    if sim.shared_families:
        share = p.share
        if share is None:
            raise SimError(format_error(None, None, None, "a run holds several stages but the program "
                                        "declares no share (share maxmin; or share bottleneck;)",
                                        sim.source))
        if share not in reg.share:
            raise SimError(format_error(None, None, None, f"unknown share policy {share!r} (known: "
                                        f"{', '.join(reg.share.names()) or 'none'}){own_absent(reg)}", sim.source))
        sim.flow_network = FlowNetwork(sim, guard_share(reg.share[share], reg.share, share, sim))
        plugins = not first_party(reg.share[share])
    else:
        plugins = False
    for f, node in enumerate(p.stages):
        factory = stage_factory(sim, reg, node)
        name = node.kind.name if isinstance(node.kind, N.Extension) else type(node.kind).__name__
        for m in range(node.size):
            flat = sim.stage_base[f] + m
            sim.stages[flat] = build_with(reg.stage_kinds, name, f"stage {node.name}", factory, sim, node, m, flat,
                                          span=node.span)
        if not first_party(factory):  # a third party's kind: held to the contract (serq_sim.guards)
            plugins = True
            for m in range(node.size):
                check_stage(sim, sim.stages[sim.stage_base[f] + m], reg.stage_kinds, name, node, m)
    # admit via and memory, member for member
    for f, node in enumerate(p.pools):
        if node.admit_via is not None:
            for m in range(node.size):
                sim.pools[sim.pool_base[f] + m].via = pair(sim, node.admit_via, node.size, m, node)
    # the stages that start work once an instant has settled (the stage-kind contract: wants_start), as
    # declared, but those that admit a pool in the order of the first pool each admits (§3 Ties: where the
    # heads of two queues wait for room in one pool "the pool declared first is served first", whichever
    # stage serves it); a stage that admits none keeps its place
    first_pool = {}
    for pl in sim.pools:
        if pl.via is not None and id(pl.via) not in first_pool:
            first_pool[id(pl.via)] = pl.flat
    steps = [s for s in sim.stages if s.wants_start]
    admitting = iter(sorted((s for s in steps if id(s) in first_pool), key=lambda s: (first_pool[id(s)], s.flat)))
    sim.step_stages = steps = [next(admitting) if id(s) in first_pool else s for s in steps]
    # a family of many step stages: the settle asks only those that may be idle (Simulation._step_pass);
    # a few are asked at every settle (a walk over them costs less than the bookkeeping)
    for k, st in enumerate(steps):
        st.spos = k
    sim.step_later = []
    sim.step_cur = -1
    if len(steps) > _FEW_STEPS:
        from .step.stage import StepStage

        sim.step_heap = list(range(len(steps)))
        sim.step_self = bytes(type(st).idle is StepStage.idle and type(st)._join is StepStage._join
                              and type(st)._end is StepStage._end and st.hot is True for st in steps)
    else:
        sim.step_heap = None
        sim.step_self = b""
    # the pools each stage admits, found in one pass (a family of engines, each asking every pool, took
    # its size squared at the start)
    served = {}
    for pl in sim.pools:
        if pl.via is not None:
            served.setdefault(id(pl.via), []).append(pl)
    sim.served_by = served
    for st in sim.stages:
        st.bind()
    from .pools.admission import room_floors

    sim.room_floors = room_floors(p)
    floors = dict(zip(map(id, p.pools), sim.room_floors))
    shared: dict = {}  # what every member of a family shares: its policies' factories, their classes' judgement
    for pool in sim.pools:
        node = pool.node
        pool.room_floor = floors[id(node)]
        pool.evict = pool_policy(sim, reg.evict, pool, node.evict, "eviction order", reg, shared)
        pool.preempt = pool_policy(sim, reg.preempt, pool, node.preempt, "preemption policy", reg, shared)
        if not plugins:
            plugins = not (_own_class(shared, pool.evict) and _own_class(shared, pool.preempt))
        if isinstance(node.queue, N.QueueBy):
            keys = node.queue.keys
            pool.keyed = sim.compiler.keys_fn(keys, span=node.span, kind="queue by")
            form = queue_form(keys)
            if form == "static" and KEYS_AT_JOIN:
                pool.queue = KeyedQueue(pool, sim.compiler.keys_fn(keys, span=node.span))
                pool.keyed_at_join = True
            elif form == "waited":
                # (not checked for NaN, nor KeyedQueue's above: a NaN hands the queue to the scan, whose keys
                # note it when it reads them, as the scan of every head lookup would: on both tiers, the fast
                # one evaluating these at the join)
                static = sim.compiler.keys_fn(keys[:-1], span=node.span)
                pool.queue = WaitedQueue(pool, static, waited_last(keys), pulse=_key_pulse(sim, pool))
                pool.waited_queue = True
            elif form == "cuts":
                # (the keys not checked for NaN, as `static` above: the scan that follows one notes it)
                pool.queue = ThresholdQueue(_at_waited(sim.compiler.keys_fn(keys, span=node.span)), waited_cuts(keys),
                                            pulse=_key_pulse(sim, pool))
                pool.waited_queue = True
            elif form == "lin":
                j, lin, leaves = linear_waited(keys)
                pool.queue = LinearQueue(_at_waited(sim.compiler.keys_fn(keys, span=node.span)), j, lin,
                                         _leaves_of(sim, leaves, node.span), pulse=_key_pulse(sim, pool))
                pool.waited_queue = True
        if node.spill is not None:
            sp = node.spill
            tier = spill_pool(sim, sp.tier, pool)
            link = spill_stage(sim, sp.link, pool)
            pool.spill = (tier, link, sim.compiler.fn(sp.work, rng="eviction", span=node.span),
                          sim.compiler.fn(sp.when, rng="eviction", span=node.span))
        # the attributes are copied at a release only when the order's key or the spill's clauses read them
        # after the session has ended
        pool.needs_snap = pool.evict.needs_snapshot or pool.spill is not None
        pool.batch_room = bool(pool.evict.batch) and pool.spill is None and pool.block is not None
        pool.lru = pool.batch_room and pool.evict.fifo is not None
    if plugins:  # what a third party's stage kind or policy asks of the engine is checked too
        guard_engine(sim)
    sim.free_pools = [pl for pl in sim.pools if pl.via is None]
    sim.any_pools = bool(sim.pools)
    # the pools that can ever have a waiting grower (those a grow or a growing run names) and the free
    # pools that can ever have a queue (those some hold names first): the settle looks at these only
    grown, first = _grown_and_first(sim, p)
    sim.grow_pools = [pl for pl in sim.pools if pl.flat in grown]
    sim.queue_free = [pl for pl in sim.free_pools if pl.flat in first]
    if len(sim.queue_free) > _FEW_STEPS:
        # many pools with queues of their own: admit_all tries the heads that may be admitted (admission.py)
        for pl in sim.free_pools:
            pl.ahot = False
        sim.adm_hot = list(sim.queue_free)
        for pl in sim.adm_hot:
            pl.ahot = True
    else:
        sim.adm_hot = None
    if len(sim.grow_pools) + len(sim.queue_free) > _FEW_STEPS:
        # many: the settle looks at those a grower or a session has joined since it found them with neither
        # (Simulation.pool_mark); all at first
        sim.pool_hot = list({pl.flat: pl for pl in sim.queue_free + sim.grow_pools}.values())[::-1]
    else:
        sim.pool_hot = None
    for pl in sim.pools:
        if pl.flat not in first:
            pl.unqueued = True
    # whether some expression reads a stage's online estimates (else the stages do not keep them)
    sim.need_est = not observables_read(p).isdisjoint(ESTIMATES)
    # workload
    wl = p.workload
    sim.session_fn = sim.compiler.session_fn(p.session, "session")
    sim.init_fn = sim.compiler.plain_fn(wl.init, "init") if wl.init else None
    sim.turn_fn = sim.compiler.plain_fn(wl.turn, "turn") if wl.turn else None
    sim.trace = None
    if trace_path is not None and wl.trace is None:  # a replacement with nothing to replace: not ignored
        from .trace import nothing_to_replace

        raise nothing_to_replace(trace_path, sim.source)
    if wl.trace is not None:
        from .trace import load_trace, not_as_planned, program_base, resolve_trace, trace_outside

        base = program_base(sim.source, sim.folder)
        path = trace_path if trace_path is not None else resolve_trace(wl.trace.path, base)
        try:
            if trace_path is None and (why := trace_outside(path, base)) is not None:
                raise SimError(format_error(wl.trace.span, None, None, why, sim.source))
            sim.trace = load_trace(path, wl.trace.span if trace_path is None else None, sim.source, trace_digest,
                                   sim.setup_watch(f"reading the trace {path}") if sim.max_wall is not None else None)
        except SimError as e:
            raise not_as_planned(path, trace_digest, e) from None
        except (StopRun, KeyboardInterrupt) as e:
            # --max-wall, Ctrl-C or SIGTERM while the trace was read: the run stops before it begins, its
            # partial report made as a stop in the run makes it (Ctrl-C here gave no report at all)
            from .trace import TraceCorpus

            if isinstance(e, KeyboardInterrupt):
                reason = getattr(e, "reason", "interrupted")
                from .report import SIGNAL_NOTES

                said = SIGNAL_NOTES.get(reason, "interrupted")
                e = StopRun(reason, f"{said} at set-up, reading the trace {path}, before the run began", owner=sim)
            sim.setup_stop = e
            sim.trace = TraceCorpus(path, [], 0)
        sim.trace_ordered = wl.trace.ordered
    arrive = wl.arrive
    sim.arrive = arrive
    sim.closed = isinstance(arrive, N.Closed)
    if sim.closed:
        sim.rep_limit = replace_limit(arrive.n)
        sim.rep_n = arrive.n
        sim.rep_seconds = _workload.REPLACE_SECONDS
    if sim.arr_limit is not None:
        if arrivals_problem(arrive, sim.arr_limit) is not None:  # the one rule (serq_ir.rules)
            raise sim.setting_error(("arrivals",), None, NEEDS_OPEN + open_advice(arrive))
        if sim.arr_limit < 1:
            raise sim.setting_error(("arrivals",), None, "must be a positive integer")
    if isinstance(arrive, N.Renewal):
        sim.gap_fn = sim.compiler.fn(arrive.gap, rng="arrivals", span=getattr(arrive.gap, "span", None))
    sim.gauges = [(g.name, sim.compiler.fn(g.value, span=g.span)) for g in p.gauges]
    sim.gauge_points = [(array("d"), array("d")) for _ in p.gauges]
    sim.gauge_last = [None] * len(p.gauges)
    why = window_problem(sim.horizon, sim.warmup)  # the one rule (serq_ir.rules)
    if why is not None:
        raise sim.setting_error(("warmup", "horizon"), None, why)


def pair(sim, fam: int, count: int, m: int, node):
    size = sim.program.stages[fam].size
    if pairs(count, size):  # (serq_ir.rules: member for member, or a family of one)
        return sim.stages[sim.stage_base[fam] + (m if size == count else 0)]
    raise SimError(format_error(node.span, None, None, f"{family('pool', node.name, count)} is admitted via "
                                f"{family('stage', sim.program.stages[fam].name, size)}, and the two cannot be "
                                f"paired ({PAIRING})", sim.source))


def spill_pool(sim, r: N.PoolRef, pool: Pool):
    """The tier a pool's spill writes to: the member its reference names (a constant index, or a
    :class:`SpillMember` evaluated at each spill); without an index, a family's member paired with the
    pool's (serq_ir.validate refuses a family of another size: the last line is for a Program built in
    Python and not validated)."""
    size = sim.program.pools[r.pool].size
    base = sim.pool_base[r.pool]
    if size == 1:
        return sim.pools[base]
    if r.index is not None:
        return spill_member(sim, r.index, r.span, "pool", sim.pools, base, size, pool, sim.program.pools[r.pool].name)
    if size == pool.node.size:
        return sim.pools[base + pool.index]
    return sim.pools[base]


def spill_stage(sim, r: N.StageRef, pool: Pool):
    """The link a pool's spill writes over, as :func:`spill_pool` finds the tier."""
    size = sim.program.stages[r.stage].size
    base = sim.stage_base[r.stage]
    if size > 1 and r.index is not None:
        return spill_member(sim, r.index, r.span, "stage", sim.stages, base, size, pool,
                            sim.program.stages[r.stage].name)
    if size == pool.node.size:
        return sim.stages[base + pool.index]
    return sim.stages[base]


def spill_member(sim, index: N.Expr, span, kind: str, members: list, base: int, size: int, pool: Pool,
                 family: str):
    """The member of the family ``family`` a spill clause names by ``index``: at once for a number (one naming no
    member is an error at it, as the linker's), else a :class:`SpillMember` the spill evaluates (the Evict
    moment: the entry's session's attributes, ``size``, ``age``, ``last``, ``waiting``)."""
    span = getattr(index, "span", None) or span
    if isinstance(index, N.Num):
        why = member_problem(kind, float(index.value), size, family)
        if why is not None:
            raise SimError(format_error(span, None, None, f"pool {pool.name}: the spill's {why}", sim.source))
        return members[base + int(index.value)]
    fn = sim.compiler.fn(index, rng="eviction", span=span)
    return SpillMember(kind, members, base, size, fn, span, pool.name, family)


def stage_factory(sim, reg, node: N.Stage):
    """The factory of stage ``node``'s kind in the registry: the IR tag of a built-in kind, the name of
    an ``Extension``'s; an unknown kind is an error listing the registered ones."""
    kind = node.kind
    name = kind.name if isinstance(kind, N.Extension) else type(kind).__name__
    if name not in reg.stage_kinds:
        # named as the language spells it (serq.extensions.source_word: `delay`, `@batch`), not by the IR's tag
        raise SimError(format_error(node.span, None, None, f"stage {node.name}: unknown stage kind "
                                    f"`{source_word(name, isinstance(kind, N.Extension))}` (registered: "
                                    f"{_words(reg.stage_kinds)}){own_absent(reg, isinstance(kind, N.Extension))}",
                                    sim.source))
    return reg.stage_kinds[name]


def _words(registry) -> str:
    """The names a registry holds as the language spells them (``fifo``, ``by (…)``, ``@batch``), each once,
    in the order they were registered; ``none`` when it holds none."""
    from serq.extensions import source_word

    return ", ".join(dict.fromkeys(source_word(n) for n in registry.names())) or "none"


def own_absent(reg, extension: bool = False) -> str:
    """What an unknown built-in kind's or policy's message adds when serq-sim's own plugin, which registers
    every built-in one, is not in the plugin manager ``reg`` comes from (``""`` otherwise, and for a
    plugin's ``extension``): installed but switched off (SERQ_DISABLED_PLUGINS, SERQ_DISABLE_PLUGIN_AUTOLOAD;
    serq.parts.how_to_have), or a manager built without it. ``serq sweep`` with serq-sim switched off said
    ``unknown stage kind 'Delay' (registered: )`` of every run."""
    pm = getattr(reg, "pm", None)
    if extension or pm is None:
        return ""
    from . import plugin as own

    if pm.is_registered(own):
        return ""
    from serq.parts import how_to_have

    how = how_to_have(pm, "serq-sim")
    if how.startswith("install "):  # (this is serq-sim: installed; the manager was made without its plugin)
        how = "the plugin manager the run was given does not have serq-sim's plugin (serq_sim.plugin)"
    return f"; serq-sim registers the built-in ones, and {how}"


def pool_policy(sim, registry, pool: Pool, node, what: str, reg=None, shared: dict | None = None):
    """Pool member ``pool``'s policy of the kind ``what`` (its eviction order or preemption policy), made
    by the factory ``registry`` has for ``node``'s IR tag (or an ``Extension``'s name); ``reg`` the
    registries it is one of (an unknown built-in one's message says why serq-sim's own are absent).
    ``shared``: what the pools built together share (a dict the build keeps): the factory found once a
    family's node, the judgement of its policies' class once a class (:func:`serq_sim.guards.check_policy`),
    so that a member's cost is its factory's call (a family of 10**5 pools looked each up, and judged each,
    2 * 10**5 times)."""
    found = None if shared is None else shared.get((id(registry), id(node)))
    if found is None:
        name = node.name if isinstance(node, N.Extension) else type(node).__name__
        if name not in registry:
            raise SimError(format_error(pool.node.span, None, None, f"pool {pool.node.name}: unknown {what} "
                                        f"`{source_word(name, isinstance(node, N.Extension))}` (registered: "
                                        f"{_words(registry)}){own_absent(reg, isinstance(node, N.Extension))}",
                                        sim.source))
        found = (name, registry[name])
        if shared is not None:  # (the node is the family's, or a default one: kept alive by the program)
            shared[id(registry), id(node)] = found
    name, factory = found
    made = build_with(registry, name, f"the {what} of pool {pool.name}", factory, sim, pool, node,
                      span=getattr(node, "span", None) or pool.node.span)
    return check_policy(made, registry, name, pool, what, shared)


def _own_class(shared: dict, policy) -> bool:
    """Whether ``policy`` is serQ's own (:func:`serq_sim.guards.first_party`), judged once a class."""
    t = type(policy)
    own = shared.get(("own", t))
    if own is None:
        own = shared["own", t] = first_party(policy)
    return own


def _grown_and_first(sim, p: N.Program) -> tuple[set[int], set[int]]:
    """The flat indices of the pools some ``grow`` or growing run of the session block names, and of those
    some hold names as its first pool (a reference with an index: every member of its family)."""

    def members(r: N.PoolRef) -> range:
        base = sim.pool_base[r.pool]
        return range(base, base + p.pools[r.pool].size)

    grown: set[int] = set()
    first: set[int] = set()
    for x in walk(p.session):
        if isinstance(x, N.Grow):
            grown.update(members(x.pool))
        elif isinstance(x, N.Run) and x.growing is not None:
            grown.update(members(x.growing))
        elif isinstance(x, N.Hold) and x.pools:
            first.update(members(x.pools[0].pool))
    return grown, first


def _all_blocks(p: N.Program):
    from serq_ir.analysis import blocks

    for top in (p.session, p.workload.init, p.workload.turn):
        if top:
            yield top
            yield from blocks(top)
