"""What the Python API reads from an iterable it is given (``seeds=``, ``defs=`` values, the programs,
``figures=``) is bounded by the sweep's bounds (serq_sweep.axes.MAX_POINTS, a million): at most one more
than that is read, and more is one usage error at once. ``seeds=itertools.count()`` and ``range(10**12)``
were read whole, until memory ran out, ``defs={"f": itertools.repeat("1")}`` and
``sweep(itertools.repeat("p.sq"))`` and ``zip=[itertools.repeat("a")]`` the same, and ``seeds=range(10**7)`` was written out as the text of
every seed and quoted whole in the message that refused it."""

from __future__ import annotations

import itertools

import pytest
from serq.errors import UsageError
from serq_sweep import axes, compare, sweep
from serq_sweep.axes import seed_values

pytestmark = pytest.mark.timeout(20)

PROGRAM = """let lam = 0.5;
def svc() = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (svc()); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 5; }
"""


@pytest.mark.parametrize("seeds", [itertools.count(), range(10**12), range(10**7)])
def test_endless_or_too_many_seeds_are_one_short_message(seeds):
    with pytest.raises(UsageError) as info:
        seed_values(seeds)
    assert str(info.value) == "error: seeds: more than 1000000 seeds"


def test_seeds_as_numbers_keep_the_rules_of_seeds():
    assert seed_values(range(3, 6)) == [3, 4, 5]
    with pytest.raises(UsageError, match="^error: seeds: seed 4 is given twice$"):
        seed_values([4, 5, 4])
    with pytest.raises(UsageError, match="^error: seeds: no seed$"):
        seed_values([])


@pytest.mark.parametrize("call, said", [
    (lambda p: sweep(p, defs={"svc": itertools.repeat("0.5")}, workers=0, progress=False),
     "error: defs['svc']: more than 1000000 expressions"),
    (lambda p: sweep(itertools.repeat(p), workers=0, progress=False), "error: program: more than 1000000 programs"),
    (lambda p: sweep(p, sets={"lam": [0.2, 0.4]}, zip=[itertools.repeat("lam")], workers=0, progress=False),
     "error: zip: a group of more than 1000000 names"),
    # (each group is checked as it is read: a million of them take seconds, so the bound is a thousand here,
    # as test_hostile_round16_runs_before_grid lowers it; the same rule reads at most one group past it)
    (lambda p: sweep(p, sets={"lam": [0.2, 0.4]}, zip=itertools.repeat(["x"]), workers=0, progress=False),
     "error: zip: more than 1000 groups"),
    (lambda p: compare(p, sets={"lam": [0.2, 0.4]}, figures=itertools.repeat("y.mean"), workers=0, progress=False),
     "error: figures: more than 1000000 figures"),
])
def test_an_endless_iterable_is_one_usage_error(tmp_path, monkeypatch, call, said):
    if "1000 groups" in said:
        monkeypatch.setattr(axes, "MAX_POINTS", 1000)
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    with pytest.raises(UsageError) as info:
        call(str(path))
    assert str(info.value) == said
