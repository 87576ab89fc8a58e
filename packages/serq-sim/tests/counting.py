"""Counting the work a step stage does on its lists of residents, for the tests of costs that must grow
with the work and not faster (test_admission_burst.py, test_preemption_burst.py): the counts are taken
from the lists themselves, not from a clock."""

from __future__ import annotations

from serq_sim.step import StepStage


class Counted(list):
    """A list that counts the items every iteration over it hands out, and those a removal or a membership
    test walks."""

    looks = 0

    def __iter__(self):
        for x in super().__iter__():
            Counted.looks += 1
            yield x

    def remove(self, x):
        i = next((k for k, y in enumerate(super().__iter__()) if y is x), len(self) - 1)
        Counted.looks += i + 1
        super().remove(x)

    def __contains__(self, x):
        Counted.looks += len(self)
        return super().__contains__(x)


class CountedIndexed(Counted):
    """:class:`Counted` that also counts the items a reversed iteration hands out, every index read and the
    items a search (``index``) walks."""

    def __reversed__(self):
        for x in super().__reversed__():
            Counted.looks += 1
            yield x

    def __getitem__(self, i):
        Counted.looks += 1
        return super().__getitem__(i)

    def index(self, x, *args):
        i = super().index(x, *args)
        Counted.looks += i + 1  # (the items the search walked)
        return i


def count_resident_lists(monkeypatch, kind: type[Counted] = Counted) -> type[Counted]:
    """Make every step stage's ``residents`` and ``eager`` lists of ``kind`` (:class:`Counted` or a
    subclass) when a job joins them (a list a planning replaces is counted again from the next join), and
    start the count (``Counted.looks``) at 0."""
    join = StepStage._join

    def counting_join(self, job):
        if type(self.residents) is list:
            self.residents = kind(self.residents)
        if type(self.eager) is list:
            self.eager = kind(self.eager)
        join(self, job)

    monkeypatch.setattr(StepStage, "_join", counting_join)
    Counted.looks = 0
    return Counted


def count_key_reads(monkeypatch) -> list[int]:
    """Count every reading of a pool's ``queue by`` keys (the functions ``Compiler.keys_fn`` makes, on both
    tiers) from now on: ``[count]``, a list whose item the readings add to."""
    from serq_sim.compile import Compiler

    calls = [0]
    keys_fn = Compiler.keys_fn

    def counted(self, *a, **kw):
        fn = keys_fn(self, *a, **kw)

        def f(s, A, C):
            calls[0] += 1
            return fn(s, A, C)
        return f

    monkeypatch.setattr(Compiler, "keys_fn", counted)
    return calls
