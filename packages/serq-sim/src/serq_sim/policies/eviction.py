"""Eviction orders: the contract, the keyed structure every order with a fixed key gets, and the
built-ins ``evict lru`` and ``evict by (k, …)``.

The contract
------------

An order is registered through ``serq_sim_register_eviction_orders`` as ``register(name, factory)``,
``name`` the IR tag (``"EvictLru"``, ``"EvictBy"``) or an ``Extension`` evict node's ``name``;
``factory(sim, pool, node)`` is called once per pool member when a simulation is built and returns an
:class:`EvictionOrder`. The engine talks to it through these members only:

``key(entry)``
    The entry's rank: a tuple of numbers, the least evicted first, ties in release order
    (``entry.seq``). An entry has ``size`` (units cached), ``last`` (release time), ``seq`` (release
    order), ``owner`` (the session; ``owner.attrs`` while it lives, ``snap`` after it has ended) and
    ``dead`` (a remainder past a ``reuse`` bound, or a spill's units in its tier while the write is under
    way: ``pending``, removed and cached again as the session's own when the write lands).
``fixed_key``
    The order's declaration that ``key(entry)`` does not change while the entry is cached (it reads
    ``last``, ``seq``, ``dead``, constants, and only attributes of the owner that cannot change while
    the entry is cached). Then the order keeps the pool's entries sorted by ``(key, seq)`` (a
    ``sortedcontainers.SortedList``): ``key`` is called once when an entry is cached, caching and
    removing an entry cost O(log n), and a pick is the least, O(1). Left ``False``, every pick calls
    ``key`` of every entry (O(n) a block), which is right for a key that reads the time (``age``), the
    run's state, a live session's changing attributes or a draw. (``evict by`` keys that read the time
    only through a monotone function of ``age`` are ranked by release time in its place and declared
    fixed: :class:`AgedKeyedOrder`; others that read no draw and no observable are ranked once an eviction
    instead: ``KeyedOrder.instant``, pools.cache.evict_for.)
``reads_size``
    With ``fixed_key``: the key reads ``entry.size`` too; the entry is ranked again after part of it is
    evicted (the only way an entry's size changes while it is cached).
``batch``
    The picked entry keeps its rank while it shrinks, so the engine may evict several blocks of it in
    one step (only when the pool spills nothing: a spill is per block). Read once, when the simulation
    is built.
``needs_snapshot``
    Whether ``key`` reads ``entry.snap``, the attributes an ended session had at its release. The
    engine copies a session's attributes at every release only for an order that says so (or a pool
    that spills: the spill's clauses read them).
``pick(pool)``
    The entry to evict next (from its tail, a block at a time when the pool has blocks), or ``None``
    when the pool caches nothing. The base class answers it from ``key`` as above; overriding it is the
    escape hatch for an order that is no ranking. It is called for every block evicted.
``on_insert(entry)``, ``on_remove(entry)``, ``on_shrink(entry)``
    The engine's notices: the entry is cached; it has left the cache (consumed by its session's
    admission, evicted whole, replaced, dropped); part of it was evicted and it stays. The base class
    keeps its sorted entries with them; an order overriding ``pick`` may use them for its own structure.
    The pool's entries (``pool.own``, ``pool.dead``) are the engine's: an order reads them and never changes
    them (a third party's ``pick`` that answers ``None`` while the pool counts units cached in no entry is
    refused: serq_sim.guards).

A key with a NaN in it cannot be sorted: the first one an order with ``fixed_key`` meets turns the pool
over to the scan for the rest of the run, which picks exactly as it would have.
"""

from __future__ import annotations

from collections import OrderedDict

from sortedcontainers import SortedList

from ..errors import SimError, of_entry
from ..stages import Ctx
from ..status import ENDED, QUEUED


def evict_pulse(sim, pool) -> None:
    """The countdown of the event's work ran out as ``pool`` evicts (its entries scanned, evicted, or
    blocks taken one by one): read the clock (:meth:`serq_sim.engine.Simulation.pulse_out`)."""
    from ..report import member_label

    sim.pulse_out(f"evicting from pool {member_label(pool)}", None, None, None, pool.node.span)


class EvictionOrder:
    """Base of eviction orders: least ``key(entry)`` first, ties in release order."""

    #: ``key(entry)`` does not change while the entry is cached (see the module docstring).
    fixed_key = False
    #: With ``fixed_key``: ``key(entry)`` reads ``entry.size``, so an entry is ranked again as it shrinks.
    reads_size = False
    #: The picked entry keeps its rank while it shrinks, so several blocks of it may go at once.
    batch = False
    #: ``key(entry)`` reads ``entry.snap`` (the attributes of an ended session at its release).
    needs_snapshot = True
    #: :class:`LruOrder`'s ``OrderedDict`` of entries (``None`` for every other order).
    fifo = None

    def __init__(self, sim, pool, node):
        self.sim = sim
        self.pool = pool
        self.node = node
        #: ``(*key, seq, eid, entry)`` of every entry cached, ascending, while :attr:`keyed`.
        self.ranked = SortedList()
        #: Whether the entries are ranked: decided from ``fixed_key`` when the first entry is cached
        #: (``None`` until then), ``False`` for good once a key was NaN (the scan takes over).
        self.keyed = None

    def key(self, entry) -> tuple:
        raise NotImplementedError

    def pick(self, pool):
        if self.keyed:
            # self.ranked[0][-1] (the SortedList's first sublist holds its least item; none when it is
            # empty), without SortedList.__getitem__'s general indexing: a pick is made for every eviction
            lists = self.ranked._lists
            return lists[0][0][-1] if lists else None
        return self.scan(pool)

    def scan(self, pool):
        """The entry with the least ``(key, seq)``, every key evaluated now (entries in the pool's
        order: its sessions' own, then the dead remainders, each in the order they were cached)."""
        sim = self.sim
        sim.pulse -= len(pool.own) + len(pool.dead)  # a key a unit of the event's work (Simulation.pulse_out)
        if sim.pulse < 0:
            evict_pulse(sim, pool)
        best = None
        bk = None
        for e in pool.iter_entries():
            k = (*self.key(e), e.seq)
            if best is None or k < bk:
                best, bk = e, k
        return best

    def on_insert(self, entry) -> None:
        keyed = self.keyed
        if keyed is None:
            keyed = self.keyed = bool(self.fixed_key)
        if keyed:
            self._rank(entry)

    def on_remove(self, entry) -> None:
        if self.keyed:
            self.ranked.remove(entry.rank)

    def on_shrink(self, entry) -> None:
        if self.reads_size and self.keyed:
            self.ranked.remove(entry.rank)
            self._rank(entry)

    def rank_key(self, entry) -> tuple:
        """What an entry is ranked by, with :attr:`fixed_key`: its key (:class:`AgedKeyedOrder` reads one
        key otherwise)."""
        return self.key(entry)

    def _rank(self, entry) -> None:
        k = self.rank_key(entry)
        for x in k:
            if x != x:  # NaN: no total order; the scan decides from now on
                self._to_scan()
                return
        r = entry.rank = (*k, entry.seq, entry.eid, entry)
        self.ranked.add(r)

    def _to_scan(self) -> None:
        self.keyed = False
        self.ranked = None


class LruOrder(EvictionOrder):
    """``evict lru``: release time, then release order. A release time is the clock at the release, and
    the release order counts releases, so the two agree and the key is the release order alone.

    The entries are ranked by ``(seq, eid)`` and almost all come in last in that order: a release's entry
    takes the next release order; only a dead remainder past a ``reuse`` bound keeps the release order of
    the entry it is cut from. So :class:`LruOrder` itself (not a subclass) keeps the entries that came in
    after all those there in an ``OrderedDict`` in the order they came (:attr:`fifo`: its first is their
    least, and caching and removing are dict operations), and the others (:attr:`strays` of them) in the
    base class's sorted ranking; the least of the two firsts is evicted. While there is no stray,
    :attr:`first` is the entry to evict (the engine reads it without a call)."""

    fixed_key = True
    batch = True
    needs_snapshot = False

    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        if type(self) is LruOrder:
            self.fifo = OrderedDict()
            self.keyed = True  # the strays' ranking (key () is never NaN)
        #: how many entries cached are ranked in :attr:`ranked` rather than kept in :attr:`fifo`
        self.strays = 0
        #: with :attr:`fifo` and no stray, the first of :attr:`fifo` (the pick); else ``None``
        self.first = None
        #: the last of :attr:`fifo` (``None`` when it is empty), kept as entries come and go: an
        #: ``OrderedDict``'s last read through ``reversed`` at every insert cost a lookup of about 1 µs in a
        #: dict that changes at every block (a fifth of a program spilling to a tier block by block)
        self.tail = None

    def key(self, entry) -> tuple:
        return ()

    def pick(self, pool):
        fifo = self.fifo
        if fifo is None:
            return super().pick(pool)
        if not self.strays:
            return self.first
        r = self.ranked._lists[0][0]  # the least stray: (seq, eid, entry)
        if fifo:
            h = next(iter(fifo))
            if h.seq < r[0] or (h.seq == r[0] and h.eid < r[1]):
                return h
        return r[-1]

    def on_insert(self, entry) -> None:
        fifo = self.fifo
        if fifo is None:
            super().on_insert(entry)
            return
        last = self.tail
        if last is not None:
            if entry.seq < last.seq or (entry.seq == last.seq and entry.eid < last.eid):
                self._rank(entry)
                self.strays += 1
                self.first = None
                return
        elif not self.strays:
            self.first = entry
        fifo[entry] = None
        self.tail = entry

    def on_remove(self, entry) -> None:
        fifo = self.fifo
        if fifo is None:
            super().on_remove(entry)
            return
        try:
            del fifo[entry]
        except KeyError:
            self.ranked.remove(entry.rank)
            self.strays -= 1
            if not self.strays:
                self.first = next(iter(fifo)) if fifo else None
            return
        if entry is self.first:
            self.first = next(iter(fifo)) if fifo else None
        if entry is self.tail:
            self.tail = next(reversed(fifo)) if fifo else None


class KeyedOrder(EvictionOrder):
    """``evict by (k1, …)``: ascending keys evaluated per entry at the Evict moment (``size``, ``age``,
    ``last``, ``waiting`` and the entry's session's attributes), then release order. The keys are fixed
    when they read only numbers, ``last``, ``size`` and attributes no statement changes after the
    session's ``init`` (:func:`key_reads`)."""

    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        self.fixed_key, self.reads_size, self.needs_snapshot = key_reads(sim.program, node.keys)
        #: the keys read no draw and no observable: however they read the time (``age``) or a session,
        #: they do not change while one eviction makes room, at one instant (pools.cache.evict_for ranks
        #: the entries once for it rather than scanning them for every pick)
        self.instant = type(self) is KeyedOrder and not self.fixed_key and instant_keys(node.keys)
        #: the keys as a scan reads them (a NaN noted, serq_sim.nankeys), and as the ranking reads them (not
        #: checked: a NaN there hands the pool to the scan, which notes it when it reads it, as a scan at
        #: every pick would)
        self.keys = sim.compiler.keys_fn(node.keys, rng="eviction", span=pool.node.span, kind="evict by")
        self.rank_keys = sim.compiler.keys_fn(node.keys, rng="eviction", span=pool.node.span)
        self.ctx = Ctx()

    def key(self, entry) -> tuple:
        s, attrs = evict_context(self.ctx, entry, entry.size, self.sim.now)
        try:
            return self.keys(s, attrs, self.ctx)
        except SimError as e:  # the keys read the entry's session: their error names it
            raise of_entry(self.sim, e, entry) from None

    def rank_key(self, entry) -> tuple:
        s, attrs = evict_context(self.ctx, entry, entry.size, self.sim.now)
        try:
            return self.rank_keys(s, attrs, self.ctx)
        except SimError as e:
            raise of_entry(self.sim, e, entry) from None


class AgedKeyedOrder(KeyedOrder):
    """``evict by`` keys of which key ``i`` reads the time only as a monotone function of ``age``, the
    others fixed (:func:`aged_key`, ``aged = (i, sign)``): the entries are ranked with that key read as
    ``-last`` (``sign`` 1) or ``last`` (``sign`` -1), which is fixed while an entry is cached and orders
    them as the key does at any instant, but for the ties the rounding of ``now - last`` makes, which
    :meth:`pick` settles."""

    def __init__(self, sim, pool, node, aged: tuple[int, int]):
        super().__init__(sim, pool, node)
        self.aged = aged
        self.fixed_key = True

    def rank_key(self, entry) -> tuple:
        i, sign = self.aged
        k = KeyedOrder.rank_key(self, entry)
        return (*k[:i], -entry.last if sign > 0 else entry.last, *k[i + 1:])

    def pick(self, pool):
        """The least ``(key, seq)`` now: the first ranked entry and those after it with the same keys
        before key ``i`` and the same value of key ``i`` now (``now - last`` rounds two release times to
        one age when the clock is far beyond both: they tie, and the keys after it and the release order
        decide), the least of them as the scan compares them; they are the first of their group, as the
        key cannot fall with ``-last`` (``last``) rising. A key that is NaN now hands the pool to the scan
        for the rest of the run."""
        if not self.keyed:
            return self.scan(pool)
        ranked = self.ranked
        lists = ranked._lists
        if not lists:
            return None
        r0 = lists[0][0]
        e0 = r0[-1]
        if len(lists[0]) == 1 and len(lists) == 1:
            return e0
        i = self.aged[0]
        key = KeyedOrder.rank_key.__get__(self)  # (unchecked: a NaN hands the pick to the scan)
        k0 = key(e0)
        a0 = k0[i]
        if a0 != a0:
            self._to_scan()
            return self.scan(pool)
        best, bk = e0, (k0, e0.seq)
        pre = r0[:i]
        it = iter(ranked)
        next(it)
        for r in it:
            if r[:i] != pre:
                break
            e = r[-1]
            k = key(e)
            a = k[i]
            if a != a0:
                if a != a:
                    self._to_scan()
                    return self.scan(pool)
                break
            c = (k, e.seq)
            if c < bk:
                best, bk = e, c
        return best


def key_reads(program, keys) -> tuple[bool, bool, bool]:
    """What eviction keys read: ``(fixed, size, attributes)``. ``fixed``: nothing that changes while an
    entry is cached but its size (no draw, observable, ``now``, ``age`` or ``waiting``, and only
    attributes of :func:`fixed_slots`); ``size``: ``size``; ``attributes``: some attribute."""
    from serq_ir import nodes as N

    from ..compile import reads_taken

    # (what a key can reach: a conditional of a constant test reads only the arm it takes, so `evict by (order
    # == 0 ? last : size)` with `let order = 0` is the fixed key `last`, not a key re-ranked at every block
    # its entry loses)
    changing = _changing(fixed_slots(program))
    fixed = not any(reads_taken(k, changing) for k in keys)
    size = any(reads_taken(k, lambda e: isinstance(e, N.Ctx) and e.name == "size") for k in keys)
    attrs = any(reads_taken(k, lambda e: isinstance(e, N.Attr)) for k in keys)
    return fixed, size, attrs


def age_sign(e) -> int | None:
    """1 when expression ``e`` reads nothing but ``age`` and finite numbers and cannot fall as ``age``
    rises (rounding included: ``age``, ``age + c``, ``age - c``, ``age * c`` and ``age / c`` for
    ``c > 0``), -1 when it cannot rise (the same negated, ``c - age``, a negative factor), else ``None``.
    ``now - last`` is ``age`` and ``last - now`` is ``-age``; ``now`` or ``last`` read otherwise is ``None``."""
    from serq_ir import nodes as N

    from ..compile import num

    def const(x):
        if isinstance(x, N.Num):
            v = num(x.value)
            if v == v and abs(v) != float("inf"):
                return v
        return None

    if isinstance(e, N.Ctx):
        return 1 if e.name == "age" else None
    if isinstance(e, N.Binary) and e.op == "-" and isinstance(e.lhs, N.Ctx) and isinstance(e.rhs, N.Ctx):
        # `now - last` is `age` (evict_context's own subtraction), `last - now` its negation exactly (a
        # difference's rounding is symmetric)
        pair = (e.lhs.name, e.rhs.name)
        return 1 if pair == ("now", "last") else -1 if pair == ("last", "now") else None
    if isinstance(e, N.Unary) and e.op == "-":
        s = age_sign(e.arg)
        return None if s is None else -s
    if not isinstance(e, N.Binary) or e.op not in ("+", "-", "*", "/"):
        return None
    cl, cr = const(e.lhs), const(e.rhs)
    if cr is not None:
        s = age_sign(e.lhs)
        if s is None:
            return None
        if e.op in ("+", "-"):
            return s
        return s if cr > 0 else -s if cr < 0 else None
    if cl is not None and e.op != "/":
        s = age_sign(e.rhs)
        if s is None:
            return None
        if e.op == "+":
            return s
        if e.op == "-":
            return -s
        return s if cl > 0 else -s if cl < 0 else None
    return None


def aged_key(program, keys) -> tuple[int, int] | None:
    """``(i, sign)`` when key ``i`` of ``keys`` reads the time only through ``age`` (or ``now - last``),
    monotonically (:func:`age_sign`), and every other key reads what a fixed key reads (:func:`key_reads`; no
    ``age``): the order of the cached entries by the keys is then their order with key ``i`` read as
    ``-last`` (``sign`` 1) or ``last``, at any instant, but for ties of rounding. Else ``None``."""
    from serq_ir import nodes as N

    from ..compile import reads_taken

    # (what a key can reach, as key_reads reads it: the arm a constant test never takes is not read)
    changing = _changing(fixed_slots(program))
    found = None
    for i, k in enumerate(keys):
        if reads_taken(k, lambda e: isinstance(e, N.Ctx) and e.name in ("age", "now")):
            if found is not None:
                return None
            sign = age_sign(k)
            if sign is None:
                return None
            found = (i, sign)
        elif reads_taken(k, changing):
            return None
    return found


def _changing(frozen: set[int]):
    """A predicate for :func:`~serq_sim.compile.reads`: a node whose value may change while an entry is
    cached but its size (a draw, an observable, a context variable but ``last`` and ``size``, an
    attribute not in ``frozen``)."""
    from serq_ir import nodes as N

    def pred(e) -> bool:
        return isinstance(e, (N.Draw, N.Observable)) or (
            isinstance(e, N.Ctx) and e.name not in ("last", "size")) or (
            isinstance(e, N.Attr) and e.slot not in frozen)

    return pred


def instant_keys(keys) -> bool:
    """Whether eviction keys read neither a draw nor an observable: between two picks of one eviction
    loop nothing else they read changes (the clock, a session's attributes and status stand still)."""
    from serq_ir import nodes as N

    from ..compile import reads

    return not any(reads(k, lambda e: isinstance(e, (N.Draw, N.Observable))) for k in keys)


def fixed_slots(program) -> set[int]:
    """The attribute slots whose value cannot change once a session has run its ``init``: ``serial``,
    and every attribute but ``turn_no``, ``cached``, ``computed``, those a trace or a preset's turns
    load, and those a ``set`` or ``choose`` of the session or ``turn`` block assigns. A turn's loading writes
    the slots of its names (serq_sim.workload, the simulation's ``trace_slots`` and ``slot_more``: ``new``,
    ``out``, ``think``, ``forced`` from a trace's row, ``more`` under a trace or presets), whether or not the IR
    marks them ``builtin``: an IR file that did not was ranked by the keys they had when cached."""
    from serq_ir import nodes as N
    from serq_ir.analysis import blocks

    names = {a.name: i for i, a in enumerate(program.attributes)}
    changing = {names[n] for n in ("turn_no", "cached", "computed") if n in names}
    wl = program.workload
    loaded = N.TRACE_ATTRIBUTES if wl.trace is not None else ("more",) if wl.presets else ()
    changing |= {names[n] for n in loaded if n in names}
    for pr in wl.presets:
        for row in pr.turns:
            changing |= {sv.slot for sv in row}
    for top in (program.session, wl.turn):
        for block in (top, *blocks(top)):
            for st in block:
                if isinstance(st, (N.Set, N.Choose)):
                    changing.add(st.slot)
    return set(range(len(program.attributes))) - changing


def evict_context(ctx, entry, size: float, now: float):
    """Set the context of the Evict moment of ``entry`` in ``ctx`` (``size``, ``last``, ``age``,
    ``waiting``, and ``owner``, the entry's session, living or ended, whom a NaN key names: nankeys),
    ``size`` the units at stake; return the session and the attributes its expressions read: the owner's
    while it lives, else ``None`` and the snapshot taken at release (if any)."""
    ctx.size = size
    ctx.last = entry.last
    ctx.age = now - entry.last
    owner = ctx.owner = entry.owner
    live = owner is not None and owner.status != ENDED
    ctx.waiting = 1.0 if (live and owner.status == QUEUED) else 0.0
    attrs = owner.attrs if (live or entry.snap is None) else entry.snap
    return (owner if live else None), attrs


def lru_factory(sim, pool, node):
    return LruOrder(sim, pool, node)


def keyed_factory(sim, pool, node):
    aged = None if key_reads(sim.program, node.keys)[0] else aged_key(sim.program, node.keys)
    return KeyedOrder(sim, pool, node) if aged is None else AgedKeyedOrder(sim, pool, node, aged)
