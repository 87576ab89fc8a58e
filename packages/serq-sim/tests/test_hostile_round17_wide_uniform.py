"""``~uniform(lo, hi)`` with finite bounds farther apart than the largest double draws between them.

The draw was ``lo + (hi - lo) * u``: for ``~uniform(-1e308, 1e308)`` the width overflows to inf, so every
draw was inf (NaN at u = 0) and the observe's mean inf, on both tiers, a computed pair of bounds the same.
Such a draw is now ``lo * (1 - u) + hi * u``, one draw of the stream as before; any other pair of bounds
draws exactly as it did.
"""

from __future__ import annotations

import array
import math

import pytest
import serq_frontend
from serq_sim import rand
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("u", [0.0, 0.25, 0.5, 1.0 - 2.0 ** -53])
def test_a_draw_between_far_bounds_is_between_them(u):
    lo, hi = -1e308, 1.7e308
    for draw in (rand.d_uniform(lambda: u, lo, hi),
                 rand.k_uniform(lambda: u, lo, hi, None, None, None, 0.0)):
        assert math.isfinite(draw) and lo <= draw <= hi
        # the point u of the way from lo to hi, in halves (the width 2.7e308 is past the doubles)
        assert draw / 2 - lo / 2 == pytest.approx(u * (hi / 2 - lo / 2), rel=1e-12, abs=1e292)


@pytest.mark.parametrize("lo, hi", [(2.0, 5.0), (-1.0, 1.0), (0.0, 1e308), (-1e308, 0.0), (3.0, 3.0)])
def test_other_bounds_draw_as_before(lo, hi):
    for u in (0.0, 0.1, 0.3, 0.999):
        assert rand.d_uniform(lambda u=u: u, lo, hi) == lo + (hi - lo) * u


SRC = """stage s : delay;
workload { arrive batch(2000); }
session { observe x = ~uniform(-1e308, 1e308); observe y = ~uniform(-1e308 * (serial > -1), 1e308); }
run { horizon 10; seed 1; }
"""


def test_the_samples_of_a_run_lie_between_the_bounds_on_both_tiers():
    program = serq_frontend.compile(source=SRC)
    outcomes = [run_on_tier(program, tier)[1:] for tier in ("general", "")]
    assert outcomes[0][0][0] == "report" and outcomes[0] == outcomes[1]
    for name in ("x", "y"):  # a constant pair of bounds, and a computed one (k_uniform)
        xs = array.array("d", outcomes[0][1][name][0]).tolist()
        assert len(xs) == 2000 and all(-1e308 <= x <= 1e308 for x in xs)
        # the mean of 2 000 draws of U(-1e308, 1e308): 0, its standard error 1e308 / sqrt(3 * 2000)
        mean = sum(x / 2000 for x in xs)
        assert abs(mean) < 4 * 1e308 / math.sqrt(3 * 2000)
