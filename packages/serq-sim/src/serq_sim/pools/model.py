"""What a pool is made of: a :class:`Pool` (one member of a pool family: capacity, holders, cache entries,
queue, growers, policies and statistics), a waiting hold (:class:`Pending`), an active one
(:class:`HoldRT`) and its allocation on each pool (:class:`Slot`), a :class:`Lease` and a cached
:class:`Entry`. The behaviour is in the modules beside it: :mod:`.admission`, :mod:`.cache`,
:mod:`.growth`, :mod:`.release`.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import deque
from heapq import heappop, heappush
from operator import attrgetter

import msgspec
from serq_ir import nodes as N
from serq_ir.analysis import taken_arm
from serq_ir.rules import member_problem
from sortedcontainers import SortedKeyList

from ..compile import num
from ..session import SLOT_CACHED, SLOT_COMPUTED
from ..stats import HUGE_SPAN, HUGE_UNITS, PER_HUGE, add_sample
from .exact import zero

EPS = 1e-9
INF = math.inf

__all__ = ["EPS", "INF", "SLOT_CACHED", "SLOT_COMPUTED", "Entry", "HoldRT", "KeyedQueue", "Lease", "Pending",
           "NONE_YET", "Pool", "Slot", "SpillMember", "ThresholdQueue", "member_problem", "refused_amount", "waited_cuts"]


def refused_amount(cap: float, x: float, booked: bool = True) -> bool:
    """The rule of a pool's amounts, the same on both tiers and every admission path: whether ``x`` on a
    pool of capacity ``cap`` is a run-time error. ``booked``: an amount the pool's books take (a hold's
    units, its reserve under ``reserve held``, a ``grow``'s amount); else a reserve the pool does not hold,
    only the room the hold needs.

    NaN and negative amounts are refused everywhere. An infinite amount that would be booked is refused on
    a pool without a cap (``cap`` inf): it would fit there (inf <= inf) and its release take it back as
    inf - inf, leaving the pool's used, reserved and cached units NaN for the rest of the run. So a pool's
    books only ever hold finite amounts (what it caches is at most an allocation: finite too). On a pool
    with a cap an infinite amount is allowed and never fits, as any amount beyond the cap: a hold is
    rejected when its units are known at the join, else waits; a grow waits or preempts.

    Hot paths test ``0.0 <= x < INF`` first (the usual case: nothing to decide) and call this only
    otherwise."""
    return not x >= 0.0 or (x == INF and cap == INF and booked)

_QKEY = attrgetter("qkey")

class _NoneYet(tuple):
    """Empty, and read as an empty deque (or set) is read: ``len``, truth, iteration, ``in``, and ``remove``,
    which finds nothing (ValueError, as a deque's); it has nothing that adds."""

    __slots__ = ()

    def remove(self, x) -> None:
        raise ValueError("remove(x): x not here")


#: the front, queue and growers of a pool member no session has joined, and its sessions livelocked while none
#: are: one empty :class:`_NoneYet` for all, which cannot be changed. A member's own deque (or set) is made when
#: the first session joins it (:func:`.admission.enqueue`, :func:`.growth.grow`, :func:`.growth.preempt_outgrown`):
#: a family of 100 000 members of which a few are ever held kept three empty deques of 760 bytes and a set of
#: 216 in each
NONE_YET = _NoneYet()


class KeyedQueue:
    """The queue of a pool whose ``queue by`` keys read only attributes and numbers (a waiting session's
    attributes do not change, so neither does its key): each session's key is evaluated once, when it
    joins, and the queue is kept sorted by ``(key, join order)`` — its first is the least key, ties to the
    first to join, which is what scanning the keys in join order (:func:`.admission.head`) finds. A key
    holding a NaN orders nothing: from the first such key the queue keeps the join order (``scan``) and
    the head is found by that scan again. The deque's operations the engine uses: ``append`` (a join),
    ``popleft``, ``remove``, ``[0]``, ``len``, iteration (in queue order)."""

    __slots__ = ("pool", "keys", "sl", "dq", "tie", "scan")

    def __init__(self, pool, keys=None):
        self.pool = pool
        #: the keys read at a join (``None``: the pool's ``keyed``); build.py gives them unchecked for NaN, as
        #: the keys of the other queues' own orders are: the scan that reads a NaN notes it (serq_sim.nankeys)
        self.keys = pool.keyed if keys is None else keys
        self.sl = SortedKeyList(key=_QKEY)
        self.dq: deque | None = None
        self.tie = 0
        self.scan = False

    def append(self, s) -> None:
        if self.scan:
            self.dq.append(s)
            return
        k = self.keys(s, s.attrs, self.pool.sim.null_ctx)
        for x in k:
            if x != x:
                # join order back, and the scan from now on
                self.scan = True
                self.dq = deque(sorted(self.sl, key=lambda w: w.qkey[1]))
                self.dq.append(s)
                self.sl = None
                return
        s.qkey = (k, self.tie)
        self.tie += 1
        self.sl.add(s)

    def popleft(self):
        return self.dq.popleft() if self.scan else self.sl.pop(0)

    def remove(self, s) -> None:
        if self.scan:
            self.dq.remove(s)
        else:
            self.sl.remove(s)

    def __getitem__(self, i: int):
        return self.dq[i] if self.scan else self.sl[i]

    def __len__(self) -> int:
        return len(self.dq) if self.scan else len(self.sl)

    def __bool__(self) -> bool:
        return bool(self.dq) if self.scan else bool(self.sl)

    def __iter__(self):
        return iter(self.dq if self.scan else self.sl)


def kept_keys(keys: list) -> list:
    """``queue by`` keys as the queues read them, choosing the same head as the keys written: a conditional
    whose test is a number (a let's switch, ``mode == 0 ? 0 : waited > slo ? 1 : 0``, which the linker keeps
    unless its three parts are numbers) is the branch it takes, and a last ``-waited`` after other keys is
    left out, and so is a last ``slo - waited`` (:func:`falls_with_waited`; alone, such a key is ``-waited``).
    Why the last is: the head is the first session, in join order, whose keys no later one's compare strictly
    less (element by element, :func:`.admission.head`); a later session's ``waited`` is never more than an
    earlier one's (the clock does not go back, and ``now - joined`` is a rounded, monotone subtraction), so
    its ``-waited`` never compares less, and the keys before it decide alone, as they do without it. So ``(waited > slo ? 1 : 0, -waited)``, an SLO-aware admission, is an aging threshold
    (:class:`ThresholdQueue`) and ``(prio, -waited)`` keys read once at the join (``KeyedQueue``), where
    either was read for every waiting session at every admission attempt. A test that is NaN is kept (a
    NaN is true, as the compiled conditional takes it, but is no number to choose by here)."""
    out = [_chosen(k) for k in keys]
    while len(out) > 1 and falls_with_waited(out[-1]):
        out.pop()
    if len(out) == 1 and falls_with_waited(out[0]) and not _less_waited(out[0]):
        # alone, such a key orders as `-waited` does (first come first served): the groups' form
        out[0] = N.Unary(op="-", arg=N.Ctx(name="waited"), span=getattr(out[0], "span", None))
    return out


def _less_waited(e) -> bool:
    return isinstance(e, N.Unary) and e.op == "-" and isinstance(e.arg, N.Ctx) and e.arg.name == "waited"


def falls_with_waited(e) -> bool:
    """Whether key ``e`` is ``-waited``, or ``waited`` subtracted from a number or ``-waited`` added to or less
    a number (``slo - waited``, the slack under one SLO): a rounded function of ``waited`` that never rises as
    it grows, so a later session's key is never less than an earlier one's (a NaN or an infinite number
    makes every key equal, or none less: no more either)."""
    if _less_waited(e):
        return True
    if isinstance(e, N.Binary):
        if e.op == "-" and isinstance(e.lhs, N.Num) and isinstance(e.rhs, N.Ctx) and e.rhs.name == "waited":
            return True
        if e.op in ("+", "-") and _less_waited(e.lhs) and isinstance(e.rhs, N.Num):
            return True
        if e.op == "+" and isinstance(e.lhs, N.Num) and _less_waited(e.rhs):
            return True
    return False


def _chosen(e):
    """``e`` with every conditional whose test is a number replaced by the arm it takes
    (``serq_ir.analysis.taken_arm``: a NaN test takes the first, as the evaluation does)."""
    while (arm := taken_arm(e)) is not None:
        e = arm
    if not isinstance(e, N._Node):
        return e
    changed = {}
    for f in e.__struct_fields__:
        v = getattr(e, f)
        if isinstance(v, N._Node):
            w = _chosen(v)
        elif isinstance(v, list) and any(isinstance(x, N._Node) for x in v):
            w = [_chosen(x) for x in v]
            w = v if all(a is b for a, b in zip(w, v)) else w
        else:
            continue
        if w is not v:
            changed[f] = w
    return msgspec.structs.replace(e, **changed) if changed else e


def program_kept_keys(program: N.Program) -> N.Program:
    """``program`` with every pool's ``queue by`` keys as :func:`kept_keys` makes them (the same object when
    none changes): what both tiers build their queues from (``Simulation.program``)."""
    pools = list(program.pools)
    for i, pool in enumerate(pools):
        if isinstance(pool.queue, N.QueueBy):
            keys = kept_keys(pool.queue.keys)
            if len(keys) != len(pool.queue.keys) or any(a is not b for a, b in zip(keys, pool.queue.keys)):
                pools[i] = msgspec.structs.replace(pool, queue=msgspec.structs.replace(pool.queue, keys=keys))
    if all(a is b for a, b in zip(pools, program.pools)):
        return program
    return msgspec.structs.replace(program, pools=pools)


def waited_last(keys) -> int:
    """For ``queue by`` keys: 1 when they are keys that read only attributes and numbers, then ``waited``
    last; -1 when ``-waited`` is last; 0 for any other form (:class:`WaitedQueue` takes the first two)."""
    if not keys:
        return 0
    from ..compile import state_dependent

    last = keys[-1]
    sign = 0
    if isinstance(last, N.Ctx) and last.name == "waited":
        sign = 1
    elif isinstance(last, N.Unary) and last.op == "-" and isinstance(last.arg, N.Ctx) and last.arg.name == "waited":
        sign = -1
    if sign and not any(state_dependent(k) for k in keys[:-1]):
        return sign
    return 0


class _KeptQueue(deque):
    """A pool's queue, a deque of the sessions in join order, beside which a subclass keeps an order of its
    own: every session leaving it (``popleft``, ``remove``) is told to ``_left``."""

    __slots__ = ()

    def _left(self, s) -> None:
        raise NotImplementedError

    def popleft(self):
        s = deque.popleft(self)
        self._left(s)
        return s

    def remove(self, s) -> None:
        if self[0] is s:
            deque.popleft(self)
        else:
            deque.remove(self, s)  # (by identity first; two sessions are never equal)
        self._left(s)


class _PlacedQueue(_KeptQueue):
    """A :class:`_KeptQueue` that places each session in its own order at the first head lookup after its
    join: those not placed yet wait in ``pend``; ``scan``, once it has given its order up for the scan."""

    __slots__ = ()

    def append(self, s) -> None:
        deque.append(self, s)
        if not self.scan:
            self.pend.append(s)

    def _unpend(self, s) -> None:
        """Take ``s``, which leaves before it was placed, out of ``pend``."""
        pend = self.pend
        for i, x in enumerate(pend):
            if x is s:
                del pend[i]
                return


class WaitedQueue(_KeptQueue):
    """The queue of a pool whose ``queue by`` keys are ``(K…, waited)`` or ``(K…, -waited)``, the ``K``
    reading only attributes and numbers: the head is found without reading every waiting session's key.

    Why it is the head the scan finds (:func:`.admission.head`: the first, in join order, of the least
    keys). A session's ``K`` does not change while it waits (its attributes do not), so it is evaluated
    once, and the sessions are grouped by it (``groups``, each in join order; a session is grouped at the
    first head lookup after its join, ``pend``, and a queue of a few is scanned, ``_SHORT``), the groups'
    ``K`` kept sorted (``order``). Without NaN the keys are totally ordered, and every key of the group of
    the least ``K`` is less than any other group's (their ``K`` differ at a first place, and is less there).
    Within that group the keys differ only in ``waited`` = ``now - joined``, a double: the queue is in join
    order and the clock never goes back, so ``joined`` does not decrease along the group, and a rounded
    subtraction is monotone, so ``waited`` does not increase along it. With ``waited`` last the least is
    the last session's, and the sessions whose ``waited`` equals it (those that joined at the same
    instant, or whose difference rounds away) are the group's last ones: the first of them (a binary search)
    is the head. With ``-waited`` last the least is the first session's: the head is the group's first.
    A ``K`` holding a NaN (which orders nothing) turns the queue back to the scan for good, as
    :class:`KeyedQueue` does; so does a clock at ``inf``. It is the deque of the sessions in join order (its
    ``len``, truth, ``[0]`` and iteration are the deque's own, read at every settle), the groups kept
    beside it by ``append`` (a join; the fast tier's generated code calls :meth:`join`), ``popleft`` and
    ``remove``."""

    __slots__ = ("pool", "static", "sign", "joined", "pend", "groups", "order", "where", "last", "scan", "pulse")

    def __init__(self, pool, static, sign: int, joined=None, pulse=None):
        super().__init__()
        #: ``pulse(n, queue, now)``: ``n`` units of the event's work done (a session grouped; Simulation.pulse_out
        #: may stop the run there, inside the lookup); None: not counted
        self.pulse = pulse
        self.pool = pool
        #: the keys but the last, as one function of the session (a tuple); ``None`` in the fast tier, whose
        #: generated code evaluates them and calls :meth:`join`
        self.static = static
        self.sign = sign
        #: a session's join time (the fast tier's sessions are lists)
        self.joined = _JOINED if joined is None else joined
        #: the sessions that joined since the last head lookup, with their K, in join order: grouped at the
        #: next lookup (at a short queue a session most often leaves before another joins: no group is made)
        self.pend: deque = deque()
        self.groups: dict = {}
        #: the groups' K, ascending (a list: there are few, and it is read at every head lookup)
        self.order: list = []
        #: the group of each waiting session, by its id
        self.where: dict = {}
        #: the last head found and its place in its group (its removal is then no search)
        self.last = None
        self.scan = False

    def append(self, s) -> None:
        deque.append(self, s)
        if not self.scan:
            self.pend.append((s, None))  # its K evaluated when it is grouped (it does not change)

    def join(self, s, k) -> None:
        """``s`` joins with its keys but the last ``k`` (the fast tier's generated code)."""
        deque.append(self, s)
        if not self.scan:
            self.pend.append((s, k))

    def _to_scan(self) -> None:
        """A K holding a NaN: the scan from now on (the deque is in join order)."""
        self.scan = True
        self.groups = self.where = self.order = self.last = self.pend = None

    def head(self, now: float):
        """The session the scan of the keys would find at ``now`` (``None``: the scan must decide, as it
        does for a queue of a few sessions, cheaper to scan than to group)."""
        if self.scan or now == INF or len(self) <= _SHORT:
            return None
        pend = self.pend
        if pend:  # grouped now, in join order, after every session grouped before
            groups, where, order = self.groups, self.where, self.order
            pulse = self.pulse
            for s, k in pend:
                if pulse is not None:  # a key read is a unit of the event's work, as the scan's are
                    pulse(1, self, now)
                if k is None:
                    k = self.static(s, s.attrs, self.pool.sim.null_ctx)
                for x in k:
                    if x != x:
                        self._to_scan()
                        return None
                g = groups.get(k)
                if g is None:
                    g = groups[k] = []
                    insort(order, k)
                g.append(s)
                where[id(s)] = k
            pend.clear()
        g = self.groups[self.order[0]]
        lo = 0
        if self.sign > 0 and len(g) > 1:
            joined = self.joined
            least = now - joined(g[-1])
            hi = len(g) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if now - joined(g[mid]) > least:
                    lo = mid + 1
                else:
                    hi = mid
        s = g[lo]
        self.last = (s, g, lo)
        return s

    def _left(self, s) -> None:
        if self.scan:
            return
        pend = self.pend
        if pend:
            if pend[0][0] is s:
                pend.popleft()
                return
            for i, (x, _k) in enumerate(pend):
                if x is s:
                    del pend[i]
                    return
        k = self.where.pop(id(s))
        last = self.last
        if last is not None and last[0] is s:
            g = last[1]
            del g[last[2]]
        else:
            g = self.groups[k]
            for i, x in enumerate(g):
                if x is s:
                    del g[i]
                    break
        self.last = None
        if not g:
            del self.groups[k]
            order = self.order
            del order[bisect_left(order, k)]


#: a queue of at most this many sessions is scanned (WaitedQueue.head): its keys are fewer than the
#: groups' work
_SHORT = 4

_COMPARE = {"<", "<=", ">", ">="}


def waited_cuts(keys) -> list[float] | None:
    """For ``queue by`` keys that read ``waited``, and only compared with a number (``waited >= 3``, ``A <
    waited`` with ``A`` a let), and otherwise only attributes and numbers, as an aging threshold does: the finite
    numbers compared with, ascending, once each (a comparison with inf never changes); None for any other
    keys (:class:`ThresholdQueue` takes these)."""
    cuts: set = set()
    seen = []

    def ok(e) -> bool:
        if isinstance(e, (N.Num, N.Attr)):
            return True
        if isinstance(e, N.Binary):
            if e.op in _COMPARE:
                for w, c in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
                    if isinstance(w, N.Ctx) and w.name == "waited" and isinstance(c, N.Num):
                        v = float(c.value)
                        if math.isfinite(v):
                            cuts.add(v)
                        seen.append(v)
                        return True
            return ok(e.lhs) and ok(e.rhs)
        if isinstance(e, N.Unary):
            return ok(e.arg)
        if isinstance(e, N.Call):
            return all(ok(a) for a in e.args)
        if isinstance(e, N.Cond):
            return ok(e.test) and ok(e.then) and ok(e.orelse)
        return False  # a context variable read otherwise, an observable, a draw

    if not keys or not all(ok(k) for k in keys) or not seen:
        return None  # (keys that do not read waited are KeyedQueue's, or the scan's)
    return sorted(cuts)


def _entry_key(e):
    return e[0], e[1]


class ThresholdQueue(_PlacedQueue):
    """The queue of a pool whose ``queue by`` keys read ``waited`` only compared with numbers (an aging
    threshold: ``queue by (waited >= 3 ? 0 : prio, serial)``, pool-reference.txt's lanes), the rest reading
    only attributes and numbers (:func:`waited_cuts`): the head is found without reading every waiting
    session's keys at every admission attempt.

    Why it is the head the scan finds (:func:`.admission.head`: the first, in join order, of the least
    keys). A session's attributes do not change while it waits, so its keys are a function of its
    ``waited`` alone, and of ``waited`` only through comparisons with the numbers ``cuts``: they are the
    same for any two values of ``waited`` with no cut between them or at either. ``waited`` = ``now -
    joined`` (the rounded subtraction the scan makes) never decreases. So a session's keys, read at ``w0``,
    are its keys at ``w`` unless some cut lies in ``[w0, w]`` and ``w > w0``: only then are they read
    again (``due``: a heap of the times at which that may first hold, each a little early, checked
    exactly when it is reached). The sessions are kept sorted by (keys, join order) (``sl``), whose first
    is the scan's head when no key is NaN; a key read as NaN (which orders nothing) turns the queue back
    to the scan for good, as :class:`WaitedQueue` does; so does a clock at ``inf``. Each session's keys
    are read at most twice a cut. It is the deque of the sessions in join order, the sorted entries kept
    beside it by ``append``, ``popleft`` and ``remove``; a session is placed at the first head lookup after
    its join (``pend``), and a queue of a few is scanned (``_SHORT``)."""

    __slots__ = ("key", "cuts", "joined", "pend", "sl", "due", "where", "tie", "seq", "scan", "pulse")

    def __init__(self, key, cuts: list[float], joined=None, pulse=None):
        super().__init__()
        #: ``pulse(n, queue, now)``: ``n`` keys read, units of the event's work (WaitedQueue.pulse)
        self.pulse = pulse
        #: the keys of a waiting session at a ``waited``: ``key(s, waited)``, a tuple
        self.key = key
        self.cuts = cuts
        #: a session's join time (the fast tier's sessions are lists)
        self.joined = _JOINED if joined is None else joined
        self.pend: deque | None = deque()
        #: entries ``[keys, join order, session, waited when the keys were read]``, by (keys, join order)
        self.sl = SortedKeyList(key=_entry_key)
        #: ``(time, number, entry)``: from ``time`` on the entry's keys may have changed
        self.due: list = []
        self.where: dict | None = {}
        self.tie = 0
        self.seq = 0
        self.scan = False

    def _to_scan(self) -> None:
        self.scan = True
        self.pend = self.sl = self.due = self.where = None

    def _read(self, e, now: float) -> bool:
        """Read entry ``e``'s keys at ``now`` and schedule the next reading; False at a NaN."""
        if self.pulse is not None:  # a key read is a unit of the event's work, as the scan's are
            self.pulse(1, self, now)
        s = e[2]
        w = now - self.joined(s)
        k = self.key(s, w)
        for x in k:
            if x != x:
                self._to_scan()
                return False
        e[3] = w
        if k != e[0]:
            if e[0] is not None:
                self.sl.remove(e)
            e[0] = k
            self.sl.add(e)
        self._schedule(e, now)
        return True

    def _schedule(self, e, now: float) -> None:
        cuts = self.cuts
        w0 = e[3]
        i = bisect_left(cuts, w0)
        if i == len(cuts):
            return  # past every cut: the keys never change again
        c = cuts[i]
        if c > w0:
            # now - joined >= c first holds near joined + c; a little earlier, never later (the check is
            # exact when the time is reached)
            j = self.joined(e[2])
            t = j + c
            t -= 4.0 * math.ulp(max(abs(j), abs(c), abs(t)))
        else:  # (w0 is the cut: the keys may change as soon as waited passes it)
            t = math.nextafter(now, INF)
        self.seq += 1
        heappush(self.due, (t, self.seq, e))

    def head(self, now: float):
        """The session the scan of the keys would find at ``now`` (``None``: the scan must decide, as it
        does for a queue of a few sessions, cheaper to scan than to sort)."""
        if self.scan or now == INF or len(self) <= _SHORT:
            return None
        pend = self.pend
        if pend:  # placed now, in join order, after every session placed before
            where = self.where
            while pend:
                s = pend.popleft()
                e = [None, self.tie, s, 0.0]
                self.tie += 1
                where[id(s)] = e
                if not self._read(e, now):
                    return None
        due = self.due
        cuts = self.cuts
        while due and due[0][0] <= now:
            e = heappop(due)[2]
            if e[2] is None:
                continue  # (its session left)
            w = now - self.joined(e[2])
            w0 = e[3]
            if w > w0 and bisect_left(cuts, w0) < len(cuts) and cuts[bisect_left(cuts, w0)] <= w:
                if not self._read(e, now):
                    return None
            else:  # not yet (the time was a little early)
                self.seq += 1
                heappush(due, (math.nextafter(now, INF), self.seq, e))
        return self.sl[0][2]

    def _left(self, s) -> None:
        if self.scan:
            return
        e = self.where.pop(id(s), None)
        if e is None:  # not placed yet
            self._unpend(s)
            return
        self.sl.remove(e)
        e[2] = None


def _JOINED(s):  # noqa: N802 - a constant of the class above
    return s.pending.queued_at


class Pending:
    """A hold waiting in its first pool's queue."""

    __slots__ = ("info", "pools", "queued_at", "join_seq", "demand", "floor")

    def __init__(self, info, pools, queued_at, join_seq):
        self.info = info
        self.pools = pools
        self.queued_at = queued_at
        self.join_seq = join_seq
        #: the demand, once evaluated, when it cannot change while the hold waits (``info.pure``)
        self.demand = None
        #: what the hold needs at least, known at the join, of a hold whose demand may change while it
        #: waits: ``[(pool, 0.0, round_up(reserve))]`` for the pools whose reserve reads only attributes and
        #: numbers (the room ``round_up(max(units, reserve))`` it needs there is never less), or None.
        #: While it does not fit the hold is not admitted, and its other amounts are not evaluated
        #: (:func:`serq_sim.pools.admission.admissible`)
        self.floor = None


class HoldRT:
    """An active hold: one slot per pool."""

    __slots__ = ("info", "slots", "grown", "named")

    def __init__(self, info, slots):
        self.info = info
        self.slots = slots
        self.grown = False
        #: the pool members the hold was admitted to, kept for a hold that leases (its lease must name one)
        self.named = None


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
    __slots__ = ("slot", "cache", "alive", "grown", "span", "timer")

    def __init__(self, slot, cache, grown, span):
        self.slot = slot
        self.cache = cache
        self.alive = True
        self.grown = grown
        #: whether its time's event is in the simulation's heap, not yet come (a finite ``lease P (t)``)
        self.timer = False
        #: where the cache clause of the hold that leased is written (a NaN cache length at the lease's end
        #: is reported there)
        self.span = span


class Entry:
    """A cached prefix: a session's own (``dead`` False) or a dead remainder past a ``reuse`` bound; or, in
    a spill's tier, the units of a write still under way on its link (``pending``: cached, so counted and
    evictable, but ``dead`` too, unusable, until the write lands: :func:`.cache.land`)."""

    __slots__ = ("size", "last", "seq", "owner", "snap", "alive", "eid", "dead", "rank", "pending")

    def __init__(self, size, last, seq, owner, snap, eid, dead=False):
        self.size = size
        self.last = last
        self.seq = seq
        self.owner = owner
        self.snap = snap
        self.alive = True
        self.eid = eid
        self.dead = dead
        self.pending = False


class Pool:
    """One member of a pool family."""

    #: the attributes the engine reads (slots: the fastest reads); ``__dict__`` keeps a pool open to others
    __slots__ = (
        "sim", "node", "name", "index", "flat", "cap", "limit", "block", "reserve_held", "used", "cached",
        "reserved", "holders", "own", "dead", "front", "queue", "keyed", "keyed_at_join", "waited_queue", "room_floor",
        "growers", "via",
        "memory_of", "evict", "preempt", "spill", "making_room", "needs_snap", "batch_room", "lru", "unqueued", "hot", "ahot", "waiters",
        "t_last", "span_lim", "a_used",
        "a_cached", "a_queue", "a_holders", "b_used", "b_cached", "b_queue", "b_holders", "b_wait", "wait_sum", "admissions", "evicted_entries", "evicted_units",
        "b_evicted",
        "preemptions", "spills", "rejections", "refused", "rounded_out", "stuck", "livelocked", "livelock_units",
        "self_stuck", "positioned", "over_cap", "lapsed_reads",
        "__dict__",
    )

    def __init__(self, sim, node: N.Pool, member: int, flat: int):
        self.sim = sim
        self.node = node
        self.name = node.name
        self.index = member
        self.flat = flat
        #: the member's own capacity: ``caps[member]`` where the members' caps differ (a fleet of unlike GPUs)
        self.cap = num(node.cap if node.caps is None else node.caps[member])
        #: ``cap + EPS``, what used (and reserved, or cached) units may come to
        self.limit = self.cap + EPS
        #: the spans the integrations take as they are (shorter than stats.HUGE_SPAN), or none (0) on a pool
        #: whose units may reach stats.HUGE_UNITS (its cap there or beyond; the units in use and cached are at
        #: most the cap): every integration of such a pool is :meth:`acc_huge`'s, which tests them
        self.span_lim = HUGE_SPAN if self.cap < HUGE_UNITS else 0.0
        self.block = float(node.block) if node.block else None
        self.reserve_held = node.reserve_held
        #: the units in use, cached and reserved: exact counts (.exact.Units) on a pool whose cap is 2**53
        #: or more, where the doubles stop holding every whole number
        self.used = self.cached = self.reserved = zero(self.cap)
        self.holders: dict[Slot, None] = {}
        self.own: dict[int, Entry] = {}
        self.dead: dict[int, Entry] = {}
        #: (the sessions re-queued at the head, then the rest in join order, or a queue of ``queue by``: build.py;
        #: :data:`NONE_YET` until the first joins)
        self.front: deque = NONE_YET
        self.queue: deque = NONE_YET
        self.keyed = None  # queue-by keys function
        #: the queue is a :class:`KeyedQueue` (keys evaluated once, at the join)
        self.keyed_at_join = False
        #: the queue is a :class:`WaitedQueue` (keys ``(K…, waited)``: the head found without a scan)
        self.waited_queue = False
        #: the least room a hold waiting here can need, known before the run (``admission.room_floors``), or 0
        self.room_floor = 0.0
        self.growers: deque = NONE_YET
        #: the settle of a program of many such pools looks at this one for growers or a free queue (hot),
        #: or not until a grower or a session joins it (Simulation.pool_mark); True for good among few
        self.hot = True
        #: of many pools admitted by no stage (build.py: ``adm_hot``): whether admit_all tries this one's head
        #: (True for good among few), and the pools whose blocked head waits for room here (woken when
        #: room frees: release.release_slot)
        self.ahot = True
        self.waiters: dict = {}
        self.via = None
        self.memory_of: list = []
        self.evict = None
        self.preempt = None
        self.spill = None
        #: a pool that spills is evicting to make room (cache.evict_for): a spill that comes back to it (its
        #: own, or round a cycle of tiers) finds no room there
        self.making_room = False
        self.needs_snap = False
        #: the order evicts several blocks of its pick at once (``batch``) on this pool with blocks that
        #: spills nothing (set with the policies, when the simulation is built)
        self.batch_room = False
        #: with :attr:`batch_room`, the order is ``evict lru``'s own (an :class:`LruOrder
        #: <serq_sim.policies.eviction.LruOrder>` with its ``first``)
        self.lru = False
        #: no hold can queue at this pool (no hold names it first: build.py), so its queue is always empty
        #: and its integral ``a_queue`` stays 0 (:meth:`acc` leaves it alone)
        self.unqueued = False
        # statistics
        self.t_last = 0.0
        self.a_used = self.a_cached = self.a_queue = self.a_holders = 0.0
        #: the integrals' spans of HUGE_SPAN or longer, in its units (stats.HUGE_SPAN: :meth:`acc_huge`)
        self.b_used = self.b_cached = self.b_queue = self.b_holders = 0.0
        self.wait_sum = 0.0
        #: its waits of HUGE_SPAN or longer, in its units (stats.add_sample: :meth:`add_wait`)
        self.b_wait = 0.0
        self.admissions = 0
        self.evicted_entries = 0
        self.evicted_units = 0.0
        #: its evictions of HUGE_UNITS units or more, in units of HUGE_SPAN (stats.add_units: the count
        #: stays finite where the units evicted are beyond the doubles)
        self.b_evicted = 0.0
        self.preemptions = 0
        self.spills = 0
        self.rejections = 0
        #: of the rejections, the holds rejected on re-admission after a preemption (their reserve outgrew
        #: the cap): sessions that had held the pool and ran part of the hold's body (notes.rejections)
        self.refused = 0
        #: of the rejections, the least amount (units, or reserve) that fitted the cap and whose blocks did
        #: not, with what it was rounded up to: ``(5.0, 6.0)`` on a pool of cap 5 in blocks of 2; None when no
        #: hold was rejected so (notes.rejections says the rounding)
        self.rounded_out: tuple[float, float] | None = None
        self.stuck = 0
        #: of the stuck, the serials of the sessions preempted, once stuck, by their own growth beyond the cap
        #: (with what they keep on the pool: pools.growth.preempt_outgrown), which re-execute and preempt
        #: themselves for as long as the run goes on, and the units the first of them needed (notes.stuck
        #: names the livelock); over the whole run, as ``stuck``
        self.livelocked: set[int] = NONE_YET
        self.livelock_units: float | None = None
        #: the serials of the sessions preempted again at no greater position on the pool by their own growth
        #: (the grower its own victim, pools.growth.preempt): re-executed, such a hold grows into the same
        #: shortage, a cycle without progress; on a pool where no hold has a position (``positioned`` False)
        #: these, not every stuck session, are what the stuck warning counts (notes.stuck); over the whole run
        self.self_stuck: set[int] = NONE_YET
        #: whether a preemption on the pool ever found its hold at a position above 0 (a growing run or a load
        #: had advanced it): where none did, a session preempted twice is stuck however long it was served
        #: in between (notes.stuck says so)
        self.positioned = False
        self.over_cap = 0
        #: the transfers from the pool after the warm-up by sessions whose lease of it had ended by its time
        #: and that held nothing on it (pools.release.transfer_release; notes.lapsed_reads)
        self.lapsed_reads = 0

    def acc(self) -> None:
        now = self.sim.now
        dt = now - self.t_last
        if dt > 0.0:
            if dt < self.span_lim:
                self.a_used += self.used * dt
                self.a_cached += self.cached * dt
                if not self.unqueued:
                    self.a_queue += (len(self.front) + len(self.queue)) * dt
                self.a_holders += len(self.holders) * dt
            else:
                self.acc_huge(dt)
        self.t_last = now

    def acc_huge(self, dt: float) -> None:
        """Integrate a span ``dt`` of :data:`~serq_sim.stats.HUGE_SPAN` or longer, or units of
        :data:`~serq_sim.stats.HUGE_UNITS` or more, in units of HUGE_SPAN (each scaling exact: a power of two):
        what every integration of the pool's levels (:meth:`acc`, its inlined copies) does with them."""
        if dt >= HUGE_SPAN:
            w = dt * PER_HUGE
            self.b_used += self.used * w
            self.b_cached += self.cached * w
            self.b_queue += (len(self.front) + len(self.queue)) * w
            self.b_holders += len(self.holders) * w
            return
        # units of HUGE_UNITS or more over a span as acc takes it: those units scaled, the rest as acc adds them
        if self.used < HUGE_UNITS:
            self.a_used += self.used * dt
        else:
            self.b_used += self.used * PER_HUGE * dt
        if self.cached < HUGE_UNITS:
            self.a_cached += self.cached * dt
        else:
            self.b_cached += self.cached * PER_HUGE * dt
        if not self.unqueued:
            self.a_queue += (len(self.front) + len(self.queue)) * dt
        self.a_holders += len(self.holders) * dt

    def add_wait(self, wait: float) -> None:
        """An admission's wait at a time of HUGE_SPAN or later (stats.add_sample)."""
        self.wait_sum, self.b_wait = add_sample(self.wait_sum, self.b_wait, wait)

    def reset_stats(self) -> None:
        self.acc()
        self.a_used = self.a_cached = self.a_queue = self.a_holders = 0.0
        self.b_used = self.b_cached = self.b_queue = self.b_holders = 0.0
        self.wait_sum = self.b_wait = 0.0
        self.admissions = self.evicted_entries = self.preemptions = self.spills = 0
        # `stuck` counts sessions over the whole run (docs/language.md), not from here: a session is counted
        # once (its flag stays), so zeroing it here lost one stuck before the warm-up and all through it
        self.rejections = self.refused = self.lapsed_reads = 0
        self.rounded_out = None
        self.evicted_units = self.b_evicted = 0.0

    def iter_entries(self):
        yield from self.own.values()
        yield from self.dead.values()

    def round_up(self, x: float) -> float:
        """``x`` rounded up to whole blocks: a positive amount takes one block at least (``ceil(x / b -
        1e-12)``, whose tolerance forgives a quotient a rounding error put just past a whole number,
        would give none to an amount below 1e-12 blocks)."""
        b = self.block
        if b is None or x == INF:
            return x
        q = x / b
        if 0.0 < q <= 1.0:
            return b
        try:
            return math.ceil(q - 1e-12) * b
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


class SpillMember:
    """A spill's tier or link named by a computed index, evaluated at each spill (pools.cache.spill); one
    naming no member is a run-time error at the index, naming the spilling pool and the time."""

    __slots__ = ("kind", "members", "base", "size", "fn", "span", "pool", "family")

    def __init__(self, kind: str, members: list, base: int, size: int, fn, span, pool: str, family: str) -> None:
        self.kind, self.members, self.base, self.size, self.fn = kind, members, base, size, fn
        self.span, self.pool, self.family = span, pool, family

    def at(self, sim, owner, attrs, ctx):
        idx = self.fn(owner, attrs, ctx)
        why = member_problem(self.kind, idx, self.size, self.family)
        if why is not None:
            raise sim.error(f"pool {self.pool}: the spill's {why}", span=self.span)
        return self.members[self.base + int(idx)]
