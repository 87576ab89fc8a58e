"""A message shows a whole number of 1e16 or more as ``%g``, as it shows any other number
(``serq_ir.rules.show_number``, serq_sim.errors.show: the one rule of the numbers a message shows).

Every whole number was written out digit by digit, so a run-time error of a computed value far from the
program's scale was a message of a screen: ``stage index 1000000000000000052504760255204420248704…`` (301
digits for 1e300), ``the units of P are negative (-1000…)``, and ``serq_sim.run(warmup=1e308)``'s origin
``(warmup=1000…)`` (309 digits). Below 1e16 a whole number is still shown exactly (2**53, where a trace's
ids stop being told apart, included), so a double's digits beyond its precision are never made up.
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from serq_ir.rules import show_number

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("x, shown", [
    (3.0, "3"), (-0.0, "0"), (0.5, "0.5"), (1e-7, "1e-07"), (math.nan, "NaN"), (math.inf, "inf"),
    (-math.inf, "-inf"),
    (2.0 ** 53, "9007199254740992"), (9999999999999998.0, "9999999999999998"), (-123456789012345.0, "-123456789012345"),
    (1e16, "1e+16"), (2.0 ** 60, "1.15292e+18"), (1e300, "1e+300"), (-1e300, "-1e+300"),
    (1.7976931348623157e308, "1.79769e+308"),
])
def test_show_number(x, shown):
    assert show_number(x) == shown


def _error(src: str, **kw) -> str:
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=src), **kw)
    return str(e.value).splitlines()[0]


def test_a_stage_index_far_out_of_range_is_shown_short():
    msg = _error("""stage s[2] : delay;
workload { arrive poisson(1); }
session { run s[serial * 1e300] (1); end; }
run { horizon 10; seed 1; }
""")
    assert msg.endswith("session 1: stage s: index 1e+300 out of range (the family has 2)"), msg


def test_a_negative_amount_far_from_zero_is_shown_short():
    msg = _error("""pool P { cap 10; }
stage s : delay;
workload { arrive poisson(1); }
session { hold P (-1e300 * (serial + 1)) { run s (1); } end; }
run { horizon 10; seed 1; }
""")
    assert msg.endswith("session 0: the units of P are negative (-1e+300)"), msg


def test_a_run_setting_given_to_run_is_named_short():
    msg = _error("""stage s : delay;
workload { arrive poisson(1); }
session { run s (1); end; }
run { horizon 10; seed 1; }
""", warmup=1e308, horizon=math.inf, arrivals=5)
    assert msg.endswith("at or before the warmup 1e+308 (nothing to measure) (warmup=1e+308)"), msg
