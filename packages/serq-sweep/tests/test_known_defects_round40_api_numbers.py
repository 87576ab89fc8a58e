"""The numbers of the Python API are one rule (serq.numbers.is_real): ``serq_sim.sweep(…, sets={"x":
[Decimal("1")]})`` was taken while ``horizon=Decimal("10")`` was refused ("is not a positive number of
seconds"); a Decimal is now taken as the double nearest to it wherever a real number goes. A masked entry of
a numpy masked array in ``sets=`` was swept as 0 (``.item()`` of ``np.ma.masked``); it is refused naming its
index. docs/sweep.md."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import serq_sim
from serq.errors import UserError
from serq.numbers import is_real, real

MMC = Path(__file__).parent / "peer_programs27" / "mmc.sq"


def _sweep(**kw):
    return serq_sim.sweep(MMC, **{"horizon": 50, "warmup": 0, "sets": {"lam": [1]}, "workers": 0,
                                  "progress": False, **kw})


def test_real_takes_decimal_as_its_nearest_double():
    assert real(Decimal("10")) == 10.0
    assert real(Decimal("0.1")) == 0.1
    assert real(Fraction(1, 4)) == 0.25
    assert real(np.float32(0.5)) == 0.5
    assert real(Decimal("1e400")) is None  # beyond the doubles, as an int of 1400 bits is
    assert real(Decimal("-1e400")) is None
    assert real(True) is None and real("1") is None
    assert is_real(Decimal("2")) and not is_real(True)


def test_decimal_horizon_is_taken_as_a_decimal_in_sets_is():
    by_decimal = _sweep(horizon=Decimal("50"), warmup=Decimal("5"), max_wall=Decimal("600"),
                        sets={"lam": [Decimal("1")]})
    by_float = _sweep(horizon=50.0, warmup=5.0, max_wall=600.0, sets={"lam": [1.0]})
    cols = [c for c in by_float.columns if c.startswith(("observes.response", "horizon", "warmup", "events", "end"))]
    assert len(cols) > 5 and by_float["events"].iloc[0] > 0
    assert by_decimal[cols].equals(by_float[cols])


def test_decimal_beyond_the_doubles_is_refused_by_name():
    with pytest.raises(UserError, match=r"horizon=Decimal\('1E\+400'\): is not a positive number of seconds"):
        _sweep(horizon=Decimal("1e400"))


@pytest.mark.parametrize(("given", "index"), [(np.ma.masked_array([1, 2], mask=[0, 1]), 1),
                                              (np.ma.masked_array([1, 2, 3], mask=[1, 0, 0]), 0),
                                              ([1, np.ma.masked], 1), (np.ma.masked, None)])
def test_masked_entry_is_refused_naming_its_index(given, index):
    at = "" if index is None else f" at index {index}"
    with pytest.raises(UserError, match=rf"^error: sets\['lam'\]: the value{at} is masked"):
        _sweep(sets={"lam": given})


def test_masked_array_without_masked_entries_is_its_values():
    table = _sweep(sets={"lam": np.ma.masked_array([1, 2], mask=[0, 0])})
    assert list(table["lam"]) == [1.0, 2.0]


@pytest.mark.parametrize(("given", "said"), [(np.ma.masked_array([1, 2], mask=[0, 1]), " at index 1"),
                                             (np.ma.masked, "")])
def test_masked_seed_is_refused_naming_its_index(given, said):
    # it was refused as "a seed is an integer … not 0.0", a value the caller never gave
    with pytest.raises(UserError, match=rf"^error: seeds: the value{said} is masked"):
        _sweep(seeds=given)
