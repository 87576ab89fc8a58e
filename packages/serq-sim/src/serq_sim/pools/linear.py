"""``queue by`` keys one of which reads ``waited`` linearly (a per-request deadline, ``queue by (A - waited)``
with ``A`` an expression of the session's attributes; ``k * (A - waited)``, ``-waited + c``, after and before
keys that read only attributes and numbers): the head found without reading every waiting session's keys
at every admission attempt (:class:`LinearQueue`, both tiers), the same head as the scan byte for byte."""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction
from operator import itemgetter

from serq_ir import nodes as N
from sortedcontainers import SortedKeyList

from ..compile import num, state_dependent
from .model import _JOINED, _SHORT, INF, _PlacedQueue

#: the unit roundoff of a double (round to nearest), and half the least subnormal: for every rounded
#: operation ``|fl(z) - z| <= U * |z| + TINY`` (the second for a result in the subnormal range)
U = Fraction(1, 2**53)
TINY = Fraction(1, 2**1075)
#: the largest magnitude (with its error) any step of a key may reach for the bound to hold: no step
#: overflows below it
HUGE = Fraction(2**1020)


def linear_waited(keys) -> tuple[int, tuple, list] | None:
    """For ``queue by`` keys of which exactly one reads ``waited``, and linearly, the others only attributes
    and numbers: ``(j, form, leaves)``, ``j`` that key's place, ``form`` its shape for the rounding bound
    (:func:`bound`) and ``leaves`` its parts that read only attributes (not numbers: those are in the form),
    the leaves of the form ``("l", i)``. None for any other keys. The key is built from ``waited`` (once)
    by a negation, adding or subtracting a part that reads only attributes and numbers (on either side),
    and multiplying or dividing by a number, finite and not zero (``slo * (1 + prompt / 1000) - waited``,
    ``2 * (A - waited)``, ``(A - waited) / 3``, ``-waited + c``). Its exact value is ``c * waited + b``, the
    slope ``c`` a number (the same for every session) and ``b`` a number of the session's attributes."""
    at = None
    for i, k in enumerate(keys):
        if state_dependent(k):
            if at is not None:
                return None
            at = i
    if at is None:
        return None
    leaves: list = []
    form = _form(keys[at], leaves)
    if form is None or form[0] in ("l", "n"):
        return None
    return at, form, leaves


def _number(e) -> float | None:
    if isinstance(e, N.Num):
        v = num(e.value)
        if math.isfinite(v):
            return v
    return None


def _form(e, leaves: list):
    if not state_dependent(e):
        v = _number(e)
        if v is not None:
            return ("n", v)
        if isinstance(e, N.Num):
            return None  # (inf or NaN: no bound)
        leaves.append(e)
        return ("l", len(leaves) - 1)
    if isinstance(e, N.Ctx) and e.name == "waited":
        return ("w",)
    if isinstance(e, N.Unary) and e.op == "-":
        return _form(e.arg, leaves)  # (a negation is exact: the bound is the argument's)
    if not isinstance(e, N.Binary):
        return None
    if e.op in ("+", "-"):
        if state_dependent(e.lhs) and state_dependent(e.rhs):
            return None
        x = _form(e.lhs, leaves)
        y = _form(e.rhs, leaves) if x is not None else None
        return None if y is None else ("+", x, y)
    if e.op in ("*", "/"):
        lin, other = (e.lhs, e.rhs) if state_dependent(e.lhs) else (e.rhs, e.lhs)
        if e.op == "/" and lin is not e.lhs:
            return None  # (c / waited is not linear)
        n = _number(other)
        if n is None or n == 0.0:
            return None
        x = _form(lin, leaves)
        return None if x is None else (e.op, x, abs(n))
    return None


def bound(form, w_mag: Fraction, w_err: Fraction, leaf_mag: list) -> tuple[Fraction, Fraction] | None:
    """``(M, E)``: for a key of shape ``form`` (:func:`linear_waited`) evaluated in doubles with ``waited``
    a double within ``w_err`` of an exact ``w``, ``|w| <= w_mag``, and each leaf ``i`` a double of magnitude
    at most ``leaf_mag[i]``: ``M`` bounds the magnitude of the exact value (the same operations on the exact
    ``w`` and the leaves' doubles, unrounded) and ``E`` the distance of the double from it. None when some
    step could come near the doubles' overflow (no bound then).

    Each rounded operation (round to nearest) errs by at most ``U·|z| + TINY`` on its unrounded result
    ``z``, whose distance from the exact one is what its operands carried: ``x ± y`` carries ``Ex + Ey``,
    ``x * n`` and ``x / n`` (``n`` a number, exact) carry ``n·Ex`` and ``Ex / n``; ``|z| <= M + carried``. A
    negation is exact. A leaf (its double taken as exact) and a number carry nothing."""
    tag = form[0]
    if tag == "w":
        return w_mag, w_err
    if tag == "n":
        return abs(Fraction(form[1])), Fraction(0)
    if tag == "l":
        return leaf_mag[form[1]], Fraction(0)
    x = bound(form[1], w_mag, w_err, leaf_mag)
    if x is None:
        return None
    if tag == "+":
        y = bound(form[2], w_mag, w_err, leaf_mag)
        if y is None:
            return None
        m, carried = x[0] + y[0], x[1] + y[1]
    else:
        n = Fraction(form[2])
        if tag == "*":
            m, carried = x[0] * n, x[1] * n
        else:
            m, carried = x[0] / n, x[1] / n
    if m + carried >= HUGE:
        return None
    return m, carried + U * (m + carried) + TINY


def _mag_exp(x: float) -> int:
    """An ``e`` with ``|x| < 2**e`` (``x`` finite)."""
    return math.frexp(x)[1]


class LinearQueue(_PlacedQueue):
    """The queue of a pool whose ``queue by`` keys read ``waited`` in one key, linearly (:func:`linear_waited`:
    a deadline ``A - waited``, ``k * (A - waited)``, …), the others only attributes and numbers: the head is
    found by reading the keys of a few sessions, not of every waiting one, at each admission attempt.

    Why it is the head the scan finds (:func:`.admission.head`: the first, in join order, of the least
    keys). Write ``P`` for the keys before the linear one ``L``, ``S`` for those after; a waiting session's
    ``P`` and ``S`` do not change (its attributes do not), nor do its leaves. In exact arithmetic ``L``
    at ``waited = now - t`` (``t`` its join time) is ``c·(now - t) + b``, ``c`` a number the same for every
    session: ``c·now + σ`` with ``σ = b - c·t``, the key's exact value at ``waited = -t``, fixed while the
    session waits; at one ``now`` the exact keys order the sessions as their ``σ`` do. The double the
    scan reads, ``L' = L(fl(now - t))`` evaluated in doubles, is within ``Ek`` of the exact ``c·now + σ``
    (:func:`bound` with ``waited`` of magnitude at most ``W >= |now| + |t|`` and error ``U·W + TINY``,
    the rounded subtraction's), and the double ``σ'`` read once, at the session's placement (the keys at
    ``waited = -t``, exact), is within ``Eσ`` of ``σ`` (:func:`bound` with magnitude ``|t|``, error 0).
    So ``|L'_s - (c·now + σ'_s)| <= Ek + Eσ`` for every session ``s``, and whenever ``σ'_r - σ'_s > D =
    2(Ek + Eσ)``, ``L'_r > L'_s``. The bound uses the largest magnitudes of the waiting sessions' leaves
    and join times (kept as powers of two, never lowered while the queue is not empty: a bound on more
    is a bound), so it holds for every pair.

    The sessions are kept sorted by ``(P, σ', join order)`` (``sl``). At a lookup the first entry has the
    least ``P``, ``P0``, and among those the least ``σ'``, ``σ0``. Every session with a greater ``P`` has
    keys greater than the first's; every one with ``P0`` and ``σ' > σ0 + D`` has a greater ``L'``, so
    greater keys. The candidates, the first entries with ``P0`` and ``σ' <= σ0 + D`` (the sum rounded
    up), hold every session of the least keys: their keys are read as the scan reads them (``key(s,
    now - t)``, the same function) and the least, ties to the first in join order, is the scan's head.
    Where the bound cannot be had the scan decides: a NaN in a key or a non-finite ``σ'`` or leaf (for
    good, as :class:`~.model.WaitedQueue` does), a clock at ``inf``, a step that could overflow (that
    lookup). A queue of a few sessions is scanned (``_SHORT``). ``D`` is computed exactly (fractions), for
    each power of two of the clock's and the magnitudes (``bounds``). It is the deque of the sessions in
    join order, the sorted entries kept beside it; a session is placed at the first head lookup after its
    join (``pend``)."""

    __slots__ = ("key", "j", "form", "leaves", "joined", "pend", "sl", "where", "tie", "scan", "leaf_exp",
                 "t_exp", "bounds", "reads", "pulse")

    def __init__(self, key, j: int, form: tuple, leaves, joined=None, pulse=None):
        super().__init__()
        #: the keys of a waiting session at a ``waited``: ``key(s, waited)``, a tuple
        self.key = key
        self.j = j
        self.form = form
        #: the values of the linear key's leaves for a session, a tuple (None: it has none)
        self.leaves = leaves
        #: a session's join time (the fast tier's sessions are lists)
        self.joined = _JOINED if joined is None else joined
        self.pend: deque | None = deque()
        #: entries ``[(P, σ', join order), session]``
        self.sl = SortedKeyList(key=itemgetter(0))
        self.where: dict | None = {}
        self.tie = 0
        self.scan = False
        #: per leaf, an ``e`` with every waiting session's leaf below ``2**e``; the same of the join times
        self.leaf_exp: list = []
        self.t_exp = 0
        #: ``D`` by (the clock's exponent, ``t_exp``, ``leaf_exp``)
        self.bounds: dict = {}
        #: the keys read (at placements and of candidates), for the tests
        self.reads = 0
        #: ``pulse(n, queue, now)``: ``n`` keys read, units of the event's work (model.WaitedQueue.pulse)
        self.pulse = pulse

    def _to_scan(self) -> None:
        self.scan = True
        self.sl = self.where = self.pend = self.bounds = None

    def _place(self, s, now: float) -> bool:
        """Read ``s``'s keys at ``waited = -t`` and its leaves, and sort it in (False: the scan from now on)."""
        if self.pulse is not None:  # a key read is a unit of the event's work, as the scan's are
            self.pulse(1, self, now)
        t = self.joined(s)
        k = self.key(s, -t)
        self.reads += 1
        for x in k:
            if x != x:
                return False
        sigma = k[self.j]
        if not math.isfinite(sigma) or not math.isfinite(t):
            return False
        exps = self.leaf_exp
        if self.leaves is not None:
            vals = self.leaves(s)
            if not exps:
                exps.extend([-1075] * len(vals))
            for i, v in enumerate(vals):
                if not math.isfinite(v):
                    return False
                e = _mag_exp(v)
                if e > exps[i]:
                    exps[i] = e
        e = _mag_exp(t)
        if e > self.t_exp:
            self.t_exp = e
        entry = [(k[:self.j], sigma, self.tie), s]
        self.tie += 1
        self.where[id(s)] = entry
        self.sl.add(entry)
        return True

    def _bound(self, now: float) -> float | None:
        """``D`` (:class:`LinearQueue`) as a double at least the exact one, at a clock ``now``; None when
        there is none."""
        ew = max(_mag_exp(now), self.t_exp) + 1  # 2**ew >= 2 max(|now|, 2**t_exp) >= |now| + |t|
        tag = (ew, self.t_exp, tuple(self.leaf_exp))
        d = self.bounds.get(tag)
        if d is None:
            mags = [Fraction(2) ** e for e in self.leaf_exp]
            w = Fraction(2) ** ew
            k = bound(self.form, w, U * w + TINY, mags)
            sg = bound(self.form, Fraction(2) ** self.t_exp, Fraction(0), mags)
            if k is None or sg is None:
                d = INF
            else:
                exact = 2 * (k[1] + sg[1])
                d = float(exact)
                if Fraction(d) < exact:
                    d = math.nextafter(d, INF)
            self.bounds[tag] = d
        return d if d < INF else None

    def head(self, now: float):
        """The session the scan of the keys would find at ``now`` (``None``: the scan must decide)."""
        if self.scan or not math.isfinite(now) or len(self) <= _SHORT:
            return None
        pend = self.pend
        while pend:  # placed now, in join order, after every session placed before
            if not self._place(pend.popleft(), now):
                self._to_scan()
                return None
        d = self._bound(now)
        if d is None:
            return None
        sl = self.sl
        first = sl[0][0]
        p0 = first[0]
        top = math.nextafter(first[1] + d, INF)  # (at least the exact sum)
        if top == INF:
            return None
        key = self.joined
        pulse = self.pulse
        best = bk = bt = None
        for entry in sl.islice(0):
            p, sigma, tie = entry[0]
            if sigma > top or p != p0:
                break
            if pulse is not None:
                pulse(1, self, now)
            s = entry[1]
            k = self.key(s, now - key(s))
            self.reads += 1
            for x in k:
                if x != x:
                    return None  # (no bound can be made NaN; the scan decides, as it would)
            if best is None or k < bk or (k == bk and tie < bt):
                best, bk, bt = s, k, tie
        return best

    def _left(self, s) -> None:
        if self.scan:
            return
        entry = self.where.pop(id(s), None)
        if entry is None:  # not placed yet
            self._unpend(s)
        else:
            self.sl.remove(entry)
        if not self.where and not self.pend:  # empty: the magnitudes start again
            self.leaf_exp = [-1075] * len(self.leaf_exp)
            self.t_exp = 0
