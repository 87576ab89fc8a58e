"""The exact counts of a pool whose capacity is 2**53 or more (``cap inf`` among them).

A pool counts its units in use, reserved and cached as sums of the amounts it books. Below 2**53 every
whole number is a double, and a pool's totals are at most its capacity, so a pool with a smaller capacity
counts whole amounts exactly, as plain floats (the hot paths stay as they are). At 2**53 and beyond the
doubles hold only some whole numbers: under ``cap 2**53`` a hold of 2**53 was admitted beside a held unit
(1 + 2**53 rounds to 2**53, which fits) and its release left ``used`` 0 with the unit still held; under
``cap inf`` two holds of 1e308 made ``used`` inf, and inf it stayed after both were released.

Such a pool keeps each total as :class:`Units`: a float whose value is the exact total rounded to the
nearest double (inf beyond the doubles), which carries the exact total (an int, or a Fraction for amounts
with a fraction). Adding or subtracting an amount, and comparing with a number, are exact; everything
else (a division, a function) is the float's, on the rounded value. Every site that
counts or tests a pool's units (admission and its fit, growth, release, caching, eviction, both tiers)
does so through these operators, so none of them needs to know; an observable (``used(P)``, ``free(P)``)
reads the rounded value as a plain float, and a product (the statistics' integrals) is the exact one
rounded once, a plain float.
"""

from __future__ import annotations

import math

#: a pool whose capacity is this or more keeps exact counts
WIDE = 2.0**53

_INF = math.inf

#: what a count is beside inf or NaN: finite, whatever its rounding (an exact count is a whole number or a
#: fraction; 2e308 rounds to inf). inf less a count of 2e308 is inf, not inf - inf (free(P) of a pool of cap
#: inf read NaN while it held more than the largest double), and the count is below inf
_FINITE = 0.0


def _exact(v):
    """The exact value of a number, or None for inf and NaN."""
    t = type(v)
    if t is float:
        if not -_INF < v < _INF:  # inf, NaN
            return None
        n, d = v.as_integer_ratio()
        if d == 1:
            return n
        # (imported here: an amount with a fraction is rare, and the module adds to every run's start)
        from fractions import Fraction

        return Fraction(n, d)
    if t is Units:
        return v.x
    if isinstance(v, int):
        return v
    return _exact(float(v))


def _make(x) -> Units:
    try:
        u = Units(x)  # (an int or a Fraction, rounded to the nearest double)
    except OverflowError:
        u = Units(math.inf if x > 0 else -math.inf)
    u.x = x
    return u


class Units(float):
    """An exact total of a pool's units, read as the nearest double (the module's words). Each operator
    takes a whole double (the usual amount) by its int first: the same value, a shorter path."""

    __slots__ = ("x",)

    def __add__(self, o):
        if type(o) is float and o.is_integer():
            x = self.x + int(o)
        else:
            e = _exact(o)
            if e is None:  # inf or NaN beside a finite count (the rounded count may be inf: 2e308)
                return _FINITE + o
            x = self.x + e
        try:
            u = Units(x)
        except OverflowError:
            u = Units(math.inf if x > 0 else -math.inf)
        u.x = x
        return u

    __radd__ = __add__

    def __sub__(self, o):
        if type(o) is float and o.is_integer():
            x = self.x - int(o)
        else:
            e = _exact(o)
            if e is None:
                return _FINITE - o
            x = self.x - e
        try:
            u = Units(x)
        except OverflowError:
            u = Units(math.inf if x > 0 else -math.inf)
        u.x = x
        return u

    def __rsub__(self, o):
        e = _exact(o)
        return o - _FINITE if e is None else _make(e - self.x)

    def __mul__(self, o):
        # a plain float: the exact product rounded once, what a float's product is when the count is a
        # double, and the right one when it is beyond them (2e308 units over a span of 2**-512 for the
        # statistics' integrals, stats.HUGE_UNITS)
        f = float(self)
        if f == self.x:  # a double: its product is the exact one rounded once
            return f * o
        e = _exact(o)
        if e is None:
            return f * o
        try:
            return float(self.x * e)
        except OverflowError:
            return math.inf if (self.x > 0) == (e > 0) else -math.inf

    __rmul__ = __mul__

    def _cmp(self, o):
        """The exact other side, or None for inf and NaN, which compare with the count as with any finite
        number (:data:`_FINITE`)."""
        if type(o) is float and o.is_integer():
            return int(o)
        return _exact(o)

    def __lt__(self, o):
        e = self._cmp(o)
        return _FINITE < o if e is None else self.x < e

    def __le__(self, o):
        e = self._cmp(o)
        return _FINITE <= o if e is None else self.x <= e

    def __gt__(self, o):
        e = self._cmp(o)
        return _FINITE > o if e is None else self.x > e

    def __ge__(self, o):
        e = self._cmp(o)
        return _FINITE >= o if e is None else self.x >= e

    def __eq__(self, o):
        e = self._cmp(o)
        return _FINITE == o if e is None else self.x == e

    def __ne__(self, o):
        e = self._cmp(o)
        return _FINITE != o if e is None else self.x != e

    __hash__ = float.__hash__


def zero(cap: float) -> float:
    """A pool's total of nothing: exact (:class:`Units`) on a pool of capacity :data:`WIDE` or more."""
    return _make(0) if cap >= WIDE else 0.0
