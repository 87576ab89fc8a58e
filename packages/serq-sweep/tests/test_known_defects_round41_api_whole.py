"""A sweep's whole-number arguments take a whole number given exactly: ``seeds=[Decimal("1"), Fraction(2)]``,
``arrivals=Decimal("3")``, ``workers=Decimal("0")``, ``max_events=Fraction(100000)`` were refused (a
TypeError, or ``seeds: a seed is an integer …, not Decimal('1')``) though a Decimal is taken for a real
argument. Each is now its int, the same runs as the int gives; a non-whole one is refused naming the keyword."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from serq.errors import UserError
from serq_sweep import sweep

pytestmark = pytest.mark.timeout(120)

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (~exp(1)); observe w = now; }
run { horizon 50; seed 1; }
"""


def _sweep(tmp_path, **kw):
    (tmp_path / "a.sq").write_text(PROGRAM)
    kw.setdefault("workers", 0)
    t = sweep(str(tmp_path / "a.sq"), progress=False, **kw)
    return [(int(s), float(e), int(n)) for s, e, n in zip(t["seed"], t["end"], t["ended"])], list(t["events"])


@pytest.mark.parametrize("kw, exact, plain", [
    ("seeds", [Decimal("1"), Fraction(4, 2)], [1, 2]),
    ("seeds", Decimal("3.0"), [3]),
    ("arrivals", Decimal("3"), 3),
    ("max_events", Fraction(30), 30),
    ("workers", Decimal("0"), 0),
])
def test_a_whole_decimal_or_fraction_is_its_int(tmp_path, kw, exact, plain):
    assert _sweep(tmp_path, **{kw: exact}) == _sweep(tmp_path, **{kw: plain})


def test_the_bound_took(tmp_path):
    (_, events) = _sweep(tmp_path, max_events=Fraction(30))
    assert events == [30]


@pytest.mark.parametrize("kw, value, said", [
    ("seeds", [Decimal("1.5")], "error: seeds: a seed is an integer from 0 to 2**64 - 1 (18446744073709551615), "
                                "not Decimal('1.5')"),
    ("arrivals", Decimal("2.5"), "error: arrivals=2.5: must be a positive integer"),
])
def test_a_non_whole_one_is_refused_naming_the_keyword(tmp_path, kw, value, said):
    with pytest.raises(UserError) as e:
        _sweep(tmp_path, **{kw: value})
    assert str(e.value) == said


def test_a_non_whole_count_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError) as e:
        _sweep(tmp_path, workers=Decimal("0.5"))
    assert str(e.value) == "workers must be a whole number of processes (0: in this process), not Decimal('0.5')"
    with pytest.raises(UserError) as e:
        _sweep(tmp_path, max_events=Fraction(3, 2))
    assert str(e.value) == "error: max_events must be a positive integer, not Fraction(3, 2)"
