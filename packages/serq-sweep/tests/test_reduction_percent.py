"""``serq compare``'s table prints a variance reduction below 1 below 100 % (``pairing.reduction_percent``):
0.9996 printed ``100.0%``, which reads as no variance left."""

from __future__ import annotations

import math

import pytest
from serq_sweep.pairing import reduction_percent


@pytest.mark.parametrize("vr, text", [
    (0.455, "45.5%"),
    (0.9993, "99.9%"),
    (0.9996, "99.96%"),      # 99.96 to one decimal is 100.0
    (0.99996, "99.996%"),
    (1 - 1e-10, ">99.99999%"),
    (1.0, "100.0%"),          # no variance left (the paired differences are equal)
    (-0.5, "-50.0%"),         # pairing made it worse
    (math.nan, "nan"),
])
def test_a_reduction_below_one_prints_below_100(vr, text):
    assert reduction_percent(vr) == text
