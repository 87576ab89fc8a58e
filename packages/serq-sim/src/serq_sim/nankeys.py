"""The first NaN of each ordering key of a run: a ``queue by``, ``evict by``, ``preempt by`` or ``serve by``
key, or a ``choose`` key, whose value came out NaN (``prio * A - waited`` with ``A`` inf and ``prio`` 0).
A NaN orders as docs/language.md says (it does not order a queue, an eviction or a choose; it counts as
``inf`` for a preemption or the serving order), and the report says, once per key, that it happened: where
the key is written, and the time and session of its first NaN (code ``nan-key``, :func:`serq_sim.notes.nan_keys`).

The generated code of both tiers evaluates a clause's keys into temporaries, tests each against itself
(``k == k``, false only for NaN) and, only when one fails, calls :func:`seen` with the clause's
:class:`KeyPlaces` (serq_sim.compile.Compiler.checked_keys): the keys' values are what they were, and the
common case costs one comparison a key.
"""

from __future__ import annotations

#: what a NaN key does, by the clause it is a key of (docs/language.md, "A `queue by` key that is NaN" and
#: "A `choose` key that is NaN")
MEANING = {
    "queue by": "a NaN does not order (the hold it keys is the head only when it joined first)",
    "evict by": "a NaN does not order (the entry it keys is evicted first only when it comes first in the "
                "pool's order)",
    "choose": "a NaN does not order (where it decides, the candidate met first stays)",
    "preempt by": "a NaN counts as inf (the candidate comes after every one whose key is a number)",
    "serve by": "a NaN counts as inf (the resident is served after every one whose key is a number)",
}


class KeyPlaces(tuple):
    """The keys of one clause, in order, each ``(kind, where, i)``: the clause (a key of :data:`MEANING`),
    where the key is written (``FILE:LINE:COL``, ``""`` when the IR has no span) and its place in the
    clause. The members of a family share them (one key, one warning)."""

    __slots__ = ()


def key_places(kind: str, keys, span) -> KeyPlaces:
    """The :class:`KeyPlaces` of ``keys``, the expressions of a ``kind`` clause (``span``: the clause's
    owner's, for a key without one of its own)."""
    from serq.errors import place

    out = []
    for i, k in enumerate(keys):
        sp = getattr(k, "span", None) or span
        out.append((kind, place(sp) if sp is not None else "", i))
    return KeyPlaces(out)


def seen(first: dict, places: KeyPlaces, t: float, serial: int | None, keys: tuple) -> tuple:
    """Note in ``first`` (by key, its first NaN: ``(t, serial)``) the keys of ``keys``, the values of the
    clause ``places`` evaluated at time ``t`` for session ``serial`` (None: of none, a job of no
    session; a cached entry's key names its owner, living or ended), that are NaN and were not before; ``keys`` is returned."""
    for p, x in zip(places, keys):
        if x != x and p not in first:
            first[p] = (t, serial)
    return keys
