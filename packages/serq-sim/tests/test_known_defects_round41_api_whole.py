"""The Python API takes a whole number given exactly where a whole number is wanted: ``seed=``,
``arrivals=``, ``max_events=``, ``max_samples=`` of ``serq_sim.run`` and a report's member index took ints
and numpy's integers only, and refused ``Decimal("1000")`` and ``Fraction(1000)`` (a TypeError) though
serq.numbers.is_real takes a Decimal for a real argument. A whole Decimal or Fraction is now its int; a
non-whole one (``Decimal("2.5")``, ``Fraction(3, 2)``, a Decimal NaN) is a ValueError naming the keyword;
a float stays a TypeError (a float count), as a str does."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq.numbers import exact, whole_value
from serq_report.json import encode_json

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (~exp(1)); observe w = now; }
run { horizon 50; seed 1; }
"""


@pytest.fixture
def program(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sq").write_text(PROGRAM)
    return serq_frontend.compile("a.sq")


@pytest.mark.parametrize("v, whole", [
    (7, 7), (np.int64(7), 7), (np.uint8(7), 7), (Fraction(14, 2), 7), (Decimal("7"), 7), (Decimal("7.000"), 7),
    (Decimal("1E+3"), 1000), (Decimal("-3"), -3), (Fraction(3, 2), None), (Decimal("7.5"), None),
    (Decimal("NaN"), None), (Decimal("Infinity"), None), (Decimal("1E+999999999"), None),
    (7.0, None), (np.float64(7.0), None), (True, None), ("7", None), (None, None),
])
def test_whole_value(v, whole):
    assert whole_value(v) == whole and (whole is None or type(whole_value(v)) is int)


def test_exact_types():
    assert [exact(v) for v in (1, np.int32(1), Fraction(1, 3), Decimal("0.5"), 1.0, np.float32(1), True, "1")] == \
        [True, True, True, True, False, False, False, False]


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize("kw, value, plain", [
    ("seed", Decimal("7"), 7), ("seed", Fraction(7), 7), ("seed", Decimal("7.0"), 7),
    ("arrivals", Decimal("20"), 20), ("arrivals", Fraction(40, 2), 20),
    ("max_events", Decimal("30"), 30), ("max_samples", Fraction(25), 25), ("max_samples", Decimal("2.5E+1"), 25),
])
def test_a_whole_decimal_or_fraction_runs_as_its_int(program, monkeypatch, tier, kw, value, plain):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    given = encode_json(serq_sim.run(program, **{kw: value}, progress=False))
    assert given == encode_json(serq_sim.run(program, **{kw: plain}, progress=False))
    # (and the setting took: another value gives another report; a bound of samples is checked every 20 000
    # events, past this run's end)
    if kw != "max_samples":
        assert given != encode_json(serq_sim.run(program, **{kw: plain + 1}, progress=False))


@pytest.mark.parametrize("kw, value, rule", [
    ("seed", Decimal("7.5"), "an integer from 0 to 2**64 - 1 (18446744073709551615)"),
    ("seed", Decimal("-1"), "an integer from 0 to 2**64 - 1 (18446744073709551615)"),
    ("arrivals", Fraction(3, 2), "a positive integer"),
    ("arrivals", Decimal("0"), "a positive integer"),
    ("max_events", Decimal("NaN"), "a positive integer"),
    ("max_samples", Decimal("10.5"), "a positive integer"),
])
def test_a_non_whole_one_is_a_value_error_naming_the_keyword(program, kw, value, rule):
    with pytest.raises(ValueError) as e:
        serq_sim.run(program, **{kw: value}, progress=False)
    assert str(e.value) == f"{kw} must be {rule}, not {value!r}"


@pytest.mark.parametrize("kw", ["seed", "arrivals", "max_events"])
def test_a_float_is_still_a_type_error(program, kw):
    with pytest.raises(TypeError, match=f"^{kw} must be "):
        serq_sim.run(program, **{kw: 20.0}, progress=False)


def test_a_members_index(program):
    r = serq_sim.run(program, progress=False)
    assert r.stage("s", Decimal("0")) == r.stage("s", 0) == r.stage("s", Fraction(0))
    with pytest.raises(ValueError, match=r"^the index of a stage's member is an integer or None, not Decimal\('0.5'\)$"):
        r.stage("s", Decimal("0.5"))
    with pytest.raises(TypeError):
        r.stage("s", 0.0)
