"""A range whose width is beyond the doubles (``-1e308:1e308``) is counted, and its values made, in halves.

Its width ``STOP - START`` overflows to inf, and the count of values was taken from it: ``--set
x=-1e308:1e308:1.7e308``, a range of two values (-1e308 and 7e307), was refused as "more values than a double
counts, more than 1000000", and so was ``-1e308:1e308:1e308`` (three). Halving is exact, so a range whose
width is a double is counted as before.
"""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep.axes import parse_range

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("text, values", [
    ("-1e308:1e308:1.7e308", [-1e308, 0.7e308]),  # -1e308 + 1.7e308; the next, 2.4e308, is past STOP
    ("-1e308:1e308:1e308", [-1e308, 0.0, 1e308]),  # the last is START + 2 STEP, which 2 STEP alone leaves
    ("-1e308:1e308:2e308", None),  # the step itself beyond the doubles: refused as such (serq.numbers.number)
    ("-1.5e308:1.5e308:1e308", [-1.5e308, -0.5e308, 0.5e308, 1.5e308]),
    # widths within the doubles, as before
    ("0.1:0.3:0.1", [0.1, 0.2, 0.3]),
    ("5e-324:1e-323:5e-324", [5e-324, 1e-323]),
])
def test_a_range_wider_than_the_doubles(text, values):
    if values is None:
        with pytest.raises(UserError, match=r"'2e308' is beyond the range of a double"):
            parse_range(text, "--set x")
        return
    assert parse_range(text, "--set x") == values


def test_a_range_of_more_values_than_a_double_counts_is_still_refused():
    for text in ("0:1e308:1e-308", "-1e308:1e308:1e-300"):
        with pytest.raises(UserError, match="more values than a double counts, more than 1000000$"):
            parse_range(text, "--set x")
    with pytest.raises(UserError, match=r"'-1e308:1e308:1e302': 2000001 values, more than 1000000$"):
        parse_range("-1e308:1e308:1e302", "--set x")
